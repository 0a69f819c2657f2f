"""Element-wise unary operators (MXNet's ``elemwise_unary_op_*.cc``): math functions,
rounding, ``clip``, ``hard_sigmoid``, ``_copy``, ``BlockGrad`` and ``Cast``.

Each operator is one call of :func:`unary`: the forward as a function of
``(xp, x)`` (or ``(xp, x, attrs)`` for ops with parameters), its derivative
written against the input (``d_in``), the output (``d_out``) or the head
gradient alone (``d_head``), a numpy reference and where to sample.

Higher-order gradients: ``_backward_<name>`` carries a composed gradient rule
(:class:`~dagnet.operator.ComposedGradient`).  Its backward is ``dy * d(v)``
(``v`` the input or the output), so the rule needs ``d2``: the derivative of
``d`` with respect to ``v`` written as operator calls ``F.<op>(...)`` (so it can
be differentiated again), a number, or None for zero.  A ``d_head`` backward is
linear in ``dy`` and needs none.

Dtypes: the output has the input's dtype.  Integer inputs are computed in
floating point and truncated back, as MXNet does (``sqrt`` of int32 ``7`` is
``2``, ``sigmoid`` of int32 is ``0``).  Every op may run in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    ComposedGradient,
    Domain,
    DType,
    Field,
    Gradient,
    NoParams,
    Op,
    Params,
    ZeroGradient,
)

from . import _sampling as S
from ._common import backward_op, fixed_out_type, put, same_shape, with_attrs

Fn = Callable[..., Any]

_INT_NOTE = ("Output dtype = input dtype; integer inputs are computed in floating point and "
             "truncated back (MXNet's behaviour).")


def unary(name: str, forward: Fn, *, desc: str, d_in: Fn | None = None, d_out: Fn | None = None,
          d_head: Fn | None = None, zero_grad: bool = False, reference: Fn | None = None,
          lo: float = -2.0, hi: float = 2.0, away: Sequence[float] = (),
          params: type[Params] = NoParams, sample_params: Fn | None = None,
          sample: Fn | None = None, aliases: tuple[str, ...] = (),
          infer_type: Fn | None = None, inplace: bool = True, note: str = _INT_NOTE,
          d2: Any = None) -> list[Op]:
    """An element-wise unary op and its ``_backward_<name>`` from a forward and one derivative.

    ``d_in(xp, x)`` / ``d_out(xp, y)`` return dy/dx (the backward multiplies by the head
    gradient); ``d_head(xp, g)`` returns the input gradient from the head gradient alone
    (a linear function of it).  ``d2(F, v)`` is the derivative of ``d_in``/``d_out`` with
    respect to its argument, as operator calls, a number or None (zero); without it the
    backward op declares no gradient (no gradients of gradients).
    With ``params``, every function also receives the parsed attrs as its last argument;
    ``sample_params(draw)`` draws them, or ``sample(draw)`` draws the whole Case.
    """
    takes_attrs = params is not NoParams

    def call(fn: Fn, xp: Any, value: Any, attrs: Params) -> Any:
        return fn(xp, value, attrs) if takes_attrs else fn(xp, value)

    def compute(attrs, ctx, inputs, req, outputs):
        put(outputs[0], req[0], call(forward, ctx.xp, inputs[0], attrs))

    def default_sample(draw):
        x = S.floats(draw, S.shape(draw), lo, hi, away=away)
        return Case([x], sample_params(draw) if sample_params else {})

    ref = reference or (lambda x: forward(np, x))
    ref_fn = (with_attrs(params, name, lambda p, x: ref(x, p)) if takes_attrs
              else (lambda raw, x: ref(x)))
    ops = []
    if zero_grad:
        gradient: Any = ZeroGradient()
    else:
        kind, fn = (("in_data", d_in) if d_in is not None else
                    ("out_data", d_out) if d_out is not None else (None, d_head))
        uses = ("out_grad", kind) if kind else ("out_grad",)
        gradient = Gradient(f"_backward_{name}", uses)

        def backward(attrs, ctx, inputs, req, outputs):
            if kind is None:
                put(outputs[0], req[0], call(fn, ctx.xp, inputs[0], attrs))
            else:
                put(outputs[0], req[0], inputs[0] * call(fn, ctx.xp, inputs[1], attrs))

        record = backward_op(name, params, len(uses), 1, backward)
        if kind is None or d2 is not None:
            record.gradient = _second_order(name, kind is None, d2, takes_attrs)
        ops.append(record)
    ops.insert(0, Op(
        name, description=f"{desc}\n\n{note}", params=params, input_names=["data"],
        infer_shape=same_shape(name, ["data"]), infer_type=infer_type, compute={XP: compute},
        gradient=gradient, inplace=[(0, 0)] if inplace else [], aliases=aliases,
        domain=Domain(sample or default_sample, reference=ref_fn)))
    return ops


def _second_order(name: str, linear: bool, d2: Any, takes_attrs: bool) -> ComposedGradient:
    """The gradient of ``_backward_<name>``, whose inputs are ``(dy, v)`` (or ``(dy,)`` when
    ``linear``) and whose output is ``dy * d(v)``: ``g * d(v)`` -- the backward op itself on
    the head gradient ``g`` -- for ``dy``, and ``g * dy * d2(v)`` for ``v``."""
    backward = f"_backward_{name}"

    def compose(F, attrs, out_grads, inputs, outputs, needed):
        g, dy = out_grads[0], inputs[0]
        if linear:
            return [F.call(backward, [g], attrs, like=[dy]) if needed[0] else None]
        v = inputs[1]
        d_dy = F.call(backward, [g, v], attrs, like=[v]) if needed[0] else None
        d_v = None
        if needed[1]:
            second = d2 if not callable(d2) else d2(F, v, attrs) if takes_attrs else d2(F, v)
            if isinstance(second, (int, float)):
                d_v = F._mul_scalar(F.elemwise_mul(g, dy), scalar=float(second))
            elif second is not None:
                d_v = F.elemwise_mul(F.elemwise_mul(g, dy), second)
        return [d_dy, d_v]

    return ComposedGradient(compose, ("out_grad", "in_data"))


# -- second derivatives (the derivative of each d_in / d_out), as operator calls ----------
def _zero(F: Any, v: Any, attrs: Any = None) -> None:
    """A piecewise-constant derivative: its own derivative is zero."""
    return None


def _inv_pow_1_5(F: Any, u: Any) -> Any:
    """``u^(-3/2)``."""
    return F._power_scalar(u, scalar=-1.5)


def _one_minus_square(F: Any, x: Any) -> Any:
    return F._rminus_scalar(F.square(x), scalar=1.0)


def _d2_rsqrt(F: Any, x: Any) -> Any:  # d(-x^-1.5 / 2) = 3/4 x^-2.5
    return F._mul_scalar(F._power_scalar(F.rsqrt(x), scalar=5.0), scalar=0.75)


def _d2_cbrt(F: Any, y: Any) -> Any:  # d(1 / (3 y^2)) / dy = -2 / (3 y^3)
    return F._mul_scalar(F.reciprocal(F._power_scalar(y, scalar=3.0)), scalar=-2 / 3)


def _d2_rcbrt(F: Any, x: Any) -> Any:  # d(-x^(-4/3) / 3) = 4/9 x^(-7/3)
    return F._mul_scalar(F._power_scalar(F.rcbrt(x), scalar=7.0), scalar=4 / 9)


def _d2_reciprocal(F: Any, x: Any) -> Any:  # d(-1 / x^2) = 2 / x^3
    return F._mul_scalar(F._power_scalar(F.reciprocal(x), scalar=3.0), scalar=2.0)


def _d2_log(scale: float) -> Fn:  # d(scale / x) = -scale / x^2
    return lambda F, x: F._mul_scalar(F.square(F.reciprocal(x)), scalar=-scale)


def _d2_log1p(F: Any, x: Any) -> Any:  # d(1 / (1 + x)) = -1 / (1 + x)^2
    return F.negative(F.square(F.reciprocal(F._plus_scalar(x, scalar=1.0))))


def _d2_arcsin(F: Any, x: Any) -> Any:  # d((1 - x^2)^-1/2) = x (1 - x^2)^-3/2
    return F.elemwise_mul(x, _inv_pow_1_5(F, _one_minus_square(F, x)))


def _d2_arccos(F: Any, x: Any) -> Any:
    return F.negative(_d2_arcsin(F, x))


def _d2_arctan(F: Any, x: Any) -> Any:  # d(1 / (1 + x^2)) = -2 x / (1 + x^2)^2
    return F.elemwise_mul(F._mul_scalar(x, scalar=-2.0),
                          F.square(F.reciprocal(F._plus_scalar(F.square(x), scalar=1.0))))


def _d2_arcsinh(F: Any, x: Any) -> Any:  # d((x^2 + 1)^-1/2) = -x (x^2 + 1)^-3/2
    return F.elemwise_mul(F.negative(x), _inv_pow_1_5(F, F._plus_scalar(F.square(x), scalar=1.0)))


def _d2_arccosh(F: Any, x: Any) -> Any:  # d((x^2 - 1)^-1/2) = -x (x^2 - 1)^-3/2
    return F.elemwise_mul(F.negative(x), _inv_pow_1_5(F, F._plus_scalar(F.square(x), scalar=-1.0)))


def _d2_arctanh(F: Any, x: Any) -> Any:  # d(1 / (1 - x^2)) = 2 x / (1 - x^2)^2
    return F.elemwise_mul(F._mul_scalar(x, scalar=2.0),
                          F.square(F.reciprocal(_one_minus_square(F, x))))


def _d2_sigmoid(F: Any, y: Any) -> Any:  # d(y (1 - y)) / dy = 1 - 2 y
    return F._rminus_scalar(F._mul_scalar(y, scalar=2.0), scalar=1.0)


def _d2_softsign(F: Any, x: Any) -> Any:  # d((1 + |x|)^-2) = -2 sign(x) (1 + |x|)^-3
    return F.elemwise_mul(F._mul_scalar(F.sign(x), scalar=-2.0),
                          F._power_scalar(F.reciprocal(F._plus_scalar(F.abs(x), scalar=1.0)),
                                          scalar=3.0))


def _exp(xp: Any, x: Any) -> Any:
    """``e^x``; numpy's float32 exp is up to one unit in the last place off (e^1 gives
    2.718282, not 2.7182817), so narrow floats go through float64 on the CPU."""
    if xp is np and x.dtype in (np.float16, np.float32):
        return np.exp(x, dtype=np.float64).astype(x.dtype)
    return xp.exp(x)


def _round_half_down(xp: Any, x: Any) -> Any:
    """MXNet's ``rint``: the nearest integer, halves toward minus infinity
    (``rint(1.5) = 1``, ``rint(-0.5) = -1``)."""
    low = xp.floor(x)
    return xp.where(x - low > 0.5, low + 1, low)


def _round_half_away(xp: Any, x: Any) -> Any:
    """C's ``round``: halves go away from zero (numpy's ``round`` goes to even)."""
    t = xp.trunc(x)
    return xp.where(xp.abs(x - t) >= 0.5, t + xp.sign(x), t)


def special_values_sample(draw: Any) -> Case:
    """Finite values with some infinities and NaNs among them (for the ``is*`` tests)."""
    shape = S.shape(draw)
    x = S.floats(draw, shape)
    kind = S.integers(draw, shape, 0, 3)
    x[kind == 1], x[kind == 2], x[kind == 3] = np.inf, -np.inf, np.nan
    return Case([x])


def _test(name: str, test: Callable[[Any, Any], Any], what: str) -> list[Op]:
    """``_contrib_<name>``: 1 where ``test`` holds, else 0, in the input's dtype."""
    return unary(f"_contrib_{name}", lambda xp, x: test(xp, x).astype(x.dtype), zero_grad=True,
                 sample=special_values_sample,
                 desc=f"1 where the element is {what}, else 0, in the input's dtype "
                      f"(``mx.nd.contrib.{name}``).  Gradient zero.",
                 note="Integer inputs are finite: isfinite gives 1, isinf and isnan 0.")


_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))

OPS: list[Op] = [
    # -- arithmetic ----------------------------------------------------------------------
    *unary("negative", lambda xp, x: -x, d_head=lambda xp, g: -g,
           desc="Numerical negative, element-wise: ``y = -x``.  Gradient ``-dy``."),
    *unary("abs", lambda xp, x: xp.abs(x), d_in=lambda xp, x: xp.sign(x), away=(0.0,),
           d2=_zero,
           desc="Absolute value, element-wise: ``y = |x|``.  Gradient ``sign(x) * dy`` "
                "(0 at x = 0, as MXNet)."),
    *unary("sign", lambda xp, x: xp.sign(x), zero_grad=True,
           desc="Sign, element-wise: -1, 0 or 1.  Gradient zero."),
    *unary("square", lambda xp, x: x * x, d_in=lambda xp, x: 2 * x, reference=np.square,
           d2=2.0,
           desc="Square, element-wise: ``y = x^2``.  Gradient ``2 x dy``."),
    *unary("sqrt", lambda xp, x: xp.sqrt(x), d_out=lambda xp, y: 0.5 / y, lo=0.05, hi=4.0,
           d2=lambda F, y: F._mul_scalar(F.reciprocal(F.square(y)), scalar=-0.5),
           desc="Square root, element-wise: ``y = sqrt(x)``; NaN for x < 0.  Gradient "
                "``dy / (2 y)`` (infinite at 0)."),
    *unary("rsqrt", lambda xp, x: 1 / xp.sqrt(x), d_in=lambda xp, x: -0.5 / (x * xp.sqrt(x)),
           reference=lambda x: np.power(x, -0.5), lo=0.05, hi=4.0,
           d2=_d2_rsqrt,
           desc="Reciprocal square root, element-wise: ``y = 1 / sqrt(x)``.  Gradient "
                "``-dy / (2 x^1.5)``."),
    *unary("cbrt", lambda xp, x: xp.cbrt(x), d_out=lambda xp, y: 1 / (3 * y * y), away=(0.0,),
           d2=_d2_cbrt,
           desc="Cube root, element-wise: ``y = x^(1/3)`` (real, negative for x < 0).  Gradient "
                "``dy / (3 y^2)`` (infinite at 0)."),
    *unary("rcbrt", lambda xp, x: 1 / xp.cbrt(x), d_in=lambda xp, x: -1 / (3 * x * xp.cbrt(x)),
           reference=lambda x: 1 / np.cbrt(x), away=(0.0,),
           d2=_d2_rcbrt,
           desc="Reciprocal cube root, element-wise: ``y = 1 / x^(1/3)``.  Gradient "
                "``-dy / (3 x^(4/3))``."),
    *unary("reciprocal", lambda xp, x: 1 / x, d_in=lambda xp, x: -1 / (x * x),
           reference=np.reciprocal, away=(0.0,), lo=-3.0, hi=3.0,
           d2=_d2_reciprocal,
           desc="Reciprocal, element-wise: ``y = 1 / x`` (integer inputs truncate: 1/2 -> 0).  "
                "Gradient ``-dy / x^2``."),
    # -- exponentials and logarithms ---------------------------------------------------------
    *unary("exp", lambda xp, x: _exp(xp, x), d_out=lambda xp, y: y,
           d2=1.0,
           desc="Exponential, element-wise: ``y = e^x``, correctly rounded for float16 and "
                "float32 on the CPU (as MXNet's ``expf``).  Gradient ``y dy``."),
    *unary("expm1", lambda xp, x: xp.expm1(x), d_out=lambda xp, y: y + 1,
           d2=1.0,
           desc="``y = e^x - 1``, element-wise, accurate for small x.  Gradient ``(y + 1) dy``."),
    *unary("log", lambda xp, x: xp.log(x), d_in=lambda xp, x: 1 / x, lo=0.05, hi=4.0,
           d2=_d2_log(1.0),
           desc="Natural logarithm, element-wise; NaN for x < 0, -inf at 0.  Gradient ``dy / x``."),
    *unary("log2", lambda xp, x: xp.log2(x), d_in=lambda xp, x: 1 / (x * _LN2), lo=0.05, hi=4.0,
           d2=_d2_log(1 / _LN2),
           desc="Base-2 logarithm, element-wise.  Gradient ``dy / (x ln 2)``."),
    *unary("log10", lambda xp, x: xp.log10(x), d_in=lambda xp, x: 1 / (x * _LN10), lo=0.05, hi=4.0,
           d2=_d2_log(1 / _LN10),
           desc="Base-10 logarithm, element-wise.  Gradient ``dy / (x ln 10)``."),
    *unary("log1p", lambda xp, x: xp.log1p(x), d_in=lambda xp, x: 1 / (1 + x), lo=-0.9, hi=3.0,
           d2=_d2_log1p,
           desc="``y = log(1 + x)``, element-wise, accurate for small x.  Gradient "
                "``dy / (1 + x)``."),
    # -- trigonometric and hyperbolic ---------------------------------------------------------
    *unary("sin", lambda xp, x: xp.sin(x), d_in=lambda xp, x: xp.cos(x), lo=-4.0, hi=4.0,
           d2=lambda F, x: F.negative(F.sin(x)),
           desc="Sine (radians), element-wise.  Gradient ``cos(x) dy``."),
    *unary("cos", lambda xp, x: xp.cos(x), d_in=lambda xp, x: -xp.sin(x), lo=-4.0, hi=4.0,
           d2=lambda F, x: F.negative(F.cos(x)),
           desc="Cosine (radians), element-wise.  Gradient ``-sin(x) dy``."),
    *unary("tan", lambda xp, x: xp.tan(x), d_out=lambda xp, y: 1 + y * y, lo=-1.2, hi=1.2,
           d2=lambda F, y: F._mul_scalar(y, scalar=2.0),
           desc="Tangent (radians), element-wise.  Gradient ``(1 + y^2) dy``."),
    *unary("arcsin", lambda xp, x: xp.arcsin(x), d_in=lambda xp, x: 1 / xp.sqrt(1 - x * x),
           lo=-0.9, hi=0.9,
           d2=_d2_arcsin,
           desc="Inverse sine, element-wise, in [-pi/2, pi/2]; NaN outside [-1, 1].  Gradient "
                "``dy / sqrt(1 - x^2)``."),
    *unary("arccos", lambda xp, x: xp.arccos(x), d_in=lambda xp, x: -1 / xp.sqrt(1 - x * x),
           lo=-0.9, hi=0.9,
           d2=_d2_arccos,
           desc="Inverse cosine, element-wise, in [0, pi]; NaN outside [-1, 1].  Gradient "
                "``-dy / sqrt(1 - x^2)``."),
    *unary("arctan", lambda xp, x: xp.arctan(x), d_in=lambda xp, x: 1 / (1 + x * x),
           lo=-4.0, hi=4.0,
           d2=_d2_arctan,
           desc="Inverse tangent, element-wise, in (-pi/2, pi/2).  Gradient ``dy / (1 + x^2)``."),
    *unary("degrees", lambda xp, x: x * (180.0 / np.pi), d_head=lambda xp, g: g * (180.0 / np.pi),
           reference=np.degrees,
           desc="Radians to degrees, element-wise: ``y = x 180 / pi``.  Gradient ``180 / pi dy``."),
    *unary("radians", lambda xp, x: x * (np.pi / 180.0), d_head=lambda xp, g: g * (np.pi / 180.0),
           reference=np.radians,
           desc="Degrees to radians, element-wise: ``y = x pi / 180``.  Gradient ``pi / 180 dy``."),
    *unary("sinh", lambda xp, x: xp.sinh(x), d_in=lambda xp, x: xp.cosh(x),
           d2=lambda F, x: F.sinh(x),
           desc="Hyperbolic sine, element-wise.  Gradient ``cosh(x) dy``."),
    *unary("cosh", lambda xp, x: xp.cosh(x), d_in=lambda xp, x: xp.sinh(x),
           d2=lambda F, x: F.cosh(x),
           desc="Hyperbolic cosine, element-wise.  Gradient ``sinh(x) dy``."),
    *unary("tanh", lambda xp, x: xp.tanh(x), d_out=lambda xp, y: 1 - y * y,
           d2=lambda F, y: F._mul_scalar(y, scalar=-2.0),
           desc="Hyperbolic tangent, element-wise.  Gradient ``(1 - y^2) dy``."),
    *unary("arcsinh", lambda xp, x: xp.arcsinh(x), d_in=lambda xp, x: 1 / xp.sqrt(x * x + 1),
           lo=-4.0, hi=4.0,
           d2=_d2_arcsinh,
           desc="Inverse hyperbolic sine, element-wise.  Gradient ``dy / sqrt(x^2 + 1)``."),
    *unary("arccosh", lambda xp, x: xp.arccosh(x), d_in=lambda xp, x: 1 / xp.sqrt(x * x - 1),
           lo=1.05, hi=4.0,
           d2=_d2_arccosh,
           desc="Inverse hyperbolic cosine, element-wise; NaN for x < 1.  Gradient "
                "``dy / sqrt(x^2 - 1)``."),
    *unary("arctanh", lambda xp, x: xp.arctanh(x), d_in=lambda xp, x: 1 / (1 - x * x),
           lo=-0.9, hi=0.9,
           d2=_d2_arctanh,
           desc="Inverse hyperbolic tangent, element-wise; NaN outside (-1, 1).  Gradient "
                "``dy / (1 - x^2)``."),
    # -- activations ----------------------------------------------------------------------
    *unary("sigmoid", lambda xp, x: 1 / (1 + xp.exp(-x)), d_out=lambda xp, y: y * (1 - y),
           reference=lambda x: np.exp(x) / (np.exp(x) + 1), lo=-6.0, hi=6.0,
           d2=_d2_sigmoid,
           desc="Logistic sigmoid, element-wise: ``y = 1 / (1 + e^-x)``.  Gradient "
                "``y (1 - y) dy``."),
    *unary("relu", lambda xp, x: xp.maximum(x, 0),
           d_out=lambda xp, y: xp.where(xp.isnan(y), y, y > 0),
           reference=lambda x: np.where(x > 0, x, 0.0), away=(0.0,),
           d2=_zero,
           desc="Rectified linear unit, element-wise: ``y = max(x, 0)``.  Gradient ``dy`` where "
                "y > 0, else 0 (0 at x = 0, as MXNet); NaN where x is NaN, as MXNet's "
                "``relu`` (its ``Activation`` gives 0 there)."),
    *unary("softsign", lambda xp, x: x / (1 + xp.abs(x)),
           d_in=lambda xp, x: 1 / ((1 + xp.abs(x)) * (1 + xp.abs(x))), away=(0.0,),
           d2=_d2_softsign,
           desc="Softsign, element-wise: ``y = x / (1 + |x|)``.  Gradient ``dy / (1 + |x|)^2``."),
    # -- rounding (piecewise constant: zero gradient) --------------------------------------
    *unary("floor", lambda xp, x: xp.floor(x), zero_grad=True, lo=-4.0, hi=4.0,
           desc="Floor, element-wise: the largest integer <= x.  Gradient zero."),
    *unary("ceil", lambda xp, x: xp.ceil(x), zero_grad=True, lo=-4.0, hi=4.0,
           desc="Ceiling, element-wise: the smallest integer >= x.  Gradient zero."),
    *unary("round", _round_half_away, zero_grad=True, lo=-4.0, hi=4.0,
           desc="Round to the nearest integer, halves away from zero (C's ``round``: "
                "``round(-2.5) = -3``, ``round(0.5) = 1``; unlike numpy's half-to-even).  "
                "Gradient zero."),
    *unary("rint", _round_half_down, zero_grad=True, lo=-4.0, hi=4.0,
           desc="Round to the nearest integer, halves toward minus infinity, as MXNet's "
                "``rint`` (``rint(1.5) = 1``, ``rint(-0.5) = -1``; ``round`` takes halves "
                "away from zero).  Gradient zero."),
    *_test("isinf", lambda xp, x: xp.isinf(x), "infinite (either sign)"),
    *_test("isnan", lambda xp, x: xp.isnan(x), "NaN"),
    *_test("isfinite", lambda xp, x: xp.isfinite(x), "finite (neither infinite nor NaN)"),
    *unary("fix", lambda xp, x: xp.trunc(x), zero_grad=True, lo=-4.0, hi=4.0,
           desc="Round toward zero, element-wise (``fix(-2.5) = -2``).  Gradient zero."),
    *unary("trunc", lambda xp, x: xp.trunc(x), zero_grad=True, lo=-4.0, hi=4.0,
           desc="Truncate toward zero, element-wise (same values as ``fix``).  Gradient zero."),
    # -- logical and identity ----------------------------------------------------------------
    *unary("logical_not", lambda xp, x: x == 0, zero_grad=True, lo=-2.0, hi=2.0,
           desc="Logical not, element-wise: 1 where x == 0, else 0, in the input's dtype "
                "(MXNet 1.x returns no bool arrays).  Gradient zero."),
    *unary("_copy", lambda xp, x: x.copy(), d_head=lambda xp, g: g, aliases=("identity",),
           reference=lambda x: x,
           desc="Copy of the input (``identity``).  Gradient ``dy``."),
    *unary("BlockGrad", lambda xp, x: x.copy(), zero_grad=True, aliases=("stop_gradient",),
           reference=lambda x: x,
           desc="Identity in the forward pass that stops the gradient (``stop_gradient``): "
                "the input's gradient is zero."),
]


# -- operators with parameters ------------------------------------------------------------------
class ClipParam(Params):
    a_min = Field(float, REQUIRED, "Minimum value")
    a_max = Field(float, REQUIRED, "Maximum value")


def _clip(xp: Any, x: Any, p: ClipParam) -> Any:
    lo, hi = p.a_min, p.a_max
    if x.dtype.kind in "iub":  # MXNet casts the bounds to the input's dtype
        lo, hi = int(lo), int(hi)
    # MXNet tests the maximum first: with a_min > a_max every value above a_max becomes a_max
    return xp.where(x > hi, hi, xp.where(x < lo, lo, x))


def _clip_sample(draw):
    a_min = S.number(draw, -1.5, 1.0, label="a_min")
    a_max = a_min + S.number(draw, 0.2, 2.0, label="width")
    # x stays away from both bounds so central differences do not straddle a kink
    x = S.floats(draw, S.shape(draw), -3.0, 3.0, away=(a_min, a_max))
    return Case([x], {"a_min": a_min, "a_max": a_max})


def _clip_reference(x, p):
    return np.where(x > p.a_max, p.a_max, np.where(x < p.a_min, p.a_min, x))


class HardSigmoidParam(Params):
    alpha = Field(float, 0.2, "The slope of hard sigmoid")
    beta = Field(float, 0.5, "The bias of hard sigmoid.")


class CastParam(Params):
    dtype = Field(DType, REQUIRED, "Output data type.",
                  choices=("bfloat16", "bool", "float16", "float32", "float64", "int32", "int64",
                           "int8", "uint8"))


def _cast_sample(draw):
    # float64 only: a cast to a narrower type loses the precision central differences need
    return Case([S.floats(draw, S.shape(draw))], {"dtype": "float64"})


OPS += [
    *unary("clip", _clip, params=ClipParam, reference=_clip_reference, sample=_clip_sample,
           d_in=lambda xp, x, p: (x >= p.a_min) & (x <= p.a_max),
           d2=_zero,
           desc="Clip (limit) the values: ``y = a_max if x > a_max else (a_min if x < a_min "
                "else x)``.  With a_min > a_max the test order matters (MXNet's): values above "
                "a_max become a_max, the rest below a_min become a_min.  Integer inputs use the "
                "bounds truncated to integers.  Gradient ``dy`` where a_min <= x <= a_max, "
                "else 0."),
    *unary("hard_sigmoid", lambda xp, x, p: xp.clip(p.alpha * x + p.beta, 0.0, 1.0),
           params=HardSigmoidParam, lo=-4.0, hi=4.0, away=(-2.5, 2.5),
           sample_params=lambda draw: {},  # the kinks above assume the default alpha and beta
           reference=lambda x, p: np.minimum(np.maximum(p.alpha * x + p.beta, 0.0), 1.0),
           d_in=lambda xp, x, p: p.alpha * ((p.alpha * x + p.beta > 0)
                                            & (p.alpha * x + p.beta < 1)),
           d2=_zero,
           desc="Hard sigmoid, element-wise: ``y = max(0, min(1, alpha x + beta))``.  Gradient "
                "``alpha dy`` where 0 < alpha x + beta < 1, else 0."),
    *unary("Cast", lambda xp, x, p: x.astype(p.dtype), params=CastParam, aliases=("cast",),
           sample=_cast_sample, inplace=False,  # the output's dtype differs from the input's
           d_head=lambda xp, g, p: g, reference=lambda x, p: x.astype(p.dtype),
           infer_type=fixed_out_type(lambda attrs, ins: attrs.dtype),
           desc="Cast the input to ``dtype`` (float to integer truncates toward zero).  The "
                "gradient is the head gradient cast back to the input's dtype."),
]
