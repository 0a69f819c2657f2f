"""``import_model``: an ONNX model read back as a dagnet symbol with its parameters.

The model is loaded (a corrupt or truncated file is reported as such), checked, its
shapes inferred by ONNX, and its nodes translated in order by the import records
(:mod:`dagnet.onnx.from_onnx`).  Values known while importing (initializers,
Constant nodes, shapes of fixed-size tensors and what is computed from them) stay
numpy arrays, so shape arithmetic folds away; an array a symbol reads becomes a
parameter named after the ONNX value.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import ndarray as nd
from .. import symbol as sym_module
from .._errors import DagnetError
from ._deps import require_onnx
from ._errors import OnnxError, OnnxImportError, OnnxModelError, UnsupportedOperatorError
from .from_onnx import IMPORTS, ImportNode, SymbolGraph

__all__ = ["get_model_metadata", "import_model", "import_to_symbol", "load_onnx_model"]

_log = logging.getLogger(__name__)

Progress = Callable[[Iterable[Any]], Iterable[Any]]


def load_onnx_model(model: Any) -> Any:
    """The ``ModelProto`` of a file path (or the model itself), checked by ONNX's checker.

    A file that cannot be parsed (corrupt, truncated, not ONNX) raises
    :class:`OnnxModelError` saying so."""
    return _load(model)[0]


def _load(model: Any) -> tuple[Any, bytes]:
    """The checked model and its serialized bytes (read or serialized once)."""
    onnx = require_onnx()
    if isinstance(model, onnx.ModelProto):
        proto, data = model, model.SerializeToString()
    elif isinstance(model, str | os.PathLike):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise OnnxModelError(f"ONNX model file {path!r} does not exist")
        with open(path, "rb") as handle:
            data = handle.read()
        if not data:
            raise OnnxModelError(f"ONNX model file {path!r} is empty")
        proto = onnx.ModelProto()
        try:
            proto.ParseFromString(data)
        except Exception as error:  # protobuf's DecodeError
            raise OnnxModelError(
                f"{path!r} is not a readable ONNX model ({len(data)} bytes): {error}; the file "
                f"is corrupt or truncated, or not ONNX at all: export it again") from None
        if not proto.graph.node and not proto.graph.output:
            raise OnnxModelError(f"{path!r} holds no ONNX graph (no nodes, no outputs): the "
                                 f"file is truncated or not an ONNX model")
    else:
        raise OnnxModelError(f"expected an ONNX file path or ModelProto, not "
                             f"{type(model).__name__}")
    try:
        onnx.checker.check_model(data)
    except Exception as error:  # onnx's ValidationError
        raise OnnxModelError(f"the ONNX model fails ONNX's checker: {error}") from None
    return proto, data


def _model_opset(proto: Any) -> int:
    versions = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
    if not versions:
        raise OnnxModelError("the model imports no version of the default ONNX operator set")
    return max(versions)


def _decode_attribute(onnx: Any, attribute: Any) -> Any:
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode("utf-8") for v in value]
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    return value


def _value_types(onnx: Any, proto: Any, data: bytes) -> dict[str, tuple[Any, Any]]:
    """name -> (shape with None for unknown dims, numpy dtype) for every value whose type
    ONNX's shape inference (or the model) states."""
    try:
        # data propagation follows shape arithmetic (Shape, Gather, Concat) into Reshape
        inferred = onnx.shape_inference.infer_shapes(data, data_prop=True)
    except Exception as error:  # noqa: BLE001 - import without inferred shapes
        _log.info("ONNX shape inference failed (%s); importing without it", error)
        inferred = proto
    found: dict[str, tuple[Any, Any]] = {}
    graph = inferred.graph
    for info in [*graph.input, *graph.value_info, *graph.output]:
        tensor = info.type.tensor_type
        if not info.type.HasField("tensor_type"):
            continue
        shape = None
        if tensor.HasField("shape"):
            shape = tuple(d.dim_value if d.HasField("dim_value") else None
                          for d in tensor.shape.dim)
        dtype = None
        if tensor.elem_type:
            dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
        found[info.name] = (shape, dtype)
    return found


def import_to_symbol(model: Any, *, progress: Progress | None = None
                     ) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """``(symbol, arg_params, aux_params)`` of an ONNX model (path or ``ModelProto``);
    ``progress`` wraps the loop over the nodes (``tqdm.tqdm`` shows a bar)."""
    onnx = require_onnx()
    proto, data = _load(model)
    opset = _model_opset(proto)
    IMPORTS.check_opset(opset)
    graph = proto.graph
    types = _value_types(onnx, proto, data)
    del data
    built = SymbolGraph()
    values: dict[str, Any] = {}
    for tensor in graph.initializer:
        values[tensor.name] = onnx.numpy_helper.to_array(tensor)
    for graph_input in graph.input:
        if graph_input.name not in values:
            values[graph_input.name] = built.input(graph_input.name,
                                                   types.get(graph_input.name, (None, None))[0])

    nodes = list(graph.node)
    for node in (progress(nodes) if progress is not None else nodes):
        _import_node(onnx, node, opset, values, types, built)

    outputs = []
    for graph_output in graph.output:
        value = values.get(graph_output.name)
        if value is None:
            raise OnnxImportError(f"graph output {graph_output.name!r} is produced by no node")
        if isinstance(value, np.ndarray):  # a constant output: hold it as a parameter
            value = built.parameter(graph_output.name, value)
        outputs.append(value)
    symbol = outputs[0] if len(outputs) == 1 else sym_module.Group(outputs)
    arguments = set(symbol.list_arguments())
    auxiliary = set(symbol.list_auxiliary_states())
    arg_params = {k: nd.array(v, dtype=v.dtype) for k, v in built.params.items()
                  if k in arguments}
    aux_params = {k: nd.array(v, dtype=v.dtype) for k, v in built.params.items()
                  if k in auxiliary}
    return symbol, arg_params, aux_params


def _import_node(onnx: Any, node: Any, opset: int, values: dict[str, Any],
                 types: dict[str, tuple[Any, Any]], built: SymbolGraph) -> None:
    if node.domain not in ("", "ai.onnx"):
        raise UnsupportedOperatorError(
            f"operator {node.domain}.{node.op_type} of node {node.name!r} is from the custom "
            f"domain {node.domain!r}; dagnet imports the default ONNX operator set",
            operator=node.op_type, node=node.name, opset=opset)
    record = IMPORTS.lookup(node.op_type, opset)
    if record is None:
        supported = IMPORTS.names(opset)
        raise UnsupportedOperatorError(
            f"ONNX operator {node.op_type!r} of node {node.name!r} has no dagnet translation "
            f"(opset {opset}); dagnet imports {len(supported)} ONNX operators: "
            f"{', '.join(supported)}", operator=node.op_type, node=node.name, opset=opset)
    for name in node.input:
        if name and name not in values:
            raise OnnxImportError(f"node {node.name!r} ({node.op_type}) reads {name!r}, which "
                                  f"no earlier node produces (the graph is not in topological "
                                  f"order, or the value is missing)")
    label = node.name or (node.output[0] if node.output else node.op_type)
    import_node = ImportNode(
        op_type=node.op_type, name=label,
        attrs={a.name: _decode_attribute(onnx, a) for a in node.attribute},
        values=[values[name] if name else None for name in node.input],
        value_names=list(node.input),
        shapes=[types.get(name, (None, None))[0] for name in node.input],
        dtypes=[types.get(name, (None, None))[1] for name in node.input],
        outputs=list(node.output),
        out_shapes=[types.get(name, (None, None))[0] for name in node.output],
        opset=opset, graph=built, sym_name=built.unique(label))
    try:
        result = record.convert(import_node)
    except OnnxError:
        raise
    except DagnetError as error:
        raise import_node.fail(str(error)) from error
    results = result if isinstance(result, list | tuple) else [result]
    if isinstance(result, sym_module.Symbol) and len(node.output) > 1:
        results = [result[i] for i in range(len(result.list_outputs()))]
    for name, value in zip(node.output, results):
        if name:
            # numpy reductions and indexing give scalars, not 0-D arrays
            values[name] = np.asarray(value) if isinstance(value, np.generic) else value


def import_model(model_file: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Import an ONNX model as ``(sym, arg_params, aux_params)``; MXNet 1.9.1's
    ``mx.contrib.onnx.import_model``.

    ``model_file`` is the path of an ``.onnx`` file (or a loaded ``ModelProto``).  The
    parameters are NDArrays keyed by the ONNX initializer names; the symbol's inputs
    that are not parameters are the model's inputs."""
    return import_to_symbol(model_file)


def get_model_metadata(model_file: Any) -> dict[str, list[tuple]]:
    """The names and shapes of an ONNX model's inputs and outputs (MXNet 1.9.1's
    ``get_model_metadata``): ``{'input_tensor_data': [(name, shape, elem_type)],
    'output_tensor_data': [(name, shape)]}``; a variable dimension reads 0."""
    proto = load_onnx_model(model_file)
    graph = proto.graph
    parameters = {tensor.name for tensor in graph.initializer}

    def dims(info: Any) -> tuple[int, ...]:
        return tuple(d.dim_value for d in info.type.tensor_type.shape.dim)

    inputs = [(i.name, dims(i), i.type.tensor_type.elem_type) for i in graph.input
              if i.name not in parameters]
    outputs = [(o.name, dims(o)) for o in graph.output]
    return {"input_tensor_data": inputs, "output_tensor_data": outputs}
