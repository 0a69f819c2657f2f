"""``mx.rnn``: symbolic recurrent cells, the bucketing sentence iterator and RNN
checkpoints (MXNet 1.x's ``mxnet.rnn``)."""

from __future__ import annotations

from .conv_rnn_cell import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .fused_init import FusedRNN
from .io import BucketSentenceIter, encode_sentences
from .rnn import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .rnn_cell import (
    BaseRNNCell,
    BidirectionalCell,
    DropoutCell,
    FusedRNNCell,
    GRUCell,
    LSTMCell,
    ModifierCell,
    ResidualCell,
    RNNCell,
    RNNCellError,
    RNNParams,
    SequentialRNNCell,
    ZoneoutCell,
)

__all__ = ["BaseConvRNNCell", "BaseRNNCell", "BidirectionalCell", "BucketSentenceIter",
           "ConvGRUCell", "ConvLSTMCell", "ConvRNNCell", "DropoutCell", "FusedRNN",
           "FusedRNNCell", "GRUCell", "LSTMCell", "ModifierCell", "RNNCell", "RNNCellError",
           "RNNParams", "ResidualCell", "SequentialRNNCell", "ZoneoutCell",
           "do_rnn_checkpoint", "encode_sentences", "load_rnn_checkpoint",
           "save_rnn_checkpoint"]
