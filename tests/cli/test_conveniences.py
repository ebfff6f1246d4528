#!/usr/bin/python3
"""`partita inverse --gravity`, `--acc all=V` and `partita linearize --set` on a model file.

References:
- holding torques of a planar double pendulum (two uniform rods, masses m1, m2, lengths l1,
  l2, centres of mass at half length, hinges about y): tau2 = m2 g c2 sin(q1 + q2),
  tau1 = (m1 c1 + m2 l1) g sin(q1) + tau2, whatever the rates in the file (they are zeroed);
- `linearize --set`: the acceleration rows of A (d qdd / d q with the inputs held) against
  central differences of the forward dynamics, each acceleration read from one semi-implicit
  Euler step from rest (v1 = h qdd(q0)) of `partita simulate --set`; and at the holding torques
  the state is an equilibrium (qdd = 0).
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

PARTITA = os.environ.get("PARTITA", "partita")
M1, M2, L1, L2, G = 2.0, 1.0, 1.0, 0.8, 9.81

# Both rods hang along -z at t = 0 and swing (omega = 2 rad/s): --gravity must zero the rates.
ARM = """\
model: arm
gravity: [0, 0, -9.81]
bodies:
  - {{name: upper, mass: {m1}, inertia: [{i1}, {i1}, 0.0001], position: [0, 0, {z1}],
     velocity: [{v1}, 0, 0], angular_velocity: [0, 2, 0]}}
  - {{name: lower, mass: {m2}, inertia: [{i2}, {i2}, 0.0001], position: [0, 0, {z2}],
     velocity: [{v2}, 0, 0], angular_velocity: [0, 2, 0]}}
joints:
  - {{name: shoulder, type: revolute, body1: ground, body2: upper, point: [0, 0, 0], axis: [0, 1, 0]}}
  - {{name: elbow, type: revolute, body1: upper, body2: lower, point: [0, 0, {l1n}], axis: [0, 1, 0]}}
actuators:
  - {{name: tau1, type: joint_torque, joint: shoulder}}
  - {{name: tau2, type: joint_torque, joint: elbow}}
""".format(m1=M1, m2=M2, i1=M1 * L1 ** 2 / 12, i2=M2 * L2 ** 2 / 12, z1=-L1 / 2,
           z2=-(L1 + L2 / 2), v1=-2 * L1 / 2, v2=-2 * (L1 + L2 / 2), l1n=-L1)


def run(*args):
    p = subprocess.run([PARTITA] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=120)
    for mark in ("Sanitizer", "runtime error:"):
        assert mark not in p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def run_json(*args):
    rc, out, err = run(*args, "--json")
    assert rc == 0, "partita %s: exit %d\n%s" % (" ".join(map(str, args)), rc, err)
    return json.loads(out)


def holding(q1, q2):
    tau2 = M2 * G * (L2 / 2) * math.sin(q1 + q2)
    return (M1 * L1 / 2 + M2 * L1) * G * math.sin(q1) + tau2, tau2


class Conveniences(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="partita-conv-")
        cls.arm = os.path.join(cls.tmp.name, "arm.yaml")
        with open(cls.arm, "w") as f:
            f.write(ARM)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def at(self, q1, q2):
        return ["--init", "shoulder=%r" % q1, "--init", "elbow=%r" % q2]

    def test_gravity_closed_form(self):
        for q1, q2 in [(0.3, 0.9), (-1.1, 0.4), (2.0, -2.5)]:
            res = run_json("inverse", self.arm, "--gravity", *self.at(q1, q2))
            t1, t2 = holding(q1, q2)
            self.assertLess(abs(res["efforts"]["tau1"] - t1), 1e-10, (res["efforts"], t1))
            self.assertLess(abs(res["efforts"]["tau2"] - t2), 1e-10, (res["efforts"], t2))
            for name in ("shoulder", "elbow"):
                self.assertLess(abs(res["rates"][name]), 1e-12)
                self.assertLess(abs(res["accelerations"][name]), 1e-9)
        # the file's rates (2 rad/s) are not zero: a plain torque request there differs
        res = run_json("inverse", self.arm, "--acc", "all=0", *self.at(0.3, 0.9))
        self.assertGreater(abs(res["efforts"]["tau2"] - holding(0.3, 0.9)[1]), 0.1)

    def test_acc_all(self):
        q = self.at(0.3, 0.9) + ["--init-rate", "shoulder=0", "--init-rate", "elbow=0"]
        a = run_json("inverse", self.arm, "--acc", "all=0", *q)
        g = run_json("inverse", self.arm, "--gravity", *self.at(0.3, 0.9))
        for name in ("tau1", "tau2"):
            self.assertLess(abs(a["efforts"][name] - g["efforts"][name]), 1e-10)
        # a named coordinate overrides all=V, in either order
        b = run_json("inverse", self.arm, "--acc", "all=1.5", "--acc", "elbow=-2", *q)
        c = run_json("inverse", self.arm, "--acc", "elbow=-2", "--acc", "shoulder=1.5", *q)
        self.assertEqual(b["efforts"], c["efforts"])
        self.assertLess(abs(b["accelerations"]["shoulder"] - 1.5), 1e-9)
        self.assertLess(abs(b["accelerations"]["elbow"] + 2), 1e-9)

    def test_gravity_refusals(self):
        for extra in (["--acc", "elbow=0"], ["--init-rate", "elbow=0"]):
            rc, out, err = run("inverse", self.arm, "--gravity", *extra)
            self.assertEqual(rc, 2, err)
            self.assertIn("--gravity", err)
        rc, out, err = run("linearize", self.arm, "--set", "nope=1")
        self.assertEqual(rc, 2)
        self.assertIn("no actuator input 'nope'", err)
        rc, out, err = run("linearize", self.arm, "--set", "tau1=nan")
        self.assertEqual(rc, 2)

    def qdd(self, q1, q2, t1, t2, h=1e-7):
        """Accelerations at (q1, q2) from rest with inputs (t1, t2): one Euler step."""
        res = run_json("simulate", self.arm, "--integrator", "euler", "--dt", repr(h),
                       "--duration", repr(h), "--set", "tau1=%r" % t1, "--set", "tau2=%r" % t2,
                       *self.at(q1, q2), "--init-rate", "shoulder=0", "--init-rate", "elbow=0")
        row = res["rows"][-1]
        cols = res["columns"]
        return [row[cols.index(n + ".rate")] / h for n in ("shoulder", "elbow")]

    def test_linearize_set(self):
        q1, q2 = 0.5, 0.8
        t1, t2 = holding(q1, q2)
        at = self.at(q1, q2) + ["--init-rate", "shoulder=0", "--init-rate", "elbow=0",
                                "--states", "shoulder,elbow"]
        held = run_json("linearize", self.arm, "--set", "tau1=%r" % t1, "--set", "tau2=%r" % t2,
                        *at)
        free = run_json("linearize", self.arm, *at)
        self.assertEqual(held["states"], ["shoulder", "elbow", "shoulder.rate", "elbow.rate"])
        # held there, the arm is at rest: an equilibrium
        acc = self.qdd(q1, q2, t1, t2)
        self.assertLess(max(abs(a) for a in acc), 1e-6, acc)
        # d qdd / d q by central differences with the torques held
        e = 1e-5
        for j in range(2):
            qp = [q1, q2]
            qm = [q1, q2]
            qp[j] += e
            qm[j] -= e
            ap = self.qdd(qp[0], qp[1], t1, t2)
            am = self.qdd(qm[0], qm[1], t1, t2)
            for i in range(2):
                fd = (ap[i] - am[i]) / (2 * e)
                self.assertLess(abs(held["A"][2 + i][j] - fd), 2e-5 * max(1, abs(fd)),
                                (i, j, held["A"][2 + i][j], fd))
        # the torques change the linearization (the test would see --set ignored)
        diff = max(abs(held["A"][i][j] - free["A"][i][j]) for i in range(4) for j in range(4))
        self.assertGreater(diff, 0.1)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)
