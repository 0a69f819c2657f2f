"""MXNet's ``mx.contrib``: the older autograd interface (:mod:`.autograd`), automatic
mixed precision (:mod:`.amp`), and the contrib operators as ``contrib.nd`` /
``contrib.sym`` (the ``_contrib_*`` operators, also ``mx.nd.contrib`` and
``mx.sym.contrib``).

Also token vocabularies and embeddings (:mod:`.text`).  MXNet 1.x's ``contrib.onnx``,
``contrib.tensorboard``, ``contrib.quantization`` and ``contrib.svrg_optimization`` are not
provided.
"""

from .. import ndarray as _ndarray
from .. import symbol as _symbol
from . import amp, autograd, text

ndarray = nd = _ndarray.contrib
symbol = sym = _symbol.contrib

__all__ = ["amp", "autograd", "nd", "ndarray", "sym", "symbol", "text"]
