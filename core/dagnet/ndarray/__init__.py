"""``dagnet.nd``: the asynchronous NDArray and a function for every registered operator.

>>> import dagnet as mx
>>> x = mx.nd.array([[1, 2], [3, 4]])
>>> y = x * 2 + 1            # pushed to the engine; returns at once
>>> y.asnumpy()              # waits for the values
array([[3., 5.],
       [7., 9.]], dtype=float32)

Every operator registered by a plugin is ``dagnet.nd.<name>`` (looked up on
first use), with MXNet's call convention; the modules ``nd._internal``,
``nd.op``, ``nd.contrib``, ``nd.linalg`` and ``nd.image`` hold them under MXNet's
namespaces, and ``nd.random`` has the samplers.  The
names below are the helpers that are not single operators.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..runtime import current_engine, flush_graveyard, is_training, set_training
from . import _internal as _internal  # noqa: F401 - mx.nd._internal, MXNet's namespace
from . import contrib, image, linalg, op, random, sparse
from ._axes import moveaxis, onehot_encode
from ._creation import (
    DEFAULT_DTYPE,
    arange,
    array,
    empty,
    eye,
    from_numpy,
    full,
    linspace,
    ones,
    zeros,
)
from ._dlpack import DLPackError, from_dlpack, to_dlpack_for_read, to_dlpack_for_write
from ._frontend import Namespace, OpFunction, UnknownOperatorError
from ._frontend import function as _function
from ._indexing import is_basic_key
from ._invoke import PreparedCall, assign, copy_function, invoke, prepared, push_copy
from ._io import NDArrayFileError, load, load_frombuffer, save
from ._ndarray import NDArray, new_array, wrap_chunk
from ._numpy_style import histogram, split_v2, split_v2_params
from ._ufunc import (
    add,
    divide,
    equal,
    greater,
    greater_equal,
    hypot,
    lesser,
    lesser_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    modulo,
    multiply,
    not_equal,
    power,
    subtract,
    true_divide,
)
from .sparse import BaseSparseNDArray, CSRNDArray, RowSparseNDArray

__all__ = [
    "add", "arange", "array", "assign", "BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray",
    "sparse", "concatenate", "contrib", "DEFAULT_DTYPE", "divide",
    "DLPackError", "empty", "equal", "eye", "from_dlpack", "from_numpy", "full", "greater",
    "greater_equal", "histogram", "hypot",
    "image", "invoke", "is_basic_key", "is_training", "lesser", "lesser_equal", "linalg",
    "linspace", "load", "load_frombuffer", "logical_and", "logical_or", "logical_xor", "maximum",
    "minimum", "modulo", "moveaxis", "multiply", "Namespace", "NDArray", "ndarray",
    "NDArrayFileError",
    "new_array", "not_equal", "onehot_encode", "ones", "op", "OpFunction", "power", "prepared",
    "PreparedCall", "push_copy", "copy_function", "random", "save", "set_training", "split_v2",
    "split_v2_params", "subtract", "utils",
    "to_dlpack_for_read", "to_dlpack_for_write", "true_divide", "UnknownOperatorError",
    "waitall", "wrap_chunk", "zeros",
]



def concatenate(arrays: list[NDArray], axis: int = 0, always_copy: bool = True) -> NDArray:
    """MXNet's older name for ``concat(*arrays, dim=axis)`` (one array is returned as is
    unless ``always_copy``)."""
    if not always_copy and len(arrays) == 1:
        return arrays[0]
    return _function("concat")(*arrays, dim=axis)


def waitall() -> None:
    """Wait until every pushed operation has finished; raise the first failure not yet raised.

    Storage of arrays that died before the call is back in its pool afterwards.
    """
    flush_graveyard()
    current_engine().wait_for_all()


_NUMPY_NAMESPACES = {"np": "numpy", "numpy": "numpy", "npx": "numpy_extension",
                     "numpy_extension": "numpy_extension"}


def __getattr__(name: str) -> Any:
    # Only names not defined above get here: the registered operators.  The function is
    # kept as a module attribute so the next lookup is a plain one; it finds its operator
    # by name at each call, so a rebuilt registry is still followed.
    if name in ("ndarray", "utils"):
        # MXNet's modules of helpers (GluonNLP checks isinstance(x, mx.nd.ndarray.NDArray)),
        # imported here: they re-export this module's names.
        return importlib.import_module(f"{__name__}.{name}")
    if name in _NUMPY_NAMESPACES:
        # MXNet's mx.nd.np / mx.nd.npx: the functions hybrid_forward reaches as F.np and
        # F.npx when F is mx.nd (the NumPy interface is built on this package)
        return importlib.import_module(f"dagnet.{_NUMPY_NAMESPACES[name]}")
    if name == "CachedOp":  # MXNet's mx.nd.CachedOp runs a symbol through the executor
        from ..executor import CachedOp

        return CachedOp
    if name.startswith("__"):
        raise AttributeError(f"module 'dagnet.ndarray' has no attribute {name!r}")
    fn = globals()[name] = _function(name)
    return fn


def __dir__() -> list[str]:
    from .. import plugins

    return sorted(set(globals()) | set(plugins.ops()))
