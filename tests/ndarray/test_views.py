"""Indexing, views and reshape: what shares memory, what is copied, and ordering.

Which results are views follows MXNet 1.9.1: contiguous basic indexing
(``x[1:3]``, ``x[2]``, ``x[1, 2:4]``, ``x.reshape``) shares the parent's memory;
non-contiguous parts (``x[:, 1]``, ``x[::2]``) and ``x.T`` are copies.
"""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def grid(rows: int = 3, cols: int = 4) -> mx.nd.NDArray:
    return mx.nd.arange(rows * cols).reshape((rows, cols))


@pytest.mark.parametrize("key, shape, shares", [
    (1, (4,), True),                            # row: view
    (slice(1, 3), (2, 4), True),                # rows: view
    ((1, slice(2, 4)), (2,), True),             # part of one row: view
    ((slice(1, 2), slice(1, 3)), (1, 2), True), # block with one row: contiguous, view
    ((slice(None), 1), (3,), False),            # column: copy
    (slice(None, None, 2), (2, 4), False),      # stepped rows: copy
    ((1, 2), (1,), True),                       # one element: shape (1,) as MXNet
    (-1, (4,), True),
    ((None,), (1, 3, 4), True),
    ((Ellipsis, 1), (3,), False),
    ((slice(None), slice(None)), (3, 4), True),
    ((1, Ellipsis), (4,), True),
    ((slice(1, 2), None), (1, 1, 4), True),
])
def test_basic_indexing_shapes_and_sharing(key, shape, shares):
    x = grid()
    part = x[key]
    assert part.shape == shape
    np.testing.assert_array_equal(part.asnumpy().reshape(shape),
                                  np.arange(12, dtype=np.float32).reshape(3, 4)[key].reshape(shape))
    assert (part._chunk is x._chunk) is shares
    part[:] = -1  # through a view this writes the parent; through a copy it does not
    assert bool((x.asnumpy() == -1).any()) == shares


def test_one_dimensional_integer_index_has_shape_one():
    x = mx.nd.arange(5)
    assert x[2].shape == (1,)
    assert x[2].asscalar() == 2


def test_index_errors():
    x = grid()
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]


def test_view_shares_the_engine_variable():
    x = grid()
    view = x[1:3]
    assert view._var is x._var
    assert x[0]._var is x._var


def test_setitem_forms():
    x = mx.nd.ones((2, 2))
    x[0] = mx.nd.array([5, 6])
    x[1, 0] = 7
    x[:, 1] = 9
    np.testing.assert_array_equal(x.asnumpy(), [[5, 9], [7, 9]])
    x[:] = np.array([1, 2])  # broadcast
    np.testing.assert_array_equal(x.asnumpy(), [[1, 2], [1, 2]])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        x[:] = np.ones(3)
    y = mx.nd.zeros((3, 4))
    y[1:3, ::2] = 5
    np.testing.assert_array_equal(y.asnumpy(), [[0, 0, 0, 0], [5, 0, 5, 0], [5, 0, 5, 0]])


def test_setitem_converts_dtype_and_handles_overlap():
    x = mx.nd.array([1, 2, 3, 4], dtype="int32")
    x[:] = mx.nd.array([1.9, 2.9, 3.9, 4.9])
    np.testing.assert_array_equal(x.asnumpy(), [1, 2, 3, 4])
    x[1:] = x[:3]  # overlapping source and target on the same memory
    np.testing.assert_array_equal(x.asnumpy(), [1, 1, 2, 3])


def test_advanced_indexing_copies():
    x = grid()
    rows = x[mx.nd.array([0, 2])]  # float indices, as MXNet accepts
    assert rows.shape == (2, 4) and rows._chunk is not x._chunk
    np.testing.assert_array_equal(rows.asnumpy(), [[0, 1, 2, 3], [8, 9, 10, 11]])
    assert x[[0, 2]].shape == (2, 4)
    assert x[np.array([0, 2])].shape == (2, 4)
    z = mx.nd.zeros((3, 4))
    z[[0, 2]] = 1
    assert z.asnumpy().sum() == 8
    z[mx.nd.array([1])] = mx.nd.full((1, 4), 2)
    assert z.asnumpy().sum() == 16


@pytest.mark.parametrize("target, expected", [
    ((0, -1), (2, 12)),
    ((-2,), (2, 3, 4)),
    ((-3, 4), (6, 4)),
    ((2, -4, 1, 3, 4), (2, 1, 3, 4)),
    ((-1,), (24,)),
    ((6, -1), (6, 4)),
    ((0, 0, -1), (2, 3, 4)),
    ((-4, -1, 2, -2), (1, 2, 3, 4)),
])
def test_reshape_codes_as_mxnet(target, expected):
    x = mx.nd.arange(24).reshape((2, 3, 4))
    assert x.reshape(target).shape == expected


def test_reshape_forms_reverse_and_errors():
    x = mx.nd.arange(24).reshape((2, 3, 4))
    assert x.reshape((-1, 0), reverse=True).shape == (6, 4)
    assert mx.nd.zeros((10, 5, 4)).reshape((-1, 0), reverse=True).shape == (50, 4)
    assert mx.nd.zeros((10, 5, 4)).reshape((-1, 0)).shape == (40, 5)
    assert x.reshape(4, 6).shape == x.reshape(shape=(4, 6)).shape == (4, 6)
    with pytest.raises(ValueError, match=r"size 24 into shape \(5, 5\)"):
        x.reshape((5, 5))
    with pytest.raises(ValueError, match=r"size 24 into shape \(5, 4\)"):
        x.reshape((5, 4))
    with pytest.raises(ValueError, match="only one dimension can be -1"):
        x.reshape((-1, -1))


def test_reshape_is_a_view():
    x = mx.nd.ones((2, 3))
    y = x.reshape((6, 1))
    y[:] = 0
    assert x.asnumpy().sum() == 0
    column = grid()[:, 1]  # a copy already; reshaping it works
    assert column.reshape((1, 3)).shape == (1, 3)


def test_transpose_is_a_copy():
    x = mx.nd.ones((2, 3))
    y = x.T
    assert y.shape == (3, 2)
    y[:] = 0
    assert x.asnumpy().sum() == 6
    assert mx.nd.ones((3,)).T.shape == (3,)
    assert mx.nd.ones((2, 3, 4)).T.shape == (4, 3, 2)


def test_writes_through_views_are_ordered(engine_name):
    """A slow write to the parent, then a write through a view, then a read: in order."""
    x = mx.nd.zeros((4,))
    mx.nd._ndtest_slow(x, seconds=0.02, add=1.0, out=x)  # x = 1 (slowly)
    view = x[1:3]
    view += 10  # must see x = 1 first
    mx.nd._ndtest_slow(x, seconds=0.0, add=100.0, out=x)  # after the view's write
    np.testing.assert_array_equal(x.asnumpy(), [101, 111, 111, 101])


def test_reading_a_view_waits_for_the_parent(engine_name):
    x = mx.nd.zeros((2, 3))
    mx.nd._ndtest_slow(x, seconds=0.02, add=5.0, out=x)
    assert x[1].asnumpy().tolist() == [5, 5, 5]
    assert x[0, 1:].asnumpy().tolist() == [5, 5]


def test_a_view_keeps_the_memory_alive():
    view = mx.nd.arange(6).reshape((2, 3))[1]
    import gc

    gc.collect()
    np.testing.assert_array_equal(view.asnumpy(), [3, 4, 5])


@pytest.mark.parametrize("method, args, shape", [
    ("flatten", (), (2, 3)), ("expand_dims", (0,), (1, 2, 1, 3)),
    ("expand_dims", (-1,), (2, 1, 3, 1)), ("squeeze", (), (2, 3)), ("squeeze", (1,), (2, 3)),
    ("squeeze", ((1,),), (2, 3)),
])
def test_inplace_shape_methods_view_the_same_memory(method, args, shape):
    x = mx.nd.ones((2, 1, 3))
    view = getattr(x, method)(*args, inplace=True)
    copy = getattr(x, method)(*args)
    assert view.shape == copy.shape == shape
    view[:] = 5
    assert (x.asnumpy() == 5).all() and (copy.asnumpy() == 1).all()


def test_inplace_shape_methods_explain_a_bad_axis_as_the_operators_do():
    with pytest.raises(mx.ShapeError, match="cannot squeeze axis 0"):
        mx.nd.ones((2, 3)).squeeze(axis=0, inplace=True)
    with pytest.raises(mx.MXNetError, match="expand_dims"):
        mx.nd.ones((2, 3)).expand_dims(5, inplace=True)
