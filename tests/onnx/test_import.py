"""ONNX import (mx.contrib.onnx.import_model / get_model_metadata, dagnet.onnx): models
that dagnet, Apache MXNet and other frameworks export run in dagnet as they run in ONNX
Runtime; bad files and unsupported content are reported clearly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dagnet as mx

DATA = Path(__file__).parent / "data"


def _forward(sym, arg_params, aux_params, **inputs):
    args = {name: mx.nd.array(value) for name, value in inputs.items()}
    args.update(arg_params)
    return [o.asnumpy() for o in sym.bind(mx.cpu(), args, aux_states=aux_params).forward()]


def test_a_model_exported_by_mxnet(run_onnx):
    path = DATA / "mxnet_convnet.onnx"
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    sym, arg_params, aux_params = mx.contrib.onnx.import_model(str(path))
    assert sym.list_inputs()[0] == "data"
    assert set(aux_params) == {"batchnorm0_running_mean", "batchnorm0_running_var"}
    assert "conv0_weight" in arg_params and "dense0_bias" in arg_params
    expected = run_onnx(path, x)[0]
    np.testing.assert_allclose(_forward(sym, arg_params, aux_params, data=x)[0], expected,
                               rtol=1e-4, atol=1e-6)


def test_metadata_of_a_model(onnx):
    metadata = mx.contrib.onnx.get_model_metadata(str(DATA / "mxnet_convnet.onnx"))
    assert metadata["input_tensor_data"] == [("data", (1, 3, 8, 8), onnx.TensorProto.FLOAT)]
    assert metadata["output_tensor_data"] == [("dense0_fwd", (1, 5))]


def _model(onnx, nodes, inputs, outputs, initializers=(), opset=13):
    graph = onnx.helper.make_graph(nodes, "other_framework", inputs, outputs,
                                   initializer=list(initializers))
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)],
                                   producer_name="another framework")
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


def _tensor(onnx, name, array):
    return onnx.numpy_helper.from_array(np.asarray(array), name)


@pytest.mark.parametrize("opset", [11, 13])
def test_a_graph_in_another_frameworks_style(opset, onnx, run_onnx):
    """Shape arithmetic for the flatten before the classifier (Shape, Gather, Unsqueeze,
    Concat, Reshape), asymmetric padding, a transposed-B MatMul and softmax."""
    h = onnx.helper
    rng = np.random.default_rng(1)
    weight = rng.uniform(-1, 1, (4, 2, 3, 3)).astype(np.float32)
    dense = rng.uniform(-1, 1, (4 * 3 * 3, 5)).astype(np.float32)
    axes = {"axes": [0]} if opset < 13 else {}
    axes_input = [] if opset < 13 else ["zero_axis"]
    nodes = [
        h.make_node("Conv", ["input", "w"], ["conv"], pads=[0, 1, 1, 0], strides=[2, 2]),
        h.make_node("Relu", ["conv"], ["act"]),
        h.make_node("Shape", ["act"], ["shape"]),
        h.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        h.make_node("Unsqueeze", ["batch", *axes_input], ["batch_1d"], **axes),
        h.make_node("Concat", ["batch_1d", "minus_one"], ["flat_shape"], axis=0),
        h.make_node("Reshape", ["act", "flat_shape"], ["flat"]),
        h.make_node("MatMul", ["flat", "dense"], ["logits"]),
        h.make_node("Constant", [], ["shift"], value=h.make_tensor("v", 1, [], [0.25])),
        h.make_node("Add", ["logits", "shift"], ["shifted"]),
        h.make_node("Softmax", ["shifted"], ["probabilities"], axis=1),
    ]
    initializers = [_tensor(onnx, "w", weight), _tensor(onnx, "dense", dense),
                    _tensor(onnx, "zero", np.array(0, np.int64)),
                    _tensor(onnx, "minus_one", np.array([-1], np.int64))]
    if opset >= 13:
        initializers.append(_tensor(onnx, "zero_axis", np.array([0], np.int64)))
    model = _model(onnx, nodes, [h.make_tensor_value_info("input", 1, [2, 2, 6, 6])],
                   [h.make_tensor_value_info("probabilities", 1, [2, 5])], initializers, opset)
    x = rng.uniform(-1, 1, (2, 2, 6, 6)).astype(np.float32)
    sym, arg_params, aux_params = mx.onnx.import_model(model)
    np.testing.assert_allclose(_forward(sym, arg_params, aux_params, input=x)[0],
                               run_onnx(model, x)[0], rtol=1e-5, atol=1e-6)


def test_an_lstm_in_onnx_layout(onnx, run_onnx):
    """An ONNX LSTM (i, o, f, c gates) runs as dagnet's fused RNN."""
    h = onnx.helper
    rng = np.random.default_rng(2)
    hidden, features = 3, 2
    w = rng.uniform(-1, 1, (2, 4 * hidden, features)).astype(np.float32)
    r = rng.uniform(-1, 1, (2, 4 * hidden, hidden)).astype(np.float32)
    b = rng.uniform(-1, 1, (2, 8 * hidden)).astype(np.float32)
    node = h.make_node("LSTM", ["x", "w", "r", "b"], ["y", "y_h", "y_c"], hidden_size=hidden,
                       direction="bidirectional")
    model = _model(onnx, [node], [h.make_tensor_value_info("x", 1, [5, 4, features])],
                   [h.make_tensor_value_info("y", 1, [5, 2, 4, hidden]),
                    h.make_tensor_value_info("y_h", 1, [2, 4, hidden]),
                    h.make_tensor_value_info("y_c", 1, [2, 4, hidden])],
                   [_tensor(onnx, "w", w), _tensor(onnx, "r", r), _tensor(onnx, "b", b)])
    x = rng.uniform(-1, 1, (5, 4, features)).astype(np.float32)
    sym, arg_params, aux_params = mx.onnx.import_model(model)
    for got, want in zip(_forward(sym, arg_params, aux_params, x=x), run_onnx(model, x)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_opset_11_softmax_flattens_from_the_axis(onnx, run_onnx):
    h = onnx.helper
    node = h.make_node("Softmax", ["x"], ["y"], axis=1)
    model = _model(onnx, [node], [h.make_tensor_value_info("x", 1, [2, 3, 4])],
                   [h.make_tensor_value_info("y", 1, [2, 3, 4])], opset=11)
    x = np.random.default_rng(3).uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    sym, arg_params, aux_params = mx.onnx.import_model(model)
    np.testing.assert_allclose(_forward(sym, arg_params, aux_params, x=x)[0],
                               run_onnx(model, x)[0], rtol=1e-5, atol=1e-6)


# errors --------------------------------------------------------------------------------
def _saved(tmp_path, onnx, model, name="m.onnx") -> Path:
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return path


def _small_model(onnx, opset=13, op="Relu", domain=None):
    h = onnx.helper
    node = h.make_node(op, ["x"], ["y"], name="the_node", domain=domain)
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", 1, [2])],
                         [h.make_tensor_value_info("y", 1, [2])])
    imports = [h.make_opsetid("", opset)] + ([h.make_opsetid(domain, 1)] if domain else [])
    model = h.make_model(graph, opset_imports=imports)
    model.ir_version = 7
    return model


def test_corrupt_file(tmp_path, onnx):
    path = tmp_path / "corrupt.onnx"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(mx.onnx.OnnxModelError, match="corrupt or truncated") as caught:
        mx.onnx.import_model(str(path))
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, mx.DagnetError)


def test_truncated_file(tmp_path, onnx):
    whole = (DATA / "mxnet_convnet.onnx").read_bytes()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(mx.onnx.OnnxModelError, match="truncated"):
        mx.contrib.onnx.import_model(str(path))


@pytest.mark.parametrize("content", [b"", None])
def test_empty_or_missing_file(content, tmp_path, onnx):
    path = tmp_path / "model.onnx"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(mx.onnx.OnnxModelError, match="empty|does not exist"):
        mx.onnx.import_model(str(path))


@pytest.mark.parametrize("opset", [6, 22])
def test_opset_out_of_range(opset, tmp_path, onnx):
    path = _saved(tmp_path, onnx, _small_model(onnx, opset))
    with pytest.raises(mx.onnx.OnnxOpsetError, match=f"opset {opset} is out of range"):
        mx.onnx.import_model(str(path))


def test_unsupported_operator_names_the_operator_and_the_node(tmp_path, onnx):
    path = _saved(tmp_path, onnx, _small_model(onnx, op="Hardmax"))
    with pytest.raises(mx.onnx.UnsupportedOperatorError, match="'Hardmax'.*'the_node'") as e:
        mx.onnx.import_model(str(path))
    assert e.value.operator == "Hardmax" and e.value.node == "the_node"


def test_custom_domain_is_named(onnx):
    model = _small_model(onnx, op="Fancy", domain="com.example")
    with pytest.raises(mx.onnx.UnsupportedOperatorError, match="com.example"):
        mx.onnx.import_model(model)
