"""The inference pass ``inference_layout``: the convolutions of a graph bound for inference
keep their data in the layout oneDNN's kernels want on this CPU -- channels in blocks of
8 on AVX2 machines, of 16 on AVX-512 ones, as :func:`channel_block` asks oneDNN -- from
one layer to the next.

Run after the fusing passes, it turns each float32 2-D convolution (``_sg_mkldnn_conv``,
or a ``Convolution`` left unfused) whose channels and filters are multiples of the block
into ``_FusedConv_ChannelBlocks``, grouped and depthwise ones too, when oneDNN has a
kernel for it on that layout and it is part of a chain: its data comes from another such
convolution, or another reads its result.  The layout changes (``_NCHW_to_ChannelBlocks``,
``_ChannelBlocks_to_NCHW``) go only where a chain meets another layer or an output.  A CPU
whose oneDNN wants another layout (channels-last, plain), or no oneDNN, leaves the graph
as it is.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..nn.channel_blocks import CONV, FROM_BLOCKS, TO_BLOCKS, preferred_block, runs_on_blocks
from ..nn.convolution import ConvolutionParam, conv_geometry
from ..nn.fused_conv import OP as FUSED_OP
from ..nn.fused_conv import subgraph_json
from ..nn.layout_pass import LayoutChange, with_layout_changes
from ._edit import GraphEdit, for_inference

__all__ = ["NAME", "rewrite", "channel_block"]

NAME = "inference_layout"

_TRUE = ("True", "true", "1")


def channel_block() -> int:
    """The channels per block the pass keeps data in on this CPU (0: the pass does not
    apply): what oneDNN's convolutions want (``channel_blocks.preferred_block``)."""
    return preferred_block()


def rewrite(graph: Any) -> dict | None:
    """The pass: ``graph`` a :class:`dagnet.executor.BoundGraph`; the rewritten JSON, or
    None where nothing joins (or the graph is bound for training, or not on the CPU)."""
    edit = for_inference(graph)
    if edit is None or graph.ctx.device_type != "cpu":
        return None
    block = channel_block()
    if not block:
        return None
    candidates = {nid for nid in edit.nodes_of("Convolution", FUSED_OP)
                  if _runs_blocked(edit, nid, block)}
    joined: set[int] = set()
    for nid in sorted(candidates):
        source = edit.nodes[nid]["inputs"][0]
        if (source[0] in joined and source[1] == 0) or \
                any(reader in candidates for reader in edit.readers(nid)):
            joined.add(nid)
    if not joined:
        return None
    return _emit(edit, joined, block)


def _conv_parts(edit: GraphEdit, nid: int) -> tuple[dict, dict, dict] | None:
    """A convolution node's convolution parameters, its fused node's flags, and its
    subgraph (for a plain ``Convolution``, that of a fused node with nothing fused);
    None for a quantized node."""
    params = edit.params(nid)
    if edit.op(nid) == "Convolution":
        return params, {}, {"subgraphs": json.loads(subgraph_json(params))}
    if params.get("quantized", "False") in _TRUE:
        return None
    subgraph = edit.nodes[nid].get("subgraphs", [{}])[0].get("nodes", [])
    conv = next((n.get("attrs", {}) for n in subgraph if n.get("op") == "Convolution"), None)
    if conv is None:
        return None
    return conv, params, {"subgraphs": edit.nodes[nid]["subgraphs"]}


def _runs_blocked(edit: GraphEdit, nid: int, block: int) -> bool:
    """Whether convolution node ``nid`` can run on data in channel blocks of ``block``:
    float32, 2-D, channels and filters multiples of the block, a oneDNN kernel for it."""
    parts = _conv_parts(edit, nid)
    inputs = edit.nodes[nid]["inputs"]
    if parts is None or len(inputs) < 2:
        return False
    data, weight = (edit.shape(s, i) for s, i, _ in inputs[:2])
    if any(edit.dtype(s, i) != np.float32 for s, i, _ in inputs) or data is None or \
            weight is None or len(data) != 4 or data[1] % block or weight[0] % block:
        return False
    conv = ConvolutionParam.parse("Convolution", parts[0])
    if conv.layout not in (None, "NCHW"):
        return False
    _, stride, dilate, pad = conv_geometry("Convolution", conv, 4)
    return runs_on_blocks(data, weight, stride, dilate, pad, conv.num_group, block)


def _emit(edit: GraphEdit, joined: set[int], block: int) -> dict:
    """The JSON with the ``joined`` convolutions on channel blocks and the layout changes
    between them and the rest of the graph."""
    attrs = {"block": str(block)}

    def rewrite(nid: int, node: dict) -> tuple[dict, set[int]]:
        _, flags, subgraphs = _conv_parts(edit, nid)
        row = {"op": CONV, "name": node["name"], "attrs": {**flags, **attrs}, **subgraphs}
        sums = flags.get("with_sum") in _TRUE  # the sum operand, last, is blocked too
        return row, {0, len(node["inputs"]) - 1} if sums else {0}

    return with_layout_changes(edit.graph.json, edit.nodes, edit.heads, joined, rewrite,
                               LayoutChange(TO_BLOCKS, "blocks", attrs),
                               LayoutChange(FROM_BLOCKS, "plain", attrs), edit.dropped)
