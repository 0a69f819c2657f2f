"""gluon.data.DataLoader: batching, last_batch, worker processes and threads."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import data as gdata


class _Full(gdata.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, idx):
        return mx.nd.full((3,), idx)


class _Crashes(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        if idx == 5:
            os._exit(3)  # the worker process dies without a word
        return np.float32(idx)


class _Raises(gdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, idx):
        if idx == 2:
            raise KeyError("sample two is broken")
        return np.float32(idx)


def test_batches_keep_dtype_and_split_tuples():
    x = np.arange(20.0).reshape(10, 2)
    y = np.arange(10)
    loader = gdata.DataLoader(gdata.ArrayDataset(x, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    bx, by = batches[0]
    assert bx.dtype == np.float64 and by.dtype == y.dtype
    np.testing.assert_array_equal(bx.asnumpy(), x[:4])
    assert batches[-1][0].shape == (2, 2)


def test_last_batch_modes():
    ds = gdata.SimpleDataset(list(range(10)))
    assert len(list(gdata.DataLoader(ds, 4, last_batch="discard"))) == 2
    roll = gdata.DataLoader(ds, 4, last_batch="rollover")
    assert [b.asnumpy().tolist() for b in roll] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [b.asnumpy().tolist() for b in roll][0] == [8, 9, 0, 1]


def test_argument_errors():
    ds = gdata.SimpleDataset([1, 2])
    with pytest.raises(mx.MXNetError, match="batch_size"):
        gdata.DataLoader(ds)
    with pytest.raises(mx.MXNetError, match="not both"):
        gdata.DataLoader(ds, 1, shuffle=True, sampler=gdata.SequentialSampler(2))
    with pytest.raises(mx.MXNetError, match="batch_sampler"):
        gdata.DataLoader(ds, 1, batch_sampler=[[0, 1]])
    with pytest.raises(mx.MXNetError, match="timeout"):
        gdata.DataLoader(ds, 1, timeout=0)


def test_custom_batchify_and_batch_sampler():
    ds = gdata.SimpleDataset(list(range(6)))
    loader = gdata.DataLoader(ds, batch_sampler=[[5, 0], [2]], batchify_fn=sum)
    assert list(loader) == [5, 2]


@pytest.mark.parametrize("thread_pool", [False, True])
def test_workers_give_batches_in_order(thread_pool):
    loader = gdata.DataLoader(_Full(), batch_size=2, num_workers=3, thread_pool=thread_pool)
    for _epoch in range(2):
        got = [b.asnumpy()[:, 0].tolist() for b in loader]
        assert got == [[2 * i, 2 * i + 1] for i in range(6)]


def test_worker_processes_with_custom_batchify_and_tuples():
    ds = gdata.ArrayDataset(np.ones((7, 2), np.float32), np.arange(7))
    loader = gdata.DataLoader(ds, batch_size=3, num_workers=2, prefetch=1,
                              batchify_fn=lambda b: len(b))
    assert list(loader) == [3, 3, 1]
    x, y = next(iter(gdata.DataLoader(ds, batch_size=3, num_workers=2)))
    assert isinstance(x, mx.nd.NDArray) and x.shape == (3, 2) and y.asnumpy().tolist() == [0, 1, 2]


def _batch_in_a_forked_worker(samples):
    # what GluonNLP's own worker loop does: batchify in the worker, ForkingPickler back
    import io
    import pickle

    buffer = io.BytesIO()
    gdata.dataloader.ForkingPickler(buffer, pickle.HIGHEST_PROTOCOL).dump(
        gdata.default_mp_batchify_fn(samples))
    return buffer.getvalue()


def test_mp_batchify_gives_ndarrays_that_cross_processes():
    import multiprocessing
    import pickle

    samples = [(np.full(2, i, np.float32), i) for i in range(3)]
    x, y = gdata.default_mp_batchify_fn(samples)
    assert isinstance(x, mx.nd.NDArray) and isinstance(y, mx.nd.NDArray)
    assert x.dtype == np.float32 and x.shape == (3, 2)
    nested = gdata.default_mp_batchify_fn([mx.nd.ones(2), mx.nd.zeros(2)])
    assert isinstance(nested, mx.nd.NDArray) and nested.asnumpy().tolist() == [[1, 1], [0, 0]]
    with multiprocessing.get_context("fork").Pool(1) as pool:
        x, y = pickle.loads(pool.apply(_batch_in_a_forked_worker, (samples,)))
    assert isinstance(x, mx.nd.NDArray) and x.asnumpy()[:, 0].tolist() == [0, 1, 2]
    assert y.asnumpy().tolist() == [0, 1, 2]


def test_auto_reload_and_abandoned_pass():
    loader = gdata.DataLoader(_Full(), batch_size=4, num_workers=2, auto_reload=True)
    first = iter(loader)
    assert next(first).asnumpy()[0, 0] == 0
    del first  # its prefetched batches are dropped, not handed to the next pass
    assert [b.asnumpy()[0, 0] for b in loader] == [0, 4, 8]


def test_dead_worker_raises_naming_it():
    loader = gdata.DataLoader(_Crashes(), batch_size=2, num_workers=2, timeout=30)
    with pytest.raises(gdata.DataLoaderWorkerError, match=r"worker \d \(pid \d+\) exited"):
        list(loader)


def test_worker_exception_carries_its_traceback():
    loader = gdata.DataLoader(_Raises(), batch_size=1, num_workers=1)
    with pytest.raises(gdata.DataLoaderWorkerError, match="sample two is broken"):
        list(loader)
    threads = gdata.DataLoader(_Raises(), batch_size=1, num_workers=1, thread_pool=True)
    with pytest.raises(KeyError, match="sample two"):
        list(threads)


def test_pin_memory_copies_to_pinned_memory():
    batches = list(gdata.DataLoader(gdata.SimpleDataset([1.0, 2.0]), 2, pin_memory=True))
    assert batches[0].context == mx.Context("cpu_pinned", 0)
    x, y = next(iter(gdata.DataLoader(gdata.ArrayDataset(np.ones((2, 2)), [0, 1]), 2,
                                      num_workers=1, pin_memory=True)))
    assert x.context == y.context == mx.Context("cpu_pinned", 0)


class _Slow(gdata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, idx):
        import time

        time.sleep(30)
        return np.float32(idx)


def test_slow_batch_times_out():
    loader = gdata.DataLoader(_Slow(), batch_size=1, num_workers=1, timeout=0.3)
    with pytest.raises(gdata.DataLoaderTimeoutError, match="timeout=0.3"):
        next(iter(loader))
    del loader  # terminates the sleeping worker


def test_workers_exit_by_themselves_leaving_unread_batches():
    """Shutting a pool down with batches nobody read lets each worker exit on its own
    (exit code 0) instead of blocking on the full pipe until it is terminated."""
    from dagnet.gluon.data.worker_pool import ProcessWorkerPool

    big = np.zeros((64, 100_000), np.float32)  # each batch is far larger than a pipe's buffer
    pool = ProcessWorkerPool(2, big, lambda rows: np.stack(rows), timeout=30)
    for key in range(4):
        pool.submit(key, range(key * 8, key * 8 + 8))
    np.testing.assert_array_equal(pool.result(0), big[:8])
    workers = list(pool._workers)
    pool.shutdown()
    assert [proc.exitcode for proc in workers] == [0, 0]
