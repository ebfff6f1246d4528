"""Real-time stepping: rate, lateness and overrun statistics, and many subscribers."""

import time

import pytest

import partita
from conftest import DT, model_stats, pendulum_yaml, unique, wait_until
from partita import pb

RT_SECONDS = 2.0


def sample(client, model):
    """(wall time at the middle of the round trip, step count)."""
    t0 = time.monotonic()
    step = client.get_state(model, fields=partita.FIELD_COORDINATES).step
    t1 = time.monotonic()
    return 0.5 * (t0 + t1), step


def realtime_steps(client, model, seconds):
    """Steps the model advanced over `seconds` of wall time, and the wall time measured."""
    w0, s0 = sample(client, model)
    time.sleep(max(0.0, w0 + seconds - time.monotonic()))
    w1, s1 = sample(client, model)
    return s1 - s0, w1 - w0


@pytest.fixture
def rt_model(client):
    name = unique("rt")
    client.load_model(pendulum_yaml(), name=name, format=pb.YAML)
    yield name
    client.unload_model(name)


def test_realtime_rate_and_lateness(client, rt_model):
    client.set_mode(rt_model, "realtime", rate=1.0)
    time.sleep(0.2)                                    # past the start-up transient
    steps, wall = realtime_steps(client, rt_model, RT_SECONDS)
    expected = wall / DT                               # 1 kHz: 2000 steps in 2 s
    assert abs(steps - expected) <= 0.02 * expected, (steps, expected)
    ms = model_stats(client, rt_model)
    assert ms.mode == pb.REALTIME and ms.rate == 1.0
    assert ms.steps >= steps
    late = ms.late_us
    # A wake-up is never exactly on time: the lateness is measured and positive.
    assert 0 <= late.p50 <= late.p99 <= late.max and late.max > 0
    assert 0 < ms.step_us.mean and ms.step_us.p50 <= ms.step_us.p99 <= ms.step_us.max
    # At 1 kHz a pendulum step takes microseconds: almost every deadline is met.
    assert ms.overruns < 0.02 * ms.steps
    # Simulated time follows wall time at rate 1.
    assert ms.time == pytest.approx(ms.steps * DT, rel=1e-9)


def test_realtime_rate_factor(client, rt_model):
    client.set_mode(rt_model, "realtime", rate=2.5)
    time.sleep(0.2)
    steps, wall = realtime_steps(client, rt_model, 1.0)
    expected = 2.5 * wall / DT
    assert abs(steps - expected) <= 0.02 * expected, (steps, expected)


def test_overruns_are_counted(client, rt_model):
    # At a rate factor of 1e5 a deadline falls every 10 ns: no step can meet it.
    client.set_mode(rt_model, "realtime", rate=1e5)
    ms = wait_until(lambda: (lambda m: m if m.overruns > 0 else None)(
        model_stats(client, rt_model)), 2.0)
    client.set_mode(rt_model, "paused")
    assert ms is not None and ms.overruns > 0
    # A model that cannot keep up is not stopped: it keeps stepping.
    assert ms.steps > 0


def test_fifty_subscribers_all_receive(daemon, client, rt_model):
    client.set_mode(rt_model, "lockstep")
    subs = []
    try:
        for _ in range(50):
            c = daemon.client(timeout=5.0)
            subs.append(c)
            c.subscribe(rt_model, every_k=1)
        assert model_stats(client, rt_model).subscribers == 50
        final = client.step(rt_model, 3)
        for i, c in enumerate(subs):
            frames = list(c.frames(timeout=3.0, count=3))
            assert [f.step for f in frames] == [1, 2, 3], "subscriber %d" % i
            assert frames[-1].coordinates.tolist() == final.coordinates.tolist()
    finally:
        for c in subs:
            c.close()
    assert wait_until(lambda: model_stats(client, rt_model).subscribers == 0, 3.0)


def test_realtime_subscribers_get_frames_at_rate(daemon, client, rt_model):
    client.set_mode(rt_model, "realtime", rate=1.0)
    with daemon.client() as sub:
        reply = sub.subscribe(rt_model, rate_hz=100.0)
        # 100 Hz out of a 1 kHz model: one frame every 10 steps.
        assert reply.every_k == 10
        frames = list(sub.frames(timeout=1.0, count=20))
        assert len(frames) == 20
        gaps = {b.step - a.step for a, b in zip(frames, frames[1:])}
        assert gaps == {10}
