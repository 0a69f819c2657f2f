"""``nd.save`` / ``nd.load``: round trips and the documented file format."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx


def test_list_round_trip_keeps_values_dtypes_and_order(tmp_path):
    arrays = [mx.nd.array([[1, 2], [3, 4]]), mx.nd.arange(5, dtype="int64"),
              mx.nd.array(2.5, dtype="float64")]
    path = tmp_path / "arrays.params"
    mx.nd.save(str(path), arrays)
    assert path.exists()  # the name is used as given (no .npz added)
    loaded = mx.nd.load(str(path))
    assert isinstance(loaded, list) and len(loaded) == 3
    for want, got in zip(arrays, loaded):
        assert got.dtype is want.dtype and got.shape == want.shape
        assert got.context == mx.cpu()
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def test_dict_round_trip_keeps_names_in_order(tmp_path):
    params = {"arg:fc1_weight": mx.nd.ones((2, 3)), "aux:bn/moving_mean": mx.nd.zeros((3,)),
              "arg:a": mx.nd.full((1,), 7)}
    mx.nd.save(tmp_path / "model.params", params)
    loaded = mx.nd.load(tmp_path / "model.params")
    assert list(loaded) == list(params)
    for name in params:
        np.testing.assert_array_equal(loaded[name].asnumpy(), params[name].asnumpy())


def test_single_array_loads_as_a_list_and_onto_a_device(tmp_path):
    mx.nd.save(tmp_path / "one", mx.nd.array([1, 2]))
    (loaded,) = mx.nd.load(tmp_path / "one", ctx=mx.cpu(1))
    assert loaded.context == mx.cpu(1)
    np.testing.assert_array_equal(loaded.asnumpy(), [1, 2])


def test_save_waits_for_pending_writes(tmp_path, engine_name):
    x = mx.nd.zeros((3,))
    mx.nd._ndtest_slow(x, seconds=0.02, add=4.0, out=x)
    mx.nd.save(tmp_path / "pending", [x])
    np.testing.assert_array_equal(mx.nd.load(tmp_path / "pending")[0].asnumpy(), [4, 4, 4])


def test_file_is_a_documented_npz(tmp_path):
    mx.nd.save(tmp_path / "f", {"w": mx.nd.ones((2,))})
    with np.load(tmp_path / "f") as archive:
        manifest = json.loads(str(archive["__dagnet__"]))
        assert manifest == {"format": "dagnet.ndarray", "version": 1, "kind": "dict",
                            "names": ["w"]}
        np.testing.assert_array_equal(archive["a0"], [1, 1])


def test_bad_inputs_and_foreign_files(tmp_path):
    with pytest.raises(TypeError, match="item 1 is list"):
        mx.nd.save(tmp_path / "bad", [mx.nd.ones(1), [1]])
    with pytest.raises(TypeError, match="keys must be strings"):
        mx.nd.save(tmp_path / "bad", {1: mx.nd.ones(1)})
    mxnet_like = tmp_path / "mxnet.params"
    mxnet_like.write_bytes((0x112).to_bytes(8, "little") + b"\0" * 16)
    with pytest.raises(ValueError, match="MXNet's binary .params format is not supported"):
        mx.nd.load(mxnet_like)
    plain = tmp_path / "plain.npz"
    np.savez(plain, a=np.ones(2))
    with pytest.raises(ValueError, match="without a dagnet manifest"):
        mx.nd.load(plain)
