"""``dagnet.autograd``: MXNet 1.x imperative differentiation.

>>> import dagnet as mx
>>> x = mx.nd.array([1.0, 2.0, 3.0])
>>> x.attach_grad()
>>> with mx.autograd.record():
...     y = (x * x).sum()
>>> y.backward()
>>> x.grad.asnumpy()
array([2., 4., 6.], dtype=float32)

Inside ``record()`` every operator call with an input in a graph (a variable
from ``attach_grad``/``mark_variables``, or an earlier recorded output) is
recorded; ``backward``/``grad`` then push each operator's registered backward
operator -- the same gradient rules the executor uses -- through the engine.
Training mode (``record()``, ``train_mode()``) is what kernels see as
``OpContext.is_train``.  ``Function`` subclasses add differentiable functions
with a hand-written ``backward``.  ``get_symbol`` turns a recorded computation
into a Symbol.  ``grad(..., create_graph=True)`` records the backward pass, so
gradients can be differentiated again (higher-order gradients) through every
operator whose backward operator declares a gradient rule of its own (a
``ComposedGradient``: the element-wise unary, binary and scalar families,
``add_n``, ``FullyConnected``, ``Dropout``).
"""

from __future__ import annotations

from .. import runtime as _runtime
from ..ndarray import NDArray
from ..symbol import Symbol
from . import _views
from ._backward import backward, grad
from ._errors import (
    AutogradArgumentError,
    AutogradError,
    HigherOrderGradientError,
    NotDifferentiableError,
)
from ._function import Function
from ._graph import host_read, mark_variables, record_call, traced_write
from ._mode import (
    is_recording,
    is_training,
    pause,
    predict_mode,
    record,
    set_recording,
    set_training,
    train_mode,
)
from ._symbolic import get_symbol
from ._trace import Tracer, active_tracer

__all__ = [
    "AutogradArgumentError", "AutogradError", "Function", "HigherOrderGradientError",
    "NotDifferentiableError", "backward", "grad", "is_recording", "is_training",
    "mark_variables", "pause", "predict_mode", "record", "set_recording", "set_training",
    "train_mode", "get_symbol", "Tracer", "active_tracer",
    # MXNet's autograd module has these two among its public names, and code reaches
    # them through ``from mxnet.autograd import *``
    "NDArray", "Symbol",
]

_runtime.install_recorder(record_call, _views, backward, host_read, traced_write)
