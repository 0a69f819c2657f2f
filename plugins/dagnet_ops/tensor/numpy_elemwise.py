"""Element-wise operators that only MXNet's NumPy interface has (``_npi_*``, MXNet's
``np_elemwise_broadcast_op_extended.cc``, ``np_elemwise_unary_op_basic.cc``):

- broadcasting binary functions: ``_npi_arctan2``, ``_npi_copysign``, ``_npi_ldexp``,
  and the integer ones ``_npi_lcm``, ``_npi_bitwise_and``, ``_npi_bitwise_or``,
  ``_npi_bitwise_xor`` (rows of :mod:`.elemwise_binary`'s table: one definition gives
  the forward, the gradient and the conformance domain);
- unary: ``_npi_bitwise_not``, ``_npi_around`` (NumPy's half-to-even rounding to
  ``decimals``), ``_npi_nan_to_num``, and the tests ``_npi_isnan``, ``_npi_isinf``,
  ``_npi_isposinf``, ``_npi_isneginf``, ``_npi_isfinite`` (bool outputs).

Dtypes: the operands share one dtype, which the output keeps (the tests give ``bool``).
Integer operands of the float functions are computed in floating point and truncated
back, as MXNet does (``ldexp`` of int32 ``-6`` and ``-6`` is ``0``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import DTypeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, elemwise_type

from . import _sampling as S
from ._common import backward_op, fixed_out_type, put, same_shape, with_attrs
from .elemwise_binary import Binary, binary_ops
from .elemwise_unary import special_values_sample, unary

_LN2 = float(np.log(2.0))


def _integer_type(name: str, allow_bool: bool) -> Any:
    """One dtype for operands and output, which must be an integer (or bool) one."""
    kinds = "iub" if allow_bool else "iu"

    def infer(attrs, ins, outs):
        ins, outs = elemwise_type(attrs, ins, outs)
        dtype = next((t for t in [*ins, *outs] if t is not None), None)
        if dtype is not None and np.dtype(dtype).kind not in kinds:
            what = "integer or bool" if allow_bool else "integer"
            raise DTypeError(f"operator {name!r} takes {what} operands, got "
                             f"{np.dtype(dtype).name}; cast them first (astype)")
        return ins, outs

    return infer


def _away_from_zero(draw, ls, rs, os):
    """Both operands away from 0: copysign's kink (lhs) and arctan2's pole."""
    return (S.floats(draw, ls, away=(0.0,), margin=0.2),
            S.floats(draw, rs, away=(0.0,), margin=0.2))


def _small_integers(lo: int, hi: int) -> Any:
    def values(draw, ls, rs, os):
        return (S.integers(draw, ls, lo, hi).astype(np.int64),
                S.integers(draw, rs, lo, hi).astype(np.int64))

    return values


def _float_of(fn: Any) -> Any:
    """``fn`` computed in float64 for integer operands (cast back by the kernel's write)."""
    def forward(xp, a, b):
        if a.dtype.kind in "iub":
            a, b = a.astype(np.float64), b.astype(np.float64)
        return fn(xp, a, b)

    return forward


def _ldexp(xp: Any, a: Any, b: Any) -> Any:
    return a * xp.exp2(b)


def _integer_row(fn: Any, reference: Any, desc: str, allow_bool: bool, name: str) -> Binary:
    return Binary(fn, reference, zero_grad=True, values=_small_integers(-12, 12),
                  infer_type=_integer_type(name, allow_bool),
                  desc=f"{desc}  Integer operands only{' (or bool)' if allow_bool else ''}.  "
                       "Not differentiable (zero gradient).")


FUNCTIONS: dict[str, Binary] = {
    "_npi_arctan2": Binary(
        _float_of(lambda xp, a, b: xp.arctan2(a, b)), np.arctan2, values=_away_from_zero,
        d_lhs=lambda xp, a, b: b / (a * a + b * b), d_rhs=lambda xp, a, b: -a / (a * a + b * b),
        desc="The angle of the point (rhs, lhs): ``out = arctan2(lhs, rhs)`` in [-pi, pi].  "
             "Gradients ``rhs dy / (lhs^2 + rhs^2)`` and ``-lhs dy / (lhs^2 + rhs^2)``."),
    "_npi_copysign": Binary(
        _float_of(lambda xp, a, b: xp.copysign(a, b)), np.copysign, values=_away_from_zero,
        d_lhs=lambda xp, a, b: xp.where((a >= 0) == (b >= 0), 1.0, -1.0).astype(a.dtype),
        d_rhs=lambda xp, a, b: 0,
        desc="``lhs``'s magnitude with ``rhs``'s sign.  Gradients ``dy`` where the signs "
             "agree and ``-dy`` where they differ (lhs), zero (rhs)."),
    "_npi_ldexp": Binary(
        _float_of(_ldexp), lambda a, b: a * np.exp2(b),
        d_lhs=lambda xp, a, b: xp.exp2(b), d_rhs=lambda xp, a, b: a * xp.exp2(b) * _LN2,
        desc="``out = lhs * 2^rhs`` (the exponent may be fractional, as in MXNet).  "
             "Gradients ``2^rhs dy`` and ``lhs 2^rhs ln(2) dy``."),
    "_npi_lcm": _integer_row(lambda xp, a, b: xp.lcm(a, b), np.lcm,
                             "Least common multiple, ``|lhs rhs| / gcd(lhs, rhs)`` (0 when "
                             "either is 0).", False, "_npi_lcm"),
    "_npi_bitwise_and": _integer_row(lambda xp, a, b: a & b, np.bitwise_and,
                                     "Bit-wise and: ``out = lhs & rhs``.", True,
                                     "_npi_bitwise_and"),
    "_npi_bitwise_or": _integer_row(lambda xp, a, b: a | b, np.bitwise_or,
                                    "Bit-wise or: ``out = lhs | rhs``.", True,
                                    "_npi_bitwise_or"),
    "_npi_bitwise_xor": _integer_row(lambda xp, a, b: a ^ b, np.bitwise_xor,
                                     "Bit-wise exclusive or: ``out = lhs ^ rhs``.", True,
                                     "_npi_bitwise_xor"),
}

OPS: list[Op] = [op for name, fn in FUNCTIONS.items()
                 for op in binary_ops(name, fn, broadcast=True, aliases=())]


# -- unary ------------------------------------------------------------------------------------
def _integers_sample(draw: Any) -> Case:
    return Case([S.integers(draw, S.shape(draw), -20, 20).astype(np.int64)])


def _bool_out(attrs, ins):
    return np.dtype(np.bool_)


def _test(name: str, test: Any, what: str) -> list[Op]:
    """``_npi_<name>``: a bool array, True where ``test`` holds."""
    return unary(f"_npi_{name}", lambda xp, x: test(xp, x), zero_grad=True,
                 sample=special_values_sample, infer_type=fixed_out_type(_bool_out),
                 inplace=False,
                 desc=f"True where the element is {what}, else False (NumPy's ``{name}``).  "
                      "Gradient zero.",
                 note="Output dtype bool; integer inputs are finite.")


class AroundParam(Params):
    decimals = Field(int, 0, "Number of decimal places to round to (negative: to the left "
                             "of the decimal point).")


def _around(xp: Any, x: Any, attrs: AroundParam) -> Any:
    return xp.around(x, attrs.decimals)


class NanToNumParam(Params):
    copy = Field(bool, True, "Whether to write into a new array (True) or into the input "
                             "(False; the front end's concern).")
    nan = Field(float, 0.0, "The value NaNs become.")
    posinf = Field(float, None, "The value +inf becomes (None: the dtype's largest finite "
                                "value).", optional=True)
    neginf = Field(float, None, "The value -inf becomes (None: the dtype's most negative "
                                "finite value).", optional=True)


def _nan_to_num(xp: Any, x: Any, attrs: NanToNumParam) -> Any:
    if x.dtype.kind != "f":
        return x
    return xp.nan_to_num(x, copy=True, nan=attrs.nan, posinf=attrs.posinf, neginf=attrs.neginf)


def _nan_to_num_sample(draw: Any) -> Case:
    """Finite values and NaNs.  No infinities: the gradient check's step grows with the
    largest input (tests/numpy checks them)."""
    case = special_values_sample(draw)
    x = case.inputs[0]
    x[np.isinf(x)] = np.nan
    if S.boolean(draw, "replacements"):
        case.params.update(nan=S.number(draw, -3.0, 3.0, label="nan"),
                           posinf=S.number(draw, 5.0, 9.0, label="posinf"),
                           neginf=S.number(draw, -9.0, -5.0, label="neginf"))
    return case


def _nan_to_num_reference(p: NanToNumParam, x: np.ndarray) -> np.ndarray:
    return np.nan_to_num(x, nan=p.nan, posinf=p.posinf, neginf=p.neginf)


_NAN_TO_NUM = "_npi_nan_to_num"

OPS += [
    *unary("_npi_bitwise_not", lambda xp, x: ~x, zero_grad=True, sample=_integers_sample,
           infer_type=_integer_type("_npi_bitwise_not", True),
           desc="Bit-wise not (two's complement ``-x - 1`` for signed integers, logical not "
                "for bool).  Integer or bool input only.  Gradient zero.",
           note="Output dtype = input dtype."),
    *unary("_npi_around", _around, params=AroundParam, zero_grad=True,
           sample_params=lambda draw: {"decimals": S.integer(draw, -2, 3, "decimals")},
           reference=lambda x, p: np.around(x, p.decimals),
           desc="Round to ``decimals`` decimal places, halves to the even neighbour (NumPy's "
                "``around``: ``around(2.5) = 2``, ``around(185, -1) = 180``).  Gradient zero.",
           note="Output dtype = input dtype; integers round exactly."),
    *_test("isnan", lambda xp, x: xp.isnan(x), "NaN"),
    *_test("isinf", lambda xp, x: xp.isinf(x), "+inf or -inf"),
    *_test("isposinf", lambda xp, x: xp.isposinf(x) if x.dtype.kind == "f"
           else xp.zeros(x.shape, bool), "+inf"),
    *_test("isneginf", lambda xp, x: xp.isneginf(x) if x.dtype.kind == "f"
           else xp.zeros(x.shape, bool), "-inf"),
    *_test("isfinite", lambda xp, x: xp.isfinite(x), "finite (not NaN, not infinite)"),
    Op(_NAN_TO_NUM, params=NanToNumParam, input_names=["data"],
       infer_shape=same_shape(_NAN_TO_NUM, ["data"]),
       compute={XP: lambda attrs, ctx, inputs, req, outputs: put(
           outputs[0], req[0], _nan_to_num(ctx.xp, inputs[0], attrs))},
       gradient=Gradient(f"_backward_{_NAN_TO_NUM}", ("out_grad", "in_data")), inplace=[(0, 0)],
       domain=Domain(_nan_to_num_sample,
                     reference=with_attrs(NanToNumParam, _NAN_TO_NUM, _nan_to_num_reference)),
       description="NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (NumPy's "
                   "``nan_to_num``; the infinities become the dtype's extreme finite values "
                   "by default); integer inputs are copied.  Gradient: ``dy`` where the input "
                   "is finite, zero elsewhere."),
    backward_op(_NAN_TO_NUM, NanToNumParam, 2, 1,
                lambda attrs, ctx, inputs, req, outputs: put(
                    outputs[0], req[0], inputs[0] * ctx.xp.isfinite(inputs[1]))),
]
