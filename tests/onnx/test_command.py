"""``dagnet onnx export`` and ``dagnet onnx import``: a checkpoint to ONNX and back,
with a progress bar over the operators of a large graph."""

from __future__ import annotations

import numpy as np

import dagnet as mx
from dagnet.cli import main
from dagnet.gluon import nn


def _saved_mlp(prefix: str):
    net = nn.HybridSequential()
    net.add(nn.Dense(6, activation="relu"), nn.Dense(2))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(3, 4))
    expected = net(x).asnumpy()
    net.export(prefix, epoch=2)
    return x, expected


def test_export_then_import(tmp_path, capsys, run_onnx):
    prefix = str(tmp_path / "mlp")
    x, expected = _saved_mlp(prefix)
    assert main(["onnx", "export", prefix, "2", "--input-shape", "1,4", "--dynamic-batch",
                 "--opset", "12"]) == 0
    assert "mlp.onnx (ONNX opset 12)" in capsys.readouterr().out
    np.testing.assert_allclose(run_onnx(f"{prefix}.onnx", x.asnumpy())[0], expected,
                               rtol=1e-5, atol=1e-6)

    back = str(tmp_path / "back")
    assert main(["onnx", "import", f"{prefix}.onnx", back, "--epoch", "5"]) == 0
    assert "inputs: data" in capsys.readouterr().out
    sym, arg_params, aux_params = mx.model.load_checkpoint(back, 5)
    out = sym.bind(mx.cpu(), {"data": x, **arg_params}, aux_states=aux_params).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_progress_bar_over_the_operators_of_a_large_graph(tmp_path, capsys, onnx):
    x = mx.sym.var("data")
    out = x
    for _ in range(120):
        out = mx.sym.relu(out) * 1.0
    prefix = str(tmp_path / "deep")
    out.save(f"{prefix}-symbol.json")
    mx.nd.save(f"{prefix}-0000.params", {})
    assert main(["onnx", "export", prefix, "0", "--input-shape", "2,3"]) == 0
    assert "exporting" in capsys.readouterr().err
    assert main(["onnx", "export", prefix, "0", "--input-shape", "2,3", "--no-progress"]) == 0
    assert "exporting" not in capsys.readouterr().err


def test_errors_are_reported_with_status_2(tmp_path, capsys, onnx):
    assert main(["onnx", "export", str(tmp_path / "none"), "0", "--input-shape", "1,4"]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage" * 10)
    assert main(["onnx", "import", str(bad), str(tmp_path / "out")]) == 2
    assert "dagnet onnx import: error:" in capsys.readouterr().err
