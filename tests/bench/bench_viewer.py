"""bench_viewer: what browsers watching cost a real-time model (docs/viewer.md).

The Panda (configs/models/panda.urdf) at 1 kHz in real time, 3 s without a browser, then 3 s
with N WebSocket clients watching it at 60 frames/s and reading every frame, interleaved
twice. Prints, from GetStats: steps, overruns, step time p99 and max, wake-up lateness p99
and max, and the frames the browsers received. Needs python3-websocket.

  /usr/bin/python3 tests/bench/bench_viewer.py BUILD_DIR [N]
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build"))
n_browsers = int(sys.argv[2]) if len(sys.argv) > 2 else 10
os.environ.setdefault("PARTITA_PB2_DIR", os.path.join(build, "proto"))
sys.path.insert(0, os.path.join(root, "client", "python"))
import partita  # noqa: E402
import websocket  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def watcher(port, name, stop, counts, i):
    ws = websocket.create_connection("ws://127.0.0.1:%d/" % port,
                                     subprotocols=["partita-viewer"], timeout=5)
    ws.send(json.dumps({"watch": name}))
    while not stop.is_set():
        op, _ = ws.recv_data()
        if op == websocket.ABNF.OPCODE_BINARY:
            counts[i] += 1
    ws.close()


URDF = open(os.path.join(root, "configs", "models", "panda.urdf")).read()


def load(c, name):
    """A fresh model for each window: its statistics start at zero."""
    c.load_model(URDF, name=name, format=partita.pb.URDF, mode="paused")


def window(c, name, seconds):
    c.set_mode(name, "realtime", 1.0)
    time.sleep(seconds)
    s = c.stats(name).models[0]
    c.unload_model(name)
    return s


def main():
    tcp, http = free_port(), free_port()
    d = subprocess.Popen([os.path.join(build, "daemon", "partitad"), "--listen",
                          "127.0.0.1:%d" % tcp, "--http", "127.0.0.1:%d" % http,
                          "--log-level", "error"])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", tcp), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        with partita.Client("127.0.0.1:%d" % tcp) as c:
            print("%-14s %6s %9s %12s %11s %12s %11s %8s" % (
                "browsers", "steps", "overruns", "step_p99_us", "step_max_us", "late_p99_us",
                "late_max_us", "frames"))
            for rnd in range(2):
                for nb in (0, n_browsers):
                    name = "panda_%d_%d" % (rnd, nb)
                    load(c, name)
                    stop = threading.Event()
                    counts = [0] * nb
                    ts = [threading.Thread(target=watcher, args=(http, name, stop, counts, i))
                          for i in range(nb)]
                    for t in ts:
                        t.start()
                    time.sleep(0.3)
                    s = window(c, name, 3.0)
                    stop.set()
                    for t in ts:
                        t.join()
                    print("%-14s %6d %9d %12.1f %11.1f %12.1f %11.1f %8d" % (
                        "%d (round %d)" % (nb, rnd + 1), s.steps, s.overruns, s.step_us.p99,
                        s.step_us.max, s.late_us.p99, s.late_us.max, sum(counts)))
    finally:
        d.terminate()
        d.wait(5)


main()
