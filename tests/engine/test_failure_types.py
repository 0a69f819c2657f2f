"""A kernel's failure reaches the user as OperatorFailedError and, for the builtin types
MXNet maps (mxnet.error), as that type too, with dagnet's message."""

from __future__ import annotations

import pytest

import dagnet
import dagnet as mx


def test_index_error_in_a_kernel_is_an_index_error():
    data = mx.nd.array([[0, 1, 2], [3, 4, 5]])
    with pytest.raises(IndexError) as info:
        mx.nd.gather_nd(data, mx.nd.array([[0, 1, 0], [0, 1, 3]])).asnumpy()
    error = info.value
    assert isinstance(error, dagnet.OperatorFailedError)
    assert isinstance(error, mx.base.MXNetError)
    assert "gather_nd" in str(error) and isinstance(error.original, IndexError)


@pytest.mark.parametrize(("raised", "kind"), [
    (IndexError("i"), dagnet.OperatorFailedIndexError),
    (KeyError("k"), dagnet.OperatorFailedError),  # a LookupError, not mapped by MXNet
    (ValueError("v"), dagnet.OperatorFailedValueError),
    (TypeError("t"), dagnet.OperatorFailedTypeError),
    (AttributeError("a"), dagnet.OperatorFailedAttributeError),
    (NotImplementedError("n"), dagnet.OperatorFailedNotImplementedError),
    (ZeroDivisionError("z"), dagnet.OperatorFailedError),
])
def test_wrapping_picks_the_builtin(raised, kind):
    error = dagnet.OperatorFailedError.wrapping("op failed", "op", raised)
    assert type(error) is kind
    assert error.operator == "op" and error.original is raised
