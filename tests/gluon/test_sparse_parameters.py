"""Gluon with sparse storage: row_sparse Parameters read through their Trainer's store,
row_sparse gradients (Embedding(sparse_grad=True)) updated lazily, and the storage rules
of Trainer and clip_global_norm."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet import gluon


def test_row_sparse_parameter_needs_a_trainer_and_refuses_dense_reads(tmp_path):
    p = gluon.Parameter("w", shape=(4, 2), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(init=mx.init.One(), ctx=[mx.cpu(0), mx.cpu(1)])
    assert p.stype == "row_sparse" and p.grad(mx.cpu(0)).stype == "row_sparse"
    rows = mx.nd.array([2, 0], ctx=mx.cpu(1))
    with pytest.raises(mx.base.MXNetError, match="no Trainer"):
        p.row_sparse_data(rows)
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.data()
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.list_data()
    gluon.Trainer([p], "sgd")
    got = p.row_sparse_data(rows)
    assert got.context == mx.cpu(1) and got.stype == "row_sparse"
    expected = np.zeros((4, 2), np.float32)
    expected[[0, 2]] = 1
    np.testing.assert_array_equal(got.asnumpy(), expected)
    assert len(p.list_row_sparse_data(rows)) == 2
    assert p.var().attr("__storage_type__") == "1"
    with pytest.raises(RuntimeError, match="More than one trainer"):
        gluon.Trainer([p], "sgd")
    dense = gluon.Parameter("d", shape=(4, 2))
    dense.initialize()
    with pytest.raises(RuntimeError, match="data\\(\\) instead"):
        dense.row_sparse_data(rows)


def test_sparse_parameter_saves_all_rows_and_loads_into_dense(tmp_path):
    params = gluon.ParameterDict("net_")
    params.get("w", shape=(3, 2), stype="row_sparse", init=mx.init.Constant(2.0))
    params.initialize(ctx=mx.cpu())
    gluon.Trainer(params, "sgd")
    fname = str(tmp_path / "p.params")
    params.save(fname)
    dense = gluon.ParameterDict("net_")
    dense.get("w", shape=(3, 2))
    dense.load(fname, mx.cpu())
    np.testing.assert_array_equal(dense.get("w").data().asnumpy(), np.full((3, 2), 2.0))


def test_row_sparse_weight_is_updated_on_the_store_lazily():
    x = gluon.Parameter("x", shape=(6, 1), stype="row_sparse", grad_stype="row_sparse")
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="ones")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 0.5, "wd": 0.1})
    rows = mx.nd.array([1, 4])
    with mx.autograd.record():
        for w in x.list_row_sparse_data(rows):
            ids = rows.as_in_context(w.context)
            (mx.nd.Embedding(ids, w, input_dim=6, output_dim=1, sparse_grad=True) * 2).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is True
    out = x.row_sparse_data(mx.nd.arange(0, 6)).asnumpy().ravel()
    # the gradient holds the looked-up rows (2 per device, summed over 2 devices: 4);
    # weight decay applies to those rows only
    expected = np.ones(6, np.float32)
    expected[[1, 4]] = 1 - 0.5 * (4 + 0.1 * 1)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="update_on_kvstore=False"):
        y = gluon.Parameter("y", shape=(2, 1), stype="row_sparse")
        y.initialize()
        gluon.Trainer([y], "sgd", update_on_kvstore=False)._init_kvstore()


@pytest.mark.parametrize("update_on_kvstore", [None, True])
def test_dense_weight_with_sparse_gradients_over_devices(update_on_kvstore):
    layer = gluon.nn.Embedding(6, 2, sparse_grad=True)
    layer.initialize(mx.init.Zero(), ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = gluon.Trainer(layer.collect_params(), "sgd",
                            {"learning_rate": 1.0, "momentum": 0.5},
                            update_on_kvstore=update_on_kvstore)
    batches = [mx.nd.array([0, 2], ctx=mx.cpu(0)), mx.nd.array([2, 5], ctx=mx.cpu(1))]
    with mx.autograd.record():
        losses = [layer(b).sum() for b in batches]
    for loss in losses:
        loss.backward()
    assert layer.weight.grad(mx.cpu(0)).stype == "row_sparse"
    trainer.step(1)
    assert trainer._update_on_kvstore is bool(update_on_kvstore)
    expected = np.zeros((6, 2), np.float32)
    expected[[0, 5]] = -1
    expected[2] = -2
    for ctx in (mx.cpu(0), mx.cpu(1)):
        np.testing.assert_allclose(layer.weight.data(ctx).asnumpy(), expected)


def test_embedding_sparse_grad_holds_the_looked_up_rows():
    layer = gluon.nn.Embedding(10, 3, sparse_grad=True)
    layer.initialize()
    with mx.autograd.record():
        y = layer(mx.nd.array([3, 1, 3]))
    y.backward()
    grad = layer.weight.grad()
    assert grad.stype == "row_sparse"
    expected = np.zeros((10, 3), np.float32)
    expected[1] = 1
    expected[3] = 2
    np.testing.assert_array_equal(grad.asnumpy(), expected)


def test_clip_global_norm_of_row_sparse_arrays():
    a = mx.nd.ones((3, 3)).tostype("row_sparse")
    b = mx.nd.ones((4, 4))
    norm = gluon.utils.clip_global_norm([a, b], 1.0)
    assert norm == pytest.approx(5.0)
    assert a.stype == "row_sparse"
    np.testing.assert_allclose(a.asnumpy(), np.full((3, 3), 0.2), rtol=1e-6)


def test_symbol_block_refuses_row_sparse_variables():
    data = mx.sym.var("data")
    weight = mx.sym.var("weight", stype="row_sparse")
    with pytest.raises(AssertionError, match="row_sparse"):
        gluon.SymbolBlock(mx.sym.dot(data, weight), data)
