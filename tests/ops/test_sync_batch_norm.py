"""``_contrib_SyncBatchNorm`` across devices: ``ndev`` concurrent calls normalize their parts
of a batch as ``ndev=1`` normalizes the whole batch (forward, moving statistics, data
gradient), and a call whose partners never come fails with the key in the message.  (Forward
and gradient against numpy with ``ndev=1`` run in the conformance suite.)"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dagnet
from dagnet import engine
from dagnet.operator import get_op
from dagnet.testing.op_suite import run_kernel


def _run(name, arrays, params, train=True):
    op = get_op(name)
    attrs = op.parse_params(params)
    shapes = dtypes = None
    if op.is_backward:  # the gradients of data, gamma and beta
        x = arrays[-8]
        shapes, dtypes = [x.shape, (x.shape[1],), (x.shape[1],)], [x.dtype] * 3
    return run_kernel(op, attrs, arrays, backend=dagnet.plugins.backends()["cpu"],
                      engine=engine.create("naive"), is_train=train, out_shapes=shapes,
                      out_dtypes=dtypes)


def _parallel(jobs):
    results, errors = [None] * len(jobs), []

    def work(i):
        try:
            results[i] = jobs[i]()
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("fix_gamma", [True, False])
def test_devices_share_the_whole_batch_statistics(fix_gamma):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 2, (6, 3, 4))
    gamma, beta = rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3)
    stats = [np.zeros(3), np.ones(3)]
    dy = rng.uniform(-1, 1, x.shape)
    params = {"fix_gamma": fix_gamma, "key": "t", "output_mean_var": True}
    (y, mean, var), ins = _run("_contrib_SyncBatchNorm", [x, gamma, beta, *stats],
                               params)
    np.testing.assert_allclose(mean, x.mean(axis=(0, 2)))
    np.testing.assert_allclose(var, x.var(axis=(0, 2)))
    grads, _ = _run("_backward_contrib_SyncBatchNorm",
                    [dy, np.zeros(3), np.zeros(3), x, gamma, beta, *stats, y, mean, var],
                    params)
    parts = [slice(0, 2), slice(2, 6)]  # unequal parts: the counts are exchanged too
    split = {**params, "ndev": 2, "key": "t2"}
    forward = _parallel([lambda p=p: _run("_contrib_SyncBatchNorm",
                                          [x[p], gamma, beta, *stats], split) for p in parts])
    np.testing.assert_allclose(np.concatenate([f[0][0] for f in forward]), y)
    for (_, m, v), ins_part in forward:
        np.testing.assert_allclose(m, mean)
        np.testing.assert_allclose(v, var)
        np.testing.assert_allclose(ins_part[3], ins[3])  # the moving statistics
        np.testing.assert_allclose(ins_part[4], ins[4])
    backward = _parallel([lambda p=p, f=f: _run(
        "_backward_contrib_SyncBatchNorm",
        [dy[p], np.zeros(3), np.zeros(3), x[p], gamma, beta, *stats, *f[0]], split)[0]
        for p, f in zip(parts, forward)])
    np.testing.assert_allclose(np.concatenate([b[0] for b in backward]), grads[0])
    np.testing.assert_allclose(sum(b[2] for b in backward), grads[2])  # beta: per device
    np.testing.assert_allclose(sum(b[1] for b in backward), grads[1])


def test_a_device_left_alone_fails_naming_the_key(monkeypatch):
    from dagnet_ops.nn import sync_batch_norm

    monkeypatch.setattr(sync_batch_norm, "TIMEOUT", 0.05)
    x = np.ones((2, 3))
    with pytest.raises(Exception, match="key 'lonely/mean': 1 of ndev=2"):
        _run("_contrib_SyncBatchNorm", [x, np.ones(3), np.zeros(3), np.zeros(3), np.ones(3)],
             {"key": "lonely", "ndev": 2})


def test_one_device_trains_as_batchnorm():
    import dagnet as mx

    rng = np.random.default_rng(1)
    values = (rng.uniform(-1, 2, (4, 3, 2, 2)), rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3))
    head = mx.nd.array(rng.uniform(-1, 1, values[0].shape), dtype="float64")
    grads = []
    for op, extra in (("BatchNorm", {}), ("contrib.SyncBatchNorm", {"key": "one"})):
        arrays = [mx.nd.array(a, dtype="float64") for a in values]
        for a in arrays:
            a.attach_grad()
        stats = [mx.nd.zeros(3, dtype="float64"), mx.nd.ones(3, dtype="float64")]
        fn = mx.nd.contrib.SyncBatchNorm if "Sync" in op else mx.nd.BatchNorm
        with mx.autograd.record():
            y = fn(*arrays, *stats, fix_gamma=False, **extra)
        y.backward(head)
        grads.append([y.asnumpy()] + [a.grad.asnumpy() for a in arrays]
                     + [s.asnumpy() for s in stats])
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
