"""Recurrent networks (LSTM, GRU, RNN as dagnet's fused ``RNN``) and random
sampling (RandomNormal, RandomUniform, their *Like forms, Multinomial)."""

from __future__ import annotations

import numpy as np

from ... import symbol as sym
from ._context import ImportNode
from ._table import IMPORTS

# ONNX gate order -> dagnet's (MXNet's, cuDNN's): the ONNX rows to take, in dagnet's order
_TO_DAGNET_GATES = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}


def _regate(matrix: np.ndarray, op_type: str) -> np.ndarray:
    order = _TO_DAGNET_GATES[op_type]
    return np.concatenate([np.split(matrix, len(order), axis=0)[i] for i in order], axis=0)


def _zero_state(x, directions: int, hidden: int):
    """Zeros (directions, batch, hidden), the batch read from x (time, batch, features)."""
    first = sym.slice_axis(sym.zeros_like(x), axis=0, begin=0, end=1)
    column = sym.sum(first, axis=2, keepdims=True)
    return sym.broadcast_axis(column, axis=(0, 2), size=(directions, hidden))


@IMPORTS.register("LSTM", "GRU", "RNN")
def recurrent(node: ImportNode):
    """One layer of dagnet's fused RNN (lstm, gru, rnn_tanh or rnn_relu), forward or
    bidirectional: the constant W, R and B regrouped into the flat parameter vector
    with the gates in dagnet's order; Y regrouped to (time, directions, batch, hidden)."""
    op = node.op_type
    hidden = int(node.attr("hidden_size"))
    direction = node.attr("direction", "forward")
    if direction not in ("forward", "bidirectional"):
        raise node.fail(f"direction {direction!r}")
    if int(node.attr("layout", 0)) != 0:
        raise node.fail("layout=1 (batch first)")
    if node.attr("clip") is not None or node.attr("input_forget", 0):
        raise node.fail("cell clipping and coupled input-forget gates")
    if node.has(4):
        raise node.fail("sequence_lens (dagnet's RNN runs whole sequences)")
    if op == "LSTM" and node.has(7):
        raise node.fail("peephole weights")
    mode = {"LSTM": "lstm", "GRU": "gru"}.get(op)
    activations = node.attr("activations")
    if op == "RNN":
        kind = (activations or ["Tanh"])[0].lower()
        if kind not in ("tanh", "relu"):
            raise node.fail(f"activation {kind!r}")
        mode = f"rnn_{kind}"
    elif activations is not None:
        defaults = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"]}[op]
        if [a.lower() for a in activations] != defaults * (len(activations) // len(defaults)):
            raise node.fail(f"activations {activations}")
    if op == "GRU" and not node.attr("linear_before_reset", 0):
        raise node.fail("linear_before_reset=0 (dagnet's GRU applies the reset after the "
                        "recurrent product, as cuDNN)")
    weights, recurrences = node.const(1, "W"), node.const(2, "R")
    directions = weights.shape[0]
    gates = len(_TO_DAGNET_GATES[op])
    biases = node.const(3, "B") if node.has(3) else \
        np.zeros((directions, 2 * gates * hidden), weights.dtype)
    flat = [piece for d in range(directions)
            for piece in (_regate(weights[d], op).reshape(-1),
                          _regate(recurrences[d], op).reshape(-1))]
    for d in range(directions):
        flat.append(_regate(biases[d, :gates * hidden], op))
        flat.append(_regate(biases[d, gates * hidden:], op))
    params = node.graph.parameter(f"{node.sym_name}_parameters", np.concatenate(flat))
    x = node.sym(0)
    h0 = node.sym(5) if node.has(5) else _zero_state(x, directions, hidden)
    states = [h0]
    if op == "LSTM":
        states.append(node.sym(6) if node.has(6) else _zero_state(x, directions, hidden))
    out = sym.RNN(x, params, *states, state_size=hidden, num_layers=1,
                  bidirectional=directions == 2, mode=mode, state_outputs=True,
                  name=node.sym_name)
    sequence = sym.transpose(sym.reshape(out[0], shape=(0, 0, directions, hidden)),
                             axes=(0, 2, 1, 3))
    results = [sequence, out[1]]
    if op == "LSTM":
        results.append(out[2])
    return results


def _dtype_name(node: ImportNode, default: str = "float32") -> str:
    from .._deps import require_onnx

    code = node.attr("dtype")
    if code is None:
        return default
    return np.dtype(require_onnx().helper.tensor_dtype_to_np_dtype(int(code))).name


@IMPORTS.register("RandomNormal")
def random_normal(node: ImportNode):
    """random_normal of the shape (mean as loc)."""
    return sym.random_normal(loc=float(node.attr("mean", 0.0)),
                             scale=float(node.attr("scale", 1.0)),
                             shape=tuple(int(d) for d in node.attr("shape")),
                             dtype=_dtype_name(node), name=node.sym_name)


@IMPORTS.register("RandomUniform")
def random_uniform(node: ImportNode):
    """random_uniform of the shape between low and high."""
    return sym.random_uniform(low=float(node.attr("low", 0.0)),
                              high=float(node.attr("high", 1.0)),
                              shape=tuple(int(d) for d in node.attr("shape")),
                              dtype=_dtype_name(node), name=node.sym_name)


@IMPORTS.register("RandomNormalLike")
def random_normal_like(node: ImportNode):
    """random_normal shaped like the input."""
    drawn = sym.random.normal_like(node.sym(0), loc=float(node.attr("mean", 0.0)),
                                   scale=float(node.attr("scale", 1.0)))
    return drawn if node.attr("dtype") is None else sym.Cast(drawn, dtype=_dtype_name(node))


@IMPORTS.register("RandomUniformLike")
def random_uniform_like(node: ImportNode):
    """random_uniform shaped like the input."""
    drawn = sym.random.uniform_like(node.sym(0), low=float(node.attr("low", 0.0)),
                                    high=float(node.attr("high", 1.0)))
    return drawn if node.attr("dtype") is None else sym.Cast(drawn, dtype=_dtype_name(node))


@IMPORTS.register("Multinomial")
def multinomial(node: ImportNode):
    """sample_multinomial of the softmax of the (unnormalized log) probabilities."""
    samples = int(node.attr("sample_size", 1))
    probabilities = sym.softmax(node.sym(0), axis=-1)
    return sym.sample_multinomial(probabilities, shape=(samples,),
                                  dtype=_dtype_name(node, "int32"), name=node.sym_name)
