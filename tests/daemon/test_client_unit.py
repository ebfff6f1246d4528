"""The Python client without a daemon: framing, a fake in-process server, StateSpace."""

import math
import socket
import threading

import numpy as np
import pytest
from google.protobuf.internal import decoder as pb_decoder
from google.protobuf.internal import encoder as pb_encoder

import partita
from partita import pb


# -- framing ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**31 - 1, 2**32,
                                   2**63 - 1, 2**64 - 1])
def test_varint_matches_protobuf_runtime(value):
    # The protobuf runtime's own varint encoder/decoder is the independent reference.
    ours = partita.encode_varint(value)
    assert ours == pb_encoder._VarintBytes(value)
    assert pb_decoder._DecodeVarint(ours, 0) == (value, len(ours))
    assert partita.framing.decode_varint(ours) == (value, len(ours))


def sample_messages():
    msgs = []
    for i in range(5):
        sm = pb.ServerMessage()
        sm.response.id = i + 1
        sm.response.state.coordinates.extend([0.1 * i, -2.5, 1e300])
        msgs.append(sm.SerializeToString())
    msgs.append(b"")                                   # an empty message is a valid frame
    msgs.append(bytes(range(256)) * 3)                 # a length needing a two-byte varint
    return msgs


def test_decoder_every_split_point():
    msgs = sample_messages()
    stream = b"".join(partita.encode_frame(m) for m in msgs)
    for cut in range(len(stream) + 1):
        dec = partita.FrameDecoder()
        out = dec.feed(stream[:cut]) + dec.feed(stream[cut:])
        assert out == msgs, "split at %d" % cut
        assert dec.pending() == 0


def test_decoder_byte_by_byte():
    msgs = sample_messages()
    stream = b"".join(partita.encode_frame(m) for m in msgs)
    dec = partita.FrameDecoder()
    out = []
    for b in stream:
        out += dec.feed(bytes([b]))
    assert out == msgs


def test_decoder_refuses_oversize_before_payload():
    dec = partita.FrameDecoder(max_frame=1000)
    with pytest.raises(partita.FramingError):
        dec.feed(partita.encode_varint(1001))         # only the header: no payload sent yet
    assert partita.FrameDecoder(max_frame=1000).feed(partita.encode_frame(b"x" * 1000))


def test_decoder_refuses_overlong_varint():
    with pytest.raises(partita.FramingError):
        partita.FrameDecoder().feed(b"\xff" * 11)


# -- a fake server: the client's request/response matching and event queueing ---------------

class FakeServer(threading.Thread):
    """Answers Requests like a tiny daemon; sends one StateFrame event before each answer."""

    def __init__(self):
        super().__init__(daemon=True)
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(1)
        self.lsock.settimeout(5.0)
        self.address = "127.0.0.1:%d" % self.lsock.getsockname()[1]
        self.requests = []

    def run(self):
        conn, _ = self.lsock.accept()
        conn.settimeout(5.0)
        dec = partita.FrameDecoder()
        with conn:
            while True:
                try:
                    data = conn.recv(4096)
                except OSError:
                    return
                if not data:
                    return
                for payload in dec.feed(data):
                    req = pb.Request()
                    req.ParseFromString(payload)
                    self.requests.append(req)
                    out = b"".join(partita.encode_frame(m.SerializeToString())
                                   for m in self.answer(req))
                    # Dribble the bytes one at a time to exercise the client's reassembly.
                    for i in range(len(out)):
                        conn.sendall(out[i:i + 1])

    @staticmethod
    def answer(req):
        ev = pb.ServerMessage()
        ev.event.frame.model = "m"
        ev.event.frame.step = req.id
        resp = pb.ServerMessage()
        r = resp.response
        r.id = req.id
        op = req.WhichOneof("op")
        if op == "get_state":
            if req.get_state.model != "m":
                r.status.code = pb.Status.NOT_FOUND
                r.status.message = "no model %s" % req.get_state.model
            else:
                r.state.model = "m"
                r.state.coordinates.extend([1.0, 2.0])
                r.state.coordinate_names.extend(["a", "b"])
                r.state.energy.total = 3.0
        elif op == "linearize":
            r.linearize.states.extend(["q", "q.rate"])
            r.linearize.inputs.append("u")
            r.linearize.a.rows, r.linearize.a.cols = 2, 2
            r.linearize.a.data.extend([0, 1, -4, 0])
            r.linearize.b.rows, r.linearize.b.cols = 2, 1
            r.linearize.b.data.extend([0, 1])
            r.linearize.c.rows, r.linearize.c.cols = 1, 2
            r.linearize.c.data.extend([1, 0])
            r.linearize.d.rows, r.linearize.d.cols = 1, 1
            r.linearize.d.data.append(0)
        return [ev, resp]


def test_fake_server_roundtrip():
    srv = FakeServer()
    srv.start()
    with partita.Client(srv.address, timeout=5.0) as c:
        st = c.get_state("m")
        assert isinstance(st.coordinates, np.ndarray)
        assert st.coordinates.tolist() == [1.0, 2.0]
        assert st.coordinate("b") == 2.0
        assert st.energy["total"] == 3.0
        with pytest.raises(partita.PartitaError) as err:
            c.get_state("other")
        assert err.value.code == pb.Status.NOT_FOUND
        assert err.value.code_name == "NOT_FOUND"
        ss = c.linearize("m")
        assert ss.A.tolist() == [[0, 1], [-4, 0]]
        assert ss.B.shape == (2, 1) and ss.C.shape == (1, 2) and ss.D.shape == (1, 1)
        # One event was queued before each of the three answers, in order.
        frames = list(c.frames(timeout=0.5))
        assert [f.step for f in frames] == [r.id for r in srv.requests]
    srv.join(5.0)
    ids = [r.id for r in srv.requests]
    assert len(set(ids)) == 3


def test_timeout_without_answer():
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    try:
        with partita.Client("127.0.0.1:%d" % lsock.getsockname()[1], timeout=0.2) as c:
            with pytest.raises(TimeoutError):
                c.hello()
            assert c.poll_frame(0) is None
    finally:
        lsock.close()


# -- StateSpace ------------------------------------------------------------------------------

def test_expm_rotation_and_nilpotent():
    th = 2.7
    rot = partita.expm(np.array([[0.0, -th], [th, 0.0]]) * 1.0)
    assert np.allclose(rot, [[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]],
                       atol=1e-13)
    n = np.array([[0.0, 3.0], [0.0, 0.0]])          # exp(N) = I + N exactly
    assert np.allclose(partita.expm(n), [[1.0, 3.0], [0.0, 1.0]], atol=1e-14)
    big = np.diag([-30.0, 5.0])
    assert np.allclose(partita.expm(big), np.diag(np.exp([-30.0, 5.0])), rtol=1e-12)


def test_oscillator_eigen_and_free_response():
    wn, zeta = 3.0, 0.1
    ss = partita.StateSpace([[0, 1], [-wn * wn, -2 * zeta * wn]], [[0], [1]],
                            states=["q", "q.rate"], inputs=["u"])
    wd = wn * math.sqrt(1 - zeta * zeta)
    eig = sorted(ss.eigenvalues(), key=lambda z: z.imag)
    assert np.allclose(eig, [complex(-zeta * wn, -wd), complex(-zeta * wn, wd)])
    lam, f_hz, z = ss.modes()[-1]
    assert f_hz == pytest.approx(wn / (2 * math.pi)) and z == pytest.approx(zeta)
    t, x, _y = ss.simulate(np.zeros(1), 0.01, x0=[1.0, 0.0], steps=300)
    exact = np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta * wn / wd * np.sin(wd * t))
    assert np.allclose(x[:, 0], exact, atol=1e-10)


def test_first_order_step_response():
    a = 2.0
    ss = partita.StateSpace([[-a]], [[1.0]], [[1.0]], [[0.5]], inputs=["u"])
    t, y = ss.step(3.0, 0.05, input="u")
    assert np.allclose(y[:, 0], (1 - np.exp(-a * t)) / a + 0.5, atol=1e-12)
