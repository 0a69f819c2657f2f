"""Round trips of every Gluon model zoo vision model: exported to ONNX (opset 13, a
variable batch), run by ONNX Runtime to 1e-4 of dagnet's outputs (float32), imported
back and run by dagnet to the same outputs again; a batch of two runs in ONNX Runtime
as each of its samples alone does.

Inputs are as small as each architecture allows (32x32, or what its fixed pooling
windows need), batches of one: the suite runs on two cores."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon.model_zoo import vision

MODELS = [
    "alexnet",
    "densenet121", "densenet161", "densenet169", "densenet201",
    "inceptionv3",
    "mobilenet0.25", "mobilenet0.5", "mobilenet0.75", "mobilenet1.0",
    "mobilenetv2_0.25", "mobilenetv2_0.5", "mobilenetv2_0.75", "mobilenetv2_1.0",
    "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
    "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2",
    "squeezenet1.0", "squeezenet1.1",
    "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",
]

# The smallest input each family takes: its last pooling windows are fixed (densenet's
# 7x7, squeezenet's 13x13, inception's 8x8); alexnet's strided layers need 64.
INPUT_SIZE = {"densenet": 224, "squeezenet": 224, "inceptionv3": 299, "alexnet": 64}


# The heaviest round trips (VGG's 130 M parameters, the deepest ResNets and DenseNets):
# marked slow, so that `-m "not slow"` leaves them out on a busy two-core machine.
SLOW = {"resnet101_v1", "resnet152_v1", "resnet101_v2", "resnet152_v2", "densenet161",
        "densenet201", "vgg16", "vgg19", "vgg16_bn", "vgg19_bn"}


def _input_size(name: str) -> int:
    return next((size for prefix, size in INPUT_SIZE.items() if name.startswith(prefix)), 32)


def test_every_model_of_the_zoo_is_listed():
    unknown = "no_such_model"
    with pytest.raises(ValueError) as caught:
        vision.get_model(unknown)
    listed = {line.strip() for line in str(caught.value).splitlines()[1:]}
    assert listed == set(MODELS)


def _assert_close(got: np.ndarray, want: np.ndarray) -> None:
    # 1e-4 relative, measured against the output's scale (logits near 0 compare by it)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW
                                  else name for name in MODELS])
def test_model_round_trip(name, onnx_session):
    size = _input_size(name)
    rng = np.random.default_rng(0)
    mx.random.seed(0)
    net = vision.get_model(name, classes=10)
    # He initialization keeps the activations of deep networks at unit scale
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2))
    net.hybridize()
    x = rng.uniform(-1, 1, (1, 3, size, size)).astype(np.float32)
    expected = net(mx.nd.array(x)).asnumpy()
    assert np.abs(expected).max() > 1e-3  # the comparison means something

    params = {k: v.data() for k, v in net.collect_params().items()}
    sym = net(mx.sym.var("data"))
    model = mx.onnx.export_to_proto(sym, params, [x.shape], dynamic=True,
                                    dynamic_input_shapes=[(None, 3, size, size)])
    run = onnx_session(model)
    _assert_close(run(x)[0], expected)

    # a variable batch: two samples together give what each gives alone
    other = rng.uniform(-1, 1, x.shape).astype(np.float32)
    both = run(np.concatenate([x, other]))[0]
    _assert_close(both[:1], expected)
    _assert_close(both[1:], run(other)[0])

    imported, arg_params, aux_params = mx.onnx.import_model(model)
    args = {"data": mx.nd.array(x), **arg_params}
    again = imported.bind(mx.cpu(), args, aux_states=aux_params).forward()[0].asnumpy()
    _assert_close(again, expected)
