"""Gluon's recurrent layers: ``RNN``, ``LSTM`` and ``GRU`` over whole sequences, all
layers and directions in one fused ``RNN`` operator call."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ... import ndarray, symbol
from ..block import HybridBlock
from . import rnn_cell
from .rnn_cell import RecurrentCellError

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_PARAM_NAME = re.compile(r"(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z")


class _RNNLayer(HybridBlock):
    """The shared machinery of RNN, LSTM and GRU: per layer and direction ``d``
    (``l`` forward, ``r`` backward) the parameters ``<d><layer>_i2h_weight``,
    ``_h2h_weight``, ``_i2h_bias``, ``_h2h_bias`` (and an LSTM's projection
    ``_h2r_weight``), concatenated into the fused operator's flat vector at each
    call."""

    def __init__(self, hidden_size: int, num_layers: int, layout: str, dropout: float,
                 bidirectional: bool, input_size: int, i2h_weight_initializer: Any,
                 h2h_weight_initializer: Any, i2h_bias_initializer: Any,
                 h2h_bias_initializer: Any, mode: str, projection_size: int | None = None,
                 h2r_weight_initializer: Any = None,
                 lstm_state_clip_min: float | None = None,
                 lstm_state_clip_max: float | None = None, lstm_state_clip_nan: bool = False,
                 dtype: Any = "float32", use_sequence_length: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise RecurrentCellError(f"invalid layout {layout!r}; must be 'TNC' or 'NTC'")
        if use_sequence_length:
            raise RecurrentCellError("use_sequence_length is not supported by dagnet's fused "
                                     "RNN operator; mask the outputs instead, or unroll the "
                                     "cells with valid_length")
        self._hidden_size = hidden_size
        self._projection_size = projection_size or None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = False
        self.skip_states: bool | None = None
        self._gates = _GATES[mode]
        rows, width = self._gates * hidden_size, input_size
        out = self._projection_size or hidden_size
        for layer in range(num_layers):
            for d in "lr"[:self._dir]:
                self._register_param(f"{d}{layer}_i2h_weight", (rows, width),
                                     i2h_weight_initializer, dtype)
                self._register_param(f"{d}{layer}_h2h_weight", (rows, out),
                                     h2h_weight_initializer, dtype)
                self._register_param(f"{d}{layer}_i2h_bias", (rows,), i2h_bias_initializer,
                                     dtype)
                self._register_param(f"{d}{layer}_h2h_bias", (rows,), h2h_bias_initializer,
                                     dtype)
                if self._projection_size:
                    self._register_param(f"{d}{layer}_h2r_weight", (out, hidden_size),
                                         h2r_weight_initializer, dtype)
            width = out * self._dir

    def _register_param(self, name: str, shape: tuple, init: Any, dtype: Any) -> Any:
        param = self.params.get(name, shape=shape, init=init, allow_deferred_init=True,
                                dtype=dtype)
        setattr(self, name, param)
        return param

    def __repr__(self) -> str:
        shape = self.l0_i2h_weight.shape
        text = f"{type(self).__name__}({shape[1] or None} -> {shape[0] // self._gates}, "
        text += self._layout
        if self._num_layers != 1:
            text += f", num_layers={self._num_layers}"
        if self._dropout:
            text += f", dropout={self._dropout}"
        if self._dir == 2:
            text += ", bidirectional"
        return text + ")"

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Any]:
        # saved as MXNet saves them: the names of the equivalent stack of cells
        if prefix:
            prefix += "."
        bidirectional = self._dir == 2
        out = {}
        for key, value in self._reg_params.items():
            d, layer, group, kind = _PARAM_NAME.match(key).groups()
            cell = f"{layer}.{d}_cell." if bidirectional else f"{layer}."
            out[f"{prefix}_unfused.{cell}{group}_{kind}"] = value
        for name, child in self._children.items():
            out.update(child._collect_params_with_prefix(prefix + name))
        return out

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        lead = (self._num_layers * self._dir, batch_size)
        widths = [self._projection_size or self._hidden_size, self._hidden_size]
        return [{"shape": (*lead, width), "__layout__": "LNC", "dtype": self._dtype}
                for width in widths[:2 if self._mode == "lstm" else 1]]

    def _unfuse(self) -> rnn_cell.HybridSequentialRNNCell:
        """The same network as a stack of cells sharing this layer's parameters."""
        if self._projection_size:
            raise RecurrentCellError("a projected LSTM has no unfused form in gluon.rnn")
        def make(**kwargs: Any) -> rnn_cell.RecurrentCell:
            if self._mode == "lstm":
                return rnn_cell.LSTMCell(self._hidden_size, **kwargs)
            if self._mode == "gru":
                return rnn_cell.GRUCell(self._hidden_size, **kwargs)
            return rnn_cell.RNNCell(self._hidden_size, activation=self._mode[4:], **kwargs)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            width = self._input_size
            for i in range(self._num_layers):
                kwargs = {"input_size": width,
                          "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make(prefix=f"l{i}_", **kwargs),
                                                         make(prefix=f"r{i}_", **kwargs)))
                else:
                    stack.add(make(prefix=f"l{i}_", **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                width = self._hidden_size * self._dir
        return stack

    def cast(self, dtype: Any) -> None:
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size: int = 0, func: Callable[..., Any] = ndarray.zeros,
                    **kwargs: Any) -> list[Any]:
        """The initial states (``func(name=..., shape=..., dtype=..., **kwargs)``)."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = dict(info, **kwargs)
            if func in (ndarray.zeros, ndarray.ones, ndarray.empty, ndarray.full):
                info.pop("__layout__", None)
                states.append(func(**info))
            else:
                states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    def infer_shape(self, inputs: Any, *args: Any) -> None:
        """The first layer's input size from ``inputs``' last axis; the other shapes
        follow from the sizes given at construction."""
        features = inputs.shape[-1]
        for d in "lr"[:self._dir]:
            param = getattr(self, f"{d}0_i2h_weight")
            param.shape = (param.shape[0], features)

    def __call__(self, inputs: Any, states: Any = None, sequence_length: Any = None,
                 **kwargs: Any) -> Any:
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, ndarray.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, (ndarray.NDArray, symbol.Symbol)):
            states = [states]
        return super().__call__(inputs, states, **kwargs)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, **params: Any) -> Any:
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if tuple(state.shape) != tuple(info["shape"]):
                    raise RecurrentCellError(f"Invalid recurrent state shape. Expecting "
                                             f"{info['shape']}, got {tuple(state.shape)}.")
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        groups = ("i2h", "h2h", "h2r") if self._projection_size else ("i2h", "h2h")
        order = [params[f"{d}{layer}_{group}_{kind}"]
                 for kind in ("weight", "bias") for layer in range(self._num_layers)
                 for d in "lr"[:self._dir] for group in groups
                 if f"{d}{layer}_{group}_{kind}" in params]
        flat = F._rnn_param_concat(*[p.reshape(-1) for p in order], dim=0,
                                   num_args=len(order))
        rnn = F.RNN(inputs, flat, *states, state_size=self._hidden_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    projection_size=self._projection_size,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs = rnn[0]
        states = [rnn[1], rnn[2]] if self._mode == "lstm" else [rnn[1]]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs if self.skip_states else (outputs, states)


class RNN(_RNNLayer):
    """A multi-layer Elman network, ``h' = activation(W_i x + b_i + W_h h + b_h)``
    (``activation`` ``'relu'`` or ``'tanh'``), over ``(seq, batch, features)``
    (``layout='TNC'``) or ``'NTC'`` inputs.  ``layer(x)`` returns the outputs;
    ``layer(x, states)`` returns ``(outputs, new_states)``."""

    def __init__(self, hidden_size: int, num_layers: int = 1, activation: str = "relu",
                 layout: str = "TNC", dropout: float = 0, bidirectional: bool = False,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 input_size: int = 0, dtype: Any = "float32", **kwargs: Any):
        if activation not in ("relu", "tanh"):
            raise RecurrentCellError(f"RNN: activation must be 'relu' or 'tanh', got "
                                     f"{activation!r}")
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, dtype=dtype, **kwargs)


class LSTM(_RNNLayer):
    """A multi-layer LSTM (gates input, forget, cell, output); states ``[h, c]``.
    With ``projection_size`` (LSTMP) each layer's output and recurrent state is
    ``h2r_weight @ h``.  ``state_clip_min``/``max`` clip the cell state
    (``state_clip_nan`` turns NaN into the bounds)."""

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, input_size: int = 0,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 projection_size: int | None = None, h2r_weight_initializer: Any = None,
                 state_clip_min: float | None = None, state_clip_max: float | None = None,
                 state_clip_nan: bool = False, dtype: Any = "float32", **kwargs: Any):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)


class GRU(_RNNLayer):
    """A multi-layer GRU in cuDNN's form (the reset gate applied after the recurrent
    product)."""

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, input_size: int = 0,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 dtype: Any = "float32", **kwargs: Any):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", dtype=dtype, **kwargs)
