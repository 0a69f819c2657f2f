"""What mxboard 0.1.0 reaches in ``mxnet``, exercised the way mxboard uses it.

mxboard itself is not needed: each test makes the calls its ``summary.py`` and
``utils.py`` make on MXNet's names, so a change that would break mxboard on dagnet
fails here.
"""

import json

import numpy as np
from mxnet import gluon
from mxnet.context import current_context
from mxnet.gluon import HybridBlock
from mxnet.ndarray import NDArray, op
from mxnet.ndarray import ndarray as nd
from mxnet.symbol import Symbol


def test_arrays_mxboard_logs_reach_numpy_and_python_scalars():
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3), ctx=current_context())
    assert isinstance(x, NDArray)
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6).reshape(2, 3))
    assert x.min().asscalar() == 0.0 and x.max().asscalar() == 5.0
    # histograms: mxboard converts with astype(float) after asnumpy
    assert x.asnumpy().astype(float).dtype == np.float64


def test_image_grid_building_blocks():
    """``make_image_grid``: stack, concat along a dim, clip in place, empty, slice-assign."""
    images = [nd.array(np.full((1, 4, 4), i, dtype=np.float32)) for i in range(3)]
    batch = op.stack(*images, axis=0)
    assert batch.shape == (3, 1, 4, 4)
    rgb = op.concat(*(batch, batch, batch), dim=1)
    assert rgb.shape == (3, 3, 4, 4)
    op.clip(rgb, a_min=0.5, a_max=1.5, out=rgb)
    assert rgb.min().asscalar() == 0.5 and rgb.max().asscalar() == 1.5
    grid = nd.empty(shape=(3, 10, 10), dtype=rgb.dtype)
    grid[:, 1:5, 1:5] = rgb[2]
    np.testing.assert_array_equal(grid[:, 1:5, 1:5].asnumpy(), np.full((3, 4, 4), 1.5))


def test_images_become_uint8_hwc():
    img = nd.array(np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 2, 2))
    img = (img - img.min().asscalar()) / (img.max().asscalar() - img.min().asscalar()) * 255
    out = img.astype(np.uint8).transpose((1, 2, 0))
    assert out.dtype == np.uint8 and out.shape == (2, 2, 3)
    assert out.asnumpy()[1, 1, 2] == 255


def test_a_hybridized_blocks_graph_is_a_symbol_whose_json_mxboard_reads():
    """``add_graph``: ``net._cached_graph[1]`` after a forward, read through its JSON."""
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(3, activation="relu"), gluon.nn.Dense(2))
    net.initialize()
    net.hybridize()
    assert isinstance(net, HybridBlock) and not net._cached_graph
    net(nd.ones((2, 4)))
    sym = net._cached_graph[1]
    assert isinstance(sym, Symbol)
    conf = json.loads(sym.tojson())
    ops = [node["op"] for node in conf["nodes"]]
    assert ops.count("FullyConnected") == 2 and "Activation" in ops
    for node in conf["nodes"]:
        assert {"op", "name", "inputs"} <= set(node)
        for entry in node["inputs"]:
            assert len(entry) == 3 and entry[0] < len(conf["nodes"])
    assert conf["heads"][0][0] == len(conf["nodes"]) - 1
