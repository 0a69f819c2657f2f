"""mx.rnn's encode_sentences, BucketSentenceIter and RNN checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def test_encode_sentences():
    result, vocab = mx.rnn.encode_sentences([["a", "b", "c"], ["b", "c", "d", "e"]],
                                            vocab={"a": 1, "b": 2, "c": 3}, start_label=0,
                                            unknown_token="UNK")
    assert vocab == {"a": 1, "b": 2, "c": 3, "UNK": 0}
    assert result == [[1, 2, 3], [2, 3, 0, 0]]
    fresh, built = mx.rnn.encode_sentences([["x", "y", "x"]], invalid_label=0, start_label=0)
    assert fresh == [[1, 2, 1]] and built == {"\n": 0, "x": 1, "y": 2}
    with pytest.raises(mx.MXNetError, match="'z' is not in the vocabulary"):
        mx.rnn.encode_sentences([["z"]], vocab={"a": 1})


def test_bucket_sentence_iter():
    sentences = [[1, 2], [3, 4], [5, 6, 7], [8, 9, 1], [2, 3, 4], [1] * 9]
    with pytest.warns(UserWarning, match="discarded 1"):
        it = mx.rnn.BucketSentenceIter(sentences, batch_size=2, buckets=[2, 4],
                                       invalid_label=0)
    assert it.default_bucket_key == 4 and it.provide_data[0].shape == (2, 4)
    batches = list(it)
    assert sorted(b.bucket_key for b in batches) == [2, 4]
    for b in batches:
        data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert data.shape == (2, b.bucket_key)
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        assert (label[:, -1] == 0).all()
    it.reset()
    assert len(list(it)) == 2
    tn = mx.rnn.BucketSentenceIter(sentences[:2], batch_size=2, layout="TN")
    batch = next(tn)
    assert batch.data[0].shape == (2, 2) and tn.provide_data[0].layout == "TN"


def test_rnn_checkpoint_unpacks_and_packs(tmp_path):
    cell = mx.rnn.GRUCell(2, prefix="g_")
    out, _ = cell.unroll(1, [mx.sym.Variable("x")])
    args = {"g_i2h_weight": mx.nd.ones((6, 3)), "g_h2h_weight": mx.nd.ones((6, 2)) * 2,
            "g_i2h_bias": mx.nd.zeros(6), "g_h2h_bias": mx.nd.arange(6)}
    prefix = str(tmp_path / "gru")
    mx.rnn.save_rnn_checkpoint(cell, prefix, 3, out[0], args, {})
    saved = mx.nd.load(f"{prefix}-0003.params")
    assert "arg:g_h2h_z_bias" in saved and "arg:g_h2h_bias" not in saved
    _, loaded, aux = mx.rnn.load_rnn_checkpoint([cell], prefix, 3)
    assert aux == {} and sorted(loaded) == sorted(args)
    np.testing.assert_array_equal(loaded["g_h2h_bias"].asnumpy(), np.arange(6))
    mx.rnn.do_rnn_checkpoint(cell, prefix, period=2)(1, out[0], args, {})
    assert (tmp_path / "gru-0002.params").exists()
