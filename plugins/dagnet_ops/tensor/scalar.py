"""Operators between an array and a scalar parameter (MXNet's
``elemwise_binary_scalar_op_*.cc``): what ``NDArray + 2``, ``2 / x``, ``x ** 2``,
``x > 0`` call.  ``_r*`` ops put the scalar on the left (``_rminus_scalar``:
``scalar - x``).

Parameters ``scalar`` (default 1) and ``is_int`` (default True) as in MXNet
1.9: for an integer input with ``is_int`` the scalar is truncated to an
integer and the arithmetic stays integer (``int32 [7] + 2.5 = [9]``,
``[7] / 2.5 = [3]``); with ``is_int=False`` an integer input gives float64.
Otherwise the output keeps the input's dtype.  MXNet's legacy spellings
(``_PlusScalar`` ...) are aliases, so old symbol JSON loads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet.operator import Case, Field, Op, Params

from . import _sampling as S
from ._common import c_divide, fixed_out_type, is_int, python_mod, python_mod_reference
from .elemwise_unary import unary


class ScalarParam(Params):
    scalar = Field(float, 1.0, "Scalar input value")
    is_int = Field(bool, True, "Indicate whether scalar input is int type")


def _s(x: Any, p: ScalarParam) -> Any:
    """The scalar as the kernel uses it: truncated for integer inputs when ``is_int``."""
    return int(p.scalar) if p.is_int and x.dtype.kind in "iub" else p.scalar


def _out_type(attrs: ScalarParam, ins: list) -> Any:
    if ins[0] is None:
        return None
    return np.dtype(np.float64) if is_int(ins[0]) and not attrs.is_int else ins[0]


def _float(x: Any) -> Any:
    """Integers computed in floating point (numpy refuses negative integer powers)."""
    return x.astype(np.float64) if x.dtype.kind in "iub" else x


# -- sampling ------------------------------------------------------------------------------
def _case(x_lo=-2.0, x_hi=2.0, s_lo=-3.0, s_hi=3.0, *, x_away=(), s_away=()):
    def sample(draw):
        s = S.number(draw, s_lo, s_hi, away=s_away, margin=0.2)
        return Case([S.floats(draw, S.shape(draw), x_lo, x_hi, away=x_away, margin=0.1)],
                    {"scalar": s})

    return sample


def _signed(draw, lo, hi, label):
    return S.number(draw, lo, hi, label=label) * (1 if S.boolean(draw, label + " sign") else -1)


def _mod_case(draw):
    """x = s (k + f), f in [0.1, 0.9]: x / s never near an integer, where mod jumps."""
    s = _signed(draw, 0.5, 2.0, "scalar")
    shape = S.shape(draw)
    q = S.integers(draw, shape, -2, 2) + S.floats(draw, shape, 0.1, 0.9)
    return Case([s * q], {"scalar": s})


def _rmod_case(draw):
    """x = s / q with |q| in (k + [0.1, 0.9]): s / x never near an integer."""
    s = _signed(draw, 0.5, 2.0, "scalar")
    shape = S.shape(draw)
    q = (S.integers(draw, shape, 0, 2) + S.floats(draw, shape, 0.1, 0.9)) * \
        np.where(S.integers(draw, shape, 0, 1) > 0, 1.0, -1.0)
    return Case([s / q], {"scalar": s})


def _apart_case(draw):
    """x on a grid offset by half a step from the scalar's grid: never tied (max/min kinks)."""
    s = S.integer(draw, -150, 150, label="scalar / 0.01") * 0.01
    return Case([S.grid(draw, S.shape(draw), step=0.01, offset=0.005, unique=False)], {"scalar": s})


def _integral_case(lo, hi):
    def sample(draw):
        return Case([S.integers(draw, S.shape(draw), lo, hi)],
                    {"scalar": float(S.integer(draw, lo, hi, label="scalar"))})

    return sample


_NOTE = ("Output dtype = input dtype (float64 for an integer input with is_int=False); integer "
         "inputs with is_int use the scalar truncated to an integer.")


def scalar_op(name: str, forward, *, desc: str, legacy: str, **kwargs) -> list[Op]:
    return unary(name, forward, params=ScalarParam, desc=desc, aliases=(legacy,), note=_NOTE,
                 infer_type=fixed_out_type(_out_type), **kwargs)


def _cmp(name: str, fn, word: str, legacy: str) -> list[Op]:
    return scalar_op(name, lambda xp, x, p: fn(x, _s(x, p)), legacy=legacy, zero_grad=True,
                     reference=lambda x, p: fn(x, p.scalar), sample=_integral_case(-2, 2),
                     desc=f"1 where x {word} scalar, else 0, in the output dtype.  Gradient zero.")


def _logical(name: str, fn, word: str, legacy: str) -> list[Op]:
    return scalar_op(name, lambda xp, x, p: fn(x != 0, _s(x, p) != 0), legacy=legacy,
                     zero_grad=True, reference=lambda x, p: fn(x != 0, p.scalar != 0),
                     sample=_integral_case(-1, 1),
                     desc=f"Logical {word}: 1 where (x != 0) {word} (scalar != 0), else 0.  "
                          "Gradient zero.")


OPS: list[Op] = [
    *scalar_op("_plus_scalar", lambda xp, x, p: x + _s(x, p), legacy="_PlusScalar",
               d_head=lambda xp, g, p: g, reference=lambda x, p: x + p.scalar, sample=_case(),
               desc="``out = x + scalar``.  Gradient ``dy``."),
    *scalar_op("_minus_scalar", lambda xp, x, p: x - _s(x, p), legacy="_MinusScalar",
               d_head=lambda xp, g, p: g, reference=lambda x, p: x - p.scalar, sample=_case(),
               desc="``out = x - scalar``.  Gradient ``dy``."),
    *scalar_op("_rminus_scalar", lambda xp, x, p: _s(x, p) - x, legacy="_RMinusScalar",
               d_head=lambda xp, g, p: -g, reference=lambda x, p: p.scalar - x, sample=_case(),
               desc="``out = scalar - x``.  Gradient ``-dy``."),
    *scalar_op("_mul_scalar", lambda xp, x, p: x * _s(x, p), legacy="_MulScalar",
               d_head=lambda xp, g, p: g * p.scalar, reference=lambda x, p: x * p.scalar,
               sample=_case(), desc="``out = x * scalar``.  Gradient ``scalar dy``."),
    *scalar_op("_div_scalar", lambda xp, x, p: c_divide(xp, x, _s(x, p)), legacy="_DivScalar",
               d_head=lambda xp, g, p: g / p.scalar, reference=lambda x, p: x / p.scalar,
               sample=_case(s_away=(0.0,)),
               desc="``out = x / scalar`` (integers truncate toward zero).  Gradient "
                    "``dy / scalar``."),
    *scalar_op("_rdiv_scalar", lambda xp, x, p: c_divide(xp, xp.asarray(_s(x, p), dtype=x.dtype), x)
               if x.dtype.kind in "iub" else p.scalar / x, legacy="_RDivScalar",
               d_in=lambda xp, x, p: -p.scalar / (x * x), reference=lambda x, p: p.scalar / x,
               d2=lambda F, x, p: F._mul_scalar(F._power_scalar(F.reciprocal(x), scalar=3.0),
                                                scalar=2 * p.scalar),
               sample=_case(x_away=(0.0,)),
               desc="``out = scalar / x`` (integers truncate toward zero).  Gradient "
                    "``-scalar dy / x^2``."),
    *scalar_op("_mod_scalar", lambda xp, x, p: python_mod(xp, x, _s(x, p)), legacy="_ModScalar",
               d_head=lambda xp, g, p: g, sample=_mod_case,
               reference=lambda x, p: python_mod_reference(x, np.float64(p.scalar)),
               desc="``out = x mod scalar`` with the divisor's sign (Python's ``%``); 0 for a "
                    "zero scalar.  Gradient ``dy``."),
    *scalar_op("_rmod_scalar",
               lambda xp, x, p: python_mod(xp, xp.asarray(_s(x, p), dtype=x.dtype), x),
               legacy="_RModScalar", d_in=lambda xp, x, p: -xp.floor(p.scalar / x),
               d2=lambda F, x, p: None,
               sample=_rmod_case,
               reference=lambda x, p: python_mod_reference(np.float64(p.scalar), x),
               desc="``out = scalar mod x`` with the divisor's sign; 0 where x == 0.  Gradient "
                    "``-floor(scalar / x) dy``."),
    *scalar_op("_power_scalar", lambda xp, x, p: xp.power(_float(x), _s(x, p)),
               legacy="_PowerScalar", d_in=lambda xp, x, p: p.scalar * xp.power(x, p.scalar - 1),
               d2=lambda F, x, p: F._mul_scalar(F._power_scalar(x, scalar=p.scalar - 2),
                                                scalar=p.scalar * (p.scalar - 1)),
               reference=lambda x, p: np.power(x, p.scalar), sample=_case(0.2, 2.0, -2.0, 2.0),
               desc="``out = x ^ scalar`` (integers: computed in floating point, truncated).  "
                    "Gradient ``scalar x^(scalar-1) dy``."),
    *scalar_op("_rpower_scalar", lambda xp, x, p: xp.power(float(_s(x, p)), _float(x)),
               legacy="_RPowerScalar", d_out=lambda xp, y, p: y * np.log(p.scalar),
               d2=lambda F, y, p: float(np.log(p.scalar)),
               reference=lambda x, p: np.power(p.scalar, x), sample=_case(-2.0, 2.0, 0.2, 3.0),
               desc="``out = scalar ^ x``.  Gradient ``out ln(scalar) dy``."),
    *scalar_op("_maximum_scalar", lambda xp, x, p: xp.maximum(x, _s(x, p)), legacy="_MaximumScalar",
               d_in=lambda xp, x, p: x >= p.scalar, reference=lambda x, p: np.maximum(x, p.scalar),
               d2=lambda F, x, p: None,
               sample=_apart_case,
               desc="``out = max(x, scalar)``.  Gradient ``dy`` where x >= scalar (ties "
                    "included, as MXNet), else 0."),
    *scalar_op("_minimum_scalar", lambda xp, x, p: xp.minimum(x, _s(x, p)), legacy="_MinimumScalar",
               d_in=lambda xp, x, p: x <= p.scalar, reference=lambda x, p: np.minimum(x, p.scalar),
               d2=lambda F, x, p: None,
               sample=_apart_case,
               desc="``out = min(x, scalar)``.  Gradient ``dy`` where x <= scalar (ties "
                    "included, as MXNet), else 0."),
    *scalar_op("_hypot_scalar", lambda xp, x, p: xp.hypot(_float(x), _s(x, p)),
               legacy="_HypotScalar", d_in=lambda xp, x, p: x / xp.hypot(x, p.scalar),
               d2=lambda F, x, p: F._mul_scalar(  # d(x / h) = scalar^2 / h^3
                   F._power_scalar(F._hypot_scalar(x, scalar=p.scalar), scalar=-3.0),
                   scalar=p.scalar ** 2),
               reference=lambda x, p: np.hypot(x, p.scalar), sample=_case(s_away=(0.0,)),
               desc="``out = sqrt(x^2 + scalar^2)``.  Gradient ``x dy / out``."),
    *_cmp("_equal_scalar", lambda a, b: a == b, "==", "_EqualScalar"),
    *_cmp("_not_equal_scalar", lambda a, b: a != b, "!=", "_NotEqualScalar"),
    *_cmp("_greater_scalar", lambda a, b: a > b, ">", "_GreaterScalar"),
    *_cmp("_greater_equal_scalar", lambda a, b: a >= b, ">=", "_GreaterEqualScalar"),
    *_cmp("_lesser_scalar", lambda a, b: a < b, "<", "_LesserScalar"),
    *_cmp("_lesser_equal_scalar", lambda a, b: a <= b, "<=", "_LesserEqualScalar"),
    *_logical("_logical_and_scalar", lambda a, b: a & b, "and", "_LogicalAndScalar"),
    *_logical("_logical_or_scalar", lambda a, b: a | b, "or", "_LogicalOrScalar"),
    *_logical("_logical_xor_scalar", lambda a, b: a ^ b, "xor", "_LogicalXorScalar"),
]
