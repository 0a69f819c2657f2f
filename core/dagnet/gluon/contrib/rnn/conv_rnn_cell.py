"""Convolutional recurrent cells (Shi et al., 2015): RNN, LSTM and GRU cells whose
input-to-hidden and hidden-to-hidden maps are convolutions, in 1, 2 and 3 dimensions
(``Conv2DLSTMCell`` ...).  The state keeps the spatial shape the input convolution gives
(the hidden-to-hidden kernel is odd and padded to preserve it)."""

from __future__ import annotations

import functools
from numbers import Number
from typing import Any

from ...._recurrent_step import ElemwiseSpelling, gru_step, lstm_step
from ...rnn import HybridRecurrentCell, RecurrentCellError

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
           "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell",
           "Conv3DGRUCell"]


def _per_axis(value: Any, dims: int, what: str) -> tuple:
    if isinstance(value, Number):
        return (int(value),) * dims
    value = tuple(value)
    if len(value) != dims:
        raise RecurrentCellError(f"for {dims}-D convolution, {what} must be an int or a tuple "
                                 f"of {dims}, got {value}")
    return value


class _ConvCell(HybridRecurrentCell):
    """The shared part: parameters, shapes and the two convolutions of a step.  A subclass
    names its gates (``_gates``) and defines the step from ``i2h`` and ``h2h``
    (``_step_from``)."""

    _gates: tuple[str, ...] = ("",)
    _states = 1

    def __init__(self, input_shape: Any, hidden_channels: int, i2h_kernel: Any,
                 h2h_kernel: Any, i2h_pad: Any, i2h_dilate: Any, h2h_dilate: Any,
                 i2h_weight_initializer: Any, h2h_weight_initializer: Any,
                 i2h_bias_initializer: Any, h2h_bias_initializer: Any, dims: int,
                 conv_layout: str, activation: Any, prefix: str | None, params: Any):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels = hidden_channels
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        self._i2h_kernel = _per_axis(i2h_kernel, dims, "i2h_kernel")
        self._i2h_pad = _per_axis(i2h_pad, dims, "i2h_pad")
        self._i2h_dilate = _per_axis(i2h_dilate, dims, "i2h_dilate")
        self._h2h_kernel = _per_axis(h2h_kernel, dims, "h2h_kernel")
        self._h2h_dilate = _per_axis(h2h_dilate, dims, "h2h_dilate")
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise RecurrentCellError(f"h2h_kernel must be odd on every axis (the state keeps "
                                     f"its shape), got {h2h_kernel}")
        if len(self._input_shape) != dims + 1 or conv_layout.find("N") != 0 or \
                len(conv_layout) != dims + 2:
            raise RecurrentCellError(f"input_shape {self._input_shape} and conv_layout "
                                     f"{conv_layout!r} must describe one {dims}-D sample "
                                     f"(channels and {dims} spatial sizes)")
        self._stride = (1,) * dims
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        self._channel_axis = conv_layout.find("C")
        first = self._channel_axis == 1
        in_channels = self._input_shape[0 if first else -1]
        sizes = self._input_shape[1:] if first else self._input_shape[:-1]
        out = tuple(s + 2 * p - d * (k - 1) if s else 0 for s, k, p, d in
                    zip(sizes, self._i2h_kernel, self._i2h_pad, self._i2h_dilate))
        rows = hidden_channels * len(self._gates)
        if first:
            i2h_shape = (rows, in_channels, *self._i2h_kernel)
            h2h_shape = (rows, hidden_channels, *self._h2h_kernel)
            self._state_shape = (hidden_channels, *out)
        else:
            i2h_shape = (rows, *self._i2h_kernel, in_channels)
            h2h_shape = (rows, *self._h2h_kernel, hidden_channels)
            self._state_shape = (*out, hidden_channels)
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        info = {"shape": (batch_size, *self._state_shape), "__layout__": self._conv_layout}
        return [dict(info) for _ in range(self._states)]

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        channels = shape[1 if self._channel_axis == 1 else -1]
        return (f"{type(self).__name__}({channels if channels else None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any,
                       h2h_weight: Any, i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = f"t{self._counter}_"
        filters = self._hidden_channels * len(self._gates)
        i2h = F.Convolution(data=inputs, weight=i2h_weight, bias=i2h_bias, num_filter=filters,
                            kernel=self._i2h_kernel, stride=self._stride, pad=self._i2h_pad,
                            dilate=self._i2h_dilate, layout=self._conv_layout,
                            name=f"{prefix}i2h")
        h2h = F.Convolution(data=states[0], weight=h2h_weight, bias=h2h_bias,
                            num_filter=filters, kernel=self._h2h_kernel, stride=self._stride,
                            pad=self._h2h_pad, dilate=self._h2h_dilate,
                            layout=self._conv_layout, name=f"{prefix}h2h")
        return self._step_from(F, i2h, h2h, states, prefix)

    def _step_from(self, F: Any, i2h: Any, h2h: Any, states: Any, prefix: str) -> Any:
        """``(output, new_states)`` from the step's convolutions ``i2h`` and ``h2h``; its
        nodes are named ``prefix + ...``."""
        raise NotImplementedError(f"{type(self).__name__} must define _step_from")

    def _activate(self, F: Any) -> functools.partial:
        """The cell's ``activation`` as ``fn(x, name=...)``."""
        return functools.partial(self._get_activation, F, activation=self._activation)


class _ConvRNN(_ConvCell):
    def _alias(self) -> str:
        return "conv_rnn"

    def _step_from(self, F: Any, i2h: Any, h2h: Any, states: Any, prefix: str) -> Any:
        output = self._get_activation(F, F.elemwise_add(i2h, h2h), self._activation,
                                      name=f"{prefix}out")
        return output, [output]


class _ConvLSTM(_ConvCell):
    _gates = ("_i", "_f", "_c", "_o")
    _states = 2

    def _alias(self) -> str:
        return "conv_lstm"

    def _step_from(self, F: Any, i2h: Any, h2h: Any, states: Any, prefix: str) -> Any:
        next_h, next_c = lstm_step(F, ElemwiseSpelling(F), i2h, h2h, states[1], prefix,
                                   functools.partial(F.Activation, act_type="sigmoid"),
                                   self._activate(F), axis=self._channel_axis)
        return next_h, [next_h, next_c]


class _ConvGRU(_ConvCell):
    _gates = ("_r", "_z", "_o")

    def _alias(self) -> str:
        return "conv_gru"

    def _step_from(self, F: Any, i2h: Any, h2h: Any, states: Any, prefix: str) -> Any:
        next_h = gru_step(F, ElemwiseSpelling(F), i2h, h2h, states[0], prefix,
                          self._activate(F), axis=self._channel_axis)
        return next_h, [next_h]


_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_KINDS = {"RNN": (_ConvRNN, "Elman (``h' = act(i2h(x) + h2h(h))``)"),
          "LSTM": (_ConvLSTM, "LSTM (gates input, forget, cell, output; states ``[h, c]``)"),
          "GRU": (_ConvGRU, "GRU (gates reset, update, new)")}


def _cell_class(dims: int, kind: str) -> type:
    base, what = _KINDS[kind]
    ones, zeros = (1,) * dims, (0,) * dims

    def __init__(self: Any, input_shape: Any, hidden_channels: int, i2h_kernel: Any,
                 h2h_kernel: Any, i2h_pad: Any = zeros, i2h_dilate: Any = ones,
                 h2h_dilate: Any = ones, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", conv_layout: str = _LAYOUTS[dims],
                 activation: Any = "tanh", prefix: str | None = None,
                 params: Any = None) -> None:
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                      i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                      i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout,
                      activation, prefix, params)

    name = f"Conv{dims}D{kind}Cell"
    doc = (f"{dims}-D convolutional {what} cell: ``{name}(input_shape, hidden_channels, "
           f"i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate, initializers..., "
           f"conv_layout={_LAYOUTS[dims]!r}, activation='tanh')``; ``input_shape`` is one "
           f"sample's (channels, *spatial) (0 for sizes inferred at the first call).")
    return type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


Conv1DRNNCell = _cell_class(1, "RNN")
Conv2DRNNCell = _cell_class(2, "RNN")
Conv3DRNNCell = _cell_class(3, "RNN")
Conv1DLSTMCell = _cell_class(1, "LSTM")
Conv2DLSTMCell = _cell_class(2, "LSTM")
Conv3DLSTMCell = _cell_class(3, "LSTM")
Conv1DGRUCell = _cell_class(1, "GRU")
Conv2DGRUCell = _cell_class(2, "GRU")
Conv3DGRUCell = _cell_class(3, "GRU")
