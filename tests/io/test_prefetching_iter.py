"""PrefetchingIter: order and renaming as in MXNet, reading ahead on its thread, the
producer's exception re-raised to the consumer, and a clean, bounded shutdown."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import dagnet as mx

X = np.arange(10).reshape(10, 1)
WAIT = 10  # seconds; every wait in these tests is bounded


def values(batch):
    return [a.asnumpy().ravel().astype(int).tolist() for a in batch.data + batch.label]


class Recording(mx.io.DataIter):
    """Batches 0..n-1 (each a one-element array), recording which were produced; fails
    at batch ``fail_at`` and can be held before producing ``hold_at``."""

    def __init__(self, n=5, fail_at=None, hold_at=None):
        super().__init__(batch_size=1)
        self.n, self.fail_at, self.hold_at = n, fail_at, hold_at
        self.produced = []
        self.release = threading.Event()
        self.cursor = 0
        self.provide_data = [mx.io.DataDesc("data", (1,))]
        self.provide_label = []

    def reset(self):
        self.cursor = 0

    def next(self):
        if self.cursor == self.hold_at:
            assert self.release.wait(WAIT)
        if self.cursor == self.fail_at:
            self.cursor += 1
            raise ValueError(f"broken record {self.cursor - 1}")
        if self.cursor >= self.n:
            raise StopIteration
        self.produced.append(self.cursor)
        self.cursor += 1
        return mx.io.DataBatch([mx.nd.array([self.cursor - 1])], [], pad=0)


def wait_until(predicate):
    for _ in range(WAIT * 100):
        if predicate():
            return
        threading.Event().wait(0.01)
    raise AssertionError("condition not reached in time")


def test_joins_iterators_in_order_and_renames():
    first = mx.io.NDArrayIter(X, np.arange(10), batch_size=4)
    second = mx.io.NDArrayIter(X * 3, np.arange(10) * 3, batch_size=4, data_name="d2",
                               label_name="l2")
    with mx.io.PrefetchingIter([first, second], rename_data=[{"data": "x1"}, {"d2": "x2"}]) as it:
        assert it.provide_data == [("x1", (4, 1)), ("x2", (4, 1))]
        assert it.provide_label == [("softmax_label", (4,)), ("l2", (4,))]
        assert it.batch_size == 4
        for _ in range(2):
            batches = list(it)
            assert [values(b) for b in batches][2] == [[8, 9, 0, 1], [24, 27, 0, 3],
                                                       [8, 9, 0, 1], [24, 27, 0, 3]]
            assert [b.pad for b in batches] == [0, 0, 2]
            assert batches[0].provide_data == it.provide_data
            it.reset()


def test_reads_one_batch_ahead_and_no_more():
    source = Recording(n=5)
    with mx.io.PrefetchingIter(source) as it:
        wait_until(lambda: source.produced == [0])
        assert values(next(it)) == [[0]]
        wait_until(lambda: source.produced == [0, 1])
        threading.Event().wait(0.05)
        assert source.produced == [0, 1]  # bounded: nothing beyond the next batch
        assert [values(b) for b in it] == [[[1]], [[2]], [[3]], [[4]]]
        assert list(it) == []


def test_producer_exception_reaches_the_consumer():
    source = Recording(n=5, fail_at=2)
    with mx.io.PrefetchingIter(source) as it:
        assert values(next(it)) == [[0]] and values(next(it)) == [[1]]
        with pytest.raises(ValueError, match="broken record 2") as info:
            next(it)
        # The traceback still reaches the frame that raised on the producer's thread.
        assert any(entry.name == "next" and entry.path.name == "test_prefetching_iter.py"
                   for entry in info.traceback)
        # The iterator goes on after the failure, as the inner iterator does.
        assert values(next(it)) == [[3]]


def test_close_stops_the_thread_and_later_use_is_an_error():
    it = mx.io.PrefetchingIter(Recording(n=3))
    thread = it._thread
    it.close(timeout=WAIT)
    assert not thread.is_alive()
    it.close()
    with pytest.raises(mx.io.IteratorClosedError, match="create a new one"):
        next(it)


def test_close_waits_for_a_fetch_in_progress():
    source = Recording(n=3, hold_at=0)
    it = mx.io.PrefetchingIter(source)
    closer = threading.Thread(target=it.close, kwargs={"timeout": WAIT})
    closer.start()
    source.release.set()
    closer.join(WAIT)
    assert not closer.is_alive() and not it._thread.is_alive()


def test_garbage_collection_stops_the_thread():
    it = mx.io.PrefetchingIter(Recording(n=3))
    thread = it._thread
    del it
    gc.collect()
    thread.join(WAIT)
    assert not thread.is_alive()


def test_reset_mid_epoch_drops_the_prefetched_batch():
    with mx.io.PrefetchingIter(mx.io.NDArrayIter(X, batch_size=4)) as it:
        next(it)
        it.reset()
        assert [values(b)[0] for b in it] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]


def test_iterators_of_different_lengths():
    short = mx.io.NDArrayIter(X[:4], batch_size=4)
    long = mx.io.NDArrayIter(X, batch_size=4, data_name="d2")
    with mx.io.PrefetchingIter([short, long]) as it:
        next(it)
        with pytest.raises(mx.ShapeError, match=r"iterator\(s\) \[0\] ran out"):
            next(it)


def test_rename_errors():
    with pytest.raises(mx.ParamError, match="'dta'.*its names are 'data'"):
        mx.io.PrefetchingIter(mx.io.NDArrayIter(X), rename_data=[{"dta": "x"}])
    with pytest.raises(TypeError, match="list of 1 dict"):
        mx.io.PrefetchingIter(mx.io.NDArrayIter(X), rename_data={"data": "x"})
    with pytest.raises(mx.ParamError, match="iters is empty"):
        mx.io.PrefetchingIter([])
