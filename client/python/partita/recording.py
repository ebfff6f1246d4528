"""Read Partita recordings (MCAP files, docs/recording.md) into numpy arrays.

    from partita.recording import read_recording
    rec = read_recording("run.mcap")
    rec.time, rec.coordinates[:, rec.coordinate_names.index("hinge")]

A small reader of the MCAP format written to its specification (https://mcap.dev/spec), in
pure Python: it checks every chunk's CRC-32 and, like `partita info`, reads a file that was
cut off (a crash while recording) up to its last complete record; `complete` and `note` say
whether and where it stopped. Messages are decoded with the protocol's generated classes.
"""

import struct
import zlib

import numpy as np

from ._pb import pb

MAGIC = b"\x89MCAP0\r\n"
OP_HEADER, OP_FOOTER, OP_SCHEMA, OP_CHANNEL, OP_MESSAGE, OP_CHUNK = 1, 2, 3, 4, 5, 6
OP_ATTACHMENT, OP_METADATA, OP_DATA_END = 9, 12, 15


class RecordingError(Exception):
    """The file is no recording, or nothing of it can be read."""


class _Cursor:
    def __init__(self, data, at=0, end=None):
        self.data, self.at = data, at
        self.end = len(data) if end is None else end

    def take(self, n):
        if n < 0 or self.at + n > self.end:
            raise EOFError
        b = self.data[self.at:self.at + n]
        self.at += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def string(self):
        return self.take(self.u32()).decode("utf-8")

    def str_map(self):
        n = self.u32()
        sub = _Cursor(self.data, self.at, self.at + n)
        self.take(n)
        out = {}
        while sub.at < sub.end:
            k = sub.string()
            out[k] = sub.string()
        return out


class Recording:
    """A recording as arrays. States (one row per recorded state frame, in the order recorded):

    time (n,), step (n,), coordinates / rates / accelerations (n, nc), inputs (n, ni),
    kinetic / potential / residual_pos / residual_vel (n,), overran (n,) bool,
    wall_time_ns (n,); NaN where a frame did not carry a field.
    Input changes: input_step (m,), input_time (m,), input_session (m,), input_sequence (m,),
    input_kind (m,) ("inputs", "reset", "set_state", "watchdog"), input_values (m, ni) with
    NaN for the inputs a change left alone. events: a list of (step, time, kind, message).
    model, model_text, dt, integrator, every_k, meta (the "partita.model" metadata),
    end (the "partita.end" metadata, {} if cut off), complete, note.
    """


def _read_records(data, rec):
    """Walks the data section; fills rec's raw lists. Returns (complete, note)."""
    if data[:8] != MAGIC:
        raise RecordingError("not an MCAP file (no magic)")
    c = _Cursor(data, 8)
    schemas, channels, messages = rec._schemas, rec._channels, rec._messages
    seen_header = False
    while True:
        at = c.at
        if at == len(data):
            return False, f"the file ends after byte {at} without Data End (cut off?)"
        try:
            op = c.u8()
            body = c.take(c.u64())
        except EOFError:
            if not seen_header:
                raise RecordingError("the file ends inside its Header")
            return False, f"the file ends inside a record at byte {at} of {len(data)} (cut off?)"
        try:
            done = _record(op, body, at, rec, schemas, channels, messages, seen_header)
        except (EOFError, UnicodeDecodeError):
            if not seen_header:
                raise RecordingError("malformed Header")
            return False, f"malformed record (opcode {op:#04x}) at byte {at}"
        seen_header = True
        if done is not None:
            return done


def _record(op, body, at, rec, schemas, channels, messages, seen_header):
    """One record of the data section; (complete, note) when reading stops there."""
    r = _Cursor(body)
    if not seen_header:
        if op != OP_HEADER:
            raise RecordingError("the first record is not a Header")
    elif op == OP_DATA_END:
        return True, ""
    elif op == OP_SCHEMA:
        sid = r.u16()
        schemas[sid] = (r.string(), r.string())
    elif op == OP_CHANNEL:
        cid, sid = r.u16(), r.u16()
        channels[cid] = (r.string(), r.string(), r.str_map(), sid)
    elif op == OP_CHUNK:
        r.u64(), r.u64()
        usize, crc, comp = r.u64(), r.u32(), r.string()
        recs = r.take(r.u64())
        if comp:
            return False, f"chunk at byte {at} is compressed ({comp}): not supported"
        if usize != len(recs) or (crc and zlib.crc32(recs) != crc):
            return False, f"chunk at byte {at}: CRC mismatch (corrupt)"
        inner = _Cursor(recs)
        found = []
        while inner.at < inner.end:
            iop = inner.u8()
            ib = _Cursor(inner.take(inner.u64()))
            if iop == OP_SCHEMA:
                sid = ib.u16()
                schemas[sid] = (ib.string(), ib.string())
            elif iop == OP_CHANNEL:
                cid, sid = ib.u16(), ib.u16()
                channels[cid] = (ib.string(), ib.string(), ib.str_map(), sid)
            elif iop == OP_MESSAGE:
                cid, seq, t = ib.u16(), ib.u32(), ib.u64()
                ib.u64()
                found.append((cid, seq, t, ib.data[ib.at:]))
        messages.extend(found)
    elif op == OP_MESSAGE:
        cid, seq, t = r.u16(), r.u32(), r.u64()
        r.u64()
        messages.append((cid, seq, t, r.data[r.at:]))
    elif op == OP_ATTACHMENT:
        r.u64(), r.u64()
        name, _ = r.string(), r.string()
        payload = r.take(r.u64())
        crc_len = r.at
        crc = r.u32()
        if crc and zlib.crc32(body[:crc_len]) != crc:
            return False, f"attachment at byte {at}: CRC mismatch (corrupt)"
        rec._attachments.append((name, payload))
    elif op == OP_METADATA:
        name = r.string()
        rec._metadata[name] = r.str_map()

    return None

def read_recording(path):
    """Reads the recording at `path` (see Recording)."""
    with open(path, "rb") as f:
        data = f.read()
    rec = Recording()
    rec._attachments, rec._metadata = [], {}
    rec._schemas, rec._channels, rec._messages = {}, {}, []
    rec.complete, rec.note = _read_records(data, rec)
    meta = rec._metadata.get("partita.model")
    if meta is None:
        raise RecordingError("no Partita recording (no 'partita.model' metadata)"
                             + ("" if rec.complete else ": " + rec.note))
    rec.meta, rec.end = meta, rec._metadata.get("partita.end", {})
    rec.model = meta["model"]
    rec.dt = float(meta["dt"])
    rec.integrator = meta.get("integrator", "")
    rec.every_k = int(meta.get("every_k", "1"))
    rec.model_text = rec._attachments[0][1].decode("utf-8") if rec._attachments else None
    kinds = {}
    for cid, (topic, enc, cmeta, sid) in rec._channels.items():
        if cmeta.get("model") == rec.model and "kind" in cmeta:
            kinds[cid] = cmeta["kind"]
            if cmeta["kind"] == "state":
                split = lambda s: s.split("\n") if s else []
                rec.coordinate_names = split(cmeta.get("coordinates", ""))
                rec.input_names = split(cmeta.get("inputs", ""))
                rec.body_names = split(cmeta.get("bodies", ""))
                rec.control_state_names = split(cmeta.get("control_states", ""))
                rec.signal_names = split(cmeta.get("signals", ""))
    if "state" not in kinds.values():
        raise RecordingError("no state channel" + ("" if rec.complete else ": " + rec.note))
    msgs = sorted((seq, kinds[cid], raw) for cid, seq, t, raw in rec._messages if cid in kinds)
    nc, ni = len(rec.coordinate_names), len(rec.input_names)
    states = [pb.StateFrame.FromString(raw) for _, k, raw in msgs if k == "state"]
    inputs = [pb.RecordedInput.FromString(raw) for _, k, raw in msgs if k == "input"]
    events = [pb.ModelEvent.FromString(raw) for _, k, raw in msgs if k == "event"]

    def vec(frames, attr, n):
        out = np.full((len(frames), n), np.nan)
        for i, f in enumerate(frames):
            v = getattr(f, attr)
            if len(v) == n:
                out[i] = v
        return out

    rec.time = np.array([f.time for f in states])
    rec.step = np.array([f.step for f in states], dtype=np.int64)
    rec.coordinates = vec(states, "coordinates", nc)
    rec.rates = vec(states, "rates", nc)
    rec.accelerations = vec(states, "accelerations", nc)
    rec.inputs = vec(states, "inputs", ni)
    # control elements (FIELD_CONTROLS): states, signals, tuned parameters (ModelInfo orders)
    for attr in ("control_states", "signals", "parameters"):
        n = max((len(getattr(f, attr)) for f in states), default=0)
        setattr(rec, attr, vec(states, attr, n))
    rec.kinetic = np.array([f.energy.kinetic if f.HasField("energy") else np.nan
                            for f in states])
    rec.potential = np.array([f.energy.potential if f.HasField("energy") else np.nan
                              for f in states])
    rec.residual_pos = np.array([f.residual.position if f.HasField("residual") else np.nan
                                 for f in states])
    rec.residual_vel = np.array([f.residual.velocity if f.HasField("residual") else np.nan
                                 for f in states])
    rec.overran = np.array([f.overran for f in states], dtype=bool)
    rec.wall_time_ns = np.array([f.wall_time_ns for f in states], dtype=np.int64)
    kind_names = {0: "inputs", 1: "reset", 2: "set_state", 3: "watchdog", 4: "parameters"}
    rec.input_step = np.array([i.step for i in inputs], dtype=np.int64)
    rec.input_time = np.array([i.time for i in inputs])
    rec.input_session = np.array([i.session for i in inputs], dtype=np.uint64)
    rec.input_sequence = np.array([i.sequence for i in inputs], dtype=np.uint64)
    rec.input_kind = [kind_names.get(i.kind, str(i.kind)) for i in inputs]
    rec.input_values = np.full((len(inputs), ni), np.nan)
    for r, i in enumerate(inputs):
        if i.kind == pb.RecordedInput.PARAMETERS:   # values of parameters, not inputs
            continue
        for idx, v in zip(i.index, i.values):
            if idx < ni:
                rec.input_values[r, idx] = v
    rec.events = [(e.step, e.time, pb.ModelEvent.Kind.Name(e.kind), e.message) for e in events]
    for k in ("_attachments", "_metadata", "_schemas", "_channels", "_messages"):
        delattr(rec, k)
    return rec
