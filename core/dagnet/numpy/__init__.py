"""``dagnet.numpy`` (``mx.np``): MXNet 1.x's NumPy-compatible arrays and functions.

>>> import dagnet as mx
>>> x = mx.np.array([[1, 2], [3, 4]])
>>> (x @ x.T).sum()
array(52.)
>>> x[1, 0], x.dtype
(array(3.), dtype('float32'))

:class:`ndarray` is a :class:`dagnet.ndarray.NDArray` with NumPy's semantics
(0-d and zero-size shapes, ``numpy.dtype`` objects, bool comparisons, NumPy's
indexing and broadcasting); every function here returns ``ndarray`` and runs
the registered operators through the engine, under autograd like any NDArray.

This is a documented subset of MXNet 1.9.1's ``mx.np``: creation (``array``,
``zeros``, ``arange``, ``linspace``, ``eye`` ...), element-wise math, the
reductions, shape changes and joins, ``dot``/``matmul``/``tensordot`` and
``random``.  A NumPy name outside it raises :class:`NotProvidedError` (an
``AttributeError``) saying so.
"""

from __future__ import annotations

import builtins as _builtins
from typing import Any

import numpy as _onp

from . import _elementwise, linalg, random
from . import _internal as _internal  # mx.np._internal, MXNet's namespace
from ._array import NotProvidedError, NumpyError, OrderNotSupportedError, as_np_ndarray, ndarray
from ._creation import (
    arange,
    array,
    asarray,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from ._diagonals import diag, diag_indices_from, diagflat, diagonal, trace, tril
from ._differences import cumsum, diff, ediff1d
from ._einsum import einsum
from ._elementwise import UNARY as _UNARY
from ._elementwise import (
    add,
    divide,
    equal,
    floor_divide,
    greater,
    greater_equal,
    hypot,
    less,
    less_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    power,
    remainder,
    subtract,
    true_divide,
)
from ._index_grids import indices, unravel_index
from ._insert_delete import delete, insert
from ._joins_and_splits import append, column_stack, dsplit, hsplit, vsplit
from ._linalg import dot, inner, matmul, outer, tensordot, vdot
from ._manipulation import (
    array_split,
    broadcast_arrays,
    broadcast_to,
    clip,
    concatenate,
    dstack,
    expand_dims,
    flip,
    hstack,
    moveaxis,
    ravel,
    repeat,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    take,
    tile,
    transpose,
    vstack,
    where,
)
from ._padding import pad
from ._rearranging import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    fliplr,
    flipud,
    meshgrid,
    resize,
    roll,
    rot90,
    shape,
)
from ._reductions import all, amax, amin, any, argmax, argmin, max, mean, min, prod, std, sum, var

# the unary math functions (exp, log, sqrt, tanh, ...), one per operator
globals().update({name: getattr(_elementwise, name) for name in _UNARY})

# NumPy's dtypes and constants, as mx.np names them
bool_ = _onp.bool_
bool = _builtins.bool  # noqa: A001 - mx.np.bool is Python's bool, as in MXNet
int16, uint16, uint32, uint64 = _onp.int16, _onp.uint16, _onp.uint32, _onp.uint64
float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
int8, int32, int64, uint8 = _onp.int8, _onp.int32, _onp.int64, _onp.uint8
pi, e, inf, nan, newaxis = _onp.pi, _onp.e, _onp.inf, _onp.nan, None

__all__ = [
    "add", "all", "amax", "amin", "any", "arange", "argmax", "argmin", "array", "array_split",
    "as_np_ndarray", "asarray", "bool", "bool_", "broadcast_arrays", "broadcast_to", "clip",
    "concatenate", "divide", "dot", "dstack", "e", "empty", "empty_like", "equal",
    "expand_dims", "eye",
    "flip", "float16", "float32", "float64", "floor_divide", "full", "full_like", "greater",
    "greater_equal", "hstack", "hypot", "identity", "inf", "inner", "int16", "int32", "int64",
    "int8", "linalg",
    "less", "less_equal", "linspace", "logical_and", "logical_or", "logical_xor", "matmul",
    "max", "maximum", "mean", "min", "minimum", "mod", "moveaxis", "multiply", "nan",
    "ndarray", "newaxis", "not_equal", "NotProvidedError", "NumpyError", "ones", "ones_like",
    "OrderNotSupportedError",
    "outer", "pi", "power", "prod", "random", "ravel", "remainder", "repeat", "reshape",
    "split", "squeeze", "stack", "std", "subtract", "sum", "swapaxes", "take", "tensordot",
    "tile", "transpose", "true_divide", "uint16", "uint32", "uint64", "uint8", "var", "vdot",
    "vstack", "where", "zeros", "zeros_like",
    # shapes, diagonals, differences, index grids, einsum (MXNet's test_numpy_op, issue 25)
    "append", "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "cumsum", "delete",
    "diag", "diag_indices_from", "diagflat", "diagonal", "diff", "dsplit", "ediff1d",
    "einsum", "fliplr", "flipud", "hsplit", "indices", "insert", "meshgrid", "pad", "resize",
    "roll", "rot90", "shape", "trace", "tril", "unravel_index", "vsplit",
    *sorted(_UNARY),
]


# math, sorting and statistics (MXNet's test_numpy_op.py, issue 25)
from . import _math, _memory, _statistics, _windows  # noqa: E402
from ._math import *  # noqa: E402, F403
from ._memory import *  # noqa: E402, F403
from ._sorting import argsort, nonzero, sort, unique  # noqa: E402
from ._statistics import *  # noqa: E402, F403
from ._windows import *  # noqa: E402, F403

__all__ += [*_math.__all__, *_memory.__all__, *_statistics.__all__, *_windows.__all__,
            "argsort", "nonzero", "sort", "unique"]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(f"module 'dagnet.numpy' has no attribute {name!r}")
    known = " (NumPy has it)" if hasattr(_onp, name) else ""
    raise NotProvidedError(f"dagnet.numpy does not provide {name!r} yet{known}; it has "
                           f"{len(__all__)} of NumPy's names (see dagnet.numpy.__all__)")
