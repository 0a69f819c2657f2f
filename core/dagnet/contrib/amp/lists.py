"""Which operators automatic mixed precision runs in which precision.

Four groups, by operator name (aliases included), each with the reason:

- ``LP16``: compute-bound matrix products, where float16 halves the memory traffic and
  loses little: their inputs are cast to the low precision.
- ``FP32``: operators whose float16 result overflows or loses what matters
  (exponentials, logarithms, reductions, normalisations, losses): inputs cast to float32.
- ``WIDEST``: operators that combine several tensors element-wise; they need one
  precision, the widest of their inputs (``amp_multicast``).
- ``CONDITIONAL_FP32``: ``(operator, parameter, values)``: float32 only when the
  parameter takes one of the values (the activations that exponentiate).

Every other operator runs in whatever precision reaches it.  Names that the operator
registry does not hold are ignored, so a list may name operators a plugin adds.
"""

from __future__ import annotations

__all__ = ["LP16", "FP32", "WIDEST", "CONDITIONAL_FP32", "LOSS_OUTPUTS"]

LP16 = ["Convolution", "Deconvolution", "FullyConnected", "RNN"]

FP32 = [
    # exponentials and logarithms
    "exp", "expm1", "log", "log10", "log2", "log1p", "power", "_power", "_power_scalar",
    "_rpower_scalar", "broadcast_power", "square", "sqrt", "rsqrt", "cbrt", "rcbrt",
    "reciprocal", "gamma", "gammaln", "erf", "erfinv",
    # trigonometric and hyperbolic functions away from their linear range
    "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
    "degrees", "radians",
    # reductions and norms accumulate
    "sum", "sum_axis", "mean", "prod", "nansum", "nanprod", "norm", "moments", "cumsum",
    # normalisations and probabilities
    "softmax", "log_softmax", "softmin", "SoftmaxActivation", "LayerNorm", "InstanceNorm",
    "GroupNorm", "L2Normalization", "LRN",
    # losses
    "SoftmaxOutput", "Softmax", "LinearRegressionOutput", "LogisticRegressionOutput",
    "MAERegressionOutput", "MakeLoss", "make_loss", "smooth_l1", "CTCLoss", "ctc_loss",
    # order statistics compare many values
    "topk", "sort", "argsort", "argmax", "argmin",
]

WIDEST = [
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_plus", "_minus",
    "_mul", "_div", "_add", "_sub", "_grad_add", "broadcast_add", "broadcast_sub",
    "broadcast_mul", "broadcast_div", "broadcast_plus", "broadcast_minus", "broadcast_mod",
    "broadcast_maximum", "broadcast_minimum", "broadcast_hypot", "broadcast_equal",
    "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "_maximum", "_minimum", "_hypot",
    "add_n", "ElementWiseSum", "Concat", "concat", "stack", "where", "dot", "batch_dot",
]

CONDITIONAL_FP32 = [
    ("Activation", "act_type", ["softrelu"]),
    ("LeakyReLU", "act_type", ["elu", "selu"]),
]

# Operators whose backward starts the gradient: loss scaling multiplies their
# ``grad_scale`` by the loss scale.
LOSS_OUTPUTS = ["SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
                "MAERegressionOutput"]
