"""The ``mx.npx`` operator functions: MXNet's legacy operators with np-array results,
plus ``save``, ``load`` and ``waitall``."""

from __future__ import annotations

from typing import Any

from .. import ndarray as nd
from ..ndarray import NDArray
from ..numpy import as_np_ndarray

__all__ = ["OPERATORS", "operator_function", "reshape", "save", "load", "waitall"]

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


def reshape(a: Any, newshape: Any, reverse: bool = False, order: str = "C") -> Any:
    """``a`` with shape ``newshape`` in MXNet's ``npx.reshape`` codes, read left to right
    (right to left with ``reverse``): a size; ``-1`` inferred; ``-2`` this input dimension;
    ``-3`` drop this input dimension (of size 1); ``-4`` every remaining input dimension;
    ``-5`` the product of the next two input dimensions; ``-6`` this input dimension split
    into the two sizes that follow (one may be ``-1``)."""
    from .. import numpy as mnp

    shape = _npx_shape(tuple(a.shape), tuple(int(d) for d in newshape), reverse)
    return mnp.reshape(a, shape, order=order)


def _npx_shape(source: tuple[int, ...], codes: tuple[int, ...], reverse: bool) -> tuple:
    if reverse:
        return _npx_shape(source[::-1], codes[::-1], False)[::-1]  # -6 sizes then precede
    out: list[int] = []
    at, j = 0, 0

    def dim() -> int:
        if at >= len(source):
            raise ValueError(f"npx.reshape: {codes} reads more dimensions than the input "
                             f"shape {source} has")
        return source[at]

    while j < len(codes):
        code = codes[j]
        if code >= 0 or code == -1:
            out.append(code)
            at += 1
        elif code == -2:
            out.append(dim())
            at += 1
        elif code == -3:
            if dim() != 1:
                raise ValueError(f"npx.reshape: -3 drops input dimension {at} of {source}, "
                                 f"which must be 1")
            at += 1
        elif code == -4:
            out.extend(source[at:])
            at = len(source)
        elif code == -5:
            first = dim()
            at += 1
            out.append(first * dim())
            at += 1
        elif code == -6:
            if j + 2 >= len(codes):
                raise ValueError(f"npx.reshape: -6 in {codes} needs the two sizes after it")
            whole, (d1, d2) = dim(), codes[j + 1:j + 3]
            d1 = whole // d2 if d1 == -1 else d1
            d2 = whole // d1 if d2 == -1 else d2
            out += [d1, d2]
            at += 1
            j += 2
        else:
            raise ValueError(f"npx.reshape: unknown code {code} in {codes}")
        j += 1
    return tuple(out)


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
