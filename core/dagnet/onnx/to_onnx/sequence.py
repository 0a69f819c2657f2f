"""Sequence operators: SequenceMask, SequenceReverse, SequenceLast and the fused
``RNN`` (LSTM, GRU, vanilla RNN; stacked, bidirectional) as ONNX recurrences."""

from __future__ import annotations

import numpy as np

from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS

INT64 = np.int64

# Gate order of MXNet's (cuDNN's) parameter layout -> the order ONNX expects.
_GATE_ORDER = {
    "lstm": (4, [0, 3, 1, 2]),   # MXNet i, f, g, o  -> ONNX i, o, f, c
    "gru": (3, [1, 0, 2]),       # MXNet r, z, n     -> ONNX z, r, h
    "rnn_tanh": (1, [0]),
    "rnn_relu": (1, [0]),
}
_ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}


def _time_mask(g: OnnxBuilder, data: str, lengths: str, axis: int, rank: int) -> str:
    """Booleans (time, batch, 1...) or (batch, time, 1...): step < the sequence's length."""
    steps = g.op("Gather", [g.shape(data), g.scalar(axis, INT64)])
    positions = g.op("Range", [g.scalar(0, INT64), steps, g.scalar(1, INT64)])
    limits = g.cast(lengths, INT64)
    if axis == 0:
        mask = g.op("Less", [g.unsqueeze(positions, [1]), g.unsqueeze(limits, [0])])
    else:
        mask = g.op("Less", [g.unsqueeze(positions, [0]), g.unsqueeze(limits, [1])])
    if rank > 2:
        mask = g.unsqueeze(mask, list(range(2, rank)))
    return mask


@EXPORTS.register("SequenceMask")
def sequence_mask(node: ExportNode, g: OnnxBuilder) -> None:
    """Where the step is past the sequence's length, the value; elsewhere the data."""
    a = node.attrs
    data, out = node.inputs[0], node.outputs[0]
    if not a.use_sequence_length:
        g.identity(data, out)
        return
    rank, dtype = node.rank(0), node.in_dtypes[0]
    mask = _time_mask(g, data, node.inputs[1], int(a.axis) % rank, rank)
    g.op("Where", [mask, data, g.scalar(np.array(a.value).astype(dtype), dtype)], [out])


@EXPORTS.register("SequenceReverse")
def sequence_reverse(node: ExportNode, g: OnnxBuilder) -> None:
    """ReverseSequence over the time axis 0 (each sequence's first length steps), or the
    whole axis reversed without lengths."""
    a = node.attrs
    data, out = node.inputs[0], node.outputs[0]
    if not a.use_sequence_length:
        g.slice(data, [-1], [np.iinfo(np.int64).min], [0], [-1], out)
        return
    g.op("ReverseSequence", [data, g.cast(node.inputs[1], INT64)], [out], batch_axis=1,
         time_axis=0)


@EXPORTS.register("SequenceLast")
def sequence_last(node: ExportNode, g: OnnxBuilder) -> None:
    """The last step of each sequence: index length - 1 (or the axis's last) along the
    time axis."""
    a = node.attrs
    rank = node.rank(0)
    axis = int(a.axis) % rank
    data, out = node.inputs[0], node.outputs[0]
    if not a.use_sequence_length:
        g.op("Gather", [data, g.scalar(-1, INT64)], [out], axis=axis)
        return
    if axis == 0:  # batch first for GatherND's batch_dims
        data = g.op("Transpose", [data], perm=[1, 0, *range(2, rank)])
    last = g.op("Sub", [g.cast(node.inputs[1], INT64), g.scalar(1, INT64)])
    g.op("GatherND", [data, g.unsqueeze(last, [1])], [out], batch_dims=1)


# RNN -----------------------------------------------------------------------------------
class _FlatParameters:
    """Reads MXNet's flat RNN parameter vector in order: every layer's and direction's
    input and recurrent weights, then their biases."""

    def __init__(self, g: OnnxBuilder, flat: str) -> None:
        self.g, self.flat, self.offset = g, flat, 0

    def take(self, rows: int, cols: int | None = None) -> str:
        size = rows * (cols or 1)
        piece = self.g.slice(self.flat, [self.offset], [self.offset + size], [0])
        self.offset += size
        return self.g.reshape(piece, [rows, cols]) if cols else piece


def _onnx_gates(g: OnnxBuilder, value: str, mode: str) -> str:
    """Rows regrouped from MXNet's gate order to ONNX's (along axis 0)."""
    gates, order = _GATE_ORDER[mode]
    if gates == 1:
        return value
    parts = g.split(value, 0, None, gates)
    return g.concat([parts[i] for i in order], 0)


@EXPORTS.register("RNN")
def rnn(node: ExportNode, g: OnnxBuilder) -> None:
    """One ONNX LSTM, GRU (linear_before_reset, as cuDNN) or RNN per layer, both
    directions in one node; weights sliced from the flat parameter vector with their
    gates reordered; each layer's (time, direction, batch, hidden) output regrouped to
    MXNet's (time, batch, direction * hidden)."""
    a = node.attrs
    mode = a.mode
    if a.projection_size or a.lstm_state_clip_min is not None or \
            a.lstm_state_clip_max is not None:
        raise node.fail("LSTM projection and state clipping have no ONNX form")
    hidden, layers = int(a.state_size), int(a.num_layers)
    directions = 2 if a.bidirectional else 1
    gates = _GATE_ORDER[mode][0]
    inputs = int(node.in_shapes[0][2])
    data, flat, state = node.inputs[0], node.inputs[1], node.inputs[2]
    cell = node.inputs[3] if mode == "lstm" else None

    reader = _FlatParameters(g, flat)
    weights = []
    for layer in range(layers):
        cols = inputs if layer == 0 else directions * hidden
        weights.append([(reader.take(gates * hidden, cols), reader.take(gates * hidden, hidden))
                        for _ in range(directions)])
    biases = [[(reader.take(gates * hidden), reader.take(gates * hidden))
               for _ in range(directions)] for _ in range(layers)]

    attrs: dict = {"hidden_size": hidden,
                   "direction": "bidirectional" if directions == 2 else "forward"}
    if mode == "gru":
        attrs["linear_before_reset"] = 1
    if mode.startswith("rnn_"):
        attrs["activations"] = ["Relu" if mode == "rnn_relu" else "Tanh"] * directions

    sequence = data
    last_hidden, last_cell = [], []
    for layer in range(layers):
        w = g.concat([g.unsqueeze(_onnx_gates(g, wx, mode), [0]) for wx, _ in weights[layer]], 0)
        r = g.concat([g.unsqueeze(_onnx_gates(g, wh, mode), [0]) for _, wh in weights[layer]], 0)
        b = g.concat([g.unsqueeze(g.concat([_onnx_gates(g, bx, mode), _onnx_gates(g, bh, mode)],
                                           0), [0]) for bx, bh in biases[layer]], 0)
        rows = [layer * directions, (layer + 1) * directions]
        h0 = g.slice(state, rows[:1], rows[1:], [0])
        step_inputs = [sequence, w, r, b, "", h0]
        if mode == "lstm":
            step_inputs.append(g.slice(cell, rows[:1], rows[1:], [0]))
        results = g.op(_ONNX_OP[mode], step_inputs, 3 if mode == "lstm" else 2, **attrs)
        y, y_h = results[0], results[1]
        last_hidden.append(y_h)
        if mode == "lstm":
            last_cell.append(results[2])
        # (time, directions, batch, hidden) -> (time, batch, directions * hidden)
        moved = g.op("Transpose", [y], perm=[0, 2, 1, 3])
        sequence = g.reshape(moved, [0, 0, directions * hidden])
    g.identity(sequence, node.outputs[0])
    if a.state_outputs:
        g.concat(last_hidden, 0, node.outputs[1]) if layers > 1 else \
            g.identity(last_hidden[0], node.outputs[1])
        if mode == "lstm":
            g.concat(last_cell, 0, node.outputs[2]) if layers > 1 else \
                g.identity(last_cell[0], node.outputs[2])
