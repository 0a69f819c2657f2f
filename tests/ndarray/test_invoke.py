"""The imperative path: one engine push per call, errors before pushing, outputs.

Bad calls must raise at the call, name what is wrong, push nothing and leave
every array as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.operator import OpReqType

from .conftest import SEEN_REQS


def _bad_calls(x, a):
    """Calls that must fail; ``a`` holds operands made before counting pushes."""
    return [
        # wrong input count: names the op, the count and the inputs
        (lambda: mx.nd.broadcast_add(x), mx.OperatorError,
         r"'broadcast_add' expects 2 input\(s\) \(lhs, rhs\), got 1"),
        # mixed devices: names both devices
        (lambda: mx.nd.broadcast_add(x, a["cpu1"]), mx.OperatorError,
         r"input 'rhs' is on cpu\(1\) but input 'lhs' is on cpu\(0\)"),
        # shapes that do not fit: op, argument and shapes
        (lambda: mx.nd.broadcast_add(x, a["four"]), ValueError,
         r"broadcast_add.*\(2, 3\).*\(4,\)"),
        # unknown parameter
        (lambda: mx.nd._plus_scalar(x, scalar=1, bogus=2), ValueError, "no parameter 'bogus'"),
        # bad parameter value: names op, field and value
        (lambda: mx.nd._plus_scalar(x, scalar="abc"), ValueError,
         r"'_plus_scalar': parameter 'scalar' = 'abc'"),
        # out= of the wrong shape / dtype / device
        (lambda: mx.nd.broadcast_add(x, x, out=a["3x2"]), ValueError,
         r"out= array 0 has shape \(3, 2\) but the output has shape \(2, 3\)"),
        (lambda: mx.nd.broadcast_add(x, x, out=a["int"]), TypeError,
         "out= array 0 has dtype int32"),
        (lambda: mx.nd.broadcast_add(x, x, out=a["cpu1"]), mx.OperatorError,
         r"out= array 0 is on cpu\(1\)"),
        # a non-NDArray input
        (lambda: mx.nd.negative(np.ones(3)), TypeError, "negative"),
        # in-place result that cannot fit its target
        (lambda: x.__iadd__(a["4x2x3"]), ValueError, "out= array 0 has shape"),
    ]


@pytest.mark.parametrize("index", range(10))
def test_bad_calls_raise_before_pushing_and_leave_arrays_intact(naive_pushes, index):
    x = mx.nd.ones((2, 3))
    operands = {"cpu1": mx.nd.ones((2, 3), ctx=mx.cpu(1)), "four": mx.nd.ones((4,)),
                "3x2": mx.nd.zeros((3, 2)), "int": mx.nd.zeros((2, 3), dtype="int32"),
                "4x2x3": mx.nd.ones((4, 2, 3))}
    call, error, message = _bad_calls(x, operands)[index]
    before = len(naive_pushes)
    with pytest.raises(error, match=message):
        call()
    assert len(naive_pushes) == before, "a failing call pushed work"
    np.testing.assert_array_equal(x.asnumpy(), np.ones((2, 3)))
    mx.nd.waitall()  # no failure was left behind


def test_unknown_operator_suggests_close_names():
    with pytest.raises(AttributeError, match="did you mean broadcast_add"):
        _ = mx.nd.brodcast_add
    with pytest.raises(KeyError, match="did you mean broadcast_add"):
        mx.nd.invoke("brodcast_add", [mx.nd.ones(1), mx.nd.ones(1)])
    assert not hasattr(mx.nd, "no_such_operator_here")
    assert getattr(mx.nd, "no_such_operator_here", 3) == 3


def test_one_push_reads_inputs_and_writes_outputs(naive_pushes):
    x, y = mx.nd.ones((3,)), mx.nd.ones((3,))
    z = mx.nd.broadcast_add(x, y)
    name, reads, writes = naive_pushes[-1]
    assert name == "broadcast_add"
    assert reads == [x._var, y._var] and writes == [z._var]


def test_mutated_input_is_written_not_read(naive_pushes):
    data, aux = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    out = mx.nd._ndtest_aux(data, aux)
    name, reads, writes = naive_pushes[-1]
    assert reads == [data._var] and set(writes) == {out._var, aux._var}
    np.testing.assert_array_equal(out.asnumpy(), [1, 1])
    np.testing.assert_array_equal(aux.asnumpy(), [1, 1])


def test_resources_are_requested_and_mutated(naive_pushes):
    out = mx.nd._ndtest_random(mx.nd.zeros((50,)))
    name, reads, writes = naive_pushes[-1]
    random = mx.resource.request(mx.cpu(), mx.resource.ResourceRequest("random"))
    assert random.var in writes
    values = out.asnumpy()
    assert values.dtype == np.float32 and 0 <= values.min() and values.max() < 1


def test_hidden_outputs_are_computed_but_not_returned():
    out = mx.nd._ndtest_hidden(mx.nd.ones((2,)))
    assert isinstance(out, mx.nd.NDArray)
    np.testing.assert_array_equal(out.asnumpy(), [2, 2])


def test_operator_without_inputs_is_placed_by_ctx():
    x = mx.nd._ndtest_fill(shape=(2, 2), value=3, dtype="int32", ctx=mx.cpu(2))
    assert (x.shape, x.dtype, x.context) == ((2, 2), np.int32, mx.cpu(2))
    assert x.asnumpy().sum() == 12
    with mx.cpu(1):
        assert mx.nd._ndtest_fill(shape=(1,)).context == mx.cpu(1)
    assert mx.nd._ndtest_fill(shape=(1,), ctx="cpu(4)").context == mx.cpu(4)


def test_failure_is_raised_at_the_next_read(engine_name):
    x = mx.nd.ones((2,))
    y = mx.nd._ndtest_fail(x)  # returns at once
    z = y + 1  # depends on the failed result: skipped, inherits the failure
    with pytest.raises(mx.OperatorFailedError, match="_ndtest_fail.*planted kernel failure"):
        z.asnumpy()
    np.testing.assert_array_equal(x.asnumpy(), [1, 1])  # unaffected work goes on
    mx.nd.waitall()


def test_training_flag_reaches_the_kernel():
    x = mx.nd.ones((2,))
    assert mx.nd._ndtest_is_train(x).asnumpy().tolist() == [0, 0]
    previous = mx.nd.set_training(True)
    try:
        assert mx.nd.is_training()
        assert mx.nd._ndtest_is_train(x).asnumpy().tolist() == [1, 1]
    finally:
        mx.nd.set_training(previous)
    assert not mx.nd.is_training()


def test_out_argument_and_inplace_request():
    x = mx.nd.array([1, 2, 3])
    SEEN_REQS.clear()
    result = mx.nd._ndtest_double(x, out=x)
    assert result is x
    np.testing.assert_array_equal(x.asnumpy(), [2, 4, 6])
    assert SEEN_REQS == [OpReqType.INPLACE]
    y = mx.nd.zeros((3,))
    mx.nd._ndtest_double(x, out=y)
    np.testing.assert_array_equal(y.asnumpy(), [4, 8, 12])
    assert SEEN_REQS[-1] is OpReqType.WRITE


def test_aliased_out_without_inplace_support_is_computed_aside():
    x = mx.nd.array([1, 2, 3, 4])
    mx.nd._ndtest_reverse(x, out=x)  # an element-by-element kernel would corrupt its input
    np.testing.assert_array_equal(x.asnumpy(), [4, 3, 2, 1])
    y = mx.nd.array([1, 2, 3, 4, 5])
    mx.nd._ndtest_reverse(y[0:2], out=y[1:3])  # partial overlap of one chunk
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, 1, 4, 5])


def test_call_conventions():
    x = mx.nd.ones((2, 3))
    np.testing.assert_array_equal(mx.nd.broadcast_add(lhs=x, rhs=x).asnumpy(), 2 * np.ones((2, 3)))
    np.testing.assert_array_equal(mx.nd.broadcast_add(x, rhs=x, name="ignored").asnumpy(),
                                  2 * np.ones((2, 3)))
    np.testing.assert_array_equal(mx.nd._plus_scalar(x, 4).asnumpy(), 5 * np.ones((2, 3)))
    np.testing.assert_array_equal(mx.nd._ndtest_slow(x, 0.0, 2.0).asnumpy(), 3 * np.ones((2, 3)))
    with pytest.raises(TypeError, match="no input 'data'"):
        mx.nd.broadcast_add(x, data=x)
    with pytest.raises(TypeError, match="both positionally and as a keyword"):
        mx.nd._plus_scalar(x, 4, scalar=5)
    with pytest.raises(mx.OperatorError, match="missing input"):
        mx.nd.broadcast_add(rhs=x)
    # symbol attributes are ignored by imperative calls, as MXNet's (begin_state passes an
    # RNN cell's __layout__ to whatever function creates the states)
    np.testing.assert_array_equal(mx.nd.relu(x, __layout__="NC", lr_mult=2).asnumpy(),
                                  np.ones((2, 3)))
    assert mx.random.normal(0, 1, shape=(1, 2), __layout__="NC").shape == (1, 2)
    # a symbol given to mx.nd (hybrid_forward code that wrote nd. for F.) says so
    with pytest.raises(TypeError, match="input 0 must be an NDArray.*call F.Dropout"):
        mx.nd.Dropout(mx.sym.var("x"), p=0.1)


def test_variadic_operator_counts_its_inputs():
    a, b, c = mx.nd.ones((2, 1)), mx.nd.zeros((2, 2)), mx.nd.ones((2, 3))
    out = mx.nd.concat(a, b, c, dim=1)
    assert out.shape == (2, 6)
    np.testing.assert_array_equal(out.asnumpy()[0], [1, 0, 0, 1, 1, 1])
    assert mx.nd.invoke("Concat", [a, c], {"dim": 1}).shape == (2, 4)


def test_invoke_accepts_an_op_record():
    from .conftest import _unary

    op = _unary("_not_registered_square", lambda v: v * v)
    out = mx.nd.invoke(op, [mx.nd.array([3])])
    assert out.asscalar() == 9


def test_function_objects_have_name_doc_and_signature():
    import inspect

    fn = mx.nd.broadcast_add
    assert fn.__name__ == "broadcast_add"
    assert fn.__doc__
    params = inspect.signature(fn).parameters
    assert list(params)[:2] == ["lhs", "rhs"] and "out" in params
    assert "scalar" in inspect.signature(mx.nd._plus_scalar).parameters
    assert "broadcast_add" in dir(mx.nd)
    assert mx.nd._internal._plus_scalar(mx.nd.ones(1), scalar=1).asscalar() == 2
    assert mx.nd.op.broadcast_add is mx.nd.broadcast_add


def test_registry_reset_is_followed():
    from .conftest import _TestOpsPlugin

    fn = mx.nd.broadcast_add
    mx.plugins.reset()  # a new registry: cached operators must not be used
    mx.plugins.register(_TestOpsPlugin(), name="ndarray-test-ops")
    assert fn(mx.nd.ones(1), mx.nd.ones(1)).asscalar() == 2
    assert (mx.nd.ones(1) + mx.nd.ones(1)).asscalar() == 2
    assert mx.nd.invoke("broadcast_add", [mx.nd.ones(1), mx.nd.ones(1)]).asscalar() == 2


def test_prepared_calls_are_cached():
    first = mx.nd.prepared("_plus_scalar", {"scalar": 2})
    assert mx.nd.prepared("_plus_scalar", {"scalar": 2}) is first
    assert mx.nd.prepared("_plus_scalar", {"scalar": 3}) is not first
    assert mx.nd.prepared("_plus_scalar", {"scalar": 2.0}) is not first  # keyed by type too
    assert mx.nd.prepared("Concat", {"num_args": 2, "dim": [0][0]}) is \
        mx.nd.prepared("Concat", {"num_args": 2, "dim": 0})
