"""The casts automatic mixed precision inserts (MXNet's ``amp_cast`` and ``amp_multicast``).

Both touch only the precision pair AMP works with: float16 and float32.  An input of
any other dtype (float64, integers) passes through unchanged, so a converted graph
never narrows a tensor that was not AMP's to narrow.  Gradients are cast back to
each input's dtype.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import REQUIRED, XP, Case, Domain, DType, Field, Gradient, Op, Params

from . import _sampling as S
from ._common import backward_op, put, same_shape

__all__ = ["OPS"]

_AMP_PAIR = (np.dtype(np.float16), np.dtype(np.float32))


def _in_pair(dtype) -> bool:
    return dtype is not None and np.dtype(dtype) in _AMP_PAIR


class AmpCastParam(Params):
    dtype = Field(DType, REQUIRED, "The precision to cast to.",
                  choices=("float16", "float32"))


class AmpMultiCastParam(Params):
    num_outputs = Field(int, REQUIRED, "Number of inputs (and outputs).", low=1)
    cast_narrow = Field(bool, False, "Cast to the narrowest of the inputs' precisions "
                                     "instead of the widest.")


def _cast_type(attrs, ins, outs):
    src = ins[0]
    if src is None:
        return ins, outs
    return ins, [np.dtype(attrs.dtype) if _in_pair(src) else np.dtype(src)]


def _cast(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], inputs[0].astype(outputs[0].dtype, copy=False))


def _cast_back(attrs, ctx, inputs, req, outputs):
    for head, out, r in zip(inputs, outputs, req):
        put(out, r, head.astype(out.dtype, copy=False))


def _common_precision(attrs, dtypes):
    pair = [np.dtype(t) for t in dtypes if _in_pair(t)]
    if not pair:
        return None
    return min(pair, key=lambda t: t.itemsize) if attrs.cast_narrow else \
        max(pair, key=lambda t: t.itemsize)


def _multicast_type(attrs, ins, outs):
    if any(t is None for t in ins):
        return ins, outs
    target = _common_precision(attrs, ins)
    return ins, [target if _in_pair(t) else np.dtype(t) for t in ins]


def _multicast(attrs, ctx, inputs, req, outputs):
    for x, out, r in zip(inputs, outputs, req):
        put(out, r, x.astype(out.dtype, copy=False))


def _multicast_shape(attrs, ins, outs):
    return ins, list(ins)


def _cast_sample(draw):
    return Case([S.floats(draw, S.shape(draw))], {"dtype": "float32"})


def _multicast_sample(draw):
    n = S.integer(draw, 1, 3, "num_outputs")
    return Case([S.floats(draw, S.shape(draw)) for _ in range(n)], {"num_outputs": n})


def _multicast_reference(raw, *xs):
    pair = [x.dtype for x in xs if _in_pair(x.dtype)]
    if not pair:
        return list(xs)
    narrow = bool(raw.get("cast_narrow", False))
    target = (min if narrow else max)(pair, key=lambda t: t.itemsize)
    return [x.astype(target) if _in_pair(x.dtype) else x for x in xs]


OPS = [
    Op("amp_cast", params=AmpCastParam, input_names=["data"],
       infer_shape=same_shape("amp_cast", ["data"]), infer_type=_cast_type,
       compute={XP: _cast}, gradient=Gradient("_backward_amp_cast", ("out_grad",)),
       domain=Domain(_cast_sample, reference=lambda raw, x: x.astype(np.float32)
                     if _in_pair(x.dtype) else x),
       description="Cast between float16 and float32 for mixed precision; inputs of other "
                   "dtypes pass through unchanged.  The gradient is cast back to the "
                   "input's dtype."),
    backward_op("amp_cast", AmpCastParam, 1, 1, _cast_back),
    Op("amp_multicast", params=AmpMultiCastParam,
       num_inputs=lambda attrs: attrs.num_outputs, num_outputs=lambda attrs: attrs.num_outputs,
       input_names=lambda attrs: [f"data_{i}" for i in range(attrs.num_outputs)],
       output_names=lambda attrs: [f"output_{i}" for i in range(attrs.num_outputs)],
       key_var_num_args="num_outputs",
       infer_shape=_multicast_shape, infer_type=_multicast_type, compute={XP: _multicast},
       gradient=Gradient("_backward_amp_multicast", ("out_grad",)),
       domain=Domain(_multicast_sample, reference=_multicast_reference),
       description="Cast every float16/float32 input to the widest of their precisions (the "
                   "narrowest with ``cast_narrow``), so an operator sees one precision; "
                   "other dtypes pass through.  Gradients are cast back to each input's "
                   "dtype."),
    backward_op("amp_multicast", AmpMultiCastParam, lambda attrs: attrs.num_outputs,
                lambda attrs: attrs.num_outputs, _cast_back),
]
