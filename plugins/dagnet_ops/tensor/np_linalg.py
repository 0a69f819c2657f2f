"""NumPy's linear algebra operators (MXNet's ``src/operator/numpy/linalg``, the ``_npi_*``
kernels behind ``mx.np.linalg``) that the legacy ``_linalg_*`` operators do not cover.

Every operator works on the last two axes; leading axes are a batch, and zero-size
batches or matrices give zero-size results.  Dtypes are MXNet's: ``svd``, ``cholesky``
and ``pinv`` take float32 or float64 and keep it; ``solve`` and the eigen-solvers compute
in float32 when every input is float32 and in float64 otherwise (integer inputs too);
float16 and bool are refused.

Gradients: ``svd``, ``cholesky`` and ``solve`` have MXNet's (``cholesky``'s is the
symmetric one of ``_linalg_potrf``, although it reads one triangle, as MXNet's); ``eigh``,
``eigvalsh`` and ``pinv`` have the exact gradient of what they compute, where MXNet's
gradient is zero; ``eig`` and ``eigvals`` have a zero gradient, as MXNet's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dagnet import DTypeError
from dagnet.operator import Case, Field, Params

from . import _sampling as S
from ._common import broadcast_shape, known, shape_error
from .linalg import (
    CholeskyParam,
    diag_matrix,
    ops,
    potrf_backward,
    row_signs,
    spd_matrix,
    syevd_backward,
)

Fn = Callable[..., Any]
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _t(x: Any) -> Any:
    return x.swapaxes(-1, -2)


# -- shapes and dtypes ---------------------------------------------------------------------------
def _matrices(op: str, shape: Any, *, square: bool = True) -> None:
    if len(shape) < 2:
        raise shape_error(op, f"the input must be at least two-dimensional (..., M, N), got "
                              f"shape {tuple(shape)}")
    if square and shape[-1] != shape[-2]:
        raise shape_error(op, f"the input must be square matrices (..., M, M), got shape "
                              f"{tuple(shape)}")


def _matrix_infer(op: str, outputs: Fn, *, square: bool = True, check: Fn | None = None) -> Fn:
    """The shape rule of an operator on (a batch of) matrices in its first input:
    ``outputs(shape)`` gives the output shapes, ``check(ins)`` any further rule."""
    def infer(attrs, ins, outs):
        a = ins[0]
        if not known(a):
            return ins, outs
        _matrices(op, a, square=square)
        if check is not None:
            check(ins)
        return ins, outputs(tuple(a))
    return infer


def _compute_type(op: str, dtype: Any, integers: bool) -> np.dtype:
    """float32 and float64 stay; integers are computed in float64 where ``integers``."""
    d = np.dtype(dtype)
    if d in (_F32, _F64):
        return d
    if integers and d.kind in "iu":
        return _F64
    allowed = "float32, float64 or an integer type" if integers else "float32 or float64"
    raise DTypeError(f"operator {op!r}: input of dtype {d.name} is not supported (it takes "
                     f"{allowed})")


def _type_rule(op: str, n_out: int, integers: bool) -> Fn:
    """Outputs in float32 when every input is float32, else float64."""
    def infer(attrs, ins, outs):
        if any(t is None for t in ins):
            return ins, outs
        kinds = [_compute_type(op, t, integers) for t in ins]
        return ins, [_F32 if all(k == _F32 for k in kinds) else _F64] * n_out
    return infer


def _empty(xp, shapes, dtype):
    return [xp.zeros(s, dtype=dtype) for s in shapes]


def _from_triangle(xp, a, upper: bool):
    """The symmetric matrix of ``a``'s lower (or upper) triangle; the other is not read."""
    tri = _t(xp.triu(a)) if upper else xp.tril(a)
    return tri + _t(xp.tril(tri, -1))


def _to_triangle(xp, sym, upper: bool):
    """The gradient w.r.t. the triangle read from that w.r.t. the symmetric matrix."""
    diag = diag_matrix(xp, xp.diagonal(sym, axis1=-2, axis2=-1))
    return (2 * xp.triu(sym, 1) if upper else 2 * xp.tril(sym, -1)) + diag


def _distinct_spectrum(draw, m: int, n: int) -> np.ndarray:
    """An (m, n) matrix ``Q1 diag(s) Q2`` with singular values well apart and singular vectors
    with one clearly largest entry each (so MXNet's sign rule is smooth around it)."""
    q1, _ = np.linalg.qr(S.floats(draw, (m, m), -1, 1) + 4 * np.eye(m))
    q2, _ = np.linalg.qr(S.floats(draw, (n, n), -1, 1) + 4 * np.eye(n))
    s = np.arange(m, 0, -1) * 1.5 + S.number(draw, 0.5, 1, label="smallest singular value")
    return (q1 * s) @ q2[:m]


# -- svd -----------------------------------------------------------------------------------------
def _svd_check(ins):
    a = ins[0]
    if a[-2] > a[-1]:
        raise shape_error("_npi_svd", f"the input must have M <= N (..., M, N), got shape "
                                      f"{tuple(a)}; take the SVD of the transpose")


def _svd(xp, p, a):
    if a.size == 0:
        return _empty(xp, [a.shape[:-1] + (a.shape[-2],), a.shape[:-1], a.shape], a.dtype)
    u, s, v = xp.linalg.svd(a, full_matrices=False)
    sign = row_signs(xp, v)
    return [u * _t(sign), s, v * sign]


def _svd_backward(xp, p, grads, ins, outs):
    dut, dl, dv = grads
    ut, lam, v = outs
    if v.size == 0:
        return [xp.zeros(v.shape, dtype=v.dtype)]
    eps = 1e-30 if v.dtype == _F32 else 1e-100  # MXNet's floor for the divisions below
    dv_l = dv / xp.maximum(lam, eps)[..., :, None]
    g = xp.matmul(dv_l, _t(v))
    dg = xp.diagonal(g, axis1=-2, axis2=-1)
    g = g * lam[..., None, :] + xp.matmul(_t(dut), ut)
    li, lj = lam[..., :, None], lam[..., None, :]
    m = lam.shape[-1]
    above = xp.triu(xp.ones((m, m), dtype=bool), 1)
    e = xp.where(above, (g - _t(g)) / xp.maximum(li - lj, eps) / xp.maximum(li + lj, eps), 0)
    x = e * lj + _t(e * li) + diag_matrix(xp, dl - dg)
    return [xp.matmul(ut, xp.matmul(x, v) + dv_l)]


def _svd_case(draw):
    m = S.integer(draw, 1, 3, "m")
    n = m + S.integer(draw, 0, 2, "extra columns")
    batch = S.shape(draw, min_dims=0, max_dims=1, max_side=2)
    mats = [_distinct_spectrum(draw, m, n) for _ in range(int(np.prod(batch)))]
    return Case([np.reshape(mats, batch + (m, n))])


def _np_svd(p, a):
    u, s, v = np.linalg.svd(a, full_matrices=False)
    idx = np.argmax(np.abs(v), axis=-1)[..., None]
    sign = np.where(np.take_along_axis(v, idx, axis=-1) < 0, -1.0, 1.0)
    return [u * sign.swapaxes(-1, -2), s, v * sign]


# -- cholesky ------------------------------------------------------------------------------------
def _cholesky(xp, p, a):
    if a.size == 0:
        return xp.zeros(a.shape, dtype=a.dtype)
    lower = xp.linalg.cholesky(_from_triangle(xp, a, upper=not p.lower))
    return lower if p.lower else _t(lower)


def _cholesky_backward(xp, p, grads, ins, outs):
    if outs[0].size == 0:
        return [xp.zeros(outs[0].shape, dtype=outs[0].dtype)]
    return potrf_backward(xp, p, grads, ins, outs)


def _np_cholesky(p, a):
    lower = np.linalg.cholesky(np.tril(a) if p.lower else np.triu(a).swapaxes(-1, -2))
    return lower if p.lower else lower.swapaxes(-1, -2)


# -- solve ---------------------------------------------------------------------------------------
def _solve_infer(attrs, ins, outs):
    a, b = ins
    if not (known(a) and known(b)):
        return ins, [tuple(b)] if known(b) else outs
    _matrices("_npi_solve", a)
    if len(b) not in (len(a) - 1, len(a)) or tuple(a[:-2]) != tuple(b[:len(a) - 2]):
        raise shape_error("_npi_solve", f"B must be (..., M) or (..., M, K) with A's batch "
                                        f"shape: A has shape {tuple(a)}, B {tuple(b)}")
    rows = b[-1] if len(b) == len(a) - 1 else b[-2]
    if rows != a[-1]:
        raise shape_error("_npi_solve", f"A {tuple(a)} and B {tuple(b)} do not match: B has "
                                        f"{rows} rows, A has {a[-1]} columns")
    return ins, [tuple(b)]


def _solve(xp, p, a, b):
    dtype = _F32 if a.dtype == _F32 and b.dtype == _F32 else _F64
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    if b.size == 0:
        return xp.zeros(b.shape, dtype=dtype)
    if b.ndim == a.ndim - 1:
        return xp.linalg.solve(a, b[..., None])[..., 0]
    return xp.linalg.solve(a, b)


def _solve_backward(xp, p, grads, ins, outs):
    g, (a, b), x = grads[0], ins, outs[0]
    if x.size == 0:
        return _empty(xp, [a.shape, b.shape], x.dtype)
    vector = b.ndim == a.ndim - 1
    a = a.astype(x.dtype, copy=False)
    db = xp.linalg.solve(_t(a), g[..., None] if vector else g)
    da = -xp.matmul(db, _t(x[..., None] if vector else x))
    return [da, db[..., 0] if vector else db]


def _invertible(draw, n, batch):
    return S.floats(draw, batch + (n, n), -0.5, 0.5) + 2 * np.eye(n)


def _solve_case(draw):
    n = S.integer(draw, 1, 3, "n")
    batch = S.shape(draw, min_dims=0, max_dims=1, max_side=3)
    vector = S.boolean(draw, "B is a vector")
    rhs = batch + ((n,) if vector else (n, S.integer(draw, 1, 3, "k")))
    return Case([_invertible(draw, n, batch), S.floats(draw, rhs)])


def _np_solve(p, a, b):
    if b.ndim == a.ndim - 1:
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


# -- eig, eigvals --------------------------------------------------------------------------------
def _eig_infer(op: str, vectors: bool) -> Fn:
    return _matrix_infer(op, lambda a: [a[:-1], a] if vectors else [a[:-1]])


def _real_eig(xp, a, vectors: bool):
    """LAPACK's ``geev`` on the host (cupy has no general eigen-solver); complex eigenvalues
    are refused, as MXNet refuses them."""
    dtype = _F32 if a.dtype == _F32 else _F64
    host = (a.get() if hasattr(a, "get") else np.asarray(a)).astype(dtype, copy=False)
    w, v = np.linalg.eig(host) if vectors else (np.linalg.eigvals(host), None)
    if np.iscomplexobj(w):
        if np.abs(w.imag).max(initial=0.0) > 1e-15:
            raise np.linalg.LinAlgError("the matrix has complex eigenvalues; MXNet's eig and "
                                        "eigvals return real ones only")
        w, v = w.real, None if v is None else v.real
    return [xp.asarray(w)] if v is None else [xp.asarray(w), xp.asarray(v)]


def _real_spectrum(draw):
    """``P diag(w) P^-1`` with real eigenvalues well apart and a well-conditioned P."""
    n = S.integer(draw, 1, 3, "n")
    batch = S.shape(draw, min_dims=0, max_dims=1, max_side=2)
    mats = []
    for _ in range(int(np.prod(batch))):
        basis = S.floats(draw, (n, n), -0.5, 0.5) + 2 * np.eye(n)
        w = np.arange(n) * 1.5 + S.number(draw, -1, 1, label="smallest eigenvalue")
        mats.append((basis * w) @ np.linalg.inv(basis))
    return Case([np.reshape(mats, batch + (n, n))])


def _np_eig(vectors: bool) -> Fn:
    def reference(p, a):
        w, v = np.linalg.eig(a)
        return [w.real, v.real] if vectors else w.real
    return reference


# -- eigh, eigvalsh ------------------------------------------------------------------------------
class EighParam(Params):
    UPLO = Field(str, "L", "Read the lower ('L') or upper ('U') triangle of the symmetric "
                           "matrix; any other letter reads the lower one, as MXNet does.")


def _eigh(vectors: bool) -> Fn:
    def forward(xp, p, a):
        dtype = _F32 if a.dtype == _F32 else _F64
        if a.size == 0:
            w, v = _empty(xp, [a.shape[:-1], a.shape], dtype)
        else:
            sym = _from_triangle(xp, a.astype(dtype, copy=False), upper=p.UPLO == "U")
            w, v = xp.linalg.eigh(sym)
            # MXNet's sign: each eigenvector's (column's) largest-magnitude entry is positive
            v = v * _t(row_signs(xp, _t(v)))
        return [w, v] if vectors else w
    return forward


def _eigh_backward(xp, p, grads, ins, outs):
    if len(outs) == 2:
        (dw, dv), (w, v) = grads, outs
    else:  # eigvalsh: the eigenvectors again, for V diag(dw) V^T
        (dw,), (w,) = grads, outs
        dv, v = None, None
    a = ins[0]
    if a.size == 0:
        return [xp.zeros(a.shape, dtype=w.dtype)]
    if v is None:
        _, v = xp.linalg.eigh(_from_triangle(xp, a.astype(w.dtype, copy=False),
                                             upper=p.UPLO == "U"))
        dv = xp.zeros_like(v)
    sym = syevd_backward(xp, p, [_t(dv), dw], ins, [_t(v), w])[0]
    return [_to_triangle(xp, sym, upper=p.UPLO == "U")]


def _eigh_case(draw):
    n = S.integer(draw, 1, 3, "n")
    batch = S.shape(draw, min_dims=0, max_dims=1, max_side=2)
    upper = S.boolean(draw, "upper")
    mats = []
    for _ in range(int(np.prod(batch))):
        # eigenvalues well apart, eigenvectors each with one clearly largest entry
        q, _ = np.linalg.qr(S.floats(draw, (n, n), -1, 1) + 4 * np.eye(n))
        w = np.arange(n) * 1.5 + S.number(draw, -1, 1, label="smallest eigenvalue")
        unread = np.triu(S.floats(draw, (n, n)), 1)  # the triangle not read: any values
        mats.append((q * w) @ q.T + (unread.T if upper else unread))
    return Case([np.reshape(mats, batch + (n, n))], {"UPLO": "U" if upper else "L"})


def _np_eigh(vectors: bool) -> Fn:
    def reference(p, a):
        w, v = np.linalg.eigh(a, UPLO="U" if p.UPLO == "U" else "L")
        if not vectors:
            return w
        idx = np.argmax(np.abs(v), axis=-2)[..., None, :]
        return [w, v * np.where(np.take_along_axis(v, idx, axis=-2) < 0, -1.0, 1.0)]
    return reference


# -- pinv ----------------------------------------------------------------------------------------
class PinvParam(Params):
    hermitian = Field(bool, False, "Whether A is symmetric (not used: MXNet's front end "
                                   "refuses hermitian=True).")


class PinvScalarRcondParam(PinvParam):
    rcond = Field(float, 1e-15, "Singular values at most rcond times the largest one are "
                                "treated as zero.")


def _rcond_check(ins):
    """rcond broadcasts against A's batch shape, the cutoffs then to the singular values'."""
    a, rcond = ins
    if not known(rcond):
        return
    svals = tuple(a[:-2]) + (min(a[-2:]),)
    cutoff = broadcast_shape("_npi_pinv", tuple(rcond) + (1,), tuple(a[:-2]) + (1,),
                             ("rcond", "A's batch"))
    if broadcast_shape("_npi_pinv", svals, cutoff, ("singular values", "cutoff")) != svals:
        raise shape_error("_npi_pinv", f"rcond of shape {tuple(rcond)} does not broadcast to "
                                       f"the batch shape {tuple(a[:-2])} of A")


def _pinv_infer(with_rcond: bool) -> Fn:
    return _matrix_infer("_npi_pinv" if with_rcond else "_npi_pinv_scalar_rcond",
                         lambda a: [a[:-2] + (a[-1], a[-2])], square=False,
                         check=_rcond_check if with_rcond else None)


def _pinv_type(with_rcond: bool) -> Fn:
    op = "_npi_pinv" if with_rcond else "_npi_pinv_scalar_rcond"

    def infer(attrs, ins, outs):
        if ins[0] is None:
            return ins, outs
        dtype = _compute_type(op, ins[0], integers=False)
        if with_rcond and ins[1] is not None and np.dtype(ins[1]) != dtype:
            raise DTypeError(f"operator {op!r}: rcond has dtype {np.dtype(ins[1]).name}, A "
                             f"{dtype.name}; give rcond A's dtype")
        return ins, [dtype]
    return infer


def _pinv_parts(xp, a, rcond):
    """``(u, s^+, v)`` with ``pinv(a) = v^T diag(s^+) u^T``."""
    u, s, v = xp.linalg.svd(a, full_matrices=False)
    rcond = rcond[..., None] if hasattr(rcond, "ndim") else rcond
    large = s > rcond * s.max(axis=-1, keepdims=True)
    return u, xp.where(large, 1 / xp.where(large, s, 1), 0), v


def _pinv(with_rcond: bool) -> Fn:
    def forward(xp, p, a, rcond=None):
        m, n = a.shape[-2:]
        if a.size == 0:
            return xp.zeros(a.shape[:-2] + (n, m), dtype=a.dtype)
        u, s_inv, v = _pinv_parts(xp, a, rcond.astype(a.dtype) if with_rcond else p.rcond)
        return xp.matmul(_t(v) * s_inv[..., None, :], _t(u))
    return forward


def _pinv_backward(xp, p, grads, ins, outs):
    """The gradient where the rank stays the same: with ``P = pinv(A)``,
    ``dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P``."""
    g, a, pinv = grads[0], ins[0], outs[0]
    result = [xp.zeros(a.shape, dtype=a.dtype)] + [xp.zeros(r.shape, dtype=r.dtype)
                                                    for r in ins[1:]]
    if a.size == 0:
        return result
    m, n = a.shape[-2:]
    left = xp.eye(m, dtype=a.dtype) - xp.matmul(a, pinv)
    right = xp.eye(n, dtype=a.dtype) - xp.matmul(pinv, a)
    pt = _t(pinv)
    result[0] = (-xp.matmul(xp.matmul(pt, g), pt)
                 + xp.matmul(xp.matmul(left, _t(g)), xp.matmul(pinv, pt))
                 + xp.matmul(xp.matmul(pt, pinv), xp.matmul(_t(g), right)))
    return result


def _pinv_case(with_rcond: bool) -> Fn:
    def case(draw):
        m, n = S.integer(draw, 1, 3, "m"), S.integer(draw, 1, 3, "n")
        # an rcond array needs a batch: a 0-d one has no legacy shape, and a (1,) one would
        # broadcast one matrix's singular values to (1, k)
        batch = S.shape(draw, min_dims=int(with_rcond), max_dims=1, max_side=2)
        a = S.floats(draw, batch + (m, n), -0.5, 0.5)
        a[..., range(min(m, n)), range(min(m, n))] += 2  # full rank, far from rank loss
        if not with_rcond:
            return Case([a], {"rcond": S.number(draw, 1e-6, 1e-3, label="rcond")})
        shape = batch if S.boolean(draw, "rcond per matrix") else (1,)
        return Case([a, np.full(shape, S.number(draw, 1e-6, 1e-3, label="rcond"))])
    return case


def _np_pinv(with_rcond: bool) -> Fn:
    def reference(p, a, rcond=None):
        u, s, v = np.linalg.svd(a, full_matrices=False)
        cut = (np.asarray(rcond)[..., None] if with_rcond else p.rcond) * s.max(-1, keepdims=True)
        s_inv = np.where(s > cut, 1 / s, 0)
        return (v.swapaxes(-1, -2) * s_inv[..., None, :]) @ u.swapaxes(-1, -2)
    return reference


OPS = [
    *ops("svd", _svd, _svd_backward, prefix="npi", inputs=["A"], outputs=3,
         infer=_matrix_infer("_npi_svd", lambda a: [a[:-1] + (a[-2],), a[:-1], a],
                             square=False, check=_svd_check),
         output_names=["UT", "L", "V"], uses=("out_grad", "out_data"),
         infer_type=_type_rule("_npi_svd", 3, integers=False), case=_svd_case,
         reference=_np_svd,
         desc="Singular value decomposition ``A = UT diag(L) V`` of (..., M, N) A with M <= N: "
              "UT (..., M, M) and V (..., M, N) orthonormal, L descending; each row of V (and "
              "column of UT) signed so its largest-magnitude entry is positive (MXNet's).  "
              "float32 or float64.  Gradient: MXNet's, for distinct nonzero singular values."),
    *ops("cholesky", _cholesky, _cholesky_backward, prefix="npi", params=CholeskyParam,
         infer=_matrix_infer("_npi_cholesky", lambda a: [a]), inputs=["A"],
         uses=("out_grad", "out_data"),
         infer_type=_type_rule("_npi_cholesky", 1, integers=False),
         case=lambda draw: Case([spd_matrix(draw)], {"lower": S.boolean(draw, "lower")}),
         reference=_np_cholesky, differentiable=(),
         desc="Cholesky factor L (``A = L L^T``) of symmetric positive definite A, reading A's "
              "lower triangle only (with lower=False: U, ``A = U^T U``, from the upper one), "
              "as LAPACK's potrf.  float32 or float64.  Gradient: ``_linalg_potrf``'s "
              "symmetric one (MXNet's), right for symmetric changes of A."),
    *ops("solve", _solve, _solve_backward, prefix="npi", infer=_solve_infer,
         inputs=["A", "B"], uses=("out_grad", "in_data", "out_data"),
         infer_type=_type_rule("_npi_solve", 1, integers=True), case=_solve_case,
         reference=_np_solve,
         desc="X with ``A X = B`` for square A (..., M, M) and B (..., M) or (..., M, K), A's "
              "batch shape exactly (no broadcasting).  Gradients ``dB = A^-T dX``, "
              "``dA = -dB X^T``."),
    *ops("eigvals", lambda xp, p, a: _real_eig(xp, a, False)[0], None, prefix="npi",
         infer=_eig_infer("_npi_eigvals", False), inputs=["A"],
         infer_type=_type_rule("_npi_eigvals", 1, integers=True), case=_real_spectrum,
         reference=_np_eig(False),
         desc="Eigenvalues of square real matrices in LAPACK's geev order; complex "
              "eigenvalues are an error.  Gradient: zero (MXNet's)."),
    *ops("eig", lambda xp, p, a: _real_eig(xp, a, True), None, prefix="npi",
         infer=_eig_infer("_npi_eig", True), inputs=["A"], outputs=2,
         output_names=["w", "v"], infer_type=_type_rule("_npi_eig", 2, integers=True),
         case=_real_spectrum, reference=_np_eig(True),
         desc="Eigenvalues w and right eigenvectors (the unit columns of v, LAPACK's geev) of "
              "square real matrices; complex eigenvalues are an error.  Gradient: zero "
              "(MXNet's)."),
    *ops("eigvalsh", _eigh(False), _eigh_backward, prefix="npi", params=EighParam,
         infer=_eig_infer("_npi_eigvalsh", False), inputs=["A"],
         uses=("out_grad", "in_data", "out_data"),
         infer_type=_type_rule("_npi_eigvalsh", 1, integers=True), case=_eigh_case,
         reference=_np_eigh(False),
         desc="Eigenvalues, ascending, of the symmetric matrix in A's lower (UPLO='L') or "
              "upper ('U') triangle.  Gradient ``V diag(dw) V^T`` on that triangle."),
    *ops("eigh", _eigh(True), _eigh_backward, prefix="npi", params=EighParam,
         infer=_eig_infer("_npi_eigh", True), inputs=["A"], outputs=2, output_names=["w", "v"],
         uses=("out_grad", "in_data", "out_data"),
         infer_type=_type_rule("_npi_eigh", 2, integers=True), case=_eigh_case,
         reference=_np_eigh(True),
         desc="Eigenvalues w (ascending) and eigenvectors (the columns of v, each signed so its "
              "largest-magnitude entry is positive, as MXNet's) of the symmetric matrix in A's "
              "lower (UPLO='L') or upper ('U') triangle.  Gradient: ``_linalg_syevd``'s, on "
              "that triangle."),
    *ops("pinv", _pinv(True), _pinv_backward, prefix="npi", params=PinvParam,
         infer=_pinv_infer(True), inputs=["A", "rcond"],
         uses=("out_grad", "in_data", "out_data"), infer_type=_pinv_type(True),
         case=_pinv_case(True), reference=_np_pinv(True), differentiable=(0,),
         desc="Moore-Penrose pseudo-inverse (..., N, M) of (..., M, N) A by SVD, singular "
              "values at most ``rcond * max`` dropped (rcond broadcasts over A's batch).  "
              "float32 or float64.  Gradient: the exact one while the rank is unchanged; zero "
              "for rcond."),
    *ops("pinv_scalar_rcond", _pinv(False), _pinv_backward, prefix="npi",
         params=PinvScalarRcondParam, infer=_pinv_infer(False), inputs=["A"],
         uses=("out_grad", "in_data", "out_data"), infer_type=_pinv_type(False),
         case=_pinv_case(False), reference=_np_pinv(False),
         desc="``_npi_pinv`` with one rcond for every matrix, as a parameter."),
]
