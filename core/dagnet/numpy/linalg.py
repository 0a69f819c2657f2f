"""``dagnet.numpy.linalg`` (``mx.np.linalg``): MXNet 1.9.1's NumPy linear algebra.

>>> import dagnet as mx
>>> a = mx.np.array([[4., 1.], [1., 3.]])
>>> mx.np.linalg.det(a)
array(11.)
>>> mx.np.linalg.solve(a, mx.np.array([1., 2.]))
array([0.09090909, 0.6363636 ])

Every function works on the last two axes of its input, the leading ones a batch, and runs
registered operators: the legacy ``_linalg_*`` ones (``inv``, ``det``, ``slogdet``; ``norm``,
``tensorinv`` and ``tensorsolve`` are composed of them and of ``mx.np``'s functions) and
MXNet's NumPy ones (``_npi_svd``, ``_npi_cholesky``, ``_npi_solve``, ``_npi_eig`` ...), so
autograd differentiates them and a hybridized block traces them.

MXNet's differences from NumPy are kept:

- ``svd(a)`` needs ``M <= N`` and returns ``(ut, s, v)`` with ``a = ut @ diag(s) @ v``, ``v``
  of shape ``(..., M, N)``, each row of ``v`` signed so its largest entry in magnitude is
  positive; ``eigh``'s eigenvectors follow the same sign rule;
- real results only: ``eig`` and ``eigvals`` refuse matrices with complex eigenvalues;
- ``solve(a, b)`` treats ``b`` as vectors when ``b.ndim == a.ndim - 1`` and does not broadcast
  batch shapes;
- dtypes: ``inv``, ``det``, ``slogdet``, ``cholesky``, ``svd``, ``pinv`` and ``tensorinv``
  take float32 or float64; ``solve``, ``tensorsolve`` and the eigen-solvers compute integer
  inputs in float64; float16 is refused by all but ``norm``;
- ``norm``: ``ord`` may be the strings ``'inf'``/``'-inf'`` (with ``axis=None`` they take the
  largest/smallest magnitude of all elements); with ``axis=None`` and an ``ord``, an input of
  two or more dimensions is a stack of matrices in its last two axes; a matrix ``ord`` other
  than ``None``, ``'fro'``, ``'nuc'``, +-1, +-2 and +-inf reads as ``inf`` when positive and
  ``-inf`` otherwise; integer inputs give the norm truncated to their dtype.

Where MXNet raises but NumPy has an answer, dagnet gives NumPy's: spectral and nuclear norms
of matrices with more rows than columns, and a float ``inf`` order for vectors.

Gradients: ``svd``, ``cholesky`` (symmetric, as ``_linalg_potrf``'s), ``inv``, ``det``,
``slogdet``, ``solve``, ``tensorinv``, ``tensorsolve`` and ``norm`` have MXNet's; ``eigh``,
``eigvalsh`` and ``pinv`` the exact ones (MXNet's are zero); ``eig`` and ``eigvals`` zero.

``cond``, ``lstsq``, ``matrix_power``, ``matrix_rank``, ``multi_dot`` and ``qr`` are NumPy's
own functions, as in MXNet: on ``mx.np`` arrays they run NumPy on host copies (outside
``autograd.record()`` only).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as onp

from .. import ndarray as nd
from .._errors import DTypeError, ShapeError
from ..ndarray import NDArray
from . import _elementwise as _ew
from ._array import NumpyError, ndarray, wrap
from ._manipulation import _array as _operand
from ._manipulation import normalize_axis, reshape, transpose
from ._reductions import max as _max
from ._reductions import min as _min
from ._reductions import sum as _sum

__all__ = ["cholesky", "cond", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
           "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
           "svd", "tensorinv", "tensorsolve"]

# NumPy's own, as MXNet's fallback_linalg has them
cond = onp.linalg.cond
lstsq = onp.linalg.lstsq
matrix_power = onp.linalg.matrix_power
matrix_rank = onp.linalg.matrix_rank
multi_dot = onp.linalg.multi_dot
qr = onp.linalg.qr

_FLOATS = (onp.dtype(onp.float32), onp.dtype(onp.float64))


def _run(op: str, inputs: Sequence[NDArray], **params: Any) -> Any:
    result = nd.invoke(op, list(inputs), params)
    return tuple(wrap(result)) if isinstance(result, (list, tuple)) else wrap(result)


def _floats_only(name: str, a: ndarray) -> None:
    if a.dtype not in _FLOATS:
        raise DTypeError(f"linalg.{name}: supports float32 and float64 arrays only, got "
                         f"{a.dtype.name}; cast with astype('float32')")


def _square(name: str, a: ndarray) -> None:
    if a.ndim < 2:
        raise ShapeError(f"linalg.{name}: the array must be at least two-dimensional, got "
                         f"shape {a.shape}")
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"linalg.{name}: the last two dimensions must be equal (square "
                         f"matrices), got shape {a.shape}")


def _batch_result(result: ndarray, a: ndarray) -> ndarray:
    """A ``_linalg_*`` result of one value per matrix, with the batch shape (``()`` for one
    matrix, where the legacy operator gives ``(1,)``)."""
    return result if result.shape == a.shape[:-2] else reshape(result, a.shape[:-2])


# -- inverses and determinants ------------------------------------------------------------------
def inv(a: Any) -> ndarray:
    """The inverse of each square matrix in ``a`` (..., M, M); float32 or float64.
    Gradient ``-A^-T dY A^-T``."""
    a = _operand(a)
    _floats_only("inv", a)
    _square("inv", a)
    return _run("_linalg_inverse", [a])


def det(a: Any) -> ndarray:
    """The determinant of each square matrix in ``a`` (..., M, M), shape ``a.shape[:-2]``;
    float32 or float64.  Gradient ``dY det(A) A^-T``."""
    a = _operand(a)
    _floats_only("det", a)
    _square("det", a)
    return _batch_result(_run("_linalg_det", [a]), a)


def slogdet(a: Any) -> list[ndarray]:
    """``[sign, log|det|]`` (a list, as MXNet's) of each square matrix in ``a`` (a zero
    determinant gives sign 0 and ``-inf``); float32 or float64.  Gradient (of the log)
    ``dY A^-T``; the sign has none."""
    a = _operand(a)
    _floats_only("slogdet", a)
    _square("slogdet", a)
    return [_batch_result(part, a) for part in _run("_linalg_slogdet", [a])]


def tensorinv(a: Any, ind: int = 2) -> ndarray:
    """The inverse of ``a`` for ``tensordot(., ., ind)``: shape ``a.shape[ind:] +
    a.shape[:ind]``, where ``prod(a.shape[:ind]) == prod(a.shape[ind:])``; float32 or
    float64."""
    a = _operand(a)
    _floats_only("tensorinv", a)
    ind = int(ind)
    if ind <= 0:
        raise NumpyError(f"linalg.tensorinv: ind must be a positive integer, got {ind}")
    if a.ndim == 0:
        raise ShapeError("linalg.tensorinv: a 0-d array has no tensor inverse")
    front, back = a.shape[:ind], a.shape[ind:]
    rows, cols = math.prod(front), math.prod(back)
    if rows != cols or cols == 0:
        raise ShapeError(f"linalg.tensorinv: a of shape {a.shape} is not 'square' for ind={ind}: "
                         f"prod(a.shape[:ind]) = {rows}, prod(a.shape[ind:]) = {cols}")
    matrix = reshape(a, (rows, cols))
    return reshape(_run("_linalg_inverse", [matrix]), back + front)


# -- solvers -------------------------------------------------------------------------------------
def solve(a: Any, b: Any) -> ndarray:
    """``x`` with ``a @ x = b``: ``a`` (..., M, M), ``b`` (..., M) or (..., M, K) with ``a``'s
    batch shape.  float32 when both are float32, else float64.  Gradients ``db = a^-T dx``,
    ``da = -db x^T``."""
    return _run("_npi_solve", [_operand(a), _operand(b)])


def tensorsolve(a: Any, b: Any, axes: Sequence[int] | None = None) -> ndarray:
    """``x`` with ``tensordot(a, x, x.ndim) = b``, after moving ``axes`` of ``a`` to its end;
    ``x`` has the shape of ``a``'s trailing axes whose sizes multiply to ``b.size``."""
    a, b = _operand(a), _operand(b)
    if axes is not None and a.ndim:
        moved = [normalize_axis(k, a.ndim) for k in axes]
        order = [k for k in range(a.ndim) if k not in moved] + moved
        a = transpose(a, order)
    if a.ndim == 0 or b.ndim == 0:  # MXNet: a one-element x, shaped as a when b is 0-d
        if (b if a.ndim == 0 else a).size != 1:
            raise ShapeError(f"linalg.tensorsolve: a of shape {a.shape} and b of shape "
                             f"{b.shape} do not match (with a 0-d operand the other must "
                             f"have one element)")
        x_shape = a.shape if b.ndim == 0 else ()
    else:
        lead = b.ndim if a.ndim > b.ndim else b.ndim - a.ndim
        x_shape = a.shape[lead:]
        if math.prod(a.shape[:lead]) != math.prod(x_shape):
            raise ShapeError(f"linalg.tensorsolve: a of shape {a.shape} is not 'square': its "
                             f"first {lead} axes hold {math.prod(a.shape[:lead])} elements, "
                             f"the rest {math.prod(x_shape)}")
        if math.prod(x_shape) != b.size:
            raise ShapeError(f"linalg.tensorsolve: a of shape {a.shape} and b of shape "
                             f"{b.shape} do not match: b has {b.size} elements, the solution "
                             f"{math.prod(x_shape)}")
    n = math.prod(x_shape)
    x = solve(reshape(a, (n, n)), reshape(b, (n,)))
    return reshape(x, x_shape)


def cholesky(a: Any) -> ndarray:
    """The lower triangular ``L`` with ``a = L @ L.T`` of each symmetric positive definite
    matrix in ``a``, of which only the lower triangle is read; float32 or float64.  The
    gradient is symmetric (MXNet's): right for symmetric changes of ``a``."""
    return _run("_npi_cholesky", [_operand(a)])


def svd(a: Any) -> tuple[ndarray, ndarray, ndarray]:
    """``(ut, s, v)`` with ``a = ut @ diag(s) @ v`` for ``a`` (..., M, N), ``M <= N``: ``ut``
    (..., M, M) and ``v`` (..., M, N) orthonormal, ``s`` (..., M) descending, each row of ``v``
    (and column of ``ut``) signed so its largest-magnitude entry is positive.  float32 or
    float64; the gradient assumes distinct nonzero singular values."""
    return _run("_npi_svd", [_operand(a)])


def pinv(a: Any, rcond: Any = 1e-15, hermitian: bool = False) -> ndarray:
    """The Moore-Penrose pseudo-inverse (..., N, M) of ``a`` (..., M, N), from its SVD with
    the singular values at most ``rcond * max`` dropped (``rcond``: a number, or an array
    broadcasting against ``a``'s batch shape, of ``a``'s dtype).  float32 or float64.  The
    gradient is exact where the rank does not change."""
    if hermitian:
        raise NotImplementedError("linalg.pinv: hermitian=True is not supported (MXNet 1.9.1 "
                                  "does not support it either); use hermitian=False")
    a = _operand(a)
    if onp.isscalar(rcond):
        return _run("_npi_pinv_scalar_rcond", [a], rcond=float(rcond), hermitian=False)
    if isinstance(rcond, NDArray):
        rcond = _ew.as_operand(rcond)
    else:
        from ._creation import array

        rcond = array(onp.asarray(rcond), dtype=a.dtype, ctx=a.context)
    return _run("_npi_pinv", [a, rcond], hermitian=False)


# -- eigenvalues ---------------------------------------------------------------------------------
def eigvals(a: Any) -> ndarray:
    """The eigenvalues (..., M) of each square matrix in ``a``, in LAPACK's order; complex
    eigenvalues are an error.  float32 stays, other dtypes give float64.  No gradient
    (zero, as MXNet's)."""
    return _run("_npi_eigvals", [_operand(a)])


def eig(a: Any) -> tuple[ndarray, ndarray]:
    """``(w, v)``: the eigenvalues and the unit right eigenvectors (the columns of ``v``) of
    each square matrix in ``a``; complex eigenvalues are an error.  No gradient (zero, as
    MXNet's)."""
    return _run("_npi_eig", [_operand(a)])


def eigvalsh(a: Any, UPLO: str = "L") -> ndarray:  # noqa: N803 - NumPy's name
    """The eigenvalues, ascending, of the symmetric matrices in the lower (``UPLO='L'``) or
    upper (``'U'``) triangle of ``a``.  float32 stays, other dtypes give float64."""
    return _run("_npi_eigvalsh", [_operand(a)], UPLO=UPLO)


def eigh(a: Any, UPLO: str = "L") -> tuple[ndarray, ndarray]:  # noqa: N803 - NumPy's name
    """``(w, v)``: ascending eigenvalues and eigenvectors (the columns of ``v``, each signed
    so its largest-magnitude entry is positive) of the symmetric matrices in the lower
    (``UPLO='L'``) or upper (``'U'``) triangle of ``a``."""
    return _run("_npi_eigh", [_operand(a)], UPLO=UPLO)


# -- norms ---------------------------------------------------------------------------------------
_INF = ("inf", onp.inf)
_NEG_INF = ("-inf", -onp.inf)


def _norm_axes(x: ndarray, ord: Any, axis: Any) -> tuple[int, ...] | None:  # noqa: A002
    """The axes a norm reduces, or None for all elements (MXNet's reading of axis=None)."""
    if axis is None:
        if ord is None or x.ndim < 2:
            return None
        return (x.ndim - 2, x.ndim - 1)
    if isinstance(axis, (bool, onp.bool_)) or not isinstance(axis, (int, onp.integer, tuple)):
        raise TypeError(f"linalg.norm: 'axis' must be None, an integer or a tuple of "
                        f"integers, got {axis!r}")
    axes = tuple(normalize_axis(k, x.ndim) for k in (axis if isinstance(axis, tuple)
                                                      else (axis,)))
    if len(set(axes)) != len(axes):
        raise NumpyError(f"linalg.norm: duplicate axes in axis={axis}")
    if len(axes) not in (1, 2):
        raise NumpyError(f"linalg.norm: axis={axis} names {len(axes)} axes; a norm takes one "
                         f"(vectors) or two (matrices)")
    return axes


def _is(ord: Any, options: tuple[Any, ...]) -> bool:  # noqa: A002
    """``ord`` is one of ``options`` (strings compared with strings, numbers with numbers)."""
    return any(isinstance(ord, str) == isinstance(o, str) and ord == o for o in options)


def _vector_norm(x: ndarray, ord: Any, axes: tuple[int, ...] | None) -> ndarray:  # noqa: A002
    """Norms over ``axes`` (None: every element), the reduced axes kept."""
    if ord is None or _is(ord, (2, "fro", "f")):
        return _ew.sqrt(_sum(_ew.square(x), axis=axes, keepdims=True))
    if isinstance(ord, str) and not _is(ord, _INF + _NEG_INF):
        raise NumpyError(f"linalg.norm: invalid norm order {ord!r} for vectors (expected a "
                         f"number, 'inf', '-inf' or 'fro')")
    magnitude = _ew.abs(x)
    if _is(ord, _INF):
        return _max(magnitude, axis=axes, keepdims=True)
    if _is(ord, _NEG_INF):
        return _min(magnitude, axis=axes, keepdims=True)
    if ord == 0:
        return _sum(_ew.not_equal(x, 0), axis=axes, keepdims=True).astype(x.dtype)
    if ord == 1:
        return _sum(magnitude, axis=axes, keepdims=True)
    p = float(ord)
    return _ew.power(_sum(_ew.power(magnitude, p), axis=axes, keepdims=True), 1.0 / p)


def _singular_values(x: ndarray, rows: int, cols: int) -> ndarray:
    """The singular values of the matrices in axes ``rows``, ``cols`` of ``x``, in the last
    axis after the others (``svd`` wants no more rows than columns: the transpose has the
    same singular values)."""
    if x.shape[rows] > x.shape[cols]:
        rows, cols = cols, rows
    order = [k for k in range(x.ndim) if k not in (rows, cols)] + [rows, cols]
    return svd(transpose(x, order))[1]


def _matrix_norm(x: ndarray, ord: Any, rows: int, cols: int) -> ndarray:  # noqa: A002
    """Norms of the matrices in axes ``rows``, ``cols`` of ``x``, those axes kept."""
    kept = tuple(1 if k in (rows, cols) else d for k, d in enumerate(x.shape))
    if ord is None or _is(ord, ("fro", "f")):
        return _vector_norm(x, None, (rows, cols))
    if _is(ord, ("nuc", 2, -2)):
        values = _singular_values(x, rows, cols)
        reduce = _sum if ord == "nuc" else _max if ord == 2 else _min
        return reshape(reduce(values, axis=-1), kept)
    if isinstance(ord, str) and not _is(ord, _INF + _NEG_INF):
        raise NumpyError(f"linalg.norm: invalid norm order {ord!r} for matrices (expected "
                         f"'fro', 'nuc', 'inf', '-inf' or a number)")
    # +-1 sum down the columns; any other order, as in MXNet, along the rows (+-inf)
    summed, across = (rows, cols) if _is(ord, (1, -1)) else (cols, rows)
    largest = _is(ord, _INF) or (not isinstance(ord, str) and ord > 0)
    sums = _sum(_ew.abs(x), axis=summed, keepdims=True)
    return (_max if largest else _min)(sums, axis=across, keepdims=True)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> ndarray:  # noqa: A002
    """The vector norm (over one axis, or every element) or matrix norm (over two axes) of
    ``x``, as MXNet's ``np.linalg.norm`` (see the module's notes on ``ord`` and ``axis``).
    Gradients are those of the operations composed: ``x / norm`` for the 2-norm,
    ``sign(x) (|x| / norm)^(p-1)`` for a p-norm, the SVD's for spectral and nuclear norms."""
    x = _operand(x)
    if x.dtype == onp.bool_:
        raise DTypeError("linalg.norm: bool arrays are not supported; cast with "
                         "astype('float32')")
    axes = _norm_axes(x, ord, axis)
    if axis is None and _is(ord, ("inf", "-inf")):  # MXNet: the extreme |x| of all elements
        axes = None
    work = x.astype(onp.float64) if x.dtype.kind in "iu" else x
    if axes is None or len(axes) == 1:
        if _is(ord, ("nuc",)):
            raise NumpyError("linalg.norm: invalid norm order 'nuc' for vectors")
        result = _vector_norm(work, ord, axes)
    else:
        if work is not x and _is(ord, ("nuc", 2, -2)):
            raise DTypeError(f"linalg.norm: ord={ord!r} (from the SVD) supports float32 and "
                             f"float64 arrays only, got {x.dtype.name}")
        result = _matrix_norm(work, ord, *axes)
    if result.dtype != x.dtype:
        result = result.astype(x.dtype)
    if not keepdims:
        reduced = range(x.ndim) if axes is None else axes
        result = reshape(result, tuple(d for k, d in enumerate(x.shape) if k not in reduced))
    return result
