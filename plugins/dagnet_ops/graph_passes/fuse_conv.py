"""The inference pass ``fuse_conv``: a convolution -- a ``Convolution`` node, or a float
``_sg_mkldnn_conv`` that ``fold_batch_norm`` made -- and what follows it alone, as MXNet's
oneDNN graph pass fuses it, become one ``_sg_mkldnn_conv`` node: an activation after it
(``Activation`` relu, sigmoid, tanh or softrelu; ``LeakyReLU`` leaky, elu or gelu; ``clip``
from 0), then an ``elemwise_add`` of another array of its shape (a residual connection),
then an activation after the sum.  The node runs as one oneDNN convolution with the bias,
the activations and the sum as post-ops (see ``_sg_mkldnn_conv``).  A float32 CPU
convolution with nothing to fuse becomes such a node alone, as in MXNet's pass: its
filters are then laid out for oneDNN once per set of parameters, not at every call.

The fused node takes the sum's other operand as its last input, so the graph's inputs
could come in another order than the bound symbol lists them (when that operand was the
sum's first and reaches variables the convolution's inputs do not): such a sum is left
unfused, the convolution and its first activation fused alone.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..nn.fused_conv import OP, activation_of, subgraph_json
from ._edit import GraphEdit, for_inference

__all__ = ["NAME", "rewrite"]

NAME = "fuse_conv"

_SUMS = ("elemwise_add", "broadcast_add")


def rewrite(graph: Any) -> dict | None:
    """The pass: ``graph`` a :class:`dagnet.executor.BoundGraph`; the rewritten JSON, or
    None where nothing fuses (or the graph is bound for training)."""
    edit = for_inference(graph)
    if edit is None:
        return None
    order = edit.variable_order()
    for nid in edit.nodes_of("Convolution", OP):
        base = _base(edit, nid)
        if base is None:
            continue
        chain = _chain(edit, nid)
        if len(chain) == 1:
            if edit.op(nid) == "Convolution" and _float32_on_cpu(edit, base):
                _fuse(edit, base, chain)  # alone, as MXNet's pass does too
            continue
        if not any(link.kind == "sum" for link in chain):
            _fuse(edit, base, chain)
            continue
        before = edit.snapshot()
        _fuse(edit, base, chain)
        if edit.variable_order() != order:
            edit.restore(before)
            chain = chain[:2] if chain[1].kind == "act" else chain[:1]
            if len(chain) > 1:
                _fuse(edit, base, chain)
    return edit.to_json()


def _float32_on_cpu(edit: GraphEdit, base: tuple) -> bool:
    """Whether a convolution's data and filters are float32 and the graph on the CPU."""
    inputs = base[2]
    return edit.graph.ctx.device_type == "cpu" and \
        all(edit.dtype(s, i) == np.float32 for s, i, _ in inputs[:2])


class _Link:
    """One node after the convolution in a fusion: ``kind`` act, sum or postsum_act; for a
    sum, the position of the chain's operand and the other operand's entry."""

    def __init__(self, nid: int, kind: str, position: int = 0, other: list | None = None):
        self.nid, self.kind, self.position, self.other = nid, kind, position, other


def _base(edit: GraphEdit, nid: int) -> tuple[dict, dict | None, list] | None:
    """A convolution node's parts -- its parameters, a folded BatchNorm's (or None), its
    inputs -- when ``nid`` is one that can take more post-ops; else None."""
    op = edit.op(nid)
    if op == "Convolution":
        conv = edit.params(nid)
        if conv.get("layout") not in (None, "NCW", "NCHW", "NCDHW"):
            return None
        return conv, None, edit.nodes[nid]["inputs"]
    if op != OP:
        return None
    flags = edit.params(nid)
    if any(flags.get(flag, "False") in ("True", "true", "1") for flag in (
            "quantized", "with_act", "with_sum", "with_postsum_act", "with_relu",
            "with_postsum_relu")):
        return None
    subgraph = edit.nodes[nid].get("subgraphs", [{}])[0].get("nodes", [])
    conv = next((n.get("attrs", {}) for n in subgraph if n.get("op") == "Convolution"), None)
    bn = next((n.get("attrs", {}) for n in subgraph if n.get("op") == "BatchNorm"), None)
    return None if conv is None else (conv, bn, edit.nodes[nid]["inputs"])


def _chain(edit: GraphEdit, nid: int) -> list[_Link]:
    """The convolution ``nid`` and the nodes after it that fuse into it, in order."""
    chain = [_Link(nid, "conv")]
    reader = edit.sole_reader(nid)
    if reader is not None and activation_of(edit.op(reader), edit.params(reader)):
        chain.append(_Link(reader, "act"))
        reader = edit.sole_reader(reader)
    if reader is None or edit.op(reader) not in _SUMS:
        return chain
    inputs = edit.nodes[reader]["inputs"]
    last = chain[-1].nid
    if len(inputs) != 2 or [inputs[0][0], inputs[1][0]].count(last) != 1:
        return chain
    position = 0 if inputs[0][0] == last else 1
    other = inputs[1 - position]
    if edit.shape(last) is None or (edit.shape(other[0], other[1]),
                                    edit.dtype(other[0], other[1])) != \
            (edit.shape(last), edit.dtype(last)):
        return chain  # a sum of another shape (broadcast), dtype, or of shapes unknown
    chain.append(_Link(reader, "sum", position, other))
    after = edit.sole_reader(reader)
    if after is not None and activation_of(edit.op(after), edit.params(after)):
        chain.append(_Link(after, "postsum_act"))
    return chain


def _fuse(edit: GraphEdit, base: tuple, chain: list[_Link]) -> None:
    """Replace the nodes of ``chain`` with one fused node where the last of them was."""
    conv, bn, inputs = base
    parts = {link.kind: link for link in chain}

    def act(kind: str):
        link = parts.get(kind)
        return None if link is None else (edit.nodes[link.nid]["op"], edit.params(link.nid))

    sum_link = parts.get("sum")
    flags = {"with_bn": bn is not None, "with_act": "act" in parts,
             "with_sum": sum_link is not None, "with_postsum_act": "postsum_act" in parts}
    row = {"op": OP, "name": edit.nodes[chain[-1].nid]["name"],
           "attrs": {k: str(v) for k, v in flags.items() if v},
           "subgraphs": json.loads(subgraph_json(conv, batch_norm=bn, act=act("act"),
                                                 with_sum=sum_link is not None,
                                                 postsum_act=act("postsum_act"))),
           "inputs": list(inputs) + ([sum_link.other] if sum_link is not None else [])}
    edit.replace(chain[-1].nid, row)
    for link in chain[:-1]:
        edit.drop(link.nid)
