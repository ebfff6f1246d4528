#!/usr/bin/python3
"""The Python package as a user installs it: `pip install --no-index` (nothing fetched) of
client/python (a copy, so the source tree stays clean) into a fresh virtual environment
with the system site packages (Debian's numpy, protobuf, cffi), and into a plain directory
used by /usr/bin/python3 itself. Then, each time in a new process:

- partita.Model(example).linearize() equals `partita linearize example --json` to 1e-12
  (every example model), inverse() and equilibrium() equal their commands;
- the engine steps: Model.step(n) equals `partita simulate` bit for bit;
- the installed Client (its partita_pb2 generated at install time, no PARTITA_PB2_DIR) talks
  to a live partitad, and its linearization equals the in-process one;
- every state, input and output name either returns is one python-control accepts.

Environment (tests/python/meson.build): PARTITA (the CLI), PARTITAD, PARTITA_ROOT."""

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pkg_install import (SYSTEM_PYTHON, build_wheel, clean_env, make_venv, run,  # noqa: E402
                         skip_unless_installable)

ROOT = os.path.abspath(os.environ.get("PARTITA_ROOT",
                                      os.path.join(os.path.dirname(__file__), "..", "..")))
PARTITA = os.environ.get("PARTITA", "partita")
PARTITAD = os.environ.get("PARTITAD")
MODELS = os.path.join(ROOT, "configs", "models")

# python-control's rule for signal names, written out independently of the package: an
# identifier (no '.', which interconnect() reads as "system.signal"; no '[', read as an index).
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# Runs in the installed interpreter: prints JSON of what the package computes.
PROBE = r"""
import json, sys, numpy as np
import partita
out = {"file": partita.__file__, "pb2": sys.modules["partita_pb2"].__file__, "models": {}}
for path in sys.argv[1:]:
    m = partita.Model(path)
    lin = m.linearize()
    r = {"states": lin.state_names, "inputs": lin.input_names, "outputs": lin.output_names,
         "cstates": lin.states, "cinputs": lin.inputs, "coutputs": lin.outputs,
         "A": lin.A.tolist(), "B": lin.B.tolist(), "C": lin.C.tolist(), "D": lin.D.tolist(),
         "M": lin.mck["M"].tolist(), "Cm": lin.mck["C"].tolist(), "K": lin.mck["K"].tolist(),
         "eig": lin.eigen_table, "notes": lin.notes, "order": lin.order, "time": lin.time,
         "model": lin.model}
    out["models"][path] = r
print(json.dumps(out))
"""


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="partita-py-")
        wheel = build_wheel(ROOT, cls.tmp)
        cls.venv, cls.venv_python = make_venv(cls.tmp, wheel)
        # and plain /usr/bin/python3 on a target directory
        cls.target = os.path.join(cls.tmp, "target")
        p = run([SYSTEM_PYTHON, "-m", "pip", "install", "--no-index", "--no-deps", "--target",
                 cls.target, wheel], env=clean_env(), cwd=cls.tmp)
        if p.returncode != 0:
            raise AssertionError("pip install --target: " + p.stdout[-2000:] + p.stderr[-2000:])
        cls.models = sorted(glob.glob(os.path.join(MODELS, "*.yaml")) +
                            glob.glob(os.path.join(MODELS, "*.urdf")))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def py(self, code, *args, python=None, env=None):
        """Run code in a new process of the installed interpreter (from a neutral cwd)."""
        p = run([python or self.venv_python, "-c", code] + list(args),
                env=env or clean_env(), cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p.stdout

    def cli_json(self, *args):
        p = run([PARTITA] + list(args) + ["--json"], env=clean_env())
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def assert_close(self, a, b, what):
        import numpy as np
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        self.assertEqual(a.shape, b.shape, what)
        if a.size:
            scale = max(1.0, float(np.max(np.abs(b))))
            self.assertLessEqual(float(np.max(np.abs(a - b))), 1e-12 * scale, what)

    def check_linearizations(self, python, env=None):
        out = json.loads(self.py(PROBE, *self.models, python=python, env=env))
        self.assertNotIn(ROOT + "/client", out["file"])   # the installed package, not the tree
        self.assertEqual(os.path.dirname(out["pb2"]), os.path.dirname(out["file"]))
        for path in self.models:
            name = os.path.basename(path)
            r = out["models"][path]
            j = self.cli_json("linearize", path)
            self.assertEqual(r["states"], j["states"], name)
            self.assertEqual(r["inputs"], j["inputs"], name)
            self.assertEqual(r["outputs"], j["outputs"], name)
            self.assertEqual(r["notes"], j["notes"], name)
            self.assertEqual(r["order"], j["order"], name)
            self.assertEqual(r["model"], j["model"], name)
            self.assertEqual(r["time"], j["time"], name)
            for k in ("A", "B", "C", "D"):
                self.assert_close(r[k], j[k], "%s %s" % (name, k))
            for k, jk in (("M", "M"), ("Cm", "C"), ("K", "K")):
                self.assert_close(r[k], j["mck"][jk], "%s mck %s" % (name, jk))
            for k in ("re", "im", "freq_hz", "damping_ratio"):
                self.assert_close([e[k] for e in r["eig"]], [e[k] for e in j["eigenvalues"]],
                                  "%s eigenvalues %s" % (name, k))
            # names python-control accepts, one to one with the engine's
            for key in ("cstates", "cinputs", "coutputs"):
                self.assertEqual(len(set(r[key])), len(r[key]), (name, key))
                for n in r[key]:
                    self.assertRegex(n, IDENT, (name, key))
        return out

    def test_venv_linearize_equals_cli(self):
        out = self.check_linearizations(self.venv_python)
        self.assertTrue(out["file"].startswith(self.venv), out["file"])

    def test_system_python_linearize_equals_cli(self):
        env = clean_env()
        env["PYTHONPATH"] = self.target
        out = self.check_linearizations(SYSTEM_PYTHON, env=env)
        self.assertTrue(out["file"].startswith(self.target), out["file"])

    def test_names(self):
        code = r"""
import json, partita
m = partita.Model(%r)
lin = m.linearize(states=["shaft.angle"], outputs=["shaft.angle.acc", "shaft.slide.rate"])
print(json.dumps([lin.states, lin.state_names, lin.outputs, lin.output_names,
                  partita.control_names(["a.b", "a_b", "1x", "q[0]"])]))
""" % os.path.join(MODELS, "joint_cylindrical.yaml")
        states, names, outputs, onames, made = json.loads(self.py(code))
        self.assertEqual(names, ["shaft.angle", "shaft.angle.rate"])
        self.assertEqual(states, ["shaft_angle", "shaft_angle_dot"])
        self.assertEqual(onames, ["shaft.angle.acc", "shaft.slide.rate"])
        self.assertEqual(outputs, ["shaft_angle_ddot", "shaft_slide_dot"])
        self.assertEqual(made, ["a_b", "a_b_2", "_1x", "q_0_"])
        for n in states + outputs + made:
            self.assertRegex(n, IDENT)

    def test_step_inverse_equilibrium_equal_cli(self):
        pend = os.path.join(MODELS, "pendulum.yaml")
        door = os.path.join(MODELS, "door.yaml")
        four = os.path.join(MODELS, "fourbar_parallelogram.yaml")
        arm = os.path.join(MODELS, "arm2r.urdf")
        code = r"""
import json, sys, numpy as np, partita
pend, door, four, arm, panda = sys.argv[1:6]
m = partita.Model(pend)
d = m.data()
d.set_inputs({"tau": 0.25})
s = d.step(500)
out = {"t": s.time, "q": s.coordinates.tolist(), "qd": s.rates.tolist()}
out["door"] = partita.Model(door).inverse(at=1.0)["efforts"]
a = partita.Model(arm)
out["hold"] = a.inverse(gravity=True, init={"shoulder": 0.5, "elbow": 0.8})["efforts"]
out["eq"] = partita.Model(four).equilibrium()["coordinates"]
for key, opts in (("lim", {}), ("nolim", {"no_joint_limits": True})):
    pm = partita.Model(panda, **opts)     # its joint 4 starts outside its limits
    s = pm.data().step(100)
    out[key] = s.coordinates[pm.coordinate_names.index("panda_joint4")]
print(json.dumps(out))
"""
        panda = os.path.join(MODELS, "panda.urdf")
        r = json.loads(self.py(code, pend, door, four, arm, panda))
        sim = self.cli_json("simulate", pend, "--duration", "0.5", "--set", "tau=0.25")
        row, cols = sim["rows"][-1], sim["columns"]
        self.assertEqual(r["t"], row[cols.index("t")])
        self.assertEqual(r["q"], [row[cols.index("hinge")], row[cols.index("tip_z")]])
        self.assertEqual(r["qd"][0], row[cols.index("hinge.rate")])
        self.assertEqual(r["door"], self.cli_json("inverse", door, "--at", "1")["efforts"])
        self.assertEqual(r["hold"], self.cli_json("inverse", arm, "--gravity", "--init",
                                                  "shoulder=0.5", "--init", "elbow=0.8")
                         ["efforts"])
        for key, extra in (("lim", []), ("nolim", ["--no-joint-limits"])):
            sim = self.cli_json("simulate", panda, "--duration", "0.1", *extra)
            row, cols = sim["rows"][-1], sim["columns"]
            self.assertEqual(r[key], row[cols.index("panda_joint4")])
        self.assertNotEqual(r["lim"], r["nolim"])   # the option reached the engine
        eq = self.cli_json("equilibrium", four)["coordinates"]
        self.assertEqual(sorted(r["eq"]), sorted(eq))
        for k in eq:
            self.assertLess(abs(r["eq"][k] - eq[k]), 1e-12)

    def test_client_with_live_daemon(self):
        if not PARTITAD or not os.path.isfile(PARTITAD):
            self.skipTest("PARTITAD not set")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        addr = "127.0.0.1:%d" % port
        log = open(os.path.join(self.tmp, "partitad.log"), "w+")
        daemon = subprocess.Popen([PARTITAD, "--listen", addr], stdout=log,
                                  stderr=subprocess.STDOUT, env=clean_env())
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    self.assertIsNone(daemon.poll(), "partitad exited")
                    self.assertLess(time.monotonic(), deadline)
                    time.sleep(0.05)
            code = r"""
import json, sys, numpy as np, partita
addr, path = sys.argv[1:3]
with partita.Client(addr) as c:
    c.hello()
    info = c.load_model_file(path, mode="lockstep")
    s = c.step(info.name, 100)
    remote = c.linearize(info.name)
local_model = partita.Model(path)
local_model.step(100)
local = local_model.linearize()
print(json.dumps({"t": s.time, "lt": local_model.state.time,
                  "dA": float(np.max(np.abs(remote.A - local.A))),
                  "states": remote.states, "names": remote.state_names,
                  "lstates": local.states}))
"""
            r = json.loads(self.py(code, addr, os.path.join(MODELS, "pendulum.yaml")))
            self.assertAlmostEqual(r["t"], 0.1, places=12)
            self.assertEqual(r["t"], r["lt"])
            self.assertLess(r["dA"], 1e-12)
            self.assertEqual(r["states"], ["hinge", "hinge_dot"])
            self.assertEqual(r["names"], ["hinge", "hinge.rate"])
            self.assertEqual(r["states"], r["lstates"])
        finally:
            daemon.terminate()
            self.assertEqual(daemon.wait(timeout=30), 0)
            log.close()


if __name__ == "__main__":
    skip_unless_installable()   # exit 77 with a message: meson counts it skipped
    unittest.main(verbosity=2)
