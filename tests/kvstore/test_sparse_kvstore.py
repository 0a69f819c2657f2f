"""``mx.kv`` with row_sparse values: pushes sum row by row (union of rows), pull leaves
sparse outputs alone unless asked, row_sparse_pull keeps only the requested rows, and
misuse gets MXNetErrors that say what to do."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.kvstore import KVStoreError

SHAPE = (5, 3)


def rsp(rows, shape=SHAPE, ctx=None, scale=1.0):
    rows = np.asarray(rows, dtype=np.int64)
    values = (np.arange(len(rows) * shape[1], dtype=np.float32).reshape(len(rows), -1) + 1) * scale
    return mx.nd.sparse.row_sparse_array((values, rows), shape=shape, ctx=ctx or mx.cpu())


@pytest.mark.parametrize("kind", ["local", "device"])
def test_push_of_row_sparse_values_sums_rows_of_every_device(kind):
    kv = mx.kv.create(kind)
    kv.init("w", mx.nd.sparse.zeros("row_sparse", SHAPE))
    a, b = rsp([0, 2]), rsp([2, 4], ctx=mx.cpu(1), scale=10)
    expected = a.asnumpy() + b.asnumpy()
    kv.push("w", [a, b])
    out = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.pull("w", out=out, ignore_sparse=False)
    assert out.stype == "row_sparse"
    np.testing.assert_allclose(out.asnumpy(), expected)
    assert sorted(out.indices.asnumpy().tolist()) == [0, 2, 4]
    dense = mx.nd.zeros(SHAPE)
    kv.pull("w", out=dense)
    np.testing.assert_allclose(dense.asnumpy(), expected)


def test_row_sparse_push_into_a_dense_key_is_pulled_dense():
    kv = mx.kv.create()
    kv.init(3, mx.nd.zeros(SHAPE))
    kv.push(3, [rsp([1]), rsp([1, 3])])
    out = mx.nd.empty(SHAPE)
    kv.pull(3, out=out)
    np.testing.assert_allclose(out.asnumpy(), rsp([1]).asnumpy() + rsp([1, 3]).asnumpy())


def test_pull_leaves_sparse_outputs_alone_by_default():
    kv = mx.kv.create()
    kv.init(3, mx.nd.ones(SHAPE))
    out = (mx.nd.ones(SHAPE) * 2).tostype("row_sparse")
    with pytest.warns(UserWarning, match="row_sparse_pull"):
        kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 2.0))


def test_row_sparse_pull_keeps_the_requested_rows_only():
    kv = mx.kv.create()
    value = mx.nd.array(np.arange(15, dtype=np.float32).reshape(SHAPE)).tostype("row_sparse")
    kv.init("e", value)
    outs = [mx.nd.sparse.zeros("row_sparse", SHAPE), mx.nd.sparse.zeros("row_sparse", SHAPE)]
    ids = [mx.nd.array([3, 1, 3]), mx.nd.array([[0, 4]])]
    kv.row_sparse_pull("e", out=outs, row_ids=ids)
    full = value.asnumpy()
    for out, rows in zip(outs, ([1, 3], [0, 4])):
        expected = np.zeros(SHAPE, np.float32)
        expected[rows] = full[rows]
        np.testing.assert_array_equal(out.asnumpy(), expected)
        assert out.indices.asnumpy().tolist() == rows
    # one row_ids for several outputs: every output gets those rows
    kv.row_sparse_pull("e", out=outs, row_ids=mx.nd.array([2]))
    for out in outs:
        assert out.indices.asnumpy().tolist() == [2]
        np.testing.assert_array_equal(out.asnumpy()[2], full[2])


def test_row_sparse_pull_errors_are_mxnet_errors():
    kv = mx.kv.create()
    kv.init("d", mx.nd.ones(SHAPE))
    kv.init("s", mx.nd.ones(SHAPE).tostype("row_sparse"))
    with pytest.raises(mx.base.MXNetError, match="must be row_sparse"):
        kv.row_sparse_pull("s", out=mx.nd.zeros(SHAPE), row_ids=mx.nd.array([1]))
    with pytest.raises(KVStoreError, match="needs a row_sparse"):
        kv.row_sparse_pull("d", out=mx.nd.sparse.zeros("row_sparse", SHAPE),
                           row_ids=mx.nd.array([1]))
    with pytest.raises(KVStoreError, match="row_ids"):
        kv.row_sparse_pull("s", out=[mx.nd.sparse.zeros("row_sparse", SHAPE)] * 3,
                           row_ids=[mx.nd.array([1])] * 2)
    with pytest.raises(mx.base.MXNetError):
        kv.row_sparse_pull(3, out=mx.nd.sparse.zeros("row_sparse", SHAPE),
                           row_ids=mx.nd.array([1]))
    csr = mx.nd.ones(SHAPE).tostype("csr")
    with pytest.raises(KVStoreError, match="csr"):
        kv.push("d", csr)


def test_updater_gets_the_row_sparse_sum():
    kv = mx.kv.create()
    kv.init(0, mx.nd.zeros(SHAPE))
    seen = []

    def updater(key, grad, weight):
        seen.append(grad.stype)
        weight += grad

    kv.set_updater(updater)
    for _ in range(2):
        kv.push(0, [rsp([0]), rsp([0, 1])])
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), 2 * (rsp([0]).asnumpy() + rsp([0, 1]).asnumpy()))
    assert seen == ["row_sparse", "row_sparse"]


def test_registered_stores_are_created_by_name():
    @mx.kv.KVStoreBase.register
    class SummingStoreForTests(mx.kv.TestStore):
        pass

    kv = mx.kv.create("summingstorefortests")
    assert isinstance(kv, SummingStoreForTests) and kv.type == "teststore"
    assert not kv.is_capable("optimizer")
    with pytest.raises(mx.base.MXNetError, match="capability"):
        kv.is_capable("compression")
    values = [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE, ctx=mx.cpu(1)) * 2]
    kv.pushpull(0, values)
    for value in values:
        np.testing.assert_array_equal(value.asnumpy(), np.full(SHAPE, 3.0))
    out = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE, ctx=mx.cpu(1))]
    kv.broadcast(0, mx.nd.ones(SHAPE), out)
    assert all((o.asnumpy() == 1).all() for o in out)
    assert isinstance(mx.kv.create("local"), mx.kv.KVStoreBase)
    del mx.kv.KVStoreBase.kv_registry["summingstorefortests"]
