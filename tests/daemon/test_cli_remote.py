"""The daemon commands of the `partita` CLI (client/cli/daemon_cmds.c, analysis.c) against a live partitad.

Each case runs the real binary (PARTITA_CLI) with `--connect 127.0.0.1:PORT` (one with
`--socket PATH`) and checks the --json shapes of spec/api.md ("keys may be added, never
renamed": the spec's keys must all be there) and the numbers, against closed forms, against
`partita simulate` on the same file (bit for bit: both print %.17g), or against the Python
client. Every subprocess has a timeout.
"""

import contextlib
import json
import math
import os
import subprocess

import pytest

from conftest import DT, G, I_HINGE, L, M, double_pendulum_yaml, pendulum_yaml, unique

PARTITA_CLI = os.environ.get("PARTITA_CLI")
CLI_TIMEOUT = 60

STATE_KEYS = {"model", "time", "step", "coordinates", "rates", "energy", "residual"}
INFO_KEYS = {"model", "bodies", "constraints", "dof", "coordinates", "actuators", "motions",
             "independent", "inputs", "integrator", "dt", "mode", "rate", "time", "step"}
MODEL_STATS_KEYS = {"steps", "time", "mode", "step_us", "late_us", "overruns",
                    "dropped_frames", "repartitions"}
LINEARIZE_KEYS = {"states", "inputs", "outputs", "A", "B", "C", "D", "mck", "eigenvalues"}


def _cli_env():
    # The defaults from the environment must not redirect the CLI to some other daemon.
    env = dict(os.environ)
    env.pop("PARTITA_CONNECT", None)
    env.pop("PARTITA_SOCKET", None)
    return env


def cli(daemon, *args, socket=False, timeout=CLI_TIMEOUT):
    """Run `partita ARGS --connect TCP` (or --socket PATH); answers the CompletedProcess."""
    if not PARTITA_CLI or not os.path.isfile(PARTITA_CLI):
        pytest.skip("PARTITA_CLI is not set to the partita binary")
    where = ["--socket", daemon.unix] if socket else ["--connect", daemon.tcp]
    cmd = [PARTITA_CLI] + [str(a) for a in args] + where
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=_cli_env(), stdin=subprocess.DEVNULL)
    for mark in ("Sanitizer", "runtime error:"):
        assert mark not in proc.stderr, proc.stderr
    return proc


def cli_ok(daemon, *args, **kwargs):
    proc = cli(daemon, *args, **kwargs)
    assert proc.returncode == 0, "partita %s: exit %d\n%s" % (
        " ".join(map(str, args)), proc.returncode, proc.stderr)
    return proc.stdout


def cli_json(daemon, *args, **kwargs):
    return json.loads(cli_ok(daemon, *args, "--json", **kwargs))


def cli_fails(daemon, *args, code=None, mention=None):
    """A command that must fail: non-zero exit, a message on stderr, nothing on stdout."""
    proc = cli(daemon, *args)
    assert proc.returncode != 0, "partita %s succeeded: %s" % (" ".join(args), proc.stdout)
    if code is not None:
        assert proc.returncode == code, proc.stderr
    assert proc.stderr.startswith("partita "), proc.stderr
    if mention is not None:
        assert mention in proc.stderr, proc.stderr
    assert proc.stdout == ""
    return proc


def write(workdir, name, text):
    path = os.path.join(workdir, name + ".yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def swing_yaml(name, gravity, position):
    """conftest's pendulum with another gravity and link position (the hinge is at 0)."""
    text = pendulum_yaml(name=name)
    old_g, old_p = "gravity: [0, 0, -%s]" % G, "position: [%s, 0, 0]" % L
    assert old_g in text and old_p in text
    return text.replace(old_g, "gravity: " + gravity).replace(old_p, "position: " + position)


@pytest.fixture
def loaded(daemon, workdir):
    """Load a model file through the CLI under a unique name; unloaded afterwards."""
    names = []

    def load(text, prefix="cli", lockstep=True):
        name = unique(prefix)
        path = write(workdir, name, text)
        info = cli_json(daemon, "load", path, "--name", name)
        names.append(name)
        assert info["model"] == name
        if lockstep:
            assert cli_json(daemon, "mode", name, "lockstep") == \
                {"model": name, "mode": "lockstep", "rate": info["rate"]}
        return name, path, info

    yield load
    for name in names:
        with contextlib.suppress(Exception):
            cli(daemon, "unload", name)


def check_state_shape(s, name, coords):
    assert STATE_KEYS <= set(s), s
    assert s["model"] == name
    assert list(s["coordinates"]) == coords and list(s["rates"]) == coords
    assert set(s["energy"]) >= {"kinetic", "potential", "total"}
    assert set(s["residual"]) >= {"position", "velocity"}
    assert s["energy"]["total"] == pytest.approx(s["energy"]["kinetic"] +
                                                 s["energy"]["potential"], abs=1e-12)


# -- load, models, unload, unknown names -----------------------------------------------------

def test_load_models_unload(daemon, workdir):
    name = unique("ld")
    path = write(workdir, name, pendulum_yaml())
    info = cli_json(daemon, "load", path, "--name", name)
    try:
        assert INFO_KEYS <= set(info), info
        assert (info["model"], info["bodies"], info["dof"]) == (name, 1, 1)
        assert info["coordinates"] == ["hinge"] and info["actuators"] == ["tau_hinge"]
        assert (info["integrator"], info["dt"], info["mode"]) == ("rk4", DT, "paused")
        listed = cli_json(daemon, "models")["models"]
        mine = [m for m in listed if m["model"] == name]
        assert len(mine) == 1 and mine[0] == info
        # the same model seen by the Python client
        with daemon.client() as c:
            mi = c.model_info(name)
            assert list(mi.independent) == info["independent"]
            assert mi.constraints == info["constraints"]
        assert name in cli_ok(daemon, "models")
        # the same name twice is refused, naming it
        cli_fails(daemon, "load", path, "--name", name, code=1, mention=name)
    finally:
        assert cli_json(daemon, "unload", name) == {"ok": True}
    assert name not in [m["model"] for m in cli_json(daemon, "models")["models"]]
    cli_fails(daemon, "unload", name, code=1, mention=name)


def test_load_missing_file(daemon, workdir):
    path = os.path.join(workdir, "does-not-exist.yaml")
    cli_fails(daemon, "load", path, code=1, mention=path)


@pytest.mark.parametrize("args", [
    ["state", "{}"], ["step", "{}", "3"], ["reset", "{}"], ["unload", "{}"],
    ["set", "{}", "tau_hinge=1"], ["mode", "{}", "lockstep"], ["stats", "{}"],
    ["watch", "{}", "--count", "1"], ["inverse", "--model", "{}"],
    ["linearize", "--model", "{}"], ["equilibrium", "--model", "{}"]],
    ids=lambda a: a[0])
def test_unknown_model_is_named(daemon, args):
    name = unique("nosuch")
    cli_fails(daemon, *[a.format(name) for a in args], code=1, mention=name)


def test_unreachable_daemon(workdir):
    if not PARTITA_CLI:
        pytest.skip("PARTITA_CLI is not set")
    proc = subprocess.run([PARTITA_CLI, "models", "--socket", os.path.join(workdir, "nobody.sock")],
                          capture_output=True, text=True, timeout=CLI_TIMEOUT, env=_cli_env())
    assert proc.returncode == 1 and "partitad" in proc.stderr and proc.stdout == ""


# -- step, state, set, reset -----------------------------------------------------------------

@pytest.mark.parametrize("make_yaml", [pendulum_yaml, double_pendulum_yaml],
                         ids=["pendulum", "double_pendulum"])
def test_step_matches_simulate(daemon, loaded, make_yaml):
    name, path, info = loaded(make_yaml())
    coords = info["coordinates"]
    dt = info["dt"]
    s = cli_json(daemon, "step", name, 10)
    check_state_shape(s, name, coords)
    assert s["step"] == 10
    assert s["time"] == pytest.approx(10 * dt, rel=1e-15)

    sim = [PARTITA_CLI, "simulate", path, "--json", "--duration", repr(10 * dt), "--dt",
           repr(dt)]
    proc = subprocess.run(sim, capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    cols, row = out["columns"], out["rows"][-1]
    assert len(out["rows"]) == 11
    assert cols == ["t"] + coords + [c + ".rate" for c in coords] + \
        ["energy", "residual_pos", "residual_vel"]
    nc = len(coords)
    assert s["time"] == row[0]
    assert [s["coordinates"][c] for c in coords] == row[1:1 + nc]
    assert [s["rates"][c] for c in coords] == row[1 + nc:1 + 2 * nc]
    assert s["energy"]["total"] == row[1 + 2 * nc]
    assert [s["residual"]["position"], s["residual"]["velocity"]] == row[2 + 2 * nc:]
    assert max(abs(v) for v in s["rates"].values()) > 0.01     # it did move

    # `state` answers the same state, over TCP and over the Unix socket
    assert cli_json(daemon, "state", name) == s
    assert cli_json(daemon, "state", name, socket=True) == s
    # and four then six steps land on the same bits as ten
    name2, _, _ = loaded(make_yaml())
    cli_json(daemon, "step", name2, 4)
    s2 = cli_json(daemon, "step", name2, 6)
    assert s2["coordinates"] == s["coordinates"] and s2["rates"] == s["rates"]


def test_state_energy_closed_form(daemon, loaded):
    # Horizontal pendulum released from rest: kinetic I w^2 / 2, potential M g z_com with
    # z_com = -L sin(angle) (rotation about +y takes +x towards -z), zero at t = 0.
    name, _, _ = loaded(pendulum_yaml())
    s0 = cli_json(daemon, "state", name)
    assert (s0["step"], s0["time"], s0["coordinates"], s0["rates"]) == \
        (0, 0, {"hinge": 0}, {"hinge": 0})
    cli_json(daemon, "step", name, 50)
    s = cli_json(daemon, "state", name)
    q, w = s["coordinates"]["hinge"], s["rates"]["hinge"]
    assert s["step"] == 50 and q > 0 and w > 0
    assert s["energy"]["kinetic"] == pytest.approx(I_HINGE * w * w / 2, rel=1e-9)
    assert s["energy"]["potential"] == pytest.approx(-M * G * L * math.sin(q), rel=1e-9)
    # text output carries the same model and step
    text = cli_ok(daemon, "state", name)
    assert name in text and "step 50" in text and "hinge" in text


def test_set_input_closed_form(daemon, loaded):
    # Zero gravity, a constant torque: angle = tau / I_O t^2 / 2 (RK4 integrates a constant
    # acceleration exactly), rate = tau / I_O t.
    name, _, _ = loaded(swing_yaml("free", "[0, 0, 0]", "[%s, 0, 0]" % L))
    tau, n = 0.75, 40
    assert cli_json(daemon, "set", name, "tau_hinge=%r" % tau) == {"ok": True}
    s = cli_json(daemon, "step", name, n)
    t = n * DT
    assert s["coordinates"]["hinge"] == pytest.approx(tau / I_HINGE * t * t / 2, rel=1e-9)
    assert s["rates"]["hinge"] == pytest.approx(tau / I_HINGE * t, rel=1e-9)

    # refused sets change nothing: an unknown actuator, a NaN, an infinity, and a batch with
    # one bad name (the good one must not be applied either)
    cli_fails(daemon, "set", name, "bogus=1", code=1, mention="bogus")
    cli_fails(daemon, "set", name, "tau_hinge=nan", code=2, mention="nan")
    cli_fails(daemon, "set", name, "tau_hinge=inf", code=2, mention="inf")
    cli_fails(daemon, "set", name, "tau_hinge=5", "bogus=1", code=1, mention="bogus")
    cli_fails(daemon, "set", name, "tau_hinge", code=2)
    assert cli_json(daemon, "state", name) == s      # no step either
    s = cli_json(daemon, "step", name, n)
    t = 2 * n * DT
    assert s["step"] == 2 * n
    assert s["coordinates"]["hinge"] == pytest.approx(tau / I_HINGE * t * t / 2, rel=1e-9)
    assert s["rates"]["hinge"] == pytest.approx(tau / I_HINGE * t, rel=1e-9)


def test_reset(daemon, loaded):
    name, _, _ = loaded(swing_yaml("free", "[0, 0, 0]", "[%s, 0, 0]" % L))
    s0 = cli_json(daemon, "state", name)
    cli_json(daemon, "set", name, "tau_hinge=2")
    moved = cli_json(daemon, "step", name, 25)
    assert moved["coordinates"]["hinge"] > 0
    r = cli_json(daemon, "reset", name)
    check_state_shape(r, name, ["hinge"])
    assert (r["step"], r["time"]) == (0, 0)
    assert r["coordinates"] == s0["coordinates"] and r["rates"] == s0["rates"]
    assert cli_json(daemon, "state", name) == r
    # reset zeroes the inputs too (docs/protocol.md): in zero gravity nothing moves now
    after = cli_json(daemon, "step", name, 25)
    assert after["coordinates"] == s0["coordinates"] and after["rates"] == s0["rates"]


def test_mode_and_step_refusals(daemon, loaded):
    name, _, _ = loaded(pendulum_yaml())
    cli_fails(daemon, "mode", name, "sideways", code=2, mention="sideways")
    cli_fails(daemon, "step", name, "0", code=2)
    cli_fails(daemon, "step", name, "ten", code=2)
    assert cli_json(daemon, "state", name)["step"] == 0
    assert cli_json(daemon, "mode", name, "paused")["mode"] == "paused"
    assert cli_json(daemon, "step", name, 3)["step"] == 3    # Step works while paused


# -- stats -----------------------------------------------------------------------------------

def check_model_stats(ms, steps, mode):
    assert MODEL_STATS_KEYS <= set(ms), ms
    assert set(ms["step_us"]) >= {"mean", "p50", "p99", "max"}
    assert set(ms["late_us"]) >= {"p50", "p99", "max"}
    assert ms["steps"] == steps and ms["mode"] == mode
    assert ms["time"] == pytest.approx(steps * DT, rel=1e-12)
    q = ms["step_us"]
    assert q["mean"] > 0 and 0 <= q["p50"] <= q["p99"] <= q["max"]
    assert ms["overruns"] == 0 and ms["dropped_frames"] >= 0 and ms["repartitions"] >= 0


def test_stats(daemon, loaded):
    name, _, _ = loaded(pendulum_yaml())
    other, _, _ = loaded(pendulum_yaml())
    cli_json(daemon, "step", name, 20)
    cli_json(daemon, "step", name, 17)
    everything = cli_json(daemon, "stats")
    assert set(everything) >= {"models", "server"}
    assert {name, other} <= set(everything["models"])
    check_model_stats(everything["models"][name], 37, "lockstep")
    srv = everything["server"]
    assert set(srv) >= {"clients", "bytes_in", "bytes_out"}
    assert srv["clients"] >= 1 and srv["bytes_in"] > 0 and srv["bytes_out"] > 0

    one = cli_json(daemon, "stats", name)
    assert list(one["models"]) == [name]
    check_model_stats(one["models"][name], 37, "lockstep")
    assert one["server"]["bytes_in"] > srv["bytes_in"]     # this request was counted too
    with daemon.client() as c:
        py = [m for m in c.stats(name).models if m.model == name][0]
        assert py.steps == 37 and py.repartitions == one["models"][name]["repartitions"]
    text = cli_ok(daemon, "stats", name)
    assert name in text and "37 steps" in text


# -- inverse, linearize, equilibrium ---------------------------------------------------------

def test_inverse_holding_torque(daemon, loaded):
    name, _, _ = loaded(pendulum_yaml())
    r = cli_json(daemon, "inverse", "--model", name, "--acc", "hinge=0")
    assert set(r) >= {"time", "efforts", "reactions"}
    assert r["time"] == 0
    # holding the horizontal link at rest takes -M g d (gravity drives the angle up)
    assert r["efforts"]["tau_hinge"] == pytest.approx(-M * G * L, rel=1e-9)
    assert set(r["reactions"]["hinge"]) >= {"force", "torque"}
    assert r["reactions"]["hinge"]["force"] == pytest.approx([0, 0, M * G], abs=1e-9)
    # a requested acceleration adds I_O alpha
    alpha = 3.0
    r = cli_json(daemon, "inverse", "--model", name, "--acc", "hinge=%r" % alpha)
    assert r["efforts"]["tau_hinge"] == pytest.approx(I_HINGE * alpha - M * G * L, rel=1e-9)
    assert cli_json(daemon, "state", name)["step"] == 0     # the live model did not move
    cli_fails(daemon, "inverse", "--model", name, "--acc", "hinge=nan", code=2)


def test_linearize_hanging_pendulum(daemon, loaded):
    # Hanging straight down at t = 0 (hinge = 0 there): M = I_O, K = M g d, eigenvalues
    # +-i sqrt(M g d / I_O), undamped.
    name, _, _ = loaded(swing_yaml("hang", "[0, 0, -%r]" % G, "[0, 0, -%r]" % L))
    r = cli_json(daemon, "linearize", "--model", name)
    assert LINEARIZE_KEYS <= set(r), r
    assert set(r["mck"]) >= {"M", "C", "K"}
    assert r["states"] == ["hinge", "hinge.rate"] and r["inputs"] == ["tau_hinge"]
    k = M * G * L
    wn = math.sqrt(k / I_HINGE)
    a = r["A"]
    assert len(a) == 2 and all(len(row) == 2 for row in a)
    assert a[0] == pytest.approx([0, 1], abs=1e-9)
    assert a[1] == pytest.approx([-k / I_HINGE, 0], rel=1e-6, abs=1e-9)
    assert [len(row) for row in r["B"]] == [1, 1]
    assert sum(r["B"], []) == pytest.approx([0, 1 / I_HINGE], rel=1e-6, abs=1e-9)
    assert len(r["C"]) == len(r["outputs"]) and len(r["D"]) == len(r["outputs"])
    assert r["mck"]["M"][0] == pytest.approx([I_HINGE], rel=1e-9) and len(r["mck"]["M"]) == 1
    assert r["mck"]["C"][0] == pytest.approx([0], abs=1e-9) and len(r["mck"]["C"]) == 1
    assert r["mck"]["K"][0] == pytest.approx([k], rel=1e-6) and len(r["mck"]["K"]) == 1
    ev = r["eigenvalues"]
    assert len(ev) == 2
    for e in ev:
        assert set(e) >= {"re", "im", "freq_hz", "damping_ratio"}
        assert e["re"] == pytest.approx(0, abs=1e-6 * wn)
        assert abs(e["im"]) == pytest.approx(wn, rel=1e-6)
        assert e["freq_hz"] == pytest.approx(wn / (2 * math.pi), rel=1e-6)
        assert e["damping_ratio"] == pytest.approx(0, abs=1e-6)
    assert sorted(e["im"] > 0 for e in ev) == [False, True]     # a conjugate pair
    # without --json the text of `partita linearize MODEL`: the matrices as named tables
    text = cli_ok(daemon, "linearize", "--model", name)
    assert text.startswith("model %s linearized at t = 0 (2 states, 1 inputs, 2 outputs)\n"
                           % name), text
    rows = text.split("\nA (2 x 2)\n")[1].splitlines()[1:3]
    assert [row.split()[0] for row in rows] == ["hinge", "hinge.rate"]
    assert [float(x) for x in rows[1].split()[1:]] == pytest.approx(
        [a[1][0], a[1][1]], rel=1e-6, abs=1e-12)
    # a chosen state list
    assert cli_json(daemon, "linearize", "--model", name, "--states", "hinge")["states"] == \
        ["hinge", "hinge.rate"]
    cli_fails(daemon, "linearize", "--model", name, "--states", "nothere", code=1,
              mention="nothere")


def test_equilibrium_tilted_pendulum(daemon, loaded):
    # The link starts THETA0 below the horizontal (hinge = 0 there): it hangs at hinge =
    # pi/2 - THETA0, the hinge carrying the weight.
    theta0 = 1.0
    pos = "[%r, 0, %r]" % (L * math.cos(theta0), -L * math.sin(theta0))
    name, _, _ = loaded(swing_yaml("tilt", "[0, 0, -%r]" % G, pos))
    want = math.pi / 2 - theta0
    r = cli_json(daemon, "equilibrium", "--model", name)
    assert set(r) >= {"coordinates", "reactions", "iterations", "residual"}
    assert r["coordinates"]["hinge"] == pytest.approx(want, abs=1e-7)
    assert r["reactions"]["hinge"]["force"] == pytest.approx([0, 0, M * G], abs=1e-7)
    assert r["iterations"] >= 1 and 0 <= r["residual"] < 1e-6
    assert r.get("applied") is False
    assert cli_json(daemon, "state", name)["coordinates"]["hinge"] == 0    # not applied

    r = cli_json(daemon, "equilibrium", "--model", name, "--apply")
    assert r["applied"] is True
    live = cli_json(daemon, "state", name)
    assert live["coordinates"]["hinge"] == pytest.approx(want, abs=1e-7)
    # at equilibrium nothing moves: ten steps later the rate is still ~0
    s = cli_json(daemon, "step", name, 10)
    assert abs(s["rates"]["hinge"]) < 1e-5
    text = cli_ok(daemon, "equilibrium", "--model", name)
    assert "hinge" in text and "iterations" in text


# -- watch -----------------------------------------------------------------------------------

def test_watch_counts_frames(daemon, loaded):
    name, _, _ = loaded(pendulum_yaml(), lockstep=False)
    assert cli_json(daemon, "mode", name, "realtime")["mode"] == "realtime"
    text = cli_ok(daemon, "watch", name, "--count", 3, timeout=30)
    assert text.count(name) == 3 and "hinge" in text
    lines = cli_ok(daemon, "watch", name, "--count", 3, "--every", 5, "--json",
                   timeout=30).splitlines()
    assert len(lines) == 3
    frames = [json.loads(x) for x in lines]
    for f in frames:
        check_state_shape(f, name, ["hinge"])
        assert {"sequence", "dropped"} <= set(f)
    assert [f["sequence"] for f in frames] == sorted(f["sequence"] for f in frames)
    assert frames[0]["step"] < frames[1]["step"] < frames[2]["step"]
    assert all((b["step"] - a["step"]) % 5 == 0 for a, b in zip(frames, frames[1:]))
    # a bounded watch of a model that does not step ends with an error, not a hang
    cli_json(daemon, "mode", name, "paused")
    proc = cli(daemon, "watch", name, "--count", 1, "--timeout", "0.5", timeout=30)
    assert proc.returncode == 1 and proc.stderr



def test_watch_of_a_paused_model_says_so(daemon, loaded):
    name, _, _ = loaded(pendulum_yaml(), lockstep=False)
    proc = cli(daemon, "watch", name, "--count", 1, "--timeout", "0.5", timeout=30)
    assert proc.returncode == 1
    assert "is paused: frames come only as it steps" in proc.stderr


def test_global_options_before_the_command(daemon, loaded):
    name, _, _ = loaded(pendulum_yaml())
    after = cli_json(daemon, "state", name)
    proc = subprocess.run([PARTITA_CLI, "--connect", daemon.tcp, "--json", "state", name],
                          capture_output=True, text=True, timeout=CLI_TIMEOUT, env=_cli_env())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == after
    proc = subprocess.run([PARTITA_CLI, "--timeout=60", "--socket", daemon.unix, "models"],
                          capture_output=True, text=True, timeout=CLI_TIMEOUT, env=_cli_env())
    assert proc.returncode == 0 and name in proc.stdout, proc.stderr


# -- the same analysis offline (MODEL file) and remotely (--model NAME), issue 12 item 7 -------
#
# Each case runs `partita CMD FILE OPTIONS --json` with the embedded engine and `partita CMD
# --model NAME OPTIONS --json` against the same file loaded in partitad, in lockstep at its
# initial state. The daemon analyses a plain copy of its live data, which at the initial state
# is the data the offline command builds from the file, with the same engine calls in the same
# order: so the documents are equal bit for bit (both print %.17g; doubles cross the wire
# unchanged), not merely close. The one member that differs by design is "model": the file's
# model name offline, the name the daemon knows it by remotely; and equilibrium --model adds
# "applied". The text is the same too (one printer prints both replies), the model's name
# aside.

ROOT = os.environ.get("PARTITA_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))


def config_text(name):
    with open(os.path.join(ROOT, "configs", "models", name + ".yaml"), encoding="utf-8") as f:
        return f.read()


def offline(path, *args):
    """`partita CMD PATH ARGS` with the embedded engine: (exit code, stdout, stderr)."""
    if not PARTITA_CLI or not os.path.isfile(PARTITA_CLI):
        pytest.skip("PARTITA_CLI is not set to the partita binary")
    cmd, rest = args[0], args[1:]
    proc = subprocess.run([PARTITA_CLI, cmd, path] + [str(a) for a in rest], capture_output=True,
                          text=True, timeout=CLI_TIMEOUT, env=_cli_env(), stdin=subprocess.DEVNULL)
    for mark in ("Sanitizer", "runtime error:"):
        assert mark not in proc.stderr, proc.stderr
    return proc


def same_both_ways(daemon, name, path, *args):
    """Runs the analysis both ways and checks the documents agree; answers (offline, remote)."""
    proc = offline(path, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    here = json.loads(proc.stdout)
    there = cli_json(daemon, args[0], "--model", name, *args[1:])
    assert there.pop("model") == name
    here_name = here.pop("model")
    assert here_name != name                     # the file's own name: unique() makes `name`
    if args[0] == "equilibrium":
        assert there.pop("applied") is False
    assert list(there) == list(here)             # the same members in the same order
    assert there == here                         # and the same values, bit for bit
    text_here = offline(path, *args)
    assert text_here.returncode == 0, text_here.stderr
    text_there = cli_ok(daemon, args[0], "--model", name, *args[1:])
    assert text_there.replace(name, "NAME") == \
        text_here.stdout.replace(model_line(args[0], here_name), model_line(args[0], "NAME"))
    assert cli_json(daemon, "state", name)["step"] == 0     # the live model did not move
    return here, there


def model_line(cmd, name):
    """The line of an analysis' text that names the model."""
    return ("model %s linearized" if cmd == "linearize" else "model           %s\n") % name


def test_inverse_offline_equals_remote(daemon, loaded):
    # kinematic inverse dynamics of the lecture's door at t = 1 (a motion drives the hinge)
    name, path, _ = loaded(config_text("door"))
    r, _ = same_both_ways(daemon, name, path, "inverse", "--at", 1)
    assert r["mode"] == "kinematic" and set(r["efforts"]) == {"door_motor"}
    assert set(r) == {"time", "mode", "efforts", "coupler_efforts", "reactions",
                      "limit_reactions", "coordinates", "rates", "accelerations"}
    assert r["coupler_efforts"] == {}             # the door has no coupler
    # the closed form in door.yaml: (J' + m 0.5^2) phi'' + c phi' + k phi at phi = pi/2 sin(pi/4)
    w, a = math.pi / 4, math.pi / 2
    phi, dphi, ddphi = a * math.sin(w), a * w * math.cos(w), -a * w * w * math.sin(w)
    want = (2.5 + 30 * 0.25) * ddphi + 1.0 * dphi + 8.0 * phi
    assert r["efforts"]["door_motor"] == pytest.approx(want, rel=1e-9)
    same_both_ways(daemon, name, path, "inverse", "--at", 0.25)
    # a closed loop: the slider-crank's crank motor
    name, path, _ = loaded(config_text("slider_crank"))
    same_both_ways(daemon, name, path, "inverse")
    same_both_ways(daemon, name, path, "inverse", "--at", 0.3)
    # torque requests at a state given by --init / --init-rate (the name given twice keeps its
    # last value, both ways)
    name, path, _ = loaded(pendulum_yaml())
    r, _ = same_both_ways(daemon, name, path, "inverse", "--acc", "hinge=3", "--init",
                          "hinge=0.7", "--init", "hinge=0.4", "--init-rate", "hinge=-1.5")
    assert r["mode"] == "torque_request"
    assert r["coordinates"]["hinge"] == pytest.approx(0.4, abs=1e-12)
    assert r["rates"]["hinge"] == pytest.approx(-1.5, abs=1e-12)
    assert r["accelerations"]["hinge"] == pytest.approx(3, abs=1e-9)
    # the horizontal link tilted 0.4 rad: gravity's moment is -M g L cos(0.4)
    assert r["efforts"]["tau_hinge"] == pytest.approx(I_HINGE * 3 - M * G * L * math.cos(0.4),
                                                      rel=1e-9)
    same_both_ways(daemon, name, path, "inverse", "--acc", "hinge=-2", "--at", 0.5)


def test_limits_and_couplers_offline_equals_remote(daemon, loaded):
    # a limit held in a torque request, and an equilibrium with a coupler and a held limit:
    # limit_reactions, limit_notes and coupler_efforts the same both ways (issue 11)
    from test_operations import ARM_LIMITED_YAML, PAIR_YAML
    name, path, _ = loaded(ARM_LIMITED_YAML)
    r, _ = same_both_ways(daemon, name, path, "inverse", "--init", "shoulder=0.3", "--init",
                          "elbow=0.5", "--acc", "elbow=1.5")
    assert list(r["limit_reactions"]) == ["shoulder"] and len(r["limit_notes"]) == 1
    r, _ = same_both_ways(daemon, name, path, "inverse", "--gravity", "--init", "shoulder=1.0")
    assert r["limit_reactions"] == {} and "released" in r["limit_notes"][0]
    text = cli_ok(daemon, "inverse", "--model", name, "--init", "shoulder=0.3", "--acc",
                  "elbow=0")
    assert "upper one)\n  shoulder         lower 5.142578" in text
    assert "notes\n  joint shoulder at its lower limit 0.3: held" in text
    name, path, _ = loaded(PAIR_YAML)
    r, _ = same_both_ways(daemon, name, path, "equilibrium", "--init", "ha=0.6")
    assert list(r["coupler_efforts"]) == ["link"] and list(r["limit_reactions"]) == ["ha"]
    text = cli_ok(daemon, "equilibrium", "--model", name, "--init", "ha=0.6")
    assert "couplers (effort on the follower; the leader takes -multiplier times it)\n  link " \
        in text
    assert "upper one)\n  ha               lower 2.77" in text


def test_linearize_offline_equals_remote(daemon, loaded):
    name, path, _ = loaded(double_pendulum_yaml())
    r, _ = same_both_ways(daemon, name, path, "linearize")
    assert set(r) == {"time", "states", "inputs", "outputs", "A", "B", "C", "D", "mck",
                      "eigenvalues", "notes", "order"}
    assert r["notes"] and r["order"] > 0
    r, _ = same_both_ways(daemon, name, path, "linearize", "--init", "shoulder=0.3",
                          "--init-rate", "elbow=-0.8")
    assert "operating point" in r["notes"][0]
    assert r["A"] != same_both_ways(daemon, name, path, "linearize")[0]["A"]  # it did move
    coords = cli_json(daemon, "state", name)["coordinates"]
    first = list(coords)[0]
    same_both_ways(daemon, name, path, "linearize", "--states", first,
                   "--outputs", "%s,%s.rate" % (first, first), "--init", "%s=0.2" % first)
    # a closed loop, whose notes say which joint coordinates were dropped and why
    name, path, _ = loaded(config_text("fourbar_parallelogram"))
    r, _ = same_both_ways(daemon, name, path, "linearize")
    assert any(n.startswith("dropped") for n in r["notes"])


def test_equilibrium_offline_equals_remote(daemon, loaded):
    theta0 = 1.0
    pos = "[%r, 0, %r]" % (L * math.cos(theta0), -L * math.sin(theta0))
    name, path, _ = loaded(swing_yaml("tilt", "[0, 0, -%r]" % G, pos))
    r, _ = same_both_ways(daemon, name, path, "equilibrium")
    assert set(r) == {"time", "coordinates", "reactions", "efforts", "coupler_efforts",
                      "limit_reactions", "iterations", "damped_steps", "stable", "residual"}
    assert r["coordinates"]["hinge"] == pytest.approx(math.pi / 2 - theta0, abs=1e-7)
    assert r["stable"] is True
    same_both_ways(daemon, name, path, "equilibrium", "--init", "hinge=0.2", "--tolerance",
                   "1e-13", "--max-iterations", 50)
    # From near the inverted position Newton lands on the unstable equilibrium (hinge =
    # pi/2 - theta0 - pi, the link straight up); --allow-unstable keeps it, both ways.
    up = math.pi / 2 - theta0 - math.pi
    r, _ = same_both_ways(daemon, name, path, "equilibrium", "--init", "hinge=%r" % (up + 0.05),
                          "--allow-unstable")
    assert r["stable"] is False and r["damped_steps"] == 0
    assert r["coordinates"]["hinge"] == pytest.approx(up, abs=1e-7)
    # without it the damped dynamics find the stable one
    r, _ = same_both_ways(daemon, name, path, "equilibrium", "--init", "hinge=%r" % (up + 0.05))
    assert r["stable"] is True and r["damped_steps"] > 0
    r, _ = same_both_ways(daemon, name, path, "equilibrium", "--init", "hinge=%r" % (up + 0.05),
                          "--newton-only")
    assert r["stable"] is False and r["damped_steps"] == 0
    # prescribed motions hold their efforts, frozen at the initial time
    name, path, _ = loaded(config_text("slider_crank"))
    r, _ = same_both_ways(daemon, name, path, "equilibrium")
    assert set(r["efforts"]) == {"crank_motor"}
    # one Newton iteration is not enough from afar: both fail, with the same exit status
    name, path, _ = loaded(swing_yaml("tilt", "[0, 0, -%r]" % G, pos))
    args = ("equilibrium", "--max-iterations", 1, "--newton-only")
    here = offline(path, *args)
    there = cli(daemon, args[0], "--model", name, *args[1:])
    assert here.returncode != 0 and there.returncode != 0 and here.stderr and there.stderr
    assert cli_json(daemon, "state", name)["step"] == 0


@pytest.mark.parametrize("args, mention", [
    (("inverse", "--floating-base"), "--floating-base"),
    (("linearize", "--floating-base"), "--floating-base"),
    (("equilibrium", "--floating-base"), "--floating-base"),
    (("linearize", "--dense"), "--dense"),
    (("equilibrium", "--init-rate", "hinge=1"), "--init-rate"),   # offline refuses it too
    (("equilibrium", "--acc", "hinge=1"), "--acc"),
    (("linearize", "--at", "1"), "--at"),
    (("inverse", "--apply"), "--apply"),
    (("inverse", "--newton-only"), "--newton-only"),
    (("linearize", "--allow-unstable"), "--allow-unstable"),
    (("equilibrium", "--tolerance", "0"), "--tolerance"),
    (("equilibrium", "--tolerance", "-1e-9"), "--tolerance"),
    (("equilibrium", "--max-iterations", "0"), "--max-iterations"),
    (("equilibrium", "--max-iterations", "100001"), "--max-iterations"),
    (("inverse", "--init", "hinge"), "--init"),
    (("linearize", "--init-rate", "hinge=x"), "--init-rate"),
])
def test_remote_analysis_refusals(daemon, loaded, args, mention):
    """What a loaded model cannot take is refused before anything is sent: exit 2."""
    name, path, _ = loaded(pendulum_yaml())
    cli_fails(daemon, args[0], "--model", name, *args[1:], code=2, mention=mention)
    # the MODEL file options still work offline; the rest fail offline as well
    if mention not in ("--floating-base", "--dense"):
        assert offline(path, *args).returncode == 2
    assert cli_json(daemon, "state", name)["step"] == 0


def test_python_client_answers_the_same_members(daemon, loaded, client):
    """The Python client's three analyses carry the members (and numbers) the CLI prints."""
    name, _, _ = loaded(config_text("slider_crank"))
    for method, cmd, kwargs, args in (
            ("inverse_dynamics", "inverse", {"time": 0.3}, ("--at", 0.3)),
            ("equilibrium", "equilibrium", {"newton_only": True, "allow_unstable": True},
             ("--newton-only", "--allow-unstable"))):
        py = getattr(client, method)(name, **kwargs)
        doc = cli_json(daemon, cmd, "--model", name, *args)
        if cmd == "equilibrium":
            assert py.pop("applied") is False
            doc.pop("applied")
        assert set(py) == set(doc)
        for key, value in doc.items():
            if key == "reactions":
                assert {j: {k: list(v) for k, v in r.items()} for j, r in py[key].items()} \
                    == value
            else:
                assert py[key] == value, key
    name, _, _ = loaded(config_text("fourbar_parallelogram"))  # StateSpace needs a state
    ss = client.linearize(name)
    doc = cli_json(daemon, "linearize", "--model", name)
    assert (ss.model, ss.time, ss.notes, ss.order) == \
        (doc["model"], doc["time"], doc["notes"], doc["order"])
