"""Direct kernel tests of the neural-network operators (plugins/dagnet_ops/nn), numpy only.

Three kinds of checks:

- ``ORACLE``: forward outputs and gradients compared with MXNet 1.9.1.  Inputs are
  deterministic (:func:`det`); each array is summarized by :func:`stat` (its sum and a
  position-weighted sum).  The figures came from MXNet's reference CPU kernels
  (``MXNET_MKLDNN_ENABLED=0``) under ``autograd.record`` with the head gradient
  ``det(out.shape, 5.0)`` on the first output; ``aux_after`` are the moving statistics
  after the step.
- central differences (float64) of the backward operators where the conformance suite
  cannot reach: training-mode BatchNorm, the loss layers' own losses;
- MXNet's shape inference, argument lists and behaviours (Dropout, rrelu).
"""

from __future__ import annotations

import numpy as np
import pytest

from dagnet._errors import ParamError, ShapeError
from dagnet.operator import OpContext, OpReqType
from dagnet_ops.nn import (
    activation,
    batch_norm,
    convolution,
    deconvolution,
    dropout,
    embedding,
    fully_connected,
    lrn,
    make_loss,
    pooling,
    regression_output,
    smooth_l1,
    softmax,
)

_MODULES = [activation, batch_norm, convolution, deconvolution, dropout, embedding, fully_connected,
            lrn, make_loss, pooling, regression_output, smooth_l1, softmax]
OPS = {op.name: op for module in _MODULES for op in module.OPS}


class _Random:
    """A random resource as the manager hands it to a kernel."""

    def __init__(self, seed: int = 0):
        self.generator = np.random.default_rng(seed)


def det(shape, seed=0.0, scale=1.0, offset=0.0, abs=False, dtype=np.float64):
    """Deterministic inputs: ``sin(0.7 * i + seed) * scale``, maybe ``|.|``, plus ``offset``."""
    values = np.sin(np.arange(int(np.prod(shape))) * 0.7 + seed) * scale
    return ((np.abs(values) if abs else values) + offset).reshape(shape).astype(dtype)


def stat(a):
    a = np.asarray(a, dtype=np.float64)
    return [a.sum(), (a * np.cos(np.arange(a.size) * 1.3).reshape(a.shape)).sum()]


def make(recipe, dtype=np.float64):
    if "values" in recipe:
        return np.array(recipe["values"], dtype=dtype)
    return det(recipe["shape"], recipe.get("seed", 0.0), recipe.get("scale", 1.0),
               recipe.get("offset", 0.0), recipe.get("abs", False), dtype)


def forward(name, params, inputs, *, is_train=False, seed=0):
    """Run the forward kernel; returns the outputs (inputs that are states are updated)."""
    op = OPS[name]
    attrs = op.parse_params(params)
    _, shapes = op.shapes(attrs, [a.shape for a in inputs])
    _, dtypes = op.dtypes(attrs, [a.dtype for a in inputs])
    outputs = [np.zeros(s, d) for s, d in zip(shapes, dtypes)]
    requested = [_Random(seed) for _ in op.resource_requests(attrs)]
    op.kernel_for("cpu")(attrs, OpContext(is_train, None, requested, np), inputs,
                         [OpReqType.WRITE] * len(outputs), outputs)
    return outputs


def backward(name, params, inputs, outputs, heads, *, is_train=False):
    """Run the backward kernel with the arrays the gradient rule declares; returns one
    gradient per non-state input."""
    op = OPS[name]
    attrs = op.parse_params(params)
    rule = op.gradient
    parts = {"out_grad": list(heads), "in_data": list(inputs), "out_data": list(outputs)}
    states = set(op.mutated_inputs(attrs))
    grads = [np.zeros_like(a) for i, a in enumerate(inputs) if i not in states]
    OPS[rule.backward].kernel_for("cpu")(
        attrs, OpContext(is_train, None, [], np), [a for use in rule.uses for a in parts[use]],
        [OpReqType.WRITE] * len(grads), grads)
    return grads


def numeric_gradient(f, inputs, index, eps=1e-6):
    """d f(inputs) / d inputs[index] by central differences (f returns a float)."""
    x = inputs[index]
    grad = np.zeros_like(x)
    for pos in np.ndindex(x.shape):
        saved = x[pos]
        x[pos] = saved + eps
        up = f(inputs)
        x[pos] = saved - eps
        down = f(inputs)
        x[pos] = saved
        grad[pos] = (up - down) / (2 * eps)
    return grad


ORACLE = {
    "conv2d": dict(
        op="Convolution",
        params={"kernel": [3, 2],
                "stride": [2, 1],
                "pad": [1, 1],
                "dilate": [1, 2],
                "num_filter": 6,
                "num_group": 2},
        inputs=[{"shape": [2, 4, 6, 5], "seed": 0.1},
                {"shape": [6, 2, 3, 2], "seed": 0.2, "scale": 0.5}, {"shape": [6], "seed": 0.3}],
        out=[[67.262855, 4.376706]],
        grad=[[17.48532, 0.361437], [-0.10431, 22.125276], [-0.485336, -3.300223]],
    ),
    "conv1d": dict(
        op="Convolution",
        params={"kernel": [3], "stride": [2], "pad": [1], "num_filter": 3, "no_bias": True},
        inputs=[{"shape": [2, 2, 7], "seed": 1.0}, {"shape": [3, 2, 3], "seed": 2.0}],
        out=[[0.013205, 10.293991]],
        grad=[[-6.443064, 0.922001], [-6.728188, -0.436107]],
    ),
    "deconv2d": dict(
        op="Deconvolution",
        params={"kernel": [3, 3],
                "stride": [2, 2],
                "pad": [1, 1],
                "adj": [1, 1],
                "num_filter": 6,
                "num_group": 2,
                "no_bias": False},
        inputs=[{"shape": [2, 4, 3, 3], "seed": 0.4}, {"shape": [4, 3, 3, 3], "seed": 0.5},
                {"shape": [6], "seed": 0.6}],
        out=[[-0.112624, -7.626414]],
        grad=[[-19.605354, -18.386061], [-3.103291, -26.530781], [-1.079201, -0.197662]],
    ),
    "deconv_target": dict(
        op="Deconvolution",
        params={"kernel": [4, 4], "stride": [2, 2], "target_shape": [9, 8], "num_filter": 2},
        inputs=[{"shape": [1, 3, 4, 4], "seed": 0.7}, {"shape": [3, 2, 4, 4], "seed": 0.8}],
        out=[[1.341561, 1.458377]],
        grad=[[-2.023747, 19.632209], [31.354375, 0.674764]],
    ),
    "deconv_dilated": dict(
        op="Deconvolution",
        params={"kernel": [3, 3], "dilate": [2, 2], "pad": [1, 1], "num_filter": 2},
        inputs=[{"shape": [1, 3, 4, 4], "seed": 0.7}, {"shape": [3, 2, 3, 3], "seed": 0.8}],
        out=[[-3.806835, -0.540511]],
        grad=[[13.330346, -1.463673], [-0.258304, -0.826037]],
    ),
    "pool_max_pad": dict(
        op="Pooling",
        params={"kernel": [3, 3], "stride": [2, 2], "pad": [1, 1], "pool_type": "max"},
        inputs=[{"shape": [2, 3, 7, 6], "seed": 0.9}],
        out=[[63.434146, -0.194728]],
        grad=[[-0.195998, 2.264773]],
    ),
    "pool_avg_full_excl": dict(
        op="Pooling",
        params={"kernel": [3, 3],
                "stride": [2, 2],
                "pad": [1, 1],
                "pool_type": "avg",
                "pooling_convention": "full",
                "count_include_pad": False},
        inputs=[{"shape": [2, 3, 7, 6], "seed": 0.9}],
        out=[[0.156476, -1.457914]],
        grad=[[1.248345, 1.407976]],
    ),
    "pool_avg_incl": dict(
        op="Pooling",
        params={"kernel": [2, 3], "stride": [1, 2], "pad": [1, 1], "pool_type": "avg"},
        inputs=[{"shape": [2, 3, 7, 6], "seed": 0.9}],
        out=[[0.218434, 2.351482]],
        grad=[[-0.177622, -1.327366]],
    ),
    "pool_sum_full": dict(
        op="Pooling",
        params={"kernel": [2, 2],
                "stride": [2, 2],
                "pool_type": "sum",
                "pooling_convention": "full"},
        inputs=[{"shape": [2, 3, 7, 6], "seed": 0.9}],
        out=[[0.480975, 0.977976]],
        grad=[[-0.393894, -3.097729]],
    ),
    "pool_lp2": dict(
        op="Pooling",
        params={"kernel": [2, 2], "stride": [1, 1], "pool_type": "lp", "p_value": 2},
        inputs=[{"shape": [2, 3, 7, 6], "seed": 0.9, "abs": True, "offset": 0.1}],
        out=[[285.217406, 1.731945]],
        grad=[[-0.678178, 3.790875]],
    ),
    "pool_global_avg": dict(
        op="Pooling",
        params={"kernel": [1, 1], "global_pool": True, "pool_type": "avg"},
        inputs=[{"shape": [2, 3, 7, 6], "seed": 0.9}],
        out=[[0.011452, 0.045526]],
        grad=[[1.132939, -0.006527]],
    ),
    "pool_max_1d": dict(
        op="Pooling",
        params={"kernel": [3], "stride": [2], "pool_type": "max"},
        inputs=[{"shape": [2, 3, 7], "seed": 0.9}],
        out=[[8.314933, -0.549464]],
        grad=[[-0.048984, 1.384004]],
    ),
    "bn_train": dict(
        op="BatchNorm",
        params={"fix_gamma": False, "output_mean_var": True, "momentum": 0.8, "eps": 0.001},
        inputs=[{"shape": [3, 4, 2, 3], "seed": 1.1, "scale": 2.0},
                {"shape": [4], "seed": 1.2, "offset": 1.5}, {"shape": [4], "seed": 1.3},
                {"shape": [4], "seed": 1.4},
                {"shape": [4], "seed": 1.5, "abs": True, "offset": 0.5}],
        grad_of=[0, 1, 2],
        out=[[36.804497, 0.890957], [0.015882, -0.005876], [2.827685, -0.226737]],
        grad=[[-1e-06, 0.254182], [-37.050017, 2.813096], [-0.195998, -0.114121]],
        aux_after={3: [1.469468, 0.945989], 4: [5.190307, 0.302067]},
    ),
    "bn_train_fixgamma": dict(
        op="BatchNorm",
        params={"fix_gamma": True},
        inputs=[{"shape": [3, 4, 2, 3], "seed": 1.1, "scale": 2.0},
                {"shape": [4], "seed": 1.2, "offset": 1.5}, {"shape": [4], "seed": 1.3},
                {"shape": [4], "seed": 1.4},
                {"shape": [4], "seed": 1.5, "abs": True, "offset": 0.5}],
        grad_of=[0, 1, 2],
        out=[[36.804498, 1.667422]],
        grad=[[-0.0, 0.028493], [0.0, 0.0], [-0.195998, -0.114121]],
        aux_after={3: [1.651166, 1.064971], 4: [4.839034, 0.415961]},
    ),
    "bn_global": dict(
        op="BatchNorm",
        params={"fix_gamma": False, "use_global_stats": True},
        inputs=[{"shape": [3, 4, 2, 3], "seed": 1.1, "scale": 2.0},
                {"shape": [4], "seed": 1.2, "offset": 1.5}, {"shape": [4], "seed": 1.3},
                {"shape": [4], "seed": 1.4},
                {"shape": [4], "seed": 1.5, "abs": True, "offset": 0.5}],
        grad_of=[0, 1, 2],
        out=[[-36.688115, -4.759067]],
        grad=[[-0.218845, 1.119911], [-50.851489, 9.067033], [-0.195998, -0.114121]],
        aux_after={3: [1.832864, 1.183955], 4: [4.487761, 0.529856]},
    ),
    "bn_infer": dict(
        op="BatchNorm",
        params={"fix_gamma": False, "output_mean_var": True},
        inputs=[{"shape": [3, 4, 2, 3], "seed": 1.1, "scale": 2.0},
                {"shape": [4], "seed": 1.2, "offset": 1.5}, {"shape": [4], "seed": 1.3},
                {"shape": [4], "seed": 1.4},
                {"shape": [4], "seed": 1.5, "abs": True, "offset": 0.5}],
        grad_of=[0, 1, 2],
        train=False,
        out=[[-36.688115, -4.759067], [1.832864, 1.183955], [3.882554, -0.692623]],
        grad=[[-42.126933, -1.34982], [-50.851489, 9.067033], [-0.195998, -0.114121]],
        aux_after={3: [1.832864, 1.183955], 4: [4.487761, 0.529856]},
    ),
    "bn_axis_last": dict(
        op="BatchNorm",
        params={"fix_gamma": False, "axis": -1},
        inputs=[{"shape": [3, 2, 4], "seed": 1.1, "scale": 2.0},
                {"shape": [4], "seed": 1.2, "offset": 1.5}, {"shape": [4], "seed": 1.3},
                {"shape": [4], "seed": 1.4},
                {"shape": [4], "seed": 1.5, "abs": True, "offset": 0.5}],
        grad_of=[0, 1, 2],
        out=[[12.268166, 4.064921]],
        grad=[[0.0, -0.194005], [-12.869776, -0.111491], [1.158901, -1.613704]],
        aux_after={3: [1.672119, 1.114667], 4: [4.863288, 0.261681]},
    ),
    "lrn": dict(
        op="LRN",
        params={"nsize": 3, "alpha": 0.1, "beta": 0.75, "knorm": 2.0},
        inputs=[{"shape": [2, 5, 2, 2], "seed": 1.6, "scale": 2.0}],
        out=[[1.446049, -0.463325]],
        grad=[[-0.267261, 0.116142]],
    ),
    "lrn5": dict(
        op="LRN",
        params={"nsize": 5},
        inputs=[{"shape": [1, 6, 3, 1], "seed": 1.7, "scale": 3.0}],
        out=[[0.085649, -0.477337]],
        grad=[[-0.02912, 0.079919]],
    ),
    "fc": dict(
        op="FullyConnected",
        params={"num_hidden": 4},
        inputs=[{"shape": [3, 2, 3], "seed": 1.8}, {"shape": [4, 6], "seed": 1.9},
                {"shape": [4], "seed": 2.0}],
        out=[[0.759865, 12.420954]],
        grad=[[-0.976076, -0.111629], [7.894007, -1.227106], [-1.381843, -1.196907]],
    ),
    "fc_noflat": dict(
        op="FullyConnected",
        params={"num_hidden": 2, "flatten": False, "no_bias": True},
        inputs=[{"shape": [2, 3, 4], "seed": 2.1}, {"shape": [2, 4], "seed": 2.2}],
        out=[[0.464991, -1.284851]],
        grad=[[0.536164, -4.35884], [-1.080984, -2.440698]],
    ),
    "prelu": dict(
        op="LeakyReLU",
        params={"act_type": "prelu"},
        inputs=[{"shape": [2, 3, 4], "seed": 2.3}, {"shape": [3], "seed": 2.4, "scale": 0.3}],
        out=[[6.454605, -0.846891]],
        grad=[[-6.634058, -0.284853], [-6.161361, -1.258987]],
    ),
    "leaky_elu": dict(
        op="LeakyReLU",
        params={"act_type": "elu", "slope": 0.3},
        inputs=[{"shape": [3, 4], "seed": 2.5, "scale": 2.0}],
        out=[[5.758023, -0.662963]],
        grad=[[-3.113516, -0.649028]],
    ),
    "leaky_selu": dict(
        op="LeakyReLU",
        params={"act_type": "selu", "slope": 0.3},
        inputs=[{"shape": [3, 4], "seed": 2.5, "scale": 2.0}],
        out=[[0.491708, -0.069109]],
        grad=[[-3.642244, -0.860363]],
    ),
    "leaky_gelu": dict(
        op="LeakyReLU",
        params={"act_type": "gelu", "slope": 0.3},
        inputs=[{"shape": [3, 4], "seed": 2.5, "scale": 2.0}],
        out=[[5.712661, -1.059794]],
        grad=[[-3.984525, -0.866345]],
    ),
    "leaky_leaky": dict(
        op="LeakyReLU",
        params={"act_type": "leaky", "slope": 0.3},
        inputs=[{"shape": [3, 4], "seed": 2.5, "scale": 2.0}],
        out=[[4.73775, -0.386902]],
        grad=[[-2.563808, -0.624611]],
    ),
    "act_relu": dict(
        op="Activation",
        params={"act_type": "relu"},
        inputs=[{"shape": [3, 4], "seed": 2.6, "scale": 3.0}],
        out=[[10.168098, -1.650231]],
        grad=[[-3.070365, -0.613438]],
    ),
    "act_sigmoid": dict(
        op="Activation",
        params={"act_type": "sigmoid"},
        inputs=[{"shape": [3, 4], "seed": 2.6, "scale": 3.0}],
        out=[[5.788871, 0.685632]],
        grad=[[-0.255405, -0.141915]],
    ),
    "act_tanh": dict(
        op="Activation",
        params={"act_type": "tanh"},
        inputs=[{"shape": [3, 4], "seed": 2.6, "scale": 3.0}],
        out=[[-0.647063, 0.271252]],
        grad=[[-0.509417, -0.153923]],
    ),
    "act_softrelu": dict(
        op="Activation",
        params={"act_type": "softrelu"},
        inputs=[{"shape": [3, 4], "seed": 2.6, "scale": 3.0}],
        out=[[12.625255, -0.496567]],
        grad=[[-2.663145, -0.334755]],
    ),
    "act_softsign": dict(
        op="Activation",
        params={"act_type": "softsign"},
        inputs=[{"shape": [3, 4], "seed": 2.6, "scale": 3.0}],
        out=[[-0.576966, 0.097336]],
        grad=[[-0.350419, -0.13294]],
    ),
    "softmax_axis0_t": dict(
        op="softmax",
        params={"axis": 0, "temperature": 2.0},
        inputs=[{"shape": [3, 4], "seed": 2.7, "scale": 2.0}],
        out=[[4.0, 0.048315]],
        grad=[[0.0, 0.062605]],
    ),
    "log_softmax_axis0_t": dict(
        op="log_softmax",
        params={"axis": 0, "temperature": 2.0},
        inputs=[{"shape": [3, 4], "seed": 2.7, "scale": 2.0}],
        out=[[-15.658628, -1.279589]],
        grad=[[-0.0, 0.122044]],
    ),
    "softmax": dict(
        op="softmax",
        params={},
        inputs=[{"shape": [3, 4], "seed": 2.7, "scale": 2.0}],
        out=[[3.0, 0.039934]],
        grad=[[-0.0, 0.065241]],
    ),
    "log_softmax": dict(
        op="log_softmax",
        params={},
        inputs=[{"shape": [3, 4], "seed": 2.7, "scale": 2.0}],
        out=[[-24.602938, -2.529179]],
        grad=[[-0.0, 0.2059]],
    ),
    "embedding": dict(
        op="Embedding",
        params={"input_dim": 5, "output_dim": 3},
        inputs=[{"values": [[0, 4, 2], [2, 7, -1]]}, {"shape": [5, 3], "seed": 2.8}],
        grad_of=[1],
        out=[[0.097382, 3.737019]],
        grad=[[-0.048984, 0.079832]],
    ),
    "so_null": dict(
        op="SoftmaxOutput",
        params={},
        inputs=[{"shape": [4, 3], "seed": 2.9, "scale": 2.0}, {"values": [0, 2, 1, 2]}],
        grad_of=[0],
        out=[[4.0, 1.524754]],
        grad=[[0.0, 0.658002]],
    ),
    "so_batch": dict(
        op="SoftmaxOutput",
        params={"normalization": "batch", "grad_scale": 2.0},
        inputs=[{"shape": [4, 3], "seed": 2.9, "scale": 2.0}, {"values": [0, 2, 1, 2]}],
        grad_of=[0],
        out=[[4.0, 1.524754]],
        grad=[[0.0, 0.329001]],
    ),
    "so_valid_ignore": dict(
        op="SoftmaxOutput",
        params={"normalization": "valid", "use_ignore": True, "ignore_label": 2},
        inputs=[{"shape": [4, 3], "seed": 2.9, "scale": 2.0}, {"values": [0, 2, 1, 2]}],
        grad_of=[0],
        out=[[4.0, 1.524754]],
        grad=[[0.0, 0.050046]],
    ),
    "so_smooth": dict(
        op="SoftmaxOutput",
        params={"smooth_alpha": 0.2},
        inputs=[{"shape": [4, 3], "seed": 2.9, "scale": 2.0}, {"values": [0, 2, 1, 2]}],
        grad_of=[0],
        out=[[4.0, 1.524754]],
        grad=[[0.0, 0.811231]],
    ),
    "so_multi_null": dict(
        op="SoftmaxOutput",
        params={"multi_output": True},
        inputs=[{"shape": [2, 3, 2, 2], "seed": 3.0}, {"values": [[0, 1, 2, 1], [2, 2, 0, 1]]}],
        grad_of=[0],
        out=[[8.0, -0.446724]],
        grad=[[-0.0, -1.043102]],
    ),
    "so_multi_batch": dict(
        op="SoftmaxOutput",
        params={"multi_output": True, "normalization": "batch"},
        inputs=[{"shape": [2, 3, 2, 2], "seed": 3.0}, {"values": [[0, 1, 2, 1], [2, 2, 0, 1]]}],
        grad_of=[0],
        out=[[8.0, -0.446724]],
        grad=[[-0.0, -0.521551]],
    ),
    "so_multi_valid": dict(
        op="SoftmaxOutput",
        params={"multi_output": True,
                "normalization": "valid",
                "use_ignore": True,
                "ignore_label": 1},
        inputs=[{"shape": [2, 3, 2, 2], "seed": 3.0}, {"values": [[0, 1, 2, 1], [2, 2, 0, 1]]}],
        grad_of=[0],
        out=[[8.0, -0.446724]],
        grad=[[-0.0, -0.737702]],
    ),
    "so_preserve_batch": dict(
        op="SoftmaxOutput",
        params={"preserve_shape": True, "normalization": "batch"},
        inputs=[{"shape": [2, 3, 2], "seed": 3.1}, {"values": [[0, 1, 0], [1, 1, 0]]}],
        grad_of=[0],
        out=[[6.0, 0.609332]],
        grad=[[-0.0, -0.123429]],
    ),
    "so_prob_label": dict(
        op="SoftmaxOutput",
        params={"grad_scale": 0.5},
        inputs=[{"shape": [2, 3], "seed": 3.15},
                {"shape": [2, 3], "seed": 3.16, "scale": 0.3, "offset": 0.4}],
        grad_of=[0],
        out=[[2.0, 0.984811]],
        grad=[[0.17026, 0.044026]],
    ),
    "sce": dict(
        op="softmax_cross_entropy",
        params={},
        inputs=[{"shape": [4, 3], "seed": 2.9, "scale": 2.0}, {"values": [0, 2, 1, 2]}],
        grad_of=[0],
        out=[[4.035107, 4.035107]],
        grad=[[-0.0, -0.630974]],
    ),
    "LinearRegressionOutput": dict(
        op="LinearRegressionOutput",
        params={"grad_scale": 2.0},
        inputs=[{"shape": [4, 3], "seed": 3.2},
                {"shape": [4, 3], "seed": 3.3, "scale": 0.5, "offset": 0.5}],
        grad_of=[0],
        out=[[-1.763611, -0.243454]],
        grad=[[-4.529896, -0.413419]],
    ),
    "LogisticRegressionOutput": dict(
        op="LogisticRegressionOutput",
        params={"grad_scale": 2.0},
        inputs=[{"shape": [4, 3], "seed": 3.2},
                {"shape": [4, 3], "seed": 3.3, "scale": 0.5, "offset": 0.5}],
        grad_of=[0],
        out=[[5.58462, 0.470763]],
        grad=[[0.368925, 0.062726]],
    ),
    "MAERegressionOutput": dict(
        op="MAERegressionOutput",
        params={"grad_scale": 2.0},
        inputs=[{"shape": [4, 3], "seed": 3.2},
                {"shape": [4, 3], "seed": 3.3, "scale": 0.5, "offset": 0.5}],
        grad_of=[0],
        out=[[-1.763611, -0.243454]],
        grad=[[-8.0, -0.711974]],
    ),
    "linreg_vector_label": dict(
        op="LinearRegressionOutput",
        params={},
        inputs=[{"shape": [4, 1], "seed": 3.25}, {"shape": [4], "seed": 3.35}],
        grad_of=[0],
        out=[[-2.632958, 1.136876]],
        grad=[[0.10184, 0.161179]],
    ),
    "makeloss_batch": dict(
        op="MakeLoss",
        params={"normalization": "batch", "grad_scale": 3.0},
        inputs=[{"shape": [3, 4], "seed": 3.4}],
        out=[[-2.092102, -0.382628]],
        grad=[[12.0, 1.06796]],
    ),
    "makeloss_valid": dict(
        op="MakeLoss",
        params={"normalization": "valid", "valid_thresh": 0.1},
        inputs=[{"shape": [3, 4], "seed": 3.4}],
        out=[[-2.092102, -0.382628]],
        grad=[[3.0, 0.26699]],
    ),
    "smooth_l1": dict(
        op="smooth_l1",
        params={"scalar": 1.5},
        inputs=[{"shape": [3, 4], "seed": 3.5, "scale": 2.0}],
        out=[[13.317394, -0.399255]],
        grad=[[1.73807, 4.640109]],
    ),
}


# -- MXNet's numbers ---------------------------------------------------------------------------
# MXNet 1.9.1's selu gradient for x <= 0 is lambda * (y + alpha) with y the output, where the
# derivative is y + lambda * alpha; dagnet keeps the true derivative (central differences
# agree, see test_selu_gradient_is_the_derivative).
_MXNET_GRADIENT_BUGS = {"leaky_selu"}


@pytest.mark.parametrize("case", list(ORACLE))
def test_forward_and_backward_match_mxnet(case):
    spec = ORACLE[case]
    name, params = spec["op"], spec["params"]
    is_train = spec.get("train", True)
    inputs = [make(recipe) for recipe in spec["inputs"]]
    outputs = forward(name, params, inputs, is_train=is_train)
    op = OPS[name]
    visible = op.n_visible_outputs(op.parse_params(params))
    assert len(spec["out"]) == visible
    for index, (got, want) in enumerate(zip(outputs, spec["out"])):
        np.testing.assert_allclose(stat(got), want, rtol=1e-4, atol=5e-4,
                                   err_msg=f"{case}: output {index}")
    for index, want in spec.get("aux_after", {}).items():
        np.testing.assert_allclose(stat(inputs[index]), want, rtol=1e-4, atol=5e-4,
                                   err_msg=f"{case}: state {index} after the step")
    if case in _MXNET_GRADIENT_BUGS:
        return
    # MXNet's autograd runs the backward pass in training mode whatever the forward mode was.
    heads = [det(outputs[0].shape, 5.0)] + [np.zeros_like(o) for o in outputs[1:visible]]
    grads = backward(name, params, inputs, outputs, heads, is_train=True)
    for index, want in zip(spec.get("grad_of", range(len(inputs))), spec["grad"]):
        np.testing.assert_allclose(stat(grads[index]), want, rtol=1e-4, atol=5e-4,
                                   err_msg=f"{case}: gradient of input {index}")


# -- gradients the conformance suite cannot check ------------------------------------------------
def test_batch_norm_training_gradient_is_the_derivative_of_the_training_forward():
    params = {"fix_gamma": False, "eps": 1e-3, "axis": 1}
    inputs = [det((3, 2, 2, 2), 0.3, 2.0), det((2,), 1.0, offset=1.5), det((2,), 2.0),
              np.zeros(2), np.ones(2)]
    head = det((3, 2, 2, 2), 5.0)

    def loss(arrays):
        state = [a.copy() for a in arrays]
        return float((forward("BatchNorm", params, state, is_train=True)[0] * head).sum())

    outputs = forward("BatchNorm", params, [a.copy() for a in inputs], is_train=True)
    grads = backward("BatchNorm", params, inputs, outputs, [head], is_train=True)
    for index in range(3):
        np.testing.assert_allclose(grads[index], numeric_gradient(loss, inputs, index),
                                   rtol=1e-5, atol=1e-7, err_msg=f"input {index}")


@pytest.mark.parametrize("data_shape, flatten", [((1, 2, 256), True), ((8, 2, 256), True),
                                                 ((2, 4, 512), False), ((33, 512), True)])
@pytest.mark.parametrize("no_bias", [False, True])
@pytest.mark.parametrize("req", [OpReqType.WRITE, OpReqType.ADD])
def test_fully_connected_forward_with_a_large_weight(data_shape, flatten, no_bias, req):
    """A large weight and few rows take another form of the product (W X^T); any number
    of rows, every layout and both write modes must give X W^T + b, in float32."""
    params = {"num_hidden": 512, "no_bias": no_bias, "flatten": flatten}
    x = det(data_shape, 0.3, dtype=np.float32)
    weight, bias = det((512, 512), 0.7, 0.05, dtype=np.float32), det((512,), 1.1, dtype=np.float32)
    inputs = [x, weight] if no_bias else [x, weight, bias]
    out_shape = (data_shape[0], 512) if flatten else (*data_shape[:-1], 512)
    out = np.full(out_shape, 0.5, np.float32)
    op = OPS["FullyConnected"]
    op.kernel_for("cpu")(op.parse_params(params), OpContext(False, None, [], np), inputs, [req],
                         [out])
    rows = x.reshape(-1, 512).astype(np.float64)
    expected = rows @ weight.T.astype(np.float64) + (0 if no_bias else bias)
    expected = expected.reshape(out_shape) + (0.5 if req is OpReqType.ADD else 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_batch_norm_updates_moving_statistics_only_in_training():
    x = det((4, 3), 0.5, 2.0)
    mean, var = np.zeros(3), np.ones(3)
    forward("BatchNorm", {"momentum": 0.75}, [x, np.ones(3), np.zeros(3), mean, var], is_train=True)
    np.testing.assert_allclose(mean, 0.25 * x.mean(axis=0))
    np.testing.assert_allclose(var, 0.75 + 0.25 * x.var(axis=0))  # the biased variance
    before = mean.copy(), var.copy()
    forward("BatchNorm", {}, [x, np.ones(3), np.zeros(3), mean, var], is_train=False)
    forward("BatchNorm", {"use_global_stats": True}, [x, np.ones(3), np.zeros(3), mean, var],
            is_train=True)
    np.testing.assert_array_equal(mean, before[0])
    np.testing.assert_array_equal(var, before[1])


def _check_loss_gradient(name, params, inputs, loss, atol=1e-7):
    """The loss layer's backward (which ignores the head gradient) is d loss / d data."""
    outputs = forward(name, params, inputs)
    heads = [np.full_like(outputs[0], 123.0)]  # ignored
    grads = backward(name, params, inputs, outputs, heads)
    expected = numeric_gradient(lambda arrays: loss(forward(name, params, arrays)[0], *arrays[1:]),
                                inputs, 0)
    np.testing.assert_allclose(grads[0], expected, rtol=1e-5, atol=atol)
    assert not grads[1].any(), "the label gets no gradient"


@pytest.mark.parametrize("params", [
    {}, {"normalization": "batch", "grad_scale": 2.0}, {"normalization": "valid"},
    {"use_ignore": True, "ignore_label": 1, "normalization": "valid"},
])
def test_softmax_output_gradient_is_that_of_the_cross_entropy(params):
    label = np.array([0.0, 2.0, 1.0, 1.0])
    x = det((4, 3), 0.2, 2.0)
    scale = params.get("grad_scale", 1.0)
    keep = label != 1 if params.get("use_ignore") else np.ones(4, bool)
    valid = max(int((label != params.get("ignore_label", -1)).sum()), 1)
    divisor = {"null": 1, "batch": 4, "valid": valid}[params.get("normalization", "null")]

    def cross_entropy(p, label):
        return -scale * np.log(p[np.arange(4), label.astype(int)])[keep].sum() / divisor

    _check_loss_gradient("SoftmaxOutput", params, [x, label], cross_entropy)


def _softmax_output_gradient_by_one_hot(params, p, label):
    """SoftmaxOutput's gradient spelled out with a dense (smoothed) one-hot target."""
    attrs = OPS["SoftmaxOutput"].parse_params(params)
    n, k = p.shape[0], p.shape[1]
    view = p.reshape(n, k, -1)
    classes = label.reshape(n, 1, view.shape[2]).astype(np.int64)
    onehot = (np.arange(k).reshape(1, k, 1) == classes).astype(p.dtype)
    if attrs.smooth_alpha:
        onehot = onehot * (1 - attrs.smooth_alpha) + (1 - onehot) * (attrs.smooth_alpha / (k - 1))
    valid = classes != int(attrs.ignore_label)
    grad = (view - onehot) * (valid if attrs.use_ignore else 1)
    divisor = {"null": view.shape[2], "batch": n * view.shape[2],
               "valid": max(int(valid.sum()), 1)}[attrs.normalization]
    return (grad * attrs.grad_scale / divisor).reshape(p.shape)


@pytest.mark.parametrize("params", [
    {}, {"smooth_alpha": 0.3}, {"use_ignore": True}, {"normalization": "valid"},
    {"use_ignore": True, "ignore_label": 3, "normalization": "valid", "smooth_alpha": 0.1},
    {"multi_output": True, "normalization": "batch", "grad_scale": 1.5},
    {"multi_output": True, "use_ignore": True, "smooth_alpha": 0.2},
])
@pytest.mark.parametrize("req", [OpReqType.WRITE, OpReqType.ADD])
def test_softmax_output_gradient_matches_the_one_hot_form(params, req):
    """The backward corrects only the label's entry; labels outside [0, k) (here -1 and
    k) have an all-zero one-hot, as in MXNet, whether ignored or not."""
    shape = (6, 4, 3) if params.get("multi_output") else (6, 4)
    x = det(shape, 0.9, 2.0, dtype=np.float32)
    label = np.array([0, -1, 3, 4, 2, 3] * (3 if params.get("multi_output") else 1), np.float32)
    label = label.reshape(6, 3) if params.get("multi_output") else label
    out = forward("SoftmaxOutput", params, [x, label])[0]
    grads = [np.full(shape, 0.25, np.float32), np.ones(label.shape, np.float32)]
    op = OPS["_backward_SoftmaxOutput"]
    op.kernel_for("cpu")(op.parse_params(params), OpContext(True, None, [], np),
                         [x, label, out], [req, OpReqType.WRITE], grads)
    expected = _softmax_output_gradient_by_one_hot(params, out, label)
    expected = expected + (0.25 if req is OpReqType.ADD else 0)
    np.testing.assert_allclose(grads[0], expected, rtol=1e-5, atol=1e-7)
    assert not grads[1].any(), "the label gets no gradient"


@pytest.mark.parametrize("name, loss", [
    ("LinearRegressionOutput", lambda out, label: 0.5 * ((out - label) ** 2).sum() / 3),
    ("LogisticRegressionOutput",
     lambda out, label: -(label * np.log(out) + (1 - label) * np.log(1 - out)).sum() / 3),
    ("MAERegressionOutput", lambda out, label: np.abs(out - label).sum() / 3),
])
def test_regression_output_gradient_is_that_of_its_loss(name, loss):
    x = det((4, 3), 0.4, 2.0)
    label = det((4, 3), 1.0, 0.3, offset=0.5)
    _check_loss_gradient(name, {}, [x, label], loss)


def test_make_loss_and_losses_ignore_the_head_gradient():
    x = det((2, 3), 0.1)
    out = forward("MakeLoss", {"grad_scale": 2.0}, [x])
    (grad,) = backward("MakeLoss", {"grad_scale": 2.0}, [x], out, [np.full((2, 3), 9.0)])
    np.testing.assert_array_equal(grad, np.full((2, 3), 2.0))


def test_selu_gradient_is_the_derivative():
    x = np.array([[-2.0, -0.5, 0.3, 1.5]])
    head = np.ones_like(x)
    out = forward("LeakyReLU", {"act_type": "selu"}, [x])
    (grad,) = backward("LeakyReLU", {"act_type": "selu"}, [x], out, [head])
    expected = numeric_gradient(lambda a: float(forward("LeakyReLU", {"act_type": "selu"}, a)[0]
                                                .sum()), [x.copy()], 0)
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


@pytest.mark.parametrize("name, params, shapes", [
    ("Convolution", {"kernel": (3, 3), "num_filter": 4, "stride": (2, 1), "pad": (1, 0),
                     "dilate": (1, 2), "num_group": 2}, [(2, 4, 5, 6), (4, 2, 3, 3), (4,)]),
    ("Deconvolution", {"kernel": (3, 2), "num_filter": 4, "stride": (2, 2), "pad": (1, 0),
                       "adj": (1, 0), "num_group": 2}, [(1, 2, 3, 3), (2, 2, 3, 2)]),
    ("Pooling", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg",
                 "pooling_convention": "full", "count_include_pad": False}, [(1, 2, 5, 4)]),
    ("LRN", {"nsize": 5, "alpha": 0.5, "beta": 0.6}, [(2, 6, 2)]),
])
def test_backward_matches_central_differences(name, params, shapes):
    inputs = [det(s, i + 0.3) for i, s in enumerate(shapes)]
    outputs = forward(name, params, inputs)
    head = det(outputs[0].shape, 5.0)
    grads = backward(name, params, inputs, outputs, [head])

    def loss(arrays):
        return float((forward(name, params, arrays)[0] * head).sum())

    for index in range(len(inputs)):
        np.testing.assert_allclose(grads[index], numeric_gradient(loss, inputs, index),
                                   rtol=1e-5, atol=1e-7, err_msg=f"{name} input {index}")


# -- shapes and declarations, as MXNet infers them ----------------------------------------------
def _shapes(name, params, ins, outs=None):
    op = OPS[name]
    return op.shapes(op.parse_params(params), ins, outs)


@pytest.mark.parametrize("name, params, ins, expected_ins, expected_outs", [
    ("FullyConnected", {"num_hidden": 4}, [(2, 3, 5), None, None],
     [(2, 3, 5), (4, 15), (4,)], [(2, 4)]),
    ("FullyConnected", {"num_hidden": 4, "flatten": False}, [(2, 3, 5), None, None],
     [(2, 3, 5), (4, 5), (4,)], [(2, 3, 4)]),
    ("FullyConnected", {"num_hidden": 4, "no_bias": True}, [(2, 3, 5), None],
     [(2, 3, 5), (4, 15)], [(2, 4)]),
    ("Convolution", {"kernel": (3, 3), "num_filter": 8, "num_group": 2}, [(2, 4, 7, 7), None, None],
     [(2, 4, 7, 7), (8, 2, 3, 3), (8,)], [(2, 8, 5, 5)]),
    ("Convolution", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "dilate": (2, 1),
                     "num_filter": 8}, [(2, 4, 7, 7), None, None],
     [(2, 4, 7, 7), (8, 4, 3, 3), (8,)], [(2, 8, 3, 4)]),
    ("Convolution", {"kernel": (3,), "num_filter": 8}, [(2, 4, 7), None, None],
     [(2, 4, 7), (8, 4, 3), (8,)], [(2, 8, 5)]),
    ("Deconvolution", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "adj": (1, 1),
                       "num_filter": 8, "num_group": 2}, [(2, 4, 7, 7), None],
     [(2, 4, 7, 7), (4, 4, 3, 3)], [(2, 8, 14, 14)]),
    ("Deconvolution", {"kernel": (4, 4), "stride": (2, 2), "dilate": (2, 2),
                       "target_shape": (16, 15), "num_filter": 2}, [(1, 3, 7, 7), None],
     [(1, 3, 7, 7), (3, 2, 4, 4)], [(1, 2, 16, 15)]),
    ("Deconvolution", {"kernel": (3,), "stride": (3,), "adj": (2,), "num_filter": 2},
     [(1, 3, 7), None], [(1, 3, 7), (3, 2, 3)], [(1, 2, 23)]),
    ("Pooling", {"kernel": (3, 3), "stride": (2, 2)}, [(2, 4, 8, 8)], [(2, 4, 8, 8)],
     [(2, 4, 3, 3)]),
    ("Pooling", {"kernel": (3, 3), "stride": (2, 2), "pooling_convention": "full"}, [(2, 4, 8, 8)],
     [(2, 4, 8, 8)], [(2, 4, 4, 4)]),
    ("Pooling", {"kernel": (3, 3), "global_pool": True}, [(2, 4, 8, 8)], [(2, 4, 8, 8)],
     [(2, 4, 1, 1)]),
    ("BatchNorm", {}, [(2, 3, 4, 4), None, None, None, None],
     [(2, 3, 4, 4), (3,), (3,), (3,), (3,)], [(2, 3, 4, 4), (3,), (3,)]),
    ("BatchNorm", {"axis": -1}, [(2, 3, 4, 5), None, None, None, None],
     [(2, 3, 4, 5), (5,), (5,), (5,), (5,)], [(2, 3, 4, 5), (5,), (5,)]),
    ("Embedding", {"input_dim": 10, "output_dim": 4}, [(2, 3), None], [(2, 3), (10, 4)],
     [(2, 3, 4)]),
    ("SoftmaxOutput", {}, [(2, 3), None], [(2, 3), (2,)], [(2, 3)]),
    ("SoftmaxOutput", {"multi_output": True}, [(2, 3, 4, 5), None], [(2, 3, 4, 5), (2, 20)],
     [(2, 3, 4, 5)]),
    ("SoftmaxOutput", {"multi_output": True}, [(2, 3, 4, 5), (2, 4, 5)],
     [(2, 3, 4, 5), (2, 4, 5)], [(2, 3, 4, 5)]),
    ("SoftmaxOutput", {"preserve_shape": True}, [(2, 3, 4), None], [(2, 3, 4), (2, 3)],
     [(2, 3, 4)]),
    ("softmax_cross_entropy", {}, [(2, 3), None], [(2, 3), (2,)], [(1,)]),
    ("LinearRegressionOutput", {}, [(2, 1), None], [(2, 1), (2,)], [(2, 1)]),
    ("LinearRegressionOutput", {}, [(2, 3), None], [(2, 3), (2, 3)], [(2, 3)]),
    ("LeakyReLU", {"act_type": "prelu"}, [(2, 3, 4), None], [(2, 3, 4), (3,)], [(2, 3, 4)]),
    ("LeakyReLU", {"act_type": "rrelu"}, [(5,)], [(5,)], [(5,), (5,)]),
    ("softmax", {"use_length": True, "axis": 0}, [(2, 3), None], [(2, 3), (3,)], [(2, 3)]),
    ("Dropout", {}, [(2, 3)], [(2, 3)], [(2, 3), (2, 3)]),
])
def test_shape_inference_matches_mxnet(name, params, ins, expected_ins, expected_outs):
    assert _shapes(name, params, ins) == (expected_ins, expected_outs)


def test_shape_inference_runs_backwards_and_reports_conflicts():
    assert _shapes("FullyConnected", {"num_hidden": 4}, [(2, 0), (4, 7), None]) == \
        ([(2, 7), (4, 7), (4,)], [(2, 4)])
    assert _shapes("BatchNorm", {}, [None, (3,), None, None, None])[0][1:] == [(3,)] * 4
    with pytest.raises(ShapeError, match=r"'FullyConnected', input 'weight'.*\(4, 14\).*\(4, 15\)"):
        _shapes("FullyConnected", {"num_hidden": 4}, [(2, 3, 5), (4, 14), None])
    with pytest.raises(ShapeError, match="Convolution.*divisible by num_group"):
        _shapes("Convolution", {"kernel": (3, 3), "num_filter": 4, "num_group": 2},
                [(1, 3, 5, 5), None, None])
    with pytest.raises(ShapeError, match="Convolution.*larger than the padded input"):
        _shapes("Convolution", {"kernel": (5, 5), "num_filter": 4}, [(1, 3, 3, 3), None, None])
    with pytest.raises(ShapeError, match="'SoftmaxOutput', input 'label'"):
        _shapes("SoftmaxOutput", {}, [(2, 3), (6,)])
    with pytest.raises(ShapeError, match="adj"):
        _shapes("Deconvolution", {"kernel": (3,), "adj": (1,), "num_filter": 2}, [(1, 3, 7), None])


@pytest.mark.parametrize("name, params, arguments, states, outputs, visible", [
    ("FullyConnected", {"num_hidden": 2}, ["data", "weight", "bias"], [], ["output"], 1),
    ("FullyConnected", {"num_hidden": 2, "no_bias": True}, ["data", "weight"], [], ["output"], 1),
    ("Deconvolution", {"kernel": (2, 2), "num_filter": 2}, ["data", "weight"], [], ["output"], 1),
    ("BatchNorm", {}, ["data", "gamma", "beta"], ["moving_mean", "moving_var"],
     ["output", "mean", "var"], 1),
    ("BatchNorm", {"output_mean_var": True}, ["data", "gamma", "beta"],
     ["moving_mean", "moving_var"], ["output", "mean", "var"], 3),
    ("Dropout", {}, ["data"], [], ["output", "mask"], 1),
    ("LRN", {"nsize": 3}, ["data"], [], ["output", "tmp_norm"], 1),
    ("LeakyReLU", {"act_type": "prelu"}, ["data", "gamma"], [], ["output"], 1),
    ("LeakyReLU", {"act_type": "rrelu"}, ["data"], [], ["output", "mask"], 2),
    ("SoftmaxOutput", {}, ["data", "label"], [], ["output"], 1),
])
def test_arguments_states_and_outputs_are_mxnets(name, params, arguments, states, outputs, visible):
    op = OPS[name]
    attrs = op.parse_params(params)
    assert op.list_arguments(attrs) == arguments
    assert op.list_auxiliary_states(attrs) == states
    assert op.list_outputs(attrs) == outputs
    assert op.n_visible_outputs(attrs) == visible


def test_parameter_defaults_are_mxnets():
    bn = OPS["BatchNorm"].parse_params({})
    assert (bn.eps, bn.momentum, bn.fix_gamma, bn.use_global_stats, bn.axis) == (1e-3, 0.9, True,
                                                                                 False, 1)
    assert OPS["Deconvolution"].parse_params({"kernel": (2,), "num_filter": 1}).no_bias is True
    assert OPS["Convolution"].parse_params({"kernel": (2,), "num_filter": 1}).no_bias is False
    pool = OPS["Pooling"].parse_params({"kernel": "(2, 2)"})
    assert (pool.pool_type, pool.pooling_convention, pool.kernel) == ("max", "valid", (2, 2))
    drop = OPS["Dropout"].parse_params({})
    assert (drop.p, drop.mode, drop.axes) == (0.5, "training", ())
    assert OPS["LeakyReLU"].parse_params({}).slope == 0.25
    assert OPS["SoftmaxOutput"].parse_params({"normalization": "valid"}).ignore_label == -1.0
    with pytest.raises(ParamError, match="act_type"):
        OPS["Activation"].parse_params({"act_type": "swish"})
    with pytest.raises(ParamError, match="num_hidden"):
        OPS["FullyConnected"].parse_params({})


# -- behaviours ------------------------------------------------------------------------------------
def test_dropout_scales_what_it_keeps_in_training_and_is_the_identity_otherwise():
    x = np.ones((200, 50))
    out, mask = forward("Dropout", {"p": 0.4}, [x], is_train=True, seed=1)
    kept = out != 0
    assert abs(kept.mean() - 0.6) < 0.02
    np.testing.assert_allclose(out[kept], 1 / 0.6)
    np.testing.assert_array_equal(out, mask)
    (grad,) = backward("Dropout", {"p": 0.4}, [x], [out, mask], [np.full_like(x, 2.0)])
    np.testing.assert_allclose(grad, 2.0 * mask)
    same, _ = forward("Dropout", {"p": 0.4}, [x], is_train=True, seed=1)
    np.testing.assert_array_equal(same, out)  # a seeded generator repeats itself
    out, mask = forward("Dropout", {"p": 0.4}, [x], is_train=False)
    np.testing.assert_array_equal(out, x)
    (grad,) = backward("Dropout", {"p": 0.4}, [x], [out, mask], [np.full_like(x, 2.0)])
    np.testing.assert_array_equal(grad, np.full_like(x, 2.0))


def test_dropout_modes_and_axes():
    x = np.ones((6, 400))
    out, _ = forward("Dropout", {"p": 0.5, "mode": "always"}, [x], is_train=False)
    assert 0.4 < (out == 0).mean() < 0.6
    out, _ = forward("Dropout", {"p": 0.5, "axes": (0,)}, [x], is_train=True)
    assert (out == out[:1]).all(), "one draw is shared along axis 0"
    out, _ = forward("Dropout", {"p": 1.0}, [x], is_train=True)
    assert np.isnan(out).all(), "as MXNet: all dropped, scaled by 1 / 0"


def test_rrelu_draws_slopes_in_training_and_uses_their_mean_otherwise():
    x = -np.ones((100,))
    params = {"act_type": "rrelu", "lower_bound": 0.1, "upper_bound": 0.3}
    out, mask = forward("LeakyReLU", params, [x], is_train=True)
    assert ((mask >= 0.1) & (mask < 0.3)).all() and mask.std() > 0.02
    np.testing.assert_allclose(out, -mask)
    out, mask = forward("LeakyReLU", params, [x], is_train=False)
    np.testing.assert_allclose(out, -0.2)
    assert not mask.any()  # as MXNet


def test_softmax_with_length_matches_mxnet():
    x = np.array([[1.0, 2, 3], [1, 2, 3]])
    (out,) = forward("softmax", {"use_length": True}, [x, np.array([2, 1])])
    np.testing.assert_allclose(out, [[0.26894143, 0.7310586, 0], [1, 0, 0]], rtol=1e-6)
    (grad, _) = backward("softmax", {"use_length": True}, [x, np.array([2, 1])], [out], [x])
    np.testing.assert_allclose(grad, [[-0.19661194, 0.19661193, 0], [0, 0, 0]], rtol=1e-6)


def test_embedding_clips_indices_and_accumulates_repeated_rows():
    weight = np.arange(12.0).reshape(4, 3)
    (out,) = forward("Embedding", {"input_dim": 4, "output_dim": 3},
                     [np.array([[0, 3.7], [5, -1]]), weight])
    np.testing.assert_array_equal(out, [[[0, 1, 2], [9, 10, 11]], [[9, 10, 11], [0, 1, 2]]])
    index = np.array([1.0, 1, 2])
    (out,) = forward("Embedding", {"input_dim": 4, "output_dim": 3}, [index, weight])
    _, dweight = backward("Embedding", {"input_dim": 4, "output_dim": 3}, [index, weight], [out],
                          [np.ones((3, 3))])
    np.testing.assert_array_equal(dweight, [[0, 0, 0], [2, 2, 2], [1, 1, 1], [0, 0, 0]])


def test_pooling_avg_full_convention_matches_mxnet():
    x = np.arange(1, 26.0).reshape(1, 1, 5, 5)
    (out,) = forward("Pooling", {"pool_type": "avg", "kernel": (2, 2), "stride": (2, 2),
                                 "pad": (1, 1), "pooling_convention": "full"}, [x])
    np.testing.assert_allclose(out[0, 0], [[0.25, 1.25, 2.25, 0], [4.25, 10, 12, 0],
                                           [9.25, 20, 22, 0], [0, 0, 0, 0]])
    (out,) = forward("Pooling", {"pool_type": "max", "kernel": (2, 2), "stride": (2, 2),
                                 "pad": (1, 1), "pooling_convention": "full"}, [x])
    assert out[0, 0, 3, 3] == np.finfo(np.float64).min  # a window of padding alone, as MXNet


def test_max_pooling_gives_ties_to_the_first_maximum():
    x = np.ones((1, 1, 2, 2))
    out = forward("Pooling", {"kernel": (2, 2)}, [x])
    (grad,) = backward("Pooling", {"kernel": (2, 2)}, [x], out, [np.ones((1, 1, 1, 1))])
    np.testing.assert_array_equal(grad.ravel(), [1, 0, 0, 0])


def test_kernels_honour_add_and_null_write_modes():
    op = OPS["Convolution"]
    attrs = op.parse_params({"kernel": (2, 2), "num_filter": 2})
    x, w, b = det((1, 1, 3, 3), 0.1), det((2, 1, 2, 2), 0.2), det((2,), 0.3)
    (fresh,) = forward("Convolution", {"kernel": (2, 2), "num_filter": 2}, [x, w, b])
    out = [np.ones_like(fresh)]
    op.kernel_for("cpu")(attrs, OpContext(False, None, [], np), [x, w, b], [OpReqType.ADD], out)
    np.testing.assert_allclose(out[0], fresh + 1)
    grads = [np.ones_like(x), np.ones_like(w), np.ones_like(b)]
    OPS["_backward_Convolution"].kernel_for("cpu")(
        attrs, OpContext(True, None, [], np), [np.ones_like(fresh), x, w, b],
        [OpReqType.NULL, OpReqType.WRITE, OpReqType.NULL], grads)
    assert (grads[0] == 1).all() and (grads[2] == 1).all() and not (grads[1] == 1).all()


def test_every_operator_is_registered_under_mxnet_names():
    from dagnet.operator import get_op

    for name in [*OPS, "Softmax"]:
        assert get_op(name) is OPS.get(name, OPS["SoftmaxOutput"])
