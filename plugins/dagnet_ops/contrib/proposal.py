"""``_contrib_Proposal`` and ``_contrib_MultiProposal`` (MXNet's ``proposal.cc``,
``multi_proposal.cc``): Faster R-CNN's region proposals from a region proposal network.

Per image: anchors of every ``ratios`` x ``scales`` pair (MXNet's rounding) are laid on
the ``feature_stride`` grid; each moves by its predicted deltas (centre and log-size, or
with ``iou_loss`` the corners directly) and is clipped to the image (``im_info`` rows:
height, width, scale); anchors beyond the image's real feature size, and boxes smaller
than ``rpn_min_size * scale`` (which are also widened by that size), get score -1.
The ``rpn_pre_nms_top_n`` best scores (stable order) go through greedy non-maximum
suppression at IoU ``threshold``, keeping at most ``rpn_post_nms_top_n``; the output
always has ``rpn_post_nms_top_n`` rows ``(batch index, x1, y1, x2, y2)``, repeating the
kept boxes cyclically when fewer survive, and with ``output_score`` their scores.
``cls_prob`` holds background then foreground scores per anchor; ``Proposal`` takes one
image, ``MultiProposal`` a batch.  The gradient is zero for every input, as MXNet's.
"""

from __future__ import annotations

import math

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Op, Params, ZeroGradient, assign

from .._draw import Draw
from ._common import contrib_error, host, kernel_error

__all__ = ["OPS"]


class ProposalParam(Params):
    rpn_pre_nms_top_n = Field(int, 6000, "Number of top scoring boxes to keep before applying "
                                         "NMS to RPN proposals")
    rpn_post_nms_top_n = Field(int, 300, "Number of top scoring boxes to keep after applying "
                                         "NMS to RPN proposals")
    threshold = Field(float, 0.7, "NMS value, below which to suppress.")
    rpn_min_size = Field(int, 16, "Minimum height or width in proposal")
    scales = Field(str, "(4,8,16,32)", "Used to generate anchor windows by enumerating scales")
    ratios = Field(str, "(0.5,1,2)", "Used to generate anchor windows by enumerating ratios")
    feature_stride = Field(int, 16, "The size of the receptive field each unit in the "
                                    "convolution layer of the rpn,for example the product of "
                                    "all stride's prior to this layer.")
    output_score = Field(bool, False, "Add score to outputs")
    iou_loss = Field(bool, False, "Usage of IoU Loss")

    @classmethod
    def parse(cls, op_name, kwargs):
        """As the base parser; ``scales`` and ``ratios`` (MXNet's float tuples) may be
        given as Python sequences, kept in their written form ``(8, 16, 32)``."""
        kwargs = {k: str(tuple(v)) if k in ("scales", "ratios") and isinstance(v, (list, tuple))
                  else v for k, v in kwargs.items()}
        return super().parse(op_name, kwargs)


def _floats(op: str, name: str, text) -> tuple[float, ...]:
    """A tuple of floats from MXNet's written form ``(8, 16, 32)`` (or a Python sequence)."""
    if not isinstance(text, str):
        return tuple(float(v) for v in text)
    body = text.strip().strip("()[]")
    try:
        return tuple(float(v) for v in body.split(",") if v.strip())
    except ValueError:
        raise contrib_error(op, f"{name}={text!r} must be a tuple of numbers") from None


def _anchors(attrs, op) -> np.ndarray:
    """``(ratios * scales, 4)`` base anchors around the first cell (MXNet's rounding)."""
    size = float(attrs.feature_stride)
    ctr = 0.5 * (size - 1.0)
    out = []
    for ratio in _floats(op, "ratios", attrs.ratios):
        for scale in _floats(op, "scales", attrs.scales):
            w_base = math.floor(math.sqrt(math.floor(size * size / ratio)) + 0.5)
            w = w_base * scale
            h = math.floor(w_base * ratio + 0.5) * scale
            out.append([ctr - 0.5 * (w - 1), ctr - 0.5 * (h - 1),
                        ctr + 0.5 * (w - 1), ctr + 0.5 * (h - 1)])
    return np.array(out, dtype=np.float32)


def _num_anchors(attrs, op) -> int:
    return len(_floats(op, "ratios", attrs.ratios)) * len(_floats(op, "scales", attrs.scales))


def _nms(boxes: np.ndarray, threshold: float, limit: int) -> list[int]:
    """Greedy non-maximum suppression over boxes sorted best first; at most ``limit``.

    The candidates still in play are kept as separate contiguous coordinate arrays,
    compressed after each pick, so every step is a few vector operations."""
    x1, y1, x2, y2 = (np.ascontiguousarray(boxes[:, k]) for k in range(4))
    area = (x2 - x1 + 1) * (y2 - y1 + 1)
    index = np.arange(len(boxes))
    keep: list[int] = []
    while index.size and len(keep) < limit:
        keep.append(int(index[0]))
        w = np.minimum(x2[1:], x2[0]) - np.maximum(x1[1:], x1[0]) + 1
        h = np.minimum(y2[1:], y2[0]) - np.maximum(y1[1:], y1[0]) + 1
        np.maximum(w, 0, out=w)
        np.maximum(h, 0, out=h)
        inter = w * h
        stay = ~(inter / (area[1:] + area[0] - inter) > threshold)
        x1, y1, x2, y2 = x1[1:][stay], y1[1:][stay], x2[1:][stay], y2[1:][stay]
        area, index = area[1:][stay], index[1:][stay]
    return keep


def _propose(attrs, op, scores, deltas, info) -> tuple[np.ndarray, np.ndarray]:
    """One image: ``(post_n, 4)`` boxes and ``(post_n,)`` scores."""
    a, height, width = scores.shape
    stride = attrs.feature_stride
    base = _anchors(attrs, op)
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float32) * stride,
                         np.arange(height, dtype=np.float32) * stride)
    shifts = np.stack([xs, ys, xs, ys], axis=-1)                        # (h, w, 4)
    # (h, w, a, 4): the order MXNet lays proposals out in (index = (h * W + w) * A + a)
    anchors = base[None, None, :, :] + shifts[:, :, None, :]
    d = deltas.reshape(a, 4, height, width).transpose(2, 3, 0, 1)     # (h, w, a, 4)
    score = scores.transpose(1, 2, 0).astype(np.float32).copy()         # (h, w, a)
    im_h, im_w, im_scale = (float(v) for v in info)
    if attrs.iou_loss:
        boxes = anchors + d
    else:
        bw = anchors[..., 2] - anchors[..., 0] + 1.0
        bh = anchors[..., 3] - anchors[..., 1] + 1.0
        cx = anchors[..., 0] + 0.5 * (bw - 1.0)
        cy = anchors[..., 1] + 0.5 * (bh - 1.0)
        px, py = d[..., 0] * bw + cx, d[..., 1] * bh + cy
        pw, ph = np.exp(d[..., 2]) * bw, np.exp(d[..., 3]) * bh
        boxes = np.stack([px - 0.5 * (pw - 1.0), py - 0.5 * (ph - 1.0),
                          px + 0.5 * (pw - 1.0), py + 0.5 * (ph - 1.0)], axis=-1)
    boxes = boxes.astype(np.float32)
    boxes[..., 0::2] = np.clip(boxes[..., 0::2], 0.0, im_w - 1.0)
    boxes[..., 1::2] = np.clip(boxes[..., 1::2], 0.0, im_h - 1.0)
    real_h, real_w = int(im_h / stride), int(im_w / stride)
    if height < real_h or width < real_w:
        raise kernel_error(op, f"im_info's image ({im_h:g} x {im_w:g}) needs a {real_h} x "
                               f"{real_w} feature map at feature_stride={stride}, but "
                               f"cls_prob has {height} x {width}")
    score[real_h:, :, :] = -1.0
    score[:, real_w:, :] = -1.0
    boxes, score = boxes.reshape(-1, 4), score.reshape(-1)
    min_size = attrs.rpn_min_size * im_scale
    small = ((boxes[:, 2] - boxes[:, 0] + 1.0 < min_size)
             | (boxes[:, 3] - boxes[:, 1] + 1.0 < min_size))
    boxes[small] += np.array([-min_size / 2, -min_size / 2, min_size / 2, min_size / 2],
                             dtype=np.float32)
    score[small] = -1.0
    count = score.size
    pre_n = attrs.rpn_pre_nms_top_n if attrs.rpn_pre_nms_top_n > 0 else count
    pre_n = min(pre_n, count)
    post_n = min(attrs.rpn_post_nms_top_n, pre_n)
    order = np.argsort(-score, kind="stable")[:pre_n]
    boxes, score = boxes[order], score[order]
    keep = _nms(boxes, attrs.threshold, post_n)
    rows = [keep[i % len(keep)] for i in range(attrs.rpn_post_nms_top_n)]
    return boxes[rows], score[rows]


def _shape_rule(op: str, multi: bool):
    def infer(attrs, ins, outs):
        cls = ins[0]
        if cls is None:
            return ins, outs
        if len(cls) != 4:
            raise contrib_error(op, f"cls_prob must be (N, 2 * anchors, H, W), got {tuple(cls)}")
        anchors = _num_anchors(attrs, op)
        if cls[1] and cls[1] != 2 * anchors:
            raise contrib_error(op, f"cls_prob has {cls[1]} channels; ratios x scales give "
                                    f"{anchors} anchors, which need {2 * anchors}")
        if not multi and cls[0] and cls[0] != 1:
            raise contrib_error(op, f"Proposal takes one image (cls_prob batch 1, got "
                                    f"{cls[0]}); use MultiProposal for a batch")
        rows = attrs.rpn_post_nms_top_n * (cls[0] if multi else 1)
        return [cls, (cls[0], 2 * cls[1], cls[2], cls[3]), (cls[0], 3)], [(rows, 5), (rows, 1)]

    return infer


def _infer_type(attrs, ins, outs):
    dtype = next((t for t in ins + outs if t is not None), np.dtype(np.float32))
    return [dtype] * 3, [dtype, dtype]


def _kernel(op: str, multi: bool):
    def forward(attrs, ctx, inputs, req, outputs):
        cls, deltas, info = (host(a) for a in inputs)
        anchors = cls.shape[1] // 2
        rows, scores = [], []
        for b in range(cls.shape[0]):
            boxes, score = _propose(attrs, op, cls[b, anchors:], deltas[b], info[b])
            batch = np.full((len(boxes), 1), b if multi else 0, dtype=np.float32)
            rows.append(np.concatenate([batch, boxes], axis=1))
            scores.append(score[:, None])
        xp = ctx.xp
        assign(outputs[0], req[0], xp.asarray(np.concatenate(rows).astype(outputs[0].dtype)))
        assign(outputs[1], req[1], xp.asarray(np.concatenate(scores).astype(outputs[1].dtype)))

    return forward


def _sample(multi: bool):
    def sample(draw):
        d = Draw(draw)
        n = d.int(1, 2) if multi else 1
        h, w = d.int(1, 3), d.int(1, 3)
        params = {"feature_stride": 4, "scales": "(1, 2)", "ratios": "(1,)",
                  "rpn_pre_nms_top_n": d.int(1, 6), "rpn_post_nms_top_n": d.int(1, 4),
                  "threshold": d.float(0.3, 0.9), "rpn_min_size": d.int(1, 4),
                  "output_score": d.bool()}
        info = np.array([[d.int(4, 4 * h), d.int(4, 4 * w), d.float(0.5, 1.0)]
                         for _ in range(n)])
        return Case([d.uniform((n, 4, h, w), 0, 1), d.uniform((n, 8, h, w), -0.3, 0.3), info],
                    params)

    return sample


def _reference(op: str, multi: bool):
    def reference(raw, cls, deltas, info):
        attrs = ProposalParam.parse(op, raw)
        rows, scores = [], []
        for b in range(cls.shape[0]):
            boxes, score = _propose(attrs, op, cls[b, cls.shape[1] // 2:], deltas[b], info[b])
            rows.append(np.concatenate([np.full((len(boxes), 1), b if multi else 0), boxes], 1))
            scores.append(score[:, None])
        return [np.concatenate(rows), np.concatenate(scores)]

    return reference


def _op(name: str, multi: bool, what: str) -> Op:
    return Op(name, params=ProposalParam, num_inputs=3, num_outputs=2,
              num_visible_outputs=lambda a: 2 if a.output_score else 1,
              input_names=["cls_prob", "bbox_pred", "im_info"],
              output_names=["output", "score"],
              infer_shape=_shape_rule(name, multi), infer_type=_infer_type,
              compute={XP: _kernel(name, multi)}, gradient=ZeroGradient(),
              domain=Domain(_sample(multi), reference=_reference(name, multi),
                            dtypes=("float32",)),
              description=what)


OPS = [
    _op("_contrib_Proposal", False,
        "Region proposals of one image (Faster R-CNN): anchors moved by bbox_pred, clipped "
        "to im_info's image, small ones dropped, the best rpn_pre_nms_top_n kept through "
        "non-maximum suppression at ``threshold``; rpn_post_nms_top_n rows (0, x1, y1, x2, "
        "y2), and with output_score the scores.  Zero gradient."),
    _op("_contrib_MultiProposal", True,
        "Proposal for each image of a batch: N * rpn_post_nms_top_n rows (batch index, x1, "
        "y1, x2, y2), and with output_score the scores.  Zero gradient."),
]
