"""``Pooling``: max, average, sum and Lp pooling over 1, 2 or 3 spatial axes."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    XP,
    Case,
    ComposedGradient,
    Domain,
    Field,
    Gradient,
    Op,
    OpReqType,
    Params,
    Shape,
    assign,
)

from .._draw import Draw
from . import _onednn
from ._common import (
    channel_last,
    layout_shape,
    set_shape,
    spatial,
    threads_for,
    to_channel_first,
    to_channel_last,
)
from ._im2col import kernel_first, pad_spatial, scatter_windows, windows
from ._second_order import pooling_backward_gradient

__all__ = ["OPS"]


class PoolingParam(Params):
    kernel = Field(Shape, (), "window size: (w,), (h, w) or (d, h, w); ignored with global_pool")
    pool_type = Field(str, "max", "the reduction over each window",
                      choices=("avg", "lp", "max", "sum"))
    global_pool = Field(bool, False, "pool each channel whole (kernel, stride and pad are ignored)")
    cudnn_off = Field(bool, False, "accepted for MXNet compatibility")
    pooling_convention = Field(str, "valid", "valid: only windows inside the padded input; full: "
                                             "also a last partial window (ceil instead of floor); "
                                             "same (1-D, no pad): ceil(size / stride) windows",
                               choices=("full", "same", "valid"))
    stride = Field(Shape, (), "window step per spatial axis (default 1)")
    pad = Field(Shape, (), "implicit padding on both sides of each spatial axis (default 0)")
    p_value = Field(int, None, "the p of Lp pooling")
    count_include_pad = Field(bool, None, "avg: count padded positions in the divisor (None: True)")
    layout = Field(str, None, "data layout (None: channel-first); the output follows it",
                   choices=("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"))


def _geometry(attrs, shape):
    """``(kernel, stride, pad, out)`` for data of ``shape`` ``(N, C, *spatial)``."""
    sizes = tuple(shape[2:])
    nd = len(sizes)
    if attrs.global_pool:
        return sizes, (1,) * nd, (0,) * nd, (1,) * nd
    kernel = tuple(attrs.kernel)
    if not kernel:
        raise ShapeError("operator 'Pooling': give kernel=(...) or global_pool=True")
    if len(kernel) != nd:
        raise ShapeError(f"operator 'Pooling', input 'data': a {len(kernel)}-D kernel {kernel} "
                         f"needs {len(kernel) + 2}-D data (batch, channel, spatial...), got shape "
                         f"{tuple(shape)}")
    stride = spatial(attrs.stride, nd, 1, "Pooling", "stride")
    same = attrs.pooling_convention == "same"
    # MXNet checks 'same' pooling for pad=(0, 0, 0) whatever the kernel's dimensions
    zeros = same and not any(attrs.pad)
    pad = (0,) * nd if zeros else spatial(attrs.pad, nd, 0, "Pooling", "pad")
    if same and (nd != 1 or any(pad)):
        raise ShapeError(f"operator 'Pooling', input 'data': pooling_convention='same' pools 1-D "
                         f"data (batch, channel, x) without pad, as in MXNet; got shape "
                         f"{tuple(shape)} with pad {pad}; use 'valid' or 'full' otherwise")
    out = []
    for size, k, s, p in zip(sizes, kernel, stride, pad):
        if not size:
            out.append(0)
            continue
        if k > size + 2 * p:
            raise ShapeError(f"operator 'Pooling', input 'data': kernel {kernel} is larger than "
                             f"the padded input (shape {tuple(shape)}, pad {pad})")
        span = size + 2 * p - k
        if same:  # one window per stride step, the last ones cut short by the end
            out.append(-(-size // s))
        else:
            out.append((span + s - 1) // s + 1 if attrs.pooling_convention == "full"
                       else span // s + 1)
    return kernel, stride, pad, tuple(out)


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    data = ins[0]
    if data is not None:
        if len(data) < 3:
            raise ShapeError(f"operator 'Pooling', input 'data': expected (batch, channel, "
                             f"spatial...), got shape {tuple(data)}")
        if attrs.layout is not None and len(attrs.layout) != len(data):
            raise ShapeError(f"operator 'Pooling', input 'data': layout {attrs.layout!r} does "
                             f"not fit {len(data)}-D data (shape {tuple(data)})")
        if channel_last(attrs.layout):
            data = (data[0], data[-1], *data[1:-1])
        *_, out = _geometry(attrs, data)
        set_shape(outs, 0, layout_shape((data[0], data[1], *out), attrs.layout), "Pooling",
                  ["output"], "output")
    return ins, outs


def _counts(xp, attrs, sizes, kernel, stride, pad, out, dtype):
    """The divisor of each average window: the positions it covers inside the padded input
    (count_include_pad) or inside the input."""
    include = attrs.count_include_pad is not False and not attrs.global_pool
    total = np.ones((), dtype=np.float64)
    for size, k, s, p, n in zip(sizes, kernel, stride, pad, out):
        start = np.arange(n) * s - p
        low, high = (-p, size + p) if include else (0, size)
        count = np.minimum(start + k, high) - np.maximum(start, low)
        total = np.multiply.outer(total, np.maximum(count, 1))
    return xp.asarray(total.astype(dtype))


def _windows(xp, attrs, x):
    """The (padded) windows ``(N, C, *out, *kernel)`` and the geometry."""
    kernel, stride, pad, out = _geometry(attrs, x.shape)
    # "full" windows may run past the padding: pad further on the right so they fit.
    extra = [max(0, (n - 1) * s + k - (size + 2 * p))
             for n, s, k, size, p in zip(out, stride, kernel, x.shape[2:], pad)]
    fill = xp.finfo(x.dtype).min if attrs.pool_type == "max" else 0
    padded = pad_spatial(xp, x, pad, [p + e for p, e in zip(pad, extra)], fill)
    cols = windows(xp, padded, kernel, stride, (1,) * len(kernel))
    return cols, (kernel, stride, pad, out, extra)


def _one_window(attrs, shape) -> bool:
    """Whether one window, unpadded, covers the whole of each image (global pooling)."""
    kernel, _, pad, out = _geometry(attrs, shape)
    return not any(pad) and all(n == 1 for n in out) and tuple(kernel) == tuple(shape[2:])


def _global_average(xp, x):
    """Each image's mean per channel, ``(N, C, 1, ...)``: for float32 and float64 a
    product with a vector of 1/size (BLAS's, several times faster than numpy's mean over
    the last axes, which global pooling at the end of a network pays at every call)."""
    rows = x.reshape(x.shape[0] * x.shape[1], -1)
    if x.dtype in (xp.float32, xp.float64):
        y = rows @ _reciprocals(xp, rows)
    else:
        y = rows.mean(axis=1)
    return y.reshape(x.shape[:2] + (1,) * (x.ndim - 2))


def _reciprocals(xp, rows):
    """The vector of 1/size whose product with ``rows`` gives their means."""
    return xp.full(rows.shape[1], 1.0 / rows.shape[1], dtype=rows.dtype)


def _global_average_offered(state, xp, x, out) -> bool:
    """A bound node's global average pooling as one BLAS product into ``out``, made once
    per pair of arrays and offered to the executor as its run (see
    ``NodeState.offer_replay``); False, having done nothing, where ``x`` and ``out`` are not
    float32 or float64 numpy arrays the product can read and write as they are."""
    if xp is not np or x.dtype not in (np.float32, np.float64) or out.dtype != x.dtype or \
            not (x.flags.c_contiguous and out.flags.c_contiguous):
        return False
    key = (x.ctypes.data, out.ctypes.data, x.shape, x.dtype)
    kept = state.cache.get(_global_average_offered)
    if kept is None or kept[0] != key:
        rows = x.reshape(x.shape[0] * x.shape[1], -1)
        kept = state.cache[_global_average_offered] = (
            key, functools.partial(_product, rows, _reciprocals(np, rows), out.reshape(-1)))
    kept[1]()
    state.offer_replay([kept[1]], (), _anywhere, _never_fails)
    return True


def _product(rows, vector, out) -> None:
    np.matmul(rows, vector, out=out)


def _anywhere() -> None:
    """A numpy call's scope: it runs the same on any thread."""


def _never_fails(status, call) -> None:
    raise AssertionError(f"{call} returns no status, got {status!r}")


def _lp(attrs):
    if attrs.p_value is None or attrs.p_value < 1:
        raise ShapeError(
            f"operator 'Pooling': pool_type='lp' needs p_value >= 1, got {attrs.p_value}")
    return attrs.p_value


def _forward(attrs, ctx, inputs, req, outputs):
    xp, x = ctx.xp, inputs[0]
    last = channel_last(attrs.layout)
    if last:
        x = to_channel_first(xp, x)
    kind = attrs.pool_type
    if kind == "max":
        direct = outputs[0] if req[0] is OpReqType.WRITE and not last else None
        y = _max_forward_onednn(xp, x, *_geometry(attrs, x.shape), direct)
        if y is not None:
            assign(outputs[0], req[0], to_channel_last(xp, y) if last else y)
            return
    if kind == "avg" and x.dtype.kind == "f" and _one_window(attrs, x.shape):
        if ctx.state is not None and not last and req[0] is OpReqType.WRITE and \
                _global_average_offered(ctx.state, xp, x, outputs[0]):
            return
        y = _global_average(xp, x)
        assign(outputs[0], req[0], to_channel_last(xp, y) if last else y)
        return
    cols, (kernel, stride, pad, out, _) = _windows(xp, attrs, x)
    if kind == "lp":
        p = _lp(attrs)
        total = (cols ** p).sum(axis=tuple(range(-len(kernel), 0)))
        y = total if p == 1 else xp.sign(total) * xp.abs(total) ** (1.0 / p)
    else:  # one elementwise max or sum per kernel offset beats reducing the strided windows
        taps = kernel_first(cols, len(kernel))
        y = taps[(0,) * len(kernel)].copy()
        combine = xp.maximum if kind == "max" else xp.add
        for offset in itertools.product(*(range(k) for k in kernel)):
            if any(offset):
                combine(y, taps[offset], out=y)
        if kind == "avg":
            y /= _counts(xp, attrs, x.shape[2:], kernel, stride, pad, out, x.dtype)
    assign(outputs[0], req[0], to_channel_last(xp, y) if last else y)


def _max_backward(xp, taps, y, dy, padded, stride):
    """Max pooling's gradient: each window's whole gradient goes to its first maximum.

    ``taps`` ``(*kernel, N, C, *out)`` views the windows; walking the taps in order, a
    tap takes the gradient of the windows whose maximum it equals and that no earlier
    tap took.  One pass of output size per tap, no copy of the windows."""
    nd = len(stride)
    kernel = taps.shape[:nd]
    grad = xp.zeros(y.shape[:2] + tuple(padded), dtype=dy.dtype)
    taken = xp.zeros(y.shape, dtype=bool)
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    apart = all(s >= k for s, k in zip(stride, kernel))
    for i, offset in enumerate(offsets):
        hit = taps[offset] == y
        xp.greater(hit, taken, out=hit)  # a maximum here, and not taken before
        if i < len(offsets) - 1:
            xp.logical_or(taken, hit, out=taken)
        target = (slice(None), slice(None)) + tuple(
            slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offset, stride, y.shape[2:]))
        if apart:  # windows that do not overlap: each position is written by one tap only
            xp.multiply(dy, hit, out=grad[target])
        else:
            grad[target] += dy * hit
    return grad


# oneDNN runs max pooling and its gradient for float32 arrays on numpy when it is installed
# and switched on (see ``_onednn``); these return None otherwise, or where it has no kernel.
def _pad_after(x_shape, y_shape, kernel, stride, pad):
    """Where the last window ends, past the data (the padding after it) or short of its end."""
    return tuple((n - 1) * s + k - size - p
                 for n, s, k, size, p in zip(y_shape[2:], stride, kernel, x_shape[2:], pad))


def _max_forward_onednn(xp, x, kernel, stride, pad, out_sizes, out):
    lib = _onednn.library_for(xp, x)
    if lib is None:
        return None
    y_shape = (*x.shape[:2], *out_sizes)
    return _onednn.max_pool(lib, np.ascontiguousarray(x), y_shape, kernel, stride, pad,
                            _pad_after(x.shape, y_shape, kernel, stride, pad),
                            threads_for(xp), out)


def _max_backward_onednn(xp, x, dy, kernel, stride, pad, out):
    lib = _onednn.library_for(xp, x, dy)
    if lib is None:
        return None
    return _onednn.max_pool_grad(lib, np.ascontiguousarray(x), np.ascontiguousarray(dy),
                                 kernel, stride, pad,
                                 _pad_after(x.shape, dy.shape, kernel, stride, pad),
                                 threads_for(xp), out)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    dy, x, y = inputs
    last = channel_last(attrs.layout)
    if last:
        dy, x, y = (to_channel_first(xp, a) for a in (dy, x, y))
    kind = attrs.pool_type
    if kind == "max":
        direct = outputs[0] if req[0] is OpReqType.WRITE and not last else None
        dx = _max_backward_onednn(xp, x, dy, *_geometry(attrs, x.shape)[:3], direct)
        if dx is not None:
            assign(outputs[0], req[0], to_channel_last(xp, dx) if last else dx)
            return
    cols, (kernel, stride, pad, out, extra) = _windows(xp, attrs, x)
    nd = len(kernel)
    # The window gradients are built kernel axes first, as scatter_windows takes them.
    padded = tuple(size + 2 * p + e for size, p, e in zip(x.shape[2:], pad, extra))
    crop = (slice(None), slice(None), *(slice(p, p + n) for p, n in zip(pad, x.shape[2:])))
    if kind == "max":
        dx = _max_backward(xp, kernel_first(cols, nd), y, dy, padded, stride)[crop]
        assign(outputs[0], req[0], to_channel_last(xp, dx) if last else dx)
        return
    if kind == "avg":
        counts = _counts(xp, attrs, x.shape[2:], kernel, stride, pad, out, x.dtype)
        dcols = xp.broadcast_to(dy / counts, tuple(kernel) + dy.shape)
    elif kind == "sum" or _lp(attrs) == 1:
        dcols = xp.broadcast_to(dy, tuple(kernel) + dy.shape)
    else:
        p = _lp(attrs)
        taps = kernel_first(cols, nd)
        safe = xp.where(y == 0, 1, y)
        dcols = xp.where(y == 0, 0, dy * (taps / safe) ** (p - 1))
    grad = scatter_windows(xp, dcols, padded, stride, (1,) * nd)
    assign(outputs[0], req[0], to_channel_last(xp, grad[crop]) if last else grad[crop])


def _sample(draw):
    d = Draw(draw)
    nd = d.int(1, 2, "spatial dims")
    kind = d.choice(["max", "avg", "sum", "lp"], "pool_type")
    params = {"pool_type": kind}
    if d.bool("global_pool"):
        params["global_pool"] = True
        size = d.shape(nd, 1, 4)
    else:
        kernel = d.shape(nd, 1, 3)
        pad = tuple(d.int(0, k // 2) for k in kernel)
        size = tuple(d.int(max(1, k - 2 * p), 5) for k, p in zip(kernel, pad))
        stride = d.shape(nd, 1, 2)
        convention = d.choice(["valid", "full"], "pooling_convention")
        if kind == "max" and convention == "full" and any(
                ((size + 2 * p - k + s - 1) // s) * s - p >= size
                for size, k, s, p in zip(size, kernel, stride, pad)):
            convention = "valid"  # a last window of padding alone would output -FLT_MAX
        params.update(kernel=kernel, stride=stride, pad=pad, pooling_convention=convention)
        if kind == "avg":
            params["count_include_pad"] = d.bool("count_include_pad")
    shape = (d.int(1, 2), d.int(1, 2), *size)
    if d.bool("channel-last layout"):
        params["layout"] = ("NWC", "NHWC")[nd - 1]
        shape = layout_shape(shape, params["layout"])
    if kind == "lp":
        params["p_value"] = d.int(1, 3, "p_value")
        x = d.uniform(shape, 0.5, 2.0)  # positive, so the root is smooth
    else:
        x = d.distinct(shape)
    return Case([x], params)


def _reference(params, x):
    attrs = PoolingParam.parse("Pooling", params)
    if channel_last(attrs.layout):
        return np.moveaxis(_reference({**params, "layout": None}, np.moveaxis(x, -1, 1)), 1, -1)
    kernel, stride, pad, out = _geometry(attrs, x.shape)
    sizes = x.shape[2:]
    include = attrs.count_include_pad is not False
    y = np.zeros(x.shape[:2] + out)
    for pos in np.ndindex(*out):
        starts = [o * s - p for o, s, p in zip(pos, stride, pad)]
        inside = tuple(slice(max(st, 0), min(st + k, size))
                       for st, k, size in zip(starts, kernel, sizes))
        region = x[(slice(None), slice(None), *inside)].reshape(x.shape[:2] + (-1,))
        at = (slice(None), slice(None), *pos)
        if attrs.pool_type == "max":  # a window of padding only gives the lowest float, as MXNet
            y[at] = region.max(axis=-1) if region.shape[-1] else np.finfo(x.dtype).min
        elif attrs.pool_type == "sum":
            y[at] = region.sum(axis=-1)
        elif attrs.pool_type == "lp":
            total = (region ** attrs.p_value).sum(axis=-1)
            y[at] = np.sign(total) * np.abs(total) ** (1.0 / attrs.p_value)
        else:
            if attrs.global_pool or not include:
                count = region.shape[-1]
            else:
                count = math.prod(min(st + k, size + p) - max(st, -p)
                                  for st, k, size, p in zip(starts, kernel, sizes, pad))
            y[at] = region.sum(axis=-1) / max(count, 1)
    return y


Pooling = Op(
    "Pooling",
    description="""Pooling over 1, 2 or 3 spatial axes of channel-first data, or channel-last
with ``layout`` NWC, NHWC or NDHWC.

``max``: the window maximum (padding never wins; the gradient goes to the first
maximum); ``avg``: the window mean, dividing by the positions inside the padded
input (``count_include_pad``, default) or inside the input; ``sum``; ``lp``:
``(sum x^p)^(1/p)`` with ``p_value``.  ``pooling_convention='valid'`` keeps whole
windows (``floor``), ``'full'`` adds a last partial window (``ceil``),
``'same'`` (1-D data, no pad) gives ``ceil(size / stride)`` windows.
``global_pool`` pools each channel to 1x...x1.""",
    params=PoolingParam,
    input_names=["data"],
    output_names=["output"],
    infer_shape=_infer_shape,
    compute={XP: _forward},
    gradient=Gradient("_backward_Pooling", uses=("out_grad", "in_data", "out_data")),
    domain=Domain(_sample, _reference),
)

BackwardPooling = Op(
    "_backward_Pooling", params=PoolingParam, num_inputs=3, compute={XP: _backward},
    gradient=ComposedGradient(pooling_backward_gradient),
    is_backward=True, forward_op="Pooling",
)

OPS = [Pooling, BackwardPooling]
