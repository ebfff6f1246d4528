"""Clean stops and a daemon that lives under systemd: SIGTERM answers what is in flight and
exits 0, SIGHUP reopens the log, readiness and watchdog pings go to systemd, and a load still
compiling does not hold the shutdown."""

import os
import signal
import socket
import time

import pytest

from conftest import WAIT, Daemon, pendulum_yaml, unique, wait_until
from partita import pb

# seconds: a bound that catches a daemon that never stops, not a speed (a loaded machine
# running the sanitizer build is slow; systemd's default TimeoutStopSec is 90 s)
STOP_BOUND = 60.0


def requests_received(c):
    """The daemon's count of requests received (ServerStats.requests counts each on receipt,
    this Stats request included)."""
    return c.stats().server.requests


def wait_requests_received(c, base, n):
    """Wait until the daemon has received the n requests sent since requests_received(c)
    answered base: a condition, not a sleep (each Stats poll adds one of its own)."""
    polls = [0]

    def received():
        polls[0] += 1
        return requests_received(c) >= base + n + polls[0]
    assert wait_until(received, WAIT), "the daemon did not receive the requests"


def test_sigterm_with_clients_answers_everything_and_exits_0(workdir):
    d = Daemon(workdir)
    clients = []
    try:
        with d.client() as c:
            name = unique("term")
            c.load_model(pendulum_yaml(), name=name, format=pb.YAML, mode="lockstep")
            watcher = d.client()
            watcher.subscribe(name, every_k=1000)
            clients = [d.client() for _ in range(50)]
            base = requests_received(c)
            ids = []
            for cl in clients:                      # one Step in flight on each
                rid = cl._next_id
                cl._next_id += 1
                req = pb.Request(id=rid)
                req.step.CopyFrom(pb.Step(model=name, n=200))
                cl._send(req)
                ids.append(rid)
            wait_requests_received(c, base, len(clients))   # all in flight before the signal
            d.proc.send_signal(signal.SIGTERM)
            for cl, rid in zip(clients, ids):
                deadline = time.monotonic() + STOP_BOUND
                while rid not in cl._responses and time.monotonic() < deadline:
                    if not cl._read_some(deadline):
                        break
                assert rid in cl._responses, "a pending reply was not sent"
                r = cl._responses[rid]
                assert r.status.code in (pb.Status.OK, pb.Status.FAILED_PRECONDITION)
            assert d.proc.wait(STOP_BOUND) == 0
            watcher.close()
    finally:
        for cl in clients:
            cl.close()
        d.check_clean_exit()


def test_sighup_reopens_the_log(workdir):
    log = os.path.join(workdir, "partitad-hup.log")
    d = Daemon(workdir, extra_args=["--log", log])
    try:
        with d.client() as c:
            c.list_models()
            assert "ready" in open(log).read()
            os.rename(log, log + ".1")            # what logrotate does
            d.proc.send_signal(signal.SIGHUP)
            assert wait_until(lambda: os.path.exists(log), WAIT), "SIGHUP did not reopen the log"
            c.load_model(pendulum_yaml(), name=unique("hup"), format=pb.YAML)
            # the line is written before the answer; waited for, in case of a buffered write
            assert wait_until(lambda: "log reopened" in open(log).read() and
                              "loaded" in open(log).read(), WAIT)
            assert "loaded" not in open(log + ".1").read()
    finally:
        d.check_clean_exit()


def test_systemd_notify_ready_watchdog_stopping(workdir):
    path = os.path.join(workdir, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    d = Daemon(workdir, env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "300000"})
    got = []
    try:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and got.count("WATCHDOG=1") < 3:
            try:
                got.append(sock.recv(4096).decode())
            except socket.timeout:
                pass
        assert "READY=1" in got
        assert got.count("WATCHDOG=1") >= 3, got          # pinged from the loop, about 150 ms
        d.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and "STOPPING=1" not in got:
            try:
                got.append(sock.recv(4096).decode())
            except socket.timeout:
                pass
        assert "STOPPING=1" in got
        assert d.proc.wait(STOP_BOUND) == 0   # (a second SIGTERM while it stops would kill it)
    finally:
        sock.close()
        d.check_clean_exit()


def chain_yaml(n):
    lines = ["model: chain%d" % n, "bodies:"]
    for i in range(n):
        lines += ["  - name: b%d" % i, "    mass: 1.0", "    inertia: [0.01, 0.01, 0.001]",
                  "    position: [%g, 0, 0]" % (0.1 * i + 0.05)]
    lines.append("joints:")
    for i in range(n):
        lines += ["  - name: j%d" % i, "    type: revolute",
                  "    body1: %s" % ("ground" if i == 0 else "b%d" % (i - 1)),
                  "    body2: b%d" % i, "    point: [%g, 0, 0]" % (0.1 * i),
                  "    axis: [0, 1, 0]"]
    return "\n".join(lines) + "\n"


def test_sigterm_does_not_wait_for_a_load_in_progress(workdir):
    d = Daemon(workdir)
    try:
        with d.client() as c:
            base = requests_received(c)
            req = pb.Request(id=1)
            req.load_model.CopyFrom(pb.LoadModel(name="big", source=chain_yaml(600),
                                                 format=pb.YAML))
            c._send(req)
            wait_requests_received(c, base, 1)        # the load under way
            d.proc.send_signal(signal.SIGTERM)
            assert d.proc.wait(STOP_BOUND) == 0
    finally:
        d.check_clean_exit()
