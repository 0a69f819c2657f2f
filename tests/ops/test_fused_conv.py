"""_sg_mkldnn_conv, MXNet's fused convolution node (GluonCV's int8 models hold it):
quantized values as MXNet 1.9.1's CPU build gives them, the float fusion against the
layers it stands for, symbol files with subgraphs, and its errors.  Forward against the
numpy reference runs on every engine in test_conformance.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx
from dagnet_ops.nn.fused_conv import subgraph_json

# MXNet 1.9.1's case: uint8 data (small enough that MKL-DNN's 16-bit partial sums on
# processors without VNNI do not saturate, so its result is exact), folded batch norm
_DATA = np.array([42, 24, 57, 3, 56, 8, 0, 21, 19, 10, 43, 57, 41, 10, 21, 55, 38, 32, 20,
                  44, 29, 39, 14, 56, 26, 17, 26, 22, 2, 2, 60, 1], np.uint8).reshape(1, 2, 4, 4)
_WEIGHT = np.array([
    -0.81, 0.2, -0.81, -0.32, -0.28, 0.91, 0.08, -0.6, -0.35, 0.51, -0.27, -0.66, 0.33, 0.14,
    -0.19, 0.53, 0.13, -0.35, -1.01, 0.42, -0.24, -0.7, -0.87, -0.12, -0.18, -0.91, 0.13, 0.53,
    -0.49, -0.48, -0.71, -0.11, 0.03, -0.72, -0.02, -0.44, 0.7, -0.46, 0.42, 0.54, -0.49, 0.74,
    -0.6, 0.63, -0.91, 0.38, -0.35, -0.04, 0.37, -0.52, 0.65, 0.44, 1.23, -0.32],
    np.float32).reshape(3, 2, 3, 3)
_BN = [np.array(v, np.float32) for v in ([1.0, 0.5, 2.0], [0.0, 0.1, -0.1], [0.2, -0.1, 0.0],
                                         [1.0, 0.25, 4.0])]
_BIAS = np.array([0.1, -0.2, 0.3], np.float32)
_SUM = np.array([-8, 98, 39, 50, 65, -93, 45, 114, -76, -127, -110, 63],
                np.int8).reshape(1, 3, 2, 2)
_CONV = {"kernel": (3, 3), "num_filter": 3, "no_bias": False}
_BN_PARAMS = {"eps": 1e-3, "fix_gamma": False}
_RELU = ("Activation", {"act_type": "relu"})


def _graph(attrs, subgraphs, n_inputs, aux=(5, 6)):
    """A symbol file holding one _sg_mkldnn_conv node over n_inputs variables."""
    nodes = [{"op": "null", "name": f"in{i}", "inputs": []} for i in range(n_inputs)]
    nodes.append({"op": "_sg_mkldnn_conv", "name": "fused",
                  "attrs": {k: str(v) for k, v in attrs.items()},
                  "inputs": [[i, 0, int(i in aux)] for i in range(n_inputs)],
                  "subgraphs": json.loads(subgraphs)})
    outputs = 3 if attrs.get("quantized") == "true" else 1
    return json.dumps({"nodes": nodes, "arg_nodes": list(range(n_inputs)),
                       "heads": [[n_inputs, i, 0] for i in range(outputs)],
                       "attrs": {"mxnet_version": ["int", 10901]}})


def _run(text, inputs):
    sym = mx.sym.load_json(text)
    names = [f"in{i}" for i in range(len(inputs))]
    args = {n: mx.nd.array(v, dtype=v.dtype) for n, v in zip(names, inputs)
            if n in sym.list_arguments()}
    aux = {n: mx.nd.array(v, dtype=v.dtype) for n, v in zip(names, inputs)
           if n in sym.list_auxiliary_states()}
    return [o.asnumpy() for o in sym.bind(mx.cpu(), args, aux_states=aux).forward()]


def _range(lo, hi):
    return [np.array([lo], np.float32), np.array([hi], np.float32)]


def test_quantized_conv_bn_relu_matches_mxnet():
    text = _graph({"quantized": "true", "with_bn": "true", "with_act": "true",
                   "min_calib_range": 0.0, "max_calib_range": 6.0},
                  subgraph_json(_CONV, batch_norm=_BN_PARAMS, act=_RELU), 9)
    out, lo, hi = _run(text, [_DATA, _WEIGHT, _BIAS, *_BN, *_range(0.0, 2.0)])
    assert out.dtype == np.uint8  # non-negative after ReLU
    np.testing.assert_array_equal(out.ravel(), [0, 0, 0, 0, 0, 0, 0, 0, 25, 29, 20, 38])
    assert (lo[0], hi[0]) == (0.0, 6.0)


def test_quantized_sum_with_an_int8_operand_caps_a_uint8_output_at_127_as_mxnet():
    text = _graph({"quantized": "true", "with_bn": "true", "with_sum": "true",
                   "with_postsum_act": "true", "min_calib_range": 0.0, "max_calib_range": 1.0},
                  subgraph_json(_CONV, batch_norm=_BN_PARAMS, with_sum=True, postsum_act=_RELU),
                  12)
    out, _, _ = _run(text, [_DATA, _WEIGHT, _BIAS, *_BN, _SUM, *_range(0.0, 2.0),
                            *_range(-1.0, 1.0)])
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out.ravel(), [0, 74, 0, 24, 0, 0, 0, 11, 0, 0, 0, 127])


def test_old_relu_flag_names_load():
    # GluonCV's MXNet 1.5 files say with_relu / with_postsum_relu
    text = _graph({"quantized": "true", "with_bn": "true", "with_relu": "true",
                   "min_calib_range": 0.0, "max_calib_range": 6.0},
                  subgraph_json(_CONV, batch_norm=_BN_PARAMS, act=_RELU), 9)
    out, _, _ = _run(text, [_DATA, _WEIGHT, _BIAS, *_BN, *_range(0.0, 2.0)])
    np.testing.assert_array_equal(out.ravel()[8:], [25, 29, 20, 38])


def test_float_fusion_is_the_layers_it_stands_for():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 5, 5)).astype(np.float32)
    other = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    text = _graph({"with_bn": "true", "with_act": "true", "with_sum": "true",
                   "with_postsum_act": "true"},
                  subgraph_json(_CONV, batch_norm=_BN_PARAMS,
                                act=("LeakyReLU", {"act_type": "leaky", "slope": 0.1}),
                                with_sum=True, postsum_act=_RELU), 8)
    (got,) = _run(text, [x, _WEIGHT, _BIAS, *_BN, other])
    nd = mx.nd
    y = nd.Convolution(nd.array(x), nd.array(_WEIGHT), nd.array(_BIAS), kernel=(3, 3),
                       num_filter=3)
    y = nd.BatchNorm(y, *[nd.array(a) for a in _BN], eps=1e-3, fix_gamma=False,
                     use_global_stats=True)
    y = nd.relu(nd.LeakyReLU(y, act_type="leaky", slope=0.1) + nd.array(other))
    np.testing.assert_allclose(got, y.asnumpy(), rtol=1e-5, atol=1e-5)


def test_inputs_auxiliary_states_and_shapes():
    text = _graph({"quantized": "true", "with_bn": "true", "with_act": "true",
                   "min_calib_range": 0.0, "max_calib_range": 6.0},
                  subgraph_json(_CONV, batch_norm=_BN_PARAMS, act=_RELU), 9)
    sym = mx.sym.load_json(text)
    assert sym.list_auxiliary_states() == ["in5", "in6"]  # the batch norm's statistics
    assert sym.list_outputs() == ["fused_output", "fused_output_min", "fused_output_max"]
    args, outs, aux = sym.infer_shape(in0=(1, 2, 4, 4))
    assert args == [(1, 2, 4, 4), (3, 2, 3, 3), (3,), (3,), (3,), (1,), (1,)]
    assert outs == [(1, 3, 2, 2), (1,), (1,)] and aux == [(3,), (3,)]
    _, types, _ = sym.infer_type(in0=np.uint8)
    assert types == [np.uint8, np.float32, np.float32]


def test_symbol_files_keep_the_subgraphs():
    text = _graph({"quantized": "true", "with_bn": "true", "with_act": "true",
                   "min_calib_range": 0.0, "max_calib_range": 6.0},
                  subgraph_json(_CONV, batch_norm=_BN_PARAMS, act=_RELU), 9)
    written = json.loads(mx.sym.load_json(text).tojson())
    node = written["nodes"][-1]
    assert node["subgraphs"] == json.loads(text)["nodes"][-1]["subgraphs"]
    assert "subgraphs" not in node["attrs"]
    assert json.loads(mx.sym.load_json(json.dumps(written)).tojson()) == written


def test_a_gluon_symbol_block_imports_initializes_and_runs_it(tmp_path):
    # GluonCV's int8 models: SymbolBlock.imports, initialize, forward
    nodes = [{"op": "null", "name": "data", "inputs": []},
             {"op": "_contrib_quantize_v2", "name": "q", "attrs": {"out_type": "auto"},
              "inputs": [[0, 0, 0]]}]
    names = ["w", "gamma", "beta", "running_mean", "running_var"]
    nodes += [{"op": "null", "name": f"conv_{n}", "inputs": []} for n in names]
    nodes.append({"op": "_sg_mkldnn_conv", "name": "fused",
                  "attrs": {"quantized": "true", "with_bn": "true", "with_act": "true",
                            "min_calib_range": "0.0", "max_calib_range": "4.0"},
                  "inputs": [[1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 1],
                             [6, 0, 1], [1, 1, 0], [1, 2, 0]],
                  "subgraphs": json.loads(subgraph_json(
                      {"kernel": (3, 3), "num_filter": 4, "no_bias": True, "pad": (1, 1)},
                      batch_norm=_BN_PARAMS, act=_RELU))})
    nodes.append({"op": "_contrib_dequantize", "name": "dq",
                  "inputs": [[7, 0, 0], [7, 1, 0], [7, 2, 0]]})
    path = tmp_path / "net-symbol.json"
    path.write_text(json.dumps({"nodes": nodes, "arg_nodes": [0, 2, 3, 4, 5, 6],
                                "heads": [[8, 0, 0]],
                                "attrs": {"mxnet_version": ["int", 10901]}}))
    net = mx.gluon.SymbolBlock.imports(str(path), ["data"], None)
    net.initialize(mx.init.Uniform(0.5))
    net.collect_params("conv_running_var").initialize(mx.init.One(), force_reinit=True)
    out = net(mx.nd.random.uniform(-1, 1, shape=(2, 3, 6, 6)))
    assert out.shape == (2, 4, 6, 6) and out.dtype == np.float32
    assert (out.asnumpy() >= 0).all() and (out.asnumpy() <= 4.0).all()


def test_errors_name_the_problem():
    sub = subgraph_json(_CONV, batch_norm=_BN_PARAMS, act=_RELU)
    with pytest.raises(mx.base.MXNetError, match="with_bn=False but the subgraph has"):
        mx.sym.load_json(_graph({"with_act": "true"}, sub, 7)).infer_shape(in0=(1, 2, 4, 4))
    uncalibrated = _graph({"quantized": "true", "with_bn": "true", "with_act": "true"}, sub, 9)
    with pytest.raises(mx.base.MXNetError, match="needs min_calib_range and max_calib_range"):
        mx.sym.load_json(uncalibrated).infer_type(in0=np.uint8)
    with pytest.raises(mx.base.MXNetError, match="holds 'Pooling'"):
        bad = json.loads(sub)
        bad[0]["nodes"][2]["op"] = "Pooling"
        mx.sym.load_json(_graph({}, json.dumps(bad), 3, aux=())).infer_shape(in0=(1, 2, 4, 4))
    text = _graph({"quantized": "true", "with_bn": "true", "with_act": "true",
                   "min_calib_range": -1.0, "max_calib_range": 6.0}, sub, 9)
    with pytest.raises(mx.base.MXNetError, match="uint8 data cannot stand for a range below"):
        _run(text, [_DATA, _WEIGHT, _BIAS, *_BN, *_range(-1.0, 2.0)])
