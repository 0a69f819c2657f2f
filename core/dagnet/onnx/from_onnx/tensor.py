"""Layout and shape ONNX operators: reshapes, transposes, joins and splits, slices,
gathers, constants, broadcasting, tiling, padding, the shape queries and TopK.
Each folds to a numpy array when its inputs are known while importing."""

from __future__ import annotations

import numpy as np

from ... import symbol as sym
from ._context import ImportNode
from ._table import IMPORTS

_BIG = 2 ** 62  # ONNX writes "to the end" as INT64_MAX (or its negative)


def _norm(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


@IMPORTS.register("Constant")
def constant(node: ImportNode):
    """The tensor of whichever value attribute is set."""
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            value = node.attrs[key]
            if key.startswith("value_float"):
                return np.asarray(value, dtype=np.float32)
            if key.startswith("value_int"):
                return np.asarray(value, dtype=np.int64)
            return np.asarray(value)
    raise node.fail(f"a Constant with attributes {sorted(node.attrs)} (strings and sparse "
                    f"tensors are not imported)")


@IMPORTS.register("ConstantOfShape")
def constant_of_shape(node: ImportNode):
    """np.full of the (constant) shape with the value attribute (default 0.0)."""
    value = node.attr("value")
    fill = np.zeros(1, dtype=np.float32) if value is None else np.asarray(value).reshape(-1)
    shape = tuple(int(d) for d in node.const(0, "shape"))
    return np.full(shape, fill[0], dtype=fill.dtype)


@IMPORTS.register("Shape")
def shape(node: ImportNode):
    """The shape as int64 constants when every dimension is known, else shape_array."""
    static = node.static_shape(0)
    start, end = node.attr("start", 0), node.attr("end")
    if static is not None:
        return np.asarray(static, dtype=np.int64)[start:end]
    if start != 0 or end is not None:
        raise node.fail("Shape with start or end of a tensor whose shape is not fixed")
    return sym.shape_array(node.sym(0), name=node.sym_name)


@IMPORTS.register("Size")
def size(node: ImportNode):
    """The element count (constant when the shape is fixed, size_array otherwise)."""
    static = node.static_shape(0)
    if static is not None:
        return np.asarray(int(np.prod(static)), dtype=np.int64)
    return sym.size_array(node.sym(0), name=node.sym_name)


@IMPORTS.register("Reshape")
def reshape(node: ImportNode):
    """reshape to the constant shape (0 copies a dimension, -1 is inferred)."""
    target = [int(d) for d in (node.attr("shape") if node.opset < 5 else node.const(1, "shape"))]
    allow_zero = node.attr("allowzero", 0)
    if node.is_const(0):
        data = node.const(0)
        if not allow_zero:
            target = [data.shape[i] if d == 0 else d for i, d in enumerate(target)]
        return data.reshape(target)
    if allow_zero and 0 in target:
        raise node.fail("allowzero=1 with a 0 in the shape (an empty dimension)")
    return sym.reshape(node.sym(0), shape=tuple(target), name=node.sym_name)


@IMPORTS.register("Flatten")
def flatten(node: ImportNode):
    """The 2-D view (prod(shape[:axis]), prod(shape[axis:]))."""
    axis = int(node.attr("axis", 1))
    if node.is_const(0):
        data = node.const(0)
        axis = _norm(axis, data.ndim)
        return data.reshape(int(np.prod(data.shape[:axis])), -1)
    axis = _norm(axis, node.rank(0)) if axis < 0 else axis
    x = node.sym(0)
    if axis == 0:
        return sym.reshape(x, shape=(1, -1), name=node.sym_name)
    for _ in range(axis - 1):
        x = sym.reshape(x, shape=(-3, -2))
    return sym.Flatten(x, name=node.sym_name)


@IMPORTS.register("Transpose")
def transpose(node: ImportNode):
    """transpose by perm (reversed axes by default)."""
    perm = node.attr("perm")
    if node.is_const(0):
        return np.transpose(node.const(0), perm)
    axes = tuple(int(p) for p in perm) if perm is not None else tuple(range(node.rank(0)))[::-1]
    return sym.transpose(node.sym(0), axes=axes, name=node.sym_name)


@IMPORTS.register("Concat")
def concat(node: ImportNode):
    """Concat along the axis."""
    axis = int(node.attr("axis"))
    if node.all_const():
        return np.concatenate([node.const(i) for i in range(len(node.values))], axis=axis)
    if axis < 0:
        axis = _norm(axis, node.rank(0) if node.shape(0) is not None else node.rank(1))
    parts = [node.sym(i) for i in range(len(node.values)) if node.has(i)]
    return sym.Concat(*parts, dim=axis, num_args=len(parts), name=node.sym_name)


@IMPORTS.register("Split")
def split(node: ImportNode):
    """SliceChannel into equal parts, or split_v2 at the boundaries of the given sizes."""
    axis = int(node.attr("axis", 0))
    count = len(node.outputs)
    sizes = node.attr("split")
    if sizes is None and node.opset >= 13 and node.has(1):
        sizes = node.const(1, "split")
    sizes = None if sizes is None else [int(s) for s in sizes]
    if node.is_const(0):
        data = node.const(0)
        bounds = np.cumsum(sizes)[:-1] if sizes else count
        return list(np.split(data, bounds, axis=axis))
    if axis < 0:
        axis = _norm(axis, node.rank(0))
    if sizes is None or len(set(sizes)) == 1:
        if count == 1:
            return [sym.identity(node.sym(0), name=node.sym_name)]
        parts = sym.SliceChannel(node.sym(0), num_outputs=count, axis=axis, name=node.sym_name)
        return [parts[i] for i in range(count)]
    bounds = tuple(int(b) for b in np.cumsum(sizes)[:-1])
    parts = sym.split_v2(node.sym(0), indices_or_sections=bounds, axis=axis, name=node.sym_name)
    return [parts[i] for i in range(count)]


def _slice_arguments(node: ImportNode) -> tuple[list[int], list[int], list[int], list[int]]:
    if node.opset < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        axes = node.attr("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = node.const(1, "starts").tolist()
        ends = node.const(2, "ends").tolist()
        axes = node.const(3, "axes").tolist() if node.has(3) else list(range(len(starts)))
        steps = node.const(4, "steps").tolist() if node.has(4) else [1] * len(starts)
    return [int(v) for v in starts], [int(v) for v in ends], [int(v) for v in axes], \
        [int(v) for v in steps]


@IMPORTS.register("Slice")
def slice_(node: ImportNode):
    """slice with begin, end and step on the named axes (None elsewhere)."""
    starts, ends, axes, steps = _slice_arguments(node)
    rank = node.rank(0)
    axes = [_norm(a, rank) for a in axes]
    if node.is_const(0):
        index = [slice(None)] * rank
        for a, b, e, s in zip(axes, starts, ends, steps):
            index[a] = slice(max(min(b, _BIG), -_BIG), max(min(e, _BIG), -_BIG), s)
        return node.const(0)[tuple(index)]
    span = max(axes) + 1
    begin: list[int | None] = [None] * span
    end: list[int | None] = [None] * span
    step: list[int | None] = [None] * span
    for a, b, e, s in zip(axes, starts, ends, steps):
        begin[a] = None if abs(b) >= _BIG else b
        end[a] = None if abs(e) >= _BIG else e
        step[a] = s
    return sym.slice(node.sym(0), begin=tuple(begin), end=tuple(end), step=tuple(step),
                     name=node.sym_name)


@IMPORTS.register("Squeeze")
def squeeze(node: ImportNode):
    """squeeze of the axes (every size-1 axis without them)."""
    axes = node.axes()
    if node.is_const(0):
        return np.squeeze(node.const(0), axis=None if axes is None else tuple(axes))
    if axes is not None:
        axes = [_norm(a, node.rank(0)) for a in axes] if any(a < 0 for a in axes) else axes
    return sym.squeeze(node.sym(0), axis=None if axes is None else tuple(axes),
                       name=node.sym_name)


@IMPORTS.register("Unsqueeze")
def unsqueeze(node: ImportNode):
    """expand_dims at each axis (positions in the output), in increasing order."""
    axes = node.axes()
    if axes is None:
        raise node.fail("Unsqueeze without axes")
    out_rank = (node.const(0).ndim if node.is_const(0) else node.rank(0)) + len(axes)
    axes = sorted(_norm(a, out_rank) for a in axes)
    if node.is_const(0):
        value = node.const(0)
        for a in axes:
            value = np.expand_dims(value, a)
        return value
    x = node.sym(0)
    for i, a in enumerate(axes):
        x = sym.expand_dims(x, axis=a, name=node.sym_name if i == len(axes) - 1 else None)
    return x


@IMPORTS.register("Gather")
def gather(node: ImportNode):
    """take along the axis (negative indices wrap); a single constant index is a slice
    with the axis dropped."""
    axis = int(node.attr("axis", 0))
    if node.all_const():
        return np.take(node.const(0), node.const(1), axis=axis)
    rank = node.rank(0)
    axis = _norm(axis, rank)
    if node.is_const(1) and node.const(1).ndim == 0:
        index = int(node.const(1))
        if index < 0:
            size = node.shape(0)[axis]
            if size is None:
                raise node.fail("a negative index into an axis of unknown size")
            index += size
        piece = sym.slice_axis(node.sym(0), axis=axis, begin=index, end=index + 1)
        return sym.squeeze(piece, axis=axis, name=node.sym_name)
    return sym.take(node.sym(0), node.sym(1), axis=axis, mode="wrap", name=node.sym_name)


@IMPORTS.register("GatherND")
def gather_nd(node: ImportNode):
    """gather_nd with the index tuples moved to the first axis (dagnet's layout)."""
    if int(node.attr("batch_dims", 0)) != 0:
        raise node.fail("GatherND with batch_dims has no dagnet operator")
    if node.is_const(1):
        index = np.moveaxis(node.const(1), -1, 0)
        indices = node.graph.parameter(node.value_names[1], np.ascontiguousarray(index))
    else:
        rank = node.rank(1)
        indices = sym.transpose(node.sym(1), axes=(rank - 1, *range(rank - 1)))
    return sym.gather_nd(node.sym(0), indices, name=node.sym_name)


@IMPORTS.register("Expand")
def expand(node: ImportNode):
    """broadcast_to the (constant) shape, after leading axes are added to the data."""
    target = [int(d) for d in node.const(1, "shape")]
    if node.is_const(0):
        data = node.const(0)
        return np.broadcast_to(data, np.broadcast_shapes(data.shape, tuple(target))).copy()
    rank = node.rank(0)
    x = node.sym(0)
    for _ in range(len(target) - rank):
        x = sym.expand_dims(x, axis=0)
    if rank > len(target):
        target = [1] * (rank - len(target)) + target
    return sym.broadcast_to(x, shape=tuple(0 if d == 1 else d for d in target),
                            name=node.sym_name)


@IMPORTS.register("Tile")
def tile(node: ImportNode):
    """tile by the (constant) repeats."""
    repeats = tuple(int(r) for r in node.const(1, "repeats"))
    if node.is_const(0):
        return np.tile(node.const(0), repeats)
    return sym.tile(node.sym(0), reps=repeats, name=node.sym_name)


@IMPORTS.register("Range")
def range_(node: ImportNode):
    """np.arange of the constant start, limit and delta."""
    start, limit, delta = (node.const(i) for i in range(3))
    return np.arange(start.item(), limit.item(), delta.item(), dtype=start.dtype)


@IMPORTS.register("Pad")
def pad(node: ImportNode):
    """Pad (constant, edge, reflect) of 4-D or 5-D data."""
    mode = node.attr("mode", "constant")
    if node.opset < 11:
        pads, value = node.attr("pads"), float(node.attr("value", 0.0))
    else:
        pads = node.const(1, "pads").tolist()
        value = node.const(2).item() if node.has(2) else 0.0
    if node.has(3):
        raise node.fail("Pad with axes")
    rank = len(pads) // 2
    pairs = [(int(pads[i]), int(pads[i + rank])) for i in range(rank)]
    if node.is_const(0):
        kwargs = {"constant_values": value} if mode == "constant" else {}
        numpy_mode = {"edge": "edge", "reflect": "reflect"}.get(mode, "constant")
        return np.pad(node.const(0), pairs, mode=numpy_mode, **kwargs)
    widths = tuple(w for pair in pairs for w in pair)
    return sym.Pad(node.sym(0), mode=mode, pad_width=widths, constant_value=value,
                   name=node.sym_name)


@IMPORTS.register("DepthToSpace")
def depth_to_space(node: ImportNode):
    """depth_to_space (DCR); CRD through reshapes and a transpose."""
    block = int(node.attr("blocksize"))
    if node.attr("mode", "DCR") == "DCR":
        return sym.depth_to_space(node.sym(0), block_size=block, name=node.sym_name)
    x = sym.reshape(node.sym(0), shape=(0, -4, -1, block * block, -2))
    x = sym.reshape(x, shape=(0, 0, -4, block, block, -2))
    x = sym.transpose(x, axes=(0, 1, 4, 2, 5, 3))
    return sym.reshape(x, shape=(0, 0, -3, -3), name=node.sym_name)


@IMPORTS.register("SpaceToDepth")
def space_to_depth(node: ImportNode):
    """space_to_depth."""
    return sym.space_to_depth(node.sym(0), block_size=int(node.attr("blocksize")),
                              name=node.sym_name)


@IMPORTS.register("OneHot")
def one_hot(node: ImportNode):
    """one_hot along the last axis with the off and on values."""
    if int(node.attr("axis", -1)) != -1:
        raise node.fail("OneHot along an axis other than the last")
    depth = int(node.const(1, "depth"))
    values = node.const(2, "values")
    return sym.one_hot(node.sym(0), depth=depth, off_value=float(values[0]),
                       on_value=float(values[1]), dtype=values.dtype.name, name=node.sym_name)


@IMPORTS.register("TopK")
def topk(node: ImportNode):
    """topk (values and int64 indices) along the axis, largest or smallest first."""
    k = int(node.attr("k")) if node.opset < 10 else int(node.const(1, "K").reshape(-1)[0])
    axis = int(node.attr("axis", -1))
    largest = bool(node.attr("largest", 1))
    parts = sym.topk(node.sym(0), k=k, axis=axis, ret_typ="both", is_ascend=not largest,
                     dtype="int64", name=node.sym_name)
    return [parts[0], parts[1]]


@IMPORTS.register("NonZero")
def non_zero(node: ImportNode):
    """The indices of the non-zero elements of a constant (its size is data-dependent)."""
    return np.asarray(np.nonzero(node.const(0, "data")), dtype=np.int64)
