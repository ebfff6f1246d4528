#!/usr/bin/python3
"""Runs docs/tutorial.md: every ```yaml FILE / ```python FILE block is saved under its name
and every ```sh block is run with bash (-e) in order, in a temporary directory, with
`partita`, `partitad` and `python3` on PATH being the build's programs and a virtual
environment with the package installed; the ports 7450 / 7451 of the text become free ones.
Then the outputs are checked: the linearization's numbers, the LQR's closed loop in the
engine, and the controller holding the pole in partitad (its own report of the largest hinge
angle after 2 s), the watch frames and the stats. No wall-clock rate is asserted.

Environment (tests/python/meson.build): PARTITA, PARTITAD, PARTITA_ROOT."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pkg_install import build_wheel, clean_env, make_venv, skip_unless_installable  # noqa: E402

ROOT = os.path.abspath(os.environ.get("PARTITA_ROOT",
                                      os.path.join(os.path.dirname(__file__), "..", "..")))
PARTITA = os.environ.get("PARTITA")
PARTITAD = os.environ.get("PARTITAD")
BLOCK = re.compile(r"^```(\w+)(?:[ \t]+(\S+))?[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


def free_port(kind):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tutorial(unittest.TestCase):
    def test_tutorial(self):
        with open(os.path.join(ROOT, "docs", "tutorial.md")) as f:
            text = f.read()
        blocks = BLOCK.findall(text)
        self.assertGreater(len(blocks), 8)
        tmp = tempfile.mkdtemp(prefix="partita-tutorial-")
        try:
            self.run_blocks(blocks, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def run_blocks(self, blocks, tmp):
        wheel = build_wheel(ROOT, tmp)
        _venv, python = make_venv(tmp, wheel)
        tcp, udp = free_port(socket.SOCK_STREAM), free_port(socket.SOCK_DGRAM)
        bindir = os.path.join(tmp, "bin")
        os.makedirs(bindir)
        wrappers = {"partita": 'exec "%s" "$@"\n' % PARTITA,
                    "partitad": 'exec "%s" --listen 127.0.0.1:%d "$@"\n' % (PARTITAD, tcp),
                    "python3": 'exec "%s" "$@"\n' % python}
        for name, body in wrappers.items():
            path = os.path.join(bindir, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + body)
            os.chmod(path, 0o755)
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        env = clean_env()
        env["PATH"] = bindir + os.pathsep + env["PATH"]
        env["PARTITA_CONNECT"] = "127.0.0.1:%d" % tcp
        env.pop("PARTITA_SOCKET", None)
        outputs = []
        for lang, name, body in blocks:
            body = body.replace("7450", str(tcp)).replace("7451", str(udp))
            if name and lang in ("yaml", "python"):
                with open(os.path.join(work, name), "w") as f:
                    f.write(body)
            elif lang == "sh":
                proc = subprocess.Popen(["bash", "-e", "-c", body], cwd=work, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, start_new_session=True)
                try:
                    out, err = proc.communicate(timeout=300)
                finally:
                    try:   # whatever the block left running (a daemon after a failure)
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                log = os.path.join(work, "partitad.log")
                extra = open(log).read()[-3000:] if os.path.isfile(log) else ""
                self.assertEqual(proc.returncode, 0, "block:\n%s\nstdout:\n%s\nstderr:\n%s\n%s"
                                 % (body, out[-3000:], err[-3000:], extra))
                for mark in ("Sanitizer", "runtime error:"):
                    self.assertNotIn(mark, err)
                outputs.append((body, out))
        self.check(outputs)

    def output_of(self, outputs, command):
        for body, out in outputs:
            if command in body:
                return out
        self.fail("no block runs %r" % command)

    def check(self, outputs):
        self.assertIn("dof          2", self.output_of(outputs, "partita check"))
        sim = self.output_of(outputs, "partita simulate").strip().splitlines()
        self.assertEqual(sim[0].split(",")[:3], ["t", "rail", "hinge"])
        self.assertGreater(float(sim[-1].split(",")[2]), 3.0)   # the pole fell
        lin = self.output_of(outputs, "partita linearize")
        self.assertIn("16.81676", lin)
        self.assertIn("-0.981", lin)
        lqr = self.output_of(outputs, "python3 lqr.py")
        eig = re.search(r"closed-loop eigenvalues: \[(.*)\]", lqr).group(1)
        for z in re.findall(r"([-+]?\d+\.\d+)[-+]\d+\.\d+j|([-+]?\d+\.\d+)(?=[ \]]|$)", eig):
            re_part = float(z[0] or z[1])
            self.assertLess(re_part, 0)
        last = lqr.strip().splitlines()[-1]
        hinge = float(re.search(r"hinge = ([-+]\d+\.\d+)", last).group(1))
        self.assertLess(abs(hinge), 0.005, last)
        live = self.output_of(outputs, "python3 balance.py")
        m = re.search(r"(\d+) inputs sent .* \|hinge\| stayed below (\d+\.\d+) rad", live)
        self.assertIsNotNone(m, live)
        self.assertGreater(int(m.group(1)), 0)
        self.assertLess(float(m.group(2)), 0.05, live)   # balanced, whatever the pace
        self.assertEqual(live.count("cartpole  t = "), 3, live)   # partita watch --count 3
        self.assertIn("overruns", live)                           # partita stats


if __name__ == "__main__":
    skip_unless_installable(["scipy"])   # exit 77 with a message: meson counts it skipped
    unittest.main(verbosity=2)
