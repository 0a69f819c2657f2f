"""The optimizer updates on sparse storage (MXNet's ``FComputeEx`` of ``optimizer_op``).

A row_sparse gradient meets a dense or row_sparse weight:

- *lazy* update (``lazy_update=True``, and always for ``ftrl_update`` and
  ``_sparse_adagrad_update``): only the rows the gradient holds change -- the
  weight, its weight decay and the states (momentum, moments ...) of every other
  row stay as they are;
- *standard* update (``lazy_update=False``, or a row_sparse weight with dense
  states): the dense update with the gradient's missing rows as zeros.

Which combinations take which path follows MXNet's storage inference:
``sgd_update`` for any dense/row_sparse weight; ``sgd_mom_update`` and
``adam_update`` when the states have the weight's storage type (standard when a
row_sparse weight has dense states); ``ftrl_update`` when weight and states are
all row_sparse; ``_sparse_adagrad_update`` when the state has the weight's storage
type and ``wd`` is 0 (anything else is refused, as MXNet refuses it);
``_contrib_group_adagrad_update`` for any weight and history.  Every other
call with sparse arrays runs the dense kernel on dense copies and casts the
results -- the new weight *and* the states it updated -- back into the given
sparse arrays.

A row_sparse weight or state is worked on with all its rows present (rows it
lacks count as zero rows), and holds all its rows afterwards.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from dagnet.ndarray import sparse
from dagnet.operator import XP, OpReqType

from . import adagrad, adam, ftml, ftrl, group_adagrad, rmsprop, sgd, sign

__all__ = ["SparseUpdateError"]


class SparseUpdateError(sparse.SparseStorageError):
    """An optimizer update on a storage combination that has no meaning (MXNet refuses it)."""


_OPS = {op.name: op for module in (adagrad, adam, ftml, ftrl, group_adagrad, rmsprop, sgd, sign)
        for op in module.OPS}
_LAZY_OPTIONAL = ("sgd_update", "sgd_mom_update", "adam_update")
_ROW_KINDS = ("default", "row_sparse")


def _path(name: str, attrs: Any, weight: Any, grad: Any, states: list) -> str | None:
    """``'lazy'``, ``'std'`` (row-wise implementation) or None (dense copies)."""
    w_stype = weight.stype
    if grad.stype != "row_sparse" or w_stype not in _ROW_KINDS:
        return None
    s_stypes = {s.stype for s in states}
    if name in _LAZY_OPTIONAL:
        if not states or s_stypes == {w_stype}:
            return "lazy" if attrs.lazy_update else "std"
        if w_stype == "row_sparse" and s_stypes == {"default"}:
            return "std"
        return None
    if name == "ftrl_update":
        return "lazy" if w_stype == "row_sparse" and s_stypes == {"row_sparse"} else None
    if name == "_contrib_group_adagrad_update":
        return "lazy"
    if name == "_sparse_adagrad_update":
        if s_stypes != {w_stype} or attrs.wd != 0.0:
            raise SparseUpdateError(
                f"_sparse_adagrad_update: needs a row_sparse gradient, a history of the "
                f"weight's storage type ({w_stype}) and wd=0 (got history "
                f"{'/'.join(sorted(s_stypes))}, wd={attrs.wd}); apply weight decay with a "
                f"dense gradient instead")
        return "lazy"
    return None


def _full_rows(xp: Any, array: Any, view: Any) -> Any:
    """Inside an engine function: every row of ``array`` (its dense view, or a row_sparse
    array's values with the rows it lacks filled with zeros)."""
    if view is not None:
        return view
    values, (rows,) = sparse.components(array)
    if len(rows) == array.shape[0]:
        return values  # sorted unique indices: all rows, in order
    full = xp.zeros(array.shape, array.dtype)
    if len(rows):
        full[rows] = values
    return full


def _row_update(call: Any, weight: Any, grad: Any, states: list, target: Any,
                lazy: bool) -> None:
    """Push the row-wise update of ``target`` (``weight`` or a copy of it) and ``states``."""
    compute = _OPS[call.name].compute[XP]
    attrs = call.attrs
    arrays = [target, *states]
    views = [None if sparse.is_sparse(a) else a._xp() for a in arrays]
    n_rows = weight.shape[0]
    shape, dtype = weight.shape, weight.dtype
    ctx = SimpleNamespace(xp=None)

    def update(xp: Any) -> None:
        ctx.xp = xp
        g_values, (g_rows,) = sparse.components(grad)
        fulls = [_full_rows(xp, a, v) for a, v in zip(arrays, views)]
        if lazy:
            if len(g_rows):
                parts = [f[g_rows] for f in fulls]  # copies of the gradient's rows
                new = xp.empty_like(parts[0])
                compute(attrs, ctx, [parts[0], g_values.astype(dtype, copy=False), *parts[1:]],
                        [OpReqType.WRITE], [new])
                fulls[0][g_rows] = new
                for full, part in zip(fulls[1:], parts[1:]):
                    full[g_rows] = part
        else:
            dense_grad = xp.zeros(shape, dtype)
            if len(g_rows):
                dense_grad[g_rows] = g_values
            new = xp.empty_like(fulls[0])
            compute(attrs, ctx, [fulls[0], dense_grad, *fulls[1:]], [OpReqType.WRITE], [new])
            fulls[0][...] = new
        every_row = xp.arange(n_rows, dtype=np.int64)
        for array, view, full in zip(arrays, views, fulls):
            if view is None:
                sparse.set_components(array, full, [every_row])

    sparse.push_sparse(update, [grad], arrays, call.name)


def _dense_copies(call: Any, inputs: list, out: Any) -> Any:
    """MXNet's storage fallback, states included: the dense kernel on dense copies, the
    new weight and every updated state cast back into the given (sparse) arrays."""
    dense = [sparse.to_dense_array(a) for a in inputs]
    target = out[0] if isinstance(out, (list, tuple)) else out
    dense_out = target if target is not None and not sparse.is_sparse(target) else None
    result = call.run(dense, dense_out)
    for index in _OPS[call.name].mutated_inputs(call.attrs):
        if dense[index] is not inputs[index]:
            dense[index].copyto(inputs[index])
    if target is None:
        return result
    if dense_out is None:
        result.copyto(target)
    return out


def _sparse_update(call: Any, inputs: list, out: Any) -> Any:
    weight, grad, *states = inputs
    path = _path(call.name, call.attrs, weight, grad, states)
    if path is None:
        return _dense_copies(call, inputs, out)
    target = out[0] if isinstance(out, (list, tuple)) else out
    if target is None:
        target = weight.copy()
    elif target is not weight:
        if target.stype != weight.stype or target.shape != weight.shape:
            raise SparseUpdateError(f"{call.name}: out must have the weight's storage type and "
                                    f"shape ({weight.stype}, {weight.shape}); got "
                                    f"{target.stype}, {target.shape} (pass out=weight)")
        weight.copyto(target)
    _row_update(call, weight, grad, states, target, path == "lazy")
    return target if out is None else out


def _register() -> None:
    for name, op in _OPS.items():
        if op.mutate_inputs or name in _LAZY_OPTIONAL:
            sparse.register_storage_impl(name, _sparse_update)


_register()
