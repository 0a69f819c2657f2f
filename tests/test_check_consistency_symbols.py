"""test_utils.check_consistency in MXNet's symbol form, and the symbolic checks' inputs."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.test_utils import check_consistency, check_symbolic_backward, check_symbolic_forward


def test_same_computation_two_ways_agrees_in_both_dtypes():
    x = mx.sym.var("x")
    ctx = mx.cpu()
    entries = [{"ctx": ctx, "x": (3, 4), "type_dict": {"x": np.float64}},
               {"ctx": ctx, "x": (3, 4), "type_dict": {"x": np.float32}}]
    reference = check_consistency([mx.sym.abs(x, name="f"), x.abs(name="f")], entries)
    assert set(reference) == {"f_output", "x"}


def test_different_computations_are_reported():
    x = mx.sym.var("x")
    entries = [{"ctx": mx.cpu(), "x": (2, 3)}, {"ctx": mx.cpu(), "x": (2, 3)}]
    with pytest.raises(AssertionError):
        check_consistency([mx.sym.sin(x, name="f"), mx.sym.cos(x, name="f")], entries,
                          grad_req="null")


def test_asnumpy_keeps_each_input_dtype_and_extra_head_gradients_are_ignored():
    a = mx.sym.var("a")
    b = mx.sym.var("b")
    out = mx.sym.broadcast_add(a, mx.sym.Cast(b, dtype="float32"))
    av = np.ones((2, 2), dtype=np.float32)
    bv = np.arange(2, dtype=np.int32)
    check_symbolic_forward(out, [av, bv], [av + bv], dtype="asnumpy")
    y = mx.sym.square(a)
    check_symbolic_backward(y, [av], [np.ones((2, 2)), np.ones((2, 2))], [2 * av])
