"""The gradient rules of element-wise binary backward operators, written as operator
calls (:class:`~dagnet.operator.ComposedGradient`), so gradients of gradients exist.

``_backward_<op>(dy, a, b)`` writes ``(sum_to_a(dy * dl(a, b)), sum_to_b(dy * dr(a, b)))``
(``dl``, ``dr``: the partial derivatives; ``sum_to`` sums a broadcast gradient back to
its operand's shape).  Given head gradients ``(ga, gb)`` of those outputs its gradient is

- for ``dy``: ``ga dl + gb dr`` (``ga``, ``gb`` broadcast to the output's shape),
- for ``a``: ``sum_to_a(dy (ga d(dl)/da + gb d(dr)/da))``, and likewise for ``b``.

Each rule is ``compose(F, attrs, out_grads, inputs, outputs, needed)`` and returns
one gradient (None: zero) per input of the backward op.  The broadcasting operators
serve both flavours: with operands of one shape they are the element-wise ones.
"""

from __future__ import annotations

from typing import Any

__all__ = ["add", "sub", "mul", "div", "power", "maximum", "minimum", "add_n", "bilinear",
           "linear"]


def _sum_to(F: Any, x: Any, like: Any) -> Any:
    """``x`` (of the output's shape) summed over the axes ``like`` was broadcast along."""
    out, shape = x.shape, like.shape
    if out == shape:
        return x
    lead = len(out) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and out[lead + i] != 1)
    return F.reshape_like(F.sum(x, axis=axes), like)


def add(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any, needed: list) -> list:
    """``_backward_*add(dy) = (dy, dy)``: ``dy`` gets ``ga + gb``."""
    return [F.broadcast_add(out_grads[0], out_grads[1]) if needed[0] else None]


def sub(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any, needed: list) -> list:
    """``_backward_*sub(dy) = (dy, -dy)``: ``dy`` gets ``ga - gb``."""
    return [F.broadcast_sub(out_grads[0], out_grads[1]) if needed[0] else None]


def mul(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any, needed: list) -> list:
    """``_backward_*mul(dy, a, b) = (dy b, dy a)``."""
    (ga, gb), (dy, a, b) = out_grads, inputs
    d_dy = F.broadcast_add(F.broadcast_mul(ga, b), F.broadcast_mul(gb, a)) if needed[0] else None
    d_a = _sum_to(F, F.broadcast_mul(gb, dy), a) if needed[1] else None
    d_b = _sum_to(F, F.broadcast_mul(ga, dy), b) if needed[2] else None
    return [d_dy, d_a, d_b]


def div(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any, needed: list) -> list:
    """``_backward_*div(dy, a, b) = (dy / b, -dy a / b^2)``."""
    (ga, gb), (dy, a, b) = out_grads, inputs
    grads: list = [None, None, None]
    if needed[0]:  # (ga - gb a / b) / b
        grads[0] = F.broadcast_div(F.broadcast_sub(ga, F.broadcast_mul(gb, F.broadcast_div(a, b))),
                                   b)
    if needed[1]:  # -dy gb / b^2
        grads[1] = _sum_to(F, F.negative(F.broadcast_div(F.broadcast_mul(dy, gb), F.square(b))), a)
    if needed[2]:  # dy / b^2 (2 gb a / b - ga)
        twice = F.broadcast_mul(F._mul_scalar(gb, scalar=2.0), F.broadcast_div(a, b))
        grads[2] = _sum_to(F, F.broadcast_mul(F.broadcast_div(dy, F.square(b)),
                                              F.broadcast_sub(twice, ga)), b)
    return grads


def power(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any, needed: list) -> list:
    """``_backward_*power(dy, a, b) = (dy b a^(b-1), dy a^b ln a)``."""
    (ga, gb), (dy, a, b) = out_grads, inputs
    p, ln_a = F.broadcast_power(a, b), F.log(a)
    one_b_ln_a = F._plus_scalar(F.broadcast_mul(b, ln_a), scalar=1.0)  # 1 + b ln a
    grads: list = [None, None, None]
    if needed[0]:  # a^b (ga b / a + gb ln a)
        grads[0] = F.broadcast_mul(p, F.broadcast_add(F.broadcast_div(F.broadcast_mul(ga, b), a),
                                                      F.broadcast_mul(gb, ln_a)))
    if needed[1]:  # dy a^b / a (ga b (b - 1) / a + gb (1 + b ln a))
        b_b1 = F.broadcast_mul(b, F._plus_scalar(b, scalar=-1.0))
        inner = F.broadcast_add(F.broadcast_mul(ga, F.broadcast_div(b_b1, a)),
                                F.broadcast_mul(gb, one_b_ln_a))
        grads[1] = _sum_to(F, F.broadcast_mul(F.broadcast_mul(dy, F.broadcast_div(p, a)), inner), a)
    if needed[2]:  # dy a^b (ga (1 + b ln a) / a + gb ln^2 a)
        inner = F.broadcast_add(F.broadcast_mul(ga, F.broadcast_div(one_b_ln_a, a)),
                                F.broadcast_mul(gb, F.square(ln_a)))
        grads[2] = _sum_to(F, F.broadcast_mul(F.broadcast_mul(dy, p), inner), b)
    return grads


def _select(first: str, second: str):
    """max/min: the gradient goes to ``a`` where ``first(a, b)``, to ``b`` where
    ``second(a, b)``; both indicators are piecewise constant."""

    def compose(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any,
                needed: list) -> list:
        (ga, gb), (_, a, b) = out_grads, inputs
        if not needed[0]:
            return [None, None, None]
        to_a = F.broadcast_mul(ga, getattr(F, first)(a, b))
        return [F.broadcast_add(to_a, F.broadcast_mul(gb, getattr(F, second)(a, b))), None, None]

    return compose


maximum = _select("broadcast_greater_equal", "broadcast_lesser")
minimum = _select("broadcast_lesser_equal", "broadcast_greater")


def add_n(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any, needed: list) -> list:
    """``_backward_add_n(dy)`` copies ``dy`` to every input: ``dy`` gets the sum of the
    head gradients."""
    return [F.add_n(*out_grads) if needed[0] else None]


def bilinear(backward: str):
    """The rule of the backward op ``backward`` of a bilinear product ``y = P(a, b)``
    (``dot``, ``batch_dot``), which writes ``(Da(dy, b), Db(a, dy))``: the gradient with head
    gradients ``(ga, gb)`` is ``P(ga, b) + P(a, gb)`` for ``dy``, ``Da(dy, gb)`` for ``a`` and
    ``Db(ga, dy)`` for ``b`` -- the product and its backward op again, so every order works."""
    forward = backward[len("_backward_"):]

    def compose(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any,
                needed: list) -> list:
        (ga, gb), (dy, a, b) = out_grads, inputs
        params = attrs.to_dict()
        params = {k: v for k, v in params.items() if v is not None}
        d_dy = (F.elemwise_add(getattr(F, forward)(ga, b, **params),
                               getattr(F, forward)(a, gb, **params)) if needed[0] else None)
        d_a = F.call(backward, [dy, a, gb], attrs, like=[a, gb])[0] if needed[1] else None
        d_b = F.call(backward, [dy, ga, b], attrs, like=[ga, b])[1] if needed[2] else None
        return [d_dy, d_a, d_b]

    return compose


def linear(forward: str):
    """The rule of the backward op of ``forward``, a map linear in its one differentiable
    input (reshapes, transposes, slices, tiles, sums, means): the backward op applies the
    adjoint map to ``dy``, so ``dy``'s gradient is ``forward`` itself on the head gradient.
    Inputs the backward op reads besides ``dy`` (for their shapes) get none."""

    def compose(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any,
                needed: list) -> list:
        first = F.call(forward, [out_grads[0]], attrs) if needed[0] else None
        return [first] + [None] * (len(needed) - 1)

    return compose
