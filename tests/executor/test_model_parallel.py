"""Model parallelism: ``group2ctx`` places each ``ctx_group`` on its device, copies
cross between devices in both passes, and the results are the single-device ones."""

from __future__ import annotations

import re

import numpy as np
import pytest

import dagnet as mx

GROUPS = {"dev1": mx.cpu(1), "dev2": mx.cpu(2)}


def _two_stage_net():
    """fc1 on dev1 feeds fc2 and a skip connection on dev2 (its output is used twice on
    another device, so its gradient is summed from two parts computed there)."""
    data = mx.sym.Variable("data")
    with mx.AttrScope(ctx_group="dev1"):
        h = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
        h = mx.sym.Activation(h, act_type="tanh", name="act1")
    with mx.AttrScope(ctx_group="dev2"):
        out = mx.sym.FullyConnected(h, num_hidden=4, name="fc2") + h
    return mx.sym.LinearRegressionOutput(out, name="lro")  # no group: where its input is


def _steps(executor):
    """(phase, kind, device) of every step, from ``debug_str``."""
    return re.findall(r"Step \d+ \((\w+)\) (\w+), Name=[^,]+, Device=(\S+)",
                      executor.debug_str())


def _fill(executor, seed=0):
    rng = np.random.default_rng(seed)
    for array in executor.arg_arrays:
        array[:] = rng.uniform(-1, 1, array.shape)


def test_simple_bind_places_grouped_variables_and_nodes_on_their_devices():
    executor = _two_stage_net().simple_bind(mx.cpu(), data=(3, 5), group2ctx=GROUPS)
    where = {name: a.context for name, a in executor.arg_dict.items()}
    assert where == {"data": mx.cpu(), "fc1_weight": mx.cpu(1), "fc1_bias": mx.cpu(1),
                     "fc2_weight": mx.cpu(2), "fc2_bias": mx.cpu(2), "lro_label": mx.cpu()}
    assert {n: g.context for n, g in executor.grad_dict.items()} == where
    assert executor.outputs[0].context == mx.cpu(2)  # the loss follows its input to dev2


def test_without_group2ctx_groups_mean_nothing():
    executor = _two_stage_net().simple_bind(mx.cpu(), data=(3, 5))
    assert {a.context for a in executor.arg_arrays} == {mx.cpu()}
    assert {device for _, _, device in _steps(executor)} == {"cpu(0)"}


def test_copies_cross_devices_in_forward_and_backward():
    executor = _two_stage_net().simple_bind(mx.cpu(), data=(3, 5), group2ctx=GROUPS)
    steps = _steps(executor)
    copies = [(phase, device) for phase, kind, device in steps if kind == "_CrossDeviceCopy"]
    # forward: data to dev1; act1's output once to dev2 (fc2 and the sum share the
    # copy), and the label to dev2
    assert copies.count(("forward", "cpu(1)")) == 1
    assert copies.count(("forward", "cpu(2)")) == 2
    # backward: act1's gradient, summed on dev2 from its two parts, once back to dev1;
    # the gradients of data and the label back to cpu(0)
    assert copies.count(("backward", "cpu(1)")) == 1
    assert copies.count(("backward", "cpu(0)")) == 2
    ops = {(kind, device) for _, kind, device in steps if kind != "_CrossDeviceCopy"}
    assert {("FullyConnected", "cpu(1)"), ("FullyConnected", "cpu(2)"),
            ("_backward_FullyConnected", "cpu(1)"),
            ("_backward_FullyConnected", "cpu(2)")} <= ops


def test_results_are_those_of_one_device(plan):
    net = _two_stage_net()
    placed = net.simple_bind(mx.cpu(), data=(3, 5), group2ctx=GROUPS)
    single = net.simple_bind(mx.cpu(), data=(3, 5))
    for executor in (placed, single):
        _fill(executor)
        executor.forward(is_train=True)
        executor.backward()
    np.testing.assert_allclose(placed.outputs[0].asnumpy(), single.outputs[0].asnumpy(),
                               rtol=1e-6)
    for name in net.list_arguments():
        np.testing.assert_allclose(placed.grad_dict[name].asnumpy(),
                                   single.grad_dict[name].asnumpy(), rtol=1e-6, err_msg=name)


def test_bind_takes_arrays_where_they_are():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    with mx.AttrScope(ctx_group="dev1"):
        net = (a + b) * 3
    with mx.AttrScope(ctx_group="dev2"):
        net = net + mx.sym.Variable("c")
    args = {"a": mx.nd.ones((2, 2), ctx=mx.cpu(1)), "b": mx.nd.ones((2, 2), ctx=mx.cpu(0)),
            "c": mx.nd.ones((2, 2), ctx=mx.cpu(2))}
    # a gradient array may live elsewhere than the node computing it (MXNet refuses this)
    grads = {"a": mx.nd.zeros((2, 2), ctx=mx.cpu(3)), "c": mx.nd.zeros((2, 2), ctx=mx.cpu(2))}
    executor = net.bind(mx.cpu(), args, args_grad=grads, group2ctx=GROUPS)
    assert executor.forward(is_train=True)[0].context == mx.cpu(2)
    np.testing.assert_array_equal(executor.outputs[0].asnumpy(), 7.0)
    executor.backward(mx.nd.ones((2, 2)))
    np.testing.assert_array_equal(grads["a"].asnumpy(), 3.0)
    np.testing.assert_array_equal(grads["c"].asnumpy(), 1.0)
    assert grads["a"].context == mx.cpu(3)


def test_grad_req_add_accumulates_across_devices():
    with mx.AttrScope(ctx_group="dev1"):
        x = mx.sym.Variable("x")
    with mx.AttrScope(ctx_group="dev2"):
        net = x * 2 + x  # both parts of x's gradient come from dev2
    executor = net.simple_bind(mx.cpu(), x=(2,), grad_req="add", group2ctx=GROUPS)
    for _ in range(2):
        executor.forward(is_train=True, x=mx.nd.ones((2,)))
        executor.backward(mx.nd.ones((2,)))
    assert executor.grad_dict["x"].context == mx.cpu(1)
    np.testing.assert_array_equal(executor.grad_dict["x"].asnumpy(), 6.0)


def test_a_node_without_inputs_runs_where_its_consumer_does():
    with mx.AttrScope(ctx_group="dev2"):
        x = mx.sym.Variable("x")
        net = x + 1
    net = net * mx.sym.ones((2,))  # ones: no group, no input; the product follows x + 1
    executor = net.simple_bind(mx.cpu(), x=(2,), group2ctx=GROUPS)
    assert {device for _, _, device in _steps(executor)} == {"cpu(2)"}
    np.testing.assert_array_equal(executor.forward(x=mx.nd.ones((2,)))[0].asnumpy(), 2.0)


def test_reshape_keeps_the_placement():
    executor = _two_stage_net().simple_bind(mx.cpu(), data=(3, 5), group2ctx=GROUPS)
    smaller = executor.reshape(data=(2, 5), lro_label=(2, 4))
    assert smaller.outputs[0].context == mx.cpu(2)
    assert _steps(smaller) and {d for _, _, d in _steps(smaller)} == {"cpu(0)", "cpu(1)",
                                                                     "cpu(2)"}


def test_a_group_missing_from_group2ctx_is_named():
    with pytest.raises(mx.ContextError, match=r"'fc2_weight'.*ctx_group 'dev2'.*assigns 'dev1'"):
        _two_stage_net().simple_bind(mx.cpu(), data=(3, 5), group2ctx={"dev1": mx.cpu(1)})


def test_updated_inputs_cannot_cross_devices():
    with mx.AttrScope(ctx_group="dev1"):
        net = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    shapes, _, aux_shapes = net.infer_shape(data=(2, 3))
    args = [mx.nd.ones(s, ctx=mx.cpu(1)) for s in shapes]
    aux = [mx.nd.ones(s, ctx=mx.cpu(2)) for s in aux_shapes]
    with pytest.raises(mx.ContextError, match="'bn' runs on cpu\\(1\\) but updates"):
        net.bind(mx.cpu(), args, aux_states=aux, group2ctx=GROUPS)


def test_the_monitor_sees_the_nodes_not_the_copies():
    executor = _two_stage_net().simple_bind(mx.cpu(), data=(3, 5), group2ctx=GROUPS)
    seen = {}
    executor.set_monitor_callback(lambda name, array: seen.setdefault(name, array.context))
    executor.forward(is_train=True)
    assert len(seen) == 5 and not any("copy" in name for name in seen)
    assert (seen["fc1_output"], seen["act1_output"]) == (mx.cpu(1), mx.cpu(1))
    assert (seen["fc2_output"], seen["lro_output"]) == (mx.cpu(2), mx.cpu(2))
