"""Module with sparse storage: parameters keep the storage type their variables declare
(``var(..., stype='row_sparse')``), sparse values load into the dense executors, and a
model fed csr batches trains."""

from __future__ import annotations

import numpy as np

import dagnet as mx


def regression(features):
    x = mx.sym.var("data", stype="csr")
    v = mx.sym.var("v", shape=(features, 1), init=mx.init.Uniform(scale=0.1), stype="row_sparse")
    y = mx.sym.var("label")
    return mx.sym.LinearRegressionOutput(data=mx.sym.dot(x, v), label=y, name="out")


def test_declared_row_sparse_parameter_is_initialized_sparse():
    n, m = 8, 5
    it = mx.io.NDArrayIter(data=mx.nd.zeros((n, m), stype="csr"),
                           label={"label": mx.nd.zeros((n, 1))}, batch_size=n,
                           last_batch_handle="discard")
    mod = mx.mod.Module(regression(m), data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params()
    v = mod._arg_params["v"]
    assert v.stype == "row_sparse"
    assert np.abs(v.asnumpy()).sum() > 0
    # the executors got the same values, densely
    dense = mod._exec_group.execs[0].arg_dict["v"]
    np.testing.assert_allclose(dense.asnumpy(), v.asnumpy())
    arg, _ = mod.get_params()
    assert arg["v"].stype == "row_sparse"
    np.testing.assert_allclose(arg["v"].asnumpy(), v.asnumpy())


def test_module_trains_on_csr_batches():
    rng = np.random.default_rng(0)
    n, m = 32, 6
    features = np.where(rng.random((n, m)) < 0.5, rng.random((n, m)), 0).astype(np.float32)
    truth = rng.uniform(-1, 1, (m, 1)).astype(np.float32)
    it = mx.io.NDArrayIter(data=mx.nd.sparse.csr_matrix(features),
                           label={"label": mx.nd.array(features @ truth)}, batch_size=8,
                           last_batch_handle="discard")
    mod = mx.mod.Module(regression(m), data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    metric = mx.metric.create("mse")
    errors = []
    for _ in range(15):
        it.reset()
        metric.reset()
        for batch in it:
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            mod.update()
        errors.append(metric.get()[1])
    assert errors[-1] < errors[0] / 4
