"""Control elements served live (issue 26, item 4): model info lists signals, control states,
parameters and driven inputs; states and subscriptions carry them (FIELD_CONTROLS); SetState
sets control states; SetParameters tunes a gain between steps (refused values change
nothing; the next step's pid output is the new gain's, from the frame's own values); a driven
input is refused as a client's; a recording with all of it replays bit for bit.
"""

import contextlib
import json
import os
import subprocess

import pytest

import partita
from conftest import PARTITA_CLI, ROOT, Daemon, unique
from partita import pb

MODEL = os.path.join(ROOT, "configs", "models", "pendulum_motor_pid.yaml")


@pytest.fixture
def motor(client):
    name = unique("motor")
    with open(MODEL) as f:
        client.load_model(f.read(), name=name, format=pb.YAML, mode="lockstep")
    yield name
    with contextlib.suppress(Exception):
        client.unload_model(name)


def test_model_info(client, motor):
    info = client.model_info(motor)
    assert list(info.signals) == ["angle", "rate", "target", "error", "voltage", "motor.y1"]
    assert list(info.control_states) == ["voltage.integral", "voltage.filter", "motor.x1"]
    assert list(info.parameters) == ["voltage.kp", "voltage.ki", "voltage.kd", "voltage.tf",
                                     "voltage.limit"]
    assert list(info.inputs) == ["drive", "target"]
    assert list(info.input_sources) == ["motor.y1", ""]


def pid_voltage(s, kp, ki_term, kd=2.0, tf=0.01, limit=24.0):
    """The pid's output from a frame's values (docs/controls.md): kp e + xI + kd (e - xF) / tf,
    limited."""
    e = s.signal("error")
    v = kp * e + s.control_state("voltage.integral") + \
        kd * (e - s.control_state("voltage.filter")) / tf
    return max(-limit, min(limit, v))


def test_state_steps_and_tuning(client, motor):
    fields = partita.FIELD_DEFAULT | partita.FIELD_CONTROLS
    client.set_state(motor, {"hinge": 0.2}, control_states={"voltage.filter": -0.2})
    s = client.get_state(motor, fields=fields)
    assert s.coordinate("hinge") == pytest.approx(0.2, abs=1e-12)
    assert s.control_state("voltage.filter") == -0.2    # no derivative kick
    assert s.signal("error") == pytest.approx(-0.2, abs=1e-12)
    assert s.signal("voltage") == pid_voltage(s, 20, 0)
    assert s.parameters.tolist() == [20.0, 10.0, 2.0, 0.01, 24.0]
    s = client.step(motor, 50, fields=fields)
    assert s.step == 50 and s.signal("voltage") == pid_voltage(s, 20, 0)
    assert s.control_state("motor.x1") != 0                # the current flows
    # a gain tuned between steps: the answer has it, the next step uses it
    after = client.set_parameters(motor, {"voltage.kp": 30.0})
    assert after.parameters.tolist()[0] == 30.0
    s = client.step(motor, 1, fields=fields)
    assert s.signal("voltage") == pytest.approx(pid_voltage(s, 30, 0), abs=1e-12)
    # refused: all or none, the reason said, nothing changed
    with pytest.raises(partita.PartitaError) as e:
        client.set_parameters(motor, {"voltage.ki": 5.0, "voltage.limit": -1.0})
    assert "limit must be > 0" in e.value.message
    with pytest.raises(partita.PartitaError) as e:
        client.set_parameters(motor, {"voltage.kq": 1.0})
    assert "no parameter 'voltage.kq'" in e.value.message
    s = client.get_state(motor, fields=fields)
    assert s.parameters.tolist() == [30.0, 10.0, 2.0, 0.01, 24.0]
    with pytest.raises(partita.PartitaError):
        client.set_state(motor, control_states={"voltage.integrall": 1.0})
    # the driven input is not a client's; the control input is
    with pytest.raises(partita.PartitaError) as e:
        client.set_inputs(motor, {"drive": 1.0})
    assert "driven by signal 'motor.y1'" in e.value.message
    client.set_inputs(motor, {"target": 0.1})
    s = client.step(motor, 1, fields=fields | partita.FIELD_INPUTS)
    assert s.signal("target") == 0.1 and s.inputs.tolist()[1] == 0.1
    assert s.inputs.tolist()[0] == pytest.approx(s.signal("motor.y1"), abs=0)


def test_subscription_carries_signals(client, motor):
    fields = partita.FIELD_COORDINATES | partita.FIELD_CONTROLS
    sub = client.subscribe(motor, every_k=5, fields=fields)
    assert sub.fields == fields
    client.step(motor, 10)
    frames = list(client.frames(count=2))
    assert len(frames[0].signals) == 6 and len(frames[0].control_states) == 3
    assert len(frames[0].parameters) == 5
    assert frames[1].step == frames[0].step + 5
    client.unsubscribe(sub.subscription)


@pytest.fixture(scope="module")
def rdaemon(workdir):
    recdir = os.path.join(workdir, "ctl-recordings")
    os.makedirs(recdir, exist_ok=True)
    d = Daemon(workdir, extra_args=["--record-dir", recdir])
    yield d
    d.check_clean_exit()


def test_recording_replays_with_controls(rdaemon):
    """A recording with control states set and a gain tuned replays bit for bit."""
    name = unique("rec")
    with rdaemon.client() as c, open(MODEL) as f:
        c.load_model(f.read(), name=name, format=pb.YAML, mode="lockstep")
        fields = partita.FIELD_DEFAULT | partita.FIELD_CONTROLS | partita.FIELD_INPUTS
        st = c.record(name, name + ".mcap", fields=fields)
        c.set_state(name, {"hinge": 0.1}, control_states={"voltage.integral": 0.5})
        c.step(name, 30)
        c.set_parameters(name, {"voltage.kd": 1.5})
        c.set_inputs(name, {"target": -0.05})
        c.step(name, 30)
        end = c.stop_recording(name)
        c.unload_model(name)
    rec = partita.read_recording(end.path)
    assert "parameters" in rec.input_kind and "set_state" in rec.input_kind
    assert rec.control_states.shape[1] == 3 and rec.signals.shape[1] == 6
    assert rec.control_state_names == ["voltage.integral", "voltage.filter", "motor.x1"]
    assert rec.signal_names[-1] == "motor.y1"
    assert rec.parameters[-1].tolist() == [20.0, 10.0, 1.5, 0.01, 24.0]
    out = subprocess.run([PARTITA_CLI, "replay", end.path, "--json"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["bit_identical"] is True and doc["states"] > 2, doc
    assert st.active


def test_cli_tune_and_state(daemon, client, motor):
    """`partita tune` and `partita state` as a user runs them."""
    def cli(*args):
        return subprocess.run([PARTITA_CLI, *args, "--connect", daemon.tcp],
                              capture_output=True, text=True, timeout=60)
    out = cli("tune", motor, "voltage.kp=25", "voltage.ki=8")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["voltage.kp = 25", "voltage.ki = 8", "voltage.kd = 2",
                                       "voltage.tf = 0.01", "voltage.limit = 24"]
    out = cli("tune", motor, "voltage.limit=0")
    assert out.returncode == 1 and "voltage.limit must be > 0" in out.stderr
    out = cli("tune", motor, "voltage.kd=3", "--json")
    assert json.loads(out.stdout)["voltage.kd"] == 3
    client.step(motor, 10)
    out = cli("state", motor, "--json")
    doc = json.loads(out.stdout)
    assert list(doc["control_states"]) == ["voltage.integral", "voltage.filter", "motor.x1"]
    assert list(doc["signals"])[-1] == "motor.y1"
    out = cli("set", motor, "drive=1")
    assert out.returncode == 1 and "driven by signal 'motor.y1'" in out.stderr
