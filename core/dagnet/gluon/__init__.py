"""``mx.gluon``: MXNet 1.x's high-level interface -- parameters, blocks (imperative,
hybridizable into a cached graph, or made from a symbol), layers (``gluon.nn``),
losses, the ``Trainer`` and helpers.

>>> import dagnet as mx
>>> from dagnet import gluon
>>> net = gluon.nn.Dense(2, in_units=3)
>>> net.initialize(mx.init.One())
>>> net(mx.nd.ones((1, 3))).asnumpy()
array([[3., 3.]], dtype=float32)
"""

from __future__ import annotations

from . import contrib, data, loss, model_zoo, nn, rnn, utils
from ._errors import DeferredInitializationError
from .block import Block, HybridBlock, SymbolBlock
from .cached_op import CachedOp
from .parameter import Constant, Parameter, ParameterDict
from .trainer import Trainer

__all__ = ["Block", "CachedOp", "Constant", "DeferredInitializationError", "HybridBlock",
           "Parameter", "ParameterDict", "SymbolBlock", "Trainer", "contrib", "data", "loss",
           "model_zoo", "nn", "rnn", "utils"]
