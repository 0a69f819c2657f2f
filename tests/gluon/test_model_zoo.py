"""gluon.model_zoo.vision: every family with MXNet's parameter names (counts, names and sizes
as MXNet 1.9.1 gives them), hybridizable, by name."""

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


def _names(make, **kwargs):
    with mx.name.NameManager():
        net = make(classes=10, **kwargs)
    return net, list(net.collect_params().keys())


def _size(net):
    return sum(int(np.prod(p.shape)) for p in net.collect_params().values())


@pytest.mark.parametrize("name, count, last, size", [
    ("mobilenet0.25", 137, "mobilenet0_dense0_bias", 221114),
    ("mobilenetv2_0.25", 266, "mobilenetv20_output_pred_weight", 259656),
])
def test_mobilenet_names_shapes_and_hybrid(name, count, last, size):
    # counts, names and sizes as MXNet 1.9.1's model zoo gives them for classes=10
    net, names = _names(vision.get_model, name=name)
    assert len(names) == count and names[-1] == last
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.uniform(shape=(1, 3, 32, 32))
    y = net(x).asnumpy()
    assert y.shape == (1, 10) and _size(net) == size
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), y, rtol=1e-4, atol=1e-6)


def test_mobilenet_v2_bottleneck_names():
    _, names = _names(vision.mobilenet_v2_0_25)
    assert names[:2] == ["mobilenetv20_features_conv0_weight",
                         "mobilenetv20_features_batchnorm0_gamma"]
    assert "mobilenetv20_features_linearbottleneck16_conv0_weight" in names


def test_squeezenet_names_and_forward():
    net, names = _names(vision.squeezenet1_1)
    assert len(names) == 52
    assert names[:2] == ["squeezenet0_conv0_weight", "squeezenet0_conv0_bias"]
    assert names[-1] == "squeezenet0_conv25_bias"
    net.initialize()
    assert net(mx.nd.ones((1, 3, 224, 224))).shape == (1, 10)
    assert _size(net) == 727626
    with pytest.raises(AssertionError, match="1.0 or 1.1"):
        vision.SqueezeNet("1.2")


def test_densenet_names_and_forward():
    _, names = _names(vision.densenet121)
    assert len(names) == 606
    assert "densenet0_stage4_conv31_weight" in names
    assert names[-3:] == ["densenet0_batchnorm4_running_var", "densenet0_dense0_weight",
                          "densenet0_dense0_bias"]
    # a narrow, shallow DenseNet: the same layout at a fraction of the cost
    with mx.name.NameManager():
        net = vision.DenseNet(8, 4, [1, 1, 1, 1], classes=10)
    net.initialize()
    assert net(mx.nd.ones((1, 3, 224, 224))).shape == (1, 10)
    assert _size(net) == 4632
    with pytest.raises(AssertionError, match="Invalid number of layers"):
        vision.get_densenet(122)


def test_inception_v3_names_and_forward():
    net, names = _names(vision.get_model, name="inceptionv3")
    assert len(names) == 472
    assert names[:2] == ["inception30_conv0_weight", "inception30_batchnorm0_gamma"]
    assert "inception30_E2_conv8_weight" in names
    assert names[-1] == "inception30_dense0_bias"
    assert net.collect_params()["inception30_E2_conv2_weight"].shape[2:] == (1, 3)
    net.initialize()
    assert net(mx.nd.ones((1, 3, 299, 299))).shape == (1, 10)


@pytest.mark.parametrize("name, file", [("mobilenet0.75", "mobilenet0.75"),
                                        ("mobilenetv2_1.0", "mobilenetv2_1.0"),
                                        ("squeezenet1.0", "squeezenet1.0"),
                                        ("densenet169", "densenet169"),
                                        ("inceptionv3", "inceptionv3")])
def test_new_families_pretrained_message(tmp_path, name, file):
    with pytest.raises(ValueError, match=f"'{file}'.*does not download"):
        vision.get_model(name, pretrained=True, root=str(tmp_path))
