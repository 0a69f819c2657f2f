"""Each export translation against ONNX Runtime, at opsets 12 and 13: a small symbol
per case, dagnet's outputs compared with ONNX Runtime's on the exported model, then the
model imported back and run by dagnet again."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx

rng = np.random.default_rng(7)


def uniform(*shape, low=-1.0, high=1.0, dtype=np.float32):
    return rng.uniform(low, high, shape).astype(dtype)


def integers(*shape, low=0, high=5, dtype=np.int64):
    return rng.integers(low, high, shape).astype(dtype)


def boxes(count):
    corner = rng.uniform(0, 10, (count, 2))
    size = rng.uniform(1, 5, (count, 2))
    return np.concatenate([corner, corner + size], axis=1).astype(np.float32)


S = mx.sym
x, y, z = S.var("x"), S.var("y"), S.var("z")

# (id, symbol, inputs in the symbol's input order, imports back)
CASES = [
    # element-wise
    ("abs", S.abs(x), [uniform(2, 3)], True),
    ("sqrt_log_exp", S.exp(S.log(S.sqrt(x))), [uniform(2, 3, low=0.5, high=2)], True),
    ("log2_rsqrt_cbrt", S.log2(x) + S.rsqrt(x) + S.cbrt(x), [uniform(5, low=0.5, high=3)], False),
    ("round_trunc", S.round(x) + S.trunc(x), [np.array([-2.5, -1.5, 0.5, 1.5, 2.7], np.float32)],
     False),
    ("sigmoid_tanh_relu", S.relu(S.tanh(S.sigmoid(x))), [uniform(4)], True),
    ("reciprocal_square", S.square(S.reciprocal(x)), [uniform(3, low=1, high=2)], True),
    ("logical_not", S.logical_not(x), [np.array([0, 1, 2, 0], np.float32)], True),
    ("broadcast_arith", S.broadcast_div(S.broadcast_mul(S.broadcast_sub(
        S.broadcast_add(x, y), y), y), y), [uniform(2, 3), uniform(1, 3, low=1, high=2)], True),
    ("broadcast_power_max_min", S.broadcast_minimum(S.broadcast_maximum(
        S.broadcast_power(x, y), y), x), [uniform(2, 3, low=0.5, high=2), uniform(3)], True),
    ("broadcast_mod_float", S.broadcast_mod(x, y),
     [np.array([5, -5, 5, -5, 3], np.float32), np.array([3, 3, -3, -3, 0], np.float32)], False),
    ("broadcast_mod_int", S.broadcast_mod(x, y),
     [np.array([5, -5, 5, -5, 3], np.int32), np.array([3, 3, -3, -3, 0], np.int32)], False),
    ("compare_logic", S.broadcast_logical_xor(S.broadcast_greater_equal(x, y),
                                              S.broadcast_not_equal(x, y)),
     [integers(3, 4, dtype=np.float32), integers(4, dtype=np.float32)], True),
    ("scalars", (2.5 + x) * 3 - 1 / (x + 2) + 2 ** x, [uniform(3, 2)], True),
    ("scalar_int", x * 2.7 + 3, [integers(5, high=9, dtype=np.int32)], True),
    ("scalar_compare", (x > 0.2) + (x <= -0.1), [uniform(6)], False),
    ("mod_scalar", x % 3, [uniform(6, low=-5, high=5)], False),
    ("clip_hard_sigmoid", S.hard_sigmoid(S.clip(x, -0.5, 0.7), alpha=0.3, beta=0.4),
     [uniform(5)], True),
    ("add_n", S.add_n(x, y, z), [uniform(2, 2), uniform(2, 2), uniform(2, 2)], True),
    # activations
    ("activations", S.Activation(S.Activation(x, act_type="softrelu"), act_type="softsign"),
     [uniform(4)], True),
    ("leaky_elu_selu_gelu", S.LeakyReLU(S.LeakyReLU(S.LeakyReLU(S.LeakyReLU(
        x, slope=0.1), act_type="elu", slope=0.5), act_type="selu"), act_type="gelu"),
     [uniform(2, 5)], True),
    ("prelu", S.LeakyReLU(x, y, act_type="prelu"), [uniform(2, 3, 4), uniform(3)], True),
    # dense, convolution, pooling
    ("fc_flatten", S.FullyConnected(x, y, z, num_hidden=4),
     [uniform(2, 3, 2), uniform(4, 6), uniform(4)], True),
    ("fc_no_flatten", S.FullyConnected(x, y, num_hidden=4, no_bias=True, flatten=False),
     [uniform(2, 3, 5), uniform(4, 5)], False),
    ("fc_int", S.FullyConnected(x, y, z, num_hidden=2),
     [integers(3, 4), integers(2, 4), integers(2)], False),
    ("conv2d", S.Convolution(x, y, z, kernel=(3, 3), stride=(2, 1), pad=(1, 2), dilate=(1, 2),
                             num_filter=4, num_group=2),
     [uniform(1, 4, 7, 8), uniform(4, 2, 3, 3), uniform(4)], True),
    ("conv1d", S.Convolution(x, y, kernel=(3,), num_filter=2, no_bias=True),
     [uniform(2, 3, 9), uniform(2, 3, 3)], True),
    ("conv3d", S.Convolution(x, y, kernel=(1, 2, 2), pad=(0, 1, 1), num_filter=2, no_bias=True),
     [uniform(1, 2, 3, 4, 4), uniform(2, 2, 1, 2, 2)], True),
    ("deconv", S.Deconvolution(x, y, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1),
                               num_filter=3),
     [uniform(1, 2, 4, 5), uniform(2, 3, 3, 3)], True),
    ("deconv_target", S.Deconvolution(x, y, kernel=(4, 4), stride=(2, 2), target_shape=(8, 8),
                                      num_filter=1),
     [uniform(1, 2, 4, 4), uniform(2, 1, 4, 4)], False),
    ("pool_max_full", S.Pooling(x, kernel=(3, 3), stride=(2, 2), pooling_convention="full"),
     [uniform(1, 2, 8, 8)], True),
    ("pool_avg_exclude_pad", S.Pooling(x, kernel=(3, 3), pad=(1, 1), pool_type="avg",
                                       count_include_pad=False), [uniform(1, 2, 5, 5)], True),
    ("pool_sum_lp", S.Pooling(x, kernel=(2, 2), pool_type="sum") + S.Pooling(
        x, kernel=(2, 2), pool_type="lp", p_value=2), [uniform(1, 2, 4, 4, low=0.1)], False),
    ("pool_global", S.Pooling(x, kernel=(1, 1), global_pool=True, pool_type="avg") + S.Pooling(
        x, kernel=(1, 1), global_pool=True, pool_type="max"), [uniform(2, 3, 4, 5)], True),
    ("pool_nhwc", S.Pooling(x, kernel=(2, 2), stride=(2, 2), layout="NHWC"),
     [uniform(1, 4, 4, 3)], False),
    ("adaptive_avg", S.contrib.AdaptiveAvgPooling2D(x, output_size=(2, 3)),
     [uniform(1, 2, 5, 7)], False),
    # normalization
    ("batchnorm", S.BatchNorm(x, y, z, S.var("mean"), S.var("var"), fix_gamma=False, eps=1e-3),
     [uniform(2, 3, 4), uniform(3), uniform(3), uniform(3), uniform(3, low=0.5, high=2)], True),
    ("batchnorm_fix_gamma_last_axis", S.BatchNorm(x, y, z, S.var("mean"), S.var("var"), axis=-1),
     [uniform(2, 4, 3), uniform(3), uniform(3), uniform(3), uniform(3, low=0.5, high=2)], False),
    ("instance_norm", S.InstanceNorm(x, y, z), [uniform(2, 3, 5), uniform(3), uniform(3)], True),
    ("layer_norm_axis1", S.LayerNorm(x, y, z, axis=1), [uniform(2, 3, 4), uniform(3), uniform(3)],
     False),
    ("group_norm", S.GroupNorm(x, y, z, num_groups=2), [uniform(2, 4, 3), uniform(2), uniform(2)],
     False),
    ("l2_normalization", S.L2Normalization(x, mode="instance") + S.L2Normalization(
        x, mode="channel") + S.L2Normalization(x, mode="spatial"), [uniform(2, 3, 4)], False),
    ("lrn", S.LRN(x, nsize=3, alpha=1e-3, beta=0.7, knorm=1.5), [uniform(1, 4, 3, 3)], True),
    # softmax and heads
    ("softmax_axis0_temperature", S.softmax(x, axis=0, temperature=2.0), [uniform(3, 4)], True),
    ("softmax_length", S.softmax(x, y, axis=1, use_length=True),
     [uniform(2, 4, 3), np.array([[1, 4, 2], [3, 0, 4]], np.float32)], False),
    ("log_softmax_softmin", S.log_softmax(x, axis=1) + S.softmin(x, axis=-1),
     [uniform(2, 3, 4)], False),
    ("softmax_output", S.SoftmaxOutput(x, S.var("label")),
     [uniform(2, 3, 4), np.zeros((2, 3), np.float32)], False),
    ("softmax_activation", S.SoftmaxActivation(x, mode="channel"), [uniform(2, 3, 2, 2)], True),
    ("regression_outputs", S.LogisticRegressionOutput(x, S.var("label")) + S.LinearRegressionOutput(
        x, S.var("label2")), [uniform(3, 2), uniform(3, 2), uniform(3, 2)], False),
    ("dropout", S.Dropout(x, p=0.5), [uniform(3, 3)], True),
    # resizing
    ("upsampling_nearest", S.UpSampling(x, scale=2, sample_type="nearest"),
     [uniform(1, 2, 3, 3)], True),
    ("upsampling_bilinear", S.UpSampling(x, y, scale=2, sample_type="bilinear", num_filter=2),
     [uniform(1, 2, 3, 3), uniform(2, 1, 4, 4)], True),
    ("bilinear_resize_size", S.contrib.BilinearResize2D(x, height=5, width=7),
     [uniform(1, 2, 3, 4)], True),
    ("bilinear_resize_scale", S.contrib.BilinearResize2D(
        x, scale_height=1.5, scale_width=0.5, align_corners=False), [uniform(1, 2, 4, 6)], True),
    # layout
    ("reshape_codes", S.reshape(S.reshape(S.reshape(x, shape=(0, -4, 2, -1, -2)),
                                          shape=(-3, -2)), shape=(-1, 5)),
     [uniform(2, 4, 3, 5)], True),
    ("reshape_reverse", S.reshape(x, shape=(-1, 0), reverse=True), [uniform(2, 3, 4)], True),
    ("reshape_like", S.reshape_like(x, y, lhs_begin=1, lhs_end=3, rhs_begin=0, rhs_end=1),
     [uniform(2, 3, 4), uniform(12, 5)], False),
    ("flatten_expand_squeeze", S.squeeze(S.expand_dims(S.flatten(x), axis=1), axis=1),
     [uniform(2, 3, 4)], True),
    ("squeeze_all_ones", S.squeeze(x), [uniform(1, 1)], False),
    ("transpose_swapaxes", S.SwapAxis(S.transpose(x, axes=(2, 0, 1)), dim1=0, dim2=2),
     [uniform(2, 3, 4)], True),
    ("concat_stack", S.stack(S.concat(x, y, dim=-1), S.concat(y, x, dim=-1), axis=1),
     [uniform(2, 3), uniform(2, 3)], True),
    ("slice_channel", S.SliceChannel(x, num_outputs=3, axis=1, squeeze_axis=True)[1],
     [uniform(2, 3, 4)], True),
    ("split_v2", S.split_v2(x, indices_or_sections=(1, 3), axis=-1)[2], [uniform(2, 5)], True),
    ("slice_steps", S.slice(x, begin=(None, 3), end=(None, 0), step=(1, -2)), [uniform(2, 5)],
     True),
    ("slice_axis_like", S.slice_like(S.slice_axis(x, axis=1, begin=-3, end=None), y, axes=(0,)),
     [uniform(4, 5), uniform(2, 1)], False),
    ("reverse_crop", S.Crop(S.reverse(x, axis=3), h_w=(2, 3), offset=(1, 0)),
     [uniform(1, 2, 4, 5)], True),
    ("tile_repeat", S.repeat(S.tile(x, reps=(2, 1, 2)), repeats=2, axis=1) + 0,
     [uniform(2, 3)], True),
    ("repeat_flat", S.repeat(x, repeats=3), [uniform(2, 2)], True),
    ("broadcasts", S.broadcast_like(S.broadcast_axis(S.broadcast_to(x, shape=(0, 3, 0)), axis=2,
                                                     size=1), y, lhs_axes=(0,), rhs_axes=(1,)),
     [uniform(1, 1, 1), uniform(5, 2)], False),
    ("pad_reflect_edge", S.Pad(S.Pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 2, 2, 1)),
                               mode="edge", pad_width=(0, 0, 0, 0, 1, 0, 0, 1)),
     [uniform(1, 2, 3, 4)], True),
    ("depth_space", S.space_to_depth(S.depth_to_space(x, block_size=2), block_size=2),
     [uniform(1, 8, 2, 3)], True),
    ("cast_shape_size", S.broadcast_add(S.broadcast_add(S.Cast(x, dtype="int64"),
                                                         S.shape_array(x).sum()),
                                        S.size_array(x)), [uniform(2, 3, high=9)], False),
    ("rnn_param_concat", S._internal._rnn_param_concat(x, y, num_args=2, dim=0),
     [uniform(6), uniform(4)], True),
    ("rnn_param_concat_dim", S._internal._rnn_param_concat(x, y, num_args=2),
     [uniform(2, 3, 2), uniform(2, 1, 2)], True),
    # indexing
    ("take_modes", S.take(x, y, axis=1, mode="wrap") + S.take(x, y, axis=1, mode="clip"),
     [uniform(2, 4), np.array([[-1, 5], [2, 0]], np.float32)], False),
    ("embedding", S.Embedding(x, y, input_dim=4, output_dim=3),
     [np.array([[0, 3], [1, 2]], np.float32), uniform(4, 3)], True),
    ("gather_nd", S.gather_nd(x, y), [uniform(3, 4, 2), np.array([[0, 2], [1, 3]], np.float32)],
     True),
    ("pick", S.pick(x, y, axis=1, keepdims=True), [uniform(3, 4), np.array([0, 3, 9], np.float32)],
     False),
    ("batch_take", S.batch_take(x, y), [uniform(3, 4), np.array([0, 3, 1], np.float32)], False),
    ("one_hot", S.one_hot(x, depth=4, on_value=2.0, off_value=-1.0),
     [np.array([0, 3, -1, 5], np.float32)], False),
    ("where_rows", S.where(x, y, z), [np.array([1, 0, 1], np.float32), uniform(3, 2),
                                      uniform(3, 2)], True),
    ("topk_both", S.topk(x, k=2, axis=1, ret_typ="both", is_ascend=True)[1] + 0,
     [uniform(3, 5)], True),
    ("topk_mask", S.topk(x, k=2, axis=0, ret_typ="mask"), [uniform(4, 3)], False),
    ("argsort_sort", S.argsort(x, axis=0, is_ascend=False) + S.sort(x, axis=0),
     [uniform(4, 3)], True),
    ("argmax_argmin", S.argmax(x, axis=None) + S.argmin(x, axis=1, keepdims=True).sum(),
     [uniform(3, 4)], False),
    # reductions
    ("sum_exclude", S.sum(x, axis=1, exclude=True), [uniform(2, 3, 4)], True),
    ("reductions", S.mean(x, axis=(0, 2), keepdims=True).sum() + S.max(x) + S.min(x, axis=1).sum()
     + S.prod(x, axis=2).sum(), [uniform(2, 3, 2, low=0.5, high=1.5)], True),
    ("nansum", S.nansum(x, axis=0), [np.array([[1, np.nan], [2, 3]], np.float32)], False),
    ("norm", S.broadcast_add(S.norm(x, ord=1, axis=1), S.norm(x, axis=(0, 1))), [uniform(2, 3)],
     True),
    ("moments", S.moments(x, axes=(1,))[1], [uniform(2, 5)], False),
    # creation
    ("constants", S.broadcast_add(x + S.zeros((2, 3)) + S.ones((2, 3)) + S.full((2, 3), 1.5),
                                  S.arange(0, 3, 1).reshape((1, 3))), [uniform(2, 3)], True),
    ("arange_like", S.broadcast_add(S.contrib.arange_like(x, start=1, step=0.5, repeat=2),
                                    S.contrib.arange_like(x, axis=1).reshape((1, 4))),
     [uniform(3, 4)], True),
    ("zeros_ones_like", S.zeros_like(x) + S.ones_like(x) + S.eye(3), [uniform(3, 3)], True),
    # sequences
    ("sequence_mask", S.SequenceMask(x, y, use_sequence_length=True, axis=1, value=-1),
     [uniform(2, 4, 3), np.array([1, 3], np.float32)], False),
    ("sequence_reverse", S.SequenceReverse(x, y, use_sequence_length=True),
     [uniform(4, 2, 3), np.array([2, 4], np.float32)], False),
    ("sequence_last", S.SequenceLast(x, y, use_sequence_length=True, axis=1) + S.SequenceLast(x),
     [uniform(3, 3, 2), np.array([1, 3, 2], np.float32)], False),
    # matrix products
    ("dot_nd", S.dot(x, y), [uniform(2, 3, 4), uniform(4, 5)], True),
    ("dot_transposed", S.dot(x, y, transpose_a=True, transpose_b=True),
     [uniform(3, 2), uniform(4, 3)], True),
    ("batch_dot", S.batch_dot(x, y, transpose_a=True), [uniform(2, 3, 4), uniform(2, 3, 5)], True),
    ("gemm2_gemm", S.linalg.gemm2(x, y, alpha=2.0, transpose_b=True) + S.linalg.gemm(
        x, y, z, transpose_b=True, alpha=0.5, beta=2.0),
     [uniform(2, 3, 4), uniform(2, 5, 4), uniform(2, 3, 5)], False),
    ("div_sqrt_dim", S.contrib.div_sqrt_dim(x), [uniform(2, 9)], True),
    ("self_attention", S.contrib.interleaved_matmul_selfatt_valatt(
        x, S.softmax(S.contrib.interleaved_matmul_selfatt_qk(x, heads=2)), heads=2),
     [uniform(3, 2, 2 * 3 * 4)], False),
    # detection
    ("box_decode", S.contrib.box_decode(x, y, std0=0.1, std1=0.2, std2=0.3, std3=0.4, clip=1.0),
     [uniform(2, 4, 4), boxes(4)[None]], False),
    ("roi_pooling", S.ROIPooling(x, y, pooled_size=(2, 2), spatial_scale=0.5),
     [uniform(1, 2, 8, 8), np.array([[0, 2, 2, 10, 12], [0, 0, 0, 6, 6]], np.float32)], True),
    ("roi_align", S.contrib.ROIAlign(x, y, pooled_size=(2, 3), spatial_scale=0.5, sample_ratio=2),
     [uniform(2, 2, 8, 8), np.array([[1, 2, 2, 10, 12], [-1, 0, 0, 6, 6], [0, 1, 1, 9, 5]],
                                    np.float32)], False),
    ("multibox_prior", S.contrib.MultiBoxPrior(x, sizes=(0.5, 0.25), ratios=(1, 2)) + 0,
     [uniform(1, 2, 3, 4)], True),
]

RNN_CASES = [
    ("lstm_bidirectional", "lstm", 1, True),
    ("lstm_two_layers", "lstm", 2, False),
    ("gru", "gru", 2, False),
    ("rnn_relu", "rnn_relu", 1, False),
    ("rnn_tanh_bidirectional", "rnn_tanh", 1, True),
]


def _run(symbol, values):
    """Forward ``symbol`` with ``values`` by name (arguments and auxiliary states)."""
    aux_names = set(symbol.list_auxiliary_states())
    # an import may fold away an input whose values no output reads (only its shape)
    inputs = set(symbol.list_inputs())
    args = {n: v for n, v in values.items() if n not in aux_names and n in inputs}
    aux = {n: v for n, v in values.items() if n in aux_names}
    return [o.asnumpy() for o in symbol.bind(mx.cpu(), args, aux_states=aux).forward()]


def _reference(symbol, arrays):
    return _run(symbol, {n: mx.nd.array(a, dtype=a.dtype)
                         for n, a in zip(symbol.list_inputs(), arrays)})


def _check(symbol, arrays, opset, imports_back, run_onnx, rtol=1e-4, atol=1e-5):
    expected = _reference(symbol, arrays)
    model = mx.onnx.export_to_proto(symbol, {}, [a.shape for a in arrays],
                                    [a.dtype for a in arrays], opset_version=opset)
    assert model.opset_import[0].version == opset
    for got, want in zip(run_onnx(model, *arrays), expected):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if imports_back:
        imported, arg_params, aux_params = mx.onnx.import_model(model)
        values = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(symbol.list_inputs(), arrays)}
        values.update(arg_params)
        values.update(aux_params)
        for got, want in zip(_run(imported, values), expected):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


# a softmax over a sequence of length 0 is 0 / 0 (NaN) in dagnet, and numpy says so
@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")
@pytest.mark.parametrize("opset", [12, 13])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_translation_matches_onnx_runtime(case, opset, run_onnx):
    _, symbol, arrays, imports_back = case
    _check(symbol, arrays, opset, imports_back, run_onnx)


@pytest.mark.parametrize("opset", [12, 13])
@pytest.mark.parametrize("case", RNN_CASES, ids=[c[0] for c in RNN_CASES])
def test_rnn_matches_onnx_runtime(case, opset, run_onnx):
    _, mode, layers, bidirectional = case
    hidden, inputs, batch, steps = 3, 3, 2, 4
    directions = 2 if bidirectional else 1
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    size = sum(directions * gates * hidden * ((inputs if layer == 0 else directions * hidden)
                                               + hidden + 2) for layer in range(layers))
    states = [S.var("h0")] + ([S.var("c0")] if mode == "lstm" else [])
    symbol = S.Group(list(S.RNN(x, S.var("params"), *states, state_size=hidden,
                                num_layers=layers, bidirectional=bidirectional, mode=mode,
                                state_outputs=True)))
    arrays = [uniform(steps, batch, inputs), uniform(size, low=-0.5, high=0.5)]
    arrays += [uniform(layers * directions, batch, hidden) for _ in states]
    _check(symbol, arrays, opset, False, run_onnx, atol=1e-5)


def test_box_nms_keeps_mxnet_layout(run_onnx):
    rows = np.concatenate([integers(2, 6, 1, high=3).astype(np.float32),
                           uniform(2, 6, 1, low=0, high=1), np.stack([boxes(6)] * 2)], axis=-1)
    for options in ({"force_suppress": True}, {"id_index": 0, "topk": 4},
                    {"id_index": 0, "background_id": 0, "in_format": "corner",
                     "out_format": "center"}):
        symbol = S.contrib.box_nms(x, overlap_thresh=0.3, valid_thresh=0.1, coord_start=2,
                                   score_index=1, **options)
        _check(symbol, [rows], 13, False, run_onnx)


def test_box_nms_per_class_is_exact_far_from_the_origin(run_onnx):
    # Two boxes of class 12 overlapping by 0.464 (above 0.45: the second is suppressed),
    # the same pair again as class 13, and a box of class 0 a million away: any shifting
    # of classes apart by the boxes' span would round these narrow boxes in float32.
    # The last row has its corners the wrong way round: it overlaps nothing.
    pair = [[0.92, 13.277958, -48.884132, 13.535505, 78.86708],
            [0.897, 13.258251, -19.985537, 13.503048, 50.67376]]
    rows = np.array([[12, *pair[0]], [12, *pair[1]], [13, *pair[0]], [13, *pair[1]],
                     [0, 0.5, 1e6, 1e6, 1e6 + 5, 1e6 + 5],
                     [12, 0.6, 13.5, 78.0, 13.3, -48.0]], np.float32)[None]
    symbol = S.contrib.box_nms(x, overlap_thresh=0.45, valid_thresh=0.01, coord_start=2,
                               score_index=1, id_index=0)
    kept = mx.nd.contrib.box_nms(mx.nd.array(rows), overlap_thresh=0.45, valid_thresh=0.01,
                                 coord_start=2, score_index=1, id_index=0).asnumpy()
    assert (kept[0, :, 0] >= 0).sum() == 4  # dagnet agrees with MXNet's arithmetic here
    _check(symbol, [rows], 13, False, run_onnx)
