"""Object-detection operators: box decoding, non-maximum suppression, ROI pooling and
alignment, and anchor generation."""

from __future__ import annotations

import numpy as np

from ... import ndarray as nd
from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS

INT64 = np.int64
FLOAT32 = np.float32


def _columns(g: OnnxBuilder, x: str, start: int, count: int) -> list[str]:
    """``x[..., start + i : start + i + 1]`` for i < count (keeping the last axis)."""
    return [g.slice(x, [start + i], [start + i + 1], [-1]) for i in range(count)]


def _to_centre(g: OnnxBuilder, corners: list[str], half: str) -> list[str]:
    x1, y1, x2, y2 = corners
    width, height = g.op("Sub", [x2, x1]), g.op("Sub", [y2, y1])
    return [g.op("Add", [x1, g.op("Mul", [width, half])]),
            g.op("Add", [y1, g.op("Mul", [height, half])]), width, height]


def _to_corner(g: OnnxBuilder, centre: list[str], half: str) -> list[str]:
    x, y, width, height = centre
    half_w, half_h = g.op("Mul", [width, half]), g.op("Mul", [height, half])
    return [g.op("Sub", [x, half_w]), g.op("Sub", [y, half_h]),
            g.op("Add", [x, half_w]), g.op("Add", [y, half_h])]


@EXPORTS.register("_contrib_box_decode")
def box_decode(node: ExportNode, g: OnnxBuilder) -> None:
    """Anchors (as centres) moved by the scaled offsets, width and height scaled by the
    exponent (clipped at clip when it is positive); corners out."""
    a = node.attrs
    dtype = node.in_dtypes[0]
    half = g.scalar(0.5, dtype)
    dx, dy, dw, dh = _columns(g, node.inputs[0], 0, 4)
    anchors = _columns(g, node.inputs[1], 0, 4)
    ax, ay, aw, ah = _to_centre(g, anchors, half) if a.format == "corner" else anchors
    std = [g.scalar(float(s), dtype) for s in (a.std0, a.std1, a.std2, a.std3)]
    dw, dh = g.op("Mul", [dw, std[2]]), g.op("Mul", [dh, std[3]])
    if float(a.clip) > 0:
        limit = g.scalar(float(a.clip), dtype)
        dw, dh = g.op("Min", [dw, limit]), g.op("Min", [dh, limit])
    x = g.op("Add", [g.op("Mul", [g.op("Mul", [dx, std[0]]), aw]), ax])
    y = g.op("Add", [g.op("Mul", [g.op("Mul", [dy, std[1]]), ah]), ay])
    width, height = g.op("Mul", [g.op("Exp", [dw]), aw]), g.op("Mul", [g.op("Exp", [dh]), ah])
    g.concat(_to_corner(g, [x, y, width, height], half), -1, node.outputs[0])


@EXPORTS.register("_contrib_box_nms")
def box_nms(node: ExportNode, g: OnnxBuilder) -> None:
    """NonMaxSuppression in MXNet's form.  Per batch entry: rows scoring above
    valid_thresh (not of background_id) are candidates, the topk best of them enter a
    greedy suppression at overlap_thresh (per class unless force_suppress; a box with its
    corners the wrong way round overlaps nothing); the survivors come first, best score
    first, converted to out_format, and every other row is -1."""
    a = node.attrs
    data, dtype = node.inputs[0], node.in_dtypes[0]
    shape = node.in_shapes[0]
    count, width = int(shape[-2]), int(shape[-1])
    lowest = g.scalar(np.finfo(FLOAT32).min, FLOAT32)
    rows = g.cast_if(g.reshape(data, [-1, count, width]), dtype, FLOAT32)    # (B, N, K)
    scores = g.op("Gather", [rows, g.scalar(int(a.score_index), INT64)], axis=2)  # (B, N)
    boxes = g.slice(rows, [int(a.coord_start)], [int(a.coord_start) + 4], [2])  # (B, N, 4)

    # compared in float64, as dagnet does: a float32 score of 0.4 is above 0.4
    candidates = g.op("Greater", [g.cast(scores, np.float64),
                                  g.scalar(float(a.valid_thresh), np.float64)])
    ids = None
    if int(a.id_index) >= 0:
        ids = g.op("Gather", [rows, g.scalar(int(a.id_index), INT64)], axis=2)
        if int(a.background_id) >= 0:
            background = g.op("Equal", [ids, g.scalar(float(a.background_id), FLOAT32)])
            candidates = g.op("And", [candidates, g.op("Not", [background])])
    ranked = g.op("Where", [candidates, scores, lowest])
    if 0 < int(a.topk) < count:
        _, best = g.op("TopK", [ranked, g.ints(int(a.topk))], 2, axis=1, largest=1, sorted=1)
        chosen = g.op("ScatterElements", [g.op("Mul", [ranked, g.scalar(0, FLOAT32)]), best,
                                          g.op("Expand", [g.scalar(1, FLOAT32), g.shape(best)])],
                      axis=1)
        ranked = g.op("Where", [g.op("Greater", [chosen, g.scalar(0, FLOAT32)]), ranked, lowest])

    centre = a.in_format == "center"
    half = g.scalar(0.5, FLOAT32)
    corners = _columns(g, boxes, 0, 4)
    if centre:
        corners = _to_corner(g, corners, half)
    # A box with its corners the wrong way round has no area for MXNet (it overlaps
    # nothing); ONNX would sort its corners, so it gets a width or height of zero.
    x1, y1, x2, y2 = corners
    boxes = g.concat([x1, y1, g.op("Max", [x1, x2]), g.op("Max", [y1, y2])], 2)
    ranked = g.unsqueeze(ranked, [1])                                   # (B, 1, N)
    if ids is not None and not a.force_suppress:
        # Per class: ONNX suppresses within each row of (B, classes, N) scores, a row per
        # distinct id (counted from the smallest) holding its boxes' scores and `lowest`
        # elsewhere.  (Shifting boxes apart by class instead would cost float32 precision
        # on the coordinates when they are large, and so change overlaps.)
        classes = g.cast(g.op("Sub", [ids, g.reduce("ReduceMin", ids, None, False)]), INT64)
        depth = g.op("Add", [g.reduce("ReduceMax", classes, None, False), g.ints([1])])
        one_hot = g.op("OneHot", [classes, depth, g.const(np.array([0, 1], FLOAT32))],
                       axis=1)                                              # (B, C, N)
        ranked = g.op("Where", [g.op("Greater", [one_hot, g.scalar(0, FLOAT32)]),
                                ranked, lowest])
    selected = g.op("NonMaxSuppression", [
        boxes, ranked, g.ints(count),
        g.const(np.array([a.overlap_thresh], FLOAT32)),
        lowest], center_point_box=0)  # the candidates are chosen already
    pairs = g.op("Gather", [selected, g.ints([0, 2])], axis=1)          # (M, 2): batch, box
    marks = g.op("Expand", [g.scalar(1, FLOAT32), g.dims(pairs, 0, 1)])
    kept = g.op("ScatterND", [g.op("Mul", [scores, g.scalar(0, FLOAT32)]), pairs, marks])
    is_kept = g.op("Greater", [kept, g.scalar(0, FLOAT32)])
    _, order = g.op("TopK", [g.op("Where", [is_kept, scores, lowest]), g.ints(count)], 2,
                    axis=1, largest=1, sorted=1)
    ordered = g.op("GatherND", [rows, g.unsqueeze(order, [2])], batch_dims=1)
    if a.in_format != a.out_format:
        start = int(a.coord_start)
        coords = _columns(g, ordered, start, 4)
        converted = _to_centre(g, coords, half) if not centre else _to_corner(g, coords, half)
        parts = []
        if start > 0:
            parts.append(g.slice(ordered, [0], [start], [2]))
        parts.extend(converted)
        if start + 4 < width:
            parts.append(g.slice(ordered, [start + 4], [width], [2]))
        ordered = g.concat(parts, 2)
    keep_sorted = g.op("GatherElements", [kept, order], axis=1)
    keep_rows = g.unsqueeze(g.op("Greater", [keep_sorted, g.scalar(0, FLOAT32)]), [2])
    result = g.op("Where", [keep_rows, ordered, g.scalar(-1, FLOAT32)])
    result = g.cast_if(result, FLOAT32, dtype)
    g.reshape(result, g.shape(data), node.outputs[0])


@EXPORTS.register("ROIPooling")
def roi_pooling(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX MaxRoiPool: pooled_size is the pooled_shape."""
    g.op("MaxRoiPool", node.inputs[:2], [node.outputs[0]],
         pooled_shape=[int(v) for v in node.attrs.pooled_size],
         spatial_scale=float(node.attrs.spatial_scale))


@EXPORTS.register("_contrib_ROIAlign")
def roi_align(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX RoiAlign (average): rois split into batch indices and corners; sample_ratio
    below 1 is ONNX's adaptive 0; ROIs with a negative batch index give zeros as in MXNet."""
    a = node.attrs
    if a.position_sensitive:
        raise node.fail("position_sensitive ROIAlign has no ONNX form")
    if a.aligned:
        raise node.fail("aligned=True needs RoiAlign's half-pixel mode of opset 16")
    data, rois = node.inputs[:2]
    dtype = node.in_dtypes[0]
    batch = g.op("Gather", [rois, g.scalar(0, INT64)], axis=1)
    batch = g.cast(batch, INT64)
    valid = g.op("Not", [g.op("Less", [batch, g.scalar(0, INT64)])])
    batch = g.op("Where", [valid, batch, g.scalar(0, INT64)])
    corners = g.slice(rois, [1], [5], [1])
    height, width = (int(v) for v in a.pooled_size)
    pooled = g.op("RoiAlign", [data, corners, batch], mode="avg", output_height=height,
                  output_width=width, sampling_ratio=max(int(a.sample_ratio), 0),
                  spatial_scale=float(a.spatial_scale))
    mask = g.cast(g.unsqueeze(valid, [1, 2, 3]), dtype)
    g.op("Mul", [pooled, mask], [node.outputs[0]])


@EXPORTS.register("_contrib_MultiBoxPrior")
def multibox_prior(node: ExportNode, g: OnnxBuilder) -> None:
    """A Constant: the anchors depend only on the feature map's height and width, which
    are fixed in the exported model, so dagnet computes them once."""
    shape = tuple(int(d) for d in node.in_shapes[0])
    attrs = {k: v for k, v in node.raw_attrs.items() if not k.startswith("__")}
    anchors = nd.op._contrib_MultiBoxPrior(nd.zeros(shape), **attrs).asnumpy()
    g.op("Constant", [], [node.outputs[0]],
         value=g.onnx.numpy_helper.from_array(np.ascontiguousarray(anchors)))
