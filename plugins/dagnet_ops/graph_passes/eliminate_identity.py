"""The inference pass ``eliminate_identity``: nodes that pass their input on unchanged when
not training -- ``Dropout`` (except ``mode='always'``), ``identity``/``_copy`` and
``BlockGrad``/``stop_gradient`` -- are dropped, their readers reading their input.

A node stays where dropping it would make a graph output the same entry as an argument or
as another output (the executor's outputs are arrays of their own), and a Dropout stays
where its mask is read.
"""

from __future__ import annotations

from typing import Any

from ._edit import for_inference

__all__ = ["NAME", "rewrite"]

NAME = "eliminate_identity"

_IDENTITIES = ("_copy", "BlockGrad")


def rewrite(graph: Any) -> dict | None:
    """The pass: ``graph`` a :class:`dagnet.executor.BoundGraph`; the rewritten JSON, or
    None where nothing is dropped (or the graph is bound for training)."""
    edit = for_inference(graph)
    if edit is None:
        return None
    for nid in edit.nodes_of("Dropout", *_IDENTITIES):
        if edit.op(nid) == "Dropout" and (
                edit.params(nid).get("mode", "training") == "always" or
                edit.readers(nid, 1) or edit.is_head(nid, 1)):
            continue
        source = edit.nodes[nid]["inputs"][0]
        if edit.is_head(nid) and (edit.op(source[0]) is None or
                                  edit.is_head(source[0], source[1])):
            continue
        edit.move_readers((nid, 0), list(source))
        edit.drop(nid)
    return edit.to_json()
