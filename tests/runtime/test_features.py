"""``mx.runtime.Features``: MXNet 1.9.1's feature names, answered for this installation."""

from __future__ import annotations

import importlib.util

import pytest

import dagnet as mx
from dagnet.runtime import Features, feature_list


def test_every_mxnet_feature_is_named_in_mxnets_order():
    names = [f.name for f in feature_list()]
    assert names[:5] == ["CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT"]
    assert len(names) == 32 and len(set(names)) == 32
    assert list(Features()) == names


def test_answers_follow_the_installation():
    features = Features()
    cuda = mx.backend.find_backend("gpu")
    assert features.is_enabled("CUDA") == (cuda is not None and cuda.is_available)
    assert features.is_enabled("dist_kvstore") == (
        importlib.util.find_spec("distributed") is not None)
    assert features.is_enabled("LAPACK")  # numpy always has one
    assert not features.is_enabled("MKLDNN") and not features.is_enabled("CUDNN")


def test_repr_marks_each_feature():
    text = repr(Features())
    assert text.startswith("[") and ("✔ LAPACK" in text) and ("✖ MKLDNN" in text)


def test_an_unknown_feature_is_a_runtime_error_listing_the_known_ones():
    with pytest.raises(RuntimeError, match="Feature 'WARP_DRIVE' is unknown, known features "
                                           "are: .*'CUDA'"):
        Features().is_enabled("warp_drive")


def test_features_is_one_object_per_process():
    first, second = Features(), Features()
    assert first is second
    assert list(first) == list(second) and len(first) >= 30
