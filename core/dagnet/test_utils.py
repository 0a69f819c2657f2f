"""MXNet's ``mx.test_utils`` for dagnet: comparisons, random inputs and gradient checks.

``check_symbolic_forward``, ``check_symbolic_backward`` and
``check_numeric_gradient`` take a symbol and run it through an executor, with
MXNet's signatures; ``check_op_numeric_gradient`` and ``check_consistency``
take an operator (its name or :class:`~dagnet.operator.Op`) with input arrays
and parameters, and run its kernels directly.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import numbers
import os
import platform
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

import dagnet as mx

from .context import Context
from .io import DataIter
from .ndarray import array
from .testing.generator_checks import (
    chi_square_check,
    gen_buckets_probs_with_ppf,
    mean_check,
    var_check,
    verify_generator,
)
from .util import getenv, setenv, use_np

__all__ = [
    # tolerances and dtypes
    "default_dtype",
    "default_rtols",
    "default_atols",
    "default_numeric_eps",
    "effective_dtype",
    "get_tolerance",
    "get_tols",
    "get_atol",
    "get_rtol",
    "get_etol",
    # comparisons
    "same",
    "almost_equal",
    "checkShapes",
    "locationError",
    "assert_almost_equal",
    "assert_allclose",
    "assert_almost_equal_with_err",
    "assert_almost_equal_ignore_nan",
    "assert_exception",
    "compare_ndarray_tuple",
    "same_array",
    "same_symbol_structure",
    "collapse_sum_like",
    "np_reduce",
    # contexts
    "default_context",
    "set_default_context",
    "list_gpus",
    # random inputs
    "random_arrays",
    "random_uniform_arrays",
    "random_sample",
    "rand_shape_nd",
    "rand_shape_2d",
    "rand_shape_3d",
    "rand_coord_2d",
    "rand_ndarray",
    "rand_sparse_ndarray",
    "create_sparse_array",
    "create_sparse_array_zd",
    "assign_each",
    "assign_each2",
    "create_2d_tensor",
    "create_vector",
    "get_identity_mat",
    "get_identity_mat_batch",
    "new_matrix_with_real_eigvals_2d",
    "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d",
    "new_sym_matrix_with_real_eigvals_2d",
    "new_sym_matrix_with_real_eigvals_nd",
    # running things
    "simple_forward",
    "compare_optimizer",
    "retry",
    "environment",
    "discard_stderr",
    "is_cd_run",
    "is_aarch64_run",
    "has_tvm_ops",
    "is_op_runnable",
    "DummyIter",
    # random generators
    "gen_buckets_probs_with_ppf",
    "mean_check",
    "var_check",
    "chi_square_check",
    "verify_generator",
    # gradient and consistency checks
    "check_numeric_gradient",
    "check_op_numeric_gradient",
    "check_symbolic_forward",
    "check_symbolic_backward",
    "check_consistency",
    "check_gluon_hybridize_consistency",
    # MXNet's module has no __all__, so its tests' ``from mxnet.test_utils import *``
    # also brings these in, and some of them use them without importing them.
    "mx",
    "np",
    "npt",
    "rnd",
    "os",
    "sys",
    "logging",
    "array",
    "Context",
    "use_np",
    "getenv",
    "setenv",
]

_INT_DTYPES = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)
# MXNet's tables: floats by precision, integers and booleans compared exactly.
_FLOAT64 = np.dtype(np.float64)
_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5,
         **{np.dtype(t): 0 for t in _INT_DTYPES}}
_ATOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20,
         **{np.dtype(t): 0 for t in _INT_DTYPES}}
_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-6}
# Powers of two, so that x +- eps/2 loses no bits of the step (MXNet's choice).
_NUMERIC_EPS = {np.dtype(np.float16): 1.0 / 2**6, np.dtype(np.float32): 1.0 / 2**9,
                np.dtype(np.float64): 1.0 / 2**14}


def default_dtype() -> type:
    """The dtype of the arrays the random helpers make: ``np.float32``."""
    return np.float32


def default_rtols() -> dict[np.dtype, float]:
    """Relative tolerance by dtype (as MXNet's ``default_rtols``; 0 for integers and bool)."""
    return dict(_RTOL)


def default_atols() -> dict[np.dtype, float]:
    """Absolute tolerance by dtype (as MXNet's ``default_atols``; 0 for integers and bool)."""
    return dict(_ATOL)


def default_numeric_eps() -> dict[np.dtype, float]:
    """The finite-difference step of :func:`check_numeric_gradient` by dtype (as MXNet's
    ``default_numeric_eps``)."""
    return dict(_NUMERIC_EPS)


def default_context() -> Context:
    """The context tests run on: the innermost ``with ctx:``, else the one
    :func:`set_default_context` chose, else ``cpu(0)``."""
    from .context import current_context

    return current_context()


def set_default_context(ctx: Context) -> None:
    """Make ``ctx`` the calling thread's default context (MXNet's ``set_default_context``).

    As in MXNet, it replaces the current default: inside a ``with other:`` block
    it lasts until the block ends, outside any block until it is set again.
    """
    from .context import set_current_context

    set_current_context(ctx)


def list_gpus() -> range:
    """``range(n)`` for the ``n`` GPUs dagnet can use (an empty range without one)."""
    from .context import num_gpus

    return range(num_gpus())


def _to_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return np.asarray(value)


def effective_dtype(dat: Any) -> np.dtype:
    """The dtype whose tolerances apply to ``dat`` (an NDArray or numpy array).

    MXNet lowers float32 to float16 on GPUs whose matrix units compute in TF32;
    dagnet's backends compute float32 in float32, so this is ``dat``'s dtype.
    """
    return np.dtype(dat.dtype)


def get_tolerance(dat: Any, tol: Any, default_tol: Mapping[Any, float]) -> float:
    """``tol`` when it is a number; else ``tol[dtype]`` when ``tol`` is a dict holding
    ``dat``'s dtype; else ``default_tol[dtype]``."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    return tol.get(dtype, default_tol[dtype])


def _with_dtype(x: Any) -> Any:
    return x if hasattr(x, "dtype") else np.asarray(x)


def get_tols(x: Any, y: Any, rtol: Any, atol: Any) -> tuple[float, float]:
    """The (rtol, atol) for comparing ``x`` with ``y``: the given numbers, or the larger
    of the two sides' entries in the given dicts or the default tables."""
    x, y = _with_dtype(x), _with_dtype(y)
    rtol = max(get_tolerance(x, rtol, _RTOL), get_tolerance(y, rtol, _RTOL))
    atol = max(get_tolerance(x, atol, _ATOL), get_tolerance(y, atol, _ATOL))
    return rtol, atol


def get_atol(atol: float | None = None, dtype: Any = _FLOAT64) -> float:
    """``atol``, or the default absolute tolerance of ``dtype`` when it is None."""
    return _ATOL[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol: float | None = None, dtype: Any = _FLOAT64) -> float:
    """``rtol``, or the default relative tolerance of ``dtype`` when it is None."""
    return _RTOL[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol: float | None = None) -> float:
    """``etol`` (the tolerated fraction of mismatching elements), or 0 when it is None."""
    return 0 if etol is None else etol


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` have the same shape and exactly the same elements."""
    return bool(np.array_equal(_to_numpy(a), _to_numpy(b)))


def checkShapes(a: Any, b: Any) -> None:  # noqa: N802 (MXNet's name)
    """Raise AssertionError unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise AssertionError(f"a.shape = {a.shape} and b.shape = {b.shape} are not equal")


def almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, use_broadcast: bool = True) -> bool:
    """Whether ``a`` and ``b`` agree elementwise (``np.allclose``), as MXNet's: the
    tolerances default to float64's (rtol 1e-5, atol 1e-20) whatever the dtypes,
    and with ``use_broadcast=False`` different shapes raise AssertionError."""
    a, b = _to_numpy(a), _to_numpy(b)
    if not use_broadcast:
        checkShapes(a, b)
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def _find_max_violation(a: np.ndarray, b: np.ndarray, rtol: float,
                        atol: float) -> tuple[tuple[int, ...], float]:
    """The index of the element that most exceeds ``atol + rtol * |b|``, and by what factor."""
    with np.errstate(invalid="ignore"):
        diff = np.where(np.equal(a, b), 0, np.abs(a.astype(np.float64) - b))
        violation = diff / (atol + rtol * np.abs(b.astype(np.float64)) + 1e-20)
    violation = np.where(np.isnan(violation), np.inf, violation)
    index = np.unravel_index(int(np.argmax(violation)), violation.shape)
    return tuple(int(i) for i in index), float(np.max(violation)) if violation.size else 0.0


def locationError(a: Any, b: Any, index: Any, names: Sequence[str],  # noqa: N802
                  maxError: bool = False) -> str:  # noqa: N803
    """A line naming the element at ``index`` of both arrays (MXNet's message format)."""
    maximum = "maximum " if maxError else ""
    return (f"Location of {maximum}error: {index}, {names[0]}={float(a[index]):.8f}, "
            f"{names[1]}={float(b[index]):.8f}")


_CLOSE_BLOCK = 1 << 15  # elements compared at once by _all_close


def _all_close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> bool:
    """``np.allclose``, block by block when the shapes agree: the temporaries stay in
    cache (two 128 MB arrays compare in 0.2 s this way, 0.6 s in one piece)."""
    if a.shape != b.shape or a.size <= _CLOSE_BLOCK:
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    return all(np.allclose(flat_a[start:start + _CLOSE_BLOCK], flat_b[start:start + _CLOSE_BLOCK],
                           rtol=rtol, atol=atol, equal_nan=equal_nan)
               for start in range(0, flat_a.size, _CLOSE_BLOCK))


def assert_almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                        names: tuple[str, str] = ("a", "b"), equal_nan: bool = False,
                        use_broadcast: bool = True, mismatches: tuple[int, int] = (10, 10)) -> None:
    """Raise AssertionError unless ``a`` and ``b`` agree elementwise within the tolerances.

    Accepts NDArrays, numpy arrays and scalars.  ``rtol`` and ``atol`` are numbers,
    dicts by dtype, or None for :func:`default_rtols` / :func:`default_atols` (the
    larger of the two sides' entries).  Boolean arrays must be equal.  Shapes must
    broadcast (be equal with ``use_broadcast=False``).  The message names both
    sides, the shapes, how many elements differ, the worst one and both values
    there.  ``mismatches`` is accepted for MXNet's signature.
    """
    if not use_broadcast:
        checkShapes(_with_dtype(a), _with_dtype(b))
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _to_numpy(a), _to_numpy(b)
    if a.shape != b.shape:
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise AssertionError(
                f"{names[0]} has shape {a.shape} but {names[1]} has {b.shape}"
            ) from None
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if _all_close(a, b, rtol, atol, equal_nan):
        return
    a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
    excess = np.abs(a64 - b64) - (atol + rtol * np.abs(b64))
    excess = np.where(np.isnan(excess), np.inf, excess)
    if equal_nan:
        excess = np.where(np.isnan(a64) & np.isnan(b64), -np.inf, excess)
    worst = np.unravel_index(int(np.argmax(excess)), excess.shape) if excess.ndim else ()
    bad = int(np.count_nonzero(excess > 0))
    raise AssertionError(
        f"{names[0]} and {names[1]} differ beyond rtol={rtol:g}, atol={atol:g} in {bad} of "
        f"{excess.size} elements; worst at index {tuple(int(i) for i in worst)}: "
        f"{names[0]}={a64[worst]!r}, {names[1]}={b64[worst]!r}\n"
        f"{names[0]}:\n{a}\n{names[1]}:\n{b}"
    )


def assert_allclose(a: Any, b: Any, rtol: float = 1e-07, atol: float = 0,
                    equal_nan: bool = True) -> None:
    """:func:`assert_almost_equal` with numpy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                                 etol: float | None = None, names: tuple[str, str] = ("a", "b"),
                                 equal_nan: bool = False,
                                 mismatches: tuple[int, int] = (10, 10)) -> None:
    """Like :func:`assert_almost_equal`, but a fraction ``etol`` of the elements may
    differ: with ``etol > 0`` it raises AssertionError only when more than that
    fraction is outside the tolerances (NaNs count as mismatches), naming the
    fraction and the worst element.  ``etol`` None or 0 is :func:`assert_almost_equal`."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _to_numpy(a), _to_numpy(b)
    equals = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - np.count_nonzero(equals) / equals.size
    if err > etol:
        a, b = np.broadcast_arrays(a, b)
        index, rel = _find_max_violation(a, b, rtol, atol)
        raise AssertionError(
            f"Error {rel:f} exceeds tolerance rtol={rtol:e}, atol={atol:e} in {100 * err:f}% of "
            f"the elements, more than etol={etol:g}.\n"
            f"{locationError(a, b, index, names, maxError=True)}\n"
            f"{names[0]}:\n{a}\n{names[1]}:\n{b}")


def assert_almost_equal_ignore_nan(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                                   names: tuple[str, str] = ("a", "b")) -> None:
    """:func:`assert_almost_equal` where an element that is NaN on either side is ignored."""
    a, b = np.copy(_to_numpy(a)), np.copy(_to_numpy(b))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f: Callable[..., Any], exception_type: Any, *args: Any,
                     **kwargs: Any) -> None:
    """Call ``f(*args, **kwargs)``; return if it raises ``exception_type``, raise
    AssertionError if it returns, and let any other exception through."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    expected = getattr(exception_type, "__name__", exception_type)
    raise AssertionError(f"{getattr(f, '__name__', f)!s} did not raise {expected}")


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: Any = None, atol: Any = None) -> None:
    """:func:`assert_almost_equal` over two (nested) tuples of arrays; None on either
    side compares as equal (an optimizer without state)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_array(array1: Any, array2: Any) -> bool:
    """Whether two NDArrays share memory: adds 1 to ``array1`` in place, looks whether
    ``array2`` saw it, and takes the 1 away again."""
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def same_symbol_structure(sym1: Any, sym2: Any) -> bool:
    """Whether the two symbols' graphs run the same operator at every node position."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(n1["op"] == n2["op"] for n1, n2 in zip(nodes1, nodes2))


def collapse_sum_like(a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Sum ``a`` over the axes that broadcasting ``shape`` to ``a.shape`` added or
    stretched, giving an array of ``shape`` (the gradient of a broadcast)."""
    shape = tuple(shape)
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[i + lead]:
            assert s == 1, f"shape {shape} does not broadcast to {a.shape}"
            axes.append(i + lead)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def np_reduce(dat: np.ndarray, axis: Any, keepdims: bool,
              numpy_reduce_func: Callable[..., Any]) -> np.ndarray:
    """Reduce ``dat`` with ``numpy_reduce_func`` (``np.sum``, ``np.max`` ...) over
    ``axis`` (an int, a sequence, or None for all), one axis at a time, keeping
    the reduced axes as size 1 when ``keepdims``."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else list(range(len(dat.shape)))
    ret = dat
    for i in sorted(axis, reverse=True):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keep = list(dat.shape)
        for i in axis:
            keep[i] = 1
        ret = ret.reshape(tuple(keep))
    return ret


def random_arrays(*shapes: Sequence[int]) -> Any:
    """Standard-normal numpy arrays of :func:`default_dtype`, one per shape (``()``
    gives a 0-d array); a single shape gives the array itself, not a list."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes: Sequence[int], **kwargs: Any) -> list[np.ndarray]:
    """Numpy arrays uniform in [low, high) (keywords ``low=0.0``, ``high=1.0``,
    ``dtype=default_dtype()``), one per shape, always as a list."""
    low = kwargs.pop("low", 0.0)
    high = kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if kwargs:
        raise TypeError(f"random_uniform_arrays got unexpected argument(s): {sorted(kwargs)}")
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population: Sequence[Any], k: int) -> Any:
    """``k`` elements of ``population`` in random order (numpy's global generator),
    without replacement; ``population`` is left as it was."""
    assert 0 <= k <= len(population)
    population_copy = population[:]
    np.random.shuffle(population_copy)
    return population_copy[0:k]


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random shape of ``num_dim`` dimensions, each in [1, dim] (or [0, dim])."""
    low = 0 if allow_zero_size else 1
    return tuple(int(v) for v in np.random.randint(low, dim + 1, size=num_dim))


def rand_shape_2d(dim0: int = 10, dim1: int = 10,
                  allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-D shape, each size in [1, dim] (or [0, dim])."""
    low = 0 if allow_zero_size else 1
    return (int(np.random.randint(low, dim0 + 1)), int(np.random.randint(low, dim1 + 1)))


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10,
                  allow_zero_size: bool = False) -> tuple[int, int, int]:
    """A random 3-D shape, each size in [1, dim] (or [0, dim])."""
    low = 0 if allow_zero_size else 1
    return rand_shape_2d(dim0, dim1, allow_zero_size) + (int(np.random.randint(low, dim2 + 1)),)


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple[int, int]:
    """A random point with ``x`` in [x_low, x_high) and ``y`` in [y_low, y_high)."""
    x = np.random.randint(x_low, x_high, dtype=np.int64)
    y = np.random.randint(y_low, y_high, dtype=np.int64)
    return x, y


def rand_ndarray(shape: Sequence[int], stype: str = "default", density: float | None = None,
                 dtype: Any = None, modifier_func: Any = None, shuffle_csr_indices: bool = False,
                 distribution: Any = None, ctx: Context | None = None) -> Any:
    """An NDArray of ``shape`` on ``ctx`` or :func:`default_context`: standard-normal values
    (MXNet's :func:`random_arrays` converted to ``dtype``, float32 by default) for
    ``stype='default'``, else a random sparse array (:func:`rand_sparse_ndarray`)."""
    if stype != "default":
        return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                   modifier_func=modifier_func,
                                   shuffle_csr_indices=shuffle_csr_indices,
                                   distribution=distribution, ctx=ctx)[0]
    from . import ndarray

    values = random_arrays(tuple(shape))
    return ndarray.array(values, ctx=ctx or default_context(),
                         dtype=values.dtype if dtype is None else dtype)


def rand_sparse_ndarray(shape: Sequence[int], stype: str, density: float | None = None,
                        dtype: Any = None, distribution: Any = None, data_init: Any = None,
                        rsp_indices: Any = None, modifier_func: Any = None,
                        shuffle_csr_indices: bool = False, ctx: Context | None = None
                        ) -> tuple[Any, tuple]:
    """A random sparse array and its parts, as MXNet's: ``(rsp, (values, indices))`` for
    ``'row_sparse'`` (each row stored with probability ``density``, or the rows
    ``rsp_indices``) and ``(csr, (indptr, indices, data))`` for ``'csr'`` (each element
    stored with probability ``density``); values uniform in [0, 1) unless ``data_init``,
    then passed through ``modifier_func``.  ``distribution='powerlaw'`` (csr only) gives
    the rows exponentially growing counts of stored values (:func:`_powerlaw_csr_dense`)."""
    from .ndarray import sparse

    ctx = ctx or default_context()
    density = np.random.rand() if density is None else density
    dtype = np.float32 if dtype is None else dtype
    if distribution not in (None, "uniform", "powerlaw"):
        raise ValueError(f"rand_sparse_ndarray: distribution {distribution!r} is not "
                         f"supported; use 'uniform' or 'powerlaw' (csr only)")
    shape = tuple(shape)
    if distribution == "powerlaw":
        if stype != "csr" or len(shape) != 2:
            raise ValueError(f"rand_sparse_ndarray: the 'powerlaw' distribution makes 2-D csr "
                             f"arrays only, not {stype!r} of shape {shape}")
        result = sparse.csr_matrix(_powerlaw_csr_dense(shape, density, dtype), ctx=ctx,
                                   dtype=dtype)
        return result, (result.indptr, result.indices, result.data)
    if stype == "row_sparse":
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices)
        else:
            indices = np.argwhere(np.random.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            return (sparse.zeros("row_sparse", shape, ctx=ctx, dtype=dtype),
                    (np.array([], dtype=dtype), np.array([])))
        values = np.random.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            values.fill(data_init)
        if modifier_func is not None:
            values = assign_each(values, modifier_func).astype(dtype)
        result = sparse.row_sparse_array((values, indices), shape=shape, dtype=dtype, ctx=ctx)
        return result, (values, indices)
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"rand_sparse_ndarray: a csr array is 2-D, got shape {shape}")
        mask = np.random.rand(*shape) < density
        dense = np.where(mask, np.random.rand(*shape), 0).astype(dtype)
        if data_init is not None:
            dense[mask] = data_init
        if modifier_func is not None:
            dense[mask] = assign_each(dense[mask], modifier_func)
        result = sparse.csr_matrix(dense, ctx=ctx, dtype=dtype)
        return result, (result.indptr, result.indices, result.data)
    raise ValueError(f"rand_sparse_ndarray: unknown storage type {stype!r}; use 'row_sparse' "
                     f"or 'csr'")


def create_sparse_array(shape: Sequence[int], stype: str, data_init: Any = None,
                        rsp_indices: Any = None, dtype: Any = None, modifier_func: Any = None,
                        density: float = 0.5, shuffle_csr_indices: bool = False) -> Any:
    """A random sparse array (:func:`rand_sparse_ndarray`'s, without its parts): a
    row_sparse one stores the rows ``rsp_indices`` (sorted) when given, else each row with
    probability ``density``; a csr one each element with probability ``density``."""
    if stype not in ("row_sparse", "csr"):
        raise ValueError(f"create_sparse_array: unknown storage type {stype!r}; use "
                         f"'row_sparse' or 'csr'")
    indices = None
    if stype == "row_sparse" and rsp_indices is not None:
        indices = np.sort(np.asarray(rsp_indices))
    return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype, data_init=data_init,
                               rsp_indices=indices, modifier_func=modifier_func,
                               shuffle_csr_indices=shuffle_csr_indices)[0]


def create_sparse_array_zd(shape: Sequence[int], stype: str, density: float,
                           data_init: Any = None, rsp_indices: Any = None, dtype: Any = None,
                           modifier_func: Any = None, shuffle_csr_indices: bool = False) -> Any:
    """:func:`create_sparse_array` where only ``rsp_indices`` decide which rows a
    row_sparse array stores (none when not given: ``density`` counts for csr only)."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise ValueError(f"create_sparse_array_zd: {len(rsp_indices)} row indices for "
                             f"{shape[0]} rows")
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def _powerlaw_csr_dense(shape: tuple[int, ...], density: float, dtype: Any) -> np.ndarray:
    """The dense values of MXNet's 'powerlaw' test matrix: ``int(rows * cols * density)``
    stored values, each in [1.001, 3); first one at column 0 of every row, then row ``i``
    fills its columns up to ``2 ** (i + 1)`` (a full row once that reaches the width),
    row after row, until the count is used up."""
    rows, cols = shape
    if not 0 <= density <= 1 or rows <= 0 or cols <= 0:
        raise ValueError(f"rand_sparse_ndarray: 'powerlaw' needs a density in [0, 1] and a "
                         f"positive shape, got density {density} and shape {shape}")
    left = int(rows * cols * density)
    if left < 2 * rows:
        raise ValueError(f"rand_sparse_ndarray: 'powerlaw' needs rows * cols * density >= "
                         f"2 * rows; raise the density above {2 / cols} for shape {shape}")
    dense = np.zeros(shape, dtype=dtype)

    def fill(row: int, start: int, count: int) -> None:
        dense[row, start:start + count] = 1 + np.random.uniform(0.001, 2, size=count)

    for row in range(rows):  # one value per row first: no row is empty
        fill(row, 0, 1)
    left -= rows
    limit = 2
    for row in range(rows):
        if left <= 0:
            break
        width = min(cols, limit)
        if width == cols and left > width:
            fill(row, 0, cols)  # the whole row (its first value is replaced)
            left -= cols - 1
            continue
        count = min(width - 1, left)
        fill(row, 1, count)
        left -= count
        limit *= 2
    if left > 0:
        raise ValueError(f"rand_sparse_ndarray: 'powerlaw' cannot place density {density} in "
                         f"shape {shape}; lower the density")
    return dense


def assign_each(the_input: np.ndarray, function: Callable[[Any], Any] | None) -> np.ndarray:
    """``function`` applied to each element of ``the_input`` (a float64 array of its
    shape), or a copy of it when ``function`` is None."""
    if function is None:
        return np.array(the_input)
    output = np.zeros(the_input.shape)
    flat = output.reshape(-1)
    for i, value in enumerate(np.asarray(the_input).reshape(-1)):
        flat[i] = function(value)
    return output


def assign_each2(input1: np.ndarray, input2: np.ndarray,
                 function: Callable[[Any, Any], Any] | None) -> np.ndarray:
    """``function`` applied to each pair of elements of two arrays of one shape (a
    float64 array), or a copy of ``input1`` when ``function`` is None."""
    if function is None:
        return np.array(input1)
    assert input1.shape == input2.shape
    output = np.zeros(input1.shape)
    flat = output.reshape(-1)
    pairs = zip(np.asarray(input1).reshape(-1), np.asarray(input2).reshape(-1))
    for i, (v1, v2) in enumerate(pairs):
        flat[i] = function(v1, v2)
    return output


def create_2d_tensor(rows: int, columns: int, dtype: Any = np.int64) -> Any:
    """An NDArray of shape (rows, columns) whose row ``i`` holds ``i``."""
    from . import ndarray

    column = ndarray.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return ndarray.broadcast_to(column, shape=(rows, columns))


def create_vector(size: int, dtype: Any = np.int64) -> Any:
    """The NDArray ``0, 1, ..., size - 1``."""
    from . import ndarray

    return ndarray.arange(0, size, dtype=dtype)


def get_identity_mat(size: int) -> Any:
    """The float32 identity matrix of ``size``, as an NDArray."""
    from . import ndarray

    mat = ndarray.zeros((size, size))
    for i in range(size):
        mat[i, i] = 1
    return mat


def get_identity_mat_batch(size: int) -> Any:
    """Two identity matrices of ``size`` stacked, shape (2, size, size)."""
    from . import ndarray

    eye = get_identity_mat(size).asnumpy()
    return ndarray.array(np.stack([eye, eye]))


def new_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random well-conditioned n x n matrix with real eigenvalues in [-10, 10)."""
    while True:
        diag = np.diag(np.random.uniform(-1.0, 1.0, n))
        v = np.random.uniform(-1.0, 1.0, n).reshape(n, 1)
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        householder = np.eye(n) - 2 * np.matmul(v, v.T)
        q = np.matmul(householder, diag)
        if np.linalg.cond(q, 2) < 3:
            break
    eig = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), eig), q)


def new_matrix_with_real_eigvals_nd(shape: Sequence[int]) -> np.ndarray:
    """A batch of :func:`new_matrix_with_real_eigvals_2d` of ``shape`` (..., n, n)."""
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(count)]).reshape(shape)


def new_orthonormal_matrix_2d(n: int) -> np.ndarray:
    """A random n x n orthonormal matrix."""
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random symmetric n x n matrix with eigenvalues in [-10, 10)."""
    q = new_orthonormal_matrix_2d(n)
    eig = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(q.T, eig), q)


def new_sym_matrix_with_real_eigvals_nd(shape: Sequence[int]) -> np.ndarray:
    """A batch of :func:`new_sym_matrix_with_real_eigvals_2d` of ``shape`` (..., n, n)."""
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(count)]).reshape(shape)


def check_symbolic_forward(sym: Any, location: Any, expected: Any, rtol: float = 1e-4,
                           atol: float | None = None, aux_states: Any = None,
                           ctx: Context | None = None, equal_nan: bool = False,
                           dtype: Any = np.float32) -> list[Any]:
    """Bind ``sym`` to ``location`` (arrays in ``list_arguments`` order, or a dict by
    name, converted to ``dtype``), run the forward pass in inference mode and
    compare the outputs with ``expected`` (a list, or a dict by output name).
    Returns the executor's outputs (NDArrays, of the storage types the executor
    inferred), as MXNet's does."""
    from .testing.symbolic_checks import symbolic_forward

    return symbolic_forward(sym, location, expected, rtol, atol, aux_states, ctx, equal_nan,
                            dtype)


def check_symbolic_backward(sym: Any, location: Any, out_grads: Any, expected: Any,
                            rtol: float = 1e-5, atol: float | None = None,
                            aux_states: Any = None, grad_req: Any = "write",
                            ctx: Context | None = None, grad_stypes: Any = None,
                            equal_nan: bool = False,
                            dtype: Any = np.float32) -> dict[str, Any]:
    """Bind ``sym`` to ``location``, run forward (training mode) and backward with the
    head gradients ``out_grads``, and compare the gradients with ``expected`` (a
    list in ``list_arguments`` order or a dict by name; only those arguments get
    gradients).  Dense gradient arrays start random, those ``grad_stypes`` makes
    sparse (name -> storage type) start at zero: with ``grad_req='add'`` the
    expected value is that start plus ``expected``, with ``'null'`` the start.
    Returns the gradient arrays by name (NDArrays), as MXNet's does."""
    from .testing.symbolic_checks import symbolic_backward

    unknown = {k: v for k, v in dict(grad_stypes or {}).items()
               if v not in ("default", "row_sparse", "csr")}
    if unknown:
        raise ValueError(f"check_symbolic_backward: grad_stypes names unknown storage types "
                         f"{unknown}; use 'default', 'row_sparse' or 'csr'")
    return symbolic_backward(sym, location, out_grads, expected, rtol, atol, aux_states,
                             grad_req, ctx, equal_nan, dtype, grad_stypes)


def _resolve_op(op: Any) -> Any:
    from .operator import Op, get_op

    return op if isinstance(op, Op) else get_op(op)


def check_numeric_gradient(sym: Any, location: Any, aux_states: Any = None,
                           numeric_eps: Any = None, rtol: Any = None, atol: Any = None,
                           grad_nodes: Any = None, use_forward_train: bool = True,
                           ctx: Context | None = None, grad_stype_dict: Any = None,
                           dtype: Any = np.float32) -> None:
    """Check a symbol's backward pass against central differences of its forward pass.

    MXNet's signature, defaults and verdicts.  ``location`` gives every argument (a
    list in ``sym.list_arguments()`` order, or a dict by name) and ``aux_states``
    every auxiliary state; all are converted to ``dtype`` (float16, float32 or
    float64).  Each output is multiplied by a random projection (uniform in
    [0.1, 1.1), from numpy's global generator) and summed; the symbol's gradient
    of that loss, from one forward pass in training mode and one backward pass,
    is compared with ``(loss(x + eps/2) - loss(x - eps/2)) / eps`` for every
    element ``x`` of every argument in ``grad_nodes`` (default: all; a list of
    names, checked with ``grad_req='write'``, or a dict of name to ``grad_req``).
    Gradient arrays start random: with ``'add'`` the start is subtracted before
    the comparison, with ``'null'`` the array must come back untouched.

    ``numeric_eps``, ``rtol`` and ``atol`` are numbers, or dicts by dtype; None
    takes ``default_numeric_eps()``, ``default_rtols()`` and ``default_atols()``
    for ``dtype``.  ``use_forward_train`` picks the mode of the numeric forward
    passes.  ``grad_stype_dict`` may name any storage type: the gradients are compared
    by value.

    Raises AssertionError naming the argument and the worst element when a
    gradient is wrong, and (as MXNet) for a dtype other than the three floats or
    a float16/float32 step below 1e-5; ValueError for a ``grad_nodes`` that is
    not a list or dict, names an unknown argument or gives an invalid grad_req.
    To check one operator's gradient rule without a symbol, use
    :func:`check_op_numeric_gradient`.
    """
    from .symbol import Symbol
    from .testing.symbolic_checks import check_symbol_numeric_gradient

    if not isinstance(sym, Symbol):
        raise TypeError(
            f"check_numeric_gradient takes a Symbol (as MXNet's), got {type(sym).__name__}; "
            f"to check one operator's gradient rule directly, call "
            f"dagnet.test_utils.check_op_numeric_gradient(op, location, params)")
    check_symbol_numeric_gradient(sym, location, aux_states, numeric_eps, rtol, atol, grad_nodes,
                                  use_forward_train, ctx, grad_stype_dict, dtype)


def check_op_numeric_gradient(
    op: Any,
    location: Sequence[Any] | Mapping[str, Any],
    params: Mapping[str, Any] | None = None,
    numeric_eps: float | None = None,
    rtol: float = 1e-2,
    atol: float | None = None,
    grad_nodes: Sequence[int] | None = None,
    ctx: Context | None = None,
    dtype: Any = np.float64,
    seed: int | None = None,
) -> None:
    """Check an operator's gradient rule against central differences, element by element.

    ``location`` holds the input arrays (a list, or a dict by input name);
    inputs are promoted to ``dtype`` (float64 by default) and the step is
    chosen by dtype unless ``numeric_eps`` is given.  The loss is the sum of
    each visible output times a fixed random head gradient drawn from
    ``seed``.  On failure the message names the input, the worst element,
    both values and the seed to reproduce it.
    """
    from . import engine as engine_module
    from .backend import backend_for
    from .operator import Gradient
    from .testing.op_suite import run_kernel

    op = _resolve_op(op)
    if not isinstance(op.gradient, Gradient):
        raise ValueError(f"operator {op.name!r} has no gradient rule to check ({op.gradient!r})")
    attrs = op.parse_params(dict(params or {}))
    names = op.list_inputs(attrs)
    if isinstance(location, Mapping):
        unknown = [k for k in location if k not in names]
        if unknown:
            raise ValueError(
                f"check_op_numeric_gradient: {op.name!r} has no input {unknown[0]!r}; "
                f"its inputs are {', '.join(names)}"
            )
        location = [location[n] for n in names]
    dtype = np.dtype(dtype)
    inputs = [_to_numpy(x) for x in location]
    inputs = [x.astype(dtype) if np.issubdtype(x.dtype, np.floating) else x for x in inputs]
    eps = numeric_eps if numeric_eps is not None else _EPS.get(dtype, 1e-6)
    seed = int(np.random.randint(0, 2**31 - 1)) if seed is None else seed
    rng = np.random.default_rng(seed)
    ctx = ctx or default_context()
    backend, eng = backend_for(ctx), engine_module.current()

    def forward(arrays: list[np.ndarray]) -> list[np.ndarray]:
        return run_kernel(op, attrs, arrays, backend=backend, engine=eng, ctx=ctx)[0]

    outputs = forward(inputs)
    visible = op.n_visible_outputs(attrs)
    head = [rng.standard_normal(o.shape).astype(o.dtype) for o in outputs[:visible]]
    parts = {"out_grad": head, "in_data": inputs, "out_data": outputs}
    aux = set(op.mutated_inputs(attrs))
    targets = [i for i in range(len(inputs)) if i not in aux]
    backward = _resolve_op(op.gradient.backward)
    grads = run_kernel(
        backward,
        attrs,
        [a for u in op.gradient.uses for a in parts[u]],
        backend=backend,
        engine=eng,
        ctx=ctx,
        out_shapes=[inputs[i].shape for i in targets],
        out_dtypes=[inputs[i].dtype for i in targets],
    )[0]
    nodes = (
        grad_nodes
        if grad_nodes is not None
        else [i for i in targets if np.issubdtype(inputs[i].dtype, np.floating)]
    )
    for i in nodes:
        numeric = np.zeros(inputs[i].shape, np.float64)
        flat = numeric.reshape(-1)
        for j in range(inputs[i].size):
            values = []
            for shift in (eps, -eps):
                moved = [a.copy() for a in inputs]
                moved[i].reshape(-1)[j] += shift
                values.append(
                    sum(
                        float(np.sum(o.astype(np.float64) * h))
                        for o, h in zip(forward(moved)[:visible], head)
                    )
                )
            flat[j] = (values[0] - values[1]) / (2 * eps)
        analytic = grads[targets.index(i)].astype(np.float64)
        try:
            assert_almost_equal(
                analytic,
                numeric,
                rtol=rtol,
                atol=atol if atol is not None else 1e-4,
                names=(f"analytic gradient of {names[i]!r}", f"numeric gradient of {names[i]!r}"),
            )
        except AssertionError as error:
            raise AssertionError(
                f"check_op_numeric_gradient({op.name!r}) failed for input {names[i]!r} "
                f"(dtype {dtype.name}, eps={eps:g}, seed={seed}; pass seed={seed} to reproduce):\n"
                f"{error}\ninput {names[i]!r}:\n{inputs[i]}"
            ) from None


def check_consistency(op: Any, *args: Any, **kwargs: Any) -> Any:
    """Check that a computation agrees with itself across contexts and dtypes.

    MXNet's form, ``check_consistency(sym, ctx_list, scale=1.0, grad_req='write',
    arg_params=None, aux_params=None, tol=None, raise_on_err=True, ground_truth=None,
    equal_nan=False, use_uniform=False, rand_type=np.float64)``: ``sym`` is a Symbol
    (or one per entry) and each ``ctx_list`` entry a dict of ``simple_bind`` keywords
    (``ctx``, shapes, ``type_dict``); outputs and gradients are compared with those of
    the widest dtype.  dagnet's operator form, ``check_consistency(op, inputs,
    params=None, ctx_list=None, rtol=None, atol=None, dtype=np.float32)``, runs one
    operator's kernel on every context (default: every available backend).
    """
    from .symbol import Symbol

    if isinstance(op, Symbol) or (isinstance(op, (list, tuple)) and op
                                  and all(isinstance(s, Symbol) for s in op)):
        return _check_symbol_consistency(op, *args, **kwargs)
    return _check_op_consistency(op, *args, **kwargs)


def _check_symbol_consistency(sym: Any, ctx_list: Sequence[Mapping[str, Any]],
                              scale: float = 1.0, grad_req: Any = "write",
                              arg_params: Mapping[str, Any] | None = None,
                              aux_params: Mapping[str, Any] | None = None, tol: Any = None,
                              raise_on_err: bool = True, ground_truth: Any = None,
                              equal_nan: bool = False, use_uniform: bool = False,
                              rand_type: Any = np.float64, rtol: float | None = None,
                              atol: float | None = None) -> dict:
    from .testing.symbolic_checks import check_symbol_consistency

    if tol is not None and not isinstance(tol, Mapping):
        rtol = atol = float(tol)
    return check_symbol_consistency(sym, ctx_list, scale, grad_req, arg_params, aux_params,
                                    rtol, atol, raise_on_err, ground_truth, equal_nan,
                                    use_uniform, rand_type)


def _check_op_consistency(
    op: Any,
    inputs: Sequence[Any],
    params: Mapping[str, Any] | None = None,
    ctx_list: Sequence[Context] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    dtype: Any = np.float32,
) -> list[list[np.ndarray]]:
    """Run an operator on every context in ``ctx_list`` (default: one per available
    backend) and assert the outputs agree with the first; returns each context's outputs."""
    from . import engine as engine_module
    from .backend import available_backends, backend_for
    from .testing.op_suite import run_kernel

    op = _resolve_op(op)
    attrs = op.parse_params(dict(params or {}))
    if ctx_list is None:
        ctx_list = [Context(b.device_type, 0) for b in available_backends()]
    arrays = [_to_numpy(x) for x in inputs]
    arrays = [a.astype(dtype) if np.issubdtype(a.dtype, np.floating) else a for a in arrays]
    results = []
    for ctx in ctx_list:
        outs = run_kernel(
            op, attrs, arrays, backend=backend_for(ctx), engine=engine_module.current(), ctx=ctx
        )[0]
        results.append(outs)
    for ctx, outs in zip(ctx_list[1:], results[1:]):
        for index, (got, want) in enumerate(zip(outs, results[0])):
            assert_almost_equal(
                got,
                want,
                rtol=rtol,
                atol=atol,
                names=(f"{op.name} output {index} on {ctx}", f"on {ctx_list[0]}"),
            )
    return results


class _SavedValues(mx.init.Initializer):
    """Fills each parameter with the saved NumPy array of its name."""

    def __init__(self, values: Mapping[str, np.ndarray]) -> None:
        super().__init__()
        self._values = values

    def __call__(self, desc: Any, arr: Any) -> None:
        if str(desc) not in self._values:
            raise KeyError(f"no saved value for parameter {str(desc)!r}; saved: "
                           f"{sorted(self._values)}")
        arr[()] = self._values[str(desc)]


def check_gluon_hybridize_consistency(net_builder: Callable[..., Any], data_l: Sequence[Any],
                                      numpy_func: Callable[..., Any] | None = None,
                                      test_grad: bool = True, rtol: float = 1e-4,
                                      atol: float = 1e-4) -> None:
    """Check that a HybridBlock gives the same output (and input gradients) imperatively
    and hybridized.

    ``net_builder(prefix=...)`` builds the block (it must hold no random operator);
    ``data_l`` are its inputs (``mx.np`` arrays).  The block is built four times
    (imperative/hybridized, with and without autograd when ``test_grad``), all with
    the parameter values the first build drew; each output must match the first one,
    and each input gradient (``out.backward(out)``) the first ones.  When
    ``numpy_func`` is given, the output must also match ``numpy_func`` applied to the
    inputs as NumPy arrays.
    """
    first_params: dict[str, np.ndarray] | None = None
    ref_out: np.ndarray | None = None
    ref_grads: list[np.ndarray] | None = None
    for hybridize in (False, True):
        for with_grad in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            if first_params is None:
                net.initialize()
            else:
                net.initialize(_SavedValues(first_params))
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if with_grad:
                for x in inputs:
                    x.attach_grad()
                with mx.autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if first_params is None:
                first_params = {name: p.data().asnumpy()
                                for name, p in net.collect_params().items()}
            if ref_out is None:
                ref_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), ref_out, rtol=rtol, atol=atol,
                                    names=(f"output (hybridize={hybridize})", "first output"))
            if with_grad:
                grads = [x.grad.asnumpy() for x in inputs]
                if ref_grads is None:
                    ref_grads = grads
                else:
                    for got, want in zip(grads, ref_grads):
                        assert_almost_equal(got, want, rtol=rtol, atol=atol,
                                            names=(f"input gradient (hybridize={hybridize})",
                                                   "first input gradient"))
    if numpy_func is not None:
        expected = numpy_func(*[x.asnumpy() for x in data_l])
        assert_almost_equal(ref_out, expected, rtol=rtol, atol=atol,
                            names=("block output", "numpy_func output"))


def simple_forward(sym: Any, ctx: Context | None = None, is_train: bool = False,
                   **inputs: Any) -> Any:
    """Bind ``sym`` to the numpy arrays given by argument name, run one forward pass and
    return the output as a numpy array (a list of them when there are several)."""
    from . import ndarray

    ctx = ctx or default_context()
    args = {name: ndarray.array(value) for name, value in inputs.items()}
    exe = sym.bind(ctx, args=args)
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def compare_optimizer(opt1: Any, opt2: Any, shape: Any, dtype: Any, w_stype: str = "default",
                      g_stype: str = "default", rtol: float = 1e-4, atol: float = 1e-5,
                      compare_states: bool = True, ntensors: int = 1) -> None:
    """Run one update of ``opt1`` and one of ``opt2`` on the same random weight and
    gradient (uniform in [0, 1)) and assert the states and weights agree.

    ``shape`` is one shape, or a list of ``ntensors`` shapes: then ``opt2`` updates
    all the tensors in one multi-tensor call and ``opt1`` one at a time.  With a
    sparse ``w_stype`` (all rows stored) or ``g_stype`` (random rows), ``opt2`` gets
    the sparse arrays and ``opt1`` dense copies of them.
    """
    import copy

    from . import random

    ctx = default_context()
    if not isinstance(shape, list):
        assert ntensors == 1
        w2, w1 = _optimizer_pair(shape, dtype, w_stype, 1.0, ctx)
        g2, g1 = _optimizer_pair(shape, dtype, g_stype, None, ctx)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    states2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, states2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, states2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


def _optimizer_pair(shape: Any, dtype: Any, stype: str, density: float | None,
                    ctx: Context) -> tuple[Any, Any]:
    """``(array, dense copy)`` of a random array of storage type ``stype`` for
    :func:`compare_optimizer`: uniform values when dense, else :func:`rand_ndarray`'s."""
    from . import random

    if stype == "default":
        array = random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        return array, array.copyto(ctx)
    if stype not in ("row_sparse", "csr"):
        raise ValueError(f"compare_optimizer: unknown storage type {stype!r}; use 'default', "
                         f"'row_sparse' or 'csr'")
    array = rand_ndarray(shape, stype, density=density, dtype=dtype, ctx=ctx)
    return array, array.copyto(ctx).tostype("default")


def retry(n: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a stochastic test to run up to ``n`` times until it passes: an
    AssertionError on the last try propagates, any other error at once."""
    assert n > 0

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            from .ndarray import waitall

            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
                    waitall()

        return wrapper

    return decorate


@contextlib.contextmanager
def environment(*args: Any) -> Iterator[None]:
    """Set environment variables for a ``with`` block or a decorated function.

    ``environment(name, value)`` or ``environment({name: value, ...})``; a value of
    None unsets the variable.  Afterwards (also on an exception) all pushed work is
    waited for and every named variable is restored: set to its old value, or
    unset if it was unset.
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env_vars = dict(args[0])
    else:
        assert len(args) == 2, "Expecting one dict arg or two args: env var name and value"
        env_vars = {args[0]: args[1]}

    def apply(values: Mapping[str, str | None]) -> None:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    snapshot = {name: os.environ.get(name) for name in env_vars}
    try:
        apply(env_vars)
        yield
    finally:
        from .ndarray import waitall

        try:
            waitall()  # work pushed inside may still read the variables
        finally:
            apply(snapshot)


@contextlib.contextmanager
def discard_stderr() -> Iterator[None]:
    """Send everything written to the process's standard error (file descriptor 2,
    so output of native code too) to ``os.devnull`` for a ``with`` block."""
    with open(os.devnull, "w") as bit_bucket:
        try:
            stderr_fileno = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):
            # stderr is not a real file (a captured stream): nothing to redirect
            yield
            return
        sys.stderr.flush()
        old_stderr = os.dup(stderr_fileno)
        try:
            os.dup2(bit_bucket.fileno(), stderr_fileno)
            yield
        finally:
            sys.stderr.flush()
            os.dup2(old_stderr, stderr_fileno)
            os.close(old_stderr)


def is_cd_run() -> bool:
    """Whether the tests run as part of a continuous-delivery job (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", 0) == "1"


def is_aarch64_run() -> bool:
    """Whether the tests run on an aarch64 machine."""
    return platform.machine() == "aarch64"


def has_tvm_ops() -> bool:
    """Whether operators generated by TVM are available: never in dagnet, whose
    operators are all written for its backends (MXNet's ``USE_TVM_OP=0`` build)."""
    return False


def is_op_runnable() -> bool:
    """Whether the numpy-style operators can run on the default context: always, as
    in MXNet built without TVM operators (only those need a recent GPU)."""
    return not has_tvm_ops() or default_context().device_type != "gpu"


class DummyIter(DataIter):
    """A data iterator that returns the first batch of ``real_iter`` forever (for
    timing a model without the cost of reading data)."""

    def __init__(self, real_iter: Any):
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self) -> DummyIter:
        return self

    def next(self) -> Any:
        """The first batch of the real iterator, again; never raises StopIteration."""
        return self.the_batch
