"""``backward`` and ``grad``: gradients of recorded expressions, on every engine."""

from __future__ import annotations

import numpy as np
import pytest

from dagnet import autograd, nd

RNG = np.random.default_rng(7)


def _variable(values, grad_req="write"):
    array = nd.array(values, dtype=np.float64)
    array.attach_grad(grad_req)
    return array


def _central_difference(fn, values, eps=1e-6):
    grad = np.zeros_like(values)
    for index in np.ndindex(values.shape):
        up, down = values.copy(), values.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (fn(up) - fn(down)) / (2 * eps)
    return grad


def _composite(x, w):
    """tanh(x W^T + 1) * x[:, :3] summed, plus a reused input (x appears three times)."""
    hidden = nd.tanh(nd.FullyConnected(x, w, num_hidden=3, no_bias=True) + 1.0)
    return (hidden * x[:, 0:3]).sum() + (nd.exp(x) / 4).sum()


def _composite_numpy(x, w):
    hidden = np.tanh(x @ w.T + 1.0)
    return (hidden * x[:, 0:3]).sum() + (np.exp(x) / 4).sum()


def test_composite_expression_matches_central_differences(engine):
    xv, wv = RNG.standard_normal((4, 5)), RNG.standard_normal((3, 5))
    x, w = _variable(xv), _variable(wv)
    with autograd.record():
        loss = _composite(x, w)
    np.testing.assert_allclose(loss.asnumpy(), [_composite_numpy(xv, wv)], rtol=1e-10)
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(),
                               _central_difference(lambda v: _composite_numpy(v, wv), xv),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(w.grad.asnumpy(),
                               _central_difference(lambda v: _composite_numpy(xv, v), wv),
                               rtol=1e-6, atol=1e-8)


def test_an_entry_used_twice_sums_its_gradients(engine):
    x = _variable([1.0, 2.0, 3.0])
    with autograd.record():
        y = x * x + x  # x reaches the head three times
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 5.0, 7.0])


def test_grad_req_write_overwrites_add_accumulates_null_has_none(engine):
    w, a, n = _variable([1.0, 2.0]), _variable([1.0, 2.0], "add"), _variable([1.0, 2.0], "null")
    for _ in range(3):
        with autograd.record():
            loss = (w * w + a * a + n * n).sum()
        loss.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), [2.0, 4.0])
    np.testing.assert_allclose(a.grad.asnumpy(), [6.0, 12.0])
    assert n.grad is None  # as in MXNet: a backward pass drops a null variable's buffer


def test_single_gradients_written_straight_into_grad_honour_grad_req(engine):
    """Each variable here gets one gradient from one backward operator, which writes it
    into ``.grad`` itself: 'write' overwrites, 'add' accumulates, as on the summed path."""
    xv, wv, bv = RNG.standard_normal((4, 5)), RNG.standard_normal((3, 5)), RNG.standard_normal(3)
    x, w, b = _variable(xv), _variable(wv, "add"), _variable(bv)
    head = nd.array(RNG.standard_normal((4, 3)), dtype=np.float64)
    for _ in range(2):
        with autograd.record():
            y = nd.FullyConnected(x, w, b, num_hidden=3)
        y.backward(head)
    hv = head.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), hv @ wv, rtol=1e-12)
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * hv.T @ xv, rtol=1e-12)
    np.testing.assert_allclose(b.grad.asnumpy(), hv.sum(axis=0), rtol=1e-12)


def test_a_variable_that_is_also_a_head_sums_both_parts(engine):
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = nd.exp(x)
    autograd.backward([y, x])
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp([1.0, 2.0]) + 1.0)


def test_head_gradient_weights_the_head(engine):
    x = _variable([1.0, 2.0, 3.0])
    with autograd.record():
        y = x * 2
    y.backward(nd.array([1.0, 10.0, 100.0], dtype=np.float64))
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 20.0, 200.0])


def test_head_gradient_of_another_dtype_is_converted(engine):
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * 3
    y.backward(nd.array([1.0, 2.0], dtype=np.float32))
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 6.0])


def test_multiple_heads_with_some_head_gradients(engine):
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * x
        z = x * 3
    autograd.backward([y, z], [None, nd.array([2.0, 2.0], dtype=np.float64)])
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0 + 6.0, 4.0 + 6.0])


def test_a_head_that_feeds_another_head(engine):
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * x
        z = y * 2
    autograd.backward([y, z])
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * 2 * np.array([1.0, 2.0]))


def test_grad_returns_new_arrays_and_leaves_dot_grad_alone(engine):
    x, w = _variable([1.0, 2.0]), _variable([3.0, 4.0])
    with autograd.record():
        y = (x * w).sum()
    dx, dw = autograd.grad(y, [x, w])
    np.testing.assert_allclose(dx.asnumpy(), [3.0, 4.0])
    np.testing.assert_allclose(dw.asnumpy(), [1.0, 2.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [0.0, 0.0])
    with pytest.raises(autograd.AutogradError, match="retain_graph"):
        autograd.grad(y, [x])  # the graph was freed (retain_graph defaults to create_graph)


def test_grad_with_retain_graph_and_an_unreached_variable(engine):
    x, unused = _variable([1.0, 2.0]), _variable([5.0])
    with autograd.record():
        y = x * x
    (dx, du) = autograd.grad(y, [x, unused], retain_graph=True)
    np.testing.assert_allclose(du.asnumpy(), [0.0])
    (again,) = autograd.grad(y, [x])
    np.testing.assert_allclose(again.asnumpy(), dx.asnumpy())


def test_retain_graph_allows_a_second_backward(engine):
    x = _variable([1.0, 2.0], "add")
    with autograd.record():
        y = x * 5
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [10.0, 10.0])


def test_out_of_graph_inputs_get_no_gradient(engine):
    x = _variable([1.0, 2.0])
    constant = nd.array([3.0, 4.0], dtype=np.float64)
    with autograd.record():
        y = x * constant + constant.detach()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 4.0])
    assert constant.grad is None


def test_detached_array_stops_the_gradient(engine):
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * x.detach()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1.0, 2.0])


def test_pause_keeps_a_computation_out_of_the_graph(engine):
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
        with autograd.pause():
            scale = x * 10
        z = y * scale
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [20.0, 40.0])


def test_block_grad_is_a_zero_gradient(engine):
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = nd.BlockGrad(x) * 3
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [0.0, 0.0])


def test_softmax_output_supplies_its_own_head_gradient(engine):
    scores = RNG.standard_normal((3, 4))
    labels = np.array([0, 3, 1])
    x = _variable(scores)
    with autograd.record():
        out = nd.SoftmaxOutput(x, nd.array(labels, dtype=np.float64))
    out.backward(nd.array(np.full((3, 4), 100.0)))  # ignored, as in MXNet
    probs = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    np.testing.assert_allclose(x.grad.asnumpy(), probs - np.eye(4)[labels], rtol=1e-10)


def test_make_loss_and_linear_regression_heads(engine):
    x = _variable([1.0, -2.0])
    with autograd.record():
        loss = nd.MakeLoss(x * x)
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, -4.0])
    with autograd.record():
        out = nd.LinearRegressionOutput(x, nd.array([0.5, 0.5], dtype=np.float64))
    out.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [0.5, -2.5])


def test_multiple_output_operator(engine):
    x = _variable(np.arange(6.0).reshape(2, 3))
    with autograd.record():
        first, second, third = nd.SliceChannel(x, num_outputs=3, axis=1)
        y = first * 2 + third  # the second output gets a zero head gradient
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[2.0, 0.0, 1.0], [2.0, 0.0, 1.0]])


def test_training_loop_on_the_same_graph_shape(engine):
    """A few SGD steps on least squares converge: gradients are right step after step."""
    features = RNG.standard_normal((20, 3))
    target = features @ np.array([1.0, -2.0, 0.5])
    x, t = nd.array(features, dtype=np.float64), nd.array(target, dtype=np.float64)
    w = _variable(np.zeros((1, 3)))
    for _ in range(60):
        with autograd.record():
            loss = ((nd.FullyConnected(x, w, num_hidden=1, no_bias=True).reshape((20,)) - t)
                    ** 2).mean()
        loss.backward()
        w[:] = w - 0.3 * w.grad
    np.testing.assert_allclose(w.asnumpy(), [[1.0, -2.0, 0.5]], atol=1e-3)


def test_mark_variables_with_own_gradient_buffers(engine):
    x = nd.array([1.0, 2.0], dtype=np.float64)
    buffer = nd.array([10.0, 10.0], dtype=np.float64)
    autograd.mark_variables([x], [buffer], grad_reqs="add")
    with autograd.record():
        y = x * x
    y.backward()
    assert x.grad is buffer
    np.testing.assert_allclose(buffer.asnumpy(), [12.0, 14.0])


def test_backward_on_a_variable_itself(engine):
    x = _variable([1.0, 2.0])
    x.backward(nd.array([3.0, 4.0], dtype=np.float64))
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 4.0])
