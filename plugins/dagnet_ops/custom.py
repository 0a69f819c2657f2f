"""``Custom``: the operator that runs MXNet-style Python custom operators
(``mx.operator.CustomOp`` / ``CustomOpProp`` / ``register``).

It is pushed to the engine like any operator.  Its kernel hands the user's
``forward``/``backward`` NDArrays over the operator's own device buffers (each
with an engine variable of its own), runs the Python code with the operator
calls it makes executed inline on the same thread (``dagnet.engine.run_inline``:
the kernel may hold the only worker, so they cannot wait for another), waits for
what it wrote, and reports any error as the failure of this operator, naming
its ``op_type``.  Names, counts, shapes, dtypes and the backward dependency come
from the registered property (``CustomOpProp``); one ``CustomOp`` is created per
property, device and input shapes and dtypes, and serves both passes.

For the profiler, the operator calls a custom operator makes are scoped under
its ``op_type`` (``MySigmoid::_plus_scalar``), and its Python code is reported
as ``<op_type>::pure_python``.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from dagnet import OperatorError, ShapeError, engine, runtime
from dagnet.context import cpu
from dagnet.ndarray import wrap_chunk
from dagnet.operator import (
    XP,
    Case,
    CustomOp,
    CustomOpProp,
    CustomParams,
    Domain,
    Gradient,
    OpBuilder,
    OpContext,
    custom_prop,
    merge_dtype,
    merge_shape,
    register,
    registered_custom_ops,
    shape_is_known,
)

from ._draw import Draw

__all__ = ["OPS", "CustomOpError"]


class CustomOpError(OperatorError):
    """A custom operator's Python code, or an operator call it made, failed; the message
    names the ``op_type`` and the pass."""


# -- what a property declares, read once per property ------------------------------------------
class _Layout:
    """Names, counts and the backward dependency of one property instance."""

    def __init__(self, prop: CustomOpProp, op_type: str):
        self.prop, self.op_type = prop, op_type
        self.args = [str(n) for n in prop.list_arguments()]
        self.aux = [str(n) for n in prop.list_auxiliary_states()]
        self.outputs = [str(n) for n in prop.list_outputs()]
        n_out, n_args = len(self.outputs), len(self.args)
        out_grad = list(range(n_out))
        in_data = list(range(n_out, n_out + n_args))
        out_data = list(range(n_out + n_args, 2 * n_out + n_args))
        declared = set(prop.declare_backward_dependency(out_grad, in_data, out_data))
        unknown = declared - set(range(2 * n_out + n_args))
        if unknown:
            raise self.fail(f"declare_backward_dependency() returned {sorted(unknown)}, which "
                            f"are not among the ids it was given")
        self.keep_out_grad = [i in declared for i in out_grad]
        self.keep_in_data = [i in declared for i in in_data]
        self.keep_out_data = [i in declared for i in out_data]

    def fail(self, message: str) -> OperatorError:
        return OperatorError(f"custom operator {self.op_type!r} "
                             f"({type(self.prop).__name__}): {message}")


_layouts: weakref.WeakKeyDictionary[CustomOpProp, _Layout] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _layout(attrs: CustomParams) -> _Layout:
    prop = custom_prop(attrs)
    with _lock:
        layout = _layouts.get(prop)
    if layout is None:
        layout = _Layout(prop, attrs.op_type)
        with _lock:
            _layouts[prop] = layout
    return layout


# -- the operator record's attributes as functions of the parameters ---
def _num_inputs(attrs: CustomParams) -> int:
    layout = _layout(attrs)
    return len(layout.args) + len(layout.aux)


def _num_outputs(attrs: CustomParams) -> int:
    return len(_layout(attrs).outputs)


def _input_names(attrs: CustomParams) -> list[str]:
    layout = _layout(attrs)
    return layout.args + layout.aux


def _output_names(attrs: CustomParams) -> list[str]:
    return _layout(attrs).outputs


def _mutate_inputs(attrs: CustomParams) -> list[int]:
    layout = _layout(attrs)
    return list(range(len(layout.args), len(layout.args) + len(layout.aux)))


def _split_result(layout: _Layout, result: Any, method: str, n_in: int) -> tuple[list, list, list]:
    """``(in, out, aux)`` from what ``infer_shape``/``infer_type`` returned (aux optional)."""
    try:
        parts = [list(part) for part in result]
    except TypeError:
        raise layout.fail(f"{method}() must return (in, out[, aux]) lists, got "
                          f"{result!r}") from None
    if len(parts) == 2:
        parts.append([])
    if len(parts) != 3:
        raise layout.fail(f"{method}() must return 2 or 3 lists (in, out[, aux]), got "
                          f"{len(parts)}")
    new_in, new_out, new_aux = parts
    for what, got, want in (("in", new_in, n_in), ("out", new_out, len(layout.outputs))):
        if len(got) != want:
            raise layout.fail(f"{method}() returned {len(got)} {what} entries, expected {want}")
    if len(new_aux) not in (0, len(layout.aux)):
        raise layout.fail(f"{method}() returned {len(new_aux)} aux entries, expected "
                          f"{len(layout.aux)}")
    return new_in, new_out, new_aux or [None] * len(layout.aux)


def _merge_all(layout: _Layout, ins: list, outs: list, new_ins: list, new_outs: list,
               merge: Any, what: str) -> tuple[list, list]:
    names = layout.args + layout.aux
    merged_in = [merge(a, b, f"custom operator {layout.op_type!r}, {what} of input {names[k]!r}")
                 for k, (a, b) in enumerate(zip(ins, new_ins, strict=True))]
    merged_out = [merge(a, b, f"custom operator {layout.op_type!r}, {what} of output "
                              f"{layout.outputs[k]!r}")
                  for k, (a, b) in enumerate(zip(outs, new_outs, strict=True))]
    return merged_in, merged_out


def _infer_shape(attrs: CustomParams, ins: list, outs: list) -> tuple[list, list]:
    layout = _layout(attrs)
    n_args = len(layout.args)
    if not all(shape_is_known(s) for s in ins[:n_args]):
        return ins, outs  # as in MXNet: a custom operator's rule runs once its arguments are known
    result = layout.prop.infer_shape([list(s) for s in ins[:n_args]])
    new_in, new_out, new_aux = _split_result(layout, result, "infer_shape", n_args)

    def shape(value: Any) -> tuple[int, ...] | None:
        return None if value is None else tuple(int(d) for d in value)

    try:
        return _merge_all(layout, ins, outs, [shape(s) for s in new_in + new_aux],
                          [shape(s) for s in new_out], merge_shape, "shape")
    except ShapeError:
        raise
    except (TypeError, ValueError) as error:
        raise layout.fail(f"infer_shape() returned shapes that are not tuples of ints: "
                          f"{error}") from None


def _infer_type(attrs: CustomParams, ins: list, outs: list) -> tuple[list, list]:
    layout = _layout(attrs)
    n_args = len(layout.args)
    if any(t is None for t in ins[:n_args]):
        return ins, outs
    # MXNet hands numpy scalar types (np.float32), not dtype objects
    result = layout.prop.infer_type([np.dtype(t).type for t in ins[:n_args]])
    new_in, new_out, new_aux = _split_result(layout, result, "infer_type", n_args)

    def dtype(value: Any) -> np.dtype | None:
        return None if value is None else np.dtype(value)

    return _merge_all(layout, ins, outs, [dtype(t) for t in new_in + new_aux],
                      [dtype(t) for t in new_out], merge_dtype, "dtype")


# -- NDArrays over the kernel's buffers --------------------------------------------------------
class _Borrowed:
    """A storage handle over a buffer the operator does not own (never freed here)."""

    __slots__ = ("data", "size")

    def __init__(self, array: Any):
        self.data = array.reshape(-1).view(np.uint8 if isinstance(array, np.ndarray)
                                           else "uint8")
        self.size = int(array.nbytes)


class _BorrowedChunk(runtime.Chunk):
    """A chunk over a borrowed buffer: when its arrays go, nothing is freed (the kernel's
    buffers belong to the arrays the operator was called on)."""

    __slots__ = ()

    def __del__(self) -> None:
        pass


class _Arrays:
    """NDArrays for the kernel's arrays, each with an engine variable of its own; a
    non-contiguous array is worked on in a contiguous copy, written back by :meth:`finish`."""

    def __init__(self, ctx: Any):
        self.dev = runtime.device_of(ctx)
        self.engine = runtime.pushing_engine()
        self.copies: list[tuple[Any, Any]] = []

    def wrap(self, array: Any, writable: bool) -> Any:
        if array is None:
            return None
        target = array
        if not array.flags.c_contiguous:
            target = array.copy(order="C")
            if writable:
                self.copies.append((array, target))
        chunk = _BorrowedChunk(_Borrowed(target), self.engine.new_var(), self.dev,
                               int(target.nbytes))
        return wrap_chunk(chunk, 0, tuple(int(d) for d in target.shape), np.dtype(target.dtype),
                          None, target)

    def finish(self, written: list) -> None:
        """Wait for the work on ``written`` (raising its failure), then write copies back."""
        for nd in written:
            if nd is not None:
                nd.wait_to_read()
        for array, target in self.copies:
            array[...] = target


# -- one CustomOp per property, device, input shapes and dtypes --------------------------------
_operators: OrderedDict[tuple, CustomOp] = OrderedDict()
_OPERATORS_KEPT = 256


def _operator(layout: _Layout, ctx: Any, arrays: list) -> CustomOp:
    shapes = [list(a.shape) for a in arrays]
    dtypes = [np.dtype(a.dtype).type for a in arrays]
    key = (layout.prop, ctx, tuple(map(tuple, shapes)), tuple(dtypes))
    with _lock:
        operator = _operators.get(key)
        if operator is not None:
            _operators.move_to_end(key)
            return operator
    operator = layout.prop.create_operator(ctx, shapes, dtypes)
    if not isinstance(operator, CustomOp):
        raise layout.fail(f"create_operator() returned {operator!r}, not a CustomOp")
    with _lock:
        _operators[key] = operator
        while len(_operators) > _OPERATORS_KEPT:
            _operators.popitem(last=False)
    return operator


# -- running the user's code -------------------------------------------------------------------
def _run_python(op_type: str, what: str, device: Any, call: Any) -> None:
    """Run ``call()`` (the user's pass and the waits on what it wrote) as custom-operator
    code: not recorded by autograd, its operator calls inline and scoped for the profiler
    (``op_type`` for the forward pass, ``_backward_<op_type>`` for the backward one)."""
    scope = op_type if what == "forward" else f"_backward_{op_type}"
    recording = runtime.set_recording(False)
    start = engine.clock()
    failed = False
    try:
        with engine.execution_scope(scope), engine.run_inline():
            call()
    except Exception as error:
        failed = True
        raise CustomOpError(f"custom operator {op_type!r} failed in {what}: "
                            f"{type(error).__name__}: {error}") from error
    finally:
        runtime.set_recording(recording)
        if engine.listening():
            engine.report(engine.Execution("pure_python", device, engine.FnProperty.NORMAL,
                                           start, engine.clock(), threading.get_ident(),
                                           failed, scope))


def _device(ctx: OpContext) -> Any:
    return ctx.ctx if ctx.ctx is not None else cpu()


def _forward(attrs: CustomParams, ctx: OpContext, inputs: list, req: list,
             outputs: list) -> None:
    layout = _layout(attrs)
    device = _device(ctx)
    n_args = len(layout.args)
    arrays = _Arrays(device)
    in_data = [arrays.wrap(a, False) for a in inputs[:n_args]]
    aux = [arrays.wrap(a, True) for a in inputs[n_args:]]
    out_data = [arrays.wrap(a, True) for a in outputs]
    operator = _operator(layout, device, inputs)

    def call() -> None:
        operator.forward(bool(ctx.is_train), [r.value for r in req], in_data, out_data, aux)
        arrays.finish(out_data + aux)

    _run_python(attrs.op_type, "forward", device, call)


def _backward(attrs: CustomParams, ctx: OpContext, inputs: list, req: list,
              outputs: list) -> None:
    layout = _layout(attrs)
    device = _device(ctx)
    n_out, n_args, n_aux = len(layout.outputs), len(layout.args), len(layout.aux)
    out_grad_raw = inputs[:n_out]
    in_all_raw = inputs[n_out:n_out + n_args + n_aux]
    out_data_raw = inputs[n_out + n_args + n_aux:]
    arrays = _Arrays(device)

    def kept(raw: list, keep: list[bool]) -> list:
        return [arrays.wrap(a, False) if k else None for a, k in zip(raw, keep, strict=True)]

    out_grad = kept(out_grad_raw, layout.keep_out_grad)
    in_data = kept(in_all_raw[:n_args], layout.keep_in_data)
    out_data = kept(out_data_raw, layout.keep_out_data)
    aux = [arrays.wrap(a, True) for a in in_all_raw[n_args:]]
    in_grad = [arrays.wrap(a, True) for a in outputs]
    operator = _operator(layout, device, in_all_raw)

    def call() -> None:
        operator.backward([r.value for r in req], out_grad, in_data, out_data, in_grad, aux)
        arrays.finish(in_grad + aux)

    _run_python(attrs.op_type, "backward", device, call)


# -- the conformance suite's example: a cube written as a custom operator ---
EXAMPLE_OP_TYPE = "_dagnet_example_cube"


class _Cube(CustomOp):
    """x**3 through operator calls, as a user would write it."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 3 * in_data[0] * in_data[0] * out_grad[0])


class _CubeProp(CustomOpProp):
    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [*out_grad, *in_data]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Cube()


def _sample(draw: Any) -> Case:
    if registered_custom_ops().get(EXAMPLE_OP_TYPE) is not _CubeProp:
        register(EXAMPLE_OP_TYPE)(_CubeProp)
    d = Draw(draw)
    shape = d.shape(d.int(1, 3, label="ndim"))
    return Case([d.uniform(shape)], {"op_type": EXAMPLE_OP_TYPE})


CUSTOM = (
    OpBuilder("Custom")
    .describe(
        "A custom operator written in Python: ``op_type`` names a ``CustomOpProp`` subclass "
        "registered with ``mx.operator.register``; the other keyword arguments reach its "
        "constructor as strings.  Inputs are its arguments, then its auxiliary states; "
        "the gradient is what its ``CustomOp.backward`` computes.")
    .set_params(CustomParams)
    .set_num_inputs(_num_inputs)
    .set_num_outputs(_num_outputs)
    .set_input_names(_input_names)
    .set_output_names(_output_names)
    .set_mutate_inputs(_mutate_inputs)
    .set_infer_shape(_infer_shape)
    .set_infer_type(_infer_type)
    .set_compute(_forward, device=XP)
    .set_gradient(Gradient("_backward_Custom", ("out_grad", "in_data", "out_data")))
    .set_domain(Domain(_sample, reference=lambda params, x: x ** 3))
    .build()
)

BACKWARD_CUSTOM = OpBuilder.backward_for(CUSTOM).set_compute(_backward, device=XP).build()

OPS = [CUSTOM, BACKWARD_CUSTOM]
