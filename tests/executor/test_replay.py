"""Replays: a kernel offers its run on a bound node as calls that redo it
(``NodeState.offer_replay``), and the executor runs those calls instead of the kernel for
as long as they hold -- no input they depend on written, their scope unchanged, the
configuration unchanged -- and the kernel again otherwise."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dagnet as mx
from dagnet.operator import XP, NoGradient, Op, elemwise_shape

_kernel_runs = []
_replayed = []
_scope = {"token": 0}
_status = {"next": 0}


def _token():
    return _scope["token"]


def _fail(status, call):
    raise RuntimeError(f"replayed call failed with status {status}")


def _scaled(attrs, ctx, inputs, req, outputs):
    """``x * w + aux``, offering the same product as its replay."""
    _kernel_runs.append(threading.get_ident())
    x, w, aux, out = inputs[0], inputs[1], inputs[2], outputs[0]
    np.multiply(x, w, out=out)
    out += aux

    def again():
        _replayed.append(threading.get_ident())
        np.multiply(x, w, out=out)
        np.add(out, aux, out=out)
        status, _status["next"] = _status["next"], 0
        return status

    ctx.state.offer_replay([again], (1, 2), _token, _fail)


_OP = Op("_test_replayed_scale", num_inputs=3, input_names=["data", "w", "aux"],
         mutate_inputs=[2], infer_shape=elemwise_shape("_test_replayed_scale"),
         compute={XP: _scaled}, gradient=NoGradient("test"))


def _one_worker():
    """The engine's workers restarted one per device (an earlier test may have left more):
    offers are made per thread, so each worker would run the kernels once."""
    mx.ndarray.waitall()
    mx.engine.current().shutdown()


@pytest.fixture
def executor(register, engine_name):
    _one_worker()
    register(_OP)
    _kernel_runs.clear()
    _replayed.clear()
    _scope["token"] = 0
    data, w, aux = (mx.sym.Variable(n) for n in ("data", "w", "aux"))
    first = mx.sym._test_replayed_scale(data, w, aux, name="first")
    second = mx.sym._test_replayed_scale(mx.sym.relu(first, name="r"), w, aux, name="second")
    return second.bind(mx.cpu(), {"data": mx.nd.full(3, 2.0), "w": mx.nd.full(3, 3.0)},
                       aux_states={"aux": mx.nd.zeros(3)})


def _forward(ex):
    return ex.forward()[0].asnumpy()


def test_a_chain_runs_again_by_the_calls_its_kernels_offered(executor):
    np.testing.assert_array_equal(_forward(executor), 18.0)
    assert (len(_kernel_runs), len(_replayed)) == (2, 0)
    for _ in range(3):
        np.testing.assert_array_equal(_forward(executor), 18.0)
    assert (len(_kernel_runs), len(_replayed)) == (2, 6)  # the relu between ran as a step


def test_new_data_is_replayed_and_a_written_parameter_runs_the_kernels(executor):
    _forward(executor)
    executor.arg_dict["data"][:] = -1.0  # what the calls read: they hold
    np.testing.assert_array_equal(_forward(executor), 0.0)
    assert len(_kernel_runs) == 2
    executor.arg_dict["w"][:] = -1.0  # what both offers depend on
    np.testing.assert_array_equal(_forward(executor), -1.0)  # relu(1) * -1
    assert len(_kernel_runs) == 4
    np.testing.assert_array_equal(_forward(executor), -1.0)
    assert len(_kernel_runs) == 4
    executor.aux_dict["aux"][:] = 1.0  # a mutated input: its own writes are not counted
    np.testing.assert_array_equal(_forward(executor), -1.0)  # relu(2) * -1 + 1
    assert len(_kernel_runs) == 6


def test_another_scope_or_configuration_runs_the_kernels(executor):
    _forward(executor)
    _scope["token"] = 1
    _forward(executor)
    assert len(_kernel_runs) == 4
    _forward(executor)
    assert len(_kernel_runs) == 4
    with mx.config.set(exec_replay=False):
        for _ in range(2):
            np.testing.assert_array_equal(_forward(executor), 18.0)
    assert len(_kernel_runs) == 8


def test_a_failing_call_raises_the_kernels_error_naming_the_node(executor):
    _forward(executor)
    _status["next"] = 7
    with pytest.raises(mx.MXNetError, match="status 7") as caught:
        _forward(executor)
    cause = caught.value.__cause__
    assert isinstance(cause, RuntimeError) and "raised by node 'first'" in cause.__notes__
    np.testing.assert_array_equal(_forward(executor), 18.0)  # the kernels, then replays
    assert len(_kernel_runs) == 4
    np.testing.assert_array_equal(_forward(executor), 18.0)
    assert len(_kernel_runs) == 4



@pytest.mark.parametrize("engine", ["threaded", "threaded_per_device"])
def test_workers_taking_turns_each_replay_their_own_offers(register, engine):
    register(_OP)
    _kernel_runs.clear()
    _replayed.clear()
    with mx.config.set(engine=engine, cpu_workers=2):
        _one_worker()  # two of them now
        data, w, aux = (mx.sym.Variable(n) for n in ("data", "w", "aux"))
        ex = mx.sym._test_replayed_scale(data, w, aux, name="only").bind(
            mx.cpu(), {"data": mx.nd.full(3, 2.0), "w": mx.nd.full(3, 3.0)},
            aux_states={"aux": mx.nd.zeros(3)})
        for _ in range(8):
            np.testing.assert_array_equal(_forward(ex), 6.0)
        assert len(_kernel_runs) + len(_replayed) == 8
        assert len(_kernel_runs) == len(set(_kernel_runs))  # once on each thread
        assert set(_replayed) <= set(_kernel_runs)  # each thread replays what it offered
    _one_worker()
