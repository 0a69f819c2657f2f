"""``Block.save`` / ``Block.load`` (MXNet 1.9): the block tree's names, the traced graphs of
hybridized blocks and the parameters, restored into a model built the same way."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx


class Chain(mx.gluon.nn.Block):
    def add(self, block):
        self._children[block.name + str(len(self._children))] = block

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x


def _model():
    inner = Chain()
    inner.add(mx.gluon.nn.Dense(4))
    net = Chain()
    net.add(inner)
    net.add(mx.gluon.nn.Dense(3))
    return net


def test_save_then_load_into_a_fresh_model_gives_the_same_outputs(tmp_path):
    net = _model()
    net.initialize(mx.init.Uniform(1.0))
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 5)))
    want = net(x).asnumpy()
    prefix = str(tmp_path / "model")
    net.save(prefix)

    saved = json.loads(open(prefix + "-model.json").read())
    top = saved["chain0"]
    assert top["orig_name"] == net.name
    assert saved["chain0"]["chain1"]["dense2"]["hybridized"] is True
    assert "symbol" in saved["chain0"]["chain1"]["dense2"]

    fresh = _model()  # other automatic names than the saved ones
    assert fresh.name != net.name
    fresh.load(prefix)
    assert fresh.name == net.name
    assert list(fresh._children) == list(net._children)
    np.testing.assert_allclose(fresh(x).asnumpy(), want, rtol=1e-6)


def test_load_into_a_differently_built_model_names_the_missing_block(tmp_path):
    net = _model()
    net.initialize()
    net(mx.nd.ones((1, 5)))
    prefix = str(tmp_path / "model")
    net.save(prefix)
    other = mx.gluon.nn.Dense(3)
    with pytest.raises(ValueError, match="no block 'dense0'.*build the model exactly"):
        other.load(prefix)
