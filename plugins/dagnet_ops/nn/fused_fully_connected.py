"""``_sg_mkldnn_fully_connected``: MXNet's fused dense layer (``subgraph/mkldnn/mkldnn_fc.cc``),
``FullyConnected`` and the activation after it in one node, as MXNet's oneDNN graph pass
writes it and dagnet's ``fuse_fully_connected`` inference pass does.

Inputs as ``FullyConnected``'s: ``data``, ``weight``, ``bias`` (unless ``no_bias``).  The
parameters of the product and of the activation come from the node's one subgraph
(symbol JSON: a ``FullyConnected``, then with ``with_eltwise`` an ``Activation`` (relu,
sigmoid, tanh, softrelu), ``LeakyReLU`` (leaky, elu, gelu) or ``clip`` from 0); the
result is ``act(data W^T + b)``.  Float nodes only (MXNet's quantized ones are not
provided).  No gradient: the fused node is for inference, as in MXNet.

Float32 on the CPU with oneDNN: one oneDNN inner product with the bias and the
activation as a post-op; in a bound graph the weights, in the layout oneDNN picks, are
prepared once and again only after a parameter was written (the node's state, keyed by
the engine versions of its parameter inputs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from dagnet import DTypeError, ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    NoGradient,
    Op,
    OpReqType,
    Params,
    assign,
    get_op,
)

from .._draw import Draw
from . import _onednn
from ._common import derived_once, threads_for
from ._conv_fusion import Activation, activation_node, subgraph_nodes
from .fully_connected import sample_case

__all__ = ["OPS", "FusedFullyConnectedParam", "subgraph_json"]

OP = "_sg_mkldnn_fully_connected"


class FusedFullyConnectedParam(Params):
    subgraphs = Field(str, REQUIRED, "the fused graph: a JSON list of one symbol JSON graph "
                                     "(FullyConnected, then an activation)")
    quantized = Field(bool, False, "int8 data and output (MXNet's; not provided here)")
    enable_float_output = Field(bool, False, "a quantized node's float output (MXNet's)")
    with_eltwise = Field(bool, False, "an activation follows the product")
    min_calib_range = Field(float, None, "the calibrated minimum of a quantized output")
    max_calib_range = Field(float, None, "the calibrated maximum of a quantized output")
    channel_wise_quantize = Field(bool, None, "per-channel weight scales of a quantized node")


@dataclass(frozen=True)
class _Fusion:
    fc: Any  # FullyConnected's parameters
    act: Activation | None


@lru_cache(maxsize=256)
def _fusion_of(subgraphs: str) -> _Fusion:
    fc = act = None
    for node in subgraph_nodes(subgraphs, OP):
        op_name = node.get("op", "null")
        if op_name == "null":
            continue
        if op_name == "FullyConnected" and fc is None:
            fc = get_op("FullyConnected").parse_params(node.get("attrs") or {})
        elif fc is not None and act is None:
            act = activation_node(node, OP)
        else:
            raise ShapeError(f"operator {OP!r}: the subgraph holds {op_name!r}; a fused dense "
                             f"layer holds FullyConnected and an activation after it only")
    if fc is None:
        raise ShapeError(f"operator {OP!r}: the subgraph holds no FullyConnected")
    return _Fusion(fc, act)


def _fusion(attrs: FusedFullyConnectedParam) -> _Fusion:
    if attrs.quantized:
        raise ShapeError(f"operator {OP!r}: quantized nodes are not provided; run the float "
                         f"model (or quantize its convolutions only)")
    fusion = _fusion_of(attrs.subgraphs)
    if attrs.with_eltwise != (fusion.act is not None):
        raise ShapeError(f"operator {OP!r}: with_eltwise={attrs.with_eltwise} but the subgraph "
                         f"{'has' if fusion.act is not None else 'has no'} an activation")
    return fusion


def _input_names(attrs):
    return ["data", "weight"] + ([] if _fusion(attrs).fc.no_bias else ["bias"])


def _infer_shape(attrs, ins, outs):
    return get_op("FullyConnected").shapes(_fusion(attrs).fc, ins, outs)


def _infer_type(attrs, ins, outs):
    known = next((np.dtype(t) for t in [*ins, *outs] if t is not None), np.dtype(np.float32))
    if known.kind != "f":
        raise DTypeError(f"operator {OP!r} takes floating-point arrays, got {known.name}")
    return [known] * len(ins), [known]


def _matrix(fc, x):
    return x.reshape(x.shape[0], -1) if fc.flatten else x.reshape(-1, x.shape[-1])


def _onednn_forward(ctx, fusion: _Fusion, x, w, bias, req: OpReqType, out) -> bool:
    """The float32 node as one oneDNN inner product with the activation as a post-op, its
    weights prepared once per set of parameters; False where oneDNN cannot run it."""
    lib = _onednn.library_for(ctx.xp, x, w, out, *(() if bias is None else (bias,)))
    if lib is None or req not in (OpReqType.WRITE, OpReqType.INPLACE) or \
            not out.flags.c_contiguous:
        return False
    threads = threads_for(np)
    post_ops = () if fusion.act is None else (fusion.act.post_op(),)
    kernel = _onednn.inner_product_kernel(lib, x.shape, w.shape, threads, bias is not None,
                                          post_ops)
    if kernel is None:
        return False

    def prepare():
        return (*kernel.prepared("weights", w, threads),
                None if bias is None else np.ascontiguousarray(bias.reshape(-1)))

    weights, staged, b = derived_once(ctx, (1, 2) if bias is not None else (1,), prepare,
                                      kernel)
    run = {"src": np.ascontiguousarray(x), "weights": weights,
           "dst": out.reshape(x.shape[0], w.shape[0])}
    if b is not None:
        run["bias"] = b
    kernel.run(run, threads, staged=("weights",) if staged else ())
    return True


def _forward(attrs, ctx, inputs, req, outputs):
    fusion = _fusion(attrs)
    x, w = _matrix(fusion.fc, inputs[0]), inputs[1]
    bias = None if fusion.fc.no_bias else inputs[2]
    if req[0] is OpReqType.NULL or _onednn_forward(ctx, fusion, x, w, bias, req[0],
                                                   outputs[0]):
        return
    y = x @ w.T
    if bias is not None:
        y = y + bias.reshape(-1)
    if fusion.act is not None:
        y = fusion.act.apply(ctx.xp, y)
    assign(outputs[0], req[0], y.reshape(outputs[0].shape))


def subgraph_json(fc: dict[str, Any], act: tuple[str, dict[str, Any]] | None = None) -> str:
    """The ``subgraphs`` text of a fused dense layer: ``FullyConnected`` with parameters
    ``fc`` and the activation ``act`` (``(operator name, parameters)``) after it."""
    no_bias = str(fc.get("no_bias", False)) in ("True", "true", "1")
    inputs = ["data", "weight"] + ([] if no_bias else ["bias"])
    nodes = [{"op": "null", "name": name, "inputs": []} for name in inputs]
    nodes.append({"op": "FullyConnected", "name": "fc", "attrs": {k: str(v) for k, v in
                                                                  fc.items()},
                  "inputs": [[i, 0, 0] for i in range(len(inputs))]})
    if act is not None:
        nodes.append({"op": act[0], "name": "act", "attrs": {k: str(v) for k, v in
                                                             act[1].items()},
                      "inputs": [[len(nodes) - 1, 0, 0]]})
    return json.dumps([{"nodes": nodes, "arg_nodes": list(range(len(inputs))),
                        "heads": [[len(nodes) - 1, 0, 0]]}])


_ACTS = (None, ("Activation", {"act_type": "relu"}), ("Activation", {"act_type": "sigmoid"}),
         ("LeakyReLU", {"act_type": "elu", "slope": 0.3}), ("clip", {"a_min": 0, "a_max": 0.5}))


def _sample(draw):
    fc = sample_case(draw)  # FullyConnected's own, then an activation
    act = Draw(draw).choice(_ACTS, "act")
    return Case(fc.inputs, {"subgraphs": subgraph_json(fc.params, act),
                            "with_eltwise": act is not None})


def _reference(params, x, w, b=None):
    fusion = _fusion(FusedFullyConnectedParam.parse(OP, params))
    y = np.einsum("...k,hk->...h", _matrix(fusion.fc, x).astype(np.float64), w)
    y = y if b is None else y + b.reshape(-1)
    y = y if fusion.act is None else fusion.act.apply(np, y)
    lead = x.shape[:1] if fusion.fc.flatten else x.shape[:-1]
    return y.reshape(*lead, w.shape[0]).astype(x.dtype)


OPS = [
    Op(OP, params=FusedFullyConnectedParam,
       num_inputs=lambda attrs: len(_input_names(attrs)), input_names=_input_names,
       output_names=["output"], infer_shape=_infer_shape, infer_type=_infer_type,
       compute={XP: _forward},
       gradient=NoGradient("a fused dense layer is for inference (MXNet registers no "
                           "gradient for _sg_mkldnn_fully_connected)"),
       domain=Domain(_sample, reference=_reference, dtypes=("float32", "float64"),
                     rtol=1e-5, atol=1e-6),
       description="Fused dense layer (MXNet's oneDNN graph pass): FullyConnected and the "
                   "activation after it, ``act(data W^T + b)``.  No gradient."),
]
