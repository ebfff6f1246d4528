#!/usr/bin/python3
"""Tests of `partita inverse` and `partita equilibrium` with a model file.

References are closed forms:
- the lecture's door (configs/models/door.yaml: m = 30, J' = 2.5, CoM 0.5 m from a vertical
  hinge, K = 8, C = 1, phi(t) = pi/2 sin(pi t / 4)): motor torque
  tau = (J' + m d^2) phi'' + C phi' + K phi;
- a pendulum (rod CoM at d = 0.5 m, m = 10) with a torsion spring k = 25: equilibrium
  k theta = m g d sin(theta), solved here by a scalar Newton iteration.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

PARTITA = os.environ.get("PARTITA", "partita")
MODELS = os.environ.get("PARTITA_MODELS", os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "configs", "models"))

SPRING_PENDULUM = """\
model: spring_pendulum
bodies:
  - {name: rod, mass: 10, inertia: [0.8333333333333334, 0.8333333333333334, 0.01],
     position: [0, 0, 0.5]}
joints:
  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0], axis: [0, 1, 0]}
forces:
  - {name: spring, type: torsion_spring, joint: hinge, stiffness: 25, damping: 0, free_angle: 0}
"""


LIMITED = """\
model: limited
gravity: [0, 0, -9.81]
bodies:
  - {name: rod, mass: 2, inertia: [0.2, 0.2, 0.001], position: [0, 0, -0.5]}
joints:
  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0], axis: [0, 1, 0],
     limits: [0, 1.2]}
actuators:
  - {name: tau, type: joint_torque, joint: hinge}
"""

PAIR = """\
model: pair
gravity: [0, 0, -9.81]
bodies:
  - {name: a, mass: 1.0, inertia: [0.02, 0.02, 0.001], position: [0, 0, -0.5]}
  - {name: b, mass: 2.0, inertia: [0.01, 0.01, 0.001], position: [1, 0, -0.3]}
joints:
  - {name: ha, type: revolute, body1: ground, body2: a, point: [0, 0, 0], axis: [0, 1, 0],
     limits: [0.4, 1.0]}
  - {name: hb, type: revolute, body1: ground, body2: b, point: [1, 0, 0], axis: [0, 1, 0]}
couplers:
  - {name: link, follower: hb, leader: ha, multiplier: 0.5, offset: 0.1}
"""

ARM_LIMITED = """\
model: arm_v
gravity: [0, 0, -9.81]
bodies:
  - {name: l1, mass: 1.0, inertia: [0.1, 0.1, 0.01], position: [0, 0, -0.5]}
  - {name: l2, mass: 2.0, inertia: [0.05, 0.05, 0.01], position: [0, 0, -1.4]}
joints:
  - {name: shoulder, type: revolute, body1: ground, body2: l1, point: [0, 0, 0],
     axis: [0, 1, 0], limits: [0.3, 1.0]}
  - {name: elbow, type: revolute, body1: l1, body2: l2, point: [0, 0, -1], axis: [0, 1, 0]}
actuators:
  - {name: tau2, type: joint_torque, joint: elbow}
"""

def run(*args):
    p = subprocess.run([PARTITA] + list(args), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


class InverseTest(unittest.TestCase):
    def test_door_motor_torque(self):
        door = os.path.join(MODELS, "door.yaml")
        m, d, jp, k, c = 30.0, 0.5, 2.5, 8.0, 1.0
        for t in (0.3, 1.0, 1.7):
            rc, out, err = run("inverse", door, "--at", repr(t), "--json")
            self.assertEqual(rc, 0, err)
            res = json.loads(out)
            w = math.pi / 4
            phi = math.pi / 2 * math.sin(w * t)
            phid = math.pi / 2 * w * math.cos(w * t)
            phidd = -math.pi / 2 * w * w * math.sin(w * t)
            tau = (jp + m * d * d) * phidd + c * phid + k * phi
            self.assertAlmostEqual(res["time"], t, places=12)
            self.assertLess(abs(res["efforts"]["door_motor"] - tau), 1e-9 * max(1, abs(tau)),
                            (t, res["efforts"], tau))
            self.assertIn("hinge", res["reactions"])
            self.assertEqual(len(res["reactions"]["hinge"]["force"]), 3)

    def test_inverse_limit_held(self):
        # a two-link pendulum (hinges about y, gravity -z), the unactuated shoulder limited to
        # [0.3, 1.0], at rest on its lower bound, the elbow asked for a2: the limit holds the
        # shoulder (acceleration 0) with R1 = H12 a2 - Q1, the elbow takes tau2 = H22 a2 - Q2
        # (Q: gravity forces; H12 = I2 + m2 d2^2 + m2 L1 d2 cos t2, H22 = I2 + m2 d2^2)
        m1, L1, m2, d2, I2, g = 1.0, 1.0, 2.0, 0.4, 0.05, 9.81
        t1, t2, a2 = 0.3, 0.5, 1.5
        q1 = -g * (m1 * L1 / 2 * math.sin(t1) + m2 * (L1 * math.sin(t1) + d2 * math.sin(t1 + t2)))
        q2 = -g * m2 * d2 * math.sin(t1 + t2)
        r1 = (I2 + m2 * d2 * d2 + m2 * L1 * d2 * math.cos(t2)) * a2 - q1
        tau2 = (I2 + m2 * d2 * d2) * a2 - q2
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "arm.yaml")
            with open(path, "w") as f:
                f.write(ARM_LIMITED)
            rc, out, err = run("inverse", path, "--init", "shoulder=0.3", "--init", "elbow=0.5",
                               "--acc", "elbow=1.5", "--json")
            self.assertEqual(rc, 0, err)
            res = json.loads(out)
            self.assertLess(abs(res["limit_reactions"]["shoulder"] - r1), 1e-9 * r1, res)
            self.assertLess(abs(res["efforts"]["tau2"] - tau2), 1e-9 * tau2, res)
            self.assertLess(abs(res["accelerations"]["shoulder"]), 1e-12)
            self.assertEqual(len(res["limit_notes"]), 1)
            self.assertTrue(res["limit_notes"][0].startswith(
                "joint shoulder at its lower limit 0.3: held by the limit, treated as a "
                "constraint (reaction 14.48554"), res["limit_notes"])
            rc, out, err = run("inverse", path, "--init", "shoulder=0.3", "--init", "elbow=0.5",
                               "--acc", "elbow=1.5")
            self.assertEqual(rc, 0, err)
            self.assertIn("limits held (the limit's joint force or torque: >= 0 at a lower "
                          "bound, <= 0 at an upper one)\n  shoulder         lower 14.48554", out)
            # on the upper bound gravity pulls it away: released, it falls
            rc, out, err = run("inverse", path, "--init", "shoulder=1.0", "--init", "elbow=0.5",
                               "--acc", "elbow=1.5", "--json")
            self.assertEqual(rc, 0, err)
            res = json.loads(out)
            self.assertEqual(res["limit_reactions"], {})
            self.assertEqual(res["limit_notes"], [
                "joint shoulder at its upper limit 1 (coordinate 1): free: released, its "
                "limit's reaction would pull"])
            self.assertLess(res["accelerations"]["shoulder"], -1)

    def test_limit_noted(self):
        # a torque request at a joint's limit: answered as if free, and said so
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "lim.yaml")
            with open(path, "w") as f:
                f.write(LIMITED)
            rc, out, err = run("inverse", path, "--init", "hinge=1.2", "--acc", "hinge=0",
                               "--json")
            self.assertEqual(rc, 0, err)
            res = json.loads(out)
            self.assertEqual(res["limit_notes"], [
                "joint hinge at its upper limit 1.2 (coordinate 1.2): requested, treated as free "
                "(the actuator's effort and the limit's reaction cannot be separated)"])
            self.assertEqual(res["limit_reactions"], {})
            tau = 2 * 9.81 * 0.5 * math.sin(1.2)   # gravity held by the motor alone
            self.assertLess(abs(res["efforts"]["tau"] - tau), 1e-9)
            rc, out, err = run("inverse", path, "--init", "hinge=0.3", "--acc", "hinge=0",
                               "--json")
            self.assertNotIn("limit_notes", json.loads(out))
            # it hangs at 0, the lower bound, where the limit has nothing to hold
            rc, out, err = run("equilibrium", path, "--init", "hinge=1.0")
            self.assertEqual(rc, 0, err)
            self.assertIn("notes\n  joint hinge at its lower limit 0 (coordinate ", out)
            self.assertIn("): free, its limit does not push", out)
            # limits [0.4, 1.2]: from the upper bound, where the limit would pull, it is
            # released, falls and rests on the lower bound, which carries m g d sin(0.4)
            lim2 = os.path.join(tmp, "lim2.yaml")
            with open(lim2, "w") as f:
                f.write(LIMITED.replace("limits: [0, 1.2]", "limits: [0.4, 1.2]"))
            rc, out, err = run("equilibrium", lim2, "--init", "hinge=1.2", "--json")
            self.assertEqual(rc, 0, err)
            res = json.loads(out)
            self.assertAlmostEqual(res["coordinates"]["hinge"], 0.4, places=12)
            note = res["limit_notes"][0]
            self.assertTrue(note.startswith("joint hinge at its lower limit 0.4: held by the "
                                            "limit, treated as a constraint (reaction "), note)
            reaction = float(note.split("reaction ")[1].rstrip(")"))
            self.assertAlmostEqual(reaction, 2 * 9.81 * 0.5 * math.sin(0.4), places=6)
            rc, out, err = run("linearize", path, "--init", "hinge=1.2")
            self.assertEqual(rc, 0, err)
            # on its upper bound with gravity pulling it off: the limit releases, a free state
            self.assertIn("note: joint hinge at its upper limit 1.2 (coordinate 1.2): free, its "
                          "limit's reaction would pull (the limit releases)", out)
            # on its lower bound (limits [0.4, 1.2]) gravity pushes into it: held, not a state
            rc, out, err = run("linearize", lim2, "--init", "hinge=0.4")
            self.assertEqual(rc, 0, err)
            self.assertIn("note: joint hinge at its lower limit 0.4: held by the limit, treated "
                          "as a constraint (reaction 3.82019394): not a state", out)

    def test_free_model_refused(self):
        rc, out, err = run("inverse", os.path.join(MODELS, "double_pendulum.yaml"), "--json")
        self.assertNotEqual(rc, 0)
        self.assertIn("inverse", err)


class EquilibriumTest(unittest.TestCase):
    def test_coupler_and_limit_reported(self):
        # two rods on parallel hinges (a: 1 kg, CoM 0.5 m; b: 2 kg, CoM 0.3 m), hb = 0.5 ha + 0.1
        # by a coupler, ha limited to [0.4, 1.0]: gravity brings ha onto its lower bound, where
        # the coupler holds b with lam = m_b g d_b sin(0.3) and the limit carries
        # R = m_a g d_a sin(0.4) + 0.5 lam (the leader takes -multiplier x lam)
        g = 9.81
        lam = 2 * g * 0.3 * math.sin(0.3)
        reaction = 1 * g * 0.5 * math.sin(0.4) + 0.5 * lam
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "pair.yaml")
            with open(path, "w") as f:
                f.write(PAIR)
            rc, out, err = run("equilibrium", path, "--init", "ha=0.6", "--json")
            self.assertEqual(rc, 0, err)
            res = json.loads(out)
            self.assertAlmostEqual(res["coordinates"]["ha"], 0.4, places=12)
            self.assertAlmostEqual(res["coordinates"]["hb"], 0.3, places=12)
            self.assertLess(abs(res["coupler_efforts"]["link"] - lam), 1e-9 * lam, res)
            self.assertEqual(list(res["limit_reactions"]), ["ha"])
            self.assertLess(abs(res["limit_reactions"]["ha"] - reaction), 1e-9 * reaction, res)
            rc, out, err = run("equilibrium", path, "--init", "ha=0.6")
            self.assertEqual(rc, 0, err)
            self.assertIn("couplers (effort on the follower; the leader takes -multiplier times "
                          "it)\n  link             1.7394319364", out)
            self.assertIn("limits held (the limit's joint force or torque: >= 0 at a lower "
                          "bound, <= 0 at an upper one)\n  ha               lower 2.77981293", out)
            # a model without couplers or limits: both members present and empty
            spring = os.path.join(tmp, "spring.yaml")
            with open(spring, "w") as f:
                f.write(SPRING_PENDULUM)
            rc, out, err = run("equilibrium", spring, "--init", "hinge=1.0", "--json")
            self.assertEqual(rc, 0, err)
            res = json.loads(out)
            self.assertEqual((res["coupler_efforts"], res["limit_reactions"]), ({}, {}))

    def test_spring_pendulum(self):
        m, g, d, k = 10.0, 9.81, 0.5, 25.0
        th = 2.0  # the rod starts upright; the stable rest angle solves k th = m g d sin th
        for _ in range(50):
            th -= (k * th - m * g * d * math.sin(th)) / (k - m * g * d * math.cos(th))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sp.yaml")
            with open(path, "w") as f:
                f.write(SPRING_PENDULUM)
            rc, out, err = run("equilibrium", path, "--init", "hinge=1.0", "--json")
            self.assertEqual(rc, 0, err)
            res = json.loads(out)
        self.assertLess(abs(abs(res["coordinates"]["hinge"]) - th), 1e-9,
                        (res["coordinates"], th))
        f = res["reactions"]["hinge"]["force"]
        self.assertLess(abs(math.hypot(f[0], f[1], f[2]) - m * g), 1e-8, f)


if __name__ == "__main__":
    unittest.main()
