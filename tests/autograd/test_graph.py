"""What is recorded, and the errors for misuse of the graph."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import dagnet
from dagnet import autograd, nd


def _variable(values, grad_req="write"):
    array = nd.array(values)
    array.attach_grad(grad_req)
    return array


def test_errors_are_dagnet_errors():
    for cls in (autograd.AutogradError, autograd.AutogradArgumentError,
                autograd.NotDifferentiableError, autograd.HigherOrderGradientError):
        assert issubclass(cls, dagnet.DagnetError)
    assert issubclass(autograd.AutogradArgumentError, ValueError)
    assert issubclass(autograd.HigherOrderGradientError, NotImplementedError)


def test_attach_grad_gives_a_zero_buffer_of_the_same_shape_and_dtype():
    x = nd.array([[1, 2, 3]], dtype=np.float64)
    assert x.grad is None
    x.attach_grad()
    assert x.grad.shape == (1, 3) and x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="'coo'"):
        x.attach_grad(stype="coo")


def test_calls_without_inputs_in_a_graph_are_not_recorded():
    plain = nd.array([1.0, 2.0])
    with autograd.record():
        y = plain * 2
    with pytest.raises(autograd.AutogradError, match="not in a computational graph"):
        y.backward()


def test_backward_outside_record_is_refused():
    x = _variable([1.0])
    with pytest.raises(autograd.AutogradError, match=r"record\(\)"):
        (x * 2).backward()


def test_backward_twice_needs_retain_graph():
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    with pytest.raises(autograd.AutogradError, match="retain_graph=True"):
        y.backward()


def test_a_graph_freed_by_another_head_is_reported():
    x = _variable([1.0, 2.0])
    with autograd.record():
        shared = x * x
        first, second = shared * 2, shared * 3
    first.backward()
    with pytest.raises(autograd.AutogradError, match="freed by an earlier backward"):
        second.backward()


def test_no_variable_requiring_a_gradient():
    x = _variable([1.0], "null")
    with autograd.record():
        y = x * 2
    with pytest.raises(autograd.AutogradError, match="require gradients"):
        y.backward()


def test_head_gradient_count_and_shape_mismatches():
    x = _variable([1.0, 2.0, 3.0])
    with autograd.record():
        y, z = x * 2, x * 3
    with pytest.raises(autograd.AutogradArgumentError, match="2 head.* but 1 head gradient"):
        autograd.backward([y, z], [nd.ones((3,))])
    with pytest.raises(autograd.AutogradArgumentError, match=r"shape \(4,\) but head 0 has "
                                                               r"shape \(3,\)"):
        y.backward(nd.ones((4,)))


def test_grad_with_respect_to_a_non_variable():
    x = _variable([1.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(autograd.AutogradArgumentError, match="variable 1.*attach_grad"):
        autograd.grad(y, [x, nd.ones((1,))])


def test_create_graph_puts_the_gradient_in_a_graph():
    x = _variable([1.0])
    with autograd.record():
        y = nd.sin(x)
    plain = autograd.grad(y, [x], retain_graph=True)[0]
    recorded = autograd.grad(y, [x], create_graph=True)[0]
    assert not dagnet.runtime.in_graph(plain) and dagnet.runtime.in_graph(recorded)
    assert not autograd.is_recording()


def test_mark_variables_checks_its_arguments():
    x = nd.ones((2,))
    with pytest.raises(autograd.AutogradArgumentError, match="grad_req 'inplace'"):
        autograd.mark_variables([x], [nd.zeros((2,))], "inplace")
    with pytest.raises(autograd.AutogradArgumentError, match="1 variable.*2 gradient"):
        autograd.mark_variables([x], [nd.zeros((2,)), nd.zeros((2,))])
    with pytest.raises(autograd.AutogradArgumentError, match="shape"):
        autograd.mark_variables(x, nd.zeros((3,)))


@pytest.mark.parametrize("write", [
    lambda y: y.__iadd__(1),
    lambda y: y.__setitem__(slice(None), 0),
    lambda y: y.__setitem__(0, 5),
    lambda y: nd.relu(y, out=y),
    lambda y: nd.ones((3,)).copyto(y),
], ids=["+=", "y[:]=", "y[0]=", "out=", "copyto"])
def test_in_place_writes_into_the_graph_are_refused_while_recording(write):
    x = _variable([1.0, 2.0, 3.0])
    with autograd.record():
        y = x * 2
        with pytest.raises(autograd.AutogradError, match="recorded operator 'broadcast_mul'|"
                                                         "_mul_scalar|sharing memory"):
            write(y)
        with pytest.raises(autograd.AutogradError, match="a variable|sharing memory"):
            write(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 2.0, 2.0])
    x[:] = 5  # outside record: allowed
    write(y)  # the graph was freed by backward: allowed


def test_not_differentiable_operator_names_itself():
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = nd.sgd_update(x, nd.ones((2,)), lr=0.1) * 2
    with pytest.raises(autograd.NotDifferentiableError, match="'sgd_update'"):
        y.backward()


def test_the_graph_does_not_keep_arrays_alive_after_backward():
    x = _variable([1.0, 2.0])
    with autograd.record():
        hidden = nd.exp(x)  # exp keeps its output for the gradient
        y = hidden * 2
    ref = weakref.ref(hidden)
    del hidden
    y.backward()
    del y
    gc.collect()
    assert ref() is None


def test_recorded_outputs_hold_no_reference_cycle():
    x = _variable([1.0, 2.0])
    gc.collect()
    gc.disable()
    try:
        with autograd.record():
            y = nd.exp(x) * 2
        ref = weakref.ref(y)
        del y
        assert ref() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_fresh_grad_says_whether_backward_wrote_the_gradient():
    x, y = nd.ones((2,)), nd.ones((2,))
    dx, dy = nd.zeros((2,)), nd.zeros((2,))
    autograd.mark_variables([x, y], [dx, dy])
    assert not x._fresh_grad and not y._fresh_grad
    with autograd.record():
        (x + 2 + y).backward()
    assert x._fresh_grad and y._fresh_grad
    x._fresh_grad = y._fresh_grad = False
    with autograd.record():
        ((x + 2).detach() + y).backward()  # no gradient reaches x
    assert not x._fresh_grad and y._fresh_grad
    assert not nd.ones((2,))._fresh_grad
    with pytest.raises(AttributeError, match="attach_grad"):
        nd.ones((2,))._fresh_grad = True
