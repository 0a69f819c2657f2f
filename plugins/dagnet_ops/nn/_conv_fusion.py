"""What a fused convolution's subgraph says: the convolution's parameters, the batch
norm's, and the activations before and after the sum, read once per subgraph text.

The subgraph is the one graph of the node's ``subgraphs`` list, in symbol JSON: a
``Convolution``, optionally a ``BatchNorm`` on it, an activation (``Activation``,
``LeakyReLU`` or ``clip``), an ``elemwise_add`` of a second operand and an activation
after it.  Which of these are present is what the node's ``with_*`` flags say too; the
subgraph gives their parameters.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dagnet import ShapeError
from dagnet.operator import get_op

from ._common import erf

__all__ = ["Activation", "Fusion", "fusion_of", "subgraph_json", "activation_of",
           "FUSED_ACTIVATIONS", "activation_node", "subgraph_nodes"]

OP = "_sg_mkldnn_conv"


@dataclass(frozen=True)
class Activation:
    """One fused activation: ``kind`` is relu (``alpha`` its negative slope, 0 for ReLU),
    sigmoid, tanh, softrelu, elu (``alpha``), gelu, or bounded_relu (clip to
    ``[0, alpha]``)."""

    kind: str
    alpha: float = 0.0

    def apply(self, xp: Any, x: Any) -> Any:
        """The activation of ``x`` (a new array)."""
        if self.kind == "relu":
            return xp.maximum(x, 0) if self.alpha == 0 else xp.where(x > 0, x, self.alpha * x)
        if self.kind == "sigmoid":
            return xp.exp(-xp.logaddexp(0, -x))
        if self.kind == "tanh":
            return xp.tanh(x)
        if self.kind == "softrelu":
            return xp.logaddexp(0, x)
        if self.kind == "elu":
            return xp.where(x > 0, x, self.alpha * xp.expm1(xp.minimum(x, 0)))
        if self.kind == "gelu":
            return 0.5 * x * (1 + erf(xp, x / math.sqrt(2.0)))
        return xp.clip(x, 0, self.alpha)  # bounded_relu

    def apply_in_place(self, xp: Any, x: Any) -> None:
        """Overwrite ``x`` with its activation."""
        if self.kind == "relu" and self.alpha == 0:
            xp.maximum(x, 0, out=x)
        elif self.kind == "bounded_relu":
            xp.clip(x, 0, self.alpha, out=x)
        else:
            x[...] = self.apply(xp, x)

    def post_op(self) -> tuple:
        """The activation as a oneDNN element-wise post-op (see ``_onednn.post_ops_attr``)."""
        kind, alpha, beta = {
            "relu": ("relu", self.alpha, 0.0), "sigmoid": ("logistic", 0.0, 0.0),
            "tanh": ("tanh", 0.0, 0.0), "softrelu": ("soft_relu", 1.0, 0.0),
            "elu": ("elu", self.alpha, 0.0), "gelu": ("gelu_erf", 0.0, 0.0),
            "bounded_relu": ("clip", 0.0, self.alpha)}[self.kind]
        return ("eltwise", kind, alpha, beta)

    @property
    def non_negative(self) -> bool:
        """Whether every output is >= 0 (a quantized output is then uint8, as in MXNet)."""
        return (self.kind == "relu" and self.alpha == 0) or \
            self.kind in ("sigmoid", "softrelu", "bounded_relu")


@dataclass(frozen=True)
class Fusion:
    """The parsed subgraph: the convolution's parameters (``ConvolutionParam``), the batch
    norm's (or None) and the activations before (``act``) and after (``postsum_act``)
    the sum (each or None)."""

    conv: Any
    batch_norm: Any
    act: Activation | None
    postsum_act: Activation | None
    has_sum: bool


#: what each fusable activation operator may compute, as MXNet fuses them
FUSED_ACTIVATIONS = {"Activation": "act_type relu, sigmoid, tanh or softrelu",
                     "LeakyReLU": "act_type leaky, elu or gelu",
                     "clip": "a_min=0 (a bounded ReLU)"}


def activation_of(op_name: str, attrs: dict[str, Any]) -> Activation | None:
    """The :class:`Activation` a node of operator ``op_name`` (registered name) with
    parameters ``attrs`` computes, or None when it is none MXNet fuses
    (:data:`FUSED_ACTIVATIONS`)."""
    if op_name == "Activation":
        act_type = get_op("Activation").parse_params(attrs).act_type
        return Activation(act_type) if act_type in ("relu", "sigmoid", "tanh", "softrelu") \
            else None
    if op_name == "LeakyReLU":
        params = get_op("LeakyReLU").parse_params(attrs)
        kinds = {"leaky": "relu", "elu": "elu", "gelu": "gelu"}
        if params.act_type not in kinds:
            return None
        return Activation(kinds[params.act_type], params.slope if params.act_type != "gelu"
                          else 0.0)
    if op_name == "clip":
        params = get_op("clip").parse_params(attrs)
        return Activation("bounded_relu", params.a_max) if params.a_min == 0 else None
    return None


def activation_node(node: dict, op: str = OP) -> Activation:
    """The activation a subgraph node of a fused ``op`` computes; ShapeError when it is
    none MXNet fuses."""
    op_name, attrs = node["op"], node.get("attrs") or {}
    act = activation_of(get_op(op_name).name, attrs)
    if act is None:
        raise ShapeError(f"operator {op!r}: a fused {op_name} must have "
                         f"{FUSED_ACTIVATIONS.get(op_name, 'a fusable operator')} (what MXNet "
                         f"fuses), got {attrs}")
    return act


def subgraph_nodes(subgraphs: str, op: str = OP) -> list[dict]:
    """The nodes of the one graph a fused ``op``'s ``subgraphs`` parameter (JSON text)
    holds; ShapeError when it holds no graph or several."""
    try:
        graphs = json.loads(subgraphs)
        nodes = graphs[0]["nodes"]
    except (TypeError, ValueError, KeyError, IndexError):
        raise ShapeError(f"operator {op!r}: subgraphs must be a JSON list holding one graph "
                         f"(symbol JSON with 'nodes'), got {subgraphs[:80]!r}") from None
    if len(graphs) != 1:
        raise ShapeError(f"operator {op!r} fuses one subgraph, got {len(graphs)}")
    return nodes


@lru_cache(maxsize=256)
def fusion_of(subgraphs: str) -> Fusion:
    """The :class:`Fusion` the ``subgraphs`` parameter (JSON text) describes."""
    nodes = subgraph_nodes(subgraphs)
    conv = batch_norm = act = postsum_act = None
    has_sum = False
    for node in nodes:
        op_name = node.get("op", "null")
        if op_name == "null":
            continue
        if op_name == "Convolution":
            conv = get_op("Convolution").parse_params(node.get("attrs") or {})
        elif op_name == "BatchNorm":
            batch_norm = get_op("BatchNorm").parse_params(node.get("attrs") or {})
        elif op_name in ("Activation", "LeakyReLU", "clip"):
            if has_sum:
                postsum_act = activation_node(node)
            else:
                act = activation_node(node)
        elif op_name in ("elemwise_add", "_Plus", "_plus", "broadcast_add"):
            has_sum = True
        else:
            raise ShapeError(f"operator {OP!r}: the subgraph holds {op_name!r}; a fused "
                             f"convolution holds Convolution, BatchNorm, an activation and "
                             f"elemwise_add only")
    if conv is None:
        raise ShapeError(f"operator {OP!r}: the subgraph holds no Convolution")
    if conv.layout not in (None, "NCW", "NCHW", "NCDHW"):
        raise ShapeError(f"operator {OP!r}: the fused convolution takes channel-first data, "
                         f"got layout {conv.layout!r}")
    return Fusion(conv, batch_norm, act, postsum_act, has_sum)


def subgraph_json(conv: dict[str, Any], *, batch_norm: dict[str, Any] | None = None,
                  act: tuple[str, dict[str, Any]] | None = None, with_sum: bool = False,
                  postsum_act: tuple[str, dict[str, Any]] | None = None) -> str:
    """The ``subgraphs`` text of a fused convolution with these parts (parameters as
    keyword dicts; an activation as ``(operator name, parameters)``), as MXNet writes it."""
    nodes: list[dict[str, Any]] = []

    def add(op: str, name: str, attrs: dict[str, Any] | None = None,
            inputs: tuple[int, ...] = ()) -> int:
        node: dict[str, Any] = {"op": op, "name": name,
                                "inputs": [[i, 0, 0] for i in inputs]}
        if attrs:
            node["attrs"] = {k: str(v) for k, v in attrs.items()}
        nodes.append(node)
        return len(nodes) - 1

    head = add("Convolution", "conv", conv,
               (add("null", "data"), add("null", "weight"),
                *(() if str(conv.get("no_bias", False)) in ("True", "true", "1")
                  else (add("null", "bias"),))))
    if batch_norm is not None:
        stats = [add("null", name) for name in ("gamma", "beta", "mean", "var")]
        head = add("BatchNorm", "bn", batch_norm, (head, *stats))
    if act is not None:
        head = add(act[0], "act", act[1], (head,))
    if with_sum:
        head = add("elemwise_add", "sum", None, (head, add("null", "sum_operand")))
    if postsum_act is not None:
        head = add(postsum_act[0], "postsum_act", postsum_act[1], (head,))
    graph = {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
             "heads": [[head, 0, 0]]}
    return json.dumps([graph])
