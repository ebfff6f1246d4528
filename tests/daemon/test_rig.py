"""What a hardware-in-the-loop rig needs in one round trip: StepWithInputs, the metadata of
every state (wall-clock time, last input applied, overrun), and the input watchdog."""

import json
import os
import subprocess
import time

import pytest

import partita
from conftest import PARTITA_CLI, WAIT, model_stats, pendulum_yaml, unique, wait_until
from partita import pb


def test_step_with_inputs_equals_set_inputs_then_step(client, twins):
    a, b = twins
    for k, tau in enumerate([0.5, -1.25, 3.0, 0.0]):
        client.set_inputs(a, {"tau_hinge": tau})
        sa = client.step(a, 7, fields=pb.FIELD_ALL)
        sb = client.step_with_inputs(b, {"tau_hinge": tau}, n=7, fields=pb.FIELD_ALL)
        assert sb.step == sa.step == 7 * (k + 1)
        assert sb.coordinates.tolist() == sa.coordinates.tolist()      # bit for bit
        assert sb.rates.tolist() == sa.rates.tolist()
        assert sb.accelerations.tolist() == sa.accelerations.tolist()
        assert sb.inputs.tolist() == sa.inputs.tolist() == [tau]
    by_index = client.step_with_inputs(b, by_index=[2.0], n=1, fields=pb.FIELD_INPUTS)
    assert by_index.inputs.tolist() == [2.0]


def test_step_with_inputs_refusals_change_nothing(client, twins):
    a, _ = twins
    before = client.get_state(a, fields=pb.FIELD_ALL)
    for bad in ({"nope": 1.0}, {"tau_hinge": float("nan")}):
        with pytest.raises(partita.PartitaError) as e:
            client.step_with_inputs(a, bad, n=3)
        assert e.value.code == pb.Status.INVALID_ARGUMENT
    after = client.get_state(a, fields=pb.FIELD_ALL)
    assert after.step == before.step and after.inputs.tolist() == before.inputs.tolist()
    client.set_mode(a, "realtime")
    with pytest.raises(partita.PartitaError) as e:
        client.step_with_inputs(a, {"tau_hinge": 1.0})
    assert e.value.code == pb.Status.FAILED_PRECONDITION
    client.set_mode(a, "lockstep")
    assert client.get_state(a, fields=pb.FIELD_INPUTS).inputs.tolist() == before.inputs.tolist()


def test_state_metadata(daemon, client, twins):
    a, _ = twins
    t0 = time.time_ns()
    s = client.step(a, 1)
    assert t0 - 10**9 <= s.wall_time_ns <= time.time_ns() + 10**9   # CLOCK_REALTIME, ns
    assert (s.input_session, s.input_sequence, s.overran) == (0, 0, False)
    with partita.UdpInputSender(daemon.udp, a) as tx:
        tx.send([0.25])
        tx.send([0.5])
        assert wait_until(lambda: model_stats(client, a).udp_inputs == 2, WAIT)
        s = client.step(a, 1, fields=pb.FIELD_INPUTS)
        assert s.inputs.tolist() == [0.5]
        assert (s.input_session, s.input_sequence) == (tx.session, 2)
    # frames carry it too
    with daemon.client() as sub:
        sub.subscribe(a, every_k=1)
        client.set_inputs(a, {"tau_hinge": 1.0})
        client.step(a, 1)
        f = next(sub.frames(timeout=WAIT, count=1))
        assert f.wall_time_ns > 0 and (f.input_session, f.input_sequence) == (0, 0)


def next_model_event(c, kind, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ev = c.next_event(0.2)
        if ev is not None and ev.WhichOneof("kind") == "model_event" and \
                ev.model_event.kind == kind:
            return ev.model_event
    return None


@pytest.mark.parametrize("hold", [False, True])
def test_input_watchdog(daemon, client, hold):
    name = unique("wd")
    client.load_model(pendulum_yaml(), name=name, format=pb.YAML, mode="paused",
                      input_timeout_ms=1000, input_hold=hold)
    # The watchdog runs on the wall clock: its arithmetic is tested exactly on an injected
    # clock (test_internals.c). Here a timeout of 1 s leaves a loaded machine ample time to
    # read the inputs between INPUT_RESUMED and the next silence.
    try:
        with daemon.client() as watcher:
            watcher.subscribe(name, every_k=1000)
            client.set_inputs(name, {"tau_hinge": 2.0})
            client.set_mode(name, "realtime")
            ev = next_model_event(watcher, pb.ModelEvent.INPUT_TIMEOUT, WAIT)
            assert ev is not None, "no INPUT_TIMEOUT event"
            assert ("held" if hold else "set to zero") in ev.message
            # from the step that noticed the silence on, the inputs are the safe value
            assert wait_until(lambda: client.get_state(name).step >= ev.step + 1, WAIT)
            expect = [2.0] if hold else [0.0]
            assert client.get_state(name, fields=pb.FIELD_INPUTS).inputs.tolist() == expect
            client.set_inputs(name, {"tau_hinge": 3.0})
            ev2 = next_model_event(watcher, pb.ModelEvent.INPUT_RESUMED, WAIT)
            assert ev2 is not None and ev2.step >= ev.step
            assert wait_until(lambda: client.get_state(
                name, fields=pb.FIELD_INPUTS).inputs.tolist() == [3.0], WAIT)
    finally:
        client.unload_model(name)


def test_load_options_override_the_model(daemon, client):
    # A 32-DOF robot may need to run at 2 ms: dt and integrator are load options.
    a, b = unique("opt"), unique("ref")
    client.load_model(pendulum_yaml(), name=a, format=pb.YAML, mode="lockstep")
    with pytest.raises(partita.PartitaError):
        client.request("load_model", pb.LoadModel(name=a + "x", source=pendulum_yaml(),
                                                  format=pb.YAML, dt=-1.0))
    with pytest.raises(partita.PartitaError) as e:
        client.request("load_model", pb.LoadModel(name=a + "x", source=pendulum_yaml(),
                                                  format=pb.YAML, integrator="leapfrog"))
    assert "rk4, abm4 or euler" in e.value.message
    try:
        info = client.request("load_model", pb.LoadModel(
            name=b, source=pendulum_yaml(), format=pb.YAML, mode=pb.LOCKSTEP, dt=0.002,
            integrator="euler")).model_info
        assert info.dt == 0.002 and info.integrator == "euler"
        # the same as a model file that says so itself
        client.unload_model(a)
        client.load_model(pendulum_yaml(dt=0.002, integrator="euler"), name=a, format=pb.YAML,
                          mode="lockstep")
        sa, sb = client.step(a, 50), client.step(b, 50)
        assert sa.coordinates.tolist() == sb.coordinates.tolist() and sb.time == 50 * 0.002
        # URDF too, from the command line
        urdf = os.path.join(os.environ.get("PARTITA_ROOT", "."), "configs", "models",
                            "arm2r.urdf")
        out = subprocess.run([PARTITA_CLI, "--connect", daemon.tcp, "load", urdf, "--name",
                              b + "u", "--dt", "0.002", "--integrator", "abm4", "--json"],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        j = json.loads(out.stdout)
        assert j["dt"] == 0.002 and j["integrator"] == "abm4"
        client.unload_model(b + "u")
    finally:
        client.unload_model(a)
        client.unload_model(b)
