"""The inference pass ``inference_layout``: chains of convolutions of an inference graph on
the channel-blocked layout oneDNN wants on this CPU.

The layout is oneDNN's decision, so it is tested as a decision (what the pass asks for is
what oneDNN's kernel takes) and then, for each layout oneDNN has (8 and 16 channels per
block), through a pass made to choose it: whatever CPU runs the tests, both rewrites give
the plain graph's outputs on every engine, with layout changes only at a chain's ends."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import dagnet as mx
from dagnet_ops.graph_passes import inference_layout
from dagnet_ops.nn import _onednn
from dagnet_ops.nn.channel_blocks import CONV, FROM_BLOCKS, TO_BLOCKS

needs_onednn = pytest.mark.skipif(_onednn.library() is None,
                                  reason="oneDNN (onednn-cpu-gomp) is not installed")

SHAPE = (2, 3, 12, 12)


def network():
    """A MobileNet-like stem and block: a first convolution on 3 channels (no block
    divides them), a depthwise and a 1x1 convolution with BatchNorm and relu6, a residual
    sum, then global pooling and a dense layer that stay plain."""
    def conv(x, name, filters, kernel=3, groups=1, stride=1):
        y = mx.sym.Convolution(x, num_filter=filters, kernel=(kernel, kernel),
                               pad=(kernel // 2,) * 2, stride=(stride, stride),
                               num_group=groups, no_bias=True, name=name)
        return mx.sym.BatchNorm(y, fix_gamma=False, eps=1e-3, name=f"{name}_bn")

    def relu6(x, name):
        return mx.sym.clip(x, a_min=0, a_max=6, name=name)

    data = mx.sym.Variable("data")
    x = relu6(conv(data, "stem", 16, stride=2), "stem_relu")
    y = relu6(conv(x, "dw", 16, groups=16), "dw_relu")
    y = conv(y, "pw", 16, kernel=1)
    x = mx.sym.elemwise_add(y, x, name="add")
    x = relu6(conv(x, "expand", 32, kernel=1), "expand_relu")
    x = mx.sym.Pooling(x, kernel=(1, 1), global_pool=True, pool_type="avg", name="pool")
    return mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=5, name="fc")


def values(symbol):
    rs = np.random.RandomState(0)
    arg_shapes, _, aux_shapes = symbol.infer_shape(data=SHAPE)
    args = {n: mx.nd.array(rs.normal(0, 0.5, s)) for n, s in
            zip(symbol.list_arguments(), arg_shapes)}
    aux = {n: mx.nd.array(rs.uniform(0.5, 1.5, s) if n.endswith("var") else rs.normal(0, 0.2, s))
           for n, s in zip(symbol.list_auxiliary_states(), aux_shapes)}
    return args, aux


def bind(symbol, args, aux, passes=True):
    copies = ({k: v.copy() for k, v in args.items()}, {k: v.copy() for k, v in aux.items()})
    with mx.config.set(graph_passes=passes):
        return symbol.bind(mx.cpu(), copies[0], aux_states=copies[1])


def ops(executor):
    return Counter(n["op"] for n in json.loads(executor.get_optimized_symbol().tojson())["nodes"]
                   if n["op"] != "null")


@pytest.fixture(params=[8, 16], ids=["8 channels", "16 channels"])
def block(request, monkeypatch):
    """The pass made to choose this layout, whatever this CPU's oneDNN wants."""
    monkeypatch.setattr(inference_layout, "channel_block", lambda: request.param)
    return request.param


@needs_onednn
def test_the_pass_asks_oneDNN_which_layout_this_cpu_wants(cpu_flags):
    """oneDNN's convolutions run channels in blocks of 16 on AVX-512 machines and of 8 on
    AVX2 ones: the pass keeps the data so (oneDNN's answer, not an assumption)."""
    flags = cpu_flags
    expected = 16 if "avx512f" in flags else 8 if "avx2" in flags else None
    if expected is None:
        pytest.skip("a CPU with neither AVX-512 nor AVX2: oneDNN's choice is not known here")
    assert inference_layout.channel_block() == expected


def test_without_onednn_the_pass_does_not_apply():
    with mx.config.set(cpu_onednn=False):
        assert inference_layout.channel_block() == 0
        symbol = network()
        args, aux = values(symbol)
        assert CONV not in ops(bind(symbol, args, aux))


@needs_onednn
def test_the_rewrite_gives_the_plain_graphs_outputs(block, engine_name):
    symbol = network()
    args, aux = values(symbol)
    expected = bind(symbol, args, aux, passes=False).forward()[0].asnumpy()
    rewritten = bind(symbol, args, aux)
    np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5 * np.abs(expected).max())
    found = ops(rewritten)
    # the stem (3 channels) stays plain; the three convolutions after it form one chain,
    # entered once and left once (before the pooling)
    assert found[CONV] == 3 and found["_sg_mkldnn_conv"] == 1, found
    assert found[TO_BLOCKS] == 1 and found[FROM_BLOCKS] == 1, found
    blocks = {n["attrs"]["block"] for n in
              json.loads(rewritten.get_optimized_symbol().tojson())["nodes"]
              if n["op"] in (CONV, TO_BLOCKS, FROM_BLOCKS)}
    assert blocks == {str(block)}


@needs_onednn
def test_the_rewritten_graph_runs_on_numpy_kernels_too(block):
    symbol = network()
    args, aux = values(symbol)
    expected = bind(symbol, args, aux, passes=False).forward()[0].asnumpy()
    rewritten = bind(symbol, args, aux)
    assert CONV in ops(rewritten)
    with mx.config.set(cpu_onednn=False):
        got = rewritten.forward()[0].asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


@needs_onednn
def test_parameters_written_after_the_bind_are_seen(block):
    symbol = network()
    args, aux = values(symbol)
    plain, rewritten = bind(symbol, args, aux, passes=False), bind(symbol, args, aux)
    for _ in range(2):  # the second run replays the first (see fused_conv.replayed)
        rewritten.forward()
    for executor in (plain, rewritten):
        executor.arg_dict["pw_weight"][:] *= -2.0
        executor.aux_dict["dw_bn_moving_var"][:] += 1.0
    expected = plain.forward()[0].asnumpy()
    np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5 * np.abs(expected).max())


@needs_onednn
def test_training_graphs_and_the_passes_switched_off_are_left_alone(block):
    symbol = network()
    assert CONV not in ops(symbol.simple_bind(mx.cpu(), data=SHAPE))
    args, aux = values(symbol)
    with mx.config.set(disabled_graph_passes="inference_layout"):
        assert CONV not in ops(bind(symbol, args, aux))


@needs_onednn
def test_a_lone_convolution_keeps_its_own_kernel(block):
    """Changing the layout in and out for one layer would cost more than it saves."""
    x = mx.sym.Convolution(mx.sym.Variable("data"), num_filter=16, kernel=(3, 3), pad=(1, 1),
                           name="c")
    x = mx.sym.Pooling(mx.sym.Activation(x, act_type="relu"), kernel=(2, 2), stride=(2, 2),
                       pool_type="max")
    executor = x.simple_bind(mx.cpu(), data=(1, 16, 8, 8), grad_req="null")
    assert CONV not in ops(executor)


@needs_onednn
def test_a_hybridized_block_called_for_prediction_runs_on_blocks(block):
    from dagnet.gluon import nn

    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, padding=1, in_channels=16), nn.BatchNorm(in_channels=16),
            nn.Activation("relu"), nn.Conv2D(16, 3, padding=1, groups=16, in_channels=16),
            nn.GlobalAvgPool2D())
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(1).normal(size=(2, 16, 6, 6)))
    expected = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-4, atol=1e-5)


@needs_onednn
@pytest.mark.parametrize("kept", ["on the blocks", "oneDNN's choice"])
def test_either_kernel_of_a_blocked_convolution_gives_the_plain_graphs_outputs(kept, block,
                                                                               monkeypatch):
    """An ungrouped 3x3 layer on blocks keeps the faster of oneDNN's kernel on the blocks
    and the one it picks when left to choose (reordered from and to the blocks): each,
    made the faster, computes the same."""
    from dagnet_ops.nn._onednn import _convolution

    def seconds(kernel, problem, threads):
        reorders = bool(kernel._reorders.keys() - {"weights"})
        return 0.0 if reorders == (kept == "oneDNN's choice") else 1.0

    monkeypatch.setattr(_convolution, "_seconds", seconds)
    monkeypatch.setattr(_convolution, "_cache", _convolution.KernelCache(8, "convolution"))
    x = mx.sym.Variable("data")
    for name in ("a", "b"):
        x = mx.sym.Convolution(x, num_filter=16, kernel=(3, 3), pad=(1, 1), name=name)
        x = mx.sym.Activation(x, act_type="relu", name=f"{name}_relu")
    args = {"data": mx.nd.array(np.random.RandomState(2).normal(size=(2, 16, 7, 7)))}
    rs = np.random.RandomState(3)
    for name, shape in zip(x.list_arguments()[1:], x.infer_shape(data=(2, 16, 7, 7))[0][1:]):
        args[name] = mx.nd.array(rs.normal(0, 0.3, shape))
    expected = bind(x, args, {}, passes=False).forward()[0].asnumpy()
    rewritten = bind(x, args, {})
    assert ops(rewritten)[CONV] == 2
    np.testing.assert_allclose(rewritten.forward()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5 * np.abs(expected).max())
