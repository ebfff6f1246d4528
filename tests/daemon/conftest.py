"""Fixtures for the loopback tests of partitad: a daemon subprocess, clients, test models.

meson sets PARTITAD (daemon binary), PARTITA_CLI (the `partita` binary), PARTITA_ROOT (source
tree) and PARTITA_PB2_DIR (where the build wrote partita_pb2.py). Every wait is bounded.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

ROOT = os.environ.get("PARTITA_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

import partita  # noqa: E402

PARTITAD = os.environ.get("PARTITAD")
PARTITA_CLI = os.environ.get("PARTITA_CLI")

# Bounds on waiting for what must happen (a start, an exit, a reply, a frame, a counter): they
# catch a hang, never measure a speed, so they are generous for a 2-core machine running the
# sanitizer build beside other jobs; a wait that succeeds ends as soon as its condition holds.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
WAIT = 60.0

# Physical constants of PENDULUM, for independent checks: a uniform link of mass M whose centre
# of mass sits L from the hinge, inertia IYY about the CoM, hanging from a y-axis hinge at the
# origin. Horizontal at t=0, so gravity drives the hinge angle up (rotation about +y takes +x
# towards -z).
M = 1.0
L = 0.5
IYY = 0.02
G = 9.81
I_HINGE = IYY + M * L * L          # parallel axis theorem
DT = 0.001


def pendulum_yaml(name="pendulum", integrator="rk4", dt=DT):
    return f"""\
model: {name}
gravity: [0, 0, -{G}]
simulation:
  dt: {dt}
  integrator: {integrator}
bodies:
  - name: link
    mass: {M}
    inertia: [{IYY}, {IYY}, 0.001]
    position: [{L}, 0, 0]
joints:
  - name: hinge
    type: revolute
    body1: ground
    body2: link
    point: [0, 0, 0]
    axis: [0, 1, 0]
actuators:
  - name: tau_hinge
    type: joint_torque
    joint: hinge
"""


def double_pendulum_yaml(name="double", integrator="rk4", dt=DT):
    """Two links in a chain, a chaotic system: any difference in arithmetic shows up fast."""
    return f"""\
model: {name}
simulation:
  dt: {dt}
  integrator: {integrator}
bodies:
  - name: upper
    mass: 1.0
    inertia: [0.02, 0.02, 0.001]
    position: [0.5, 0, 0]
  - name: lower
    mass: 0.7
    inertia: [0.01, 0.01, 0.001]
    position: [1.0, 0, -0.4]
    orientation: {{axis: [0, 1, 0], angle: 1.5707963267948966}}
joints:
  - name: shoulder
    type: revolute
    body1: ground
    body2: upper
    point: [0, 0, 0]
    axis: [0, 1, 0]
  - name: elbow
    type: revolute
    body1: upper
    body2: lower
    point: [1.0, 0, 0]
    axis: [0, 1, 0]
    damping: 0.01
actuators:
  - name: tau_shoulder
    type: joint_torque
    joint: shoulder
  - name: tau_elbow
    type: joint_torque
    joint: elbow
"""


def free_port(kind=socket.SOCK_STREAM):
    with contextlib.closing(socket.socket(socket.AF_INET, kind)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """A partitad subprocess on a free loopback TCP port, a Unix socket and a UDP port."""

    def __init__(self, workdir, extra_args=(), config=None, env=None):
        if not PARTITAD:
            pytest.skip("PARTITAD is not set (run through meson test)")
        if not os.path.isfile(PARTITAD):
            pytest.fail("PARTITAD=%s does not exist" % PARTITAD)
        self.port = free_port()
        self.udp_port = free_port(socket.SOCK_DGRAM)
        self.tcp = "127.0.0.1:%d" % self.port
        self.udp = "127.0.0.1:%d" % self.udp_port
        self.unix = os.path.join(workdir, "partitad.sock")
        self.log_path = os.path.join(workdir, "partitad-%d.log" % self.port)
        args = [PARTITAD, "--listen", self.tcp, "--socket", self.unix, "--udp", self.udp]
        if config is not None:
            cfg = os.path.join(workdir, "partitad-%d.yaml" % self.port)
            with open(cfg, "w", encoding="utf-8") as f:
                f.write(config)
            args += ["--config", cfg]
        args += list(extra_args)
        if "--http" not in args and "--no-http" not in args:
            args.append("--no-http")   # the viewer's tests ask for it on a port of their own
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT,
                                     env=None if env is None else {**os.environ, **env})
        self._wait_ready()

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")[-8000:]

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail("partitad exited with %d at start:\n%s"
                            % (self.proc.returncode, self.log_text()))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        pytest.fail("partitad did not accept connections within %.0f s:\n%s"
                    % (START_TIMEOUT, self.log_text()))

    def client(self, address=None, timeout=WAIT):
        return partita.Client(address or self.tcp, timeout=timeout)

    def stop(self):
        """SIGTERM (SIGKILL after STOP_TIMEOUT s); answers the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)
        if not self.log.closed:
            self.log.close()
        return self.proc.returncode

    def check_clean_exit(self):
        """Stop, and fail if the daemon exited badly or a sanitizer reported anything (the
        suite then doubles as a sanitizer run when PARTITAD is an ASan/UBSan build)."""
        rc = self.stop()
        text = self.log_text()
        for mark in ("Sanitizer", "runtime error:"):
            assert mark not in text, "partitad log reports a problem:\n" + text
        assert rc == 0, "partitad exited with %d:\n%s" % (rc, text)


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="partitad-test-") as d:
        yield d


@pytest.fixture(scope="module")
def daemon(workdir):
    d = Daemon(workdir)
    yield d
    d.check_clean_exit()


@pytest.fixture
def client(daemon):
    with daemon.client() as c:
        yield c


def unique(prefix):
    return "%s_%s" % (prefix, uuid.uuid4().hex[:8])


@pytest.fixture
def pendulum(client):
    """A pendulum loaded in lockstep under a unique name; unloaded afterwards."""
    name = unique("pend")
    client.load_model(pendulum_yaml(), name=name, format=partita.pb.YAML, mode="lockstep")
    yield name
    with contextlib.suppress(Exception):
        client.unload_model(name)


@pytest.fixture
def twins(client):
    """Two pendulums loaded in lockstep under unique names: one to drive, one for reference."""
    a, b = unique("twin"), unique("ref")
    for name in (a, b):
        client.load_model(pendulum_yaml(), name=name, format=partita.pb.YAML, mode="lockstep")
    yield a, b
    for name in (a, b):
        with contextlib.suppress(Exception):
            client.unload_model(name)


def wait_until(predicate, timeout, interval=0.02):
    """Poll predicate() until it is truthy or timeout seconds pass; answers its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def model_stats(client, model):
    stats = client.stats(model)
    for m in stats.models:
        if m.model == model:
            return m
    raise AssertionError("model %s missing from GetStats" % model)


def raw_connect(address, rcvbuf=None, timeout=WAIT):
    """A plain socket to the daemon, for tests that must misbehave at the byte level."""
    family, addr = partita.parse_address(address)
    s = socket.socket(family, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    s.connect(addr)
    return s


def read_until_eof(sock, timeout):
    """Read and discard until the peer closes (True) or timeout seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = sock.recv(1 << 20)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
        if not data:
            return True
    return False


def send_request(sock, req):
    sock.sendall(partita.encode_frame(req.SerializeToString()))
