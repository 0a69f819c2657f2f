"""``quadratic`` on a csr matrix: with ``c == 0`` the function maps zero to zero, so only
the stored values change and the result stays csr (MXNet's ``FComputeEx`` for this
operator).  With ``c != 0`` every element changes: dagnet's storage fallback computes
densely and the result is dense, as in MXNet."""

from __future__ import annotations

from typing import Any

from dagnet.ndarray import sparse

__all__ = ["quadratic_csr", "register"]


def quadratic_csr(call: Any, inputs: list, out: Any) -> Any:
    """The sparse implementation dagnet asks first whenever an input is sparse."""
    (data,) = inputs
    attrs = call.attrs
    if data.stype != "csr" or attrs.c != 0.0:
        return NotImplemented
    result = sparse.new_sparse("csr", data.shape, data.dtype, data._chunk.dev)

    def compute(xp: Any) -> None:
        values, aux = sparse.components(data)
        sparse.set_components(result, values * (attrs.a * values + attrs.b),
                              [a.copy() for a in aux])

    sparse.push_sparse(compute, [data], [result], "quadratic")
    if out is None:
        return result
    result.copyto(out[0] if isinstance(out, (list, tuple)) else out)
    return out


def register() -> None:
    sparse.register_storage_impl("quadratic", quadratic_csr)
