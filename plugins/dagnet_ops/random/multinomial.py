"""``_sample_multinomial``: category indices drawn from the distributions in ``data``'s
last axis, optionally with the log-probability of each draw, whose gradient with respect
to ``data`` is REINFORCE's (MXNet's ``sample_multinomial_op``).

``data`` holds ``k`` probabilities per distribution (they are not renormalized: a draw
is the first category whose cumulative probability reaches a uniform number; when
the probabilities sum to less than that, the last category).
"""

from __future__ import annotations

import numpy as np

from dagnet import DTypeError, ParamError, ShapeError
from dagnet.operator import (
    XP,
    Case,
    Domain,
    DType,
    Field,
    Gradient,
    Op,
    OpReqType,
    Params,
    Shape,
    assign,
    merge_dtype,
    merge_shape,
)
from dagnet.resource import ResourceRequest

from .._draw import Draw
from .samplers import NOTE

__all__ = ["OPS"]

# The largest category index each output dtype holds exactly.
_EXACT_INDEX = {"uint8": 255, "int32": 2**31 - 1, "float16": 2**11, "float32": 2**24,
                "float64": 2**53}


class SampleMultinomialParam(Params):
    shape = Field(Shape, (), "samples drawn from each distribution (default: one)")
    get_prob = Field(bool, False, "also return the log-probability of each draw")
    dtype = Field(DType, "int32", "dtype of the drawn indices",
                  choices=("uint8", "int32", "float16", "float32", "float64"))


def _n_outputs(attrs):
    return 2 if attrs.get_prob else 1


def _out_shape(data, extra):
    if len(data) == 1:
        return extra if extra else (1,)
    return tuple(data[:-1]) + extra


def _infer_shape(attrs, ins, outs):
    data = ins[0]
    if data is None or 0 in data:
        return ins, outs
    if len(data) == 0:
        raise ShapeError("operator '_sample_multinomial': data must have at least one axis "
                         "(the k probabilities of each distribution)")
    k = data[-1]
    dtype = np.dtype(attrs.dtype).name
    if k - 1 > _EXACT_INDEX[dtype]:
        raise ParamError(
            f"operator '_sample_multinomial': data has {k} categories, but dtype={dtype} holds "
            f"category indices exactly only up to {_EXACT_INDEX[dtype]}; choose a wider "
            f"dtype (int32 or float64)")
    shape = _out_shape(data, tuple(attrs.shape))
    merged = [merge_shape(o, shape, f"operator '_sample_multinomial', output {i}")
              for i, o in enumerate(outs)]
    return [data], merged


def _infer_type(attrs, ins, outs):
    data = ins[0]
    if data is not None and np.dtype(data).kind != "f":
        raise DTypeError(f"operator '_sample_multinomial': data must hold floating "
                         f"probabilities, got {np.dtype(data).name}")
    types = [merge_dtype(np.dtype(attrs.dtype), outs[0], "_sample_multinomial samples")]
    if attrs.get_prob:
        types.append(merge_dtype(data, outs[1], "_sample_multinomial log-probabilities"))
    return [data if data is not None else (outs[1] if attrs.get_prob else None)], types


def _rows(data):
    """``data`` as one distribution per row."""
    return data.reshape(-1, data.shape[-1])


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    probs = _rows(inputs[0])
    n, k = probs.shape
    samples = outputs[0]
    per_row = samples.size // n
    uniforms = ctx.requested[0].generator.random((n, per_row))
    cdf = xp.cumsum(probs.astype(xp.float64), axis=1)
    index = xp.empty((n, per_row), dtype=xp.int64)
    for row in range(n):
        index[row] = xp.searchsorted(cdf[row], uniforms[row], side="left")
    index = xp.minimum(index, k - 1)
    assign(samples, req[0], index.reshape(samples.shape))
    if attrs.get_prob:
        chosen = xp.take_along_axis(probs, index, axis=1)
        assign(outputs[1], req[1], xp.log(chosen).reshape(outputs[1].shape))


def _backward(attrs, ctx, inputs, req, outputs):
    # inputs: out_grad (samples[, log-prob]), data, outputs (samples[, log-prob])
    xp = ctx.xp
    n_out = _n_outputs(attrs)
    data = inputs[n_out]
    samples = inputs[n_out + 1]
    grad = xp.zeros(data.shape, dtype=data.dtype)
    if attrs.get_prob:
        head = inputs[1]
        probs = _rows(data)
        n = probs.shape[0]
        index = samples.reshape(n, -1).astype(xp.int64)
        row_of = xp.broadcast_to(xp.arange(n)[:, None], index.shape)
        where = (row_of.ravel(), index.ravel())
        contribution = (head.reshape(n, -1) / probs[row_of, index]).ravel()
        rows = grad.reshape(probs.shape)  # a view: the sums land in grad
        if hasattr(xp.add, "at"):
            xp.add.at(rows, where, contribution)
        else:  # cupy
            import cupyx

            cupyx.scatter_add(rows, where, contribution)
    assign(outputs[0], req[0], grad)


def _sample(draw):
    # one-hot distributions: the draws are certain, so the suite can compare them and
    # differentiate the log-probability (log 1 = 0, gradient 1 / 1 per draw)
    d = Draw(draw)
    batch = d.shape(d.int(0, 2))
    k = d.int(1, 5, "categories")
    hot = d.rng.integers(0, k, size=batch)
    data = np.zeros(batch + (k,))
    np.put_along_axis(data, hot[..., None], 1.0, axis=-1)
    params = {"shape": d.shape(d.int(0, 2)), "get_prob": d.bool("get_prob"),
              "dtype": d.choice(["int32", "float32", "float64"], "dtype")}
    return Case([data], params)


def _reference(params, data):
    attrs = SampleMultinomialParam.parse("_sample_multinomial", params)
    extra = tuple(attrs.shape)
    shape = _out_shape(data.shape, extra)
    hot = np.argmax(data, axis=-1).reshape(data.shape[:-1] + (1,) * len(extra))
    samples = np.broadcast_to(hot, data.shape[:-1] + extra).reshape(shape)
    samples = samples.astype(attrs.dtype)
    if attrs.get_prob:
        return [samples, np.zeros(shape, data.dtype)]
    return samples


SampleMultinomial = Op(
    "_sample_multinomial",
    description=f"""Draws category indices from multinomial distributions.

``data`` of shape ``(d1, ..., dn, k)`` holds ``d1 * ... * dn`` distributions over ``k``
categories; ``shape`` samples are drawn from each, giving an output of shape
``(d1, ..., dn) + shape`` (for 1-d ``data``: ``shape``, or ``(1,)``), dtype ``dtype``.
With ``get_prob=True`` a second output holds ``log(data[..., sample])``; its gradient
with respect to ``data`` is ``head / data[..., sample]`` at each drawn category
(REINFORCE), and zero elsewhere.  A ``dtype`` too narrow for ``k - 1`` is refused.

{NOTE}""",
    params=SampleMultinomialParam,
    num_inputs=1,
    num_outputs=_n_outputs,
    input_names=["data"],
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    compute={XP: _forward},
    gradient=Gradient("_backward_sample_multinomial", uses=("out_grad", "in_data", "out_data")),
    resources=[ResourceRequest("random")],
    supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}),
    domain=Domain(_sample, _reference),
    aliases=("sample_multinomial",),
)

BackwardSampleMultinomial = Op(
    "_backward_sample_multinomial", params=SampleMultinomialParam,
    num_inputs=lambda attrs: 2 * _n_outputs(attrs) + 1, compute={XP: _backward},
    is_backward=True, forward_op="_sample_multinomial",
)

OPS = [SampleMultinomial, BackwardSampleMultinomial]
