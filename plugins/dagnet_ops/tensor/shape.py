"""Shape manipulation (MXNet's ``matrix_op.cc``, ``concat``, ``slice_channel``,
``broadcast_to``): ``Reshape``, ``Flatten``, ``transpose``, ``expand_dims``,
``squeeze``, ``SwapAxis``, ``Concat``, ``stack``, ``SliceChannel``, ``slice``,
``slice_axis``, ``slice_like``, ``_slice_assign``, ``_slice_assign_scalar``,
``tile``, ``repeat``, ``reverse``, ``broadcast_to``, ``broadcast_axis``,
``broadcast_like``, ``reshape_like``.

None of them computes: the output holds the input's values rearranged and
keeps its dtype, and the gradient rearranges the head gradient back
(summing where values were repeated or broadcast).  One-input operators are
made by :func:`layout_op` from a shape rule, a forward and a backward
rearrangement.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    ComposedGradient,
    Domain,
    Field,
    Gradient,
    NoParams,
    Op,
    Params,
    Shape,
    ZeroGradient,
    merge_shape,
)
from dagnet.util import dim_is_known, unknown_dim

from . import _sampling as S
from . import _second_order as second_order
from ._common import (
    backward_op,
    broadcast_shape,
    first_input_type,
    known,
    norm_axis,
    put,
    reduce_to,
    same_shape,
    shape_error,
    shape_str,
    with_attrs,
)

Fn = Callable[..., Any]


class OptionalIntTuple(Field):
    """A tuple of ints or None, written ``(None, 1)``: MXNet's ``slice`` begin/end/step."""

    def __init__(self, default: Any = REQUIRED, desc: str = "", *, none_is_empty: bool = False):
        super().__init__(Shape, default, desc)
        self.none_is_empty = none_is_empty

    def type_text(self) -> str:
        return "tuple of int or None"

    def parse(self, value: Any, op_name: str) -> Any:
        # MXNet reads step=None (the string "None" in a graph) as no step at all
        if self.none_is_empty and (value is None or (isinstance(value, str)
                                                     and value.strip() == "None")):
            return ()
        return super().parse(value, op_name)

    def _convert(self, value: Any) -> Any:
        if isinstance(value, str):
            value = ast.literal_eval(value.strip()) if value.strip() else ()
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return (int(value),)
        items = tuple(value)
        if not all(v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))
                   for v in items):
            raise TypeError(value)
        return tuple(None if v is None else int(v) for v in items)

    def to_string(self, value: Any) -> str:
        if value is None:
            return "None"
        return "(" + ", ".join("None" if v is None else str(v) for v in value) + \
               ("," if len(value) == 1 else "") + ")"


def _one_in_one_out(op: str, forward: Fn, inverse: Fn | None = None) -> Fn:
    """Shape inference for a one-input op: ``forward(attrs, in_shape)`` when the input
    is known, ``inverse(attrs, out_shape)`` to infer the input from a known output."""
    def infer(attrs, ins, outs):
        data, out = ins[0], outs[0]
        if known(data):
            got = tuple(forward(attrs, tuple(data)))
            if out is not None and len(out) == len(got) and any(
                    o and o != g for o, g in zip(out, got)):
                raise shape_error(op, f"input {tuple(data)} gives output {got}, but the output "
                                      f"has shape {tuple(out)}")
            return [tuple(data)], [got]
        if inverse is not None and known(out):
            back = tuple(inverse(attrs, tuple(out)))
            return [merge_shape(back, data, f"operator {op!r} input")], outs
        return ins, outs

    return infer


def _reshaped(xp: Any, value: Any, attrs: Params, shape: tuple) -> Any:
    return value.reshape(shape)


def layout_op(name: str, params: type[Params], *, out_shape: Fn, desc: str, reference: Fn,
              sample: Fn | None = None, case: Fn | None = None, forward: Fn = _reshaped,
              backward: Fn = _reshaped, in_shape: Fn | None = None,
              infer_shape: Fn | None = None, shape_kw: dict | None = None,
              aliases: tuple[str, ...] = ()) -> list[Op]:
    """A one-input op that rearranges its input, and its backward.

    ``out_shape(attrs, in_shape)`` is the shape rule (``in_shape(attrs, out_shape)`` infers
    back); ``forward(xp, x, attrs, out_shape)`` and ``backward(xp, dy, attrs, in_shape)``
    rearrange (default: a reshape); ``sample(draw, shape)`` draws the parameters for an
    input of a drawn shape (``shape_kw`` for :func:`_sampling.shape`), or ``case(draw)`` the
    whole Case; ``reference(p, x)`` is the numpy answer.
    """
    def compute(attrs, ctx, inputs, req, outputs):
        put(outputs[0], req[0], forward(ctx.xp, inputs[0], attrs, outputs[0].shape))

    def back(attrs, ctx, inputs, req, outputs):
        put(outputs[0], req[0], backward(ctx.xp, inputs[0], attrs, outputs[0].shape))

    def draw_case(draw):
        shape = S.shape(draw, **(shape_kw or {}))
        return Case([S.floats(draw, shape)], sample(draw, shape))

    return [Op(name, description=desc, params=params, input_names=["data"],
               infer_shape=infer_shape or _one_in_one_out(name, out_shape, in_shape),
               compute={XP: compute}, gradient=Gradient(f"_backward_{name}", ("out_grad",)),
               aliases=aliases,
               domain=Domain(case or draw_case, reference=with_attrs(params, name, reference))),
            replace(backward_op(name, params, 1, 1, back),
                    gradient=ComposedGradient(second_order.linear(name)))]


def _zeros_with(xp: Any, g: Any, shape: tuple, index: tuple) -> Any:
    """A zero array of ``shape`` holding ``g`` at ``index`` (the gradient of a slice)."""
    out = xp.zeros(shape, dtype=g.dtype)
    out[index] = g
    return out


# -- Reshape ------------------------------------------------------------------------------------
class ReshapeParam(Params):
    shape = Field(Shape, (), "The target shape; special values: 0 copies the input's dimension, "
                             "-1 infers it, -2 copies all remaining dimensions, -3 merges two "
                             "dimensions, -4 splits one into the two values that follow.")
    reverse = Field(bool, False, "If true then the special values are inferred from right to "
                                 "left")
    target_shape = Field(Shape, (), "(Deprecated! Use shape instead.) Target new shape. One and "
                                    "only one dim can be 0, in which case it will be inferred "
                                    "from the rest of dims")
    keep_highest = Field(bool, False, "(Deprecated! Use shape instead.) Whether keep the highest "
                                      "dim unchanged. If set to true, then the first dim in "
                                      "target_shape is ignored, and always fixed as input")


def reshape_shape(op: str, dshape: Sequence[int], spec: Sequence[int], reverse: bool) -> tuple:
    """MXNet's ``InferReshapeShape``: the output shape for input ``dshape`` and ``spec``."""
    src = list(dshape)[::-1] if reverse else list(dshape)
    spec = list(spec)[::-1] if reverse else list(spec)
    out: list[int] = []
    infer_at = -1
    i = j = 0  # i: position in spec, j: next input dimension

    def take() -> int:
        nonlocal j
        if j >= len(src):
            raise shape_error(op, f"shape={tuple(spec)} uses more input dimensions than "
                                  f"{tuple(dshape)} has")
        j += 1
        return src[j - 1]

    while i < len(spec):
        code = spec[i]
        if code == 0:
            out.append(take())
        elif code == -1:
            if infer_at >= 0:
                raise shape_error(op, f"shape={tuple(spec)}: one and only one dim can be inferred")
            infer_at = len(out)
            out.append(1)
            j += 1
        elif code == -2:
            out.extend(src[j:])
            j = len(src)
        elif code == -3:
            out.append(take() * take())
        elif code == -4:
            if i + 2 >= len(spec):
                raise shape_error(op, f"shape={tuple(spec)}: -4 needs the two sizes that follow")
            d0, d1, d2 = take(), spec[i + 1], spec[i + 2]
            i += 2
            if d1 == -1 and d2 == -1:
                raise shape_error(op, "split dims cannot both be -1")
            d1 = d0 // d2 if d1 == -1 else d1
            d2 = d0 // d1 if d2 == -1 else d2
            if d1 * d2 != d0:
                raise shape_error(op, f"cannot split dimension {d0} into {d1} x {d2}")
            out.extend([d1, d2])
        elif code > 0:
            out.append(code)
            j += 1
        else:
            raise shape_error(op, f"shape={tuple(spec)} has the invalid value {code}")
        i += 1
    size = int(np.prod(dshape))
    if infer_at >= 0:
        rest = int(np.prod(out))
        if rest == 0 or size % rest:
            raise shape_error(op, f"cannot reshape {tuple(dshape)} (size {size}) with "
                                  f"shape={tuple(spec[::-1] if reverse else spec)}")
        out[infer_at] = size // rest
    out = out[::-1] if reverse else out
    if int(np.prod(out)) != size:
        raise shape_error(op, f"cannot reshape array of shape {tuple(dshape)} (size {size}) "
                              f"into {tuple(out)} (size {int(np.prod(out))})")
    return tuple(out)


def _reshape_target(attrs: ReshapeParam, dshape: tuple) -> tuple:
    if attrs.shape:
        return reshape_shape("Reshape", dshape, attrs.shape, attrs.reverse)
    if not attrs.target_shape:
        raise shape_error("Reshape", "give the target shape as shape=(...)")
    spec = list(attrs.target_shape)
    if attrs.keep_highest:
        spec[0] = dshape[0]
    return reshape_shape("Reshape", dshape, [-1 if d == 0 else d for d in spec], False)


def _reshape_infer(attrs, ins, outs):
    data, out = ins[0], outs[0]
    if data is not None and not known(data) and known(out) and sum(d == 0 for d in data) == 1:
        # one unknown input dimension: its size follows from the output's
        rest = int(np.prod([d for d in data if d]))
        data = tuple(int(np.prod(out)) // rest if d == 0 else d for d in data)
    return _one_in_one_out("Reshape", _reshape_target)(attrs, [data], outs)


def _reshape_sample(draw, shape):
    size, nd = int(np.prod(shape)), len(shape)
    specs: list[tuple[tuple, bool]] = [((-1,), False), ((size,), False), ((1, -1), False),
                                       ((-2,), False), ((0, -2), False), ((-1, 0), True),
                                       ((-4, 1, -1, -2), False), ((-4, -1, 1, -2), False)]
    if nd >= 2:
        specs += [((0, -1), False), ((-3, -2), False), ((0, 0, -2), False),
                  ((shape[0], -1), False), ((-1, shape[-1]), False),
                  ((-3, 0) + (0,) * (nd - 3), False) if nd >= 3 else ((-3,), False)]
    spec, reverse = S.choice(draw, specs, "shape spec")
    params: dict[str, Any] = {"shape": spec}
    if reverse:
        params["reverse"] = True
    return params


OPS: list[Op] = layout_op(
    "Reshape", ReshapeParam, out_shape=_reshape_target, infer_shape=_reshape_infer,
    sample=_reshape_sample, shape_kw={"max_dims": 4}, aliases=("reshape",),
    reference=lambda p, x: x.reshape(_reshape_target(p, x.shape)),
    desc="Reshape the input to ``shape`` (same number of elements, row-major order).  "
         "Special values in shape: ``0`` copies the input dimension at this position, "
         "``-1`` infers one dimension from the rest, ``-2`` copies all remaining input "
         "dimensions, ``-3`` merges two consecutive input dimensions, ``-4 a b`` splits "
         "one input dimension into a x b (one of them may be -1).  ``reverse=True`` "
         "matches the special values from the right (``(10, 5, 4)`` with ``(-1, 0)`` "
         "gives ``(50, 4)``).  ``target_shape``/``keep_highest`` are MXNet's deprecated "
         "spelling (a 0 in target_shape is inferred).  A size mismatch is an error (MXNet 1.9 "
         "lets some through).  Dtype unchanged.  Gradient: the head gradient reshaped back.")

# -- Flatten, expand_dims, squeeze ---------------------------------------------------------------
class ExpandDimParam(Params):
    axis = Field(int, REQUIRED, "Position where new axis is to be inserted. Suppose that the "
                                "input NDArray's dimension is ndim, the range of the inserted "
                                "axis is [-ndim, ndim]")


def _expand_shape(attrs: ExpandDimParam, s: tuple) -> tuple:
    axis = norm_axis("expand_dims", attrs.axis, len(s), extra=1)
    return s[:axis] + (1,) + s[axis:]


def _expand_inverse(attrs: ExpandDimParam, out: tuple) -> tuple:
    axis = norm_axis("expand_dims", attrs.axis, len(out) - 1, extra=1)
    return out[:axis] + out[axis + 1:]


class SqueezeParam(Params):
    axis = Field(Shape, None, "Selects a subset of the single-dimensional entries in the shape. "
                              "If an axis is selected with shape entry greater than one, an error "
                              "is raised.")


def _squeeze_shape(attrs: SqueezeParam, s: tuple) -> tuple:
    if attrs.axis is None:
        axes = {i for i, d in enumerate(s) if d == 1}
    else:
        axes = {norm_axis("squeeze", a, len(s)) for a in attrs.axis}
        bad = [a for a in sorted(axes) if s[a] != 1]
        if bad:
            raise shape_error("squeeze", f"cannot squeeze axis {bad[0]} of input {s}: its size "
                                         f"is {s[bad[0]]}, not 1")
    return tuple(d for i, d in enumerate(s) if i not in axes) or (1,)


def _squeeze_sample(draw, shape):
    ones = [i for i, d in enumerate(shape) if d == 1]
    if not ones or not S.boolean(draw, "axis given"):
        return {}
    chosen = S.subset(draw, ones, "axes to squeeze")
    return {"axis": tuple(a - len(shape) if S.boolean(draw, "negative") else a for a in chosen)}


OPS += [
    *layout_op("Flatten", NoParams, out_shape=lambda p, s: (s[0], int(np.prod(s[1:]))),
               sample=lambda draw, shape: {}, shape_kw={"max_dims": 4}, aliases=("flatten",),
               reference=lambda p, x: x.reshape(x.shape[0], -1),
               desc="Flatten to 2-D: ``(d0, d1, ..., dk)`` becomes ``(d0, d1 * ... * dk)``; a "
                    "1-D input ``(d0,)`` becomes ``(d0, 1)``.  Dtype unchanged.  Gradient: the "
                    "head gradient reshaped back."),
    *layout_op("expand_dims", ExpandDimParam, out_shape=_expand_shape, in_shape=_expand_inverse,
               sample=lambda draw, shape: {"axis": S.axis(draw, len(shape), extra=1)},
               reference=lambda p, x: np.expand_dims(x, p.axis),
               desc="Insert a new axis of size 1 at ``axis`` (range [-ndim-1, ndim]).  Dtype "
                    "unchanged.  Gradient: the head gradient reshaped back."),
    *layout_op("squeeze", SqueezeParam, out_shape=_squeeze_shape, sample=_squeeze_sample,
               shape_kw={"max_side": 3, "max_dims": 4},
               reference=lambda p, x: x.reshape(_squeeze_shape(p, x.shape)),
               desc="Remove the size-1 axes listed in ``axis`` (all of them when None); an axis "
                    "whose size is not 1 is an error.  Squeezing every axis gives shape (1,) "
                    "(MXNet 1.x has no 0-d arrays).  Dtype unchanged.  Gradient: the head "
                    "gradient reshaped back."),
]


# -- transpose, SwapAxis ----------------------------------------------------------------------
class TransposeParam(Params):
    axes = Field(Shape, (), "Target axis order. By default the axes will be inverted.")


def _perm(attrs: TransposeParam, ndim: int) -> tuple:
    if not attrs.axes:
        return tuple(range(ndim))[::-1]
    axes = tuple(norm_axis("transpose", a, ndim, "axes entry") for a in attrs.axes)
    if sorted(axes) != list(range(ndim)):
        raise shape_error("transpose", f"axes={attrs.axes} is not a permutation of the "
                                       f"{ndim} axes of the input")
    return axes


def _inverse_perm(attrs: TransposeParam, ndim: int) -> tuple:
    return tuple(int(a) for a in np.argsort(_perm(attrs, ndim)))


def _transpose_sample(draw, shape):
    if not S.boolean(draw, "axes given"):
        return {}
    chosen = S.subset(draw, range(len(shape)), "leading axes")  # a drawn order, then the rest
    return {"axes": tuple(chosen) + tuple(a for a in range(len(shape)) if a not in chosen)}


class SwapAxisParam(Params):
    dim1 = Field(int, 0, "the first axis to be swapped.")
    dim2 = Field(int, 0, "the second axis to be swapped.")


def _swap_perm(attrs: SwapAxisParam, ndim: int) -> list:
    perm = list(range(ndim))
    a = norm_axis("SwapAxis", attrs.dim1, ndim, "dim1")
    b = norm_axis("SwapAxis", attrs.dim2, ndim, "dim2")
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def _swapped(p: SwapAxisParam, s: tuple) -> tuple:
    return tuple(s[a] for a in _swap_perm(p, len(s)))


def _permutation_infer(op: str, perm: Fn) -> Fn:
    """Shape inference of an axis permutation ``perm(attrs, ndim)``, for partial shapes
    both ways: every known dimension of the input or the output fills the other."""
    def infer(attrs, ins, outs):
        data, out = ins[0], outs[0]
        ndim = len(data) if data is not None else len(out) if out is not None else None
        if ndim is None:
            return ins, outs
        order = perm(attrs, ndim)
        if data is not None:
            try:
                out = merge_shape(tuple(data[a] for a in order), out, "")
            except ShapeError:
                raise shape_error(op, f"input {tuple(data)} gives output "
                                      f"{tuple(data[a] for a in order)}, but the output has "
                                      f"shape {tuple(out)}") from None
        back = [0] * ndim
        for i, a in enumerate(order):
            back[a] = out[i]
        return [merge_shape(tuple(back), data, f"operator {op!r} input")], [out]

    return infer


OPS += [
    *layout_op("transpose", TransposeParam,
               infer_shape=_permutation_infer("transpose", _perm),
               out_shape=lambda p, s: tuple(s[a] for a in _perm(p, len(s))),
               in_shape=lambda p, s: tuple(s[a] for a in _inverse_perm(p, len(s))),
               forward=lambda xp, x, p, shape: xp.transpose(x, _perm(p, x.ndim)),
               backward=lambda xp, g, p, shape: xp.transpose(g, _inverse_perm(p, g.ndim)),
               sample=_transpose_sample, shape_kw={"max_dims": 4},
               reference=lambda p, x: np.transpose(x, p.axes or None),
               desc="Permute the axes: output axis i is input axis ``axes[i]``; empty axes "
                    "reverse them (a 1-D input is unchanged).  Negative entries count from the "
                    "end (MXNet rejects them).  Dtype unchanged.  Gradient: the inverse "
                    "permutation of the head gradient."),
    *layout_op("SwapAxis", SwapAxisParam, out_shape=_swapped, in_shape=_swapped,
               infer_shape=_permutation_infer("SwapAxis", _swap_perm),
               forward=lambda xp, x, p, shape: xp.transpose(x, _swap_perm(p, x.ndim)),
               backward=lambda xp, g, p, shape: xp.transpose(g, _swap_perm(p, g.ndim)),
               sample=lambda draw, shape: {"dim1": S.axis(draw, len(shape)),
                                           "dim2": S.axis(draw, len(shape))},
               reference=lambda p, x: np.swapaxes(x, p.dim1, p.dim2), aliases=("swapaxes",),
               desc="Interchange two axes, ``dim1`` and ``dim2`` (default 0 and 0: a copy).  "
                    "Dtype unchanged.  Gradient: the same swap of the head gradient."),
]


# -- Concat, stack, SliceChannel ------------------------------------------------------------------
class ConcatParam(Params):
    num_args = Field(int, REQUIRED, "Number of inputs to be concated.", low=1)
    dim = Field(int, 1, "the dimension to be concated.")


def _concat_infer(attrs, ins, outs):
    op = "Concat"
    shapes = [s for s in ins + outs if s is not None]
    if not shapes:
        return ins, outs
    ndim = len(shapes[0])
    axis = norm_axis(op, attrs.dim, ndim, "dim")
    unknown = unknown_dim()
    template = None
    labelled = [(f"arg{i}", s) for i, s in enumerate(ins)] + [("output", outs[0])]
    for label, s in labelled:
        if s is None:
            continue
        if len(s) != ndim:
            raise shape_error(op, f"argument {label!r} has shape {tuple(s)} but the others have "
                                  f"{ndim} dimensions")
        masked = tuple(unknown if i == axis else d for i, d in enumerate(s))
        try:
            template = merge_shape(template, masked, "")
        except Exception:
            raise shape_error(op, f"argument {label!r} has shape {tuple(s)}, incompatible with "
                                  f"{shape_str(template)} outside dim {axis}") from None
    sizes = [s[axis] if s is not None else unknown for s in ins]
    total = outs[0][axis] if outs[0] is not None else unknown
    missing = [i for i, d in enumerate(sizes) if not dim_is_known(d)]
    if not missing:
        if dim_is_known(total) and total != sum(sizes):
            raise shape_error(op, f"inputs {[tuple(s) for s in ins]} concatenate to "
                                  f"{sum(sizes)} along dim {axis}, but the output has {total}")
        total = sum(sizes)
    elif len(missing) == 1 and dim_is_known(total):
        sizes[missing[0]] = total - sum(d for d in sizes if dim_is_known(d))

    def with_axis(d):
        return tuple(d if i == axis else t for i, t in enumerate(template))

    return [with_axis(d) for d in sizes], [with_axis(total)]


def _concat_back(attrs, ctx, inputs, req, outputs):
    axis = norm_axis("Concat", attrs.dim, inputs[0].ndim, "dim")
    start = 0
    for out, r in zip(outputs, req):
        size = out.shape[axis]
        index = (slice(None),) * axis + (slice(start, start + size),)
        put(out, r, inputs[0][index])
        start += size


def _concat_sample(draw):
    shape = S.shape(draw)
    dim = S.axis(draw, len(shape))
    n = S.integer(draw, 1, 3, "num_args")
    arrays = []
    for _ in range(n):
        s = list(shape)
        s[dim] = S.integer(draw, 1, 3, "size along dim")
        arrays.append(S.floats(draw, s))
    return Case(arrays, {"num_args": n, "dim": dim})


class StackParam(Params):
    axis = Field(int, 0, "The axis in the result array along which the input arrays are stacked.")
    num_args = Field(int, REQUIRED, "Number of inputs to be stacked.", low=1)


def _stack_infer(attrs, ins, outs):
    merged = None
    for i, s in enumerate(ins):
        try:
            merged = merge_shape(merged, s, "")
        except Exception:
            raise shape_error("stack", f"argument 'arg{i}' has shape {tuple(s)} but the others "
                                       f"have {shape_str(merged)}; stacked arrays must agree"
                              ) from None
    out = outs[0]
    if merged is None and out is not None:
        axis = norm_axis("stack", attrs.axis, len(out) - 1, extra=1)
        merged = out[:axis] + out[axis + 1:]
    if merged is None:
        return ins, outs
    axis = norm_axis("stack", attrs.axis, len(merged), extra=1)
    return [merged] * len(ins), [tuple(merged[:axis]) + (attrs.num_args,) + tuple(merged[axis:])]


def _stack_back(attrs, ctx, inputs, req, outputs):
    axis = norm_axis("stack", attrs.axis, inputs[0].ndim - 1, extra=1)
    for i, (out, r) in enumerate(zip(outputs, req)):
        put(out, r, ctx.xp.take(inputs[0], i, axis=axis))


def _stack_sample(draw):
    shape = S.shape(draw)
    n = S.integer(draw, 1, 3, "num_args")
    return Case([S.floats(draw, shape) for _ in range(n)],
                {"num_args": n, "axis": S.axis(draw, len(shape), extra=1)})


class SliceChannelParam(Params):
    num_outputs = Field(int, REQUIRED, "Number of splits. Note that this should evenly divide "
                                       "the length of the axis.", low=1)
    axis = Field(int, 1, "Axis along which to split.")
    squeeze_axis = Field(bool, False, "If true, Removes the axis with length 1 from the shapes "
                                      "of the output arrays.")


def _split_infer(attrs, ins, outs):
    op = "SliceChannel"
    data = ins[0]
    n = attrs.num_outputs
    if not known(data):
        # back-inference: a known part gives the input, merged with what is known of it
        piece = next((s for s in outs if known(s)), None)
        if piece is None:
            return ins, outs
        ndim = len(piece) + (1 if attrs.squeeze_axis else 0)
        axis = norm_axis(op, attrs.axis, ndim)
        full = list(piece[:axis]) + [1] + list(piece[axis:]) if attrs.squeeze_axis else list(piece)
        full[axis] *= n
        data = merge_shape(tuple(full), data, f"operator {op!r} input")
    axis = norm_axis(op, attrs.axis, len(data))
    if data[axis] % n:
        raise shape_error(op, f"cannot split axis {axis} of input {tuple(data)} into "
                              f"num_outputs={n} equal parts ({n} does not divide {data[axis]})")
    piece = list(data)
    piece[axis] //= n
    if attrs.squeeze_axis:
        if piece[axis] != 1:
            raise shape_error(op, f"squeeze_axis=True needs parts of size 1 along axis {axis}, "
                                  f"but input {tuple(data)} split {n} ways gives {piece[axis]}")
        del piece[axis]
    return [tuple(data)], [tuple(piece)] * n


def _split_compute(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    axis = norm_axis("SliceChannel", attrs.axis, x.ndim)
    for part, out, r in zip(ctx.xp.split(x, attrs.num_outputs, axis=axis), outputs, req):
        put(out, r, part.reshape(out.shape))


def _split_back(attrs, ctx, inputs, req, outputs):
    shape = outputs[0].shape
    axis = norm_axis("SliceChannel", attrs.axis, len(shape))
    piece = list(shape)
    piece[axis] //= attrs.num_outputs
    put(outputs[0], req[0], ctx.xp.concatenate([g.reshape(piece) for g in inputs], axis=axis))


def _split_sample(draw):
    shape = list(S.shape(draw))
    axis = S.axis(draw, len(shape))
    n = S.integer(draw, 1, 3, "num_outputs")
    squeeze = S.boolean(draw, "squeeze_axis")
    shape[axis] = n if squeeze else n * S.integer(draw, 1, 2, "part size")
    return Case([S.floats(draw, shape)], {"num_outputs": n, "axis": axis, "squeeze_axis": squeeze})


def _split_reference(p, x):
    parts = np.split(x, p.num_outputs, axis=p.axis)
    return [np.squeeze(q, axis=p.axis) if p.squeeze_axis else q for q in parts]


def _concat(attrs, ctx, inputs, req, outputs):
    axis = norm_axis("Concat", attrs.dim, inputs[0].ndim, "dim")
    put(outputs[0], req[0], ctx.xp.concatenate(inputs, axis=axis))


def _stack(attrs, ctx, inputs, req, outputs):
    axis = norm_axis("stack", attrs.axis, inputs[0].ndim, extra=1)
    put(outputs[0], req[0], ctx.xp.stack(inputs, axis=axis))


def _arg_names(attrs: Params) -> list[str]:
    return [f"arg{i}" for i in range(attrs.num_args)]


OPS += [
    Op("Concat", params=ConcatParam, num_inputs=lambda attrs: attrs.num_args,
       input_names=_arg_names, key_var_num_args="num_args", aliases=("concat",),
       infer_shape=_concat_infer, compute={XP: _concat},
       gradient=Gradient("_backward_Concat", ("out_grad",)),
       domain=Domain(_concat_sample, reference=with_attrs(
           ConcatParam, "Concat", lambda p, *xs: np.concatenate(xs, axis=p.dim))),
       description="Join ``num_args`` arrays along ``dim`` (default 1); the other dimensions "
                   "must agree.  Shape inference runs both ways (one input's size along dim "
                   "follows from the output's).  Dtype unchanged.  Gradient: the head gradient "
                   "split back into the inputs' pieces."),
    backward_op("Concat", ConcatParam, 1, lambda attrs: attrs.num_args, _concat_back),
    Op("stack", params=StackParam, num_inputs=lambda attrs: attrs.num_args,
       input_names=_arg_names, key_var_num_args="num_args", infer_shape=_stack_infer,
       compute={XP: _stack}, gradient=Gradient("_backward_stack", ("out_grad",)),
       domain=Domain(_stack_sample, reference=with_attrs(
           StackParam, "stack", lambda p, *xs: np.stack(xs, axis=p.axis))),
       description="Join ``num_args`` arrays of one shape along a new axis ``axis`` (range "
                   "[-ndim-1, ndim]).  Dtype unchanged.  Gradient: the head gradient's slices."),
    backward_op("stack", StackParam, 1, lambda attrs: attrs.num_args, _stack_back),
    Op("SliceChannel", params=SliceChannelParam, num_outputs=lambda attrs: attrs.num_outputs,
       input_names=["data"], aliases=("split",), infer_shape=_split_infer,
       output_names=lambda attrs: [f"output{i}" for i in range(attrs.num_outputs)],
       compute={XP: _split_compute}, gradient=Gradient("_backward_SliceChannel", ("out_grad",)),
       domain=Domain(_split_sample, reference=with_attrs(SliceChannelParam, "SliceChannel",
                                                         _split_reference)),
       description="Split the input along ``axis`` (default 1) into ``num_outputs`` equal parts "
                   "(an error if they do not divide it); ``squeeze_axis`` drops that axis from "
                   "the parts when they have size 1 there (a 1-D input then gives 0-d parts, "
                   "as MXNet 1.9).  Outputs are named output0, output1, ...  Dtype unchanged.  "
                   "Gradient: the head gradients concatenated back."),
    backward_op("SliceChannel", SliceChannelParam, lambda attrs: attrs.num_outputs, 1,
                _split_back),
]


# -- slice, slice_axis, slice_like, _slice_assign ---------------------------------------------
class SliceParam(Params):
    begin = OptionalIntTuple(REQUIRED, "starting indices for the slice operation, supports "
                                       "negative indices.")
    end = OptionalIntTuple(REQUIRED, "ending indices for the slice operation, supports negative "
                                     "indices.")
    step = OptionalIntTuple((), "step for the slice operation, supports negative values.",
                            none_is_empty=True)


def _slices(op: str, attrs: Any, shape: Sequence[int]) -> tuple:
    """Python slices for begin/end/step (None entries: the defaults of Python slicing)."""
    begin, end, step = attrs.begin, attrs.end, attrs.step
    if len(end) != len(begin) or (step and len(step) != len(begin)):
        raise shape_error(op, f"begin={begin}, end={end} and step={step} must have equal lengths")
    if len(begin) > len(shape):
        raise shape_error(op, f"begin={begin} slices {len(begin)} axes but the input "
                              f"{tuple(shape)} has {len(shape)}")
    out = []
    for i, b in enumerate(begin):
        s = step[i] if step else None
        if s == 0:
            raise shape_error(op, f"step={step} has a zero at axis {i}")
        out.append(slice(b, end[i], s))
    return tuple(out)


def _sliced_shape(op: str, attrs: Any, shape: Sequence[int]) -> tuple:
    slices = _slices(op, attrs, shape) + (slice(None),) * len(shape)
    return tuple(len(range(*sl.indices(d))) for sl, d in zip(slices, shape))


def _slice_params(draw, shape):
    n = S.integer(draw, 1, len(shape), "sliced axes")
    begin, end, step = [], [], []
    for d in shape[:n]:
        s = S.choice(draw, [None, 1, 2, -1, -2], "step")
        begin.append(S.choice(draw, [None, *range(-d, d)], "begin"))
        end.append(S.choice(draw, [None, *range(-d - 1, d + 1)], "end"))
        step.append(s)
    params = {"begin": tuple(begin), "end": tuple(end)}
    if S.boolean(draw, "step given"):
        params["step"] = tuple(step)
    return params


class SliceAxisParam(Params):
    axis = Field(int, REQUIRED, "Axis along which to be sliced, supports negative indexes.")
    begin = Field(int, REQUIRED, "The beginning index along the axis to be sliced,  supports "
                                 "negative indexes.")
    end = Field(int, REQUIRED, "The ending index along the axis to be sliced,  supports negative "
                               "indexes.", optional=True)


def _axis_slice(attrs: SliceAxisParam, shape: Sequence[int]) -> tuple:
    op = "slice_axis"
    axis = norm_axis(op, attrs.axis, len(shape))
    n = shape[axis]
    begin = attrs.begin + n if attrs.begin < 0 else attrs.begin
    end = n if attrs.end is None else attrs.end + n if attrs.end < 0 else attrs.end
    if not 0 <= begin < end <= n:
        raise shape_error(op, f"invalid begin={attrs.begin}, end={attrs.end} for axis {axis} of "
                              f"size {n} (need begin < end within the axis)")
    return (slice(None),) * axis + (slice(begin, end),)


def _axis_sliced_shape(attrs: SliceAxisParam, shape: tuple) -> tuple:
    slices = _axis_slice(attrs, shape) + (slice(None),) * len(shape)
    return tuple(len(range(*sl.indices(d))) for sl, d in zip(slices, shape))


def _slice_axis_params(draw, shape):
    axis = S.axis(draw, len(shape))
    n = shape[axis]
    begin = S.integer(draw, 0, n - 1, "begin")
    end = S.integer(draw, begin + 1, n, "end")
    if end == n and S.boolean(draw, "end None"):
        end = None
    elif end < n and S.boolean(draw, "negative end"):
        end -= n
    return {"axis": axis, "begin": begin - n if S.boolean(draw, "negative begin") else begin,
            "end": end}


def _np_slice_axis(p, x):
    return np.moveaxis(np.moveaxis(x, p.axis, 0)[p.begin:p.end], 0, p.axis)


def _dimwise_partial(op: str, rule: Fn) -> Fn:
    """Shape inference for ops whose output dimension i depends on input dimension i only
    (slices): unknown input dimensions stay unknown in the output, the rest are computed."""
    big = 2 ** 31 - 1  # stands in for an unknown size: every bound fits inside it

    def infer(attrs, ins, outs):
        data = ins[0]
        if data is None:
            return ins, outs
        unknown = [not dim_is_known(d) for d in data]
        got = rule(attrs, tuple(big if u else d for u, d in zip(unknown, data)))
        marker = unknown_dim()
        out = tuple(marker if u else g for u, g in zip(unknown, got))
        try:
            out = merge_shape(out, outs[0], "")
        except ShapeError:
            raise shape_error(op, f"input {tuple(data)} gives output {out}, but the output "
                                  f"has shape {tuple(outs[0])}") from None
        return ins, [out]

    return infer


OPS += [
    *layout_op("slice", SliceParam, out_shape=lambda p, s: _sliced_shape("slice", p, s),
               infer_shape=_dimwise_partial("slice", lambda p, s: _sliced_shape("slice", p, s)),
               forward=lambda xp, x, p, shape: x[_slices("slice", p, x.shape)],
               backward=lambda xp, g, p, shape: _zeros_with(
                   xp, g, shape, _slices("slice", p, shape)),
               sample=_slice_params, aliases=("crop",),
               reference=lambda p, x: x[tuple(slice(b, e, s) for b, e, s in zip(
                   p.begin, p.end, p.step or (None,) * len(p.begin)))],
               desc="Slice ``data[begin[0]:end[0]:step[0], begin[1]:..., ...]`` on the first "
                    "len(begin) axes with Python's rules: None takes the default, negative "
                    "indices count from the end, out-of-range bounds are clipped, and begin "
                    "past end gives an empty axis.  begin/end/step are tuples of int or None "
                    "(symbol JSON: ``'(None, 1)'``).  Dtype unchanged.  Gradient: the head "
                    "gradient placed in the slice of a zero array."),
    *layout_op("slice_axis", SliceAxisParam,
               out_shape=_axis_sliced_shape,
               infer_shape=_dimwise_partial("slice_axis", _axis_sliced_shape),
               forward=lambda xp, x, p, shape: x[_axis_slice(p, x.shape)],
               backward=lambda xp, g, p, shape: _zeros_with(xp, g, shape, _axis_slice(p, shape)),
               sample=_slice_axis_params, reference=_np_slice_axis,
               desc="Slice ``begin:end`` along one ``axis`` (negative values count from the "
                    "end; end=None means the axis' size).  As MXNet, begin must be below end "
                    "and end within the axis.  Dtype unchanged.  Gradient: the head gradient "
                    "placed in the slice of a zero array."),
]


class SliceLikeParam(Params):
    axes = Field(Shape, (), "List of axes on which input data will be sliced according to the "
                            "corresponding size of the second input. By default will slice on "
                            "all axes. Negative axes are supported.")


def _like_slices(attrs: SliceLikeParam, shape: Sequence[int], like: Sequence[int]) -> tuple:
    op = "slice_like"
    if not attrs.axes:
        if len(like) > len(shape):
            raise shape_error(op, f"shape_like {tuple(like)} has more dimensions than data "
                                  f"{tuple(shape)}")
        axes = range(len(like))
    else:
        axes = [norm_axis(op, a, len(shape), "axes entry") for a in attrs.axes]
    slices = [slice(None)] * len(shape)
    for a in axes:
        if like[a] > shape[a]:
            raise shape_error(op, f"shape_like {tuple(like)} is larger than data {tuple(shape)} "
                                  f"at axis {a}")
        slices[a] = slice(0, like[a])
    return tuple(slices)


def _slice_like_infer(attrs, ins, outs):
    data, like = ins
    if not (known(data) and known(like)):
        return ins, outs
    slices = _like_slices(attrs, data, like)
    return ins, [tuple(len(range(*s.indices(d))) for s, d in zip(slices, data))]


def _slice_like(attrs, ctx, inputs, req, outputs):
    data, like = inputs
    put(outputs[0], req[0], data[_like_slices(attrs, data.shape, like.shape)])


def _slice_like_back(attrs, ctx, inputs, req, outputs):
    shape = outputs[0].shape
    index = _like_slices(attrs, shape, outputs[1].shape)
    put(outputs[0], req[0], _zeros_with(ctx.xp, inputs[0], shape, index))
    put(outputs[1], req[1], 0)


def _slice_like_sample(draw):
    shape = S.shape(draw)
    like = tuple(S.integer(draw, 1, d, "like size") for d in shape)
    params = {}
    if S.boolean(draw, "axes given"):
        params["axes"] = tuple(a - len(shape) if S.boolean(draw, "negative") else a
                               for a in S.subset(draw, range(len(shape))))
    return Case([S.floats(draw, shape), S.floats(draw, like)], params)


class SliceAssignScalarParam(SliceParam):
    scalar = Field(float, 0.0, "The scalar value for assignment.")


def _slice_assign(attrs, ctx, inputs, req, outputs):
    value = inputs[0].copy()
    value[_slices("_slice_assign", attrs, value.shape)] = inputs[1]
    put(outputs[0], req[0], value)


def _slice_assign_back(attrs, ctx, inputs, req, outputs):
    g = inputs[0]
    index = _slices("_slice_assign", attrs, g.shape)
    rest = g.copy()
    rest[index] = 0
    put(outputs[0], req[0], rest)
    put(outputs[1], req[1], g[index])


def _slice_assign_scalar(attrs, ctx, inputs, req, outputs):
    value = inputs[0].copy()
    value[_slices("_slice_assign_scalar", attrs, value.shape)] = attrs.scalar
    put(outputs[0], req[0], value)


def _slice_assign_scalar_back(attrs, ctx, inputs, req, outputs):
    rest = inputs[0].copy()
    rest[_slices("_slice_assign_scalar", attrs, rest.shape)] = 0
    put(outputs[0], req[0], rest)


def _slice_assign_infer(attrs, ins, outs):
    lhs = merge_shape(ins[0], outs[0], "operator '_slice_assign' lhs and output")
    if known(lhs):
        want = _sliced_shape("_slice_assign", attrs, lhs)
        if ins[1] is not None and tuple(ins[1]) != want:
            raise shape_error("_slice_assign", f"rhs has shape {tuple(ins[1])} but the slice "
                                               f"of lhs {tuple(lhs)} has shape {want}")
        return [lhs, want], [lhs]
    return [lhs, ins[1]], [lhs]


def _slice_assign_scalar_sample(draw):
    shape = S.shape(draw)
    params = {**_slice_params(draw, shape), "scalar": S.number(draw, -2, 2)}
    return Case([S.floats(draw, shape)], params)


def _slice_assign_sample(draw):
    shape = S.shape(draw)
    params = _slice_params(draw, shape)
    region = _sliced_shape("_slice_assign", SliceParam.parse("_slice_assign", params), shape)
    return Case([S.floats(draw, shape), S.floats(draw, region)], params)


def _np_slice_assign(p, lhs, rhs=None):
    out = lhs.copy()
    out[_slices("", p, lhs.shape)] = p.scalar if rhs is None else rhs
    return out


OPS += [
    Op("slice_like", params=SliceLikeParam, num_inputs=2, input_names=["data", "shape_like"],
       infer_shape=_slice_like_infer, infer_type=first_input_type(1), compute={XP: _slice_like},
       gradient=Gradient("_backward_slice_like", ("out_grad",)),
       domain=Domain(_slice_like_sample, differentiable=(0,), reference=with_attrs(
           SliceLikeParam, "slice_like",
           lambda p, x, like: x[_like_slices(p, x.shape, like.shape)])),
       description="Slice ``data`` to the shape of ``shape_like`` (from index 0) on ``axes`` "
                   "(default: every axis of shape_like).  Only shape_like's shape is read.  "
                   "Dtype = data's.  Gradient: data gets the head gradient padded with zeros; "
                   "shape_like gets zero."),
    backward_op("slice_like", SliceLikeParam, 1, 2, _slice_like_back),
    Op("_slice_assign", params=SliceParam, num_inputs=2, input_names=["lhs", "rhs"],
       aliases=("_crop_assign",), infer_shape=_slice_assign_infer, compute={XP: _slice_assign},
       gradient=Gradient("_backward__slice_assign", ("out_grad",)), inplace=[(0, 0)],
       domain=Domain(_slice_assign_sample, reference=with_attrs(
           SliceParam, "_slice_assign", lambda p, lhs, rhs: _np_slice_assign(p, lhs, rhs))),
       description="``lhs`` with ``lhs[begin:end:step] = rhs`` (slicing as ``slice``); what "
                   "``NDArray.__setitem__`` runs, in place over lhs.  Dtype = lhs's.  Gradient: "
                   "lhs gets the head gradient zeroed in the slice, rhs the head gradient's "
                   "slice."),
    backward_op("_slice_assign", SliceParam, 1, 2, _slice_assign_back),
    Op("_slice_assign_scalar", params=SliceAssignScalarParam, input_names=["data"],
       aliases=("_crop_assign_scalar",), infer_shape=same_shape("_slice_assign_scalar", ["data"]),
       compute={XP: _slice_assign_scalar}, inplace=[(0, 0)],
       gradient=Gradient("_backward__slice_assign_scalar", ("out_grad",)),
       domain=Domain(_slice_assign_scalar_sample, reference=with_attrs(
           SliceAssignScalarParam, "_slice_assign_scalar", _np_slice_assign)),
       description="``data`` with ``data[begin:end:step] = scalar``, in place over data.  Dtype "
                   "unchanged.  Gradient: the head gradient zeroed in the slice."),
    backward_op("_slice_assign_scalar", SliceAssignScalarParam, 1, 1, _slice_assign_scalar_back),
]


# -- tile, repeat, reverse --------------------------------------------------------------------
class TileParam(Params):
    reps = Field(Shape, REQUIRED, "The number of times for repeating the tensor a. Each dim "
                                  "size of reps must be a positive integer. If reps has length "
                                  "d, the result will have dimension of max(d, a.ndim); If "
                                  "a.ndim < d, a is promoted to be d-dimensional by prepending "
                                  "new axes. If a.ndim > d, reps is promoted to a.ndim by "
                                  "pre-pending 1's to it.")


def _tile_dims(attrs: TileParam, shape: Sequence[int]) -> tuple[tuple, tuple]:
    """The shape and reps padded with leading 1s to one length."""
    if any(r <= 0 for r in attrs.reps):
        raise shape_error("tile", f"reps={attrs.reps} must be positive")
    n = max(len(shape), len(attrs.reps))
    return ((1,) * (n - len(shape)) + tuple(shape),
            (1,) * (n - len(attrs.reps)) + tuple(attrs.reps))


def _tile_back(xp: Any, g: Any, attrs: TileParam, shape: tuple) -> Any:
    padded, reps = _tile_dims(attrs, shape)
    split = [v for pair in zip(reps, padded) for v in pair]  # (r0, s0, r1, s1, ...)
    return xp.sum(g.reshape(split), axis=tuple(range(0, len(split), 2))).reshape(shape)


class RepeatParam(Params):
    repeats = Field(int, REQUIRED, "The number of times for repeating the tensor a. Negative "
                                   "reps is not supported.", low=0)
    axis = Field(int, None, "The axis along which to repeat values. The negative numbers are "
                            "interpreted counting from the backward. By default, use the "
                            "flattened input array, and return a flat output array.")


def _repeat_shape(attrs: RepeatParam, shape: Sequence[int]) -> tuple:
    if attrs.axis is None:
        return (int(np.prod(shape)) * attrs.repeats,)
    axis = norm_axis("repeat", attrs.axis, len(shape))
    return tuple(d * attrs.repeats if i == axis else d for i, d in enumerate(shape))


def _repeat_back(xp: Any, g: Any, attrs: RepeatParam, shape: tuple) -> Any:
    if attrs.axis is None:
        return g.reshape(-1, attrs.repeats).sum(axis=1).reshape(shape)
    axis = norm_axis("repeat", attrs.axis, len(shape))
    return g.reshape(shape[:axis + 1] + (attrs.repeats,) + shape[axis + 1:]).sum(axis=axis + 1)


def _repeat_params(draw, shape):
    params = {"repeats": S.integer(draw, 1, 3, "repeats")}
    if not S.boolean(draw, "flatten"):
        params["axis"] = S.axis(draw, len(shape))
    return params


class ReverseParam(Params):
    axis = Field(Shape, REQUIRED, "The axis which to reverse elements.")


def _flipped(xp: Any, x: Any, attrs: ReverseParam, shape: tuple) -> Any:
    return xp.flip(x, axis=tuple(norm_axis("reverse", a, x.ndim) for a in attrs.axis))


def _reverse_shape(attrs: ReverseParam, shape: tuple) -> tuple:
    for a in attrs.axis:
        norm_axis("reverse", a, len(shape))
    return shape


OPS += [
    *layout_op("tile", TileParam,
               out_shape=lambda p, s: tuple(a * b for a, b in zip(*_tile_dims(p, s))),
               forward=lambda xp, x, p, shape: xp.tile(x, p.reps), backward=_tile_back,
               sample=lambda draw, shape: {"reps": tuple(
                   S.integer(draw, 1, 3, "rep") for _ in range(S.integer(draw, 0, 4, "len")))},
               reference=lambda p, x: np.tile(x, p.reps),
               desc="Repeat the whole array ``reps`` times along each axis (numpy's ``tile``: "
                    "the shorter of shape and reps is padded with leading 1s).  Dtype "
                    "unchanged.  Gradient: the head gradient summed over the copies."),
    *layout_op("repeat", RepeatParam, out_shape=_repeat_shape,
               forward=lambda xp, x, p, shape: xp.repeat(x, p.repeats, axis=p.axis),
               backward=_repeat_back, sample=_repeat_params,
               reference=lambda p, x: np.repeat(x, p.repeats, axis=p.axis),
               desc="Repeat each element ``repeats`` times along ``axis`` (the flattened array "
                    "when None), as numpy's ``repeat``.  Dtype unchanged.  Gradient: the head "
                    "gradient summed over each element's copies."),
    *layout_op("reverse", ReverseParam, out_shape=_reverse_shape, forward=_flipped,
               backward=_flipped, aliases=("flip",),
               sample=lambda draw, shape: {"axis": tuple(S.subset(draw, range(len(shape))))},
               reference=lambda p, x: np.flip(x, axis=p.axis),
               desc="Reverse the order of elements along the given axes (``flip``).  Negative "
                    "axes count from the end (MXNet rejects them).  Dtype unchanged.  Gradient: "
                    "the head gradient reversed the same way."),
]


# -- broadcast_to, broadcast_axis, broadcast_like, reshape_like ----------------------------------
def _stretched(xp: Any, x: Any, attrs: Params, shape: tuple) -> Any:
    return xp.broadcast_to(x, shape)


def _summed_back(xp: Any, g: Any, attrs: Params, shape: tuple) -> Any:
    return reduce_to(xp, g, shape)


def _broadcast_sample(draw):
    """A target shape and an input shape with some of its dimensions set to 1."""
    out = S.shape(draw)
    return out, tuple(1 if S.boolean(draw, "size 1") else d for d in out)


class BroadcastToParam(Params):
    shape = Field(Shape, (), "The shape of the desired array. We can set the dim to zero if "
                             "it's same as the original. E.g `A = broadcast_to(B, shape=(10, 0, "
                             "0))` has the same meaning as `A = broadcast_axis(B, axis=0, "
                             "size=10)`.")


def _broadcast_to_shape(attrs: BroadcastToParam, shape: Sequence[int]) -> tuple:
    op = "broadcast_to"
    if len(attrs.shape) != len(shape):
        raise shape_error(op, f"operand of shape {tuple(shape)} cannot be broadcast to "
                              f"{attrs.shape}: the number of dimensions must be equal")
    out = []
    for i, (d, t) in enumerate(zip(shape, attrs.shape)):
        t = t or d
        if d not in (1, t):
            raise shape_error(op, f"operand of shape {tuple(shape)} cannot be broadcast to "
                                  f"{attrs.shape} (dimension {i}: {d} vs {t})")
        out.append(t)
    return tuple(out)


def _broadcast_to_case(draw):
    out, shape = _broadcast_sample(draw)
    target = tuple(0 if d == t and S.boolean(draw, "keep as 0") else t for d, t in zip(shape, out))
    return Case([S.floats(draw, shape)], {"shape": target})


class BroadcastAxesParam(Params):
    axis = Field(Shape, (), "The axes to perform the broadcasting.")
    size = Field(Shape, (), "Target sizes of the broadcasting axes.")


def _broadcast_axis_shape(attrs: BroadcastAxesParam, shape: Sequence[int]) -> tuple:
    op = "broadcast_axis"
    if len(attrs.axis) != len(attrs.size):
        raise shape_error(op, f"axis={attrs.axis} and size={attrs.size} must have equal lengths")
    out = list(shape)
    for a, n in zip(attrs.axis, attrs.size):
        a = norm_axis(op, a, len(shape))
        if shape[a] != 1:
            raise shape_error(op, f"axis {a} of input {tuple(shape)} has size {shape[a]}; only "
                                  f"size-1 axes can be broadcast")
        out[a] = n
    return tuple(out)


def _broadcast_axis_case(draw):
    out, shape = _broadcast_sample(draw)
    ones = [i for i, d in enumerate(shape) if d == 1]
    return Case([S.floats(draw, shape)],
                {"axis": tuple(ones), "size": tuple(out[i] for i in ones)})


class BroadcastLikeParam(Params):
    lhs_axes = Field(Shape, None, "Axes to perform broadcast on in the first input array")
    rhs_axes = Field(Shape, None, "Axes to copy from the second input array")


def _broadcast_like_shape(attrs: BroadcastLikeParam, lhs: Sequence[int],
                          rhs: Sequence[int]) -> tuple:
    op = "broadcast_like"
    # as MXNet: without both axis lists the whole of rhs is the target
    if attrs.lhs_axes is None or attrs.rhs_axes is None:
        if len(lhs) != len(rhs):
            raise shape_error(op, f"lhs {tuple(lhs)} and rhs {tuple(rhs)} must have the same "
                                  f"number of dimensions")
        out = broadcast_shape(op, lhs, rhs)
        if out != tuple(rhs):
            raise shape_error(op, f"lhs {tuple(lhs)} cannot be broadcast like rhs {tuple(rhs)}")
        return out
    la, ra = attrs.lhs_axes, attrs.rhs_axes
    if len(la) != len(ra):
        raise shape_error(op, f"lhs_axes={la} and rhs_axes={ra} must have equal lengths")
    if not la:
        raise shape_error(op, "lhs_axes and rhs_axes are empty, which MXNet does not allow; "
                              "leave both out to broadcast like the whole of rhs")
    out = list(lhs)
    for a, b in zip(la, ra):
        a = norm_axis(op, a, len(lhs), "lhs_axes entry")
        b = norm_axis(op, b, len(rhs), "rhs_axes entry")
        if lhs[a] != 1 and lhs[a] != rhs[b]:
            raise shape_error(op, f"axis {a} of lhs {tuple(lhs)} has size {lhs[a]}; it can only "
                                  f"be broadcast from size 1 (to {rhs[b]})")
        out[a] = rhs[b]
    return tuple(out)


def _two_shapes(rule: Fn) -> Fn:
    """Shape inference for (lhs, rhs) -> rule(attrs, lhs, rhs), forward only."""
    def infer(attrs, ins, outs):
        if known(ins[0]) and known(ins[1]):
            return ins, [rule(attrs, ins[0], ins[1])]
        return ins, outs

    return infer


def _broadcast_like_sample(draw):
    if S.boolean(draw, "axes given"):
        lhs = list(S.shape(draw))
        rhs = S.shape(draw)
        la = S.subset(draw, range(len(lhs)), "lhs_axes")[:len(rhs)]
        ra = S.subset(draw, range(len(rhs)), "rhs_axes")[:len(la)]
        la = la[:len(ra)]
        for a in la:
            lhs[a] = 1
        if la:  # empty axis lists are refused
            return Case([S.floats(draw, lhs), S.floats(draw, rhs)],
                        {"lhs_axes": tuple(la), "rhs_axes": tuple(ra)})
    out, lhs = _broadcast_sample(draw)
    return Case([S.floats(draw, lhs), S.floats(draw, out)])


def _np_broadcast_like(p, lhs, rhs):
    if p.lhs_axes is None or p.rhs_axes is None:
        return np.broadcast_to(lhs, rhs.shape)
    target = list(lhs.shape)
    for a, b in zip(p.lhs_axes, p.rhs_axes):
        target[a] = rhs.shape[b]
    return np.broadcast_to(lhs, target)


def _like_kernels(rearrange: Fn) -> tuple[Fn, Fn]:
    """Forward and backward of an op that rearranges lhs into a shape taken from rhs:
    ``rearrange(xp, value, attrs, shape)`` serves both ways; rhs's gradient is zero."""
    def compute(attrs, ctx, inputs, req, outputs):
        put(outputs[0], req[0], rearrange(ctx.xp, inputs[0], attrs, outputs[0].shape))

    def back(attrs, ctx, inputs, req, outputs):
        put(outputs[0], req[0], rearrange(ctx.xp, inputs[0], attrs, outputs[0].shape))
        put(outputs[1], req[1], 0)

    return compute, back


def _broadcast_or_sum(xp: Any, value: Any, attrs: Params, shape: tuple) -> Any:
    """Stretch to a larger shape (forward) or sum back to a smaller one (backward)."""
    return xp.broadcast_to(value, shape) if value.size <= int(np.prod(shape)) else \
        reduce_to(xp, value, shape)


_broadcast_like, _broadcast_like_back = _like_kernels(_broadcast_or_sum)
_reshape_like, _reshape_like_back = _like_kernels(_reshaped)


class ReshapeLikeParam(Params):
    lhs_begin = Field(int, None, "Defaults to 0. The beginning index along which the lhs "
                                 "dimensions are to be reshaped. Supports negative indices.")
    lhs_end = Field(int, None, "Defaults to None. The ending index along which the lhs "
                               "dimensions are to be used for reshaping. Supports negative "
                               "indices.")
    rhs_begin = Field(int, None, "Defaults to 0. The beginning index along which the rhs "
                                 "dimensions are to be used for reshaping. Supports negative "
                                 "indices.")
    rhs_end = Field(int, None, "Defaults to None. The ending index along which the rhs "
                               "dimensions are to be used for reshaping. Supports negative "
                               "indices.")


def _reshape_like_shape(attrs: ReshapeLikeParam, lhs: Sequence[int], rhs: Sequence[int]) -> tuple:
    lb, le = slice(attrs.lhs_begin, attrs.lhs_end).indices(len(lhs))[:2]
    rb, re = slice(attrs.rhs_begin, attrs.rhs_end).indices(len(rhs))[:2]
    out = tuple(lhs[:lb]) + tuple(rhs[rb:re]) + tuple(lhs[le:])
    if int(np.prod(out)) != int(np.prod(lhs)):
        raise shape_error("reshape_like", f"cannot reshape lhs {tuple(lhs)} to {out} (taken "
                                          f"from rhs {tuple(rhs)}): the sizes differ")
    return out


def _reshape_like_sample(draw):
    lhs = S.shape(draw, max_dims=4)
    rhs = list(lhs[::-1]) if S.boolean(draw, "reversed") else [int(np.prod(lhs))]
    return Case([S.floats(draw, lhs), S.floats(draw, rhs)])


OPS += [
    *layout_op("broadcast_to", BroadcastToParam, out_shape=_broadcast_to_shape,
               forward=_stretched, backward=_summed_back, case=_broadcast_to_case,
               reference=lambda p, x: np.broadcast_to(
                   x, tuple(t or d for t, d in zip(p.shape, x.shape))),
               desc="Broadcast to ``shape`` (same number of dimensions; a 0 keeps the input's "
                    "dimension; only size-1 dimensions stretch).  Dtype unchanged.  Gradient: "
                    "the head gradient summed over the stretched axes."),
    *layout_op("broadcast_axis", BroadcastAxesParam, out_shape=_broadcast_axis_shape,
               forward=_stretched, backward=_summed_back, case=_broadcast_axis_case,
               aliases=("broadcast_axes",),
               reference=lambda p, x: np.broadcast_to(x, _broadcast_axis_shape(p, x.shape)),
               desc="Broadcast size-1 axes ``axis`` to sizes ``size``.  Dtype unchanged.  "
                    "Gradient: the head gradient summed over those axes."),
    Op("broadcast_like", params=BroadcastLikeParam, num_inputs=2, input_names=["lhs", "rhs"],
       infer_shape=_two_shapes(_broadcast_like_shape), infer_type=first_input_type(1),
       compute={XP: _broadcast_like},
       gradient=Gradient("_backward_broadcast_like", ("out_grad",)),
       domain=Domain(_broadcast_like_sample, differentiable=(0,), reference=with_attrs(
           BroadcastLikeParam, "broadcast_like", _np_broadcast_like)),
       description="Broadcast ``lhs`` to the shape of ``rhs`` (or, with lhs_axes/rhs_axes, "
                   "axis lhs_axes[i] to the size of rhs's axis rhs_axes[i]).  Only rhs's shape "
                   "is read.  Dtype = lhs's.  Gradient: lhs gets the head gradient summed over "
                   "the stretched axes, rhs gets zero."),
    backward_op("broadcast_like", BroadcastLikeParam, 1, 2, _broadcast_like_back),
    Op("reshape_like", params=ReshapeLikeParam, num_inputs=2, input_names=["lhs", "rhs"],
       infer_shape=_two_shapes(_reshape_like_shape), infer_type=first_input_type(1),
       compute={XP: _reshape_like}, gradient=Gradient("_backward_reshape_like", ("out_grad",)),
       domain=Domain(_reshape_like_sample, differentiable=(0,), reference=with_attrs(
           ReshapeLikeParam, "reshape_like",
           lambda p, lhs, rhs: lhs.reshape(_reshape_like_shape(p, lhs.shape, rhs.shape)))),
       description="Reshape ``lhs`` to ``lhs.shape[:lhs_begin] + rhs.shape[rhs_begin:rhs_end] "
                   "+ lhs.shape[lhs_end:]`` (by default: rhs's shape); the sizes must agree.  "
                   "Only rhs's shape is read.  Dtype = lhs's.  Gradient: lhs gets the head "
                   "gradient reshaped back, rhs gets zero."),
    backward_op("reshape_like", ReshapeLikeParam, 1, 2, _reshape_like_back),
]


# -- shape queries -------------------------------------------------------------------------------
def _query(name: str, value: Fn, out_shape: Fn, desc: str) -> Op:
    """An op whose int64 output describes the input's shape (its values are not read)."""
    def compute(attrs, ctx, inputs, req, outputs):
        put(outputs[0], req[0], ctx.xp.asarray(value(inputs[0].shape), dtype=np.int64))

    return Op(name, input_names=["data"], description=desc,
              infer_shape=lambda attrs, ins, outs: (ins, [out_shape(ins[0])])
              if ins[0] is not None else (ins, outs),
              infer_type=lambda attrs, ins, outs: (ins, [np.dtype(np.int64)]),
              compute={XP: compute}, gradient=ZeroGradient(),
              domain=Domain(lambda draw: Case([S.floats(draw, S.shape(draw))]),
                            reference=lambda raw, x: np.asarray(value(x.shape), dtype=np.int64)))


OPS += [
    _query("shape_array", lambda shape: list(shape), lambda shape: (len(shape),),
           "The input's shape as a 1-D int64 array.  Gradient zero."),
    _query("size_array", lambda shape: [int(np.prod(shape))], lambda shape: (1,),
           "The input's number of elements as an int64 array of shape (1,).  Gradient zero."),
]
