"""The symbolic checks behind ``dagnet.test_utils``: a symbol bound through an
executor, its forward pass and backward pass compared with expected values,
and its gradients with central differences of its forward pass."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..context import Context
from ..runtime import GRAD_REQS

__all__ = ["symbolic_forward", "symbolic_backward", "check_symbol_numeric_gradient",
           "check_symbol_consistency"]


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
    """NDArrays as given (MXNet binds them as they are); anything else copied into a new
    NDArray of ``dtype``, or of its own dtype when ``dtype`` is ``"asnumpy"``."""
    from .. import ndarray

    def convert(v: Any) -> Any:
        if isinstance(v, ndarray.NDArray):
            return v
        host = _host(v)
        return ndarray.array(host, ctx=ctx, dtype=host.dtype if _is_asnumpy(dtype) else dtype)

    return {k: convert(v) for k, v in values.items()}


def _is_asnumpy(dtype: Any) -> bool:
    return isinstance(dtype, str) and dtype == "asnumpy"


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
                     dtype: Any) -> list[Any]:
    """See :func:`dagnet.test_utils.check_symbolic_forward`."""
    from ..test_utils import assert_almost_equal

    ctx, args, aux = _bind_inputs(sym, location, aux_states, ctx, dtype)
    executor = sym.bind(ctx, args=args, aux_states=aux)
    outputs = executor.forward(is_train=False)
    names = sym.list_outputs()
    wanted = _by_name(expected, names, "expected")
    for name, got in zip(names, outputs):
        assert_almost_equal(got.asnumpy(), _host(wanted[name]), rtol=rtol, atol=atol,
                            names=(f"output {name!r}", "expected"), equal_nan=equal_nan)
    return outputs


def symbolic_backward(sym: Any, location: Any, out_grads: Any, expected: Any, rtol: float,
                      atol: float | None, aux_states: Any, grad_req: Any, ctx: Context | None,
                      equal_nan: bool, dtype: Any,
                      grad_stypes: Mapping[str, str] | None = None) -> dict[str, Any]:
    """See :func:`dagnet.test_utils.check_symbolic_backward`."""
    from .. import ndarray
    from ..test_utils import assert_almost_equal

    ctx, args, aux = _bind_inputs(sym, location, aux_states, ctx, dtype)
    wanted = {k: _host(v) for k, v in
              _by_name(expected, sym.list_arguments(), "expected", complete=False).items()}
    initial = {k: np.random.normal(size=v.shape) for k, v in wanted.items()}
    grads = _ndarrays(initial, ctx, dtype)
    for name, stype in dict(grad_stypes or {}).items():
        if name in grads and stype not in (None, "default"):  # sparse: start at zero
            grads[name] = ndarray.sparse.zeros(stype, grads[name].shape, ctx=ctx,
                                               dtype=grads[name].dtype)
    initial = {k: g.asnumpy() for k, g in grads.items()}  # the start, rounded to dtype
    reqs = {k: grad_req for k in wanted} if isinstance(grad_req, str) else dict(grad_req)
    executor = sym.bind(ctx, args=args, args_grad=grads, grad_req=reqs, aux_states=aux)
    executor.forward(is_train=True)
    if out_grads is not None:
        outputs = sym.list_outputs()
        if hasattr(out_grads, "shape"):
            out_grads = [out_grads]
        elif isinstance(out_grads, (list, tuple)):
            out_grads = list(out_grads)[:len(outputs)]  # MXNet's executor ignores extra ones
        heads = _by_name(out_grads, outputs, "out_grads", complete=False)
        out_grads = {k: None if v is None else _ndarrays({k: v}, ctx, dtype)[k]
                     for k, v in heads.items()}
    executor.backward(out_grads)
    result = {}
    for name, want in wanted.items():
        got = grads[name].asnumpy()
        req = reqs.get(name, "null")
        if req == "add":
            want = initial[name] + want
        elif req == "null":
            want = initial[name]
        assert_almost_equal(got, want, rtol=rtol, atol=atol,
                            names=(f"gradient of {name!r} (grad_req={req})", "expected"),
                            equal_nan=equal_nan)
        result[name] = grads[name]
    return result


def check_symbol_numeric_gradient(sym: Any, location: Any, aux_states: Any, numeric_eps: Any,
                                  rtol: Any, atol: Any, grad_nodes: Any,
                                  use_forward_train: bool, ctx: Context | None,
                                  grad_stype_dict: Any, dtype: Any) -> None:
    """See :func:`dagnet.test_utils.check_numeric_gradient`.

    Every argument is converted to the symbol's ``dtype``; each output gets a
    random projection (uniform in [0.1, 1.1), drawn from numpy's global
    generator, as MXNet's) and the loss is the sum of every output times its
    projection.  The backward pass of one forward pass in training mode gives
    the gradients; the numeric side evaluates the loss at ``x - eps/2`` and
    ``x + eps/2`` for every element ``x`` of every argument checked.

    The symbol is bound once and run on the naive engine (when it is
    installed): each element needs two small forward passes whose outputs are
    read at once, and the naive engine runs them inline on this thread instead
    of handing every step to a worker and waiting for it.  Only the element
    being moved is written to the device array, so an element costs the same
    however large its argument is.  The configured engine is back in place
    when the check returns.
    """
    from .. import config, engine
    from ..test_utils import assert_almost_equal, default_atols, default_numeric_eps, default_rtols

    dtype = _float_dtype(dtype)
    reqs = _grad_reqs(sym, grad_nodes)
    if grad_stype_dict is not None:
        if not isinstance(grad_stype_dict, Mapping):
            raise AssertionError(f"check_numeric_gradient: grad_stype_dict must be a dict of "
                                 f"argument name to storage type, got "
                                 f"{type(grad_stype_dict).__name__}")
        unknown = {k: v for k, v in grad_stype_dict.items()
                   if v not in ("default", "row_sparse", "csr")}
        if unknown:
            raise ValueError(f"check_numeric_gradient: grad_stype_dict names unknown storage "
                             f"types {unknown}; use 'default', 'row_sparse' or 'csr'")
        # the gradients are compared by value, whatever their storage type
    eps = _by_dtype(numeric_eps, default_numeric_eps(), dtype)
    if dtype != np.float64 and eps < 1e-5:
        raise AssertionError(f"check_numeric_gradient: numeric_eps={eps:g} is too small for "
                             f"{dtype.name}: differences that small drown in rounding; use "
                             f"numeric_eps >= 1e-5, or dtype=np.float64")
    scope = config.set(engine="naive") if "naive" in engine.names() else contextlib.nullcontext()
    with scope:
        gradients = _gradients(sym, location, aux_states, ctx, dtype, reqs, eps,
                               bool(use_forward_train))
    rtol = _by_dtype(rtol, default_rtols(), dtype)
    atol = _by_dtype(atol, default_atols(), dtype)
    for name, (req, numeric, backward, initial) in gradients.items():
        if req == "write":
            pair = (numeric, backward)
        elif req == "add":
            pair = (numeric, backward - initial)
        else:  # "null": the gradient array must be left as it was
            pair = (initial, backward)
        try:
            assert_almost_equal(*pair, rtol=rtol, atol=atol,
                                names=(f"numeric gradient of {name!r}" if req != "null"
                                       else f"initial gradient of {name!r}",
                                       f"backward gradient of {name!r}"))
        except AssertionError as error:
            raise AssertionError(
                f"check_numeric_gradient: the gradient of argument {name!r} (grad_req={req!r}, "
                f"dtype {dtype.name}, numeric_eps={eps:g}) is wrong; "
                + ("the backward pass wrote to it although grad_req is 'null'"
                   if req == "null" else
                   "the backward pass disagrees with central differences of the forward pass")
                + f":\n{error}") from None


def _float_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as one of the three float dtypes the check runs in (AssertionError else,
    as MXNet)."""
    try:
        kind = np.dtype(dtype)
    except TypeError:
        kind = None
    if kind not in (np.float16, np.float32, np.float64):
        raise AssertionError(f"check_numeric_gradient: dtype must be np.float16, np.float32 or "
                             f"np.float64, got {dtype!r}")
    return kind


def _by_dtype(value: Any, table: dict[np.dtype, float], dtype: np.dtype) -> float:
    """A tolerance or step: ``value`` itself, its entry for ``dtype`` when it is a dict by
    dtype, or the table's entry when it is None or lacks one (MXNet's ``get_tolerance``)."""
    if value is None:
        return table[dtype]
    if isinstance(value, Mapping):
        given = {np.dtype(k): v for k, v in value.items()}
        return float(given.get(dtype, table[dtype]))
    return float(value)


def _grad_reqs(sym: Any, grad_nodes: Any) -> dict[str, str]:
    """The arguments to check, with their ``grad_req``: every argument (``write``) when
    ``grad_nodes`` is None, the names of a list or tuple (``write``), or a dict's."""
    names = sym.list_arguments()
    if grad_nodes is None:
        reqs = {n: "write" for n in names}
    elif isinstance(grad_nodes, (list, tuple)):
        reqs = {n: "write" for n in grad_nodes}
    elif isinstance(grad_nodes, Mapping):
        reqs = dict(grad_nodes)
    else:
        raise ValueError(f"check_numeric_gradient: grad_nodes must be None, a list of argument "
                         f"names or a dict of name to grad_req, got {grad_nodes!r}")
    unknown = [n for n in reqs if n not in names]
    if unknown:
        raise ValueError(f"check_numeric_gradient: grad_nodes names {', '.join(map(repr, unknown))}"
                         f", which the symbol does not have; its arguments are "
                         f"{', '.join(names) or 'none'}")
    wrong = {n: r for n, r in reqs.items() if r not in GRAD_REQS}
    if wrong:
        raise ValueError(f"check_numeric_gradient: invalid grad_req {wrong}; each must be one "
                         f"of {', '.join(GRAD_REQS)}")
    return reqs


def _gradients(sym: Any, location: Any, aux_states: Any, ctx: Context | None, dtype: np.dtype,
               reqs: dict[str, str], eps: float,
               train: bool) -> dict[str, tuple[str, np.ndarray | None, np.ndarray, np.ndarray]]:
    """Bind ``sym`` once and compute, for every argument in ``reqs``, its numeric gradient
    (None where ``grad_req`` is ``null``), its gradient array after one backward pass,
    and that array's random start, by name with the ``grad_req``."""
    from .. import ndarray

    ctx, args, aux = _bind_inputs(sym, location, aux_states, ctx, dtype)
    _, out_shapes, _ = sym.infer_shape(**{n: a.shape for n, a in args.items()})
    projections = [np.asarray(np.random.rand(*shape) + 0.1).astype(dtype) for shape in out_shapes]
    initial = {n: np.random.normal(0, 0.01, size=args[n].shape).astype(dtype) for n in reqs}
    grads = _ndarrays(initial, ctx, dtype)
    aux_start = {n: a.asnumpy() for n, a in aux.items()}  # a training-mode pass may update them
    executor = sym.bind(ctx, args=args, args_grad=grads, grad_req=reqs, aux_states=aux)
    executor.forward(is_train=True)
    executor.backward([ndarray.array(p, ctx=ctx, dtype=dtype) for p in projections])
    backward = {n: grads[n].asnumpy().astype(np.float64) for n in reqs}
    loss_change = _LossChange(executor, projections, aux_start, train)
    result = {}
    for name, req in reqs.items():
        numeric = None if req == "null" else loss_change.central_differences(name, eps)
        result[name] = (req, numeric, backward[name], initial[name].astype(np.float64))
    return result


class _LossChange:
    """The change of the projected loss when one element of one argument moves, from
    one bound executor (its arguments, and auxiliary states, restored after each)."""

    def __init__(self, executor: Any, projections: list[np.ndarray],
                 aux_start: dict[str, np.ndarray], train: bool):
        self._executor = executor
        self._projections = [p.astype(np.float64).reshape(-1) for p in projections]
        self._aux = [(executor.aux_dict[n], v) for n, v in aux_start.items()]
        self._train = train

    def _outputs(self) -> list[np.ndarray]:
        for array, start in self._aux:
            array[:] = start
        return [o.asnumpy().reshape(-1) for o in self._executor.forward(is_train=self._train)]

    def central_differences(self, name: str, eps: float) -> np.ndarray:
        """d loss / d x for every element x of argument ``name``: the loss at x + eps/2
        minus the loss at x - eps/2, over eps, the outputs subtracted before they are
        projected (so equal parts cancel exactly).  A sparse argument is moved on a dense
        copy, cast back into it for each pass."""
        target = self._executor.arg_dict[name]
        sparse = target.stype != "default"
        work = target.tostype("default") if sparse else target
        flat_work = work.reshape(-1)

        def move(j: int, value: Any) -> None:
            flat_work[j] = value
            if sparse:
                work.copyto(target)

        values = work.asnumpy().reshape(-1)
        dtype = values.dtype.type
        half = eps / 2
        numeric = np.empty(values.size, np.float64)
        for j, value in enumerate(values.tolist()):
            move(j, dtype(value + half))
            plus = self._outputs()
            move(j, dtype(value - half))
            minus = self._outputs()
            move(j, values[j])
            numeric[j] = sum(float(np.dot(np.subtract(p, m, dtype=np.float64), w))
                             for p, m, w in zip(plus, minus, self._projections)) / eps
        return numeric.reshape(target.shape)


def check_symbol_consistency(syms: Any, ctx_list: Sequence[Mapping[str, Any]], scale: float,
                             grad_req: Any, arg_params: Mapping[str, Any] | None,
                             aux_params: Mapping[str, Any] | None, rtol: float | None,
                             atol: float | None, raise_on_err: bool, ground_truth: Any,
                             equal_nan: bool, use_uniform: bool, rand_type: Any) -> dict:
    """MXNet's ``check_consistency`` for symbols: bind each symbol with its ``ctx_list``
    entry (``ctx``, argument shapes, ``type_dict``) through ``simple_bind``, give all the
    same random arguments, and compare every executor's outputs (inference, then
    training with random head gradients) and gradients with those of the executor of
    the widest output dtype.  Returns that reference, by output and argument name."""
    from .. import test_utils
    from ..symbol import Symbol

    if len(ctx_list) < 2:
        raise ValueError("check_consistency: give at least two ctx_list entries to compare")
    syms = [syms] * len(ctx_list) if isinstance(syms, Symbol) else list(syms)
    if len(syms) != len(ctx_list):
        raise ValueError(f"check_consistency: {len(syms)} symbols for {len(ctx_list)} "
                         f"ctx_list entries; give one symbol or one per entry")
    outputs, arguments = syms[0].list_outputs(), syms[0].list_arguments()
    for s in syms[1:]:
        if s.list_outputs() != outputs or s.list_arguments() != arguments:
            raise ValueError("check_consistency: the symbols differ in their arguments or "
                             "outputs; they must describe the same computation")
    executors = [s.simple_bind(grad_req=grad_req, **dict(entry))
                 for s, entry in zip(syms, ctx_list)]
    args = dict(arg_params or {})
    for name, arr in sorted(executors[0].arg_dict.items()):
        if name not in args:
            args[name] = (np.random.uniform(-0.92 * scale, 0.92 * scale, arr.shape)
                          if use_uniform else np.random.normal(0, scale, arr.shape)
                          ).astype(rand_type)
    aux = dict(aux_params or {})
    for exe in executors:
        for name, arr in exe.arg_dict.items():
            arr[:] = args[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux.get(name, 0)
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0
    widest = int(np.argmax([np.dtype(exe.outputs[0].dtype).itemsize for exe in executors]))

    def compare(what: str, got: Any, want: Any, index: int) -> None:
        try:
            test_utils.assert_almost_equal(got, want, rtol=rtol, atol=atol,
                                           equal_nan=equal_nan,
                                           names=(f"ctx {index} {what}", f"ctx {widest}"))
        except AssertionError:
            if raise_on_err:
                raise

    for exe in executors:
        exe.forward(is_train=False)
    reference = ground_truth
    if reference is None:
        reference = {n: a.asnumpy() for n, a in zip(outputs, executors[widest].outputs)}
    for i, exe in enumerate(executors):
        if i != widest:
            for name, arr in zip(outputs, exe.outputs):
                compare(name, arr.asnumpy(), reference[name], i)
    if grad_req == "null":
        return reference
    heads = [np.random.normal(0, scale, arr.shape) for arr in executors[0].outputs]
    for exe in executors:
        exe.forward(is_train=True)
        exe.backward([_ndarray_like(h, arr) for h, arr in zip(heads, exe.outputs)])
    if ground_truth is None:
        reference = {n: a.asnumpy() for n, a in zip(outputs, executors[widest].outputs)}
        reference.update({n: g.asnumpy() for n, g in executors[widest].grad_dict.items()
                          if g is not None})
    for i, exe in enumerate(executors):
        if i == widest:
            continue
        for name, arr in zip(outputs, exe.outputs):
            compare(name, arr.asnumpy(), reference[name], i)
        for name, grad in exe.grad_dict.items():
            if grad is not None and name in reference:
                compare(f"gradient of {name}", grad.asnumpy(), reference[name], i)
    return reference


def _ndarray_like(value: np.ndarray, like: Any) -> Any:
    from .. import ndarray

    return ndarray.array(value, ctx=like.context, dtype=like.dtype)
