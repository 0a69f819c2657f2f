"""The helpers MXNet 1.9.1's own unit tests import from ``mxnet.test_utils``."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dagnet as mx
from dagnet import test_utils as tu

# --- tolerances -------------------------------------------------------------


def test_default_dtype_and_tolerance_tables():
    assert tu.default_dtype() is np.float32
    assert tu.default_rtols()[np.dtype(np.float32)] == 1e-4
    assert tu.default_atols()[np.dtype(np.float16)] == 1e-1
    assert tu.default_rtols()[np.dtype(np.int32)] == 0
    assert tu.default_atols()[np.dtype(np.bool_)] == 0


def test_get_atol_rtol_etol():
    assert tu.get_rtol() == 1e-5 and tu.get_atol() == 1e-20
    assert tu.get_rtol(None, np.float16) == 1e-2
    assert tu.get_atol(0.5, np.float16) == 0.5
    assert tu.get_etol() == 0 and tu.get_etol(0.1) == 0.1


def test_get_tolerance_and_get_tols():
    x32 = np.zeros(2, np.float32)
    x16 = np.zeros(2, np.float16)
    assert tu.get_tolerance(x32, 0.3, tu.default_rtols()) == 0.3
    assert tu.get_tolerance(x32, None, tu.default_rtols()) == 1e-4
    assert tu.get_tolerance(x32, {np.dtype(np.float32): 7.0}, tu.default_rtols()) == 7.0
    assert tu.get_tolerance(x16, {np.dtype(np.float32): 7.0}, tu.default_rtols()) == 1e-2
    assert tu.get_tols(x32, x16, None, None) == (1e-2, 1e-1)
    assert tu.get_tols(mx.nd.array(x32), 1.0, None, None) == (1e-4, 1e-3)
    assert tu.effective_dtype(mx.nd.zeros((1,))) == np.dtype(np.float32)


# --- comparisons ------------------------------------------------------------


def test_same():
    assert tu.same(np.array([1, 2]), np.array([1, 2]))
    assert not tu.same(np.array([1, 2]), np.array([1, 3]))
    assert not tu.same(np.zeros((2, 1)), np.zeros((1, 2)))
    assert tu.same(mx.nd.array([1.0, 2.0]), np.array([1.0, 2.0]))


def test_almost_equal_uses_float64_defaults():
    a = np.array([1.0, 2.0], np.float32)
    assert tu.almost_equal(a, a + 1e-6)
    assert not tu.almost_equal(a, a + 1e-3)  # within float32's 1e-3, not float64's
    assert tu.almost_equal(a, a + 1e-3, rtol=1e-2)
    assert tu.almost_equal(np.ones((2, 3)), np.ones(3))
    with pytest.raises(AssertionError, match="not equal"):
        tu.almost_equal(np.ones((2, 3)), np.ones(3), use_broadcast=False)


def test_assert_almost_equal_dict_tolerances_and_bool():
    a = np.ones(3, np.float32)
    tu.assert_almost_equal(a, a + 5e-4)
    with pytest.raises(AssertionError, match="differ beyond"):
        tu.assert_almost_equal(a, a + 5e-4, atol={np.dtype(np.float32): 1e-5}, rtol=0)
    tu.assert_almost_equal(np.array([True, False]), np.array([True, False]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))
    with pytest.raises(AssertionError, match="not equal"):
        tu.assert_almost_equal(np.ones((2, 3)), np.ones(3), use_broadcast=False)


def test_assert_almost_equal_finds_one_bad_element_in_a_large_array():
    # large arrays are compared block by block: the last, partial block counts too
    a = np.zeros(100_003, np.float32)
    b = a.copy()
    b[-1] = np.nan
    with pytest.raises(AssertionError, match=r"in 1 of 100003 elements; worst at index \(100002,"):
        tu.assert_almost_equal(a, b)
    a[-1] = np.nan
    tu.assert_almost_equal(a, b, equal_nan=True)
    b[50_000] = 1.0
    with pytest.raises(AssertionError, match="in 1 of 100003"):
        tu.assert_almost_equal(a, b, equal_nan=True)


def test_assert_allclose_is_strict():
    tu.assert_allclose(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    with pytest.raises(AssertionError):
        tu.assert_allclose(np.array([1.0]), np.array([1.0 + 1e-5]))


def test_assert_almost_equal_ignore_nan():
    a = np.array([1.0, np.nan, 3.0])
    b = np.array([1.0, 2.0, np.nan])
    tu.assert_almost_equal_ignore_nan(a, b)
    assert np.isnan(a[1]), "the inputs are left alone"
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(np.array([1.0, np.nan]), np.array([2.0, 0.0]))


def test_assert_almost_equal_with_err():
    a = np.zeros(10)
    b = a.copy()
    b[0] = 1.0
    tu.assert_almost_equal_with_err(a, b, etol=0.2)
    with pytest.raises(AssertionError, match="Location of maximum error: \\(0,\\)"):
        tu.assert_almost_equal_with_err(a, b, etol=0.05)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_with_err(a, b)  # etol 0: every element must agree


def test_check_shapes_and_location_error():
    tu.checkShapes(np.zeros(2), np.zeros(2))
    with pytest.raises(AssertionError):
        tu.checkShapes(np.zeros(2), np.zeros(3))
    msg = tu.locationError(np.array([1.0, 2.0]), np.array([1.0, 3.0]), (1,), ("x", "y"), True)
    assert msg == "Location of maximum error: (1,), x=2.00000000, y=3.00000000"


def test_assert_exception():
    tu.assert_exception(int, ValueError, "not a number")
    tu.assert_exception(lambda **kw: kw["missing"], KeyError)
    with pytest.raises(AssertionError, match="did not raise ValueError"):
        tu.assert_exception(int, ValueError, "12")
    with pytest.raises(TypeError):  # another exception goes through
        tu.assert_exception(int, ValueError, object())


def test_compare_ndarray_tuple():
    x = mx.nd.array([1.0, 2.0])
    tu.compare_ndarray_tuple((x, (x, None)), (x, (x, x)))
    tu.compare_ndarray_tuple(None, x)
    with pytest.raises(AssertionError):
        tu.compare_ndarray_tuple((x,), (x + 1,))


def test_same_array():
    x = mx.nd.array([1.0, 2.0])
    assert tu.same_array(x, x)
    assert not tu.same_array(x, x.copy())
    assert tu.same(x.asnumpy(), [1.0, 2.0])


def test_same_symbol_structure():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    assert tu.same_symbol_structure(mx.sym.exp(a) + 1, mx.sym.exp(b) + 2)
    assert not tu.same_symbol_structure(mx.sym.exp(a), mx.sym.log(b))


def test_collapse_sum_like():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.collapse_sum_like(a, (3, 1)), a.sum(axis=(0, 2))[:, None])
    np.testing.assert_array_equal(tu.collapse_sum_like(a, (0, 4)), np.zeros((0, 4)))
    with pytest.raises(AssertionError):
        tu.collapse_sum_like(a, (2, 4))


def test_np_reduce():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(x, 1, False, np.sum), x.sum(axis=1))
    np.testing.assert_array_equal(tu.np_reduce(x, (0, 2), True, np.max),
                                  x.max(axis=(0, 2), keepdims=True))
    assert tu.np_reduce(x, None, False, np.sum) == x.sum()


# --- contexts ---------------------------------------------------------------


def _in_fresh_thread(fn):
    import threading

    out = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def test_set_default_context_lasts_until_set_again():
    def body():
        tu.set_default_context(mx.cpu(2))
        first = tu.default_context()
        with mx.cpu(3):
            tu.set_default_context(mx.cpu(4))
            inner = tu.default_context()
        after = tu.default_context()
        tu.set_default_context(mx.cpu(0))
        return first, inner, after, tu.default_context()

    assert _in_fresh_thread(body) == (mx.cpu(2), mx.cpu(4), mx.cpu(2), mx.cpu(0))
    with pytest.raises(TypeError):
        tu.set_default_context("cpu")


def test_list_gpus():
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))


# --- random inputs ----------------------------------------------------------


def test_random_arrays():
    a = tu.random_arrays((2, 3))
    assert a.shape == (2, 3) and a.dtype == np.float32
    b, c = tu.random_arrays((1,), ())
    assert b.shape == (1,) and c.shape == () and c.dtype == np.float32
    np.random.seed(3)
    first = tu.random_arrays((4,))
    np.random.seed(3)
    assert tu.same(first, tu.random_arrays((4,)))


def test_random_uniform_arrays():
    (a,) = tu.random_uniform_arrays((50,), low=2.0, high=3.0, dtype=np.float64)
    assert a.dtype == np.float64 and a.min() >= 2.0 and a.max() < 3.0
    with pytest.raises(TypeError):
        tu.random_uniform_arrays((2,), scale=2)


def test_random_sample():
    population = list(range(10))
    sample = tu.random_sample(population, 4)
    assert len(sample) == 4 and len(set(sample)) == 4 and set(sample) <= set(population)
    assert population == list(range(10))
    with pytest.raises(AssertionError):
        tu.random_sample(population, 11)


def test_rand_shapes():
    for _ in range(20):
        assert all(1 <= d <= 4 for d in tu.rand_shape_2d(4, 4))
        assert all(1 <= d <= 3 for d in tu.rand_shape_3d(3, 3, 3))
        assert all(0 <= d <= 1 for d in tu.rand_shape_3d(1, 1, 1, allow_zero_size=True))
    assert 0 in {d for _ in range(50) for d in tu.rand_shape_2d(1, 1, allow_zero_size=True)}
    x, y = tu.rand_coord_2d(0, 3, 5, 6)
    assert 0 <= x < 3 and y == 5


def test_rand_ndarray_is_normal_and_sparse_on_request():
    a = tu.rand_ndarray((200,), dtype=np.float64)
    assert a.shape == (200,) and a.dtype == np.float64
    assert a.asnumpy().min() < 0 < a.asnumpy().max()
    c = tu.rand_ndarray((20, 30), "csr", density=0.3)
    assert c.stype == "csr" and c.shape == (20, 30)
    assert 0 < np.count_nonzero(c.asnumpy()) < 600
    r, (values, rows) = tu.rand_sparse_ndarray((6, 2), "row_sparse", rsp_indices=[1, 4])
    assert r.stype == "row_sparse" and rows.tolist() == [1, 4]
    np.testing.assert_array_equal(r.asnumpy()[[1, 4]], values)
    with pytest.raises(ValueError, match="'coo'"):
        tu.rand_ndarray((2, 2), "coo")


def test_assign_each():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(tu.assign_each(x, lambda v: v * 10), x * 10)
    np.testing.assert_array_equal(tu.assign_each(x, None), x)
    np.testing.assert_array_equal(tu.assign_each2(x, x, lambda u, v: u - v), np.zeros((2, 2)))
    with pytest.raises(AssertionError):
        tu.assign_each2(x, x[0], lambda u, v: u)


def test_tensor_builders():
    t = tu.create_2d_tensor(3, 2)
    np.testing.assert_array_equal(t.asnumpy(), [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(tu.create_vector(4).asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(tu.get_identity_mat(3).asnumpy(), np.eye(3))
    assert tu.get_identity_mat_batch(2).shape == (2, 2, 2)


def test_matrices_with_real_eigenvalues():
    m = tu.new_matrix_with_real_eigvals_nd((2, 3, 3))
    assert m.shape == (2, 3, 3)
    assert np.allclose(np.linalg.eigvals(m).imag, 0, atol=1e-6)
    q = tu.new_orthonormal_matrix_2d(4)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-10)
    s = tu.new_sym_matrix_with_real_eigvals_nd((3, 3))
    np.testing.assert_allclose(s, s.T, atol=1e-10)
    assert np.abs(np.linalg.eigvalsh(s)).max() <= 10 + 1e-9


# --- running things ---------------------------------------------------------


def test_simple_forward():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    out = tu.simple_forward(x + y, x=np.ones(2), y=np.full(2, 2.0))
    np.testing.assert_array_equal(out, [3.0, 3.0])
    both = tu.simple_forward(mx.sym.Group([x * 2, x + 1]), ctx=mx.cpu(), x=np.ones(2))
    assert isinstance(both, list) and len(both) == 2


def test_compare_optimizer():
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                         mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                             mx.optimizer.SGD(learning_rate=0.2), (3, 4), np.float32)
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                         mx.optimizer.SGD(learning_rate=0.1), (3, 4), np.float32,
                         w_stype="row_sparse", g_stype="row_sparse")


def test_retry():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2

    flaky()
    assert len(calls) == 2

    @tu.retry(2)
    def always_fails():
        calls.append(1)
        raise AssertionError("no")

    calls.clear()
    with pytest.raises(AssertionError, match="no"):
        always_fails()
    assert len(calls) == 2


NAME = "DAGNET_TEST_UTILS_ENV"


def test_environment_sets_and_restores(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    monkeypatch.setenv(NAME + "_2", "old")
    with tu.environment(NAME, "1"):
        assert os.environ[NAME] == "1"
    assert NAME not in os.environ
    with tu.environment({NAME: "a", NAME + "_2": None}):
        assert os.environ[NAME] == "a" and NAME + "_2" not in os.environ
    assert NAME not in os.environ and os.environ[NAME + "_2"] == "old"
    with pytest.raises(KeyError), tu.environment(NAME + "_2", "new"):
        assert os.environ[NAME + "_2"] == "new"
        raise KeyError("body fails")
    assert os.environ[NAME + "_2"] == "old"
    with pytest.raises(AssertionError):
        with tu.environment(NAME):
            pass


def test_environment_as_decorator(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)

    @tu.environment(NAME, "on")
    def read():
        return os.environ.get(NAME)

    assert read() == "on" and read() == "on"
    assert NAME not in os.environ


def test_discard_stderr_drops_file_descriptor_2():
    code = textwrap.dedent("""
        import os, sys
        from dagnet.test_utils import discard_stderr
        with discard_stderr():
            os.write(2, b"hidden\\n")
            print("hidden too", file=sys.stderr)
        os.write(2, b"shown\\n")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stderr == "shown\n"


def test_is_cd_run_and_aarch64(monkeypatch):
    monkeypatch.setenv("CD_JOB", "1")
    assert tu.is_cd_run()
    monkeypatch.setenv("CD_JOB", "0")
    assert not tu.is_cd_run()
    assert isinstance(tu.is_aarch64_run(), bool)


def test_no_tvm_ops_so_every_op_runs():
    assert tu.has_tvm_ops() is False
    assert tu.is_op_runnable() is True
    with mx.gpu(0):
        assert tu.is_op_runnable() is True


def test_dummy_iter_repeats_the_first_batch():
    data = np.arange(12.0).reshape(6, 2)
    real = mx.io.NDArrayIter(data, batch_size=2)
    dummy = tu.DummyIter(real)
    assert dummy.batch_size == 2 and dummy.provide_data == real.provide_data
    batches = [next(dummy) for _ in range(5)]
    assert all(b is batches[0] for b in batches)
    np.testing.assert_array_equal(batches[0].data[0].asnumpy(), data[:2])


# --- random generators ------------------------------------------------------


def test_gen_buckets_probs_with_ppf():
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: 4 * q, 4)
    assert buckets == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0)]
    assert probs == [0.25] * 4
    with pytest.raises(AssertionError):
        tu.gen_buckets_probs_with_ppf(lambda q: q, 0)


def test_mean_and_var_check():
    rng = np.random.default_rng(0)

    def normal(n):
        return rng.normal(0.0, 1.0, size=n)

    assert tu.mean_check(normal, 0.0, 1.0, nsamples=100000)
    assert not tu.mean_check(normal, 0.5, 1.0, nsamples=100000)
    assert tu.var_check(normal, 1.0, nsamples=100000)
    assert not tu.var_check(normal, 2.0, nsamples=100000)


def test_chi_square_check_continuous_and_discrete():
    pytest.importorskip("scipy")
    rng = np.random.default_rng(1)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: q, 5)
    p, obs, expected = tu.chi_square_check(lambda n: rng.uniform(size=n), buckets, probs, 10000)
    assert obs.sum() == 10000 and list(expected) == [2000] * 5 and 0 <= p <= 1
    p, obs, _ = tu.chi_square_check(lambda n: rng.integers(0, 3, size=n), [0, 1, 2],
                                    [1 / 3] * 3, 9000)
    assert obs.sum() == 9000
    # expected counts truncated to integers (3333 each) need not sum to nsamples
    buckets3, probs3 = tu.gen_buckets_probs_with_ppf(lambda q: q, 3)
    p, obs, expected = tu.chi_square_check(lambda n: mx.nd.array(rng.uniform(size=n)),
                                           buckets3, probs3, 10000)
    assert list(expected) == [3333] * 3 and obs.sum() == 10000 and 0 <= p <= 1
    scipy_stats = pytest.importorskip("scipy.stats")
    want = scipy_stats.chisquare(obs, expected * (10000 / expected.sum())).statistic
    assert want == pytest.approx(float(((obs - expected) ** 2 / expected).sum()), rel=1e-3)
    with pytest.raises(AssertionError):  # overlapping buckets
        tu.chi_square_check(lambda n: rng.uniform(size=n), [(0, 0.6), (0.5, 1)], [0.5, 0.5])


def test_verify_generator_passes_right_and_fails_wrong_distribution():
    pytest.importorskip("scipy")
    rng = np.random.default_rng(2)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: q, 5)
    p_values = tu.verify_generator(lambda n: rng.uniform(size=n), buckets, probs,
                                   nsamples=20000, nrepeat=5)
    assert len(p_values) == 5
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: rng.uniform(size=n) ** 2, buckets, probs, nsamples=20000)


def test_chi_square_check_names_scipy_when_missing():
    code = textwrap.dedent("""
        import sys
        sys.modules["scipy"] = None  # as if scipy were not installed
        from dagnet.test_utils import chi_square_check
        try:
            chi_square_check(lambda n: [0] * n, [0], [1.0], 10)
        except ImportError as error:
            print(error)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert "need scipy" in done.stdout and "pip install scipy" in done.stdout
