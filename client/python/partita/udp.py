"""UDP fast path: InputFrame datagrams to the daemon, StateFrame datagrams back.

Each datagram holds exactly one message, without a length prefix. A sender is a session (a
random 64-bit id) numbering its frames with a strictly increasing counter; the daemon keeps,
per model, the current session and its highest sequence number and drops older frames
(stale). A new session (a restarted sender) starts a new ordering from a low number.
"""

import hashlib
import hmac
import os
import socket
import struct

from ._pb import pb
from .client import State, parse_address


def input_digest(frame, token):
    """HMAC-SHA256 under the server's token of the frame's contents (docs/protocol.md):
    "partita-input-v1" NUL model NUL session sequence n_values values n_index index, the
    integers and doubles little-endian."""
    msg = b"partita-input-v1\0" + frame.model.encode() + b"\0"
    msg += struct.pack("<QQI", frame.session, frame.sequence, len(frame.values))
    msg += struct.pack("<%dd" % len(frame.values), *frame.values)
    msg += struct.pack("<I", len(frame.index))
    msg += struct.pack("<%dI" % len(frame.index), *frame.index)
    return hmac.new(token.encode(), msg, hashlib.sha256).digest()


class UdpInputSender:
    """Send actuator inputs of one model: send([u0, u1, ...]) or send({index: value})."""

    def __init__(self, address, model, token="", first_sequence=1, session=None):
        """A sender is one session: a random 64-bit id unless given, so a restarted sender's
        inputs (from sequence 1 again) are not taken for stale ones of its predecessor."""
        family, self.addr = parse_address(address)
        if family == socket.AF_UNIX:
            raise ValueError("the UDP fast path needs HOST:PORT, got %r" % address)
        self.model = model
        self.token = token
        self.sequence = first_sequence
        self.session = int.from_bytes(os.urandom(8), "little") if session is None else session
        self._sock = socket.socket(family, socket.SOCK_DGRAM)

    def send(self, values, sequence=None):
        """Send one frame; sequence defaults to one more than the last one sent."""
        if sequence is None:
            sequence = self.sequence
        self.sequence = max(self.sequence, sequence + 1)
        frame = pb.InputFrame(model=self.model, sequence=sequence, session=self.session)
        if hasattr(values, "items"):
            for i, v in values.items():
                frame.index.append(int(i))
                frame.values.append(float(v))
        else:
            frame.values.extend(float(v) for v in values)
        if self.token:   # the token never travels: a digest under it does
            frame.digest = input_digest(frame, self.token)
        self._sock.sendto(frame.SerializeToString(), self.addr)
        return sequence

    def close(self):
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class UdpStateReceiver:
    """A bound UDP socket for Subscribe(udp_peer=receiver.peer); recv() answers a State."""

    def __init__(self, host="127.0.0.1", port=0):
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind((host, port))
        h, p = self._sock.getsockname()
        self.peer = "%s:%d" % (h, p)

    def recv(self, timeout=1.0):
        self._sock.settimeout(timeout)
        try:
            data, _addr = self._sock.recvfrom(65536)
        except socket.timeout:
            return None
        msg = pb.StateFrame()
        msg.ParseFromString(data)
        return State(msg)

    def close(self):
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
