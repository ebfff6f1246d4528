"""The recording commands of the CLI (docs/recording.md): simulate --record, replay, info,
export, and recordings cut off at random byte offsets.

Run: PARTITA=build/client/partita PARTITA_MODELS=configs/models python3 test_record_cli.py
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

PARTITA = os.environ.get("PARTITA", "build/client/partita")
MODELS = os.environ.get("PARTITA_MODELS", "configs/models")


def run(*args, check=None):
    p = subprocess.run([PARTITA, *args], capture_output=True, text=True, timeout=120)
    if p.returncode < 0:
        raise AssertionError(f"partita {' '.join(args)} died of signal {-p.returncode}:\n"
                             f"{p.stderr}")
    if check is not None and p.returncode != check:
        raise AssertionError(f"partita {' '.join(args)}: exit {p.returncode}, want {check}\n"
                             f"{p.stdout}\n{p.stderr}")
    return p


class RecordTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.pend = os.path.join(cls.dir, "pend.mcap")
        cls.pend_csv = run("simulate", f"{MODELS}/pendulum.yaml", "--duration", "3",
                           "--set", "tau=0.4", "--init", "hinge=0.2", "--every", "5",
                           "--record", cls.pend, check=0).stdout

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_export_prints_simulates_rows(self):
        self.assertEqual(run("export", self.pend, "--csv", check=0).stdout, self.pend_csv)

    def test_replay_same_model_bit_for_bit(self):
        out = json.loads(run("replay", self.pend, "--json", check=0).stdout)
        self.assertTrue(out["bit_identical"])
        self.assertEqual(out["states"], 601)        # 1 + 3000 / 5
        self.assertEqual(out["identical"], 601)
        self.assertEqual(out["steps"], 3000)
        text = run("replay", self.pend, check=0).stdout
        self.assertIn("identical: 601 of 601 states bit for bit", text)

    def test_replay_abm4_and_other_dt(self):
        rec = self.path("dp.mcap")
        csv = run("simulate", f"{MODELS}/double_pendulum.yaml", "--duration", "1",
                  "--integrator", "abm4", "--dt", "0.0005", "--init", "shoulder=0.5",
                  "--record", rec, check=0).stdout
        self.assertEqual(run("export", rec, "--csv", check=0).stdout, csv)
        out = json.loads(run("replay", rec, "--json", check=0).stdout)
        self.assertTrue(out["bit_identical"])
        self.assertEqual(out["states"], 2001)

    def test_replay_changed_model_reports_differences(self):
        with open(f"{MODELS}/pendulum.yaml") as f:
            text = f.read()
        changed = self.path("heavier.yaml")
        with open(changed, "w") as f:
            f.write(text.replace("    mass: 1.0", "    mass: 1.2"))
        p = run("replay", self.pend, "--model", changed, "--json", check=0)
        out = json.loads(p.stdout)
        self.assertFalse(out["bit_identical"])
        diffs = {d["coordinate"]: d for d in out["differences"]}
        self.assertGreater(diffs["hinge"]["max_abs_diff"], 1e-3)
        self.assertEqual(diffs["hinge"]["max_abs_diff"],
                         abs(diffs["hinge"]["recorded"] - diffs["hinge"]["replayed"]))
        # largest first
        vals = [d["max_abs_diff"] for d in out["differences"]]
        self.assertEqual(vals, sorted(vals, reverse=True))
        text = run("replay", self.pend, "--model", changed, check=0).stdout
        self.assertIn("max |diff|", text)
        # the same text as a separate file is the same model: bit for bit
        same = self.path("same.yaml")
        with open(same, "w") as f:
            f.write(text_of(f"{MODELS}/pendulum.yaml"))
        self.assertTrue(json.loads(run("replay", self.pend, "--model", same, "--json",
                                       check=0).stdout)["bit_identical"])

    def test_replay_maps_inputs_by_name(self):
        # the same pendulum with another actuator listed first: tau moves to index 1, and the
        # recorded tau must still drive tau (by name), so the motion is the same to the bit
        text = text_of(f"{MODELS}/pendulum.yaml").replace(
            "actuators:\n", "actuators:\n  - name: extra\n    type: joint_torque\n"
            "    joint: hinge\n", 1)
        changed = self.path("two_inputs.yaml")
        with open(changed, "w") as f:
            f.write(text)
        out = json.loads(run("replay", self.pend, "--model", changed, "--json",
                             check=0).stdout)
        self.assertEqual(out["first_difference"]["field"], "inputs")   # 2 inputs now, not 1
        for d in out["differences"]:
            self.assertEqual((d["max_abs_diff"], d["rate_max_abs_diff"]), (0, 0), d)
        # renamed: the recorded input drives nothing, and the motion differs
        renamed = self.path("renamed.yaml")
        with open(renamed, "w") as f:
            f.write(text_of(f"{MODELS}/pendulum.yaml").replace("name: tau", "name: motor"))
        out = json.loads(run("replay", self.pend, "--model", renamed, "--json",
                             check=0).stdout)
        hinge = [d for d in out["differences"] if d["coordinate"] == "hinge"][0]
        self.assertGreater(hinge["max_abs_diff"], 1e-3)

    def test_info(self):
        out = json.loads(run("info", self.pend, "--json", check=0).stdout)
        self.assertTrue(out["complete"])
        self.assertEqual(out["model"], "pendulum")
        self.assertEqual((out["states"], out["inputs"], out["events"]), (601, 1, 0))
        self.assertEqual((out["first_step"], out["last_step"]), (0, 3000))
        self.assertEqual(out["end_time"], 3.0)
        self.assertEqual(out["every_k"], 5)
        self.assertEqual(out["dropped_frames"], 0)
        topics = {c["topic"]: c["messages"] for c in out["channels"]}
        self.assertEqual(topics, {"/pendulum/state": 601, "/pendulum/input": 1,
                                  "/pendulum/event": 0})
        text = run("info", self.pend, check=0).stdout
        self.assertIn("complete, CRCs and indexes checked", text)

    def test_cut_at_random_offsets(self):
        # 20 s at 1 kHz, every step: about 30 chunks of 64 KiB
        rec = self.path("long.mcap")
        csv = run("simulate", f"{MODELS}/pendulum.yaml", "--duration", "20", "--set",
                  "tau=0.1", "--record", rec, check=0).stdout
        with open(rec, "rb") as f:
            data = f.read()
        info = json.loads(run("info", rec, "--json", check=0).stdout)
        full = info["states"]
        self.assertEqual(full, 20001)
        rng = random.Random(14)
        cuts = sorted(rng.sample(range(len(data)), 60))
        last_states, readable = 0, 0
        for k, cut in enumerate(cuts):
            cutf = self.path("cut.mcap")
            with open(cutf, "wb") as f:
                f.write(data[:cut])
            p = run("info", cutf, "--json")
            self.assertIn(p.returncode, (0, 1), p.stderr)
            self.assertTrue(p.stderr.startswith("partita info: "), p.stderr)
            if p.returncode == 1:
                # before the model's metadata and channels: nothing to read, said clearly
                self.assertRegex(p.stderr, "cut off before|not an MCAP file|ends (inside|before)")
                continue
            readable += 1
            out = json.loads(p.stdout)
            self.assertFalse(out["complete"])
            self.assertRegex(out["note"], "ends inside a record|ends after byte|summary")
            self.assertIn("warning", p.stderr)
            self.assertLessEqual(out["states"], full)
            self.assertGreaterEqual(out["states"], last_states)   # longer cut, no fewer states
            last_states = out["states"]
            if k % 6 == 0:   # what survives replays bit for bit
                r = json.loads(run("replay", cutf, "--json", check=0).stdout)
                self.assertEqual(r["identical"], r["states"])
                e = run("export", cutf, "--csv", check=0).stdout.splitlines()
                self.assertEqual(e, csv.splitlines()[:len(e)])
        self.assertGreater(readable, 50)
        self.assertGreater(last_states, 0)

    def test_errors(self):
        p = run("info", self.path("none.mcap"), check=1)
        self.assertIn("cannot open", p.stderr)
        junk = self.path("junk.mcap")
        with open(junk, "w") as f:
            f.write("not a recording at all\n")
        self.assertIn("not an MCAP file", run("replay", junk, check=1).stderr)
        run("replay", check=2)
        run("info", self.pend, "--bogus", check=2)
        run("export", self.pend, check=2)   # --csv is the one format
        p = run("simulate", f"{MODELS}/pendulum.yaml", "--record",
                "/nonexistent-dir/x.mcap", check=1)
        self.assertIn("cannot create", p.stderr)


def text_of(path):
    with open(path) as f:
        return f.read()


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)
