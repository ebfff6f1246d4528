"""Faults stay inside one model: a model whose integration fails, whose inputs are not finite,
or whose steps overrun without a break is dealt with alone (paused with an event and its
reason, or its inputs refused and counted); the other models keep stepping in real time, and
Reset or SetMode recovers the broken one."""

import os
import time

import pytest

import partita
from conftest import WAIT, Daemon, pendulum_yaml, unique, wait_until, model_stats
from partita import pb

# The default (2 s of every deadline missed): a shorter one could pause a healthy model on a
# machine loaded for that long, and the model that overruns on purpose misses them all anyway.
CONFIG = """\
realtime:
  overrun_pause_ms: 2000
"""
ROOT = os.environ.get("PARTITA_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")


def paused_event(c, model, timeout):
    """The model's PAUSED_ON_ERROR event (others, such as OVERRUN_BURST, are passed over)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ev = c.next_event(0.2)
        if ev is not None and ev.WhichOneof("kind") == "model_event" and \
                ev.model_event.model == model and \
                ev.model_event.kind == pb.ModelEvent.PAUSED_ON_ERROR:
            return ev.model_event
    return None


def still_stepping(c, names):
    """Each model is in real time and takes a step (waited for, not slept for: how many steps
    a loaded machine takes in a given time is not the question)."""
    before = {n: c.get_state(n).step for n in names}
    for n in names:
        assert wait_until(lambda: c.get_state(n).step > before[n], WAIT), n
        assert c.model_info(n).mode == pb.REALTIME, n


@pytest.mark.parametrize("fault", ["diverges", "non_finite_inputs", "overruns"])
def test_a_broken_model_does_not_disturb_the_others(workdir, fault):
    d = Daemon(workdir, config=CONFIG)
    try:
        with d.client() as c, d.client() as watcher:
            healthy = [unique("ok"), unique("ok")]
            for n in healthy:
                c.load_model(pendulum_yaml(), name=n, format=pb.YAML, mode="realtime")
            bad = unique("bad")
            if fault == "overruns":
                # a chain of five four-bar cells (about 100 us a step, closed loops) at 10 us
                # of wall time per step: it misses every deadline on any machine
                with open(os.path.join(ROOT, "configs", "models", "fivebar_chain.yaml")) as f:
                    c.load_model(f.read(), name=bad, format=pb.YAML, mode="paused")
            else:
                c.load_model(pendulum_yaml(), name=bad, format=pb.YAML, mode="paused")
            watcher.subscribe(bad, every_k=100000)
            if fault == "diverges":
                c.set_inputs(bad, {"tau_hinge": 1e300})    # finite, but accelerations overflow
                c.set_mode(bad, "realtime")
                ev = paused_event(watcher, bad, WAIT)
                assert ev is not None
                assert ev.code == pb.Status.MODEL_ERROR and ev.message
            elif fault == "non_finite_inputs":
                c.set_mode(bad, "realtime")
                with pytest.raises(partita.PartitaError) as e:
                    c.set_inputs(bad, {"tau_hinge": float("nan")})
                assert e.value.code == pb.Status.INVALID_ARGUMENT
                with partita.UdpInputSender(d.udp, bad) as tx:
                    tx.send([float("inf")])
                assert wait_until(lambda: model_stats(c, bad).malformed_inputs == 1, WAIT)
                assert c.get_state(bad, fields=pb.FIELD_INPUTS).inputs.tolist() == [0.0]
                still_stepping(c, [bad])
            else:
                c.set_mode(bad, "realtime", rate=100.0)
                ev = paused_event(watcher, bad, WAIT)
                assert ev is not None
                assert ev.code == pb.Status.FAILED_PRECONDITION and "deadline" in ev.message
            if fault != "non_finite_inputs":
                assert c.model_info(bad).mode == pb.PAUSED
            still_stepping(c, healthy)
            # recoverable
            if fault == "diverges":
                c.reset(bad)
            c.set_mode(bad, "realtime", rate=0.1)   # slow enough for any build to keep up
            still_stepping(c, healthy + [bad])
            for n in healthy + [bad]:
                c.unload_model(n)
    finally:
        d.check_clean_exit()
