"""MXNet's ``mx.contrib``: the older autograd interface (:mod:`.autograd`), automatic
mixed precision (:mod:`.amp`), quantization's calibration (:mod:`.quantization`, also
``contrib.quant``), and the contrib operators as ``contrib.nd`` / ``contrib.sym`` (the
``_contrib_*`` operators, also ``mx.nd.contrib`` and ``mx.sym.contrib``).

MXNet 1.x's ``contrib.onnx``, ``contrib.tensorboard``, ``contrib.text``,
``contrib.svrg_optimization`` and quantization's graph rewriting (``quantize_model``,
``quantize_net``) are not provided.
"""

from .. import ndarray as _ndarray
from .. import symbol as _symbol
from . import amp, autograd, quantization

ndarray = nd = _ndarray.contrib
symbol = sym = _symbol.contrib
quant = quantization

__all__ = ["amp", "autograd", "nd", "ndarray", "quant", "quantization", "sym", "symbol"]
