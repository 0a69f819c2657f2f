"""Ctrl-C in the blocking calls users make, on every engine: reading an array
(``asnumpy``, ``wait_to_read``, ``waitall``), an executor's forward and backward,
a kvstore pull, a DataLoader pass.  Each raises KeyboardInterrupt within
``PROMPT`` seconds of SIGINT, and afterwards the same call works and gives the
right values.  The slow operator is a custom operator that waits for a gate.

On the naive engine the operator runs inside the call that pushes it, and it is
the operator that Ctrl-C interrupts: the push raises, and what it writes is
reported as failed once (here, by ``settle``).  On the threaded engines it runs
on a worker, and Ctrl-C interrupts the wait for it.
"""

from __future__ import annotations

import multiprocessing
import threading

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon.data import DataLoader, Dataset
from dagnet.test_utils import assert_almost_equal
from dagnet.testing.ctrl_c import interrupted

GUARD = 10.0  # seconds a gated wait lasts at most: a test fails instead of hanging
GATE = threading.Event()


class Gated(mx.operator.CustomOp):
    """Doubles its input, once the gate is open."""

    def forward(self, is_train, req, in_data, out_data, aux):
        GATE.wait(GUARD)
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        GATE.wait(GUARD)
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


@mx.operator.register("ctrl_c_gated")
class GatedProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Gated()


@pytest.fixture
def gate():
    """The gate, closed for the test and open afterwards."""
    GATE.clear()
    yield GATE
    GATE.set()


def settle() -> None:
    """What a program does after catching Ctrl-C: wait for all the work.  A function
    the Ctrl-C interrupted (on the naive engine) is reported, once."""
    try:
        mx.nd.waitall()
    except mx.OperatorFailedError as exc:
        assert "interrupted" in str(exc), exc
    mx.nd.waitall()


WAITS = {
    "asnumpy": lambda array: array.asnumpy(),
    "wait_to_read": lambda array: array.wait_to_read(),
    "waitall": lambda array: mx.nd.waitall(),
}


@pytest.mark.parametrize("wait", sorted(WAITS))
def test_reading_an_array(engine_name, gate, wait):
    x = mx.nd.ones((2, 3))
    interrupted(lambda: WAITS[wait](mx.nd.Custom(x, op_type="ctrl_c_gated")))
    gate.set()
    settle()
    assert_almost_equal(mx.nd.Custom(x, op_type="ctrl_c_gated").asnumpy(), np.full((2, 3), 2.0))


@pytest.mark.parametrize("step", ["forward", "backward"])
def test_executor(engine_name, gate, step):
    net = mx.sym.Custom(mx.sym.Variable("data"), op_type="ctrl_c_gated", name="gated")
    exe = net.simple_bind(mx.cpu(), data=(2, 3))
    exe.arg_dict["data"][:] = 1.5
    head = mx.nd.ones((2, 3))
    if step == "backward":
        gate.set()
        exe.forward(is_train=True)
        exe.outputs[0].wait_to_read()
        gate.clear()

        def call():
            exe.backward(head)
            exe.grad_dict["data"].asnumpy()
    else:
        def call():
            exe.forward(is_train=True)
            exe.outputs[0].asnumpy()

    interrupted(call)
    gate.set()
    settle()
    exe.forward(is_train=True)
    exe.backward(head)
    assert_almost_equal(exe.outputs[0].asnumpy(), np.full((2, 3), 3.0))
    assert_almost_equal(exe.grad_dict["data"].asnumpy(), np.full((2, 3), 2.0))


def test_kvstore_pull(engine_name, gate):
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.zeros((2, 3)))
    out = mx.nd.zeros((2, 3))

    def call():
        kv.push("w", mx.nd.Custom(mx.nd.ones((2, 3)), op_type="ctrl_c_gated"))
        kv.pull("w", out=out)
        out.asnumpy()

    interrupted(call)
    gate.set()
    settle()
    kv.push("w", mx.nd.full((2, 3), 3.0))
    kv.pull("w", out=out)
    assert_almost_equal(out.asnumpy(), np.full((2, 3), 3.0))


class SlowAfterTwo(Dataset):
    """Eight items; from the third on, each waits for ``release`` first."""

    def __init__(self, release):
        self._release = release

    def __len__(self):
        return 8

    def __getitem__(self, index):
        if index >= 2:
            self._release.wait(GUARD)
        return np.full((2,), index, dtype=np.float32)


@pytest.mark.parametrize("workers", ["processes", "threads"])
def test_dataloader_pass(engine_name, workers):
    """Ctrl-C while a DataLoader pass waits for a batch ends the pass (nothing stays
    in flight); the next pass gives every batch."""
    if workers == "processes" and "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the worker processes share the dataset's event through fork")
    release = (multiprocessing.get_context("fork").Event() if workers == "processes"
               else threading.Event())
    loader = DataLoader(SlowAfterTwo(release), batch_size=2, num_workers=2,
                        thread_pool=workers == "threads")
    batches = iter(loader)
    assert_almost_equal(next(batches).asnumpy(), [[0, 0], [1, 1]])
    interrupted(lambda: next(batches))
    release.set()
    assert list(batches) == []  # the interrupted pass is over
    values = [batch.asnumpy() for batch in loader]
    assert_almost_equal(np.concatenate(values), np.repeat(np.arange(8), 2).reshape(8, 2))
