"""The inference graph passes (``dagnet_ops.graph_passes``): every pass, alone and with the
others, gives the plain graph's outputs on every engine; training graphs are left as
they are; each pass switches off by name; the fused nodes see parameters written after
the bind; and the front doors that bind for inference (``bind`` without gradients,
``Module.bind(for_training=False)``, a hybridized block called outside ``record``) get
the rewritten graph."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import nn

PASSES = ("eliminate_identity", "fold_batch_norm", "fuse_conv", "fuse_fully_connected")


def _bn(x, name):
    return mx.sym.BatchNorm(x, fix_gamma=False, eps=1e-3, name=name)


def _conv(x, name, filters, kernel=3, groups=1, bias=False, stride=1):
    return mx.sym.Convolution(x, num_filter=filters, kernel=(kernel, kernel),
                              pad=(kernel // 2,) * 2, stride=(stride, stride), num_group=groups,
                              no_bias=not bias, name=name)


def network():
    """Every pattern the passes rewrite: convolution (with a bias) + relu; convolution +
    BatchNorm; a residual sum whose first operand is a convolution + BatchNorm; relu after
    a sum;
    a depthwise convolution + BatchNorm + clip (MobileNet's relu6); a 1x1 convolution + a
    sum without activation; Dropout, identity and BlockGrad; FullyConnected + relu."""
    data = mx.sym.Variable("data")
    x = mx.sym.Activation(_conv(data, "c1", 16, bias=True), act_type="relu", name="r1")
    body = _bn(_conv(x, "c2", 16), "b2")
    shortcut = _bn(_conv(x, "down", 16, kernel=1), "bdown")
    x = mx.sym.Activation(shortcut + body, act_type="relu", name="r2")
    y = mx.sym.clip(_bn(_conv(x, "dw", 16, groups=16), "bdw"), a_min=0, a_max=6, name="relu6")
    y = _bn(_conv(y, "pw", 16, kernel=1), "bpw")
    x = mx.sym.elemwise_add(y, x, name="add2")
    x = mx.sym.Dropout(mx.sym.identity(x, name="copy"), p=0.5, name="drop")
    x = mx.sym.BlockGrad(mx.sym.Flatten(x, name="flat"), name="block")
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=10, name="fc1"), act_type="relu",
                          name="r3")
    return mx.sym.FullyConnected(x, num_hidden=4, name="fc2")


SHAPE = (2, 8, 8, 8)


def values(symbol, seed=0):
    """Random arguments and auxiliary states of ``symbol`` (BatchNorm statistics too)."""
    rs = np.random.RandomState(seed)
    arg_shapes, _, aux_shapes = symbol.infer_shape(data=SHAPE)
    args = {n: mx.nd.array(rs.normal(0, 0.5, s)) for n, s in
            zip(symbol.list_arguments(), arg_shapes)}
    aux = {n: mx.nd.array(rs.uniform(0.5, 1.5, s) if n.endswith("var") else rs.normal(0, 0.2, s))
           for n, s in zip(symbol.list_auxiliary_states(), aux_shapes)}
    return args, aux


def bind(symbol, args, aux, disabled=(), passes=True):
    """``symbol`` bound for inference to copies of ``args`` and ``aux``, the passes
    ``disabled`` off and ``inference_layout`` too (whose nodes depend on the CPU: see
    test_inference_layout.py)."""
    copies = ({k: v.copy() for k, v in args.items()}, {k: v.copy() for k, v in aux.items()})
    off = ",".join([*disabled, "inference_layout"])
    with mx.config.set(graph_passes=passes, disabled_graph_passes=off):
        return symbol.bind(mx.cpu(), copies[0], aux_states=copies[1])


def ops(executor):
    return Counter(n["op"] for n in json.loads(executor.get_optimized_symbol().tojson())["nodes"]
                   if n["op"] != "null")


# what each pass alone does to network(): the operators it removes, those it leaves fewer
# of, and those it adds
EFFECT = {
    "eliminate_identity": ({"Dropout", "_copy", "BlockGrad"}, set(), set()),
    "fold_batch_norm": ({"BatchNorm"}, {"Convolution"}, {"_sg_mkldnn_conv"}),
    "fuse_conv": (set(), {"Convolution", "Activation"}, {"_sg_mkldnn_conv"}),
    "fuse_fully_connected": (set(), {"FullyConnected", "Activation"},
                             {"_sg_mkldnn_fully_connected"}),
}


@pytest.mark.parametrize("only", [*PASSES, None], ids=[*PASSES, "all"])
def test_each_pass_gives_the_plain_graphs_outputs(only, engine_name):
    symbol = network()
    args, aux = values(symbol)
    plain = bind(symbol, args, aux, passes=False)
    rewritten = bind(symbol, args, aux, disabled=[p for p in PASSES if only and p != only])
    expected = plain.forward()[0].asnumpy()
    np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5 * np.abs(expected).max())
    before, after = ops(plain), ops(rewritten)
    if only is None:
        assert after == {"_sg_mkldnn_conv": 5, "Flatten": 1, "_sg_mkldnn_fully_connected": 1,
                         "FullyConnected": 1}, after
        return
    gone, fewer, added = EFFECT[only]
    assert not gone & set(after) and added <= set(after), after
    assert all(after[op] < before[op] for op in fewer), (before, after)


def test_the_fused_graph_runs_on_numpy_kernels_too():
    symbol = network()
    args, aux = values(symbol)
    expected = bind(symbol, args, aux, passes=False).forward()[0].asnumpy()
    with mx.config.set(cpu_onednn=False):
        got = bind(symbol, args, aux).forward()[0].asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


def test_training_graphs_are_left_as_they_are(engine_name):
    symbol = network()
    ex = symbol.simple_bind(mx.cpu(), data=SHAPE)
    assert ops(ex) == Counter(n["op"] for n in json.loads(symbol.tojson())["nodes"]
                              if n["op"] != "null")


def test_a_training_mode_forward_of_an_inference_executor_trains(engine_name):
    """BatchNorm on the batch's statistics, updating the moving ones; Dropout dropping."""
    symbol = network()
    args, aux = values(symbol)
    plain, rewritten = bind(symbol, args, aux, passes=False), bind(symbol, args, aux)
    mx.random.seed(3)
    expected = plain.forward(is_train=True)[0].asnumpy()
    mx.random.seed(3)
    got = rewritten.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
    for name, array in plain.aux_dict.items():
        np.testing.assert_allclose(rewritten.aux_dict[name].asnumpy(), array.asnumpy(),
                                   rtol=1e-5, atol=1e-6)
    # and the inference pass after it folds the new moving statistics
    expected = plain.forward()[0].asnumpy()
    np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5 * np.abs(expected).max())


def test_each_pass_switches_off_by_name():
    symbol = network()
    args, aux = values(symbol)
    assert ops(bind(symbol, args, aux, disabled=PASSES)) == ops(bind(symbol, args, aux,
                                                                     passes=False))
    kept = ops(bind(symbol, args, aux, disabled=["fuse_conv", "fold_batch_norm"]))
    assert "_sg_mkldnn_conv" not in kept and "_sg_mkldnn_fully_connected" in kept


def test_the_fused_nodes_see_parameters_written_after_the_bind(engine_name):
    symbol = network()
    args, aux = values(symbol)
    plain, rewritten = bind(symbol, args, aux, passes=False), bind(symbol, args, aux)
    rewritten.forward()[0].wait_to_read()  # weights folded and prepared
    new_args, new_aux = values(symbol, seed=1)
    changed_args = {k: v for k, v in new_args.items() if k in ("c2_weight", "b1_gamma",
                                                                "fc1_weight", "c1_bias")}
    changed_aux = {k: v for k, v in new_aux.items() if k in ("bdw_moving_var",
                                                             "b2_moving_mean")}
    for ex in (plain, rewritten):
        ex.copy_params_from(changed_args, changed_aux)
    expected = plain.forward()[0].asnumpy()
    np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5 * np.abs(expected).max())
    rewritten.arg_dict["pw_weight"][:] = 0.0  # a write through the array itself
    plain.arg_dict["pw_weight"][:] = 0.0
    expected = plain.forward()[0].asnumpy()
    np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5 * np.abs(expected).max())


def test_a_fused_node_runs_again_as_it_ran_until_what_it_used_changes(monkeypatch):
    from dagnet_ops.nn import _onednn, fused_conv

    if _onednn.library() is None:
        pytest.skip(f"oneDNN is not loaded: {_onednn.unavailable_reason()}")
    symbol = network()
    args, aux = values(symbol)
    plain, rewritten = bind(symbol, args, aux, passes=False), bind(symbol, args, aux)
    rewritten.forward()[0].wait_to_read()
    prepared = []  # the nodes that went through oneDNN's checks and look-ups again
    original = fused_conv.onednn_forward
    monkeypatch.setattr(fused_conv, "onednn_forward",
                        lambda *a, **k: prepared.append(a[1]) or original(*a, **k))

    def same_outputs():
        expected = plain.forward()[0].asnumpy()
        np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                                   atol=1e-5 * np.abs(expected).max())

    same_outputs()
    assert prepared == []  # every fused node ran its kernel again as it was
    for ex in (plain, rewritten):
        ex.arg_dict["pw_weight"][:] *= -2.0  # one node's weights: that node prepares again
    same_outputs()
    assert len(prepared) == 1
    with mx.config.set(cpu_kernel_threads=2):  # another thread count: every node does
        same_outputs()
    assert len(prepared) == 1 + sum(n == "_sg_mkldnn_conv" for n in ops(rewritten).elements())
    with mx.config.set(cpu_onednn=False):  # numpy's kernels, and nothing replayed
        same_outputs()


def test_fused_nodes_run_again_by_onednn_calls_alone_until_what_they_used_changes(
        monkeypatch, engine_name):
    from dagnet_ops.nn import _onednn, fused_conv

    if _onednn.library() is None:
        pytest.skip(f"oneDNN is not loaded: {_onednn.unavailable_reason()}")
    mx.ndarray.waitall()
    mx.engine.current().shutdown()  # one worker (offers are made for the running thread)
    symbol = network()
    args, aux = values(symbol)
    plain, rewritten = bind(symbol, args, aux, passes=False), bind(symbol, args, aux)

    def same_outputs():
        expected = plain.forward()[0].asnumpy()
        np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                                   atol=1e-5 * np.abs(expected).max())

    same_outputs()
    kernels = []  # the fused nodes whose kernel ran
    original = fused_conv.replayed
    monkeypatch.setattr(fused_conv, "replayed", lambda ctx, *a: kernels.append(ctx.state)
                        or original(ctx, *a))
    fused = sum(n == "_sg_mkldnn_conv" for n in ops(rewritten).elements())
    for _ in range(2):
        same_outputs()
    assert kernels == []  # the primitives ran, and nothing else of the kernels
    for ex in (plain, rewritten):
        ex.arg_dict["data"][:] *= 0.5  # new data: the same calls
        ex.arg_dict["pw_weight"][:] *= -2.0  # a parameter: the pass runs its kernels once
    same_outputs()
    same_outputs()
    assert len(kernels) == fused  # (an inference pass is one chain of the whole graph)
    with mx.config.set(exec_replay=False):
        same_outputs()
    assert len(kernels) == 2 * fused


def test_dropout_that_always_drops_stays():
    x = mx.sym.Dropout(mx.sym.Variable("data"), p=0.5, mode="always", name="d")
    ex = mx.sym.Activation(x, act_type="relu").bind(mx.cpu(), {"data": mx.nd.ones((4, 4))})
    assert ops(ex)["Dropout"] == 1


def test_a_graph_output_read_elsewhere_or_of_an_argument_keeps_its_identity():
    data = mx.sym.Variable("data")
    group = mx.sym.Group([mx.sym.identity(data, name="i1"),
                          mx.sym.Dropout(data * 2, name="d"), data * 2])
    ex = group.bind(mx.cpu(), {"data": mx.nd.ones(3)})
    assert ops(ex)["_copy"] == 1
    outputs = [o.asnumpy() for o in ex.forward()]
    np.testing.assert_array_equal(outputs[0], 1.0)
    np.testing.assert_array_equal(outputs[1], 2.0)


def test_a_sum_fused_only_where_the_inputs_keep_their_order():
    """``elemwise_add(residual, conv)`` whose residual brings new variables first: the
    convolution cannot take the sum (its operand would be listed after its own weights)."""
    data = mx.sym.Variable("data")
    residual = mx.sym.FullyConnected(data, num_hidden=8 * 8 * 8, name="fc")
    residual = mx.sym.reshape(residual, shape=(-1, 8, 8, 8))
    conv = mx.sym.Activation(_conv(data, "c", 8), act_type="relu", name="r")
    symbol = mx.sym.elemwise_add(residual, conv, name="add")
    args, aux = values(symbol)
    ex = bind(symbol, args, aux)
    assert ops(ex)["elemwise_add"] == 1 and ops(ex)["_sg_mkldnn_conv"] == 1
    expected = bind(symbol, args, aux, passes=False).forward()[0].asnumpy()
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), expected, rtol=1e-4, atol=1e-5)


class _Block(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(8, 3, padding=1, use_bias=False)
        self.bn = nn.BatchNorm()
        self.dense = nn.Dense(5)

    def hybrid_forward(self, F, x):
        return self.dense(F.Activation(self.bn(self.conv(x)), act_type="relu"))


def test_a_hybridized_block_called_outside_record_runs_the_inference_graph(engine_name):
    net = _Block()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).normal(size=(2, 3, 6, 6)))
    net(x)  # shapes known
    for name, param in net.collect_params().items():
        if name.endswith(("running_mean", "beta")):
            param.set_data(mx.nd.array(np.random.RandomState(1).normal(0, 0.2, param.shape)))
    expected = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-4, atol=1e-5)
    (bound,) = [b for pool in net._cached_op._executors.values() for b in pool]
    assert "_sg_mkldnn_conv" in ops(bound.executor)

    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(2)  # weights and the moving statistics change
    hybrid = net(x).asnumpy()
    net.hybridize(active=False)
    np.testing.assert_allclose(hybrid, net(x).asnumpy(), rtol=1e-4, atol=1e-5)


def test_a_module_bound_for_prediction_runs_the_inference_graph():
    symbol = network()
    args, aux = values(symbol)
    module = mx.mod.Module(symbol, data_names=["data"], label_names=None)
    with mx.config.set(disabled_graph_passes="inference_layout"):
        module.bind(data_shapes=[("data", SHAPE)], for_training=False)
    module.set_params({k: v for k, v in args.items() if k != "data"}, aux)
    batch = mx.io.DataBatch([args["data"]])
    module.forward(batch, is_train=False)
    expected = bind(symbol, args, aux, passes=False).forward()[0].asnumpy()
    np.testing.assert_allclose(module.get_outputs()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5 * np.abs(expected).max())
    assert "_sg_mkldnn_conv" in ops(module._exec_group.execs[0])


def test_the_passes_need_no_shapes():
    """A graph rewritten before it is bound (its shapes unknown): everything fuses but the
    sums, whose operands' shapes must match."""
    from dagnet.executor import BoundGraph
    from dagnet_ops.graph_passes import fuse_conv

    graph = json.loads(network().tojson())
    unknown = [[None] * (3 if n["op"] == "BatchNorm" else 2 if n["op"] == "Dropout" else 1)
               for n in graph["nodes"]]
    rewritten = fuse_conv.rewrite(BoundGraph(graph, unknown, [[None] * len(u) for u in unknown],
                                             mx.cpu(), for_training=False))
    fused = [n for n in rewritten["nodes"] if n["op"] == "_sg_mkldnn_conv"]
    assert fused and not any(n.get("attrs", {}).get("with_sum") for n in fused)
