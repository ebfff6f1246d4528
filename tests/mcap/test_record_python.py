"""The Python reader of recordings (client/python/partita/recording.py) against the CLI:
the arrays equal the rows `partita simulate` printed (exactly), the inputs and the model text
are there, and a cut-off file reads up to its last complete chunk.

Run: PARTITA=... PARTITA_MODELS=... PARTITA_PB2_DIR=build/proto python3 test_record_python.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "client", "python"))
from partita.recording import RecordingError, read_recording  # noqa: E402

PARTITA = os.environ.get("PARTITA", "build/client/partita")
MODELS = os.environ.get("PARTITA_MODELS", "configs/models")


class PythonReaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.rec = os.path.join(cls.tmp.name, "run.mcap")
        out = subprocess.run([PARTITA, "simulate", f"{MODELS}/pendulum.yaml", "--duration",
                              "10", "--every", "2", "--set", "tau=0.5", "--record", cls.rec],
                             capture_output=True, text=True, check=True).stdout
        lines = out.strip().split("\n")
        cls.header = lines[0].split(",")
        cls.rows = np.array([[float(x) for x in l.split(",")] for l in lines[1:]])

    def test_arrays_equal_simulate(self):
        r = read_recording(self.rec)
        self.assertTrue(r.complete, r.note)
        self.assertEqual(r.model, "pendulum")
        self.assertEqual(r.coordinate_names, ["hinge", "tip_z"])
        self.assertEqual(r.input_names, ["tau"])
        nc = len(r.coordinate_names)
        self.assertEqual(r.coordinates.shape, (5001, nc))
        np.testing.assert_array_equal(r.time, self.rows[:, 0])
        np.testing.assert_array_equal(r.coordinates, self.rows[:, 1:1 + nc])
        np.testing.assert_array_equal(r.rates, self.rows[:, 1 + nc:1 + 2 * nc])
        np.testing.assert_array_equal(r.kinetic + r.potential, self.rows[:, 1 + 2 * nc])
        np.testing.assert_array_equal(r.residual_pos, self.rows[:, 2 + 2 * nc])
        np.testing.assert_array_equal(r.step, np.arange(0, 10001, 2))
        np.testing.assert_array_equal(r.inputs[:, 0], 0.5)
        self.assertEqual(list(r.input_step), [0])
        self.assertEqual(r.input_values.tolist(), [[0.5]])
        self.assertEqual(r.input_kind, ["inputs"])
        with open(f"{MODELS}/pendulum.yaml") as f:
            self.assertEqual(r.model_text, f.read())
        self.assertEqual((r.dt, r.integrator, r.every_k), (0.001, "rk4", 2))
        self.assertEqual(r.end["state_frames"], "5001")

    def test_cut_off(self):
        with open(self.rec, "rb") as f:
            data = f.read()
        cut = os.path.join(self.tmp.name, "cut.mcap")
        with open(cut, "wb") as f:
            f.write(data[:len(data) * 2 // 3])
        r = read_recording(cut)
        self.assertFalse(r.complete)
        self.assertIn("cut off", r.note)
        self.assertGreater(len(r.time), 100)
        self.assertLess(len(r.time), 5001)
        np.testing.assert_array_equal(r.time, self.rows[:len(r.time), 0])
        with open(cut, "wb") as f:
            f.write(data[:100])
        with self.assertRaises(RecordingError):
            read_recording(cut)
        with open(cut, "wb") as f:
            f.write(b"plain text")
        with self.assertRaisesRegex(RecordingError, "not an MCAP file"):
            read_recording(cut)


if __name__ == "__main__":
    unittest.main(verbosity=2)
