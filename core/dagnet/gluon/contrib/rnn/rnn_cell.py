"""The contributed recurrent cells of MXNet 1.x's ``gluon.contrib.rnn``, and
:func:`dynamic_unroll`, which runs a cell as one ``foreach`` loop."""

from __future__ import annotations

import functools
from typing import Any

from .... import ndarray, symbol
from ...._recurrent_step import ElemwiseSpelling, lstm_step
from ...rnn import BidirectionalCell, HybridRecurrentCell, ModifierCell, RecurrentCellError
from ...rnn.rnn_cell import format_sequence, mask_sequence

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


def _has_bidirectional(cell: Any) -> bool:
    return isinstance(cell, BidirectionalCell) or any(
        _has_bidirectional(child) for child in cell._children.values())


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal & Ghahramani, 2016) around ``base_cell``: the inputs, the
    first state and the outputs each get one dropout mask (rates ``drop_inputs``,
    ``drop_states``, ``drop_outputs``; 0 turns one off), drawn at the first step and kept
    for every step until :meth:`reset` (``unroll`` resets).  When stepping by hand, call
    ``reset()`` between sequences."""

    def __init__(self, base_cell: Any, drop_inputs: float = 0.0, drop_states: float = 0.0,
                 drop_outputs: float = 0.0):
        if drop_states and _has_bidirectional(base_cell):
            raise RecurrentCellError(
                "VariationalDropoutCell cannot drop the states of a bidirectional cell; wrap "
                "the cells inside the BidirectionalCell instead")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self._masks: dict[str, Any] = {}

    def _alias(self) -> str:
        return "vardrop"

    def reset(self) -> None:
        super().reset()
        self._masks = {}

    def _mask(self, F: Any, kind: str, rate: float, like: Any) -> Any:
        if kind not in self._masks:
            self._masks[kind] = F.Dropout(F.ones_like(like), p=rate)
        return self._masks[kind]

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self._mask(F, "states", self.drop_states, states[0])
        if self.drop_inputs:
            inputs = inputs * self._mask(F, "inputs", self.drop_inputs, inputs)
        output, states = self.base_cell(inputs, states)
        if self.drop_outputs:
            output = output * self._mask(F, "outputs", self.drop_outputs, output)
        return output, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None
               ) -> tuple[Any, list[Any]]:
        """As :meth:`RecurrentCell.unroll`; without state dropout the input and output masks
        are applied to the whole sequence at once (dropout shared along the time axis)."""
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length)
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, True)
        if begin_state is None:
            self.base_cell._modified = False
            try:
                if F is ndarray:
                    with inputs.context:
                        begin_state = self.base_cell.begin_state(func=ndarray.zeros,
                                                                 batch_size=batch_size)
                else:
                    begin_state = self.base_cell.begin_state(func=symbol.zeros,
                                                             batch_size=batch_size)
            finally:
                self.base_cell._modified = True
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, begin_state, layout,
                                                    merge_outputs=True,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        if merge_outputs is None:
            merge_outputs = True
        outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = mask_sequence(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, states

    def __repr__(self) -> str:
        return (f"VariationalDropoutCell(p_out = {self.drop_outputs}, p_state = "
                f"{self.drop_states})")


class LSTMPCell(HybridRecurrentCell):
    """LSTM with a projected recurrent state (Sak et al., 2014): the gates read the input and
    ``r``, the projection ``r = W_hr h`` (``projection_size`` units, no bias) of the hidden
    state ``h = o * tanh(c)``.  States: ``[r, c]``; the output is ``r``."""

    def __init__(self, hidden_size: int, projection_size: int,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 h2r_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        rows = 4 * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(rows, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(rows, projection_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "lstmp"

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        return (f"LSTMPCell({shape[1] if shape[1] else None} -> {shape[0]} -> "
                f"{self.h2r_weight.shape[0]})")

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any,
                       h2h_weight: Any, h2r_weight: Any, i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = f"t{self._counter}_"
        rows = 4 * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows,
                               name=f"{prefix}i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias,
                               num_hidden=rows, name=f"{prefix}h2h")
        hidden, next_c = lstm_step(F, ElemwiseSpelling(F), i2h, h2h, states[1], prefix,
                                   functools.partial(F.Activation, act_type="sigmoid"),
                                   functools.partial(F.Activation, act_type="tanh"),
                                   out_name=f"{prefix}hidden")
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size,
                                  weight=h2r_weight, no_bias=True, name=f"{prefix}out")
        return next_r, [next_r, next_c]


def dynamic_unroll(cell: Any, inputs: Any, begin_state: Any, drop_inputs: float = 0.0,
                   drop_outputs: float = 0.0, layout: str = "TNC", valid_length: Any = None
                   ) -> tuple[Any, Any]:
    """Run ``cell`` over every step of ``inputs`` as one ``contrib.foreach`` loop, so a
    hybridized block holds a single loop node whatever the sequence length (``unroll``
    writes out one copy of the cell per step instead).

    ``inputs`` is one NDArray or Symbol laid out as ``layout`` (``TNC`` or ``NTC``; time-major
    is cheaper) or a list of per-step tensors; ``begin_state`` the cell's initial states.
    ``drop_inputs`` / ``drop_outputs`` are dropout rates with one mask per sequence, shared by
    every step (0 turns one off).  With ``valid_length`` (one length per sequence, shape
    ``(batch,)``, each at most the sequence length) the outputs past each length are zero
    and the states are those after each sequence's last valid step.

    Returns ``(outputs, states)``: the outputs merged into one tensor laid out as ``layout``,
    the states as the cell gives them."""
    inputs, axis, F, _ = format_sequence(None, inputs, layout, True)
    if axis != 0:  # foreach loops over axis 0
        inputs = F.swapaxes(inputs, dim1=0, dim2=axis)
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(0,))
    states = begin_state
    if valid_length is None:
        def step(data: Any, states: Any) -> Any:
            return cell(data, states)
    else:
        # the step number rides along as one more state; a sequence keeps its states once
        # the step number reaches its length
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        states.append(F.zeros((1,)))

        def step(data: Any, states: Any) -> Any:
            cell_states, number = states[:-1], states[-1]
            output, new_states = cell(data, cell_states)
            still = F.broadcast_greater(valid_length, number)
            kept = [F.where(still, new, old) for new, old in zip(new_states, cell_states)]
            return output, kept + [number + 1]

    outputs, states = F.contrib.foreach(step, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(0,))
    if axis != 0:
        outputs = F.swapaxes(outputs, dim1=0, dim2=axis)
    if valid_length is None:
        return outputs, states
    outputs = F.SequenceMask(outputs, sequence_length=valid_length, use_sequence_length=True,
                             axis=axis)
    return outputs, states[:-1]
