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

from collections.abc import Callable
from typing import Any, NamedTuple

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


class _At(NamedTuple):
    """Where a piece lies: input ``input`` of a product packs ``parts`` pieces per head,
    and this piece is number ``index``."""

    input: int
    parts: int
    index: int

    def take(self, inputs: Any, heads: int) -> Any:
        """The piece from ``inputs``, as (B H, S, D)."""
        return _piece(inputs[self.input], heads, self.parts, self.index)


# where each product finds its pieces (input positions are the product's own)
_SELF_Q, _SELF_K, _SELF_V = _At(0, 3, 0), _At(0, 3, 1), _At(0, 3, 2)
_ENCDEC_Q, _ENCDEC_K, _ENCDEC_V = _At(0, 1, 0), _At(1, 2, 0), _At(0, 2, 1)


def _packed(xp: Any, like: Any, heads: int, pieces: dict[_At, Any]) -> Any:
    """A gradient shaped like the packed input ``like`` with ``pieces`` ((B H, S, D) each,
    by where they lie in ``like``) in their slots and zeros elsewhere."""
    s, b, _ = like.shape
    parts = next(iter(pieces)).parts
    out = xp.zeros(_split(like, heads, parts).shape, dtype=like.dtype)
    for at, value in pieces.items():
        out[:, :, :, at.index] = _unbatched(value, b)
    return out.reshape(like.shape)


def _check(op: str, shape: Any, heads: int, parts: int) -> None:
    if len(shape) != 3 or shape[2] % (heads * parts):
        raise ShapeError(f"operator {op!r}: input {tuple(shape)} must be (seq, batch, "
                         f"features) with features a multiple of heads * {parts} = "
                         f"{heads * parts}")


def _scale(x: Any) -> float:
    return 1.0 / float(np.sqrt(x.shape[-1]))


# -- the two products -------------------------------------------------------------------------
def _valatt(xp: Any, v: Any, att: Any, batch: int) -> Any:
    out = xp.matmul(att, v)  # (B H, Sq, D)
    sq = out.shape[1]
    return _unbatched(out, batch).reshape(sq, batch, -1)


def _valatt_grads(xp: Any, g: Any, v: Any, att: Any, heads: int) -> tuple[Any, Any]:
    sq, b, _ = g.shape
    gb = _batched(g.reshape(sq, b, heads, -1))  # (B H, Sq, D)
    return xp.matmul(gb, v.transpose(0, 2, 1)), xp.matmul(att.transpose(0, 2, 1), gb)


_Kernels = tuple[Callable, Callable]


def _qk_kernels(q_at: _At, k_at: _At) -> _Kernels:
    """Forward and backward of ``q k^T / sqrt(D)``, q and k taken from the packed inputs
    at ``q_at`` and ``k_at``; each packed input gets the gradients of its pieces."""

    def forward(attrs, ctx, inputs, req, outputs):
        q, k = q_at.take(inputs, attrs.heads), k_at.take(inputs, attrs.heads)
        put(outputs[0], req[0], ctx.xp.matmul(q * _scale(q), k.transpose(0, 2, 1)))

    def backward(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        g, packed = inputs[0], inputs[1:]
        q, k = q_at.take(packed, attrs.heads), k_at.take(packed, attrs.heads)
        c = _scale(q)
        grads = {q_at: xp.matmul(g, k) * c, k_at: xp.matmul(g.transpose(0, 2, 1), q) * c}
        for i, x in enumerate(packed):
            mine = {at: grad for at, grad in grads.items() if at.input == i}
            put(outputs[i], req[i], _packed(xp, x, attrs.heads, mine))

    return forward, backward


def _valatt_kernels(v_at: _At) -> _Kernels:
    """Forward and backward of ``attention @ v``, v taken from the packed input at
    ``v_at`` (input 0; attention is input 1)."""

    def forward(attrs, ctx, inputs, req, outputs):
        packed, att = inputs
        v = v_at.take(inputs, attrs.heads)
        put(outputs[0], req[0], _valatt(ctx.xp, v, att, packed.shape[1]))

    def backward(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        g, packed, att = inputs
        v = v_at.take(inputs[1:], attrs.heads)
        d_att, d_v = _valatt_grads(xp, g, v, att, attrs.heads)
        put(outputs[0], req[0], _packed(xp, packed, attrs.heads, {v_at: d_v}))
        put(outputs[1], req[1], d_att)

    return forward, backward


# -- shape rules ------------------------------------------------------------------------------
def _selfatt_qk_infer(attrs, ins, outs):
    qkv = ins[0]
    if not known(qkv):
        return ins, outs
    _check("_contrib_interleaved_matmul_selfatt_qk", qkv, attrs.heads, 3)
    return ins, [(qkv[1] * attrs.heads, qkv[0], qkv[0])]


def _selfatt_valatt_infer(attrs, ins, outs):
    qkv, att = ins
    if not known(qkv):
        return ins, outs
    _check("_contrib_interleaved_matmul_selfatt_valatt", qkv, attrs.heads, 3)
    s, b, f = qkv
    return [tuple(qkv), (b * attrs.heads, s, s)], [(s, b, f // 3)]


def _encdec_qk_infer(attrs, ins, outs):
    q, kv = ins
    if not (known(q) and known(kv)):
        return ins, outs
    _check("_contrib_interleaved_matmul_encdec_qk", q, attrs.heads, 1)
    _check("_contrib_interleaved_matmul_encdec_qk", kv, attrs.heads, 2)
    return ins, [(q[1] * attrs.heads, q[0], kv[0])]


def _encdec_valatt_infer(attrs, ins, outs):
    kv, att = ins
    if not (known(kv) and known(att)):
        return ins, outs
    _check("_contrib_interleaved_matmul_encdec_valatt", kv, attrs.heads, 2)
    return ins, [(att[1], kv[1], kv[2] // 2)]


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


def _product_ops(kind: str, input_names: list[str], infer_shape: Callable,
                 kernels: _Kernels, case: Callable, reference: Callable,
                 description: str) -> list[Op]:
    """The records of ``_contrib_interleaved_matmul_<kind>`` and of its backward, which
    reads the output gradient and the inputs and writes one gradient per input."""
    forward, backward = kernels
    n = len(input_names)
    return [Op(_NAME + kind, params=HeadsParam, num_inputs=n, input_names=input_names,
               infer_shape=infer_shape, compute={XP: forward},
               gradient=Gradient(f"_backward_interleaved_matmul_{kind}", ("out_grad", "in_data")),
               domain=Domain(case, reference=with_attrs(HeadsParam, _NAME + kind, reference)),
               description=description),
            backward_op(f"interleaved_matmul_{kind}", HeadsParam, n + 1, n, backward)]


OPS: list[Op] = [
    *_product_ops(
        "selfatt_qk", ["queries_keys_values"], _selfatt_qk_infer,
        _qk_kernels(_SELF_Q, _SELF_K), lambda draw: _selfatt_case(draw, False),
        lambda p, x: _np_qk(_piece(x, p.heads, 3, 0), _piece(x, p.heads, 3, 1)),
        "Self-attention scores from interleaved projections (seq, batch, 3 H D): "
        "``q k^T / sqrt(D)`` per batch entry and head, shape (batch H, seq, seq).  "
        "Gradient to the q and k pieces."),
    *_product_ops(
        "selfatt_valatt", ["queries_keys_values", "attention"], _selfatt_valatt_infer,
        _valatt_kernels(_SELF_V), lambda draw: _selfatt_case(draw, True),
        lambda p, x, att: _np_valatt(_piece(x, p.heads, 3, 2), att, x.shape[1]),
        "Attention-weighted values: ``attention @ v`` with v the interleaved "
        "projections' value pieces, back in (seq, batch, H D).  Gradients to the v "
        "pieces and to attention."),
    *_product_ops(
        "encdec_qk", ["queries", "keys_values"], _encdec_qk_infer,
        _qk_kernels(_ENCDEC_Q, _ENCDEC_K), lambda draw: _encdec_case(draw, False),
        lambda p, q, kv: _np_qk(_piece(q, p.heads, 1, 0), _piece(kv, p.heads, 2, 0)),
        "Encoder-decoder attention scores: queries (q seq, batch, H D) against the "
        "key pieces of keys_values (k seq, batch, 2 H D), ``q k^T / sqrt(D)``, shape "
        "(batch H, q seq, k seq).  Gradients to queries and the key pieces."),
    *_product_ops(
        "encdec_valatt", ["keys_values", "attention"], _encdec_valatt_infer,
        _valatt_kernels(_ENCDEC_V), lambda draw: _encdec_case(draw, True),
        lambda p, kv, att: _np_valatt(_piece(kv, p.heads, 2, 1), att, kv.shape[1]),
        "Encoder-decoder attention-weighted values: ``attention @ v`` with v the "
        "value pieces of keys_values, in (q seq, batch, H D).  Gradients to the v "
        "pieces and to attention."),
]
