"""The ``mx.npx`` operator functions: MXNet's legacy operators with np-array results,
plus ``save``, ``load`` and ``waitall``."""

from __future__ import annotations

from typing import Any

from .. import ndarray as nd
from ..ndarray import NDArray
from ..numpy import as_np_ndarray

__all__ = ["OPERATORS", "operator_function", "save", "load", "waitall"]

# npx name: the registered operator it calls
OPERATORS = {
    "activation": "Activation", "arange_like": "_contrib_arange_like",
    "batch_dot": "batch_dot", "batch_flatten": "Flatten", "batch_norm": "BatchNorm",
    "cast": "Cast", "constraint_check": "_npx_constraint_check",
    "convolution": "Convolution", "deconvolution": "Deconvolution",
    "dropout": "Dropout", "embedding": "Embedding", "erf": "erf", "erfinv": "erfinv",
    "fully_connected": "FullyConnected", "gamma": "gamma", "gammaln": "gammaln",
    "gather_nd": "gather_nd", "layer_norm": "LayerNorm", "leaky_relu": "LeakyReLU",
    "log_softmax": "log_softmax", "one_hot": "one_hot", "pick": "pick",
    "pooling": "Pooling", "relu": "relu", "reshape_like": "reshape_like", "rnn": "RNN",
    "roi_pooling": "ROIPooling", "sequence_mask": "SequenceMask",
    "shape_array": "shape_array", "sigmoid": "sigmoid", "slice": "slice",
    "smooth_l1": "smooth_l1", "softmax": "softmax", "topk": "topk",
}


def _as_np(result: Any) -> Any:
    if isinstance(result, NDArray):
        return as_np_ndarray(result)
    if isinstance(result, (list, tuple)):
        return type(result)(_as_np(r) for r in result)
    return result


def operator_function(name: str, op_name: str) -> Any:
    """``npx.<name>``: operator ``op_name`` with MXNet's arguments, np-array results."""
    def function(*args: Any, **kwargs: Any) -> Any:
        return _as_np(getattr(nd, op_name)(*args, **kwargs))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``npx.{name}``: the ``{op_name}`` operator (see "
                        f"``dagnet.nd.{op_name}``) with ``mx.np.ndarray`` results.")
    return function


def save(file: str, arr: Any) -> None:
    """Save an array, a list of arrays or a dict of name to array to ``file``
    (MXNet's ``.params`` format, as ``mx.nd.save``)."""
    nd.save(file, arr)


def load(file: str) -> Any:
    """The arrays :func:`save` wrote to ``file`` (a list or a dict), as np arrays."""
    loaded = nd.load(file)
    if isinstance(loaded, dict):
        return {name: as_np_ndarray(array) for name, array in loaded.items()}
    return _as_np(loaded)


def waitall() -> None:
    """Wait until every pushed operation has finished (``mx.nd.waitall``)."""
    nd.waitall()
