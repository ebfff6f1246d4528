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
        # the text also names the repository's example models (configs/models/...)
        os.symlink(os.path.join(ROOT, "configs"), os.path.join(work, "configs"))
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
                if name == "cartpole.yaml":
                    self.model_text = body
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

    def cartpole_closed_form(self):
        """The textbook cart-pole linearized upright, from the tutorial model's own numbers
        (not from the program): q = (rail x, hinge theta), M = [[m_c + m_p, m_p l],
        [m_p l, I_yy + m_p l^2]], the stiffness K = diag(0, -m_p g l) of a pole above its
        hinge, and the lower-left block of A is -M^-1 K: its hinge column is
        (-m_p l (-m_p g l), (m_c + m_p)(-m_p g l)) / det M with the sign flipped, i.e.
        (-m_p^2 g l^2, (m_c + m_p) m_p g l) / det M. Its eigenvalues are 0, 0 and
        +-sqrt(A[hinge.rate, hinge])."""
        text = self.model_text
        mc, mp = [float(x) for x in re.findall(r"^\s*mass:\s*([-+\d.eE]+)", text, re.M)]
        inertia = re.findall(r"^\s*inertia:\s*\[([^\]]*)\]", text, re.M)[1]
        iyy = float(inertia.split(",")[1])
        pole_z = float(re.findall(r"^\s*position:\s*\[([^\]]*)\]", text, re.M)[1].split(",")[2])
        g = -float(re.search(r"^gravity:\s*\[([^\]]*)\]", text, re.M).group(1).split(",")[2])
        l = pole_z            # the hinge is at the origin, the pole's CoM straight above it
        m = [[mc + mp, mp * l], [mp * l, iyy + mp * l * l]]
        det = m[0][0] * m[1][1] - m[0][1] * m[1][0]
        k_hinge = -mp * g * l
        a_rail = -mp * mp * g * l * l / det
        a_hinge = (mc + mp) * mp * g * l / det
        return m, k_hinge, a_rail, a_hinge

    def row_after(self, text, block, name):
        """The numbers of row `name` in the matrix block that starts with `block`."""
        lines = text[text.index(block):].splitlines()
        for line in lines[2:]:                 # past the title and the column names
            parts = line.split()
            if parts and parts[0] == name:
                return [float(x) for x in parts[1:]]
        self.fail("no row %s after %s:\n%s" % (name, block, text))

    def check_linearization(self, lin):
        m, k_hinge, a_rail, a_hinge = self.cartpole_closed_form()
        # printed with 7 significant digits: half a unit of the last one
        def close(printed, exact):
            self.assertLessEqual(abs(printed - exact), 5e-7 * abs(exact) + 1e-12,
                                 (printed, exact, lin))
        close(self.row_after(lin, "A (", "rail.rate")[1], a_rail)      # -1.401397
        close(self.row_after(lin, "A (", "hinge.rate")[1], a_hinge)    # 16.81676
        mr, mh = self.row_after(lin, "M (", "rail"), self.row_after(lin, "M (", "hinge")
        for printed, exact in zip(mr + mh, m[0] + m[1]):
            close(printed, exact)
        close(self.row_after(lin, "K (", "hinge")[1], k_hinge)        # -0.981
        # the eigenvalue table (re im freq_hz damping_ratio, one row each; re to 10 digits)
        eig = [float(line.split()[0]) for line in
               lin[lin.index("eigenvalues"):].splitlines()[2:6]]
        lam = a_hinge ** 0.5
        self.assertTrue(any(abs(e - lam) <= 1e-9 * lam for e in eig), (eig, lam))
        self.assertTrue(any(abs(e + lam) <= 1e-9 * lam for e in eig), (eig, lam))

    def check(self, outputs):
        self.assertIn("dof          2", self.output_of(outputs, "partita check"))
        sim = self.output_of(outputs, "partita simulate").strip().splitlines()
        self.assertEqual(sim[0].split(",")[:3], ["t", "rail", "hinge"])
        self.assertGreater(float(sim[-1].split(",")[2]), 3.0)   # the pole fell
        self.check_linearization(self.output_of(outputs, "partita linearize"))
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
        self.check_model_controller(outputs)

    def check_model_controller(self, outputs):
        """Section 8: the LQR as control elements holds the pole from 0.2 rad, and the
        closed loop's eigenvalues are those the text prints (A - B K, K to 3 decimals)."""
        body = self.output_of(outputs, "simulate configs/models/cartpole_lqr.yaml")
        rows = [line.split(",") for line in body.strip().splitlines()]
        col = rows[0].index("hinge")
        csv = [r for r in rows[1:] if len(r) == len(rows[0])]
        self.assertLess(abs(float(csv[-1][col])), 1e-3, csv[-1])
        text = body[body.index("eigenvalues"):].splitlines()[2:6]
        eig = sorted((float(line.split()[0]), abs(float(line.split()[1]))) for line in text)
        for (re_, im), (want_re, want_im) in zip(eig, [(-4.484, 1.464), (-4.484, 1.464),
                                                       (-1.076, 0.913), (-1.076, 0.913)]):
            self.assertAlmostEqual(re_, want_re, delta=6e-4)
            self.assertAlmostEqual(im, want_im, delta=6e-4)


if __name__ == "__main__":
    skip_unless_installable(["scipy"])   # exit 77 with a message: meson counts it skipped
    unittest.main(verbosity=2)
