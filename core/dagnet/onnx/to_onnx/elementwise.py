"""Element-wise operators: unary functions, binary arithmetic with and without
broadcasting, the ``_*_scalar`` family, comparisons and logic."""

from __future__ import annotations

import math

import numpy as np

from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS

# MXNet unary operator -> the ONNX operator computing it exactly.
UNARY = {
    "abs": "Abs", "negative": "Neg", "sqrt": "Sqrt", "exp": "Exp", "log": "Log",
    "ceil": "Ceil", "floor": "Floor", "sin": "Sin", "cos": "Cos", "tan": "Tan",
    "arcsin": "Asin", "arccos": "Acos", "arctan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
    "tanh": "Tanh", "arcsinh": "Asinh", "arccosh": "Acosh", "arctanh": "Atanh",
    "sigmoid": "Sigmoid", "relu": "Relu", "reciprocal": "Reciprocal", "erf": "Erf",
    "sign": "Sign", "rint": "Round", "softsign": "Softsign",
    "_copy": "Identity", "BlockGrad": "Identity", "MakeLoss": "Identity",
    "make_loss": "Identity",
}

# MXNet binary operator (both inputs tensors) -> ONNX operator; numpy broadcasting in
# ONNX is what MXNet's broadcast_* operators do.
BINARY = {
    "elemwise_add": "Add", "broadcast_add": "Add",
    "elemwise_sub": "Sub", "broadcast_sub": "Sub",
    "elemwise_mul": "Mul", "broadcast_mul": "Mul",
    "elemwise_div": "Div", "broadcast_div": "Div",
    "_power": "Pow", "broadcast_power": "Pow",
    "_maximum": "Max", "broadcast_maximum": "Max",
    "_minimum": "Min", "broadcast_minimum": "Min",
}

# Comparisons give 0/1 in the inputs' dtype in MXNet, booleans in ONNX.
COMPARE = {
    "_equal": "Equal", "broadcast_equal": "Equal",
    "_not_equal": "NotEqual", "broadcast_not_equal": "NotEqual",
    "_greater": "Greater", "broadcast_greater": "Greater",
    "_greater_equal": "GreaterOrEqual", "broadcast_greater_equal": "GreaterOrEqual",
    "_lesser": "Less", "broadcast_lesser": "Less",
    "_lesser_equal": "LessOrEqual", "broadcast_lesser_equal": "LessOrEqual",
}

LOGIC = {
    "_logical_and": "And", "broadcast_logical_and": "And",
    "_logical_or": "Or", "broadcast_logical_or": "Or",
    "_logical_xor": "Xor", "broadcast_logical_xor": "Xor",
}

# Scalar forms: (ONNX operator, scalar on the left).
SCALAR = {
    "_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
    "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
    "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
    "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
    "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False),
    "_equal_scalar": ("Equal", False), "_not_equal_scalar": ("NotEqual", False),
    "_greater_scalar": ("Greater", False), "_greater_equal_scalar": ("GreaterOrEqual", False),
    "_lesser_scalar": ("Less", False), "_lesser_equal_scalar": ("LessOrEqual", False),
    "_logical_and_scalar": ("And", False), "_logical_or_scalar": ("Or", False),
    "_logical_xor_scalar": ("Xor", False),
    "_mod_scalar": ("Mod", False), "_rmod_scalar": ("Mod", True),
    "_hypot_scalar": ("Hypot", False),
}


def _apply(g: OnnxBuilder, onnx_op: str, a: str, b: str, dtype: np.dtype, out: str) -> str:
    """``a onnx_op b`` for two values of ``dtype``, written to ``out`` in MXNet's form:
    comparisons and logic as 0/1 of ``dtype``, modulo with the divisor's sign."""
    if onnx_op in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"):
        return g.cast(g.op(onnx_op, [a, b]), dtype, out)
    if onnx_op == "NotEqual":
        return g.cast(g.op("Not", [g.op("Equal", [a, b])]), dtype, out)
    if onnx_op in ("And", "Or", "Xor"):
        return g.cast(g.op(onnx_op, [g.cast(a, np.bool_), g.cast(b, np.bool_)]), dtype, out)
    if onnx_op == "Mod":
        return _python_mod(g, a, b, dtype, out)
    if onnx_op == "Hypot":
        return g.op("Sqrt", [g.op("Add", [g.op("Mul", [a, a]), g.op("Mul", [b, b])])], [out])
    if onnx_op == "Pow" and np.issubdtype(dtype, np.integer):
        # ONNX Runtime's integer Pow goes through floating point; MXNet's stays integral.
        return g.cast(g.op("Pow", [g.cast(a, np.float64), g.cast(b, np.float64)]), dtype, out)
    return g.op(onnx_op, [a, b], [out])


def _python_mod(g: OnnxBuilder, a: str, b: str, dtype: np.dtype, out: str) -> str:
    """MXNet's modulo: the remainder takes the divisor's sign, and x mod 0 is 0."""
    zero = g.scalar(0, dtype)
    divisor_is_zero = g.op("Equal", [b, zero])
    safe_b = g.op("Where", [divisor_is_zero, g.scalar(1, dtype), b])
    if np.issubdtype(dtype, np.integer):
        remainder = g.op("Mod", [a, safe_b], fmod=0)
    else:
        # fmod keeps the dividend's sign; move a non-zero remainder of the other sign over.
        remainder = g.op("Mod", [a, safe_b], fmod=1)
        signs_differ = g.op("Less", [g.op("Mul", [remainder, safe_b]), zero])
        remainder = g.op("Where", [signs_differ, g.op("Add", [remainder, safe_b]), remainder])
    return g.op("Where", [divisor_is_zero, g.op("Mul", [a, zero]), remainder], [out])


def _unary(onnx_op: str):
    def convert(node: ExportNode, g: OnnxBuilder) -> None:
        g.op(onnx_op, node.inputs[:1], [node.outputs[0]])

    convert.__doc__ = f"One ONNX {onnx_op}."
    return convert


def _binary(onnx_op: str):
    def convert(node: ExportNode, g: OnnxBuilder) -> None:
        _apply(g, onnx_op, node.inputs[0], node.inputs[1], node.in_dtypes[0], node.outputs[0])

    convert.__doc__ = f"ONNX {onnx_op} of the two inputs (numpy broadcasting)."
    return convert


def _scalar(onnx_op: str, scalar_first: bool):
    def convert(node: ExportNode, g: OnnxBuilder) -> None:
        dtype = node.in_dtypes[0]
        # MXNet converts the scalar to the array's dtype first (2.7 is 2 for int32).
        scalar = g.scalar(np.array(node.attrs.scalar, dtype=np.float64).astype(dtype), dtype)
        a, b = (scalar, node.inputs[0]) if scalar_first else (node.inputs[0], scalar)
        _apply(g, onnx_op, a, b, dtype, node.outputs[0])

    side = "scalar on the left" if scalar_first else "scalar on the right"
    convert.__doc__ = f"ONNX {onnx_op} with a constant ({side}) in the input's dtype."
    return convert


for _name, _onnx_op in UNARY.items():
    EXPORTS.add(_name, _unary(_onnx_op))
for _name, _onnx_op in {**BINARY, **COMPARE, **LOGIC}.items():
    EXPORTS.add(_name, _binary(_onnx_op))
for _name, (_onnx_op, _first) in SCALAR.items():
    EXPORTS.add(_name, _scalar(_onnx_op, _first))
EXPORTS.add("broadcast_mod", _binary("Mod"))
EXPORTS.add("_mod", _binary("Mod"))
EXPORTS.add("broadcast_hypot", _binary("Hypot"))
EXPORTS.add("_hypot", _binary("Hypot"))


@EXPORTS.register("square")
def square(node: ExportNode, g: OnnxBuilder) -> None:
    """x * x (exact for integers too)."""
    g.op("Mul", [node.inputs[0], node.inputs[0]], [node.outputs[0]])


@EXPORTS.register("log2", "log10")
def log_base(node: ExportNode, g: OnnxBuilder) -> None:
    """Log(x) divided by the natural log of the base."""
    base = 2.0 if node.op == "log2" else 10.0
    dtype = node.in_dtypes[0]
    g.op("Div", [g.op("Log", node.inputs[:1]), g.scalar(math.log(base), dtype)],
         [node.outputs[0]])


@EXPORTS.register("log1p")
def log1p(node: ExportNode, g: OnnxBuilder) -> None:
    """Log(1 + x)."""
    one = g.scalar(1, node.in_dtypes[0])
    g.op("Log", [g.op("Add", [node.inputs[0], one])], [node.outputs[0]])


@EXPORTS.register("expm1")
def expm1(node: ExportNode, g: OnnxBuilder) -> None:
    """Exp(x) - 1."""
    one = g.scalar(1, node.in_dtypes[0])
    g.op("Sub", [g.op("Exp", node.inputs[:1]), one], [node.outputs[0]])


@EXPORTS.register("rsqrt")
def rsqrt(node: ExportNode, g: OnnxBuilder) -> None:
    """1 / Sqrt(x)."""
    g.op("Reciprocal", [g.op("Sqrt", node.inputs[:1])], [node.outputs[0]])


@EXPORTS.register("cbrt", "rcbrt")
def cbrt(node: ExportNode, g: OnnxBuilder) -> None:
    """sign(x) * |x| ** (1/3) (its reciprocal for rcbrt)."""
    x, dtype = node.inputs[0], node.in_dtypes[0]
    root = g.op("Mul", [g.op("Sign", [x]),
                        g.op("Pow", [g.op("Abs", [x]), g.scalar(1.0 / 3.0, dtype)])])
    if node.op == "rcbrt":
        root = g.op("Reciprocal", [root])
    g.identity(root, node.outputs[0])


@EXPORTS.register("trunc", "fix")
def trunc(node: ExportNode, g: OnnxBuilder) -> None:
    """Round toward zero: sign(x) * floor(|x|)."""
    x = node.inputs[0]
    g.op("Mul", [g.op("Sign", [x]), g.op("Floor", [g.op("Abs", [x])])], [node.outputs[0]])


@EXPORTS.register("round")
def round_half_away(node: ExportNode, g: OnnxBuilder) -> None:
    """MXNet rounds halves away from zero: sign(x) * floor(|x| + 0.5)."""
    x, dtype = node.inputs[0], node.in_dtypes[0]
    magnitude = g.op("Floor", [g.op("Add", [g.op("Abs", [x]), g.scalar(0.5, dtype)])])
    g.op("Mul", [g.op("Sign", [x]), magnitude], [node.outputs[0]])


@EXPORTS.register("degrees", "radians")
def angle_units(node: ExportNode, g: OnnxBuilder) -> None:
    """Multiplication by 180/pi (degrees) or pi/180 (radians)."""
    factor = 180.0 / math.pi if node.op == "degrees" else math.pi / 180.0
    g.op("Mul", [node.inputs[0], g.scalar(factor, node.in_dtypes[0])], [node.outputs[0]])


@EXPORTS.register("logical_not")
def logical_not(node: ExportNode, g: OnnxBuilder) -> None:
    """Not of the input as booleans, back in the input's dtype."""
    flipped = g.op("Not", [g.cast(node.inputs[0], np.bool_)])
    g.cast(flipped, node.out_dtypes[0], node.outputs[0])


@EXPORTS.register("add_n")
def add_n(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX Sum of every input."""
    if len(node.inputs) == 1:
        g.identity(node.inputs[0], node.outputs[0])
        return
    g.op("Sum", node.inputs, [node.outputs[0]])


@EXPORTS.register("clip")
def clip(node: ExportNode, g: OnnxBuilder) -> None:
    """Clip with the bounds as constants of the input's dtype."""
    dtype = node.in_dtypes[0]
    low = g.scalar(np.array(node.attrs.a_min).astype(dtype), dtype)
    high = g.scalar(np.array(node.attrs.a_max).astype(dtype), dtype)
    g.op("Clip", [node.inputs[0], low, high], [node.outputs[0]])


@EXPORTS.register("hard_sigmoid")
def hard_sigmoid(node: ExportNode, g: OnnxBuilder) -> None:
    """ONNX HardSigmoid: max(0, min(1, alpha * x + beta))."""
    g.op("HardSigmoid", node.inputs[:1], [node.outputs[0]], alpha=float(node.attrs.alpha),
         beta=float(node.attrs.beta))


@EXPORTS.register("smooth_l1")
def smooth_l1(node: ExportNode, g: OnnxBuilder) -> None:
    """0.5 (sigma x)^2 where |x| < 1/sigma^2, |x| - 0.5/sigma^2 elsewhere."""
    x, dtype = node.inputs[0], node.in_dtypes[0]
    sigma2 = float(node.attrs.scalar) ** 2
    magnitude = g.op("Abs", [x])
    inside = g.op("Less", [magnitude, g.scalar(1.0 / sigma2, dtype)])
    quadratic = g.op("Mul", [g.op("Mul", [x, x]), g.scalar(0.5 * sigma2, dtype)])
    linear = g.op("Sub", [magnitude, g.scalar(0.5 / sigma2, dtype)])
    g.op("Where", [inside, quadratic, linear], [node.outputs[0]])
