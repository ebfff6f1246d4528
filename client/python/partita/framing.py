"""Varint length-delimited framing (the protobuf "delimited" format), without I/O.

A frame is the message length as a base-128 varint followed by that many bytes. The decoder is
fed arbitrary chunks and hands out whole payloads; like the daemon's codec it checks the length
against a limit before buffering the payload, so a peer cannot make it allocate without bound.
"""

DEFAULT_MAX_FRAME = 64 * 1024 * 1024
_MAX_VARINT_BYTES = 10


class FramingError(Exception):
    """The byte stream is not a valid sequence of frames (bad varint or oversize length)."""


def encode_varint(value):
    if value < 0:
        raise ValueError("varint must be non-negative")
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_frame(payload):
    return encode_varint(len(payload)) + bytes(payload)


def decode_varint(buf, pos=0):
    """Return (value, next_pos), or None when buf ends before the varint does."""
    value = 0
    shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= len(buf):
            return None
        byte = buf[pos + i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos + i + 1
        shift += 7
    raise FramingError("length varint longer than %d bytes" % _MAX_VARINT_BYTES)


class FrameDecoder:
    """Feed bytes with feed(); iterate over the complete payloads it returns."""

    def __init__(self, max_frame=DEFAULT_MAX_FRAME):
        self.max_frame = max_frame
        self._buf = bytearray()

    def feed(self, data):
        self._buf += data
        frames = []
        pos = 0
        while True:
            head = decode_varint(self._buf, pos)
            if head is None:
                break
            length, start = head
            if length > self.max_frame:
                raise FramingError("frame of %d bytes exceeds the limit of %d"
                                   % (length, self.max_frame))
            if len(self._buf) - start < length:
                break
            frames.append(bytes(self._buf[start:start + length]))
            pos = start + length
        del self._buf[:pos]
        return frames

    def pending(self):
        """Bytes received but not yet part of a complete frame."""
        return len(self._buf)
