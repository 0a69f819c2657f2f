"""Bounding-box operators of MXNet's ``contrib`` (``bounding_box.cc``, ``multibox_prior.cc``):
``box_iou``, ``box_encode``, ``box_decode``, ``bipartite_matching`` and ``MultiBoxPrior``.

Boxes are 4-vectors in ``corner`` format ``(xmin, ymin, xmax, ymax)`` or ``center``
format ``(x, y, width, height)``.  None of these is differentiable in MXNet's sense:
box_encode/box_decode pass no gradient to their anchors, matches or statistics, and
the others give zero gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    ZeroGradient,
)

from .._fields import FloatTuple
from . import _sampling as S
from ._common import backward_op, first_input_type, fixed_out_type, known, put, with_attrs


def _error(op: str, message: str) -> ShapeError:
    return ShapeError(f"operator {op!r}: {message}")


def _corners(xp: Any, boxes: Any, fmt: str) -> tuple[Any, Any, Any, Any]:
    a, b, c, d = (boxes[..., i] for i in range(4))
    if fmt == "corner":
        return a, b, c, d
    return a - c / 2, b - d / 2, a + c / 2, b + d / 2


def _centers(xp: Any, boxes: Any, fmt: str) -> tuple[Any, Any, Any, Any]:
    a, b, c, d = (boxes[..., i] for i in range(4))
    if fmt == "center":
        return a, b, c, d
    return (a + c) / 2, (b + d) / 2, c - a, d - b


# -- box_iou ------------------------------------------------------------------------------------
class BoxIouParam(Params):
    format = Field(str, "corner", "The box encoding type. \"corner\" means boxes are encoded as "
                                  "[xmin, ymin, xmax, ymax], \"center\" means boxes are encodes "
                                  "as [x, y, width, height].", choices=("center", "corner"))


def _iou_infer(attrs, ins, outs):
    lhs, rhs = ins
    if not (known(lhs) and known(rhs)):
        return ins, outs
    if lhs[-1] != 4 or rhs[-1] != 4:
        raise _error("_contrib_box_iou", f"boxes must end in 4 coordinates, got lhs "
                                         f"{tuple(lhs)} and rhs {tuple(rhs)}")
    return ins, [tuple(lhs[:-1]) + tuple(rhs[:-1])]


def _iou(xp, fmt, lhs, rhs):
    a = xp.reshape(lhs, (-1, 1, 4))
    b = xp.reshape(rhs, (1, -1, 4))
    al, at, ar, ab = _corners(xp, a, fmt)
    bl, bt, br, bb = _corners(xp, b, fmt)
    width = xp.maximum(0, xp.minimum(ar, br) - xp.maximum(al, bl))
    height = xp.maximum(0, xp.minimum(ab, bb) - xp.maximum(at, bt))
    inter = width * height
    union = (xp.maximum(0, ar - al) * xp.maximum(0, ab - at)
             + xp.maximum(0, br - bl) * xp.maximum(0, bb - bt) - inter)
    iou = xp.where(inter > 0, inter / xp.where(inter > 0, union, 1), 0)
    return iou.reshape(lhs.shape[:-1] + rhs.shape[:-1])


def _box_iou(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], _iou(ctx.xp, attrs.format, *inputs))


def _boxes(draw, shape):
    xy = S.floats(draw, tuple(shape) + (2,), 0, 4)
    wh = S.floats(draw, tuple(shape) + (2,), 0.5, 3)
    return np.concatenate([xy, xy + wh], axis=-1)


def _iou_case(draw):
    return Case([_boxes(draw, S.shape(draw, max_dims=2)), _boxes(draw, S.shape(draw, max_dims=2))])


# -- box_encode / box_decode --------------------------------------------------------------------
def _encode_infer(attrs, ins, outs):
    samples, matches, anchors, refs, means, stds = ins
    if not known(anchors):
        return ins, outs
    return ins, [tuple(anchors), tuple(anchors)]


def _box_encode(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    samples, matches, anchors, refs, means, stds = inputs
    batch = xp.arange(refs.shape[0])[:, None]
    matched = refs[batch, xp.clip(matches.astype(np.int64), 0, refs.shape[1] - 1)]
    ax, ay, aw, ah = _centers(xp, anchors, "corner")
    gx, gy, gw, gh = _centers(xp, matched, "corner")
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = xp.stack([(gx - ax) / aw, (gy - ay) / ah, xp.log(gw / aw), xp.log(gh / ah)], -1)
    positive = (samples > 0.5)[..., None]
    put(outputs[0], req[0], xp.where(positive, (raw - means) / stds, 0))
    put(outputs[1], req[1], xp.broadcast_to(positive, outputs[1].shape).astype(np.float32))


def _encode_case(draw):
    n, m = S.integer(draw, 1, 3, "anchors"), S.integer(draw, 1, 3, "refs")
    samples = S.integers(draw, (1, n), -1, 1)
    matches = S.integers(draw, (1, n), 0, m - 1)
    return Case([samples, matches, _boxes(draw, (1, n)), _boxes(draw, (1, m)),
                 S.floats(draw, (4,), -0.5, 0.5), S.floats(draw, (4,), 0.5, 2)])


def _np_encode(raw, samples, matches, anchors, refs, means, stds):
    out = np.zeros(anchors.shape)
    mask = np.zeros(anchors.shape)
    for b in range(anchors.shape[0]):
        for i in range(anchors.shape[1]):
            if samples[b, i] > 0.5:
                a, g = anchors[b, i], refs[b, int(matches[b, i])]
                aw, ah, gw, gh = a[2] - a[0], a[3] - a[1], g[2] - g[0], g[3] - g[1]
                t = [((g[0] + g[2]) - (a[0] + a[2])) / 2 / aw,
                     ((g[1] + g[3]) - (a[1] + a[3])) / 2 / ah, np.log(gw / aw), np.log(gh / ah)]
                out[b, i] = (np.array(t) - means) / stds
                mask[b, i] = 1
    return [out, mask]


class BoxDecodeParam(Params):
    std0 = Field(float, 1.0, "value to be divided from the 1st encoded values")
    std1 = Field(float, 1.0, "value to be divided from the 2nd encoded values")
    std2 = Field(float, 1.0, "value to be divided from the 3rd encoded values")
    std3 = Field(float, 1.0, "value to be divided from the 4th encoded values")
    clip = Field(float, -1.0, "If larger than 0, bounding box target will be clipped to this "
                              "value.")
    format = Field(str, "center", "The box encoding type. \"corner\" means boxes are encoded as "
                                  "[xmin, ymin, xmax, ymax], \"center\" means boxes are encodes "
                                  "as [x, y, width, height].", choices=("center", "corner"))


def _decode(xp, p, data, anchors):
    ax, ay, aw, ah = _centers(xp, anchors, p.format)
    dx, dy = data[..., 0] * p.std0, data[..., 1] * p.std1
    dw, dh = data[..., 2] * p.std2, data[..., 3] * p.std3
    if p.clip > 0:
        dw, dh = xp.minimum(dw, p.clip), xp.minimum(dh, p.clip)
    x, y = dx * aw + ax, dy * ah + ay
    w, h = xp.exp(dw) * aw / 2, xp.exp(dh) * ah / 2
    return xp.stack([x - w, y - h, x + w, y + h], axis=-1)


def _box_decode(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], _decode(ctx.xp, attrs, *inputs))


def _decode_case(draw):
    n = S.integer(draw, 1, 3, "boxes")
    return Case([S.floats(draw, (1, n, 4), -0.5, 0.5), _boxes(draw, (1, n))],
                {"format": "corner", "std0": S.number(draw, 0.1, 1)})


# -- bipartite_matching -------------------------------------------------------------------------
class BipartiteMatchingParam(Params):
    is_ascend = Field(bool, False, "Use ascend order for scores instead of descending. Please "
                                   "set threshold accordingly.")
    threshold = Field(float, REQUIRED, "Ignore matching when score < thresh, if is_ascend=false, "
                                       "or ignore score > thresh, if is_ascend=true.")
    topk = Field(int, -1, "Limit the number of matches to topk, set -1 for no limit")


def _matching_infer(attrs, ins, outs):
    data = ins[0]
    if not known(data):
        return ins, outs
    if len(data) < 2:
        raise _error("_contrib_bipartite_matching", f"data must be (..., N, M) scores, got "
                                                    f"{tuple(data)}")
    return ins, [tuple(data[:-1]), tuple(data[:-2]) + (data[-1],)]


def _match_one(scores: np.ndarray, p: BipartiteMatchingParam) -> tuple[np.ndarray, np.ndarray]:
    n, m = scores.shape
    rows, cols = np.full(n, -1.0), np.full(m, -1.0)
    flat = scores.ravel()
    order = np.argsort(flat if p.is_ascend else -flat, kind="stable")
    count = 0
    for k in order:
        score = flat[k]
        if (score > p.threshold) if p.is_ascend else (score < p.threshold):
            break
        i, j = divmod(int(k), m)
        if rows[i] < 0 and cols[j] < 0:
            rows[i], cols[j] = j, i
            count += 1
            if 0 < p.topk <= count:
                break
    return rows, cols


def _matching(p: BipartiteMatchingParam, data: np.ndarray) -> list[np.ndarray]:
    batch = data.reshape((-1,) + data.shape[-2:])
    pairs = [_match_one(s, p) for s in batch]
    rows = np.stack([r for r, _ in pairs]).reshape(data.shape[:-1])
    cols = np.stack([c for _, c in pairs]).reshape(data.shape[:-2] + data.shape[-1:])
    return [rows, cols]


def _bipartite(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    host = inputs[0].get() if hasattr(inputs[0], "get") else np.asarray(inputs[0])
    rows, cols = _matching(attrs, host.astype(np.float64))
    put(outputs[0], req[0], xp.asarray(rows))
    put(outputs[1], req[1], xp.asarray(cols))


def _matching_case(draw):
    shape = S.shape(draw, min_dims=2, max_dims=3)
    return Case([S.grid(draw, shape, 0, 1, step=0.01)],
                {"threshold": S.number(draw, 0, 0.5), "is_ascend": S.boolean(draw, "ascend")})


# -- box_nms ------------------------------------------------------------------------------------
class BoxNMSParam(Params):
    overlap_thresh = Field(float, 0.5, "Overlapping(IoU) threshold to suppress object with "
                                       "smaller score.")
    valid_thresh = Field(float, 0.0, "Filter input boxes to those whose scores greater than "
                                     "valid_thresh.")
    topk = Field(int, -1, "Apply nms to topk boxes with descending scores, -1 to no "
                          "restriction.")
    coord_start = Field(int, 2, "Start index of the consecutive 4 coordinates.")
    score_index = Field(int, 1, "Index of the scores/confidence of boxes.")
    id_index = Field(int, -1, "Optional, index of the class categories, -1 to disable.")
    background_id = Field(int, -1, "Optional, id of the background class which will be ignored "
                                   "in nms.")
    force_suppress = Field(bool, False, "Optional, if set false and id_index is provided, nms "
                                        "will only apply to boxes belongs to the same category")
    in_format = Field(str, "corner", "The input box encoding type. \"corner\" means boxes are "
                                     "encoded as [xmin, ymin, xmax, ymax], \"center\" means "
                                     "boxes are encodes as [x, y, width, height].",
                      choices=("center", "corner"))
    out_format = Field(str, "corner", "The output box encoding type. \"corner\" means boxes are "
                                      "encoded as [xmin, ymin, xmax, ymax], \"center\" means "
                                      "boxes are encodes as [x, y, width, height].",
                       choices=("center", "corner"))


def _kept(p: BoxNMSParam, boxes: np.ndarray) -> list[int]:
    """Indices of the rows of one batch entry (N, K) that survive, best score first."""
    scores = boxes[:, p.score_index]
    candidates = [i for i in range(boxes.shape[0]) if scores[i] > p.valid_thresh and not (
        p.id_index >= 0 and boxes[i, p.id_index] == p.background_id)]
    candidates.sort(key=lambda i: -scores[i])  # stable: ties keep their order
    if p.topk > 0:
        candidates = candidates[:p.topk]
    corners = np.stack(_corners(np, boxes[:, p.coord_start:p.coord_start + 4], p.in_format),
                       axis=-1)
    kept: list[int] = []
    for i in candidates:
        suppressed = False
        for j in kept:
            same_class = p.force_suppress or p.id_index < 0 or \
                boxes[i, p.id_index] == boxes[j, p.id_index]
            if same_class and _iou(np, "corner", corners[j], corners[i]) > p.overlap_thresh:
                suppressed = True
                break
        if not suppressed:
            kept.append(i)
    return kept


def _nms(p: BoxNMSParam, data: np.ndarray) -> np.ndarray:
    flat = data.reshape((-1,) + data.shape[-2:])
    out = np.full(flat.shape, -1.0)
    for b, boxes in enumerate(flat):
        for row, i in enumerate(_kept(p, boxes)):
            out[b, row] = boxes[i]
            if p.in_format != p.out_format:
                coords = boxes[i, p.coord_start:p.coord_start + 4][None]
                convert = _centers if p.out_format == "center" else _corners
                out[b, row, p.coord_start:p.coord_start + 4] = np.concatenate(
                    convert(np, coords, p.in_format))
    return out.reshape(data.shape)


def _box_nms(attrs, ctx, inputs, req, outputs):
    host = inputs[0].get() if hasattr(inputs[0], "get") else np.asarray(inputs[0])
    put(outputs[0], req[0], ctx.xp.asarray(_nms(attrs, host.astype(np.float64))))


def _box_nms_back(attrs, ctx, inputs, req, outputs):
    g, data = (x.get() if hasattr(x, "get") else np.asarray(x) for x in inputs)
    flat_g = g.reshape((-1,) + g.shape[-2:])
    flat = data.reshape(flat_g.shape).astype(np.float64)
    grad = np.zeros(flat.shape)
    for b, boxes in enumerate(flat):
        for row, i in enumerate(_kept(attrs, boxes)):
            grad[b, i] = flat_g[b, row]
    put(outputs[0], req[0], ctx.xp.asarray(grad.reshape(data.shape)))


def _nms_infer(attrs, ins, outs):
    data = ins[0]
    if not known(data):
        return ins, outs
    if len(data) < 2 or data[-1] < attrs.coord_start + 4:
        raise _error("_contrib_box_nms", f"data must be (..., N, K) with the 4 coordinates from "
                                         f"column {attrs.coord_start}, got {tuple(data)}")
    return ins, [tuple(data)]


def _nms_case(draw):
    n = S.integer(draw, 1, 4, "boxes")
    ids = S.integers(draw, (1, n, 1), 0, 1)
    scores = S.grid(draw, (1, n, 1), 0.05, 1, step=0.05)
    return Case([np.concatenate([ids, scores, _boxes(draw, (1, n))], axis=-1)],
                {"id_index": 0, "overlap_thresh": S.number(draw, 0.2, 0.8),
                 "force_suppress": S.boolean(draw, "force")})


# -- MultiBoxTarget -----------------------------------------------------------------------------
class MultiBoxTargetParam(Params):
    overlap_threshold = Field(float, 0.5, "Anchor-GT overlap threshold to be regarded as a "
                                          "positive match.")
    ignore_label = Field(float, -1.0, "Label for ignored anchors.")
    negative_mining_ratio = Field(float, -1.0, "Max negative to positive samples ratio, use -1 "
                                               "to disable mining")
    negative_mining_thresh = Field(float, 0.5, "Threshold used for negative mining.")
    minimum_negative_samples = Field(int, 0, "Minimum number of negative samples.")
    variances = FloatTuple((0.1, 0.1, 0.2, 0.2), "Variances to be encoded in box regression "
                                                 "target.")


def _target_one(p: MultiBoxTargetParam, anchors: np.ndarray, labels: np.ndarray,
                cls_pred: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = anchors.shape[0]
    gts = labels[labels[:, 0] >= 0]
    loc = np.zeros((n, 4))
    mask = np.zeros((n, 4))
    cls = np.full(n, p.ignore_label)
    match = np.full(n, -1)
    if len(gts):
        iou = _iou(np, "corner", anchors, gts[:, 1:5])  # (N, G)
        work = iou.copy()
        for _ in range(len(gts)):  # each ground truth takes its best anchor, best pair first
            a, g = np.unravel_index(np.argmax(work), work.shape)
            if work[a, g] <= 1e-6:
                break
            match[a] = g
            work[a, :] = -1
            work[:, g] = -1
        best = iou.argmax(axis=1)
        for a in range(n):
            if match[a] < 0 and iou[a, best[a]] >= p.overlap_threshold:
                match[a] = best[a]
        max_iou = iou.max(axis=1)
    else:
        max_iou = np.zeros(n)
    positive = match >= 0
    ax, ay, aw, ah = _centers(np, anchors, "corner")
    for a in np.nonzero(positive)[0]:
        g = gts[match[a]]
        gx, gy, gw, gh = _centers(np, g[1:5][None], "corner")
        v = p.variances
        loc[a] = [(gx[0] - ax[a]) / aw[a] / v[0], (gy[0] - ay[a]) / ah[a] / v[1],
                  np.log(gw[0] / aw[a]) / v[2], np.log(gh[0] / ah[a]) / v[3]]
        mask[a] = 1
        cls[a] = g[0] + 1
    if p.negative_mining_ratio > 0:
        candidates = [a for a in range(n) if not positive[a]
                      and max_iou[a] < p.negative_mining_thresh]
        count = min(max(int(positive.sum() * p.negative_mining_ratio),
                        p.minimum_negative_samples), len(candidates))
        scores = cls_pred - cls_pred.max(axis=0, keepdims=True)
        background = np.exp(scores[0]) / np.exp(scores).sum(axis=0)
        # the hardest negatives first: the least confident in the background class
        for a in sorted(candidates, key=lambda a: background[a])[:count]:
            cls[a] = 0
    else:
        cls[~positive] = 0
    return loc.ravel(), mask.ravel(), cls


def _multibox_target_np(p: MultiBoxTargetParam, anchors, labels, cls_pred) -> list:
    # in float64 whatever the input dtype, so that IoU ties break the same way everywhere
    anchors, labels, cls_pred = (np.asarray(x, dtype=np.float64)
                                 for x in (anchors.reshape(-1, 4), labels, cls_pred))
    parts = [_target_one(p, anchors, labels[b], cls_pred[b]) for b in range(labels.shape[0])]
    return [np.stack([q[i] for q in parts]) for i in range(3)]


def _multibox_target(attrs, ctx, inputs, req, outputs):
    host = [x.get() if hasattr(x, "get") else np.asarray(x) for x in inputs]
    for out, r, value in zip(outputs, req, _multibox_target_np(attrs, *host)):
        put(out, r, ctx.xp.asarray(value))


def _target_infer(attrs, ins, outs):
    anchor, label, cls_pred = ins
    if not (known(anchor) and known(label) and known(cls_pred)):
        return ins, outs
    n, b = anchor[1], label[0]
    return ins, [(b, n * 4), (b, n * 4), (b, n)]


def _target_case(draw):
    n = S.integer(draw, 1, 3, "anchors")
    gt = _boxes(draw, (1, 1)) / 6
    label = np.concatenate([S.integers(draw, (1, 1, 1), 0, 1), gt], axis=-1)
    return Case([_boxes(draw, (1, n)) / 6, label, S.floats(draw, (1, 3, n))],
                {"negative_mining_ratio": S.choice(draw, [-1.0, 3.0], "mining")})


# -- MultiBoxPrior ------------------------------------------------------------------------------
class MultiBoxPriorParam(Params):
    sizes = FloatTuple((1.0,), "List of sizes of generated MultiBoxPriores.")
    ratios = FloatTuple((1.0,), "List of aspect ratios of generated MultiBoxPriores.")
    clip = Field(bool, False, "Whether to clip out-of-boundary boxes.")
    steps = FloatTuple((-1.0, -1.0), "Priorbox step across y and x, -1 for auto calculation.")
    offsets = FloatTuple((0.5, 0.5), "Priorbox center offsets, y and x respectively")


def _prior_count(p: MultiBoxPriorParam) -> int:
    return len(p.sizes) + len(p.ratios) - 1


def _prior_infer(attrs, ins, outs):
    data = ins[0]
    if not known(data):
        return ins, outs
    if len(data) != 4:
        raise _error("_contrib_MultiBoxPrior", f"data must be (N, C, H, W), got {tuple(data)}")
    return ins, [(1, data[2] * data[3] * _prior_count(attrs), 4)]


def _priors(xp: Any, p: MultiBoxPriorParam, height: int, width: int) -> Any:
    step_y = p.steps[0] if p.steps[0] > 0 else 1.0 / height
    step_x = p.steps[1] if p.steps[1] > 0 else 1.0 / width
    cy = (xp.arange(height) + p.offsets[0]) * step_y
    cx = (xp.arange(width) + p.offsets[1]) * step_x
    halves = []  # (half width, half height) of each anchor at a position
    r0 = float(np.sqrt(p.ratios[0]))
    for size in p.sizes:
        halves.append((size * height / width * r0 / 2, size / r0 / 2))
    for ratio in p.ratios[1:]:
        r = float(np.sqrt(ratio))
        halves.append((p.sizes[0] * height / width * r / 2, p.sizes[0] / r / 2))
    hw = xp.asarray([h[0] for h in halves])
    hh = xp.asarray([h[1] for h in halves])
    y = cy[:, None, None]
    x = cx[None, :, None]
    boxes = xp.stack(xp.broadcast_arrays(x - hw, y - hh, x + hw, y + hh), axis=-1)
    if p.clip:
        boxes = xp.clip(boxes, 0, 1)
    return boxes.reshape(1, -1, 4)


def _multibox_prior(attrs, ctx, inputs, req, outputs):
    data = inputs[0]
    put(outputs[0], req[0], _priors(ctx.xp, attrs, data.shape[2], data.shape[3]))


def _prior_case(draw):
    shape = (1, 1, S.integer(draw, 1, 3, "h"), S.integer(draw, 1, 3, "w"))
    return Case([S.floats(draw, shape)],
                {"sizes": (S.number(draw, 0.2, 1), 0.3), "ratios": (1.0, S.number(draw, 0.5, 2)),
                 "clip": S.boolean(draw, "clip")})


OPS: list[Op] = [
    Op("_contrib_box_iou", params=BoxIouParam, num_inputs=2, input_names=["lhs", "rhs"],
       infer_shape=_iou_infer, infer_type=first_input_type(2), compute={XP: _box_iou},
       gradient=ZeroGradient(),
       domain=Domain(_iou_case, reference=with_attrs(BoxIouParam, "_contrib_box_iou",
                                                     lambda p, a, b: _iou(np, p.format, a, b))),
       description="Intersection over union of every lhs box with every rhs box: the output "
                   "has shape ``lhs.shape[:-1] + rhs.shape[:-1]`` (0 where boxes do not "
                   "overlap).  Boxes in ``format`` corner or center.  Gradient zero."),
    Op("_contrib_box_encode", num_inputs=6,
       input_names=["samples", "matches", "anchors", "refs", "means", "stds"],
       num_outputs=2, infer_shape=_encode_infer,
       infer_type=lambda attrs, ins, outs: (ins, [ins[2], ins[2]]),
       compute={XP: _box_encode}, gradient=ZeroGradient(),
       domain=Domain(_encode_case, reference=_np_encode, differentiable=()),
       description="Regression targets of anchors (B, N, 4, corners) for their matched "
                   "reference boxes (refs[b, matches[b, i]]) where samples > 0.5: "
                   "``((gx - ax) / aw, (gy - ay) / ah, log(gw / aw), log(gh / ah))`` "
                   "normalized by means and stds, and a mask of 1 there, 0 elsewhere.  "
                   "Gradient zero."),
    Op("_contrib_box_decode", params=BoxDecodeParam, num_inputs=2,
       input_names=["data", "anchors"],
       infer_shape=lambda attrs, ins, outs: (ins, [tuple(ins[0])] if known(ins[0]) else outs),
       infer_type=first_input_type(2), compute={XP: _box_decode},
       gradient=ZeroGradient(),
       domain=Domain(_decode_case, reference=with_attrs(
           BoxDecodeParam, "_contrib_box_decode", lambda p, d, a: _decode(np, p, d, a)),
           differentiable=()),
       description="Boxes (corner format) from offsets data (B, N, 4) relative to anchors "
                   "(in ``format``): ``x = dx std0 aw + ax``, ``w = exp(dw std2) aw`` (dw, dh "
                   "clipped at ``clip`` when positive), likewise y and h.  No gradient flows "
                   "(zero gradient, as MXNet's backward writes zeros)."),
    Op("_contrib_bipartite_matching", params=BipartiteMatchingParam, input_names=["data"],
       num_outputs=2, infer_shape=_matching_infer, infer_type=first_input_type(1),
       compute={XP: _bipartite}, gradient=ZeroGradient(),
       domain=Domain(_matching_case, reference=with_attrs(
           BipartiteMatchingParam, "_contrib_bipartite_matching", _matching),
           differentiable=()),
       description="Greedy bipartite matching of scores (..., N, M): pairs are taken best "
                   "score first (lowest with is_ascend) while both row and column are free "
                   "and the score passes ``threshold`` (up to ``topk`` pairs).  Outputs each "
                   "row's matched column and each column's matched row, -1 when unmatched, in "
                   "the input's dtype.  Gradient zero."),
    Op("_contrib_box_nms", params=BoxNMSParam, input_names=["data"],
       aliases=("_contrib_box_non_maximum_suppression",), infer_shape=_nms_infer,
       compute={XP: _box_nms}, gradient=Gradient("_backward_contrib_box_nms",
                                                  ("out_grad", "in_data")),
       domain=Domain(_nms_case, reference=with_attrs(BoxNMSParam, "_contrib_box_nms", _nms),
                     differentiable=()),
       description="Non-maximum suppression per batch entry of rows (..., N, K) holding a "
                   "score, 4 coordinates and optionally a class id: rows with score > "
                   "valid_thresh (and not of background_id) are taken best first (topk at "
                   "most), each dropping later rows overlapping it by IoU > overlap_thresh "
                   "(same class only, unless force_suppress).  Kept rows come first, in that "
                   "order and out_format, the rest are -1.  Gradient: each kept row's head "
                   "gradient back to its input row; suppressed rows get zero."),
    backward_op("contrib_box_nms", BoxNMSParam, 2, 1, _box_nms_back),
    Op("_contrib_MultiBoxTarget", params=MultiBoxTargetParam, num_inputs=3,
       input_names=["anchor", "label", "cls_pred"], num_outputs=3,
       output_names=["loc_target", "loc_mask", "cls_target"], infer_shape=_target_infer,
       infer_type=lambda attrs, ins, outs: (ins, [ins[0]] * 3), compute={XP: _multibox_target},
       gradient=ZeroGradient(),
       domain=Domain(_target_case, reference=with_attrs(
           MultiBoxTargetParam, "_contrib_MultiBoxTarget", _multibox_target_np),
           differentiable=()),
       description="SSD training targets: anchors (1, N, 4) matched to the labels (B, M, 5: "
                   "class, corners; class -1 pads) — each ground truth its best anchor, then "
                   "every anchor with IoU >= overlap_threshold — give box regression targets "
                   "(encoded with variances) and masks (B, 4N) and class targets (B, N): "
                   "class + 1 when matched; with negative mining the hardest unmatched anchors "
                   "(IoU < negative_mining_thresh, least background confidence in cls_pred) "
                   "up to ratio x positives get 0 and the rest ignore_label, else all get 0.  "
                   "Gradient zero."),
    Op("_contrib_MultiBoxPrior", params=MultiBoxPriorParam, input_names=["data"],
       infer_shape=_prior_infer,
       infer_type=fixed_out_type(lambda attrs, ins: np.dtype(np.float32)),
       compute={XP: _multibox_prior}, gradient=ZeroGradient(),
       domain=Domain(_prior_case, reference=with_attrs(
           MultiBoxPriorParam, "_contrib_MultiBoxPrior",
           lambda p, x: _priors(np, p, x.shape[2], x.shape[3])), differentiable=()),
       description="Anchor boxes (corner format, relative to the image) for every position "
                   "of data (N, C, H, W): centers at ``(i + offset) * step`` (step 1/H, 1/W "
                   "by default); at each, one box per size with ratios[0], then one per "
                   "further ratio with sizes[0] (width ``size H/W sqrt(ratio)``, height "
                   "``size / sqrt(ratio)``).  Output (1, H W (len(sizes)+len(ratios)-1), 4) "
                   "float32, clipped to [0, 1] with clip.  Gradient zero."),
]
