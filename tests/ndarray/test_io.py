"""``nd.save`` / ``nd.load`` / ``nd.load_frombuffer``: MXNet 1.x's binary NDArray-list format.

The ``data/mxnet_*.params`` fixtures were written by MXNet 1.9.1 with
``data/make_mxnet_fixtures.py`` (not run here; the tests need no MXNet).  Each array in
them is the script's ``fixture_values(dtype, shape)``, imported from it here (the
script imports MXNet only when run).
"""

from __future__ import annotations

import json
import re
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

import dagnet as mx

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from make_mxnet_fixtures import fixture_values  # noqa: E402  (numpy only; MXNet not needed)

ALL_DTYPES = ["float32", "float64", "float16", "uint8", "int32", "int8", "int64", "bool",
              "int16", "uint16", "uint32", "uint64"]  # in the order of MXNet's type flags
MXNET_DTYPES = ALL_DTYPES[:8]  # those MXNet 1.9.1's Python API can create

LIST = [("float32", (2, 3)), ("int64", (4,)), ("uint8", (2, 2, 2)), ("float16", (3,))]
DICT = {"arg:fc1_weight": ("float32", (3, 4)), "arg:fc1_bias": ("float32", (3,)),
        "aux:bn0_moving_mean": ("float32", (3,)), "aux:bn0_moving_var": ("float64", (3,))}
EMPTY = [("float32", (0,)), ("int32", (2, 0)), ("float64", (1, 2))]
NP_SHAPE = {"scalar": ("float32", ()), "empty": ("float32", (0, 3)), "m": ("int32", (2, 2))}
GLUON = {"weight": ("float32", (3, 2)), "bias": ("float32", (3,))}
OLD = [("float32", (2, 3)), ("int32", (4,))]


def nd(dtype: str, shape: tuple[int, ...], ctx=None) -> mx.nd.NDArray:
    return mx.nd.array(fixture_values(dtype, shape), ctx=ctx, dtype=dtype)


def assert_same(got: mx.nd.NDArray, want: np.ndarray) -> None:
    assert np.dtype(got.dtype) == want.dtype and got.shape == want.shape
    host = got.asnumpy()
    assert host.dtype == want.dtype
    np.testing.assert_array_equal(host, want)


def header(count: int) -> bytes:
    return struct.pack("<QQQ", 0x112, 0, count)


def v2_record(values: np.ndarray, flag: int, magic: int = 0xF993FAC9) -> bytes:
    return (struct.pack(f"<Iii{values.ndim}q", magic, 0, values.ndim, *values.shape)
            + struct.pack("<iii", 1, 0, flag) + values.astype(values.dtype.newbyteorder("<"))
            .tobytes())


NO_NAMES = struct.pack("<Q", 0)


# --- files MXNet 1.9.1 wrote ---------------------------------------------------------------

@pytest.mark.parametrize("fname, spec", [
    ("mxnet_list.params", LIST), ("mxnet_dict.params", DICT), ("mxnet_empty.params", EMPTY),
    ("mxnet_np_shape.params", NP_SHAPE), ("mxnet_gluon_dense.params", GLUON),
    ("mxnet_dtypes.params", {d: (d, (2, 3)) for d in MXNET_DTYPES}),
    ("mxnet_v1.params", OLD), ("mxnet_legacy.params", OLD),
    ("mxnet_v2_scalar.params", [("float64", ()), ("float32", (2,))]),
])
def test_loads_mxnet_files_exactly(fname, spec):
    with mx.np_shape(fname == "mxnet_np_shape.params"):  # saved under NumPy shapes
        loaded = mx.nd.load(str(DATA / fname))
    if isinstance(spec, dict):
        assert isinstance(loaded, dict) and list(loaded) == list(spec)
        pairs = [(loaded[name], spec[name]) for name in spec]
    else:
        assert isinstance(loaded, list) and len(loaded) == len(spec)
        pairs = list(zip(loaded, spec))
    for got, (dtype, shape) in pairs:
        assert got.context == mx.cpu()
        assert_same(got, fixture_values(dtype, shape))


@pytest.mark.parametrize("fname, spec", [
    ("mxnet_list.params", LIST), ("mxnet_dict.params", DICT), ("mxnet_empty.params", EMPTY),
    ("mxnet_np_shape.params", NP_SHAPE), ("mxnet_gluon_dense.params", GLUON),
    ("mxnet_dtypes.params", {d: (d, (2, 3)) for d in MXNET_DTYPES}),
])
def test_saved_bytes_equal_mxnets(tmp_path, fname, spec):
    if isinstance(spec, dict):
        data = {name: nd(dtype, shape) for name, (dtype, shape) in spec.items()}
    else:
        data = [nd(dtype, shape) for dtype, shape in spec]
    mx.nd.save(tmp_path / fname, data)
    assert (tmp_path / fname).read_bytes() == (DATA / fname).read_bytes()


def test_single_array_and_other_devices_save_as_cpu_arrays(tmp_path):
    mx.nd.save(tmp_path / "one", nd("float32", (2, 3), ctx=mx.cpu(1)))
    want = header(1) + v2_record(fixture_values("float32", (2, 3)), 0) + NO_NAMES
    assert (tmp_path / "one").read_bytes() == want
    (loaded,) = mx.nd.load(tmp_path / "one", ctx=mx.cpu(1))
    assert loaded.context == mx.cpu(1)
    assert_same(loaded, fixture_values("float32", (2, 3)))


def test_a_0d_array_makes_the_file_version_3(tmp_path):
    mx.nd.save(tmp_path / "s", [nd("float32", (2,)), nd("int64", ())])
    raw = (tmp_path / "s").read_bytes()
    want = (header(2) + v2_record(fixture_values("float32", (2,)), 0, 0xF993FACA)
            + v2_record(fixture_values("int64", ()), 6, 0xF993FACA) + NO_NAMES)
    assert raw == want
    with mx.np_shape(True):
        got = mx.nd.load(tmp_path / "s")
    assert_same(got[1], fixture_values("int64", ()))


# --- round trips ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_round_trip_of_every_dtype(tmp_path, dtype):
    arrays = {"a": nd(dtype, (3, 4)), "scalar": nd(dtype, ()), "empty": nd(dtype, (2, 0, 3))}
    mx.nd.save(tmp_path / "f.params", arrays)
    raw = (tmp_path / "f.params").read_bytes()
    flag = ALL_DTYPES.index(dtype)
    assert raw.startswith(header(3) + v2_record(fixture_values(dtype, (3, 4)), flag, 0xF993FACA))
    with mx.np_shape(True):
        loaded = mx.nd.load(tmp_path / "f.params")
        again = mx.nd.load_frombuffer(raw)
    assert list(loaded) == ["a", "scalar", "empty"]
    for name, shape in [("a", (3, 4)), ("scalar", ()), ("empty", (2, 0, 3))]:
        assert_same(loaded[name], fixture_values(dtype, shape))
    for name in arrays:
        assert_same(again[name], loaded[name].asnumpy())


def test_names_tuples_and_empty_containers(tmp_path):
    data = {"arg:ü/ß": nd("float32", (1,)), "": nd("int8", (2,))}
    mx.nd.save(tmp_path / "u", data)
    loaded = mx.nd.load(tmp_path / "u")
    assert list(loaded) == ["arg:ü/ß", ""]
    mx.nd.save(tmp_path / "t", (nd("uint8", (2,)), nd("float16", (1, 1))))
    assert [a.shape for a in mx.nd.load(tmp_path / "t")] == [(2,), (1, 1)]
    mx.nd.save(tmp_path / "e", [])
    assert (tmp_path / "e").read_bytes() == header(0) + NO_NAMES
    assert mx.nd.load(tmp_path / "e") == []


def test_load_frombuffer_matches_load_and_puts_arrays_on_ctx():
    raw = (DATA / "mxnet_dict.params").read_bytes()
    for buf in (raw, bytearray(raw), memoryview(raw)):
        loaded = mx.nd.load_frombuffer(buf, ctx=mx.cpu(1))
        assert list(loaded) == list(DICT)
        for name, (dtype, shape) in DICT.items():
            assert loaded[name].context == mx.cpu(1)
            assert_same(loaded[name], fixture_values(dtype, shape))
    with pytest.raises(TypeError, match="must be bytes"):
        mx.nd.load_frombuffer(raw.decode("latin-1"))
    with pytest.raises(TypeError, match="must be bytes, got list"):
        mx.nd.load_frombuffer([1, 2])


def test_save_waits_for_pending_writes(tmp_path, engine_name):
    x = mx.nd.zeros((3,))
    mx.nd._ndtest_slow(x, seconds=0.02, add=4.0, out=x)
    mx.nd.save(tmp_path / "pending", [x])
    np.testing.assert_array_equal(mx.nd.load(tmp_path / "pending")[0].asnumpy(), [4, 4, 4])


def test_saves_views_as_their_values(tmp_path):
    base = nd("float32", (4, 3))
    mx.nd.save(tmp_path / "v", [base[1:3], base.T])
    got = mx.nd.load(tmp_path / "v")
    assert_same(got[0], fixture_values("float32", (4, 3))[1:3])
    assert_same(got[1], np.ascontiguousarray(fixture_values("float32", (4, 3)).T))


def test_loads_npz_files_of_earlier_dagnet(tmp_path):
    manifest = {"format": "dagnet.ndarray", "version": 1, "kind": "dict", "names": ["w", "b"]}
    np.savez(tmp_path / "old.npz", a0=np.ones((2, 2), np.float32), a1=np.arange(3),
             __dagnet__=np.array(json.dumps(manifest)))
    loaded = mx.nd.load(tmp_path / "old.npz")
    assert list(loaded) == ["w", "b"]
    assert_same(loaded["b"], np.arange(3))
    manifest.update(kind="list", names=[])
    np.savez(tmp_path / "old_list.npz", a0=np.zeros(2, np.float64),
             __dagnet__=np.array(json.dumps(manifest)))
    (only,) = mx.nd.load(tmp_path / "old_list.npz")
    assert_same(only, np.zeros(2))
    np.savez(tmp_path / "plain.npz", a=np.ones(2))
    with pytest.raises(ValueError, match="without a dagnet manifest"):
        mx.nd.load(tmp_path / "plain.npz")


# --- errors --------------------------------------------------------------------------------

def test_bad_save_arguments(tmp_path):
    with pytest.raises(TypeError, match="item 1 is list"):
        mx.nd.save(tmp_path / "bad", [mx.nd.ones(1), [1]])
    with pytest.raises(TypeError, match="item 'b' is ndarray"):
        mx.nd.save(tmp_path / "bad", {"a": mx.nd.ones(1), "b": np.ones(1)})
    with pytest.raises(TypeError, match="keys must be strings"):
        mx.nd.save(tmp_path / "bad", {1: mx.nd.ones(1)})
    with pytest.raises(TypeError, match="got int"):
        mx.nd.save(tmp_path / "bad", 3)
    assert not (tmp_path / "bad").exists()


def test_mxnet_sparse_files_load_as_sparse_arrays():
    dense = fixture_values("float32", (4, 3)) * (np.arange(4)[:, None] % 2)
    (rsp,) = mx.nd.load(DATA / "mxnet_row_sparse.params")
    assert rsp.stype == "row_sparse" and rsp.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_array_equal(rsp.asnumpy(), dense)
    csr = mx.nd.load(DATA / "mxnet_csr.params")["w"]
    assert csr.stype == "csr"
    np.testing.assert_array_equal(csr.asnumpy(), dense)


def test_bfloat16_is_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"array 0 \(bfloat16\).*astype\('float32'\)"):
        mx.nd.load(DATA / "mxnet_bfloat16.params")


def test_truncated_files_name_the_file():
    raw = (DATA / "mxnet_dict.params").read_bytes()
    for cut in (0, 7, 20, 30, 60, len(raw) - 40, len(raw) - 1):
        with pytest.raises(mx.nd.NDArrayFileError,
                           match=r"the buffer is not an MXNet/dagnet NDArray file "
                                 r".*ends early \(truncated at byte") as caught:
            mx.nd.load_frombuffer(raw[:cut])
        assert isinstance(caught.value, ValueError) and isinstance(caught.value, mx.MXNetError)


def test_foreign_and_malformed_files(tmp_path):
    path = tmp_path / "foreign.bin"
    path.write_bytes(b"GIF89a" + b"\1" * 12)
    with pytest.raises(ValueError, match=re.escape(str(path)) + " is not an MXNet/dagnet "
                       "NDArray file .*starts with 4749463839610101, not the magic 0x112"):
        mx.nd.load(path)
    record = v2_record(fixture_values("float32", (2,)), 0)
    cases = {
        "unknown type flag 13": header(1) + record.replace(struct.pack("<iii", 1, 0, 0),
                                                           struct.pack("<iii", 1, 0, 13))
        + NO_NAMES,
        "unknown storage type 5": header(1) + record[:4] + struct.pack("<i", 5) + record[8:]
        + NO_NAMES,
        "1 arrays but 2 names": header(1) + record + struct.pack("<QQ1sQ1s", 2, 1, b"a", 1, b"b"),
        "uninitialised NDArray": header(1) + struct.pack("<Iii", 0xF993FACA, 0, -1) + NO_NAMES,
        "unknown shape": header(1) + struct.pack("<Iiiq", 0xF993FACA, 0, 1, -1) + NO_NAMES,
    }
    for reason, raw in cases.items():
        with pytest.raises(ValueError, match=f"array 0: {reason}|{reason}"):
            mx.nd.load_frombuffer(raw)


def test_uninitialised_records_of_old_mxnet():
    # MXNet < 1.5 wrote an uninitialised array as a shape of ndim 0 and nothing more
    old_v2 = header(2) + struct.pack("<Iii", 0xF993FAC9, 0, 0) + v2_record(
        fixture_values("float32", (1,)), 0) + NO_NAMES
    legacy = header(1) + struct.pack("<I", 0) + NO_NAMES
    for raw in (old_v2, legacy):
        with pytest.raises(ValueError, match="array 0: it holds an uninitialised NDArray"):
            mx.nd.load_frombuffer(raw)


def test_files_load_under_the_shape_semantics_they_were_saved_under(tmp_path):
    """MXNet's rule: a file saved under NumPy shape semantics loads only under them, and
    one saved outside them only outside them (unless they are on for every thread)."""
    with mx.np_shape(True):
        mx.nd.save(tmp_path / "np", [mx.nd.ones((2, 0))])
    mx.nd.save(tmp_path / "legacy", [mx.nd.ones((2, 1))])
    assert (tmp_path / "np").read_bytes()[24:28] == struct.pack("<I", 0xF993FACA)
    with pytest.raises(mx.base.MXNetError, match="saved under NumPy shape semantics"):
        mx.nd.load(tmp_path / "np")
    with mx.np_shape(True):
        assert mx.nd.load(tmp_path / "np")[0].shape == (2, 0)
        with pytest.raises(mx.base.MXNetError, match="np_shape\\(False\\)"):
            mx.nd.load(tmp_path / "legacy")
    previous = mx.util.set_np_shape(2)  # on for every thread: older files load too
    try:
        assert mx.nd.load(tmp_path / "legacy")[0].shape == (2, 1)
    finally:
        mx.util.set_np_shape(previous)


def test_sparse_arrays_are_not_saved_under_numpy_shapes(tmp_path):
    with mx.np_shape(True), pytest.raises(mx.base.MXNetError, match="tostype"):
        mx.nd.save(tmp_path / "s", [mx.nd.ones((2, 2)).tostype("row_sparse")])
