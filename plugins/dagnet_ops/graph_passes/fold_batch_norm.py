"""The inference pass ``fold_batch_norm``: a ``BatchNorm`` over the channels of a
convolution's output, where nothing else reads that output, is folded into the
convolution, as MXNet's oneDNN graph pass folds it: one ``_sg_mkldnn_conv`` node
(``with_bn``) taking the convolution's and the BatchNorm's inputs, which computes
``conv(x, w * a) + beta + a (b - mean)`` with ``a = gamma / sqrt(var + eps)``.  The
folded weights are computed when the node first runs and again only after one of the
parameters was written (see ``_sg_mkldnn_conv``).
"""

from __future__ import annotations

import json
from typing import Any

from ..nn.fused_conv import OP, subgraph_json
from ._edit import for_inference

__all__ = ["NAME", "rewrite"]

NAME = "fold_batch_norm"

_CHANNEL_FIRST = (None, "NCW", "NCHW", "NCDHW")


def rewrite(graph: Any) -> dict | None:
    """The pass: ``graph`` a :class:`dagnet.executor.BoundGraph`; the rewritten JSON, or
    None where nothing folds (or the graph is bound for training)."""
    edit = for_inference(graph)
    if edit is None:
        return None
    for nid in edit.nodes_of("BatchNorm"):
        bn = edit.params(nid)
        source, index, _ = edit.nodes[nid]["inputs"][0]
        if index != 0 or edit.op(source) != "Convolution" or edit.sole_reader(source) != nid:
            continue
        conv = edit.params(source)
        if conv.get("layout") not in _CHANNEL_FIRST or int(bn.get("axis", 1)) != 1 or \
                bn.get("output_mean_var", "False") in ("True", "true", "1") or \
                any(edit.readers(nid, k) or edit.is_head(nid, k) for k in (1, 2)):
            continue
        row = {"op": OP, "name": edit.nodes[nid]["name"], "attrs": {"with_bn": "True"},
               "subgraphs": json.loads(subgraph_json(conv, batch_norm=bn)),
               "inputs": edit.nodes[source]["inputs"] + edit.nodes[nid]["inputs"][1:5]}
        edit.replace(nid, row)
        edit.drop(source)
    return edit.to_json()
