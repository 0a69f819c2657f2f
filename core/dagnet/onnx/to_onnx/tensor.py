"""Layout and shape operators: reshapes, transposes, joins and splits, slices, tiling,
broadcasting, padding, casts and the shape queries."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS

INT64 = np.int64
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# reshapes ------------------------------------------------------------------------------
def _reshape_plan(spec: Sequence[int], rank: int) -> list[tuple]:
    """MXNet's reshape codes as pieces of the output shape, read left to right:
    ("const", v), ("copy", i), ("prod", i, j) for in[i:j] merged, ("infer",),
    ("split", i, a, b) for in[i] split in two (one of a, b may be -1)."""
    pieces: list[tuple] = []
    i, k = 0, 0
    spec = list(spec)
    while k < len(spec):
        code = spec[k]
        if code > 0:
            pieces.append(("const", code))
            i += 1
        elif code == 0:
            pieces.append(("copy", i))
            i += 1
        elif code == -1:
            pieces.append(("infer",))
            i += 1
        elif code == -2:
            pieces.extend(("copy", j) for j in range(i, rank))
            i = rank
        elif code == -3:
            pieces.append(("prod", i, i + 2))
            i += 2
        elif code == -4:
            pieces.append(("split", i, spec[k + 1], spec[k + 2]))
            i += 1
            k += 2
        k += 1
    return pieces


def _dynamic_shape(g: OnnxBuilder, x: str, pieces: list[tuple], rank: int,
                   reverse: bool) -> str:
    """The target shape of a reshape, computed from ``x``'s runtime shape."""

    def dim(i: int) -> str:
        i = rank - 1 - i if reverse else i
        return g.dims(x, i, i + 1)

    parts = []
    for piece in pieces:
        kind = piece[0]
        if kind == "const":
            parts.append(g.ints(piece[1]))
        elif kind == "copy":
            parts.append(dim(piece[1]))
        elif kind == "infer":
            parts.append(g.ints(-1))
        elif kind == "prod":
            first, second = dim(piece[1]), dim(piece[1] + 1)
            parts.append(g.op("Mul", [first, second]))
        else:
            _, i, a, b = piece
            whole = dim(i)
            first = g.op("Div", [whole, g.ints(b)]) if a == -1 else g.ints(a)
            second = g.op("Div", [whole, g.ints(a)]) if b == -1 else g.ints(b)
            parts.extend([second, first] if reverse else [first, second])
    if reverse:
        parts = parts[::-1]
    return g.concat(parts, 0)


@EXPORTS.register("Reshape")
def reshape(node: ExportNode, g: OnnxBuilder) -> None:
    """Reshape to MXNet's target: the inferred shape, or with dynamic inputs a shape
    computed from the input's (0, -2, -3 and -4 read its dimensions)."""
    x, out = node.inputs[0], node.outputs[0]
    spec = tuple(node.attrs.shape) or tuple(node.attrs.target_shape)
    if not node.dynamic:
        g.reshape(x, list(node.out_shapes[0]), out)
        return
    rank = node.rank(0)
    codes = spec[::-1] if node.attrs.reverse else spec
    target = _dynamic_shape(g, x, _reshape_plan(codes, rank), rank, node.attrs.reverse)
    g.reshape(x, target, out)


@EXPORTS.register("reshape_like")
def reshape_like(node: ExportNode, g: OnnxBuilder) -> None:
    """Reshape to lhs[:lhs_begin] + rhs[rhs_begin:rhs_end] + lhs[lhs_end:], computed
    from the two inputs' shapes."""
    a = node.attrs
    lhs, rhs = node.inputs[:2]
    lrank, rrank = node.rank(0), node.rank(1)
    lb = 0 if a.lhs_begin is None else _axis(a.lhs_begin, lrank)
    le = lrank if a.lhs_end is None else _axis(a.lhs_end, lrank)
    rb = 0 if a.rhs_begin is None else _axis(a.rhs_begin, rrank)
    re = rrank if a.rhs_end is None else _axis(a.rhs_end, rrank)
    parts = [g.dims(lhs, 0, lb)] if lb > 0 else []
    parts.append(g.dims(rhs, rb, re))
    if le < lrank:
        parts.append(g.dims(lhs, le, lrank))
    g.reshape(lhs, g.concat(parts, 0), node.outputs[0])


@EXPORTS.register("Flatten")
def flatten(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Flatten at axis 1: (N, everything else)."""
    g.op("Flatten", node.inputs[:1], [node.outputs[0]], axis=1)


@EXPORTS.register("expand_dims")
def expand_dims(node: ExportNode, g: OnnxBuilder) -> None:
    """Unsqueeze at the axis (a negative one counts from the output's end)."""
    axis = _axis(int(node.attrs.axis), node.rank(0) + 1)
    g.unsqueeze(node.inputs[0], [axis], node.outputs[0])


@EXPORTS.register("squeeze")
def squeeze(node: ExportNode, g: OnnxBuilder) -> None:
    """Squeeze the given axes, or every size-1 axis of the example shape; squeezing
    all of a shape of ones leaves (1,) as MXNet does."""
    shape = node.in_shapes[0]
    rank = len(shape)
    if node.attrs.axis is None:
        axes = [d for d in range(rank) if shape[d] == 1]
    else:
        axes = sorted(_axis(int(a), rank) for a in np.atleast_1d(node.attrs.axis))
    if len(axes) == rank:
        axes = axes[:-1]
    if not axes:
        g.identity(node.inputs[0], node.outputs[0])
        return
    g.squeeze(node.inputs[0], axes, node.outputs[0])


@EXPORTS.register("transpose")
def transpose(node: ExportNode, g: OnnxBuilder) -> None:
    """Transpose by axes (reversed when none)."""
    rank = node.rank(0)
    axes = [_axis(int(a), rank) for a in node.attrs.axes] or list(range(rank))[::-1]
    g.op("Transpose", node.inputs[:1], [node.outputs[0]], perm=axes)


@EXPORTS.register("SwapAxis")
def swap_axis(node: ExportNode, g: OnnxBuilder) -> None:
    """Transpose exchanging dim1 and dim2."""
    rank = node.rank(0)
    perm = list(range(rank))
    d1, d2 = _axis(int(node.attrs.dim1), rank), _axis(int(node.attrs.dim2), rank)
    perm[d1], perm[d2] = perm[d2], perm[d1]
    g.op("Transpose", node.inputs[:1], [node.outputs[0]], perm=perm)


# joins and splits ----------------------------------------------------------------------
@EXPORTS.register("Concat")
def concat(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Concat along dim."""
    axis = _axis(int(node.attrs.dim), node.rank(0))
    g.op("Concat", node.inputs, [node.outputs[0]], axis=axis)


@EXPORTS.register("_rnn_param_concat")
def rnn_param_concat(node: ExportNode, g: OnnxBuilder) -> None:
    """The fused RNN's parameters joined: ONNX Concat along dim."""
    axis = _axis(int(node.attrs.dim), node.rank(0))
    g.op("Concat", node.inputs, [node.outputs[0]], axis=axis)


@EXPORTS.register("stack")
def stack(node: ExportNode, g: OnnxBuilder) -> None:
    """Each input unsqueezed at the axis, then concatenated there."""
    axis = _axis(int(node.attrs.axis), node.rank(0) + 1)
    parts = [g.unsqueeze(x, [axis]) for x in node.inputs]
    g.op("Concat", parts, [node.outputs[0]], axis=axis)


def _split_outputs(node: ExportNode, g: OnnxBuilder, axis: int, sizes: list[int] | None,
                   squeeze_axis: bool) -> None:
    count = len(node.outputs)
    if count == 1:
        part = [g.identity(node.inputs[0], None if squeeze_axis else node.outputs[0])]
    else:
        names = None if squeeze_axis else node.outputs
        part = g.split(node.inputs[0], axis, sizes, count, names)
    if squeeze_axis:
        for piece, out in zip(part, node.outputs):
            g.squeeze(piece, [axis], out)


@EXPORTS.register("SliceChannel")
def slice_channel(node: ExportNode, g: OnnxBuilder) -> None:
    """Split into num_outputs equal parts along the axis (squeezed with squeeze_axis)."""
    axis = _axis(int(node.attrs.axis), node.rank(0))
    _split_outputs(node, g, axis, None, bool(node.attrs.squeeze_axis))


@EXPORTS.register("_split_v2")
def split_v2(node: ExportNode, g: OnnxBuilder) -> None:
    """Split at the indices (or into equal sections) along the axis."""
    a = node.attrs
    rank = node.rank(0)
    axis = _axis(int(a.axis), rank)
    if int(a.sections) > 0:
        sizes = None
    else:
        length = node.in_shapes[0][axis]
        starts = [int(i) for i in a.indices]
        sizes = [end - start for start, end in zip(starts, starts[1:] + [length])]
    _split_outputs(node, g, axis, sizes, bool(a.squeeze_axis))


# slices --------------------------------------------------------------------------------
@EXPORTS.register("slice")
def slice_(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Slice: begin, end and step per leading axis (None: the whole axis)."""
    a = node.attrs
    steps = list(a.step) or [1] * len(a.begin)
    starts, ends, axes, strides = [], [], [], []
    for axis, (begin, end) in enumerate(zip(a.begin, a.end)):
        step = steps[axis] if axis < len(steps) and steps[axis] is not None else 1
        backwards = step < 0
        starts.append((-1 if backwards else 0) if begin is None else int(begin))
        ends.append((INT64_MIN if backwards else INT64_MAX) if end is None else int(end))
        axes.append(axis)
        strides.append(int(step))
    g.slice(node.inputs[0], starts, ends, axes, strides, node.outputs[0])


@EXPORTS.register("slice_axis")
def slice_axis(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Slice of one axis from begin to end (None: the end)."""
    a = node.attrs
    end = INT64_MAX if a.end is None else int(a.end)
    axis = _axis(int(a.axis), node.rank(0))
    g.slice(node.inputs[0], [int(a.begin)], [end], [axis], None, node.outputs[0])


@EXPORTS.register("slice_like")
def slice_like(node: ExportNode, g: OnnxBuilder) -> None:
    """The data cut to the second input's size on the given axes (all its axes when
    none), the sizes read from its shape."""
    rank = node.rank(0)
    axes = [_axis(int(a), rank) for a in node.attrs.axes] or list(range(node.rank(1)))
    like_shape = g.shape(node.inputs[1])
    ends = g.op("Gather", [like_shape, g.ints(axes)])
    g.slice(node.inputs[0], g.ints([0] * len(axes)), ends, axes, None, node.outputs[0])


@EXPORTS.register("reverse")
def reverse(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Slice with step -1 on each axis."""
    rank = node.rank(0)
    axes = [_axis(int(a), rank) for a in np.atleast_1d(node.attrs.axis)]
    g.slice(node.inputs[0], [-1] * len(axes), [INT64_MIN] * len(axes), axes, [-1] * len(axes),
            node.outputs[0])


@EXPORTS.register("Crop")
def crop(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Slice of the two spatial axes: h_w (or the second input's size) from offset,
    or centred with center_crop."""
    shape = node.out_shapes[0]
    height, width = int(shape[2]), int(shape[3])
    if node.attrs.center_crop:
        in_h, in_w = node.in_shapes[0][2:4]
        top, left = (in_h - height) // 2, (in_w - width) // 2
    else:
        top, left = (int(v) for v in node.attrs.offset)
    g.slice(node.inputs[0], [top, left], [top + height, left + width], [2, 3], None,
            node.outputs[0])


# repetition and broadcasting -----------------------------------------------------------
@EXPORTS.register("tile")
def tile(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Tile; reps shorter than the rank repeat the trailing axes, longer ones add
    leading axes to the data first."""
    reps = [int(r) for r in node.attrs.reps]
    rank = node.rank(0)
    x = node.inputs[0]
    if len(reps) > rank:
        x = g.unsqueeze(x, list(range(len(reps) - rank)))
    reps = [1] * (rank - len(reps)) + reps
    g.op("Tile", [x, g.ints(reps)], [node.outputs[0]])


@EXPORTS.register("repeat")
def repeat(node: ExportNode, g: OnnxBuilder) -> None:
    """Each element repeated: a new axis after the repeated one is tiled, then merged
    into it (the data is flattened first when no axis is given)."""
    repeats = int(node.attrs.repeats)
    x = node.inputs[0]
    if node.attrs.axis is None:
        x = g.reshape(x, [-1])
        rank, axis = 1, 0
    else:
        rank = node.rank(0)
        axis = _axis(int(node.attrs.axis), rank)
    expanded = g.unsqueeze(x, [axis + 1])
    tiles = [1] * (rank + 1)
    tiles[axis + 1] = repeats
    tiled = g.op("Tile", [expanded, g.ints(tiles)])
    parts = []
    if axis > 0:
        parts.append(g.dims(x, 0, axis))
    parts.append(g.op("Mul", [g.dims(x, axis, axis + 1), g.ints(repeats)]))
    if axis + 1 < rank:
        parts.append(g.dims(x, axis + 1, rank))
    g.reshape(tiled, g.concat(parts, 0), node.outputs[0])


@EXPORTS.register("broadcast_to")
def broadcast_to(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Expand; a 0 in the target keeps the input's size (a 1 for Expand)."""
    shape = [int(d) if int(d) != 0 else 1 for d in node.attrs.shape]
    g.op("Expand", [node.inputs[0], g.ints(shape)], [node.outputs[0]])


@EXPORTS.register("broadcast_axis")
def broadcast_axis(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Expand to size on each axis."""
    rank = node.rank(0)
    shape = [1] * rank
    for axis, size in zip(np.atleast_1d(node.attrs.axis), np.atleast_1d(node.attrs.size)):
        shape[_axis(int(axis), rank)] = int(size)
    g.op("Expand", [node.inputs[0], g.ints(shape)], [node.outputs[0]])


@EXPORTS.register("broadcast_like")
def broadcast_like(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Expand to the second input's shape (on lhs_axes, its rhs_axes' sizes)."""
    lhs, rhs = node.inputs[:2]
    a = node.attrs
    if a.lhs_axes is None:
        g.op("Expand", [lhs, g.shape(rhs)], [node.outputs[0]])
        return
    lrank, rrank = node.rank(0), node.rank(1)
    sources = {_axis(int(la), lrank): _axis(int(ra), rrank)
               for la, ra in zip(a.lhs_axes, a.rhs_axes)}
    rhs_shape = g.shape(rhs)
    parts = [g.op("Gather", [rhs_shape, g.ints(sources[d])]) if d in sources else g.ints(1)
             for d in range(lrank)]
    g.op("Expand", [lhs, g.concat(parts, 0)], [node.outputs[0]])


@EXPORTS.register("Pad")
def pad(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Pad (constant, edge, reflect): pad_width's (before, after) pairs regrouped
    as all befores then all afters."""
    widths = [int(w) for w in node.attrs.pad_width]
    pads = widths[0::2] + widths[1::2]
    dtype = node.in_dtypes[0]
    inputs = [node.inputs[0], g.ints(pads)]
    if node.attrs.mode == "constant":
        inputs.append(g.scalar(np.array(node.attrs.constant_value).astype(dtype), dtype))
    g.op("Pad", inputs, [node.outputs[0]], mode=node.attrs.mode)


@EXPORTS.register("depth_to_space")
def depth_to_space(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX DepthToSpace in DCR order (MXNet's)."""
    g.op("DepthToSpace", node.inputs[:1], [node.outputs[0]],
         blocksize=int(node.attrs.block_size), mode="DCR")


@EXPORTS.register("space_to_depth")
def space_to_depth(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX SpaceToDepth."""
    g.op("SpaceToDepth", node.inputs[:1], [node.outputs[0]],
         blocksize=int(node.attrs.block_size))


# types and shape queries ---------------------------------------------------------------
@EXPORTS.register("Cast", "amp_cast")
def cast(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Cast to the dtype."""
    g.cast_if(node.inputs[0], node.in_dtypes[0], node.out_dtypes[0], node.outputs[0])


@EXPORTS.register("amp_multicast")
def amp_multicast(node: ExportNode, g: OnnxBuilder) -> None:
    """Each input cast to the common dtype type inference chose."""
    for x, src, dst, out in zip(node.inputs, node.in_dtypes, node.out_dtypes, node.outputs):
        g.cast_if(x, src, dst, out)


@EXPORTS.register("shape_array")
def shape_array(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Shape (int64, as MXNet's)."""
    g.cast_if(g.shape(node.inputs[0]), INT64, node.out_dtypes[0], node.outputs[0])


@EXPORTS.register("size_array")
def size_array(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Size as a 1-element vector."""
    size = g.reshape(g.op("Size", node.inputs[:1]), [1])
    g.cast_if(size, INT64, node.out_dtypes[0], node.outputs[0])
