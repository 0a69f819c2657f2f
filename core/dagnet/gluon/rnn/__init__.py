"""``gluon.rnn``: recurrent cells (one step as a Block, ``unroll`` over sequences) and
the fused recurrent layers ``RNN``, ``LSTM`` and ``GRU``."""

from __future__ import annotations

from .rnn_cell import (
    BidirectionalCell,
    DropoutCell,
    GRUCell,
    HybridRecurrentCell,
    HybridSequentialRNNCell,
    LSTMCell,
    ModifierCell,
    RecurrentCell,
    RecurrentCellError,
    ResidualCell,
    RNNCell,
    SequentialRNNCell,
    ZoneoutCell,
)
from .rnn_layer import GRU, LSTM, RNN

__all__ = ["GRU", "LSTM", "RNN", "BidirectionalCell", "DropoutCell", "GRUCell",
           "HybridRecurrentCell", "HybridSequentialRNNCell", "LSTMCell", "ModifierCell",
           "RNNCell", "RecurrentCell", "RecurrentCellError", "ResidualCell",
           "SequentialRNNCell", "ZoneoutCell"]
