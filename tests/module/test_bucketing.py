"""mx.mod.BucketingModule: buckets share parameters, gradients and the optimizer."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def _sym_gen(seq_len):
    data = mx.sym.Variable("data")
    weight = mx.sym.Variable("a", shape=(1,), init=mx.init.One())
    loss = mx.sym.MakeLoss(mx.sym.broadcast_mul(data, weight) * float(seq_len))
    return loss, ("data",), None


def _batch(key, n=2):
    return mx.io.DataBatch(data=[mx.nd.ones((n,))], label=None, bucket_key=key,
                           provide_data=[mx.io.DataDesc("data", (n,), layout="N")])


@pytest.mark.parametrize("grad_req,second", [("write", 2 * 5), ("add", 2 * 10 + 2 * 5)])
def test_buckets_share_gradient_arrays(grad_req, second):
    mod = mx.mod.BucketingModule(sym_gen=_sym_gen, default_bucket_key=10)
    mod.bind(data_shapes=[("data", (2,))], for_training=True, grad_req=grad_req)
    mod.init_params()
    mod.forward_backward(_batch(10))
    grad = mod._curr_module._exec_group.execs[0].grad_dict["a"]
    assert grad.asscalar() == 2 * 10
    mod.forward_backward(_batch(5))
    assert mod._curr_module._exec_group.execs[0].grad_dict["a"] is grad
    assert grad.asscalar() == second
    assert sorted(mod._buckets) == [5, 10]


def test_training_one_bucket_updates_all():
    mod = mx.mod.BucketingModule(sym_gen=_sym_gen, default_bucket_key=10)
    mod.bind(data_shapes=[("data", (2,))])
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1,
                                                          "rescale_grad": 1.0})
    mod.forward_backward(_batch(5))
    mod.update()
    assert mod.get_params()[0]["a"].asscalar() == pytest.approx(1 - 0.1 * 10)
    mod.forward(_batch(10), is_train=False)
    assert mod.get_outputs()[0].asnumpy().tolist() == pytest.approx([0.0, 0.0])


def _lstm_sym_gen(seq_len):
    data = mx.sym.Variable("data")
    label = mx.sym.Variable("softmax_label")
    embed = mx.sym.Embedding(data=data, input_dim=7, output_dim=4)
    cell = mx.rnn.LSTMCell(num_hidden=3, prefix="lstm_")
    outputs, _ = cell.unroll(seq_len, inputs=embed, merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, 3)), num_hidden=7,
                                 name="pred")
    loss = mx.sym.SoftmaxOutput(pred, mx.sym.Reshape(label, shape=(-1,)), name="softmax")
    return loss, ("data",), ("softmax_label",)


def test_fit_on_bucketed_sentences_and_checkpoint(tmp_path):
    rng = np.random.RandomState(0)
    sentences = [list(rng.randint(1, 7, size=n)) for n in [3] * 8 + [6] * 8]
    train = mx.rnn.BucketSentenceIter(sentences, batch_size=4, buckets=[3, 6],
                                      invalid_label=0)
    mod = mx.mod.BucketingModule(_lstm_sym_gen, default_bucket_key=train.default_bucket_key)
    assert mod.data_names == ["data"]
    mod.fit(train, num_epoch=2, optimizer="sgd",
            optimizer_params={"learning_rate": 0.1}, initializer=mx.init.Xavier())
    assert mod.symbol.list_arguments()[1] == "embedding0_weight"
    assert sorted(mod._buckets) == [3, 6]
    prefix = str(tmp_path / "bucket")
    mod.save_checkpoint(prefix, 2)
    assert (tmp_path / "bucket-3-symbol.json").exists()
    loaded = mx.mod.BucketingModule.load(prefix, 2, sym_gen=_lstm_sym_gen,
                                         default_bucket_key=6)
    loaded.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    want, got = mod.get_params()[0], loaded.get_params()[0]
    assert sorted(want) == sorted(got)
    for name in want:
        np.testing.assert_array_equal(want[name].asnumpy(), got[name].asnumpy())
    score = loaded.score(train, mx.metric.Perplexity(0))
    assert np.isfinite(score[0][1])


def test_errors():
    with pytest.raises(mx.MXNetError, match="default_bucket_key"):
        mx.mod.BucketingModule(_sym_gen)
    with pytest.raises(mx.MXNetError, match=r"must return \(symbol, data_names"):
        mx.mod.BucketingModule(lambda key: mx.sym.Variable("x"), default_bucket_key=1)

    def widening(n):
        data = mx.sym.Variable("data")
        return mx.sym.FullyConnected(data, num_hidden=n, name="fc"), ("data",), None

    mod = mx.mod.BucketingModule(widening, default_bucket_key=3)
    mod.bind(data_shapes=[("data", (2, 4))])
    mod.init_params()
    with pytest.raises(mx.MXNetError, match=r"'fc_weight' is shared .* \(3, 4\) .* \(5, 4\)"):
        mod.switch_bucket(5, [("data", (2, 4))])
