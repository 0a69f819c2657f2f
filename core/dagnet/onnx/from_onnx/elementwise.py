"""Element-wise ONNX operators: unary functions, binary arithmetic (numpy
broadcasting), comparisons, logic, activations, Clip, Cast and Where."""

from __future__ import annotations

import math

import numpy as np

from ... import symbol as sym
from ._context import ImportNode
from ._table import IMPORTS

# ONNX unary operator -> (numpy function for constants, dagnet operator)
UNARY = {
    "Abs": (np.abs, "abs"), "Neg": (np.negative, "negative"), "Sqrt": (np.sqrt, "sqrt"),
    "Exp": (np.exp, "exp"), "Log": (np.log, "log"), "Ceil": (np.ceil, "ceil"),
    "Floor": (np.floor, "floor"), "Sin": (np.sin, "sin"), "Cos": (np.cos, "cos"),
    "Tan": (np.tan, "tan"), "Asin": (np.arcsin, "arcsin"), "Acos": (np.arccos, "arccos"),
    "Atan": (np.arctan, "arctan"), "Sinh": (np.sinh, "sinh"), "Cosh": (np.cosh, "cosh"),
    "Asinh": (np.arcsinh, "arcsinh"), "Acosh": (np.arccosh, "arccosh"),
    "Atanh": (np.arctanh, "arctanh"), "Tanh": (np.tanh, "tanh"),
    "Sigmoid": (lambda x: 1 / (1 + np.exp(-x)), "sigmoid"), "Relu": (lambda x: np.maximum(x, 0),
                                                                     "relu"),
    "Reciprocal": (np.reciprocal, "reciprocal"), "Sign": (np.sign, "sign"),
    "Round": (np.rint, "rint"), "Softsign": (lambda x: x / (1 + np.abs(x)), "softsign"),
    "Identity": (lambda x: x, "identity"), "Not": (np.logical_not, "logical_not"),
    "Erf": (None, "erf"), "IsNaN": (np.isnan, "_contrib_isnan"),
}


def _op(name: str):
    namespace = sym.contrib if name.startswith("_contrib_") else sym
    return getattr(namespace, name[len("_contrib_"):] if name.startswith("_contrib_") else name)


def _unary(numpy_fn, op_name: str):
    def convert(node: ImportNode):
        if numpy_fn is not None and node.all_const():
            return np.asarray(numpy_fn(node.const(0)))
        return _op(op_name)(node.sym(0), name=node.sym_name)

    convert.__doc__ = f"dagnet's {op_name}."
    return convert


for _name, (_fn, _target) in UNARY.items():
    IMPORTS.add(_name, _unary(_fn, _target))


def _int_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(np.result_type(a, b), np.integer):
        return (np.trunc(a / b)).astype(np.result_type(a, b))
    return np.divide(a, b)


# ONNX binary operator -> (numpy, dagnet broadcast operator, scalar on the right, on the left)
BINARY = {
    "Add": (np.add, "broadcast_add", lambda x, c: x + c, lambda c, x: c + x),
    "Sub": (np.subtract, "broadcast_sub", lambda x, c: x - c, lambda c, x: c - x),
    "Mul": (np.multiply, "broadcast_mul", lambda x, c: x * c, lambda c, x: c * x),
    "Div": (_int_divide, "broadcast_div", lambda x, c: x / c, lambda c, x: c / x),
    "Pow": (np.power, "broadcast_power", lambda x, c: x ** c, lambda c, x: c ** x),
    "Equal": (np.equal, "broadcast_equal", None, None),
    "Greater": (np.greater, "broadcast_greater", None, None),
    "Less": (np.less, "broadcast_lesser", None, None),
    "GreaterOrEqual": (np.greater_equal, "broadcast_greater_equal", None, None),
    "LessOrEqual": (np.less_equal, "broadcast_lesser_equal", None, None),
    "And": (np.logical_and, "broadcast_logical_and", None, None),
    "Or": (np.logical_or, "broadcast_logical_or", None, None),
    "Xor": (np.logical_xor, "broadcast_logical_xor", None, None),
}


def _scalar_of(node: ImportNode, index: int, other: int) -> float | None:
    """A constant input of one element that does not add dimensions to the other."""
    if not node.is_const(index) or node.is_const(other):
        return None
    value = node.const(index)
    if value.size != 1 or value.dtype.kind not in "fiu":
        return None
    other_shape = node.shape(other)
    if value.ndim > 0 and (other_shape is None or value.ndim > len(other_shape)):
        return None
    return value.reshape(-1)[0].item()


def _binary(numpy_fn, op_name: str, right, left):
    def convert(node: ImportNode):
        if node.all_const():
            return np.asarray(numpy_fn(node.const(0), node.const(1)))
        if right is not None:
            scalar = _scalar_of(node, 1, 0)
            if scalar is not None:
                return right(node.sym(0), scalar)
            scalar = _scalar_of(node, 0, 1)
            if scalar is not None:
                return left(scalar, node.sym(1))
        return getattr(sym, op_name)(node.sym(0), node.sym(1), name=node.sym_name)

    convert.__doc__ = f"dagnet's {op_name} (a scalar operator for a one-element constant)."
    return convert


for _name, (_fn, _target, _right, _left) in BINARY.items():
    IMPORTS.add(_name, _binary(_fn, _target, _right, _left))


@IMPORTS.register("Mod")
def mod(node: ImportNode):
    """broadcast_mod: the remainder takes the divisor's sign (ONNX fmod=0; fmod=1 keeps
    the dividend's, which this cannot express)."""
    if node.attr("fmod", 0):
        if node.all_const():
            return np.fmod(node.const(0), node.const(1))
        raise node.fail("fmod=1 (C's fmod) has no dagnet operator")
    if node.all_const():
        return np.mod(node.const(0), node.const(1))
    return sym.broadcast_mod(node.sym(0), node.sym(1), name=node.sym_name)


def _variadic(node: ImportNode, numpy_fn, op_name: str):
    if node.all_const():
        result = node.const(0)
        for i in range(1, len(node.values)):
            result = numpy_fn(result, node.const(i))
        return np.asarray(result)
    result = node.sym(0)
    for i in range(1, len(node.values)):
        result = getattr(sym, op_name)(result, node.sym(i))
    return result


@IMPORTS.register("Sum")
def sum_(node: ImportNode):
    """broadcast_add of every input."""
    return _variadic(node, np.add, "broadcast_add")


@IMPORTS.register("Max")
def maximum(node: ImportNode):
    """broadcast_maximum of every input."""
    return _variadic(node, np.maximum, "broadcast_maximum")


@IMPORTS.register("Min")
def minimum(node: ImportNode):
    """broadcast_minimum of every input."""
    return _variadic(node, np.minimum, "broadcast_minimum")


@IMPORTS.register("Mean")
def mean(node: ImportNode):
    """The sum of every input over their number."""
    total = _variadic(node, np.add, "broadcast_add")
    return total / len(node.values)


@IMPORTS.register("Where")
def where(node: ImportNode):
    """where(condition, x, y), all three broadcast to one shape first (dagnet's where
    takes equal shapes)."""
    if node.all_const():
        return np.where(node.const(0), node.const(1), node.const(2))
    shapes = [node.static_shape(i) for i in range(3)]
    condition, x, y = node.sym(0), node.sym(1), node.sym(2)
    dtype = (node.dtypes[1] or np.dtype(np.float32)).name
    condition = sym.Cast(condition, dtype=dtype)
    if None in shapes or len(set(shapes)) > 1:
        common = sym.broadcast_add(sym.broadcast_add(sym.zeros_like(x), sym.zeros_like(y)),
                                   sym.zeros_like(condition))
        condition, x, y = (sym.broadcast_add(v, common) for v in (condition, x, y))
    return sym.where(condition, x, y, name=node.sym_name)


@IMPORTS.register("Cast")
def cast(node: ImportNode):
    """Cast to the numpy dtype of ``to``."""
    onnx = _onnx()
    dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(node.attr("to"))))
    if node.all_const():
        return node.const(0).astype(dtype)
    return sym.Cast(node.sym(0), dtype=dtype.name, name=node.sym_name)


def _onnx():
    from .._deps import require_onnx

    return require_onnx()


@IMPORTS.register("Clip")
def clip(node: ImportNode):
    """clip between the bounds (attributes before opset 11, constant inputs after;
    a missing bound is unbounded)."""
    if node.opset < 11:
        low, high = node.attr("min", -np.inf), node.attr("max", np.inf)
    else:
        low = node.const(1).item() if node.has(1) else -np.inf
        high = node.const(2).item() if node.has(2) else np.inf
    if node.all_const():
        return np.clip(node.const(0), low, high)
    dtype = node.dtypes[0]
    if dtype is not None and np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        low, high = max(low, info.min), min(high, info.max)
    else:
        big = float(np.finfo(np.float32).max)
        low, high = max(float(low), -big), min(float(high), big)
    return sym.clip(node.sym(0), a_min=low, a_max=high, name=node.sym_name)


# activations ---------------------------------------------------------------------------
@IMPORTS.register("LeakyRelu")
def leaky_relu(node: ImportNode):
    """LeakyReLU (leaky) with alpha as the slope."""
    return sym.LeakyReLU(node.sym(0), act_type="leaky", slope=float(node.attr("alpha", 0.01)),
                         name=node.sym_name)


@IMPORTS.register("Elu")
def elu(node: ImportNode):
    """LeakyReLU (elu) with alpha as the slope."""
    return sym.LeakyReLU(node.sym(0), act_type="elu", slope=float(node.attr("alpha", 1.0)),
                         name=node.sym_name)


_SELU_ALPHA, _SELU_GAMMA = 1.6732632423543772, 1.0507009873554805


@IMPORTS.register("Selu")
def selu(node: ImportNode):
    """LeakyReLU (selu) with the standard constants, composed otherwise."""
    alpha = float(node.attr("alpha", _SELU_ALPHA))
    gamma = float(node.attr("gamma", _SELU_GAMMA))
    x = node.sym(0)
    if math.isclose(alpha, _SELU_ALPHA, rel_tol=1e-6) and \
            math.isclose(gamma, _SELU_GAMMA, rel_tol=1e-6):
        return sym.LeakyReLU(x, act_type="selu", name=node.sym_name)
    negative = (sym.exp(sym.minimum(x, 0.0)) - 1.0) * alpha
    return (sym.relu(x) + negative * (x < 0)) * gamma


@IMPORTS.register("PRelu")
def prelu(node: ImportNode):
    """LeakyReLU (prelu) with one slope per channel (axis 1)."""
    slope = node.values[1]
    if isinstance(slope, np.ndarray):
        if slope.size == 1:
            return sym.LeakyReLU(node.sym(0), act_type="leaky", slope=float(slope.item()),
                                 name=node.sym_name)
        gamma = node.graph.parameter(node.value_names[1], slope.reshape(-1))
    else:
        gamma = sym.reshape(slope, shape=(-1,))
    return sym.LeakyReLU(node.sym(0), gamma, act_type="prelu", name=node.sym_name)


@IMPORTS.register("HardSigmoid")
def hard_sigmoid(node: ImportNode):
    """hard_sigmoid with alpha and beta."""
    return sym.hard_sigmoid(node.sym(0), alpha=float(node.attr("alpha", 0.2)),
                            beta=float(node.attr("beta", 0.5)), name=node.sym_name)


@IMPORTS.register("Softplus")
def softplus(node: ImportNode):
    """Activation softrelu."""
    return sym.Activation(node.sym(0), act_type="softrelu", name=node.sym_name)


@IMPORTS.register("Gelu", opset=20)
def gelu(node: ImportNode):
    """LeakyReLU (gelu, the exact form)."""
    if node.attr("approximate", "none") != "none":
        raise node.fail("the tanh approximation of Gelu has no dagnet operator")
    return sym.LeakyReLU(node.sym(0), act_type="gelu", name=node.sym_name)


@IMPORTS.register("Dropout")
def dropout(node: ImportNode):
    """The data (an imported model runs inference); the mask output is all ones."""
    data = node.values[0] if node.is_const(0) else sym.identity(node.sym(0),
                                                                  name=node.sym_name)
    if len(node.outputs) > 1 and node.outputs[1]:
        return [data, sym.ones_like(node.sym(0))]
    return data
