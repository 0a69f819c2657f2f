"""DataDesc, DataBatch, the DataIter protocol and ResizeIter, as in MXNet 1.9.1."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx

X = np.arange(10).reshape(10, 1)


def test_data_desc():
    desc = mx.io.DataDesc("data", (2, 3), "int32", "NTC")
    assert desc == ("data", (2, 3)) and desc.name == "data" and desc.shape == (2, 3)
    assert (desc.dtype, desc.layout) == ("int32", "NTC")
    assert mx.io.DataDesc("x", (1,)).dtype is np.float32
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1
    assert mx.io.DataDesc.get_batch_axis(None) == 0
    assert mx.io.DataDesc.get_batch_axis("CHW") == -1
    descs = mx.io.DataDesc.get_list([("a", (1, 2)), ("b", (3,))], [("b", "int8"), ("a", "f2")])
    assert [(d.name, d.dtype) for d in descs] == [("a", "f2"), ("b", "int8")]
    assert mx.io.DataDesc.get_list([("a", (1,))], None)[0].dtype is np.float32


def test_data_batch():
    batch = mx.io.DataBatch([mx.nd.zeros((2, 3))], [mx.nd.zeros((2,))], pad=1)
    assert str(batch) == "DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]"
    assert (batch.pad, batch.index, batch.bucket_key) == (1, None, None)
    with pytest.raises(TypeError, match=r"wrap a single array as \[data\]"):
        mx.io.DataBatch(mx.nd.zeros((2,)))


def test_data_iter_protocol():
    class Counting(mx.io.DataIter):
        def __init__(self):
            super().__init__(batch_size=2)
            self.i = 0

        def iter_next(self):
            self.i += 1
            return self.i <= 2

        def getdata(self):
            return [mx.nd.array([self.i])]

    batches = list(Counting())
    assert [b.data[0].asnumpy().tolist() for b in batches] == [[1.0], [2.0]]
    assert (batches[0].label, batches[0].pad, batches[0].index) == (None, None, None)
    with pytest.raises(NotImplementedError, match="iter_next"):
        next(mx.io.DataIter())


def test_resize_iter_restarts_and_cuts():
    it = mx.io.ResizeIter(mx.io.NDArrayIter(X, np.arange(10), batch_size=4), 5)
    assert it.provide_data == [("data", (4, 1))] and it.batch_size == 4
    for _ in range(2):
        got = [(b.data[0].asnumpy().ravel().astype(int).tolist()[0], b.pad) for b in it]
        assert got == [(0, 0), (4, 0), (8, 2), (0, 0), (4, 0)]
        it.reset()


def test_resize_iter_without_internal_reset_continues():
    it = mx.io.ResizeIter(mx.io.NDArrayIter(X, batch_size=4), 2, reset_internal=False)
    firsts = []
    for _ in range(3):
        firsts.append([b.data[0].asnumpy().ravel().astype(int).tolist()[0] for b in it])
        it.reset()
    assert firsts == [[0, 4], [8, 0], [4, 8]]
    with pytest.raises(mx.ParamError, match="size"):
        mx.io.ResizeIter(mx.io.NDArrayIter(X), -1)


def test_lazy_submodule():
    import dagnet

    assert "io" in dagnet.__all__ and "io" in dir(dagnet)
    assert dagnet.io.NDArrayIter is mx.io.NDArrayIter
