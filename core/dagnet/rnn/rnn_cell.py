"""Symbolic recurrent cells (MXNet's ``mx.rnn``): each call builds one time step of
a graph from ``mx.sym`` operators; ``unroll`` builds a whole sequence.

Names follow MXNet's, so checkpoints and symbol JSON carry over: a cell with
prefix ``p`` owns the variables ``p`` + ``i2h_weight``, ``i2h_bias``,
``h2h_weight``, ``h2h_bias``, and step ``t``'s output is named ``p`` + ``t<t>_out``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .. import ndarray, symbol
from .._errors import DagnetError
from .._recurrent_step import OperatorSpelling, gru_step, lstm_step, zoneout
from ..initializer import LSTMBias
from .fused_init import FusedRNN

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell", "RNNCellError"]


# how mx.rnn's cells write a step's in-between nodes, and their fixed activations
SPELLING = OperatorSpelling()
SIGMOID = functools.partial(symbol.Activation, act_type="sigmoid")
TANH = functools.partial(symbol.Activation, act_type="tanh")


class RNNCellError(DagnetError, ValueError):
    """A cell was built or used in a way it does not support."""


def normalize_sequence(length: int | None, inputs: Any, layout: str, merge: bool | None,
                       in_layout: str | None = None) -> tuple[Any, int]:
    """``inputs`` as one Symbol with time on ``layout``'s ``T`` axis (``merge=True``),
    as a list of per-step Symbols (``merge=False``), or as given (``None``); and that
    axis."""
    if inputs is None:
        raise RNNCellError("unroll needs inputs: create the input variables (one Symbol, or "
                           "a list with one per step) and pass them")
    axis = layout.find("T")
    if axis < 0:
        raise RNNCellError(f"layout {layout!r} has no time axis 'T' (use 'NTC' or 'TNC')")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise RNNCellError("unroll takes one Symbol (split along time) or a list of "
                                   "Symbols, not a grouped Symbol: pass list(inputs)")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise RNNCellError(f"unroll(length={length}) got {len(inputs)} input symbols")
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(x, axis=axis) for x in inputs],
                                   dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """The variables of one or more cells, by name: cells given the same RNNParams
    share their weights."""

    def __init__(self, prefix: str = ""):
        self._prefix = prefix
        self._params: dict[str, Any] = {}

    def get(self, name: str, **kwargs: Any) -> Any:
        """The variable ``prefix + name``, created (``sym.Variable(..., **kwargs)``) on
        first use."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """The base of the symbolic cells.  A subclass defines ``state_info`` and
    ``__call__(inputs, states) -> (output, new_states)`` for one step."""

    def __init__(self, prefix: str = "", params: RNNParams | None = None):
        self._own_params = params is None
        self._params = RNNParams(prefix) if params is None else params
        self._prefix = prefix
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Restart step and state numbering, before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        raise NotImplementedError(f"{type(self).__name__} cannot be stepped; use unroll")

    @property
    def params(self) -> RNNParams:
        """The cell's variables (asking for them makes them shared, not owned)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self) -> list[dict[str, Any]]:
        """Shape (0 for the batch size) and ``__layout__`` of each state."""
        raise NotImplementedError

    @property
    def state_shape(self) -> list[tuple[int, ...]]:
        """The shape of each state."""
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self) -> Sequence[str]:
        return ()

    def _check_unmodified(self) -> None:
        if self._modified:
            raise RNNCellError(
                f"{type(self).__name__} {self._prefix!r} is wrapped by a modifier cell "
                f"(ZoneoutCell, ResidualCell, ...): call the modifier, not the cell inside")

    def begin_state(self, func: Callable[..., Any] = symbol.zeros, **kwargs: Any) -> list[Any]:
        """The first step's states: ``func(name=prefix + 'begin_state_<n>', shape=...,
        __layout__=..., **kwargs)`` for each state (``sym.zeros`` by default;
        ``sym.Variable`` to feed them)."""
        self._check_unmodified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **kwargs))
        return states

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with each fused i2h/h2h weight and bias split into one per gate
        (``prefix + 'i2h_f_weight'``...), as in saved checkpoints."""
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        """The inverse of :meth:`unpack_weights`."""
        args = dict(args)
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                parts = [args.pop(f"{self._prefix}{group}{gate}_{kind}")
                         for gate in self._gate_names]
                args[f"{self._prefix}{group}_{kind}"] = ndarray.concatenate(parts)
        return args

    def unroll(self, length: int, inputs: Any, begin_state: list[Any] | None = None,
               layout: str = "NTC", merge_outputs: bool | None = None
               ) -> tuple[Any, list[Any]]:
        """Build ``length`` steps.  ``inputs`` is one Symbol laid out as ``layout``
        (``'NTC'`` or ``'TNC'``) or a list of per-step Symbols; the outputs come back
        merged into one Symbol (``merge_outputs=True``), as a list (False), or
        whichever is cheaper (None).  Returns ``(outputs, last_states)``."""
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for step in range(length):
            output, states = self(inputs[step], states)
            outputs.append(output)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _begin_step(self) -> str:
        """Count one more step; the name prefix of its nodes."""
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"

    def _get_activation(self, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class _DenseCell(BaseRNNCell):
    """What the dense cells share: the ``i2h`` and ``h2h`` fully connected maps, one
    block of ``num_hidden`` rows per gate (``_gate_names``), and one ``(N, num_hidden)``
    state unless a cell says otherwise."""

    # the order the variables are first asked for, which is their order in ``params``
    # (MXNet's: LSTMCell asks for both weights first)
    _lookup_order = ("i2h_weight", "i2h_bias", "h2h_weight", "h2h_bias")

    def __init__(self, num_hidden: int, prefix: str, params: RNNParams | None,
                 i2h_bias_init: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        inits = {} if i2h_bias_init is None else {"i2h_bias": {"init": i2h_bias_init}}
        found = {name: self.params.get(name, **inits.get(name, {}))
                 for name in self._lookup_order}
        self._iW, self._iB = found["i2h_weight"], found["i2h_bias"]
        self._hW, self._hB = found["h2h_weight"], found["h2h_bias"]

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    def _projections(self, inputs: Any, prev_h: Any, prefix: str) -> tuple[Any, Any]:
        """The step's ``i2h`` and ``h2h`` nodes, named ``prefix + 'i2h'`` and ``'h2h'``."""
        rows = self._num_hidden * len(self._gate_names)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=rows, name=f"{prefix}i2h")
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=rows, name=f"{prefix}h2h")
        return i2h, h2h


class RNNCell(_DenseCell):
    """Elman cell: ``h' = activation(W_i x + b_i + W_h h + b_h)``."""

    def __init__(self, num_hidden: int, activation: Any = "tanh", prefix: str = "rnn_",
                 params: RNNParams | None = None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("",)

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._begin_step()
        i2h, h2h = self._projections(inputs, states[0], name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(_DenseCell):
    """LSTM cell (Hochreiter & Schmidhuber, 1997), gates stacked in the order input,
    forget, cell, output; the forget gate's bias starts at ``forget_bias``."""

    _lookup_order = ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")

    def __init__(self, num_hidden: int, prefix: str = "lstm_", params: RNNParams | None = None,
                 forget_bias: float = 1.0):
        super().__init__(num_hidden, prefix, params,
                         i2h_bias_init=LSTMBias(forget_bias=forget_bias))

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [*super().state_info, *super().state_info]

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._begin_step()
        i2h, h2h = self._projections(inputs, states[0], name)
        next_h, next_c = lstm_step(symbol, SPELLING, i2h, h2h, states[1], name, SIGMOID, TANH)
        return next_h, [next_h, next_c]


class GRUCell(_DenseCell):
    """GRU cell (Cho et al., 2014), gates stacked as reset, update, new."""

    def __init__(self, num_hidden: int, prefix: str = "gru_", params: RNNParams | None = None):
        super().__init__(num_hidden, prefix, params)

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("_r", "_z", "_o")

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        name = self._begin_step()
        # MXNet names this cell's nodes t<i>__i2h ... (two underscores), and its output t<i>_out
        i2h, h2h = self._projections(inputs, states[0], f"{name}_")
        next_h = gru_step(symbol, SPELLING, i2h, h2h, states[0], f"{name}_", TANH,
                          out_name=f"{name}out")
        return next_h, [next_h]


_MODE_GATES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"),
               "gru": ("_r", "_z", "_o")}


class FusedRNNCell(BaseRNNCell):
    """All layers and directions in one ``RNN`` operator over the whole sequence, with
    every weight in the one variable ``prefix + 'parameters'`` (MXNet's flat layout:
    all weights layer by layer and direction by direction, then all biases).
    ``unfuse()`` gives the equivalent stack of step cells."""

    def __init__(self, num_hidden: int, num_layers: int = 1, mode: str = "lstm",
                 bidirectional: bool = False, dropout: float = 0.0,
                 get_next_state: bool = False, forget_bias: float = 1.0,
                 prefix: str | None = None, params: RNNParams | None = None):
        if mode not in _MODE_GATES:
            raise RNNCellError(f"FusedRNNCell: unknown mode {mode!r}; expected one of "
                               f"{', '.join(sorted(_MODE_GATES))}")
        prefix = f"{mode}_" if prefix is None else prefix
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        init = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=init)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        shape = ((self._bidirectional + 1) * self._num_layers, 0, self._num_hidden)
        return [{"shape": shape, "__layout__": "LNC"}
                for _ in range(2 if self._mode == "lstm" else 1)]

    @property
    def _gate_names(self) -> Sequence[str]:
        return _MODE_GATES[self._mode]

    def _slice_weights(self, arr: Any, num_input: int, h: int) -> dict[str, Any]:
        return slice_fused_weights(arr, self._prefix, self._num_layers, self._directions,
                                   self._gate_names, num_input, h)

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        args = dict(args)
        arr = args.pop(self._parameter.name)
        b, m, h = len(self._directions), len(self._gate_names), self._num_hidden
        num_input = arr.size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        parts = self._slice_weights(arr, num_input, h)
        args.update({name: part.copy() for name, part in parts.items()})
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        args = dict(args)
        b, m, h = len(self._directions), len(self._gate_names), self._num_hidden
        first = args[f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"]
        num_input = first.shape[1]
        total = ((num_input + h + 2) * h * m * b
                 + (self._num_layers - 1) * m * h * (h + b * h + 2) * b)
        arr = ndarray.zeros((total,), ctx=first.context, dtype=first.dtype)
        for name, part in self._slice_weights(arr, num_input, h).items():
            part[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def unroll(self, length: int, inputs: Any, begin_state: list[Any] | None = None,
               layout: str = "NTC", merge_outputs: bool | None = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for "
                          "faster speed", stacklevel=2)
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise RNNCellError(f"FusedRNNCell: unsupported layout {layout!r} (use TNC or NTC)")
        states = self.begin_state() if begin_state is None else begin_state
        named = {"state": states[0]}
        if self._mode == "lstm":
            named["state_cell"] = states[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=f"{self._prefix}rnn", **named)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n_states = 2 if self._mode == "lstm" else 1
            outputs, states = rnn[0], [rnn[i + 1] for i in range(n_states)]
            for state in states:
                state._set_attr(__layout__="LNC")
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self) -> SequentialRNNCell:
        """The same network as a :class:`SequentialRNNCell` of step cells (layer ``i``'s
        cells prefixed ``prefix + 'l<i>_'`` and ``'r<i>_'``), which can be stepped."""
        def make(cell_prefix: str) -> BaseRNNCell:
            if self._mode == "lstm":
                return LSTMCell(self._num_hidden, prefix=cell_prefix)
            if self._mode == "gru":
                return GRUCell(self._num_hidden, prefix=cell_prefix)
            return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=cell_prefix)

        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{self._prefix}l{i}_"),
                                            make(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(make(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack


def slice_fused_weights(arr: Any, prefix: str, num_layers: int, directions: Sequence[str],
                        gates: Sequence[str], num_input: int, h: int) -> dict[str, Any]:
    """Views of the flat ``RNN`` parameter vector ``arr``, by per-gate name: for each
    layer and direction the i2h then h2h weights of every gate, then likewise the
    biases."""
    b = len(directions)
    out: dict[str, Any] = {}
    p = 0
    for layer in range(num_layers):
        cols = num_input if layer == 0 else b * h
        for d in directions:
            for group, width in (("i2h", cols), ("h2h", h)):
                for gate in gates:
                    out[f"{prefix}{d}{layer}_{group}{gate}_weight"] = \
                        arr[p:p + h * width].reshape((h, width))
                    p += h * width
    for layer in range(num_layers):
        for d in directions:
            for group in ("i2h", "h2h"):
                for gate in gates:
                    out[f"{prefix}{d}{layer}_{group}{gate}_bias"] = arr[p:p + h]
                    p += h
    if p != arr.size:
        raise RNNCellError(f"the fused parameter vector {prefix}parameters has {arr.size} "
                           f"values but this cell's layout needs {p}")
    return out


class _CellGroup(BaseRNNCell):
    """What the cells holding other cells share: their states, weights and variables
    are those of the held cells, in order."""

    def __init__(self, params: RNNParams | None = None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells: list[BaseRNNCell] = []

    def _hold(self, cells: list[BaseRNNCell], owner: str) -> None:
        """Hold ``cells``; given params of its own, the ``owner`` group hands its
        variables to them, which must then not have params of their own."""
        self._cells.extend(cells)
        if self._override_cell_params:
            if not all(cell._own_params for cell in cells):
                raise RNNCellError(f"give params to the {owner} or to its cells, not both")
            for cell in cells:
                cell.params._params.update(self.params._params)
        for cell in cells:
            self.params._params.update(cell.params._params)

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, **kwargs: Any) -> list[Any]:
        self._check_unmodified()
        return [s for cell in self._cells for s in cell.begin_state(**kwargs)]

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args


class SequentialRNNCell(_CellGroup):
    """Cells stacked: each step's output feeds the next cell."""

    def add(self, cell: BaseRNNCell) -> None:
        """Append ``cell`` on top of the stack."""
        self._hold([cell], "SequentialRNNCell")

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        self._counter += 1
        next_states: list[Any] = []
        p = 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise RNNCellError("a SequentialRNNCell holding a BidirectionalCell cannot "
                                   "be stepped; use unroll")
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length: int, inputs: Any, begin_state: list[Any] | None = None,
               layout: str = "NTC", merge_outputs: bool | None = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        begin_state = self.begin_state() if begin_state is None else begin_state
        p = 0
        next_states: list[Any] = []
        last = len(self._cells) - 1
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n],
                                         layout=layout,
                                         merge_outputs=merge_outputs if i == last else None)
            p += n
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the values passing through; no state, no weights."""

    def __init__(self, dropout: float, prefix: str = "dropout_", params: RNNParams | None = None):
        super().__init__(prefix, params)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            raise RNNCellError(f"DropoutCell: dropout must be a number, got {dropout!r}")
        self.dropout = dropout

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return []

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length: int, inputs: Any, begin_state: list[Any] | None = None,
               layout: str = "NTC", merge_outputs: bool | None = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """A cell wrapping another to change what it computes; the wrapped cell is then
    used only through the wrapper."""

    def __init__(self, base_cell: BaseRNNCell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self) -> RNNParams:
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self) -> list[dict[str, Any]]:
        return self.base_cell.state_info

    def begin_state(self, init_sym: Callable[..., Any] = symbol.zeros, **kwargs: Any
                    ) -> list[Any]:
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.base_cell.pack_weights(args)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016): in training each output and state element keeps
    its previous value with probability ``zoneout_outputs`` / ``zoneout_states``."""

    def __init__(self, base_cell: BaseRNNCell, zoneout_outputs: float = 0.0,
                 zoneout_states: float = 0.0):
        if isinstance(base_cell, (FusedRNNCell, BidirectionalCell)):
            raise RNNCellError(f"ZoneoutCell cannot wrap a {type(base_cell).__name__} (it "
                               f"cannot be stepped); wrap the cells inside it instead")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self) -> None:
        super().reset()
        self.prev_output = None

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        next_output, next_states = self.base_cell(inputs, states)
        prev = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output, next_states = zoneout(symbol, next_output, next_states, prev, states,
                                      self.zoneout_outputs, self.zoneout_states)
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds each step's input to the wrapped cell's output (Wu et al., 2016)."""

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        output, states = self.base_cell(inputs, states)
        return symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual"), states

    def unroll(self, length: int, inputs: Any, begin_state: list[Any] | None = None,
               layout: str = "NTC", merge_outputs: bool | None = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            return symbol.elemwise_add(outputs, inputs,
                                       name=f"{outputs.name}_plus_residual"), states
        return [symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                for o, i in zip(outputs, inputs)], states


class BidirectionalCell(_CellGroup):
    """Two cells over the sequence, ``l_cell`` forward and ``r_cell`` backward, their
    outputs concatenated per step (named ``output_prefix + 't<i>'``)."""

    def __init__(self, l_cell: BaseRNNCell, r_cell: BaseRNNCell,
                 params: RNNParams | None = None, output_prefix: str = "bi_"):
        super().__init__(params)
        self._output_prefix = output_prefix
        self._hold([l_cell, r_cell], "BidirectionalCell")

    def unroll(self, length: int, inputs: Any, begin_state: list[Any] | None = None,
               layout: str = "NTC", merge_outputs: bool | None = None
               ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_out, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left],
                                        layout=layout, merge_outputs=merge_outputs)
        r_out, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                        begin_state=states[n_left:], layout=layout,
                                        merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, symbol.Symbol) and isinstance(r_out, symbol.Symbol)
            if not merge_outputs:
                if isinstance(l_out, symbol.Symbol):
                    l_out = list(symbol.SliceChannel(l_out, axis=axis, num_outputs=length,
                                                     squeeze_axis=1))
                if isinstance(r_out, symbol.Symbol):
                    r_out = list(symbol.SliceChannel(r_out, axis=axis, num_outputs=length,
                                                     squeeze_axis=1))
        if merge_outputs:
            outputs = symbol.Concat(l_out, symbol.reverse(r_out, axis=axis), dim=2,
                                    name=f"{self._output_prefix}out")
        else:
            outputs = [symbol.Concat(lo, ro, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (lo, ro) in enumerate(zip(l_out, reversed(r_out)))]
        return outputs, [l_states, r_states]
