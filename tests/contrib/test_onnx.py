"""mx.contrib.onnx: MXNet 1.9.1's import functions (import_model, import_to_gluon,
get_model_metadata) and its older path of export_model."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import nn

pytest.importorskip("onnx", reason='ONNX support needs the onnx extra: pip install '
                                   '"dagnet[onnx]"')


def _exported(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(3, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.GlobalAvgPool2D(), nn.Dense(4))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 2, 5, 5))
    expected = net(x).asnumpy()
    sym = net(mx.sym.var("data"))
    params = {name: p.data() for name, p in net.collect_params().items()}
    path = mx.contrib.onnx.export_model(sym, params, [(2, 2, 5, 5)], np.float32,
                                        str(tmp_path / "net.onnx"))
    return sym, path, x, expected


def test_import_to_gluon_gives_a_symbol_block(tmp_path):
    sym, path, x, expected = _exported(tmp_path)
    block = mx.contrib.onnx.import_to_gluon(path, ctx=mx.cpu())
    assert isinstance(block, mx.gluon.SymbolBlock)
    np.testing.assert_allclose(block(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    block.hybridize()
    np.testing.assert_allclose(block(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert block(mx.sym.var("data")).list_inputs() == sym.list_inputs()


def test_import_model_keeps_the_parameter_names(tmp_path):
    sym, path, x, expected = _exported(tmp_path)
    imported, arg_params, aux_params = mx.contrib.onnx.import_model(path)
    assert imported.list_inputs() == sym.list_inputs()
    assert set(aux_params) == set(sym.list_auxiliary_states())
    metadata = mx.contrib.onnx.get_model_metadata(path)
    assert [name for name, *_ in metadata["input_tensor_data"]] == ["data"]
    assert [shape for _, shape in metadata["output_tensor_data"]] == [(2, 4)]


def test_importing_the_onnx_modules_does_not_load_onnx():
    code = ("import sys, mxnet.onnx, mxnet.contrib.onnx, dagnet.onnx; "
            "print('onnx' in sys.modules, 'onnxruntime' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]
