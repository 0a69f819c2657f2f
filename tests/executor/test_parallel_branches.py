"""Independent branches of a bound graph run at the same time on the threaded engines.

Each branch is a ``_rendezvous`` node whose kernel waits at a two-party
barrier: the forward pass completes only if both branches are running at
once (with one worker, or pushed as one operation, the first would wait
alone and the barrier would break).  No timing is measured.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dagnet
import dagnet as mx
from dagnet.operator import XP, Op, assign, elemwise_shape

_BARRIER = threading.Barrier(2)


def _rendezvous_op() -> Op:
    def compute(attrs, ctx, inputs, req, outputs):
        _BARRIER.wait(timeout=10)  # BrokenBarrierError unless the other branch runs too
        assign(outputs[0], req[0], inputs[0] * 2)

    return Op("_rendezvous", input_names=["data"], infer_shape=elemwise_shape("_rendezvous"),
              compute={XP: compute})


class _Plugin:
    @dagnet.hookimpl
    def dagnet_register_ops(self, ops):
        ops.add(_rendezvous_op())


@pytest.fixture(autouse=True)
def rendezvous_op():
    dagnet.plugins.register(_Plugin(), name="executor-rendezvous-op")
    _BARRIER.reset()
    yield
    dagnet.ndarray.waitall()
    dagnet.plugins.reset()


def _branches(middle):
    data = mx.sym.Variable("data")
    start = mx.sym.relu(data, name="start")  # the branches share an input ...
    left = mx.sym.exp(middle(start, name="left"), name="left_exp")
    right = mx.sym.tanh(middle(start, name="right"), name="right_tanh")
    return mx.sym.Group([left, right])  # ... and join nowhere


@pytest.mark.parametrize("is_train", [False, True])
@pytest.mark.parametrize("engine", ["threaded", "threaded_per_device"])
def test_independent_branches_run_at_the_same_time(engine, is_train):
    net = _branches(mx.sym._rendezvous)
    # the two _rendezvous nodes compute the same thing: keep them apart (no merging);
    # outside training, branches are apart only when the pass is not bulked whole
    with dagnet.config.set(engine=engine, cpu_workers=2, eliminate_common_expr=False,
                           exec_bulk_inference=False):
        dagnet.engine.current().shutdown()  # the workers restart with two per device
        executor = net.simple_bind(mx.cpu(), grad_req="null", data=(3,))
        executor.forward(is_train=is_train, data=np.array([1.0, -2.0, 3.0]))
        got = [o.asnumpy() for o in executor.outputs]
    relu = np.maximum([1.0, -2.0, 3.0], 0)
    np.testing.assert_allclose(got[0], np.exp(2 * relu), rtol=1e-6)
    np.testing.assert_allclose(got[1], np.tanh(2 * relu), rtol=1e-6)


def test_an_inference_pass_is_one_engine_operation_as_mxnet_bulks_it():
    with dagnet.config.set(eliminate_common_expr=False):  # two branches, not one
        executor = _branches(mx.sym.sigmoid).simple_bind(mx.cpu(), grad_req="null",
                                                         data=(3,))
    executor.forward()[0].wait_to_read()
    runs = []
    dagnet.engine.add_listener(runs.append)
    try:
        executor.forward()[0].wait_to_read()
        with dagnet.config.set(exec_bulk_inference=False):  # the branches apart
            executor.forward()[0].wait_to_read()
    finally:
        dagnet.engine.remove_listener(runs.append)
    names = [run.name for run in runs if not run.name.startswith("wait_for_var")]
    assert names[0] == "start..right_tanh (5 nodes)"
    assert len(names) == 4  # then 'start', and each branch's chain
