"""Operators for the NDArray tests.

``nd_ops`` registers, for the tests of one module, small operators under
``_ndtest_*`` names (with exactly the behaviour a test needs: an input the
op mutates, a resource, a failing kernel, a slow kernel, a hidden output
...) and, only where the operator library does not provide them yet, the
MXNet-named operators the NDArray dunders dispatch to.  The registry is
rebuilt afterwards.
"""

from __future__ import annotations

import operator
import time

import numpy as np
import pytest

import dagnet
from dagnet.operator import XP, DType, Field, Op, OpReqType, Params, Shape, assign, elemwise_shape
from dagnet.resource import ResourceRequest


class ScalarParam(Params):
    scalar = Field(float, 1.0, "the scalar operand")


class FillParam(Params):
    shape = Field(Shape, (1,), "output shape")
    value = Field(float, 0.0, "fill value")
    dtype = Field(DType, "float32", "output dtype")


class SleepParam(Params):
    seconds = Field(float, 0.01, "how long the kernel sleeps before writing")
    add = Field(float, 1.0, "what it adds")


class ConcatParam(Params):
    num_args = Field(int, 1, "number of inputs", low=1)
    dim = Field(int, 1, "the axis")


class TransposeParam(Params):
    axes = Field(Shape, (), "permutation (empty: reverse)")


def _broadcast_shape(name):
    def infer(attrs, ins, outs):
        lhs, rhs = ins
        return ins, [tuple(np.broadcast_shapes(lhs, rhs))]

    return infer


def _binary(name, fn, compare=False):
    def compute(attrs, ctx, inputs, req, outputs):
        value = fn(inputs[0], inputs[1])
        assign(outputs[0], req[0], value.astype(outputs[0].dtype) if compare else value)

    return Op(name, num_inputs=2, input_names=["lhs", "rhs"], infer_shape=_broadcast_shape(name),
              compute={XP: compute})


def _scalar(name, fn, compare=False):
    def compute(attrs, ctx, inputs, req, outputs):
        data = inputs[0]
        scalar = np.asarray(attrs.scalar).astype(data.dtype)
        value = np.asarray(fn(data, scalar))
        assign(outputs[0], req[0], value.astype(outputs[0].dtype))

    return Op(name, params=ScalarParam, input_names=["data"], infer_shape=elemwise_shape(name),
              compute={XP: compute})


def _unary(name, fn):
    def compute(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], fn(inputs[0]))

    return Op(name, input_names=["data"], infer_shape=elemwise_shape(name), compute={XP: compute})


_ARRAY = {
    "broadcast_add": operator.add, "broadcast_sub": operator.sub, "broadcast_mul": operator.mul,
    "broadcast_div": operator.truediv, "broadcast_mod": np.mod, "broadcast_power": np.power,
    "broadcast_maximum": np.maximum, "broadcast_minimum": np.minimum,
}
_ARRAY_CMP = {
    "broadcast_equal": operator.eq, "broadcast_not_equal": operator.ne,
    "broadcast_greater": operator.gt, "broadcast_greater_equal": operator.ge,
    "broadcast_lesser": operator.lt, "broadcast_lesser_equal": operator.le,
}
_SCALAR = {
    "_plus_scalar": lambda a, s: a + s, "_minus_scalar": lambda a, s: a - s,
    "_rminus_scalar": lambda a, s: s - a, "_mul_scalar": lambda a, s: a * s,
    "_div_scalar": lambda a, s: a / s, "_rdiv_scalar": lambda a, s: s / a,
    "_mod_scalar": lambda a, s: np.mod(a, s), "_rmod_scalar": lambda a, s: np.mod(s, a),
    "_power_scalar": lambda a, s: a ** s, "_rpower_scalar": lambda a, s: s ** a,
    "_maximum_scalar": np.maximum, "_minimum_scalar": np.minimum,
}
_SCALAR_CMP = {
    "_equal_scalar": operator.eq, "_not_equal_scalar": operator.ne,
    "_greater_scalar": operator.gt, "_greater_equal_scalar": operator.ge,
    "_lesser_scalar": operator.lt, "_lesser_equal_scalar": operator.le,
}


def _transpose():
    def axes(attrs, ndim):
        return tuple(attrs.axes) if attrs.axes else tuple(reversed(range(ndim)))

    def infer(attrs, ins, outs):
        (shape,) = ins
        return ins, [tuple(shape[a] for a in axes(attrs, len(shape)))]

    def compute(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], ctx.xp.transpose(inputs[0], axes(attrs, inputs[0].ndim)))

    return Op("transpose", params=TransposeParam, input_names=["data"], infer_shape=infer,
              compute={XP: compute})


def _concat():
    def infer(attrs, ins, outs):
        first = list(ins[0])
        first[attrs.dim] = sum(s[attrs.dim] for s in ins)
        return ins, [tuple(first)]

    def compute(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], ctx.xp.concatenate(inputs, axis=attrs.dim))

    return Op("Concat", params=ConcatParam, num_inputs=lambda p: p.num_args,
              input_names=lambda p: [f"arg{i}" for i in range(p.num_args)], infer_shape=infer,
              compute={XP: compute}, key_var_num_args="num_args", aliases=("concat",))


def library_fallbacks() -> list[Op]:
    """The MXNet-named operators the NDArray front end dispatches to (test versions)."""
    ops = [_binary(n, f) for n, f in _ARRAY.items()]
    ops += [_binary(n, f, compare=True) for n, f in _ARRAY_CMP.items()]
    ops += [_scalar(n, f) for n, f in _SCALAR.items()]
    ops += [_scalar(n, f, compare=True) for n, f in _SCALAR_CMP.items()]
    ops += [_unary("negative", operator.neg), _unary("abs", np.abs), _transpose(), _concat()]
    return ops


# -- operators with exactly the behaviour the tests need ------------------------------
def _aux_op():
    """out = data + 1; the moving statistic ``aux`` is incremented by 1 (mutated input)."""
    def compute(attrs, ctx, inputs, req, outputs):
        data, aux = inputs
        aux += 1
        assign(outputs[0], req[0], data + 1)

    return Op("_ndtest_aux", num_inputs=2, input_names=["data", "aux"], mutate_inputs=[1],
              infer_shape=lambda a, ins, outs: (ins, [ins[0]]), compute={XP: compute})


def _random_op():
    """out = uniform(0, 1) of data's shape, from the device's random resource."""
    def compute(attrs, ctx, inputs, req, outputs):
        (resource,) = ctx.requested
        assign(outputs[0], req[0], resource.generator.random(inputs[0].shape).astype(np.float32))

    return Op("_ndtest_random", input_names=["data"], infer_shape=elemwise_shape("_ndtest_random"),
              resources=[ResourceRequest("random")], compute={XP: compute})


def _fail_op():
    def compute(attrs, ctx, inputs, req, outputs):
        raise RuntimeError("planted kernel failure")

    return Op("_ndtest_fail", input_names=["data"], infer_shape=elemwise_shape("_ndtest_fail"),
              compute={XP: compute})


def _slow_op():
    """out = data + add, written only after sleeping (shows ordering on threaded engines)."""
    def compute(attrs, ctx, inputs, req, outputs):
        time.sleep(attrs.seconds)
        assign(outputs[0], req[0], inputs[0] + attrs.add)

    return Op("_ndtest_slow", params=SleepParam, input_names=["data"],
              infer_shape=elemwise_shape("_ndtest_slow"), compute={XP: compute})


def _hidden_output_op():
    """Two outputs, one visible: out = 2 * data, hidden = 3 * data."""
    def compute(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], inputs[0] * 2)
        assign(outputs[1], req[1], inputs[0] * 3)

    return Op("_ndtest_hidden", num_outputs=2, num_visible_outputs=1, input_names=["data"],
              infer_shape=lambda a, ins, outs: (ins, [ins[0], ins[0]]), compute={XP: compute})


def _train_flag_op():
    """out = 1 where the kernel ran in training mode, else 0."""
    def compute(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], np.full(outputs[0].shape, float(ctx.is_train)))

    return Op("_ndtest_is_train", input_names=["data"],
              infer_shape=elemwise_shape("_ndtest_is_train"), compute={XP: compute})


def _reversing_op():
    """out[i] = data[n-1-i] written element by element; no in-place support (so an ``out=``
    that aliases the input must be computed aside)."""
    def compute(attrs, ctx, inputs, req, outputs):
        data, out = inputs[0], outputs[0]
        n = data.shape[0]
        for i in range(n):
            out[i] = data[n - 1 - i]

    return Op("_ndtest_reverse", input_names=["data"],
              infer_shape=elemwise_shape("_ndtest_reverse"),
              supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}), compute={XP: compute})


def _inplace_probe_op():
    """out = data * 2; records the write mode it was given in ``SEEN_REQS``."""
    def compute(attrs, ctx, inputs, req, outputs):
        SEEN_REQS.append(req[0])
        value = inputs[0] * 2
        assign(outputs[0], req[0], value)

    return Op("_ndtest_double", input_names=["data"], infer_shape=elemwise_shape("_ndtest_double"),
              inplace=[(0, 0)], compute={XP: compute})


SEEN_REQS: list = []


def _fill_op():
    def infer(attrs, ins, outs):
        return ins, [tuple(attrs.shape)]

    def infer_type(attrs, ins, outs):
        return ins, [attrs.dtype]

    def compute(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], attrs.value)

    return Op("_ndtest_fill", params=FillParam, num_inputs=0, input_names=[], infer_shape=infer,
              infer_type=infer_type, compute={XP: compute})


def special_ops() -> list[Op]:
    """The ``_ndtest_*`` operators."""
    return [_aux_op(), _random_op(), _fail_op(), _slow_op(), _hidden_output_op(),
            _train_flag_op(), _reversing_op(), _inplace_probe_op(), _fill_op()]


class _TestOpsPlugin:
    @dagnet.hookimpl
    def dagnet_register_ops(self, ops):
        for op in special_ops():
            ops.add(op)
        for op in library_fallbacks():
            if op.name not in ops and not any(a in ops for a in op.aliases):
                ops.add(op, aliases=op.aliases)


@pytest.fixture(scope="module", autouse=True)
def nd_ops():
    """The test operators (and library fallbacks) for every test of the module."""
    dagnet.plugins.register(_TestOpsPlugin(), name="ndarray-test-ops")
    yield
    dagnet.ndarray.waitall()
    dagnet.plugins.reset()


