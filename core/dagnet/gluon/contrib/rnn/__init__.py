"""``mx.gluon.contrib.rnn``: ``LSTMPCell`` (an LSTM whose recurrent state is a projection of
its hidden state) and ``VariationalDropoutCell`` (one dropout mask for every step)."""

from __future__ import annotations

from .rnn_cell import LSTMPCell, VariationalDropoutCell

__all__ = ["LSTMPCell", "VariationalDropoutCell"]
