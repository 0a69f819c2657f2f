"""The operator conformance suite: for an operator, on a backend and an engine,
hypothesis draws cases from the operator's declared :class:`~dagnet.operator.Domain`
and checks

- forward against the numpy reference (where one is declared);
- every declared write mode: ``add`` really adds, ``null`` writes nothing,
  ``inplace`` is safe for every declared in-place pair;
- the gradient: the backward operator against central differences of the
  forward, in float64, in a random direction (as Chainer's gradient check);
- autograd: the same call recorded with ``dagnet.autograd`` and differentiated
  with the same head gradient gives the backward operator's result.

Kernels run through the engine on the backend's arrays, exactly as the
imperative and symbolic front ends run them.  Plugin authors check their own
operator in one line::

    from dagnet.testing.op_suite import check_operator

    def test_quadratic():
        check_operator("quadratic")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from .. import engine as engine_module
from .. import plugins, resource, runtime
from ..context import Context
from ..operator import Gradient, NoGradient, Op, OpReqType, get_op

__all__ = [
    "check_operator",
    "check_case",
    "run_kernel",
    "missing_declarations",
    "numeric_gradient_check",
    "symbolic_executor_check",
]


def missing_declarations(op: Op) -> list[str]:
    """What the suite needs that ``op`` does not declare (empty when complete)."""
    missing = []
    if op.is_backward:
        return missing
    if op.domain is None:
        missing.append("domain (Domain(sample=..., reference=...)) for the conformance suite")
    if op.expand is not None:  # graph-only: its expansion runs (and differentiates) instead
        if op.domain is not None and op.domain.reference is None:
            missing.append("a numpy reference in its domain (a graph-only operator is "
                           "checked through the graph it expands into)")
        return missing
    if op.gradient is None:
        missing.append("gradient (Gradient(...), ZeroGradient() or NoGradient(reason))")
    elif isinstance(op.gradient, Gradient):
        if op.gradient.backward not in plugins.ops():
            missing.append(f"backward operator {op.gradient.backward!r} (not registered)")
    if not op.compute:
        missing.append("compute (a kernel per device type or one for xp)")
    return missing


def run_kernel(
    op: Op,
    attrs: Any,
    inputs: Sequence[np.ndarray],
    *,
    backend: Any,
    engine: Any,
    ctx: Context | None = None,
    req: Sequence[OpReqType] | None = None,
    initial_outputs: Sequence[np.ndarray] | None = None,
    inplace: tuple[int, int] | None = None,
    is_train: bool = False,
    out_shapes: Sequence[tuple] | None = None,
    out_dtypes: Sequence[Any] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Run ``op``'s kernel once through ``engine`` on ``backend``.

    Returns ``(outputs, inputs)`` copied to the host.

    Inputs come back too because an operator may mutate some (auxiliary
    states, optimizer states).  ``initial_outputs`` pre-fill the outputs
    (to check ``add``/``null``); ``inplace=(i, o)`` makes output ``o`` the
    very array of input ``i``.
    """
    ctx = ctx or Context(backend.device_type, 0)
    xp_inputs = [backend.from_host(np.asarray(a, order="C"), ctx.device_id) for a in inputs]
    if out_shapes is None or out_dtypes is None:
        if op.value_shapes is not None:  # the output shape depends on the input values
            shapes = op.value_shapes(attrs, [np.asarray(a) for a in inputs])
        else:
            _, shapes = op.shapes(attrs, [a.shape for a in inputs])
        _, dtypes = op.dtypes(attrs, [a.dtype for a in inputs])
        out_shapes = out_shapes or shapes
        out_dtypes = out_dtypes or dtypes
    n_out = op.n_outputs(attrs)
    if initial_outputs is not None:
        xp_outputs = [
            backend.from_host(np.asarray(a, order="C"), ctx.device_id) for a in initial_outputs
        ]
    else:
        xp_outputs = [
            backend.from_host(np.zeros(s, d), ctx.device_id) for s, d in zip(out_shapes, out_dtypes)
        ]
    if inplace is not None:
        xp_outputs[inplace[1]] = xp_inputs[inplace[0]]
    reqs = list(req) if req is not None else [OpReqType.WRITE] * n_out
    if inplace is not None:
        reqs[inplace[1]] = OpReqType.INPLACE
    var = engine.new_var(f"{op.name}-out")
    writes = [var]
    requested = runtime.request_resources(ctx, op.resource_requests(attrs), writes)
    compute = runtime.kernel_function(op.kernel_for(ctx.device_type), attrs, is_train, requested,
                                      backend.xp, xp_inputs, reqs, xp_outputs)
    engine.push_sync(compute, ctx, mutate_vars=writes, name=op.name)
    engine.wait_for_var(var)
    return ([backend.to_host(o) for o in xp_outputs], [backend.to_host(a) for a in xp_inputs])


def _as_list(value: Any) -> list[np.ndarray]:
    return (
        [np.asarray(v) for v in value] if isinstance(value, (list, tuple)) else [np.asarray(value)]
    )


def _tolerances(dtype: np.dtype, rtol: float, atol: float) -> tuple[float, float]:
    if dtype == np.float64:
        return rtol, atol
    if dtype == np.float16:
        return max(rtol, 1e-2), max(atol, 1e-2)
    return max(rtol, 1e-4), max(atol, 1e-5)


def _cast(inputs: Sequence[np.ndarray], dtype: str) -> list[np.ndarray]:
    return [a.astype(dtype) if np.issubdtype(a.dtype, np.floating) else a for a in inputs]


def _same_draws(op: Op, attrs: Any, ctx: Context, rng: np.random.Generator) -> Any:
    """What to call before each run of ``op`` in a gradient check: for an operator that
    draws random numbers, restart ``ctx``'s generator from one seed, so that every run draws
    the same numbers and a reparameterized sampler's gradient (``loc + scale * noise``) can
    be checked against central differences; for any other operator, nothing."""
    if not any(r.kind is resource.ResourceKind.RANDOM for r in op.resource_requests(attrs)):
        return lambda: None
    seed = int(rng.integers(2**31))

    def restart() -> None:
        resource.manager().seed(seed, ctx)
        engine_module.current().wait_for_all()  # the reseed runs on the current engine

    return restart


def check_case(
    op: Op,
    inputs: Sequence[np.ndarray],
    params: dict,
    *,
    backend: Any,
    engine: Any,
    dtype: str = "float64",
    rng: np.random.Generator | None = None,
) -> None:
    """Check one case of ``op``: forward, write modes, in-place pairs and gradient."""
    from ..test_utils import assert_almost_equal

    domain = op.domain
    rng = rng or np.random.default_rng(0)
    attrs = op.parse_params(params)
    cast = _cast(inputs, dtype)
    rtol, atol = _tolerances(np.dtype(dtype), domain.rtol, domain.atol)
    outputs, _ = run_kernel(op, attrs, cast, backend=backend, engine=engine)
    visible = op.n_visible_outputs(attrs)
    where = f"operator {op.name!r} with params {params} on {backend.name}/{engine.name} ({dtype})"
    if domain.reference is not None:
        expected = _as_list(domain.reference(params, *[a.copy() for a in cast]))
        for index, (got, want) in enumerate(zip(outputs[:visible], expected)):
            assert_almost_equal(
                got,
                want.astype(got.dtype) if want.dtype != got.dtype else want,
                rtol=rtol,
                atol=atol,
                names=(f"{where} output {index}", "reference"),
            )
    for req in op.supported_req:
        if req in (OpReqType.WRITE, OpReqType.INPLACE):
            continue
        initial = [
            rng.standard_normal(o.shape).astype(o.dtype)
            if np.issubdtype(o.dtype, np.floating)
            else np.ones(o.shape, o.dtype)
            for o in outputs
        ]
        got, _ = run_kernel(
            op,
            attrs,
            cast,
            backend=backend,
            engine=engine,
            req=[req] * len(outputs),
            initial_outputs=initial,
        )
        for index in range(visible):
            want = initial[index] + outputs[index] if req is OpReqType.ADD else initial[index]
            assert_almost_equal(
                got[index],
                want,
                rtol=rtol,
                atol=atol,
                names=(f"{where} output {index} with req={req.value}", "expected"),
            )
    if OpReqType.INPLACE in op.supported_req:
        for pair in op.inplace_pairs(attrs):
            i, o = pair
            if cast[i].shape != outputs[o].shape or cast[i].dtype != outputs[o].dtype:
                continue  # not applicable to this case (the planner would not pair them)
            got, _ = run_kernel(op, attrs, cast, backend=backend, engine=engine, inplace=pair)
            assert_almost_equal(
                got[o],
                outputs[o],
                rtol=rtol,
                atol=atol,
                names=(f"{where} output {o} computed in place over input {i}", "out of place"),
            )
    if dtype == "float64" and isinstance(op.gradient, Gradient):
        numeric_gradient_check(op, attrs, cast, params, backend=backend, engine=engine, rng=rng)
        symbolic_executor_check(op, attrs, cast, params, backend=backend, engine=engine, rng=rng)


def _backward_gradients(
    op: Op,
    attrs: Any,
    inputs: Sequence[np.ndarray],
    outputs: Sequence[np.ndarray],
    head: Sequence[np.ndarray],
    *,
    backend: Any,
    engine: Any,
    ctx: Context | None = None,
) -> tuple[list[np.ndarray], list[int]]:
    """What ``op``'s backward operator gives the inputs it does not mutate, from the
    forward's ``outputs`` and the head gradients ``head``; and those inputs' positions."""
    gradient = op.gradient
    read = range(len(outputs)) if gradient.out_data is None else gradient.out_data
    parts = {"out_grad": head, "in_data": list(inputs), "out_data": [outputs[k] for k in read]}
    aux = set(op.mutated_inputs(attrs))
    targets = [i for i in range(len(inputs)) if i not in aux]
    grads, _ = run_kernel(get_op(gradient.backward), attrs,
                          [a for use in gradient.uses for a in parts[use]], backend=backend,
                          engine=engine, ctx=ctx, out_shapes=[inputs[i].shape for i in targets],
                          out_dtypes=[inputs[i].dtype for i in targets])
    return grads, targets


def symbolic_executor_check(
    op: Op,
    attrs: Any,
    inputs: Sequence[np.ndarray],
    params: dict,
    *,
    backend: Any,
    engine: Any,
    rng: np.random.Generator,
) -> None:
    """Run ``mx.sym.<op>`` over variables through ``simple_bind``: forward and backward
    (with a random head gradient) must give what the kernel and the backward op give.

    Ops drawing random numbers are left out (the executor and the direct run
    draw from the same generator, one after the other), and so are empty arrays and ops
    whose output shape depends on the input values.
    """
    from .. import config
    from .. import symbol as sym
    from ..test_utils import assert_almost_equal

    requests = op.resource_requests(attrs)
    if any(r.kind is resource.ResourceKind.RANDOM for r in requests) or not inputs \
            or op.value_shapes is not None:  # a shape from values cannot bind
        return
    ctx = Context(backend.device_type, 0)
    outputs, _ = run_kernel(op, attrs, inputs, backend=backend, engine=engine, ctx=ctx)
    if any(0 in a.shape for a in [*inputs, *outputs]):
        return  # symbols read a 0 dimension as unknown (MXNet 1.x): empty arrays cannot bind
    visible = op.n_visible_outputs(attrs)
    head = [rng.standard_normal(o.shape).astype(o.dtype) for o in outputs[:visible]]
    grads, targets = _backward_gradients(op, attrs, inputs, outputs, head, backend=backend,
                                         engine=engine, ctx=ctx)
    names = [f"in{i}" for i in range(len(inputs))]
    floating = {i for i in targets if np.issubdtype(inputs[i].dtype, np.floating)}
    where = f"operator {op.name!r} with params {params} through simple_bind on {engine.name}"
    with config.set(engine=engine.name):
        symbol = getattr(sym, op.name)(*[sym.Variable(n) for n in names], **params)
        executor = symbol.simple_bind(
            ctx, grad_req={names[i]: "write" if i in floating else "null" for i in targets},
            type_dict={names[i]: inputs[i].dtype for i in targets},
            **{n: a.shape for n, a in zip(names, inputs)})
        for name, value in zip(names, inputs):
            target = executor.arg_dict.get(name)
            (target if target is not None else executor.aux_dict[name])[:] = value
        executor.forward(is_train=False)
        executor.backward(head, is_train=False)
        for index, got in enumerate(executor.outputs):
            assert_almost_equal(got.asnumpy(), outputs[index], rtol=1e-7, atol=1e-10,
                                names=(f"{where}: output {index}", "kernel"))
        for position, i in enumerate(targets):
            if i in floating:
                assert_almost_equal(executor.grad_dict[names[i]].asnumpy(), grads[position],
                                    rtol=1e-7, atol=1e-10,
                                    names=(f"{where}: gradient of input {i}", "backward op"))


def numeric_gradient_check(
    op: Op,
    attrs: Any,
    inputs: Sequence[np.ndarray],
    params: dict,
    *,
    backend: Any,
    engine: Any,
    rng: np.random.Generator,
) -> None:
    """Compare the backward operator with central differences in a random direction (float64)."""
    domain, gradient = op.domain, op.gradient
    backward = get_op(gradient.backward)
    inputs = [
        np.asarray(a, dtype=np.float64) if np.issubdtype(a.dtype, np.floating) else a
        for a in inputs
    ]
    same_draws = _same_draws(op, attrs, Context(backend.device_type, 0), rng)
    same_draws()
    outputs, _ = run_kernel(op, attrs, inputs, backend=backend, engine=engine)
    visible = op.n_visible_outputs(attrs)
    head = [rng.standard_normal(o.shape) for o in outputs[:visible]]
    grads, grad_targets = _backward_gradients(op, attrs, inputs, outputs, head,
                                              backend=backend, engine=engine)
    if all(o.size for o in outputs):  # the imperative path refuses empty outputs of full inputs
        autograd_gradient_check(op, params, inputs, head, grads, backend=backend, engine=engine,
                                before_run=same_draws)
    differentiable = domain.differentiable
    if differentiable is None:
        differentiable = tuple(
            i for i in grad_targets if np.issubdtype(inputs[i].dtype, np.floating)
        )
    for i in differentiable:
        direction = rng.standard_normal(inputs[i].shape)
        eps = 1e-6 * max(1.0, float(np.abs(inputs[i]).max(initial=0.0)))

        def loss(shift: float, i: int = i, direction: np.ndarray = direction) -> float:
            moved = list(inputs)
            moved[i] = inputs[i] + shift * direction
            same_draws()
            outs, _ = run_kernel(op, attrs, moved, backend=backend, engine=engine)
            return float(sum(np.sum(o * h) for o, h in zip(outs[:visible], head)))

        numeric = (loss(eps) - loss(-eps)) / (2 * eps)
        analytic = float(np.sum(grads[grad_targets.index(i)] * direction))
        tolerance = domain.grad_atol + domain.grad_rtol * max(abs(numeric), abs(analytic))
        if abs(numeric - analytic) > tolerance * 10:
            raise AssertionError(
                f"gradient of operator {op.name!r} w.r.t. input {i} "
                f"({op.list_inputs(attrs)[i]}) with params {params} on "
                f"{backend.name}/{engine.name}: the backward op {backward.name!r} gives a "
                f"directional derivative of {analytic!r}, central differences give {numeric!r} "
                f"(difference {abs(numeric - analytic):.3g}, tolerance {tolerance * 10:.3g}); "
                f"input {i} = {inputs[i]!r}"
            )


def autograd_gradient_check(
    op: Op,
    params: dict,
    inputs: Sequence[np.ndarray],
    head: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    *,
    backend: Any,
    engine: Any,
    before_run: Any = None,
) -> None:
    """Record ``op`` on ``inputs`` with ``dagnet.autograd``, differentiate with head
    gradients ``head`` and compare each floating, non-auxiliary input's gradient with
    ``expected`` (the backward operator's outputs, in the same order).

    Runs in prediction mode, as the suite's kernels do, so the recorded forward matches;
    ``before_run()``, when given, is called just before it (to draw the same random numbers).
    """
    from .. import autograd, config
    from ..ndarray import array, invoke
    from ..test_utils import assert_almost_equal

    ctx = Context(backend.device_type, 0)
    attrs = op.parse_params(params)
    aux = set(op.mutated_inputs(attrs))
    targets = [i for i in range(len(inputs)) if i not in aux]
    with config.set(engine=engine.name):
        arrays = [array(a, ctx=ctx, dtype=a.dtype) for a in inputs]
        watched = [i for i in targets if np.issubdtype(inputs[i].dtype, np.floating)]
        if not watched:  # nothing to differentiate (a sampler given numbers only)
            return
        for i in watched:
            arrays[i].attach_grad()
        if before_run is not None:
            before_run()
        with autograd.record(train_mode=False):
            outputs = invoke(op, arrays, params)
        heads = outputs if isinstance(outputs, list) else [outputs]
        head_grads = [array(h, ctx=ctx, dtype=o.dtype) for h, o in zip(head, heads)]
        autograd.backward(heads, head_grads, train_mode=False)
        for i in watched:
            assert_almost_equal(
                arrays[i].grad.asnumpy(),
                expected[targets.index(i)],
                rtol=1e-7,
                atol=1e-9,
                names=(
                    f"autograd gradient of operator {op.name!r} w.r.t. input {i} with params "
                    f"{params} on {backend.name}/{engine.name}",
                    f"backward operator {op.gradient.backward!r}",
                ),
            )


def check_operator(
    name: str,
    *,
    backends: Sequence[str] | None = None,
    engines: Sequence[str] | None = None,
    max_examples: int | None = None,
) -> None:
    """Run the conformance checks on operator ``name`` for every available backend
    and registered engine (or the ones named), with cases drawn by hypothesis.

    Raises AssertionError describing the first failing case (hypothesis shrinks it
    and prints the drawn values and the seed to reproduce it).
    """
    op = get_op(name)
    missing = missing_declarations(op)
    if missing:
        raise AssertionError(
            f"operator {op.name!r} lacks what the conformance suite needs: {'; '.join(missing)}"
        )
    registry = plugins.backends()
    chosen_backends = (
        [registry[b] for b in backends]
        if backends
        else [r.value for r in registry.registrations() if r.value.is_available]
    )
    chosen_engines = list(engines) if engines else engine_module.names()
    for backend in chosen_backends:
        for engine_name in chosen_engines:
            eng = engine_module.create(engine_name)
            try:
                _run_examples(op, backend, eng, max_examples)
            finally:
                eng.shutdown()


def graph_only_check(op: Op, inputs: Sequence[np.ndarray], params: dict, *, backend: Any,
                     engine: Any, dtype: str) -> None:
    """A graph-only operator (one with ``expand``) bound in a symbol on ``backend`` through
    ``engine``: its outputs against the domain's numpy reference and, in float64, the
    gradients of the expanded graph against central differences of the same symbol."""
    from .. import config
    from .. import ndarray as nd
    from .. import symbol as sym
    from ..test_utils import assert_almost_equal
    from .symbolic_checks import check_symbol_numeric_gradient

    ctx = Context(backend.device_type, 0)
    cast = _cast(inputs, dtype)
    names = [f"in{i}" for i in range(len(cast))]
    expected = _as_list(op.domain.reference(params, *[np.asarray(a) for a in cast]))
    rtol, atol = _tolerances(np.dtype(dtype), op.domain.rtol, op.domain.atol)
    where = f"graph-only operator {op.name!r} with params {params} on {engine.name}"
    with config.set(engine=engine.name):
        symbol = getattr(sym, op.name)(*[sym.Variable(n) for n in names], **params)
        executor = symbol.bind(ctx, {n: nd.array(a, ctx=ctx, dtype=a.dtype)
                                     for n, a in zip(names, cast)})
        for index, got in enumerate(executor.forward()):
            assert_almost_equal(got.asnumpy(), expected[index], rtol=rtol, atol=atol,
                                names=(f"{where}: output {index}", "numpy reference"))
        if dtype == "float64":
            check_symbol_numeric_gradient(
                symbol, {n: nd.array(a, ctx=ctx, dtype=a.dtype) for n, a in zip(names, cast)},
                aux_states=None, numeric_eps=1e-6, rtol=op.domain.grad_rtol,
                atol=op.domain.grad_atol, grad_nodes=None, use_forward_train=True, ctx=ctx,
                grad_stype_dict=None, dtype=np.float64)


def _run_examples(op: Op, backend: Any, eng: Any, max_examples: int | None) -> None:
    dtypes = st.sampled_from(op.domain.dtypes)

    @given(data=st.data())
    def examples(data: st.DataObject) -> None:
        case = op.domain.sample(data.draw)
        dtype = data.draw(dtypes, label="dtype")
        seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
        if op.expand is not None:
            graph_only_check(op, case.inputs, case.params, backend=backend, engine=eng,
                             dtype=dtype)
            if dtype != "float64":
                graph_only_check(op, case.inputs, case.params, backend=backend, engine=eng,
                                 dtype="float64")
            return
        check_case(
            op,
            case.inputs,
            case.params,
            backend=backend,
            engine=eng,
            dtype=dtype,
            rng=np.random.default_rng(seed),
        )
        # the gradient is always checked in float64; an operator without one whose domain
        # leaves float64 out (the mixed-precision updates: float32 states) is not run there
        if dtype != "float64" and not (isinstance(op.gradient, NoGradient)
                                       and "float64" not in op.domain.dtypes):
            check_case(
                op,
                case.inputs,
                case.params,
                backend=backend,
                engine=eng,
                dtype="float64",
                rng=np.random.default_rng(seed),
            )

    if max_examples is not None:
        examples = settings(max_examples=max_examples)(examples)
    examples()
