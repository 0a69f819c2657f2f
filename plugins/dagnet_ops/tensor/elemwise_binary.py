"""Element-wise binary operators, in MXNet's two flavours:

- ``elemwise_add`` & co. (and the symbol operators' ``_maximum``, ``_power``,
  ``_equal`` ...): both operands have one shape;
- ``broadcast_add`` & co.: numpy broadcasting (shapes aligned on the right, size-1
  dimensions stretched); the gradient is summed back to each operand's shape.

Each function is defined once in a :class:`Binary` row (forward, partial
derivatives, reference, sampling) and registered in both flavours.  Both
operands must share a dtype, which the output keeps: comparisons and logical
ops write 1/0 in that dtype (MXNet 1.x has no bool results), integer division
truncates toward zero, ``mod`` takes the divisor's sign (Python's) and gives
0 for a zero divisor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

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
    OpReqType,
    Params,
    ZeroGradient,
    merge_shape,
)

from .._threads import each, pieces
from . import _sampling as S
from . import _second_order as second_order
from ._common import (
    backward_op,
    broadcast_shape,
    c_divide,
    c_power,
    put,
    python_mod,
    python_mod_reference,
    reduce_to,
    same_shape,
    shape_error,
    shape_str,
)

Fn = Callable[..., Any]
Values = Callable[[Any, tuple, tuple, tuple], tuple]  # (draw, lhs_shape, rhs_shape, out_shape)


def _floats(lo: float = -2.0, hi: float = 2.0, rhs_away: tuple = ()) -> Values:
    def values(draw, ls, rs, os):
        return S.floats(draw, ls, lo, hi), S.floats(draw, rs, lo, hi, away=rhs_away, margin=0.2)

    return values


def _apart(draw, ls, rs, os):
    """Two grids offset by half a step: no lhs element equals an rhs one (max/min kinks)."""
    return S.grid(draw, ls, step=0.01, offset=0.005, unique=False), S.grid(draw, rs, unique=False)


def _integral(lo: int, hi: int) -> Values:
    """Small integers as floats, so equal operands (and zeros) actually occur."""
    def values(draw, ls, rs, os):
        return S.integers(draw, ls, lo, hi), S.integers(draw, rs, lo, hi)

    return values


def _power_values(draw, ls, rs, os):
    """A positive base: real powers and logarithms for every exponent."""
    return S.floats(draw, ls, 0.2, 2.0), S.floats(draw, rs)


def _mod_values(draw, ls, rs, os):
    """lhs = rhs * (k + f) with f in [0.1, 0.9]: the quotient is never near an integer,
    where mod jumps.  Needs lhs at the full broadcast shape (see Binary.lhs_full)."""
    b = S.floats(draw, rs, 0.5, 2.0) * np.where(S.integers(draw, rs, 0, 1) > 0, 1.0, -1.0)
    q = S.integers(draw, os, -2, 2) + S.floats(draw, os, 0.1, 0.9)
    return np.broadcast_to(b, os) * q, b


@dataclass
class Binary:
    """One element-wise binary function.

    ``d_lhs``/``d_rhs``: partial derivatives ``(xp, a, b) -> array or number``;
    ``head_only``: they are constants, so the backward needs only the head gradient;
    ``zero_grad``: piecewise constant (comparisons);
    ``ufunc``: for floating inputs and output of one dtype, the kernel calls
    ``xp.<ufunc>(lhs, rhs, out=out)`` instead of computing a temporary and
    copying it: half the memory traffic on large arrays.
    ``second``: the gradient rule of the backward op (a ``ComposedGradient`` function,
    see ``_second_order``), for gradients of gradients; None: it has none.
    """

    forward: Fn
    reference: Fn
    desc: str
    d_lhs: Fn | None = None
    d_rhs: Fn | None = None
    head_only: bool = False
    zero_grad: bool = False
    values: Values = _floats()
    lhs_full: bool = False  # the sampler needs lhs at the broadcast (output) shape
    ufunc: str | None = None  # xp ufunc that writes float results straight into the output
    second: Fn | None = None  # the backward op's composed gradient rule
    infer_type: Fn | None = None  # None: both operands and the output share one dtype


def _cmp(fn: Fn, word: str) -> Binary:
    return Binary(fn, lambda a, b: fn(np, a, b), zero_grad=True, values=_integral(-2, 2),
                  desc=f"1 where lhs {word} rhs, else 0, in the operands' dtype.  Gradient zero.")


def _logical(fn: Fn, word: str) -> Binary:
    return Binary(lambda xp, a, b: fn(xp, a != 0, b != 0), lambda a, b: fn(np, a != 0, b != 0),
                  zero_grad=True, values=_integral(-1, 1),
                  desc=f"Logical {word}: 1 where (lhs != 0) {word} (rhs != 0), else 0, in the "
                       "operands' dtype.  Gradient zero.")


FUNCTIONS: dict[str, Binary] = {
    "add": Binary(lambda xp, a, b: a + b, np.add, head_only=True, ufunc="add",
                  d_lhs=lambda xp, a, b: 1, d_rhs=lambda xp, a, b: 1, second=second_order.add,
                  desc="Sum: ``out = lhs + rhs``.  Gradients ``dy`` and ``dy``."),
    "sub": Binary(lambda xp, a, b: a - b, np.subtract, head_only=True, ufunc="subtract",
                  d_lhs=lambda xp, a, b: 1, d_rhs=lambda xp, a, b: -1, second=second_order.sub,
                  desc="Difference: ``out = lhs - rhs``.  Gradients ``dy`` and ``-dy``."),
    "mul": Binary(lambda xp, a, b: a * b, np.multiply, ufunc="multiply",
                  d_lhs=lambda xp, a, b: b, d_rhs=lambda xp, a, b: a, second=second_order.mul,
                  desc="Product: ``out = lhs * rhs``.  Gradients ``rhs dy`` and ``lhs dy``."),
    "div": Binary(c_divide, np.divide, values=_floats(rhs_away=(0.0,)), ufunc="divide",
                  d_lhs=lambda xp, a, b: 1 / b, d_rhs=lambda xp, a, b: -a / (b * b),
                  second=second_order.div,
                  desc="Quotient: ``out = lhs / rhs`` (integers truncate toward zero).  Gradients "
                       "``dy / rhs`` and ``-lhs dy / rhs^2``."),
    "mod": Binary(python_mod, python_mod_reference, values=_mod_values, lhs_full=True,
                  d_lhs=lambda xp, a, b: (b != 0) * (a.dtype.kind == "f"),
                  d_rhs=lambda xp, a, b: (-xp.floor(a / xp.where(b == 0, 1, b)) * (b != 0)
                                          * (a.dtype.kind == "f")),
                  desc="Modulo with the divisor's sign (Python's ``%``): ``out = lhs - floor(lhs / "
                       "rhs) rhs``; 0 where rhs == 0.  Gradients ``dy`` and "
                       "``-floor(lhs / rhs) dy`` (undefined where the quotient is an integer; 0 "
                       "where rhs == 0, where the output is constant; 0 for integer operands, "
                       "as MXNet's)."),
    "power": Binary(c_power, lambda a, b: c_power(np, a, b), values=_power_values,
                    d_lhs=lambda xp, a, b: b * xp.power(a, b - 1),
                    d_rhs=lambda xp, a, b: xp.power(a, b) * xp.log(a), second=second_order.power,
                    desc="Power: ``out = lhs ^ rhs`` (NaN for a negative base and a fractional "
                         "exponent; integers with a negative exponent as in C, through double).  "
                         "Gradients ``rhs lhs^(rhs-1) dy`` and "
                         "``lhs^rhs ln(lhs) dy``."),
    "maximum": Binary(lambda xp, a, b: xp.maximum(a, b), np.maximum, values=_apart, ufunc="maximum",
                      d_lhs=lambda xp, a, b: a >= b, d_rhs=lambda xp, a, b: a < b,
                      second=second_order.maximum,
                      desc="Element-wise maximum.  The gradient goes to lhs where lhs >= rhs (ties "
                           "included, as MXNet), to rhs elsewhere."),
    "minimum": Binary(lambda xp, a, b: xp.minimum(a, b), np.minimum, values=_apart, ufunc="minimum",
                      d_lhs=lambda xp, a, b: a <= b, d_rhs=lambda xp, a, b: a > b,
                      second=second_order.minimum,
                      desc="Element-wise minimum.  The gradient goes to lhs where lhs <= rhs (ties "
                           "included, as MXNet), to rhs elsewhere."),
    "hypot": Binary(lambda xp, a, b: xp.hypot(a, b), np.hypot, values=_floats(rhs_away=(0.0,)),
                    d_lhs=lambda xp, a, b: a / xp.hypot(a, b),
                    d_rhs=lambda xp, a, b: b / xp.hypot(a, b),
                    desc="Hypotenuse: ``out = sqrt(lhs^2 + rhs^2)``.  Gradients ``lhs dy / out`` "
                         "and ``rhs dy / out``."),
    "equal": _cmp(lambda xp, a, b: a == b, "=="),
    "not_equal": _cmp(lambda xp, a, b: a != b, "!="),
    "greater": _cmp(lambda xp, a, b: a > b, ">"),
    "greater_equal": _cmp(lambda xp, a, b: a >= b, ">="),
    "lesser": _cmp(lambda xp, a, b: a < b, "<"),
    "lesser_equal": _cmp(lambda xp, a, b: a <= b, "<="),
    "logical_and": _logical(lambda xp, a, b: a & b, "and"),
    "logical_or": _logical(lambda xp, a, b: a | b, "or"),
    "logical_xor": _logical(lambda xp, a, b: a ^ b, "xor"),
}


class BroadcastParam(NoParams):
    """The broadcast_* operators take no parameters, and, as MXNet's (registered without a
    parameter parser), ignore keyword arguments instead of refusing them:
    ``broadcast_maximum(a, b, axis=1)`` is ``broadcast_maximum(a, b)``."""

    @classmethod
    def parse(cls, op_name, kwargs):
        return cls()


def _pass_on(xp: Any, g: Any, req: OpReqType, out: Any) -> None:
    """The gradient through a derivative of one (add's, sub's lhs): the head gradient as it
    is, one copy into ``out`` (over the kernel threads when large) instead of a product and
    a copy."""
    if req is OpReqType.ADD or g.shape != out.shape or g.dtype != out.dtype:
        put(out, req, reduce_to(xp, g, out.shape))
    elif g is not out:
        parts, threads = pieces(xp, g, out)
        each(lambda p: xp.copyto(p[1], p[0]), parts, threads)


def binary_ops(name: str, fn: Binary, *, broadcast: bool, aliases: tuple[str, ...]
               ) -> list[Op]:
    """The forward record and its backward for one flavour of ``fn``."""

    ufunc, writes = fn.ufunc, (OpReqType.WRITE, OpReqType.INPLACE)

    def compute(attrs, ctx, inputs, req, outputs):
        out, lhs, rhs, mode = outputs[0], inputs[0], inputs[1], req[0]
        dtype = out.dtype
        # numpy's builtin dtypes are singletons: ``is`` settles the common case at once
        if (ufunc is not None and mode in writes and dtype.kind == "f"
                and (lhs.dtype is dtype or lhs.dtype == dtype)
                and (rhs.dtype is dtype or rhs.dtype == dtype)):
            function = getattr(ctx.xp, ufunc)
            parts, threads = pieces(ctx.xp, lhs, rhs, out)  # large arrays over kernel threads
            each(lambda p: function(p[0], p[1], out=p[2]), parts, threads)
        else:
            put(out, mode, fn.forward(ctx.xp, lhs, rhs))

    def infer_broadcast(attrs, ins, outs):
        lhs, rhs = ins
        if lhs is None or rhs is None:
            return ins, outs
        out = broadcast_shape(name, lhs, rhs)
        try:
            return ins, [merge_shape(out, outs[0], "")]
        except Exception:
            raise shape_error(name, f"lhs {tuple(lhs)} and rhs {tuple(rhs)} broadcast to {out}, "
                                    f"but the output has shape {shape_str(outs[0])}") from None

    def sample(draw):
        out = S.shape(draw)
        if broadcast:
            ls = out if fn.lhs_full or S.boolean(draw, "lhs full") else S.broadcastable(draw, out)
            rs = S.broadcastable(draw, out)
            out = np.broadcast_shapes(ls, rs)
        else:
            ls = rs = out
        return Case(list(fn.values(draw, ls, rs, out)))

    def reference(raw, a, b):
        return fn.reference(a, b)

    def backward(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        g = inputs[0]
        a, b = (None, None) if fn.head_only else (inputs[1], inputs[2])
        for i, partial in enumerate((fn.d_lhs, fn.d_rhs)):
            if req[i] is not OpReqType.NULL:
                d = partial(xp, a, b)
                if isinstance(d, int) and d == 1:
                    _pass_on(xp, g, req[i], outputs[i])
                else:
                    put(outputs[i], req[i], reduce_to(xp, g * d, outputs[i].shape))

    flavour = ("Broadcasting (numpy rules; each gradient is summed back to its operand's shape)."
               if broadcast else "Both operands must have the same shape (see broadcast_* "
               "otherwise).")
    uses = ("out_grad",) if fn.head_only else ("out_grad", "in_data")
    forward = Op(
        name, description=f"{fn.desc}\n\n{flavour}  Output dtype = operand dtype.",
        num_inputs=2, input_names=["lhs", "rhs"], params=BroadcastParam if broadcast else NoParams,
        infer_shape=infer_broadcast if broadcast else same_shape(name, ["lhs", "rhs"]),
        infer_type=fn.infer_type, compute={XP: compute}, inplace=[(0, 0), (1, 0)],
        aliases=aliases,
        gradient=ZeroGradient() if fn.zero_grad else Gradient(f"_backward_{name}", uses),
        domain=Domain(sample, reference=reference))
    if fn.zero_grad:
        return [forward]
    backward_record = backward_op(name, forward.params, len(uses), 2, backward)
    if fn.second is not None:
        backward_record.gradient = ComposedGradient(fn.second, ("out_grad", "in_data"))
    return [forward, backward_record]


#: (function, elemwise name and aliases, broadcast name and aliases) -- MXNet's spellings
_NAMES = [
    ("add", "elemwise_add", ("_plus", "_add", "_Plus"), "broadcast_add", ("broadcast_plus",)),
    ("sub", "elemwise_sub", ("_minus", "_sub", "_Minus"), "broadcast_sub", ("broadcast_minus",)),
    ("mul", "elemwise_mul", ("_mul", "_Mul"), "broadcast_mul", ()),
    ("div", "elemwise_div", ("_div", "_Div"), "broadcast_div", ()),
    ("mod", "_mod", ("_Mod",), "broadcast_mod", ()),
    ("power", "_power", ("_Power",), "broadcast_power", ()),
    ("maximum", "_maximum", ("_Maximum",), "broadcast_maximum", ()),
    ("minimum", "_minimum", ("_Minimum",), "broadcast_minimum", ()),
    ("hypot", "_hypot", ("_Hypot",), "broadcast_hypot", ()),
    ("equal", "_equal", ("_Equal",), "broadcast_equal", ()),
    ("not_equal", "_not_equal", ("_Not_Equal",), "broadcast_not_equal", ()),
    ("greater", "_greater", ("_Greater",), "broadcast_greater", ()),
    ("greater_equal", "_greater_equal", ("_Greater_Equal",), "broadcast_greater_equal", ()),
    ("lesser", "_lesser", ("_Lesser",), "broadcast_lesser", ()),
    ("lesser_equal", "_lesser_equal", ("_Lesser_Equal",), "broadcast_lesser_equal", ()),
    ("logical_and", "_logical_and", ("_Logical_And",), "broadcast_logical_and", ()),
    ("logical_or", "_logical_or", ("_Logical_Or",), "broadcast_logical_or", ()),
    ("logical_xor", "_logical_xor", ("_Logical_Xor",), "broadcast_logical_xor", ()),
]

OPS: list[Op] = [
    op
    for key, ename, ealiases, bname, baliases in _NAMES
    for op in (*binary_ops(ename, FUNCTIONS[key], broadcast=False, aliases=ealiases),
               *binary_ops(bname, FUNCTIONS[key], broadcast=True, aliases=baliases))
]


# -- add_n: the n-ary sum ---------------------------------------------------------------------
class AddNParam(Params):
    num_args = Field(int, REQUIRED, "Number of inputs to be summed.", low=1)


def _add_n(attrs, ctx, inputs, req, outputs):
    total = inputs[0].copy()
    for x in inputs[1:]:
        total += x
    put(outputs[0], req[0], total)


def _add_n_back(attrs, ctx, inputs, req, outputs):
    for out, r in zip(outputs, req):
        put(out, r, inputs[0])


_add_n_backward = backward_op("add_n", AddNParam, 1, lambda attrs: attrs.num_args, _add_n_back)
_add_n_backward.gradient = ComposedGradient(second_order.add_n, ("out_grad", "in_data"))


def _add_n_sample(draw):
    shape = S.shape(draw)
    n = S.integer(draw, 1, 4, "num_args")
    return Case([S.floats(draw, shape) for _ in range(n)], {"num_args": n})


OPS += [
    Op("add_n", params=AddNParam, num_inputs=lambda attrs: attrs.num_args,
       input_names=lambda attrs: [f"arg{i}" for i in range(attrs.num_args)],
       key_var_num_args="num_args", aliases=("ElementWiseSum",),
       infer_shape=lambda attrs, ins, outs: same_shape(
           "add_n", [f"arg{i}" for i in range(len(ins))])(attrs, ins, outs),
       compute={XP: _add_n}, gradient=Gradient("_backward_add_n", ("out_grad",)),
       inplace=[(0, 0)],
       domain=Domain(_add_n_sample, reference=lambda raw, *xs: np.sum(xs, axis=0)),
       description="Sum of ``num_args`` arrays of one shape and dtype, element-wise "
                   "(``ElementWiseSum``; what gradient aggregation uses).  Gradient: ``dy`` to "
                   "every input."),
    _add_n_backward,
]
