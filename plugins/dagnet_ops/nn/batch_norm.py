"""``BatchNorm``: batch normalization with moving statistics as auxiliary states."""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    Op,
    OpReqType,
    Params,
    assign,
    merge_dtype,
)

from .. import _jit
from .._draw import Draw
from ._common import each, sample_spans, set_shape, threads_for

__all__ = ["OPS"]

_INPUTS = ["data", "gamma", "beta", "moving_mean", "moving_var"]
_OUTPUTS = ["output", "mean", "var"]


class BatchNormParam(Params):
    eps = Field(float, 1e-3, "added to the variance before the square root", low=0.0)
    momentum = Field(float, 0.9, "moving = moving * momentum + batch * (1 - momentum)")
    fix_gamma = Field(bool, True, "use gamma = 1 (and give it no gradient)")
    use_global_stats = Field(bool, False, "normalize with the moving statistics even in training")
    output_mean_var = Field(bool, False, "also output the mean and the inverse standard deviation")
    axis = Field(int, 1, "the channel axis")
    cudnn_off = Field(bool, False, "accepted for MXNet compatibility")
    min_calib_range = Field(float, None, "accepted for MXNet compatibility (quantization)")
    max_calib_range = Field(float, None, "accepted for MXNet compatibility (quantization)")


def _channel_axis(attrs, ndim, op="BatchNorm"):
    if not -ndim <= attrs.axis < ndim:
        raise ShapeError(f"operator {op!r}: axis={attrs.axis} is out of range for {ndim}-D data")
    return attrs.axis % ndim


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    set_shape(ins, 0, outs[0], "BatchNorm", _INPUTS)
    data = ins[0]
    channels = None
    for shape in ins[1:] + outs[1:]:
        if shape is not None and len(shape) != 1:
            raise ShapeError(f"operator 'BatchNorm': gamma, beta, the moving statistics, mean "
                             f"and var hold one value per channel, got shape {tuple(shape)}")
    if data is not None:
        channels = (data[_channel_axis(attrs, len(data))],)
        set_shape(outs, 0, data, "BatchNorm", _OUTPUTS, "output")
    for shape in ins[1:] + outs[1:]:
        if channels is None and shape is not None:
            channels = tuple(shape)
    for i in range(1, 5):
        set_shape(ins, i, channels, "BatchNorm", _INPUTS)
    for i in range(1, 3):
        set_shape(outs, i, channels, "BatchNorm", _OUTPUTS, "output")
    return ins, outs


def _infer_type(attrs, ins, outs):
    data = merge_dtype(ins[0], outs[0], "BatchNorm data and output")
    # As MXNet: half-precision data keeps its parameters and statistics in float32.
    param = np.dtype(np.float32) if data is not None and np.dtype(data) == np.float16 else data
    for t in ins[1:] + outs[1:]:
        param = merge_dtype(param, t, "BatchNorm parameters and statistics")
    return [data] + [param] * 4, [data, param, param]


def _broadcast(v, axis, ndim):
    return v.reshape((1,) * axis + (-1,) + (1,) * (ndim - axis - 1))


def _uses_batch_stats(attrs, ctx):
    return ctx.is_train and not attrs.use_global_stats


# The kernels view the data as (outer, C, inner) around the channel axis: per-channel sums
# then reduce the contiguous inner axis first (numpy's pairwise summation), and each pass
# writes into the output's buffer.  A pass walks the data in chunks of about _CHUNK_BYTES
# (runs of the outer axis, or runs of channels of one outer index when that is larger), and
# the ufunc calls that follow each other on a chunk find it in cache: one trip through
# memory per pass instead of one per call.  With config cpu_kernel_threads above 1 the
# chunks are shared out over that many threads.
_CHUNK_BYTES = 1 << 18


def _three_d(x, axis):
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    return x.reshape(outer, x.shape[axis], inner)


def _chunks(xp, shape3, itemsize):
    """``(outer slice, channel slice)`` pieces of an ``(outer, C, inner)`` array of about
    :data:`_CHUNK_BYTES` each (one piece on a GPU, where each call is a kernel launch)."""
    outer, c, inner = shape3
    if getattr(xp, "__name__", "") != "numpy":
        return [(slice(None), slice(None))]
    channel_bytes = max(1, inner * itemsize)
    channels = max(1, _CHUNK_BYTES // channel_bytes)
    if channels < c:
        return [(slice(n, n + 1), slice(a, min(a + channels, c)))
                for n in range(outer) for a in range(0, c, channels)]
    rows = max(1, channels // max(1, c))
    return [(slice(a, min(a + rows, outer)), slice(None)) for a in range(0, outer, rows)] or \
        [(slice(None), slice(None))]


def _per_channel(xp, parts, c):
    """Per-channel totals from ``(channel slice, values)`` pieces."""
    total = xp.zeros(c, dtype=parts[0][1].dtype)
    for channels, values in parts:
        total[channels] += values
    return total


def _accumulator(dtype):
    """Half precision sums in float32 (as numpy's mean does), others in their own type."""
    return np.float32 if np.dtype(dtype).itemsize < 4 else dtype


def _channel_sum(v3):
    """Per-channel sums of an ``(outer, C, inner)`` array."""
    return v3.sum(axis=2, dtype=_accumulator(v3.dtype)).sum(axis=0)


def _channel_dot(xp, a3, b3):
    """Per-channel sums of ``a3 * b3``, both ``(outer, C, inner)``."""
    acc = _accumulator(a3.dtype)
    if acc != a3.dtype:
        return xp.einsum("ocp,ocp->c", a3, b3, dtype=acc)
    return xp.einsum("ocp,ocp->c", a3, b3)


def _target(xp, out, r):
    """Where a pass writes: the output itself unless the request adds to it."""
    return xp.empty(out.shape, dtype=out.dtype) if r is OpReqType.ADD else out


def _finish(out, r, value):
    if r is OpReqType.ADD:
        out += value


def _follow_batch(attrs, moving_mean, moving_var, mean, var):
    """The moving averages follow each training batch (MXNet's CPU kernel applies the same
    update in its backward pass; cuDNN's, like this one, in the forward pass)."""
    moving_mean[...] = moving_mean * attrs.momentum + mean * (1 - attrs.momentum)
    moving_var[...] = moving_var * attrs.momentum + var * (1 - attrs.momentum)


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    x, gamma, beta, moving_mean, moving_var = inputs
    axis = _channel_axis(attrs, x.ndim)
    x3 = _three_d(x, axis)
    count = max(1, x.size // max(1, x.shape[axis]))
    jit = _jit_kernels(xp, x, outputs[0])
    if jit is not None:
        _forward_jit(jit, attrs, ctx, x3, inputs[1:], req, outputs, count)
        return
    threads = threads_for(xp)
    chunks = _chunks(xp, x3.shape, x.dtype.itemsize)
    c = x3.shape[1]
    target = _target(xp, outputs[0], req[0]) if req[0] is not OpReqType.NULL else \
        xp.empty(x.shape, dtype=x.dtype)
    t3 = target.reshape(x3.shape)
    batch_stats = _uses_batch_stats(attrs, ctx)
    if batch_stats:
        sums = each(lambda sp: (sp[1], _channel_sum(x3[sp])), chunks, threads)
        mean = _per_channel(xp, sums, c) / count
    else:
        mean = moving_mean.astype(x.dtype)
    shift = mean.astype(x.dtype)[:, None]

    def center(sp):  # the centered data goes into the output, its squares are summed
        xp.subtract(x3[sp], shift[sp[1]], out=t3[sp])
        return (sp[1], _channel_dot(xp, t3[sp], t3[sp])) if batch_stats else None

    squares = each(center, chunks, threads)
    if batch_stats:
        var = _per_channel(xp, squares, c) / count
        _follow_batch(attrs, moving_mean, moving_var, mean, var)
    else:
        var = moving_var.astype(x.dtype)
    invstd = (1 / xp.sqrt(var + attrs.eps)).astype(mean.dtype)
    scale = (invstd if attrs.fix_gamma else invstd * gamma).astype(x.dtype)[:, None]
    offset = beta.astype(x.dtype)[:, None]

    def affine(sp):
        xp.multiply(t3[sp], scale[sp[1]], out=t3[sp])
        xp.add(t3[sp], offset[sp[1]], out=t3[sp])

    if req[0] is not OpReqType.NULL:
        each(affine, chunks, threads)
        _finish(outputs[0], req[0], target)
    assign(outputs[1], req[1], mean)
    assign(outputs[2], req[2], invstd)  # as MXNet, the "var" output is 1 / sqrt(var + eps)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    dy = inputs[0]
    x, gamma, _, moving_mean, moving_var = inputs[-8:-3]
    _, mean, invstd = inputs[-3:]
    axis = _channel_axis(attrs, x.ndim)
    x3, dy3 = _three_d(x, axis), _three_d(dy, axis)
    batch_stats = _uses_batch_stats(attrs, ctx)
    if not batch_stats:
        mean = moving_mean.astype(x.dtype)
        invstd = 1 / xp.sqrt(moving_var.astype(x.dtype) + attrs.eps)
    jit = _jit_kernels(xp, x, dy, outputs[0])
    if jit is not None:
        _backward_jit(jit, attrs, x3, dy3, gamma, mean, invstd, batch_stats, req, outputs)
        return
    threads = threads_for(xp)
    chunks = _chunks(xp, x3.shape, x.dtype.itemsize)
    c = x3.shape[1]
    # The centered data is kept in the data gradient's buffer until the last pass.
    target = _target(xp, outputs[0], req[0]) if req[0] is not OpReqType.NULL else \
        xp.empty(x.shape, dtype=x.dtype)
    t3 = target.reshape(x3.shape)
    shift = mean.astype(x.dtype)[:, None]

    def sums(sp):
        xp.subtract(x3[sp], shift[sp[1]], out=t3[sp])
        return sp[1], _channel_sum(dy3[sp]), _channel_dot(xp, dy3[sp], t3[sp])

    parts = each(sums, chunks, threads)
    dbeta = _per_channel(xp, [(p[0], p[1]) for p in parts], c)
    dgamma = _per_channel(xp, [(p[0], p[2]) for p in parts], c) * invstd  # sum(dy * xhat)
    scale = invstd if attrs.fix_gamma else invstd * gamma
    if req[0] is not OpReqType.NULL:
        if batch_stats:
            # dx = scale * (dy - dbeta/count - xhat * dgamma/count), one pass per term
            count = max(1, x.size // max(1, x.shape[axis]))
            slope = (-scale * invstd * dgamma / count).astype(x.dtype)[:, None]
            offset = (-scale * dbeta / count).astype(x.dtype)[:, None]
        else:
            slope = offset = None
        factor = scale.astype(x.dtype)[:, None]

        def gradient(sp):
            channels = sp[1]
            if not batch_stats:  # the statistics are constants: dx = dy * scale
                xp.multiply(dy3[sp], factor[channels], out=t3[sp])
                return
            xp.multiply(t3[sp], slope[channels], out=t3[sp])
            xp.add(t3[sp], offset[channels], out=t3[sp])
            xp.add(t3[sp], dy3[sp] * factor[channels], out=t3[sp])

        each(gradient, chunks, threads)
        _finish(outputs[0], req[0], target)
    assign(outputs[1], req[1], 0 if attrs.fix_gamma else dgamma)
    assign(outputs[2], req[2], dbeta)


# -- the compiled kernels (numba, see ._jit) -------------------------------------------------
# Forward, two trips through memory (the moments, the output), and backward two (the
# gradient's sums, the data gradient), where numpy's passes take several each.  Rows of the
# (outer, C, inner) view are shared out over the kernel threads when the data is large
# enough to pay for the hand-off.
_JIT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_JIT_PARALLEL_MIN = 1 << 16  # values


def _jit_kernels(xp, *arrays):
    """The compiled kernels when they apply to ``arrays`` (numpy, float32 or float64,
    C-contiguous, not empty) and are on, else None."""
    if getattr(xp, "__name__", "") != "numpy" or arrays[0].dtype not in _JIT_DTYPES or \
            not arrays[0].size:
        return None
    if not all(a.flags.c_contiguous and a.dtype == arrays[0].dtype for a in arrays):
        return None
    return _jit.kernels("batch_norm")


def _row_spans(x3):
    rows = x3.shape[0] * x3.shape[1]
    threads = threads_for(np) if x3.size >= _JIT_PARALLEL_MIN else 1
    return sample_spans(rows, threads)


def _channel_totals(kernel, spans, channels, accumulators, *inputs):
    """The per-channel float64 totals ``kernel(*inputs, r0, r1, *totals)`` adds up over the
    row ``spans`` (each span into its own ``accumulators`` arrays, added afterwards)."""

    def run(span):
        totals = np.zeros((accumulators, channels))
        kernel(*inputs, span[0], span[1], *totals)
        return totals

    return sum(each(run, spans, len(spans)))


def _values(per_channel, dtype):
    return np.ascontiguousarray(per_channel, dtype=dtype)


def _forward_jit(jit, attrs, ctx, x3, params, req, outputs, count):
    gamma, beta, moving_mean, moving_var = params
    dtype, channels = x3.dtype, x3.shape[1]
    spans = _row_spans(x3)
    if _uses_batch_stats(attrs, ctx):
        sums, between, within = _channel_totals(jit.channel_moments, spans, channels, 3, x3)
        mean64 = sums / count
        var = ((within + between - count * mean64 * mean64) / count).clip(0).astype(dtype)
        mean = mean64.astype(dtype)
        _follow_batch(attrs, moving_mean, moving_var, mean, var)
    else:
        mean, var = moving_mean.astype(dtype), moving_var.astype(dtype)
    invstd = (1 / np.sqrt(var + attrs.eps)).astype(mean.dtype)
    if req[0] is not OpReqType.NULL:
        scale = _values(invstd if attrs.fix_gamma else invstd * gamma, dtype)
        mean_x, offset = _values(mean, dtype), _values(beta, dtype)
        y3 = outputs[0].reshape(x3.shape)
        accumulate = req[0] is OpReqType.ADD
        each(lambda s: jit.normalize(x3, mean_x, scale, offset, s[0], s[1], y3, accumulate),
             spans, len(spans))
    assign(outputs[1], req[1], mean)
    assign(outputs[2], req[2], invstd)  # as MXNet, the "var" output is 1 / sqrt(var + eps)


def _backward_jit(jit, attrs, x3, dy3, gamma, mean, invstd, batch_stats, req, outputs):
    dtype, channels = x3.dtype, x3.shape[1]
    spans = _row_spans(x3)
    mean_x = _values(mean, dtype)
    dbeta, dyx = _channel_totals(jit.gradient_sums, spans, channels, 2, dy3, x3, mean_x)
    dgamma = dyx * invstd  # sum(dy * xhat)
    scale = invstd if attrs.fix_gamma else invstd * gamma
    if req[0] is not OpReqType.NULL:
        dx3 = outputs[0].reshape(x3.shape)
        if not batch_stats:  # the statistics are constants: dx = dy * scale
            factor = _values(scale, dtype)[:, None]
            if req[0] is OpReqType.ADD:
                dx3 += dy3 * factor
            else:
                np.multiply(dy3, factor, out=dx3)
        else:  # dx = scale * (dy - dbeta/count - xhat * dgamma/count)
            count = max(1, x3.size // max(1, channels))
            coefficients = [_values(v, dtype) for v in (
                scale, -scale * invstd * dgamma / count, -scale * dbeta / count)]
            accumulate = req[0] is OpReqType.ADD
            each(lambda s: jit.input_gradient(dy3, x3, mean_x, *coefficients, s[0], s[1],
                                              dx3, accumulate), spans, len(spans))
    assign(outputs[1], req[1], 0 if attrs.fix_gamma else dgamma)
    assign(outputs[2], req[2], dbeta)


def _sample(draw):
    d = Draw(draw)
    ndim = d.int(2, 4)
    shape = d.shape(ndim, 1, 3)
    axis = d.choice([1, -1] if ndim > 2 else [1], "axis")
    c = shape[axis]
    params = {"fix_gamma": d.bool("fix_gamma"), "use_global_stats": d.bool("use_global_stats"),
              "output_mean_var": d.bool("output_mean_var"), "axis": axis,
              "eps": d.float(1e-3, 0.1, "eps"), "momentum": d.float(0.0, 1.0, "momentum")}
    inputs = [d.uniform(shape, -2, 2), d.uniform((c,), 0.5, 1.5), d.uniform((c,)), d.uniform((c,)),
              d.uniform((c,), 0.5, 2.0)]
    return Case(inputs, params)


def _reference(params, x, gamma, beta, moving_mean, moving_var):
    """Inference mode (the suite runs operators with is_train False): the moving statistics."""
    attrs = BatchNormParam.parse("BatchNorm", params)
    axis = attrs.axis % x.ndim
    shape = [1] * x.ndim
    shape[axis] = -1
    g = np.ones_like(gamma) if attrs.fix_gamma else gamma
    invstd = 1 / np.sqrt(moving_var + attrs.eps)
    y = (x - moving_mean.reshape(shape)) * (g * invstd).reshape(shape) + beta.reshape(shape)
    return [y, moving_mean, invstd]


BatchNorm = Op(
    "BatchNorm",
    description="""Batch normalization (Ioffe & Szegedy, 2015) over the channel ``axis``.

In training (and unless ``use_global_stats``), each channel is normalized with
the batch mean and biased variance, ``out = (x - mean) / sqrt(var + eps) * gamma + beta``,
and the auxiliary states are updated in place:
``moving_mean = moving_mean * momentum + mean * (1 - momentum)`` (likewise
``moving_var``).  Otherwise the moving statistics normalize.  ``fix_gamma``
uses ``gamma = 1`` and gives gamma a zero gradient (MXNet also overwrites the
gamma array with ones; dagnet leaves it alone).  The hidden outputs ``mean`` and
``var`` (visible with ``output_mean_var``) hold the statistics used, ``var`` as
``1 / sqrt(var + eps)`` as in MXNet.  Float16 data keeps float32 parameters.
Dagnet updates the moving statistics in the forward pass; MXNet's CPU kernel
does it in the backward pass: after a forward and backward step both agree.""",
    params=BatchNormParam,
    num_inputs=5,
    num_outputs=3,
    num_visible_outputs=lambda a: 3 if a.output_mean_var else 1,
    input_names=_INPUTS,
    output_names=_OUTPUTS,
    mutate_inputs=[3, 4],
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    compute={XP: _forward},
    gradient=Gradient("_backward_BatchNorm", uses=("out_grad", "in_data", "out_data")),
    domain=Domain(_sample, _reference, differentiable=(0, 1, 2)),
)

BackwardBatchNorm = Op(
    "_backward_BatchNorm",
    params=BatchNormParam,
    num_inputs=lambda a: (3 if a.output_mean_var else 1) + 8,
    num_outputs=3,
    compute={XP: _backward},
    is_backward=True,
    forward_op="BatchNorm",
)

OPS = [BatchNorm, BackwardBatchNorm]
