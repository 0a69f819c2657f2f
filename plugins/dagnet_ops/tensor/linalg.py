"""Linear algebra on batches of matrices (MXNet's ``la_op.cc``, ``mx.nd.linalg.*``).

Every operator works on the last two axes (``gemm``/``gemm2`` take the row axis as
``axis``); leading axes are a batch.  Operators that read only one triangle of a
square input (``potrf``, ``syevd`` read a symmetric matrix; ``trsm``/``trmm``
a triangular one; ``potri`` a Cholesky factor) take their gradient on the entries
they read: ``potrf`` and ``syevd`` use the symmetric part ``(A + A^T)/2`` and give a
symmetric gradient, as MXNet's; the triangular ones give a triangular gradient.
Dtype = the inputs'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, NoParams, Op, Params, ZeroGradient

from . import _sampling as S
from ._common import backward_op, known, norm_axis, put, with_attrs

Fn = Callable[..., Any]


def _t(x: Any) -> Any:
    return x.swapaxes(-1, -2)


def _sym(x: Any) -> Any:
    return 0.5 * (x + _t(x))


def _error(op: str, message: str) -> ShapeError:
    return ShapeError(f"operator '_linalg_{op}': {message}")


def _square(op: str, shape: Any, what: str = "A") -> None:
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise _error(op, f"{what} must be a batch of square matrices (..., n, n), got "
                         f"{tuple(shape)}")


def ops(name: str, forward: Fn, backward: Fn | None, *, infer: Fn, inputs: list[str],
        outputs: int = 1, params: type[Params] = NoParams, uses=("out_grad", "in_data"),
        case: Fn, reference: Fn, desc: str, rtol: float = 1e-5, grad_rtol: float = 1e-4,
        output_names: list[str] | None = None, prefix: str = "linalg",
        infer_type: Fn | None = None, differentiable: tuple[int, ...] | None = None
        ) -> list[Op]:
    """The records of ``_<prefix>_<name>`` and its ``_backward_<prefix>_<name>``, from
    ``forward(xp, attrs, *inputs) -> output(s)`` and ``backward(xp, attrs, grads, inputs,
    outputs) -> input gradients`` (None: the gradient is zero, as for MXNet's ``_npi_eig``;
    no backward record), with the conformance domain ``case``/``reference`` in float64
    (``differentiable``: the inputs whose gradient is checked numerically)."""
    full = f"_{prefix}_{name}"
    n_uses = {"out_grad": outputs, "in_data": len(inputs), "out_data": outputs}

    def compute(attrs, ctx, ins, req, outs):
        got = forward(ctx.xp, attrs, *ins)
        for out, r, value in zip(outs, req, got if outputs > 1 else [got]):
            put(out, r, value)

    def back(attrs, ctx, ins, req, outs):
        pieces, at = {}, 0
        for use in uses:
            pieces[use] = ins[at:at + n_uses[use]]
            at += n_uses[use]
        grads = backward(ctx.xp, attrs, pieces.get("out_grad"), pieces.get("in_data"),
                         pieces.get("out_data"))
        for out, r, value in zip(outs, req, grads):
            put(out, r, value)

    gradient = ZeroGradient() if backward is None else \
        Gradient(f"_backward_{prefix}_{name}", uses)
    forward_op = Op(full, params=params, num_inputs=len(inputs), input_names=inputs,
                    num_outputs=outputs, output_names=output_names, infer_shape=infer,
                    infer_type=infer_type, compute={XP: compute}, gradient=gradient,
                    domain=Domain(case, reference=with_attrs(params, full, reference),
                                  differentiable=differentiable, rtol=rtol, atol=1e-7,
                                  grad_rtol=grad_rtol, grad_atol=1e-6, dtypes=("float64",)),
                    description=desc)
    if backward is None:
        return [forward_op]
    return [forward_op, backward_op(f"{prefix}_{name}", params, sum(n_uses[u] for u in uses),
                                    len(inputs), back)]


# -- gemm, gemm2 --------------------------------------------------------------------------------
class Gemm2Param(Params):
    transpose_a = Field(bool, False, "Multiply with transposed of first input (A).")
    transpose_b = Field(bool, False, "Multiply with transposed of second input (B).")
    alpha = Field(float, 1.0, "Scalar factor multiplied with A*B.")
    axis = Field(int, -2, "Axis corresponding to the matrix rows.")


class GemmParam(Gemm2Param):
    beta = Field(float, 1.0, "Scalar factor multiplied with C.")


def _rows_last(x: Any, axis: int) -> Any:
    """``x`` with its row axis moved next to the last (column) axis."""
    return np.moveaxis(x, axis % x.ndim, -2) if axis % x.ndim != x.ndim - 2 else x


def _rows_back(x: Any, axis: int) -> Any:
    return np.moveaxis(x, -2, axis % x.ndim) if axis % x.ndim != x.ndim - 2 else x


def _op_t(x: Any, flag: bool) -> Any:
    return _t(x) if flag else x


def _product(xp, p, a, b):
    return p.alpha * xp.matmul(_op_t(a, p.transpose_a), _op_t(b, p.transpose_b))


def _gemm_infer(with_c: bool) -> Fn:
    def infer(attrs, ins, outs):
        a, b = ins[0], ins[1]
        if not (known(a) and known(b)):
            if with_c and known(ins[2]):
                return ins, [tuple(ins[2])]
            return ins, outs
        axis = norm_axis("_linalg_gemm", attrs.axis, len(a))
        move = [d for i, d in enumerate(a) if i not in (axis, len(a) - 1)]
        ra, ca = a[axis], a[-1]
        rb, cb = b[axis], b[-1]
        m, k = (ca, ra) if attrs.transpose_a else (ra, ca)
        k2, n = (cb, rb) if attrs.transpose_b else (rb, cb)
        if k != k2 or len(a) != len(b):
            raise _error("gemm", f"A {tuple(a)} and B {tuple(b)} do not multiply "
                                 f"(transpose_a={attrs.transpose_a}, "
                                 f"transpose_b={attrs.transpose_b}, axis={attrs.axis})")
        out = list(move)
        out.insert(axis if axis < len(a) - 1 else len(out), m)
        out.append(n)
        out = tuple(out)
        if with_c:
            return [tuple(a), tuple(b), out], [out]
        return ins, [out]

    return infer


def _gemm_forward(xp, p, a, b, c=None):
    ax = p.axis
    out = _product(xp, p, _rows_last(a, ax), _rows_last(b, ax))
    if c is not None:
        out = out + p.beta * _rows_last(c, ax)
    return _rows_back(out, ax)


def _gemm_backward(xp, p, grads, ins, outs):
    ax = p.axis
    g = _rows_last(grads[0], ax)
    a, b = _rows_last(ins[0], ax), _rows_last(ins[1], ax)
    a_op, b_op = _op_t(a, p.transpose_a), _op_t(b, p.transpose_b)
    da_op = p.alpha * xp.matmul(g, _t(b_op))
    db_op = p.alpha * xp.matmul(_t(a_op), g)
    result = [_rows_back(_op_t(da_op, p.transpose_a), ax),
              _rows_back(_op_t(db_op, p.transpose_b), ax)]
    if len(ins) == 3:
        result.append(_rows_back(p.beta * g, ax))
    return result


def _gemm_case(with_c: bool) -> Fn:
    def case(draw):
        m, k, n = (S.integer(draw, 1, 3, "m"), S.integer(draw, 1, 3, "k"),
                   S.integer(draw, 1, 3, "n"))
        ta, tb = S.boolean(draw, "transpose_a"), S.boolean(draw, "transpose_b")
        batch = S.shape(draw, min_dims=0, max_dims=1)
        a = S.floats(draw, batch + ((k, m) if ta else (m, k)))
        b = S.floats(draw, batch + ((n, k) if tb else (k, n)))
        params = {"transpose_a": ta, "transpose_b": tb, "alpha": S.number(draw, -2, 2)}
        inputs = [a, b]
        if with_c:
            inputs.append(S.floats(draw, batch + (m, n)))
            params["beta"] = S.number(draw, -2, 2)
        return Case(inputs, params)
    return case


def _np_gemm(p, a, b, c=None):
    out = p.alpha * np.matmul(_op_t(a, p.transpose_a), _op_t(b, p.transpose_b))
    return out + p.beta * c if c is not None else out


# -- potrf, potri ---------------------------------------------------------------------------------
def _square_infer(op: str) -> Fn:
    def infer(attrs, ins, outs):
        if known(ins[0]):
            _square(op, ins[0])
            return ins, [tuple(ins[0])]
        return ins, outs
    return infer


class CholeskyParam(Params):
    lower = Field(bool, True, "True if the triangular matrix is lower triangular, false if it "
                              "is upper triangular.")


def _potrf(xp, p, a):
    lower = xp.linalg.cholesky(_sym(a))
    return lower if p.lower else _t(lower)


def _potri(xp, p, a):
    factor = xp.tril(a) if p.lower else _t(xp.triu(a))
    return xp.linalg.inv(xp.matmul(factor, _t(factor)))


def potrf_backward(xp, p, grads, ins, outs):
    g, lower = grads[0], outs[0]
    if not p.lower:  # U = L^T: the same rule on the transposes
        g, lower = _t(g), _t(lower)
    phi = xp.tril(xp.matmul(_t(lower), g))
    phi = phi - 0.5 * diag_matrix(xp, xp.diagonal(phi, axis1=-2, axis2=-1))
    inv = xp.linalg.inv(lower)
    return [_sym(xp.matmul(xp.matmul(_t(inv), phi), inv))]


def diag_matrix(xp, d):
    n = d.shape[-1]
    return d[..., :, None] * xp.eye(n, dtype=d.dtype)


def _potri_backward(xp, p, grads, ins, outs):
    g, a, inv = grads[0], ins[0], outs[0]
    lower = xp.tril(a) if p.lower else _t(xp.triu(a))
    grad = xp.tril(-xp.matmul(xp.matmul(inv, g + _t(g)), xp.matmul(inv, lower)))
    return [grad if p.lower else _t(grad)]


def spd_matrix(draw, n=None):
    n = n or S.integer(draw, 1, 3, "n")
    batch = S.shape(draw, min_dims=0, max_dims=1)
    m = S.floats(draw, batch + (n, n))
    return m @ _t(m) + n * np.eye(n)


def _factor_case(draw):
    lower = S.boolean(draw, "lower")
    factor = np.linalg.cholesky(spd_matrix(draw))
    return Case([factor if lower else factor.swapaxes(-1, -2)], {"lower": lower})


# -- trsm, trmm -----------------------------------------------------------------------------------
class TriangularParam(Params):
    transpose = Field(bool, False, "Use transposed of the triangular matrix")
    rightside = Field(bool, False, "Multiply triangular matrix from the right to non-triangular "
                                   "one.")
    lower = Field(bool, True, "True if the triangular matrix is lower triangular, false if it "
                              "is upper triangular.")
    alpha = Field(float, 1.0, "Scalar factor to be applied to the result.")


def _tri(xp, p, a):
    return xp.tril(a) if p.lower else xp.triu(a)


def _tri_infer(op: str) -> Fn:
    def infer(attrs, ins, outs):
        a, b = ins
        if known(a):
            _square(op, a)
        if known(b):
            return ins, [tuple(b)]
        return ins, outs
    return infer


def _trsm(xp, p, a, b):
    t = _op_t(_tri(xp, p, a), p.transpose)
    if p.rightside:  # X t = alpha B  <=>  t^T X^T = alpha B^T
        return _t(xp.linalg.solve(_t(t), p.alpha * _t(b)))
    return xp.linalg.solve(t, p.alpha * b)


def _trsm_backward(xp, p, grads, ins, outs):
    g, a, out = grads[0], ins[0], outs[0]
    t = _op_t(_tri(xp, p, a), p.transpose)
    if p.rightside:
        db = p.alpha * _t(xp.linalg.solve(t, _t(g)))
        dt = -xp.matmul(_t(out), _t(xp.linalg.solve(t, _t(g))))
    else:
        db = p.alpha * xp.linalg.solve(_t(t), g)
        dt = -xp.matmul(xp.linalg.solve(_t(t), g), _t(out))
    return [_tri(xp, p, _op_t(dt, p.transpose)), db]


def _trmm(xp, p, a, b):
    t = _op_t(_tri(xp, p, a), p.transpose)
    return p.alpha * (xp.matmul(b, t) if p.rightside else xp.matmul(t, b))


def _trmm_backward(xp, p, grads, ins, outs):
    g, a, b = grads[0], ins[0], ins[1]
    t = _op_t(_tri(xp, p, a), p.transpose)
    if p.rightside:
        dt, db = p.alpha * xp.matmul(_t(b), g), p.alpha * xp.matmul(g, _t(t))
    else:
        dt, db = p.alpha * xp.matmul(g, _t(b)), p.alpha * xp.matmul(_t(t), g)
    return [_tri(xp, p, _op_t(dt, p.transpose)), db]


def _tri_case(draw):
    n, m = S.integer(draw, 1, 3, "n"), S.integer(draw, 1, 3, "m")
    batch = S.shape(draw, min_dims=0, max_dims=1)
    p = {"transpose": S.boolean(draw, "transpose"), "rightside": S.boolean(draw, "rightside"),
         "lower": S.boolean(draw, "lower"), "alpha": S.number(draw, 0.5, 2)}
    a = S.floats(draw, batch + (n, n), 0.2, 1) + 2 * np.eye(n)  # well conditioned
    b = S.floats(draw, batch + ((m, n) if p["rightside"] else (n, m)))
    return Case([a, b], p)


def _np_trsm(p, a, b):
    t = np.tril(a) if p.lower else np.triu(a)
    t = t.swapaxes(-1, -2) if p.transpose else t
    return p.alpha * (b @ np.linalg.inv(t) if p.rightside else np.linalg.inv(t) @ b)


def _np_trmm(p, a, b):
    t = np.tril(a) if p.lower else np.triu(a)
    t = t.swapaxes(-1, -2) if p.transpose else t
    return p.alpha * (b @ t if p.rightside else t @ b)


# -- sumlogdiag, syrk -----------------------------------------------------------------------------
def _batch_infer(op: str) -> Fn:
    def infer(attrs, ins, outs):
        if known(ins[0]):
            _square(op, ins[0])
            return ins, [tuple(ins[0][:-2]) or (1,)]
        return ins, outs
    return infer


def _sumlogdiag(xp, p, a):
    out = xp.log(xp.diagonal(a, axis1=-2, axis2=-1)).sum(axis=-1)
    return out.reshape(out.shape or (1,))


def _sumlogdiag_backward(xp, p, grads, ins, outs):
    g, a = grads[0], ins[0]
    d = xp.diagonal(a, axis1=-2, axis2=-1)
    return [diag_matrix(xp, g.reshape(a.shape[:-2] + (1,)) / d)]


class SyrkParam(Params):
    transpose = Field(bool, False, "Use transpose of input matrix.")
    alpha = Field(float, 1.0, "Scalar factor to be applied to the result.")


def _syrk_infer(attrs, ins, outs):
    a = ins[0]
    if not known(a) or len(a) < 2:
        return ins, outs
    k = a[-1] if attrs.transpose else a[-2]
    return ins, [tuple(a[:-2]) + (k, k)]


def _syrk(xp, p, a):
    return p.alpha * (xp.matmul(_t(a), a) if p.transpose else xp.matmul(a, _t(a)))


def _syrk_backward(xp, p, grads, ins, outs):
    g, a = grads[0], ins[0]
    s = g + _t(g)
    return [p.alpha * (xp.matmul(a, s) if p.transpose else xp.matmul(s, a))]


# -- gelqf ----------------------------------------------------------------------------------------
def _gelqf_infer(attrs, ins, outs):
    a = ins[0]
    if not known(a):
        return ins, outs
    if len(a) < 2 or a[-2] > a[-1]:
        raise _error("gelqf", f"A must be (..., m, n) with m <= n, got {tuple(a)}")
    m = a[-2]
    return ins, [tuple(a), tuple(a[:-2]) + (m, m)]


def _gelqf(xp, p, a):
    q, r = xp.linalg.qr(_t(a))
    return [_t(q), _t(r)]


def _copyltu(xp, m):
    return xp.tril(m) + _t(xp.tril(m, -1))


def _gelqf_backward(xp, p, grads, ins, outs):
    dq, dl = grads
    q, lower = outs
    m = xp.matmul(_t(lower), dl) - xp.matmul(dq, _t(q))
    rhs = dq + xp.matmul(_copyltu(xp, m), q)
    return [xp.linalg.solve(_t(lower), rhs)]


def _gelqf_case(draw):
    m = S.integer(draw, 1, 3, "m")
    n = m + S.integer(draw, 0, 2, "extra columns")
    batch = S.shape(draw, min_dims=0, max_dims=1)
    # every entry nonzero: LAPACK's Householder signs jump where a column's tail is exactly 0
    a = S.floats(draw, batch + (m, n), away=(0.0,), margin=0.2)
    a[..., :, :m] += 3 * np.eye(m)  # full row rank
    return Case([a])


def _np_gelqf(p, a):
    q, r = np.linalg.qr(a.swapaxes(-1, -2))
    return [q.swapaxes(-1, -2), r.swapaxes(-1, -2)]


# -- syevd ----------------------------------------------------------------------------------------
def _syevd_infer(attrs, ins, outs):
    a = ins[0]
    if not known(a):
        return ins, outs
    _square("syevd", a)
    return ins, [tuple(a), tuple(a[:-1])]


def row_signs(xp, rows):
    """``(..., k, 1)`` of +-1 that make the largest-magnitude entry of each row positive (the
    first such entry on ties): MXNet's sign for eigenvectors and singular vectors."""
    idx = xp.argmax(xp.abs(rows), axis=-1)[..., None]
    return xp.where(xp.take_along_axis(rows, idx, axis=-1) < 0, -1, 1).astype(rows.dtype)


def _syevd(xp, p, a):
    lam, v = xp.linalg.eigh(_sym(a))
    u = _t(v)
    return [u * row_signs(xp, u), lam]


def syevd_backward(xp, p, grads, ins, outs):
    du, dlam = grads
    u, lam = outs
    temp = xp.matmul(du, _t(u))
    gap = lam[..., :, None] - lam[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        off = xp.where(gap != 0, (temp - _t(temp)) / (2 * xp.where(gap != 0, gap, 1)), 0)
    n = lam.shape[-1]
    inner = off * (1 - xp.eye(n)) + diag_matrix(xp, dlam)
    return [_sym(xp.matmul(xp.matmul(_t(u), inner), u))]


def _syevd_case(draw):
    n = S.integer(draw, 1, 3, "n")
    # a diagonally dominant matrix's Q: each eigenvector has one clearly largest entry, so
    # MXNet's sign rule (that entry positive) cannot flip under central differences
    q, _ = np.linalg.qr(S.floats(draw, (n, n), -1, 1) + 4 * np.eye(n))
    lam = np.arange(n) * 1.5 + S.number(draw, -1, 1)  # eigenvalues well apart
    return Case([(q * lam) @ q.T])


def _np_syevd(p, a):
    lam, v = np.linalg.eigh(0.5 * (a + a.swapaxes(-1, -2)))
    u = v.swapaxes(-1, -2)
    idx = np.argmax(np.abs(u), axis=-1)[..., None]
    sign = np.where(np.take_along_axis(u, idx, axis=-1) < 0, -1.0, 1.0)
    return [u * sign, lam]


# -- diagonals and triangles ---------------------------------------------------------------------
class OffsetParam(Params):
    offset = Field(int, 0, "Offset of the diagonal versus the main diagonal. 0 corresponds to "
                           "the main diagonal, a negative/positive value to diagonals below/above "
                           "the main diagonal.")


class TrianParam(OffsetParam):
    lower = Field(bool, True, "Refer to the lower triangular matrix if lower=true, refer to the "
                              "upper otherwise. Only relevant when offset=0")


def _extractdiag_infer(attrs, ins, outs):
    a = ins[0]
    if not known(a):
        return ins, outs
    if len(a) < 2:
        raise _error("extractdiag", f"A must be (..., m, n), got {tuple(a)}")
    k = attrs.offset
    size = min(a[-2], a[-1] - k) if k >= 0 else min(a[-2] + k, a[-1])
    if size <= 0:
        raise _error("extractdiag", f"offset={k} is outside the matrix {tuple(a[-2:])}")
    return ins, [tuple(a[:-2]) + (size,)]


def _extractdiag(xp, p, a):
    return xp.diagonal(a, p.offset, axis1=-2, axis2=-1).copy()


def _place_diag(xp, d, k, shape):
    out = xp.zeros(shape, dtype=d.dtype)
    n = d.shape[-1]
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    out[..., rows, cols] = d
    return out


def _extractdiag_backward(xp, p, grads, ins, outs):
    return [_place_diag(xp, grads[0], p.offset, ins[0].shape)]


def _makediag_infer(attrs, ins, outs):
    a = ins[0]
    if not known(a):
        return ins, outs
    n = a[-1] + abs(attrs.offset)
    return ins, [tuple(a[:-1]) + (n, n)]


def _makediag(xp, p, a):
    n = a.shape[-1] + abs(p.offset)
    return _place_diag(xp, a, p.offset, a.shape[:-1] + (n, n))


def _makediag_backward(xp, p, grads, ins, outs):
    return [xp.diagonal(grads[0], p.offset, axis1=-2, axis2=-1).copy()]


def _trian_index(p: TrianParam, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every stored element, in MXNet's order: the lower triangle
    (diagonal ``offset`` <= 0) row by row; the upper one as the transpose's lower."""
    upper = p.offset > 0 or (p.offset == 0 and not p.lower)
    k = abs(p.offset)
    rows, cols = np.tril_indices(n, -k) if k else np.tril_indices(n)
    return (cols, rows) if upper else (rows, cols)


def _extracttrian_infer(attrs, ins, outs):
    a = ins[0]
    if not known(a):
        return ins, outs
    _square("extracttrian", a)
    n = a[-1] - abs(attrs.offset)
    if n <= 0:
        raise _error("extracttrian", f"offset={attrs.offset} leaves no triangle in "
                                     f"{tuple(a[-2:])}")
    return ins, [tuple(a[:-2]) + (n * (n + 1) // 2,)]


def _extracttrian(xp, p, a):
    rows, cols = _trian_index(p, a.shape[-1])
    return a[..., rows, cols]


def _extracttrian_backward(xp, p, grads, ins, outs):
    rows, cols = _trian_index(p, ins[0].shape[-1])
    out = xp.zeros(ins[0].shape, dtype=grads[0].dtype)
    out[..., rows, cols] = grads[0]
    return [out]


def _trian_size(p: TrianParam, count: int) -> int:
    n = int((np.sqrt(8 * count + 1) - 1) / 2)
    if n * (n + 1) // 2 != count:
        raise _error("maketrian", f"{count} elements do not fill a triangle (need n(n+1)/2)")
    return n + abs(p.offset)


def _maketrian_infer(attrs, ins, outs):
    a = ins[0]
    if not known(a):
        return ins, outs
    n = _trian_size(attrs, a[-1])
    return ins, [tuple(a[:-1]) + (n, n)]


def _maketrian(xp, p, a):
    n = _trian_size(p, a.shape[-1])
    rows, cols = _trian_index(p, n)
    out = xp.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    out[..., rows, cols] = a
    return out


def _maketrian_backward(xp, p, grads, ins, outs):
    rows, cols = _trian_index(p, grads[0].shape[-1])
    return [grads[0][..., rows, cols]]


# -- inverse, det, slogdet ------------------------------------------------------------------------
def _inverse_backward(xp, p, grads, ins, outs):
    inv = outs[0]
    return [-xp.matmul(xp.matmul(_t(inv), grads[0]), _t(inv))]


def _det(xp, p, a):
    out = xp.linalg.det(a)
    return out.reshape(out.shape or (1,))


def _det_backward(xp, p, grads, ins, outs):
    a, det = ins[0], outs[0]
    scale = (grads[0] * det).reshape(a.shape[:-2] + (1, 1))
    return [scale * _t(xp.linalg.inv(a))]


def _slogdet(xp, p, a):
    sign, logdet = xp.linalg.slogdet(a)
    return [sign.reshape(sign.shape or (1,)), logdet.reshape(logdet.shape or (1,))]


def _slogdet_backward(xp, p, grads, ins, outs):
    a = ins[0]
    scale = grads[1].reshape(a.shape[:-2] + (1, 1))
    return [scale * _t(xp.linalg.inv(a))]


def _two_outputs(op: str) -> Fn:
    def infer(attrs, ins, outs):
        if known(ins[0]):
            _square(op, ins[0])
            b = tuple(ins[0][:-2]) or (1,)
            return ins, [b, b]
        return ins, outs
    return infer


def _matrix_case(draw, square=True):
    n = S.integer(draw, 1, 3, "n")
    batch = S.shape(draw, min_dims=0, max_dims=1)
    m = n if square else S.integer(draw, 1, 3, "m")
    return Case([S.floats(draw, batch + (m, n))])


def _invertible(draw):
    n = S.integer(draw, 1, 3, "n")
    batch = S.shape(draw, min_dims=0, max_dims=1)
    return Case([S.floats(draw, batch + (n, n), -0.5, 0.5) + 2 * np.eye(n)])


def _np_trian(p, a, make):
    if make:
        count = a.shape[-1]
        n = int((np.sqrt(8 * count + 1) - 1) / 2) + abs(p.offset)
        rows, cols = _trian_index(p, n)
        out = np.zeros(a.shape[:-1] + (n, n))
        out[..., rows, cols] = a
        return out
    rows, cols = _trian_index(p, a.shape[-1])
    return a[..., rows, cols]


def _offset_case(draw, make: bool, trian: bool):
    n = S.integer(draw, 1, 4, "n")
    batch = S.shape(draw, min_dims=0, max_dims=1)
    k = S.integer(draw, -(n - 1), n - 1, "offset")
    params: dict[str, Any] = {"offset": k}
    if trian:
        params["lower"] = S.boolean(draw, "lower")
        size = (n - abs(k)) * (n - abs(k) + 1) // 2
        return Case([S.floats(draw, batch + ((size,) if make else (n, n)))], params)
    return Case([S.floats(draw, batch + ((n,) if make else (n, n)))], params)


def _np_extractdiag(p, a):
    return np.diagonal(a, p.offset, axis1=-2, axis2=-1)


def _np_makediag(p, a):
    n = a.shape[-1] + abs(p.offset)
    out = np.zeros(a.shape[:-1] + (n, n))
    rows = np.arange(a.shape[-1]) + max(-p.offset, 0)
    cols = np.arange(a.shape[-1]) + max(p.offset, 0)
    out[..., rows, cols] = a
    return out


def _np_batch(fn):
    def reference(p, a):
        out = fn(a)
        return np.reshape(out, np.shape(out) or (1,))
    return reference


OPS: list[Op] = [
    *ops("gemm", lambda xp, p, a, b, c: _gemm_forward(xp, p, a, b, c), _gemm_backward,
         infer=_gemm_infer(True), inputs=["A", "B", "C"], params=GemmParam,
         case=_gemm_case(True), reference=_np_gemm,
         desc="``out = alpha op(A) op(B) + beta C`` on batches of matrices (op transposes "
              "when transpose_a/transpose_b); ``axis`` is the row axis (columns are last).  "
              "Gradients: ``alpha dY op(B)^T`` for op(A), ``alpha op(A)^T dY`` for op(B), "
              "``beta dY`` for C."),
    *ops("gemm2", _gemm_forward, _gemm_backward, infer=_gemm_infer(False), inputs=["A", "B"],
         params=Gemm2Param, case=_gemm_case(False), reference=_np_gemm,
         desc="``out = alpha op(A) op(B)`` on batches of matrices (gemm without C)."),
    *ops("potrf", _potrf, potrf_backward, params=CholeskyParam,
         infer=_square_infer("potrf"), inputs=["A"], uses=("out_grad", "out_data"),
         case=lambda draw: Case([spd_matrix(draw)], {"lower": S.boolean(draw, "lower")}),
         reference=lambda p, a: _potrf(np, p, a),
         desc="Cholesky factor: the lower triangular L with ``A = L L^T`` of symmetric "
              "positive definite A (its transpose U, ``A = U^T U``, with lower=False).  "
              "Gradient (symmetric) "
              "``sym(L^-T Phi(L^T dL) L^-1)``, Phi keeping the lower triangle with half the "
              "diagonal."),
    *ops("potri", _potri, _potri_backward, params=CholeskyParam,
         infer=_square_infer("potri"), inputs=["A"],
         uses=("out_grad", "in_data", "out_data"), case=_factor_case,
         reference=lambda p, a: _potri(np, p, a),
         desc="``(L L^T)^-1`` from a Cholesky factor L (the lower triangle of A; with "
              "lower=False ``(U^T U)^-1`` from its upper triangle U): the inverse of the "
              "matrix potrf factored.  Gradient ``-tril(out (dY + dY^T) out L)`` (its "
              "transpose for U)."),
    *ops("trsm", _trsm, _trsm_backward, infer=_tri_infer("trsm"), inputs=["A", "B"],
         uses=("out_grad", "in_data", "out_data"), params=TriangularParam, case=_tri_case,
         reference=_np_trsm,
         desc="Solve with a triangular matrix: ``out = alpha op(A)^-1 B`` (or ``alpha B "
              "op(A)^-1`` with rightside), A's lower (or upper) triangle, op transposing when "
              "transpose.  Gradients for A (on its triangle) and B."),
    *ops("trmm", _trmm, _trmm_backward, infer=_tri_infer("trmm"), inputs=["A", "B"],
         params=TriangularParam, case=_tri_case, reference=_np_trmm,
         desc="Multiply by a triangular matrix: ``out = alpha op(A) B`` (or ``alpha B op(A)`` "
              "with rightside), A's lower (or upper) triangle.  Gradients for A (on its "
              "triangle) and B."),
    *ops("sumlogdiag", _sumlogdiag, _sumlogdiag_backward, infer=_batch_infer("sumlogdiag"),
         inputs=["A"], case=lambda draw: Case([spd_matrix(draw)]),
         reference=_np_batch(lambda a: np.log(np.diagonal(a, axis1=-2, axis2=-1)).sum(-1)),
         desc="Sum of the logarithms of the diagonal: one value per matrix (shape (1,) for "
              "one matrix).  Gradient ``dY / diag(A)`` on the diagonal."),
    *ops("syrk", _syrk, _syrk_backward, infer=_syrk_infer, inputs=["A"], params=SyrkParam,
         case=lambda draw: Case(_matrix_case(draw, square=False).inputs,
                                {"transpose": S.boolean(draw, "transpose"),
                                 "alpha": S.number(draw, -2, 2)}),
         reference=lambda p, a: p.alpha * (a.swapaxes(-1, -2) @ a if p.transpose
                                           else a @ a.swapaxes(-1, -2)),
         desc="``out = alpha A A^T`` (``alpha A^T A`` with transpose).  Gradient "
              "``alpha (dY + dY^T) A`` (``alpha A (dY + dY^T)``)."),
    *ops("gelqf", _gelqf, _gelqf_backward, infer=_gelqf_infer, inputs=["A"], outputs=2,
         output_names=["Q", "L"], uses=("out_grad", "out_data"), case=_gelqf_case,
         reference=_np_gelqf,
         desc="LQ factorization ``A = L Q`` of (m, n) A with m <= n: Q (m, n) with orthonormal "
              "rows, L (m, m) lower triangular (LAPACK's signs).  Gradient "
              "``L^-T (dQ + copyltu(L^T dL - dQ Q^T) Q)``."),
    *ops("syevd", _syevd, syevd_backward, infer=_syevd_infer, inputs=["A"], outputs=2,
         output_names=["U", "L"], uses=("out_grad", "out_data"), case=_syevd_case,
         reference=_np_syevd,
         desc="Eigendecomposition of symmetric A: ``A = U^T diag(L) U``, eigenvalues L "
              "ascending, U's rows the eigenvectors, each signed so its largest-magnitude "
              "entry is positive (MXNet's).  Gradient (symmetric) ``U^T (diag(dL) + "
              "(dU U^T - U dU^T) / (2 (L_i - L_j))) U``."),
    *ops("extractdiag", _extractdiag, _extractdiag_backward, infer=_extractdiag_infer,
         inputs=["A"], params=OffsetParam, case=lambda draw: _offset_case(draw, False, False),
         reference=_np_extractdiag,
         desc="The diagonal ``offset`` of each matrix.  Gradient: dY on that diagonal."),
    *ops("makediag", _makediag, _makediag_backward, infer=_makediag_infer, inputs=["A"],
         params=OffsetParam, case=lambda draw: _offset_case(draw, True, False),
         reference=_np_makediag,
         desc="Square matrices with A's last axis on diagonal ``offset``, zero elsewhere.  "
              "Gradient: the diagonal of dY."),
    *ops("extracttrian", _extracttrian, _extracttrian_backward, infer=_extracttrian_infer,
         inputs=["A"], params=TrianParam, case=lambda draw: _offset_case(draw, False, True),
         reference=lambda p, a: _np_trian(p, a, False),
         desc="The lower (offset < 0, or 0 with lower) or upper triangle from diagonal "
              "``offset`` of each square matrix, as a vector (the lower row by row, the upper "
              "column by column).  Gradient: dY put back in the triangle."),
    *ops("maketrian", _maketrian, _maketrian_backward, infer=_maketrian_infer, inputs=["A"],
         params=TrianParam, case=lambda draw: _offset_case(draw, True, True),
         reference=lambda p, a: _np_trian(p, a, True),
         desc="Square matrices with A's last axis laid into a triangle (the inverse of "
              "extracttrian), zero elsewhere.  Gradient: dY's triangle as a vector."),
    *ops("inverse", lambda xp, p, a: xp.linalg.inv(a), _inverse_backward,
         infer=_square_infer("inverse"), inputs=["A"], uses=("out_grad", "out_data"),
         case=_invertible, reference=lambda p, a: np.linalg.inv(a),
         desc="Matrix inverse.  Gradient ``-A^-T dY A^-T``."),
    *ops("det", _det, _det_backward, infer=_batch_infer("det"), inputs=["A"],
         uses=("out_grad", "in_data", "out_data"), case=_invertible,
         reference=_np_batch(np.linalg.det),
         desc="Determinant of each matrix (shape (1,) for one matrix).  Gradient "
              "``dY det(A) A^-T``."),
    *ops("slogdet", _slogdet, _slogdet_backward, infer=_two_outputs("slogdet"), inputs=["A"],
         outputs=2, output_names=["sign", "logdet"], case=_invertible,
         reference=lambda p, a: [np.reshape(v, np.shape(v) or (1,))
                                 for v in np.linalg.slogdet(a)],
         desc="Sign and log of the absolute value of the determinant.  Gradient (of logdet) "
              "``dY A^-T``; the sign has none."),
]
