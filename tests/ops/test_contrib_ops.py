"""The contrib operators and legacy functions MXNet's unit tests call, against values
computed by hand or with MXNet 1.9.1 (written down here), and their errors.  Forward
against numpy references and gradients against central differences run for each of
them, on every engine, in test_conformance.py."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def test_fill_element_0index():
    lhs = mx.nd.array(np.arange(6.0).reshape(2, 3))
    out = mx.nd.fill_element_0index(lhs, mx.nd.array([10, 20]), mx.nd.array([2, 0]))
    np.testing.assert_array_equal(out.asnumpy(), [[0, 1, 10], [20, 4, 5]])
    with pytest.raises(mx.base.MXNetError, match="outside \\[0, 3\\)"):
        mx.nd.fill_element_0index(lhs, mx.nd.array([1, 2]), mx.nd.array([3, 0])).asnumpy()
    with pytest.raises(mx.base.MXNetError, match="one value per row"):
        mx.nd.fill_element_0index(lhs, mx.nd.array([1, 2, 3]), mx.nd.array([0, 0]))


# MXNet 1.9.1's values for a (1, 1, 3, 2) image resized to 6 x 4
_IMAGE = np.array([64, 32, 32, 64, 50, 100], np.float32).reshape(1, 1, 3, 2)
_NOT_ALIGNED = [64.0, 56.0, 40.0, 32.0, 56.0, 52.0, 44.0, 40.0, 40.0, 44.0, 52.0, 56.0,
                36.5, 45.625, 63.875, 73.0, 45.5, 56.875, 79.625, 91.0, 50.0, 62.5, 87.5, 100.0]
_ALIGNED = [64.0, 53.333, 42.667, 32.0, 51.2, 49.067, 46.933, 44.8, 38.4, 44.8, 51.2, 57.6,
            35.6, 47.467, 59.333, 71.2, 42.8, 57.067, 71.333, 85.6, 50.0, 66.667, 83.333, 100.0]


@pytest.mark.parametrize(("align", "want"), [(False, _NOT_ALIGNED), (True, _ALIGNED)])
def test_bilinear_resize_matches_mxnet(align, want):
    out = mx.nd.contrib.BilinearResize2D(mx.nd.array(_IMAGE), height=6, width=4,
                                         align_corners=align)
    np.testing.assert_allclose(out.asnumpy().ravel(), want, atol=1e-3)


@pytest.mark.parametrize(("mode", "shape"), [("to_even_down", (2, 4)), ("to_even_up", (4, 6)),
                                             ("to_odd_down", (3, 5)), ("to_odd_up", (3, 5))])
def test_bilinear_resize_modes_shape(mode, shape):
    x = mx.nd.ones((1, 2, 3, 5))
    assert mx.nd.contrib.BilinearResize2D(x, mode=mode).shape == (1, 2) + shape


def test_bilinear_resize_symbol_takes_none_for_like():
    data = mx.sym.var("data")
    sym = mx.sym.contrib.BilinearResize2D(data, None, scale_height=2.0, scale_width=2.0)
    assert sym.list_arguments() == ["data"]
    assert sym.infer_shape(data=(1, 1, 3, 4))[1] == [(1, 1, 6, 8)]
    like = mx.sym.contrib.BilinearResize2D(data, mx.sym.var("like"), mode="like")
    assert like.infer_shape(data=(1, 1, 3, 4), like=(1, 1, 5, 7))[1] == [(1, 1, 5, 7)]
    with pytest.raises(mx.base.MXNetError, match="needs scale_width"):
        mx.sym.contrib.BilinearResize2D(data, scale_height=2.0).infer_shape(data=(1, 1, 3, 4))


def test_batchnorm_v1_training_step_matches_mxnet():
    sym = mx.sym.BatchNorm_v1(mx.sym.var("x"), fix_gamma=False, output_mean_var=True, name="bn")
    ex = sym.simple_bind(mx.cpu(), x=(2, 3, 2, 1))
    ex.arg_dict["x"][:] = mx.nd.array(np.arange(12.0).reshape(2, 3, 2, 1) * 0.5 - 1)
    ex.arg_dict["bn_gamma"][:] = mx.nd.array([1.0, 2.0, 3.0])
    ex.arg_dict["bn_beta"][:] = mx.nd.array([0.0, 1.0, 0.0])
    ex.aux_dict["bn_moving_var"][:] = 1
    out, mean, var = ex.forward(is_train=True)
    # MXNet 1.9.1's values; its var output is the variance itself
    np.testing.assert_allclose(out.asnumpy()[0, :, 0, 0], [-1.1505, -1.3011, -3.4516],
                               atol=1e-4)
    np.testing.assert_allclose(mean.asnumpy(), [0.75, 1.75, 2.75], atol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), [2.3125] * 3, atol=1e-6)
    ex.backward([mx.nd.array(np.linspace(-1, 1, 12).reshape(2, 3, 2, 1)), mx.nd.zeros(3),
                 mx.nd.zeros(3)])
    np.testing.assert_allclose(ex.grad_dict["bn_gamma"].asnumpy(), [2.2114] * 3, atol=1e-4)
    np.testing.assert_allclose(ex.grad_dict["bn_beta"].asnumpy(), [-1.4545, 0, 1.4545],
                               atol=1e-4)
    np.testing.assert_allclose(ex.aux_dict["bn_moving_var"].asnumpy(), [1.1312] * 3, atol=1e-4)


def test_quantize_and_dequantize_match_mxnet():
    a = mx.nd.array([[0.1392, 0.5928], [0.6027, 0.8579]])
    qa, lo, hi = mx.nd.contrib.quantize(a, mx.nd.array([0.0]), mx.nd.array([1.0]),
                                        out_type="int8")
    assert qa.dtype == np.int8 and lo.dtype == np.float32
    np.testing.assert_array_equal(qa.asnumpy(), [[18, 75], [77, 109]])
    # MXNet's CPU build dequantizes with MKL-DNN: 127.5 steps for the range
    back = mx.nd.contrib.dequantize(qa, lo, hi, out_type="float32")
    np.testing.assert_allclose(back.asnumpy(), [[0.14117648, 0.5882353], [0.6039216, 0.854902]],
                               rtol=1e-6)
    # quantize_v2 takes the range from the data: MXNet gives (-1.5, 1.5) and these values
    q, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array([[-0.5, 0.2], [1.5, 0.9]]))
    np.testing.assert_array_equal(q.asnumpy(), [[-42, 17], [127, 76]])
    assert (lo.asscalar(), hi.asscalar()) == (-1.5, 1.5)
    np.testing.assert_allclose(mx.nd.contrib.dequantize(q, lo, hi).asnumpy(),
                               [[-0.49411765, 0.2], [1.4941176, 0.89411765]], rtol=1e-6)
    # uint8 keeps zero at zero and reports the data's own range
    q, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array([[0.5, 0.2], [1.5, 0.9]]),
                                          out_type="uint8")
    np.testing.assert_array_equal(q.asnumpy(), [[85, 34], [255, 153]])
    np.testing.assert_allclose([lo.asscalar(), hi.asscalar()], [0.2, 1.5], rtol=1e-6)
    np.testing.assert_allclose(mx.nd.contrib.dequantize(q, lo, hi).asnumpy(),
                               [[0.49902153, 0.19960861], [1.4970646, 0.8982387]], rtol=1e-6)
    q, _, _ = mx.nd.contrib.quantize_v2(mx.nd.array([0.3, 0.5, 0.7, 1.0]), out_type="int8",
                                        min_calib_range=-1.0, max_calib_range=1.0)
    np.testing.assert_array_equal(q.asnumpy(), [38, 64, 89, 127])  # halves to even
    q, _, _ = mx.nd.contrib.quantize_v2(a, out_type="auto", min_calib_range=0.0,
                                        max_calib_range=1.0)
    assert q.dtype == np.uint8
    with pytest.raises(mx.base.MXNetError, match="must be int8 or uint8"):
        mx.nd.contrib.dequantize(a, lo, hi)


def test_quantize_outputs_are_named_as_mxnet_names_them():
    d, lo, hi = mx.sym.var("d"), mx.sym.var("lo"), mx.sym.var("hi")
    assert mx.sym.contrib.quantize_v2(d, name="q").list_outputs() == \
        ["q_output0", "q_output1", "q_output2"]
    assert mx.sym.contrib.quantize(d, lo, hi, name="q").list_outputs() == \
        ["q_output0", "q_output1", "q_output2"]
    pooled = mx.sym.contrib.quantized_pooling(d, lo, hi, kernel=(2, 2), name="p")
    assert pooled.list_outputs() == ["p_output", "p_min_output", "p_max_output"]


_POOL_DATA = np.array([[[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 12, 11], [0, 3, 1, 2]]]])


@pytest.mark.parametrize(("params", "want"), [
    # MXNet 1.9.1's values: averages rounded halves to even; counting the padding, a
    # "full" window is divided by its whole size, overhang included
    ({"kernel": (2, 2), "stride": (2, 2), "pool_type": "avg"}, [4, 6, 6, 6]),
    ({"kernel": (2, 2), "stride": (2, 2), "pool_type": "max"}, [6, 8, 10, 12]),
    ({"kernel": (3, 3), "stride": (2, 2), "pool_type": "avg", "pooling_convention": "full"},
     [6, 5, 4, 3]),
    ({"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg",
      "pooling_convention": "full", "count_include_pad": False}, [4, 5, 6, 6, 7, 7, 2, 2, 2]),
    ({"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg",
      "pooling_convention": "full"}, [2, 3, 1, 4, 7, 2, 0, 1, 0]),
    ({"global_pool": True, "kernel": (1, 1), "pool_type": "avg"}, [5]),
])
def test_quantized_pooling_matches_mxnet(params, want):
    data = mx.nd.array(_POOL_DATA, dtype="uint8")
    out, lo, hi = mx.nd.contrib.quantized_pooling(data, mx.nd.array([0.0]), mx.nd.array([1.0]),
                                                  **params)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out.asnumpy().ravel(), want)
    assert (lo.asscalar(), hi.asscalar()) == (0.0, 1.0)


def test_quantized_pooling_errors():
    data = mx.nd.array(_POOL_DATA, dtype="int8")
    lo, hi = mx.nd.array([-1.0]), mx.nd.array([1.0])
    with pytest.raises(mx.base.MXNetError, match="int8 or uint8"):
        mx.nd.contrib.quantized_pooling(data.astype("float32"), lo, hi, kernel=(2, 2))
    with pytest.raises(mx.base.MXNetError, match="max or avg"):
        mx.nd.contrib.quantized_pooling(data, lo, hi, kernel=(2, 2), pool_type="lp", p_value=2)
    with pytest.raises(mx.base.MXNetError, match="4-D"):
        mx.nd.contrib.quantized_pooling(data.reshape((4, 4)), lo, hi, kernel=(2, 2))


def test_prelu_gamma_per_sample_and_channel():
    x = mx.nd.array([[-1.0, 2.0], [-3.0, -4.0]])
    gamma = mx.nd.array([[0.1, 0.2], [0.3, 0.4]])
    out = mx.nd.LeakyReLU(x, gamma, act_type="prelu")
    np.testing.assert_allclose(out.asnumpy(), [[-0.1, 2.0], [-0.9, -1.6]], rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match="does not fit data"):
        mx.nd.LeakyReLU(x, mx.nd.ones((3,)), act_type="prelu")


def test_broadcast_like_axes_as_mxnet():
    lhs, rhs = mx.nd.ones((1, 3)), mx.nd.ones((2, 3))
    assert mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0,)).shape == (2, 3)  # one list: whole rhs
    assert mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0,), rhs_axes=(0,)).shape == (2, 3)
    with pytest.raises(mx.base.MXNetError, match="empty"):
        mx.nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=())


def test_convolution_infers_data_back_from_its_output():
    a = mx.sym.Variable("a", shape=(0, 10, 0, 0))
    b = mx.sym.Convolution(data=a, num_filter=21, kernel=(3, 3), pad=(1, 1))
    d = b + mx.sym.Variable("c", shape=(5, 21, 32, 32))
    arg_shapes, _, _ = d.infer_shape()
    assert dict(zip(d.list_arguments(), arg_shapes))["a"] == (5, 10, 32, 32)


def test_boolean_mask_output_shape_from_the_index_values():
    data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    data.attach_grad()
    index = mx.nd.array([0, 1, 1])
    index += 0  # still pending when the call is made: the call waits for it
    with mx.autograd.record():
        out = mx.nd.contrib.boolean_mask(data, index)
    out.backward(mx.nd.array([[1, 1, 1], [2, 2, 2]]))
    np.testing.assert_array_equal(out.asnumpy(), [[4, 5, 6], [7, 8, 9]])
    np.testing.assert_array_equal(data.grad.asnumpy(), [[0, 0, 0], [1, 1, 1], [2, 2, 2]])
    cols = mx.nd.contrib.boolean_mask(data, mx.nd.array([1, 0, 1]), axis=1)
    np.testing.assert_array_equal(cols.asnumpy(), [[1, 3], [4, 6], [7, 9]])
    with pytest.raises(mx.base.MXNetError, match="index has 2 entries"):
        mx.nd.contrib.boolean_mask(data, mx.nd.array([1, 0]))
    sym = mx.sym.contrib.boolean_mask(mx.sym.var("d"), mx.sym.var("i"))
    with pytest.raises(mx.base.MXNetError):
        sym.simple_bind(mx.cpu(), d=(3, 3), i=(3,))


def _proposal_inputs():
    rng = np.random.RandomState(0)
    for h in (5, 8):  # the draws of the case MXNet's values below come from
        w = 5 if h == 5 else 6
        cls, bbox = rng.random_sample((1, 18, h, w)), rng.random_sample((1, 36, h, w)) * 0.4 - 0.2
    return mx.nd.array(cls), mx.nd.array(bbox), mx.nd.array([[120, 90, 0.8]])


def test_proposal_matches_mxnet_and_multi_proposal_stacks_images():
    cls, bbox, info = _proposal_inputs()
    params = dict(feature_stride=16, scales=(2, 4, 8), ratios=(0.5, 1, 2), rpn_pre_nms_top_n=100,
                  rpn_post_nms_top_n=20, rpn_min_size=8, threshold=0.5)
    rois, score = mx.nd.contrib.Proposal(cls, bbox, info, output_score=True, **params)
    assert rois.shape == (20, 5) and score.shape == (20, 1)
    # MXNet 1.9.1's first three proposals for these inputs
    np.testing.assert_allclose(
        np.concatenate([rois.asnumpy(), score.asnumpy()], 1)[:3],
        [[0.0, 7.19747, 70.29373, 39.73502, 96.87376, 0.998199],
         [0.0, 42.57744, 0.0, 82.33884, 61.24746, 0.989525],
         [0.0, 7.63083, 93.87540, 48.40971, 114.04442, 0.989088]], rtol=1e-5, atol=1e-4)
    two = mx.nd.contrib.MultiProposal(mx.nd.concat(cls, cls, dim=0),
                                      mx.nd.concat(bbox, bbox, dim=0),
                                      mx.nd.concat(info, info, dim=0), **params)
    np.testing.assert_array_equal(two.asnumpy()[:, 0], [0] * 20 + [1] * 20)
    np.testing.assert_allclose(two.asnumpy()[20:, 1:], rois.asnumpy()[:, 1:])
    with pytest.raises(mx.base.MXNetError, match="MultiProposal for a batch"):
        mx.nd.contrib.Proposal(mx.nd.concat(cls, cls, dim=0), mx.nd.concat(bbox, bbox, dim=0),
                               mx.nd.concat(info, info, dim=0), **params)


def test_deformable_convolutions_match_mxnet():
    x = mx.nd.array(np.arange(18.0).reshape(1, 2, 3, 3))
    off = mx.nd.array(np.linspace(-1.3, 1.7, 2 * 4 * 4).reshape(1, 8, 2, 2))
    w = mx.nd.array(np.linspace(-1, 1, 16).reshape(2, 2, 2, 2))
    m = mx.nd.array(np.linspace(0.1, 0.9, 16).reshape(1, 4, 2, 2))
    plain = mx.nd.contrib.DeformableConvolution(x, off, w, kernel=(2, 2), num_filter=2,
                                                no_bias=True)
    modulated = mx.nd.contrib.ModulatedDeformableConvolution(x, off, m, w, kernel=(2, 2),
                                                             num_filter=2, no_bias=True)
    # MXNet 1.9.1's values (its CPU kernels: the two read border points differently)
    np.testing.assert_allclose(plain.asnumpy().ravel(),
                               [-11.8219, -7.1832, -14.8434, -17.3497, 33.7901, 14.7213,
                                25.449, 27.9183], atol=1e-3)
    np.testing.assert_allclose(modulated.asnumpy().ravel(),
                               [-6.234, -5.2863, -5.9079, -7.411, 16.8292, 10.3027, 9.9038,
                                11.1981], atol=1e-3)
    sym = mx.sym.contrib.ModulatedDeformableConvolution(
        mx.sym.var("d"), mx.sym.var("o"), mx.sym.var("m"), kernel=(3, 3), num_filter=4, name="dc")
    assert sym.list_arguments() == ["d", "o", "m", "dc_weight", "dc_bias"]


@pytest.mark.parametrize("op,roi,params", [
    ("PSROIPooling", [2, 0, 0, 3, 3], {"output_dim": 1, "pooled_size": 1}),
    ("RROIAlign", [2, 1, 1, 2, 2, 0], {"pooled_size": (1, 1)}),
])
def test_roi_ops_keep_the_dtype_and_refuse_a_roi_naming_a_missing_sample(op, roi, params):
    pool = getattr(mx.nd.contrib, op)
    data = mx.nd.ones((1, 1, 4, 4), dtype="float64")
    fine = pool(data, mx.nd.array([[0, *roi[1:]]], dtype="float64"), spatial_scale=1.0,
                **params)
    assert fine.dtype == np.float64
    with pytest.raises(mx.MXNetError, match=f"'_contrib_{op}': roi 0 names batch 2, but data "
                                            f"has 1"):
        pool(data, mx.nd.array([roi], dtype="float64"), spatial_scale=1.0, **params).asnumpy()


def test_roi_align_on_a_large_map_reads_only_around_each_roi():
    # the kernel multiplies only the window a roi's weights touch: moving the map and the
    # rois together (away from the borders) must not change a value, in either direction
    rng = np.random.default_rng(0)
    data = rng.standard_normal((1, 3, 64, 80))
    rois = np.array([[0, 40.2, 30.7, 52.9, 44.1], [0, 45.0, 33.0, 47.5, 60.0]])
    shifted = rois - [0, 32, 24, 32, 24]
    x, part = mx.nd.array(data, dtype="float64"), mx.nd.array(data[:, :, 24:, 32:],
                                                                 dtype="float64")
    outs, grads = [], []
    for d, r in ((x, rois), (part, shifted)):
        d.attach_grad()
        with mx.autograd.record():
            y = mx.nd.contrib.ROIAlign(d, mx.nd.array(r, dtype="float64"), pooled_size=(3, 2),
                                       spatial_scale=1.0, sample_ratio=2)
        y.backward(mx.nd.ones_like(y))
        outs.append(y.asnumpy())
        grads.append(d.grad.asnumpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)
    np.testing.assert_allclose(grads[0][:, :, 24:, 32:], grads[1], rtol=1e-12)
    assert not grads[0][:, :, :24].any() and not grads[0][:, :, :, :32].any()
