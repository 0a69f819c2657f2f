"""``CTCLoss`` (alias ``ctc_loss``): connectionist temporal classification (Graves et al.,
2006) of unnormalized scores ``data`` (time, batch, classes) against label sequences."""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign

from .._draw import Draw
from ._common import set_shape

__all__ = ["OPS"]


class CTCLossParam(Params):
    use_data_lengths = Field(bool, False, "read each sequence's length from data_lengths")
    use_label_lengths = Field(bool, False, "read each label's length from label_lengths")
    blank_label = Field(str, "first", "the blank class: 'first' (0; labels padded with 0) or "
                                      "'last' (classes-1; labels padded with -1)",
                        choices=("first", "last"))


def _input_names(attrs):
    names = ["data", "label"]
    if attrs.use_data_lengths:
        names.append("data_lengths")
    if attrs.use_label_lengths:
        names.append("label_lengths")
    return names


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    names = _input_names(attrs)
    data, label = ins[0], ins[1]
    if data is not None and len(data) != 3:
        raise ShapeError(f"operator 'CTCLoss', input 'data': expected (time, batch, classes), "
                         f"got shape {tuple(data)}")
    if label is not None and len(label) != 2:
        raise ShapeError(f"operator 'CTCLoss', input 'label': expected (batch, label_length), "
                         f"got shape {tuple(label)}")
    batch = data[1] if data is not None else label[0] if label is not None else None
    if batch is not None:
        for i in range(2, len(names)):
            set_shape(ins, i, (batch,), "CTCLoss", names)
        set_shape(outs, 0, (batch,), "CTCLoss", ["loss", "grad"], "output")
    if data is not None:
        set_shape(outs, 1, tuple(data), "CTCLoss", ["loss", "grad"], "output")
    return ins, outs


def _infer_type(attrs, ins, outs):
    dtype = ins[0] if ins[0] is not None else outs[0]
    return [dtype] + [t if t is not None else dtype for t in ins[1:]], [dtype, dtype]


def _logsumexp(a, axis=None):
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):  # log(0) = -inf: no path goes through there
        return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(a - top), axis=axis))


def _sequence(attrs, label, length):
    """The label sequence of one sample: its first ``length`` entries, or up to padding."""
    if length is None:
        pad = 0 if attrs.blank_label == "first" else -1
        stops = np.flatnonzero(label == pad)
        length = int(stops[0]) if len(stops) else len(label)
    return label[:int(length)].astype(np.int64)


def ctc_sample(logits, sequence, blank):
    """Loss and gradient (w.r.t. the logits) of one sample: ``logits`` (time, classes)."""
    steps, classes = logits.shape
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_y = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    ext = np.full(2 * len(sequence) + 1, blank, dtype=np.int64)
    ext[1::2] = sequence
    size = len(ext)
    # a path may skip a blank between two different labels
    skip = np.zeros(size, dtype=bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    alpha = np.full((steps, size), -np.inf)
    beta = np.full((steps, size), -np.inf)
    if steps == 0:
        return (0.0 if size == 1 else np.inf), np.zeros_like(logits)
    alpha[0, 0] = log_y[0, ext[0]]
    if size > 1:
        alpha[0, 1] = log_y[0, ext[1]]
    for t in range(1, steps):
        prev = alpha[t - 1]
        best = prev.copy()
        best[1:] = np.logaddexp(best[1:], prev[:-1])
        best[2:] = np.where(skip[2:], np.logaddexp(best[2:], prev[:-2]), best[2:])
        alpha[t] = best + log_y[t, ext]
    beta[-1, -1] = log_y[-1, ext[-1]]
    if size > 1:
        beta[-1, -2] = log_y[-1, ext[-2]]
    skip_back = np.zeros(size, dtype=bool)
    skip_back[:-2] = skip[2:]
    for t in range(steps - 2, -1, -1):
        nxt = beta[t + 1]
        best = nxt.copy()
        best[:-1] = np.logaddexp(best[:-1], nxt[1:])
        best[:-2] = np.where(skip_back[:-2], np.logaddexp(best[:-2], nxt[2:]), best[:-2])
        beta[t] = best + log_y[t, ext]
    ends = alpha[-1, -1] if size == 1 else np.logaddexp(alpha[-1, -1], alpha[-1, -2])
    log_p = float(ends)
    if not np.isfinite(log_p):
        return np.inf, np.zeros_like(logits)
    occupancy = alpha + beta - log_y[:, ext]  # log of the mass of paths through (t, s)
    grad = np.exp(log_y)
    for k in np.unique(ext):
        grad[:, k] -= np.exp(_logsumexp(occupancy[:, ext == k], axis=1) - log_p)
    return -log_p, grad


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    data = np.asarray(inputs[0].get() if hasattr(inputs[0], "get") else inputs[0],
                      dtype=np.float64)
    label = np.asarray(inputs[1].get() if hasattr(inputs[1], "get") else inputs[1])
    extra = list(inputs[2:])

    def host(a):
        return np.asarray(a.get() if hasattr(a, "get") else a)

    data_lengths = host(extra.pop(0)) if attrs.use_data_lengths else None
    label_lengths = host(extra.pop(0)) if attrs.use_label_lengths else None
    steps, batch, classes = data.shape
    blank = 0 if attrs.blank_label == "first" else classes - 1
    loss = np.zeros(batch)
    grad = np.zeros_like(data)
    for n in range(batch):
        t_n = int(data_lengths[n]) if data_lengths is not None else steps
        seq = _sequence(attrs, label[n], label_lengths[n] if label_lengths is not None else None)
        loss[n], grad[:t_n, n] = ctc_sample(data[:t_n, n], seq, blank)
    assign(outputs[0], req[0], xp.asarray(loss.astype(outputs[0].dtype)))
    assign(outputs[1], req[1], xp.asarray(grad.astype(outputs[1].dtype)))


def _backward(attrs, ctx, inputs, req, outputs):
    head, grad = inputs[0], inputs[-1]
    assign(outputs[0], req[0], grad * head.reshape((1, -1, 1)))
    for i in range(1, len(outputs)):
        assign(outputs[i], req[i], 0)


def _sample(draw):
    d = Draw(draw)
    steps, batch, classes = d.int(3, 5, "time"), d.int(1, 2, "batch"), d.int(3, 4, "classes")
    length = d.int(1, 2, "label length")
    labels = [[(n + i) % (classes - 1) + 1 for i in range(length)] for n in range(batch)]
    return Case([d.uniform((steps, batch, classes), -1, 1),
                 np.array(labels, dtype=np.float32)], {"blank_label": "first"})


def _reference(params, data, label):
    """Sums over every alignment by brute force, from the definition."""
    import itertools

    steps, batch, classes = data.shape
    losses = []
    for n in range(batch):
        logits = data[:, n].astype(np.float64)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        target = [int(v) for v in label[n] if v != 0]
        total = 0.0
        for path in itertools.product(range(classes), repeat=steps):
            collapsed = [c for i, c in enumerate(path) if c != 0 and (i == 0 or c != path[i - 1])]
            if collapsed == target:
                total += float(np.prod(probs[np.arange(steps), list(path)]))
        losses.append(-np.log(total))
    return [np.array(losses), None]


CTCLoss = Op(
    "CTCLoss",
    description="""Connectionist temporal classification loss, one value per sample:
``-log p(label | data)`` summed over every alignment of the label to the time steps
(blanks between and around labels, repeats merged).  ``data`` holds unnormalized
scores ``(time, batch, classes)`` (a softmax over classes is applied inside);
``label`` ``(batch, max_label_length)`` is padded with 0 (``blank_label='first'``: class
0 is the blank) or -1 (``'last'``: the last class is the blank); ``data_lengths`` and
``label_lengths`` give per-sample lengths when ``use_data_lengths`` /
``use_label_lengths``.  The gradient with respect to ``data`` is computed with the loss
(the hidden output ``grad``), by the forward-backward algorithm on the host.""",
    params=CTCLossParam,
    num_inputs=lambda a: 2 + int(a.use_data_lengths) + int(a.use_label_lengths),
    num_outputs=2,
    num_visible_outputs=1,
    input_names=_input_names,
    output_names=["loss", "grad"],
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    compute={XP: _forward},
    gradient=Gradient("_backward_CTCLoss", uses=("out_grad", "out_data")),
    domain=Domain(_sample, _reference, differentiable=(0,), rtol=1e-4, atol=1e-6),
    aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
)

BackwardCTCLoss = Op(
    "_backward_CTCLoss",
    params=CTCLossParam,
    num_inputs=3,
    num_outputs=lambda a: 2 + int(a.use_data_lengths) + int(a.use_label_lengths),
    compute={XP: _backward},
    is_backward=True,
    forward_op="CTCLoss",
)

OPS = [CTCLoss, BackwardCTCLoss]
