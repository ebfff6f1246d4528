"""The example scripts of client/python/examples run against a live daemon."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = os.path.join(ROOT, "client", "python", "examples")
MODEL = os.path.join(ROOT, "configs", "models", "pendulum.yaml")


def run_example(script, *args):
    if not os.path.isfile(MODEL):
        pytest.skip("configs/models/pendulum.yaml is missing")
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_lockstep_example(daemon):
    out = run_example("lockstep_pendulum.py", "--connect", daemon.tcp, "--steps", "30",
                      "--every", "10")
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in
            (["0"], ["10"], ["20"], ["30"])]
    assert [r[0] for r in rows] == ["0", "10", "20", "30"]
    # Its own energy column: an undamped pendulum under RK4 keeps it to many digits.
    energies = [float(r[-1]) for r in rows]
    assert max(energies) - min(energies) < 1e-8


def test_watch_example(daemon):
    out = run_example("watch_realtime.py", "--connect", daemon.tcp, "--udp", daemon.udp,
                      "--seconds", "2", "--hz", "20")
    frames = [line for line in out.splitlines() if line.startswith("t=")]
    # How many frames 2 s of wall time brings depends on the machine's load; what they are
    # does not: frames of every 50th step (20 Hz of a 1 kHz model), in order.
    steps = [int(line.split("step=")[1].split()[0]) for line in frames]
    assert steps, out
    assert all(k % 50 == 0 for k in steps) and steps == sorted(set(steps)), steps
    assert "overruns" in out.splitlines()[-1]
