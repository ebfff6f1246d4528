"""The simulation thread allocates nothing while it steps and serves snapshots for heavy
requests: partitad runs with an LD_PRELOAD allocation counter (tests/daemon/alloc_shim.c)
that counts heap allocations on threads named "pt:*"."""

import os
import signal
import time

import pytest

from conftest import WAIT, Daemon, unique
from partita import pb

SHIM = os.environ.get("PARTITA_ALLOC_SHIM", "")
ROOT = os.environ.get("PARTITA_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")


def sim_allocations(d, path):
    if os.path.exists(path):
        os.unlink(path)
    d.proc.send_signal(signal.SIGUSR2)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if os.path.exists(path):
            text = open(path).read()
            if text.endswith("\n"):
                return int(text)
        time.sleep(0.01)
    raise AssertionError("the allocation counter did not answer")


@pytest.mark.skipif(os.environ.get("PARTITA_SANITIZED") == "1" or not os.path.isfile(SHIM),
                    reason="the sanitizers' runtime owns malloc; needs the counting shim")
@pytest.mark.parametrize("model", ["panda.urdf", "fourbar_parallelogram.yaml"])
def test_steps_and_snapshots_allocate_nothing_on_the_sim_thread(workdir, model):
    count_file = os.path.join(workdir, "allocs-%s.txt" % unique("n"))
    d = Daemon(workdir, env={"LD_PRELOAD": SHIM, "PT_ALLOC_COUNT_FILE": count_file})
    try:
        with d.client() as c:
            name = unique("alloc")
            c.load_model_file(os.path.join(ROOT, "configs", "models", model), name=name,
                              mode="lockstep")
            c.step(name, 10)                   # past start-up
            before = sim_allocations(d, count_file)
            for k in range(20):
                c.step(name, 50)
                c.linearize(name)
                c.request("equilibrium", pb.Equilibrium(model=name))
                c.get_state(name, fields=pb.FIELD_ALL)
            c.set_mode(name, "realtime")
            time.sleep(0.5)                      # real time, with its own waits
            c.set_mode(name, "lockstep")
            after = sim_allocations(d, count_file)
            assert c.get_state(name).step >= 10 + 20 * 50
            assert after == before, "%d allocations on the simulation thread" % (after - before)
    finally:
        d.check_clean_exit()
