"""Stochastic gradient descent: ``sgd_update``, ``sgd_mom_update`` and Nesterov's
``nag_mom_update``; ``multi_sgd_update`` and ``multi_sgd_mom_update`` update several
weights in one call."""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

from dagnet import ShapeError
from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    NoGradient,
    Op,
    OpReqType,
    Params,
    assign,
    merge_shape,
)

from .._draw import Draw
from .._fields import FloatTuple
from ._common import (
    UpdateParam,
    blocks,
    clip,
    compiled_kernels,
    descent_step,
    reference_gradient,
    update_op,
)

__all__ = ["OPS"]


class _WeightAttrs(NamedTuple):
    """One weight's parameters: what the one-weight kernels read."""

    lr: float
    wd: float
    rescale_grad: float
    clip_gradient: float
    momentum: float


def _one_weight(attrs: Any) -> list[_WeightAttrs]:
    return [_WeightAttrs(attrs.lr, attrs.wd, attrs.rescale_grad, attrs.clip_gradient,
                         getattr(attrs, "momentum", 0.0))]


def _each_weight(attrs: Any) -> list[_WeightAttrs]:
    momentum = getattr(attrs, "momentum", 0.0)
    return [_WeightAttrs(lr, wd, attrs.rescale_grad, attrs.clip_gradient, momentum)
            for lr, wd in zip(attrs.lrs, attrs.wds)]


def _sgd_numpy(xp, attrs, inputs, req, out):
    for weight, grad, out_block in blocks(xp, *inputs, out):
        _write(xp, out_block, req, weight, descent_step(xp, attrs, weight, grad), xp.subtract)


def _write(xp, out, req, weight, step, combine):
    """``out (req) combine(weight, step)``; written straight into ``out`` (which may be
    ``weight`` itself) when the request is a write."""
    if req is OpReqType.WRITE or req is OpReqType.INPLACE:
        combine(weight, step, out=out)
    else:
        assign(out, req, combine(weight, step))


def _sgd_mom_numpy(xp, attrs, inputs, req, out):
    for weight, grad, mom, out_block in blocks(xp, *inputs, out):
        step = descent_step(xp, attrs, weight, grad)
        mom *= attrs.momentum
        mom -= step
        _write(xp, out_block, req, weight, mom, xp.add)


_NUMPY_KERNELS = {"sgd": _sgd_numpy, "sgd_mom": _sgd_mom_numpy}
_JIT_WEIGHTS_PER_CALL = 4  # numba compiles the kernels once per number of weights in a call


def _update_compute(kind: str, weights_of):
    """The compute function of an update of ``kind`` (``"sgd"``, ``"sgd_mom"``): inputs are
    each weight's ``(weight, grad[, mom])`` in turn, and ``weights_of(attrs)`` gives each
    weight's parameters.  The compiled kernels update the weights where they apply; numpy's
    kernels otherwise, with the same results."""
    numpy_kernel = _NUMPY_KERNELS[kind]

    def compute(attrs, ctx, inputs, req, outputs):
        weights = weights_of(attrs)
        per_weight = len(inputs) // len(weights)
        groups = [inputs[per_weight * i:per_weight * (i + 1)] for i in range(len(weights))]
        if _compiled_update(kind, ctx.xp, weights, groups, req, outputs):
            return
        for weight_attrs, group, weight_req, out in zip(weights, groups, req, outputs):
            numpy_kernel(ctx.xp, weight_attrs, group, weight_req, out)

    return compute


def _compiled_update(kind, xp, weights, groups, req, outputs) -> bool:
    """Update every weight with the compiled kernel of ``kind`` where it applies
    (:func:`compiled_kernels`); False otherwise.

    A worker running it takes the interpreter lock back once per kernel call (up to
    :data:`_JIT_WEIGHTS_PER_CALL` weights each), not once per numpy pass: while another
    thread runs Python, each taking can cost up to the switch interval."""
    jit = compiled_kernels(xp, req, [*outputs, *itertools.chain(*groups)])
    if jit is None:
        return False
    kernel, cast, shared = getattr(jit, kind), outputs[0].dtype.type, weights[0]
    clipping = shared.clip_gradient >= 0
    common = (clipping, cast(shared.rescale_grad), cast(max(shared.clip_gradient, 0.0)))
    if kind == "sgd_mom":
        common += (cast(shared.momentum),)
    for start in range(0, len(weights), _JIT_WEIGHTS_PER_CALL):
        part = range(start, min(start + _JIT_WEIGHTS_PER_CALL, len(weights)))
        columns = [tuple(groups[i][j].reshape(-1) for i in part)
                   for j in range(len(groups[0]))]
        if clipping:  # lr scales the clipped step; wd weighs the weight
            scales = tuple(cast(weights[i].lr) for i in part)
            decays_by = tuple(cast(weights[i].wd) for i in part)
        else:  # lr folded into both factors
            scales = tuple(cast(weights[i].lr * weights[i].rescale_grad) for i in part)
            decays_by = tuple(cast(weights[i].lr * weights[i].wd) for i in part)
        decays = tuple(bool(weights[i].wd) for i in part)
        kernel(*columns, tuple(outputs[i].reshape(-1) for i in part), scales, decays_by,
               decays, *common)
    return True


def _sgd_reference(params, weight, grad):
    p = UpdateParam.parse("sgd_update", params)
    return weight - p.lr * (reference_gradient(p, weight, grad) + p.wd * weight)


class SGDMomParam(UpdateParam):
    momentum = Field(float, 0.0, "the momentum: the fraction of the previous step kept")


def _sgd_mom_reference(params, weight, grad, mom):
    p = SGDMomParam.parse("sgd_mom_update", params)
    return weight + p.momentum * mom - p.lr * (reference_gradient(p, weight, grad) + p.wd * weight)


def _nag_mom(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, mom, out in blocks(xp, *inputs, outputs[0]):
        step = attrs.lr * (clip(xp, grad * attrs.rescale_grad, attrs.clip_gradient)
                           + attrs.wd * weight)
        mom *= attrs.momentum
        mom -= step
        assign(out, req[0], weight + attrs.momentum * mom - step)


def _nag_mom_reference(params, weight, grad, mom):
    p = SGDMomParam.parse("nag_mom_update", params)
    step = p.lr * (reference_gradient(p, weight, grad) + p.wd * weight)
    return weight + p.momentum * (p.momentum * mom - step) - step


OPS = [
    update_op(
        "sgd_update", UpdateParam, _update_compute("sgd", _one_weight), ["weight", "grad"], [],
        _sgd_reference,
        """Stochastic gradient descent step:
``weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)``.
Write it back with ``out=weight``."""),
    update_op(
        "sgd_mom_update", SGDMomParam, _update_compute("sgd_mom", _one_weight),
        ["weight", "grad", "mom"], [2], _sgd_mom_reference,
        """Momentum SGD step; ``mom`` is updated in place:
``mom = momentum * mom - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)``,
output ``weight + mom``."""),
    update_op(
        "nag_mom_update", SGDMomParam, _nag_mom, ["weight", "grad", "mom"], [2],
        _nag_mom_reference,
        """Nesterov momentum step; ``mom`` is updated in place:
``step = lr * (clip(rescale_grad * grad) + wd * weight)``, ``mom = momentum * mom - step``,
output ``weight + momentum * mom - step``."""),
]


# -- several weights in one call (MXNet's aggregated updates) ------------------------------
class MultiSGDParam(Params):
    lrs = FloatTuple(desc="the learning rate of each weight")
    wds = FloatTuple(desc="the weight decay of each weight")
    rescale_grad = Field(float, 1.0, "multiply every gradient by this first (e.g. 1 / batch "
                                     "size)")
    clip_gradient = Field(float, -1.0, "clip the gradients into [-clip_gradient, "
                                       "clip_gradient]; a negative value turns clipping off")
    num_weights = Field(int, 1, "how many weights the call updates", low=1)


class MultiSGDMomParam(MultiSGDParam):
    momentum = Field(float, 0.0, "the momentum: the fraction of the previous step kept")


def _multi_shape(name: str, per_weight: int):
    """Weight ``i``'s inputs and output ``i`` share one shape (inferred both ways); there is
    one learning rate and one weight decay per weight."""

    def infer(attrs, ins, outs):
        for field in ("lrs", "wds"):
            if len(getattr(attrs, field)) != attrs.num_weights:
                raise ShapeError(f"operator {name!r}: {field} gives "
                                 f"{len(getattr(attrs, field))} value(s) for num_weights="
                                 f"{attrs.num_weights}; give one per weight")
        new_ins, new_outs = list(ins), list(outs)
        for i in range(attrs.num_weights):
            group = range(per_weight * i, per_weight * (i + 1))
            merged = merge_shape(None, outs[i], f"operator {name!r}, output {i}")
            for k in group:
                merged = merge_shape(merged, ins[k], f"operator {name!r}, input {k}")
            for k in group:
                new_ins[k] = merged
            new_outs[i] = merged
        return new_ins, new_outs

    return infer


def _multi_sample(per_weight: int, momentum: bool):
    def sample(draw):
        d = Draw(draw)
        n = d.int(1, 3, "num_weights")
        arrays, lrs, wds = [], [], []
        for i in range(n):
            shape = d.shape(d.int(1, 2), 1, 4)
            arrays += [d.uniform(shape, -2, 2) for _ in range(per_weight)]
            lrs.append(d.float(0.001, 1.0, f"lr {i}"))
            wds.append(d.float(0.0, 0.1, f"wd {i}"))
        params = {"num_weights": n, "lrs": tuple(lrs), "wds": tuple(wds),
                  "rescale_grad": d.float(0.1, 2.0, "rescale_grad")}
        if d.bool("clip"):
            params["clip_gradient"] = d.float(0.0, 1.0, "clip_gradient")
        if momentum:
            params["momentum"] = d.float(0.0, 0.99, "momentum")
        return Case(arrays, params)

    return sample


def _multi_sgd_reference(params, *arrays):
    p = MultiSGDParam.parse("multi_sgd_update", params)
    return [w - lr * (reference_gradient(p, w, g) + wd * w)
            for (w, g), lr, wd in zip(zip(arrays[0::2], arrays[1::2]), p.lrs, p.wds)]


def _multi_sgd_mom_reference(params, *arrays):
    p = MultiSGDMomParam.parse("multi_sgd_mom_update", params)
    triples = zip(arrays[0::3], arrays[1::3], arrays[2::3])
    return [w + p.momentum * m - lr * (reference_gradient(p, w, g) + wd * w)
            for (w, g, m), lr, wd in zip(triples, p.lrs, p.wds)]


def _multi_update_op(name: str, params: type[Params], kind: str, inputs: tuple[str, ...],
                     states: tuple[int, ...], reference, description: str) -> Op:
    per_weight = len(inputs)
    return Op(
        name,
        description=description,
        params=params,
        num_inputs=lambda a: per_weight * a.num_weights,
        num_outputs=lambda a: a.num_weights,
        input_names=lambda a: [f"{kind}_{i}" for i in range(a.num_weights) for kind in inputs],
        output_names=lambda a: [f"output_{i}" for i in range(a.num_weights)],
        mutate_inputs=lambda a: [per_weight * i + s for i in range(a.num_weights)
                                 for s in states],
        infer_shape=_multi_shape(name, per_weight),
        compute={XP: _update_compute(kind, _each_weight)},
        gradient=NoGradient("optimizer update"),
        inplace=lambda a: [(per_weight * i, i) for i in range(a.num_weights)],
        domain=Domain(_multi_sample(per_weight, bool(states)), reference),
    )


OPS += [
    _multi_update_op(
        "multi_sgd_update", MultiSGDParam, "sgd", ("weight", "grad"), (), _multi_sgd_reference,
        """``sgd_update`` of ``num_weights`` weights in one call: the inputs are
``weight_0, grad_0, weight_1, grad_1, ...``, weight ``i`` takes ``lrs[i]`` and ``wds[i]``, and
output ``i`` is its new value (write it back with ``out=[weight_0, weight_1, ...]``)."""),
    _multi_update_op(
        "multi_sgd_mom_update", MultiSGDMomParam, "sgd_mom", ("weight", "grad", "mom"), (2,),
        _multi_sgd_mom_reference,
        """``sgd_mom_update`` of ``num_weights`` weights in one call: the inputs are
``weight_0, grad_0, mom_0, weight_1, ...``; each ``mom_i`` is updated in place, weight ``i``
takes ``lrs[i]`` and ``wds[i]``, and output ``i`` is its new value."""),
]
