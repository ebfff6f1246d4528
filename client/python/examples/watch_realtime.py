#!/usr/bin/python3
"""Run a model in real time and watch it: subscribe to state frames, push a torque over UDP.

    partitad --udp 127.0.0.1:7451 &
    PYTHONPATH=client/python /usr/bin/python3 client/python/examples/watch_realtime.py \\
        --udp 127.0.0.1:7451 --seconds 3
"""

import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import partita  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connect", default="127.0.0.1:%d" % partita.DEFAULT_PORT)
    ap.add_argument("--udp", default="", help="the daemon's UDP HOST:PORT (inputs fast path)")
    ap.add_argument("--model", default=os.path.join(ROOT, "configs", "models", "pendulum.yaml"))
    ap.add_argument("--name", default="watched_pendulum")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--hz", type=float, default=10.0, help="frames per second to print")
    args = ap.parse_args()

    with partita.Client(args.connect, timeout=10.0) as c:
        c.hello(client_name="watch_realtime.py")
        try:
            c.unload_model(args.name)
        except partita.PartitaError:
            pass
        info = c.load_model_file(args.model, name=args.name, mode="realtime", rate=1.0)
        sub = c.subscribe(info.name, rate_hz=args.hz, fields=partita.FIELD_COORDINATES)
        sender = partita.UdpInputSender(args.udp, info.name) if args.udp else None
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            frame = c.poll_frame(timeout=1.0)
            if frame is None:
                print("no frame for 1 s")
                continue
            values = "  ".join("%s=%+.6f" % (n, v) for n, v in zip(info.coordinates,
                                                                      frame.coordinates))
            print("t=%8.3f step=%7d  %s  (dropped %d)" % (frame.time, frame.step, values,
                                                           frame.dropped))
            if sender and info.inputs:
                # A slow sinusoidal torque on the first input, sent as the frames come in.
                sender.send([0.5 * math.sin(2 * math.pi * 0.5 * frame.time)])
        c.unsubscribe(sub.subscription)
        if sender:
            sender.close()
        ms = c.stats(info.name).models[0]
        print("%d steps; wake-up lateness p50 %.1f us, p99 %.1f us, max %.1f us; overruns %d"
              % (ms.steps, ms.late_us.p50, ms.late_us.p99, ms.late_us.max, ms.overruns))
        c.unload_model(info.name)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, partita.PartitaError, partita.ConnectionClosed) as err:
        print("watch_realtime.py: %s" % err, file=sys.stderr)
        sys.exit(1)
