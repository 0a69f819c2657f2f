"""Creating arrays: dtypes, shapes and printing as MXNet 1.9.1 gives them.

The expected values were read from MXNet 1.9.1 (``import mxnet as mx``) and
are written out here; the tests do not import MXNet.
"""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


@pytest.mark.parametrize("source, dtype, expected", [
    ([1, 2], None, np.float32),                            # mx.nd.array([1,2]).dtype
    (np.array([1, 2]), None, np.float32),                  # int64 numpy -> float32
    (np.array([1.0, 2.0]), None, np.float32),              # float64 numpy -> float32
    (np.array([1, 2], dtype=np.float16), None, np.float32),
    (np.array([True]), None, np.float32),
    ([True, False], None, np.float32),
    (3, None, np.float32),
    ([1, 2], "int32", np.int32),                           # dtype= overrides
    (np.array([1, 2], dtype=np.int64), None, np.float32),
    (np.array([1.5, 2.5]), np.float64, np.float64),
])
def test_array_dtype_follows_mxnet(source, dtype, expected):
    x = mx.nd.array(source, dtype=dtype)
    assert x.dtype is expected  # MXNet's dtype is numpy's scalar type
    np.testing.assert_array_equal(x.asnumpy(), np.asarray(source).astype(expected))


def test_array_of_ndarray_keeps_dtype_and_moves_device():
    source = mx.nd.array([1, 2], dtype="int32")
    copy = mx.nd.array(source, ctx=mx.cpu(1))
    assert copy.dtype is np.int32
    assert copy.context == mx.cpu(1)
    source[:] = 7
    np.testing.assert_array_equal(copy.asnumpy(), [1, 2])  # a copy, taken in order


def test_array_copies_its_source_at_the_call():
    source = np.arange(4, dtype=np.float32)
    x = mx.nd.array(source)
    source[:] = -1
    np.testing.assert_array_equal(x.asnumpy(), [0, 1, 2, 3])


def test_scalar_array_is_zero_dimensional():
    x = mx.nd.array(5)
    assert x.shape == ()
    assert x.asscalar() == 5.0
    assert repr(x) == "\n5.0\n<NDArray  @cpu(0)>"


@pytest.mark.parametrize("make, shape, dtype, value", [
    (lambda: mx.nd.zeros((2, 3)), (2, 3), np.float32, 0),
    (lambda: mx.nd.zeros(5), (5,), np.float32, 0),
    (lambda: mx.nd.zeros((2, 3), dtype="int32"), (2, 3), np.int32, 0),
    (lambda: mx.nd.ones((2,)), (2,), np.float32, 1),
    (lambda: mx.nd.ones(3, dtype="int32"), (3,), np.int32, 1),
    (lambda: mx.nd.full((2,), 3), (2,), np.float32, 3),
    (lambda: mx.nd.full((2,), 7, dtype="int64"), (2,), np.int64, 7),
])
def test_filled_arrays(make, shape, dtype, value):
    x = make()
    assert x.shape == shape and x.dtype is dtype
    np.testing.assert_array_equal(x.asnumpy(), np.full(shape, value, dtype))


def test_empty_has_shape_dtype_and_device():
    x = mx.nd.empty((3, 4), ctx=mx.cpu(2), dtype="float64")
    assert (x.shape, x.dtype, x.context) == ((3, 4), np.float64, mx.cpu(2))
    assert mx.nd.empty((2,)).dtype is np.float32


@pytest.mark.parametrize("args, kwargs, expected, dtype", [
    ((3,), {}, [0, 1, 2], np.float32),
    ((1, 5, 2), {}, [1, 3], np.float32),
    ((3,), {"repeat": 2}, [0, 0, 1, 1, 2, 2], np.float32),
    ((0, 1, 0.25), {"dtype": "float64"}, [0, 0.25, 0.5, 0.75], np.float64),
    ((5, 0, -2), {}, [5, 3, 1], np.float32),
])
def test_arange(args, kwargs, expected, dtype):
    x = mx.nd.arange(*args, **kwargs)
    assert x.dtype is dtype
    np.testing.assert_allclose(x.asnumpy(), expected)


def test_properties():
    x = mx.nd.ones((2, 3, 4), ctx=mx.cpu(1))
    assert (x.size, x.ndim, len(x), x.stype) == (24, 3, 2, "default")
    assert x.context == x.ctx == mx.cpu(1)
    with pytest.raises(TypeError, match="unsized"):
        len(mx.nd.array(1))


def test_default_context_comes_from_with_block():
    with mx.cpu(3):
        assert mx.nd.zeros((1,)).context == mx.cpu(3)
        assert mx.nd.array([1]).context == mx.cpu(3)
    assert mx.nd.zeros((1,)).context == mx.cpu(0)


def test_repr_matches_mxnet():
    assert repr(mx.nd.array([[1, 2], [3, 4]])) == "\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @cpu(0)>"
    assert repr(mx.nd.array([1, 2, 3])) == "\n[1. 2. 3.]\n<NDArray 3 @cpu(0)>"
    assert repr(mx.nd.array([1, 2], dtype="int32")) == "\n[1 2]\n<NDArray 2 @cpu(0)>"
    assert repr(mx.nd.ones((2, 3), ctx=mx.cpu(1))) == \
        "\n[[1. 1. 1.]\n [1. 1. 1.]]\n<NDArray 2x3 @cpu(1)>"
    assert str(mx.nd.array([1.5, 2.25e-5])) == "\n[1.50e+00 2.25e-05]\n<NDArray 2 @cpu(0)>"


def test_asscalar_and_bool():
    assert mx.nd.array([3]).asscalar() == 3.0
    assert isinstance(mx.nd.array([3]).asscalar(), np.float32)
    with pytest.raises(ValueError, match="not a scalar"):
        mx.nd.array([1, 2]).asscalar()
    assert bool(mx.nd.array([2])) and not bool(mx.nd.array([0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mx.nd.array([1, 2]))
    with pytest.warns(DeprecationWarning, match="empty NDArray"):
        assert not bool(mx.nd.array([]))  # MXNet 1.x's answer


def test_astype_copy_and_as_in_context():
    x = mx.nd.array([1.7, -2.2])
    y = x.astype("int32")
    assert y.dtype is np.int32
    np.testing.assert_array_equal(y.asnumpy(), [1, -2])
    assert x.astype(np.float32, copy=False) is x
    assert x.astype("float64", copy=False) is not x
    assert x.as_in_context(mx.cpu(0)) is x
    moved = x.as_in_context(mx.cpu(1))
    assert moved.context == mx.cpu(1)
    np.testing.assert_allclose(moved.asnumpy(), x.asnumpy())


def test_copyto_converts_dtype_and_checks_shape():
    a = mx.nd.ones((2, 3))
    b = mx.nd.zeros((2, 3), dtype="int32")
    assert a.copyto(b) is b
    np.testing.assert_array_equal(b.asnumpy(), np.ones((2, 3), np.int32))
    with pytest.raises(ValueError, match=r"shape \(3, 2\).*\(2, 3\)"):
        a.copyto(mx.nd.zeros((3, 2)))
    c = a.copy()
    c[:] = 5
    assert a.asnumpy().sum() == 6  # the copy is independent


def test_iteration_tolist_and_pickle():
    import pickle

    x = mx.nd.array([[1, 2], [3, 4]])
    assert [row.shape for row in x] == [(2,), (2,)]
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype is np.float32 and y.context == x.context
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_unknown_storage_type_names_the_known_ones():
    with pytest.raises(ValueError, match="'coo'.*'row_sparse' and 'csr'"):
        mx.nd.zeros((2, 2), stype="coo")


def test_ndarray_cannot_be_constructed_directly():
    with pytest.raises(TypeError, match="dagnet.nd.array"):
        mx.nd.NDArray()


def test_linspace_eye_from_numpy_concatenate():
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5).asnumpy(), [0, 0.25, 0.5, 0.75, 1])
    assert mx.nd.linspace(0, 1, 4, endpoint=False).asnumpy().tolist() == [0, 0.25, 0.5, 0.75]
    eye = mx.nd.eye(2, k=1)
    assert eye.dtype is np.float32
    np.testing.assert_array_equal(eye.asnumpy(), [[0, 1], [0, 0]])
    assert mx.nd.eye(2, 3).shape == (2, 3)
    source = np.arange(3)
    x = mx.nd.from_numpy(source, zero_copy=False)
    assert x.dtype is np.int64  # from_numpy keeps the dtype (array() would give float32)
    source[0] = 9
    assert x.asnumpy().tolist() == [0, 1, 2]
    shared = mx.nd.from_numpy(source)  # zero_copy: the memory is shared, numpy read-only
    assert shared.asnumpy().tolist() == [9, 1, 2] and not source.flags.writeable
    joined = mx.nd.concatenate([mx.nd.ones((1, 2)), mx.nd.zeros((1, 2))])
    np.testing.assert_array_equal(joined.asnumpy(), [[1, 1], [0, 0]])


def test_creation_rejects_unknown_arguments():
    with pytest.raises(TypeError, match="unexpected keyword argument.*bogus"):
        mx.nd.zeros((2,), bogus=1)
    out = mx.nd.empty((2,))
    assert mx.nd.ones((2,), out=out) is out
    assert out.asnumpy().tolist() == [1, 1]


def test_nd_is_ndarray_and_import_is_lazy():
    import subprocess
    import sys

    assert mx.nd is mx.ndarray
    import dagnet.nd

    assert dagnet.nd is mx.ndarray
    script = ("import sys, dagnet as mx; mx.nd.NDArray; import dagnet.plugins as p; "
              "print(p._manager is None, any(m.startswith('dagnet_') for m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60)
    assert result.stdout.split() == ["True", "False"], result.stderr
