"""Recording in partitad (docs/recording.md): Record / StopRecording / GetRecording, the
config's record.all, replay of what the daemon recorded, a writer too slow for the model, and
the simulation thread's allocations with a recording on."""

import json
import os
import re
import subprocess
import time

import pytest

import partita
from conftest import PARTITA_CLI, WAIT, Daemon, double_pendulum_yaml, unique
from partita import UdpInputSender, pb, read_recording
from test_sim_alloc import SHIM, sim_allocations

ROOT = os.environ.get("PARTITA_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")
PENDULUM = os.path.join(ROOT, "configs", "models", "pendulum.yaml")


def record(c, model, path, **kw):
    return c.record(model, path, **kw)


def status(c, model):
    return c.recording(model)


def stop_and_wait(c, model, timeout=60.0):
    return c.stop_recording(model, wait=True, timeout=timeout)


def cli(*args, check=0):
    p = subprocess.run([PARTITA_CLI, *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == check, "partita %s: exit %d\n%s\n%s" % (
        " ".join(args), p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture(scope="module")
def recdir(workdir):
    d = os.path.join(workdir, "recordings")
    os.makedirs(d, exist_ok=True)
    return d


@pytest.fixture(scope="module")
def rdaemon(workdir, recdir):
    d = Daemon(workdir, extra_args=["--record-dir", recdir])
    yield d
    d.check_clean_exit()


@pytest.mark.parametrize("model", ["pendulum.yaml", "panda.urdf"])
def test_udp_inputs_in_real_time_replay_bit_for_bit(rdaemon, recdir, model):
    """About 2 s of a model in real time driven by a 200 Hz UDP input stream (the pendulum;
    the Panda from URDF, on the joint-coordinate tree path, 7 inputs): every state recorded is
    reproduced bit for bit by `partita replay`, every step gave a frame or a counted drop, and
    every input applied is in the file (the model's own count of applied UDP inputs).

    Nothing here depends on how fast the machine is: a loaded machine steps less, applies
    fewer inputs and its writer may drop state frames (counted); the invariants hold all the
    same."""
    name = unique("rt")
    with rdaemon.client() as c:
        info = c.load_model_file(os.path.join(ROOT, "configs", "models", model), name=name,
                                 mode="paused")
        ni = len(info.inputs)
        st = record(c, name, name + ".mcap")
        assert st.active and st.path == os.path.join(os.path.realpath(recdir), name + ".mcap")
        c.set_mode(name, "realtime")
        sender = UdpInputSender(rdaemon.udp, name)
        t0 = time.monotonic()
        k = 0
        while time.monotonic() - t0 < 2.0:
            saw = 0.8 * ((k % 40) / 40.0 - 0.5)       # a saw-tooth torque on every input
            sender.send([saw * (1 + 0.1 * i) for i in range(ni)])
            k += 1
            time.sleep(0.005)
        # Synchronise on the model, not on a sleep: once the state says the last datagram
        # sent was applied, every one before it was applied or lost (the sequence numbers
        # only increase); a lost last one (loopback under load) is sent again, numbered anew.
        deadline = time.monotonic() + 60
        last = sender.send([0.05 * (i + 1) for i in range(ni)])
        resend = time.monotonic() + 5
        while True:
            s = c.get_state(name)
            if s.input_session == sender.session and s.input_sequence == last:
                break
            assert time.monotonic() < deadline, "the last UDP input was never applied"
            if time.monotonic() > resend:
                last = sender.send([0.05 * (i + 1) for i in range(ni)])
                resend = time.monotonic() + 5
            time.sleep(0.01)
        c.set_mode(name, "paused")
        applied = c.stats(name).models[0].udp_inputs
        end = stop_and_wait(c, name, timeout=60)
        steps = c.get_state(name).step
    assert applied > 0 and steps > 0
    assert not end.error
    assert end.inputs == applied                  # every input applied, none dropped
    # the initial state and one per step: written or counted as dropped
    assert end.state_frames + end.dropped_frames == steps + 1
    assert end.state_frames > 0
    out = json.loads(cli("replay", end.path, "--json").stdout)
    assert out["bit_identical"], out
    assert out["states"] == end.state_frames and out["inputs"] == applied
    info = json.loads(cli("info", end.path, "--json").stdout)
    assert info["complete"] and info["time_base"] == "wall"
    assert info["dropped_frames"] == end.dropped_frames
    # the Python reader: the inputs as the sender numbered them, the states of the steps in
    # order (those the writer kept)
    rec = read_recording(end.path)
    assert rec.complete and len(rec.step) == end.state_frames
    assert rec.step[0] == 0 and all(b > a for a, b in zip(rec.step, rec.step[1:]))
    assert rec.step[-1] <= steps
    assert len(rec.input_sequence) == applied
    assert set(rec.input_session.tolist()) == {sender.session}
    assert all(b > a for a, b in zip(rec.input_sequence, rec.input_sequence[1:]))
    assert rec.input_sequence[-1] == last
    assert (rec.wall_time_ns[1:] >= rec.wall_time_ns[:-1]).all()


def test_fourbar_through_partition_switches_replays_bit_for_bit(rdaemon):
    """The parallelogram four-bar (ABM4, hybrid LU/QR partition) in real time through its
    singular positions: the switches happen in the recording (events) and replay repeats
    them to the bit."""
    name = unique("fb")
    with rdaemon.client() as c:
        c.load_model_file(os.path.join(ROOT, "configs", "models", "fourbar_parallelogram.yaml"),
                          name=name, mode="paused")
        record(c, name, name + ".mcap", every_k=2)
        c.set_mode(name, "realtime", rate=4.0)       # 4 s of its motion in about 1 s
        deadline = time.monotonic() + 300          # a bound for a hang, not a speed
        while c.get_state(name).step < 4000:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        c.set_mode(name, "paused")
        switches = c.stats(name).models[0].qr_switches
        end = stop_and_wait(c, name)
    assert switches > 0
    out = json.loads(cli("replay", end.path, "--json").stdout)
    assert out["bit_identical"] and out["states"] == end.state_frames
    info = json.loads(cli("info", end.path, "--json").stdout)
    assert info["events"] >= 2 * switches - 1        # to QR and back, as events


def test_slow_writer_drops_frames_never_inputs(workdir, recdir):
    """A writer 2 ms per frame behind a lockstep model that steps as fast as it can (each
    request 50 steps at once against a queue of 32 frames: drops whatever the machine's
    speed, as 50 steps take far less than the 36 ms the writer needs for 18 frames): state
    frames are dropped and counted, every input change is written, every step produced a
    frame or a counted drop (the simulation never waited for room), and what was written
    still replays bit for bit."""
    cfg = "record:\n  test_slow_us: 2000\n  queue_frames: 32\n"
    d = Daemon(workdir, extra_args=["--record-dir", recdir], config=cfg)
    try:
        name = unique("slow")
        with d.client() as c:
            c.load_model(double_pendulum_yaml(name), name=name, mode="lockstep")
            record(c, name, name + ".mcap")
            n_in = 200
            for k in range(n_in):
                c.step_with_inputs(name, by_index=[0.1 * (k % 7), -0.05 * (k % 5)], n=50)
            steps = c.get_state(name).step
            end = stop_and_wait(c, name, timeout=60)
        assert steps == n_in * 50
        assert end.inputs == n_in
        assert end.dropped_frames > 0
        assert end.state_frames + end.dropped_frames == steps + 1
        out = json.loads(cli("replay", end.path, "--json").stdout)
        assert out["bit_identical"] and out["inputs"] == n_in
        assert out["states"] == end.state_frames
        info = json.loads(cli("info", end.path, "--json").stdout)
        assert info["dropped_frames"] == end.dropped_frames
        # each drop is a gap in the sequence numbers (but those after the last record written)
        assert 0 < info["sequence_gaps"] <= end.dropped_frames
    finally:
        d.check_clean_exit()


def test_record_all_from_load_with_reset_and_set_state(workdir, recdir):
    """record.all: a model from the config is recorded from its first step, through a Reset
    and a SetState; the recording ends with the model and replays bit for bit."""
    sub = os.path.join(recdir, unique("all"))
    os.makedirs(sub)
    cfg = ("record:\n  all: true\n  dir: %s\n  every_k: 5\n"
           "models:\n  - file: %s\n    name: allp\n    mode: lockstep\n" % (sub, PENDULUM))
    d = Daemon(workdir, config=cfg)
    try:
        with d.client() as c:
            c.step_with_inputs("allp", by_index=[0.3], n=100)
            c.reset("allp")
            c.step("allp", 50)
            c.set_state("allp", coordinates={"hinge": 0.4}, rates={"hinge": -0.2})
            c.set_inputs("allp", values={"tau": -0.1})
            c.step("allp", 200)
            st = status(c, "allp")
            assert st.active and st.every_k == 5
    finally:
        d.check_clean_exit()
    files = os.listdir(sub)
    assert len(files) == 1 and files[0].startswith("allp-") and files[0].endswith(".mcap")
    path = os.path.join(sub, files[0])
    out = json.loads(cli("replay", path, "--json").stdout)
    assert out["bit_identical"] and out["resets"] == 1
    # 21 states before the reset (every 5 of 100 steps, and step 0), the state after the
    # reset, 10 more, the state after SetState, 40 more
    assert out["states"] == 21 + 1 + 10 + 1 + 40
    info = json.loads(cli("info", path, "--json").stdout)
    assert info["complete"] and info["inputs"] == 4   # input, reset, set_state, input


def test_refusals(rdaemon, recdir):
    name = unique("ref")
    with rdaemon.client() as c:
        c.load_model_file(PENDULUM, name=name, mode="lockstep")
        for path, code in [("../x.mcap", pb.Status.INVALID_ARGUMENT),
                           ("/etc/x.mcap", pb.Status.INVALID_ARGUMENT),
                           ("", pb.Status.INVALID_ARGUMENT),
                           ("no/such/dir/x.mcap", pb.Status.FAILED_PRECONDITION)]:
            r = c.request("record", pb.Record(model=name, path=path), check=False)
            assert r.status.code == code, (path, r.status)
        r = c.request("record", pb.Record(model=name, path="f.mcap", fields=1000), check=False)
        assert r.status.code == pb.Status.INVALID_ARGUMENT
        r = c.request("record", pb.Record(model="nope", path="f.mcap"), check=False)
        assert r.status.code == pb.Status.NOT_FOUND
        r = c.request("stop_recording", pb.StopRecording(model=name), check=False)
        assert r.status.code == pb.Status.FAILED_PRECONDITION
        record(c, name, name + ".mcap")
        r = c.request("record", pb.Record(model=name, path=name + "-2.mcap"), check=False)
        assert r.status.code == pb.Status.ALREADY_EXISTS
        c.step(name, 10)
        stop_and_wait(c, name)
        r = c.request("record", pb.Record(model=name, path=name + ".mcap"), check=False)
        assert r.status.code == pb.Status.ALREADY_EXISTS   # never overwritten
        # unloading while recording ends the file cleanly
        record(c, name, name + "-3.mcap")
        c.step(name, 10)
        c.unload_model(name)
    info = json.loads(cli("info", os.path.join(recdir, name + "-3.mcap"), "--json").stdout)
    assert info["complete"] and info["states"] == 11


def test_cli_record_command(rdaemon, recdir):
    name = unique("cli")
    with rdaemon.client() as c:
        c.load_model_file(PENDULUM, name=name, mode="free")
    p = cli("--connect", rdaemon.tcp, "record", name, "--out", name + ".mcap",
            "--duration", "0.3", "--every", "10", "--fields", "coordinates,rates", "--json")
    out = json.loads(p.stdout)
    assert out["file"].endswith(name + ".mcap") and out["every_k"] == 10 and out["fields"] == 3
    assert out["state_frames"] > 0
    info = json.loads(cli("info", out["file"], "--json").stdout)
    assert info["complete"] and info["states"] == out["state_frames"]
    # started while the model was running: replay says why it cannot
    p = cli("replay", out["file"], check=1)
    assert "starts at step 0" in p.stderr
    cli("--connect", rdaemon.tcp, "record", name, "--out", "x.mcap", "--fields", "bogus",
        check=2)


@pytest.mark.skipif(os.environ.get("PARTITA_SANITIZED") == "1" or not os.path.isfile(SHIM),
                    reason="the sanitizers' runtime owns malloc; needs the counting shim")
def test_recording_allocates_nothing_on_the_sim_thread(workdir, recdir):
    count_file = os.path.join(workdir, "allocs-%s.txt" % unique("rec"))
    d = Daemon(workdir, extra_args=["--record-dir", recdir],
               env={"LD_PRELOAD": SHIM, "PT_ALLOC_COUNT_FILE": count_file})
    try:
        with d.client() as c:
            name = unique("ralloc")
            c.load_model_file(PENDULUM, name=name, mode="lockstep")
            c.step(name, 10)
            record(c, name, name + ".mcap")
            c.step(name, 10)
            before = sim_allocations(d, count_file)
            for k in range(20):
                c.step_with_inputs(name, by_index=[0.01 * k], n=50)
                c.reset(name) if k == 10 else None
            c.set_mode(name, "realtime")
            time.sleep(0.3)
            c.set_mode(name, "lockstep")
            after = sim_allocations(d, count_file)
            end = stop_and_wait(c, name, timeout=60)
            assert end.state_frames + end.dropped_frames > 1000
            assert after == before, "%d allocations on the simulation thread" % (after - before)
    finally:
        d.check_clean_exit()


def test_recording_is_off_without_a_record_directory(daemon):
    name = unique("off")
    with daemon.client() as c:
        c.load_model_file(PENDULUM, name=name, mode="lockstep")
        r = c.request("record", pb.Record(model=name, path=name + ".mcap"), check=False)
        assert r.status.code == pb.Status.FAILED_PRECONDITION
        assert "record directory" in r.status.message
        c.unload_model(name)


def test_daemon_killed_while_recording_leaves_a_readable_file(workdir, recdir):
    """SIGKILL in the middle of a recording (a crash): the file holds every chunk the writer
    completed (it flushes each 64 KiB chunk and at least once a second); info says where it
    ends, and what is there replays bit for bit."""
    d = Daemon(workdir, extra_args=["--record-dir", recdir])
    name = unique("kill")
    path = os.path.join(recdir, name + ".mcap")
    try:
        with d.client() as c:
            c.load_model_file(PENDULUM, name=name, mode="paused")
            record(c, name, name + ".mcap")
            c.set_mode(name, "free")
            deadline = time.monotonic() + 300      # a bound for a hang, not a speed
            while status(c, name).bytes < 400000:   # a few chunks on disk
                assert time.monotonic() < deadline
                time.sleep(0.05)
            d.proc.kill()
            d.proc.wait(10)
    finally:
        d.stop()
    p = cli("info", path, "--json")
    info = json.loads(p.stdout)
    assert not info["complete"] and "cut off" in info["note"]
    assert "warning" in p.stderr
    assert info["states"] > 1000
    out = json.loads(cli("replay", path, "--json").stdout)
    assert out["bit_identical"] and out["states"] == info["states"]


def test_config_model_recorded_as_loaded_not_as_the_file_is_now(workdir, recdir):
    """A model from the config file is recorded with the bytes its load read (the file is read
    once, by the load, within its size bound): changed on disk after the start, the recording
    still holds the model that runs, and replays bit for bit. (The second read this replaced
    came right after the load, so this guards the behaviour rather than catching that race.)"""
    model = os.path.join(workdir, unique("cfgmodel") + ".yaml")
    with open(PENDULUM) as f:
        original = f.read()
    with open(model, "w") as f:
        f.write(original)
    cfg = "models:\n  - file: %s\n    name: cfgp\n    mode: lockstep\n" % model
    d = Daemon(workdir, extra_args=["--record-dir", recdir], config=cfg)
    try:
        with open(model, "w") as f:   # another model under the same name, after the load
            f.write(original.replace("mass: ", "mass: 3"))
        name = unique("cfgrec")
        with d.client() as c:
            record(c, "cfgp", name + ".mcap")
            c.step_with_inputs("cfgp", by_index=[0.2], n=200)
            end = stop_and_wait(c, "cfgp")
    finally:
        d.check_clean_exit()
    out = json.loads(cli("replay", end.path, "--json").stdout)
    assert out["bit_identical"] and out["states"] == 201, out
    rec = read_recording(end.path)
    assert rec.model_text == original


def test_events_dropped_from_a_full_ring_are_counted(workdir, recdir):
    """The parallelogram four-bar switches partition (LU <-> QR, one event each) through its
    singular positions, with other events (about 110 in 4000 steps); with an event ring of 2
    behind a writer 20 ms per state frame (32 queued: events wait 0.6 s for their turn, as the
    file is in sequence order), events find it full whatever the machine's speed: each one is
    written or counted as dropped, in RecordStatus, the file's end record (`partita info`) and
    `partita record`'s own report."""
    cfg = "record:\n  test_slow_us: 20000\n  queue_frames: 32\n  queue_events: 2\n"
    d = Daemon(workdir, extra_args=["--record-dir", recdir], config=cfg)
    try:
        name = unique("evdrop")
        with d.client() as c:
            c.load_model_file(os.path.join(ROOT, "configs", "models",
                                           "fourbar_parallelogram.yaml"),
                              name=name, mode="lockstep")
            record(c, name, name + ".mcap")
            c.step(name, 4000)
            switches = c.stats(name).models[0].qr_switches
            end = stop_and_wait(c, name, timeout=60)
        assert switches >= 3, switches
        assert end.dropped_events > 0, end
        # every switch to QR and back is an event: written or counted
        assert end.events + end.dropped_events >= 2 * switches - 1, (end, switches)
        info = json.loads(cli("info", end.path, "--json").stdout)
        assert info["events"] == end.events
        assert info["dropped_events"] == end.dropped_events
        assert info["dropped_frames"] == end.dropped_frames
        # a dropped record of either kind is a gap in the sequence numbers
        assert 0 < info["sequence_gaps"] <= end.dropped_frames + end.dropped_events
        out = json.loads(cli("replay", end.path, "--json").stdout)
        assert out["bit_identical"] and out["states"] == end.state_frames
        # `partita record` prints the count (its text and its JSON)
        p = cli("--connect", d.tcp, "record", name, "--out", name + "-2.mcap", "--duration",
                "0.2", "--json")
        assert "dropped_events" in json.loads(p.stdout)
        p = cli("--connect", d.tcp, "record", name, "--out", name + "-3.mcap", "--duration",
                "0.2")
        assert re.search(r"^events +\d+, \d+ dropped$", p.stdout, re.M), p.stdout
    finally:
        d.check_clean_exit()


def test_unload_while_the_writer_drains_does_not_hold_up_the_daemon(workdir, recdir):
    """UnloadModel with 5 s of writing still queued (250 frames, a writer slowed to 20 ms a
    frame): the daemon goes on answering other clients while the writer finishes the file
    (the model is gone from ListModels while the UnloadModel has no answer yet), and the
    answer comes once the file is complete."""
    cfg = "record:\n  test_slow_us: 20000\n  queue_frames: 256\n"
    d = Daemon(workdir, extra_args=["--record-dir", recdir], config=cfg)
    try:
        name = unique("unl")
        with d.client() as a, d.client() as b:
            a.load_model_file(PENDULUM, name=name, mode="lockstep")
            record(a, name, name + ".mcap")
            a.step(name, 250)
            rid = a._next_id
            a._next_id += 1
            req = pb.Request(id=rid)
            req.unload_model.CopyFrom(pb.UnloadModel(model=name))
            a._send(req)
            # another client: answered while the file is still being written
            deadline = time.monotonic() + WAIT
            while any(m.name == name for m in b.list_models()):
                assert time.monotonic() < deadline
            a._read_some(time.monotonic() + 0.01)
            assert rid not in a._responses, "UnloadModel answered before its file was complete"
            assert b.hello().protocol_version == partita.PROTOCOL_VERSION
            # the answer, once the writer is done
            while rid not in a._responses:
                assert time.monotonic() < deadline, "no answer to UnloadModel"
                a._read_some(deadline)
            assert a._responses[rid].status.code == pb.Status.OK
            info = json.loads(cli("info", os.path.join(recdir, name + ".mcap"), "--json").stdout)
            assert info["complete"] and info["states"] == 251 and info["dropped_frames"] == 0
    finally:
        d.check_clean_exit()
