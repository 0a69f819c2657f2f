"""Inference convolutions on channel-blocked data: arrays ``(N, C/block, *spatial, block)``,
element ``[n, c // block, ..., c % block]`` standing for ``data[n, c, ...]`` -- oneDNN's
own layouts (NCHW8c on AVX2 machines, NCHW16c on AVX-512 ones).

An inference graph that keeps its activations so from one fused convolution to the next
(see the graph pass ``inference_layout``) runs oneDNN's kernels on their own layout,
where the plain one costs a reorder of the data and of the output at every layer, and
1x1 layers run oneDNN's slower plain-layout kernels.  The operators:

``_NCHW_to_ChannelBlocks``   plain data to channel blocks (``block`` channels each);
``_ChannelBlocks_to_NCHW``   back (each the other's gradient);
``_FusedConv_ChannelBlocks`` ``_sg_mkldnn_conv`` (float) with its data, its sum operand
                             and its output channel-blocked, plain filters and
                             parameters; inference only, as the node it stands for.

oneDNN runs float32 arrays on numpy in the layouts it has (8 or 16 channels per block);
anything else changes the layout, runs the plain kernel and changes it back.
"""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    NoGradient,
    Op,
    OpReqType,
    Params,
    assign,
    get_op,
)

from .._draw import Draw
from . import _onednn
from ._common import threads_for
from .fused_conv import OP as FUSED_OP
from .fused_conv import (
    FusedConvParam,
    forward,
    node_parts,
    onednn_forward,
    reference,
    replayed,
    subgraph_json,
)

__all__ = ["OPS", "TO_BLOCKS", "FROM_BLOCKS", "CONV", "to_blocks", "from_blocks",
           "preferred_block", "runs_on_blocks"]

TO_BLOCKS, FROM_BLOCKS = "_NCHW_to_ChannelBlocks", "_ChannelBlocks_to_NCHW"
CONV = "_FusedConv_ChannelBlocks"
_BLOCK_HELP = ("channels per block: 8 (oneDNN's layout on AVX2 machines) or 16 (on AVX-512 "
               "ones); other counts run on numpy")


class ChannelBlockParam(Params):
    block = Field(int, REQUIRED, _BLOCK_HELP)


class BlockedFusedConvParam(FusedConvParam):
    block = Field(int, REQUIRED, _BLOCK_HELP)


# -- the layout ------------------------------------------------------------------------------
def _library():
    return _onednn.library_for(np, np.zeros(0, np.float32))


def preferred_block() -> int:
    """The channels per block oneDNN's convolutions want on this CPU: 8 on AVX2, 16 on
    AVX-512, 0 where they want another layout or oneDNN is off or absent (asked of oneDNN,
    see ``_onednn.channel_block``)."""
    lib = _library()
    return 0 if lib is None else _onednn.channel_block(lib, threads_for(np))


def runs_on_blocks(data_shape, weight_shape, stride, dilate, pad, groups: int,
                   block: int) -> bool:
    """Whether oneDNN has an inference kernel for this float32 convolution (plain shapes)
    on data in channel blocks of ``block``."""
    lib = _library()
    return lib is not None and _onednn.runs_on_blocks(
        lib, tuple(data_shape), tuple(weight_shape), tuple(stride), tuple(dilate),
        tuple(pad), groups, block)


def to_blocks(xp, x, block: int, out=None):
    """Plain ``(N, C, *spatial)`` ``x`` as a channel-blocked array (C a multiple of
    ``block``): a new one, or ``out`` where oneDNN can write it directly."""
    n, c, *sizes = x.shape
    lib = _onednn.library_for(xp, x)
    if lib is not None and _onednn_layout(block, x.ndim) and x.flags.c_contiguous:
        y = _onednn.to_blocked(lib, x, threads_for(xp), out=out, block=block)
        if y is not None:
            return y
    moved = x.reshape(n, c // block, block, *sizes)
    return xp.ascontiguousarray(xp.moveaxis(moved, 2, -1))


def from_blocks(xp, x, out=None):
    """Channel-blocked ``x`` as a plain ``(N, C, *spatial)`` array: a new one, or ``out``
    where oneDNN can write it directly."""
    lib = _onednn.library_for(xp, x)
    if lib is not None and _onednn_layout(x.shape[-1], x.ndim - 1) and x.flags.c_contiguous:
        y = _onednn.to_plain(lib, x, threads_for(xp), out=out)
        if y is not None:
            return y
    return xp.ascontiguousarray(xp.moveaxis(x, -1, 2)).reshape(_onednn.plain_shape(x.shape))


def _onednn_layout(block: int, ndim: int) -> bool:
    return ndim in _onednn.BLOCKED_TAGS.get(block, {})


def _check_block(op: str, block: int) -> None:
    if block < 1:
        raise ShapeError(f"operator {op!r}: block must be a positive channel count, got "
                         f"{block}")


def _blocked_shape(op: str, shape, block: int):
    """The channel-blocked shape of plain ``shape``; None where it is not known."""
    if shape is None or not all(shape):
        return None
    if len(shape) < 3 or shape[1] % block:
        raise ShapeError(f"operator {op!r}: channel blocks of {block} need (N, C, *spatial) "
                         f"data with C a multiple of {block}, got shape {tuple(shape)}")
    return _onednn.blocked_shape(tuple(shape), block)


def _plain_shape(op: str, shape, block: int):
    """The plain shape of channel-blocked ``shape``; None where it is not known."""
    if shape is None or not all(shape):
        return None
    if len(shape) < 4 or shape[-1] != block:
        raise ShapeError(f"operator {op!r}: data in channel blocks of {block} has shape "
                         f"(N, C/{block}, *spatial, {block}), got {tuple(shape)}")
    return _onednn.plain_shape(tuple(shape))


# -- the layout changes -------------------------------------------------------------------------
def _infer_change(op: str, to_blocked: bool):
    def infer(attrs, ins, outs):
        _check_block(op, attrs.block)
        plain, blocked = (ins[0], outs[0]) if to_blocked else (outs[0], ins[0])
        plain = plain or _plain_shape(op, blocked, attrs.block)
        blocked = blocked or _blocked_shape(op, plain, attrs.block)
        if plain is not None and blocked is not None and \
                tuple(_blocked_shape(op, plain, attrs.block)) != tuple(blocked):
            raise ShapeError(f"operator {op!r}: shape {tuple(plain)} in channel blocks of "
                             f"{attrs.block} is not {tuple(blocked)}")
        return ([plain], [blocked]) if to_blocked else ([blocked], [plain])

    return infer


def _change(to_blocked: bool):
    def compute(attrs, ctx, inputs, req, outputs):
        x, out = inputs[0], outputs[0]
        direct = out if req[0] is OpReqType.WRITE else None  # oneDNN may write it itself
        y = to_blocks(ctx.xp, x, attrs.block, direct) if to_blocked else \
            from_blocks(ctx.xp, x, direct)
        assign(out, req[0], y)
        if y is direct and ctx.state is not None:
            _offer_change(ctx.state, *((x, out) if to_blocked else (out, x)), to_blocked)

    return compute


def _offer_change(state, plain, blocked, to_blocked: bool) -> None:
    """Offer the executor the layout change oneDNN just made between these arrays as its
    calls alone, made for the running thread (see ``_onednn.offer_for_thread``)."""
    arrays = (plain.ctypes.data, blocked.ctypes.data)
    kept = state.cache.get(_onednn.ReorderReplay)  # (the arrays, {scope: what was offered})
    if kept is None or kept[0] != arrays:
        kept = state.cache[_onednn.ReorderReplay] = (arrays, {})

    def make(scope):
        calls = _onednn.layout_change_replay(scope[1], plain, blocked, to_blocked, scope[2])
        return None if calls is None else (calls.calls, calls.check)

    _onednn.offer_for_thread(state, kept[1], (), make)


def _change_sample(to_blocked: bool):
    def sample(draw):
        d = Draw(draw)
        block = d.choice((8, 16, 4), "block")
        x = d.uniform((d.int(1, 2), block * d.int(1, 2), d.int(1, 3), d.int(1, 3)))
        return Case([x if to_blocked else to_blocks(np, x, block)], {"block": block})

    return sample


def _change_reference(to_blocked: bool):
    def reference_(params, x):
        block = int(params["block"])
        if to_blocked:
            n, c, *sizes = x.shape
            return np.moveaxis(x.reshape(n, c // block, block, *sizes), 2, -1)
        return np.moveaxis(x, -1, 2).reshape(_onednn.plain_shape(x.shape))

    return reference_


# -- the fused convolution --------------------------------------------------------------------
def _blocked_positions(parts) -> set[int]:
    """The inputs that are channel-blocked: the data and the sum operand."""
    return {parts.index[name] for name in ("data", "sum") if name in parts.index}


def _conv_infer_shape(attrs, ins, outs):
    _check_block(CONV, attrs.block)
    if attrs.quantized:
        raise ShapeError(f"operator {CONV!r} runs float data; a quantized node runs as "
                         f"{FUSED_OP!r}")
    parts = node_parts(attrs)
    blocked = _blocked_positions(parts)
    plain_ins = [_plain_shape(CONV, s, attrs.block) if i in blocked else s
                 for i, s in enumerate(ins)]
    plain_ins, plain_outs = get_op(FUSED_OP).shapes(
        attrs, plain_ins, [_plain_shape(CONV, outs[0], attrs.block)])
    return ([_blocked_shape(CONV, s, attrs.block) or ins[i] if i in blocked else s
             for i, s in enumerate(plain_ins)],
            [_blocked_shape(CONV, plain_outs[0], attrs.block) or outs[0]])


def _conv_infer_type(attrs, ins, outs):
    return get_op(FUSED_OP).dtypes(attrs, ins, outs)


def _conv_forward(attrs, ctx, inputs, req, outputs):
    if replayed(ctx, inputs, req[0], outputs[0]):
        return
    parts = node_parts(attrs, ctx)
    if onednn_forward(ctx, parts, dict(zip(parts.names, inputs)), req[0], outputs[0],
                      blocked=attrs.block, inputs=inputs):
        return
    xp, blocked = ctx.xp, _blocked_positions(parts)
    plain = [from_blocks(xp, a) if i in blocked else a for i, a in enumerate(inputs)]
    out = xp.empty(_onednn.plain_shape(outputs[0].shape), outputs[0].dtype)
    forward(attrs, ctx, plain, [OpReqType.WRITE], [out])
    assign(outputs[0], req[0], to_blocks(xp, out, attrs.block))


def _conv_inplace(attrs):
    """The result may be written over the sum operand, as ``_sg_mkldnn_conv``'s."""
    return get_op(FUSED_OP).inplace_pairs(attrs)


_ACTS = (None, ("Activation", {"act_type": "relu"}), ("clip", {"a_min": 0, "a_max": 6}),
         ("Activation", {"act_type": "tanh"}))


def _conv_sample(draw):
    d = Draw(draw)
    block = d.choice((8, 16), "block")
    channels = block * d.int(1, 2)
    depthwise = d.bool("depthwise")
    filters = channels if depthwise else block * d.int(1, 2)
    kernel = d.choice((1, 3), "kernel")
    size = kernel + d.int(0, 3)
    conv = {"kernel": (kernel, kernel), "num_filter": filters, "no_bias": d.bool("no_bias"),
            "num_group": channels if depthwise else 1, "pad": (d.int(0, kernel // 2),) * 2,
            "stride": (d.int(1, 2),) * 2}
    with_bn, with_sum = d.bool("with_bn"), d.bool("with_sum")
    act = d.choice(_ACTS, "act")
    postsum = d.choice(_ACTS, "postsum_act") if with_sum else None
    batch_norm = {"eps": 1e-3, "fix_gamma": d.bool("fix_gamma")} if with_bn else None
    params = {"subgraphs": subgraph_json(conv, batch_norm=batch_norm, act=act,
                                         with_sum=with_sum, postsum_act=postsum),
              "with_bn": with_bn, "with_act": act is not None, "with_sum": with_sum,
              "with_postsum_act": postsum is not None, "block": block}
    batch = d.int(1, 2)
    inputs = [to_blocks(np, d.uniform((batch, channels, size, size)), block),
              d.uniform((filters, channels // conv["num_group"], kernel, kernel))]
    if not conv["no_bias"]:
        inputs.append(d.uniform((filters,)))
    if with_bn:
        inputs += [d.uniform((filters,), 0.5, 1.5), d.uniform((filters,)),
                   d.uniform((filters,)), d.uniform((filters,), 0.5, 2.0)]
    if with_sum:
        side = (size + 2 * conv["pad"][0] - kernel) // conv["stride"][0] + 1
        inputs.append(to_blocks(np, d.uniform((batch, filters, side, side)), block))
    return Case(inputs, params)


def _conv_reference(params, *inputs):
    plain_params = {k: v for k, v in params.items() if k != "block"}
    parts = node_parts(FusedConvParam.parse(FUSED_OP, plain_params))
    blocked = _blocked_positions(parts)
    plain = [np.moveaxis(a, -1, 2).reshape(_onednn.plain_shape(a.shape)) if i in blocked
             else a for i, a in enumerate(inputs)]
    y = reference(plain_params, *plain)
    n, c, *sizes = y.shape
    block = int(params["block"])
    return np.moveaxis(y.reshape(n, c // block, block, *sizes), 2, -1)


# -- the operators -------------------------------------------------------------------------------
OPS = [
    Op(TO_BLOCKS, params=ChannelBlockParam, num_inputs=1, input_names=["data"],
       infer_shape=_infer_change(TO_BLOCKS, True), compute={XP: _change(True)},
       gradient=Gradient(FROM_BLOCKS, uses=("out_grad",)),
       domain=Domain(_change_sample(True), _change_reference(True)),
       description="Plain ``(N, C, *spatial)`` data (C a multiple of ``block``) in channel "
                   "blocks: shape ``(N, C/block, *spatial, block)``, element "
                   "``[n, c // block, ..., c % block]`` the data's ``[n, c, ...]``."),
    Op(FROM_BLOCKS, params=ChannelBlockParam, num_inputs=1, input_names=["data"],
       infer_shape=_infer_change(FROM_BLOCKS, False), compute={XP: _change(False)},
       gradient=Gradient(TO_BLOCKS, uses=("out_grad",)),
       domain=Domain(_change_sample(False), _change_reference(False)),
       description="Data in channel blocks ``(N, C/block, *spatial, block)`` back in the "
                   "plain layout ``(N, C, *spatial)``."),
    Op(CONV, params=BlockedFusedConvParam,
       num_inputs=lambda attrs: len(node_parts(attrs).names),
       input_names=lambda attrs: node_parts(attrs).names,
       mutate_inputs=lambda attrs: get_op(FUSED_OP).mutated_inputs(attrs),
       infer_shape=_conv_infer_shape, infer_type=_conv_infer_type,
       compute={XP: _conv_forward}, inplace=_conv_inplace,
       gradient=NoGradient("a fused convolution is for inference (it stands for "
                           "_sg_mkldnn_conv, which has no gradient)"),
       domain=Domain(_conv_sample, reference=_conv_reference,
                     dtypes=("float32", "float64"), rtol=1e-5, atol=1e-6),
       description="``_sg_mkldnn_conv`` (float) on channel-blocked data: the ``data``, the "
                   "``sum`` operand and the output are ``(N, C/block, H, W, block)`` arrays, "
                   "the filters and the other parameters plain.  For inference graphs (the "
                   "graph pass ``inference_layout`` writes it).  No gradient."),
]
