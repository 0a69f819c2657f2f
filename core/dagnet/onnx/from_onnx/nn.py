"""Neural-network ONNX operators: convolutions, pooling, normalizations, Gemm and
MatMul, softmax, ROI pooling and alignment, resizing."""

from __future__ import annotations

import math

import numpy as np

from ... import symbol as sym
from ._context import ImportNode
from ._table import IMPORTS


# convolution and pooling geometry ------------------------------------------------------
def _kernel(node: ImportNode) -> list[int]:
    if "kernel_shape" in node.attrs:
        return [int(k) for k in node.attrs["kernel_shape"]]
    weight = node.shape(1)
    if weight is None or any(d is None for d in weight[2:]):
        raise node.fail("the kernel shape is neither an attribute nor known from the weight")
    return [int(k) for k in weight[2:]]


def _padding(node: ImportNode, kernel: list[int], strides: list[int],
             dilations: list[int]) -> tuple[list[int], list[int]]:
    """(begin, end) pads per spatial axis, from pads or auto_pad."""
    spatial = len(kernel)
    auto = node.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", "", None):
        pads = [int(p) for p in node.attr("pads", [0] * 2 * spatial)]
        return pads[:spatial], pads[spatial:]
    if auto == "VALID":
        return [0] * spatial, [0] * spatial
    shape = node.static_shape(0)
    if shape is None:
        raise node.fail(f"auto_pad={auto} needs the input's spatial size, which is unknown")
    begins, ends = [], []
    for size, k, s, d in zip(shape[2:], kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begins.append(small if auto == "SAME_UPPER" else large)
        ends.append(large if auto == "SAME_UPPER" else small)
    return begins, ends


def _pad_input(node: ImportNode, x, begins: list[int], ends: list[int], value: float = 0.0):
    """``x`` padded by the difference of asymmetric pads; returns (x, symmetric pads)."""
    if begins == ends:
        return x, begins
    rank = node.rank(0)
    if rank not in (4, 5):
        raise node.fail(f"asymmetric padding {begins} / {ends} of {rank}-D data")
    common = [min(b, e) for b, e in zip(begins, ends)]
    extra = [0, 0, 0, 0]
    for b, e, c in zip(begins, ends, common):
        extra += [b - c, e - c]
    padded = sym.Pad(x, mode="constant", pad_width=tuple(extra), constant_value=value)
    return padded, common


@IMPORTS.register("Conv")
def conv(node: ImportNode):
    """Convolution: kernel, strides, dilations, group; asymmetric or automatic padding
    becomes a Pad before it."""
    kernel = _kernel(node)
    spatial = len(kernel)
    strides = [int(s) for s in node.attr("strides", [1] * spatial)]
    dilations = [int(d) for d in node.attr("dilations", [1] * spatial)]
    begins, ends = _padding(node, kernel, strides, dilations)
    x, pads = _pad_input(node, node.sym(0), begins, ends)
    weight_shape = node.shape(1)
    if weight_shape is None or weight_shape[0] is None:
        raise node.fail("the number of filters is unknown (the weight's shape)")
    args = [x, node.sym(1)] + ([node.sym(2)] if node.has(2) else [])
    return sym.Convolution(*args, kernel=tuple(kernel), stride=tuple(strides),
                           dilate=tuple(dilations), pad=tuple(pads),
                           num_filter=int(weight_shape[0]), num_group=int(node.attr("group", 1)),
                           no_bias=not node.has(2), name=node.sym_name)


@IMPORTS.register("ConvTranspose")
def conv_transpose(node: ImportNode):
    """Deconvolution: output_padding is adj; an output_shape sets the padding."""
    kernel = _kernel(node)
    spatial = len(kernel)
    strides = [int(s) for s in node.attr("strides", [1] * spatial)]
    dilations = [int(d) for d in node.attr("dilations", [1] * spatial)]
    adj = [int(a) for a in node.attr("output_padding", [0] * spatial)]
    group = int(node.attr("group", 1))
    if "output_shape" in node.attrs:
        shape = node.static_shape(0)
        if shape is None:
            raise node.fail("output_shape needs the input's spatial size, which is unknown")
        target = [int(v) for v in node.attrs["output_shape"]][-spatial:]
        begins, ends = [], []
        for size, k, s, d, a, out in zip(shape[2:], kernel, strides, dilations, adj, target):
            total = s * (size - 1) + a + (k - 1) * d + 1 - out
            begins.append(total // 2)
            ends.append(total - total // 2)
    else:
        begins, ends = _padding(node, kernel, strides, dilations)
    if begins != ends:
        raise node.fail(f"asymmetric padding {begins} / {ends} of a transposed convolution")
    weight_shape = node.shape(1)
    if weight_shape is None or weight_shape[1] is None:
        raise node.fail("the number of filters is unknown (the weight's shape)")
    args = [node.sym(0), node.sym(1)] + ([node.sym(2)] if node.has(2) else [])
    return sym.Deconvolution(*args, kernel=tuple(kernel), stride=tuple(strides),
                             dilate=tuple(dilations), pad=tuple(begins), adj=tuple(adj),
                             num_filter=int(weight_shape[1]) * group, num_group=group,
                             no_bias=not node.has(2), name=node.sym_name)


def _pool(node: ImportNode, pool_type: str, **extra):
    kernel = [int(k) for k in node.attr("kernel_shape")]
    spatial = len(kernel)
    strides = [int(s) for s in node.attr("strides", [1] * spatial)]
    dilations = [int(d) for d in node.attr("dilations", [1] * spatial)]
    if any(d != 1 for d in dilations):
        raise node.fail("dilated pooling has no dagnet operator")
    if len(node.outputs) > 1 and node.outputs[1]:
        raise node.fail("the Indices output of MaxPool has no dagnet operator")
    begins, ends = _padding(node, kernel, strides, dilations)
    x = node.sym(0)
    if begins != ends:
        if pool_type != "max":
            raise node.fail(f"asymmetric padding {begins} / {ends} of {pool_type} pooling")
        x, begins = _pad_input(node, x, begins, ends, value=float(np.finfo(np.float32).min))
    convention = "full" if node.attr("ceil_mode", 0) else "valid"
    return sym.Pooling(x, kernel=tuple(kernel), stride=tuple(strides), pad=tuple(begins),
                       pool_type=pool_type, pooling_convention=convention,
                       name=node.sym_name, **extra)


@IMPORTS.register("MaxPool")
def max_pool(node: ImportNode):
    """Pooling (max); ceil_mode is pooling_convention 'full'."""
    return _pool(node, "max")


@IMPORTS.register("AveragePool")
def average_pool(node: ImportNode):
    """Pooling (avg) with count_include_pad (default 0)."""
    return _pool(node, "avg", count_include_pad=bool(node.attr("count_include_pad", 0)))


@IMPORTS.register("LpPool")
def lp_pool(node: ImportNode):
    """Pooling (lp) with p_value p (default 2)."""
    return _pool(node, "lp", p_value=int(node.attr("p", 2)))


def _global(pool_type: str, **extra):
    def convert(node: ImportNode):
        kernel = (1,) * (node.rank(0) - 2) if node.shape(0) else (1, 1)
        options = dict(extra)
        if pool_type == "lp":
            options["p_value"] = int(node.attr("p", 2))
        return sym.Pooling(node.sym(0), kernel=kernel, global_pool=True, pool_type=pool_type,
                           name=node.sym_name, **options)

    convert.__doc__ = f"Pooling ({pool_type}) with global_pool."
    return convert


IMPORTS.add("GlobalMaxPool", _global("max"))
IMPORTS.add("GlobalAveragePool", _global("avg"))
IMPORTS.add("GlobalLpPool", _global("lp"))


# normalization -------------------------------------------------------------------------
@IMPORTS.register("BatchNormalization")
def batch_norm(node: ImportNode):
    """BatchNorm over axis 1 with the running statistics (use_global_stats), the scale
    used as given (fix_gamma off)."""
    if node.attr("training_mode", 0):
        raise node.fail("training_mode=1: an imported model runs inference")
    if len([o for o in node.outputs if o]) > 1:
        raise node.fail("the running statistics outputs belong to training")
    return sym.BatchNorm(node.sym(0), node.sym(1), node.sym(2), node.sym(3), node.sym(4),
                         eps=float(node.attr("epsilon", 1e-5)),
                         momentum=float(node.attr("momentum", 0.9)), fix_gamma=False,
                         use_global_stats=True, name=node.sym_name)


@IMPORTS.register("InstanceNormalization")
def instance_norm(node: ImportNode):
    """InstanceNorm with epsilon."""
    return sym.InstanceNorm(node.sym(0), node.sym(1), node.sym(2),
                            eps=float(node.attr("epsilon", 1e-5)), name=node.sym_name)


@IMPORTS.register("LayerNormalization", opset=17)
def layer_norm(node: ImportNode):
    """LayerNorm over the last axis (the only one dagnet's takes with a 1-D scale)."""
    rank = node.rank(0)
    axis = int(node.attr("axis", -1)) % rank
    if axis != rank - 1:
        raise node.fail("LayerNormalization over more than the last axis")
    if len([o for o in node.outputs if o]) > 1:
        raise node.fail("the mean and inverse deviation outputs are not imported")
    scale = node.sym(1)
    bias = node.sym(2) if node.has(2) else sym.zeros_like(scale)
    return sym.LayerNorm(node.sym(0), scale, bias, axis=-1,
                         eps=float(node.attr("epsilon", 1e-5)), name=node.sym_name)


@IMPORTS.register("LRN")
def lrn(node: ImportNode):
    """LRN: bias is knorm, size is nsize."""
    return sym.LRN(node.sym(0), alpha=float(node.attr("alpha", 1e-4)),
                   beta=float(node.attr("beta", 0.75)), knorm=float(node.attr("bias", 1.0)),
                   nsize=int(node.attr("size")), name=node.sym_name)


@IMPORTS.register("LpNormalization")
def lp_normalization(node: ImportNode):
    """x divided by its Lp norm (p 1 or 2) along the axis."""
    order = int(node.attr("p", 2))
    axis = int(node.attr("axis", -1))
    x = node.sym(0)
    norm = sym.norm(x, ord=order, axis=axis, keepdims=True)
    return sym.broadcast_div(x, norm, name=node.sym_name)


# products ------------------------------------------------------------------------------
@IMPORTS.register("Gemm")
def gemm(node: ImportNode):
    """FullyConnected for alpha = beta = 1, A as is and B transposed with a 1-D bias
    (the common dense layer); dot, scaling and addition otherwise."""
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    trans_a, trans_b = int(node.attr("transA", 0)), int(node.attr("transB", 0))
    weight_shape = node.shape(1)
    bias = node.values[2] if node.has(2) else None
    units = weight_shape[0 if trans_b else 1] if weight_shape else None
    dense = alpha == 1.0 and beta == 1.0 and not trans_a and trans_b and units is not None
    if dense and bias is not None:
        dense = isinstance(bias, np.ndarray) and bias.size == units
    if dense:
        args = [node.sym(0), node.sym(1)]
        if bias is not None:
            args.append(node.graph.parameter(node.value_names[2], bias.reshape(-1)))
        return sym.FullyConnected(*args, num_hidden=int(units), no_bias=bias is None,
                                  flatten=True, name=node.sym_name)
    product = sym.dot(node.sym(0), node.sym(1), transpose_a=bool(trans_a),
                      transpose_b=bool(trans_b))
    if alpha != 1.0:
        product = product * alpha
    if bias is None:
        return product
    shifted = node.sym(2) if beta == 1.0 else node.sym(2) * beta
    return sym.broadcast_add(product, shifted, name=node.sym_name)


@IMPORTS.register("MatMul")
def matmul(node: ImportNode):
    """dot for matrices and vectors, or a batch of matrices times one matrix;
    batch_dot for batches of equal rank."""
    if node.all_const():
        return np.matmul(node.const(0), node.const(1))
    ra, rb = node.rank(0), node.rank(1)
    if rb <= 2:
        return sym.dot(node.sym(0), node.sym(1), name=node.sym_name)
    if ra == rb:
        return sym.batch_dot(node.sym(0), node.sym(1), name=node.sym_name)
    raise node.fail(f"MatMul of ranks {ra} and {rb} (broadcast batches)")


# softmax -------------------------------------------------------------------------------
def _merge_leading(x, count: int):
    """The first ``count`` axes of x merged into one (count >= 1)."""
    for _ in range(count - 1):
        x = sym.reshape(x, shape=(-3, -2))
    return x


def _softmax_like(op_name: str, opset_13: bool):
    def convert(node: ImportNode):
        rank = node.rank(0)
        default = -1 if opset_13 else 1
        axis = int(node.attr("axis", default)) % rank
        x = node.sym(0)
        function = getattr(sym, op_name)
        if opset_13 or axis == rank - 1:
            return function(x, axis=axis, name=node.sym_name)
        # before opset 13: softmax of the 2-D view [prod(shape[:axis]), prod(shape[axis:])]
        flat = sym.Flatten(_merge_leading(x, axis)) if axis > 0 else sym.reshape(x, shape=(1,
                                                                                         -1))
        return sym.reshape_like(function(flat, axis=-1), x, name=node.sym_name)

    kind = "per axis" if opset_13 else "over the flattened trailing axes (opsets below 13)"
    convert.__doc__ = f"{op_name} {kind}."
    return convert


for _onnx_name, _dagnet_name in (("Softmax", "softmax"), ("LogSoftmax", "log_softmax")):
    IMPORTS.add(_onnx_name, _softmax_like(_dagnet_name, False))
    IMPORTS.add(_onnx_name, _softmax_like(_dagnet_name, True), opset=13)


# regions and resizing ------------------------------------------------------------------
@IMPORTS.register("MaxRoiPool")
def max_roi_pool(node: ImportNode):
    """ROIPooling with pooled_shape and spatial_scale."""
    return sym.ROIPooling(node.sym(0), node.sym(1),
                          pooled_size=tuple(int(v) for v in node.attr("pooled_shape")),
                          spatial_scale=float(node.attr("spatial_scale", 1.0)),
                          name=node.sym_name)


@IMPORTS.register("RoiAlign")
def roi_align(node: ImportNode):
    """contrib.ROIAlign with the batch indices joined to the boxes as their first column;
    sampling_ratio 0 (adaptive) is dagnet's -1."""
    if node.attr("mode", "avg") != "avg":
        raise node.fail("max-mode RoiAlign has no dagnet operator")
    aligned = node.attr("coordinate_transformation_mode", "half_pixel" if node.opset >= 16
                        else "output_half_pixel") == "half_pixel"
    index = sym.reshape(sym.Cast(node.sym(2), dtype="float32"), shape=(-1, 1))
    rois = sym.concat(index, node.sym(1), dim=1)
    ratio = int(node.attr("sampling_ratio", 0))
    return sym.contrib.ROIAlign(
        node.sym(0), rois, pooled_size=(int(node.attr("output_height", 1)),
                                        int(node.attr("output_width", 1))),
        spatial_scale=float(node.attr("spatial_scale", 1.0)),
        sample_ratio=ratio if ratio > 0 else -1, aligned=aligned, name=node.sym_name)


def _resize_scales(node: ImportNode) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(scales, sizes) of Resize or Upsample, whichever is given."""
    if node.op_type == "Upsample":
        if "scales" in node.attrs:
            return np.asarray(node.attrs["scales"], dtype=np.float64), None
        return node.const(1, "scales").astype(np.float64), None
    if node.opset < 11:
        return node.const(1, "scales").astype(np.float64), None
    scales = node.values[2] if node.has(2) else None
    sizes = node.values[3] if node.has(3) else None
    if scales is not None and not isinstance(scales, np.ndarray):
        raise node.fail("the scales must be constant")
    if sizes is not None and not isinstance(sizes, np.ndarray):
        raise node.fail("the sizes must be constant")
    if scales is not None and scales.size == 0:
        scales = None
    return scales, sizes


@IMPORTS.register("Resize", "Upsample")
def resize(node: ImportNode):
    """Nearest upsampling by an integer factor (UpSampling), or bilinear resizing to
    sizes or by scales (contrib.BilinearResize2D, align_corners or half-pixel)."""
    if node.rank(0) != 4:
        raise node.fail("resizing of data that is not 4-D (N, C, H, W)")
    scales, sizes = _resize_scales(node)
    mode = node.attr("mode", "nearest")
    x = node.sym(0)
    if scales is not None and (scales[0] != 1 or scales[1] != 1):
        raise node.fail("resizing of the batch or channel axis")
    if mode == "nearest":
        if scales is None:
            shape = node.static_shape(0)
            if shape is None:
                raise node.fail("nearest resizing to sizes needs the input's size")
            scales = np.asarray(sizes, dtype=np.float64) / np.asarray(shape, dtype=np.float64)
        factor = scales[2]
        if factor != scales[3] or factor < 1 or factor != math.floor(factor):
            raise node.fail(f"nearest resizing by {tuple(scales)}: dagnet's UpSampling takes "
                            f"one integer factor for height and width")
        return sym.UpSampling(x, scale=int(factor), sample_type="nearest", num_args=1,
                              name=node.sym_name)
    if mode != "linear":
        raise node.fail(f"resize mode {mode!r} has no dagnet operator")
    transform = node.attr("coordinate_transformation_mode",
                          "half_pixel" if node.op_type == "Resize" else "asymmetric")
    if transform not in ("align_corners", "half_pixel", "pytorch_half_pixel"):
        raise node.fail(f"coordinate_transformation_mode {transform!r} of bilinear resizing")
    align = transform == "align_corners"
    if sizes is not None:
        return sym.contrib.BilinearResize2D(x, height=int(sizes[2]), width=int(sizes[3]),
                                            align_corners=align, name=node.sym_name)
    return sym.contrib.BilinearResize2D(x, scale_height=float(scales[2]),
                                        scale_width=float(scales[3]), align_corners=align,
                                        name=node.sym_name)
