"""Blocking client for partitad over TCP or a Unix socket.

One request is in flight at a time: each method sends a Request with a fresh id and reads
ServerMessages until the Response with that id arrives. Events (StateFrame, ModelEvent) that
arrive meanwhile are queued, up to a bound, for frames() / next_event().
"""

import collections
import socket
import time

import numpy as np

from ._pb import pb
from .framing import DEFAULT_MAX_FRAME, FrameDecoder, FramingError, encode_frame
from .statespace import StateSpace

PROTOCOL_VERSION = 1
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7450
DEFAULT_TIMEOUT = 10.0
MAX_QUEUED_EVENTS = 100000

FIELD_COORDINATES = pb.FIELD_COORDINATES
FIELD_RATES = pb.FIELD_RATES
FIELD_ACCELERATIONS = pb.FIELD_ACCELERATIONS
FIELD_INPUTS = pb.FIELD_INPUTS
FIELD_BODIES = pb.FIELD_BODIES
FIELD_ENERGY = pb.FIELD_ENERGY
FIELD_RESIDUAL = pb.FIELD_RESIDUAL
FIELD_CONTROLS = pb.FIELD_CONTROLS          # control states, signals, tuned parameters
FIELD_DEFAULT = pb.FIELD_DEFAULT
FIELD_ALL = pb.FIELD_ALL

_MODES = {
    "paused": pb.PAUSED,
    "realtime": pb.REALTIME,
    "free": pb.FREE_RUN,
    "free_run": pb.FREE_RUN,
    "lockstep": pb.LOCKSTEP,
}


class PartitaError(Exception):
    """The server answered with a non-OK status: code (int), code_name and message."""

    def __init__(self, code, message):
        self.code = int(code)
        try:
            self.code_name = pb.Status.Code.Name(self.code)
        except ValueError:
            self.code_name = "CODE_%d" % self.code
        self.message = message
        super().__init__("%s: %s" % (self.code_name, message))


class ConnectionClosed(Exception):
    """The server closed the connection."""


def mode_value(mode):
    """Accept a Mode enum value or one of 'paused', 'realtime', 'free_run', 'lockstep'."""
    if isinstance(mode, str):
        try:
            return _MODES[mode.lower()]
        except KeyError:
            raise ValueError("unknown mode %r (one of %s)" % (mode, ", ".join(_MODES)))
    return int(mode)


def mode_name(mode):
    return pb.Mode.Name(mode).lower()


def _named(pairs):
    """{name: value} or [(name, value)] -> NamedValues, in the given order."""
    items = pairs.items() if hasattr(pairs, "items") else pairs
    return [pb.NamedValue(name=str(name), value=float(value)) for name, value in items]


def matrix_to_numpy(m):
    arr = np.array(m.data, dtype=float)
    if arr.size != m.rows * m.cols:
        raise ValueError("matrix %dx%d holds %d values" % (m.rows, m.cols, arr.size))
    return arr.reshape(m.rows, m.cols)


class State:
    """A StateFrame with its vectors as numpy arrays (the original message is .msg)."""

    def __init__(self, msg):
        self.msg = msg
        self.model = msg.model
        self.time = msg.time
        self.step = msg.step
        self.subscription = msg.subscription
        self.sequence = msg.sequence
        self.dropped = msg.dropped
        self.mode = msg.mode
        self.wall_time_ns = msg.wall_time_ns        # CLOCK_REALTIME at the end of the step
        self.input_session = msg.input_session      # the last input applied (UDP session,
        self.input_sequence = msg.input_sequence    # and sequence; 0 for SetInputs)
        self.overran = msg.overran                  # the step missed its real-time deadline
        self.coordinates = np.array(msg.coordinates, dtype=float)
        self.rates = np.array(msg.rates, dtype=float)
        self.accelerations = np.array(msg.accelerations, dtype=float)
        self.inputs = np.array(msg.inputs, dtype=float)
        self.coordinate_names = list(msg.coordinate_names)
        self.input_names = list(msg.input_names)
        # FIELD_CONTROLS (docs/controls.md): names in responses, ModelInfo's in frames
        self.control_states = np.array(msg.control_states, dtype=float)
        self.signals = np.array(msg.signals, dtype=float)
        self.parameters = np.array(msg.parameters, dtype=float)
        self.signal_names = list(msg.signal_names)
        self.control_state_names = list(msg.control_state_names)
        self.energy = None
        if msg.HasField("energy"):
            e = msg.energy
            self.energy = {"kinetic": e.kinetic, "potential": e.potential, "total": e.total}
        self.residual = None
        if msg.HasField("residual"):
            self.residual = {"position": msg.residual.position,
                             "velocity": msg.residual.velocity}
        self.bodies = [{
            "name": b.name,
            "position": np.array(b.position, dtype=float),
            "orientation": np.array(b.orientation, dtype=float),
            "velocity": np.array(b.velocity, dtype=float),
            "angular_velocity": np.array(b.angular_velocity, dtype=float),
        } for b in msg.bodies]

    def coordinate(self, name):
        return self.coordinates[self.coordinate_names.index(name)]

    def rate(self, name):
        return self.rates[self.coordinate_names.index(name)]

    def signal(self, name):
        return self.signals[self.signal_names.index(name)]

    def control_state(self, name):
        return self.control_states[self.control_state_names.index(name)]

    def as_dict(self):
        names = self.coordinate_names
        return {"model": self.model, "time": self.time, "step": self.step,
                "coordinates": dict(zip(names, self.coordinates.tolist())),
                "rates": dict(zip(names, self.rates.tolist())),
                "energy": self.energy, "residual": self.residual}

    def __repr__(self):
        return "State(model=%r, time=%.6f, step=%d, coordinates=%s)" % (
            self.model, self.time, self.step, self.coordinates)


def parse_address(address):
    """'HOST:PORT', ':PORT', 'unix:PATH' or a path containing '/' -> (family, sockaddr)."""
    if address is None:
        return socket.AF_INET, (DEFAULT_HOST, DEFAULT_PORT)
    if address.startswith("unix:"):
        return socket.AF_UNIX, address[5:]
    if "/" in address:
        return socket.AF_UNIX, address
    host, sep, port = address.rpartition(":")
    if not sep:
        host, port = address, str(DEFAULT_PORT)
    host = host.strip("[]") or DEFAULT_HOST
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return family, (host, int(port))


class Client:
    """Connection to a daemon. Use as a context manager or call close()."""

    def __init__(self, address=None, timeout=DEFAULT_TIMEOUT, max_frame=DEFAULT_MAX_FRAME):
        self.timeout = timeout
        self._sock = None
        self._decoder = FrameDecoder(max_frame)
        self._events = collections.deque()
        self._responses = {}
        self._next_id = 1
        self.events_dropped = 0
        self.model_events = collections.deque(maxlen=1000)  # set aside by poll_frame()
        self.last_response = None
        if address is not None:
            self.connect(address)

    # -- connection -------------------------------------------------------------------------

    def connect(self, address):
        family, sockaddr = parse_address(address)
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(sockaddr)
        except OSError:
            sock.close()
            raise
        if family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        return self

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def fileno(self):
        return self._sock.fileno()

    # -- transport --------------------------------------------------------------------------

    def _send(self, msg):
        if self._sock is None:
            raise ConnectionClosed("not connected")
        self._sock.sendall(encode_frame(msg.SerializeToString()))

    def _read_some(self, deadline):
        """Read once and dispatch whole messages; False when the deadline passed first."""
        if self._sock is None:
            raise ConnectionClosed("not connected")
        # Past the deadline this still polls once without blocking, so timeout=0 works.
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        self._sock.settimeout(remaining)
        try:
            data = self._sock.recv(65536)
        except (socket.timeout, BlockingIOError):
            return False
        if not data:
            raise ConnectionClosed("server closed the connection")
        for payload in self._decoder.feed(data):
            smsg = pb.ServerMessage()
            smsg.ParseFromString(payload)
            kind = smsg.WhichOneof("msg")
            if kind == "response":
                self._responses[smsg.response.id] = smsg.response
            elif kind == "event":
                if len(self._events) >= MAX_QUEUED_EVENTS:
                    self._events.popleft()
                    self.events_dropped += 1
                self._events.append(smsg.event)
        return True

    def _deadline(self, timeout):
        timeout = self.timeout if timeout is None else timeout
        return None if timeout is None else time.monotonic() + timeout

    def request(self, op, msg, timeout=None, check=True):
        """Send one operation (the Request oneof field name and its message) and return the
        Response; raise PartitaError on a non-OK status when check is true."""
        rid = self._next_id
        self._next_id += 1
        req = pb.Request(id=rid)
        getattr(req, op).CopyFrom(msg)
        self._send(req)
        deadline = self._deadline(timeout)
        while rid not in self._responses:
            late = deadline is not None and time.monotonic() > deadline
            if not self._read_some(deadline) or late:
                if rid in self._responses:
                    break
                raise TimeoutError("no response to %s (id %d) in time" % (op, rid))
        resp = self._responses.pop(rid)
        self.last_response = resp
        if check and resp.status.code != pb.Status.OK:
            raise PartitaError(resp.status.code, resp.status.message)
        return resp

    # -- events -----------------------------------------------------------------------------

    def next_event(self, timeout=None):
        """The next Event message (frame or model_event), or None after timeout seconds."""
        deadline = self._deadline(timeout)
        while not self._events:
            late = deadline is not None and time.monotonic() > deadline
            if not self._read_some(deadline) or (late and not self._events):
                return None
        return self._events.popleft()

    def poll_frame(self, timeout=0.0):
        """The next StateFrame as a State, or None; model events are kept in model_events."""
        deadline = self._deadline(timeout)
        while True:
            while self._events:
                ev = self._events.popleft()
                if ev.WhichOneof("kind") == "frame":
                    return State(ev.frame)
                self.model_events.append(ev.model_event)
            late = deadline is not None and time.monotonic() > deadline
            if not self._read_some(deadline) or (late and not self._events):
                return None

    def frames(self, timeout=None, count=None):
        """Iterate over StateFrames; stops after count frames or timeout s without one."""
        got = 0
        while count is None or got < count:
            frame = self.poll_frame(self.timeout if timeout is None else timeout)
            if frame is None:
                return
            got += 1
            yield frame

    # -- operations -------------------------------------------------------------------------

    def hello(self, client_name="partita-python", token="", protocol_version=PROTOCOL_VERSION):
        return self.request("hello", pb.Hello(protocol_version=protocol_version,
                                              client_name=client_name, token=token)).hello

    def load_model(self, source, name="", format=pb.FORMAT_AUTO, mode=None, rate=0.0,
                   floating_base=False, source_name="", input_timeout_ms=0, input_hold=False,
                   dt=0.0, integrator="", balance_inertia=False, no_joint_limits=False,
                   ground_plane=None):
        """Load a model from its text (YAML or URDF); answers its ModelInfo.
        input_timeout_ms: in real time, inputs silent that long go to zero (or are held, with
        input_hold) and an INPUT_TIMEOUT event goes out. dt and integrator ("rk4", "abm4",
        "euler") override the model's simulation section. balance_inertia (URDF) repairs
        non-physical inertias to the nearest physical ones, each listed in the warnings.
        no_joint_limits keeps the joints' limits but does not enforce them. ground_plane=Z adds
        the ground plane z = Z (normal +z) to the ground's collision shapes."""
        msg = pb.LoadModel(name=name, format=format, source=source, rate=rate,
                           floating_base=floating_base, source_name=source_name,
                           input_timeout_ms=input_timeout_ms, input_hold=input_hold,
                           dt=dt, integrator=integrator, balance_inertia=balance_inertia,
                           no_joint_limits=no_joint_limits)
        if ground_plane is not None:
            msg.ground_plane = True
            msg.ground_z = float(ground_plane)
        if mode is not None:
            msg.mode = mode_value(mode)
        return self.request("load_model", msg).model_info

    def load_model_file(self, path, **kwargs):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        kwargs.setdefault("source_name", str(path))
        if "format" not in kwargs:
            kwargs["format"] = pb.URDF if str(path).endswith(".urdf") else pb.YAML
        return self.load_model(text, **kwargs)

    def unload_model(self, model):
        self.request("unload_model", pb.UnloadModel(model=model))

    def list_models(self):
        return list(self.request("list_models", pb.ListModels()).model_list.models)

    def model_info(self, model):
        return self.request("get_model_info", pb.GetModelInfo(model=model)).model_info

    def set_mode(self, model, mode, rate=0.0):
        return self.request("set_mode", pb.SetMode(model=model, mode=mode_value(mode),
                                                   rate=rate)).model_info

    def step(self, model, n=1, fields=0):
        return State(self.request("step", pb.Step(model=model, n=n, fields=fields)).state)

    def reset(self, model):
        return State(self.request("reset", pb.Reset(model=model)).state)

    def set_state(self, model, coordinates=None, rates=None, control_states=None):
        msg = pb.SetState(model=model, coordinates=_named(coordinates or {}),
                          rates=_named(rates or {}),
                          control_states=_named(control_states or {}))
        return State(self.request("set_state", msg).state)

    def set_parameters(self, model, values):
        """Control elements' parameters {"pid.kp": 2.0, ...} (ModelInfo.parameters), applied
        on the model's thread between two steps, all or none; answers the State after (with
        FIELD_CONTROLS: .parameters as now tuned)."""
        msg = pb.SetParameters(model=model, values=_named(values))
        return State(self.request("set_parameters", msg).state)

    def set_inputs(self, model, values=None, by_index=None):
        """values: {name: value}; by_index: {index: value} or a sequence for inputs 0..n-1."""
        msg = pb.SetInputs(model=model, by_name=_named(values or {}))
        _by_index(msg, by_index)
        self.request("set_inputs", msg)

    def step_with_inputs(self, model, values=None, by_index=None, n=1, fields=0):
        """SetInputs and Step in one round trip (lockstep or paused); answers the State."""
        msg = pb.StepWithInputs(model=model, by_name=_named(values or {}), n=n, fields=fields)
        _by_index(msg, by_index)
        return State(self.request("step_with_inputs", msg).state)

    def get_state(self, model, fields=0):
        return State(self.request("get_state", pb.GetState(model=model, fields=fields)).state)

    def subscribe(self, model, every_k=0, rate_hz=0.0, fields=0, udp_peer=""):
        """Start StateFrame events; answers the SubscribeReply (its .subscription id)."""
        return self.request("subscribe", pb.Subscribe(model=model, every_k=every_k,
                                                      rate_hz=rate_hz, fields=fields,
                                                      udp_peer=udp_peer)).subscribe

    def unsubscribe(self, subscription):
        self.request("unsubscribe", pb.Unsubscribe(subscription=subscription))

    def inverse_dynamics(self, model, coordinates=None, rates=None, accelerations=None,
                         time=None, gravity=False):
        """accelerations: {coordinate: value}, "all" standing for every actuated coordinate;
        gravity: the holding efforts (every rate and actuated acceleration zero). Answers the members of `partita inverse --json`: {"model", "time", "mode"
        ("kinematic" or "torque_request"), "efforts": {name: value}, "coupler_efforts": {coupler:
        value}, "reactions": {joint:
        {force, torque}}, "limit_reactions": {joint: reaction of a limit held}, "limit_notes":
        [line] (only when a joint is on a bound), "coordinates", "rates", "accelerations": {coordinate: value}}."""
        msg = pb.InverseDynamics(model=model, coordinates=_named(coordinates or {}),
                                 rates=_named(rates or {}),
                                 accelerations=_named(accelerations or {}),
                                 gravity=bool(gravity))
        if time is not None:
            msg.use_time = True
            msg.time = time
        r = self.request("inverse_dynamics", msg).inverse_dynamics
        resp = {"model": r.model, "time": r.time, "mode": r.mode,
                "efforts": {e.name: e.value for e in r.efforts},
                "coupler_efforts": {e.name: e.value for e in r.coupler_efforts},
                "reactions": _reactions(r.reactions),
                "limit_reactions": {e.name: e.value for e in r.limit_reactions},
                "coordinates": {c.name: c.value for c in r.coordinates},
                "rates": {c.name: c.value for c in r.rates},
                "accelerations": {c.name: c.value for c in r.accelerations}}
        return _with_notes(r, resp)

    def linearize(self, model, states=(), inputs=(), outputs=(), coordinates=None, rates=None,
                  input_values=None):
        """input_values: {input: value} held at the operating point (the live inputs do not
        change). Answers a StateSpace (A, B, C, D, names, mck = {"M", "C", "K"}, eigenvalues), with
        the attributes model, time (of the operating point), notes (how the states were chosen,
        one line each) and order (of the system solved), as `partita linearize --json`."""
        msg = pb.Linearize(model=model, states=list(states), inputs=list(inputs),
                           outputs=list(outputs),
                           coordinates=_named(coordinates or {}),
                           rates=_named(rates or {}),
                           input_values=_named(input_values or {}))
        r = self.request("linearize", msg).linearize
        mck = None
        if r.HasField("mck"):
            mck = {"M": matrix_to_numpy(r.mck.m), "C": matrix_to_numpy(r.mck.c),
                   "K": matrix_to_numpy(r.mck.k)}
        eig = np.array([complex(e.re, e.im) for e in r.eigenvalues])
        ss = StateSpace(matrix_to_numpy(r.a), matrix_to_numpy(r.b), matrix_to_numpy(r.c),
                        matrix_to_numpy(r.d), states=r.states, inputs=r.inputs,
                        outputs=r.outputs, mck=mck, server_eigenvalues=eig)
        ss.model, ss.time, ss.notes, ss.order = r.model, r.time, list(r.notes), r.order
        return ss

    def equilibrium(self, model, apply=False, coordinates=None, max_iterations=0,
                    tolerance=0.0, newton_only=False, allow_unstable=False):
        """Answers the members of `partita equilibrium --json` ("model", "time", "coordinates",
        "reactions", "efforts" of the motions, "coupler_efforts", "limit_reactions" (of the
        limits held), "limit_notes" (only when a joint is on a bound), "iterations", "damped_steps", "stable", "residual") and
        "applied"."""
        msg = pb.Equilibrium(model=model, apply=apply,
                             coordinates=_named(coordinates or {}),
                             max_iterations=max_iterations, tolerance=tolerance,
                             newton_only=newton_only, allow_unstable=allow_unstable)
        r = self.request("equilibrium", msg).equilibrium
        resp = {"model": r.model, "time": r.time,
                "coordinates": {c.name: c.value for c in r.coordinates},
                "reactions": _reactions(r.reactions),
                "efforts": {e.name: e.value for e in r.efforts},
                "coupler_efforts": {e.name: e.value for e in r.coupler_efforts},
                "limit_reactions": {e.name: e.value for e in r.limit_reactions},
                "iterations": r.iterations, "damped_steps": r.damped_steps,
                "stable": r.stable, "residual": r.residual, "applied": r.applied}
        return _with_notes(r, resp)

    def stats(self, model=""):
        """Answers the Stats message (models[], server)."""
        return self.request("get_stats", pb.GetStats(model=model)).stats

    # -- recordings (docs/recording.md) ------------------------------------------------------

    def record(self, model, path, duration=0.0, every_k=0, fields=0):
        """Starts recording `model` into `path` (inside the daemon's record directory);
        answers the RecordStatus (path as the daemon opened it)."""
        msg = pb.Record(model=model, path=path, duration=duration, every_k=every_k,
                        fields=fields)
        return self.request("record", msg).record_status

    def recording(self, model):
        """The RecordStatus of the recording in progress, else of the last one."""
        return self.request("get_recording", pb.GetRecording(model=model)).record_status

    def stop_recording(self, model, wait=True, timeout=60.0):
        """Stops the recording; with `wait`, answers once its file is complete (the final
        RecordStatus: frames written and dropped, inputs, bytes, error)."""
        st = self.request("stop_recording", pb.StopRecording(model=model)).record_status
        deadline = time.monotonic() + timeout
        while wait and st.active:
            if time.monotonic() > deadline:
                raise TimeoutError("the recording of %s did not end in time" % model)
            time.sleep(0.02)
            st = self.recording(model)
        return st


def _by_index(msg, by_index):
    if by_index is not None:
        pairs = by_index.items() if hasattr(by_index, "items") else enumerate(by_index)
        for i, v in pairs:
            msg.by_index.add(index=int(i), value=float(v))


def _with_notes(reply, doc):
    """doc with "limit_notes" (the reply's lines) when there are any, as the CLI prints it."""
    if reply.limit_notes:
        doc["limit_notes"] = list(reply.limit_notes)
    return doc


def _reactions(reactions):
    return {r.joint: {"force": np.array(r.force, dtype=float),
                      "torque": np.array(r.torque, dtype=float)} for r in reactions}


__all__ = ["Client", "PartitaError", "ConnectionClosed", "FramingError", "State",
           "StateSpace", "mode_value", "mode_name", "parse_address", "matrix_to_numpy"]
