"""The CPU kernels that a CNN training step spends its time in, against the formulas
written out directly: max pooling's gradient (ties go to the first maximum, as MXNet's),
BatchNorm's passes in training and inference (numpy's fused passes and the numba-compiled
ones, and the fallback from those to these), and convolution writing straight into its
output."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dagnet
from dagnet.operator import OpReqType
from dagnet_ops import _jit, _threads
from dagnet_ops.nn import _im2col, batch_norm, convolution, pooling

W = OpReqType.WRITE


class _Ctx:
    xp = np

    def __init__(self, is_train):
        self.is_train = is_train


def _max_pool_grad_by_argmax(x, dy, kernel, stride, pad, convention):
    """The gradient of max pooling window by window: the first maximum takes it all."""
    sizes = x.shape[2:]
    out = dy.shape[2:]
    grad = np.zeros_like(x, dtype=np.float64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for pos in itertools.product(*(range(o) for o in out)):
            best, where = None, None
            for tap in itertools.product(*(range(k) for k in kernel)):
                idx = tuple(p * s - q + t for p, s, q, t in zip(pos, stride, pad, tap))
                if any(i < 0 or i >= size for i, size in zip(idx, sizes)):
                    continue
                if best is None or x[(n, c) + idx] > best:
                    best, where = x[(n, c) + idx], idx
            if where is not None:
                grad[(n, c) + where] += dy[(n, c) + pos]
    return grad


@pytest.mark.parametrize("shape,kernel,stride,pad,convention", [
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), "valid"),  # lenet's
    ((2, 2, 9, 9), (3, 3), (2, 2), (1, 1), "valid"),  # resnet-50's: overlapping, padded
    ((1, 2, 7, 6), (3, 2), (2, 3), (1, 0), "full"),
    ((2, 2, 9), (3,), (1,), (1,), "valid"),
    ((1, 2, 4, 5, 4), (2, 3, 2), (1, 2, 2), (0, 1, 1), "valid"),
])
def test_max_pooling_gradient_goes_to_the_first_maximum(shape, kernel, stride, pad, convention):
    rs = np.random.RandomState(0)
    x = rs.randint(0, 4, shape).astype(np.float32)  # many ties
    params = {"kernel": kernel, "stride": stride, "pad": pad, "pool_type": "max",
              "pooling_convention": convention}
    attrs = pooling.PoolingParam.parse("Pooling", params)
    y_shape = tuple(pooling._geometry(attrs, x.shape)[3])
    y = np.empty(x.shape[:2] + y_shape, np.float32)
    pooling._forward(attrs, _Ctx(True), [x], [W], [y])
    dy = rs.standard_normal(y.shape).astype(np.float32)
    dx = np.empty_like(x)
    pooling._backward(attrs, _Ctx(True), [dy, x, y], [W], [dx])
    want = _max_pool_grad_by_argmax(x, dy, kernel, stride, pad, convention)
    np.testing.assert_allclose(dx, want, rtol=1e-6, atol=1e-6)


def _bn_inputs(shape, axis, dtype=np.float32, seed=0):
    rs = np.random.RandomState(seed)
    c = shape[axis]
    return [(rs.standard_normal(shape) * 2 + 3).astype(dtype),
            rs.uniform(0.5, 1.5, c).astype(np.float32), rs.standard_normal(c).astype(np.float32),
            rs.standard_normal(c).astype(np.float32), rs.uniform(0.5, 2, c).astype(np.float32)]


needs_jit = pytest.mark.skipif(
    _jit.kernels("batch_norm") is None,
    reason=f"numba kernels are off: {_jit.unavailable_reason('batch_norm')}")
# numpy's passes in chunks of the whole array, runs of channels of one sample, runs of whole
# samples; the compiled passes, with the rows of even a small array shared out over threads
KERNEL_PATHS = [pytest.param(("numpy", batch_norm._CHUNK_BYTES), id="numpy-whole"),
                pytest.param(("numpy", 8), id="numpy-channel-runs"),
                pytest.param(("numpy", 800), id="numpy-sample-runs"),
                pytest.param(("jit", None), id="jit", marks=needs_jit)]


@pytest.mark.parametrize("shape,axis", [((4, 3, 5, 6), 1), ((4, 5, 3), -1), ((6, 4), 1),
                                        ((2, 3, 2, 4, 3), 1), ((2, 3, 600), 1)])
@pytest.mark.parametrize("is_train", [True, False])
@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("path", KERNEL_PATHS)
def test_batch_norm_passes_match_the_formulas(shape, axis, is_train, fix_gamma, threads, path,
                                              monkeypatch):
    kind, chunk_bytes = path
    with dagnet.config.set(cpu_kernel_threads=threads, cpu_jit=kind == "jit"):
        if kind == "numpy":
            monkeypatch.setattr(batch_norm, "_CHUNK_BYTES", chunk_bytes)
        else:
            monkeypatch.setattr(batch_norm, "_JIT_PARALLEL_MIN", 1)
        _check_batch_norm(shape, axis, is_train, fix_gamma)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@needs_jit
def test_batch_norm_compiled_passes_match_numpys(dtype):
    x, gamma, beta, mm, mv = _bn_inputs((3, 4, 37), 1, dtype)
    gamma, beta, mm, mv = (a.astype(dtype) for a in (gamma, beta, mm, mv))
    dy = np.random.RandomState(1).standard_normal(x.shape).astype(dtype)
    attrs = batch_norm.BatchNormParam.parse("BatchNorm", {"fix_gamma": False})
    results = []
    for jit in (True, False):
        with dagnet.config.set(cpu_jit=jit):
            state = [a.copy() for a in (x, gamma, beta, mm, mv)]
            outs = [np.empty_like(x), np.empty(4, dtype), np.empty(4, dtype)]
            batch_norm._forward(attrs, _Ctx(True), state, [W] * 3, outs)
            grads = [np.empty_like(x), np.empty(4, dtype), np.empty(4, dtype)]
            batch_norm._backward(attrs, _Ctx(True), [dy] + state + outs, [W] * 3, grads)
            results.append(outs + state[3:] + grads)
    tolerance = 1e-12 if dtype == np.float64 else 1e-5
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("path", [p for p in KERNEL_PATHS if p.id in ("numpy-whole", "jit")])
def test_batch_norm_of_empty_data_and_of_nan(path):
    attrs = batch_norm.BatchNormParam.parse("BatchNorm", {"fix_gamma": False})
    with dagnet.config.set(cpu_jit=path[0] == "jit"):
        x = np.empty((0, 3, 4), np.float32)
        outs = [np.empty_like(x), np.empty(3, np.float32), np.empty(3, np.float32)]
        batch_norm._forward(attrs, _Ctx(True), [x] + _bn_inputs((1, 3), 1)[1:], [W] * 3, outs)
        # a NaN spoils its own channel's statistics and gradients, not the others'
        x, gamma, beta, mm, mv = _bn_inputs((2, 3, 5), 1)
        x[1, 0, 2] = np.nan
        outs = [np.empty_like(x), np.empty(3, np.float32), np.empty(3, np.float32)]
        batch_norm._forward(attrs, _Ctx(True), [x, gamma, beta, mm, mv], [W] * 3, outs)
        dy = np.ones_like(x)
        grads = [np.empty_like(x), np.empty(3, np.float32), np.empty(3, np.float32)]
        batch_norm._backward(attrs, _Ctx(True), [dy, x, gamma, beta, mm, mv] + outs, [W] * 3,
                             grads)
    assert np.isnan(outs[1][0]) and np.isfinite(outs[1][1:]).all()
    assert np.isnan(outs[0][:, 0]).all() and np.isfinite(outs[0][:, 1:]).all()
    assert np.isnan(grads[0][:, 0]).all() and np.isfinite(grads[0][:, 1:]).all()
    assert np.isfinite(grads[2]).all()  # beta's gradient sums dy alone


def test_batch_norm_falls_back_to_numpy_without_numba(hide_numba):
    hide_numba("batch_norm")
    assert _jit.kernels("batch_norm") is None
    assert "numba" in _jit.unavailable_reason("batch_norm")
    _check_batch_norm((4, 3, 5), 1, True, False)  # numpy's passes
    with dagnet.config.set(cpu_jit=False):
        assert _jit.unavailable_reason("batch_norm") == \
            "switched off (config cpu_jit / DAGNET_CPU_JIT)"


@pytest.mark.parametrize("path", [p for p in KERNEL_PATHS if p.id in ("numpy-whole", "jit")])
def test_batch_norm_variance_keeps_its_precision_far_from_zero(path, monkeypatch):
    # pixel-like data (mean 1000, spread 1): E[x^2] - E[x]^2 in float32 would lose the
    # variance; numpy's chunks keep their own deviations, the compiled passes center first
    monkeypatch.setattr(batch_norm, "_CHUNK_BYTES", 64)
    x = (np.random.RandomState(0).standard_normal((4, 2, 50)) + 1000).astype(np.float32)
    attrs = batch_norm.BatchNormParam.parse("BatchNorm", {"eps": 0.0})
    outs = [np.empty_like(x), np.empty(2, np.float32), np.empty(2, np.float32)]
    with dagnet.config.set(cpu_jit=path[0] == "jit"):
        batch_norm._forward(attrs, _Ctx(True), [x, np.ones(2, np.float32),
                                                np.zeros(2, np.float32), np.zeros(2, np.float32),
                                                np.ones(2, np.float32)], [W] * 3, outs)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(outs[1], x64.mean(axis=(0, 2)), rtol=1e-6)
    np.testing.assert_allclose(outs[2], 1 / x64.std(axis=(0, 2)), rtol=1e-4)


def _check_batch_norm(shape, axis, is_train, fix_gamma):
    x, gamma, beta, mm, mv = _bn_inputs(shape, axis)
    params = {"fix_gamma": fix_gamma, "axis": axis, "eps": 1e-3, "momentum": 0.9}
    attrs = batch_norm.BatchNormParam.parse("BatchNorm", params)
    ax = axis % x.ndim
    reduce = tuple(i for i in range(x.ndim) if i != ax)
    bshape = [1] * x.ndim
    bshape[ax] = -1
    x64 = x.astype(np.float64)
    if is_train:
        mean, var = x64.mean(axis=reduce), x64.var(axis=reduce)
    else:
        mean, var = mm.astype(np.float64), mv.astype(np.float64)
    g = np.ones_like(gamma) if fix_gamma else gamma
    invstd = 1 / np.sqrt(var + 1e-3)
    xhat = (x64 - mean.reshape(bshape)) * invstd.reshape(bshape)
    want_y = xhat * g.reshape(bshape) + beta.reshape(bshape)

    state = [a.copy() for a in (x, gamma, beta, mm, mv)]
    outs = [np.empty_like(x), np.empty(x.shape[ax], np.float32), np.empty(x.shape[ax], np.float32)]
    batch_norm._forward(attrs, _Ctx(is_train), state, [W] * 3, outs)
    np.testing.assert_allclose(outs[0], want_y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(outs[2], invstd, rtol=1e-4)
    if is_train:
        np.testing.assert_allclose(state[3], mm * 0.9 + mean * 0.1, rtol=1e-4, atol=1e-5)

    dy = np.random.RandomState(1).standard_normal(x.shape).astype(np.float32)
    dy64 = dy.astype(np.float64)
    dbeta = dy64.sum(axis=reduce)
    dgamma = (dy64 * xhat).sum(axis=reduce)
    scale = (g * invstd).reshape(bshape)
    if is_train:
        count = x.size // x.shape[ax]
        want_dx = scale * (dy64 - (dbeta / count).reshape(bshape)
                           - xhat * (dgamma / count).reshape(bshape))
    else:
        want_dx = dy64 * scale
    grads = [np.empty_like(x), np.empty_like(gamma), np.empty_like(beta)]
    batch_norm._backward(attrs, _Ctx(is_train), [dy] + state + outs, [W] * 3, grads)
    np.testing.assert_allclose(grads[0], want_dx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(grads[1], 0 if fix_gamma else dgamma, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(grads[2], dbeta, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("path", [p for p in KERNEL_PATHS if p.id in ("numpy-whole", "jit")])
@pytest.mark.parametrize("is_train", [True, False])
def test_batch_norm_adds_to_its_outputs_when_asked(path, is_train):
    x, gamma, beta, mm, mv = _bn_inputs((3, 2, 4), 1)
    dy = np.random.RandomState(1).standard_normal(x.shape).astype(np.float32)
    attrs = batch_norm.BatchNormParam.parse("BatchNorm", {"fix_gamma": False})
    ctx = _Ctx(is_train)
    with dagnet.config.set(cpu_jit=path[0] == "jit"):
        written = [np.empty_like(x), np.empty(2, np.float32), np.empty(2, np.float32)]
        batch_norm._forward(attrs, ctx, [x, gamma, beta, mm.copy(), mv.copy()], [W] * 3, written)
        added = [np.ones_like(x), np.empty(2, np.float32), np.empty(2, np.float32)]
        batch_norm._forward(attrs, ctx, [x, gamma, beta, mm.copy(), mv.copy()],
                            [OpReqType.ADD, W, W], added)
        np.testing.assert_allclose(added[0], written[0] + 1, rtol=1e-6)
        state = [x, gamma, beta, mm, mv]
        grads = [np.empty_like(x), np.empty(2, np.float32), np.empty(2, np.float32)]
        batch_norm._backward(attrs, ctx, [dy] + state + written, [W] * 3, grads)
        summed = [np.ones_like(x), np.empty(2, np.float32), np.empty(2, np.float32)]
        batch_norm._backward(attrs, ctx, [dy] + state + written, [OpReqType.ADD, W, W], summed)
        np.testing.assert_allclose(summed[0], grads[0] + 1, rtol=1e-5, atol=1e-6)


def test_batch_norm_half_precision_sums_in_float32():
    # 2**16 ones: a float16 running sum would stop at 2048
    x = np.ones((1, 2, 2 ** 15), np.float16)
    attrs = batch_norm.BatchNormParam.parse("BatchNorm", {})
    outs = [np.empty_like(x), np.empty(2, np.float32), np.empty(2, np.float32)]
    batch_norm._forward(attrs, _Ctx(True), [x, np.ones(2, np.float32), np.zeros(2, np.float32),
                                            np.zeros(2, np.float32), np.ones(2, np.float32)],
                        [W] * 3, outs)
    np.testing.assert_allclose(outs[1], 1.0)


def test_convolution_writes_into_its_output():
    rs = np.random.RandomState(0)
    x = rs.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rs.standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = np.empty((2, 4, 6, 6), np.float32)
    y = _im2col.conv_forward(np, x, w, (1, 1), (1, 1), (1, 1), 1, out=out)
    assert y is out
    unfit = np.empty((2, 4, 6, 6), np.float64)  # another dtype: a new array instead
    assert _im2col.conv_forward(np, x, w, (1, 1), (1, 1), (1, 1), 1, out=unfit) is not unfit
    attrs = convolution.ConvolutionParam.parse(
        "Convolution", {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4})
    b = rs.standard_normal(4).astype(np.float32)
    via_op = np.empty_like(out)
    with dagnet.config.set(cpu_onednn=False):  # the im2col kernel, as above
        convolution._forward(attrs, _Ctx(True), [x, w, b], [W], [via_op])
    np.testing.assert_allclose(via_op, out + b.reshape(1, 4, 1, 1), rtol=1e-6)


@pytest.mark.parametrize("act_type", ["relu", "tanh"])
def test_activation_in_pieces_over_threads_matches_one_pass(act_type):
    from dagnet_ops.nn import activation

    attrs = activation.ActivationParam.parse("Activation", {"act_type": act_type})
    rs = np.random.RandomState(0)
    x = rs.standard_normal(3 * _threads.PIECE + 7).astype(np.float32)
    dy = rs.standard_normal(x.shape).astype(np.float32)
    results = []
    for threads in (1, 3):
        with dagnet.config.set(cpu_kernel_threads=threads):
            y, dx = np.empty_like(x), np.empty_like(x)
            activation._activation_forward(attrs, _Ctx(True), [x], [W], [y])
            activation._activation_backward(attrs, _Ctx(True), [dy, y], [W], [dx])
            inplace = x.copy()  # the output over the input, as the executor may plan it
            activation._activation_forward(attrs, _Ctx(True), [inplace], [OpReqType.INPLACE],
                                           [inplace])
            np.testing.assert_array_equal(inplace, y)
            results.append((y, dx))
    want = np.maximum(x, 0) if act_type == "relu" else np.tanh(x)
    np.testing.assert_allclose(results[1][0], want, rtol=1e-6)
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("op_name", ["elemwise_add", "elemwise_sub"])
def test_residual_add_in_pieces_over_threads_matches_one_pass(op_name):
    from dagnet.operator import get_op

    forward, backward = get_op(op_name), get_op(f"_backward_{op_name}")
    rs = np.random.RandomState(0)
    a, b, dy = (rs.standard_normal((3, _threads.PIECE + 5)).astype(np.float32) for _ in range(3))
    for threads in (1, 3):
        with dagnet.config.set(cpu_kernel_threads=threads):
            y = np.empty_like(a)
            forward.kernel_for("cpu")(None, _Ctx(True), [a, b], [W], [y])
            np.testing.assert_array_equal(y, a + b if op_name == "elemwise_add" else a - b)
            inplace = a.copy()  # the output over the first input, as the executor may plan it
            forward.kernel_for("cpu")(None, _Ctx(True), [inplace, b], [OpReqType.INPLACE],
                                      [inplace])
            np.testing.assert_array_equal(inplace, y)
            grads = [np.empty_like(a), np.ones_like(a)]
            backward.kernel_for("cpu")(None, _Ctx(True), [dy], [W, OpReqType.ADD], grads)
            np.testing.assert_array_equal(grads[0], dy)
            np.testing.assert_array_equal(grads[1], 1 + (dy if op_name == "elemwise_add" else -dy))


def test_same_pooling_gives_one_window_per_stride_step():
    x = np.arange(11, dtype=np.float32).reshape(1, 1, 11)
    for kind, want in [("max", [2, 4, 6, 8, 10, 10]), ("sum", [3, 9, 15, 21, 27, 10])]:
        attrs = pooling.PoolingParam.parse("Pooling", {
            "kernel": (3,), "stride": (2,), "pad": (0, 0, 0), "pool_type": kind,
            "pooling_convention": "same"})
        y = np.empty((1, 1, 6), np.float32)
        pooling._forward(attrs, _Ctx(True), [x], [W], [y])
        np.testing.assert_array_equal(y.reshape(-1), want)
    from dagnet import ShapeError
    with pytest.raises(ShapeError, match="1-D"):
        pooling._geometry(pooling.PoolingParam.parse("Pooling", {
            "kernel": (2, 2), "pooling_convention": "same"}), (1, 1, 4, 4))
    with pytest.raises(ShapeError, match="without pad"):
        pooling._geometry(pooling.PoolingParam.parse("Pooling", {
            "kernel": (2,), "pad": (1,), "pooling_convention": "same"}), (1, 1, 4))
