"""Operator names to ``mx.np`` / ``mx.npx`` functions (MXNet's ``mxnet.numpy_op_signature``).

MXNet registers its NumPy operators in C++ as ``_np_<name>`` (``_np__random_<name>``,
``_np__linalg_<name>`` for the submodules) and ``_npx_<name>`` (``_npx__image_``,
``_npx__random_``), and attaches NumPy-style signatures to the Python functions
generated for them.  dagnet's ``mx.np`` functions are written in Python with their own
signatures (``inspect.signature`` reads them), so only the name mapping remains.
"""

from __future__ import annotations

import inspect
from typing import Any

from . import numpy as _mx_np
from . import numpy_extension as _mx_npx
from ._errors import DagnetError

__all__ = ["OperatorFunctionNotFound", "function_of_operator"]

_ROOTS = (("_np_", _mx_np, ("_random_", "_linalg_")),
          ("_npx_", _mx_npx, ("_image_", "_random_")))


class OperatorFunctionNotFound(DagnetError, ValueError):
    """A NumPy operator name whose ``mx.np`` / ``mx.npx`` function does not exist."""


def function_of_operator(op_name: str) -> Any:
    """The ``mx.np`` / ``mx.npx`` function of the operator ``op_name``: ``_np_sum`` is
    ``mx.np.sum``, ``_np__random_normal`` ``mx.np.random.normal``, ``_npx_relu``
    ``mx.npx.relu``; None for a name outside those prefixes.  A registered operator under
    a prefix that names no such function (a plugin's, say) gives its own operator function,
    ``mx.nd.<op_name>``, which carries its signature.  Raises
    :class:`OperatorFunctionNotFound` when the module or function is missing."""
    for prefix, root, submodules in _ROOTS:
        if not op_name.startswith(prefix):
            continue
        rest = op_name[len(prefix):]
        module, module_name = root, root.__name__
        for sub in submodules:
            if rest.startswith(sub):
                module_name = f"{root.__name__}.{sub[1:-1]}"
                module = getattr(root, sub[1:-1], None)
                if module is None:
                    raise OperatorFunctionNotFound(
                        f"operator {op_name!r}: {root.__name__} has no submodule {sub[1:-1]!r}")
                rest = rest[len(sub):]
                break
        func = getattr(module, rest, None)
        if func is None:
            func = _operator_function(op_name)
        if func is None:
            raise OperatorFunctionNotFound(f"operator {op_name!r}: {module_name} has no "
                                           f"function {rest!r}")
        if not hasattr(func, "__signature__"):  # as MXNet's generated functions carry it
            func.__signature__ = inspect.signature(func)
        return func
    return None


def _operator_function(op_name: str) -> Any:
    """``mx.nd.<op_name>`` for a registered operator, else None."""
    from . import ndarray
    from .operator import list_ops

    return getattr(ndarray, op_name, None) if op_name in list_ops() else None


_get_builtin_op = function_of_operator  # MXNet's name
