"""mx.onnx.export_model: MXNet 1.9.1's signature and defaults, symbols and parameters as
files or objects, Gluon blocks through their exported files, dynamic shapes, the opsets,
and a clear error for each kind of bad input."""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import nn


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.zeros((1, 5)))  # the layers' input sizes are known after a first batch
    return net


def test_signature_and_defaults_are_mxnets():
    signature = inspect.signature(mx.onnx.export_model)
    expected = [("sym", inspect.Parameter.empty), ("params", inspect.Parameter.empty),
                ("in_shapes", None), ("in_types", np.float32), ("onnx_file_path", "model.onnx"),
                ("verbose", False), ("dynamic", False), ("dynamic_input_shapes", None),
                ("run_shape_inference", False), ("input_type", None), ("input_shape", None)]
    assert [(p.name, p.default) for p in list(signature.parameters.values())[:11]] == expected
    assert mx.contrib.onnx.export_model is mx.onnx.export_model


def test_files_of_a_hybridized_block_export_and_run(tmp_path, onnx, run_onnx):
    net = _mlp()
    x = mx.nd.random.uniform(shape=(2, 5))
    expected = net(x).asnumpy()
    net.export(str(tmp_path / "mlp"), epoch=3)
    path = mx.onnx.export_model(str(tmp_path / "mlp-symbol.json"),
                                str(tmp_path / "mlp-0003.params"), [(2, 5)], [np.float32],
                                str(tmp_path / "mlp.onnx"))
    assert path == str(tmp_path / "mlp.onnx")
    model = onnx.load(path)
    assert model.producer_name == "dagnet"
    assert [i.name for i in model.graph.input] == ["data"]
    np.testing.assert_allclose(run_onnx(path, x.asnumpy())[0], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", ["dict", "list", "prefixed"])
def test_symbol_and_params_objects(form, tmp_path, run_onnx):
    net = _mlp()
    x = mx.nd.random.uniform(shape=(1, 5))
    expected = net(x).asnumpy()
    sym = net(mx.sym.var("data"))
    params = {name: p.data() for name, p in net.collect_params().items()}
    if form == "list":
        params = [params, {}]
    elif form == "prefixed":  # as mx.nd.load gives a checkpoint's parameters
        params = {f"arg:{name}": value for name, value in params.items()}
    path = mx.onnx.export_model(sym, params, input_shape=[(1, 5)], input_type=np.float32,
                                onnx_file_path=str(tmp_path / "m.onnx"))
    np.testing.assert_allclose(run_onnx(path, x.asnumpy())[0], expected, rtol=1e-5, atol=1e-6)


def test_label_input_of_a_loss_may_be_left_out(onnx):
    data = mx.sym.var("data")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"),
                               name="softmax")
    params = {"fc_weight": mx.nd.ones((3, 4)), "fc_bias": mx.nd.zeros((3,))}
    model = mx.onnx.export_to_proto(out, params, [(2, 4)])
    assert [i.name for i in model.graph.input] == ["data"]


@pytest.mark.parametrize("opset", [12, 13])
def test_opsets_12_and_13(opset, onnx):
    model = mx.onnx.export_to_proto(mx.sym.softmax(mx.sym.var("x"), axis=0), {}, [(2, 3)],
                                    opset_version=opset)
    assert model.opset_import[0].version == opset
    onnx.checker.check_model(model, full_check=True)


def test_default_opset_is_13(onnx):
    assert mx.onnx.default_export_opset() == 13
    model = mx.onnx.export_to_proto(mx.sym.relu(mx.sym.var("x")), {}, [(2,)])
    assert model.opset_import[0].version == 13


def test_dynamic_batch_and_dynamic_input_shapes(run_onnx, onnx):
    net = _mlp()
    sym = net(mx.sym.var("data"))
    params = {name: p.data() for name, p in net.collect_params().items()}
    model = mx.onnx.export_to_proto(sym, params, [(1, 5)], dynamic=True,
                                    dynamic_input_shapes=[(None, 5)])
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert not dims[0].HasField("dim_value") and dims[1].dim_value == 5
    for batch in (1, 4):
        x = mx.nd.random.uniform(shape=(batch, 5))
        np.testing.assert_allclose(run_onnx(model, x.asnumpy())[0], net(x).asnumpy(),
                                   rtol=1e-5, atol=1e-6)


def test_run_shape_inference_stores_value_shapes(tmp_path, onnx):
    x = mx.sym.var("x")
    path = mx.onnx.export_model(mx.sym.relu(x) * 2, {}, [(2, 3)],
                                onnx_file_path=str(tmp_path / "m.onnx"),
                                run_shape_inference=True)
    assert len(onnx.load(path).graph.value_info) >= 1


def test_operator_support_lists_what_mxnet_translates():
    supported = set(mx.onnx.get_operator_support())
    assert {"Convolution", "BatchNorm", "FullyConnected", "Pooling", "RNN", "_contrib_box_nms",
            "_contrib_ROIAlign", "_contrib_box_decode", "topk", "Reshape"} <= supported
    assert set(mx.onnx.get_operator_support(12)) <= supported


def test_reshape_with_dynamic_batch_reads_the_shape(run_onnx):
    sym = mx.sym.reshape(mx.sym.var("x"), shape=(0, -3, -4, 2, -1))
    model = mx.onnx.export_to_proto(sym, {}, [(1, 2, 3, 4)], dynamic=True,
                                    dynamic_input_shapes=[(None, 2, 3, 4)])
    x = np.arange(3 * 24, dtype=np.float32).reshape(3, 2, 3, 4)
    out = run_onnx(model, x)[0]
    np.testing.assert_array_equal(out, x.reshape(3, 6, 2, 2))


# errors --------------------------------------------------------------------------------
def test_unsupported_operator_names_the_operator_and_the_node(onnx):
    sym = mx.sym.linalg.potrf(mx.sym.var("x"), name="cholesky")
    with pytest.raises(mx.onnx.UnsupportedOperatorError) as caught:
        mx.onnx.export_to_proto(sym, {}, [(3, 3)])
    assert "'_linalg_potrf'" in str(caught.value) and "'cholesky'" in str(caught.value)
    assert caught.value.operator == "_linalg_potrf" and caught.value.node == "cholesky"
    assert isinstance(caught.value, mx.DagnetError) and isinstance(caught.value,
                                                                   NotImplementedError)


@pytest.mark.parametrize("opset", [11, 14, 7])
def test_opset_out_of_range(opset, onnx):
    with pytest.raises(mx.onnx.OnnxOpsetError, match="opsets 12 to 13"):
        mx.onnx.export_to_proto(mx.sym.relu(mx.sym.var("x")), {}, [(2,)], opset_version=opset)


def test_shapes_that_do_not_fit_the_symbol(onnx):
    net = _mlp()
    sym = net(mx.sym.var("data"))
    params = {name: p.data() for name, p in net.collect_params().items()}
    with pytest.raises(mx.onnx.OnnxShapeError, match="do not fit the symbol") as caught:
        mx.onnx.export_to_proto(sym, params, [(2, 7)])  # the weights take 5 features
    assert isinstance(caught.value, mx.ShapeError) and isinstance(caught.value, ValueError)
    with pytest.raises(mx.onnx.OnnxShapeError, match="one shape per input"):
        mx.onnx.export_to_proto(sym, params, [(2, 5), (3,)])
    with pytest.raises(mx.onnx.OnnxShapeError, match="in_shapes is required"):
        mx.onnx.export_to_proto(sym, params, None)
    with pytest.raises(mx.onnx.OnnxShapeError, match="dynamic=True"):
        mx.onnx.export_to_proto(sym, params, [(2, 5)], dynamic_input_shapes=[(None, 5)])


def test_missing_files_are_named(tmp_path, onnx):
    with pytest.raises(mx.onnx.OnnxExportError, match="does not exist"):
        mx.onnx.export_model(str(tmp_path / "none-symbol.json"), {}, [(1,)])


def test_untranslatable_attribute_names_the_node(onnx):
    sym = mx.sym.Convolution(mx.sym.var("x"), mx.sym.var("w"), kernel=(1, 1), num_filter=2,
                             no_bias=True, layout="NHWC", name="conv_nhwc")
    with pytest.raises(mx.onnx.OnnxExportError, match="'conv_nhwc'"):
        mx.onnx.export_to_proto(sym, {}, [(1, 3, 3, 2), (2, 1, 1, 2)])


def test_missing_onnx_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    with pytest.raises(mx.onnx.OnnxDependencyError, match=r'pip install "dagnet\[onnx\]"') as e:
        mx.onnx.export_model(mx.sym.var("x"), {}, [(1,)])
    assert isinstance(e.value, ImportError) and isinstance(e.value, mx.DagnetError)
