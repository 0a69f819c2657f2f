"""MXNet's ``mx.contrib``: the older autograd interface (:mod:`.autograd`), automatic
mixed precision (:mod:`.amp`), ONNX import (:mod:`.onnx`), and the contrib operators as
``contrib.nd`` / ``contrib.sym`` (the ``_contrib_*`` operators, also ``mx.nd.contrib``
and ``mx.sym.contrib``).

MXNet 1.x's ``contrib.tensorboard``, ``contrib.text``, ``contrib.quantization`` and
``contrib.svrg_optimization`` are not provided.
"""

from .. import ndarray as _ndarray
from .. import symbol as _symbol
from . import amp, autograd, onnx

ndarray = nd = _ndarray.contrib
symbol = sym = _symbol.contrib

__all__ = ["amp", "autograd", "nd", "ndarray", "onnx", "sym", "symbol"]
