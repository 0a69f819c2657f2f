"""``Embedding``: look up rows of a weight matrix by index."""

from __future__ import annotations

import numpy as np

from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    ComposedGradient,
    Domain,
    DType,
    Field,
    Gradient,
    Op,
    OpReqType,
    Params,
    assign,
    merge_dtype,
)

from .._draw import Draw
from ._common import scatter_add, set_shape
from ._second_order import embedding_backward_gradient

__all__ = ["OPS", "embedding_backward", "embedding_rows"]


class EmbeddingParam(Params):
    input_dim = Field(int, REQUIRED, "vocabulary size: the rows of the weight", low=1)
    output_dim = Field(int, REQUIRED, "embedding size: the columns of the weight", low=1)
    dtype = Field(DType, "float32", "dtype of the weight and the output when the weight's is "
                                    "unknown", choices=("bfloat16", "float16", "float32", "float64",
                                                        "int32", "int64", "int8", "uint8"))
    sparse_grad = Field(bool, False, "the weight's gradient is row_sparse: simple_bind "
                                     "allocates it so (the values are the dense gradient's)")


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    names = ["data", "weight"]
    if ins[0] is None and outs[0] is not None:
        set_shape(ins, 0, outs[0][:-1], "Embedding", names)
    set_shape(ins, 1, (attrs.input_dim, attrs.output_dim), "Embedding", names)
    if ins[0] is not None:
        set_shape(outs, 0, (*ins[0], attrs.output_dim), "Embedding", ["output"], "output")
    return ins, outs


def _infer_type(attrs, ins, outs):
    # As MXNet: a weight (or output) of known dtype decides; `dtype` fills in otherwise.
    weight = merge_dtype(ins[1], outs[0], "Embedding weight and output")
    weight = weight if weight is not None else np.dtype(attrs.dtype)
    return [ins[0] if ins[0] is not None else np.dtype(np.float32), weight], [weight]


def embedding_rows(xp, attrs, data):
    """The weight row of each index (also for contrib.SparseEmbedding): truncated to an
    integer and clipped into range, as MXNet."""
    return xp.clip(data.astype(np.int64), 0, attrs.input_dim - 1)


def _forward(attrs, ctx, inputs, req, outputs):
    data, weight = inputs
    assign(outputs[0], req[0], ctx.xp.take(weight, embedding_rows(ctx.xp, attrs, data), axis=0))


def embedding_backward(attrs, ctx, inputs, req, outputs):
    """Embedding's backward kernel: zero for the indices, each index's head gradient summed
    into its weight row (also contrib.SparseEmbedding's non-deterministic path)."""
    xp = ctx.xp
    dy, data, weight = inputs
    assign(outputs[0], req[0], 0)
    if req[1] is not OpReqType.NULL:
        grad = xp.zeros(weight.shape, dtype=dy.dtype)
        rows = embedding_rows(xp, attrs, data).reshape(-1)
        scatter_add(xp, grad, rows, dy.reshape(-1, attrs.output_dim))
        assign(outputs[1], req[1], grad)


def _sample(draw):
    d = Draw(draw)
    vocab, dim = d.int(1, 5, "input_dim"), d.int(1, 3, "output_dim")
    indices = d.rng.integers(0, vocab, size=d.shape(d.int(1, 2))).astype(np.float64)
    return Case([indices, d.uniform((vocab, dim))], {"input_dim": vocab, "output_dim": dim})


def _reference(params, data, weight):
    return weight[np.clip(data.astype(int), 0, weight.shape[0] - 1)]


Embedding = Op(
    "Embedding",
    description="""Maps integer indices to rows of ``weight`` ``(input_dim, output_dim)``.

``data`` of any shape holds indices (any dtype; truncated to integers and clipped
into ``[0, input_dim)``); the output has shape ``data.shape + (output_dim,)`` and
dtype ``dtype``.  The weight's gradient adds each output gradient row into the
row it was read from (repeated indices accumulate); ``data`` gets a zero gradient.""",
    params=EmbeddingParam,
    num_inputs=2,
    input_names=["data", "weight"],
    output_names=["output"],
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    compute={XP: _forward},
    gradient=Gradient("_backward_Embedding", uses=("out_grad", "in_data")),
    domain=Domain(_sample, _reference, differentiable=(1,)),
)

BackwardEmbedding = Op(
    "_backward_Embedding", params=EmbeddingParam, num_inputs=3, num_outputs=2,
    compute={XP: embedding_backward}, gradient=ComposedGradient(embedding_backward_gradient),
    is_backward=True, forward_op="Embedding",
)

OPS = [Embedding, BackwardEmbedding]
