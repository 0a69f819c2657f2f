"""simple_bind's shared_arg_names / shared_buffer: parameters and inputs borrowed from
another executor and from a caller's buffer, as MXNet's module executor groups do."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def _net(n=3):
    data = mx.sym.Variable("data")
    return mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=n, name="fc"), name="bn")


def test_parameters_and_states_come_from_the_shared_executor_inputs_from_the_buffer():
    buffer = {}
    first = _net().simple_bind(mx.cpu(), data=(4, 5), shared_arg_names=["fc_weight", "fc_bias"],
                               shared_buffer=buffer)
    assert sorted(buffer) == ["bn_beta", "bn_gamma", "data", "grad of bn_beta",
                              "grad of bn_gamma", "grad of data"]
    second = _net().simple_bind(mx.cpu(), data=(4, 5), shared_exec=first,
                                shared_arg_names=["fc_weight", "fc_bias"], shared_buffer=buffer)
    for name in ("fc_weight", "fc_bias", "data", "bn_gamma"):
        assert second.arg_dict[name] is first.arg_dict[name], name
        assert second.grad_dict[name] is first.grad_dict[name], name
    assert second.aux_dict["bn_moving_mean"] is first.aux_dict["bn_moving_mean"]


def test_a_smaller_input_views_the_buffered_array_and_a_larger_replaces_it():
    buffer = {}
    big = _net().simple_bind(mx.cpu(), data=(4, 5), shared_buffer=buffer)
    small = _net().simple_bind(mx.cpu(), data=(2, 5), shared_buffer=buffer)
    big.arg_dict["data"][:] = np.arange(20).reshape(4, 5)
    np.testing.assert_array_equal(small.arg_dict["data"].asnumpy(), np.arange(10).reshape(2, 5))
    larger = _net().simple_bind(mx.cpu(), data=(6, 5), shared_buffer=buffer)
    assert buffer["data"] is larger.arg_dict["data"] and buffer["data"].shape == (6, 5)


def test_without_a_buffer_nothing_is_borrowed():
    first = _net().simple_bind(mx.cpu(), data=(4, 5))
    second = _net().simple_bind(mx.cpu(), data=(4, 5), shared_exec=first,
                                shared_arg_names=["fc_weight"])
    assert second.arg_dict["fc_weight"] is not first.arg_dict["fc_weight"]
    assert second.aux_dict["bn_moving_mean"] is not first.aux_dict["bn_moving_mean"]


def test_a_shared_parameter_of_another_shape_is_refused():
    first = _net(3).simple_bind(mx.cpu(), data=(4, 5), shared_buffer={})
    with pytest.raises(mx.ShapeError, match=r"'fc_weight' is shared .* \(3, 5\) .* \(6, 5\)"):
        _net(6).simple_bind(mx.cpu(), data=(4, 5), shared_exec=first,
                            shared_arg_names=["fc_weight"], shared_buffer={})
