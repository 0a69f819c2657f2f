"""The arithmetic of one recurrent step -- the LSTM and GRU gates and zoneout --
written once against ``F`` (``mx.sym`` or ``mx.nd``) for the cells of ``mx.rnn``
and ``gluon.rnn``, dense and convolutional.

The families write the nodes between the named ones (``<prefix>slice``,
``<prefix>state``, ``<prefix>out`` ...) each in its own way, and their graphs must
stay as MXNet writes them (the same operators and automatic names in symbol JSON).
A *spelling* says how a family writes those in-between nodes:

- :class:`OperatorSpelling`: ``a + b``, ``a * b``, ``1.0 - a`` with automatic names
  (``_plus0`` ...), as ``mx.rnn``'s cells;
- :class:`ElemwiseSpelling`: ``F.elemwise_add`` ... with automatic names, as gluon's
  convolutional and projected cells;
- :class:`NamedElemwiseSpelling`: ``F.elemwise_add`` ... named ``prefix + 'plus0'``
  ..., as gluon's dense cells.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Spelling", "OperatorSpelling", "ElemwiseSpelling", "NamedElemwiseSpelling",
           "lstm_step", "gru_step", "zoneout"]


class Spelling(Protocol):
    """How a cell family writes the unnamed-by-role nodes of a step; ``hint`` is the
    name a named spelling gives the node (after its prefix)."""

    def add(self, a: Any, b: Any, hint: str) -> Any:
        """``a + b``."""

    def mul(self, a: Any, b: Any, hint: str) -> Any:
        """``a * b``."""

    def one_minus(self, x: Any) -> Any:
        """``1 - x``."""

    def apply(self, fn: Callable[..., Any], x: Any, hint: str) -> Any:
        """``fn(x)``, named ``hint`` where the spelling names its nodes."""


class OperatorSpelling:
    """``mx.rnn``'s spelling: Python operators on Symbols, automatically named."""

    def add(self, a: Any, b: Any, hint: str) -> Any:
        return a + b

    def mul(self, a: Any, b: Any, hint: str) -> Any:
        return a * b

    def one_minus(self, x: Any) -> Any:
        return 1.0 - x

    def apply(self, fn: Callable[..., Any], x: Any, hint: str) -> Any:
        return fn(x)


class ElemwiseSpelling:
    """``F.elemwise_*`` operators, automatically named (gluon's convolutional and
    projected cells)."""

    def __init__(self, F: Any):
        self._F = F

    def add(self, a: Any, b: Any, hint: str) -> Any:
        return self._F.elemwise_add(a, b)

    def mul(self, a: Any, b: Any, hint: str) -> Any:
        return self._F.elemwise_mul(a, b)

    def one_minus(self, x: Any) -> Any:
        return self._F._rminus_scalar(x, scalar=1.0)

    def apply(self, fn: Callable[..., Any], x: Any, hint: str) -> Any:
        return fn(x)


class NamedElemwiseSpelling:
    """``F.elemwise_*`` operators named ``prefix + hint`` (gluon's dense cells)."""

    def __init__(self, F: Any, prefix: str):
        self._F = F
        self._prefix = prefix

    def add(self, a: Any, b: Any, hint: str) -> Any:
        return self._F.elemwise_add(a, b, name=self._prefix + hint)

    def mul(self, a: Any, b: Any, hint: str) -> Any:
        return self._F.elemwise_mul(a, b, name=self._prefix + hint)

    def one_minus(self, x: Any) -> Any:
        ones = self._F.ones_like(x, name=f"{self._prefix}ones_like0")
        return self._F.elemwise_sub(ones, x, name=f"{self._prefix}minus0")

    def apply(self, fn: Callable[..., Any], x: Any, hint: str) -> Any:
        return fn(x, name=self._prefix + hint)


def _slice(F: Any, x: Any, num_outputs: int, name: str, axis: int | None) -> Any:
    # the default axis is left out of the node's attributes, as the cells always did
    kwargs = {} if axis is None else {"axis": axis}
    return F.SliceChannel(x, num_outputs=num_outputs, name=name, **kwargs)


def lstm_step(F: Any, spelling: Spelling, i2h: Any, h2h: Any, prev_c: Any, prefix: str,
              gate: Callable[..., Any], activate: Callable[..., Any], *,
              out_name: str | None = None, axis: int | None = None) -> tuple[Any, Any]:
    """``(next_h, next_c)`` of an LSTM step from the input and hidden projections
    ``i2h`` and ``h2h`` (gates input, forget, cell, output stacked on ``axis``):
    ``c' = f * c + i * activate(g)``, ``h' = o * activate(c')`` with ``i, f, o``
    through ``gate``.  ``gate`` and ``activate`` are called as ``fn(x, name=...)``;
    nodes are named ``prefix + 'slice'``, ``'i'``, ``'f'``, ``'c'``, ``'o'``,
    ``'state'`` and ``out_name`` (``prefix + 'out'``)."""
    gates = _slice(F, spelling.add(i2h, h2h, "plus0"), 4, f"{prefix}slice", axis)
    in_gate = gate(gates[0], name=f"{prefix}i")
    forget_gate = gate(gates[1], name=f"{prefix}f")
    in_transform = activate(gates[2], name=f"{prefix}c")
    out_gate = gate(gates[3], name=f"{prefix}o")
    next_c = F.elemwise_add(spelling.mul(forget_gate, prev_c, "mul0"),
                            spelling.mul(in_gate, in_transform, "mul1"), name=f"{prefix}state")
    next_h = F.elemwise_mul(out_gate, spelling.apply(activate, next_c, "activation0"),
                            name=out_name or f"{prefix}out")
    return next_h, next_c


def gru_step(F: Any, spelling: Spelling, i2h: Any, h2h: Any, prev_h: Any, prefix: str,
             activate: Callable[..., Any], *, out_name: str | None = None,
             axis: int | None = None) -> Any:
    """``next_h`` of a GRU step from the projections ``i2h`` and ``h2h`` (reset,
    update, new stacked on ``axis``): ``r, z = sigmoid(..)``,
    ``n = activate(i2h_n + r * h2h_n)``, ``h' = (1 - z) * n + z * h``.  Nodes are
    named ``prefix + 'i2h_slice'``, ``'h2h_slice'``, ``'r_act'``, ``'z_act'``,
    ``'h_act'`` and ``out_name`` (``prefix + 'out'``)."""
    i2h_r, i2h_z, i2h = _slice(F, i2h, 3, f"{prefix}i2h_slice", axis)
    h2h_r, h2h_z, h2h = _slice(F, h2h, 3, f"{prefix}h2h_slice", axis)
    reset = F.Activation(spelling.add(i2h_r, h2h_r, "plus0"), act_type="sigmoid",
                         name=f"{prefix}r_act")
    update = F.Activation(spelling.add(i2h_z, h2h_z, "plus1"), act_type="sigmoid",
                          name=f"{prefix}z_act")
    candidate = activate(spelling.add(i2h, spelling.mul(reset, h2h, "mul0"), "plus2"),
                         name=f"{prefix}h_act")
    # "mul20" is MXNet's own name for this node
    return F.elemwise_add(spelling.mul(spelling.one_minus(update), candidate, "mul1"),
                          spelling.mul(update, prev_h, "mul20"),
                          name=out_name or f"{prefix}out")


def zoneout(F: Any, output: Any, states: list[Any], prev_output: Any, prev_states: list[Any],
            p_outputs: float, p_states: float) -> tuple[Any, list[Any]]:
    """Zoneout (Krueger et al., 2016): each element of the new ``output`` and
    ``states`` keeps its previous value with probability ``p_outputs`` /
    ``p_states`` (a ``Dropout`` mask, so only in training)."""

    def keep_new(p: float, like: Any) -> Any:
        return F.Dropout(F.ones_like(like), p=p)

    if p_outputs != 0:
        output = F.where(keep_new(p_outputs, output), output, prev_output)
    if p_states != 0:
        states = [F.where(keep_new(p_states, new), new, old)
                  for new, old in zip(states, prev_states)]
    return output, states
