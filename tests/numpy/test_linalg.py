"""``mx.np.linalg``: results against NumPy (batched and zero-size), MXNet's conventions
(SVD signs, dtypes, errors), gradients against central differences, hybridized blocks."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import dagnet as mx
from dagnet import autograd, np
from dagnet.base import MXNetError
from dagnet.gluon import HybridBlock


@pytest.fixture(autouse=True)
def numpy_mode():
    mx.npx.set_np()
    yield
    mx.npx.reset_np()


_RNG = onp.random.RandomState(7)


def _well_conditioned(*shape):
    """Matrices ``(..., n, n)`` with singular values near 2 (invertible, stable)."""
    n = shape[-1]
    return _RNG.uniform(-0.4, 0.4, shape) + 2 * onp.eye(n)


def _spd(*shape):
    a = _well_conditioned(*shape)
    return a @ a.swapaxes(-1, -2)


def _close(got, want, rtol=1e-6, atol=1e-8):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    onp.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- forward against NumPy ----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 2, 2), (0, 3, 3), (2, 0, 0)])
def test_inv_det_slogdet_match_numpy(shape):
    a = _well_conditioned(*shape)
    _close(np.linalg.inv(np.array(a, dtype="float64")), onp.linalg.inv(a))
    det = np.linalg.det(np.array(a, dtype="float64"))
    assert det.shape == shape[:-2] and det.dtype == onp.float64
    _close(det, onp.linalg.det(a))
    sign, logdet = np.linalg.slogdet(np.array(a, dtype="float64"))
    want_sign, want_log = onp.linalg.slogdet(a)
    assert sign.shape == logdet.shape == shape[:-2]
    _close(sign, want_sign)
    _close(logdet, want_log)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (0, 0)])
def test_cholesky_reads_the_lower_triangle(shape):
    a = _spd(*shape)
    messy = a + onp.triu(_RNG.uniform(-5, 5, shape), 1)  # the upper triangle is not read
    got = np.linalg.cholesky(np.array(messy, dtype="float64"))
    _close(got, onp.linalg.cholesky(a))


@pytest.mark.parametrize("a_shape, b_shape", [((3, 3), (3,)), ((3, 3), (3, 2)),
                                              ((2, 3, 3), (2, 3)), ((2, 3, 3), (2, 3, 4)),
                                              ((0, 2, 2), (0, 2, 1)), ((3, 3), (3, 0))])
def test_solve_matches_numpy(a_shape, b_shape):
    a, b = _well_conditioned(*a_shape), _RNG.standard_normal(b_shape)
    got = np.linalg.solve(np.array(a, dtype="float64"), np.array(b, dtype="float64"))
    vector = len(b_shape) == len(a_shape) - 1
    want = onp.linalg.solve(a, b[..., None])[..., 0] if vector else onp.linalg.solve(a, b)
    assert got.shape == b_shape
    _close(got, want)


@pytest.mark.parametrize("shape", [(2, 3), (3, 3), (2, 2, 5), (0, 1), (3, 3, 0, 0), (2, 0, 3)])
def test_svd_reconstructs_with_mxnets_signs(shape):
    a = _RNG.uniform(-3, 3, shape)
    ut, s, v = np.linalg.svd(np.array(a, dtype="float64"))
    m = shape[-2]
    assert (ut.shape, s.shape, v.shape) == (shape[:-1] + (m,), shape[:-1], shape)
    ut, s, v = ut.asnumpy(), s.asnumpy(), v.asnumpy()
    _close((ut * s[..., None, :]) @ v, a)
    _close(s, onp.linalg.svd(a, compute_uv=False) if a.size else s)
    if v.size:
        peak = onp.take_along_axis(v, onp.argmax(abs(v), axis=-1)[..., None], axis=-1)
        assert (peak > 0).all()


def test_svd_needs_no_more_rows_than_columns():
    with pytest.raises(MXNetError, match="M <= N"):
        np.linalg.svd(np.ones((3, 2)))


@pytest.mark.parametrize("shape, rcond", [((3, 4), 1e-15), ((4, 3), 0.1), ((2, 3, 3), None),
                                          ((2, 2, 4, 3), "batch"), ((0, 3), 1e-15)])
def test_pinv_matches_numpy(shape, rcond):
    a = _RNG.uniform(-3, 3, shape)
    if rcond is None:
        got, want = np.linalg.pinv(np.array(a, dtype="float64")), onp.linalg.pinv(a)
    elif rcond == "batch":
        cut = onp.array([[0.01], [0.5]])
        got = np.linalg.pinv(np.array(a, dtype="float64"), np.array(cut, dtype="float64"))
        want = onp.linalg.pinv(a, cut)
    else:
        got = np.linalg.pinv(np.array(a, dtype="float64"), rcond)
        want = onp.linalg.pinv(a, rcond)
    assert got.shape == want.shape
    _close(got, want)


def test_tensorinv_and_tensorsolve_match_numpy():
    a = _well_conditioned(6, 6).reshape(2, 3, 6)
    _close(np.linalg.tensorinv(np.array(a, dtype="float64"), 2), onp.linalg.tensorinv(a, 2))
    b = _RNG.standard_normal((2, 3))
    _close(np.linalg.tensorsolve(np.array(a, dtype="float64"), np.array(b, dtype="float64")),
           onp.linalg.tensorsolve(a, b))
    moved = a.transpose(2, 0, 1)  # axes=(0,) moves axis 0 back to the end
    x = np.linalg.tensorsolve(np.array(moved, dtype="float64"), np.array(b, dtype="float64"),
                              axes=(0,))
    _close(x, onp.linalg.tensorsolve(moved, b, axes=(0,)))
    # MXNet's one-element cases: x takes a's shape when b is 0-d
    assert np.linalg.tensorsolve(np.full((1, 1, 1), 2.0), np.array(3.0)).shape == (1, 1, 1)
    assert np.linalg.tensorsolve(np.array(2.0), np.ones((1, 1))).shape == ()


@pytest.mark.parametrize("upper", [False, True])
def test_eigh_and_eigvalsh_read_one_triangle(upper):
    sym = _spd(2, 4, 4)
    noise = onp.triu(_RNG.uniform(-9, 9, sym.shape), 1)
    a = sym + (noise.swapaxes(-1, -2) if upper else noise)
    uplo = "U" if upper else "L"
    w, v = np.linalg.eigh(np.array(a, dtype="float64"), UPLO=uplo)
    want_w = onp.linalg.eigvalsh(sym)
    _close(w, want_w)
    _close(np.linalg.eigvalsh(np.array(a, dtype="float64"), UPLO=uplo), want_w)
    v = v.asnumpy()
    _close(sym @ v, v * w.asnumpy()[..., None, :], atol=1e-7)
    peak = onp.take_along_axis(v, onp.argmax(abs(v), axis=-2)[..., None, :], axis=-2)
    assert (peak > 0).all()  # MXNet's sign: each eigenvector's largest entry positive


def test_eig_and_eigvals_real_spectrum():
    basis = _well_conditioned(2, 3, 3)
    a = (basis * onp.array([1.0, 2.5, -3.0])) @ onp.linalg.inv(basis)
    w, v = np.linalg.eig(np.array(a, dtype="float64"))
    assert w.dtype == v.dtype == onp.float64
    _close(a @ v.asnumpy(), v.asnumpy() * w.asnumpy()[..., None, :], atol=1e-7)
    _close(onp.sort(np.linalg.eigvals(np.array(a, dtype="float64")).asnumpy(), axis=-1),
           onp.sort(onp.linalg.eigvals(a).real, axis=-1))


def test_eig_refuses_complex_eigenvalues():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(MXNetError, match="complex eigenvalues"):
        np.linalg.eigvals(rotation).asnumpy()


@pytest.mark.parametrize("ord, axis", [(None, None), (None, 1), (2, 1), (1, 0), (3.5, -1),
                                       (-1, 1), (0, 1), ("inf", 1), ("-inf", 0), ("fro", None),
                                       ("nuc", None), (2, None), (-2, (1, 0)), (1, (0, 1)),
                                       (-1, (1, 0)), ("inf", (0, 1)), (onp.inf, None)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_of_a_matrix_matches_numpy(ord, axis, keepdims):
    x = _RNG.uniform(-5, 5, (3, 4))
    got = np.linalg.norm(np.array(x, dtype="float64"), ord, axis, keepdims)
    want_ord = {"inf": onp.inf, "-inf": -onp.inf}.get(ord, ord) if isinstance(ord, str) else ord
    want = onp.linalg.norm(x, want_ord, axis, keepdims)
    assert got.shape == want.shape
    _close(got, want)


def test_norm_follows_mxnet_where_it_differs_from_numpy():
    x = onp.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    # 'inf' with axis=None: the largest magnitude of all elements
    assert np.linalg.norm(np.array(x), "inf").item() == 6.0
    # axis=None and an ord on 3-d input: matrix norms of the last two axes
    x3 = _RNG.uniform(-1, 1, (2, 3, 4))
    _close(np.linalg.norm(np.array(x3, dtype="float64"), 2),
           onp.linalg.norm(x3, 2, axis=(1, 2)))
    # any other matrix order reads as inf (positive) or -inf
    assert np.linalg.norm(np.array(x), 3).item() == 15.0
    # integers: the norm truncated to the dtype
    got = np.linalg.norm(np.array(x, dtype="int32"), axis=1)
    assert got.dtype == onp.int32 and got.asnumpy().tolist() == [3, 8]


# -- dtypes and errors ----------------------------------------------------------------------------
def test_dtypes_follow_mxnet():
    a = onp.array([[4, 1], [1, 3]])
    assert np.linalg.eigvals(np.array(a, dtype="int32")).dtype == onp.float64
    assert np.linalg.eigh(np.array(a, dtype="uint8"))[0].dtype == onp.float64
    assert np.linalg.eigvalsh(np.array(a, dtype="float32")).dtype == onp.float32
    f32, f64 = np.array(a, dtype="float32"), np.array(a, dtype="float64")
    assert np.linalg.solve(f32, f32[0]).dtype == onp.float32
    assert np.linalg.solve(f32, f64[0]).dtype == onp.float64
    assert np.linalg.solve(np.array(a, dtype="int64"), f32[0]).dtype == onp.float64
    assert np.linalg.inv(f32).dtype == onp.float32


@pytest.mark.parametrize("call", [
    lambda: np.linalg.det(np.ones((2, 2), dtype="int32")),
    lambda: np.linalg.inv(np.ones((2, 2), dtype="float16")),
    lambda: np.linalg.cholesky(np.ones((2, 2), dtype="int64")),
    lambda: np.linalg.svd(np.ones((2, 2), dtype="int32")),
    lambda: np.linalg.eigvals(np.ones((2, 2), dtype="float16")),
    lambda: np.linalg.solve(np.ones((2, 2), dtype="bool"), np.ones(2)),
    lambda: np.linalg.pinv(np.ones((2, 2), dtype="float64"), np.ones(1, dtype="float32")),
    lambda: np.linalg.tensorinv(np.ones((2, 2), dtype="int32"), 1),
])
def test_unsupported_dtypes_raise(call):
    with pytest.raises(MXNetError, match="dtype|float"):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: np.linalg.inv(np.ones((2, 3))), "square"),
    (lambda: np.linalg.det(np.ones(3)), "two-dimensional"),
    (lambda: np.linalg.cholesky(np.ones(3)), "two-dimensional"),
    (lambda: np.linalg.eig(np.ones((2, 3))), "square"),
    (lambda: np.linalg.solve(np.ones((2, 2)), np.ones(3)), "do not match"),
    (lambda: np.linalg.solve(np.ones((2, 2, 2)), np.ones(2)), "batch"),
    (lambda: np.linalg.tensorinv(np.ones((2, 3)), 1), "square"),
    (lambda: np.linalg.tensorinv(np.ones((2, 2)), 0), "positive"),
    (lambda: np.linalg.tensorsolve(np.ones((2, 3)), np.ones(2)), "square"),
    (lambda: np.linalg.pinv(np.ones((3, 2, 2)), np.ones(2)), "broadcast"),
    (lambda: np.linalg.norm(np.ones((2, 2)), "bad"), "invalid norm order"),
    (lambda: np.linalg.norm(np.ones(2), "nuc"), "invalid norm order"),
    (lambda: np.linalg.norm(np.ones((2, 2, 2)), None, (0, 1, 2)), "one .* or two"),
])
def test_bad_shapes_and_orders_raise(call, message):
    with pytest.raises(MXNetError, match=message):
        call()


def test_other_refusals():
    with pytest.raises(NotImplementedError, match="hermitian"):
        np.linalg.pinv(np.eye(2), hermitian=True)
    with pytest.raises(TypeError, match="axis"):
        np.linalg.norm(np.ones((2, 2)), axis=[0, 1])
    with pytest.raises(MXNetError):
        np.linalg.cholesky(-np.eye(2)).asnumpy()  # not positive definite


# -- gradients against central differences --------------------------------------------------------
def _check_gradient(f, *arrays, symmetric=(), rtol=1e-5, atol=1e-8):
    """Autograd's gradient of ``sum(f(arrays) * heads)`` in a random direction per input
    (symmetric for the inputs in ``symmetric``) against central differences, in float64."""
    rng = onp.random.RandomState(3)
    xs = [np.array(a, dtype="float64") for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        outs = f(*xs)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    heads = [rng.standard_normal(o.shape) for o in outs]
    autograd.backward(outs, [np.array(h, dtype="float64") for h in heads])

    def loss(values):
        got = f(*[np.array(v, dtype="float64") for v in values])
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        return sum(float((o.asnumpy() * h).sum()) for o, h in zip(got, heads))

    for i, a in enumerate(arrays):
        direction = rng.standard_normal(onp.shape(a))
        if i in symmetric:
            direction = direction + direction.swapaxes(-1, -2)
        eps = 1e-6
        moved = [list(arrays), list(arrays)]
        moved[0][i], moved[1][i] = a + eps * direction, a - eps * direction
        numeric = (loss(moved[0]) - loss(moved[1])) / (2 * eps)
        analytic = float((xs[i].grad.asnumpy() * direction).sum())
        assert abs(numeric - analytic) <= atol + rtol * abs(numeric), (i, numeric, analytic)


def _distinct_singular_values(m, n):
    q1, _ = onp.linalg.qr(_RNG.uniform(-1, 1, (m, m)) + 4 * onp.eye(m))
    q2, _ = onp.linalg.qr(_RNG.uniform(-1, 1, (n, n)) + 4 * onp.eye(n))
    return (q1 * (onp.arange(m, 0, -1) * 1.5 + 0.5)) @ q2[:m]


@pytest.mark.parametrize("name, f, arrays, symmetric", [
    ("inv", np.linalg.inv, [_well_conditioned(2, 3, 3)], ()),
    ("det", np.linalg.det, [_well_conditioned(2, 3, 3)], ()),
    ("slogdet", lambda a: np.linalg.slogdet(a)[1], [_well_conditioned(3, 3)], ()),
    ("solve vector", np.linalg.solve, [_well_conditioned(2, 3, 3), _RNG.randn(2, 3)], ()),
    ("solve matrix", np.linalg.solve, [_well_conditioned(3, 3), _RNG.randn(3, 2)], ()),
    ("tensorinv", lambda a: np.linalg.tensorinv(a, 1),
     [_well_conditioned(4, 4).reshape(4, 2, 2)], ()),
    ("tensorsolve", lambda a, b: np.linalg.tensorsolve(a, b, axes=(0,)),
     [_well_conditioned(4, 4).reshape(4, 2, 2), _RNG.randn(2, 2)], ()),
    ("cholesky", np.linalg.cholesky, [_spd(2, 3, 3)], (0,)),
    ("svd", np.linalg.svd, [onp.stack([_distinct_singular_values(2, 3) for _ in range(2)])], ()),
    ("eigh", np.linalg.eigh, [_spd(3, 3) + onp.diag([0.0, 3.0, 6.0])], ()),
    ("eigvalsh U", lambda a: np.linalg.eigvalsh(a, UPLO="U"), [_RNG.randn(3, 3)], ()),
    ("pinv", np.linalg.pinv, [_well_conditioned(3, 3)[:, :2]], ()),
    ("pinv rcond", lambda a: np.linalg.pinv(a, np.array([1e-3, 1e-4], dtype="float64")),
     [_well_conditioned(2, 2, 2)[..., :1, :]], ()),
    ("norm 2 vec", lambda a: np.linalg.norm(a, axis=1), [_RNG.randn(3, 4)], ()),
    ("norm p", lambda a: np.linalg.norm(a, 3.5, 0, True), [_RNG.randn(3, 4)], ()),
    ("norm fro", lambda a: np.linalg.norm(a, "fro", (0, 2)), [_RNG.randn(2, 3, 4)], ()),
    ("norm 1", lambda a: np.linalg.norm(a, 1, (1, 0)), [_RNG.randn(3, 4)], ()),
    ("norm spectral", lambda a: np.linalg.norm(a, 2, (2, 1)),
     [onp.stack([_distinct_singular_values(3, 4).T for _ in range(2)])], ()),
    ("norm nuc", lambda a: np.linalg.norm(a, "nuc"),
     [_distinct_singular_values(2, 3)], ()),
])
def test_gradient_matches_central_differences(name, f, arrays, symmetric):
    _check_gradient(f, *arrays, symmetric=symmetric)


def test_eig_has_zero_gradient_as_in_mxnet():
    a = np.array(onp.triu(_well_conditioned(3, 3)), dtype="float64")
    a.attach_grad()
    with autograd.record():
        w, v = np.linalg.eig(a)
        loss = w.sum() + v.sum()
    loss.backward()
    assert (a.grad.asnumpy() == 0).all()


# -- hybridized blocks ----------------------------------------------------------------------------
class _Solver(HybridBlock):
    def hybrid_forward(self, F, a, b):
        x = F.np.linalg.solve(a, b)
        ut, s, v = F.np.linalg.svd(F.np.linalg.inv(a))
        sign, logdet = F.np.linalg.slogdet(a)
        return (x.sum() + F.np.linalg.norm(x, 1) + s.sum() + logdet.sum()
                + F.np.linalg.norm(a, 2, (1, 0)) + F.np.linalg.cholesky(a @ a.T).sum())


def test_hybridized_block_is_traced_and_matches_imperative():
    a = _well_conditioned(3, 3)
    b = _RNG.randn(3, 2)
    results = []
    for hybridize in (False, True):
        net = _Solver()
        if hybridize:
            net.hybridize()
        xa, xb = np.array(a, dtype="float64"), np.array(b, dtype="float64")
        xa.attach_grad()
        xb.attach_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a fallback to imperative would warn
            with autograd.record():
                out = net(xa, xb)
        out.backward()
        if hybridize:
            assert net._cached_op is not None
        results.append((out.asnumpy(), xa.grad.asnumpy(), xb.grad.asnumpy()))
    for imperative, traced in zip(*results):
        _close(traced, imperative, rtol=1e-9, atol=1e-10)


# -- NumPy's dispatch ------------------------------------------------------------------------------
def test_numpy_linalg_functions_dispatch_to_mx_np():
    a = np.array(_well_conditioned(3, 3), dtype="float64")
    got = onp.linalg.inv(a)
    assert isinstance(got, np.ndarray)
    _close(got, onp.linalg.inv(a.asnumpy()))
    q, r = np.linalg.qr(a)  # NumPy's own (MXNet's fallback), results back as mx.np arrays
    assert isinstance(q, np.ndarray) and isinstance(r, np.ndarray)
    _close(q.asnumpy() @ r.asnumpy(), a.asnumpy())
    assert int(np.linalg.matrix_rank(a)) == 3
