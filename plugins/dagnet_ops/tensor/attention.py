"""Interleaved multi-head attention products (MXNet's ``contrib/transformer.cc``):
``interleaved_matmul_selfatt_qk``/``_valatt`` and ``interleaved_matmul_encdec_qk``/
``_valatt``.

Projections are time-major, (seq, batch, features), with each head's pieces side by
side: self-attention packs ``[q, k, v]`` of head_dim per head (3 H D features),
encoder-decoder attention packs ``[k, v]`` per head in keys_values.  Scores are
(batch H, query seq, key seq), batch-major then head; ``*_qk`` computes
``q k^T / sqrt(D)`` and ``*_valatt`` ``attention @ v`` back in (seq, batch, H D).
Gradients flow to every input (the unused pieces of a packed input get zero).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params

from . import _sampling as S
from ._common import backward_op, known, put, with_attrs


class HeadsParam(Params):
    heads = Field(int, REQUIRED, "Set number of heads", low=1)


def _split(x: Any, heads: int, parts: int) -> Any:
    """(S, B, H parts D) -> (S, B, H, parts, D)."""
    s, b, f = x.shape
    return x.reshape(s, b, heads, parts, f // (heads * parts))


def _batched(x: Any) -> Any:
    """(S, B, H, D) -> (B H, S, D)."""
    s, b, h, d = x.shape
    return x.transpose(1, 2, 0, 3).reshape(b * h, s, d)


def _unbatched(x: Any, batch: int) -> Any:
    """(B H, S, D) -> (S, B, H, D)."""
    bh, s, d = x.shape
    return x.reshape(batch, bh // batch, s, d).transpose(2, 0, 1, 3)


def _piece(x: Any, heads: int, parts: int, index: int) -> Any:
    return _batched(_split(x, heads, parts)[:, :, :, index])


def _packed(xp: Any, like: Any, heads: int, parts: int, pieces: dict[int, Any]) -> Any:
    """A gradient shaped like the packed input ``like`` with ``pieces`` (index -> (B H, S, D))
    in their slots and zeros elsewhere."""
    s, b, _ = like.shape
    out = xp.zeros(_split(like, heads, parts).shape, dtype=like.dtype)
    for index, value in pieces.items():
        out[:, :, :, index] = _unbatched(value, b)
    return out.reshape(like.shape)


def _check(op: str, shape: Any, heads: int, parts: int) -> None:
    if len(shape) != 3 or shape[2] % (heads * parts):
        raise ShapeError(f"operator {op!r}: input {tuple(shape)} must be (seq, batch, "
                         f"features) with features a multiple of heads * {parts} = "
                         f"{heads * parts}")


def _scale(x: Any) -> float:
    return 1.0 / float(np.sqrt(x.shape[-1]))


# -- self-attention ---------------------------------------------------------------------------
def _selfatt_qk_infer(attrs, ins, outs):
    qkv = ins[0]
    if not known(qkv):
        return ins, outs
    _check("_contrib_interleaved_matmul_selfatt_qk", qkv, attrs.heads, 3)
    return ins, [(qkv[1] * attrs.heads, qkv[0], qkv[0])]


def _selfatt_qk(attrs, ctx, inputs, req, outputs):
    qkv = inputs[0]
    q, k = _piece(qkv, attrs.heads, 3, 0), _piece(qkv, attrs.heads, 3, 1)
    put(outputs[0], req[0], ctx.xp.matmul(q * _scale(q), k.transpose(0, 2, 1)))


def _selfatt_qk_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, qkv = inputs
    q, k = _piece(qkv, attrs.heads, 3, 0), _piece(qkv, attrs.heads, 3, 1)
    c = _scale(q)
    dq = xp.matmul(g, k) * c
    dk = xp.matmul(g.transpose(0, 2, 1), q) * c
    put(outputs[0], req[0], _packed(xp, qkv, attrs.heads, 3, {0: dq, 1: dk}))


def _selfatt_valatt_infer(attrs, ins, outs):
    qkv, att = ins
    if not known(qkv):
        return ins, outs
    _check("_contrib_interleaved_matmul_selfatt_valatt", qkv, attrs.heads, 3)
    s, b, f = qkv
    return [tuple(qkv), (b * attrs.heads, s, s)], [(s, b, f // 3)]


def _valatt(xp: Any, v: Any, att: Any, batch: int) -> Any:
    out = xp.matmul(att, v)  # (B H, Sq, D)
    sq = out.shape[1]
    return _unbatched(out, batch).reshape(sq, batch, -1)


def _selfatt_valatt(attrs, ctx, inputs, req, outputs):
    qkv, att = inputs
    v = _piece(qkv, attrs.heads, 3, 2)
    put(outputs[0], req[0], _valatt(ctx.xp, v, att, qkv.shape[1]))


def _valatt_grads(xp: Any, g: Any, v: Any, att: Any, heads: int) -> tuple[Any, Any]:
    sq, b, _ = g.shape
    gb = _batched(g.reshape(sq, b, heads, -1))  # (B H, Sq, D)
    return xp.matmul(gb, v.transpose(0, 2, 1)), xp.matmul(att.transpose(0, 2, 1), gb)


def _selfatt_valatt_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, qkv, att = inputs
    v = _piece(qkv, attrs.heads, 3, 2)
    d_att, d_v = _valatt_grads(xp, g, v, att, attrs.heads)
    put(outputs[0], req[0], _packed(xp, qkv, attrs.heads, 3, {2: d_v}))
    put(outputs[1], req[1], d_att)


# -- encoder-decoder attention ---------------------------------------------------------------
def _encdec_qk_infer(attrs, ins, outs):
    q, kv = ins
    if not (known(q) and known(kv)):
        return ins, outs
    _check("_contrib_interleaved_matmul_encdec_qk", q, attrs.heads, 1)
    _check("_contrib_interleaved_matmul_encdec_qk", kv, attrs.heads, 2)
    return ins, [(q[1] * attrs.heads, q[0], kv[0])]


def _encdec_qk(attrs, ctx, inputs, req, outputs):
    queries, kv = inputs
    q, k = _piece(queries, attrs.heads, 1, 0), _piece(kv, attrs.heads, 2, 0)
    put(outputs[0], req[0], ctx.xp.matmul(q * _scale(q), k.transpose(0, 2, 1)))


def _encdec_qk_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, queries, kv = inputs
    q, k = _piece(queries, attrs.heads, 1, 0), _piece(kv, attrs.heads, 2, 0)
    c = _scale(q)
    put(outputs[0], req[0], _packed(xp, queries, attrs.heads, 1, {0: xp.matmul(g, k) * c}))
    put(outputs[1], req[1], _packed(xp, kv, attrs.heads, 2,
                                    {0: xp.matmul(g.transpose(0, 2, 1), q) * c}))


def _encdec_valatt_infer(attrs, ins, outs):
    kv, att = ins
    if not (known(kv) and known(att)):
        return ins, outs
    _check("_contrib_interleaved_matmul_encdec_valatt", kv, attrs.heads, 2)
    return ins, [(att[1], kv[1], kv[2] // 2)]


def _encdec_valatt(attrs, ctx, inputs, req, outputs):
    kv, att = inputs
    v = _piece(kv, attrs.heads, 2, 1)
    put(outputs[0], req[0], _valatt(ctx.xp, v, att, kv.shape[1]))


def _encdec_valatt_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, kv, att = inputs
    v = _piece(kv, attrs.heads, 2, 1)
    d_att, d_v = _valatt_grads(xp, g, v, att, attrs.heads)
    put(outputs[0], req[0], _packed(xp, kv, attrs.heads, 2, {1: d_v}))
    put(outputs[1], req[1], d_att)


# -- conformance cases and references ---------------------------------------------------------
def _dims(draw):
    return (S.integer(draw, 1, 2, "heads"), S.integer(draw, 1, 2, "head_dim"),
            S.integer(draw, 1, 3, "seq"), S.integer(draw, 1, 2, "batch"))


def _selfatt_case(draw, with_att: bool):
    h, d, s, b = _dims(draw)
    inputs = [S.floats(draw, (s, b, 3 * h * d))]
    if with_att:
        inputs.append(S.floats(draw, (b * h, s, s)))
    return Case(inputs, {"heads": h})


def _encdec_case(draw, values: bool):
    h, d, s, b = _dims(draw)
    sk = S.integer(draw, 1, 3, "key seq")
    kv = S.floats(draw, (sk, b, 2 * h * d))
    if values:
        return Case([kv, S.floats(draw, (b * h, s, sk))], {"heads": h})
    return Case([S.floats(draw, (s, b, h * d)), kv], {"heads": h})


def _np_qk(q, k):
    return np.matmul(q / np.sqrt(q.shape[-1]), k.transpose(0, 2, 1))


def _np_valatt(v, att, batch):
    return _valatt(np, v, att, batch)


_NAME = "_contrib_interleaved_matmul_"

OPS: list[Op] = [
    Op(_NAME + "selfatt_qk", params=HeadsParam, input_names=["queries_keys_values"],
       infer_shape=_selfatt_qk_infer, compute={XP: _selfatt_qk},
       gradient=Gradient("_backward_interleaved_matmul_selfatt_qk", ("out_grad", "in_data")),
       domain=Domain(lambda draw: _selfatt_case(draw, False), reference=with_attrs(
           HeadsParam, _NAME + "selfatt_qk",
           lambda p, x: _np_qk(_piece(x, p.heads, 3, 0), _piece(x, p.heads, 3, 1)))),
       description="Self-attention scores from interleaved projections (seq, batch, 3 H D): "
                   "``q k^T / sqrt(D)`` per batch entry and head, shape (batch H, seq, seq).  "
                   "Gradient to the q and k pieces."),
    backward_op("interleaved_matmul_selfatt_qk", HeadsParam, 2, 1, _selfatt_qk_back),
    Op(_NAME + "selfatt_valatt", params=HeadsParam, num_inputs=2,
       input_names=["queries_keys_values", "attention"], infer_shape=_selfatt_valatt_infer,
       compute={XP: _selfatt_valatt},
       gradient=Gradient("_backward_interleaved_matmul_selfatt_valatt", ("out_grad", "in_data")),
       domain=Domain(lambda draw: _selfatt_case(draw, True), reference=with_attrs(
           HeadsParam, _NAME + "selfatt_valatt",
           lambda p, x, att: _np_valatt(_piece(x, p.heads, 3, 2), att, x.shape[1]))),
       description="Attention-weighted values: ``attention @ v`` with v the interleaved "
                   "projections' value pieces, back in (seq, batch, H D).  Gradients to the v "
                   "pieces and to attention."),
    backward_op("interleaved_matmul_selfatt_valatt", HeadsParam, 3, 2, _selfatt_valatt_back),
    Op(_NAME + "encdec_qk", params=HeadsParam, num_inputs=2,
       input_names=["queries", "keys_values"], infer_shape=_encdec_qk_infer,
       compute={XP: _encdec_qk},
       gradient=Gradient("_backward_interleaved_matmul_encdec_qk", ("out_grad", "in_data")),
       domain=Domain(lambda draw: _encdec_case(draw, False), reference=with_attrs(
           HeadsParam, _NAME + "encdec_qk",
           lambda p, q, kv: _np_qk(_piece(q, p.heads, 1, 0), _piece(kv, p.heads, 2, 0)))),
       description="Encoder-decoder attention scores: queries (q seq, batch, H D) against the "
                   "key pieces of keys_values (k seq, batch, 2 H D), ``q k^T / sqrt(D)``, shape "
                   "(batch H, q seq, k seq).  Gradients to queries and the key pieces."),
    backward_op("interleaved_matmul_encdec_qk", HeadsParam, 3, 2, _encdec_qk_back),
    Op(_NAME + "encdec_valatt", params=HeadsParam, num_inputs=2,
       input_names=["keys_values", "attention"], infer_shape=_encdec_valatt_infer,
       compute={XP: _encdec_valatt},
       gradient=Gradient("_backward_interleaved_matmul_encdec_valatt", ("out_grad", "in_data")),
       domain=Domain(lambda draw: _encdec_case(draw, True), reference=with_attrs(
           HeadsParam, _NAME + "encdec_valatt",
           lambda p, kv, att: _np_valatt(_piece(kv, p.heads, 2, 1), att, kv.shape[1]))),
       description="Encoder-decoder attention-weighted values: ``attention @ v`` with v the "
                   "value pieces of keys_values, in (q seq, batch, H D).  Gradients to the v "
                   "pieces and to attention."),
    backward_op("interleaved_matmul_encdec_valatt", HeadsParam, 3, 2, _encdec_valatt_back),
]
