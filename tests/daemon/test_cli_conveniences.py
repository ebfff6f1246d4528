"""`partita inverse --model N --gravity`, `--acc all=V` and `partita linearize --model N --set`
against a live partitad: the daemon's answers equal the offline command's on the same file
(both print %.17g), the holding torques match the closed form, and the live model's inputs and
state are not changed by --set."""

import json
import math
import os
import subprocess
import tempfile

import pytest

from conftest import unique
import partita

PARTITA_CLI = os.environ.get("PARTITA_CLI")
ROOT = os.environ.get("PARTITA_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
ARM = os.path.join(ROOT, "configs", "models", "arm2r.urdf")


def cli(*args):
    if not PARTITA_CLI or not os.path.isfile(PARTITA_CLI):
        pytest.skip("PARTITA_CLI is not set to the partita binary")
    p = subprocess.run([PARTITA_CLI] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    for mark in ("Sanitizer", "runtime error:"):
        assert mark not in p.stderr, p.stderr
    return p


def cli_json(*args):
    p = cli(*args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture
def arm(client):
    name = unique("arm")
    client.load_model_file(os.path.abspath(ARM), name=name, mode="lockstep")
    yield name
    client.unload_model(name)


AT = ["--init", "shoulder=0.5", "--init", "elbow=0.8"]


def test_gravity_remote_equals_offline(daemon, arm):
    remote = cli_json("inverse", "--model", arm, "--gravity", *AT, "--connect", daemon.tcp)
    local = cli_json("inverse", ARM, "--gravity", *AT)
    assert remote["efforts"] == local["efforts"]
    assert remote["mode"] == "torque_request"
    assert set(remote["efforts"]) == {"shoulder", "elbow"}
    for v in remote["rates"].values():
        assert abs(v) < 1e-12


def test_gravity_pendulum_closed_form(daemon, client):
    name = unique("pend")
    client.load_model_file(os.path.join(os.path.abspath(ROOT), "configs", "models",
                                        "pendulum.yaml"), name=name, mode="lockstep")
    try:
        for q in (0.4, -1.2, 2.5):
            res = cli_json("inverse", "--model", name, "--gravity", "--init", "hinge=%r" % q,
                           "--connect", daemon.tcp)
            # a 1 kg rod, centre of mass 0.5 m below the hinge: m g l sin(q)
            assert abs(res["efforts"]["tau"] - 1.0 * 9.81 * 0.5 * math.sin(q)) < 1e-10
    finally:
        client.unload_model(name)


def test_acc_all_remote(daemon, arm):
    args = AT + ["--init-rate", "shoulder=0.3", "--acc", "all=1", "--acc", "elbow=-1"]
    remote = cli_json("inverse", "--model", arm, *args, "--connect", daemon.tcp)
    local = cli_json("inverse", ARM, *args)
    assert remote["efforts"] == local["efforts"]
    assert abs(remote["accelerations"]["shoulder"] - 1) < 1e-9
    assert abs(remote["accelerations"]["elbow"] + 1) < 1e-9


def test_gravity_refusals_remote(daemon, arm):
    p = cli("inverse", "--model", arm, "--gravity", "--acc", "elbow=0", "--connect", daemon.tcp)
    assert p.returncode == 2 and "--gravity" in p.stderr
    p = cli("equilibrium", "--model", arm, "--gravity", "--connect", daemon.tcp)
    assert p.returncode == 2 and "--gravity" in p.stderr
    p = cli("linearize", "--model", arm, "--set", "nope=1", "--connect", daemon.tcp)
    assert p.returncode == 1 and "no such input" in p.stderr


def test_gravity_refused_by_daemon(client, arm):
    # rates or accelerations with gravity: INVALID_ARGUMENT, whatever the client sends
    for kw in ({"rates": {"elbow": 1.0}}, {"accelerations": {"elbow": 0.0}}):
        with pytest.raises(partita.PartitaError) as e:
            client.inverse_dynamics(arm, gravity=True, **kw)
        assert "gravity" in str(e.value)
    with pytest.raises(partita.PartitaError):
        client.inverse_dynamics(arm, accelerations={"all": float("inf")})
    with pytest.raises(partita.PartitaError):
        client.linearize(arm, input_values={"elbow": float("nan")})
    # the Python client's view of the same requests
    g = client.inverse_dynamics(arm, gravity=True, coordinates={"shoulder": 0.5, "elbow": 0.8})
    assert g["efforts"] == cli_json("inverse", ARM, "--gravity", *AT)["efforts"]


def test_linearize_set_remote(daemon, client, arm):
    hold = cli_json("inverse", ARM, "--gravity", *AT)["efforts"]
    sets = ["--set", "shoulder=%r" % hold["shoulder"], "--set", "elbow=%r" % hold["elbow"]]
    args = AT + ["--init-rate", "shoulder=0", "--init-rate", "elbow=0"] + sets
    remote = cli_json("linearize", "--model", arm, *args, "--connect", daemon.tcp)
    local = cli_json("linearize", ARM, *args)
    for key in ("states", "inputs", "outputs"):
        assert remote[key] == local[key]
    for key in ("A", "B", "C", "D"):
        assert remote[key] == local[key], key
    without = cli_json("linearize", ARM, *args[:-4])
    assert without["A"] != local["A"]
    # the live model keeps its inputs (zero)
    state = client.get_state(arm, fields=partita.FIELD_ALL)
    assert list(state.inputs) == [0.0, 0.0]
