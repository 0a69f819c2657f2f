"""``export_model``: a symbol and its parameters written as an ONNX model.

The symbol's JSON graph is read node by node in topological order; shape and
type inference over the symbol's internals give every value's shape and dtype
for the example input shapes; each node is handed to its translation record
(:mod:`dagnet.onnx.to_onnx`), which writes ONNX nodes.  The model is checked with
ONNX's checker (and strict shape inference) before it is saved.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .. import ndarray as nd
from .. import symbol as sym_module
from .._errors import DagnetError
from ..operator import get_op
from ._deps import require_onnx
from ._errors import OnnxError, OnnxExportError, OnnxShapeError, UnsupportedOperatorError
from .to_onnx import EXPORT_OPSETS, EXPORTS, ExportNode, OnnxBuilder

__all__ = ["export_model", "export_to_proto", "get_operator_support", "default_export_opset"]

_log = logging.getLogger(__name__)

Progress = Callable[[Iterable[Any]], Iterable[Any]]


def default_export_opset() -> int:
    """The opset an export writes by default: the highest dagnet translates that the
    installed ``onnx`` package knows (13 with any recent onnx)."""
    onnx = require_onnx()
    return min(EXPORT_OPSETS.stop - 1, onnx.defs.onnx_opset_version())


def get_operator_support(opset_version: int | None = None) -> list[str]:
    """The MXNet operators dagnet exports at ``opset_version`` (default: the highest), sorted."""
    if opset_version is not None:
        EXPORTS.check_opset(opset_version)
    return EXPORTS.names(opset_version)


# loading -------------------------------------------------------------------------------
def _load_symbol(sym: Any) -> Any:
    if isinstance(sym, sym_module.Symbol):
        return sym
    if isinstance(sym, str | os.PathLike):
        if not os.path.isfile(sym):
            raise OnnxExportError(f"symbol file {os.fspath(sym)!r} does not exist; pass the "
                                  f"-symbol.json file a model was saved with, or a Symbol")
        return sym_module.load(os.fspath(sym))
    raise OnnxExportError(f"sym must be a Symbol or the path of a -symbol.json file, not "
                          f"{type(sym).__name__}")


def _as_numpy(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def _load_params(params: Any) -> dict[str, np.ndarray]:
    if isinstance(params, str | os.PathLike):
        if not os.path.isfile(params):
            raise OnnxExportError(f"params file {os.fspath(params)!r} does not exist; pass the "
                                  f".params file a model was saved with, or a dict of arrays")
        params = nd.load(os.fspath(params))
        if isinstance(params, list) and not params:
            params = {}  # a model without parameters saves an empty list
        if not isinstance(params, dict):
            raise OnnxExportError("the params file holds a list of arrays without names; "
                                  "save parameters as a dict (mx.nd.save(path, {name: array}))")
    if isinstance(params, list | tuple):
        if len(params) != 2 or not all(isinstance(p, dict) for p in params):
            raise OnnxExportError("params given as a list must be [arg_params, aux_params]")
        merged: dict[str, Any] = {}
        merged.update(params[0])
        merged.update(params[1])
        params = merged
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise OnnxExportError(f"params must be a dict of arrays, [arg_params, aux_params] or the "
                              f"path of a .params file, not {type(params).__name__}")
    loaded = {}
    for key, value in params.items():
        name = key.split(":", 1)[1] if key.startswith(("arg:", "aux:")) else key
        loaded[name] = _as_numpy(value)
    return loaded


# inputs --------------------------------------------------------------------------------
def _graph_inputs(sym: Any, nodes: list[dict[str, Any]], params: dict[str, np.ndarray],
                  in_shapes: Sequence[Sequence[int]]) -> list[str]:
    """The symbol inputs the caller gives shapes for, in order (labels of a loss may be
    left out, as MXNet's exporter does)."""
    data = [name for name in sym.list_inputs() if name not in params]
    if len(in_shapes) == len(data):
        return data
    label = f"{nodes[-1]['name']}_label" if nodes else None
    if label in data and len(in_shapes) == len(data) - 1:
        return [name for name in data if name != label]
    raise OnnxShapeError(
        f"in_shapes gives {len(in_shapes)} shape(s) but the symbol has {len(data)} input(s) "
        f"that are not parameters: {data}; give one shape per input, in this order")


def _normalise_types(in_types: Any, count: int) -> list[np.dtype]:
    types = list(in_types) if isinstance(in_types, list | tuple) else [in_types] * count
    if len(types) != count:
        raise OnnxShapeError(f"in_types gives {len(types)} type(s) for {count} input(s); give "
                             f"one type per input or a single type for all")
    try:
        return [np.dtype(t) for t in types]
    except TypeError as error:
        raise OnnxShapeError(f"in_types {in_types!r} are not all numpy dtypes: {error}") from None


def _dynamic_shapes(static: list[tuple[int, ...]], dynamic: bool,
                    dynamic_input_shapes: Sequence[Sequence[int | None]] | None
                    ) -> list[list[int | str | None]]:
    if not dynamic:
        if dynamic_input_shapes is not None:
            raise OnnxShapeError("dynamic_input_shapes is given but dynamic=False; pass "
                                 "dynamic=True to export inputs with variable dimensions")
        return [list(shape) for shape in static]
    if dynamic_input_shapes is None:
        return [[None] * len(shape) for shape in static]
    if len(dynamic_input_shapes) != len(static):
        raise OnnxShapeError(f"dynamic_input_shapes gives {len(dynamic_input_shapes)} shape(s) "
                             f"for {len(static)} input(s)")
    shapes = []
    for example, variable in zip(static, dynamic_input_shapes):
        if len(example) != len(variable):
            raise OnnxShapeError(f"dynamic input shape {tuple(variable)} has {len(variable)} "
                                 f"dimensions but the example shape {example} has {len(example)}")
        shapes.append([None if d is None else int(d) for d in variable])
    return shapes


# inference -----------------------------------------------------------------------------
def _infer(sym: Any, nodes: list[dict[str, Any]], shapes: dict[str, tuple[int, ...]],
           dtypes: dict[str, np.dtype]
           ) -> tuple[list[list[Any]], list[list[Any]]]:
    """Per node, the shapes and dtypes of its visible outputs."""
    internals = sym.get_internals()
    try:
        _, out_shapes, _ = internals.infer_shape(**shapes)
    except DagnetError as error:
        given = ", ".join(f"{k}={v}" for k, v in shapes.items())
        raise OnnxShapeError(f"the input shapes do not fit the symbol ({given}): {error}"
                             ) from None
    if out_shapes is None:
        raise OnnxShapeError(f"the input shapes {shapes} do not determine every shape in the "
                             f"symbol; give complete shapes (no 0 dimensions)")
    try:
        _, out_types, _ = internals.infer_type(**dtypes)
    except DagnetError as error:
        raise OnnxShapeError(f"the input types do not fit the symbol: {error}") from None
    per_node_shapes: list[list[Any]] = []
    per_node_types: list[list[Any]] = []
    position = 0
    for node in nodes:
        count = 1 if node["op"] == "null" else _visible_outputs(node)
        per_node_shapes.append([tuple(s) for s in out_shapes[position:position + count]])
        per_node_types.append([np.dtype(t) if t is not None else None
                               for t in out_types[position:position + count]])
        position += count
    if position != len(out_shapes):
        raise OnnxExportError("the symbol's internals do not line up with its JSON graph "
                              f"({position} outputs counted, {len(out_shapes)} inferred)")
    return per_node_shapes, per_node_types


def _params_of(node: dict[str, Any]) -> Any:
    raw = {k: v for k, v in node.get("attrs", node.get("param", {})).items()
           if not k.startswith("__")}
    return get_op(node["op"]).parse_params(raw)


def _visible_outputs(node: dict[str, Any]) -> int:
    return get_op(node["op"]).n_visible_outputs(_params_of(node))


def _all_outputs(node: dict[str, Any]) -> int:
    return get_op(node["op"]).n_outputs(_params_of(node))


# the graph -----------------------------------------------------------------------------
def export_to_proto(sym: Any, params: Any, in_shapes: Sequence[Sequence[int]] | None,
                    in_types: Any = np.float32, *, opset_version: int | None = None,
                    dynamic: bool = False,
                    dynamic_input_shapes: Sequence[Sequence[int | None]] | None = None,
                    verbose: bool = False, progress: Progress | None = None) -> Any:
    """The ONNX ``ModelProto`` of ``sym`` with ``params`` (checked, not saved).

    Arguments as :func:`export_model`; ``progress`` wraps the loop over the nodes
    (``tqdm.tqdm`` shows a bar)."""
    return _export_checked(sym, params, in_shapes, in_types, opset_version=opset_version,
                           dynamic=dynamic, dynamic_input_shapes=dynamic_input_shapes,
                           progress=progress)[0]


def _export_checked(sym: Any, params: Any, in_shapes: Sequence[Sequence[int]] | None,
                    in_types: Any, *, opset_version: int | None, dynamic: bool,
                    dynamic_input_shapes: Sequence[Sequence[int | None]] | None,
                    progress: Progress | None) -> tuple[Any, bytes]:
    """The model and its serialized bytes (serialized once: large weights make that the
    slow part), checked by ONNX's checker with strict shape inference."""
    onnx = require_onnx()
    opset = default_export_opset() if opset_version is None else opset_version
    EXPORTS.check_opset(opset)
    if opset > onnx.defs.onnx_opset_version():
        raise OnnxExportError(f"the installed onnx {onnx.__version__} knows opsets up to "
                              f"{onnx.defs.onnx_opset_version()}, not {opset}")
    sym = _load_symbol(sym)
    weights = _load_params(params)
    if in_shapes is None:
        raise OnnxShapeError("in_shapes is required: one example shape per model input, "
                             "e.g. [(1, 3, 224, 224)]")
    graph = json.loads(sym.tojson())
    nodes = graph["nodes"]
    static_shapes = [tuple(int(d) for d in shape) for shape in in_shapes]
    input_names = _graph_inputs(sym, nodes, weights, static_shapes)
    types = _normalise_types(in_types, len(input_names))
    onnx_shapes = _dynamic_shapes(static_shapes, dynamic, dynamic_input_shapes)

    known_shapes = {name: shape for name, shape in zip(input_names, static_shapes)}
    known_types = dict(zip(input_names, types))
    used_inputs = set(sym.list_inputs())
    for name, value in weights.items():
        if name in used_inputs:
            known_shapes[name] = tuple(value.shape)
            known_types[name] = value.dtype
    shapes, dtypes = _infer(sym, nodes, known_shapes, known_types)

    builder = OnnxBuilder(onnx, opset)
    value_names: list[list[str]] = []
    for name, dtype, shape in zip(input_names, types, onnx_shapes):
        builder.add_input(builder.reserve(name), dtype, shape)
    for node in nodes:
        if node["op"] == "null" and node["name"] in weights and node["name"] in used_inputs:
            builder.initializer(builder.reserve(node["name"]), weights[node["name"]])

    consumers: dict[int, set[int]] = {}
    for node in nodes:
        for source, out, *_ in node.get("inputs", []):
            consumers.setdefault(source, set()).add(out)
    for head in graph["heads"]:
        consumers.setdefault(head[0], set()).add(head[1])

    todo = list(enumerate(nodes))
    for index, node in (progress(todo) if progress is not None else todo):
        name = node["name"]
        if node["op"] == "null":
            # every input is a graph input or an initializer by now, but a loss's label
            # left out of in_shapes: the loss heads' translations do not read it
            value_names.append([name])
            continue
        count = _all_outputs(node)
        visible = len(shapes[index])
        out_names = [builder.unique(name if count == 1 else f"{name}{i}") for i in range(count)]
        sources = [value_names[src][out] for src, out, *_ in node.get("inputs", [])]
        export_node = ExportNode(
            name=name, op=node["op"], attrs=_params_of(node),
            raw_attrs=dict(node.get("attrs", {})), inputs=sources,
            in_shapes=[shapes[src][out] if out < len(shapes[src]) else None
                       for src, out, *_ in node.get("inputs", [])],
            in_dtypes=[dtypes[src][out] if out < len(dtypes[src]) else None
                       for src, out, *_ in node.get("inputs", [])],
            outputs=out_names,
            out_shapes=list(shapes[index]) + [None] * (count - visible),
            out_dtypes=list(dtypes[index]) + [None] * (count - visible),
            opset=opset, dynamic=dynamic, used_outputs=consumers.get(index, set()))
        _translate(export_node, builder)
        value_names.append(out_names)

    _add_outputs(builder, graph["heads"], value_names, shapes, dtypes, dynamic)
    read = {name for n in builder.nodes for name in n.input} | {o.name for o in builder.outputs}
    # a parameter a translation replaced (BatchNorm's gamma under fix_gamma) is left out
    initializers = [t for t in builder.initializers if t.name in read]
    onnx_graph = onnx.helper.make_graph(builder.nodes, "dagnet_exported_model", builder.inputs,
                                        builder.outputs, initializer=initializers)
    opset_ids = [onnx.helper.make_opsetid("", opset)]
    model = onnx.helper.make_model(onnx_graph, opset_imports=opset_ids, producer_name="dagnet",
                                   producer_version=_dagnet_version())
    model.ir_version = onnx.helper.find_min_ir_version_for(opset_ids)
    data = model.SerializeToString()
    _check(onnx, data)
    return model, data


def _dagnet_version() -> str:
    from .. import __version__

    return __version__


def _translate(node: ExportNode, builder: OnnxBuilder) -> None:
    record = EXPORTS.lookup(node.op, node.opset)
    if record is None:
        supported = EXPORTS.names(node.opset)
        raise UnsupportedOperatorError(
            f"operator {node.op!r} of node {node.name!r} has no ONNX translation for opset "
            f"{node.opset}; dagnet exports {len(supported)} operators "
            f"(mx.onnx.get_operator_support() lists them): replace the operator in the model, "
            f"or add a translation record with dagnet.onnx.to_onnx.EXPORTS.register",
            operator=node.op, node=node.name, opset=node.opset)
    _log.info("exporting node %s (%s)", node.name, node.op)
    builder.scope = node.name
    try:
        record.convert(node, builder)
    except OnnxError:
        raise
    except DagnetError as error:
        raise node.fail(str(error)) from error
    missing = [node.outputs[i] for i in sorted(node.used_outputs)
               if i < len(node.outputs) and node.outputs[i] not in builder.defined]
    if missing:
        raise OnnxExportError(f"the translation of node {node.name!r} ({node.op}) did not "
                              f"produce output(s) {missing}")


def _add_outputs(builder: OnnxBuilder, heads: list[list[int]], value_names: list[list[str]],
                 shapes: list[list[Any]], dtypes: list[list[Any]], dynamic: bool) -> None:
    emitted: set[str] = set()
    for source, out, *_ in heads:
        name = value_names[source][out]
        if name in emitted or name in {i.name for i in builder.inputs} or \
                name in {i.name for i in builder.initializers}:
            builder.scope = name
            name = builder.identity(name, builder.unique(f"{name}_output"))
        emitted.add(name)
        shape = shapes[source][out]
        onnx_shape = [None] * len(shape) if dynamic else list(shape)
        builder.add_output(name, dtypes[source][out], onnx_shape)


def _check(onnx: Any, data: bytes) -> None:
    try:
        onnx.checker.check_model(data, full_check=True)
    except Exception as error:  # onnx raises its own ValidationError and InferenceError
        raise OnnxExportError(f"the exported model fails ONNX's checker: {error}") from None


def export_model(sym: Any, params: Any, in_shapes: Sequence[Sequence[int]] | None = None,
                 in_types: Any = np.float32, onnx_file_path: str = "model.onnx",
                 verbose: bool = False, dynamic: bool = False,
                 dynamic_input_shapes: Sequence[Sequence[int | None]] | None = None,
                 run_shape_inference: bool = False, input_type: Any = None,
                 input_shape: Sequence[Sequence[int]] | None = None, *,
                 opset_version: int | None = None, progress: Progress | None = None) -> str:
    """Export a model (symbol and parameters) to an ONNX file; MXNet 1.9.1's
    ``mx.onnx.export_model``.

    Parameters
    ----------
    sym : Symbol or str
        The symbol, or the path of its ``-symbol.json`` file.
    params : dict, [arg_params, aux_params] or str
        The parameters (arguments and auxiliary states), or the path of a ``.params``
        file.  Parameters the symbol does not use are ignored.
    in_shapes : list of tuple
        One example shape per input that is not a parameter, in the symbol's order
        (a loss's ``*_label`` input may be left out).
    in_types : dtype or list of dtypes
        The inputs' element types (one for all, or one per input).
    onnx_file_path : str
        Where the model is written.
    verbose : bool
        Log every node as it is translated.
    dynamic : bool
        Export every input dimension as variable (a dynamic batch, say), or as
        ``dynamic_input_shapes`` says: a shape per input with None where it varies.
    run_shape_inference : bool
        Store ONNX's inferred shapes of every value in the file.
    input_type, input_shape :
        MXNet's older names of ``in_types`` and ``in_shapes``.
    opset_version : int, optional
        The ONNX opset to write, 12 or 13 (default: 13, or the highest the installed
        onnx knows).
    progress : callable, optional
        Wraps the loop over the nodes, e.g. ``tqdm.tqdm`` for a progress bar.

    Returns
    -------
    str
        ``onnx_file_path``.
    """
    onnx = require_onnx()
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if verbose:
        _log.setLevel(logging.INFO)
    model, data = _export_checked(sym, params, in_shapes, in_types,
                                  opset_version=opset_version, dynamic=dynamic,
                                  dynamic_input_shapes=dynamic_input_shapes, progress=progress)
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(data)
            data = model.SerializeToString()
        except Exception as error:  # noqa: BLE001 - keep the model without inferred shapes
            _log.warning("ONNX shape inference failed (%s); the model is saved without it", error)
    with open(onnx_file_path, "wb") as handle:
        handle.write(data)
    _log.info("exported ONNX model %s (opset %d)", onnx_file_path, model.opset_import[0].version)
    return onnx_file_path
