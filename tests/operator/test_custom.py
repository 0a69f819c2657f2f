"""MXNet's Python custom operators (mx.operator.CustomOp / CustomOpProp / register) through
mx.nd.Custom, mx.sym.Custom, executors and autograd, on every engine."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx
from dagnet.test_utils import check_numeric_gradient


class Scale(mx.operator.CustomOp):
    """out = factor * x; aux counts the forward passes; keeps state for backward."""

    def __init__(self, factor):
        super().__init__()
        self.factor = factor
        self.seen_train = None

    def forward(self, is_train, req, in_data, out_data, aux):
        self.seen_train = is_train
        aux[0][:] = aux[0] + 1
        self.assign(out_data[0], req[0], in_data[0] * self.factor)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert in_data[0] is None and out_data[0] is None  # not declared: not handed over
        assert self.seen_train is True  # the operator of the forward pass
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor)


@mx.operator.register("test_scale")
class ScaleProp(mx.operator.CustomOpProp):
    def __init__(self, factor="2"):
        super().__init__(need_top_grad=True)
        self.factor = float(factor)  # keywords arrive as strings, as in MXNet

    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [(1,)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0]]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        assert in_shapes[1] == [1] and in_dtypes[0] in (np.float32, np.float64)
        return Scale(self.factor)


class Mult(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert out_grad[0] is None  # need_top_grad=False: a loss-like operator
        self.assign(in_grad[0], req[0], in_data[1])
        self.assign(in_grad[1], req[1], in_data[0])


@mx.operator.register("test_mult")
class MultProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["lhs", "rhs"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]  # aux may be left out

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Mult()


class Fill(mx.operator.CustomOp):
    def __init__(self, shape, value):
        super().__init__()
        self.value = np.full(shape, value, dtype=np.float32)

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.array(self.value))


@mx.operator.register("test_fill")
class FillProp(mx.operator.CustomOpProp):
    def __init__(self, rows, cols, value="1"):
        super().__init__()
        self.shape, self.value = (int(rows), int(cols)), float(value)

    def list_arguments(self):
        return []

    def infer_shape(self, in_shape):
        return [], [self.shape], []

    def infer_type(self, in_type):
        return [], [np.float32], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Fill(self.shape, self.value)


class Broken(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise ValueError("broken on purpose")


@mx.operator.register("test_broken")
class BrokenProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Broken()


@pytest.fixture(params=["naive", "threaded", "threaded_per_device"])
def engine_name(request):
    with mx.config.set(engine=request.param):
        yield request.param
    mx.nd.waitall()


def test_imperative_forward_backward_with_aux_and_kwargs(engine_name):
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    count = mx.nd.zeros((1,))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, count, op_type="test_scale", factor=3, name="s")
    y.backward(mx.nd.ones((2, 3)) * 2)
    np.testing.assert_allclose(y.asnumpy(), 3 * x.asnumpy())
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((2, 3), 6.0))
    assert count.asnumpy()[0] == 1  # the auxiliary state was written


def test_two_inputs_and_no_head_gradient(engine_name):
    lhs, rhs = mx.nd.array([[1.0, 2.0]]), mx.nd.array([[3.0, 4.0]])
    lhs.attach_grad()
    rhs.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(lhs, rhs, op_type="test_mult")
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [[3.0, 8.0]])
    np.testing.assert_allclose(lhs.grad.asnumpy(), rhs.asnumpy())
    np.testing.assert_allclose(rhs.grad.asnumpy(), lhs.asnumpy())


def test_no_inputs_and_string_kwargs(engine_name):
    out = mx.nd.Custom(op_type="test_fill", rows=2, cols=3, value=1.5)
    assert out.shape == (2, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), np.full((2, 3), 1.5))


def test_concurrent_custom_ops_finish(engine_name):
    """Independent custom ops may run at once; each holds a worker while its own operator
    calls run inline."""
    x = mx.nd.ones((50, 50))
    outs = [mx.nd.Custom(x, mx.nd.zeros((1,)), op_type="test_scale", factor=k)
            for k in range(1, 7)]
    mx.nd.waitall()
    for k, out in enumerate(outs, start=1):
        assert out.asnumpy()[0, 0] == k


def test_symbolic_executor_and_grad_reqs():
    data, count = mx.sym.Variable("data"), mx.sym.Variable("count")
    net = mx.sym.Custom(data=data, count=count, op_type="test_scale", factor="0.5", name="sc")
    assert net.list_arguments() == ["data"] and net.list_auxiliary_states() == ["count"]
    assert net.list_outputs() == ["sc_output"]
    args, outs, aux = net.infer_shape(data=(2, 2))
    assert args == [(2, 2)] and outs == [(2, 2)] and aux == [(1,)]
    exe = net.simple_bind(mx.cpu(), data=(2, 2), grad_req="add")
    exe.arg_dict["data"][:] = 4
    exe.grad_dict["data"][:] = 1
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward(mx.nd.ones((2, 2)))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), np.full((2, 2), 2.0))
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), np.full((2, 2), 2.0))  # 1 + 2*.5
    assert exe.aux_dict["count"].asnumpy()[0] == 2
    exe_null = net.bind(mx.cpu(), {"data": mx.nd.ones((2, 2))}, aux_states=[mx.nd.zeros((1,))],
                        args_grad={"data": mx.nd.zeros((2, 2))}, grad_req="null")
    exe_null.forward(is_train=False)
    np.testing.assert_allclose(exe_null.outputs[0].asnumpy(), np.full((2, 2), 0.5))


def test_numeric_gradient_and_json_round_trip():
    net = mx.sym.Custom(data=mx.sym.Variable("data"), count=mx.sym.Variable("count"),
                        op_type="test_scale", factor="1.5")
    x = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    check_numeric_gradient(net, [x], [np.zeros((1,))])
    node = [n for n in json.loads(net.tojson())["nodes"] if n["op"] == "Custom"][0]
    assert node["attrs"] == {"factor": "1.5", "op_type": "test_scale"}
    loaded = mx.sym.load_json(net.tojson())
    exe = loaded.bind(mx.cpu(), {"data": mx.nd.ones((2,))}, aux_states=[mx.nd.zeros((1,))])
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), [1.5, 1.5])


def test_float64_follows_infer_type():
    x = mx.nd.array([1.0, 2.0], dtype="float64")
    y = mx.nd.Custom(x, mx.nd.zeros((1,), dtype="float64"), op_type="test_scale")
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.asnumpy(), [2.0, 4.0])


def test_errors_name_the_op_type(engine_name):
    with pytest.raises(mx.base.MXNetError, match="op_type='nope'.*test_scale"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="nope")
    with pytest.raises(mx.base.MXNetError, match="needs parameter 'op_type'"):
        mx.nd.Custom(mx.nd.ones((2,)))
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="test_broken")
    with pytest.raises(mx.base.MXNetError, match="'test_broken' failed in forward.*on purpose"):
        y.wait_to_read()
    with pytest.raises(mx.base.MXNetError, match="FillProp"):
        mx.nd.Custom(op_type="test_fill", rows=2)  # a constructor keyword missing


def test_custom_op_with_bad_shapes_fails_at_the_next_wait(engine_name):
    class Dot(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            out_data[0][:] = mx.nd.dot(in_data[0], in_data[1])

    @mx.operator.register("test_dot")
    class DotProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ["a", "b"]

        def infer_shape(self, in_shape):
            return in_shape, [(in_shape[0][0], in_shape[1][1])]

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Dot()

    c = mx.nd.Custom(mx.nd.ones((4, 2)), mx.nd.ones((1, 4)), op_type="test_dot")
    with pytest.raises(mx.base.MXNetError, match="'test_dot'"):
        c.wait_to_read()
    good = mx.nd.Custom(mx.nd.ones((4, 2)), mx.nd.ones((2, 3)), op_type="test_dot")
    np.testing.assert_allclose(good.asnumpy(), np.full((4, 3), 2.0))


def test_assign_modes_and_bad_req():
    op, dst = mx.operator.CustomOp(), mx.nd.ones((2,))
    op.assign(dst, "add", mx.nd.ones((2,)))
    op.assign(dst, "null", mx.nd.zeros((2,)))
    np.testing.assert_allclose(dst.asnumpy(), [2.0, 2.0])
    op.assign(dst, "write", mx.nd.zeros((2,)))
    np.testing.assert_allclose(dst.asnumpy(), [0.0, 0.0])
    with pytest.raises(mx.base.MXNetError, match="req"):
        op.assign(dst, "overwrite", dst)


def test_register_checks_and_re_registration():
    with pytest.raises(mx.base.MXNetError, match="CustomOpProp subclass"):
        mx.operator.register("test_bad")(object)
    with pytest.raises(mx.base.MXNetError, match="non-empty"):
        mx.operator.register("")

    @mx.operator.register("test_twice")
    class First(mx.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Scale(1.0)

    @mx.operator.register("test_twice")
    class Second(mx.operator.CustomOpProp):
        pass

    assert mx.operator.registered_custom_ops()["test_twice"] is Second
    with pytest.raises(mx.base.MXNetError, match="create_operator"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_twice").wait_to_read()


def test_profiler_scopes_custom_op_work(tmp_path):
    from dagnet import profiler

    profiler.set_config(filename=str(tmp_path / "t.json"), aggregate_stats=True)
    profiler.dumps(reset=True)
    profiler.set_state("run")
    try:
        x = mx.nd.ones((3,))
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Custom(x, mx.nd.zeros((1,)), op_type="test_scale")
        y.backward()
        mx.nd.waitall()
    finally:
        profiler.set_state("stop")
    names = json.loads(profiler.dumps(format="json"))["Time"]["Custom Operator"]
    profiler.set_config(aggregate_stats=False, filename="profile.json")
    assert "test_scale::pure_python" in names and "_backward_test_scale::pure_python" in names
    assert "test_scale::_mul_scalar" in names


class Noisy(mx.operator.CustomOp):
    """Draws random numbers: its inline operator call shares the random generator with
    work the main thread queued meanwhile."""

    def forward(self, is_train, req, in_data, out_data, aux):
        noise = mx.nd.random.uniform(shape=in_data[0].shape)
        self.assign(out_data[0], req[0], in_data[0] + noise * 0)


@mx.operator.register("test_noisy")
class NoisyProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Noisy()


def test_custom_ops_sharing_a_resource_with_queued_work(engine_name):
    x, outs = mx.nd.ones((20, 20)), []
    for _ in range(10):
        outs.append(mx.nd.Custom(x, op_type="test_noisy"))
        outs.append(mx.nd.random.uniform(shape=(20, 20)))
        x = x + 1
    mx.nd.waitall()
    assert [o.asnumpy()[0, 0] for o in outs[::2]] == list(range(1, 11))
