"""Module behaviour MXNet code relies on: state inputs, output layouts, parameter
errors, batches without labels."""

from collections import namedtuple

import numpy as np
import pytest

import dagnet as mx


def test_state_names_are_inputs_set_and_read_per_device():
    data, state = mx.sym.var("data"), mx.sym.var("state")
    out = mx.sym.elemwise_add(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), state)
    mod = mx.mod.Module(out, label_names=None, state_names=["state"],
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (4, 2))], for_training=False)
    mod.init_params(initializer=mx.init.Zero())
    assert "state" not in mod.get_params()[0]
    mod.set_states(value=2)
    mod.forward(mx.io.DataBatch(data=[mx.nd.zeros((4, 2))], label=[]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((4, 3), 2.0))
    per_device = mod.get_outputs(merge_multi_context=False)
    mod.set_states(states=per_device)
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), np.full((4, 3), 2.0))
    with pytest.raises(ValueError, match="exactly one"):
        mod.set_states()
    with pytest.raises(ValueError, match="state_names|not an argument|state"):
        mx.mod.Module(out, label_names=None, state_names=["hidden"])


def test_outputs_join_along_their_layouts_batch_axis():
    sym = mx.sym.Activation(mx.sym.var("data"), act_type="relu", __layout__="TNC")
    mod = mx.mod.Module(sym, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (3, 8, 7), layout="TNC")])
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones((3, 8, 7))], label=None))
    mod.backward([mx.nd.ones((3, 8, 7))])
    assert mod.get_outputs()[0].shape == (3, 8, 7)
    assert [x.shape for x in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 4, 7)] * 2


def test_set_params_missing_is_a_runtime_error_and_extra_a_value_error():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[("data", (1, 2))])
    full = {"fc_weight": mx.nd.ones((2, 2)), "fc_bias": mx.nd.ones(2)}
    mod.set_params(full, {})
    with pytest.raises(RuntimeError, match="fc_bias"):
        mod.set_params({"fc_weight": mx.nd.ones((2, 2))}, {}, allow_missing=False)
    extra = dict(full, fc2_weight=mx.nd.ones(2))
    mod.set_params(extra, {}, allow_missing=True, allow_extra=True)
    with pytest.raises(ValueError, match="fc2_weight"):
        mod.set_params(extra, {}, allow_missing=True, allow_extra=False)


def test_forward_takes_a_batch_without_label_and_reshapes():
    Batch = namedtuple("Batch", ["data"])
    mod = mx.mod.Module(mx.sym.var("data") * 2, label_names=None)
    mod.bind(data_shapes=[("data", (1, 10))])
    mod.init_params()
    mod.forward(Batch([mx.nd.ones((3, 5))]))
    assert mod.get_outputs()[0].shape == (3, 5)




def test_base_module_set_params_goes_through_init_params():
    seen = {}
    mod = mx.mod.BaseModule()
    mod.init_params = lambda **kw: seen.update(kw)
    mod.set_params({"w": 1}, {}, allow_missing=True)
    assert seen["arg_params"] == {"w": 1} and seen["initializer"] is None
    assert seen["allow_missing"] is True


def test_total_exec_bytes_is_what_binding_allocated():
    sym = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=64),
                            act_type="relu")
    mod = mx.mod.Module(mx.sym.FullyConnected(sym, num_hidden=4), label_names=None)
    mod.bind(data_shapes=[("data", (32, 16))])
    assert mod._total_exec_bytes > 0
    before = mod._total_exec_bytes
    mod.reshape(data_shapes=[("data", (8, 16))])  # reshaping borrows: no new allocation
    assert mod._total_exec_bytes == before
