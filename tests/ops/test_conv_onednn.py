"""Convolution and max pooling's gradient through oneDNN (plugins/dagnet_ops/nn/_onednn):
the same results as the numpy kernels (1e-4 relative, float32) for a spread of
parameters, forward and every gradient, for Convolution, Deconvolution and Pooling; and
the fallback to numpy when the library is switched off or absent."""

from __future__ import annotations

import logging
import os
import signal

import numpy as np
import pytest

import dagnet
from dagnet_ops.nn import _conv_kernels, _im2col, _onednn
from dagnet_ops.nn._onednn import _library

needs_onednn = pytest.mark.skipif(
    _onednn.library() is None,
    reason=f"oneDNN is not loaded: {_onednn.unavailable_reason()}")

CASES = [
    # (x shape, filters, kernel, stride, dilate, pad, groups)
    ((2, 3, 12, 12), 8, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # a first layer: 3 channels
    ((2, 16, 9, 9), 16, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 16, 9, 9), 32, (3, 3), (2, 2), (1, 1), (1, 1), 1),  # stride 2, odd size
    ((2, 32, 8, 8), 16, (1, 1), (1, 1), (1, 1), (0, 0), 1),  # 1x1
    ((2, 16, 8, 8), 32, (1, 1), (2, 2), (1, 1), (0, 0), 1),  # resnet's projection
    ((2, 16, 9, 8), 16, (3, 3), (1, 1), (1, 1), (1, 1), 16),  # depthwise
    ((2, 8, 9, 8), 12, (3, 2), (1, 2), (2, 1), (2, 0), 4),  # grouped, dilated, mixed
    ((3, 1, 28, 28), 20, (5, 5), (1, 1), (1, 1), (0, 0), 1),  # lenet
    ((2, 5, 11), 6, (3,), (2,), (2,), (1,), 1),  # 1-D
    ((1, 4, 5, 6, 5), 4, (3, 3, 3), (1, 2, 1), (1, 1, 1), (1, 1, 0), 2),  # 3-D
]


def _arrays(x_shape, filters, kernel, groups, stride, dilate, pad):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((filters, x_shape[1] // groups, *kernel)).astype(np.float32)
    y_shape = (x_shape[0], filters, *(
        _im2col.window_count(s + 2 * p, k, st, d)
        for s, p, k, st, d in zip(x_shape[2:], pad, kernel, stride, dilate)))
    dy = rng.standard_normal(y_shape).astype(np.float32)
    return x, w, dy


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@needs_onednn
@pytest.mark.parametrize("x_shape, filters, kernel, stride, dilate, pad, groups", CASES)
def test_onednn_kernels_match_numpy(x_shape, filters, kernel, stride, dilate, pad, groups):
    x, w, dy = _arrays(x_shape, filters, kernel, groups, stride, dilate, pad)
    geometry = (stride, dilate, pad, groups)
    lib = _onednn.library()
    threads = 1
    y = _onednn.conv_forward(lib, x, w, *geometry, threads)
    dx = _onednn.conv_grad_data(lib, dy, w, x.shape, *geometry, threads)
    dw = _onednn.conv_grad_weight(lib, x, dy, w.shape, *geometry, threads)
    assert y is not None and dx is not None and dw is not None, "oneDNN declined the case"
    _close(y, _im2col.conv_forward(np, x, w, *geometry))
    _close(dx, _im2col.conv_grad_data(np, dy, w, x.shape, *geometry))
    _close(dw, _im2col.conv_grad_weight(np, x, dy, w.shape, *geometry))
    # both gradients at once (the output gradient's layout change shared where it can be)
    # give the same values, written into the arrays given
    dx_out, dw_out = np.empty_like(x), np.empty_like(w)
    both = _onednn.conv_grads(lib, dy, x, w, *geometry, threads, dx_out, dw_out)
    assert both is not None and both[0] is dx_out and both[1] is dw_out
    np.testing.assert_array_equal(dx_out, dx)
    np.testing.assert_array_equal(dw_out, dw)


@needs_onednn
def test_primitives_are_made_per_thread_count():
    # oneDNN plans a primitive's work for the OpenMP threads in effect when it is made: one
    # made for a single thread would run on one thread after cpu_kernel_threads went up
    from dagnet_ops.nn._onednn import _convolution

    x, w, dy = _arrays((4, 16, 9, 9), 16, (3, 3), 1, (1, 1), (1, 1), (1, 1))
    geometry = ((1, 1), (1, 1), (1, 1), 1)
    lib = _onednn.library()
    problem = _convolution.ConvProblem(x.shape, w.shape, dy.shape, *geometry)
    results = {}
    for threads in (1, 2):
        results[threads] = (_onednn.conv_forward(lib, x, w, *geometry, threads),
                            _onednn.conv_grad_data(lib, dy, w, x.shape, *geometry, threads),
                            _onednn.conv_grad_weight(lib, x, dy, w.shape, *geometry, threads))
    for pass_ in ("forward", "backward_data", "backward_weights"):
        one, two = (_convolution.kernel_for(lib, pass_, problem, t) for t in (1, 2))
        assert one is not None and two is not None and one is not two
        assert _convolution.kernel_for(lib, pass_, problem, 2) is two  # cached
    for got, want in zip(results[2], results[1]):
        _close(got, want)


def _layer_and_grads(op, x, w, b, params):
    """Output and gradients of a layer through autograd, head gradient ``cos(out)``."""
    arrays = [dagnet.nd.array(a) for a in (x, w, b)]
    for a in arrays:
        a.attach_grad()
    with dagnet.autograd.record():
        out = getattr(dagnet.nd, op)(*arrays, **params)
    out.backward(dagnet.nd.cos(out))
    return [out.asnumpy()] + [a.grad.asnumpy() for a in arrays]


@needs_onednn
@pytest.mark.parametrize("op, params", [
    ("Convolution", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "num_filter": 8}),
    ("Convolution", {"kernel": (3, 3), "pad": (1, 1), "num_filter": 8, "num_group": 4,
                     "layout": "NHWC"}),
    ("Deconvolution", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "adj": (1, 1),
                       "num_filter": 6, "no_bias": False}),
    ("Deconvolution", {"kernel": (4,), "stride": (2,), "num_filter": 4, "num_group": 2,
                       "no_bias": False}),
])
def test_layers_with_onednn_match_numpy(op, params):
    rng = np.random.default_rng(1)
    nd = len(params["kernel"])
    x = rng.standard_normal((2, 8, *(7,) * nd)).astype(np.float32)
    groups = params.get("num_group", 1)
    if op == "Convolution":
        w_shape = (8, 8 // groups, 3, 3)
        if params.get("layout") == "NHWC":
            x, w_shape = np.moveaxis(x, 1, -1).copy(), (8, 3, 3, 8 // groups)
    else:
        w_shape = (8, params["num_filter"] // groups, *params["kernel"])
    w = rng.standard_normal(w_shape).astype(np.float32)
    b = rng.standard_normal(params["num_filter"]).astype(np.float32)
    with_onednn = _layer_and_grads(op, x, w, b, params)
    with dagnet.config.set(cpu_onednn=False):
        with_numpy = _layer_and_grads(op, x, w, b, params)
    for got, want in zip(with_onednn, with_numpy):
        _close(got, want)


@needs_onednn
@pytest.mark.parametrize("shape, params", [
    ((2, 4, 12, 12), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),  # resnet's
    ((2, 3, 11, 9), {"kernel": (3, 2), "stride": (2, 2), "pooling_convention": "full"}),
    ((2, 3, 11, 9), {"kernel": (2, 2), "stride": (3, 2)}),  # the last rows are not pooled
    ((2, 3, 5, 6), {"global_pool": True, "kernel": (1, 1)}),
    ((2, 3, 13), {"kernel": (3,), "stride": (2,), "pad": (1,)}),
    ((1, 2, 5, 6, 7), {"kernel": (2, 3, 2), "stride": (2, 1, 2)}),
])
def test_max_pooling_and_its_gradient_with_onednn_match_numpy(shape, params, monkeypatch):
    x = np.maximum(np.random.default_rng(2).standard_normal(shape), 0)  # ties at zero, as
    x = dagnet.nd.array(x.astype(np.float32))                            # after a ReLU
    x.attach_grad()
    outputs, grads = [], []
    for onednn in (True, False):
        with dagnet.config.set(cpu_onednn=onednn), dagnet.autograd.record():
            y = dagnet.nd.Pooling(x, pool_type="max", **params)
        y.backward(dagnet.nd.cos(y))
        outputs.append(y.asnumpy())
        grads.append(x.grad.asnumpy())
    np.testing.assert_array_equal(*outputs)
    np.testing.assert_array_equal(*grads)


@pytest.fixture
def no_onednn_calls(monkeypatch):
    """Fail if a oneDNN convolution kernel is asked for."""
    def refuse(*args, **kwargs):
        raise AssertionError("oneDNN was called")

    for name in ("conv_forward", "conv_grad_data", "conv_grad_weight", "max_pool",
                 "max_pool_grad"):
        monkeypatch.setattr(_onednn, name, refuse)


def _numpy_kernels_run(x, w, dy):
    geometry = ((1, 1), (1, 1), (1, 1), 1)
    for got, want in [
        (_conv_kernels.conv_forward(np, x, w, *geometry),
         _im2col.conv_forward(np, x, w, *geometry)),
        (_conv_kernels.conv_grad_data(np, dy, w, x.shape, *geometry),
         _im2col.conv_grad_data(np, dy, w, x.shape, *geometry)),
        (_conv_kernels.conv_grad_weight(np, x, dy, w.shape, *geometry),
         _im2col.conv_grad_weight(np, x, dy, w.shape, *geometry)),
    ]:
        np.testing.assert_array_equal(got, want)


def test_switched_off_convolution_runs_numpy_kernels(no_onednn_calls):
    x, w, dy = _arrays((2, 4, 6, 6), 4, (3, 3), 1, (1, 1), (1, 1), (1, 1))
    with dagnet.config.set(cpu_onednn=False):
        assert _onednn.library() is None
        assert "switched off" in _onednn.unavailable_reason()
        _numpy_kernels_run(x, w, dy)


def test_environment_variable_switches_onednn_off(monkeypatch):
    monkeypatch.setenv("DAGNET_CPU_ONEDNN", "0")
    assert _onednn.library() is None


def test_other_dtypes_run_numpy_kernels(no_onednn_calls):
    x, w, dy = _arrays((2, 4, 6, 6), 4, (3, 3), 1, (1, 1), (1, 1), (1, 1))
    _numpy_kernels_run(x.astype(np.float64), w.astype(np.float64), dy.astype(np.float64))


def test_absent_library_falls_back_with_the_reason_logged(monkeypatch, tmp_path, caplog,
                                                         no_onednn_calls):
    monkeypatch.setattr(_library._loaded, "_value", None)  # not loaded yet
    monkeypatch.setattr(_library._loaded, "failure", None)
    monkeypatch.setattr(_library, "_candidate_paths", lambda: [tmp_path / "libdnnl.so.3"])
    with caplog.at_level(logging.DEBUG, logger="dagnet_ops.nn.onednn"):
        assert _onednn.library() is None
    reason = _onednn.unavailable_reason()
    assert "libdnnl.so.3 not found" in reason and "pip install onednn-cpu-gomp" in reason
    assert reason in caplog.text
    x, w, dy = _arrays((2, 4, 6, 6), 4, (3, 3), 1, (1, 1), (1, 1), (1, 1))
    _numpy_kernels_run(x, w, dy)


@needs_onednn
def test_failed_call_names_the_call_and_the_status():
    with pytest.raises(_onednn.OneDNNError, match=r"dnnl_thing failed: status 3 \(unimplemented"):
        _onednn.library().check(3, "dnnl_thing")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("onednn", [True, False])
def test_forked_child_runs_convolutions(onednn):
    # Kernels ran on two threads in the forking thread (naive engine) before the fork:
    # GNU OpenMP's threads and the numpy kernels' thread pool do not survive fork, and the
    # child must not wait for them.
    x, w, _ = _arrays((2, 4, 8, 8), 4, (3, 3), 1, (1, 1), (1, 1), (1, 1))
    x, w = dagnet.nd.array(x), dagnet.nd.array(w)
    params = {"kernel": (3, 3), "num_filter": 4, "no_bias": True}
    with dagnet.config.set(cpu_kernel_threads=2, engine="naive", cpu_onednn=onednn):
        want = dagnet.nd.Convolution(x, w, **params).asnumpy()
        pid = os.fork()
        if pid == 0:  # the child reports by its exit code; it gives up after 20 s
            signal.alarm(20)
            got = dagnet.nd.Convolution(x, w, **params).asnumpy()
            os._exit(0 if np.allclose(got, want, rtol=1e-4, atol=1e-4) else 1)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
