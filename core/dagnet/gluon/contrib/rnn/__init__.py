"""``mx.gluon.contrib.rnn``: ``LSTMPCell`` (an LSTM whose recurrent state is a projection of
its hidden state), ``VariationalDropoutCell`` (one dropout mask for every step) and the
convolutional RNN, LSTM and GRU cells in 1, 2 and 3 dimensions; ``dynamic_unroll`` runs a
cell over a sequence as one ``foreach`` loop."""

from __future__ import annotations

from .conv_rnn_cell import (
    Conv1DGRUCell,
    Conv1DLSTMCell,
    Conv1DRNNCell,
    Conv2DGRUCell,
    Conv2DLSTMCell,
    Conv2DRNNCell,
    Conv3DGRUCell,
    Conv3DLSTMCell,
    Conv3DRNNCell,
)
from .rnn_cell import LSTMPCell, VariationalDropoutCell, dynamic_unroll

__all__ = ["LSTMPCell", "VariationalDropoutCell", "Conv1DRNNCell", "Conv2DRNNCell",
           "Conv3DRNNCell", "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell", "dynamic_unroll"]
