"""bench_record.py: what recording costs a model in partitad, and how fast the writer is.

    PARTITAD=build/daemon/partitad PARTITA_PB2_DIR=build/proto \\
        /usr/bin/python3 tests/bench/bench_record.py [MODEL_FILE]

1. Lockstep: Step(n) of the model with and without a recording (every step, all fields but
   bodies), interleaved, best of 5: wall time per step as the client sees it (the recording's
   work on the simulation thread is one copy of the state into a ring slot).
2. Free run for 2 s while recording: steps taken, frames written, frames dropped, bytes per
   frame: the writer's sustained rate on this machine.
Prints numbers only; nothing is asserted (tests assert counts, never times).
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "client", "python"))
import partita  # noqa: E402
from partita import pb  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MODEL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "configs", "models",
                                                           "panda.urdf")


def port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_inactive(c, name):
    while True:
        st = c.request("get_recording", pb.GetRecording(model=name)).record_status
        if not st.active:
            return st
        time.sleep(0.02)


def main():
    tmp = tempfile.mkdtemp(prefix="bench-record-")
    p = port()
    d = subprocess.Popen([os.environ.get("PARTITAD", "build/daemon/partitad"), "--listen",
                          "127.0.0.1:%d" % p, "--record-dir", tmp, "--log-level", "warn"])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", p), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        with partita.Client("127.0.0.1:%d" % p, timeout=60) as c:
            c.load_model_file(MODEL, name="m", mode="lockstep")
            n = 20000
            best = {"off": 1e9, "on": 1e9}
            for k in range(5):
                for mode in ("off", "on"):
                    if mode == "on":
                        c.request("record", pb.Record(model="m", path="lock%d.mcap" % k))
                    t0 = time.perf_counter()
                    c.step("m", n)
                    best[mode] = min(best[mode], (time.perf_counter() - t0) / n * 1e6)
                    if mode == "on":
                        c.request("stop_recording", pb.StopRecording(model="m"))
                        wait_inactive(c, "m")
            print("%s lockstep Step(%d): %.2f us/step without recording, %.2f with "
                  "(ratio %.2f)" % (os.path.basename(MODEL), n, best["off"], best["on"],
                                    best["on"] / best["off"]))
            c.request("record", pb.Record(model="m", path="free.mcap"))
            s0 = c.get_state("m").step
            c.set_mode("m", "free")
            time.sleep(2.0)
            c.set_mode("m", "lockstep")
            steps = c.get_state("m").step - s0
            c.request("stop_recording", pb.StopRecording(model="m"))
            st = wait_inactive(c, "m")
            print("free run 2 s: %d steps, %d frames written, %d dropped, %.0f bytes/frame, "
                  "writer %.0f frames/s" % (steps, st.state_frames, st.dropped_frames,
                                            st.bytes / max(1, st.state_frames),
                                            st.state_frames / 2.0))
    finally:
        d.terminate()
        d.wait()


if __name__ == "__main__":
    main()
