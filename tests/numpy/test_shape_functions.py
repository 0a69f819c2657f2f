"""mx.np's shape and array-manipulation functions (diagonals, differences, rearranging,
joins and splits, insert/delete, index grids, pad, einsum): values, shapes and dtypes
against NumPy, gradients against central differences, hybridized blocks, errors."""

from __future__ import annotations

import numpy as onp
import pytest

import dagnet as mx
from dagnet import autograd, np, npx
from dagnet.gluon import HybridBlock
from dagnet.test_utils import check_gluon_hybridize_consistency, use_np


def _values(shape, dtype="float32", seed=0):
    """Distinct values (so reorderings show), integers when ``dtype`` is one."""
    rng = onp.random.default_rng(seed)
    size = int(onp.prod(shape))
    host = rng.permutation(size).reshape(shape) - size // 2
    return host.astype(dtype) if onp.dtype(dtype).kind in "iub" else \
        (host + rng.uniform(-0.4, 0.4, shape)).astype(dtype)


# -- forward against NumPy: (mx.np function, NumPy function, input shapes, input dtype) --
FORWARD = {
    "diag_1d": (lambda a: np.diag(a, 1), lambda a: onp.diag(a, 1), [(3,)], "int32"),
    "diag_empty_1d": (lambda a: np.diag(a, -2), lambda a: onp.diag(a, -2), [(0,)], "float32"),
    "diag_2d": (lambda a: np.diag(a, -1), lambda a: onp.diag(a, -1), [(3, 4)], "float32"),
    "diag_2d_outside": (lambda a: np.diag(a, 5), lambda a: onp.diag(a, 5), [(3, 4)], "int8"),
    "diagflat": (lambda a: np.diagflat(a, -2), lambda a: onp.diagflat(a, -2), [(2, 2)],
                 "float16"),
    "diagonal": (lambda a: np.diagonal(a, 1, 2, 0), lambda a: onp.diagonal(a, 1, 2, 0),
                 [(2, 3, 4)], "float32"),
    "diagonal_empty": (lambda a: np.diagonal(a, -4, 1, 2),
                       lambda a: onp.diagonal(a, -4, 1, 2), [(2, 3, 4)], "float32"),
    "trace": (lambda a: np.trace(a, 1), lambda a: onp.trace(a, 1).astype(a.dtype), [(3, 4)],
              "int32"),
    "trace_3d": (lambda a: np.trace(a, -1, 2, 0), lambda a: onp.trace(a, -1, 2, 0),
                 [(3, 2, 4)], "float64"),
    "trace_zero_size": (lambda a: np.trace(a), lambda a: onp.trace(a), [(0, 0, 2)], "float32"),
    "tril": (lambda a: np.tril(a, -1), lambda a: onp.tril(a, -1), [(2, 3, 4)], "int64"),
    "tril_1d": (lambda a: np.tril(a, 1), lambda a: onp.tril(a, 1), [(4,)], "float32"),
    "tril_zero_size": (lambda a: np.tril(a, 2), lambda a: onp.tril(a, 2), [(4, 0)],
                       "float32"),
    "diff": (lambda a: np.diff(a, 2, 0), lambda a: onp.diff(a, 2, 0), [(4, 3)], "int32"),
    "diff_past_the_end": (lambda a: np.diff(a, 5), lambda a: onp.diff(a, 5), [(2, 3)],
                          "float32"),
    "diff_bool": (lambda a: np.diff(a), lambda a: onp.diff(a), [(5,)], "bool"),
    "diff_prepend_append": (lambda a: np.diff(a, axis=0, prepend=1, append=a[:1]),
                            lambda a: onp.diff(a, axis=0, prepend=1, append=a[:1]
                                               ).astype(a.dtype),
                            [(3, 2)], "float32"),
    "ediff1d": (lambda a: np.ediff1d(a, to_end=np.array([7, 8], dtype="float32"),
                                     to_begin=-1),
                lambda a: onp.ediff1d(a, to_end=onp.array([7, 8]), to_begin=-1), [(2, 3)],
                "float32"),
    "ediff1d_one_element": (lambda a: np.ediff1d(a, to_end=2.0),
                            lambda a: onp.ediff1d(a, to_end=2.0), [()], "float32"),
    "cumsum_flat": (lambda a: np.cumsum(a), lambda a: onp.cumsum(a), [(2, 3)], "float32"),
    "cumsum_axis": (lambda a: a.cumsum(axis=-2), lambda a: onp.cumsum(a, axis=-2).astype(a.dtype),
                    [(2, 3, 2)], "int8"),
    "cumsum_dtype": (lambda a: np.cumsum(a, 1, dtype="float64"),
                     lambda a: onp.cumsum(a, 1, dtype="float64"), [(2, 3)], "int32"),
    "cumsum_bool_is_int64": (lambda a: np.cumsum(a), lambda a: onp.cumsum(a, dtype="int64"),
                             [(4,)], "bool"),
    "cumsum_0d": (lambda a: np.cumsum(a), lambda a: onp.cumsum(a), [()], "float32"),
    "roll_flat": (lambda a: np.roll(a, -4), lambda a: onp.roll(a, -4), [(2, 3)], "float32"),
    "roll_axes": (lambda a: np.roll(a, (1, 5), (0, -1)), lambda a: onp.roll(a, (1, 5), (0, -1)),
                  [(2, 3, 4)], "int64"),
    "roll_zero_size": (lambda a: np.roll(a, 1, 1), lambda a: onp.roll(a, 1, 1), [(0, 3)],
                       "float32"),
    "rot90": (lambda a: np.rot90(a), lambda a: onp.rot90(a), [(2, 3)], "float32"),
    "rot90_k": (lambda a: np.rot90(a, -3, (2, 0)), lambda a: onp.rot90(a, -3, (2, 0)),
                [(2, 3, 4)], "uint8"),
    "rot90_twice": (lambda a: np.rot90(a, 2, (1, 0)), lambda a: onp.rot90(a, 2, (1, 0)),
                    [(2, 3)], "float32"),
    "flipud": (lambda a: np.flipud(a), lambda a: onp.flipud(a), [(3, 2)], "float32"),
    "fliplr": (lambda a: np.fliplr(a), lambda a: onp.fliplr(a), [(3, 2)], "int32"),
    "meshgrid": (lambda a, b, c: np.meshgrid(a, b, c), lambda a, b, c: onp.meshgrid(a, b, c),
                 [(2,), (3,), ()], "float32"),
    "meshgrid_ij_sparse": (lambda a, b: np.meshgrid(a, b, indexing="ij", sparse=True),
                           lambda a, b: onp.meshgrid(a, b, indexing="ij", sparse=True),
                           [(2,), (3,)], "float32"),
    "resize_grow": (lambda a: np.resize(a, (3, 5)), lambda a: onp.resize(a, (3, 5)), [(2, 3)],
                    "int32"),
    "resize_shrink": (lambda a: np.resize(a, 4), lambda a: onp.resize(a, 4), [(2, 3)],
                      "float32"),
    "resize_empty": (lambda a: np.resize(a, (2, 2)), lambda a: onp.zeros((2, 2), a.dtype),
                     [(2, 0)], "float32"),
    "column_stack": (lambda a, b, c: np.column_stack([a, b, c]),
                     lambda a, b, c: onp.column_stack([a, b, c]), [(3,), (3, 2), (3,)],
                     "float32"),
    "append_flat": (lambda a, b: np.append(a, b), lambda a, b: onp.append(a, b),
                    [(2, 3), ()], "float32"),
    "append_axis": (lambda a, b: np.append(a, b, axis=1), lambda a, b: onp.append(a, b, 1),
                    [(2, 3), (2, 1)], "float32"),
    "insert_scalar_index": (lambda a, b: np.insert(a, 1, b, axis=1),
                            lambda a, b: onp.insert(a, 1, b, axis=1), [(3, 2), (3,)],
                            "float32"),
    "insert_flat": (lambda a, b: np.insert(a, -2, b), lambda a, b: onp.insert(a, -2, b),
                    [(3, 2), (2,)], "float32"),
    "insert_indices": (lambda a, b: np.insert(a, np.array([2, 0, 2], dtype="int64"), b, 0),
                       lambda a, b: onp.insert(a, [2, 0, 2], b, 0), [(3, 2), (3, 1)],
                       "float32"),
    "insert_slice": (lambda a, b: np.insert(a, slice(None, None, -1), b, 1),
                     lambda a, b: onp.insert(a, slice(None, None, -1), b, 1),
                     [(3, 2), (3, 1)], "float32"),
    "delete_int": (lambda a: np.delete(a, -1, 0), lambda a: onp.delete(a, -1, 0), [(3, 2)],
                   "float32"),
    "delete_slice": (lambda a: np.delete(a, slice(1, None, 2)),
                     lambda a: onp.delete(a, slice(1, None, 2)), [(3, 3)], "int32"),
    "delete_indices_out_of_range_ignored": (
        lambda a: np.delete(a, np.array([4, -1, 0, 0], dtype="int32"), 1),
        lambda a: onp.delete(a, [0], 1), [(2, 3)], "float32"),
    "vsplit": (lambda a: np.vsplit(a, (1, 3)), lambda a: onp.vsplit(a, (1, 3)), [(4, 2)],
               "float32"),
    "hsplit": (lambda a: np.hsplit(a, 2), lambda a: onp.hsplit(a, 2), [(3, 4, 2)], "float32"),
    "hsplit_uneven_like_array_split": (lambda a: np.hsplit(a, 3),
                                       lambda a: onp.array_split(a, 3), [(10,)], "float32"),
    "dsplit": (lambda a: np.dsplit(a, [1]), lambda a: onp.dsplit(a, [1]), [(2, 2, 3)],
               "float32"),
    "unravel_index": (lambda a: np.unravel_index(a, (3, 4)),
                      lambda a: [i.astype(a.dtype) for i in onp.unravel_index(a, (3, 4))],
                      [(2, 2)], "int32"),
    "diag_indices_from": (lambda a: np.diag_indices_from(a),
                          lambda a: onp.diag_indices_from(a), [(3, 3, 3)], "float32"),
    "pad_constant": (lambda a: np.pad(a, ((1, 2), (0, 3)), constant_values=-7),
                     lambda a: onp.pad(a, ((1, 2), (0, 3)), constant_values=-7), [(2, 3)],
                     "int8"),
    "pad_edge": (lambda a: np.pad(a, 2, mode="edge"), lambda a: onp.pad(a, 2, mode="edge"),
                 [(2, 3)], "float32"),
    "pad_reflect_wider_than_axis": (lambda a: np.pad(a, ((5, 4),), mode="reflect"),
                                    lambda a: onp.pad(a, ((5, 4),), mode="reflect"), [(3,)],
                                    "float32"),
    "pad_symmetric": (lambda a: np.pad(a, ((3, 1), (1, 4)), mode="symmetric"),
                      lambda a: onp.pad(a, ((3, 1), (1, 4)), mode="symmetric"), [(2, 3)],
                      "float32"),
    "pad_maximum": (lambda a: np.pad(a, (1, 2), mode="maximum"),
                    lambda a: onp.pad(a, (1, 2), mode="maximum"), [(2, 3)], "float32"),
    "pad_minimum": (lambda a: np.pad(a, ((0, 1), (2, 0)), mode="minimum"),
                    lambda a: onp.pad(a, ((0, 1), (2, 0)), mode="minimum"), [(2, 3)], "int32"),
    "einsum_matmul": (lambda a, b: np.einsum("ij,jk", a, b),
                      lambda a, b: onp.einsum("ij,jk", a, b), [(2, 3), (3, 4)], "float32"),
    "einsum_diagonal": (lambda a: np.einsum("ii->i", a), lambda a: onp.einsum("ii->i", a),
                        [(3, 3)], "int32"),
    "einsum_ellipsis_broadcast": (lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
                                  lambda a, b: onp.einsum("...ij,...jk->...ik", a, b),
                                  [(2, 1, 2, 3), (3, 3, 2)], "float64"),
    "einsum_outer_and_scalar": (lambda a, b, c: np.einsum(",i,j", a, b, c),
                                lambda a, b, c: onp.einsum(",i,j", a, b, c),
                                [(), (2,), (3,)], "float32"),
    "einsum_chain": (lambda a, b, c: np.einsum("ea,abcd,dc->e", a, b, c),
                     lambda a, b, c: onp.einsum("ea,abcd,dc->e", a, b, c),
                     [(2, 3), (3, 2, 2, 4), (4, 2)], "float64"),
    "einsum_zero_size": (lambda a, b: np.einsum("ij,jk", a, b),
                         lambda a, b: onp.einsum("ij,jk", a, b), [(2, 0), (0, 3)], "float32"),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_matches_numpy(name):
    mx_fn, np_fn, shapes, dtype = FORWARD[name]
    hosts = [_values(s, dtype, seed=i) for i, s in enumerate(shapes)]
    if name == "unravel_index":
        hosts = [h % 12 for h in hosts]
    got = mx_fn(*[np.array(h, dtype=h.dtype) for h in hosts])
    want = np_fn(*hosts)
    pairs = list(zip(got, want)) if isinstance(want, (list, tuple)) else [(got, want)]
    assert len(pairs) == (len(got) if isinstance(got, (list, tuple)) else 1)
    for g, w in pairs:
        assert isinstance(g, np.ndarray)
        assert g.shape == w.shape and g.dtype == onp.asarray(w).dtype, (g.shape, g.dtype)
        onp.testing.assert_allclose(g.asnumpy(), w, rtol=1e-3 if dtype == "float16" else 1e-6)


def test_shape_and_indices():
    assert np.shape(np.zeros((2, 0, 3))) == (2, 0, 3) and np.shape([[1, 2]]) == (1, 2)
    grid = np.indices((2, 3, 0))
    assert grid.shape == (3, 2, 3, 0) and grid.dtype == onp.int32
    onp.testing.assert_array_equal(np.indices((2, 3), dtype="float16").asnumpy(),
                                   onp.indices((2, 3), dtype="float16"))
    assert np.atleast_1d(np.ones(())).shape == (1,)
    assert [a.shape for a in np.atleast_2d(np.ones(()), np.ones(3))] == [(1, 1), (1, 3)]
    assert [a.shape for a in np.atleast_3d(np.ones(3), np.ones((2, 3)))] == [(1, 3, 1),
                                                                              (2, 3, 1)]


# -- gradients against central differences (float64) -----------------------------------
GRADIENTS = {
    "diag": (lambda a: np.diag(a, 1), [(3, 4)]),
    "diagflat": (lambda a: np.diagflat(a, -1), [(2, 2)]),
    "diagonal": (lambda a: np.diagonal(a, -1, 2, 1), [(2, 3, 4)]),
    "trace": (lambda a: np.trace(a, 1, 0, 2), [(3, 2, 4)]),
    "tril_1d": (lambda a: np.tril(a, -1), [(3,)]),
    "tril": (lambda a: np.tril(a, 1), [(2, 3, 4)]),
    "diff": (lambda a: np.diff(a, 2, 0), [(4, 3)]),
    "ediff1d": (lambda a, b: np.ediff1d(a, to_begin=b, to_end=1.5), [(2, 3), (2,)]),
    "cumsum": (lambda a: np.cumsum(a, 1), [(2, 3)]),
    "roll": (lambda a: np.roll(a, (2, -1), (1, 0)), [(2, 3)]),
    "rot90": (lambda a: np.rot90(a, 3, (2, 1)), [(2, 3, 2)]),
    "fliplr": (lambda a: np.fliplr(a), [(2, 3)]),
    "resize": (lambda a: np.resize(a, (3, 3)), [(2, 2)]),
    "meshgrid": (lambda a, b: np.meshgrid(a, b)[0] * np.meshgrid(a, b)[1], [(2,), (3,)]),
    "column_stack": (lambda a, b: np.column_stack([a, b]), [(3,), (3, 2)]),
    "insert": (lambda a, b: np.insert(a, [1, 1, 3], b, axis=1), [(2, 3), (2, 1)]),
    "insert_broadcast": (lambda a, b: np.insert(a, 0, b, axis=0), [(2, 3), (1,)]),
    "delete": (lambda a: np.delete(a, slice(0, None, 2), 1), [(2, 4)]),
    "pad_constant": (lambda a: np.pad(a, ((1, 0), (2, 1))), [(2, 3)]),
    "pad_reflect": (lambda a: np.pad(a, ((3, 1), (1, 4)), mode="reflect"), [(2, 3)]),
    "pad_edge": (lambda a: np.pad(a, 2, mode="edge"), [(2, 3)]),
    "pad_maximum": (lambda a: np.pad(a, 1, mode="maximum"), [(2, 3)]),
    "einsum_contract": (lambda a, b: np.einsum("ijk,jil->kl", a, b), [(2, 3, 2), (3, 2, 4)]),
    "einsum_repeated": (lambda a: np.einsum("iji->j", a), [(2, 3, 2)]),
    "einsum_size_one_broadcast": (lambda a, b: np.einsum("ij,ij->i", a, b), [(1, 4), (2, 4)]),
}


def _central_differences(f, hosts, weights, index, eps=1e-6):
    grad = onp.zeros_like(hosts[index])
    for at in onp.ndindex(*hosts[index].shape):
        values = []
        for step in (eps, -eps):
            moved = [h.copy() for h in hosts]
            moved[index][at] += step
            out = f(*[np.array(h, dtype="float64") for h in moved]).asnumpy()
            values.append((out * weights).sum())
        grad[at] = (values[0] - values[1]) / (2 * eps)
    return grad


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradient_matches_central_differences(name):
    f, shapes = GRADIENTS[name]
    rng = onp.random.default_rng(1)
    hosts = [rng.uniform(-1, 1, s) for s in shapes]
    arrays = [np.array(h, dtype="float64") for h in hosts]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = f(*arrays)
    weights = rng.uniform(-1, 1, out.shape)
    out.backward(np.array(weights, dtype="float64"))
    for index, a in enumerate(arrays):
        onp.testing.assert_allclose(a.grad.asnumpy(),
                                    _central_differences(f, hosts, weights, index),
                                    rtol=1e-5, atol=1e-7)


def test_empty_results_stay_in_the_graph():
    a = np.ones((2, 3))
    a.attach_grad()
    with autograd.record():
        parts = [np.diagonal(a, 4), np.ediff1d(a[:1, :1]), np.einsum("ij,jk", a[:, :0],
                                                                      a[:0]).sum()]
    autograd.backward(parts)
    assert parts[0].shape == (0,) and parts[1].shape == (0,)
    onp.testing.assert_array_equal(a.grad.asnumpy(), onp.zeros((2, 3)))


# -- hybridized blocks: traced into a graph, same values and gradients ------------------------
def _block(fn):
    @use_np
    class Block(HybridBlock):
        def hybrid_forward(self, F, *xs):
            return fn(F, *xs)

    return Block


HYBRIDIZED = {
    "trace": (lambda F, a: F.np.trace(a, -1), [(3, 4)], lambda a: onp.trace(a, -1)),
    "tril": (lambda F, a: F.np.tril(a), [(3, 3)], onp.tril),
    "cumsum": (lambda F, a: a.cumsum(axis=0), [(3, 2)], lambda a: onp.cumsum(a, 0)),
    "roll": (lambda F, a: F.np.roll(a, 2), [(2, 3)], lambda a: onp.roll(a, 2)),
    "insert": (lambda F, a, b: F.np.insert(a, [0, 2], b, axis=0), [(3, 2), (1, 2)],
               lambda a, b: onp.insert(a, [0, 2], b, axis=0)),
    "pad": (lambda F, a: F.np.pad(a, ((1, 1), (2, 0)), mode="symmetric"), [(2, 3)],
            lambda a: onp.pad(a, ((1, 1), (2, 0)), mode="symmetric")),
    "einsum": (lambda F, a, b: F.np.einsum("ij,kj->ik", a, b), [(2, 3), (4, 3)],
               lambda a, b: onp.einsum("ij,kj->ik", a, b)),
    "diff": (lambda F, a: F.np.diff(a, 2), [(2, 5)], lambda a: onp.diff(a, 2)),
}


@pytest.mark.parametrize("name", sorted(HYBRIDIZED))
def test_hybridized_block_is_consistent(name, recwarn):
    npx.set_np()  # F.np in hybrid_forward (the fixture turns it off again)
    fn, shapes, numpy_fn = HYBRIDIZED[name]
    data = [np.array(_values(s, seed=i), dtype="float32") for i, s in enumerate(shapes)]
    check_gluon_hybridize_consistency(_block(fn), data, numpy_func=numpy_fn)
    assert not [w for w in recwarn if "imperatively" in str(w.message)]


# -- errors -----------------------------------------------------------------------------------
ERRORS = {
    "diagonal_1d": (lambda: np.diagonal(np.ones(3)), mx.base.MXNetError),
    "diagonal_same_axes": (lambda: np.diagonal(np.ones((2, 2)), 0, 1, -1), ValueError),
    "diag_3d": (lambda: np.diag(np.ones((2, 2, 2))), ValueError),
    "trace_0d": (lambda: np.trace(np.ones(())), mx.base.MXNetError),
    "trace_axis_out_of_range": (lambda: np.trace(np.ones((3, 2, 2)), 0, 0, -4), ValueError),
    "tril_0d": (lambda: np.tril(np.ones(())), ValueError),
    "diag_indices_unequal": (lambda: np.diag_indices_from(np.ones((2, 3))), ValueError),
    "diff_negative_order": (lambda: np.diff(np.ones(3), -1), ValueError),
    "diff_0d": (lambda: np.diff(np.ones(())), ValueError),
    "cumsum_axis_out_of_range": (lambda: np.cumsum(np.ones((2, 3)), axis=2),
                                 mx.base.MXNetError),
    "cumsum_uint8": (lambda: np.cumsum(np.ones(3), dtype="uint8"), mx.base.MXNetError),
    "roll_axis": (lambda: np.roll(np.ones((2, 3)), 1, 2), ValueError),
    "roll_lengths": (lambda: np.roll(np.ones((2, 3)), (1, 2, 3), (0, 1)), ValueError),
    "rot90_same_axes": (lambda: np.rot90(np.ones((2, 3)), 1, (1, -1)), ValueError),
    "rot90_three_axes": (lambda: np.rot90(np.ones((2, 3)), 1, (0, 1, 2)), ValueError),
    "flipud_0d": (lambda: np.flipud(np.ones(())), ValueError),
    "fliplr_1d": (lambda: np.fliplr(np.ones(3)), ValueError),
    "atleast_nothing": (lambda: np.atleast_2d(), ValueError),
    "resize_negative": (lambda: np.resize(np.ones(3), (2, -1)), ValueError),
    "vsplit_1d": (lambda: np.vsplit(np.ones(4), 2), ValueError),
    "hsplit_0d": (lambda: np.hsplit(np.ones(()), 1), ValueError),
    "dsplit_2d": (lambda: np.dsplit(np.ones((2, 2)), 2), ValueError),
    "vsplit_uneven": (lambda: np.vsplit(np.ones((3, 2)), 2), ValueError),
    "insert_out_of_range": (lambda: np.insert(np.ones((2, 3)), 7, 1.0), IndexError),
    "insert_float_indices": (lambda: np.insert(np.ones(3), np.array([1.0]), 1.0), ValueError),
    "delete_out_of_range": (lambda: np.delete(np.ones((2, 3)), 3, axis=1), IndexError),
    "delete_list": (lambda: np.delete(np.ones(3), [0, 1]), TypeError),
    "unravel_float": (lambda: np.unravel_index(np.array([1.0]), (2, 2)), ValueError),
    "unravel_order_f": (lambda: np.unravel_index(np.array([1]), (2, 2), order="F"),
                        NotImplementedError),
    "pad_wrap": (lambda: np.pad(np.ones(3), 1, mode="wrap"), ValueError),
    "pad_stat_length": (lambda: np.pad(np.ones(3), 1, mode="maximum", stat_length=1),
                        ValueError),
    "pad_negative": (lambda: np.pad(np.ones(3), -1), ValueError),
    "pad_edge_of_empty_axis": (lambda: np.pad(np.ones((0, 2)), 1, mode="edge"), ValueError),
    "einsum_operand_count": (lambda: np.einsum("i,i", np.ones(2)), ValueError),
    "einsum_sizes": (lambda: np.einsum("ij,jk", np.ones((2, 3)), np.ones((2, 2))), ValueError),
    "einsum_repeated_output": (lambda: np.einsum("i->ii", np.ones(2)), ValueError),
    "einsum_unknown_output": (lambda: np.einsum("i->j", np.ones(2)), ValueError),
    "einsum_dtypes": (lambda: np.einsum("i,i", np.ones(2), np.ones(2, dtype="int32")),
                      ValueError),
    "einsum_ellipsis_dropped": (lambda: np.einsum("...i->i", np.ones((2, 3))), ValueError),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    call, error = ERRORS[name]
    with pytest.raises(error):
        call().wait_to_read()


@pytest.mark.parametrize("name", ["roll", "tril"])
def test_mx_sym_np_holds_roll_and_tril(name):
    npx.set_np()
    host = _values((3, 4))
    x = mx.sym.Variable("x").as_np_ndarray()
    y = mx.sym.np.roll(x, (1, -5), (0, 1)) if name == "roll" else mx.sym.np.tril(x, 1)
    executor = y.bind(mx.cpu(), {"x": np.array(host)})
    executor.forward()
    want = onp.roll(host, (1, -5), (0, 1)) if name == "roll" else onp.tril(host, 1)
    onp.testing.assert_array_equal(executor.outputs[0].asnumpy(), want)
