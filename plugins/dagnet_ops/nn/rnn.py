"""``RNN``: a whole multi-layer, optionally bidirectional recurrent network over a
sequence in one operator (MXNet's fused ``RNN``, the cuDNN layout), with its
backward pass through time."""

from __future__ import annotations

from dagnet import ParamError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    NoGradient,
    Op,
    Params,
    assign,
    merge_shape,
)
from dagnet.resource import ResourceRequest
from dagnet.util import dim_is_known, unknown_dim

from .._draw import Draw
from ._common import set_shape, times_transposed

__all__ = ["OPS"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class RNNParam(Params):
    state_size = Field(int, REQUIRED, "hidden units per layer and direction", low=1)
    num_layers = Field(int, REQUIRED, "number of stacked layers", low=1)
    bidirectional = Field(bool, False, "run a second network backwards over the sequence")
    mode = Field(str, REQUIRED, "the recurrence", choices=tuple(_GATES))
    p = Field(float, 0.0, "dropout on each layer's output but the last's, in training",
              low=0.0, high=1.0)
    state_outputs = Field(bool, False, "also output the last hidden (and cell) states")
    projection_size = Field(int, None, "LSTM only: project each hidden state to this size",
                            low=1)
    lstm_state_clip_min = Field(float, None, "clip the LSTM cell state from below")
    lstm_state_clip_max = Field(float, None, "clip the LSTM cell state from above")
    lstm_state_clip_nan = Field(bool, False, "with clipping, make NaN cell states the bounds")
    use_sequence_length = Field(bool, False, "per-sequence lengths (not supported: leave "
                                             "False; mask the outputs instead)")

    @classmethod
    def parse(cls, op_name, kwargs):
        attrs = super().parse(op_name, kwargs)
        _check(attrs)
        return attrs


def _check(attrs):
    if attrs.projection_size is not None and attrs.mode != "lstm":
        raise ParamError(f"operator 'RNN': projection_size applies to mode='lstm' only, got "
                         f"mode={attrs.mode!r}")
    if attrs.use_sequence_length:
        raise ParamError("operator 'RNN': use_sequence_length=True is not supported by "
                         "dagnet's RNN kernel; run without it and mask the outputs "
                         "(SequenceMask) instead")


def _dirs(attrs):
    return 2 if attrs.bidirectional else 1


def _out_size(attrs):
    """The size of each direction's output and hidden state (the projection, if any)."""
    return attrs.projection_size or attrs.state_size


def _n_states(attrs):
    return 2 if attrs.mode == "lstm" else 1


def _input_names(attrs):
    return ["data", "parameters", "state"] + (["state_cell"] if attrs.mode == "lstm" else [])


def _num_visible(attrs):
    return 1 + (_n_states(attrs) if attrs.state_outputs else 0)


def _output_names(attrs):
    names = ["output"]  # MXNet's names: rnn_output, rnn_state_output, rnn_statecell_output
    if attrs.state_outputs:
        names += ["state_output", "statecell_output"][:_n_states(attrs)]
    return names + ["dropout_mask"]


def _uses_mask(attrs):
    return attrs.p > 0 and attrs.num_layers > 1


def param_size(attrs, num_input):
    """How many values the flat parameter vector holds for ``num_input`` features."""
    h, d, g, r = attrs.state_size, _dirs(attrs), _GATES[attrs.mode], _out_size(attrs)
    proj = r * h if attrs.projection_size else 0
    first = (g * h * (num_input + r + 2) + proj) * d
    return first + (attrs.num_layers - 1) * (g * h * (d * r + r + 2) + proj) * d


def _infer_shape(attrs, ins, outs):
    names = _input_names(attrs)
    ins, outs = list(ins), list(outs)
    h, d, layers = attrs.state_size, _dirs(attrs), attrs.num_layers
    data = ins[0]
    if data is None and outs[0] is not None and len(outs[0]) == 3:
        data = (outs[0][0], outs[0][1], 0)
    batch = data[1] if data is not None and len(data) == 3 else 0
    if not batch:
        for state in ins[2:]:
            if state is not None and len(state) == 3 and state[1]:
                batch = state[1]
    if data is not None:
        if len(data) != 3:
            raise ParamError(f"operator 'RNN': data must be 3-D (sequence length, batch, "
                             f"features), got shape {tuple(data)}")
        set_shape(ins, 0, (data[0], batch, data[2]), "RNN", names)
        set_shape(outs, 0, (data[0], batch, d * _out_size(attrs)), "RNN",
                  _output_names(attrs), "output")
        if data[2]:
            set_shape(ins, 1, (param_size(attrs, data[2]),), "RNN", names)
    widths = [_out_size(attrs), h]  # the hidden state (projected), the cell state
    for i in range(2, len(names)):
        set_shape(ins, i, (layers * d, batch, widths[i - 2]), "RNN", names)
    if attrs.state_outputs:
        for i in range(1, 1 + _n_states(attrs)):
            set_shape(outs, i, (layers * d, batch, widths[i - 1]), "RNN", _output_names(attrs),
                      "output")
    if _uses_mask(attrs):
        seq = ins[0][0] if ins[0] is not None else 0
        set_shape(outs, len(outs) - 1, (layers - 1, seq, batch, d * _out_size(attrs)), "RNN",
                  _output_names(attrs), "output")
    else:
        set_shape(outs, len(outs) - 1, (1,), "RNN", _output_names(attrs), "output")
    return ins, outs


def _unflatten(attrs, params, num_input):
    """``weights[l][d] = (Wx, Wh, Wr)`` and ``biases[l][d] = (bx, bh)``: views of the
    flat vector in MXNet's order (all weights by layer and direction, then biases);
    ``Wr``, the LSTM projection, is None without ``projection_size``."""
    h, d, g, layers = attrs.state_size, _dirs(attrs), _GATES[attrs.mode], attrs.num_layers
    r = _out_size(attrs)
    weights, biases, p = [], [], 0
    for layer in range(layers):
        cols = num_input if layer == 0 else d * r
        row = []
        for _ in range(d):
            wx = params[p:p + g * h * cols].reshape(g * h, cols)
            p += g * h * cols
            wh = params[p:p + g * h * r].reshape(g * h, r)
            p += g * h * r
            wr = None
            if attrs.projection_size:
                wr = params[p:p + r * h].reshape(r, h)
                p += r * h
            row.append((wx, wh, wr))
        weights.append(row)
    for _ in range(layers):
        row = []
        for _ in range(d):
            row.append((params[p:p + g * h], params[p + g * h:p + 2 * g * h]))
            p += 2 * g * h
        biases.append(row)
    return weights, biases


def _seq_matmul(xp, seq, matrix):
    """``seq @ matrix`` for a (time, batch, features) sequence as one 2-D product: numpy's
    stacked matmul does not hand a transposed matrix to BLAS and is several times slower."""
    steps, batch = seq.shape[:2]
    return xp.matmul(seq.reshape(steps * batch, -1), matrix).reshape(steps, batch, -1)


def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


class _Direction:
    """One layer's pass in one direction, keeping what backward needs."""

    def __init__(self, attrs, xp, seq, w, b, h0, c0):
        self.attrs, self.xp, self.seq = attrs, xp, seq
        self.wx, self.wh, self.wr = w
        self.bx, self.bh = b
        mode, hsize = attrs.mode, attrs.state_size
        steps = seq.shape[0]
        xw = _seq_matmul(xp, seq, self.wx.T) + self.bx
        self.h0, self.c0 = h0, c0
        self.hs = xp.empty((steps,) + h0.shape, dtype=seq.dtype)
        self.acts = xp.empty((steps, h0.shape[0], _GATES[mode] * hsize), dtype=seq.dtype)
        if mode == "lstm":
            cell_shape = (steps, h0.shape[0], hsize)
            self.cs = xp.empty(cell_shape, dtype=seq.dtype)
            self.clipped = xp.zeros(cell_shape, dtype=bool)
            self.raw = xp.empty(cell_shape, dtype=seq.dtype) if self.wr is not None else None
        if mode == "gru":
            self.ghn = xp.empty_like(self.hs)
        h, c = h0, c0
        for t in range(steps):
            hw = times_transposed(xp, h, self.wh) + self.bh
            if mode == "lstm":
                pre = xw[t] + hw
                i = _sigmoid(xp, pre[:, :hsize])
                f = _sigmoid(xp, pre[:, hsize:2 * hsize])
                g = xp.tanh(pre[:, 2 * hsize:3 * hsize])
                o = _sigmoid(xp, pre[:, 3 * hsize:])
                c = f * c + i * g
                c = self._clip(c, t)
                h = o * xp.tanh(c)
                if self.wr is not None:  # LSTMP: the state carried on is the projection
                    self.raw[t] = h
                    h = times_transposed(xp, h, self.wr)
                self.acts[t] = xp.concatenate([i, f, g, o], axis=1)
                self.cs[t] = c
            elif mode == "gru":
                r = _sigmoid(xp, xw[t, :, :hsize] + hw[:, :hsize])
                z = _sigmoid(xp, xw[t, :, hsize:2 * hsize] + hw[:, hsize:2 * hsize])
                n = xp.tanh(xw[t, :, 2 * hsize:] + r * hw[:, 2 * hsize:])
                h = (1 - z) * n + z * h
                self.acts[t] = xp.concatenate([r, z, n], axis=1)
                self.ghn[t] = hw[:, 2 * hsize:]
            else:
                pre = xw[t] + hw
                h = xp.tanh(pre) if mode == "rnn_tanh" else xp.maximum(pre, 0)
                self.acts[t] = h
            self.hs[t] = h
        self.h_last, self.c_last = h, c

    def _clip(self, c, t):
        lo, hi = self.attrs.lstm_state_clip_min, self.attrs.lstm_state_clip_max
        if lo is None and hi is None:
            return c
        xp = self.xp
        lo = -xp.inf if lo is None else lo
        hi = xp.inf if hi is None else hi
        if self.attrs.lstm_state_clip_nan:
            c = xp.where(xp.isnan(c), lo, c)
        self.clipped[t] = (c < lo) | (c > hi)
        return xp.clip(c, lo, hi)

    def backward(self, dhs, dh, dc):
        """Gradients of inputs, weights, biases and initial states from ``dhs`` (the
        outputs' gradients, time-major) and the last states' ``dh``, ``dc``."""
        xp, mode, hsize = self.xp, self.attrs.mode, self.attrs.state_size
        steps = self.seq.shape[0]
        dpre_x = xp.empty_like(self.acts)  # gradient at the input side of each gate
        dwh = xp.zeros_like(self.wh)
        dbh = xp.zeros_like(self.bh)
        dwr = None if self.wr is None else xp.zeros_like(self.wr)
        for t in range(steps - 1, -1, -1):
            h_prev = self.hs[t - 1] if t else self.h0
            dht = dhs[t] + dh
            act = self.acts[t]
            if dwr is not None:  # back through the projection to the LSTM's own output
                dwr += xp.matmul(dht.T, self.raw[t])
                dht = xp.matmul(dht, self.wr)
            if mode == "lstm":
                i, f, g, o = (act[:, k * hsize:(k + 1) * hsize] for k in range(4))
                c = self.cs[t]
                c_prev = self.cs[t - 1] if t else self.c0
                tc = xp.tanh(c)
                dct = dc + dht * o * (1 - tc * tc)
                if self.attrs.lstm_state_clip_min is not None or \
                        self.attrs.lstm_state_clip_max is not None:
                    dct = xp.where(self.clipped[t], 0, dct)
                dgate = xp.concatenate([dct * g * i * (1 - i), dct * c_prev * f * (1 - f),
                                        dct * i * (1 - g * g), dht * tc * o * (1 - o)], axis=1)
                dc = dct * f
                dgate_h = dgate
            elif mode == "gru":
                r, z, n = (act[:, k * hsize:(k + 1) * hsize] for k in range(3))
                dn = dht * (1 - z) * (1 - n * n)
                dz = dht * (h_prev - n) * z * (1 - z)
                dr = dn * self.ghn[t] * r * (1 - r)
                dgate = xp.concatenate([dr, dz, dn], axis=1)
                dgate_h = xp.concatenate([dr, dz, dn * r], axis=1)
            else:
                h = act
                dgate = dht * ((1 - h * h) if mode == "rnn_tanh" else (h > 0))
                dgate_h = dgate
            dpre_x[t] = dgate
            dwh += xp.matmul(dgate_h.T, h_prev)
            dbh += dgate_h.sum(axis=0)
            dh = xp.matmul(dgate_h, self.wh)
            if mode == "gru":
                dh = dh + dht * z
        flat = dpre_x.reshape(-1, dpre_x.shape[-1])
        dwx = xp.matmul(flat.T, self.seq.reshape(-1, self.seq.shape[-1]))
        dbx = flat.sum(axis=0)
        dseq = _seq_matmul(xp, dpre_x, self.wx)
        return dseq, (dwx, dwh, dwr), (dbx, dbh), dh, dc


def _run(attrs, xp, x, params, h0, c0, masks):
    """The forward pass: the output sequence and each layer's direction passes."""
    d = _dirs(attrs)
    weights, biases = _unflatten(attrs, params, x.shape[2])
    layer_in, passes = x, []
    for layer in range(attrs.num_layers):
        row, outs = [], []
        for k in range(d):
            idx = layer * d + k
            seq = layer_in if k == 0 else layer_in[::-1]
            run = _Direction(attrs, xp, seq, weights[layer][k], biases[layer][k], h0[idx],
                             None if c0 is None else c0[idx])
            row.append(run)
            outs.append(run.hs if k == 0 else run.hs[::-1])
        passes.append(row)
        layer_in = outs[0] if d == 1 else xp.concatenate(outs, axis=2)
        if masks is not None and layer < attrs.num_layers - 1:
            layer_in = layer_in * masks[layer]
    return layer_in, passes


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    x, params, h0 = inputs[0], inputs[1], inputs[2]
    c0 = inputs[3] if attrs.mode == "lstm" else None
    masks = None
    if _uses_mask(attrs) and ctx.is_train:
        keep = ctx.requested[0].generator.random(outputs[-1].shape) >= attrs.p
        masks = (keep * (1 / (1 - attrs.p) if attrs.p < 1 else 0.0)).astype(x.dtype)
    out, passes = _run(attrs, xp, x, params, h0, c0, masks)
    assign(outputs[0], req[0], out)
    if attrs.state_outputs:
        lasts = [run for row in passes for run in row]
        assign(outputs[1], req[1], xp.stack([run.h_last for run in lasts]))
        if attrs.mode == "lstm":
            assign(outputs[2], req[2], xp.stack([run.c_last for run in lasts]))
    if _uses_mask(attrs):
        assign(outputs[-1], req[-1], masks if masks is not None else 1)
    else:
        assign(outputs[-1], req[-1], 0)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    n_vis, n_in = _num_visible(attrs), len(_input_names(attrs))
    grads_out = inputs[:n_vis]
    x, params, h0 = inputs[n_vis], inputs[n_vis + 1], inputs[n_vis + 2]
    c0 = inputs[n_vis + 3] if attrs.mode == "lstm" else None
    masks = inputs[n_vis + n_in + n_vis] if _uses_mask(attrs) else None
    _, passes = _run(attrs, xp, x, params, h0, c0, masks)
    d, h = _dirs(attrs), _out_size(attrs)
    dhy = grads_out[1] if attrs.state_outputs else xp.zeros_like(h0)
    cell_zeros = xp.zeros_like(c0 if c0 is not None else h0)
    dcy = grads_out[2] if attrs.state_outputs and attrs.mode == "lstm" else cell_zeros
    dparams = xp.zeros_like(params)
    dweights, dbiases = _unflatten(attrs, dparams, x.shape[2])
    dh0, dc0 = xp.zeros_like(h0), cell_zeros.copy()
    dout = grads_out[0]
    for layer in range(attrs.num_layers - 1, -1, -1):
        if masks is not None and layer < attrs.num_layers - 1:
            dout = dout * masks[layer]
        dlayer_in = None
        for k in range(d):
            idx = layer * d + k
            dhs = dout[:, :, k * h:(k + 1) * h]
            if k == 1:
                dhs = dhs[::-1]
            dseq, (dwx, dwh, dwr), (dbx, dbh), dh_first, dc_first = passes[layer][k].backward(
                dhs, dhy[idx], dcy[idx])
            if k == 1:
                dseq = dseq[::-1]
            dlayer_in = dseq if dlayer_in is None else dlayer_in + dseq
            dweights[layer][k][0][...] = dwx
            dweights[layer][k][1][...] = dwh
            if dwr is not None:
                dweights[layer][k][2][...] = dwr
            dbiases[layer][k][0][...] = dbx
            dbiases[layer][k][1][...] = dbh
            dh0[idx] = dh_first
            if dc_first is not None:
                dc0[idx] = dc_first
        dout = dlayer_in
    assign(outputs[0], req[0], dout)
    assign(outputs[1], req[1], dparams)
    assign(outputs[2], req[2], dh0)
    if attrs.mode == "lstm":
        assign(outputs[3], req[3], dc0)


def _sample(draw):
    d = Draw(draw)
    mode = d.choice(sorted(_GATES), "mode")
    bidirectional = d.bool("bidirectional")
    layers, hidden = d.int(1, 2, "num_layers"), d.int(1, 3, "state_size")
    steps, batch, features = d.int(1, 3), d.int(1, 2), d.int(1, 3)
    params = {"mode": mode, "bidirectional": bidirectional, "num_layers": layers,
              "state_size": hidden, "state_outputs": d.bool("state_outputs")}
    if mode == "lstm" and d.bool("projection"):
        params["projection_size"] = d.int(1, hidden, "projection_size")
    attrs = RNNParam.parse("RNN", params)
    dirs = 2 if bidirectional else 1
    inputs = [d.uniform((steps, batch, features)),
              d.uniform((param_size(attrs, features),), -0.8, 0.8),
              d.uniform((layers * dirs, batch, _out_size(attrs)))]
    if mode == "lstm":
        inputs.append(d.uniform((layers * dirs, batch, hidden)))
    if mode == "rnn_relu":  # keep the pre-activations clear of ReLU's kink
        inputs[1] = d.away_from_zero(inputs[1].shape, 0.2, 0.8)
    return Case(inputs, params)


def _reference(params, x, flat, h0, c0=None):
    """Step by step, one direction at a time, straight from the textbook formulas."""
    import numpy as np

    attrs = RNNParam.parse("RNN", params)
    dirs = _dirs(attrs)
    weights, biases = _unflatten(attrs, flat, x.shape[2])
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    layer_in, last_h, last_c = x, [], []
    for layer in range(attrs.num_layers):
        outs = []
        for k in range(dirs):
            (wx, wh, wr), (bx, bh) = weights[layer][k], biases[layer][k]
            wxs = np.split(wx, _GATES[attrs.mode])
            whs = np.split(wh, _GATES[attrs.mode])
            bxs, bhs = np.split(bx, _GATES[attrs.mode]), np.split(bh, _GATES[attrs.mode])
            h = h0[layer * dirs + k]
            c = None if c0 is None else c0[layer * dirs + k]
            order = range(x.shape[0]) if k == 0 else range(x.shape[0] - 1, -1, -1)
            seq_out = np.zeros((x.shape[0], x.shape[1], _out_size(attrs)))
            for t in order:
                xt = layer_in[t]
                gate = [xt @ wx_.T + bx_ + h @ wh_.T + bh_
                        for wx_, bx_, wh_, bh_ in zip(wxs, bxs, whs, bhs)]
                if attrs.mode == "lstm":
                    c = sig(gate[1]) * c + sig(gate[0]) * np.tanh(gate[2])
                    h = sig(gate[3]) * np.tanh(c)
                    h = h if wr is None else h @ wr.T
                elif attrs.mode == "gru":
                    r, z = sig(gate[0]), sig(gate[1])
                    n = np.tanh(xt @ wxs[2].T + bxs[2] + r * (h @ whs[2].T + bhs[2]))
                    h = (1 - z) * n + z * h
                elif attrs.mode == "rnn_tanh":
                    h = np.tanh(gate[0])
                else:
                    h = np.maximum(gate[0], 0)
                seq_out[t] = h
            outs.append(seq_out)
            last_h.append(h)
            last_c.append(c)
        layer_in = np.concatenate(outs, axis=2)
    if not attrs.state_outputs:
        return layer_in
    states = [np.stack(last_h)] + ([np.stack(last_c)] if attrs.mode == "lstm" else [])
    return [layer_in, *states]


RNN = Op(
    "RNN",
    description="""A recurrent network over a whole sequence: ``num_layers`` layers,
each run forwards and, with ``bidirectional``, backwards too, of one of

- ``rnn_tanh`` / ``rnn_relu``: ``h' = act(W_x x + b_x + W_h h + b_h)``
- ``lstm``: gates ``i, f, g, o`` (in that order), ``c' = f c + i g``, ``h' = o tanh(c')``
- ``gru``: gates ``r, z, n``; ``n = tanh(W_xn x + b_xn + r (W_hn h + b_hn))``,
  ``h' = (1 - z) n + z h``

``data`` is ``(seq_len, batch, features)``; ``state`` (and ``state_cell`` for LSTM)
``(num_layers * directions, batch, state_size)``; the output is
``(seq_len, batch, directions * state_size)``, the two directions concatenated.
``parameters`` is MXNet's flat vector: for each layer and direction ``W_x`` then
``W_h`` (gates stacked along the rows), then for each layer and direction ``b_x``
then ``b_h``.  An LSTM with ``projection_size`` P (LSTMP) carries ``h' = W_r h``
(P values) as its output and recurrent state, with ``W_r`` (P x state_size) after
each ``W_h`` in the vector.  With ``state_outputs`` the last states are outputs too.  ``p``
drops each layer's output but the last's in training.  The gradient runs back
through time, recomputing the forward pass.""",
    params=RNNParam,
    num_inputs=lambda a: len(_input_names(a)),
    num_outputs=lambda a: _num_visible(a) + 1,
    num_visible_outputs=_num_visible,
    input_names=_input_names,
    output_names=_output_names,
    infer_shape=_infer_shape,
    compute={XP: _forward},
    gradient=Gradient("_backward_RNN", uses=("out_grad", "in_data", "out_data")),
    resources=[ResourceRequest("random")],
    domain=Domain(_sample, _reference, rtol=1e-4, atol=1e-6, grad_rtol=1e-3, grad_atol=1e-5),
)

BackwardRNN = Op(
    "_backward_RNN",
    params=RNNParam,
    num_inputs=lambda a: 2 * _num_visible(a) + len(_input_names(a)) + 1,
    num_outputs=lambda a: len(_input_names(a)),
    compute={XP: _backward},
    gradient=NoGradient("the RNN's backward pass is not differentiated again"),
    is_backward=True,
    forward_op="RNN",
)



# -- _rnn_param_concat -------------------------------------------------------------------
class ParamConcatParam(Params):
    num_args = Field(int, REQUIRED, "number of parameter arrays", low=1)
    dim = Field(int, 1, "the axis to join on")


def _param_concat_axis(attrs, ndim):
    if not -ndim <= attrs.dim < ndim:
        raise ParamError(f"operator '_rnn_param_concat': dim {attrs.dim} is out of range for "
                         f"inputs of {ndim} dimensions")
    return attrs.dim % ndim


def _param_concat_infer(attrs, ins, outs):
    """Concat's rule, except that one or two inputs may not know their size along dim: they
    share equally what the output has left (a layer's input weights, initialized on first
    use, flattened)."""
    op, unknown = "_rnn_param_concat", unknown_dim()
    names = [f"arg{i}" for i in range(attrs.num_args)]
    ins, outs = list(ins), list(outs)
    shapes = [s for s in ins + outs if s is not None and len(s) > 0]
    if not shapes:
        return ins, outs
    ndim = len(shapes[0])
    axis = _param_concat_axis(attrs, ndim)
    template = None
    for label, shape in [*zip(names, ins), ("output", outs[0])]:
        if shape is None or len(shape) == 0:
            continue
        if len(shape) != ndim:
            raise ParamError(f"operator {op!r}: {label!r} has shape {tuple(shape)} but the "
                             f"others have {ndim} dimensions")
        masked = tuple(unknown if i == axis else int(d) for i, d in enumerate(shape))
        template = merge_shape(template, masked, f"operator {op!r}, {label!r} outside dim")
    sizes = [int(s[axis]) if s is not None and len(s) > 0 else unknown for s in ins]
    total = int(outs[0][axis]) if outs[0] is not None and len(outs[0]) > 0 else unknown
    missing = [i for i, d in enumerate(sizes) if not dim_is_known(d)]
    known_sum = sum(d for d in sizes if dim_is_known(d))
    if not missing:
        total = known_sum
    elif len(missing) <= 2 and dim_is_known(total):
        residual = total - known_sum
        if residual < 0 or residual % len(missing):
            raise ParamError(f"operator {op!r}: inputs of {known_sum} along dim {axis} leave "
                             f"{residual} of the output's {total} to {len(missing)} others")
        for i in missing:
            sizes[i] = residual // len(missing)

    def with_axis(d):
        return tuple(d if i == axis else t for i, t in enumerate(template))

    for i, size in enumerate(sizes):
        set_shape(ins, i, with_axis(size), op, names)
    set_shape(outs, 0, with_axis(total), op, ["output"], "output")
    return ins, outs


def _param_concat_forward(attrs, ctx, inputs, req, outputs):
    axis = _param_concat_axis(attrs, inputs[0].ndim)
    assign(outputs[0], req[0], ctx.xp.concatenate(list(inputs), axis=axis))


def _param_concat_backward(attrs, ctx, inputs, req, outputs):
    dy, start = inputs[0], 0
    axis = _param_concat_axis(attrs, dy.ndim)
    for i, out in enumerate(outputs):
        size = out.shape[axis]
        assign(out, req[i], dy[(slice(None),) * axis + (slice(start, start + size),)])
        start += size


def _param_concat_sample(draw):
    d = Draw(draw)
    n = d.int(1, 3, "num_args")
    shape = list(d.shape(d.int(1, 2)))
    dim = d.int(0, len(shape) - 1, "dim")
    arrays = []
    for _ in range(n):
        shape[dim] = d.int(1, 3, "size along dim")
        arrays.append(d.uniform(tuple(shape)))
    return Case(arrays, {"num_args": n, "dim": dim})


def _param_concat_reference(params, *arrays):
    import numpy as np

    return np.concatenate(arrays, axis=params["dim"])


RNNParamConcat = Op(
    "_rnn_param_concat",
    description="""The recurrent layers' parameters joined into the fused ``RNN``
operator's flat vector (Gluon passes them flattened, with ``dim=0``): ``Concat``
along ``dim`` (default 1), except that one or two inputs whose size along dim is
unknown share what the output has left (a layer's input weights, initialized on
first use).  Gradient: the head gradient split back along dim.""",
    params=ParamConcatParam,
    num_inputs=lambda a: a.num_args,
    input_names=lambda a: [f"arg{i}" for i in range(a.num_args)],
    key_var_num_args="num_args",
    infer_shape=_param_concat_infer,
    compute={XP: _param_concat_forward},
    gradient=Gradient("_backward__rnn_param_concat", uses=("out_grad",)),
    domain=Domain(_param_concat_sample, _param_concat_reference),
)

BackwardRNNParamConcat = Op(
    "_backward__rnn_param_concat",
    params=ParamConcatParam,
    num_inputs=1,
    num_outputs=lambda a: a.num_args,
    compute={XP: _param_concat_backward},
    gradient=NoGradient("the parameter concatenation's backward is not differentiated again"),
    is_backward=True,
    forward_op="_rnn_param_concat",
)

OPS = [RNN, BackwardRNN, RNNParamConcat, BackwardRNNParamConcat]
