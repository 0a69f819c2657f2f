"""``_sg_mkldnn_conv``: MXNet's fused convolution (``subgraph/mkldnn/mkldnn_conv.cc``),
a convolution with a batch norm, an activation, a sum and a second activation folded
into one node, float or quantized; the node MXNet's MKL-DNN graph pass writes into the
quantized models it exports (GluonCV's ``*_int8`` models).

Inputs, in MXNet's order: ``data``, ``weight``, ``bias`` (unless the convolution has
none), ``gamma``, ``beta``, ``mean``, ``var`` (``with_bn``; mean and var are auxiliary
states), ``sum`` (``with_sum``), then for a quantized node ``data_min``, ``data_max`` and
(``with_sum``) ``sum_min``, ``sum_max``.  The batch norm is folded into the weight and
bias (``alpha = gamma / sqrt(var + eps)``, ``w * alpha``, ``beta + alpha (b - mean)``);
then ``postsum_act(act(conv(data, w) + b) + sum)``.

Quantized (as MKL-DNN computes it): the data is int8 or uint8 standing for
``(data_min, data_max)``, at ``scale = 127.5 (or 255.5) / max(|min|, |max|)`` (MXNet's
steps); each output channel's folded weights are rounded to int8 at ``127.5 / max |w_c|``
(saturated) and the bias to int32 at the product of the two scales; the integer
convolution is exact (in float32 when its partial sums are bounded below 2**24, else in
float64; MKL-DNN's own may saturate 16-bit partial sums on processors without VNNI).  The
result, with the activations and the (dequantized) sum applied, is rounded to the
calibrated range ``(min_calib_range, max_calib_range)``: uint8 when the last activation is
non-negative (ReLU, sigmoid, softrelu, bounded ReLU), int8 otherwise; the range is the
second and third outputs.  With a sum, MXNet writes the result into the sum operand's
memory: it saturates to the operand's type and is read as the output's (an int8 operand
caps a uint8 output at 127), which this operator reproduces.  A quantized node needs the
calibrated range (MXNet's int32 output without one is not provided).  No gradient: the
fused node is for inference, as in MXNet.

Float32 on the CPU with oneDNN: one oneDNN convolution with the bias, the activations and
the sum as post-ops, the sum computed in place over its operand where the executor allows.
In a bound graph the folded weights, in the layout oneDNN picks, are computed once and
again only after a parameter was written (an optimizer step, ``set_params``): the node
keeps them in its state, keyed by the engine versions of its parameter inputs.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from dagnet import DTypeError, OperatorError, ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    NoGradient,
    Op,
    OpReqType,
    Params,
    assign,
    get_op,
)

from .._draw import Draw
from ..contrib.quantize import MKLDNN_LEVELS
from . import _onednn
from ._common import derived_once, threads_for
from ._conv_fusion import OP, Fusion, activation_of, fusion_of, subgraph_json
from ._conv_kernels import conv_forward
from .convolution import conv_geometry

__all__ = ["OPS", "OP", "FusedConvParam", "subgraph_json", "activation_of", "node_parts",
           "fold_batch_norm", "forward", "onednn_forward", "replayed", "reference"]

_FLOAT = np.dtype(np.float32)
_LEVELS = MKLDNN_LEVELS  # the steps a range stands for: 127.5 (int8), 255.5 (uint8)
_INT32_MAX = float(2**31 - 1)
_BOUNDS = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255)}


def _shape_error(message: str) -> ShapeError:
    return ShapeError(f"operator {OP!r}: {message}")


def _put(out, req: OpReqType, value) -> None:
    """Write ``value`` into ``out`` per ``req``, cast to ``out``'s dtype first."""
    if req is not OpReqType.NULL:
        assign(out, req, value.astype(out.dtype) if value.dtype != out.dtype else value)


class FusedConvParam(Params):
    subgraphs = Field(str, REQUIRED, "the fused graph: a JSON list of one symbol JSON graph "
                                     "(Convolution, BatchNorm, activation, elemwise_add)")
    quantized = Field(bool, False, "int8/uint8 data and output (see the operator's notes)")
    with_bn = Field(bool, False, "a BatchNorm follows the convolution")
    with_act = Field(bool, False, "an activation follows (before the sum)")
    with_sum = Field(bool, False, "a second operand is added")
    with_postsum_act = Field(bool, False, "an activation follows the sum")
    with_relu = Field(bool, False, "MXNet 1.5's name of with_act")
    with_postsum_relu = Field(bool, False, "MXNet 1.5's name of with_postsum_act")
    min_calib_range = Field(float, None, "the calibrated minimum of the quantized output")
    max_calib_range = Field(float, None, "the calibrated maximum of the quantized output")


class _Parts:
    """The node's fusion, checked against its flags, and its input positions."""

    def __init__(self, attrs: FusedConvParam):
        fusion: Fusion = fusion_of(attrs.subgraphs)
        with_act = attrs.with_act or attrs.with_relu
        with_postsum_act = attrs.with_postsum_act or attrs.with_postsum_relu
        checks = (("with_bn", attrs.with_bn, fusion.batch_norm is not None),
                  ("with_sum", attrs.with_sum, fusion.has_sum),
                  ("with_act", with_act, fusion.act is not None),
                  ("with_postsum_act", with_postsum_act, fusion.postsum_act is not None))
        for flag, given, found in checks:
            if given != found:
                raise _shape_error(f"{flag}={given} but the subgraph "
                                        f"{'has' if found else 'has no'} that part")
        self.fusion = fusion
        names = ["data", "weight"] + ([] if fusion.conv.no_bias else ["bias"])
        if attrs.with_bn:
            names += ["gamma", "beta", "mean", "var"]
        if attrs.with_sum:
            names.append("sum")
        if attrs.quantized:
            names += ["data_min", "data_max"]
            if attrs.with_sum:
                names += ["sum_min", "sum_max"]
        self.names = names
        self.index = {name: i for i, name in enumerate(names)}
        # the parameter inputs the folded weights are made of
        self.parameters = [self.index[name] for name in ("weight", "bias", "gamma", "beta",
                                                         "mean", "var") if name in self.index]
        last = fusion.postsum_act if attrs.with_sum else fusion.act
        self.unsigned = last is not None and last.non_negative


def node_parts(attrs: FusedConvParam, ctx=None) -> _Parts:
    """The node's fusion (checked against its flags) and its inputs: ``names`` in order,
    ``index`` by name, ``parameters`` (the positions the folded weights are made of);
    given a running kernel's ``ctx``, parsed once per bound node (kept in its state)."""
    state = None if ctx is None else ctx.state
    parts = None if state is None else state.cache.get(_Parts)
    if parts is None:
        parts = _Parts(attrs)
        if state is not None:
            state.cache[_Parts] = parts
    return parts


def _input_names(attrs):
    return node_parts(attrs).names


def _aux(attrs):
    parts = node_parts(attrs)
    return [parts.index["mean"], parts.index["var"]] if attrs.with_bn else []


def _inplace(attrs):
    """A float node may write its result over the sum operand (MXNet's oneDNN kernel adds
    into that memory)."""
    return [] if attrs.quantized or not attrs.with_sum else [(node_parts(attrs).index["sum"], 0)]


def _num_outputs(attrs):
    return 3 if attrs.quantized else 1


def _output_names(attrs):
    return ["output", "output_min", "output_max"] if attrs.quantized else ["output"]


def _infer_shape(attrs, ins, outs):
    parts = node_parts(attrs)
    ins, outs = list(ins), list(outs)
    at = parts.index
    conv_ins = [ins[at["data"]], ins[at["weight"]]]
    if "bias" in at:
        conv_ins.append(ins[at["bias"]])
    conv_ins, conv_outs = get_op("Convolution").shapes(parts.fusion.conv, conv_ins, outs[:1])
    ins[at["data"]], ins[at["weight"]] = conv_ins[0], conv_ins[1]
    if "bias" in at:
        ins[at["bias"]] = conv_ins[2]
    outs[0] = conv_outs[0]
    channels = (parts.fusion.conv.num_filter,)
    for name in ("gamma", "beta", "mean", "var"):
        if name in at:
            ins[at[name]] = channels
    if "sum" in at:
        if ins[at["sum"]] is not None and outs[0] is not None and \
                tuple(ins[at["sum"]]) != tuple(outs[0]):
            raise _shape_error(f"the sum operand has shape {tuple(ins[at['sum']])} but the "
                                    f"convolution gives {tuple(outs[0])}")
        ins[at["sum"]] = ins[at["sum"]] or outs[0]
    for name in ("data_min", "data_max", "sum_min", "sum_max"):
        if name in at:
            ins[at[name]] = (1,)
    if attrs.quantized:
        outs[1] = outs[2] = (1,)
    return ins, outs


def _quantized_type(name: str, given) -> np.dtype | None:
    if given is not None and np.dtype(given) not in _LEVELS:
        raise DTypeError(f"operator {OP!r}: a quantized node's {name} must be int8 or uint8, "
                         f"got {np.dtype(given).name}")
    return given


def _infer_type(attrs, ins, outs):
    parts = node_parts(attrs)
    ins = list(ins)
    if not attrs.quantized:
        known = next((np.dtype(t) for t in [*ins, *outs] if t is not None), _FLOAT)
        return [known] * len(ins), [known]
    if attrs.min_calib_range is None or attrs.max_calib_range is None:
        raise DTypeError(f"operator {OP!r}: a quantized node needs min_calib_range and "
                         f"max_calib_range (its int8/uint8 output range); calibrate the "
                         f"model when quantizing it (MXNet's int32 output is not provided)")
    types = []
    for name, given in zip(parts.names, ins):
        if name in ("data", "sum"):
            types.append(_quantized_type(name, given))
        else:
            types.append(given if given is not None and np.dtype(given).kind == "f"
                         else _FLOAT)
    out = np.dtype(np.uint8) if parts.unsigned else np.dtype(np.int8)
    return types, [out, _FLOAT, _FLOAT]


def _scale(levels: float, lo: float, hi: float) -> float:
    """The integers per unit of a range, as MXNet's ``GetQuantizeScale`` (a huge scale for
    an empty range)."""
    real = max(abs(lo), abs(hi))
    return levels / real if real else _INT32_MAX


def _scalar(array) -> float:
    return float(array.reshape(-1)[0])


def fold_batch_norm(xp, parts: _Parts, arrays: dict):
    """The weight and bias with the batch norm folded in (the bias None when there is
    neither a bias nor a batch norm)."""
    weight = arrays["weight"]
    bias = arrays.get("bias")
    bn = parts.fusion.batch_norm
    if bn is None:
        return weight, bias
    gamma = xp.ones_like(arrays["gamma"]) if bn.fix_gamma else arrays["gamma"]
    alpha = (gamma / xp.sqrt(arrays["var"] + bn.eps)).astype(weight.dtype)
    folded = weight * alpha.reshape((-1,) + (1,) * (weight.ndim - 1))
    shifted = -arrays["mean"] if bias is None else bias - arrays["mean"]
    return folded, (arrays["beta"] + alpha * shifted).astype(weight.dtype)


def _channel(vector, ndim: int):
    return vector.reshape((1, -1) + (1,) * (ndim - 2))


def _quantized_conv(xp, attrs, arrays, weight, bias, geometry):
    """The convolution of int8/uint8 data as MKL-DNN computes it, in float64 (exact for
    the integer products and sums): its float value."""
    data = arrays["data"]
    lo, hi = _scalar(arrays["data_min"]), _scalar(arrays["data_max"])
    if data.dtype == np.uint8 and lo < 0:
        raise OperatorError(f"operator {OP!r}: uint8 data cannot stand for a range below zero "
                               f"({lo}, {hi}); quantize the data to int8")
    data_scale = _scale(_LEVELS[data.dtype], lo, hi)
    flat = weight.reshape(weight.shape[0], -1).astype(np.float64)
    largest = xp.maximum(xp.abs(flat.min(axis=1)), xp.abs(flat.max(axis=1)))
    scales = xp.where(largest > 0, 127.5 / xp.where(largest > 0, largest, 1.0), _INT32_MAX)
    if bias is not None:  # keep the int32 bias clear of overflow, as MXNet does
        b = bias.astype(np.float64)
        limit = xp.where(b > 0, _INT32_MAX / 2, -(_INT32_MAX + 1) / 2) / \
            xp.where(b != 0, b, 1.0) / data_scale
        scales = xp.where(b != 0, xp.minimum(scales, limit), scales)
    shape = (-1,) + (1,) * (weight.ndim - 1)
    q_weight = xp.clip(xp.rint(weight.astype(np.float64) * scales.reshape(shape)), -128, 127)
    _, stride, dilate, pad = geometry
    # Every partial sum is at most max|data| * sum|w_c| in magnitude; below 2**24 float32
    # holds them all exactly, and the (much faster) float32 convolution is exact too.
    largest_sum = float(xp.abs(q_weight).reshape(q_weight.shape[0], -1).sum(axis=1).max())
    exact_in_float32 = float(xp.abs(data.astype(np.float64)).max()) * largest_sum < 2.0 ** 24
    dtype = np.float32 if exact_in_float32 else np.float64
    acc = conv_forward(xp, data.astype(dtype), q_weight.astype(dtype), stride, dilate, pad,
                       attrs.num_group).astype(np.float64)
    if bias is not None:
        q_bias = xp.clip(xp.rint(bias.astype(np.float64) * data_scale * scales),
                         -(_INT32_MAX + 1), _INT32_MAX)
        acc += _channel(q_bias, acc.ndim)
    return acc / _channel(data_scale * scales, acc.ndim)


def _saturate(xp, q, out_type: np.dtype, operand):
    """Rounded results ``q`` as the output's integers.  With a sum, MXNet computes into the
    sum operand's memory, so the result saturates to the operand's type and its bits are
    then read as the output's: an int8 operand caps a uint8 output at 127, as MXNet
    1.9.1's CPU build gives."""
    if operand is None or operand.dtype == out_type:
        return xp.clip(q, *_BOUNDS[out_type]).astype(out_type)
    held = xp.clip(q, *_BOUNDS[operand.dtype]).astype(operand.dtype)
    return held.view(out_type)


class _OneDNNPlan(NamedTuple):
    """How the oneDNN path runs a node: the kernel, its prepared weights (``staged``: in
    the kernel's layout) and bias, and the steps after the convolution, the first
    ``fused`` of them the kernel's post-ops and the rest applied in place after it."""

    kernel: Any
    weight: np.ndarray
    staged: bool
    bias: np.ndarray | None
    steps: list
    fused: int


def _onednn_plan(lib, parts: _Parts, arrays: dict, threads: int, blocked: int
                 ) -> _OneDNNPlan | None:
    """The kernel and the folded, reordered weights for ``arrays`` (the data and output
    channel-blocked when ``blocked``); None where oneDNN has no kernel."""
    fusion = parts.fusion
    data, weight = arrays["data"], arrays["weight"]
    x_shape = _onednn.plain_shape(data.shape) if blocked else data.shape
    _, stride, dilate, pad = conv_geometry(OP, fusion.conv, len(x_shape))
    groups = fusion.conv.num_group
    # the kernel takes the steps as post-ops up to the first activation it would apply
    # slowly (see fuses_eltwise); numpy applies the rest
    steps = [step for step in (("act", fusion.act), ("sum", None) if fusion.has_sum else None,
                               ("act", fusion.postsum_act))
             if step is not None and step != ("act", None)]
    fused = len(steps) if blocked or _onednn.fuses_eltwise(x_shape, weight.shape, pad, groups) \
        else \
        next((i for i, step in enumerate(steps) if step[0] == "act"), len(steps))
    post_ops = tuple(("sum",) if kind == "sum" else act.post_op()
                     for kind, act in steps[:fused])
    with_bias = "bias" in arrays or fusion.batch_norm is not None
    kernel = _onednn.inference_kernel(lib, x_shape, weight.shape, stride, dilate, pad,
                                      groups, threads, with_bias, post_ops, blocked)
    if kernel is None:
        return None
    w, b = fold_batch_norm(np, parts, arrays)
    grouped = w.reshape((groups, w.shape[0] // groups, *w.shape[1:])) if groups > 1 else w
    prepared, staged = kernel.prepared("weights", grouped, threads)
    return _OneDNNPlan(kernel, prepared, staged,
                       None if b is None else np.ascontiguousarray(b, np.float32), steps, fused)


def onednn_forward(ctx, parts: _Parts, arrays: dict, req: OpReqType, out, blocked: int = 0,
                   inputs: list | None = None) -> bool:
    """The float32 node as one oneDNN convolution with the bias and the activations and
    sum as post-ops, its weights folded and reordered once per set of parameters (while
    the node's parameter inputs are not written, see ``derived_once``); False where
    oneDNN cannot run it (then numpy's kernel must).  ``arrays``: the node's inputs by
    name (see :func:`node_parts`); ``blocked``: 0, or the channels per block of the data,
    the sum operand and ``out`` (4-D data as ``(N, C/block, H, W, block)`` arrays).

    Given ``inputs``, the kernel's list of input arrays, a bound node keeps what it ran
    (see :func:`replayed`)."""
    data = arrays["data"]
    lib = _onednn.library_for(ctx.xp, *arrays.values(), out)
    if lib is None or req not in (OpReqType.WRITE, OpReqType.INPLACE) or \
            not out.flags.c_contiguous or data.ndim not in ((5,) if blocked else (3, 4, 5)):
        return False
    threads = threads_for(np)
    plan = derived_once(ctx, parts.parameters,
                        lambda: _onednn_plan(lib, parts, arrays, threads, blocked),
                        threads, data.shape)
    if plan is None:
        return False
    operand = arrays.get("sum")
    src = data if data.flags.c_contiguous else np.ascontiguousarray(data)
    run, in_place = _arguments(plan, src, out, operand)
    action = _Run(plan, run, threads, operand, ("sum", None) in plan.steps[:plan.fused],
                  in_place)
    action.go(out)
    # kept only on the arrays it was given, which the replay holds: its addresses stay valid
    if inputs is not None and ctx.state is not None and src is data:
        replay = ctx.state.cache[_Replay] = _Replay(
            inputs, out, req, lib, parts.parameters, ctx.state.versions(parts.parameters),
            action)
        _offer(ctx.state, replay)
    return True


class _Run(NamedTuple):
    """One run of a node's oneDNN plan on given arrays (``run``: the kernel's arguments as
    addresses; ``summed``: the sum is a post-op; ``in_place``: the output is the sum's
    operand)."""

    plan: _OneDNNPlan
    run: dict
    threads: int
    operand: Any
    summed: bool
    in_place: bool

    def go(self, out) -> None:
        plan, operand = self.plan, self.operand
        if self.summed and not self.in_place:
            np.copyto(out, operand)  # the sum post-op adds to what the output holds
        elif self.in_place and not self.summed:
            operand = operand.copy()  # the convolution overwrites it before the sum
        plan.kernel.run(self.run, self.threads, staged=("weights",) if plan.staged else ())
        for kind, act in plan.steps[plan.fused:]:
            if kind == "sum":
                out += operand
            else:
                act.apply_in_place(np, out)

    def calls(self, out) -> tuple[Any, list]:
        """What :meth:`go` does, as calls of no arguments (see ``NodeState.offer_replay``):
        the kernel's own (a ``KernelReplay``, made for the running thread) and the list."""
        plan, operand = self.plan, self.operand
        before, after = [], []
        if self.summed and not self.in_place:
            before.append(functools.partial(_copy, out, operand))
        elif self.in_place and not self.summed:
            saved = np.empty_like(operand)  # kept: the convolution overwrites the operand
            before.append(functools.partial(_copy, saved, operand))
            operand = saved
        kernel = _onednn.KernelReplay(plan.kernel, self.run, self.threads,
                                      ("weights",) if plan.staged else ())
        for kind, act in plan.steps[plan.fused:]:
            after.append(functools.partial(_add, out, operand) if kind == "sum" else
                         functools.partial(act.apply_in_place, np, out))
        return kernel, [*before, *kernel.calls, *after]


def _copy(target, source) -> None:
    np.copyto(target, source)


def _add(out, operand) -> None:
    np.add(out, operand, out=out)


class _Replay(NamedTuple):
    """A bound node's last oneDNN run (see :func:`replayed`): the kernel's input list and
    output, the write request, the library, the parameter inputs' positions and their
    versions then, and the run."""

    inputs: list
    out: Any
    req: OpReqType
    lib: Any
    parameters: list
    versions: tuple
    action: _Run


def replayed(ctx, inputs: list, req: OpReqType, out) -> bool:
    """Run a bound node's oneDNN convolution again as it last ran, skipping the checks and
    look-ups that gave it, when nothing they depend on has changed: the same input list
    and output (an executor passes its own at every call), the same request, oneDNN still
    on, the same kernel threads, and no parameter input written since (the weights folded
    then still hold).  False, having done nothing, otherwise.  The run is offered to the
    executor again (see :func:`_offer`)."""
    state = ctx.state
    replay = None if state is None else state.cache.get(_Replay)
    if replay is None or replay.inputs is not inputs or replay.out is not out or \
            replay.req is not req or _onednn.library() is not replay.lib or \
            threads_for(np) != replay.action.threads or \
            state.versions(replay.parameters) != replay.versions:
        return False
    replay.action.go(out)
    _offer(state, replay)
    return True


def _offer(state, replay: _Replay) -> None:
    """Offer the executor ``replay``'s run as oneDNN's calls, made for the running thread
    (see ``_onednn.offer_for_thread``): they also hold while the node's parameter inputs
    are unwritten, and are kept for as long as the run is the node's."""
    kept = state.cache.get(_onednn.KernelReplay)  # (the run, {scope: what was offered})
    if kept is None or kept[0] is not replay:
        kept = state.cache[_onednn.KernelReplay] = (replay, {})

    def make(_scope):
        kernel, calls = replay.action.calls(replay.out)
        return calls, kernel.check

    _onednn.offer_for_thread(state, kept[1], replay.parameters, make)


def _arguments(plan: _OneDNNPlan, src, out, operand) -> tuple[dict, bool]:
    """The kernel's arguments as addresses, and whether the sum ``operand`` is ``out``
    itself."""
    run = {"src": src.ctypes.data, "weights": plan.weight.ctypes.data, "dst": out.ctypes.data}
    if plan.bias is not None:
        run["bias"] = plan.bias.ctypes.data
    return run, operand is not None and operand.ctypes.data == run["dst"]


def forward(attrs, ctx, inputs, req, outputs):
    """The operator's kernel: oneDNN's fused convolution for float32 on numpy, else the
    layers one after another."""
    if not attrs.quantized and replayed(ctx, inputs, req[0], outputs[0]):
        return
    xp = ctx.xp
    parts = node_parts(attrs, ctx)
    fusion = parts.fusion
    arrays = dict(zip(parts.names, inputs))
    if not attrs.quantized and onednn_forward(ctx, parts, arrays, req[0], outputs[0],
                                              inputs=inputs):
        return
    data = arrays["data"]
    geometry = conv_geometry(OP, fusion.conv, data.ndim)
    weight, bias = fold_batch_norm(xp, parts, arrays)
    if attrs.quantized:
        y = _quantized_conv(xp, fusion.conv, arrays, weight, bias, geometry)
    else:
        _, stride, dilate, pad = geometry
        y = conv_forward(xp, data, weight.astype(data.dtype), stride, dilate, pad,
                         fusion.conv.num_group)
        if bias is not None:
            y = y + _channel(bias.astype(y.dtype), y.ndim)
    if fusion.act is not None:
        y = fusion.act.apply(xp, y)
    if attrs.with_sum:
        operand = arrays["sum"]
        if attrs.quantized:
            levels = _LEVELS[operand.dtype]
            operand = operand.astype(np.float64) / _scale(
                levels, _scalar(arrays["sum_min"]), _scalar(arrays["sum_max"]))
        y = y + operand
    if fusion.postsum_act is not None:
        y = fusion.postsum_act.apply(xp, y)
    if not attrs.quantized:
        _put(outputs[0], req[0], y)
        return
    lo, hi = attrs.min_calib_range, attrs.max_calib_range
    out_type = np.dtype(np.uint8) if parts.unsigned else np.dtype(np.int8)
    q = xp.rint(y * _scale(_LEVELS[out_type], lo, hi))
    _put(outputs[0], req[0], _saturate(xp, q, out_type, arrays.get("sum")))
    _put(outputs[1], req[1], xp.full((1,), lo, np.float32))
    _put(outputs[2], req[2], xp.full((1,), hi, np.float32))


# -- the conformance suite's cases --------------------------------------------------------
_ACTS = (None, ("Activation", {"act_type": "relu"}), ("Activation", {"act_type": "tanh"}),
         ("LeakyReLU", {"act_type": "leaky", "slope": 0.1}), ("clip", {"a_min": 0, "a_max": 1}))


def _quantize(d: Draw, shape, unsigned: bool):
    """Random integers of ``shape`` and the range they stand for."""
    hi = d.float(0.5, 2.0)
    if unsigned:
        return d.rng.integers(0, 256, size=shape).astype(np.uint8), 0.0, hi
    return d.rng.integers(-127, 128, size=shape).astype(np.int8), -hi, hi


def _sample(draw):
    d = Draw(draw)
    quantized = d.bool("quantized")
    channels, filters = d.int(1, 3), d.int(1, 3)
    kernel = d.int(1, 3)
    size = kernel + d.int(0, 3)
    conv = {"kernel": (kernel, kernel), "num_filter": filters, "no_bias": d.bool("no_bias"),
            "pad": (d.int(0, 1),) * 2, "stride": (d.int(1, 2),) * 2}
    with_bn, with_sum = d.bool("with_bn"), d.bool("with_sum")
    act, postsum = d.choice(_ACTS, "act"), d.choice(_ACTS, "postsum_act")
    if not with_sum:
        postsum = None
    batch_norm = {"eps": 1e-3, "fix_gamma": d.bool("fix_gamma")} if with_bn else None
    params = {"subgraphs": subgraph_json(conv, batch_norm=batch_norm, act=act,
                                         with_sum=with_sum, postsum_act=postsum),
              "quantized": quantized, "with_bn": with_bn, "with_act": act is not None,
              "with_sum": with_sum, "with_postsum_act": postsum is not None}
    shape = (d.int(1, 2), channels, size, size)
    if quantized:
        data, lo, hi = _quantize(d, shape, d.bool("unsigned data"))
    else:
        data = d.uniform(shape)
    inputs = [data, d.uniform((filters, channels, kernel, kernel))]
    if not conv["no_bias"]:
        inputs.append(d.uniform((filters,)))
    if with_bn:
        inputs += [d.uniform((filters,), 0.5, 1.5), d.uniform((filters,)),
                   d.uniform((filters,)), d.uniform((filters,), 0.5, 2.0)]
    attrs = FusedConvParam.parse(OP, params)
    side = (size + 2 * conv["pad"][0] - kernel) // conv["stride"][0] + 1
    out_shape = (shape[0], filters, side, side)
    if with_sum:
        if quantized:
            operand, sum_lo, sum_hi = _quantize(d, out_shape, d.bool("unsigned sum"))
            inputs.append(operand)
        else:
            inputs.append(d.uniform(out_shape))
    if quantized:
        inputs += [np.array([lo], np.float32), np.array([hi], np.float32)]
        if with_sum:
            inputs += [np.array([sum_lo], np.float32), np.array([sum_hi], np.float32)]
        params["min_calib_range"] = 0.0 if node_parts(attrs).unsigned else -d.float(1.0, 4.0)
        params["max_calib_range"] = d.float(1.0, 4.0)
    return Case(inputs, params)


def _reference_conv(x, w, stride, pad, groups=1):
    """A direct 2-D cross-correlation, window by window, in float64; with ``groups``, of
    each group of channels with its group of filters."""
    if groups > 1:
        c, f = x.shape[1] // groups, w.shape[0] // groups
        return np.concatenate([_reference_conv(x[:, g * c:(g + 1) * c], w[g * f:(g + 1) * f],
                                               stride, pad) for g in range(groups)], axis=1)
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0],) * 2, (pad[1],) * 2))
    n, _, height, width = x.shape
    f, _, kh, kw = w.shape
    rows, cols = (height - kh) // stride[0] + 1, (width - kw) // stride[1] + 1
    out = np.zeros((n, f, rows, cols))
    for i in range(rows):
        for j in range(cols):
            patch = x[:, :, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
            out[:, :, i, j] = np.einsum("nchw,fchw->nf", patch, w.astype(np.float64))
    return out


def reference(params, *inputs):
    """The conformance suite's reference: the layers one after another in float64, a
    direct convolution window by window."""
    attrs = FusedConvParam.parse(OP, params)
    parts = node_parts(attrs)
    fusion = parts.fusion
    a = dict(zip(parts.names, inputs))
    w, b = a["weight"], a.get("bias")
    if fusion.batch_norm is not None:  # folded in the weight's dtype, as the kernel folds
        gamma = np.ones_like(a["gamma"]) if fusion.batch_norm.fix_gamma else a["gamma"]
        alpha = (gamma / np.sqrt(a["var"] + fusion.batch_norm.eps)).astype(w.dtype)
        w = w * alpha[:, None, None, None]
        b = (a["beta"] + alpha * (-a["mean"] if b is None else b - a["mean"])).astype(w.dtype)
    w = w.astype(np.float64)
    b = None if b is None else b.astype(np.float64)
    stride, pad = fusion.conv.stride, fusion.conv.pad
    if attrs.quantized:
        x = a["data"]
        lo, hi = float(a["data_min"][0]), float(a["data_max"][0])
        ds = _LEVELS[x.dtype] / max(abs(lo), abs(hi))
        ws = 127.5 / np.abs(w).reshape(len(w), -1).max(axis=1)
        if b is not None:
            limit = np.where(b > 0, _INT32_MAX / 2, -(_INT32_MAX + 1) / 2) / \
                np.where(b != 0, b, 1.0) / ds
            ws = np.where(b != 0, np.minimum(ws, limit), ws)
        y = _reference_conv(x, np.clip(np.rint(w * ws[:, None, None, None]), -128, 127),
                            stride, pad, fusion.conv.num_group)
        if b is not None:
            y += np.rint(b * ds * ws)[None, :, None, None]
        y = y / (ds * ws)[None, :, None, None]
    else:
        y = _reference_conv(a["data"], w, stride, pad, fusion.conv.num_group)
        if b is not None:
            y = y + b[None, :, None, None]
    if fusion.act is not None:
        y = fusion.act.apply(np, y)
    if attrs.with_sum:
        s = a["sum"].astype(np.float64)
        if attrs.quantized:
            s = s / (_LEVELS[a["sum"].dtype] / max(abs(float(a["sum_min"][0])),
                                                   abs(float(a["sum_max"][0]))))
        y = y + s
    if fusion.postsum_act is not None:
        y = fusion.postsum_act.apply(np, y)
    if not attrs.quantized:
        return y.astype(a["data"].dtype)
    levels = 255.5 if parts.unsigned else 127.5
    scale = levels / max(abs(attrs.min_calib_range), abs(attrs.max_calib_range))
    out_type = np.uint8 if parts.unsigned else np.int8
    held = a["sum"].dtype.type if attrs.with_sum else out_type  # computed in the sum's memory
    info = np.iinfo(held)
    q = np.clip(np.rint(y * scale), info.min, info.max).astype(held).view(out_type)
    return [q, np.array([attrs.min_calib_range], np.float32),
            np.array([attrs.max_calib_range], np.float32)]


OPS = [
    Op(OP, params=FusedConvParam, num_inputs=lambda attrs: len(_input_names(attrs)),
       num_outputs=_num_outputs, input_names=_input_names, output_names=_output_names,
       mutate_inputs=_aux, infer_shape=_infer_shape, infer_type=_infer_type,
       compute={XP: forward}, inplace=_inplace,
       gradient=NoGradient("a fused convolution is for inference (MXNet registers no "
                           "gradient for _sg_mkldnn_conv)"),
       domain=Domain(_sample, reference=reference, dtypes=("float32", "float64"),
                     rtol=1e-6, atol=1e-9),
       description="Fused convolution subgraph (MXNet's MKL-DNN graph pass): convolution, "
                   "optional batch norm folded into it, activation, sum and activation after "
                   "the sum, in float or quantized (int8/uint8 data, calibrated int8/uint8 "
                   "output and its range).  No gradient."),
]
