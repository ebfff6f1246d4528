"""Clean stops and a daemon that lives under systemd: SIGTERM answers what is in flight and
exits 0, SIGHUP reopens the log, readiness and watchdog pings go to systemd, and a load still
compiling does not hold the shutdown."""

import os
import signal
import socket
import time

import pytest

from conftest import Daemon, pendulum_yaml, unique
from partita import pb

STOP_BOUND = 10.0   # seconds: what systemd's TimeoutStopSec would be


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
            ids = []
            for cl in clients:                      # one Step in flight on each
                rid = cl._next_id
                cl._next_id += 1
                req = pb.Request(id=rid)
                req.step.CopyFrom(pb.Step(model=name, n=200))
                cl._send(req)
                ids.append(rid)
            time.sleep(0.05)
            t0 = time.monotonic()
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
            assert time.monotonic() - t0 < STOP_BOUND
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
            deadline = time.monotonic() + 5
            while not os.path.exists(log) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert os.path.exists(log), "SIGHUP did not reopen the log"
            c.load_model(pendulum_yaml(), name=unique("hup"), format=pb.YAML)
            time.sleep(0.1)
            assert "log reopened" in open(log).read() and "loaded" in open(log).read()
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
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and got.count("WATCHDOG=1") < 3:
            try:
                got.append(sock.recv(4096).decode())
            except socket.timeout:
                pass
        assert "READY=1" in got
        assert got.count("WATCHDOG=1") >= 3, got          # pinged from the loop, about 150 ms
        d.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5
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
            req = pb.Request(id=1)
            req.load_model.CopyFrom(pb.LoadModel(name="big", source=chain_yaml(600),
                                                 format=pb.YAML))
            c._send(req)
            time.sleep(0.2)
            t0 = time.monotonic()
            d.proc.send_signal(signal.SIGTERM)
            assert d.proc.wait(STOP_BOUND) == 0
            assert time.monotonic() - t0 < STOP_BOUND
    finally:
        d.check_clean_exit()
