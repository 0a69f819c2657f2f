"""The Executor's interface: binding, write modes, auxiliary states, loss heads,
groups, reshape, parameter copies, monitoring and the errors for bad input."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import dagnet as mx
from dagnet.test_utils import assert_almost_equal, check_symbolic_backward, check_symbolic_forward


def _fc(num_hidden=3, name="fc"):
    return mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=num_hidden, name=name)


def test_simple_bind_allocates_zeroed_arrays_per_grad_req(engine_name):
    net = mx.sym.SoftmaxOutput(_fc(), name="sm")
    ex = net.simple_bind(mx.cpu(), data=(2, 5), grad_req={"fc_weight": "write", "fc_bias": "add"})
    assert net.list_arguments() == ["data", "fc_weight", "fc_bias", "sm_label"]
    assert [a.shape for a in ex.arg_arrays] == [(2, 5), (3, 5), (3,), (2,)]
    assert all(a.dtype == np.float32 for a in ex.arg_arrays)
    assert ex.grad_arrays[0] is None and ex.grad_arrays[3] is None
    assert list(ex.grad_dict) == net.list_arguments()
    assert ex.grad_dict["fc_weight"].shape == (3, 5)
    np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy(), 0)
    assert ex.outputs[0].shape == (2, 3) and list(ex.output_dict) == ["sm_output"]


@pytest.mark.parametrize("grad_req", ["write", "add", "null"])
def test_grad_req_write_add_null(grad_req, plan):
    x = mx.sym.Variable("x")
    net = x * x + mx.sym.exp(x)  # x read by two nodes, and twice by one
    value = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    head = np.array([[1.0, 2.0], [-1.0, 0.5]], np.float32)
    ex = net.simple_bind(mx.cpu(), x=(2, 2), grad_req=grad_req)
    if grad_req == "null":
        assert ex.grad_arrays == [None]
    else:
        ex.grad_arrays[0][:] = 10.0
    expected = head * (2 * value + np.exp(value))
    for _ in range(2):
        ex.forward(is_train=True, x=value)
        ex.backward(mx.nd.array(head))
    if grad_req == "write":
        assert_almost_equal(ex.grad_arrays[0], expected, rtol=1e-5, atol=1e-6)
    elif grad_req == "add":
        assert_almost_equal(ex.grad_arrays[0], 10 + 2 * expected, rtol=1e-5, atol=1e-5)
    assert_almost_equal(ex.outputs[0], value * value + np.exp(value), rtol=1e-6, atol=1e-6)


def test_grad_req_as_a_list_and_arguments_without_gradient(engine_name):
    net = _fc()
    ex = net.simple_bind(mx.cpu(), data=(2, 4), grad_req=["null", "write", "null"])
    assert [g is None for g in ex.grad_arrays] == [True, False, True]
    ex.arg_dict["data"][:] = 1.0
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(ex.grad_dict["fc_weight"].asnumpy(), 2.0)


def test_batchnorm_updates_moving_statistics_only_in_training(plan):
    data = mx.sym.Variable("data")
    net = mx.sym.BatchNorm(data, momentum=0.5, fix_gamma=False, name="bn")
    ex = net.simple_bind(mx.cpu(), data=(4, 3))
    assert net.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    values = np.arange(12, dtype=np.float32).reshape(4, 3)
    ex.arg_dict["bn_gamma"][:] = 1.0
    ex.aux_dict["bn_moving_var"][:] = 1.0
    ex.forward(is_train=False, data=values)
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_mean"].asnumpy(), 0)
    assert_almost_equal(ex.outputs[0], values / np.sqrt(1 + 1e-3), rtol=1e-5, atol=1e-5)
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((4, 3)))
    assert_almost_equal(ex.aux_dict["bn_moving_mean"], 0.5 * values.mean(0), rtol=1e-6)
    assert_almost_equal(ex.aux_dict["bn_moving_var"], 0.5 + 0.5 * values.var(0), rtol=1e-5)
    assert_almost_equal(ex.outputs[0].asnumpy().mean(0), np.zeros(3), atol=1e-5)
    assert ex.grad_dict.keys() == {"data", "bn_gamma", "bn_beta"}


def test_loss_heads_need_no_out_grads_and_others_do(engine_name):
    fc = _fc()
    ex = mx.sym.SoftmaxOutput(fc, name="sm").simple_bind(mx.cpu(), data=(2, 4))
    ex.forward(is_train=True, data=np.ones((2, 4)), sm_label=np.array([0, 2]))
    ex.backward()
    p = np.full((2, 3), 1 / 3)
    want = (p - np.eye(3)[[0, 2]]).T @ np.ones((2, 4))
    assert_almost_equal(ex.grad_dict["fc_weight"], want, rtol=1e-5, atol=1e-6)
    plain = fc.simple_bind(mx.cpu(), data=(2, 4))
    plain.forward(is_train=True)
    with pytest.raises(ValueError, match="'fc_output' is not a loss.*out_grads"):
        plain.backward()
    plain.backward([mx.nd.ones((2, 3))])  # still usable


def test_make_loss_and_regression_heads(engine_name):
    x = mx.sym.Variable("x")
    ex = mx.sym.MakeLoss(mx.sym.square(x), name="loss").simple_bind(mx.cpu(), x=(3,))
    ex.forward(is_train=True, x=np.array([1.0, -2.0, 3.0]))
    ex.backward()
    assert_almost_equal(ex.grad_dict["x"], [2.0, -4.0, 6.0])
    lro = mx.sym.LinearRegressionOutput(x, name="lro").simple_bind(mx.cpu(), x=(3,))
    lro.forward(is_train=True, x=np.array([1.0, 2.0, 3.0]), lro_label=np.array([0.0, 2.0, 1.0]))
    lro.backward()
    assert_almost_equal(lro.grad_dict["x"], [1.0, 0.0, 2.0])


def test_group_of_outputs_with_shared_entries(plan):
    x = mx.sym.Variable("x")
    a = mx.sym.FullyConnected(x, num_hidden=2, no_bias=True, name="fa")
    b = mx.sym.tanh(a, name="t")
    net = mx.sym.Group([a, b, a])
    ex = net.simple_bind(mx.cpu(), x=(1, 2))
    w = np.array([[1.0, 0.5], [-1.0, 2.0]], np.float32)
    ex.copy_params_from({"fa_weight": mx.nd.array(w)})
    xv = np.array([[0.3, -0.2]], np.float32)
    outs = ex.forward(is_train=True, x=xv)
    assert len(outs) == 3 and net.list_outputs() == ["fa_output", "t_output", "fa_output"]
    h = [np.array([[1.0, 2.0]]), np.array([[0.5, -1.0]]), np.array([[3.0, 1.0]])]
    ex.backward([mx.nd.array(g) for g in h])
    a_val = xv @ w.T
    da = h[0] + h[2] + h[1] * (1 - np.tanh(a_val) ** 2)
    assert_almost_equal(ex.grad_dict["fa_weight"], da.T @ xv, rtol=1e-5, atol=1e-6)
    assert_almost_equal(ex.grad_dict["x"], da @ w, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="3 output"):
        ex.backward([mx.nd.ones((1, 2))])


def test_backward_uses_the_last_forward_pass(engine_name):
    x = mx.sym.Variable("x")
    ex = mx.sym.square(x).simple_bind(mx.cpu(), x=(2,))
    ex.forward(is_train=True, x=np.array([1.0, 2.0]))
    ex.forward(is_train=True, x=np.array([3.0, 5.0]))
    ex.backward(mx.nd.ones((2,)))
    assert_almost_equal(ex.grad_dict["x"], [6.0, 10.0])


def test_dropout_mask_in_training_and_identity_in_inference(engine_name):
    x = mx.sym.Variable("x")
    ex = mx.sym.Dropout(x, p=0.5, name="drop").simple_bind(mx.cpu(), x=(50,))
    ones = np.ones(50, np.float32)
    assert_almost_equal(ex.forward(x=ones)[0], ones)
    out = ex.forward(is_train=True)[0].asnumpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and 0 < np.count_nonzero(out) < 50
    ex.backward(mx.nd.ones((50,)))
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), out)


def test_bind_with_lists_and_dicts(engine_name):
    net = _fc(2)
    args = [mx.nd.ones((3, 4)), mx.nd.ones((2, 4)), mx.nd.zeros((2,))]
    grads = {"fc_weight": mx.nd.zeros((2, 4))}
    ex = net.bind(mx.cpu(), args, args_grad=grads)
    assert ex.arg_arrays[0] is args[0] and ex.grad_arrays == [None, grads["fc_weight"], None]
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((3, 2)))
    np.testing.assert_array_equal(grads["fc_weight"].asnumpy(), 3.0)
    ex2 = net.bind(mx.cpu(), dict(zip(net.list_arguments(), args)))
    np.testing.assert_array_equal(ex2.forward()[0].asnumpy(), 4.0)
    assert net.eval(mx.cpu(), data=args[0], fc_weight=args[1], fc_bias=args[2])[0].shape == (3, 2)


def test_bind_errors_say_what_is_wrong():
    net = _fc(2)
    good = {"data": mx.nd.ones((3, 4)), "fc_weight": mx.nd.ones((2, 4)), "fc_bias": mx.nd.ones(2)}
    with pytest.raises(mx.DagnetError, match="lacks 'fc_bias'"):
        net.bind(mx.cpu(), {k: v for k, v in good.items() if k != "fc_bias"})
    # an extra name is ignored (as MXNet), but named when an argument is missing
    net.bind(mx.cpu(), {**good, "extra": mx.nd.ones(1)})
    with pytest.raises(mx.DagnetError, match="lacks 'fc_bias'.*'extra'.*misspelt"):
        net.bind(mx.cpu(), {**{k: v for k, v in good.items() if k != "fc_bias"},
                            "extra": mx.nd.ones(1)})
    with pytest.raises(mx.DagnetError, match="2 arrays but the symbol has 3 arguments"):
        net.bind(mx.cpu(), [good["data"], good["fc_weight"]])
    with pytest.raises(mx.ShapeError, match=r"'fc'.*FullyConnected.*weight.*\(2, 5\).*\(2, 4\)"):
        net.bind(mx.cpu(), {**good, "fc_weight": mx.nd.ones((2, 5))})
    with pytest.raises(mx.ShapeError, match="gradient array of argument 'data'"):
        net.bind(mx.cpu(), good, args_grad={"data": mx.nd.ones((1, 4))})
    with pytest.raises(mx.DagnetError, match="grad_req 'sometimes'"):
        net.simple_bind(mx.cpu(), data=(3, 4), grad_req="sometimes")
    with pytest.raises(mx.ContextError, match=r"group2ctx\['dev1'\] must be one context"):
        net.simple_bind(mx.cpu(), data=(3, 4), group2ctx={"dev1": "cpu(1)"})
    with pytest.raises(mx.ContextError, match="or place the graph's nodes"):
        net.bind(mx.cpu(), {**good, "data": good["data"].as_in_context(mx.cpu(1))})


def test_simple_bind_shape_errors():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    with pytest.raises(mx.ShapeError, match="cannot infer the shapes of b"):
        mx.sym.broadcast_add(a, b).simple_bind(mx.cpu(), a=(2, 3))
    with pytest.raises(mx.ShapeError, match=r"'fc'.*FullyConnected.*\(4, 5\)"):
        _fc(4).simple_bind(mx.cpu(), data=(2, 3), fc_weight=(4, 5))
    with pytest.raises(KeyError, match="nothere"):
        _fc(4).simple_bind(mx.cpu(), data=(2, 3), nothere=(1,))


def test_forward_rejects_unknown_names_and_wrong_shapes_and_stays_usable(engine_name):
    ex = _fc(2).simple_bind(mx.cpu(), data=(3, 4))
    with pytest.raises(TypeError, match="Unknown argument 'datum'"):
        ex.forward(datum=np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"fc_weight, need: \(2, 4\), received: \(4, 4\)"):
        ex.forward(data=np.ones((3, 4)), fc_weight=np.ones((4, 4)))
    np.testing.assert_array_equal(ex.arg_dict["data"].asnumpy(), 0)  # nothing was copied
    ex.forward(data=mx.nd.ones((3, 4)), fc_weight=np.ones((2, 4)))
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), 4.0)


def test_backward_through_an_op_without_gradient_raises():
    x = mx.sym.Variable("x")
    net = mx.sym.sgd_update(x, mx.sym.Variable("g"), lr=0.1)
    ex = net.simple_bind(mx.cpu(), x=(2,), g=(2,))
    ex.forward()
    with pytest.raises(mx.DagnetError, match="sgd_update.*no gradient.*grad_req='null'"):
        ex.backward(mx.nd.ones((2,)))


def test_copy_params_from(engine_name):
    net = mx.sym.BatchNorm(_fc(2), name="bn")
    ex = net.simple_bind(mx.cpu(), data=(3, 4))
    ex.copy_params_from({"fc_weight": np.full((2, 4), 2.0), "fc_bias": mx.nd.ones(2)},
                        {"bn_moving_var": mx.nd.full((2,), 3.0)})
    np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy(), 2.0)
    np.testing.assert_array_equal(ex.aux_dict["bn_moving_var"].asnumpy(), 3.0)
    with pytest.raises(KeyError, match="'other'.*allow_extra_params"):
        ex.copy_params_from({"other": mx.nd.ones(1)})
    ex.copy_params_from({"other": mx.nd.ones(1)}, allow_extra_params=True)


def test_reshape_shares_parameters(plan):
    net = mx.sym.SoftmaxOutput(_fc(3), name="sm")
    ex = net.simple_bind(mx.cpu(), data=(4, 5))
    ex.arg_dict["fc_weight"][:] = 0.1
    small = ex.reshape(data=(2, 5), sm_label=(2,))
    assert small.arg_dict["fc_weight"] is ex.arg_dict["fc_weight"]
    assert small.grad_dict["fc_weight"] is ex.grad_dict["fc_weight"]
    assert small.arg_dict["data"].shape == (2, 5) and small.outputs[0].shape == (2, 3)
    small.forward(is_train=True, data=np.ones((2, 5)), sm_label=np.array([0, 1]))
    small.backward()
    assert ex.grad_dict["fc_weight"].asnumpy().any()
    with pytest.raises(mx.ShapeError, match="allow_up_sizing"):
        ex.reshape(data=(8, 5), sm_label=(8,))
    big = ex.reshape(allow_up_sizing=True, data=(8, 5), sm_label=(8,))
    assert big.arg_dict["data"].shape == (8, 5) and big.arg_dict["fc_weight"] is \
        ex.arg_dict["fc_weight"]
    with pytest.raises(mx.ShapeError, match="partial_shaping"):
        ex.reshape(data=(4, 2))  # the weight would change too
    with pytest.raises(mx.ShapeError, match="'sm_label' changes"):
        ex.reshape(data=(2, 5))  # as in MXNet: every changed input must be named
    wide = ex.reshape(partial_shaping=True, data=(4, 2))
    assert wide.arg_dict["fc_weight"].shape == (3, 2)


def test_a_smaller_reshaped_executor_writes_into_the_outputs_it_shares():
    net = _fc(3)
    ex = net.simple_bind(mx.cpu(), data=(5, 4), grad_req="null")
    ex.arg_dict["fc_weight"][:] = 1
    ex.arg_dict["fc_bias"][:] = 0
    small = ex.reshape(data=(3, 4))
    small.forward(data=np.ones((3, 4)))
    np.testing.assert_array_equal(small.outputs[0].asnumpy(), 4)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy()[:3], 4)  # the same memory
    big = ex.reshape(allow_up_sizing=True, data=(6, 4))
    big.forward(data=np.full((6, 4), 2.0))
    assert big.outputs[0].shape == (6, 3)  # too large to share: memory of its own
    np.testing.assert_array_equal(ex.outputs[0].asnumpy()[:3], 4)


def test_monitor_callback_sees_every_output(engine_name):
    net = mx.sym.Activation(_fc(2), act_type="relu", name="relu")
    ex = net.simple_bind(mx.cpu(), data=(1, 2))
    seen = {}
    ex.set_monitor_callback(lambda name, arr: seen.setdefault(name, arr.asnumpy()))
    ex.forward(data=np.array([[1.0, -1.0]]), fc_weight=np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert list(seen) == ["fc_output", "relu_output"]
    np.testing.assert_array_equal(seen["fc_output"], [[1.0, -1.0]])
    ex.set_monitor_callback(lambda name, arr: seen.setdefault(name, None), monitor_all=True)
    ex.forward()
    assert "fc_data" in seen and "relu_data" in seen


def test_monitor_all_names_each_input_before_the_node_runs():
    """MXNet's order: a variable input under its own name, then every input as
    <node>_<input>, then every output (hidden ones too); a reshaped executor keeps the
    monitor."""
    data = mx.sym.Variable("data")
    net = mx.sym.LRN(mx.sym.FullyConnected(data, num_hidden=2, name="fc"), nsize=1,
                     name="lrn")
    ex = net.simple_bind(mx.cpu(), data=(1, 2), grad_req="null")
    names = []
    ex.set_monitor_callback(lambda name, arr: names.append(name), monitor_all=True)
    ex.forward()
    assert names == ["data", "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias",
                     "fc_output", "lrn_data", "lrn_output", "lrn_tmp_norm"]
    names.clear()
    ex.reshape(allow_up_sizing=True, data=(3, 2)).forward()
    assert names[:2] == ["data", "fc_data"] and len(names) == 10


def test_debug_str_and_repr():
    ex = mx.sym.SoftmaxOutput(_fc(2), name="sm").simple_bind(mx.cpu(), data=(1, 3))
    text = ex.debug_str()
    assert "FullyConnected, Name=fc" in text and "_backward_SoftmaxOutput" in text
    assert "memory_plan=" in text and "Executor" in repr(ex)


def test_symbolic_checks(engine_name):
    x = mx.sym.Variable("x")
    net = mx.sym.Group([2 * x, mx.sym.square(x)])
    value = np.array([1.0, -3.0])
    check_symbolic_forward(net, [value], [2 * value, value**2])
    check_symbolic_forward(net, {"x": value}, dict(zip(net.list_outputs(),
                                                       [2 * value, value**2])))
    heads = [np.ones(2), np.array([1.0, 2.0])]
    for req in ("write", "add", "null"):
        check_symbolic_backward(net, [value], heads, [2 + 2 * value * heads[1]], grad_req=req)
    with pytest.raises(AssertionError, match="output"):
        check_symbolic_forward(net, [value], [value, value])


def test_no_backward_runs_behind_a_zero_gradient_and_debug_str_closes_as_mxnet():
    import re

    data = mx.sym.var("data")
    net = data
    for _ in range(4):
        net = net * net
    stopped = mx.sym.stop_gradient(net)
    exe = stopped.simple_bind(mx.cpu(), data=(2, 3))
    text = exe.debug_str()
    assert "_backward_elemwise_mul" not in text  # the gradient behind BlockGrad is zero
    assert text.endswith("TempSpace resource requested\n")
    assert re.search(r"Total (\d+) MB allocated", text.split("\n")[-3])
    exe.forward(is_train=True, data=mx.nd.ones((2, 3)) * 2)
    exe.backward()
    np.testing.assert_array_equal(exe.grad_dict["data"].asnumpy(), np.zeros((2, 3)))


def test_set_grad_arrays_redirects_later_backward_passes(engine_name):
    net = mx.sym.SoftmaxOutput(_fc(), name="sm")
    ex = net.simple_bind(mx.cpu(), data=(2, 5))
    ex.arg_dict["data"][:] = mx.nd.array(np.arange(10).reshape(2, 5) / 10)
    ex.arg_dict["fc_weight"][:] = 0.1
    ex.forward(is_train=True)
    ex.backward()
    own = ex.grad_dict["fc_weight"].asnumpy().copy()
    other = mx.nd.zeros((3, 5))
    ex.set_grad_arrays([None if g is None else (other if n == "fc_weight" else g)
                        for n, g in zip(net.list_arguments(), ex.grad_arrays)])
    assert ex.grad_dict["fc_weight"] is other
    ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_allclose(other.asnumpy(), own, rtol=1e-6)


def test_set_grad_arrays_checks_what_it_is_given():
    ex = mx.sym.SoftmaxOutput(_fc(), name="sm").simple_bind(
        mx.cpu(), data=(2, 5), grad_req={"data": "null", "fc_weight": "write",
                                         "fc_bias": "write", "sm_label": "null"})
    with pytest.raises(ValueError, match="got 1 array"):
        ex.set_grad_arrays([None])
    grads = list(ex.grad_arrays)
    grads[0] = mx.nd.zeros((2, 5))  # data was bound without a gradient
    with pytest.raises(ValueError, match="'data' was bound without a gradient"):
        ex.set_grad_arrays(grads)
    grads = list(ex.grad_arrays)
    grads[1] = mx.nd.zeros((5, 3))
    with pytest.raises(mx.base.MXNetError, match=r"'fc_weight' must be a \(3, 5\) float32"):
        ex.set_grad_arrays(grads)


@pytest.mark.parametrize("use", ["inference", "training-mode pass of an inference bind",
                                 "training"])
def test_an_executor_is_freed_as_soon_as_nothing_refers_to_it(use, engine_name):
    # with its buffers: an executor in a reference cycle waits for the cyclic collector,
    # which large arrays do not prompt (a test binding big networks in a loop grew by a
    # gigabyte a network)
    data = mx.sym.Variable("data")
    net = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=4, name="fc"),
                            act_type="relu")
    args = {"data": mx.nd.ones((2, 3)), "fc_weight": mx.nd.ones((4, 3)),
            "fc_bias": mx.nd.zeros((4,))}
    grads = None if use != "training" else {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    gc.disable()
    try:
        executor = net.bind(mx.cpu(), args, args_grad=grads)
        outputs = executor.forward(is_train=use != "inference")
        if use != "inference":
            executor.backward([mx.nd.ones(outputs[0].shape)])
        mx.nd.waitall()
        freed = weakref.ref(executor)
        del executor, outputs
        assert freed() is None
    finally:
        gc.enable()
