"""Storage types by name and id, and the registry of operators' sparse implementations.

MXNet numbers its storage types ``default`` 0, ``row_sparse`` 1, ``csr`` 2
(``undefined`` -1); symbols store the number as the ``__storage_type__``
attribute.  An operator that can compute on sparse storage without making
its inputs dense (MXNet's ``FComputeEx``) registers a *storage
implementation* here, by operator name, usually from its plugin's ops hook
(:func:`register_storage_impl`).  Every other operator that meets a sparse
input runs on dense copies of its inputs (MXNet's storage fallback).

An implementation may also declare the storage types of its results
(``infer_storage``, MXNet's ``FInferStorageType``), so that a bound graph
knows them before it runs: an executor gives the node sparse outputs and
runs the implementation for it.  An operator whose gradient is sparse for
some input (``Embedding`` with ``sparse_grad``) declares that with
:func:`register_grad_storage`, so that ``simple_bind`` allocates that
gradient sparse.

This module imports nothing of dagnet's, so the imperative path can look
implementations up without import cycles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["STORAGE_TYPE_STR_TO_ID", "STORAGE_TYPE_ID_TO_STR", "STYPES", "StorageImpl",
           "register_storage_impl", "storage_impl", "infer_storage", "check_stype",
           "register_storage_check", "check_storage", "register_grad_storage",
           "grad_storage"]

STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
STORAGE_TYPE_ID_TO_STR = {v: k for k, v in STORAGE_TYPE_STR_TO_ID.items()}
STYPES = ("default", "row_sparse", "csr")


def check_stype(stype: Any, what: str) -> str:
    """``stype`` if it names a storage type, else a ValueError naming the allowed ones."""
    if stype not in STYPES:
        raise ValueError(f"{what}: unknown storage type {stype!r}; the storage types are "
                         f"'default' (dense), 'row_sparse' and 'csr'")
    return stype


# (attrs, input storage types) -> output storage types, or None
InferStorage = Callable[[Any, list[str]], "list[str] | None"]

class StorageImpl:
    """How one operator computes with sparse storage.

    ``compute(call, inputs, out)`` gets the prepared call (``call.attrs`` holds
    the parsed parameters), the input arrays (dense or sparse) and ``out`` as
    the user gave it; it returns the result as the dense call would, or
    ``NotImplemented`` to let the storage fallback run the dense kernel on
    dense copies.  ``dense_inputs``: the operator may produce sparse results
    from dense inputs too (``cast_storage``, ``dot`` with ``forward_stype``),
    so every call goes through ``compute`` first.  ``infer_storage(attrs, input_stypes)``
    gives the storage type of every output when ``compute`` handles those input storage
    types (its results have them), or None when it leaves them to the fallback (dense
    results); without it, a bound graph computes the operator densely.
    """

    __slots__ = ("op_name", "compute", "dense_inputs", "infer_storage")

    def __init__(self, op_name: str, compute: Callable[..., Any], dense_inputs: bool = False,
                 infer_storage: InferStorage | None = None):
        self.op_name = op_name
        self.compute = compute
        self.dense_inputs = dense_inputs
        self.infer_storage = infer_storage

    def __repr__(self) -> str:
        return f"<StorageImpl {self.op_name}>"


_impls: dict[str, StorageImpl] = {}


def register_storage_impl(op_name: str, compute: Callable[..., Any],
                          dense_inputs: bool = False,
                          infer_storage: InferStorage | None = None) -> None:
    """Register ``compute`` as operator ``op_name``'s sparse implementation (a later
    registration of the same name replaces the earlier, so a rebuilt registry can
    register again).  See :class:`StorageImpl` for the signatures."""
    if not isinstance(op_name, str) or not callable(compute) or (
            infer_storage is not None and not callable(infer_storage)):
        raise TypeError("register_storage_impl(op_name, compute, infer_storage=None): op_name "
                        "must be a str, compute and infer_storage callables")
    _impls[op_name] = StorageImpl(op_name, compute, dense_inputs, infer_storage)


def storage_impl(op_name: str) -> StorageImpl | None:
    """The sparse implementation registered for ``op_name``, or None."""
    return _impls.get(op_name)


def infer_storage(op_name: str, attrs: Any, input_stypes: list[str]) -> list[str] | None:
    """The output storage types of ``op_name`` with these parameters and input storage
    types when its sparse implementation computes it, or None when it computes densely
    (no implementation, no declared storage types, or the fallback for these inputs).
    Dense inputs ask only an implementation that makes sparse results from dense inputs
    (``dense_inputs``)."""
    impl = _impls.get(op_name)
    if impl is None or impl.infer_storage is None:
        return None
    if not impl.dense_inputs and all(s == "default" for s in input_stypes):
        return None
    return impl.infer_storage(attrs, list(input_stypes))


_grad_rules: dict[str, Callable[[Any, list[str]], list]] = {}


def register_grad_storage(op_name: str, rule: Callable[[Any, list[str]], list]) -> None:
    """Register ``rule(attrs, input_stypes)`` for operator ``op_name``: the storage type of
    the gradient of each input (None or ``'default'`` for dense), MXNet's backward storage
    inference.  A bound graph whose argument feeds only such inputs gets its gradient
    array of that storage type from ``simple_bind``."""
    if not isinstance(op_name, str) or not callable(rule):
        raise TypeError("register_grad_storage(op_name, rule): op_name must be a str and rule "
                        "a callable")
    _grad_rules[op_name] = rule


def grad_storage(op_name: str, attrs: Any, input_stypes: list[str]) -> list[str]:
    """The storage type of the gradient of each input of ``op_name`` (``'default'`` unless
    a rule registered with :func:`register_grad_storage` says otherwise)."""
    rule = _grad_rules.get(op_name)
    stypes = rule(attrs, list(input_stypes)) if rule is not None else None
    if stypes is None:
        return ["default"] * len(input_stypes)
    return [s or "default" for s in stypes]


_checks: dict[str, Callable[[Any, list[str]], None]] = {}


def register_storage_check(op_name: str, check: Callable[[Any, list[str]], None]) -> None:
    """Register ``check(attrs, input_stypes)`` for operator ``op_name``: it raises (naming
    what is wrong and what to do) when the operator refuses those storage types with those
    parameters (MXNet's storage-type inference failing), and returns None otherwise.  It
    runs before an imperative call with a sparse input and when an executor binds sparse
    arrays."""
    if not isinstance(op_name, str) or not callable(check):
        raise TypeError("register_storage_check(op_name, check): op_name must be a str and "
                        "check a callable")
    _checks[op_name] = check


def check_storage(op_name: str, attrs: Any, input_stypes: list[str]) -> None:
    """Run ``op_name``'s storage check, if it has one and any input is sparse."""
    check = _checks.get(op_name)
    if check is not None and any(s != "default" for s in input_stypes):
        check(attrs, input_stypes)
