"""Neural-network layers: activations, fully connected, convolutions, pooling, the
normalizations, softmax and the loss heads (as their inference forward pass),
upsampling and resizing."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS

INT64 = np.int64


# layouts -------------------------------------------------------------------------------
def _channel_last(layout: str | None) -> bool:
    return bool(layout) and layout[1] != "C"


def _to_channel_first(g: OnnxBuilder, x: str, rank: int) -> str:
    return g.op("Transpose", [x], perm=[0, rank - 1, *range(1, rank - 1)])


def _to_channel_last(g: OnnxBuilder, x: str, rank: int, out: str) -> str:
    return g.op("Transpose", [x], [out], perm=[0, *range(2, rank), 1])


def _spatial(values: Sequence[int], count: int, default: int) -> list[int]:
    return [int(v) for v in values] if values else [default] * count


# activations ---------------------------------------------------------------------------
def _activation(g: OnnxBuilder, kind: str, x: str, dtype: np.dtype, out: str,
                node: ExportNode) -> str:
    if kind == "relu":
        return g.op("Relu", [x], [out])
    if kind == "sigmoid":
        return g.op("Sigmoid", [x], [out])
    if kind == "tanh":
        return g.op("Tanh", [x], [out])
    if kind == "softrelu":
        return g.op("Softplus", [x], [out])
    if kind == "softsign":
        return g.op("Softsign", [x], [out])
    if kind == "log_sigmoid":
        return g.op("Neg", [g.op("Softplus", [g.op("Neg", [x])])], [out])
    if kind == "mish":
        return g.op("Mul", [x, g.op("Tanh", [g.op("Softplus", [x])])], [out])
    raise node.fail(f"act_type {kind!r} has no ONNX form")


@EXPORTS.register("Activation")
def activation(node: ExportNode, g: OnnxBuilder) -> None:
    """Relu, Sigmoid, Tanh, Softplus (softrelu), Softsign; log_sigmoid and mish composed."""
    _activation(g, node.attrs.act_type, node.inputs[0], node.in_dtypes[0], node.outputs[0], node)


@EXPORTS.register("LeakyReLU")
def leaky_relu(node: ExportNode, g: OnnxBuilder) -> None:
    """LeakyRelu, Elu, Selu, PRelu (slope per channel), gelu through Erf; rrelu at
    inference is a leaky ReLU with the mean of its bounds."""
    kind, x, dtype, out = node.attrs.act_type, node.inputs[0], node.in_dtypes[0], node.outputs[0]
    if kind == "leaky":
        g.op("LeakyRelu", [x], [out], alpha=float(node.attrs.slope))
    elif kind == "rrelu":
        slope = (node.attrs.lower_bound + node.attrs.upper_bound) / 2.0
        g.op("LeakyRelu", [x], [out], alpha=float(slope))
    elif kind == "elu":
        g.op("Elu", [x], [out], alpha=float(node.attrs.slope))
    elif kind == "selu":
        g.op("Selu", [x], [out], alpha=1.6732632423543772, gamma=1.0507009873554805)
    elif kind == "gelu":
        scaled = g.op("Div", [x, g.scalar(math.sqrt(2.0), dtype)])
        half = g.op("Mul", [x, g.scalar(0.5, dtype)])
        g.op("Mul", [half, g.op("Add", [g.op("Erf", [scaled]), g.scalar(1.0, dtype)])], [out])
    elif kind == "prelu":
        rank = node.rank(0)
        slope = node.inputs[1]
        if rank > 2:  # one slope per channel (axis 1), broadcast over the rest
            slope = g.unsqueeze(slope, list(range(1, rank - 1)))
        g.op("PRelu", [x, slope], [out])
    else:
        raise node.fail(f"act_type {kind!r} has no ONNX form")


# dense and convolution -----------------------------------------------------------------
@EXPORTS.register("FullyConnected")
def fully_connected(node: ExportNode, g: OnnxBuilder) -> None:
    """Gemm with the weight transposed (MatMul for integer data); with flatten the data
    is flattened to 2-D first, without it the last axis is contracted."""
    x, weight = node.inputs[0], node.inputs[1]
    bias = None if node.attrs.no_bias else node.inputs[2]
    rank, dtype = node.rank(0), node.in_dtypes[0]
    out = node.outputs[0]
    floating = np.issubdtype(dtype, np.floating)
    if node.attrs.flatten or rank <= 2:
        flat = g.op("Flatten", [x], axis=1) if rank != 2 else x
        if floating:
            g.op("Gemm", [flat, weight] + ([bias] if bias else []), [out], alpha=1.0, beta=1.0,
                 transA=0, transB=1)
            return
        x = flat
    product = g.op("MatMul", [x, g.op("Transpose", [weight], perm=[1, 0])],
                   [out] if bias is None else 1)
    if bias is not None:
        g.op("Add", [product, bias], [out])


def _conv_attrs(node: ExportNode, spatial: int) -> dict:
    pad = _spatial(node.attrs.pad, spatial, 0)
    return {
        "kernel_shape": [int(k) for k in node.attrs.kernel],
        "strides": _spatial(node.attrs.stride, spatial, 1),
        "dilations": _spatial(node.attrs.dilate, spatial, 1),
        "pads": pad + pad,
        "group": int(node.attrs.num_group),
    }


@EXPORTS.register("Convolution")
def convolution(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Conv: kernel, stride, dilate, pad (both sides) and num_group carry over."""
    rank = node.rank(0)
    layout = node.attrs.layout
    x = node.inputs[0]
    if _channel_last(layout):
        raise node.fail(f"layout {layout!r}: ONNX convolutions are channel-first; export a "
                        f"model built with layout='NC...'")
    inputs = [x, node.inputs[1]] + ([] if node.attrs.no_bias else [node.inputs[2]])
    g.op("Conv", inputs, [node.outputs[0]], **_conv_attrs(node, rank - 2))


@EXPORTS.register("Deconvolution")
def deconvolution(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX ConvTranspose: adj is output_padding, target_shape the output_shape."""
    rank = node.rank(0)
    if _channel_last(node.attrs.layout):
        raise node.fail(f"layout {node.attrs.layout!r}: ONNX convolutions are channel-first")
    attrs = _conv_attrs(node, rank - 2)
    adj = _spatial(node.attrs.adj, rank - 2, 0)
    if any(adj):
        attrs["output_padding"] = adj
    if node.attrs.target_shape and any(node.attrs.target_shape):
        # MXNet then works out the padding itself; the output shape is what inference found.
        attrs.pop("pads")
        attrs.pop("output_padding", None)
        attrs["output_shape"] = [int(d) for d in node.out_shapes[0][2:]]
    inputs = [node.inputs[0], node.inputs[1]] + ([] if node.attrs.no_bias else [node.inputs[2]])
    g.op("ConvTranspose", inputs, [node.outputs[0]], **attrs)


# pooling -------------------------------------------------------------------------------
@EXPORTS.register("Pooling")
def pooling(node: ExportNode, g: OnnxBuilder) -> None:
    """MaxPool, AveragePool (count_include_pad), LpPool, their Global forms; sum pooling
    is average pooling times the window size.  pooling_convention 'full' is ceil_mode."""
    a = node.attrs
    rank = node.rank(0)
    spatial = rank - 2
    x, out = node.inputs[0], node.outputs[0]
    last = _channel_last(a.layout)
    if last:
        x = _to_channel_first(g, x, rank)
        final, out = out, g.unique(f"{node.name}_nchw")
    kind = a.pool_type
    p = int(a.p_value) if a.p_value is not None else 2
    if a.global_pool:
        if kind == "max":
            g.op("GlobalMaxPool", [x], [out])
        elif kind == "avg":
            g.op("GlobalAveragePool", [x], [out])
        elif kind == "lp":
            g.op("GlobalLpPool", [x], [out], p=p)
        else:
            g.reduce("ReduceSum", x, list(range(2, rank)), True, out)
    else:
        pad = _spatial(a.pad, spatial, 0)
        common = {"kernel_shape": [int(k) for k in a.kernel],
                  "strides": _spatial(a.stride, spatial, 1), "pads": pad + pad}
        missing = None
        if a.pooling_convention == "full":
            include_pad = kind == "avg" and a.count_include_pad is not False
            plan = None if include_pad or last else _full_windows(node, common)
            if plan is None:
                common["ceil_mode"] = 1
            else:
                common["pads"], missing = plan
                if any(missing):
                    out = g.unique(f"{node.name}_windows")
                else:
                    missing = None
        elif a.pooling_convention == "same":
            common.pop("pads")
            common["auto_pad"] = "SAME_UPPER"
        if kind == "max":
            g.op("MaxPool", [x], [out], **common)
        elif kind in ("avg", "sum"):
            include = 1 if (a.count_include_pad is not False or kind == "sum") else 0
            if kind == "avg":
                g.op("AveragePool", [x], [out], count_include_pad=include, **common)
            else:
                mean = g.op("AveragePool", [x], count_include_pad=1, **common)
                size = float(np.prod([int(k) for k in a.kernel]))
                g.op("Mul", [mean, g.scalar(size, node.in_dtypes[0])], [out])
        else:
            if common.pop("ceil_mode", 0):
                raise node.fail("Lp pooling with pooling_convention='full' has no ONNX form "
                                "before opset 18")
            g.op("LpPool", [x], [out], p=p, **common)
        if missing is not None:
            # windows that start past the data: MXNet's value of an empty window
            dtype = node.in_dtypes[0]
            empty = np.finfo(dtype).min if kind == "max" else 0
            g.op("Pad", [out, g.ints([0] * rank + [0, 0] + missing),
                         g.scalar(np.array(empty).astype(dtype), dtype)],
                 [node.outputs[0]], mode="constant")
    if last:
        _to_channel_last(g, out, rank, final)


def _full_windows(node: ExportNode, common: dict) -> tuple[list[int], list[int]] | None:
    """MXNet's 'full' convention (ceil) without ceil_mode, whose last window runtimes
    drop when it starts past the data: explicit end padding gives the windows that start
    inside, and the count of those that do not (appended as empty windows) per axis.
    None when the arithmetic does not work out (the caller uses ceil_mode then)."""
    shape, out_shape = node.in_shapes[0], node.out_shapes[0]
    begins, ends, missing = [], [], []
    pads = common["pads"]
    spatial = len(common["kernel_shape"])
    for axis in range(spatial):
        size, expected = int(shape[2 + axis]), int(out_shape[2 + axis])
        kernel, stride = common["kernel_shape"][axis], common["strides"][axis]
        begin = pads[axis]
        starting_inside = (size + begin - 1) // stride + 1
        count = min(starting_inside, expected)
        end = max((count - 1) * stride + kernel - size - begin, 0)
        if end >= kernel or begin >= kernel or \
                (size + begin + end - kernel) // stride + 1 != count:
            return None
        begins.append(begin)
        ends.append(end)
        missing.append(expected - count)
    return begins + ends, missing


@EXPORTS.register("_contrib_AdaptiveAvgPooling2D")
def adaptive_avg_pooling(node: ExportNode, g: OnnxBuilder) -> None:
    """GlobalAveragePool for output size 1, AveragePool where the input divides evenly,
    otherwise the mean of each of MXNet's windows, one ReduceMean per output cell."""
    x, out = node.inputs[0], node.outputs[0]
    size = tuple(node.attrs.output_size) or (1,)
    out_h, out_w = (size[0], size[0]) if len(size) == 1 else size[:2]
    in_h, in_w = node.in_shapes[0][2:]
    if out_h == 1 and out_w == 1:
        g.op("GlobalAveragePool", [x], [out])
        return
    if in_h % out_h == 0 and in_w % out_w == 0:
        kernel = [in_h // out_h, in_w // out_w]
        g.op("AveragePool", [x], [out], kernel_shape=kernel, strides=kernel)
        return
    rows = []
    for i in range(out_h):
        h0, h1 = (i * in_h) // out_h, -(-((i + 1) * in_h) // out_h)
        cells = []
        for j in range(out_w):
            w0, w1 = (j * in_w) // out_w, -(-((j + 1) * in_w) // out_w)
            window = g.slice(x, [h0, w0], [h1, w1], [2, 3])
            cells.append(g.reduce("ReduceMean", window, [2, 3], True))
        rows.append(g.concat(cells, 3))
    g.concat(rows, 2, out)


# normalization -------------------------------------------------------------------------
@EXPORTS.register("BatchNorm", "_contrib_SyncBatchNorm")
def batch_norm(node: ExportNode, g: OnnxBuilder) -> None:
    """BatchNormalization with the moving statistics (inference); fix_gamma uses a
    scale of ones, and a channel axis other than 1 is transposed there and back."""
    a = node.attrs
    if a.output_mean_var and node.used_outputs - {0}:
        raise node.fail("output_mean_var: the batch statistics are a training output")
    x, gamma, beta, mean, var = node.inputs[:5]
    dtype = node.in_dtypes[0]
    channels = node.in_shapes[1][0]
    if a.fix_gamma:
        gamma = g.const(np.ones(channels, dtype=node.in_dtypes[1] or dtype))
    rank = node.rank(0)
    axis = a.axis % rank
    out = node.outputs[0]
    if axis != 1:
        perm = [0, axis] + [d for d in range(1, rank) if d != axis]
        x = g.op("Transpose", [x], perm=perm)
        normalized = g.op("BatchNormalization", [x, gamma, beta, mean, var],
                          epsilon=float(a.eps), momentum=float(a.momentum))
        g.op("Transpose", [normalized], [out], perm=list(np.argsort(perm)))
        return
    g.op("BatchNormalization", [x, gamma, beta, mean, var], [out], epsilon=float(a.eps),
         momentum=float(a.momentum))


@EXPORTS.register("InstanceNorm")
def instance_norm(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX InstanceNormalization."""
    g.op("InstanceNormalization", node.inputs[:3], [node.outputs[0]],
         epsilon=float(node.attrs.eps))


def _normalize(g: OnnxBuilder, x: str, axes: list[int], eps: float, dtype: np.dtype) -> str:
    """(x - mean) / sqrt(var + eps) over ``axes`` (population variance)."""
    centred = g.op("Sub", [x, g.reduce("ReduceMean", x, axes, True)])
    variance = g.reduce("ReduceMean", g.op("Mul", [centred, centred]), axes, True)
    deviation = g.op("Sqrt", [g.op("Add", [variance, g.scalar(eps, dtype)])])
    return g.op("Div", [centred, deviation])


@EXPORTS.register("LayerNorm")
def layer_norm(node: ExportNode, g: OnnxBuilder) -> None:
    """Normalized over one axis with ReduceMean (LayerNormalization is opset 17), then
    scaled by gamma and shifted by beta along that axis."""
    rank, dtype = node.rank(0), node.in_dtypes[0]
    axis = node.attrs.axis % rank
    if node.attrs.output_mean_var and node.used_outputs - {0}:
        raise node.fail("output_mean_var: the mean and deviation outputs are not exported")
    normalized = _normalize(g, node.inputs[0], [axis], float(node.attrs.eps), dtype)
    gamma, beta = node.inputs[1], node.inputs[2]
    trailing = list(range(1, rank - axis))
    if trailing:  # (C,) -> (C, 1, ..., 1) to line up with the axis
        gamma, beta = g.unsqueeze(gamma, trailing), g.unsqueeze(beta, trailing)
    g.op("Add", [g.op("Mul", [normalized, gamma]), beta], [node.outputs[0]])


@EXPORTS.register("GroupNorm")
def group_norm(node: ExportNode, g: OnnxBuilder) -> None:
    """Data viewed as (N, groups, rest), normalized over the rest, scaled and shifted
    per group (gamma and beta hold one value per group, as MXNet 1.x), reshaped back."""
    groups = int(node.attrs.num_groups)
    x, dtype = node.inputs[0], node.in_dtypes[0]
    grouped = g.reshape(x, [0, groups, -1])
    normalized = _normalize(g, grouped, [2], float(node.attrs.eps), dtype)
    gamma = g.unsqueeze(node.inputs[1], [0, 2])
    beta = g.unsqueeze(node.inputs[2], [0, 2])
    scaled = g.op("Add", [g.op("Mul", [normalized, gamma]), beta])
    g.reshape(scaled, g.shape(x), node.outputs[0])


@EXPORTS.register("L2Normalization")
def l2_normalization(node: ExportNode, g: OnnxBuilder) -> None:
    """x / sqrt(sum(x^2) + eps) over all but the batch axis (instance), the channel axis
    (channel) or the spatial axes (spatial)."""
    rank, dtype = node.rank(0), node.in_dtypes[0]
    axes = {"instance": list(range(1, rank)), "channel": [1],
            "spatial": list(range(2, rank))}[node.attrs.mode]
    squares = g.reduce("ReduceSumSquare", node.inputs[0], axes, True)
    norm = g.op("Sqrt", [g.op("Add", [squares, g.scalar(float(node.attrs.eps), dtype)])])
    g.op("Div", [node.inputs[0], norm], [node.outputs[0]])


@EXPORTS.register("LRN")
def lrn(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX LRN: knorm is the bias, nsize the size."""
    a = node.attrs
    g.op("LRN", node.inputs[:1], [node.outputs[0]], alpha=float(a.alpha), beta=float(a.beta),
         bias=float(a.knorm), size=int(a.nsize))


@EXPORTS.register("Dropout")
def dropout(node: ExportNode, g: OnnxBuilder) -> None:
    """Identity: an exported model runs inference."""
    g.identity(node.inputs[0], node.outputs[0])


# softmax -------------------------------------------------------------------------------
def _softmax(g: OnnxBuilder, kind: str, x: str, axis: int, rank: int, out: str) -> str:
    """Softmax or LogSoftmax along ``axis``: opset 13's operators work per axis; opset
    12's flatten everything from the axis on, which is right only for the last axis,
    so another axis is moved last and back."""
    if g.opset >= 13 or axis == rank - 1:
        return g.op(kind, [x], [out], axis=axis)
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = g.op(kind, [g.op("Transpose", [x], perm=perm)], axis=rank - 1)
    return g.op("Transpose", [moved], [out], perm=[int(p) for p in np.argsort(perm)])


def _length_mask(g: OnnxBuilder, x: str, length: str, axis: int, rank: int) -> str:
    """Booleans shaped like ``x``: position along ``axis`` < length (length has x's
    shape without the axis)."""
    size = g.op("Gather", [g.shape(x), g.scalar(axis, INT64)])
    positions = g.op("Range", [g.scalar(0, INT64), size, g.scalar(1, INT64)])
    shape = [1] * rank
    shape[axis] = -1
    positions = g.reshape(positions, shape)
    limit = g.unsqueeze(g.cast(length, INT64), [axis])
    return g.op("Less", [positions, limit])


def _softmax_node(node: ExportNode, g: OnnxBuilder, kind: str, negate: bool = False) -> None:
    a = node.attrs
    rank, dtype = node.rank(0), node.in_dtypes[0]
    axis = a.axis % rank
    x = node.inputs[0]
    if negate:
        x = g.op("Neg", [x])
    if a.temperature is not None and float(a.temperature) != 1.0:
        x = g.op("Div", [x, g.scalar(float(a.temperature), dtype)])
    out_dtype = node.out_dtypes[0]
    use_length = getattr(a, "use_length", False)
    if not use_length:
        result = _softmax(g, kind, x, axis, rank,
                          node.outputs[0] if out_dtype == dtype else g.unique(node.name))
    else:
        mask = _length_mask(g, x, node.inputs[1], axis, rank)
        lowest = g.scalar(np.finfo(dtype).min if np.issubdtype(dtype, np.floating) else 0, dtype)
        masked = g.op("Where", [mask, x, lowest])
        soft = _softmax(g, kind, masked, axis, rank, g.unique(node.name))
        result = g.op("Where", [mask, soft, g.scalar(0, dtype)])
        if np.issubdtype(dtype, np.floating):
            # a sequence of length 0 has no softmax: NaN, as dagnet's 0 / 0 gives
            empty = g.unsqueeze(g.op("Equal", [g.cast(node.inputs[1], INT64),
                                               g.scalar(0, INT64)]), [axis])
            result = g.op("Where", [empty, g.scalar(np.nan, dtype), result])
        if out_dtype == dtype:
            result = g.identity(result, node.outputs[0])
    if out_dtype != dtype:
        g.cast(result, out_dtype, node.outputs[0])


@EXPORTS.register("softmax")
def softmax(node: ExportNode, g: OnnxBuilder) -> None:
    """Softmax along axis, after dividing by temperature; with use_length the positions
    past each length are masked out and give 0."""
    _softmax_node(node, g, "Softmax")


@EXPORTS.register("log_softmax")
def log_softmax(node: ExportNode, g: OnnxBuilder) -> None:
    """LogSoftmax along axis, after dividing by temperature."""
    _softmax_node(node, g, "LogSoftmax")


@EXPORTS.register("softmin")
def softmin(node: ExportNode, g: OnnxBuilder) -> None:
    """Softmax of the negated input."""
    _softmax_node(node, g, "Softmax", negate=True)


@EXPORTS.register("SoftmaxOutput", "Softmax")
def softmax_output(node: ExportNode, g: OnnxBuilder) -> None:
    """The inference output of the softmax loss head: softmax over axis 1 (multi_output),
    the last axis (preserve_shape), or everything after the batch axis; the label input
    is not used."""
    a = node.attrs
    rank, x, out = node.rank(0), node.inputs[0], node.outputs[0]
    if a.multi_output:
        _softmax(g, "Softmax", x, 1, rank, out)
    elif a.preserve_shape or rank <= 2:
        _softmax(g, "Softmax", x, rank - 1, rank, out)
    else:
        flat = g.op("Softmax", [g.op("Flatten", [x], axis=1)], axis=1)
        g.reshape(flat, g.shape(x), out)


@EXPORTS.register("SoftmaxActivation")
def softmax_activation(node: ExportNode, g: OnnxBuilder) -> None:
    """Softmax over axis 1 (mode channel) or over all but the batch axis (instance)."""
    rank, x, out = node.rank(0), node.inputs[0], node.outputs[0]
    if node.attrs.mode == "channel":
        _softmax(g, "Softmax", x, 1, rank, out)
    elif rank <= 2:
        _softmax(g, "Softmax", x, rank - 1, rank, out)
    else:
        flat = g.op("Softmax", [g.op("Flatten", [x], axis=1)], axis=1)
        g.reshape(flat, g.shape(x), out)


@EXPORTS.register("LogisticRegressionOutput")
def logistic_regression_output(node: ExportNode, g: OnnxBuilder) -> None:
    """Sigmoid of the data (the label is not used)."""
    g.op("Sigmoid", node.inputs[:1], [node.outputs[0]])


@EXPORTS.register("LinearRegressionOutput", "MAERegressionOutput", "SVMOutput")
def identity_output(node: ExportNode, g: OnnxBuilder) -> None:
    """The data itself (the label is not used)."""
    g.identity(node.inputs[0], node.outputs[0])


# resizing ------------------------------------------------------------------------------
def _resize(g: OnnxBuilder, x: str, out: str, *, scales: str | None = None,
            sizes: str | None = None, **attrs) -> str:
    roi = g.const(np.zeros(0, dtype=np.float32))
    inputs = [x, roi, scales or g.const(np.zeros(0, dtype=np.float32))]
    if sizes is not None:
        inputs.append(sizes)
    return g.op("Resize", inputs, [out], **attrs)


@EXPORTS.register("UpSampling")
def upsampling(node: ExportNode, g: OnnxBuilder) -> None:
    """Nearest: Resize by the scale.  Bilinear: MXNet's grouped deconvolution with the
    weight input (kernel 2s - s % 2, stride s, pad ceil((s - 1) / 2))."""
    a = node.attrs
    scale = int(a.scale)
    if a.sample_type == "nearest":
        if int(a.num_args) != 1:
            raise node.fail("nearest upsampling of several inputs has no ONNX form")
        scales = g.const(np.array([1.0, 1.0, scale, scale], dtype=np.float32))
        _resize(g, node.inputs[0], node.outputs[0], scales=scales, mode="nearest",
                coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        return
    kernel = 2 * scale - scale % 2
    pad = int(math.ceil((scale - 1) / 2.0))
    g.op("ConvTranspose", node.inputs[:2], [node.outputs[0]], kernel_shape=[kernel, kernel],
         strides=[scale, scale], pads=[pad] * 4, group=int(a.num_filter))


@EXPORTS.register("_contrib_BilinearResize2D")
def bilinear_resize(node: ExportNode, g: OnnxBuilder) -> None:
    """Resize (linear) to MXNet's output size: align_corners as ONNX's align_corners,
    otherwise half-pixel centres; sizes from height/width, from the scales (floor of
    size times scale, worked out from the input's shape), or from the second input."""
    a = node.attrs
    x = node.inputs[0]
    mode = "align_corners" if a.align_corners else "pytorch_half_pixel"
    batch_channels = g.dims(x, 0, 2)
    if a.mode == "like":
        spatial = g.dims(node.inputs[1], 2, 4)
    elif a.mode == "size" and a.scale_height is None:
        spatial = g.ints([int(a.height), int(a.width)])
    elif a.mode == "size":
        factors = g.const(np.array([a.scale_height, a.scale_width], dtype=np.float64))
        scaled = g.op("Mul", [g.cast(g.dims(x, 2, 4), np.float64), factors])
        spatial = g.cast(g.op("Floor", [scaled]), INT64)
    else:
        spatial = g.ints([int(d) for d in node.out_shapes[0][2:]])
    sizes = g.concat([batch_channels, spatial], 0)
    _resize(g, x, node.outputs[0], sizes=sizes, mode="linear",
            coordinate_transformation_mode=mode)
