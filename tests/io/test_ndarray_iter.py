"""NDArrayIter against batches, pads and names taken from MXNet 1.9.1: every
last_batch_handle over several epochs, shuffling, dict and list inputs, errors."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx

X = np.arange(10).reshape(10, 1)


def epochs(it, n=3):
    """Per epoch, each batch's data values and pad."""
    out = []
    for _ in range(n):
        out.append([(b.data[0].asnumpy().ravel().astype(int).tolist(), b.pad) for b in it])
        it.reset()
    return out


PAD = [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0), ([8, 9, 0, 1], 2)]
DISCARD = [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)]
ROLL_OVER = [
    [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)],
    [([8, 9, 0, 1], 2), ([2, 3, 4, 5], 0), ([6, 7, 8, 9], 0)],
    [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)],
]


@pytest.mark.parametrize("mode, expected", [
    ("pad", [PAD] * 3), ("discard", [DISCARD] * 3), ("roll_over", ROLL_OVER)])
def test_last_batch_handle_over_epochs(mode, expected):
    it = mx.io.NDArrayIter(X, np.arange(10), batch_size=4, last_batch_handle=mode)
    assert epochs(it) == expected


def test_labels_follow_their_examples():
    it = mx.io.NDArrayIter(X, np.arange(10) * 10, batch_size=4, last_batch_handle="roll_over")
    list(it)
    it.reset()
    batch = next(it)
    assert batch.label[0].asnumpy().tolist() == [80, 90, 0, 10]
    assert batch.index is None and batch.bucket_key is None and batch.provide_data is None


def test_pad_wraps_around_more_than_once():
    it = mx.io.NDArrayIter(X[:3], batch_size=8)
    assert epochs(it, 1) == [[([0, 1, 2, 0, 1, 2, 0, 1], 5)]]


def test_roll_over_with_large_carry():
    it = mx.io.NDArrayIter(X, batch_size=7, last_batch_handle="roll_over")
    assert epochs(it, 4) == [
        [([0, 1, 2, 3, 4, 5, 6], 0)],
        [([7, 8, 9, 0, 1, 2, 3], 3)],
        [([4, 5, 6, 7, 8, 9, 0], 6), ([1, 2, 3, 4, 5, 6, 7], 0)],
        [([8, 9, 0, 1, 2, 3, 4], 2)],
    ]


def test_reset_mid_epoch_starts_over():
    it = mx.io.NDArrayIter(X, batch_size=3, last_batch_handle="roll_over")
    next(it)
    it.reset()
    assert epochs(it, 1) == [[([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 7, 8], 0)]]


def test_hard_reset_drops_the_carry():
    it = mx.io.NDArrayIter(X, batch_size=4, last_batch_handle="roll_over")
    list(it)
    it.hard_reset()
    assert next(it).data[0].asnumpy().ravel().tolist() == [0, 1, 2, 3]


def test_shuffle_reproduces_mxnet_with_numpy_seed():
    np.random.seed(42)
    it = mx.io.NDArrayIter(X, np.arange(10) * 10, batch_size=4, shuffle=True)
    got = []
    for _ in range(2):
        got.append([(b.data[0].asnumpy().ravel().astype(int).tolist(),
                     b.label[0].asnumpy().astype(int).tolist(), b.pad) for b in it])
        it.reset()
    assert got == [
        [([8, 1, 5, 0], [80, 10, 50, 0], 0), ([7, 2, 9, 4], [70, 20, 90, 40], 0),
         ([3, 6, 8, 1], [30, 60, 80, 10], 2)],
        [([3, 1, 0, 5], [30, 10, 0, 50], 0), ([8, 4, 7, 9], [80, 40, 70, 90], 0),
         ([6, 2, 3, 1], [60, 20, 30, 10], 2)],
    ]


def test_shuffle_with_roll_over():
    np.random.seed(5)
    it = mx.io.NDArrayIter(X, batch_size=3, shuffle=True, last_batch_handle="roll_over")
    assert epochs(it) == [
        [([9, 5, 2], 0), ([4, 7, 1], 0), ([0, 8, 6], 0)],
        [([3, 2, 5], 1), ([9, 7, 0], 0), ([1, 8, 6], 0)],
        [([4, 3, 9], 2), ([0, 4, 7], 0), ([3, 2, 1], 0), ([6, 8, 5], 0)],
    ]


def test_provide_data_and_label():
    it = mx.io.NDArrayIter(np.zeros((10, 3, 2)), np.zeros(10), batch_size=4)
    (data,), (label,) = it.provide_data, it.provide_label
    assert data == ("data", (4, 3, 2)) and label == ("softmax_label", (4,))
    assert data.dtype is np.float32 and data.layout == "NCHW"
    assert repr(data) == "DataDesc[data,(4, 3, 2),<class 'numpy.float32'>,NCHW]"
    assert mx.io.NDArrayIter(X, batch_size=2).provide_label == []
    assert next(mx.io.NDArrayIter(X, batch_size=2)).label == []


def test_custom_names():
    it = mx.io.NDArrayIter(X, X, batch_size=2, data_name="x", label_name="y")
    assert [d.name for d in it.provide_data + it.provide_label] == ["x", "y"]


def test_dict_inputs_are_sorted_by_name():
    it = mx.io.NDArrayIter({"b": np.zeros((4, 2)), "a": np.ones((4, 3))},
                           {"l2": np.zeros(4), "l1": np.ones(4)}, batch_size=3)
    assert it.provide_data == [("a", (3, 3)), ("b", (3, 2))]
    assert it.provide_label == [("l1", (3,)), ("l2", (3,))]
    batch = next(it)
    assert batch.data[0].asnumpy().sum() == 9 and batch.label[0].asnumpy().sum() == 3


def test_list_inputs_are_numbered_and_sorted_as_strings():
    it = mx.io.NDArrayIter([np.zeros(4)] * 11, batch_size=2)
    names = [d.name for d in it.provide_data]
    assert names[:3] == ["_0_data", "_10_data", "_1_data"] and names[-1] == "_9_data"
    assert mx.io.NDArrayIter([np.zeros(4)], batch_size=2).provide_data[0].name == "data"


def test_dtypes():
    ints = mx.nd.array(np.arange(4), dtype="int32")
    assert mx.io.NDArrayIter(ints, batch_size=2).provide_data[0].dtype is np.int32
    assert next(mx.io.NDArrayIter(ints, batch_size=2)).data[0].dtype == np.int32
    # numpy and list inputs become float32, like mx.nd.array; so does a shuffled input.
    assert mx.io.NDArrayIter(np.arange(4), batch_size=2).provide_data[0].dtype is np.float32
    assert mx.io.NDArrayIter([[1], [2]], batch_size=2).provide_data[0].name == "_0_data"
    assert mx.io.NDArrayIter(ints, batch_size=2, shuffle=True).provide_data[0].dtype is np.float32


def test_batches_are_cpu_ndarrays_and_copies():
    source = mx.nd.array(X)
    batch = next(mx.io.NDArrayIter(source, batch_size=4))
    assert isinstance(batch.data[0], mx.nd.NDArray) and batch.data[0].context == mx.cpu()
    batch.data[0][:] = -1
    assert source.asnumpy()[:4].ravel().tolist() == [0, 1, 2, 3]


def test_getters_follow_the_datait_protocol():
    it = mx.io.NDArrayIter(X, np.arange(10), batch_size=4)
    assert it.iter_next()
    assert it.getdata()[0].asnumpy().ravel().tolist() == [0, 1, 2, 3]
    assert it.getlabel()[0].asnumpy().tolist() == [0, 1, 2, 3]
    assert it.getpad() == 0 and it.getindex() is None and it.batch_size == 4
    assert iter(it) is it


def test_mismatched_data_and_label_lengths():
    with pytest.raises(mx.ShapeError, match=r"data: 10, softmax_label: 8.*one label per example"):
        mx.io.NDArrayIter(X, np.arange(8), batch_size=2)


def test_longer_labels_contribute_their_first_examples():
    """As MXNet: the first data array counts the examples (a label or sample weight over a
    bigger set is cut to them), and every batch takes the same positions of each input."""
    it = mx.io.NDArrayIter(X, {"label": np.arange(20), "w": np.arange(20) + 100}, batch_size=4)
    assert it.num_data == 10
    batches = [[label.asnumpy().tolist() for label in b.label] for b in it]
    assert batches == [[[0, 1, 2, 3], [100, 101, 102, 103]], [[4, 5, 6, 7], [104, 105, 106, 107]],
                       [[8, 9, 0, 1], [108, 109, 100, 101]]]


@pytest.mark.parametrize("batch_size, error", [
    (0, mx.ParamError), (-3, mx.ParamError), (2.5, TypeError), ("4", TypeError)])
def test_bad_batch_size(batch_size, error):
    with pytest.raises(error, match="batch_size"):
        mx.io.NDArrayIter(X, batch_size=batch_size)


def test_other_argument_errors():
    with pytest.raises(mx.ParamError, match="expected one of 'pad', 'discard', 'roll_over'"):
        mx.io.NDArrayIter(X, last_batch_handle="keep")
    with pytest.raises(mx.ParamError, match="last_batch_handle='pad'"):
        mx.io.NDArrayIter(X, batch_size=11, last_batch_handle="roll_over")
    with pytest.raises(TypeError, match="at least one array"):
        mx.io.NDArrayIter([])
    with pytest.raises(TypeError, match="dict of name -> array"):
        mx.io.NDArrayIter(42)
    with pytest.raises(TypeError, match="'data'.*cannot be read"):
        mx.io.NDArrayIter([["a", object()]])
    with pytest.raises(mx.DagnetError, match="batch axis"):
        mx.io.NDArrayIter(np.array(3.0))
