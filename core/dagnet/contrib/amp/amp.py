"""Automatic mixed precision (MXNet's ``mx.contrib.amp``): run the matrix products in
float16 and the sensitive operators in float32, with dynamic loss scaling.

Two ways in, as in MXNet:

- :func:`init` patches the operator functions of ``mx.nd`` and ``mx.sym`` so each call
  casts its inputs by the operator's group (:mod:`.lists`); with a gluon ``Trainer``,
  :func:`init_trainer` and :func:`scale_loss` add loss scaling;
- :func:`convert_symbol` / :func:`convert_model` / :func:`convert_hybrid_block` rewrite a
  finished graph, inserting ``amp_cast`` / ``amp_multicast`` nodes.

Only float16 is a target here: numpy has no bfloat16.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ... import ndarray, plugins, symbol
from ...ndarray import NDArray
from ...symbol import Symbol
from . import lists
from .loss_scaler import LossScaler

__all__ = [
    "init", "init_trainer", "scale_loss", "unscale", "convert_model",
    "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops", "list_conditional_fp32_ops",
    "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params",
    "convert_symbol",
]

_state: dict[str, Any] = {"initialized": False, "target_dtype": None, "originals": {}}
# MXNet's module flag, which libraries read to learn whether init() ran (GluonNLP's
# attention cells keep float16 scores out of their softmax when it did).
_amp_initialized = False


def _check_target(target_dtype: Any) -> str:
    name = np.dtype(target_dtype).name if target_dtype != "bfloat16" else "bfloat16"
    if name != "float16":
        raise ValueError(f"amp: target_dtype {target_dtype!r} is not supported; dagnet's AMP "
                         f"targets float16 (numpy has no bfloat16)")
    return name


def _registered(names: Sequence[str]) -> list[str]:
    known = set(plugins.ops())
    return [n for n in names if n in known]


# -- the operator groups ------------------------------------------------------------------
def list_lp16_ops(target_dtype: Any) -> list[str]:
    """Operators whose inputs AMP casts to ``target_dtype``."""
    _check_target(target_dtype)
    return _registered(lists.LP16)


def list_fp32_ops(target_dtype: Any) -> list[str]:
    """Operators whose inputs AMP casts to float32."""
    _check_target(target_dtype)
    return _registered(lists.FP32)


def list_widest_type_cast(target_dtype: Any) -> list[str]:
    """Operators whose inputs AMP casts to the widest of their precisions."""
    _check_target(target_dtype)
    return _registered(lists.WIDEST)


def list_conditional_fp32_ops(target_dtype: Any) -> list[tuple[str, str, list[str]]]:
    """``(operator, parameter, values)``: float32 when the parameter takes one of the values."""
    _check_target(target_dtype)
    known = set(plugins.ops())
    return [entry for entry in lists.CONDITIONAL_FP32 if entry[0] in known]


def list_lp16_fp32_ops(target_dtype: Any) -> list[str]:
    """Operators that run in whatever precision reaches them (every other registered one)."""
    _check_target(target_dtype)
    grouped = set(lists.LP16) | set(lists.FP32) | set(lists.WIDEST)
    return sorted(n for n in plugins.ops() if n not in grouped and not n.startswith("_backward"))


def list_loss_output_functions(target_dtype: Any) -> list[str]:
    """Loss outputs whose ``grad_scale`` loss scaling multiplies."""
    _check_target(target_dtype)
    return _registered(lists.LOSS_OUTPUTS)


def list_lp16_use_fp32_params(target_dtype: Any) -> None:
    """Low-precision operators that keep some parameters in float32: none here."""
    _check_target(target_dtype)
    return None


# -- patching the front ends ---------------------------------------------------------------
def _cast_value(value: Any, dtype: str) -> Any:
    if isinstance(value, NDArray):
        if value.dtype in (np.float16, np.float32) and value.dtype != np.dtype(dtype):
            return ndarray.amp_cast(value, dtype=dtype)
        return value
    if isinstance(value, Symbol):
        return symbol.amp_cast(value, dtype=dtype)
    return value


def _multicast(values: list[Any]) -> list[Any]:
    tensors = [i for i, v in enumerate(values) if isinstance(v, (NDArray, Symbol))]
    if len(tensors) < 2:
        return values
    front = ndarray if isinstance(values[tensors[0]], NDArray) else symbol
    cast = front.amp_multicast(*[values[i] for i in tensors], num_outputs=len(tensors))
    out = list(values)
    for k, i in enumerate(tensors):
        out[i] = cast[k]
    return out


def _wrap(fn: Any, decide: Any) -> Any:
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        how = decide(kwargs)
        if how == "widest":
            keys = [k for k, v in kwargs.items() if isinstance(v, (NDArray, Symbol))
                    and k != "out"]
            values = _multicast(list(args) + [kwargs[k] for k in keys])
            args, kwargs = tuple(values[:len(args)]), dict(kwargs, **dict(
                zip(keys, values[len(args):])))
        elif how is not None:
            args = tuple(_cast_value(a, how) for a in args)
            kwargs = {k: (v if k == "out" else _cast_value(v, how)) for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    wrapped.__wrapped_by_amp__ = True
    return wrapped


def init(target_dtype: Any = "float16", target_precision_ops: Sequence[str] | None = None,
         conditional_fp32_ops: Sequence[tuple[str, str, Sequence[str]]] | None = None,
         fp32_ops: Sequence[str] | None = None, layout_optimization: bool = False) -> None:
    """Patch ``mx.nd`` and ``mx.sym`` so that every call of a grouped operator casts its
    inputs; the lists default to :mod:`.lists`.  Call once, before building models."""
    if layout_optimization:
        raise ValueError("amp.init: layout_optimization is a CUDA-only rewrite in MXNet; "
                         "dagnet has none, call init(layout_optimization=False)")
    global _amp_initialized
    target = _check_target(target_dtype)
    if _state["initialized"]:
        return
    lp16 = _registered(target_precision_ops if target_precision_ops is not None
                       else lists.LP16)
    fp32 = _registered(fp32_ops if fp32_ops is not None else lists.FP32)
    conditional = list(conditional_fp32_ops if conditional_fp32_ops is not None
                       else lists.CONDITIONAL_FP32)
    widest = _registered(lists.WIDEST)
    rules: dict[str, Any] = {}
    for name in lp16:
        rules[name] = lambda kw, t=target: t
    for name in fp32:
        rules[name] = lambda kw: "float32"
    for name in widest:
        rules[name] = lambda kw: "widest"
    for op, param, values in conditional:
        if op not in rules:
            rules[op] = (lambda kw, p=param, vs=tuple(values):
                         "float32" if str(kw.get(p, "")) in vs else None)
    for module in (ndarray, symbol):
        for name, decide in rules.items():
            original = getattr(module, name)
            _state["originals"][(module.__name__, name)] = original
            setattr(module, name, _wrap(original, decide))
    _state.update(initialized=True, target_dtype=target)
    _amp_initialized = True


# -- loss scaling with a gluon Trainer ------------------------------------------------------
def _check_trainer(trainer: Any) -> None:
    from ...gluon import Trainer

    if not isinstance(trainer, Trainer):
        raise TypeError(f"amp: loss scaling works with a gluon Trainer, got "
                        f"{type(trainer).__name__}")
    if not hasattr(trainer, "_amp_loss_scaler"):
        raise ValueError("amp: call amp.init_trainer(trainer) before scale_loss/unscale")


def init_trainer(optimizer_or_trainer: Any) -> None:
    """Give a gluon ``Trainer`` a dynamic :class:`LossScaler`: its ``step`` then skips
    updates whose gradients overflowed.  Needs :func:`init` first."""
    from ...gluon import Trainer

    if not _state["initialized"]:
        raise RuntimeError("amp.init_trainer: call amp.init() first")
    if not isinstance(optimizer_or_trainer, Trainer):
        raise TypeError(f"amp.init_trainer: AMP works with a gluon Trainer, got "
                        f"{type(optimizer_or_trainer).__name__}")
    optimizer_or_trainer._amp_loss_scaler = LossScaler()
    optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale


@contextlib.contextmanager
def scale_loss(loss: Any, optimizer_or_trainer: Any) -> Iterator[Any]:
    """``with amp.scale_loss(loss, trainer) as scaled: autograd.backward(scaled)``: the
    loss multiplied by the current scale; the trainer divides the gradients back."""
    _check_trainer(optimizer_or_trainer)
    scale = optimizer_or_trainer._amp_loss_scaler.loss_scale
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scale
    if isinstance(loss, (list, tuple)):
        yield [x * scale for x in loss]
    else:
        yield loss * scale


def unscale(optimizer_or_trainer: Any) -> None:
    """Divide the gradients by the loss scale now (e.g. before gradient clipping); the
    next ``step`` then rescales by the original factor only."""
    _check_trainer(optimizer_or_trainer)
    trainer = optimizer_or_trainer
    factor = trainer._scale / trainer._amp_original_scale
    for param in trainer._params:
        if param.grad_req != "null":
            for grad in param.list_grad():
                grad *= factor
    trainer._scale = trainer._amp_original_scale


# -- rewriting a finished graph -------------------------------------------------------------
def _rule(node: dict, target: str, lp16: set, fp32: set, widest: set,
          conditional: list) -> str | None:
    op = node["op"]
    if op in lp16:
        return target
    if op in fp32:
        return "float32"
    attrs = node.get("attrs", {})
    for cop, param, values in conditional:
        if op == cop and str(attrs.get(param, "")) in values:
            return "float32"
    if op in widest:
        return "widest"
    return None


def convert_symbol(sym: Symbol, target_dtype: Any = "float16",
                   target_dtype_ops: Sequence[str] | None = None,
                   fp32_ops: Sequence[str] | None = None,
                   conditional_fp32_ops: Sequence[tuple[str, str, Sequence[str]]] | None = None,
                   excluded_sym_names: Sequence[str] | None = None,
                   data_names: Sequence[str] | None = None,
                   cast_optional_params: bool = False) -> Symbol:
    """A copy of ``sym`` with ``amp_cast`` nodes before the inputs of low-precision and
    float32 operators and ``amp_multicast`` before the widest-type ones; nodes named in
    ``excluded_sym_names`` stay as they are.  ``data_names`` must name arguments of ``sym``;
    ``cast_optional_params`` is what :func:`convert_model` acts on."""
    target = _check_target(target_dtype)
    arguments = set(sym.list_arguments())
    missing = [n for n in (data_names or []) if n not in arguments]
    if missing:
        raise ValueError(f"amp.convert_symbol: data_names {missing} are not arguments of the "
                         f"symbol (its arguments: {sorted(arguments)})")
    lp16 = set(target_dtype_ops if target_dtype_ops is not None else lists.LP16)
    fp32 = set(fp32_ops if fp32_ops is not None else lists.FP32)
    conditional = [(o, p, [str(v) for v in vs]) for o, p, vs in
                   (conditional_fp32_ops if conditional_fp32_ops is not None
                    else lists.CONDITIONAL_FP32)]
    overlap = lp16 & fp32
    if overlap:
        raise ValueError(f"amp.convert_symbol: {sorted(overlap)} are in both the "
                         f"low-precision and the float32 lists; put each operator in one")
    excluded = set(excluded_sym_names or [])
    graph = json.loads(sym.tojson())
    nodes: list[dict] = []
    where: dict[int, int] = {}
    casts: dict[tuple, list] = {}

    def add_cast(entry: list, dtype: str) -> list:
        key = (tuple(entry[:2]), dtype)
        if key not in casts:
            source = nodes[entry[0]]["name"]
            suffix = "" if entry[1] == 0 else f"_{entry[1]}"
            nodes.append({"op": "amp_cast", "name": f"{source}{suffix}_amp_cast_{dtype}",
                          "attrs": {"dtype": dtype}, "inputs": [list(entry)]})
            casts[key] = [len(nodes) - 1, 0, 0]
        return casts[key]

    for i, node in enumerate(graph["nodes"]):
        node = dict(node)
        inputs = [[where[e[0]], e[1], e[2]] for e in node["inputs"]]
        how = None if node["op"] == "null" or node["name"] in excluded else \
            _rule(node, target, lp16, fp32, set(lists.WIDEST), conditional)
        if how == "widest" and len(inputs) > 1:
            nodes.append({"op": "amp_multicast", "name": f"{node['name']}_amp_multicast",
                          "attrs": {"num_outputs": str(len(inputs))}, "inputs": inputs})
            cast_node = len(nodes) - 1
            inputs = [[cast_node, k, 0] for k in range(len(inputs))]
        elif how in ("float16", "float32"):
            inputs = [add_cast(e, how) for e in inputs]
        node["inputs"] = inputs
        nodes.append(node)
        where[i] = len(nodes) - 1
    graph["nodes"] = nodes
    graph["arg_nodes"] = [i for i, n in enumerate(nodes) if n["op"] == "null"]
    graph["heads"] = [[where[h[0]], h[1], h[2]] for h in graph["heads"]]
    graph.pop("node_row_ptr", None)
    return symbol.load_json(json.dumps(graph))


def convert_model(sym: Symbol, arg_params: dict[str, NDArray], aux_params: dict[str, NDArray],
                  target_dtype: Any = "float16", target_dtype_ops: Sequence[str] | None = None,
                  fp32_ops: Sequence[str] | None = None,
                  conditional_fp32_ops: Sequence[tuple[str, str, Sequence[str]]] | None = None,
                  excluded_sym_names: Sequence[str] | None = None,
                  cast_optional_params: bool = False
                  ) -> tuple[Symbol, dict[str, NDArray], dict[str, NDArray]]:
    """:func:`convert_symbol` for a trained model: returns ``(symbol, arg_params,
    aux_params)``.  With ``cast_optional_params``, parameters that only low-precision
    operators read are stored in ``target_dtype`` (halving their memory)."""
    target = _check_target(target_dtype)
    names = set(sym.list_arguments()) | set(sym.list_auxiliary_states())
    unknown = sorted(set(arg_params) - names) + sorted(set(aux_params) - names)
    if unknown:
        raise ValueError(f"amp.convert_model: parameters {unknown} are not arguments or "
                         f"auxiliary states of the symbol")
    converted = convert_symbol(sym, target, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                               excluded_sym_names, cast_optional_params=cast_optional_params)
    arg_params = dict(arg_params)
    if cast_optional_params:
        for name in _read_only_as(converted, target):
            if name in arg_params:
                arg_params[name] = arg_params[name].astype(target)
    return converted, arg_params, dict(aux_params)


def _read_only_as(sym: Symbol, dtype: str) -> list[str]:
    """Variables every consumer of which is an ``amp_cast`` to ``dtype``."""
    nodes = json.loads(sym.tojson())["nodes"]
    consumers: dict[int, list[dict]] = {}
    for node in nodes:
        for entry in node["inputs"]:
            consumers.setdefault(entry[0], []).append(node)
    return [node["name"] for i, node in enumerate(nodes)
            if node["op"] == "null" and consumers.get(i)
            and all(c["op"] == "amp_cast" and c["attrs"]["dtype"] == dtype
                    for c in consumers[i])]
