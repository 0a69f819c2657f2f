"""gluon.data.dataloader's _MultiWorkerIter: MXNet's iterator over a pool the caller made,
as libraries subclass it (GluonCV's RandomTransformDataLoader)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import time

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import data as gdata
from dagnet.gluon.data import dataloader as dl


class _Squares(gdata.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, idx):
        return mx.nd.array([idx * idx])


class _Slow(gdata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, idx):
        time.sleep(3)
        return np.float32(idx)


class _Raises(gdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, idx):
        if idx == 1:
            raise KeyError("sample one is broken")
        return np.float32(idx)


def _process_pool(dataset, workers=2):
    ctx = multiprocessing.get_context("fork")
    return ctx.Pool(workers, initializer=dl._worker_initializer, initargs=[dataset])


def _sampler(n, batch_size=3):
    return gdata.BatchSampler(gdata.SequentialSampler(n), batch_size, "keep")


def test_batches_come_back_in_order_from_a_process_pool():
    dataset = _Squares()
    pool = _process_pool(dataset)
    try:
        it = dl._MultiWorkerIter(pool, dl.default_mp_batchify_fn, _sampler(len(dataset)),
                                 prefetch=4)
        assert len(it) == 4 and iter(it) is it
        batches = list(it)
    finally:
        pool.terminate()
    # default_mp_batchify_fn's numpy batches become NDArrays, as MXNet's are
    assert all(isinstance(b, mx.nd.NDArray) for b in batches)
    got = np.concatenate([b.asnumpy().ravel() for b in batches])
    np.testing.assert_array_equal(got, [i * i for i in range(10)])


def test_the_mxnet_attributes_subclasses_use():
    dataset = _Squares()
    pool = _process_pool(dataset, 1)
    try:
        it = dl._MultiWorkerIter(pool, dl.default_batchify_fn, _sampler(len(dataset)),
                                 worker_fn=dl._worker_fn, prefetch=2)
        assert (it._sent_idx, it._rcvd_idx) == (2, 0) and sorted(it._data_buffer) == [0, 1]
        first = next(it)  # one more is sent as one is taken
        assert (it._sent_idx, it._rcvd_idx) == (3, 1)
        assert it._batchify_fn is dl.default_batchify_fn and it._worker_fn is dl._worker_fn
        # a subclass sends its own work the same way (GluonCV passes a transform too)
        indices = next(it._iter)
        it._data_buffer[it._sent_idx] = pool.apply_async(
            it._worker_fn, (indices, it._batchify_fn, None))
        it._sent_idx += 1
        rest = list(it)
    finally:
        pool.terminate()
    assert isinstance(first, mx.nd.NDArray)  # default_batchify_fn stacks NDArrays
    got = np.concatenate([first.asnumpy().ravel()] + [b.asnumpy().ravel() for b in rest])
    np.testing.assert_array_equal(got, [i * i for i in range(10)])


def test_a_thread_pool_with_the_thread_worker_fn():
    dataset = _Squares()
    pool = multiprocessing.pool.ThreadPool(2)
    try:
        it = dl._MultiWorkerIter(pool, dl.default_batchify_fn, _sampler(len(dataset), 4),
                                 worker_fn=dl._thread_worker_fn, prefetch=1, dataset=dataset)
        batches = list(it)
    finally:
        pool.terminate()
    assert [b.shape for b in batches] == [(4, 1), (4, 1), (2, 1)]


def test_pin_memory_moves_batches_to_pinned_memory():
    dataset = _Squares()
    pool = multiprocessing.pool.ThreadPool(1)
    try:
        it = dl._MultiWorkerIter(pool, dl.default_batchify_fn, _sampler(len(dataset)),
                                 pin_memory=True, worker_fn=dl._thread_worker_fn,
                                 dataset=dataset)
        assert next(it).context == mx.Context("cpu_pinned", 0)
    finally:
        pool.terminate()


def test_a_late_batch_raises_a_timeout_error_naming_the_batch():
    pool = multiprocessing.pool.ThreadPool(1)
    dataset = _Slow()
    try:
        it = dl._MultiWorkerIter(pool, dl.default_batchify_fn, _sampler(2, 1),
                                 worker_fn=dl._thread_worker_fn, dataset=dataset, timeout=0.2)
        with pytest.raises(gdata.DataLoaderTimeoutError, match="batch 0") as info:
            next(it)
        assert isinstance(info.value, multiprocessing.TimeoutError)  # what MXNet raises
    finally:
        pool.terminate()


def test_a_worker_error_reaches_the_caller():
    dataset = _Raises()
    pool = _process_pool(dataset, 1)
    try:
        it = dl._MultiWorkerIter(pool, dl.default_batchify_fn, _sampler(4, 2))
        with pytest.raises(KeyError, match="sample one"):
            next(it)
    finally:
        pool.terminate()


def test_worker_fn_outside_an_initialized_pool_says_how_to_start_it(monkeypatch):
    monkeypatch.setattr(dl, "_worker_dataset", None)
    with pytest.raises(RuntimeError, match="initializer=_worker_initializer"):
        dl._worker_fn([0], dl.default_batchify_fn)
