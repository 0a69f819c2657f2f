"""The arrays ``simple_bind`` borrows instead of allocating (how MXNet's module
executor groups share between buckets).

Sharing happens only with a ``shared_buffer`` (a dict of name -> array the
caller keeps, one per device), as in MXNet:

- the arguments in ``shared_arg_names`` (the parameters) and their gradients are
  ``shared_exec``'s arrays when it has them, and so are the auxiliary states; the
  shapes and dtypes must agree;
- every other argument, and its gradient as ``"grad of <name>"``, comes from the
  buffer -- the very array for the same shape, a view of its first elements for a
  smaller one -- and a new array (one that did not fit, or a name not there yet)
  goes into it.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np

from .._errors import ShapeError
from ..context import Context
from ..ndarray import NDArray, wrap_chunk
from ..ndarray import zeros as _zeros

__all__ = ["ArraySource"]


class ArraySource:
    """Where ``simple_bind`` gets each argument, gradient and auxiliary state."""

    def __init__(self, shared_exec: Any, shared_arg_names: Collection[str] | None,
                 shared_buffer: dict[str, NDArray] | None):
        self._shared_exec = shared_exec
        self._shared_names = set(shared_arg_names or ())
        self._buffer = shared_buffer

    def argument(self, name: str, shape: tuple, dtype: Any, ctx: Context,
                 with_grad: bool) -> tuple[NDArray, NDArray | None]:
        """An argument's array and (``with_grad``) its gradient array."""
        if self._buffer is None:
            return (_zeros(shape, ctx=ctx, dtype=dtype),
                    _zeros(shape, ctx=ctx, dtype=dtype) if with_grad else None)
        shared = self._shared_exec
        if name in self._shared_names:
            if shared is not None and name in shared.arg_dict:
                arg = _check_same(shared.arg_dict[name], shape, dtype, name)
                grad = shared.grad_dict.get(name) if with_grad else None
                if with_grad and grad is None:  # the shared executor computed none
                    grad = _zeros(shape, ctx=ctx, dtype=dtype)
                return arg, grad
            return (_zeros(shape, ctx=ctx, dtype=dtype),
                    _zeros(shape, ctx=ctx, dtype=dtype) if with_grad else None)
        return (self._from_buffer(name, shape, dtype, ctx),
                self._from_buffer(f"grad of {name}", shape, dtype, ctx) if with_grad else None)

    def auxiliary(self, name: str, shape: tuple, dtype: Any, ctx: Context) -> NDArray:
        """An auxiliary state's array: the shared executor's, when there is one."""
        shared = self._shared_exec
        if shared is not None and self._buffer is not None and name in shared.aux_dict:
            return _check_same(shared.aux_dict[name], shape, dtype, name)
        return _zeros(shape, ctx=ctx, dtype=dtype)

    def _from_buffer(self, name: str, shape: tuple, dtype: Any, ctx: Context) -> NDArray:
        array = self._buffer.get(name)
        if (array is not None and array.context == ctx and np.dtype(array.dtype) == dtype
                and array.stype == "default"):
            if tuple(array.shape) == tuple(shape):
                return array
            if math.prod(shape) <= array.size:
                return wrap_chunk(array._chunk, array._offset, tuple(shape), np.dtype(dtype))
        array = self._buffer[name] = _zeros(shape, ctx=ctx, dtype=dtype)
        return array


def _check_same(array: NDArray, shape: tuple, dtype: Any, name: str) -> NDArray:
    if tuple(array.shape) != tuple(shape) or np.dtype(array.dtype) != np.dtype(dtype):
        raise ShapeError(f"simple_bind: {name!r} is shared with shared_exec, where it is a "
                         f"{tuple(array.shape)} {np.dtype(array.dtype).name} array, but this "
                         f"symbol needs {tuple(shape)} {np.dtype(dtype).name}; share only "
                         f"arrays both symbols use alike")
    return array
