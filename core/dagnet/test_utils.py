"""MXNet's ``mx.test_utils`` for dagnet: comparisons, random inputs and gradient checks.

``check_symbolic_forward``, ``check_symbolic_backward`` and
``check_numeric_gradient`` take a symbol and run it through an executor, with
MXNet's signatures; ``check_op_numeric_gradient`` and ``check_consistency``
take an operator (its name or :class:`~dagnet.operator.Op`) with input arrays
and parameters, and run its kernels directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .context import Context

__all__ = [
    "assert_almost_equal",
    "almost_equal",
    "default_context",
    "rand_shape_nd",
    "rand_shape_2d",
    "rand_shape_3d",
    "rand_ndarray",
    "check_numeric_gradient",
    "check_op_numeric_gradient",
    "check_symbolic_forward",
    "check_symbolic_backward",
    "check_consistency",
    "default_rtols",
    "default_atols",
    "default_numeric_eps",
]

_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
_ATOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}
_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-6}
# Powers of two, so that x +- eps/2 loses no bits of the step (MXNet's choice).
_NUMERIC_EPS = {np.dtype(np.float16): 1.0 / 2**6, np.dtype(np.float32): 1.0 / 2**9,
                np.dtype(np.float64): 1.0 / 2**14}


def default_rtols() -> dict[np.dtype, float]:
    """Relative tolerance by dtype (as MXNet's ``default_rtols``)."""
    return dict(_RTOL)


def default_atols() -> dict[np.dtype, float]:
    """Absolute tolerance by dtype (as MXNet's ``default_atols``)."""
    return dict(_ATOL)


def default_numeric_eps() -> dict[np.dtype, float]:
    """The finite-difference step of :func:`check_numeric_gradient` by dtype (as MXNet's
    ``default_numeric_eps``)."""
    return dict(_NUMERIC_EPS)


def default_context() -> Context:
    """The context tests run on: the innermost ``with ctx:`` or ``cpu(0)``."""
    from .context import current_context

    return current_context()


def _to_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return np.asarray(value)


def _tolerance(a: np.ndarray, b: np.ndarray, table: dict, given: float | None) -> float:
    if given is not None:
        return given
    kinds = [np.dtype(x.dtype) for x in (a, b) if np.issubdtype(x.dtype, np.floating)]
    return max((table.get(k, table[np.dtype(np.float64)]) for k in kinds), default=0.0)


def almost_equal(
    a: Any, b: Any, rtol: float | None = None, atol: float | None = None, equal_nan: bool = False
) -> bool:
    """Whether ``a`` and ``b`` agree within the tolerances (dtype defaults when None)."""
    a, b = _to_numpy(a), _to_numpy(b)
    return bool(
        np.allclose(
            a,
            b,
            rtol=_tolerance(a, b, _RTOL, rtol),
            atol=_tolerance(a, b, _ATOL, atol),
            equal_nan=equal_nan,
        )
    )


def assert_almost_equal(
    a: Any,
    b: Any,
    rtol: float | None = None,
    atol: float | None = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
) -> None:
    """Raise AssertionError unless ``a`` and ``b`` agree elementwise within the tolerances.

    Accepts NDArrays, numpy arrays and scalars.  The message names both sides,
    the shapes, the worst element's index and both values there.
    """
    a, b = _to_numpy(a), _to_numpy(b)
    if a.shape != b.shape:
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise AssertionError(
                f"{names[0]} has shape {a.shape} but {names[1]} has {b.shape}"
            ) from None
    rtol, atol = _tolerance(a, b, _RTOL, rtol), _tolerance(a, b, _ATOL, atol)
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
    excess = np.abs(a64 - b64) - (atol + rtol * np.abs(b64))
    excess = np.where(np.isnan(excess), np.inf, excess)
    worst = np.unravel_index(int(np.argmax(excess)), excess.shape) if excess.ndim else ()
    bad = int(np.count_nonzero(excess > 0))
    raise AssertionError(
        f"{names[0]} and {names[1]} differ beyond rtol={rtol:g}, atol={atol:g} in {bad} of "
        f"{excess.size} elements; worst at index {tuple(int(i) for i in worst)}: "
        f"{names[0]}={a64[worst]!r}, {names[1]}={b64[worst]!r}\n"
        f"{names[0]}:\n{a}\n{names[1]}:\n{b}"
    )


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random shape of ``num_dim`` dimensions, each in [1, dim] (or [0, dim])."""
    low = 0 if allow_zero_size else 1
    return tuple(int(v) for v in np.random.randint(low, dim + 1, size=num_dim))


def rand_shape_2d(dim0: int = 10, dim1: int = 10) -> tuple[int, int]:
    """A random 2-D shape."""
    return (int(np.random.randint(1, dim0 + 1)), int(np.random.randint(1, dim1 + 1)))


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10) -> tuple[int, int, int]:
    """A random 3-D shape."""
    return rand_shape_2d(dim0, dim1) + (int(np.random.randint(1, dim2 + 1)),)


def rand_ndarray(
    shape: Sequence[int],
    stype: str = "default",
    density: float | None = None,
    dtype: Any = None,
    ctx: Context | None = None,
) -> Any:
    """An NDArray of ``shape`` with values uniform in [0, 1) (only dense storage)."""
    if stype != "default":
        raise ValueError(
            f"rand_ndarray: storage type {stype!r} is not supported; dagnet "
            f"arrays are dense (stype='default')"
        )
    from . import ndarray

    values = np.random.uniform(size=shape).astype(dtype or np.float32)
    return ndarray.array(values, ctx=ctx or default_context(), dtype=values.dtype)


def check_symbolic_forward(sym: Any, location: Any, expected: Any, rtol: float = 1e-4,
                           atol: float | None = None, aux_states: Any = None,
                           ctx: Context | None = None, equal_nan: bool = False,
                           dtype: Any = np.float32) -> list[np.ndarray]:
    """Bind ``sym`` to ``location`` (arrays in ``list_arguments`` order, or a dict by
    name, converted to ``dtype``), run the forward pass in inference mode and
    compare the outputs with ``expected`` (a list, or a dict by output name).
    Returns the outputs as numpy arrays."""
    from .testing.symbolic_checks import symbolic_forward

    return symbolic_forward(sym, location, expected, rtol, atol, aux_states, ctx, equal_nan,
                            dtype)


def check_symbolic_backward(sym: Any, location: Any, out_grads: Any, expected: Any,
                            rtol: float = 1e-5, atol: float | None = None,
                            aux_states: Any = None, grad_req: Any = "write",
                            ctx: Context | None = None, grad_stypes: Any = None,
                            equal_nan: bool = False,
                            dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """Bind ``sym`` to ``location``, run forward (training mode) and backward with the
    head gradients ``out_grads``, and compare the gradients with ``expected`` (a
    list in ``list_arguments`` order or a dict by name; only those arguments get
    gradients).  Gradient arrays start random: with ``grad_req='add'`` the
    expected value is that start plus ``expected``, with ``'null'`` the start.
    Returns the gradients by name as numpy arrays."""
    from .testing.symbolic_checks import symbolic_backward

    if grad_stypes not in (None, {}) and any(v != "default" for v in dict(grad_stypes).values()):
        raise ValueError("check_symbolic_backward: dagnet arrays are dense; grad_stypes may "
                         "only name 'default'")
    return symbolic_backward(sym, location, out_grads, expected, rtol, atol, aux_states,
                             grad_req, ctx, equal_nan, dtype)


def _resolve_op(op: Any) -> Any:
    from .operator import Op, get_op

    return op if isinstance(op, Op) else get_op(op)


def check_numeric_gradient(sym: Any, location: Any, aux_states: Any = None,
                           numeric_eps: Any = None, rtol: Any = None, atol: Any = None,
                           grad_nodes: Any = None, use_forward_train: bool = True,
                           ctx: Context | None = None, grad_stype_dict: Any = None,
                           dtype: Any = np.float32) -> None:
    """Check a symbol's backward pass against central differences of its forward pass.

    MXNet's signature, defaults and verdicts.  ``location`` gives every argument (a
    list in ``sym.list_arguments()`` order, or a dict by name) and ``aux_states``
    every auxiliary state; all are converted to ``dtype`` (float16, float32 or
    float64).  Each output is multiplied by a random projection (uniform in
    [0.1, 1.1), from numpy's global generator) and summed; the symbol's gradient
    of that loss, from one forward pass in training mode and one backward pass,
    is compared with ``(loss(x + eps/2) - loss(x - eps/2)) / eps`` for every
    element ``x`` of every argument in ``grad_nodes`` (default: all; a list of
    names, checked with ``grad_req='write'``, or a dict of name to ``grad_req``).
    Gradient arrays start random: with ``'add'`` the start is subtracted before
    the comparison, with ``'null'`` the array must come back untouched.

    ``numeric_eps``, ``rtol`` and ``atol`` are numbers, or dicts by dtype; None
    takes ``default_numeric_eps()``, ``default_rtols()`` and ``default_atols()``
    for ``dtype``.  ``use_forward_train`` picks the mode of the numeric forward
    passes.  ``grad_stype_dict`` may only name ``'default'`` storage.

    Raises AssertionError naming the argument and the worst element when a
    gradient is wrong, and (as MXNet) for a dtype other than the three floats or
    a float16/float32 step below 1e-5; ValueError for a ``grad_nodes`` that is
    not a list or dict, names an unknown argument or gives an invalid grad_req.
    To check one operator's gradient rule without a symbol, use
    :func:`check_op_numeric_gradient`.
    """
    from .symbol import Symbol
    from .testing.symbolic_checks import check_symbol_numeric_gradient

    if not isinstance(sym, Symbol):
        raise TypeError(
            f"check_numeric_gradient takes a Symbol (as MXNet's), got {type(sym).__name__}; "
            f"to check one operator's gradient rule directly, call "
            f"dagnet.test_utils.check_op_numeric_gradient(op, location, params)")
    check_symbol_numeric_gradient(sym, location, aux_states, numeric_eps, rtol, atol, grad_nodes,
                                  use_forward_train, ctx, grad_stype_dict, dtype)


def check_op_numeric_gradient(
    op: Any,
    location: Sequence[Any] | Mapping[str, Any],
    params: Mapping[str, Any] | None = None,
    numeric_eps: float | None = None,
    rtol: float = 1e-2,
    atol: float | None = None,
    grad_nodes: Sequence[int] | None = None,
    ctx: Context | None = None,
    dtype: Any = np.float64,
    seed: int | None = None,
) -> None:
    """Check an operator's gradient rule against central differences, element by element.

    ``location`` holds the input arrays (a list, or a dict by input name);
    inputs are promoted to ``dtype`` (float64 by default) and the step is
    chosen by dtype unless ``numeric_eps`` is given.  The loss is the sum of
    each visible output times a fixed random head gradient drawn from
    ``seed``.  On failure the message names the input, the worst element,
    both values and the seed to reproduce it.
    """
    from . import engine as engine_module
    from .backend import backend_for
    from .operator import Gradient
    from .testing.op_suite import run_kernel

    op = _resolve_op(op)
    if not isinstance(op.gradient, Gradient):
        raise ValueError(f"operator {op.name!r} has no gradient rule to check ({op.gradient!r})")
    attrs = op.parse_params(dict(params or {}))
    names = op.list_inputs(attrs)
    if isinstance(location, Mapping):
        unknown = [k for k in location if k not in names]
        if unknown:
            raise ValueError(
                f"check_op_numeric_gradient: {op.name!r} has no input {unknown[0]!r}; "
                f"its inputs are {', '.join(names)}"
            )
        location = [location[n] for n in names]
    dtype = np.dtype(dtype)
    inputs = [_to_numpy(x) for x in location]
    inputs = [x.astype(dtype) if np.issubdtype(x.dtype, np.floating) else x for x in inputs]
    eps = numeric_eps if numeric_eps is not None else _EPS.get(dtype, 1e-6)
    seed = int(np.random.randint(0, 2**31 - 1)) if seed is None else seed
    rng = np.random.default_rng(seed)
    ctx = ctx or default_context()
    backend, eng = backend_for(ctx), engine_module.current()

    def forward(arrays: list[np.ndarray]) -> list[np.ndarray]:
        return run_kernel(op, attrs, arrays, backend=backend, engine=eng, ctx=ctx)[0]

    outputs = forward(inputs)
    visible = op.n_visible_outputs(attrs)
    head = [rng.standard_normal(o.shape).astype(o.dtype) for o in outputs[:visible]]
    parts = {"out_grad": head, "in_data": inputs, "out_data": outputs}
    aux = set(op.mutated_inputs(attrs))
    targets = [i for i in range(len(inputs)) if i not in aux]
    backward = _resolve_op(op.gradient.backward)
    grads = run_kernel(
        backward,
        attrs,
        [a for u in op.gradient.uses for a in parts[u]],
        backend=backend,
        engine=eng,
        ctx=ctx,
        out_shapes=[inputs[i].shape for i in targets],
        out_dtypes=[inputs[i].dtype for i in targets],
    )[0]
    nodes = (
        grad_nodes
        if grad_nodes is not None
        else [i for i in targets if np.issubdtype(inputs[i].dtype, np.floating)]
    )
    for i in nodes:
        numeric = np.zeros(inputs[i].shape, np.float64)
        flat = numeric.reshape(-1)
        for j in range(inputs[i].size):
            values = []
            for shift in (eps, -eps):
                moved = [a.copy() for a in inputs]
                moved[i].reshape(-1)[j] += shift
                values.append(
                    sum(
                        float(np.sum(o.astype(np.float64) * h))
                        for o, h in zip(forward(moved)[:visible], head)
                    )
                )
            flat[j] = (values[0] - values[1]) / (2 * eps)
        analytic = grads[targets.index(i)].astype(np.float64)
        try:
            assert_almost_equal(
                analytic,
                numeric,
                rtol=rtol,
                atol=atol if atol is not None else 1e-4,
                names=(f"analytic gradient of {names[i]!r}", f"numeric gradient of {names[i]!r}"),
            )
        except AssertionError as error:
            raise AssertionError(
                f"check_op_numeric_gradient({op.name!r}) failed for input {names[i]!r} "
                f"(dtype {dtype.name}, eps={eps:g}, seed={seed}; pass seed={seed} to reproduce):\n"
                f"{error}\ninput {names[i]!r}:\n{inputs[i]}"
            ) from None


def check_consistency(
    op: Any,
    inputs: Sequence[Any],
    params: Mapping[str, Any] | None = None,
    ctx_list: Sequence[Context] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    dtype: Any = np.float32,
) -> list[list[np.ndarray]]:
    """Run an operator on every context in ``ctx_list`` (default: one per available
    backend) and assert the outputs agree with the first; returns each context's outputs."""
    from . import engine as engine_module
    from .backend import available_backends, backend_for
    from .testing.op_suite import run_kernel

    op = _resolve_op(op)
    attrs = op.parse_params(dict(params or {}))
    if ctx_list is None:
        ctx_list = [Context(b.device_type, 0) for b in available_backends()]
    arrays = [_to_numpy(x) for x in inputs]
    arrays = [a.astype(dtype) if np.issubdtype(a.dtype, np.floating) else a for a in arrays]
    results = []
    for ctx in ctx_list:
        outs = run_kernel(
            op, attrs, arrays, backend=backend_for(ctx), engine=engine_module.current(), ctx=ctx
        )[0]
        results.append(outs)
    for ctx, outs in zip(ctx_list[1:], results[1:]):
        for index, (got, want) in enumerate(zip(outs, results[0])):
            assert_almost_equal(
                got,
                want,
                rtol=rtol,
                atol=atol,
                names=(f"{op.name} output {index} on {ctx}", f"on {ctx_list[0]}"),
            )
    return results
