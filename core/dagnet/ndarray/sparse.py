"""``dagnet.nd.sparse`` (MXNet's ``mx.nd.sparse``): sparse arrays and their operators.

Two storage types besides the dense ``'default'``:

- ``'row_sparse'`` (:class:`RowSparseNDArray`): a set of rows (slices along
  axis 0) and their indices; every other row is zero.  Gradients of
  embeddings and of ``dot(csr.T, x)`` have this form.
- ``'csr'`` (:class:`CSRNDArray`): a 2-D matrix in compressed sparse row
  format (``data``, ``indices``, ``indptr``).

>>> import dagnet as mx
>>> a = mx.nd.sparse.csr_matrix(([1, 2, 3], [1, 0, 2], [0, 1, 2, 2, 3]), shape=(4, 3))
>>> b = mx.nd.ones((3, 2))
>>> mx.nd.sparse.dot(a, b).asnumpy()          # a dense result
array([[1., 1.],
       [2., 2.],
       [0., 0.],
       [3., 3.]], dtype=float32)

Create them with :func:`csr_matrix`, :func:`row_sparse_array`,
:func:`zeros`, :func:`empty`, :func:`array`, ``mx.nd.zeros(shape,
stype=...)`` or ``x.tostype(stype)``.  Every operator is here as in
``dagnet.nd`` (``sparse.dot``, ``sparse.retain``, ``sparse.elemwise_add``,
``sparse.cast_storage`` ...): an operator with a sparse implementation keeps
sparse results where MXNet does; any other computes on dense copies and
returns a dense result (MXNet's storage fallback).  See
:mod:`dagnet.ndarray._sparse` for how sparse arrays live on the engine.

Plugins add sparse implementations of their operators with
:func:`register_storage_impl`, written with :func:`new_sparse`,
:func:`push_sparse`, :func:`components` and :func:`set_components`.
"""

from __future__ import annotations

from typing import Any

from . import _invoke
from ._ndarray import _NUMBER, NDArray
from ._sparse import (
    AUX_DTYPE,
    BaseSparseNDArray,
    CSRNDArray,
    RowSparseNDArray,
    SparseStorageError,
    cast_storage,
    check_components,
    components,
    dispatch,
    is_sparse,
    new_sparse,
    push_sparse,
    set_components,
    to_dense_array,
    write_gradient,
)
from ._sparse_creation import array, csr_matrix, empty, row_sparse_array, zeros
from ._storage import (
    STORAGE_TYPE_ID_TO_STR,
    STORAGE_TYPE_STR_TO_ID,
    STYPES,
    StorageImpl,
    check_storage,
    check_stype,
    grad_storage,
    infer_storage,
    register_grad_storage,
    register_storage_check,
    register_storage_impl,
    storage_impl,
)

__all__ = [
    "add", "array", "AUX_DTYPE", "BaseSparseNDArray", "cast_storage", "check_components",
    "check_storage", "check_stype", "components", "csr_matrix", "CSRNDArray", "dispatch", "divide",
    "empty", "grad_storage", "infer_storage", "is_sparse", "multiply", "new_sparse",
    "push_sparse", "register_grad_storage", "register_storage_check",
    "register_storage_impl", "row_sparse_array",
    "RowSparseNDArray", "set_components", "SparseStorageError", "STORAGE_TYPE_ID_TO_STR",
    "STORAGE_TYPE_STR_TO_ID", "storage_impl", "StorageImpl", "STYPES", "subtract",
    "to_dense_array", "write_gradient", "zeros",
]


def _helper(name: str, same_shape_op: str, broadcast_op: str, scalar_op: str,
            reflected_op: str) -> Any:
    def helper(lhs: Any, rhs: Any) -> Any:
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
            op = same_shape_op if lhs.shape == rhs.shape else broadcast_op
            return _invoke.invoke(op, [lhs, rhs])
        if isinstance(lhs, NDArray) and isinstance(rhs, _NUMBER):
            return _invoke.invoke(scalar_op, [lhs], {"scalar": rhs})
        if isinstance(lhs, _NUMBER) and isinstance(rhs, NDArray):
            return _invoke.invoke(reflected_op, [rhs], {"scalar": lhs})
        raise TypeError(f"sparse.{name}: expected NDArrays or numbers, got "
                        f"{type(lhs).__name__} and {type(rhs).__name__}")

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = (f"``{name}(lhs, rhs)`` elementwise: ``{same_shape_op}`` for arrays of "
                      f"one shape (sparse results where MXNet gives them), ``{broadcast_op}`` "
                      f"when they broadcast, ``{scalar_op}`` with a number.")
    return helper


add = _helper("add", "elemwise_add", "broadcast_add", "_plus_scalar", "_plus_scalar")
subtract = _helper("subtract", "elemwise_sub", "broadcast_sub", "_minus_scalar",
                   "_rminus_scalar")
multiply = _helper("multiply", "elemwise_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar")
divide = _helper("divide", "elemwise_div", "broadcast_div", "_div_scalar", "_rdiv_scalar")


def __getattr__(name: str) -> Any:
    # the operators: ``sparse.retain`` is ``_sparse_retain``, ``sparse.dot`` is ``dot`` ...
    if name.startswith("__"):
        raise AttributeError(f"module 'dagnet.ndarray.sparse' has no attribute {name!r}")
    from .. import plugins
    from ._frontend import function

    registry = plugins.ops()
    target = f"_sparse_{name}" if f"_sparse_{name}" in registry else name
    try:
        fn = function(target)
    except Exception:
        raise AttributeError(f"module 'dagnet.ndarray.sparse' has no attribute {name!r}") \
            from None
    globals()[name] = fn
    return fn
