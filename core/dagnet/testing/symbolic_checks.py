"""The symbolic checks behind ``dagnet.test_utils``: a symbol bound through an
executor, its forward pass and backward pass compared with expected values,
and its gradients with central differences of its forward pass."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..context import Context

__all__ = ["symbolic_forward", "symbolic_backward", "check_symbol_numeric_gradient"]


def _host(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def _by_name(values: Any, names: list[str], what: str, complete: bool = True) -> dict[str, Any]:
    """A list in ``names`` order or a dict by name, as a dict (checked)."""
    if isinstance(values, Mapping):
        extra = [k for k in values if k not in names]
        if extra:
            raise ValueError(f"{what} names {', '.join(map(repr, extra))}, which the symbol does "
                             f"not have; it has {', '.join(names) or 'none'}")
        missing = [n for n in names if n not in values]
        if complete and missing:
            raise ValueError(f"{what} lacks {', '.join(map(repr, missing))}")
        return dict(values)
    values = list(values)
    if len(values) != len(names):
        raise ValueError(f"{what} has {len(values)} arrays for {len(names)} names "
                         f"({', '.join(names)}); give one per name in order, or a dict")
    return dict(zip(names, values))


def _ndarrays(values: dict[str, Any], ctx: Context, dtype: Any) -> dict[str, Any]:
    from .. import ndarray

    return {k: ndarray.array(_host(v), ctx=ctx, dtype=dtype) for k, v in values.items()}


def _bind_inputs(sym: Any, location: Any, aux_states: Any, ctx: Context | None,
                 dtype: Any) -> tuple[Context, dict, dict]:
    from ..test_utils import default_context

    ctx = ctx or default_context()
    args = _ndarrays(_by_name(location, sym.list_arguments(), "location"), ctx, dtype)
    aux_names = sym.list_auxiliary_states()
    aux = _ndarrays(_by_name(aux_states if aux_states is not None else {}, aux_names,
                             "aux_states"), ctx, dtype)
    return ctx, args, aux


def symbolic_forward(sym: Any, location: Any, expected: Any, rtol: float, atol: float | None,
                     aux_states: Any, ctx: Context | None, equal_nan: bool,
                     dtype: Any) -> list[np.ndarray]:
    """See :func:`dagnet.test_utils.check_symbolic_forward`."""
    from ..test_utils import assert_almost_equal

    ctx, args, aux = _bind_inputs(sym, location, aux_states, ctx, dtype)
    executor = sym.bind(ctx, args=args, aux_states=aux)
    outputs = [o.asnumpy() for o in executor.forward(is_train=False)]
    names = sym.list_outputs()
    wanted = _by_name(expected, names, "expected")
    for name, got in zip(names, outputs):
        assert_almost_equal(got, _host(wanted[name]), rtol=rtol, atol=atol,
                            names=(f"output {name!r}", "expected"), equal_nan=equal_nan)
    return outputs


def symbolic_backward(sym: Any, location: Any, out_grads: Any, expected: Any, rtol: float,
                      atol: float | None, aux_states: Any, grad_req: Any, ctx: Context | None,
                      equal_nan: bool, dtype: Any) -> dict[str, np.ndarray]:
    """See :func:`dagnet.test_utils.check_symbolic_backward`."""
    from .. import ndarray
    from ..test_utils import assert_almost_equal

    ctx, args, aux = _bind_inputs(sym, location, aux_states, ctx, dtype)
    wanted = {k: _host(v) for k, v in
              _by_name(expected, sym.list_arguments(), "expected", complete=False).items()}
    initial = {k: np.random.normal(size=v.shape) for k, v in wanted.items()}
    grads = _ndarrays(initial, ctx, dtype)
    initial = {k: g.asnumpy() for k, g in grads.items()}  # the start, rounded to dtype
    reqs = {k: grad_req for k in wanted} if isinstance(grad_req, str) else dict(grad_req)
    executor = sym.bind(ctx, args=args, args_grad=grads, grad_req=reqs, aux_states=aux)
    executor.forward(is_train=True)
    if out_grads is not None:
        heads = _by_name(out_grads if not hasattr(out_grads, "shape") else [out_grads],
                         sym.list_outputs(), "out_grads", complete=False)
        out_grads = {k: None if v is None else ndarray.array(_host(v), ctx=ctx, dtype=dtype)
                     for k, v in heads.items()}
    executor.backward(out_grads)
    result = {}
    for name, want in wanted.items():
        got = executor.grad_dict[name].asnumpy()
        req = reqs.get(name, "null")
        if req == "add":
            want = initial[name] + want
        elif req == "null":
            want = initial[name]
        assert_almost_equal(got, want, rtol=rtol, atol=atol,
                            names=(f"gradient of {name!r} (grad_req={req})", "expected"),
                            equal_nan=equal_nan)
        result[name] = got
    return result


def check_symbol_numeric_gradient(sym: Any, location: Any, aux_states: Any = None,
                                  numeric_eps: float | None = None, rtol: float = 1e-2,
                                  atol: float | None = None,
                                  grad_nodes: Sequence[str] | Mapping[str, str] | None = None,
                                  use_forward_train: bool = True, ctx: Context | None = None,
                                  grad_stype_dict: Any = None, dtype: Any = np.float32) -> None:
    """See :func:`dagnet.test_utils.check_numeric_gradient` (the symbol form).

    The loss is the sum of every output times a fixed random head gradient;
    the executor's gradients of it are compared with central differences,
    one element at a time."""
    from .. import ndarray
    from ..test_utils import _EPS, assert_almost_equal

    if grad_stype_dict and any(v != "default" for v in dict(grad_stype_dict).values()):
        raise ValueError("check_numeric_gradient: dagnet arrays are dense; grad_stype_dict may "
                         "only name 'default'")
    dtype = np.dtype(dtype)
    eps = numeric_eps if numeric_eps is not None else _EPS.get(dtype, 1e-6)
    ctx, args, aux = _bind_inputs(sym, location, aux_states, ctx, dtype)
    names = sym.list_arguments()
    if grad_nodes is None:
        reqs = {n: "write" for n in names}
    elif isinstance(grad_nodes, Mapping):
        reqs = dict(grad_nodes)
    else:
        reqs = {n: "write" for n in grad_nodes}
    grads = {n: ndarray.zeros(args[n].shape, ctx=ctx, dtype=dtype) for n in reqs}
    executor = sym.bind(ctx, args=args, args_grad=grads, grad_req=reqs, aux_states=aux)
    outputs = executor.forward(is_train=use_forward_train)
    heads = [np.random.normal(size=o.shape).astype(dtype) for o in outputs]
    executor.backward([ndarray.array(h, ctx=ctx, dtype=dtype) for h in heads])
    analytic = {n: executor.grad_dict[n].asnumpy().astype(np.float64) for n in reqs}
    base = {n: args[n].asnumpy() for n in reqs}

    def loss() -> float:
        outs = executor.forward(is_train=use_forward_train)
        return sum(float(np.sum(o.asnumpy().astype(np.float64) * h)) for o, h in zip(outs, heads))

    for name, req in reqs.items():
        if req == "null":
            continue
        values = base[name].copy()
        numeric = np.zeros(values.shape, np.float64)
        flat, out = values.reshape(-1), numeric.reshape(-1)
        for j in range(flat.size):
            original = flat[j]
            sums = []
            for shift in (eps, -eps):
                flat[j] = original + shift
                executor.arg_dict[name][:] = values
                sums.append(loss())
            flat[j] = original
            out[j] = (sums[0] - sums[1]) / (2 * eps)
        executor.arg_dict[name][:] = base[name]
        assert_almost_equal(analytic[name], numeric, rtol=rtol,
                            atol=atol if atol is not None else 1e-4,
                            names=(f"analytic gradient of {name!r}",
                                   f"numeric gradient of {name!r} (eps={eps:g}, "
                                   f"dtype {dtype.name})"))
