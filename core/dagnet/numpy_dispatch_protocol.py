"""NumPy's dispatch protocols for ``mx.np`` arrays (MXNet's ``mxnet.numpy_dispatch_protocol``).

Official NumPy functions and ufuncs called on ``mx.np.ndarray`` run dagnet's own
``mx.np`` function of the same name, on the arrays' device and under autograd:

>>> import numpy, dagnet as mx
>>> type(numpy.sum(mx.np.ones((2, 3)), axis=0))
<class 'dagnet.numpy._array.ndarray'>

``_NUMPY_ARRAY_FUNCTION_LIST`` names the functions dispatched through
``__array_function__`` (``"linalg.x"`` for ``numpy.linalg.x``) and
``_NUMPY_ARRAY_UFUNC_LIST`` the ufuncs dispatched through ``__array_ufunc__``.  A NumPy
function outside them runs NumPy on host copies and returns ``mx.np`` arrays, which
autograd cannot follow (it raises under ``autograd.record()``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .numpy import dispatch as _dispatch

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol"]

_NUMPY_ARRAY_FUNCTION_LIST = list(_dispatch.ARRAY_FUNCTION_NAMES)
_NUMPY_ARRAY_UFUNC_LIST = list(_dispatch.ARRAY_UFUNC_NAMES)


def _implements(numpy_function: Callable[..., Any]) -> Callable[[Callable[..., Any]],
                                                                 Callable[..., Any]]:
    """Decorator: ``numpy_function`` called on ``mx.np`` arrays runs the decorated function."""
    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        _dispatch.register_function(numpy_function, func)
        return func
    return register


def _with_protocol(protocol: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except Exception as error:
                raise RuntimeError(f"{func.__name__} failed under NumPy's {protocol} "
                                   f"protocol: {error}") from error
        return run
    return decorate


with_array_function_protocol = _with_protocol("__array_function__")
with_array_function_protocol.__doc__ = (
    "Decorator for code relying on ``__array_function__`` (every NumPy dagnet supports has it): "
    "an exception it raises is re-raised as RuntimeError naming the function.")
with_array_ufunc_protocol = _with_protocol("__array_ufunc__")
with_array_ufunc_protocol.__doc__ = (
    "Decorator for code relying on ``__array_ufunc__``: an exception it raises is re-raised "
    "as RuntimeError naming the function.")

_dispatch._ensure_registered()
