"""partitad's browser viewer over its HTTP port (issue 13; docs/viewer.md): the WebSocket
stream against GetState, a browser that never reads, the token, malformed messages, meshes.
The page itself in a real browser: test_viewer_browser.py.

Needs Debian's python3-websocket (websocket-client); skipped with a message without it."""

import json
import os
import socket
import struct
import time
import urllib.error
import urllib.request

import pytest

from conftest import (WAIT, Daemon, double_pendulum_yaml, free_port, pendulum_yaml, unique,
                      wait_until)

websocket = pytest.importorskip("websocket", reason="python3-websocket is not installed")

import partita  # noqa: E402

FRAME_HEAD = 10


def open_ws(port, rcvbuf=None, timeout=WAIT):
    opts = [(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)] if rcvbuf else None
    ws = websocket.create_connection("ws://127.0.0.1:%d/" % port,
                                     subprotocols=["partita-viewer"], timeout=timeout,
                                     sockopt=opts)
    hello = json.loads(ws.recv())
    assert "hello" in hello, hello
    return ws, hello["hello"]


def recv_json(ws, key, limit=200):
    """The next text message holding `key` (pose frames in between are skipped)."""
    for _ in range(limit):
        op, data = ws.recv_data()
        if op == websocket.ABNF.OPCODE_TEXT:
            m = json.loads(data)
            if key in m:
                return m
            if "error" in m and key != "error":
                raise AssertionError("error from the viewer: %s" % m["error"])
    raise AssertionError("no %r message" % key)


def decode(data):
    d = struct.unpack("<%dd" % (len(data) // 8), data)
    nb, nc, ni = int(d[7]), int(d[8]), int(d[9])
    bodies = [d[FRAME_HEAD + 7 * b: FRAME_HEAD + 7 * b + 7] for b in range(nb)]
    q0 = FRAME_HEAD + 7 * nb
    return {"version": d[0], "time": d[1], "step": int(d[2]), "kinetic": d[3],
            "potential": d[4], "bodies": bodies, "q": d[q0:q0 + nc],
            "qd": d[q0 + nc:q0 + 2 * nc], "u": d[q0 + 2 * nc:q0 + 2 * nc + ni],
            "signals": d[q0 + 2 * nc + ni:]}


def next_frame(ws, limit=500):
    for _ in range(limit):
        op, data = ws.recv_data()
        if op == websocket.ABNF.OPCODE_BINARY:
            return decode(data)
    raise AssertionError("no pose frame")


@pytest.fixture(scope="module")
def viewer_daemon(workdir):
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port])
    d.http_port = port
    yield d
    d.check_clean_exit()


def test_page_and_three_are_served(viewer_daemon):
    base = "http://127.0.0.1:%d" % viewer_daemon.http_port
    page = urllib.request.urlopen(base + "/", timeout=60).read().decode()
    assert "partita" in page.lower()
    if os.path.isdir("/usr/share/javascript/three"):
        three = urllib.request.urlopen(base + "/three/build/three.min.js", timeout=60).read()
        assert len(three) > 100000
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(base + "/mesh/nosuchmodel/0.stl", timeout=60)


def test_stream_matches_get_state(viewer_daemon):
    """A lockstep pendulum stepped 137 times: the frame at that step carries GetState's bits."""
    name = unique("vpend")
    with viewer_daemon.client() as c:
        c.load_model(pendulum_yaml(), name=name, format=partita.pb.YAML, mode="lockstep")
        c.set_inputs(name, {"tau_hinge": 0.25})
        c.step(name, 137)
        st = c.get_state(name, fields=partita.FIELD_ALL)
        ws, _ = open_ws(viewer_daemon.http_port)
        try:
            ws.send(json.dumps({"watch": name}))
            info = recv_json(ws, "info")["info"]
            assert info["name"] == name and info["body_names"] == ["link"]
            assert info["visuals"][0]["generated"] is True   # no shapes: the inertia box
            # the hinge at the origin, seen from the link's frame (CoM at x = L, global axes)
            assert info["joint_markers"] == [{"name": "hinge", "type": "revolute", "body": 0,
                                              "position": [-0.5, 0.0, 0.0],
                                              "axis": [0.0, 1.0, 0.0]}]
            f = next_frame(ws)
            assert f["step"] == 137 == st.step and f["time"] == st.time
            body = st.msg.bodies[0]
            assert list(f["bodies"][0]) == list(body.position) + list(body.orientation)
            assert list(f["q"]) == list(st.msg.coordinates)
            assert list(f["qd"]) == list(st.msg.rates)
            assert list(f["u"]) == [0.25]
            assert f["kinetic"] == st.msg.energy.kinetic
        finally:
            ws.close()
            c.unload_model(name)


def test_stream_carries_signals(viewer_daemon):
    """A model with control elements: the info names its signals and each pose frame ends with
    their values, GetState's bits (the page plots them, docs/viewer.md)."""
    name = unique("vctl")
    path = os.path.join(os.environ.get("PARTITA_ROOT", "."), "configs", "models",
                        "pendulum_motor_pid.yaml")
    with viewer_daemon.client() as c, open(path) as f:
        c.load_model(f.read(), name=name, format=partita.pb.YAML, mode="lockstep")
        c.set_state(name, {"hinge": 0.1})
        c.step(name, 20)
        st = c.get_state(name, fields=partita.FIELD_ALL)
        ws, _ = open_ws(viewer_daemon.http_port)
        try:
            ws.send(json.dumps({"watch": name}))
            info = recv_json(ws, "info")["info"]
            assert info["signals"] == ["angle", "rate", "target", "error", "voltage",
                                       "motor.y1"]
            fr = next_frame(ws)
            assert fr["step"] == 20 and list(fr["signals"]) == list(st.msg.signals)
            assert fr["signals"][0] == pytest.approx(fr["q"][0], abs=1e-15)   # angle: the hinge
        finally:
            ws.close()
            c.unload_model(name)


def test_requests_through_the_socket(viewer_daemon):
    """The page's controls are protocol requests written as JSON; errors are answered."""
    name = unique("vreq")
    with viewer_daemon.client() as c:
        c.load_model(pendulum_yaml(), name=name, format=partita.pb.YAML, mode="lockstep")
        ws, _ = open_ws(viewer_daemon.http_port)
        try:
            ws.send(json.dumps({"request": {"id": 5, "step": {"model": name, "n": 20}}}))
            r = recv_json(ws, "message")["message"]["response"]
            assert r["id"] == 5 and r["status"]["code"] == "OK" and r["state"]["step"] == 20
            ws.send(json.dumps({"request": {"id": 6, "set_inputs": {
                "model": name, "by_name": [{"name": "tau_hinge", "value": -1.5}]}}}))
            assert recv_json(ws, "message")["message"]["response"]["status"]["code"] == "OK"
            assert list(c.get_state(name, fields=partita.FIELD_INPUTS).inputs) == [-1.5]
            ws.send(json.dumps({"request": {"id": 7, "set_mode": {"model": name,
                                                                  "mode": "NOT_A_MODE"}}}))
            assert "unknown value" in recv_json(ws, "error")["error"]
            ws.send(json.dumps({"request": {"id": 8, "no_such_op": {}}}))
            assert "has no field" in recv_json(ws, "error")["error"]
            ws.send("{not json")
            assert "JSON object expected" in recv_json(ws, "error")["error"]
            ws.send(json.dumps({"request": {"id": 9, "hello": {"token": "x"}}}))
            assert "Hello" in recv_json(ws, "error")["error"]
            ws.send(json.dumps({"request": {"id": 10, "step": {"model": "nope", "n": 1}}}))
            r = recv_json(ws, "message")["message"]["response"]
            assert r["status"]["code"] == "NOT_FOUND"
        finally:
            ws.close()
        assert c.get_state(name).step == 20   # the daemon is fine
        c.unload_model(name)


def many_bodies_yaml(name, n):
    bodies = "".join("  - {name: b%d, mass: 1, inertia: [1, 1, 1], position: [%d, 0, 0]}\n"
                     % (i, i) for i in range(n))
    return "model: %s\nbodies:\n%s" % (name, bodies)


def test_a_browser_that_never_reads_is_dropped(workdir):
    """Frames are dropped from its queue, then it is disconnected, counted; the model never
    waits: it keeps stepping and answering meanwhile (counts, not times, are checked)."""
    port = free_port()
    cfg = "viewer:\n  fps: 240\n  queue_frames: 4\n  drop_limit: 50\n"
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port], config=cfg)
    try:
        with d.client() as c:
            name = unique("many")
            c.load_model(many_bodies_yaml(name, 200), name=name, format=partita.pb.YAML,
                         mode="realtime")
            ws, _ = open_ws(port, rcvbuf=4096)
            ws.send(json.dumps({"watch": name}))
            # never read again
            deadline = time.monotonic() + WAIT
            steps = []
            while time.monotonic() < deadline:
                s = c.stats().server
                steps.append(c.get_state(name).step)
                if s.viewer_dropped_clients >= 1:
                    break
                time.sleep(0.1)
            s = c.stats().server
            assert s.viewer_dropped_clients == 1, s
            assert s.viewer_dropped_frames >= 50, s
            assert steps == sorted(steps) and steps[-1] > steps[0]   # the model went on
            later = c.get_state(name).step
            assert wait_until(lambda: c.get_state(name).step > later, WAIT)
            ws.close()
    finally:
        d.check_clean_exit()


def test_pages_of_other_sites_are_refused(viewer_daemon):
    # Any web page may open a WebSocket to localhost: one whose Origin is not this host (a
    # browser on another site's page) is refused; this host's own page is served.
    port = viewer_daemon.http_port
    with pytest.raises(websocket.WebSocketException):
        websocket.create_connection("ws://127.0.0.1:%d/" % port, subprotocols=["partita-viewer"],
                                    timeout=WAIT, origin="http://evil.example")
    ws = websocket.create_connection("ws://127.0.0.1:%d/" % port, subprotocols=["partita-viewer"],
                                     timeout=WAIT, origin="http://127.0.0.1:%d" % port)
    assert "hello" in json.loads(ws.recv())
    ws.close()


def test_token(workdir):
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port],
               config='auth_token: "s3cret"\n')
    try:
        ws, hello = open_ws(port)
        assert hello["need_token"] is True
        ws.send(json.dumps({"models": 1}))
        assert "need_token" in recv_json(ws, "need_token")
        ws.send(json.dumps({"request": {"id": 1, "list_models": {}}}))
        assert "need_token" in recv_json(ws, "need_token")
        ws.send(json.dumps({"token": "s3cret"}))
        recv_json(ws, "authed")
        ws.send(json.dumps({"request": {"id": 2, "list_models": {}}}))
        r = recv_json(ws, "message")["message"]["response"]
        assert r["status"]["code"] == "OK"
        ws.close()
        ws, _ = open_ws(port)
        ws.send(json.dumps({"token": "wrong"}))
        assert recv_json(ws, "error")["error"] == "wrong token"
        with pytest.raises(Exception):
            for _ in range(10):
                ws.recv()
    finally:
        d.check_clean_exit()


def test_meshes_are_served(workdir):
    mesh = os.path.join(workdir, "part.stl")
    with open(mesh, "w") as f:
        f.write("solid part\nendsolid part\n")
    model = os.path.join(workdir, "meshy.yaml")
    with open(model, "w") as f:
        f.write("model: meshy\nbodies:\n  - name: a\n    mass: 1\n    inertia: [1, 1, 1]\n"
                "    position: [0, 0, 0]\n    visuals:\n      - {type: mesh, file: part.stl}\n")
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port, "--model", model])
    try:
        with d.client() as c:
            v = c.model_info("meshy").visuals[0]
            assert v.kind == partita.pb.Visual.MESH and v.mesh_url == "/mesh/meshy/0.stl"
            body = urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, v.mesh_url),
                                          timeout=60).read()
            assert body == b"solid part\nendsolid part\n"
    finally:
        d.check_clean_exit()


def test_no_http(workdir):
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port, "--no-http"])
    try:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
    finally:
        d.check_clean_exit()


def test_cli_open_prints_the_page_address(viewer_daemon):
    import subprocess
    from conftest import PARTITA_CLI
    name = unique("vopen")
    with viewer_daemon.client() as c:
        c.load_model(pendulum_yaml(), name=name, format=partita.pb.YAML)
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        r = subprocess.run([PARTITA_CLI, "open", name, "--connect", viewer_daemon.tcp],
                           capture_output=True, text=True, timeout=60, env=env)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "http://127.0.0.1:%d/#model=%s" % (viewer_daemon.http_port,
                                                                     name)
        r = subprocess.run([PARTITA_CLI, "open", "no_such_model", "--connect",
                            viewer_daemon.tcp], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and "no model named" in r.stderr, r
        c.unload_model(name)


def test_cli_open_without_a_viewer(workdir):
    import subprocess
    from conftest import PARTITA_CLI
    d = Daemon(workdir, extra_args=["--no-http"])
    try:
        r = subprocess.run([PARTITA_CLI, "open", "x", "--connect", d.tcp],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and "serves no viewer" in r.stderr, r
    finally:
        d.check_clean_exit()


def test_cli_view_runs_a_model_file(workdir):
    """`partita view MODEL`: the engine and the page, no daemon; Ctrl-C ends it with 0."""
    import signal
    import subprocess
    from conftest import PARTITA_CLI, ROOT
    port = free_port()
    p = subprocess.Popen([PARTITA_CLI, "view", os.path.join(ROOT, "configs", "models",
                                                             "double_pendulum.yaml"),
                          "--http", "127.0.0.1:%d" % port],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("partita view: http://127.0.0.1:%d/#model=double_pendulum"
                               % port), line
        ws, _ = open_ws(port)
        ws.send(json.dumps({"watch": "double_pendulum"}))
        info = recv_json(ws, "info")["info"]
        assert info["mode"] == "REALTIME" and len(info["visuals"]) == 3
        # stepping in real time: a later frame is of a later step (waited for, not slept for)
        a = next_frame(ws)["step"]
        deadline = time.monotonic() + WAIT
        while next_frame(ws)["step"] <= a:
            assert time.monotonic() < deadline, "the model did not step"
        ws.close()
    finally:
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "Sanitizer" not in err and "runtime error:" not in err, err


def test_stops_cleanly_with_browsers_connected(workdir):
    """SIGTERM with browsers watching and a request's subscription open: exit 0, nothing
    reported by the sanitizers (when PARTITAD is the ASan build)."""
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port])
    with d.client() as c:
        c.load_model(pendulum_yaml(), name="p", format=partita.pb.YAML, mode="realtime")
    sockets = []
    for _ in range(3):
        ws, _ = open_ws(port)
        ws.send(json.dumps({"watch": "p"}))
        ws.send(json.dumps({"request": {"id": 1, "subscribe": {"model": "p",
                                                               "every_k": 1000000000}}}))
        recv_json(ws, "message")
        next_frame(ws)
        sockets.append(ws)
    d.check_clean_exit()
    for ws in sockets:
        ws.close()


HOSTILE = [
    "null", "[]", "42", '"x"', "{}", '{"watch": null}', '{"watch": 5}', '{"watch": {"a": 1}}',
    '{"token": null}', '{"models": null}', '{"request": null}', '{"request": []}',
    '{"request": {"id": null}}', '{"request": {"id": -1}}', '{"request": {"id": 1e300}}',
    '{"request": {"id": 1.5}}', '{"request": {"id": "7"}}', '{"request": {"id": 18446744073709551615}}',
    '{"request": {"step": null}}', '{"request": {"step": {"model": null}}}',
    '{"request": {"step": {"model": "p", "n": -5}}}', '{"request": {"step": {"model": "p", "n": 1e20}}}',
    '{"request": {"step": {"model": "p"}, "reset": {"model": "p"}}}',
    '{"request": {"set_mode": {"model": "p", "mode": 99}}}',
    '{"request": {"set_mode": {"model": "p", "mode": null}}}',
    '{"request": {"set_mode": {"model": "p", "rate": "fast"}}}',
    '{"request": {"set_inputs": {"model": "p", "by_name": [null, 1, "x", {"name": null}]}}}',
    '{"request": {"set_inputs": {"model": "p", "by_index": [{"index": 1e9, "value": 1e308}]}}}',
    '{"request": {"set_inputs": {"model": "p", "by_name": {"name": "tau_hinge"}}}}',
    '{"request": {"set_state": {"model": "p", "coordinates": [{"name": "hinge", "value": 1e400}]}}}',
    '{"request": {"load_model": {"source": "model: x", "format": "YAML"}}}',
    '{"request": {"load_model": {"source": 5}}}',
    '{"request": {"subscribe": {"model": "p", "every_k": 0, "rate_hz": -1}}}',
    '{"request": {"get_stats": {"model": ["p"]}}}',
    '{"request": ' + '{"linearize": ' * 20 + '{}' + '}' * 20 + '}',
    '[' * 100 + ']' * 100,
    '{"request": {"set_inputs": {"model": "p", "by_index": [' + ",".join(['{"index": 0}'] * 5000) + ']}}}',
    '{"request": {"step": {"model": "' + "p" * 70000 + '"}}}',
]


def test_hostile_messages_are_answered_not_fatal(workdir):
    """Malformed JSON of every kind gets an error (or a refusal from the request's checks);
    the daemon stays up, the model unchanged, nothing for the sanitizers (ASan build)."""
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port])
    try:
        with d.client() as c:
            c.load_model(pendulum_yaml(), name="p", format=partita.pb.YAML, mode="lockstep")
            for text in HOSTILE:
                try:
                    ws, _ = open_ws(port)
                except Exception as e:   # pragma: no cover
                    raise AssertionError("viewer gone after %r: %s" % (text[:60], e))
                try:
                    ws.send(text)
                    try:
                        op, data = ws.recv_data()
                        assert op in (websocket.ABNF.OPCODE_TEXT, websocket.ABNF.OPCODE_CLOSE)
                    except websocket.WebSocketConnectionClosedException:
                        pass   # a message over 64 KiB closes the socket
                finally:
                    ws.close()
            assert c.get_state("p").step == 0
    finally:
        d.check_clean_exit()


def test_package_meshes_through_the_daemons_search_path(workdir):
    """A URDF sent in LoadModel names package://demo/meshes/arm.stl: found through
    viewer.package_path and served; without it, a warning and the inertia box."""
    pkgs = os.path.join(workdir, "pkgs")
    os.makedirs(os.path.join(pkgs, "demo", "meshes"), exist_ok=True)
    with open(os.path.join(pkgs, "demo", "meshes", "arm.stl"), "w") as f:
        f.write("solid arm\nendsolid arm\n")
    urdf = ('<robot name="r"><link name="base"/><link name="arm"><inertial><mass value="1"/>'
            '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial><visual>'
            '<geometry><mesh filename="package://demo/meshes/arm.stl"/></geometry></visual>'
            '</link><joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
            '<axis xyz="0 0 1"/></joint></robot>')
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port],
               config="viewer:\n  package_path: %s\n" % pkgs)
    try:
        with d.client() as c:
            c.load_model(urdf, name="withpkg", format=partita.pb.URDF)
            v = c.model_info("withpkg").visuals[0]
            assert v.kind == partita.pb.Visual.MESH and not v.generated
            body = urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, v.mesh_url),
                                          timeout=60).read()
            assert body.startswith(b"solid arm")
    finally:
        d.check_clean_exit()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port])
    try:
        with d.client() as c:
            info = c.load_model(urdf, name="nopkg", format=partita.pb.URDF)
            v = info.visuals[0]
            assert v.kind == partita.pb.Visual.BOX and v.generated and v.mesh_url == ""
            assert v.uri == "package://demo/meshes/arm.stl"
            assert "not found" in info.warnings
    finally:
        d.check_clean_exit()


def test_browsers_are_bounded(workdir):
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port],
               config="viewer:\n  max_browsers: 2\n")
    try:
        a, _ = open_ws(port)
        b, _ = open_ws(port)
        with pytest.raises(Exception):
            open_ws(port)            # refused: closed at once
        with d.client() as c:
            s = c.stats().server
            assert s.viewer_clients == 2 and s.viewer_refused_clients == 1, s
        a.close()
        with d.client() as c:
            assert wait_until(lambda: c.stats().server.viewer_clients == 1, WAIT)
        e, _ = open_ws(port)   # room again
        e.close()
        b.close()
    finally:
        d.check_clean_exit()


@pytest.mark.parametrize("rate", ["abc", "0", "1e9", "2x"])
def test_cli_view_refuses_a_bad_rate(rate):
    """`partita view --rate` takes 0.001 to 1000, as SetMode does: anything else is refused."""
    import subprocess
    from conftest import PARTITA_CLI, ROOT
    r = subprocess.run([PARTITA_CLI, "view", os.path.join(ROOT, "configs", "models",
                                                           "pendulum.yaml"), "--rate", rate,
                        "--http", "127.0.0.1:%d" % free_port()],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--rate: a number from 0.001 to 1000" in r.stderr, r


def test_a_model_reloaded_under_the_same_name_is_switched_to(workdir):
    """A page watches "rl" (a pendulum: 1 body); "rl" is unloaded and a double pendulum
    (2 bodies) loaded under the same name between two frame ticks (fps 1). The page is given
    the new model's info, then frames of its layout; never frames of the new model under the
    old model's info. (Were the two a tick apart, the page would be told "unloaded" instead.)"""
    port = free_port()
    d = Daemon(workdir, extra_args=["--http", "127.0.0.1:%d" % port],
               config="viewer:\n  fps: 1\n")
    try:
        with d.client() as c:
            c.load_model(pendulum_yaml("rl"), name="rl", format=partita.pb.YAML,
                         mode="lockstep")
            ws, _ = open_ws(port)
            ws.send(json.dumps({"watch": "rl"}))
            info = recv_json(ws, "info")["info"]
            bodies = info["bodies"]
            assert bodies == 1
            assert len(next_frame(ws)["bodies"]) == 1
            c.unload_model("rl")
            c.load_model(double_pendulum_yaml("rl"), name="rl", format=partita.pb.YAML,
                         mode="lockstep")
            frames_after, ended = 0, False
            deadline = time.monotonic() + WAIT
            while frames_after < 2 and not ended:
                assert time.monotonic() < deadline
                op, data = ws.recv_data()
                if op == websocket.ABNF.OPCODE_TEXT:
                    m = json.loads(data)
                    if "info" in m:
                        bodies = m["info"]["bodies"]
                    ended = "unloaded" in m
                elif op == websocket.ABNF.OPCODE_BINARY:
                    f = decode(data)
                    assert len(f["bodies"]) == bodies, (len(f["bodies"]), bodies)
                    frames_after += bodies == 2
            assert ended or bodies == 2
            ws.close()
    finally:
        d.check_clean_exit()
