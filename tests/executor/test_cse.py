"""Common-subexpression elimination at bind time (MXNet's MXNET_ELIMINATE_COMMON_EXPR)
and Executor.get_optimized_symbol."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
import dagnet as mx

a, b, c = (mx.sym.Variable(n) for n in "abc")
_D = a + 1


def _bind(sym, on):
    with dagnet.config.set(eliminate_common_expr=on):
        shapes = {n: (2, 3) for n in sym.list_arguments()}
        return sym.simple_bind(mx.cpu(), **shapes)


@pytest.mark.parametrize(("sym", "saved"), [
    ((a + 1) + (a + 2), 0),              # different parameters: kept
    ((a + b) + (a + b), 1),
    (((a + b) + c) + ((a + b) + c), 2),  # merging makes the outer sums equal too
    (mx.sym.Group([a * _D, a * _D]), 0),  # merged, then a copy keeps two outputs
    (mx.sym.Group([a * _D + b, a * _D + b]), 1),
    (mx.sym.Dropout(a, p=0.5) + mx.sym.Dropout(a, p=0.5), 0),  # random: never merged
    ((a + b) + (b + a), 0),              # inputs in another order: kept
])
def test_merges_what_computes_the_same(sym, saved):
    plain = len(_bind(sym, False).get_optimized_symbol().get_internals())
    merged = len(_bind(sym, True).get_optimized_symbol().get_internals())
    assert plain - merged == saved


def test_results_gradients_and_names_are_unchanged():
    sym = mx.sym.Group([mx.sym.tanh(a * b) + mx.sym.tanh(a * b), mx.sym.tanh(a * b)])
    rng = np.random.default_rng(0)
    values = {"a": rng.uniform(-1, 1, (2, 3)), "b": rng.uniform(-1, 1, (2, 3))}
    results = []
    for on in (False, True):
        ex = _bind(sym, on)
        outs = ex.forward(is_train=True, **values)
        ex.backward([mx.nd.ones((2, 3)), mx.nd.ones((2, 3))])
        assert list(ex.output_dict) == sym.list_outputs()
        results.append([o.asnumpy() for o in outs] + [g.asnumpy() for g in ex.grad_arrays])
    for plain, merged in zip(*results):
        np.testing.assert_allclose(plain, merged, rtol=1e-6)
    # the user's symbol is not changed by the pass
    assert len(sym.get_internals()) == 9


def test_duplicated_output_gets_its_own_array():
    sym = mx.sym.Group([a * b, a * b])
    ex = _bind(sym, True)
    first, second = ex.forward(a=np.ones((2, 3)), b=np.full((2, 3), 2.0))
    assert first._chunk is not second._chunk
    np.testing.assert_array_equal(second.asnumpy(), np.full((2, 3), 2.0))
    names = [s.name for s in ex.get_optimized_symbol()]
    assert names[1].endswith("_0_copy")


def test_auxiliary_state_writers_are_not_merged():
    data = mx.sym.Variable("data")
    gamma, beta = mx.sym.Variable("g"), mx.sym.Variable("bt")
    mean, var = mx.sym.Variable("m"), mx.sym.Variable("v")
    bn = [mx.sym.BatchNorm(data, gamma, beta, mean, var, name=f"bn{i}") for i in range(2)]
    sym = bn[0] + bn[1]
    ex = sym.simple_bind(mx.cpu(), data=(4, 3))
    ops = [n for n in ex.get_optimized_symbol().get_internals().list_outputs()
           if n.startswith("bn")]
    assert len(ops) == len([n for n in sym.get_internals().list_outputs() if n.startswith("bn")])
