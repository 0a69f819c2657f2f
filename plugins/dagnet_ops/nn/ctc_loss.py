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


def _sequence(attrs, label, length):
    """The label sequence of one sample: its first ``length`` entries, or up to padding."""
    if length is None:
        pad = 0 if attrs.blank_label == "first" else -1
        stops = np.flatnonzero(label == pad)
        length = int(stops[0]) if len(stops) else len(label)
    return label[:int(length)].astype(np.int64)


def ctc_batch(logits, sequences, lengths, blank):
    """Loss (batch,) and gradient w.r.t. ``logits`` (time, batch, classes) of every sample
    at once: ``sequences`` are the label sequences, ``lengths`` the time steps each uses.
    Alignment probabilities run in log space; a sample's recursion stops at its length."""
    steps, batch, classes = logits.shape
    shifted = logits - logits.max(axis=2, keepdims=True)
    log_y = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))
    size = 2 * max((len(q) for q in sequences), default=0) + 1
    ext = np.full((batch, size), blank, dtype=np.int64)
    valid = np.zeros((batch, size), dtype=bool)
    for n, seq in enumerate(sequences):
        ext[n, 1:2 * len(seq) + 1:2] = seq
        valid[n, :2 * len(seq) + 1] = True
    # a path may skip the blank between two different labels
    skip = np.zeros((batch, size), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2]) & valid[:, 2:]
    emit = np.take_along_axis(log_y, np.broadcast_to(ext, (steps, batch, size)), axis=2)
    emit = np.where(valid, emit, -np.inf)
    rows = np.arange(batch)
    last = np.array([2 * len(q) for q in sequences])
    alpha = np.full((steps, batch, size), -np.inf)
    beta = np.full((steps, batch, size), -np.inf)
    alpha[0, :, :2] = emit[0, :, :2]
    for t in range(1, steps):
        prev = alpha[t - 1]
        best = prev.copy()
        best[:, 1:] = np.logaddexp(best[:, 1:], prev[:, :-1])
        best[:, 2:] = np.where(skip[:, 2:], np.logaddexp(best[:, 2:], prev[:, :-2]),
                               best[:, 2:])
        alpha[t] = np.where((t < lengths)[:, None], best + emit[t], prev)  # frozen after end
    for t in range(steps - 1, -1, -1):
        start = np.full((batch, size), -np.inf)
        start[rows, last] = emit[t, rows, last]
        before = np.maximum(last - 1, 0)
        start[rows, before] = np.where(last > 0, emit[t, rows, before], start[rows, before])
        if t + 1 < steps:
            nxt = beta[t + 1]
            best = nxt.copy()
            best[:, :-1] = np.logaddexp(best[:, :-1], nxt[:, 1:])
            best[:, :-2] = np.where(skip[:, 2:], np.logaddexp(best[:, :-2], nxt[:, 2:]),
                                    best[:, :-2])
            inner = best + emit[t]
        else:
            inner = np.full((batch, size), -np.inf)
        beta[t] = np.where((t == lengths - 1)[:, None], start,
                           np.where((t < lengths - 1)[:, None], inner, -np.inf))
    end = alpha[-1, rows, last]
    end = np.where(last > 0, np.logaddexp(end, alpha[-1, rows, np.maximum(last - 1, 0)]), end)
    log_p = np.where(lengths > 0, end, np.where(last == 0, 0.0, -np.inf))
    # the mass of the paths through (t, s), then summed per class
    with np.errstate(invalid="ignore"):
        through = np.where(np.isfinite(emit), alpha + beta - emit, -np.inf)
    share = np.exp(through - np.where(np.isfinite(log_p), log_p, 0.0)[None, :, None])
    taken = np.zeros_like(log_y)
    t_idx, n_idx, _ = np.indices(share.shape)
    np.add.at(taken, (t_idx, n_idx, np.broadcast_to(ext, share.shape)), share)
    active = (np.arange(steps)[:, None] < lengths[None, :])[:, :, None]
    grad = np.where(active & np.isfinite(log_p)[None, :, None], np.exp(log_y) - taken, 0.0)
    return -log_p, grad


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp

    def host(a):
        return np.asarray(a.get() if hasattr(a, "get") else a)

    data = host(inputs[0]).astype(np.float64)
    label = host(inputs[1])
    extra = list(inputs[2:])
    data_lengths = host(extra.pop(0)) if attrs.use_data_lengths else None
    label_lengths = host(extra.pop(0)) if attrs.use_label_lengths else None
    steps, batch, classes = data.shape
    blank = 0 if attrs.blank_label == "first" else classes - 1
    lengths = (np.minimum(data_lengths.astype(np.int64), steps) if data_lengths is not None
               else np.full(batch, steps, dtype=np.int64))
    sequences = [_sequence(attrs, label[n], label_lengths[n] if label_lengths is not None
                           else None) for n in range(batch)]
    loss, grad = ctc_batch(data, sequences, lengths, blank)
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
