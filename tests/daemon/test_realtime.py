"""Real-time stepping over loopback: the schedule never runs ahead of the wall clock, statistics
are reported, and many subscribers.

Nothing here asserts how fast a loaded machine keeps up (a wall-clock rate, lateness or overrun
count): the pacing arithmetic (deadlines, overruns, bursts, resyncs) is tested exactly on an
injected clock in test_internals.c, and rates and lateness are measured by
tests/bench/bench_daemon.c.
"""

import time

import pytest

import partita
from conftest import DT, WAIT, model_stats, pendulum_yaml, unique, wait_until
from partita import pb

RT_SECONDS = 0.5


def realtime_window(client, model, seconds):
    """Steps the model advanced over about `seconds` of wall time, and the longest wall time
    that can have passed between the two states (from before the first request to after the
    second answer)."""
    t0 = time.monotonic()
    s0 = client.get_state(model, fields=partita.FIELD_COORDINATES).step
    time.sleep(seconds)
    s1 = client.get_state(model, fields=partita.FIELD_COORDINATES).step
    return s1 - s0, time.monotonic() - t0


@pytest.fixture
def rt_model(client):
    name = unique("rt")
    client.load_model(pendulum_yaml(), name=name, format=pb.YAML)
    yield name
    client.unload_model(name)


@pytest.mark.parametrize("rate", [1.0, 2.5])
def test_realtime_never_runs_ahead_of_the_wall_clock(client, rt_model, rate):
    client.set_mode(rt_model, "realtime", rate=rate)
    steps, wall = realtime_window(client, rt_model, RT_SECONDS)
    # A step is never taken before its deadline, whatever the load: at most one step per
    # period of wall time (plus the step that may be due at the very start).
    assert 0 < steps <= rate * wall / DT + 1, (steps, wall)
    ms = model_stats(client, rt_model)
    assert ms.mode == pb.REALTIME and ms.rate == rate
    assert ms.steps >= steps
    # Simulated time is the step count times dt, exactly as in lockstep.
    assert ms.time == pytest.approx(ms.steps * DT, rel=1e-12)


def test_realtime_statistics_are_reported(client, rt_model):
    client.set_mode(rt_model, "realtime", rate=1.0)
    assert wait_until(lambda: model_stats(client, rt_model).steps >= 50, WAIT)
    client.set_mode(rt_model, "paused")
    ms = model_stats(client, rt_model)
    late = ms.late_us
    # A wake-up is never exactly on time: the lateness is measured and positive.
    assert 0 <= late.p50 <= late.p99 <= late.max and late.max > 0
    assert 0 < ms.step_us.mean and ms.step_us.p50 <= ms.step_us.p99 <= ms.step_us.max
    # Overruns are counted per step (how many depends on the machine's load).
    assert 0 <= ms.overruns <= ms.steps
    # Paused: the model stays where it is.
    assert client.get_state(rt_model).step == ms.steps


def test_model_that_cannot_keep_up_keeps_stepping(client, rt_model):
    # 10 us of wall time per step, the shortest period accepted: whether or not the machine
    # keeps up, the model goes on stepping and stays answerable.
    client.set_mode(rt_model, "realtime", rate=100.0)
    assert wait_until(lambda: model_stats(client, rt_model).steps > 100, WAIT)
    ms = model_stats(client, rt_model)
    client.set_mode(rt_model, "paused")
    assert 0 <= ms.overruns <= ms.steps


def test_fifty_subscribers_all_receive(daemon, client, rt_model):
    client.set_mode(rt_model, "lockstep")
    subs = []
    try:
        for _ in range(50):
            c = daemon.client(timeout=WAIT)
            subs.append(c)
            c.subscribe(rt_model, every_k=1)
        assert model_stats(client, rt_model).subscribers == 50
        final = client.step(rt_model, 3)
        for i, c in enumerate(subs):
            frames = list(c.frames(timeout=WAIT, count=3))
            assert [f.step for f in frames] == [1, 2, 3], "subscriber %d" % i
            assert frames[-1].coordinates.tolist() == final.coordinates.tolist()
    finally:
        for c in subs:
            c.close()
    assert wait_until(lambda: model_stats(client, rt_model).subscribers == 0, WAIT)


def test_realtime_subscribers_get_frames_at_rate(daemon, client, rt_model):
    client.set_mode(rt_model, "realtime", rate=1.0)
    with daemon.client() as sub:
        reply = sub.subscribe(rt_model, rate_hz=100.0)
        # 100 Hz out of a 1 kHz model: one frame every 10 steps.
        assert reply.every_k == 10
        frames = list(sub.frames(timeout=WAIT, count=20))
        assert len(frames) == 20
        # Frames of every 10th step, in order. A subscriber that falls behind on a loaded
        # machine loses frames (counted in `dropped`): a gap of 20 or 30 then, never a frame
        # of another step.
        assert all(f.step % 10 == 0 for f in frames), [f.step for f in frames]
        assert all(b.step > a.step for a, b in zip(frames, frames[1:]))
