"""Optimizers (MXNet's ``mx.optimizer``): the rules that turn a gradient into a
weight update, and the :class:`Updater` that keeps each weight's state.

Most updates run through a registered update operator (``sgd_update``,
``adam_update``, ``ftml_update`` ...) with ``out=weight``, so the weight and the
optimizer state are mutated in place through the engine, asynchronously, like any
other operator; the rest are written with NDArray operations::

    import dagnet as mx
    opt = mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9)
    updater = mx.optimizer.get_updater(opt)
    updater(0, grad, weight)        # index, gradient, weight (NDArrays)

- :mod:`._base`: :class:`Optimizer` (rates, decay, multipliers, update counts,
  multi-precision), the registry (:func:`register`, :func:`create`), :class:`Updater`;
- :mod:`.sgd`: SGD, NAG, Signum, SGLD;
- :mod:`.adaptive`: Adam, Adamax, Nadam, AdaGrad, AdaDelta, RMSProp, FTML, Ftrl, LAMB;
- :mod:`.contrib` (``mx.optimizer.contrib``): GroupAdaGrad.
"""

from . import contrib
from ._base import (
    LRSchedulerConflict,
    Optimizer,
    UnknownOptimizerError,
    Updater,
    create,
    get_updater,
    register,
)
from .adaptive import FTML, LAMB, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, RMSProp
from .sgd import NAG, SGD, SGLD, Signum

__all__ = [
    "Optimizer", "Updater", "register", "create", "get_updater", "UnknownOptimizerError",
    "LRSchedulerConflict", "SGD", "NAG", "Signum", "SGLD", "Adam", "Adamax", "Nadam",
    "AdaGrad", "AdaDelta", "RMSProp", "FTML", "Ftrl", "LAMB", "contrib",
]
