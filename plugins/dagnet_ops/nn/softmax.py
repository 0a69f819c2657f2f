"""Softmax family: ``softmax`` and ``log_softmax`` along an axis, the ``SoftmaxOutput``
loss layer (alias ``Softmax``) and ``softmax_cross_entropy``."""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    XP,
    Case,
    ComposedGradient,
    Domain,
    DType,
    Field,
    Gradient,
    NoParams,
    Op,
    OpReqType,
    Params,
    assign,
    elemwise_shape,
    merge_dtype,
)

from .._draw import Draw
from ._common import data_type, set_shape
from ._second_order import softmax_backward_gradient

__all__ = ["OPS"]

_FLOAT_TYPES = ("float16", "float32", "float64")


def softmax(xp, x, axis, temperature=None, log=False, mask=None, out=None):
    """Softmax (or log-softmax) of ``x`` along ``axis``; entries where ``mask`` is False
    are left out of the normalization (and are 0 in a softmax).

    Computed in ``out`` when given (an array of ``x``'s shape and dtype, which may be
    ``x`` itself), else in a new array; returns the result.
    """
    if x.size == 0:  # nothing to normalize (a zero-size axis has no maximum)
        return x.copy() if out is None else out
    z = x / temperature if temperature not in (None, 1.0) else x
    if mask is not None:
        z = xp.where(mask, z, xp.finfo(z.dtype).min)
    out = xp.subtract(z, z.max(axis=axis, keepdims=True), out=out)
    if log:
        out -= xp.log(xp.exp(out).sum(axis=axis, keepdims=True))
        return out
    xp.exp(out, out=out)
    if mask is not None:
        out *= mask
    out /= out.sum(axis=axis, keepdims=True)
    return out


def _writes_into(req, out, x):
    """Whether a result for ``out`` may be computed in it: a write (or in place) to a
    contiguous output of the data's dtype."""
    return (req is OpReqType.WRITE or req is OpReqType.INPLACE) and out.dtype == x.dtype \
        and out.flags.c_contiguous


# -- softmax, log_softmax ------------------------------------------------------------------------
class SoftmaxParam(Params):
    axis = Field(int, -1, "the axis along which to normalize")
    temperature = Field(float, None, "divide the input by this temperature first (None: 1)")
    dtype = Field(DType, None, "output dtype (None: the input's)", choices=_FLOAT_TYPES)
    use_length = Field(bool, False, "take a second input `length`: only the first length[i] "
                                    "entries along `axis` take part; the rest are 0",
                       optional=True)


class LogSoftmaxParam(SoftmaxParam):
    use_length = Field(bool, False, "accepted for MXNet compatibility; this operator takes no "
                                    "length", optional=True, choices=(False,))


def _uses_length(attrs):
    return bool(getattr(attrs, "use_length", False))


def _length_mask(xp, x, length, axis):
    axis = axis % x.ndim
    positions = xp.arange(x.shape[axis]).reshape((-1,) + (1,) * (x.ndim - axis - 1))
    return positions < xp.expand_dims(length.astype(np.int64), axis)


def _softmax_infer_shape(op_name):
    elemwise = elemwise_shape(op_name)

    def infer(attrs, ins, outs):
        data, outs = elemwise(attrs, ins[:1], outs)
        ins = [data[0], *ins[1:]]
        if _uses_length(attrs) and data[0] is not None:
            axis = attrs.axis % len(data[0])
            set_shape(ins, 1, tuple(d for i, d in enumerate(data[0]) if i != axis), op_name,
                      ["data", "length"])
        return ins, outs

    return infer


def _softmax_infer_type(attrs, ins, outs):
    data = ins[0]
    out = merge_dtype(np.dtype(attrs.dtype) if attrs.dtype is not None else data, outs[0], "output")
    data = data if data is not None else (out if attrs.dtype is None else None)
    rest = [t if t is not None else np.dtype(np.int32) for t in ins[1:]]
    return [data, *rest], [out]


def _make_softmax(name, log, negate=False):
    """``softmax`` / ``log_softmax``, or with ``negate`` ``softmin`` (the softmax of -x)."""
    params = LogSoftmaxParam if log or negate else SoftmaxParam
    sign = -1.0 if negate else 1.0

    def forward(attrs, ctx, inputs, req, outputs):
        x = -inputs[0] if negate else inputs[0]
        mask = _length_mask(ctx.xp, x, inputs[1], attrs.axis) if _uses_length(attrs) else None
        if _writes_into(req[0], outputs[0], x):
            softmax(ctx.xp, x, attrs.axis, attrs.temperature, log, mask, out=outputs[0])
        else:
            assign(outputs[0], req[0],
                   softmax(ctx.xp, x, attrs.axis, attrs.temperature, log, mask))

    def backward(attrs, ctx, inputs, req, outputs):
        xp, (dy, y), axis = ctx.xp, inputs, attrs.axis
        if log:
            dx = dy - xp.exp(y) * dy.sum(axis=axis, keepdims=True)
        else:  # masked entries have y == 0, so they get no gradient and add nothing to the sum
            dx = y * (dy - (dy * y).sum(axis=axis, keepdims=True))
        if attrs.temperature not in (None, 1.0):
            dx = dx / attrs.temperature
        assign(outputs[0], req[0], -dx if negate else dx)
        if len(outputs) > 1:
            assign(outputs[1], req[1], 0)

    def sample(draw):
        d = Draw(draw)
        shape = d.shape(d.int(1, 3), 1, 4)
        p = {"axis": d.int(-len(shape), len(shape) - 1, "axis")}
        if d.bool("with temperature"):
            p["temperature"] = d.float(0.5, 3.0, "temperature")
        inputs = [d.uniform(shape, -3, 3)]
        if params is SoftmaxParam and len(shape) > 1 and d.bool("use_length"):
            axis = p["axis"] % len(shape)
            rest = tuple(s for i, s in enumerate(shape) if i != axis)
            p["use_length"] = True
            inputs.append(d.rng.integers(1, shape[axis] + 1, size=rest).astype(np.float64))
        return Case(inputs, p)

    def reference(p, x, length=None):
        attrs = params.parse(name, p)
        z = sign * x / (attrs.temperature or 1.0)
        z = np.moveaxis(z, attrs.axis, -1)
        out = np.empty_like(z)
        lengths = np.full(z.shape[:-1], z.shape[-1]) if length is None else length.astype(int)
        for index in np.ndindex(z.shape[:-1]):
            n = lengths[index]
            row = z[index][:n] - z[index][:n].max()
            out[index] = 0.0
            total = np.exp(row).sum()
            out[index][:n] = row - np.log(total) if log else np.exp(row) / total
        return np.moveaxis(out, -1, attrs.axis)

    doc = {
        False: """Softmax along ``axis``: ``out = exp(x / T) / sum(exp(x / T), axis)``.

``temperature`` T defaults to 1; ``dtype`` sets the output dtype.  With
``use_length=True`` a second input ``length`` (integers, the data's shape without
``axis``) limits each slice to its first ``length`` entries; the others are 0.
Gradient: ``dx = y * (dy - sum(dy * y, axis)) / T``.""",
        True: """Log-softmax along ``axis``: ``out = x/T - log(sum(exp(x/T), axis))``,
computed stably.  Gradient: ``dx = (dy - exp(y) * sum(dy, axis)) / T``.""",
    }[log] if not negate else """Softmin along ``axis``: the softmax of ``-x``,
``out = exp(-x / T) / sum(exp(-x / T), axis)``: the smallest entries weigh most.
``temperature`` T defaults to 1; ``dtype`` sets the output dtype.  Gradient:
``dx = -y * (dy - sum(dy * y, axis)) / T``."""
    forward_op = Op(
        name,
        description=doc,
        params=params,
        num_inputs=lambda a: 2 if _uses_length(a) else 1,
        input_names=lambda a: ["data", "length"] if _uses_length(a) else ["data"],
        output_names=["output"],
        infer_shape=_softmax_infer_shape(name),
        infer_type=_softmax_infer_type,
        compute={XP: forward},
        gradient=Gradient(f"_backward_{name}", uses=("out_grad", "out_data")),
        inplace=[(0, 0)],
        domain=Domain(sample, reference, differentiable=(0,)),
    )
    backward_op = Op(
        f"_backward_{name}", params=params, num_inputs=2,
        num_outputs=lambda a: 2 if _uses_length(a) else 1,
        compute={XP: backward}, is_backward=True, forward_op=name,
        gradient=ComposedGradient(softmax_backward_gradient(log, negate)),
    )
    return [forward_op, backward_op]


# -- SoftmaxOutput -------------------------------------------------------------------------------
class SoftmaxOutputParam(Params):
    grad_scale = Field(float, 1.0, "scale the gradient by this factor")
    ignore_label = Field(float, -1.0, "the label whose entries get no gradient when use_ignore")
    multi_output = Field(bool, False, "softmax along axis 1 of (n, k, d1, ...) data, one label "
                                      "per position: label (n, d1*...) or (n, d1, ...)")
    use_ignore = Field(bool, False, "give no gradient to entries labelled ignore_label")
    preserve_shape = Field(bool, False, "softmax along the last axis, keeping the shape")
    normalization = Field(str, "null", "divide the gradient by: null - nothing (with multi_output, "
                                       "the positions per example); batch - the examples; "
                                       "valid - the labels that are not ignore_label",
                          choices=("batch", "null", "valid"))
    out_grad = Field(bool, False, "multiply by the head gradient; dagnet supports only False (the "
                                  "layer is a loss head and ignores the head gradient)",
                     choices=(False,))
    smooth_alpha = Field(float, 0.0, "label smoothing: the target puts smooth_alpha spread over "
                                     "the other classes and 1 - smooth_alpha on the label", low=0.0)


def _softmax_output_label_shape(attrs, data):
    if attrs.multi_output:
        return (data[0], int(np.prod(data[2:])))
    return tuple(data[:-1]) if attrs.preserve_shape or len(data) > 1 else tuple(data)


def _softmax_output_infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    set_shape(ins, 0, outs[0], "SoftmaxOutput", ["data", "label"])
    data, label = ins[0], ins[1]
    if data is not None:
        set_shape(outs, 0, data, "SoftmaxOutput", ["output"], "output")
        expected = _softmax_output_label_shape(attrs, data)
        allowed = [expected, tuple(data)]  # tuple(data): one probability per class
        if attrs.multi_output:
            allowed.append((data[0], *data[2:]))
        if label is None:
            ins[1] = expected
        elif not any(len(label) == len(a) and all(x == y or 0 in (x, y) for x, y in zip(label, a))
                     for a in allowed):
            raise ShapeError(
                f"operator 'SoftmaxOutput', input 'label': shape {tuple(label)} does not fit data "
                f"{tuple(data)}; expected {' or '.join(str(a) for a in allowed)}")
    return ins, outs


def _softmax_output_layout(attrs, x):
    """The data as (n, k, positions) and the softmax axis of that view."""
    if attrs.multi_output:
        return x.reshape(x.shape[0], x.shape[1], -1)
    if attrs.preserve_shape:
        return x.reshape(-1, x.shape[-1], 1)
    return x.reshape(x.shape[0], -1, 1)


def _softmax_output_forward(attrs, ctx, inputs, req, outputs):
    x, y = inputs[0], outputs[0]
    if _writes_into(req[0], y, x):
        softmax(ctx.xp, _softmax_output_layout(attrs, x), 1, out=_softmax_output_layout(attrs, y))
    else:
        p = softmax(ctx.xp, _softmax_output_layout(attrs, x), axis=1)
        assign(y, req[0], p.reshape(x.shape))


def _softmax_output_backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    x, label, out = inputs
    p = _softmax_output_layout(attrs, out)
    n, k, positions = p.shape
    if label.size == out.size:  # a probability per class: no normalization, nothing ignored
        assign(outputs[0], req[0], (out - label.reshape(out.shape)) * attrs.grad_scale)
    elif req[0] is not OpReqType.NULL:
        if not (attrs.multi_output or attrs.preserve_shape):
            # As MXNet: the label is read as (n,) even where inference gave it the data's
            # shape without the last axis (ndim > 2); only its first n entries count.
            label = label.reshape(-1)[:n]
        classes = label.reshape(n, positions).astype(np.int64)
        into = _writes_into(req[0], outputs[0], out)
        grad = _softmax_output_layout(attrs, outputs[0]) if into else xp.empty_like(p)
        _cross_entropy_gradient(xp, attrs, p, classes, grad)
        if not into:
            assign(outputs[0], req[0], grad.reshape(out.shape))
    assign(outputs[1], req[1], 0)


def _cross_entropy_gradient(xp, attrs, p, classes, grad):
    """``grad = scale * (p - target)``: target the (smoothed) one-hot of ``classes``
    along axis 1 of ``p`` (n, k, positions), its ones subtracted as a bool mask rather
    than built as a float one-hot; ``scale`` from ``grad_scale`` and ``normalization``.
    A class outside ``[0, k)`` has an all-zero one-hot (with smoothing, ``alpha / (k - 1)``
    everywhere)."""
    n, k, positions = p.shape
    hit = xp.arange(k).reshape(1, k, 1) == classes.reshape(n, 1, positions)
    if attrs.smooth_alpha:
        off = attrs.smooth_alpha / (k - 1)  # the target away from the label
        xp.subtract(p, off, out=grad)
        grad -= hit * grad.dtype.type(1 - attrs.smooth_alpha - off)
    else:
        xp.subtract(p, hit, out=grad)
    if attrs.use_ignore or attrs.normalization == "valid":
        valid = classes != int(attrs.ignore_label)
    if attrs.use_ignore:
        grad *= valid.reshape(n, 1, positions)
    if attrs.normalization == "batch":
        scale = attrs.grad_scale / (n * positions)
    elif attrs.normalization == "valid":
        scale = attrs.grad_scale / max(int(valid.sum()), 1)
    else:
        scale = attrs.grad_scale / positions
    if scale != 1:
        grad *= scale


def _softmax_output_sample(draw):
    d = Draw(draw)
    mode = d.choice(["plain", "multi_output", "preserve_shape"], "mode")
    shape = d.shape(d.int(2, 3) if mode != "multi_output" else d.int(3, 4), 1, 3)
    p = {"multi_output": mode == "multi_output", "preserve_shape": mode == "preserve_shape",
         "normalization": d.choice(["null", "batch", "valid"], "normalization"),
         "use_ignore": d.bool("use_ignore"), "grad_scale": d.float(0.5, 2.0, "grad_scale")}
    attrs = SoftmaxOutputParam.parse("SoftmaxOutput", p)
    classes = shape[1] if attrs.multi_output else (shape[-1] if attrs.preserve_shape
                                                   else int(np.prod(shape[1:])))
    label = d.rng.integers(0, classes, size=_softmax_output_label_shape(attrs, shape))
    return Case([d.uniform(shape, -2, 2), label.astype(np.float64)], p)


def _softmax_output_reference(params, x, label):
    attrs = SoftmaxOutputParam.parse("SoftmaxOutput", params)
    if attrs.multi_output:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    flat = x.reshape(-1, x.shape[-1]) if attrs.preserve_shape else x.reshape(x.shape[0], -1)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)


SoftmaxOutput = Op(
    "SoftmaxOutput",
    description="""Softmax with a cross-entropy gradient: the classic output layer.

Forward: the softmax of ``data`` flattened to ``(n, -1)`` (``multi_output``:
along axis 1; ``preserve_shape``: along the last axis).  Backward ignores the
head gradient, as a loss layer does, and gives ``grad_scale * (out - onehot(label))``
divided per ``normalization``; ``label`` holds class indices (or, with the
data's shape, probabilities) and gets no gradient.  ``smooth_alpha`` smooths
the one-hot target; ``use_ignore`` zeroes entries labelled ``ignore_label``.
The conformance suite checks the forward pass only: the backward is the
gradient of the cross-entropy, not of the output (tested directly).""",
    params=SoftmaxOutputParam,
    num_inputs=2,
    input_names=["data", "label"],
    output_names=["output"],
    infer_shape=_softmax_output_infer_shape,
    infer_type=data_type(label_inputs=(1,)),
    compute={XP: _softmax_output_forward},
    gradient=Gradient("_backward_SoftmaxOutput", uses=("in_data", "out_data")),
    inplace=[(0, 0)],
    domain=Domain(_softmax_output_sample, _softmax_output_reference, differentiable=()),
    aliases=("Softmax",),
)

BackwardSoftmaxOutput = Op(
    "_backward_SoftmaxOutput", params=SoftmaxOutputParam, num_inputs=3, num_outputs=2,
    compute={XP: _softmax_output_backward}, is_backward=True, forward_op="SoftmaxOutput",
)


# -- softmax_cross_entropy -----------------------------------------------------------------------
def _cross_entropy_infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    data = ins[0]
    if data is not None and len(data) != 2:
        raise ShapeError(f"operator 'softmax_cross_entropy', input 'data': expected 2 dimensions "
                         f"(batch, classes), got shape {tuple(data)}")
    if data is not None:
        set_shape(ins, 1, (data[0],), "softmax_cross_entropy", ["data", "label"])
    if ins[1] is not None and len(ins[1]) != 1:
        raise ShapeError(f"operator 'softmax_cross_entropy', input 'label': expected 1 dimension "
                         f"(batch,), got shape {tuple(ins[1])}")
    set_shape(outs, 0, (1,), "softmax_cross_entropy", ["output"], "output")
    return ins, outs


def _onehot(xp, label, k, dtype):
    return (xp.arange(k).reshape(1, k) == label.astype(np.int64).reshape(-1, 1)).astype(dtype)


def _cross_entropy_forward(attrs, ctx, inputs, req, outputs):
    xp, (x, label) = ctx.xp, inputs
    logp = softmax(xp, x, axis=1, log=True)
    loss = -(logp * _onehot(xp, label, x.shape[1], x.dtype)).sum()
    assign(outputs[0], req[0], loss.reshape(1))


def _cross_entropy_backward(attrs, ctx, inputs, req, outputs):
    xp, (dy, x, label) = ctx.xp, inputs
    grad = softmax(xp, x, axis=1) - _onehot(xp, label, x.shape[1], x.dtype)
    assign(outputs[0], req[0], grad * dy.reshape(1, 1))
    assign(outputs[1], req[1], 0)


def _cross_entropy_sample(draw):
    d = Draw(draw)
    n, k = d.int(1, 3), d.int(1, 4)
    return Case([d.uniform((n, k), -2, 2), d.rng.integers(0, k, size=n).astype(np.float64)])


def _cross_entropy_reference(params, x, label):
    z = x - x.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return np.array([-sum(logp[i, int(label[i])] for i in range(x.shape[0]))])


SoftmaxCrossEntropy = Op(
    "softmax_cross_entropy",
    description="""Softmax cross-entropy summed over the batch.

``data`` ``(n, k)`` scores, ``label`` ``(n,)`` class indices; the output has
shape ``(1,)``: ``-sum_i log softmax(data)[i, label[i]]``.  Gradient:
``dy * (softmax(data) - onehot(label))``; ``label`` gets no gradient.""",
    params=NoParams,
    num_inputs=2,
    input_names=["data", "label"],
    output_names=["output"],
    infer_shape=_cross_entropy_infer_shape,
    infer_type=data_type(label_inputs=(1,)),
    compute={XP: _cross_entropy_forward},
    gradient=Gradient("_backward_softmax_cross_entropy", uses=("out_grad", "in_data")),
    domain=Domain(_cross_entropy_sample, _cross_entropy_reference, differentiable=(0,)),
)

BackwardSoftmaxCrossEntropy = Op(
    "_backward_softmax_cross_entropy", num_inputs=3, num_outputs=2,
    compute={XP: _cross_entropy_backward}, is_backward=True, forward_op="softmax_cross_entropy",
)

OPS = [
    *_make_softmax("softmax", log=False),
    *_make_softmax("log_softmax", log=True),
    *_make_softmax("softmin", log=False, negate=True),
    SoftmaxOutput, BackwardSoftmaxOutput,
    SoftmaxCrossEntropy, BackwardSoftmaxCrossEntropy,
]
