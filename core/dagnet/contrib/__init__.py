"""MXNet's ``mx.contrib``: the older autograd interface (:mod:`.autograd`), automatic
mixed precision (:mod:`.amp`), ONNX import (:mod:`.onnx`), quantization's calibration
(:mod:`.quantization`, also ``contrib.quant``), and the contrib operators as
``contrib.nd`` / ``contrib.sym`` (the ``_contrib_*`` operators, also ``mx.nd.contrib``
and ``mx.sym.contrib``).

Also token vocabularies and embeddings (:mod:`.text`) and SVRG training
(:mod:`.svrg_optimization`).  MXNet 1.x's ``contrib.tensorboard`` and quantization's
graph rewriting (``quantize_model``, ``quantize_net``) are not provided.
"""

from __future__ import annotations

import importlib
from typing import Any

from .. import ndarray as _ndarray
from .. import symbol as _symbol
from . import amp, autograd, onnx, quantization, text

ndarray = nd = _ndarray.contrib
symbol = sym = _symbol.contrib
quant = quantization


def __getattr__(name: str) -> Any:
    # imported on first use, as MXNet leaves it to an explicit import: it registers
    # optimizers of its own
    if name == "svrg_optimization":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["amp", "autograd", "nd", "ndarray", "onnx", "quant", "quantization",
           "svrg_optimization",
           "sym", "symbol", "text"]
