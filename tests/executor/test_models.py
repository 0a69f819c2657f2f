"""Networks through the executor: forward against numpy, gradients against central
differences, and the planned run identical to the unplanned one, on every engine."""

from __future__ import annotations

import numpy as np

import dagnet as mx
from dagnet.operator import get_op
from dagnet.test_utils import assert_almost_equal, check_numeric_gradient


def _fill(executor, seed):
    rng = np.random.default_rng(seed)
    for name, array in executor.arg_dict.items():
        if name.endswith("label"):
            classes = executor.outputs[0].shape[-1]
            array[:] = rng.integers(0, classes, size=array.shape)
        else:
            array[:] = rng.standard_normal(array.shape) * 0.5
    for name, array in executor.aux_dict.items():
        array[:] = 1.0 if name.endswith("var") else 0.0


def _run(models, model, seed=0, dtype=np.float32):
    """Outputs, gradients and auxiliary states after two training steps' forward/backward."""
    symbol, shapes = models[model]()
    executor = symbol.simple_bind(mx.cpu(), type_dict={n: dtype for n in symbol.list_arguments()},
                                  **shapes)
    _fill(executor, seed)
    rng = np.random.default_rng(seed + 1)
    heads = [rng.standard_normal(o.shape).astype(dtype) for o in executor.outputs]
    for _ in range(2):
        executor.forward(is_train=True)
        executor.backward([mx.nd.array(h, dtype=dtype) for h in heads])
    return ([o.asnumpy() for o in executor.outputs],
            {k: g.asnumpy() for k, g in executor.grad_dict.items() if g is not None},
            {k: a.asnumpy() for k, a in executor.aux_dict.items()})


def test_planned_and_unplanned_runs_are_identical(models, model, engine_name):
    with mx.config.set(memory_plan=True):
        planned = _run(models, model)
    with mx.config.set(memory_plan=False):
        unplanned = _run(models, model)
    for got, want in zip(planned[0], unplanned[0]):
        np.testing.assert_array_equal(got, want)
    for part in (1, 2):
        assert planned[part].keys() == unplanned[part].keys()
        for name in planned[part]:
            np.testing.assert_array_equal(planned[part][name], unplanned[part][name], err_msg=name)


def test_every_engine_gives_the_naive_results(models, model, engine_name):
    got = _run(models, model)
    with mx.config.set(engine="naive"):
        want = _run(models, model)
    for a, b in zip(got[0], want[0]):
        np.testing.assert_array_equal(a, b)
    for name in want[1]:
        np.testing.assert_array_equal(got[1][name], want[1][name], err_msg=name)


def _differentiable_body(models, model):
    """The model without its loss head (a loss gives its own gradient, not the output's)."""
    symbol, shapes = models[model]()
    node = symbol._outputs[0][0]
    if len(symbol._outputs) == 1 and node.op is not None and node.op.name in (
            "SoftmaxOutput", "LinearRegressionOutput", "MakeLoss"):
        symbol = mx.sym.Symbol([node.inputs[0]])
    return symbol, shapes


def test_gradients_match_central_differences(models, model, plan):
    symbol, shapes = _differentiable_body(models, model)
    arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
    rng = np.random.default_rng(3)
    location = {n: rng.standard_normal(s) * 0.5
                for n, s in zip(symbol.list_arguments(), arg_shapes)}
    aux = {n: np.ones(s) if n.endswith("var") else np.zeros(s)
           for n, s in zip(symbol.list_auxiliary_states(), aux_shapes)}
    check_numeric_gradient(symbol, location, aux_states=aux or None, numeric_eps=1e-6,
                           rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_mlp_forward_and_backward_match_numpy(models, plan):
    symbol, shapes = models["mlp"]()
    executor = symbol.simple_bind(mx.cpu(), **shapes)
    _fill(executor, 7)
    args = {k: v.asnumpy().astype(np.float64) for k, v in executor.arg_dict.items()}
    out = executor.forward(is_train=True)[0].asnumpy()
    executor.backward()

    def fc(x, i):
        return x @ args[f"fc{i}_weight"].T + args[f"fc{i}_bias"]

    h1 = np.maximum(fc(args["data"], 1), 0)
    h2 = np.maximum(fc(h1, 2), 0)
    z = fc(h2, 3)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert_almost_equal(out, p, rtol=1e-5, atol=1e-6)
    dz = p - np.eye(3)[args["softmax_label"].astype(int)]
    assert_almost_equal(executor.grad_dict["fc3_weight"], dz.T @ h2, rtol=1e-4, atol=1e-5)
    dh2 = (dz @ args["fc3_weight"]) * (h2 > 0)
    dh1 = (dh2 @ args["fc2_weight"]) * (h1 > 0)
    assert_almost_equal(executor.grad_dict["fc1_weight"], dh1.T @ args["data"], rtol=1e-4,
                        atol=1e-5)
    assert_almost_equal(executor.grad_dict["data"], dh1 @ args["fc1_weight"], rtol=1e-4,
                        atol=1e-5)
    np.testing.assert_array_equal(executor.grad_dict["softmax_label"].asnumpy(), 0)


def test_memory_plan_saves_memory_and_reuses_buffers(engine_name):
    data = mx.sym.Variable("data")
    h = data
    for i in range(6):
        h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=16, name=f"fc{i}"),
                              act_type="relu", name=f"relu{i}")
    net = mx.sym.SoftmaxOutput(h, name="softmax")
    with mx.config.set(memory_plan=True):
        planned = net.simple_bind(mx.cpu(), data=(8, 16)).memory_stats()
    with mx.config.set(memory_plan=False):
        unplanned = net.simple_bind(mx.cpu(), data=(8, 16)).memory_stats()
    assert planned["planned"] and not unplanned["planned"]
    assert unplanned["inplace"] == 0 and planned["inplace"] >= 6
    assert unplanned["intermediate_bytes"] >= unplanned["live_peak_bytes"]
    assert planned["intermediate_bytes"] < unplanned["intermediate_bytes"] / 2
    assert planned["blocks"] < planned["inner_buffers"]


def test_memory_plan_from_the_environment(models, monkeypatch):
    monkeypatch.setenv("DAGNET_MEMORY_PLAN", "0")
    symbol, shapes = models["mlp"]()
    assert not symbol.simple_bind(mx.cpu(), **shapes).memory_stats()["planned"]


def test_activation_backward_is_planned_in_place(models):
    symbol, shapes = models["mlp"]()
    with mx.config.set(memory_plan=True):
        text = symbol.simple_bind(mx.cpu(), **shapes).debug_str()
    assert "_backward_Activation" in text and "req=inplace" in text
    assert get_op("Activation").inplace_pairs(get_op("Activation").parse_params(
        {"act_type": "relu"})) == [(0, 0)]


def test_bulked_and_unbulked_runs_are_identical(models, model, engine_name):
    with mx.config.set(exec_bulk_size=1):
        single = _run(models, model)
    with mx.config.set(exec_bulk_size=15):
        bulked = _run(models, model)
    for got, want in zip(bulked[0], single[0]):
        np.testing.assert_array_equal(got, want)
    for part in (1, 2):
        for name in single[part]:
            np.testing.assert_array_equal(bulked[part][name], single[part][name], err_msg=name)


def test_chains_are_bulked_and_branches_are_not():
    data = mx.sym.Variable("data")
    chain = mx.sym.relu(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="r1")
    chain = mx.sym.sigmoid(chain, name="s1")
    left, right = mx.sym.exp(chain, name="left"), mx.sym.tanh(chain, name="right")
    net = mx.sym.Group([left, right])
    executor = net.simple_bind(mx.cpu(), data=(2, 4))
    # in training: fc -> r1 -> s1 is one chain; s1 feeds two branches, each pushed on
    # its own so that the engine can run them at the same time
    assert [o.name for o, _ in executor._program(False, True)] == [
        "fc..s1 (3 nodes)", "left", "right"]
    with mx.config.set(exec_bulk_size=2):
        assert len(executor._program(False, True)) == 4
    with mx.config.set(exec_bulk_size=1):
        assert len(executor._program(False, True)) == 5
    # outside training the pass is one operation, as MXNet bulks inference, unless that
    # is switched off
    assert [o.name for o, _ in executor._program(False, False)] == ["fc..right (5 nodes)"]
    with mx.config.set(exec_bulk_inference=False):
        assert len(executor._program(False, False)) == 3


def test_a_block_the_plan_hands_on_does_not_split_the_backward_chain():
    # the data gradient nobody wants is written into a block an earlier backward step
    # wrote and the next one read: an overwrite, not a second reader, so no fork
    net = mx.sym.Variable("data")
    for i in range(3):
        net = mx.sym.FullyConnected(net, num_hidden=4, name=f"fc{i}")
        if i < 2:
            net = mx.sym.relu(net, name=f"relu{i}")
    loss = mx.sym.make_loss(mx.sym.sum(net))
    executor = loss.simple_bind(mx.cpu(), data=(2, 5), grad_req={
        name: "null" if name == "data" else "write" for name in loss.list_arguments()})
    assert executor.memory_stats()["inplace"] > 0
    assert len(executor._program(True, True)) == 1


def _inplace_nodes(executor):
    """The lines of ``debug_str`` of the steps computed in place."""
    return [line for line in executor.debug_str().splitlines() if "req=inplace" in line]


def test_a_sum_takes_over_an_operand_an_earlier_node_read_too(engine_name):
    """A residual connection: ``x`` is read by a branch, then added to the branch's
    result; the sum, the last reader of ``x``, writes over ``x``'s block, and the branch
    has read it by then."""
    data = mx.sym.Variable("data")
    x = mx.sym.relu(data, name="x")
    net = mx.sym.elemwise_add(mx.sym.sigmoid(x, name="branch"), x, name="sum")
    net = mx.sym.negative(net, name="out")  # the sum's result an inner buffer
    with mx.config.set(memory_plan=True):
        executor = net.simple_bind(mx.cpu(), data=(3, 4), grad_req="null")
    value = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    got = executor.forward(data=mx.nd.array(value))[0].asnumpy()
    relu = np.maximum(value, 0)
    np.testing.assert_allclose(got, -(1 / (1 + np.exp(-relu)) + relu), rtol=1e-6)
    assert any("sum" in line for line in _inplace_nodes(executor)), executor.debug_str()


def test_an_operand_a_node_reads_twice_is_not_overwritten(engine_name):
    data = mx.sym.Variable("data")
    x = mx.sym.relu(data, name="x")
    net = mx.sym.negative(mx.sym.elemwise_add(x, x, name="sum"), name="out")
    with mx.config.set(memory_plan=True):
        executor = net.simple_bind(mx.cpu(), data=(3, 4), grad_req="null")
    value = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    got = executor.forward(data=mx.nd.array(value))[0].asnumpy()
    np.testing.assert_allclose(got, -2 * np.maximum(value, 0), rtol=1e-6)
    assert not any("sum" in line for line in _inplace_nodes(executor)), executor.debug_str()
