"""MXNet 1.9.1's ``mx.contrib.onnx``: ONNX models imported as a symbol with its
parameters (``import_model``), as a Gluon ``SymbolBlock`` (``import_to_gluon``), their
inputs and outputs (``get_model_metadata``), and the older path of
``mx.onnx.export_model``.  The translation itself is :mod:`dagnet.onnx`'s."""

from __future__ import annotations

from typing import Any

from ...onnx import export_model, get_model_metadata, import_model, load_onnx_model

__all__ = ["export_model", "get_model_metadata", "import_model", "import_to_gluon"]


def import_to_gluon(model_file: Any, ctx: Any = None) -> Any:
    """An ONNX model as a Gluon ``SymbolBlock`` whose inputs are the model's inputs (in
    order) and whose parameters hold the model's initializers, on ``ctx`` (a context or a
    list of them; default the current one)."""
    from ... import symbol
    from ...gluon import SymbolBlock

    proto = load_onnx_model(model_file)
    sym, arg_params, aux_params = import_model(proto)
    names = [name for name, *_ in get_model_metadata(proto)["input_tensor_data"]]
    block = SymbolBlock(outputs=sym, inputs=[symbol.var(name) for name in names])
    block.collect_params().load_dict({**arg_params, **aux_params}, ctx=ctx,
                                     allow_missing=False, ignore_extra=True)
    return block
