"""NumPy's dispatch protocols for ``dagnet.numpy.ndarray``: official NumPy functions
(``__array_function__``, NEP 18) and ufuncs (``__array_ufunc__``, NEP 13) called on
``mx.np`` arrays run ``mx.np``'s own function when it has one, and otherwise run NumPy
on host copies of the arrays and give the result back as ``mx.np`` arrays (outside
autograd only: a host copy would cut the recorded graph)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as onp

from ..autograd import is_recording
from ._array import NumpyError, ndarray

# NumPy functions (``numpy.X`` or ``numpy.linalg.X``) that dispatch to ``mx.np.X``
ARRAY_FUNCTION_NAMES = (
    # reductions and searches
    "all", "any", "argmax", "argmin", "amax", "amin", "max", "min", "mean", "prod", "std",
    "sum", "var",
    # shapes, joins and splits
    "array_split", "broadcast_arrays", "broadcast_to", "concatenate", "expand_dims", "flip",
    "hstack", "ravel", "repeat", "reshape", "split", "squeeze", "stack", "swapaxes", "tile",
    "transpose", "vstack",
    # selection and element-wise functions that are not ufuncs
    "clip", "fix", "take", "where",
    # products
    "dot", "inner", "outer", "tensordot", "vdot",
    # linear algebra (MXNet's list: not svd, det or slogdet)
    "linalg.norm", "linalg.cholesky", "linalg.inv", "linalg.solve", "linalg.tensorinv",
    "linalg.tensorsolve", "linalg.pinv", "linalg.eigvals", "linalg.eig", "linalg.eigvalsh",
    "linalg.eigh",
    # arrays shaped like another
    "empty_like", "full_like", "ones_like", "zeros_like",
)

# NumPy ufuncs (by ``ufunc.__name__``) that dispatch to ``mx.np`` functions of that name
ARRAY_UFUNC_NAMES = (
    # arithmetic
    "add", "subtract", "multiply", "true_divide", "mod", "remainder", "power", "negative",
    "reciprocal", "square", "sqrt", "cbrt", "absolute", "abs", "sign", "maximum", "minimum",
    "hypot", "matmul",
    # exponents and logarithms
    "exp", "expm1", "log", "log2", "log10",
    # trigonometric and hyperbolic
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "degrees",
    # rounding
    "ceil", "floor", "trunc", "rint",
    # comparisons and logic
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_not",
)

_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
_UFUNCS: dict[str, Callable[..., Any]] = {}


def _lookup(module: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


def register_function(numpy_function: Callable[..., Any], implementation: Callable[..., Any]
                      ) -> None:
    """Make ``numpy_function`` called on ``mx.np`` arrays run ``implementation``."""
    _FUNCTIONS[numpy_function] = implementation


def register_ufunc(name: str, implementation: Callable[..., Any]) -> None:
    """Make the NumPy ufunc named ``name`` called on ``mx.np`` arrays run ``implementation``."""
    _UFUNCS[name] = implementation


def _register_builtin() -> None:
    from .. import numpy as mx_np

    for names, what in ((ARRAY_FUNCTION_NAMES, "function"), (ARRAY_UFUNC_NAMES, "ufunc")):
        if len(set(names)) != len(names):
            dup = sorted(n for n in set(names) if names.count(n) > 1)
            raise NumpyError(f"the dispatched NumPy {what} names repeat {dup}")
    for name in ARRAY_FUNCTION_NAMES:
        register_function(_lookup(onp, name), _lookup(mx_np, name))
    for name in ARRAY_UFUNC_NAMES:
        register_ufunc(name, _lookup(mx_np, name))


def _ensure_registered() -> None:
    if not _FUNCTIONS:
        _register_builtin()


def _to_host(value: Any) -> Any:
    if isinstance(value, ndarray):
        return value.asnumpy()
    if isinstance(value, (list, tuple)):
        return type(value)(_to_host(v) for v in value)
    return value


def _first_context(values: Any) -> Any:
    for value in values:
        if isinstance(value, ndarray):
            return value.context
        if isinstance(value, (list, tuple)):
            ctx = _first_context(value)
            if ctx is not None:
                return ctx
    return None


def _to_device(value: Any, ctx: Any) -> Any:
    from ._creation import array

    if isinstance(value, onp.ndarray):
        return array(value, dtype=value.dtype, ctx=ctx)
    if isinstance(value, (list, tuple)):
        items = [_to_device(v, ctx) for v in value]
        # NumPy 2's results are named tuples (numpy.linalg.qr's QRResult)
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _fallback(what: str, run: Callable[..., Any], args: Any, kwargs: dict[str, Any]) -> Any:
    if is_recording():
        raise NumpyError(f"NumPy's {what} has no mx.np implementation, and running NumPy on "
                         f"host copies under autograd.record() would lose the gradient; call "
                         f"it outside the recording scope, or use an mx.np function")
    ctx = _first_context(list(args) + list(kwargs.values()))
    out = run(*_to_host(args), **{k: _to_host(v) for k, v in kwargs.items()})
    return _to_device(out, ctx)


def array_function(func: Callable[..., Any], types: Any, args: Any, kwargs: dict[str, Any]
                   ) -> Any:
    """``ndarray.__array_function__``: ``mx.np``'s version of ``func``, else NumPy's."""
    _ensure_registered()
    implementation = _FUNCTIONS.get(func)
    if implementation is None:
        return _fallback(f"function {func.__name__!r}", func, args, kwargs)
    if not all(issubclass(t, ndarray) for t in types):
        return NotImplemented
    return implementation(*args, **kwargs)


def array_ufunc(ufunc: Any, method: str, inputs: Any, kwargs: dict[str, Any]) -> Any:
    """``ndarray.__array_ufunc__``: plain ufunc calls run ``mx.np``'s function of the
    ufunc's name, else NumPy's; other methods (``reduce``, ``at`` ...) are left to
    NumPy's types (``NotImplemented``)."""
    if method != "__call__":
        return NotImplemented
    _ensure_registered()
    if "out" in kwargs:
        out = kwargs["out"]
        if len(out) != 1:
            raise NumpyError(f"ufunc {ufunc.__name__!r}: out= must hold exactly one array, "
                             f"got {len(out)}")
        kwargs = {**kwargs, "out": out[0]}
    implementation = _UFUNCS.get(ufunc.__name__)
    if implementation is None:
        return _fallback(f"ufunc {ufunc.__name__!r}", ufunc, inputs, kwargs)
    return implementation(*inputs, **kwargs)
