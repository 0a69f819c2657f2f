"""The documentation of the NumPy operators registered under ``_np_<name>`` (MXNet's
``mxnet._numpy_op_doc``).

MXNet writes a Python stub for each of its C++ ``_np_*`` operators, whose docstring and
signature its generated ``mx.np`` function takes.  dagnet's ``mx.np`` functions are
Python with their own signatures and docstrings, so the documentation of an operator
``_np_<name>`` (``_np__random_<name>``, ``_np__linalg_<name>``), from a plugin say, is
the ``mx.np`` function :func:`dagnet.numpy_op_signature.function_of_operator` maps it to
(or, for an operator with no such function, its operator function ``mx.nd.<name>``).
"""

from __future__ import annotations

from typing import Any

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    if name.startswith("_np_"):
        from .numpy_op_signature import OperatorFunctionNotFound, function_of_operator

        try:
            function = function_of_operator(name)
        except OperatorFunctionNotFound:
            function = None
        if function is not None:
            return function
    raise AttributeError(f"module 'dagnet._numpy_op_doc' has no attribute {name!r}: it "
                         f"documents the _np_* operators, each by its mx.np function")
