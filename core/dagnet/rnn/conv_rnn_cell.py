"""Convolutional recurrent cells (Shi et al., 2015): the step's matrix products are
convolutions, so states keep the input's spatial layout."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from .. import symbol
from .._recurrent_step import gru_step, lstm_step
from .rnn_cell import SIGMOID, SPELLING, BaseRNNCell, RNNCellError, RNNParams

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_LEAKY = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Shared set-up of the convolutional cells: ``input_shape`` is one step's input
    shape (with its batch size); the state shape is what the i2h convolution makes
    of it.  The h2h convolution keeps the state's size, so its kernel must be odd."""

    def __init__(self, input_shape: Sequence[int], num_hidden: int,
                 h2h_kernel: Sequence[int], h2h_dilate: Sequence[int],
                 i2h_kernel: Sequence[int], i2h_stride: Sequence[int],
                 i2h_pad: Sequence[int], i2h_dilate: Sequence[int],
                 i2h_weight_initializer: Any, h2h_weight_initializer: Any,
                 i2h_bias_initializer: Any, h2h_bias_initializer: Any,
                 activation: Any, prefix: str = "", params: RNNParams | None = None,
                 conv_layout: str = "NCHW"):
        super().__init__(prefix=prefix, params=params)
        if any(k % 2 == 0 for k in h2h_kernel):
            raise RNNCellError(f"{type(self).__name__}: h2h_kernel must be odd in every "
                               f"dimension (the state keeps its size), got {tuple(h2h_kernel)}")
        self._h2h_kernel = tuple(h2h_kernel)
        self._h2h_dilate = tuple(h2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate, h2h_kernel))
        self._i2h_kernel = tuple(i2h_kernel)
        self._i2h_stride = tuple(i2h_stride)
        self._i2h_pad = tuple(i2h_pad)
        self._i2h_dilate = tuple(i2h_dilate)
        self._num_hidden = num_hidden
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable("data"), num_filter=num_hidden,
                                   kernel=self._i2h_kernel, stride=self._i2h_stride,
                                   pad=self._i2h_pad, dilate=self._i2h_dilate,
                                   layout=conv_layout)
        out_shape = probe.infer_shape(data=self._input_shape)[1][0]
        self._state_shape = (0,) + tuple(out_shape[1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self) -> int:
        return len(self._gate_names)

    def _activate(self, inputs: Any, **kwargs: Any) -> Any:
        return self._get_activation(inputs, self._activation, **kwargs)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def _conv_forward(self, inputs: Any, states: Any, name: str) -> tuple[Any, Any]:
        filters = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name=f"{name}i2h", data=inputs, num_filter=filters,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate,
                                 weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name=f"{name}h2h", data=states[0], num_filter=filters,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1,) * len(self._h2h_kernel),
                                 weight=self._hW, bias=self._hB, layout=self._conv_layout)
        return i2h, h2h


def _conv_defaults(prefix: str) -> dict[str, Any]:
    return {"h2h_kernel": (3, 3), "h2h_dilate": (1, 1), "i2h_kernel": (3, 3),
            "i2h_stride": (1, 1), "i2h_pad": (1, 1), "i2h_dilate": (1, 1),
            "i2h_weight_initializer": None, "h2h_weight_initializer": None,
            "i2h_bias_initializer": "zeros", "h2h_bias_initializer": "zeros",
            "activation": _LEAKY, "prefix": prefix, "params": None, "conv_layout": "NCHW"}


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional Elman cell: ``h' = activation(conv_i(x) + conv_h(h))``
    (activation: leaky ReLU with slope 0.2 unless given)."""

    def __init__(self, input_shape: Sequence[int], num_hidden: int, **kwargs: Any):
        super().__init__(input_shape, num_hidden, **{**_conv_defaults("ConvRNN_"), **kwargs})

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("",)

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._begin_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell; ``activation`` replaces tanh on the cell input and
    state."""

    def __init__(self, input_shape: Sequence[int], num_hidden: int, **kwargs: Any):
        super().__init__(input_shape, num_hidden, **{**_conv_defaults("ConvLSTM_"), **kwargs})

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("_i", "_f", "_c", "_o")

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}] * 2

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._begin_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        next_h, next_c = lstm_step(symbol, SPELLING, i2h, h2h, states[1], name, SIGMOID,
                                   self._activate, axis=self._conv_layout.find("C"))
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell; ``activation`` replaces tanh on the candidate state."""

    def __init__(self, input_shape: Sequence[int], num_hidden: int, **kwargs: Any):
        super().__init__(input_shape, num_hidden, **{**_conv_defaults("ConvGRU_"), **kwargs})

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("_r", "_z", "_o")

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._begin_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        next_h = gru_step(symbol, SPELLING, i2h, h2h, states[0], f"{name}_", self._activate,
                          out_name=f"{name}out")
        return next_h, [next_h]
