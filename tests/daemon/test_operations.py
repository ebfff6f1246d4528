"""Every operation of the protocol against a live partitad over loopback TCP and a Unix socket.

Physical checks use the pendulum of conftest.py: horizontal at t=0, so its initial angular
acceleration is M G L / I_HINGE (plus tau / I_HINGE with an actuator torque tau).
"""

import math
import time

import numpy as np
import pytest

import partita
from conftest import DT, G, I_HINGE, L, M, WAIT, model_stats, pendulum_yaml, unique, wait_until
from partita import pb

ALPHA0 = M * G * L / I_HINGE        # rad/s^2 at t=0


def code_of(fn, *args, **kwargs):
    """Status code of a call that must fail with PartitaError."""
    with pytest.raises(partita.PartitaError) as err:
        fn(*args, **kwargs)
    assert err.value.message, "an error status must say why"
    return err.value.code


def assert_same_state(a, b):
    assert a.step == b.step and a.time == b.time
    assert a.coordinates.tolist() == b.coordinates.tolist()
    assert a.rates.tolist() == b.rates.tolist()


# -- Hello, models ---------------------------------------------------------------------------

def test_hello(client):
    reply = client.hello(client_name="pytest")
    assert reply.protocol_version == partita.PROTOCOL_VERSION
    assert reply.server_version


def test_hello_wrong_protocol_version(client):
    assert code_of(client.hello, protocol_version=999) != pb.Status.OK
    # A refused request does not close the connection.
    assert client.hello().protocol_version == partita.PROTOCOL_VERSION


def test_load_list_info_unload(client):
    name = unique("p")
    info = client.load_model(pendulum_yaml(), name=name, format=pb.YAML)
    assert info.name == name
    assert (info.bodies, info.joints, info.dof) == (1, 1, 1)
    assert list(info.coordinates) == ["hinge"]
    assert list(info.actuators) == ["tau_hinge"]
    assert list(info.inputs) == ["tau_hinge"]
    # The partition: dof independent coordinates; a tree is integrated in its joint
    # coordinates, so the pendulum's is its hinge angle.
    assert len(info.independent) == info.dof
    assert list(info.independent) == ["hinge"]
    assert info.integrator == "rk4" and info.dt == DT
    assert info.mode == pb.PAUSED                       # MODE_UNSPECIFIED loads paused
    assert name in [m.name for m in client.list_models()]
    again = client.model_info(name)
    assert again.name == name and list(again.coordinates) == ["hinge"]
    assert list(again.independent) == list(info.independent)
    assert code_of(client.load_model, pendulum_yaml(), name=name) == pb.Status.ALREADY_EXISTS
    client.unload_model(name)
    assert name not in [m.name for m in client.list_models()]
    assert code_of(client.model_info, name) == pb.Status.NOT_FOUND
    assert code_of(client.unload_model, name) == pb.Status.NOT_FOUND


def test_load_uses_model_name_when_none_given(client):
    own = unique("own")
    info = client.load_model(pendulum_yaml(name=own), format=pb.YAML)
    assert info.name == own
    client.unload_model(own)


def test_load_bad_source_is_refused(client):
    code = code_of(client.load_model, "model: x\nbodies: [[[\n", name=unique("bad"),
                   format=pb.YAML, source_name="broken.yaml")
    assert code in (pb.Status.INVALID_ARGUMENT, pb.Status.MODEL_ERROR)
    unknown_key = pendulum_yaml() + "frobnicate: 1\n"
    code = code_of(client.load_model, unknown_key, name=unique("bad"), format=pb.YAML)
    assert code in (pb.Status.INVALID_ARGUMENT, pb.Status.MODEL_ERROR)
    assert client.hello().protocol_version == partita.PROTOCOL_VERSION


BAD_INERTIA_URDF = """<robot name="bad_inertia"><link name="world"/>
<link name="arm"><inertial><mass value="1"/>
<inertia ixx="0.001" iyy="0.001" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j" type="continuous"><parent link="world"/><child link="arm"/>
<axis xyz="0 0 1"/></joint></robot>
"""


def test_load_balance_inertia(client):
    """A non-physical URDF inertia is refused unless LoadModel asks for balance_inertia."""
    name = unique("inertia")
    with pytest.raises(partita.PartitaError) as err:
        client.load_model(BAD_INERTIA_URDF, name=name, format=pb.URDF, source_name="arm.urdf")
    assert err.value.code == pb.Status.INVALID_ARGUMENT
    assert 'arm.urdf:3: link "arm": inertia is not physical' in err.value.message
    assert name not in [m.name for m in client.list_models()]
    info = client.load_model(BAD_INERTIA_URDF, name=name, format=pb.URDF, source_name="arm.urdf",
                             balance_inertia=True)
    assert ('arm.urdf:3: link "arm": inertia repaired (balance_inertia): ixx=0.001 ixy=0 ixz=0 '
            'iyy=0.001 iyz=0 izz=0.01 -> ixx=0.00366667') in info.warnings
    assert list(info.coordinates) == ["j"]
    client.unload_model(name)


LIMITED_URDF = """<robot name="limited"><link name="world"/>
<link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
<inertia ixx="0.001" iyy="0.08" izz="0.08" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j" type="revolute"><parent link="world"/><child link="arm"/>
<axis xyz="0 1 0"/><limit effort="10" lower="-0.3" upper="0.3"/></joint></robot>
"""


def test_load_no_joint_limits(client):
    """A URDF's <limit lower upper> is enforced unless LoadModel asks for no_joint_limits: the
    arm released horizontal stops at 0.3 rad, or falls through it."""
    lowest = {}
    for off in (False, True):
        name = unique("limits")
        client.load_model(LIMITED_URDF, name=name, format=pb.URDF, source_name="lim.urdf",
                          no_joint_limits=off)
        state = client.step(name, 500)
        lowest[off] = max(abs(c) for c in state.coordinates)
        client.unload_model(name)
    assert lowest[False] <= 0.3
    assert lowest[True] > 1.0


def test_unknown_model_is_not_found(client):
    nope = "no_such_model"
    calls = [
        (client.model_info, ()), (client.unload_model, ()), (client.get_state, ()),
        (client.step, ()), (client.reset, ()), (client.set_mode, ("lockstep",)),
        (client.set_state, ({"hinge": 0.1},)), (client.set_inputs, ({"tau_hinge": 1.0},)),
        (client.subscribe, ()), (client.stats, ()),
    ]
    for fn, args in calls:
        assert code_of(fn, nope, *args) == pb.Status.NOT_FOUND, fn.__name__


@pytest.mark.parametrize("op", ["inverse_dynamics", "linearize", "equilibrium"])
def test_unknown_model_heavy_ops(client, op):
    assert code_of(getattr(client, op), "no_such_model") == pb.Status.NOT_FOUND


# -- modes -----------------------------------------------------------------------------------

def steps_over(client, model, seconds):
    s0 = client.get_state(model).step
    time.sleep(seconds)
    return client.get_state(model).step - s0


def test_set_mode_each_mode(client, pendulum):
    info = client.set_mode(pendulum, "paused")
    assert info.mode == pb.PAUSED
    assert steps_over(client, pendulum, 0.1) == 0

    info = client.set_mode(pendulum, "realtime", rate=2.0)
    assert info.mode == pb.REALTIME and info.rate == 2.0
    assert client.model_info(pendulum).mode == pb.REALTIME
    # 0.2 s at 2x a 1 kHz model: about 400 steps; only their existence is checked here.
    assert steps_over(client, pendulum, 0.2) > 100

    info = client.set_mode(pendulum, "free_run")
    assert info.mode == pb.FREE_RUN
    assert steps_over(client, pendulum, 0.1) > 100

    info = client.set_mode(pendulum, "lockstep")
    assert info.mode == pb.LOCKSTEP
    assert steps_over(client, pendulum, 0.1) == 0
    assert client.step(pendulum, 3).step == client.model_info(pendulum).step

    assert code_of(client.set_mode, pendulum, pb.MODE_UNSPECIFIED) == \
        pb.Status.INVALID_ARGUMENT
    assert client.model_info(pendulum).mode == pb.LOCKSTEP


def test_step_refused_while_running(client, pendulum):
    client.set_mode(pendulum, "free_run")
    assert code_of(client.step, pendulum, 1) == pb.Status.FAILED_PRECONDITION
    client.set_mode(pendulum, "lockstep")


# -- stepping and state ----------------------------------------------------------------------

def test_step_follows_physics(client, pendulum):
    s0 = client.get_state(pendulum)
    assert s0.step == 0 and s0.time == 0.0
    assert s0.coordinates.tolist() == [0.0] and s0.rates.tolist() == [0.0]
    n = 10
    s = client.step(pendulum, n)
    t = n * DT
    assert s.step == n and s.time == pytest.approx(t, abs=1e-12)
    # From rest at horizontal: q = alpha t^2 / 2 and qdot = alpha t; the cos(q) change of the
    # gravity torque is below 1e-6 relative after 10 ms.
    assert s.coordinate("hinge") == pytest.approx(0.5 * ALPHA0 * t * t, rel=1e-5)
    assert s.rate("hinge") == pytest.approx(ALPHA0 * t, rel=1e-5)
    assert s.energy["total"] == pytest.approx(s0.energy["total"], abs=1e-9)
    assert s.residual["position"] < 1e-8 and s.residual["velocity"] < 1e-8
    assert client.get_state(pendulum).step == n


def test_reset(client, pendulum):
    s0 = client.get_state(pendulum)
    client.set_inputs(pendulum, {"tau_hinge": 1.5})
    client.step(pendulum, 25)
    r = client.reset(pendulum)
    assert_same_state(r, s0)
    assert_same_state(client.get_state(pendulum), s0)


def test_set_state(client, pendulum):
    q, qd = 0.3, 0.1
    s0 = client.get_state(pendulum)
    s = client.set_state(pendulum, {"hinge": q}, {"hinge": qd})
    assert s.coordinate("hinge") == pytest.approx(q, abs=1e-10)
    assert s.rate("hinge") == pytest.approx(qd, abs=1e-10)
    assert_same_state(client.get_state(pendulum), s)
    # Energies from the state alone: the CoM drops by L sin q, and KE = I_hinge qd^2 / 2.
    assert s.energy["kinetic"] == pytest.approx(0.5 * I_HINGE * qd * qd, rel=1e-9)
    dpe = s.energy["potential"] - s0.energy["potential"]
    assert dpe == pytest.approx(-M * G * L * math.sin(q), rel=1e-9)


def test_set_inputs_by_name_and_index(client, pendulum):
    tau = 2.0
    client.set_inputs(pendulum, {"tau_hinge": tau})
    t = 10 * DT
    s = client.step(pendulum, 10)
    assert s.rate("hinge") == pytest.approx((ALPHA0 + tau / I_HINGE) * t, rel=1e-5)
    # Held until changed: the input shows in the state.
    full = client.get_state(pendulum, fields=partita.FIELD_ALL)
    assert full.inputs.tolist() == [tau]
    # By index: a torque that exactly balances gravity at the horizontal keeps it there.
    client.reset(pendulum)
    client.set_inputs(pendulum, by_index=[-M * G * L])
    s = client.step(pendulum, 10)
    assert abs(s.coordinate("hinge")) < 1e-9 and abs(s.rate("hinge")) < 1e-7


def test_get_state_fields(client, pendulum):
    full = client.get_state(pendulum, fields=partita.FIELD_ALL)
    assert full.coordinate_names == ["hinge"] and full.input_names == ["tau_hinge"]
    assert full.accelerations.tolist() == pytest.approx([ALPHA0], rel=1e-9)
    assert full.inputs.tolist() == [0.0]
    assert len(full.bodies) == 1
    body = full.bodies[0]
    assert body["name"] == "link"
    assert body["position"].tolist() == pytest.approx([L, 0, 0], abs=1e-12)
    assert body["orientation"].tolist() == pytest.approx([1, 0, 0, 0], abs=1e-12)
    assert full.energy is not None and full.residual is not None
    only = client.get_state(pendulum, fields=partita.FIELD_COORDINATES)
    assert only.coordinates.tolist() == [0.0]
    assert only.rates.size == 0 and only.energy is None and not only.bodies


# -- refused inputs change nothing -----------------------------------------------------------

@pytest.mark.parametrize("kind", ["nan_input", "inf_input", "unknown_actuator", "bad_index",
                                  "nan_coordinate", "unknown_coordinate", "nan_rate"])
def test_invalid_argument_changes_nothing(client, pendulum, kind):
    client.step(pendulum, 5)
    before = client.get_state(pendulum, fields=partita.FIELD_ALL)
    calls = {
        "nan_input": lambda: client.set_inputs(pendulum, {"tau_hinge": float("nan")}),
        "inf_input": lambda: client.set_inputs(pendulum, {"tau_hinge": float("inf")}),
        "unknown_actuator": lambda: client.set_inputs(pendulum, {"tau_hinge": 1.0,
                                                                 "no_such": 1.0}),
        "bad_index": lambda: client.set_inputs(pendulum, by_index={7: 1.0}),
        "nan_coordinate": lambda: client.set_state(pendulum, {"hinge": float("nan")}),
        "unknown_coordinate": lambda: client.set_state(pendulum, {"hinge": 0.2, "knee": 0.1}),
        "nan_rate": lambda: client.set_state(pendulum, None, {"hinge": float("nan")}),
    }
    assert code_of(calls[kind]) == pb.Status.INVALID_ARGUMENT
    after = client.get_state(pendulum, fields=partita.FIELD_ALL)
    assert_same_state(after, before)
    assert after.inputs.tolist() == before.inputs.tolist() == [0.0]
    # Nothing was applied partially: the next step matches a model that never saw the request.
    ref = unique("ref")
    client.load_model(pendulum_yaml(), name=ref, format=pb.YAML, mode="lockstep")
    try:
        assert client.step(pendulum, 5).coordinates.tolist() == \
            client.step(ref, 10).coordinates.tolist()
    finally:
        client.unload_model(ref)


# -- subscriptions ---------------------------------------------------------------------------

def test_subscribe_unsubscribe(client, pendulum):
    sub = client.subscribe(pendulum, every_k=5)
    assert sub.subscription != 0 and sub.every_k == 5
    assert sub.fields == partita.FIELD_DEFAULT
    final = client.step(pendulum, 20)
    frames = list(client.frames(timeout=WAIT, count=4))
    assert len(frames) == 4
    assert all(f.subscription == sub.subscription and f.model == pendulum for f in frames)
    steps = [f.step for f in frames]
    assert steps == list(range(steps[0], steps[0] + 20, 5)) and steps[-1] == 20
    seqs = [f.sequence for f in frames]
    assert seqs == list(range(seqs[0], seqs[0] + 4))
    assert frames[-1].coordinates.tolist() == final.coordinates.tolist()
    assert frames[-1].energy is not None and frames[-1].bodies == []
    assert model_stats(client, pendulum).subscribers == 1

    client.unsubscribe(sub.subscription)
    client.step(pendulum, 20)
    assert client.poll_frame(0.3) is None
    assert model_stats(client, pendulum).subscribers == 0
    assert code_of(client.unsubscribe, sub.subscription) == pb.Status.NOT_FOUND


def test_subscription_field_selection(client, pendulum):
    sub = client.subscribe(pendulum, every_k=1, fields=partita.FIELD_COORDINATES |
                           partita.FIELD_BODIES)
    client.step(pendulum, 1)
    f = client.poll_frame(WAIT)
    assert f is not None and f.subscription == sub.subscription
    assert f.coordinates.size == 1 and f.rates.size == 0 and f.energy is None
    assert len(f.bodies) == 1 and f.bodies[0]["orientation"].size == 4
    client.unsubscribe(sub.subscription)


def test_unload_ends_subscriptions_of_other_clients(daemon, client, pendulum):
    with daemon.client() as other:
        other.subscribe(pendulum, every_k=1)
        client.unload_model(pendulum)
        assert other.hello().protocol_version == partita.PROTOCOL_VERSION


# -- stats -----------------------------------------------------------------------------------

def test_stats(client, pendulum):
    client.step(pendulum, 50)
    ms = model_stats(client, pendulum)
    assert ms.steps == 50 and ms.mode == pb.LOCKSTEP
    assert ms.time == pytest.approx(50 * DT, abs=1e-12)
    q = ms.step_us
    assert 0 < q.mean and 0 <= q.p50 <= q.p99 <= q.max
    assert ms.overruns == 0 and ms.failures == 0
    all_stats = client.stats()
    assert pendulum in [m.model for m in all_stats.models]
    srv = all_stats.server
    assert srv.clients >= 1 and srv.models >= 1
    assert srv.bytes_in > 0 and srv.bytes_out > 0 and srv.requests > 0


# -- heavy requests, checked against closed forms --------------------------------------------


def test_inverse_dynamics_holding_torque(client, pendulum):
    r = client.inverse_dynamics(pendulum, accelerations={"hinge": 0.0})
    # Holding the link horizontal at rest takes -M G L (gravity drives the angle up), and the
    # hinge carries the weight.
    assert r["efforts"]["tau_hinge"] == pytest.approx(-M * G * L, rel=1e-6)
    assert r["reactions"]["hinge"]["force"].tolist() == pytest.approx([0, 0, M * G], abs=1e-6)
    assert client.get_state(pendulum).step == 0     # ran on a copy


GRIPPER_YAML = """model: gripper
bodies:
  - {name: left, mass: 0.3, inertia: [1e-4, 1e-4, 1e-4], position: [0, 0.02, 0]}
  - {name: right, mass: 0.2, inertia: [1e-4, 1e-4, 1e-4], position: [0, -0.02, 0]}
joints:
  - {name: slide_l, type: prismatic, body1: ground, body2: left, point: [0, 0.02, 0], axis: [0, 1, 0]}
  - {name: slide_r, type: prismatic, body1: ground, body2: right, point: [0, -0.02, 0], axis: [0, -1, 0]}
actuators:
  - {name: drive, type: joint_force, joint: slide_l}
couplers:
  - {name: fingers, follower: slide_r, leader: slide_l, multiplier: 2}
"""


def test_coupler_dof_and_effort(client):
    """A coupler (docs/model-format.md): one degree of freedom less in ModelInfo; a torque
    request on the leader moves both fingers and reports the coupler's effort, by hand:
    leader (m_l + 4 m_f) a, coupler 2 m_f a."""
    name = unique("gripper")
    info = client.load_model(GRIPPER_YAML, name=name, format=pb.YAML)
    assert info.dof == 1 and list(info.independent) == ["slide_l"]
    r = client.inverse_dynamics(name, accelerations={"all": 2.5})
    assert r["efforts"]["drive"] == pytest.approx((0.3 + 4 * 0.2) * 2.5, rel=1e-12)
    assert r["coupler_efforts"] == pytest.approx({"fingers": 2 * 0.2 * 2.5}, rel=1e-12)
    assert r["accelerations"]["slide_r"] == pytest.approx(5.0, rel=1e-12)
    with pytest.raises(partita.PartitaError) as e:
        client.inverse_dynamics(name, accelerations={"slide_r": 1.0})
    assert 'follows coupler "fingers"' in str(e.value)
    client.unload_model(name)


PAIR_YAML = """model: pair
gravity: [0, 0, -9.81]
bodies:
  - {name: a, mass: 1.0, inertia: [0.02, 0.02, 0.001], position: [0, 0, -0.5]}
  - {name: b, mass: 2.0, inertia: [0.01, 0.01, 0.001], position: [1, 0, -0.3]}
joints:
  - {name: ha, type: revolute, body1: ground, body2: a, point: [0, 0, 0], axis: [0, 1, 0],
     limits: [0.4, 1.0]}
  - {name: hb, type: revolute, body1: ground, body2: b, point: [1, 0, 0], axis: [0, 1, 0]}
couplers:
  - {name: link, follower: hb, leader: ha, multiplier: 0.5, offset: 0.1}
"""


def test_equilibrium_reply_coupler_and_limit(client):
    """EquilibriumReply's coupler_efforts, limit_reactions and limit_notes (issue 11): two rods
    (a: 1 kg, CoM 0.5 m; b: 2 kg, CoM 0.3 m), hb = 0.5 ha + 0.1, ha limited to [0.4, 1.0]:
    at rest on ha's lower bound the coupler holds b with lam = m_b g d_b sin(0.3), and the
    limit carries R = m_a g d_a sin(0.4) + 0.5 lam (the leader takes -multiplier x lam)."""
    name = unique("pair")
    client.load_model(PAIR_YAML, name=name, format=pb.YAML)
    r = client.equilibrium(name, coordinates={"ha": 0.6})
    lam = 2 * G * 0.3 * math.sin(0.3)
    assert r["coordinates"]["ha"] == pytest.approx(0.4, abs=1e-12)
    assert r["coordinates"]["hb"] == pytest.approx(0.3, abs=1e-12)
    assert r["coupler_efforts"] == pytest.approx({"link": lam}, rel=1e-9)
    assert r["limit_reactions"] == pytest.approx(
        {"ha": 1 * G * 0.5 * math.sin(0.4) + 0.5 * lam}, rel=1e-9)
    assert len(r["limit_notes"]) == 1
    assert r["limit_notes"][0].startswith("joint ha at its lower limit 0.4: held by the limit, "
                                          "treated as a constraint (reaction 2.7798129")
    assert not r["applied"]
    client.unload_model(name)


ARM_LIMITED_YAML = """model: arm_v
gravity: [0, 0, -9.81]
bodies:
  - {name: l1, mass: 1.0, inertia: [0.1, 0.1, 0.01], position: [0, 0, -0.5]}
  - {name: l2, mass: 2.0, inertia: [0.05, 0.05, 0.01], position: [0, 0, -1.4]}
joints:
  - {name: shoulder, type: revolute, body1: ground, body2: l1, point: [0, 0, 0],
     axis: [0, 1, 0], limits: [0.3, 1.0]}
  - {name: elbow, type: revolute, body1: l1, body2: l2, point: [0, 0, -1], axis: [0, 1, 0]}
actuators:
  - {name: tau2, type: joint_torque, joint: elbow}
"""


def test_inverse_reply_limit_held(client):
    """InverseDynamicsReply's limit_reactions and limit_notes (issue 11): a two-link pendulum,
    the unactuated shoulder at rest on its lower bound 0.3, the elbow (0.5 rad) asked for
    1.5 rad/s^2: the limit holds the shoulder with R1 = H12 a2 - Q1 (by hand: Q gravity forces,
    H12 = I2 + m2 d2^2 + m2 L1 d2 cos t2); on the upper bound gravity pulls it away: released."""
    name = unique("arm")
    client.load_model(ARM_LIMITED_YAML, name=name, format=pb.YAML)
    m1, l1, m2, d2, i2, t1, t2, a2 = 1.0, 1.0, 2.0, 0.4, 0.05, 0.3, 0.5, 1.5
    q1 = -G * (m1 * l1 / 2 * math.sin(t1) + m2 * (l1 * math.sin(t1) + d2 * math.sin(t1 + t2)))
    r1 = (i2 + m2 * d2 * d2 + m2 * l1 * d2 * math.cos(t2)) * a2 - q1
    r = client.inverse_dynamics(name, coordinates={"shoulder": t1, "elbow": t2},
                                rates={"shoulder": 0.0, "elbow": 0.0},
                                accelerations={"elbow": a2})
    assert r["limit_reactions"] == pytest.approx({"shoulder": r1}, rel=1e-9)
    assert r["accelerations"]["shoulder"] == pytest.approx(0, abs=1e-12)
    assert r["limit_notes"] == ["joint shoulder at its lower limit 0.3: held by the limit, "
                                "treated as a constraint (reaction %.9g)" % r1]
    r = client.inverse_dynamics(name, coordinates={"shoulder": 1.0, "elbow": t2},
                                rates={"shoulder": 0.0, "elbow": 0.0},
                                accelerations={"elbow": a2})
    assert r["limit_reactions"] == {}
    assert r["limit_notes"] == ["joint shoulder at its upper limit 1 (coordinate 1): free: "
                                "released, its limit's reaction would pull"]
    assert r["accelerations"]["shoulder"] < -1
    client.unload_model(name)


def test_linearize_hanging_pendulum(client, pendulum):
    ss = client.linearize(pendulum, states=["hinge"], coordinates={"hinge": math.pi / 2},
                          rates={"hinge": 0.0})
    # Hanging straight down: M = I_hinge, K = M G L, no damping.
    k = M * G * L
    assert ss.state_names == ["hinge", "hinge.rate"] and ss.inputs == ["tau_hinge"]
    assert ss.states == ["hinge", "hinge_dot"]   # python-control's names
    assert ss.A == pytest.approx(np.array([[0, 1], [-k / I_HINGE, 0]]), rel=1e-4, abs=1e-6)
    assert ss.B == pytest.approx(np.array([[0], [1 / I_HINGE]]), rel=1e-4, abs=1e-6)
    assert ss.mck["M"] == pytest.approx(np.array([[I_HINGE]]), rel=1e-4)
    assert ss.mck["K"] == pytest.approx(np.array([[k]]), rel=1e-4)
    wn = math.sqrt(k / I_HINGE)
    assert sorted(abs(z.imag) for z in ss.server_eigenvalues) == pytest.approx([wn, wn],
                                                                               rel=1e-4)
    assert client.get_state(pendulum).coordinates.tolist() == [0.0]   # live model untouched


def test_equilibrium_hanging(client, pendulum):
    r = client.equilibrium(pendulum, apply=True, coordinates={"hinge": 1.2})
    assert r["coordinates"]["hinge"] == pytest.approx(math.pi / 2, abs=1e-6)
    assert r["reactions"]["hinge"]["force"].tolist() == pytest.approx([0, 0, M * G], abs=1e-6)
    assert r["applied"]
    live = client.get_state(pendulum)
    assert live.coordinate("hinge") == pytest.approx(math.pi / 2, abs=1e-6)


# -- Unix socket -----------------------------------------------------------------------------

def test_unix_socket(daemon):
    with partita.Client("unix:" + daemon.unix, timeout=WAIT) as c:
        assert c.hello().protocol_version == partita.PROTOCOL_VERSION
        name = unique("ux")
        c.load_model(pendulum_yaml(), name=name, format=pb.YAML, mode="lockstep")
        s = c.step(name, 10)
        assert s.step == 10
        assert s.rate("hinge") == pytest.approx(ALPHA0 * 10 * DT, rel=1e-5)
        # The same model is visible over TCP.
        with daemon.client() as tcp:
            assert tcp.get_state(name).coordinates.tolist() == s.coordinates.tolist()
        c.unload_model(name)


def test_many_requests_in_order(client, pendulum):
    # Pipelined: send many requests before reading; ids come back matched.
    reqs = []
    for i in range(50):
        req = pb.Request(id=10_000 + i)
        req.get_state.model = pendulum
        reqs.append(req)
    for req in reqs:
        client._send(req)
    got = set()
    deadline = time.monotonic() + WAIT
    while len(got) < 50 and time.monotonic() < deadline:
        client._read_some(deadline)
        got |= {i for i in client._responses if i >= 10_000}
    assert got == {r.id for r in reqs}


# -- a failing model is paused with MODEL_ERROR, the others keep running ---------------------

@pytest.mark.parametrize("tau", [1e200, 1e308], ids=["overflow", "inf_nan"])
def test_failing_model_pauses_with_event(daemon, client, pendulum, tau):
    other = unique("other")
    client.load_model(pendulum_yaml(), name=other, format=pb.YAML, mode="realtime")
    try:
        with daemon.client() as watcher:
            watcher.subscribe(pendulum, every_k=1)
            good = client.step(pendulum, 2)
            # A finite but absurd torque: the accelerations overflow within the first step.
            client.set_inputs(pendulum, {"tau_hinge": tau})
            with pytest.raises(partita.PartitaError) as err:
                client.step(pendulum, 10)
            assert err.value.code == pb.Status.MODEL_ERROR
            info = client.model_info(pendulum)
            assert info.mode == pb.PAUSED
            # Paused at its last good state.
            s = client.get_state(pendulum)
            assert np.all(np.isfinite(s.coordinates)) and np.all(np.isfinite(s.rates))
            assert s.step >= good.step
            # Subscribers hear why.
            deadline = time.monotonic() + WAIT
            event = None
            while event is None and time.monotonic() < deadline:
                ev = watcher.next_event(0.2)
                if ev is not None and ev.WhichOneof("kind") == "model_event":
                    event = ev.model_event
            assert event is not None, "no ModelEvent after the failure"
            assert event.kind == pb.ModelEvent.PAUSED_ON_ERROR and event.model == pendulum
            assert event.code == pb.Status.MODEL_ERROR and event.message
            assert model_stats(client, pendulum).failures >= 1
            # The other model was not disturbed.
            t0 = client.get_state(other).step
            assert wait_until(lambda: client.get_state(other).step > t0, WAIT)
            # Inputs to a model paused on error are refused: they would apply to nothing.
            with pytest.raises(partita.PartitaError) as err:
                client.set_inputs(pendulum, {"tau_hinge": 0.0})
            assert err.value.code == pb.Status.FAILED_PRECONDITION and "Reset" in \
                err.value.message
            # Recoverable: reset (inputs back to zero) and go on.
            client.reset(pendulum)
            assert client.get_state(pendulum, fields=partita.FIELD_INPUTS).inputs.tolist() \
                == [0.0]
            client.set_inputs(pendulum, {"tau_hinge": 0.0})
            client.set_mode(pendulum, "lockstep")
            assert client.step(pendulum, 2).coordinates.tolist() == good.coordinates.tolist()
    finally:
        client.unload_model(other)
