"""Lockstep determinism: n Step(1) requests give bit-identical coordinates and rates to
`partita simulate` on the same model file with the same integrator and step.

The CLI prints every number with %.17g, so its JSON parses back to the very doubles the engine
computed; the comparison below is exact (==), not approximate.
"""

import json
import os
import subprocess

import pytest

from conftest import PARTITA_CLI, double_pendulum_yaml, pendulum_yaml, unique
from partita import pb

N_STEPS = 300
DT = 0.002


def run_cli(path, integrator, duration, dt):
    if not PARTITA_CLI or not os.path.isfile(PARTITA_CLI):
        pytest.skip("PARTITA_CLI is not set to the partita binary")
    cmd = [PARTITA_CLI, "simulate", path, "--json", "--duration", repr(duration),
           "--dt", repr(dt), "--integrator", integrator]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, "%s failed: %s" % (" ".join(cmd), proc.stderr)
    out = json.loads(proc.stdout)
    assert "error" not in out, out.get("error")
    return out["columns"], out["rows"]


@pytest.mark.parametrize("make_yaml", [pendulum_yaml, double_pendulum_yaml],
                         ids=["pendulum", "double_pendulum"])
@pytest.mark.parametrize("integrator", ["rk4", "abm4", "euler"])
def test_lockstep_matches_cli(client, workdir, make_yaml, integrator):
    name = unique("det")
    text = make_yaml(name=name, integrator=integrator, dt=DT)
    path = os.path.join(workdir, name + ".yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    columns, rows = run_cli(path, integrator, N_STEPS * DT, DT)

    info = client.load_model(text, name=name, format=pb.YAML, mode="lockstep",
                             source_name=path)
    try:
        assert info.integrator == integrator and info.dt == DT
        coords = list(info.coordinates)
        assert columns[:1 + 2 * len(coords)] == \
            ["t"] + coords + [c + ".rate" for c in coords]
        states = [client.get_state(name)]
        for _ in range(N_STEPS):
            states.append(client.step(name, 1))
    finally:
        client.unload_model(name)

    assert len(rows) >= N_STEPS, "the CLI printed %d rows for %d steps" % (len(rows), N_STEPS)
    nc = len(coords)
    compared = 0
    for row in rows:
        k = int(round(row[0] / DT))
        if k > N_STEPS:
            continue
        s = states[k]
        assert s.step == k
        assert s.time == row[0], "time at step %d" % k
        assert s.coordinates.tolist() == row[1:1 + nc], "coordinates at step %d" % k
        assert s.rates.tolist() == row[1 + nc:1 + 2 * nc], "rates at step %d" % k
        compared += 1
    assert compared >= N_STEPS
    # The motion is not trivial (a bug that froze both would otherwise pass).
    assert max(abs(v) for v in states[-1].coordinates) > 0.1


def test_one_step_of_n_equals_n_steps_of_one(client):
    a, b = unique("a"), unique("b")
    for name in (a, b):
        client.load_model(double_pendulum_yaml(name=name), name=name, format=pb.YAML,
                          mode="lockstep")
    try:
        sa = client.step(a, 157)
        for _ in range(157):
            sb = client.step(b, 1)
        assert sa.step == sb.step == 157
        assert sa.coordinates.tolist() == sb.coordinates.tolist()
        assert sa.rates.tolist() == sb.rates.tolist()
    finally:
        client.unload_model(a)
        client.unload_model(b)


def test_lockstep_unchanged_by_heavy_requests_beside_it(daemon, client, workdir):
    # Linearize, InverseDynamics and Equilibrium (more at once than the model's snapshot
    # slots, so some wait their turn) snapshot the live model between steps: the session must
    # stay bit-identical to `partita simulate`.
    name = unique("heavy")
    text = double_pendulum_yaml(name=name, integrator="rk4", dt=DT)
    path = os.path.join(workdir, name + ".yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    columns, rows = run_cli(path, "rk4", N_STEPS * DT, DT)
    client.load_model(text, name=name, format=pb.YAML, mode="lockstep", source_name=path)
    answered = {"linearize": 0, "inverse_dynamics": 0, "equilibrium": 0}
    try:
        with daemon.client() as heavy:
            states = [client.get_state(name)]
            for k in range(N_STEPS):
                if k % 10 == 0:                    # five heavy requests in flight at once
                    ids = []
                    for op, msg in (("linearize", pb.Linearize(model=name)),
                                    ("inverse_dynamics", pb.InverseDynamics(
                                        model=name, accelerations=[
                                            pb.NamedValue(name="shoulder", value=0.5),
                                            pb.NamedValue(name="elbow", value=-1.0)])),
                                    ("equilibrium", pb.Equilibrium(model=name)),
                                    ("linearize", pb.Linearize(model=name)),
                                    ("linearize", pb.Linearize(model=name))):
                        rid = heavy._next_id
                        heavy._next_id += 1
                        req = pb.Request(id=rid)
                        getattr(req, op).CopyFrom(msg)
                        heavy._send(req)
                        ids.append((op, rid))
                states.append(client.step(name, 1))
                if k % 10 == 9:
                    for op, rid in ids:
                        while rid not in heavy._responses:
                            heavy._read_some(None)
                        r = heavy._responses.pop(rid)
                        assert r.status.code == pb.Status.OK, (op, r.status.message)
                        answered[op] += 1
    finally:
        client.unload_model(name)
    assert answered == {"linearize": 3 * N_STEPS // 10, "inverse_dynamics": N_STEPS // 10,
                        "equilibrium": N_STEPS // 10}
    nc = sum(1 for c in columns if c.endswith(".rate"))
    for row in rows:
        k = int(round(row[0] / DT))
        if k <= N_STEPS:
            assert states[k].coordinates.tolist() == row[1:1 + nc], "step %d" % k
            assert states[k].rates.tolist() == row[1 + nc:1 + 2 * nc], "step %d" % k
