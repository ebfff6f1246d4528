"""Partita multibody dynamics in Python: the engine in process (Model, Data) and the client
of partitad (Client).

    import partita
    m = partita.Model("configs/models/pendulum.yaml")
    m.step(100); print(m.state["hinge"])
    lin = m.linearize()                  # A, B, C, D (numpy), names python-control accepts

    with partita.Client("127.0.0.1:7450") as c:
        c.hello()
        info = c.load_model_file("configs/models/pendulum.yaml", mode="lockstep")
        print(c.step(info.name, 100).coordinates)
"""

from ._pb import pb
from .client import (DEFAULT_HOST, DEFAULT_PORT, FIELD_ACCELERATIONS, FIELD_ALL, FIELD_BODIES,
                     FIELD_CONTROLS, FIELD_COORDINATES, FIELD_DEFAULT, FIELD_ENERGY, FIELD_INPUTS,
                     FIELD_RATES, FIELD_RESIDUAL, PROTOCOL_VERSION, Client, ConnectionClosed,
                     PartitaError, State, matrix_to_numpy, mode_name, mode_value,
                     parse_address)
from .framing import FrameDecoder, FramingError, encode_frame, encode_varint
from .engine import Data, EngineError, Linearization, Model
from .recording import Recording, RecordingError, read_recording
from .statespace import (StateSpace, StepResponse, control_name, control_names, expm,
                         is_control_name)
from .udp import UdpInputSender, UdpStateReceiver

__all__ = [
    "Model", "Data", "Linearization", "EngineError", "StepResponse", "control_name",
    "control_names", "is_control_name",
    "pb", "Client", "PartitaError", "ConnectionClosed", "State", "StateSpace", "expm",
    "UdpInputSender", "UdpStateReceiver", "FrameDecoder", "FramingError", "encode_frame",
    "encode_varint", "matrix_to_numpy", "mode_name", "mode_value", "parse_address",
    "PROTOCOL_VERSION", "DEFAULT_HOST", "DEFAULT_PORT", "FIELD_COORDINATES", "FIELD_RATES",
    "FIELD_ACCELERATIONS", "FIELD_INPUTS", "FIELD_BODIES", "FIELD_ENERGY", "FIELD_RESIDUAL",
    "FIELD_DEFAULT", "FIELD_CONTROLS", "FIELD_ALL", "read_recording", "Recording", "RecordingError",
]
