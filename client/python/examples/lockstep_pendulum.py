#!/usr/bin/python3
"""Connect to partitad, load configs/models/pendulum.yaml, run it in lockstep, print state.

    partitad &                                      # listens on 127.0.0.1:7450
    PYTHONPATH=client/python /usr/bin/python3 client/python/examples/lockstep_pendulum.py
    ... --connect 127.0.0.1:7450 | --connect unix:/tmp/partitad.sock  [--steps 100 --every 10]
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import partita  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connect", default="127.0.0.1:%d" % partita.DEFAULT_PORT,
                    help="HOST:PORT or unix:PATH of the daemon")
    ap.add_argument("--model", default=os.path.join(ROOT, "configs", "models", "pendulum.yaml"))
    ap.add_argument("--name", default="example_pendulum", help="name to load the model under")
    ap.add_argument("--steps", type=int, default=100, help="lockstep steps in all")
    ap.add_argument("--every", type=int, default=10, help="steps per printed line")
    args = ap.parse_args()

    with partita.Client(args.connect, timeout=10.0) as c:
        hello = c.hello(client_name="lockstep_pendulum.py")
        print("connected to partitad %s (protocol %d)" % (hello.server_version,
                                                          hello.protocol_version))
        try:
            c.unload_model(args.name)                  # left over from an earlier run
        except partita.PartitaError:
            pass
        info = c.load_model_file(args.model, name=args.name, mode="lockstep")
        print("loaded %s: %d dof, coordinates %s, inputs %s, dt %g s, %s"
              % (info.name, info.dof, list(info.coordinates), list(info.inputs), info.dt,
                 info.integrator))
        state = c.get_state(info.name)
        names = state.coordinate_names
        print("%6s %8s  %s  %s" % ("step", "time", "  ".join("%12s" % n for n in names),
                                   "total energy"))
        done = 0
        while True:
            print("%6d %8.4f  %s  %12.9f" % (state.step, state.time,
                                             "  ".join("%12.8f" % v for v in state.coordinates),
                                             state.energy["total"]))
            if done >= args.steps:
                break
            n = min(args.every, args.steps - done)
            state = c.step(info.name, n)
            done += n
        stats = c.stats(info.name).models[0]
        print("step compute time: mean %.1f us, p99 %.1f us" % (stats.step_us.mean,
                                                                stats.step_us.p99))
        c.unload_model(info.name)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, partita.PartitaError, partita.ConnectionClosed) as err:
        print("lockstep_pendulum.py: %s" % err, file=sys.stderr)
        sys.exit(1)
