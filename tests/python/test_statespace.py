#!/usr/bin/python3
"""StateSpace's python-control conventions (client/python/partita/statespace.py), against
closed forms, and against python-control itself when it is importable (it is not packaged in
Debian 12; those cases skip with a message):

- names: every name is an identifier (python-control refuses '.', reads "sys.sig" and "x[i]");
  "slide.rate" -> "slide_dot", the engine's names kept in state_names;
- c2d of a double integrator: Ad = [[1, h], [0, 1]], Bd = [h^2/2, h];
- damp() of m x'' + c x' + k x = u: wn = sqrt(k/m), zeta = c / (2 sqrt(k m));
- step_response of x' = -a x + u: y = (1 - exp(-a t)) / a, python-control's shapes: (nt,) for
  SISO, (ny, nu, nt) for MIMO, (ny, nt) for one input of a MIMO system.
"""
import math
import os
import re
import sys
import unittest

import numpy as np

ROOT = os.environ.get("PARTITA_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))
os.environ.setdefault("PARTITA_ROOT", ROOT)   # partita_pb2 from the source tree if needed

from partita.statespace import StateSpace, control_name, control_names, is_control_name  # noqa

try:
    import control   # python-control
except ImportError:
    control = None

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def msd(m=2.0, c=0.6, k=8.0):
    return StateSpace([[0, 1], [-k / m, -c / m]], [[0], [1 / m]], [[1, 0]], [[0]],
                      states=["slide", "slide.rate"], inputs=["push.x"], outputs=["slide"])


class Names(unittest.TestCase):
    def test_rule(self):
        cases = {"slide": "slide", "slide.rate": "slide_dot", "slide.acc": "slide_ddot",
                 "cyl.angle": "cyl_angle", "cyl.angle.rate": "cyl_angle_dot",
                 "link.rx": "link_rx", "3d": "_3d", "a-b": "a_b", "q[0]": "q_0_", "": "_"}
        for name, want in cases.items():
            self.assertEqual(control_name(name), want)
            self.assertRegex(want, IDENT)
            self.assertTrue(is_control_name(want))
        for bad in ["a.b", "x[0]", "1a", "a b", ""]:
            self.assertFalse(is_control_name(bad), bad)
        self.assertEqual(control_names(["a.b", "a_b", "a.b"]), ["a_b", "a_b_2", "a_b_3"])

    def test_statespace_names(self):
        ss = msd()
        self.assertEqual(ss.states, ["slide", "slide_dot"])
        self.assertEqual(ss.state_names, ["slide", "slide.rate"])
        self.assertEqual(ss.inputs, ["push_x"])
        self.assertEqual(ss.input_names, ["push.x"])
        for n in ss.states + ss.inputs + ss.outputs:
            self.assertTrue(is_control_name(n))

    @unittest.skipIf(control is None, "python-control is not installed (not in Debian 12)")
    def test_python_control_accepts(self):
        sys_ = msd().to_control()
        self.assertEqual(list(sys_.state_labels), ["slide", "slide_dot"])
        self.assertEqual(list(sys_.input_labels), ["push_x"])


class Helpers(unittest.TestCase):
    def test_c2d_double_integrator(self):
        h = 0.01
        d = StateSpace([[0, 1], [0, 0]], [[0], [1]]).c2d(h)
        np.testing.assert_allclose(d.A, [[1, h], [0, 1]], atol=1e-15)
        np.testing.assert_allclose(d.B, [[h * h / 2], [h]], atol=1e-15)
        self.assertEqual(d.dt, h)
        with self.assertRaises(ValueError):
            d.c2d(h)

    def test_damp(self):
        m, c, k = 2.0, 0.6, 8.0
        wn, zeta, poles = msd(m, c, k).damp()
        np.testing.assert_allclose(wn, [math.sqrt(k / m)] * 2, rtol=1e-12)
        np.testing.assert_allclose(zeta, [c / (2 * math.sqrt(k * m))] * 2, rtol=1e-12)
        self.assertEqual(poles.shape, (2,))
        # the same system sampled: damp() maps the poles back through log(z) / dt
        wn_d, zeta_d, _ = msd(m, c, k).c2d(0.01).damp()
        np.testing.assert_allclose(wn_d, wn, rtol=1e-9)
        np.testing.assert_allclose(zeta_d, zeta, rtol=1e-9)

    def test_step_response_siso(self):
        a = 3.0
        ss = StateSpace([[-a]], [[1]], [[1]], [[0]])
        T = np.linspace(0, 2, 201)
        r = ss.step_response(T)
        self.assertEqual(r.outputs.shape, (201,))
        np.testing.assert_allclose(r.outputs, (1 - np.exp(-a * T)) / a, atol=1e-14)
        t, y = r   # python-control's legacy unpacking
        self.assertIs(t, r.time)
        self.assertEqual(ss.step_response(T, squeeze=False).outputs.shape, (1, 1, 201))
        # the discrete system steps the same way at its samples
        rd = ss.c2d(0.01).step_response(T)
        np.testing.assert_allclose(rd.outputs, r.outputs, atol=1e-14)

    def test_step_response_mimo_shapes(self):
        A = np.diag([-1.0, -2.0, -3.0])
        B = np.array([[1.0, 0], [0, 1.0], [1.0, 1.0]])
        C = np.array([[1.0, 0, 0], [0, 0, 1.0]])
        ss = StateSpace(A, B, C, np.zeros((2, 2)))
        T = np.linspace(0, 1, 11)
        r = ss.step_response(T)
        self.assertEqual(r.outputs.shape, (2, 2, 11))     # (ny, nu, nt)
        self.assertEqual(r.states.shape, (3, 2, 11))
        np.testing.assert_allclose(r.outputs[0, 0], 1 - np.exp(-T), atol=1e-14)
        np.testing.assert_allclose(r.outputs[1, 1], (1 - np.exp(-3 * T)) / 3, atol=1e-14)
        np.testing.assert_allclose(r.outputs[0, 1], 0, atol=1e-15)
        self.assertEqual(ss.step_response(T, input=1).outputs.shape, (2, 11))
        self.assertEqual(ss.step_response(T, input="u1").outputs.shape, (2, 11))

    @unittest.skipIf(control is None, "python-control is not installed (not in Debian 12)")
    def test_against_python_control(self):
        ss = msd()
        T = np.linspace(0, 3, 301)
        mine = ss.step_response(T)
        theirs = control.step_response(ss.to_control(), T)
        np.testing.assert_allclose(mine.outputs, theirs.outputs, atol=1e-9)
        d = ss.c2d(0.01)
        cd = control.c2d(ss.to_control(), 0.01)
        np.testing.assert_allclose(d.A, cd.A, atol=1e-12)
        np.testing.assert_allclose(d.B, cd.B, atol=1e-12)
        wn, zeta, _ = ss.damp()
        cwn, czeta, _ = control.damp(ss.to_control(), doprint=False)
        np.testing.assert_allclose(sorted(wn), sorted(cwn), rtol=1e-12)
        np.testing.assert_allclose(sorted(zeta), sorted(czeta), rtol=1e-12)


if __name__ == "__main__":
    unittest.main(verbosity=2)
