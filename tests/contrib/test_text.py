"""contrib.text: token counting, vocabularies, embeddings from local files, composite
embeddings, the embedding registry, and errors for bad input."""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
import pytest

import dagnet as mx
from dagnet.contrib import text

COUNTER = Counter(["a", "b", "b", "c", "c", "c", "z$"])


def _write(path, lines, delim="\t"):
    path.write_text("".join(delim.join(line) + "\n" for line in lines))
    return str(path)


def test_count_tokens_with_regex_delimiters():
    src = "*Life*is*great*!*\n*life*is*good*.*\n"
    assert text.utils.count_tokens_from_str(src, r"\*", "\n", to_lower=True) == Counter(
        {"life": 2, "is": 2, "great": 1, "!": 1, "good": 1, ".": 1})
    base = Counter({"life": 1})
    same = text.utils.count_tokens_from_str("life x", counter_to_update=base)
    assert same is base and base == Counter({"life": 2, "x": 1})


def test_vocabulary_order_and_limits():
    v = text.vocab.Vocabulary(COUNTER)
    assert v.idx_to_token == ["<unk>", "c", "b", "a", "z$"]
    assert len(text.vocab.Vocabulary(COUNTER, min_freq=2)) == 3
    assert text.vocab.Vocabulary(COUNTER, most_freq_count=1).idx_to_token == ["<unk>", "c"]
    r = text.vocab.Vocabulary(COUNTER, min_freq=2, unknown_token="b", reserved_tokens=["<p>"])
    assert r.token_to_idx == {"b": 0, "<p>": 1, "c": 2}
    assert r.reserved_tokens == ["<p>"]
    tuples = text.vocab.Vocabulary(Counter([("x", 1), ("x", 1), ("y", 2)]),
                                   unknown_token=("?", 0))
    assert tuples.idx_to_token == [("?", 0), ("x", 1), ("y", 2)]


def test_vocabulary_lookups():
    v = text.vocab.Vocabulary(COUNTER)
    assert v.to_indices("c") == 1 and v.to_indices(["a", "nope"]) == [3, 0]
    assert v.to_tokens(2) == "b" and v.to_tokens([0, 1]) == ["<unk>", "c"]
    with pytest.raises(ValueError, match="valid ones are 0 to 4"):
        v.to_tokens(5)


@pytest.mark.parametrize("kwargs, match", [
    ({"min_freq": 0}, "min_freq"),
    ({"reserved_tokens": ["b", "b"]}, "repeats"),
    ({"reserved_tokens": ["<unk>"]}, "unknown token"),
])
def test_vocabulary_rejects_bad_arguments(kwargs, match):
    with pytest.raises(AssertionError, match=match):
        text.vocab.Vocabulary(COUNTER, **kwargs)
    with pytest.raises(AssertionError, match="collections.Counter"):
        text.vocab.Vocabulary({"a": 1})


def test_custom_embedding_reads_vectors_and_unknown(tmp_path):
    path = _write(tmp_path / "e.txt", [["a", "1", "2"], ["b", "3", "4"], ["a", "9", "9"]])
    with pytest.warns(UserWarning, match="seen before"):
        e = text.embedding.CustomEmbedding(path, "\t", init_unknown_vec=mx.nd.ones)
    assert e.idx_to_token == ["<unk>", "a", "b"] and e.vec_len == 2
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[1, 1], [1, 2], [3, 4]])
    np.testing.assert_allclose(e.get_vecs_by_tokens("A", lower_case_backup=True).asnumpy(),
                               [1, 2])
    np.testing.assert_allclose(e.get_vecs_by_tokens(["A", "b"]).asnumpy(), [[1, 1], [3, 4]])

    with_unk = _write(tmp_path / "u.txt", [["x", "1", "1"], ["<u>", "5", "6"]])
    e2 = text.embedding.CustomEmbedding(with_unk, "\t", unknown_token="<u>")
    np.testing.assert_allclose(e2.get_vecs_by_tokens("never").asnumpy(), [5, 6])


def test_custom_embedding_skips_a_header_line(tmp_path):
    path = _write(tmp_path / "h.vec", [["2", "3"], ["a", "1", "2", "3"]], delim=" ")
    with pytest.warns(UserWarning, match="header"):
        e = text.embedding.CustomEmbedding(path)
    assert e.idx_to_token == ["<unk>", "a"] and e.vec_len == 3


def test_custom_embedding_rejects_bad_files(tmp_path):
    short = _write(tmp_path / "s.txt", [["a", "1", "2"], ["b"]])
    with pytest.raises(AssertionError, match="line 2"):
        text.embedding.CustomEmbedding(short, "\t")
    ragged = _write(tmp_path / "r.txt", [["a", "1", "2"], ["b", "1"], ["c", "1", "2", "3"]])
    with pytest.warns(UserWarning), pytest.raises(AssertionError, match="length 3"):
        text.embedding.CustomEmbedding(ragged, "\t")
    with pytest.raises(ValueError, match="no pre-trained embedding file"):
        text.embedding.CustomEmbedding(str(tmp_path / "missing.txt"))


def test_corrupt_embedding_files_name_the_file_and_what_is_wrong(tmp_path):
    words = _write(tmp_path / "w.txt", [["a", "1", "2"], ["b", "x", "2"]])
    with pytest.raises(AssertionError, match=r"w\.txt, line 2: the vector of 'b' is not numbers"):
        text.embedding.CustomEmbedding(words, "\t")
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"a\t1\t2\n" + bytes(range(128, 256)) * 4)
    with pytest.raises(UnicodeDecodeError, match=r"b\.txt: not utf-8 text .*encoding="):
        text.embedding.CustomEmbedding(str(binary), "\t")
    latin = tmp_path / "l.txt"
    latin.write_bytes("caf\xe9\t1\t2\n".encode("latin-1"))
    embedding = text.embedding.CustomEmbedding(str(latin), "\t", encoding="latin-1")
    assert embedding.idx_to_token[1] == "caf\xe9"


def test_embedding_restricted_to_a_vocabulary_and_updates(tmp_path):
    path = _write(tmp_path / "e.txt", [["a", "1", "2"], ["b", "3", "4"]])
    vocab = text.vocab.Vocabulary(COUNTER, reserved_tokens=["<pad>"])
    e = text.embedding.CustomEmbedding(path, "\t", init_unknown_vec=mx.nd.ones, vocabulary=vocab)
    assert e.idx_to_token == ["<unk>", "<pad>", "c", "b", "a", "z$"]
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(),
                               [[1, 1], [1, 1], [1, 1], [3, 4], [1, 2], [1, 1]])
    e.update_token_vectors(["a", "b"], mx.nd.array([[7, 7], [8, 8]]))
    e.update_token_vectors("<unk>", mx.nd.array([0, 0]))
    np.testing.assert_allclose(e.idx_to_vec.asnumpy()[[0, 3, 4]], [[0, 0], [8, 8], [7, 7]])
    with pytest.raises(ValueError, match="not indexed"):
        e.update_token_vectors("nope", mx.nd.array([0, 0]))
    with pytest.raises(AssertionError, match="expected \\(1, 2\\)"):
        e.update_token_vectors("a", mx.nd.array([0]))
    with pytest.raises(AssertionError, match="2-D"):
        e.update_token_vectors(["a", "b"], mx.nd.array([0, 0]))


def test_composite_embedding_concatenates(tmp_path):
    one = text.embedding.CustomEmbedding(
        _write(tmp_path / "1.txt", [["a", "1", "2"]]), "\t", init_unknown_vec=mx.nd.ones)
    two = text.embedding.CustomEmbedding(
        _write(tmp_path / "2.txt", [["c", "5", "5"], ["a", "6", "6"]]), "\t")
    ce = text.embedding.CompositeEmbedding(text.vocab.Vocabulary(COUNTER), [one, two])
    assert ce.vec_len == 4 and ce.idx_to_token == ["<unk>", "c", "b", "a", "z$"]
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy(), [[1, 1, 0, 0], [1, 1, 5, 5],
                                                         [1, 1, 0, 0], [1, 2, 6, 6],
                                                         [1, 1, 0, 0]])
    with pytest.raises(AssertionError, match="token embeddings"):
        text.embedding.CompositeEmbedding(text.vocab.Vocabulary(COUNTER), ["glove"])


def test_registry_and_pretrained_names(tmp_path):
    names = text.embedding.get_pretrained_file_names()
    assert len(names["glove"]) == 10 and len(names["fasttext"]) == 327
    assert "glove.6B.50d.txt" in text.embedding.get_pretrained_file_names("GloVe")
    with pytest.raises(KeyError, match="unknown token embedding"):
        text.embedding.get_pretrained_file_names("nope")
    with pytest.raises(KeyError, match="no pre-trained file"):
        text.embedding.GloVe("glove.1B.txt")
    assert text.embedding.GloVe._get_download_file_name("glove.6B.50d.txt") == "glove.6B.zip"
    assert text.embedding.FastText._get_download_file_name("wiki.en.vec") == "wiki.en.zip"


def test_registered_embedding_uses_a_local_file_with_the_right_sha1(tmp_path):
    content = "hello 1 2\nworld 3 4\n"
    sha1 = hashlib.sha1(content.encode()).hexdigest()
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "v.vec").write_text(content)

    @text.embedding.register
    class Local(text.embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {"v.vec": sha1}

        def __init__(self, embedding_root=str(tmp_path), **kwargs):
            self._check_pretrained_file_names("v.vec")
            super().__init__(**kwargs)
            self._load_embedding(self._get_pretrained_file(embedding_root, "v.vec"), " ",
                                 mx.nd.zeros)

    embed = text.embedding.create("local")
    assert embed.token_to_idx["world"] == 2
    np.testing.assert_allclose(embed.idx_to_vec.asnumpy(), [[0, 0], [1, 2], [3, 4]])
    assert text.embedding.get_pretrained_file_names("local") == ["v.vec"]


def test_numpy_mode_gives_np_arrays(tmp_path):
    path = _write(tmp_path / "e.txt", [["a", "1", "2"], ["b", "3", "4"]])
    mx.npx.set_np()
    try:
        e = text.embedding.CustomEmbedding(path, "\t")
        assert isinstance(e.idx_to_vec, mx.np.ndarray)
        e.update_token_vectors("a", mx.np.array([5, 5]))
        np.testing.assert_allclose(e.get_vecs_by_tokens(["a", "x"]).asnumpy(), [[5, 5], [0, 0]])
    finally:
        mx.npx.reset_np()
