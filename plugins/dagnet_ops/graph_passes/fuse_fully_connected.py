"""The inference pass ``fuse_fully_connected``: a ``FullyConnected`` node and the
activation that alone reads it (``Activation`` relu, sigmoid, tanh or softrelu;
``LeakyReLU`` leaky, elu or gelu; ``clip`` from 0) become one
``_sg_mkldnn_fully_connected`` node, as MXNet's oneDNN graph pass fuses them: one oneDNN
inner product with the activation as a post-op.
"""

from __future__ import annotations

import json
from typing import Any

from ..nn.fused_conv import activation_of
from ..nn.fused_fully_connected import OP, subgraph_json
from ._edit import for_inference

__all__ = ["NAME", "rewrite"]

NAME = "fuse_fully_connected"


def rewrite(graph: Any) -> dict | None:
    """The pass: ``graph`` a :class:`dagnet.executor.BoundGraph`; the rewritten JSON, or
    None where nothing fuses (or the graph is bound for training)."""
    edit = for_inference(graph)
    if edit is None:
        return None
    for nid in edit.nodes_of("FullyConnected"):
        act = edit.sole_reader(nid)
        if act is None or not activation_of(edit.op(act), edit.params(act)):
            continue
        row = {"op": OP, "name": edit.nodes[act]["name"], "attrs": {"with_eltwise": "True"},
               "subgraphs": json.loads(subgraph_json(
                   edit.params(nid), (edit.nodes[act]["op"], edit.params(act)))),
               "inputs": edit.nodes[nid]["inputs"]}
        edit.replace(act, row)
        edit.drop(nid)
    return edit.to_json()
