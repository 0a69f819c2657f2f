"""Gluon's recurrent cells: one time step as a (Hybrid)Block, and ``unroll`` over a
sequence, on NDArrays or Symbols.

Parameters are MXNet's (``i2h_weight``, ``h2h_weight``, ``i2h_bias``,
``h2h_bias``, gates stacked along the rows), with the input size inferred on
first use when ``input_size`` is 0.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ... import ndarray, symbol
from ..._errors import DagnetError
from ..._recurrent_step import NamedElemwiseSpelling, gru_step, lstm_step, zoneout
from ..block import Block, HybridBlock

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell", "RecurrentCellError"]

_TENSORS = (symbol.Symbol, ndarray.NDArray)


class RecurrentCellError(DagnetError, ValueError):
    """A recurrent cell was built or used in a way it does not support."""


def format_sequence(length: int | None, inputs: Any, layout: str, merge: bool | None,
                    in_layout: str | None = None) -> tuple[Any, int, Any, int]:
    """``(inputs, time_axis, F, batch_size)``: the inputs as one tensor with time on
    ``layout``'s ``T`` axis (``merge=True``), as a per-step list (``merge=False``) or
    as given (None); ``F`` is ``mx.nd`` or ``mx.sym``; ``batch_size`` is 0 for
    symbols."""
    if inputs is None:
        raise RecurrentCellError("unroll needs inputs: one tensor laid out as `layout`, or a "
                                 "list with one tensor per step")
    axis, batch_axis = layout.find("T"), layout.find("N")
    if axis < 0 or batch_axis < 0:
        raise RecurrentCellError(f"layout {layout!r} must name a time axis 'T' and a batch "
                                 f"axis 'N' (as 'NTC' or 'TNC')")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    batch_size = 0
    if isinstance(inputs, symbol.Symbol):
        F = symbol
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise RecurrentCellError("unroll takes one Symbol or a list of Symbols, not "
                                         "a grouped Symbol: pass list(inputs)")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    elif isinstance(inputs, ndarray.NDArray):
        F = ndarray
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            steps = inputs.shape[in_axis]
            if length is not None and length != steps:
                raise RecurrentCellError(f"unroll(length={length}) got inputs with {steps} "
                                         f"steps on axis {in_axis}")
            parts = ndarray.split(inputs, axis=in_axis, num_outputs=steps, squeeze_axis=1)
            inputs = [parts] if isinstance(parts, ndarray.NDArray) else list(parts)
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise RecurrentCellError(f"unroll(length={length}) got {len(inputs)} inputs")
        if isinstance(inputs[0], symbol.Symbol):
            F = symbol
        else:
            F = ndarray
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, _TENSORS) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _time_mask(F: Any, length: int, valid_length: Any, time_axis: int, like: Any) -> Any:
    """1 where step ``t`` < ``valid_length[n]``, else 0, shaped to broadcast against
    ``like`` (time on ``time_axis``, batch on the other of the first two axes)."""
    steps = F.arange(length, dtype="float32")
    valid = F.cast(valid_length, dtype="float32")
    if time_axis == 0:
        mask = F.broadcast_lesser(steps.reshape((length, 1)), valid.reshape((1, -1)))
    else:
        mask = F.broadcast_lesser(steps.reshape((1, length)), valid.reshape((-1, 1)))
    return F.expand_dims(mask, axis=2)


def mask_sequence(F: Any, data: Any, length: int, valid_length: Any, time_axis: int,
                  merge: bool) -> Any:
    """``data`` with the steps at or after each sequence's ``valid_length`` zeroed."""
    if not isinstance(data, _TENSORS):
        data = F.stack(*data, axis=time_axis)
    mask = _time_mask(F, length, valid_length, time_axis, data)
    out = F.broadcast_mul(data, F.cast(mask, dtype="float32"))
    if not merge:
        parts = F.split(out, num_outputs=length, axis=time_axis, squeeze_axis=True)
        out = [parts] if length == 1 and F is ndarray else list(parts)
    return out


def _last_valid(F: Any, stacked: Any, length: int, valid_length: Any) -> Any:
    """From ``stacked`` (time first), each sequence's entry at ``valid_length - 1``."""
    pick = F.one_hot(F.cast(valid_length, dtype="float32") - 1, depth=length)  # (N, T)
    weights = F.expand_dims(F.transpose(pick), axis=2)  # (T, N, 1)
    return F.sum(F.broadcast_mul(stacked, weights), axis=0)


def reverse_sequences(sequences: list[Any], length: int, valid_length: Any = None
                      ) -> list[Any]:
    """The per-step list reversed; with ``valid_length`` each sequence's valid steps
    are reversed in place and its padding stays at the end."""
    F = symbol if isinstance(sequences[0], symbol.Symbol) else ndarray
    if valid_length is None:
        return list(reversed(sequences))
    stacked = F.stack(*sequences, axis=0)  # (T, N, C)
    steps = F.arange(length, dtype="float32").reshape((length, 1))
    valid = F.cast(valid_length, dtype="float32").reshape((1, -1))
    # the step each output step reads: valid - 1 - t inside the sequence, t in the padding
    inside = F.broadcast_lesser(steps, valid)
    source = F.broadcast_add(F.broadcast_mul(inside, F.broadcast_sub(valid - 1, steps * 2)),
                             steps)  # (T, N)
    onehot = F.one_hot(F.transpose(source), depth=length)  # (N, T_out, T_in)
    batch_major = F.transpose(stacked, axes=(1, 0, 2))  # (N, T_in, C)
    out = F.transpose(F.batch_dot(onehot, batch_major), axes=(1, 0, 2))  # (T_out, N, C)
    parts = F.split(out, num_outputs=length, axis=0, squeeze_axis=True)
    return [parts] if length == 1 and F is ndarray else list(parts)


def _begin_state(cell: RecurrentCell, F: Any, begin_state: Any, inputs: Any,
                 batch_size: int) -> list[Any]:
    if begin_state is not None:
        return begin_state
    if F is ndarray:
        ctx = inputs.context if isinstance(inputs, ndarray.NDArray) else inputs[0].context
        with ctx:
            return cell.begin_state(func=ndarray.zeros, batch_size=batch_size)
    return cell.begin_state(func=symbol.zeros, batch_size=batch_size)


class RecurrentCell(Block):
    """The base of the recurrent cells.  A subclass defines ``state_info`` and the
    step (``forward``, or ``hybrid_forward`` for a :class:`HybridRecurrentCell`)."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Restart step and state numbering, before unrolling again."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        """Shape and ``__layout__`` of each state for ``batch_size``."""
        raise NotImplementedError(f"{type(self).__name__} must define state_info")

    def _check_unmodified(self) -> None:
        if self._modified:
            raise RecurrentCellError(
                f"{self.name} is wrapped by a modifier cell (ZoneoutCell, ResidualCell, ...): "
                f"call the modifier, not the cell inside")

    def begin_state(self, batch_size: int = 0, func: Callable[..., Any] = ndarray.zeros,
                    **kwargs: Any) -> list[Any]:
        """The first step's states, ``func(name=..., shape=..., **kwargs)`` each
        (``mx.nd.zeros`` by default; ``mx.sym.zeros`` or ``mx.sym.var`` for graphs)."""
        self._check_unmodified()
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {}, **kwargs)
            if func in (ndarray.zeros, ndarray.ones, ndarray.empty, ndarray.full):
                info.pop("__layout__", None)  # array creation takes no name or layout
                states.append(func(**info))
                continue
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **info))
        return states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None
               ) -> tuple[Any, list[Any]]:
        """Run ``length`` steps over ``inputs`` (one tensor laid out as ``layout``, or a
        list of per-step tensors).  Outputs come merged (``merge_outputs=True``), as a
        list (False) or as is cheaper (None); with ``valid_length`` (one length per
        sequence) outputs past each length are zero and the states are those of each
        sequence's last valid step.  Returns ``(outputs, states)``."""
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        states = _begin_state(self, F, begin_state, inputs, batch_size)
        outputs, every_state = [], []
        for step in range(length):
            output, states = self(inputs[step], states)
            outputs.append(output)
            if valid_length is not None:
                every_state.append(states)
        if valid_length is not None:
            states = [_last_valid(F, F.stack(*per_step, axis=0), length, valid_length)
                      for per_step in zip(*every_state)]
            outputs = mask_sequence(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F: Any, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                "softsign": F.softsign}.get(activation) if isinstance(activation, str) else None
        if func is not None:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, Block):
            return activation(inputs)
        return activation(inputs, **kwargs)

    def forward(self, inputs: Any, states: Any) -> Any:
        """One step: ``(output, new_states)``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell written as ``hybrid_forward(F, inputs, states, **params)``."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward")


class _GatedCell(HybridRecurrentCell):
    """Shared part of RNN/LSTM/GRU cells: ``gates * hidden_size`` rows of weights and the
    step's two fully connected maps; a subclass defines the step from them
    (``_step_from``)."""

    _gates = 1

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(rows, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(rows, hidden_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        return f"{type(self).__name__}({shape[1] or None} -> {shape[0]})"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any,
                       h2h_weight: Any, i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = f"t{self._counter}_"
        rows = self._gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows,
                               name=f"{prefix}i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias,
                               num_hidden=rows, name=f"{prefix}h2h")
        return self._step_from(F, i2h, h2h, states, prefix)

    def _step_from(self, F: Any, i2h: Any, h2h: Any, states: Any, prefix: str) -> Any:
        """``(output, new_states)`` from the step's projections ``i2h`` and ``h2h``; its
        nodes are named ``prefix + ...``."""
        raise NotImplementedError(f"{type(self).__name__} must define _step_from")


class RNNCell(_GatedCell):
    """Elman cell: ``h' = activation(W_i x + b_i + W_h h + b_h)``."""

    def __init__(self, hidden_size: int, activation: Any = "tanh",
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 input_size: int = 0, prefix: str | None = None, params: Any = None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self) -> str:
        return "rnn"

    def _step_from(self, F: Any, i2h: Any, h2h: Any, states: Any, prefix: str) -> Any:
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, name=f"{prefix}plus0"),
                                      self._activation, name=f"{prefix}out")
        return output, [output]


class LSTMCell(_GatedCell):
    """LSTM cell, gates stacked input, forget, cell, output; ``activation`` for the
    cell input and state, ``recurrent_activation`` for the gates."""

    _gates = 4

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}] * 2

    def _alias(self) -> str:
        return "lstm"

    def _step_from(self, F: Any, i2h: Any, h2h: Any, states: Any, prefix: str) -> Any:
        gate = functools.partial(self._get_activation, F, activation=self._recurrent_activation)
        activate = functools.partial(self._get_activation, F, activation=self._activation)
        next_h, next_c = lstm_step(F, NamedElemwiseSpelling(F, prefix), i2h, h2h, states[1],
                                   prefix, gate, activate)
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """GRU cell, gates stacked reset, update, new:
    ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``."""

    _gates = 3

    def _alias(self) -> str:
        return "gru"

    def _step_from(self, F: Any, i2h: Any, h2h: Any, states: Any, prefix: str) -> Any:
        next_h = gru_step(F, NamedElemwiseSpelling(F, prefix), i2h, h2h, states[0], prefix,
                          functools.partial(F.Activation, act_type="tanh"))
        return next_h, [next_h]


class _StackMixin:
    """What the two sequential containers share."""

    def add(self, cell: RecurrentCell) -> None:
        """Append ``cell`` on top of the stack."""
        self.register_child(cell)

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return [i for cell in self._children.values() for i in cell.state_info(batch_size)]

    def begin_state(self, **kwargs: Any) -> list[Any]:
        self._check_unmodified()
        return [s for cell in self._children.values() for s in cell.begin_state(**kwargs)]

    def _step(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        self._counter += 1
        next_states: list[Any] = []
        p = 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise RecurrentCellError("a stack holding a BidirectionalCell cannot be "
                                         "stepped; use unroll")
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, _, F, batch_size = format_sequence(length, inputs, layout, None)
        begin_state = _begin_state(self, F, begin_state, inputs, batch_size)
        last = len(self._children) - 1
        p = 0
        next_states: list[Any] = []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n],
                                         layout=layout,
                                         merge_outputs=merge_outputs if i == last else None,
                                         valid_length=valid_length)
            p += n
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i: int) -> RecurrentCell:
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)

    def __repr__(self) -> str:
        body = "\n".join(f"  ({i}): {cell!r}" for i, cell in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """Cells stacked: each step's output feeds the next cell."""

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        return self._step(inputs, states)


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """A hybridizable stack of hybrid cells."""

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        return self._step(inputs, states)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        return self._step(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the values passing through (``axes``: share one draw along them)."""

    def __init__(self, rate: float, axes: tuple = (), prefix: str | None = None,
                 params: Any = None):
        super().__init__(prefix, params)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise RecurrentCellError(f"DropoutCell: rate must be a number, got {rate!r}")
        self._rate = rate
        self._axes = axes

    def __repr__(self) -> str:
        return f"DropoutCell(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return []

    def _alias(self) -> str:
        return "dropout"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, _, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, _TENSORS):
            return self.hybrid_forward(F, inputs, begin_state or [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """A cell wrapping another to change what it computes; the wrapped cell is then
    used only through the wrapper (a cell is wrapped at most once)."""

    def __init__(self, base_cell: RecurrentCell):
        if base_cell._modified:
            raise RecurrentCellError(f"cell {base_cell.name} is already wrapped by a modifier "
                                     f"cell; a cell can be modified once")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self) -> Any:
        return self.base_cell.params

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func: Callable[..., Any] = symbol.zeros, **kwargs: Any) -> list[Any]:
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_cell!r})"


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016): in training each output and state element keeps
    its previous value with probability ``zoneout_outputs`` / ``zoneout_states``."""

    def __init__(self, base_cell: RecurrentCell, zoneout_outputs: float = 0.0,
                 zoneout_states: float = 0.0):
        if isinstance(base_cell, BidirectionalCell):
            raise RecurrentCellError("ZoneoutCell cannot wrap a BidirectionalCell (it cannot "
                                     "be stepped); wrap the cells inside it instead")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self) -> str:
        return (f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")

    def _alias(self) -> str:
        return "zoneout"

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        next_output, next_states = self.base_cell(inputs, states)
        prev = self._prev_output if self._prev_output is not None else F.zeros_like(next_output)
        output, next_states = zoneout(F, next_output, next_states, prev, states,
                                      self.zoneout_outputs, self.zoneout_states)
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds each step's input to the wrapped cell's output (Wu et al., 2016)."""

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd"), states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, _TENSORS)
        inputs, axis, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = mask_sequence(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(o, i) for o, i in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """``l_cell`` forward and ``r_cell`` backward over the sequence, outputs
    concatenated per step; it is only unrolled, never stepped."""

    def __init__(self, l_cell: RecurrentCell, r_cell: RecurrentCell,
                 output_prefix: str = "bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs: Any, states: Any) -> Any:
        raise RecurrentCellError("BidirectionalCell cannot be stepped; use unroll")

    def __repr__(self) -> str:
        return (f"BidirectionalCell(forward={self._children['l_cell']!r}, "
                f"backward={self._children['r_cell']!r})")

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return [i for cell in self._children.values() for i in cell.state_info(batch_size)]

    def begin_state(self, **kwargs: Any) -> list[Any]:
        self._check_unmodified()
        return [s for cell in self._children.values() for s in cell.begin_state(**kwargs)]

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        reversed_inputs = reverse_sequences(inputs, length, valid_length)
        states = _begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_out, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left],
                                        layout=layout, merge_outputs=merge_outputs,
                                        valid_length=valid_length)
        r_out, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                        begin_state=states[n_left:], layout=layout,
                                        merge_outputs=False, valid_length=valid_length)
        r_out = reverse_sequences(r_out, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, _TENSORS)
            l_out, _, _, _ = format_sequence(None, l_out, layout, merge_outputs)
            r_out, _, _, _ = format_sequence(None, r_out, layout, merge_outputs)
        if merge_outputs:
            if not isinstance(r_out, _TENSORS):
                r_out = F.stack(*r_out, axis=axis)
            outputs = F.concat(l_out, r_out, dim=2, name=f"{self._output_prefix}out")
        else:
            outputs = [F.concat(lo, ro, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (lo, ro) in enumerate(zip(l_out, r_out))]
        if valid_length is not None:
            outputs = mask_sequence(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states
