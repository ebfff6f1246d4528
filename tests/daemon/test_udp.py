"""UDP fast path: an InputFrame takes effect at the next step; stale sequence numbers are
dropped. Each check compares a model driven over UDP with a twin driven by SetInputs over TCP
(bit-identical states), and with the closed-form acceleration of the pendulum."""

import socket

import pytest

import partita
from conftest import DT, G, I_HINGE, L, M, WAIT, model_stats, pendulum_yaml, unique, wait_until
from partita import pb


def counters(client, model):
    ms = model_stats(client, model)
    return ms.udp_inputs, ms.stale_inputs


def send_and_settle(client, sender, model, values, sequence):
    """Send one datagram and wait (bounded) until the daemon has counted it: it counts every
    datagram on receipt, applied or why not (daemon/udp.c), so no sleep is needed."""
    before = udp_counts(client, model)
    sender.send(values, sequence=sequence)
    assert wait_until(lambda: udp_counts(client, model) != before, WAIT), "datagram not counted"


def test_udp_input_applies_at_next_step(daemon, client, twins):
    udp_model, ref = twins
    tau = 3.0
    with partita.UdpInputSender(daemon.udp, udp_model) as sender:
        send_and_settle(client, sender, udp_model, [tau], sequence=10)
        s = client.step(udp_model, 1)
        client.set_inputs(ref, {"tau_hinge": tau})
        r = client.step(ref, 1)
        assert s.coordinates.tolist() == r.coordinates.tolist()
        assert s.rates.tolist() == r.rates.tolist()
        # The torque acted in that very first step: qdot = (M G L + tau) / I_hinge * dt.
        assert s.rate("hinge") == pytest.approx((M * G * L + tau) / I_HINGE * DT, rel=1e-6)
        assert client.get_state(udp_model, fields=partita.FIELD_INPUTS).inputs.tolist() == [tau]
        assert counters(client, udp_model) == (1, 0)

        # Stale: a lower sequence number is dropped, the held input stays.
        send_and_settle(client, sender, udp_model, [-100.0], sequence=5)
        # Equal is stale too ("not greater than the last accepted one").
        send_and_settle(client, sender, udp_model, [-100.0], sequence=10)
        s = client.step(udp_model, 1)
        r = client.step(ref, 1)
        assert s.coordinates.tolist() == r.coordinates.tolist()
        assert s.rates.tolist() == r.rates.tolist()
        assert counters(client, udp_model) == (1, 2)

        # A newer frame by index wins again.
        send_and_settle(client, sender, udp_model, {0: -tau}, sequence=11)
        s = client.step(udp_model, 1)
        client.set_inputs(ref, by_index=[-tau])
        r = client.step(ref, 1)
        assert s.coordinates.tolist() == r.coordinates.tolist()
        assert s.rates.tolist() == r.rates.tolist()
        assert counters(client, udp_model) == (2, 2)


def test_udp_garbage_and_unknown_model_are_ignored(daemon, client, twins):
    udp_model, ref = twins
    host, port = daemon.udp.rsplit(":", 1)

    def refused():
        srv = client.stats().server
        return srv.udp_malformed, srv.udp_unknown_model, udp_counts(client, udp_model)

    m0, u0, c0 = refused()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as raw:
        raw.sendto(b"\xff\xfe garbage", (host, int(port)))
        raw.sendto(pb.InputFrame(model="no_such", sequence=1, values=[1.0])
                   .SerializeToString(), (host, int(port)))
        # Non-finite and out-of-range values change nothing either.
        raw.sendto(pb.InputFrame(model=udp_model, sequence=1, values=[float("nan")])
                   .SerializeToString(), (host, int(port)))
        raw.sendto(pb.InputFrame(model=udp_model, sequence=2, values=[1.0], index=[9])
                   .SerializeToString(), (host, int(port)))
    # every datagram counted by why it was refused (no sleep: the counters say they were read)
    c1 = (c0[0], c0[1], c0[2] + 2, c0[3], c0[4])
    assert wait_until(lambda: refused() == (m0 + 1, u0 + 1, c1), WAIT), (refused(), m0, u0, c0)
    s = client.step(udp_model, 3)
    r = client.step(ref, 3)
    assert s.coordinates.tolist() == r.coordinates.tolist()
    assert client.hello().protocol_version == partita.PROTOCOL_VERSION


def test_udp_state_frames_to_peer(client, twins):
    udp_model, _ref = twins
    with partita.UdpStateReceiver() as rx:
        sub = client.subscribe(udp_model, every_k=2, udp_peer=rx.peer)
        final = client.step(udp_model, 6)
        frames = [rx.recv(2.0) for _ in range(3)]
        assert all(f is not None for f in frames)
        assert [f.step for f in frames] == [2, 4, 6]
        assert all(f.subscription == sub.subscription for f in frames)
        assert frames[-1].coordinates.tolist() == final.coordinates.tolist()
        client.unsubscribe(sub.subscription)


def test_udp_peer_must_be_the_clients_own_host(daemon, client, twins):
    # A Subscribe naming any udp_peer made the daemon stream to that address: anyone who
    # could reach it could aim it at a third party. Only the client's own host is accepted.
    udp_model, _ref = twins
    with pytest.raises(partita.PartitaError) as e:
        client.subscribe(udp_model, every_k=1, udp_peer="127.0.0.2:9")
    assert e.value.code == pb.Status.INVALID_ARGUMENT and "own host" in e.value.message
    assert model_stats(client, udp_model).subscribers == 0


def test_udp_stream_stops_with_its_connection(daemon, client, twins):
    udp_model, _ref = twins
    with partita.UdpStateReceiver() as rx:
        with daemon.client() as other:
            other.subscribe(udp_model, every_k=1, udp_peer=rx.peer)
            client.step(udp_model, 2)
            assert rx.recv(WAIT) is not None and rx.recv(WAIT) is not None
        # the subscribing connection is gone: so is its stream
        assert wait_until(lambda: model_stats(client, udp_model).subscribers == 0, WAIT)
        client.step(udp_model, 5)
        assert rx.recv(0.3) is None


# -- sessions and counters -------------------------------------------------------------------

def udp_counts(client, model):
    ms = model_stats(client, model)
    return (ms.udp_inputs, ms.stale_inputs, ms.malformed_inputs, ms.unauthorized_inputs,
            ms.dropped_inputs)


def applied_input(client, model):
    return client.get_state(model, fields=partita.FIELD_INPUTS).inputs.tolist()[0]


def settle(client, model, expect_counts):
    assert wait_until(lambda: udp_counts(client, model) == expect_counts, WAIT), \
        (udp_counts(client, model), expect_counts)


def test_restarted_sender_is_applied(daemon, client, twins):
    udp_model, _ref = twins
    with partita.UdpInputSender(daemon.udp, udp_model) as old:
        old.send([1.0], sequence=1000)
    settle(client, udp_model, (1, 0, 0, 0, 0))
    # The rig restarts: a new sender numbers from 1 again, and is heard.
    with partita.UdpInputSender(daemon.udp, udp_model) as new:
        new.send([2.0])
        settle(client, udp_model, (2, 0, 0, 0, 0))
        assert applied_input(client, udp_model) == 2.0
        new.send([3.0], sequence=1)        # duplicated
        new.send([4.0], sequence=5)
        new.send([5.0], sequence=3)        # reordered: older than 5
        settle(client, udp_model, (3, 2, 0, 0, 0))
        assert applied_input(client, udp_model) == 4.0


def test_poisoned_sequence_does_not_block(daemon, client, twins):
    udp_model, _ref = twins
    with partita.UdpInputSender(daemon.udp, udp_model) as tx:
        tx.send([1.0], sequence=1)
        tx.send([9.0], sequence=2**64 - 1)   # a jump beyond the window: dropped, not adopted
        tx.send([2.0], sequence=2)
    with partita.UdpInputSender(daemon.udp, udp_model) as evil:
        evil.send([9.0], sequence=2**64 - 1)  # a new session cannot start that high either
    settle(client, udp_model, (2, 2, 0, 0, 0))
    assert applied_input(client, udp_model) == 2.0
    with partita.UdpInputSender(daemon.udp, udp_model) as tx:
        tx.send([3.0])
    settle(client, udp_model, (3, 2, 0, 0, 0))
    assert applied_input(client, udp_model) == 3.0


def test_reset_starts_a_new_ordering(daemon, client, twins):
    udp_model, _ref = twins
    with partita.UdpInputSender(daemon.udp, udp_model, session=42) as tx:
        tx.send([1.0], sequence=7)
        settle(client, udp_model, (1, 0, 0, 0, 0))
        client.reset(udp_model)
        tx.send([2.0], sequence=1)           # same session, lower number: fine after Reset
        settle(client, udp_model, (2, 0, 0, 0, 0))
        assert applied_input(client, udp_model) == 2.0


def test_every_dropped_datagram_is_counted(daemon, client, twins):
    udp_model, _ref = twins
    host, port = daemon.udp.rsplit(":", 1)
    before = client.stats().server
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"\xff\xff\xff garbage", (host, int(port)))
        s.sendto(pb.InputFrame(model="nope", sequence=1, values=[1.0]).SerializeToString(),
                 (host, int(port)))
    with partita.UdpInputSender(daemon.udp, udp_model) as tx:
        tx.send([1.0, 2.0])                   # wrong count (one input)
        tx.send({3: 1.0})                      # index out of range
        tx.send([float("nan")])
        tx.send([5.0])
    settle(client, udp_model, (1, 0, 3, 0, 0))
    assert applied_input(client, udp_model) == 5.0
    after = client.stats().server
    assert after.udp_malformed == before.udp_malformed + 1
    assert after.udp_unknown_model == before.udp_unknown_model + 1
