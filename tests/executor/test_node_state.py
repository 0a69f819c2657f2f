"""The state an executor gives each node's kernel (``OpContext.state``): kept from one run
to the next, with the engine versions of the node's inputs, so a kernel that derives
something from its parameters derives it again exactly when they were written."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.operator import XP, NoGradient, Op, elemwise_shape

_derived = []


def _scaled(attrs, ctx, inputs, req, outputs):
    """``x * w`` with ``w`` copied once per version of it (and of the aux input)."""
    state = ctx.state
    key = state.versions((1, 2))
    if state.cache.get("key") != key:
        state.cache.update(key=key, w=inputs[1].copy())
        _derived.append(key)
    outputs[0][...] = inputs[0] * state.cache["w"]


_OP = Op("_test_cached_scale", num_inputs=3, input_names=["data", "w", "aux"],
         mutate_inputs=[2], infer_shape=elemwise_shape("_test_cached_scale"), compute={XP: _scaled},
         gradient=NoGradient("test"))


@pytest.fixture
def scaled(register):
    register(_OP)
    _derived.clear()
    data, w, aux = (mx.sym.Variable(n) for n in ("data", "w", "aux"))
    return mx.sym._test_cached_scale(data, w, aux, name="s")


def test_a_node_derives_again_only_after_its_parameter_is_written(scaled, engine_name):
    ex = scaled.bind(mx.cpu(), {"data": mx.nd.ones(3), "w": mx.nd.full(3, 2.0)},
                     aux_states={"aux": mx.nd.zeros(3)})
    for _ in range(3):
        np.testing.assert_array_equal(ex.forward()[0].asnumpy(), 2.0)
    assert len(_derived) == 1  # its own writes of the aux input are not counted
    ex.arg_dict["w"][:] = 5.0
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), 5.0)
    ex.arg_dict["data"][:] = 3.0  # not a parameter the kernel derives from
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), 15.0)
    ex.aux_dict["aux"][:] = 1.0
    ex.forward()[0].wait_to_read()
    assert len(_derived) == 3


def test_an_imperative_call_has_no_node_state(register):
    seen = []

    def record(attrs, ctx, inputs, req, outputs):
        seen.append(ctx.state)
        outputs[0][...] = inputs[0]

    register(Op("_test_state_seen", compute={XP: record},
                infer_shape=elemwise_shape("_test_state_seen"),
                gradient=NoGradient("test")))
    mx.nd._test_state_seen(mx.nd.ones(2)).wait_to_read()
    assert seen == [None]
