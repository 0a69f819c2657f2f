"""dagnet-quadratic checks itself the way any operator package would: the operator is
found through the entry point, the conformance suite passes, and the kernels give
the design document's numbers."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
from dagnet.operator import OpContext, OpReqType, get_op
from dagnet.testing.op_suite import check_operator


def _call(op, attrs, inputs, req, outputs):
    op.kernel_for("cpu")(attrs, OpContext(False, None, [], np), inputs, [req], outputs)
    return outputs[0]


def test_registered_through_the_entry_point():
    registry = dagnet.plugins.ops()
    for name in ("quadratic", "_backward_quadratic"):
        provider = registry.registration(name).provider
        assert provider.distribution == "dagnet-quadratic", provider
        assert provider.plugin == "quadratic"
    op = get_op("quadratic")
    assert op.gradient.backward == "_backward_quadratic"
    assert op.gradient.uses == ("out_grad", "in_data")
    assert "f(x) = ax^2+bx+c" in op.docstring()


def test_conformance():
    check_operator("quadratic", max_examples=10)


def test_forward_matches_the_design_document():
    op = get_op("quadratic")
    attrs = op.parse_params({"a": 1, "b": 2, "c": 3})
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    want = np.array([[6.0, 11.0], [18.0, 27.0]])
    np.testing.assert_array_equal(_call(op, attrs, [x], OpReqType.WRITE, [np.zeros_like(x)]), want)
    np.testing.assert_array_equal(_call(op, attrs, [x], OpReqType.ADD, [np.ones_like(x)]), want + 1)
    np.testing.assert_array_equal(_call(op, attrs, [x], OpReqType.NULL, [np.ones_like(x)]), 1)
    y = x.copy()
    assert op.inplace_pairs(attrs) == [(0, 0)]
    _call(op, attrs, [y], OpReqType.INPLACE, [y])
    np.testing.assert_array_equal(y, want)
    assert op.parse_params({}).to_dict() == {"a": 0.0, "b": 0.0, "c": 0.0}


def test_backward_is_2ax_plus_b():
    op, bwd = get_op("quadratic"), get_op("_backward_quadratic")
    attrs = op.parse_params({"a": 1.5, "b": -2, "c": 3})
    x, head = np.array([-1.0, 0.0, 2.0]), np.array([1.0, 2.0, 3.0])
    assert bwd.list_inputs(attrs) == ["output_grad", "data"] and bwd.is_backward
    got = _call(bwd, attrs, [head, x], OpReqType.WRITE, [np.zeros(3)])
    np.testing.assert_allclose(got, head * (3 * x - 2))


def test_ndarray_frontend():
    nd = pytest.importorskip("dagnet.ndarray", reason="dagnet.ndarray is not written yet")
    if not hasattr(nd, "array"):  # the package exists but is still being written
        pytest.skip("dagnet.ndarray has no array() yet")
    import dagnet as mx

    out = mx.nd.quadratic(mx.nd.array([[1, 2], [3, 4]]), a=1, b=2, c=3).asnumpy()
    np.testing.assert_array_equal(out, [[6, 11], [18, 27]])
    assert "f(x) = ax^2+bx+c" in mx.nd.quadratic.__doc__
