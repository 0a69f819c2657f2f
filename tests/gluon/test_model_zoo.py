"""gluon.model_zoo.vision: ResNet with MXNet's parameter names, hybridizable, by name."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon.model_zoo import vision


@pytest.mark.parametrize("version", [1, 2])
def test_resnet18_names_shapes_and_hybrid(version):
    with mx.name.NameManager():
        net = vision.get_resnet(version, 18, classes=10, thumbnail=True)
    names = list(net.collect_params().keys())
    prefix = f"resnetv{version}0_"
    assert all(name.startswith(prefix) for name in names)
    assert f"{prefix}stage1_conv0_weight" in names
    assert names[-1].endswith("dense0_bias")
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.uniform(shape=(2, 3, 16, 16))
    y = net(x).asnumpy()
    assert y.shape == (2, 10)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), y, rtol=1e-4, atol=1e-5)


def test_get_model_and_pretrained_errors(tmp_path):
    assert isinstance(vision.get_model("ResNet34_v2", classes=3), vision.ResNetV2)
    with pytest.raises(ValueError, match="not supported"):
        vision.get_model("resnet19_v1")
    with pytest.raises(ValueError, match="does not download"):
        vision.resnet18_v1(pretrained=True, root=str(tmp_path))
    with pytest.raises(AssertionError, match="Invalid number of layers"):
        vision.get_resnet(1, 19)


def test_vgg_and_alexnet_names_and_forward():
    with mx.name.NameManager():
        vgg = vision.vgg11_bn(classes=10)
        alex = vision.get_model("alexnet", classes=10)
    vgg_names = list(vgg.collect_params().keys())
    assert vgg_names[:3] == ["vgg0_conv0_weight", "vgg0_conv0_bias", "vgg0_batchnorm0_gamma"]
    assert vgg_names[-1] == "vgg0_dense2_bias"
    assert list(alex.collect_params().keys())[-1] == "alexnet0_dense2_bias"
    vgg.initialize()
    assert vgg(mx.nd.ones((1, 3, 32, 32))).shape == (1, 10)
    with pytest.raises(AssertionError, match="Invalid number of layers"):
        vision.get_vgg(12)
