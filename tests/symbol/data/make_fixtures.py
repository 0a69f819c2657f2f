"""Write the MXNet-made fixtures of ``tests/symbol/test_json.py``; run it by hand with
Apache MXNet 1.9.1 (``python make_fixtures.py`` in this folder).  The tests themselves
never import mxnet: they load the JSON files written here and compare with
``expected.json``, what MXNet reported for each.

``old_format.json`` is hand-written in the pre-0.9 layout (``param``/``attr`` keys,
two-element inputs, no ``node_row_ptr``); this script checks that MXNet loads it.
"""

from __future__ import annotations

import json

import mxnet as mx


def mlp() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=64, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def lenet_bn() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    net = mx.sym.Convolution(data, kernel=(5, 5), num_filter=8, name="conv1")
    net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn1")
    net = mx.sym.Activation(net, act_type="tanh", name="tanh1")
    net = mx.sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    net = mx.sym.Convolution(net, kernel=(3, 3), num_filter=16, pad=(1, 1), name="conv2")
    net = mx.sym.BatchNorm(net, name="bn2")
    net = mx.sym.Activation(net, act_type="relu", name="relu2")
    net = mx.sym.Pooling(net, pool_type="avg", kernel=(2, 2), stride=(2, 2), name="pool2")
    net = mx.sym.Flatten(net, name="flatten")
    net = mx.sym.Dropout(net, p=0.25, name="drop")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def arith_multi() -> mx.sym.Symbol:
    a = mx.sym.Variable("a")
    b = mx.sym.Variable("b", shape=(2, 6), lr_mult=0.5)
    parts = mx.sym.split(a * b + 2 - (1 - b) / 3, num_outputs=3, axis=1, name="sp")
    top = mx.sym.topk(parts[2], k=1, ret_typ="both", name="tk")
    with mx.AttrScope(ctx_group="dev1"):
        cmp = mx.sym.broadcast_greater(parts[0], parts[1], name="gt")
    return mx.sym.Group([cmp, top[1] ** 2, -parts[1], mx.sym.Concat(parts[0], parts[2], dim=1)])


def describe(sym: mx.sym.Symbol, shapes: dict, types: dict) -> dict:
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
    arg_types, out_types, aux_types = sym.infer_type(**types)
    return {
        "arguments": sym.list_arguments(),
        "outputs": sym.list_outputs(),
        "auxiliary_states": sym.list_auxiliary_states(),
        "internals": sym.get_internals().list_outputs(),
        "shapes_given": {k: list(v) for k, v in shapes.items()},
        "arg_shapes": [list(s) for s in arg_shapes],
        "out_shapes": [list(s) for s in out_shapes],
        "aux_shapes": [list(s) for s in aux_shapes],
        "types_given": types,
        "arg_types": [t.__name__ for t in arg_types],
        "out_types": [t.__name__ for t in out_types],
        "aux_types": [t.__name__ for t in aux_types],
        "attr_dict": sym.attr_dict(),
    }


def main() -> None:
    expected = {}
    nets = {
        "mlp": (mlp(), {"data": (16, 20)}, {"data": "float32"}),
        "lenet_bn": (lenet_bn(), {"data": (4, 1, 28, 28)}, {"data": "float32"}),
        "arith_multi": (arith_multi(), {"a": (2, 6)}, {"a": "float64", "b": "float64"}),
    }
    for name, (sym, shapes, types) in nets.items():
        sym.save(f"{name}.json")
        expected[name] = describe(mx.sym.load(f"{name}.json"), shapes, types)
    old = mx.sym.load("old_format.json")
    expected["old_format"] = describe(old, {"data": (4, 20)}, {"data": "float32"})
    with open("expected.json", "w") as handle:
        json.dump(expected, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
