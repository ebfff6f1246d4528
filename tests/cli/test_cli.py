#!/usr/bin/python3
"""Tests of the `partita` command line, offline commands (check, simulate).

Runs the real binary. Environment (set by tests/cli/meson.build):
  PARTITA         path of the partita executable
  PARTITA_MODELS  the example models directory (configs/models)
Usage: test_cli.py [unittest arguments, e.g. a TestCase name]

Reference numbers come from closed forms for models this file writes itself (a pendulum of
known mass and inertia, a motion-driven hinge), never from an earlier run of the program.
"""
import csv
import io
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
TIMEOUT = 120

# A 2 kg link whose CoM sits 0.5 m from a hinge about +y at the origin: moment of inertia
# about the hinge I = Iyy + m d^2 = 0.03 + 2 * 0.25 = 0.53.
MASS, DIST, IYY = 2.0, 0.5, 0.03
I_HINGE = IYY + MASS * DIST ** 2
G = 9.81

PENDULUM = """\
model: tmp_pendulum
gravity: [0, 0, {gz}]
simulation:
  dt: 0.002
  integrator: abm4
bodies:
  - name: link
    mass: 2.0
    inertia: [0.01, 0.03, 0.02]
    position: [0.5, 0, 0]
joints:
  - name: hinge
    type: revolute
    body1: ground
    body2: link
    point: [0, 0, 0]
    axis: [0, 1, 0]
actuators:
  - name: tau
    type: joint_torque
    joint: hinge
coordinates:
  - name: tip_z
    type: point_position
    body: link
    point: [1, 0, 0]
    component: z
"""

DOUBLE = """\
model: tmp_double
simulation:
  dt: 0.001
bodies:
  - name: l1
    mass: 1.0
    inertia: [0.01, 0.01, 0.01]
    position: [0.5, 0, 0]
  - name: l2
    mass: 1.0
    inertia: [0.01, 0.01, 0.01]
    position: [1.5, 0, 0]
joints:
  - name: j1
    type: revolute
    body1: ground
    body2: l1
    point: [0, 0, 0]
    axis: [0, 1, 0]
  - name: j2
    type: revolute
    body1: l1
    body2: l2
    point: [1, 0, 0]
    axis: [0, 1, 0]
"""

# The hinge follows 0.3 sin(2 t): no degree of freedom left.
DRIVEN = """\
model: tmp_driven
simulation:
  dt: 0.01
bodies:
  - name: link
    mass: 2.0
    inertia: [0.01, 0.03, 0.02]
    position: [0.5, 0, 0]
joints:
  - name: hinge
    type: revolute
    body1: ground
    body2: link
    point: [0, 0, 0]
    axis: [0, 1, 0]
motions:
  - name: drive
    joint: hinge
    profile: sine
    offset: 0.0
    amplitude: 0.3
    omega: 2.0
    phase: 0.0
"""

BAD_KEY = """\
model: tmp_bad
bodies:
  - name: link
    mass: 1.0
    colour: red
    inertia: [0.01, 0.01, 0.01]
    position: [0.5, 0, 0]
"""


def run(*args):
    """Runs partita; returns (exit code, stdout, stderr)."""
    p = subprocess.run([PARTITA] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]


BAD_INERTIA_URDF = """<robot name="bad_inertia"><link name="world"/>
<link name="arm"><inertial><mass value="1"/>
<inertia ixx="0.001" iyy="0.001" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j" type="continuous"><parent link="world"/><child link="arm"/>
<axis xyz="0 0 1"/></joint></robot>
"""



BOX_ON_FLOOR = """\
model: box_on_floor
ground:
  collision:
    - {type: plane, point: [0, 0, 0], normal: [0, 0, 1]}
bodies:
  - name: box
    mass: 1.0
    inertia: [0.0067, 0.0067, 0.0067]
    position: [0, 0, 0.1]
    collision:
      - {type: box, size: [0.2, 0.2, 0.2]}
"""

BLOCK_URDF = """\
<robot name="block">
  <link name="block">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
</robot>
"""

class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="partita-cli-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def model(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def pendulum(self, gz=-G):
        return self.model("pendulum.yaml", PENDULUM.format(gz=gz))

    def ok(self, *args):
        code, out, err = run(*args)
        self.assertEqual(code, 0, "partita %s failed (%d): %s" % (" ".join(map(str, args)),
                                                                  code, err))
        return out, err

    def fails(self, code_wanted, *args):
        code, out, err = run(*args)
        self.assertEqual(code, code_wanted, "partita %s: exit %d, stderr: %s"
                         % (" ".join(map(str, args)), code, err))
        self.assertTrue(err.strip(), "a failure must say why on stderr")
        self.assertNotIn("Sanitizer", err)
        return out, err

    def simulate(self, *args):
        out, _ = self.ok("simulate", *args)
        return parse_csv(out)


LIMITED = """\
model: limited
gravity: [0, 0, -9.81]
bodies:
  - {name: rod, mass: 2, inertia: [0.2, 0.2, 0.001], position: [0, 0, -0.5]}
joints:
  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0], axis: [0, 1, 0],
     limits: [-0.5, 1.2]}
actuators:
  - {name: tau, type: joint_torque, joint: hinge}
simulation: {restitution: 0.5}
"""


class CheckTest(Base):
    def test_pendulum_json(self):
        out, _ = self.ok("check", self.pendulum(), "--json")
        info = json.loads(out)
        for key in ("model", "bodies", "constraints", "dof", "coordinates", "actuators",
                    "motions", "independent"):
            self.assertIn(key, info)
        self.assertEqual(info["model"], "tmp_pendulum")
        self.assertEqual(info["bodies"], 1)
        self.assertEqual(info["constraints"], 5)   # a revolute joint removes 5 freedoms
        self.assertEqual(info["dof"], 1)
        self.assertEqual(info["coordinates"], ["hinge", "tip_z"])
        self.assertEqual(info["actuators"], ["tau"])
        self.assertEqual(info["motions"], [])
        self.assertEqual(len(info["independent"]), 1)
        self.assertEqual(info["integrator"], "abm4")
        self.assertEqual(info["dt"], 0.002)

    def test_double_pendulum_and_motion(self):
        info = json.loads(self.ok("check", self.model("d.yaml", DOUBLE), "--json")[0])
        self.assertEqual((info["dof"], info["constraints"], info["coordinates"]),
                         (2, 10, ["j1", "j2"]))
        self.assertEqual(len(info["independent"]), 2)
        self.assertEqual(info["integrator"], "rk4")   # the format's default
        info = json.loads(self.ok("check", self.model("m.yaml", DRIVEN), "--json")[0])
        self.assertEqual((info["dof"], info["motions"], info["independent"]),
                         (0, ["drive"], []))

    def test_text_summary(self):
        out, _ = self.ok("check", self.pendulum())
        lines = {l.split()[0]: l.split(None, 1)[1] for l in out.splitlines() if l.strip()}
        self.assertEqual(lines["model"], "tmp_pendulum")
        self.assertEqual(lines["dof"], "1")
        self.assertTrue(lines["coordinates"].startswith("2: hinge, tip_z"), lines)
        self.assertTrue(lines["actuators"].startswith("1: tau"), lines)

    def test_example_pendulum(self):
        path = os.path.join(MODELS, "pendulum.yaml")
        info = json.loads(self.ok("check", path, "--json")[0])
        self.assertEqual(info["dof"], 1)
        self.assertEqual(info["coordinates"][0], "hinge")   # joint coordinates come first
        self.assertEqual(len(info["independent"]), 1)

    def test_missing_file(self):
        path = os.path.join(self.dir, "no_such_model.yaml")
        _, err = self.fails(1, "check", path)
        self.assertIn("no_such_model.yaml", err)

    def test_malformed_model(self):
        path = self.model("bad.yaml", BAD_KEY)
        out, err = self.fails(1, "check", path, "--json")
        self.assertIn("bad.yaml", err)
        self.assertIn("colour", err)
        self.assertEqual(out, "")

    def test_balance_inertia(self):
        path = self.model("arm.urdf", BAD_INERTIA_URDF)
        _, err = self.fails(1, "check", path)
        self.assertIn('arm.urdf:3: link "arm": inertia is not physical', err)
        self.assertIn("--balance-inertia", err)
        for cmd in ("check", "simulate"):
            out, err = self.ok(cmd, path, "--balance-inertia")
            self.assertIn('arm.urdf:3: link "arm": inertia repaired (balance_inertia)', err)
            self.assertEqual(err.count("inertia repaired"), 1, err)

    def test_joint_limits(self):
        text = LIMITED
        info = json.loads(self.ok("check", self.model("lim.yaml", text), "--json")[0])
        self.assertEqual(info["limits"], {"hinge": [-0.5, 1.2]})
        self.assertEqual((info["limits_enforced"], info["restitution"]), (True, 0.5))
        out, _ = self.ok("check", self.model("lim.yaml", text))
        self.assertIn("limits       hinge [-0.5, 1.2] (enforced, restitution 0.5)\n", out)
        off = text.replace("restitution: 0.5", "joint_limits: off")
        out, _ = self.ok("check", self.model("off.yaml", off))
        self.assertIn("limits       hinge [-0.5, 1.2] (not enforced)\n", out)
        # released at 1 rad: stopped at -0.5, or swinging to -1 with --no-joint-limits
        path = self.model("lim.yaml", text)
        for flag, low in ((), -0.5), (("--no-joint-limits",), -0.99):
            out, _ = self.ok("simulate", path, "--init", "hinge=1", "--duration", "1", *flag)
            cols, rows = parse_csv(out)
            lowest = min(r[cols.index("hinge")] for r in rows)
            if flag:
                self.assertLess(lowest, low)
            else:
                self.assertGreaterEqual(lowest, low)
        _, err = self.fails(1, "check", self.model("bad.yaml", text.replace("[-0.5, 1.2]",
                                                                           "[2, 1]")))
        self.assertIn("bad.yaml:7: joints[0] \"hinge\": limits: lower must be less than upper "
                      "(lower = 2, upper = 1)", err)

    def test_collision_and_ground_plane(self):
        """check lists the collision shapes and candidate pairs (issue 22); --ground-plane Z
        adds the plane z = Z to a model, a URDF as well; a bad Z is a usage error."""
        box = self.model("box.yaml", BOX_ON_FLOOR)
        out, _ = self.ok("check", box)
        self.assertIn("collision    2 shapes (1 plane, 1 box), 1 candidate pair, up to 4 "
                      "contacts\n", out)
        info = json.loads(self.ok("check", box, "--json")[0])
        self.assertEqual(info["collision"], {"shapes": [{"body": "ground", "type": "plane"},
                                                        {"body": "box", "type": "box"}],
                                             "pairs": 1, "max_contacts": 4})
        self.assertNotIn("collision", json.loads(self.ok("check", self.pendulum(),
                                                         "--json")[0]))
        urdf = self.model("block.urdf", BLOCK_URDF)
        out, _ = self.ok("check", urdf, "--floating-base", "--ground-plane", "-0.25")
        self.assertIn("collision    2 shapes (1 plane, 1 box), 1 candidate pair", out)
        out, _ = self.ok("check", urdf, "--ground-plane=-0.25")   # welded: never touches
        self.assertIn("collision    2 shapes (1 plane, 1 box), 0 candidate pairs", out)
        _, err = self.fails(2, "check", urdf, "--ground-plane", "low")
        self.assertIn("--ground-plane: 'low' is not a finite number", err)
        self.fails(2, "check", urdf, "--ground-plane")

    def test_usage_errors(self):
        self.fails(2, "check")
        self.fails(2, "check", self.pendulum(), "--bogus")
        self.fails(2, "check", self.pendulum(), self.pendulum())
        self.fails(2, "no-such-command")
        self.fails(2)

    def test_help_and_version(self):
        out, _ = self.ok("--help")
        for cmd in ("check", "simulate", "inverse", "linearize", "equilibrium", "models"):
            self.assertIn("partita " + cmd, out)
        out, _ = self.ok("simulate", "--help")
        for opt in ("--duration", "--dt", "--integrator", "--every", "--set", "--init",
                    "--init-rate", "--json"):
            self.assertIn(opt, out)
        out, _ = self.ok("--version")
        self.assertRegex(out, r"^partita \d+\.\d+\.\d+")


class SimulateTest(Base):
    HEADER = ["t", "hinge", "tip_z", "hinge.rate", "tip_z.rate", "energy", "residual_pos",
              "residual_vel"]

    def test_header_and_rows(self):
        # round(0.1 / 0.01) = 10 steps; rows at steps 0, 3, 6, 9.
        header, rows = self.simulate(self.pendulum(), "--duration", 0.1, "--dt", 0.01,
                                     "--every", 3)
        self.assertEqual(header, self.HEADER)
        self.assertEqual(len(rows), 4)
        for r, step in zip(rows, (0, 3, 6, 9)):
            self.assertEqual(len(r), len(header))
            self.assertAlmostEqual(r[0], step * 0.01, places=12)
        # round(0.1 / 0.03) = 3 steps
        _, rows = self.simulate(self.pendulum(), "--duration=0.1", "--dt=0.03")
        self.assertEqual(len(rows), 4)
        _, rows = self.simulate(self.pendulum(), "--duration", 0)
        self.assertEqual(len(rows), 1)

    def test_defaults_from_model(self):
        # duration 1 s, the model's dt 0.002: 500 steps, 501 rows
        _, rows = self.simulate(self.pendulum())
        self.assertEqual(len(rows), 501)
        self.assertAlmostEqual(rows[1][0], 0.002, places=12)
        self.assertAlmostEqual(rows[-1][0], 1.0, places=9)

    def test_json_equals_csv(self):
        args = (self.pendulum(), "--duration", 0.05, "--dt", 0.005, "--init", "hinge=0.3")
        header, rows = self.simulate(*args)
        out, _ = self.ok("simulate", *args, "--json")
        doc = json.loads(out)
        self.assertEqual(doc["columns"], header)
        self.assertEqual(len(doc["rows"]), len(rows))
        for a, b in zip(doc["rows"], rows):
            # exact: both print the same doubles with %.17g; JSON has null for non-finite
            self.assertEqual(a, [None if not math.isfinite(x) else x for x in b])

    def test_init_position(self):
        path = self.pendulum()
        _, rows = self.simulate(path, "--duration", 0.01, "--init", "hinge=0.5")
        t, hinge, tip_z, rate = rows[0][0], rows[0][1], rows[0][2], rows[0][3]
        self.assertEqual(t, 0.0)
        self.assertAlmostEqual(hinge, 0.5, delta=1e-12)
        self.assertAlmostEqual(rate, 0.0, delta=1e-12)
        # Right-hand rotation by 0.5 about +y takes the tip (1, 0, 0) to z = -sin(0.5).
        self.assertAlmostEqual(tip_z, -math.sin(0.5), delta=1e-10)
        # Potential energy changes by m g dz of the CoM: dz = -0.5 sin(0.5).
        _, rest = self.simulate(path, "--duration", 0.01)
        de = rows[0][5] - rest[0][5]
        self.assertAlmostEqual(de, MASS * G * (-DIST * math.sin(0.5)), delta=1e-9)

    def test_init_rate_free_spin(self):
        # No gravity, no torque: the hinge spins at the given rate, energy I w^2 / 2. The
        # step is fine enough (1 ms) that RK4's truncation error in the engine's Euler-parameter
        # coordinates (about 3e-9 at 10 ms) stays far below the 1e-9 tolerance.
        path = self.pendulum(gz=0)
        _, rows = self.simulate(path, "--duration", 0.5, "--dt", 0.001, "--init-rate",
                                "hinge=2", "--integrator", "rk4", "--every", 100)
        self.assertEqual(len(rows), 6)
        for r in rows:
            self.assertAlmostEqual(r[1], 2.0 * r[0], delta=1e-9)
            self.assertAlmostEqual(r[3], 2.0, delta=1e-9)
            self.assertAlmostEqual(r[5], 0.5 * I_HINGE * 4.0, delta=1e-9)
            self.assertLess(r[6], 1e-9)

    def test_set_torque(self):
        # No gravity, constant torque tau: angle = tau / I * t^2 / 2 (RK4 is exact for it).
        tau = 1.06
        _, rows = self.simulate(self.pendulum(gz=0), "--duration", 0.4, "--dt", 0.01,
                                "--set", "tau=%r" % tau, "--integrator", "rk4")
        self.assertEqual(len(rows), 41)
        for r in rows:
            t = r[0]
            self.assertAlmostEqual(r[1], 0.5 * tau / I_HINGE * t * t, delta=1e-9)
            self.assertAlmostEqual(r[3], tau / I_HINGE * t, delta=1e-9)

    def test_motion_follows_profile(self):
        _, rows = self.simulate(self.model("m.yaml", DRIVEN), "--duration", 0.5)
        self.assertEqual(len(rows), 51)
        for r in rows:
            self.assertAlmostEqual(r[1], 0.3 * math.sin(2.0 * r[0]), delta=1e-9)
            self.assertAlmostEqual(r[2], 0.6 * math.cos(2.0 * r[0]), delta=1e-9)

    def test_integrator_option_reaches_engine(self):
        path = self.pendulum()
        base = ("--duration", 0.2, "--dt", 0.02, "--init", "hinge=1.0")
        _, rk4 = self.simulate(path, *base, "--integrator", "rk4")
        _, eul = self.simulate(path, *base, "--integrator", "euler")
        self.assertEqual(len(rk4), len(eul))
        self.assertNotEqual(rk4[-1][1], eul[-1][1])
        self.assertAlmostEqual(rk4[-1][1], eul[-1][1], delta=0.05)

    def test_unknown_names(self):
        _, err = self.fails(2, "simulate", self.pendulum(), "--set", "no_such_motor=1")
        self.assertIn("no_such_motor", err)
        self.assertIn("tau", err)   # lists what the model does have
        _, err = self.fails(2, "simulate", self.pendulum(), "--init", "elbow=1")
        self.assertIn("elbow", err)
        _, err = self.fails(2, "simulate", self.pendulum(), "--init-rate", "elbow=1")
        self.assertIn("elbow", err)

    def test_bad_values(self):
        path = self.pendulum()
        for args in (("--set", "tau=nan"), ("--set", "tau=inf"), ("--set", "tau"),
                     ("--set", "tau=1x"), ("--dt", "0"), ("--dt", "-1"), ("--dt", "abc"),
                     ("--duration", "-1"), ("--every", "0"), ("--every", "1.5"),
                     ("--integrator", "leapfrog"), ("--init", "hinge=nan"), ("--dt",),
                     ("--bogus",), ("--duration", "1e300", "--dt", "1e-300")):
            out, err = self.fails(2, "simulate", path, *args)
            self.assertEqual(out, "", args)
            self.assertIn(args[0], err)

    def test_missing_file(self):
        out, err = self.fails(1, "simulate", os.path.join(self.dir, "gone.yaml"))
        self.assertIn("gone.yaml", err)
        self.assertEqual(out, "")


class ControlsTest(Base):
    """simulate and check with control elements (docs/controls.md), as a user runs them."""

    def test_signals(self):
        path = os.path.join(MODELS, "pendulum_motor_pid.yaml")
        out, _ = self.ok("simulate", path, "--duration", "0.01", "--every", "5", "--set",
                         "target=0.1", "--init", "voltage.integral=2", "--signals",
                         "voltage,motor.y1", "--json")
        doc = json.loads(out)
        self.assertEqual(doc["columns"][3:8], ["voltage.integral", "voltage.filter", "motor.x1",
                                               "voltage", "motor.y1"])
        first = doc["rows"][0]
        self.assertEqual(first[3], 2)               # --init of a control state
        self.assertEqual(first[6], 24)              # 20 x 0.1 + 2 + 2 x 0.1 / 0.01, limited
        self.assertEqual(first[7], 0)               # no current yet
        self.assertGreater(doc["rows"][-1][5], 0)   # the current rises
        out, err = self.fails(2, "simulate", path, "--signals", "volts")
        self.assertIn("no signal 'volts' (signals: angle, rate, target, error, voltage, "
                      "motor.y1)", err)
        out, err = self.fails(2, "simulate", path, "--set", "drive=1")
        self.assertIn("driven by signal 'motor.y1'", err)
        # a recording with a control state set and control inputs replays bit for bit, and
        # export gives simulate's columns
        rec = os.path.join(self.dir, "ctl.mcap")
        out, _ = self.ok("simulate", path, "--duration", "0.05", "--every", "10", "--set",
                         "target=0.1", "--init", "voltage.integral=1", "--record", rec)
        out2, _ = self.ok("replay", rec, "--json")
        self.assertTrue(json.loads(out2)["bit_identical"])
        csv, _ = self.ok("export", rec, "--csv")
        self.assertEqual(csv.splitlines()[0], out.splitlines()[0])
        self.assertEqual(csv.splitlines()[-1], out.splitlines()[-1])
        info = json.loads(self.ok("check", path, "--json")[0])
        self.assertEqual(info["actuators"], ["drive"])
        self.assertEqual(info["control_inputs"], ["target"])
        self.assertEqual(info["driven"], {"drive": "motor.y1"})
        self.assertEqual(info["parameters"]["voltage.kp"], 20)


class ExampleModelsTest(Base):
    """Every example model checks and simulates a few steps with consistent output."""

    def test_examples(self):
        names = sorted(n for n in os.listdir(MODELS) if n.endswith((".yaml", ".urdf")))
        self.assertTrue(names, "no example models in " + MODELS)
        for name in names:
            with self.subTest(model=name):
                path = os.path.join(MODELS, name)
                info = json.loads(self.ok("check", path, "--json")[0])
                self.assertEqual(len(info["independent"]), info["dof"])
                out, _ = self.ok("simulate", path, "--duration", 10 * info["dt"], "--json")
                doc = json.loads(out)
                coords = info["coordinates"]
                self.assertEqual(doc["columns"], ["t"] + coords + [c + ".rate" for c in coords]
                                 + info["control_states"]
                                 + ["energy", "residual_pos", "residual_vel"])
                self.assertEqual(len(doc["rows"]), 11)
                for r in doc["rows"]:
                    self.assertLess(r[-2], 1e-8)


if __name__ == "__main__":
    unittest.main(verbosity=2)
