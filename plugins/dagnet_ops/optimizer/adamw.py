"""AdamW (Loshchilov & Hutter, 2017): Adam with the weight decay taken out of the gradient
and applied to the weight directly, scaled by a schedule multiplier ``eta``.

MXNet's contrib updates ``_adamw_update`` and ``_mp_adamw_update`` (float16 weights with
a float32 master copy), and ``_multi_adamw_update`` / ``_multi_mp_adamw_update`` (several
weights in one call).  Unlike the other updates, the gradient scale ``rescale_grad`` is
an input array (one value), so that a loss scaler can change it without the host reading
it: when it is NaN, infinite or 0 (an overflowed float16 step) the call changes nothing.
"""

from __future__ import annotations

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
    merge_dtype,
    merge_shape,
)

from .._draw import Draw
from .._fields import FloatTuple

__all__ = ["OPS"]

_FLOAT32 = np.dtype(np.float32)


class _AdamWShared(Params):
    beta1 = Field(float, 0.9, "decay rate of the first moment")
    beta2 = Field(float, 0.999, "decay rate of the second moment")
    epsilon = Field(float, 1e-8, "added to the root of the second moment")
    clip_gradient = Field(float, -1.0, "clip the rescaled gradient into [-clip_gradient, "
                                       "clip_gradient]; a negative value turns clipping off")


class AdamWParam(_AdamWShared):
    lr = Field(float, REQUIRED, "learning rate")
    wd = Field(float, 0.0, "weight decay, applied to the weight (not the gradient)")
    eta = Field(float, REQUIRED, "learning-rate schedule multiplier")


class MultiAdamWParam(_AdamWShared):
    lrs = FloatTuple(desc="the learning rate of each weight")
    wds = FloatTuple(desc="the weight decay of each weight")
    etas = FloatTuple(desc="the schedule multiplier of each weight")
    num_weights = Field(int, 1, "how many weights the call updates", low=1)


# -- the step ---------------------------------------------------------------------------
def _step(xp, weight, grad, mean, var, scale, lr, wd, eta, attrs):
    """One AdamW step in the dtype of ``mean`` (the master dtype): updates ``mean`` and
    ``var`` in place and returns the new weight."""
    g = grad.astype(mean.dtype, copy=False) * scale
    if attrs.clip_gradient >= 0:
        g = xp.clip(g, -attrs.clip_gradient, attrs.clip_gradient)
    mean *= attrs.beta1
    mean += (1 - attrs.beta1) * g
    var *= attrs.beta2
    var += (1 - attrs.beta2) * g * g
    return weight - eta * (lr * mean / (xp.sqrt(var) + attrs.epsilon) + wd * weight)


def _scale(xp, array) -> float | None:
    """The gradient scale held by the ``rescale_grad`` input; None when the update is to
    be skipped (NaN, infinite or 0)."""
    value = float(xp.asarray(array).reshape(-1)[0])
    return value if np.isfinite(value) and value != 0 else None


def _compute(per_weight: int, master_copy: bool, weights_of):
    """The compute function: inputs are each weight's ``per_weight`` arrays in turn, then
    ``rescale_grad``; ``weights_of(attrs)`` gives each weight's ``(lr, wd, eta)``."""

    def compute(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        scale = _scale(xp, inputs[-1])
        for i, (lr, wd, eta) in enumerate(weights_of(attrs)):
            group = inputs[per_weight * i:per_weight * (i + 1)]
            weight, grad, mean, var = group[:4]
            if scale is None:  # skipped: the output keeps the weight
                if req[i] is not OpReqType.INPLACE and outputs[i] is not weight:
                    assign(outputs[i], req[i], weight)
                continue
            master = group[4] if master_copy else weight.astype(mean.dtype, copy=False)
            new = _step(xp, master, grad, mean, var, scale, lr, wd, eta, attrs)
            if master_copy:
                master[...] = new
            assign(outputs[i], req[i], new.astype(outputs[i].dtype, copy=False))

    return compute


def _one_weight(attrs):
    return [(attrs.lr, attrs.wd, attrs.eta)]


def _each_weight(attrs):
    return list(zip(attrs.lrs, attrs.wds, attrs.etas))


# -- shapes and dtypes ------------------------------------------------------------------
def _count(attrs) -> int:
    return getattr(attrs, "num_weights", 1)


def _infer_shape(name: str, per_weight: int):
    """Each weight's arrays and its output share one shape; ``rescale_grad`` may have any
    (one value is read), ``(1,)`` when nothing says otherwise."""

    def infer(attrs, ins, outs):
        n = _count(attrs)
        if isinstance(attrs, MultiAdamWParam):
            for field in ("lrs", "wds", "etas"):
                if len(getattr(attrs, field)) != n:
                    raise ShapeError(f"operator {name!r}: {field} gives "
                                     f"{len(getattr(attrs, field))} value(s) for "
                                     f"num_weights={n}; give one per weight")
        new_ins, new_outs = list(ins), list(outs)
        for i in range(n):
            group = range(per_weight * i, per_weight * (i + 1))
            merged = merge_shape(None, outs[i], f"operator {name!r}, output {i}")
            for k in group:
                merged = merge_shape(merged, ins[k], f"operator {name!r}, input {k}")
            for k in group:
                new_ins[k] = merged
            new_outs[i] = merged
        if new_ins[-1] is None:
            new_ins[-1] = (1,)
        return new_ins, new_outs

    return infer


def _infer_type(name: str, per_weight: int, master_copy: bool):
    """Weight, gradient and output share one dtype; with a master copy, the moments and
    the copy are float32, else the moments share the weight's dtype.  ``rescale_grad`` is
    float32 unless given otherwise."""

    def infer(attrs, ins, outs):
        new_ins, new_outs = list(ins), list(outs)
        for i in range(_count(attrs)):
            base = per_weight * i
            where = f"operator {name!r}, weight {i}"
            shared = [base, base + 1] if master_copy else list(range(base, base + 4))
            merged = outs[i]
            for k in shared:
                merged = merge_dtype(merged, ins[k], where)
            for k in shared:
                new_ins[k] = merged
            new_outs[i] = merged
            if master_copy:
                for k in range(base + 2, base + per_weight):
                    if ins[k] is not None and np.dtype(ins[k]) != _FLOAT32:
                        raise DTypeError(f"{where}: input {k} (mean, var or the float32 "
                                         f"master copy) must be float32, got "
                                         f"{np.dtype(ins[k]).name}")
                    new_ins[k] = _FLOAT32
        scale = ins[-1]
        if scale is not None and not np.issubdtype(np.dtype(scale), np.floating):
            raise DTypeError(f"operator {name!r}: rescale_grad must be a floating array, got "
                             f"{np.dtype(scale).name}")
        new_ins[-1] = scale if scale is not None else _FLOAT32
        return new_ins, new_outs

    return infer


# -- conformance-suite domains ----------------------------------------------------------
def _sample(per_weight: int, multi: bool):
    def sample(draw):
        d = Draw(draw)
        n = d.int(1, 3, "num_weights") if multi else 1
        arrays, lrs, wds, etas = [], [], [], []
        for i in range(n):
            shape = d.shape(d.int(1, 2), 1, 4)
            weight = d.uniform(shape, -2, 2)
            arrays += [weight, d.uniform(shape, -2, 2), d.uniform(shape),
                       d.uniform(shape, 0.0, 1.0)]
            if per_weight == 5:
                arrays.append(weight.copy())
            lrs.append(d.float(0.001, 1.0, f"lr {i}"))
            wds.append(d.float(0.0, 0.1, f"wd {i}"))
            etas.append(d.float(0.1, 1.0, f"eta {i}"))
        scale = d.choice([d.float(0.1, 2.0, "rescale_grad"), 0.0, float("nan")], "skip?")
        arrays.append(np.array([scale]))
        params = {"beta1": d.float(0.0, 0.99, "beta1"), "beta2": d.float(0.0, 0.999, "beta2"),
                  "epsilon": d.float(1e-8, 1e-3, "epsilon")}
        if multi:
            params.update(num_weights=n, lrs=tuple(lrs), wds=tuple(wds), etas=tuple(etas))
        else:
            params.update(lr=lrs[0], wd=wds[0], eta=etas[0])
        if d.bool("clip"):
            params["clip_gradient"] = d.float(0.0, 1.0, "clip_gradient")
        return Case(arrays, params)

    return sample


def _reference(name: str, per_weight: int, multi: bool):
    def reference(params, *arrays):
        p = (MultiAdamWParam if multi else AdamWParam).parse(name, params)
        per = _each_weight(p) if multi else _one_weight(p)
        scale = float(arrays[-1].reshape(-1)[0])
        outputs = []
        for i, (lr, wd, eta) in enumerate(per):
            weight, grad, mean, var = arrays[per_weight * i:per_weight * i + 4]
            if not np.isfinite(scale) or scale == 0:
                outputs.append(weight)
                continue
            g = grad * scale
            if p.clip_gradient >= 0:
                g = np.clip(g, -p.clip_gradient, p.clip_gradient)
            m = p.beta1 * mean + (1 - p.beta1) * g
            v = p.beta2 * var + (1 - p.beta2) * g * g
            outputs.append(weight - eta * (lr * m / (np.sqrt(v) + p.epsilon) + wd * weight))
        return outputs if multi else outputs[0]

    return reference


# -- the records ------------------------------------------------------------------------
_STATE_NAMES = ("weight", "grad", "mean", "var", "weight32")


def _adamw_op(name: str, master_copy: bool, multi: bool, description: str) -> Op:
    per_weight = 5 if master_copy else 4
    kinds = _STATE_NAMES[:per_weight]
    states = tuple(range(2, per_weight))
    if multi:
        input_names = lambda a: [f"{kind}_{i}" for i in range(a.num_weights)  # noqa: E731
                                 for kind in kinds] + ["rescale_grad"]
    else:
        input_names = [*kinds, "rescale_grad"]
    return Op(
        name,
        description=description,
        params=MultiAdamWParam if multi else AdamWParam,
        num_inputs=lambda a: per_weight * _count(a) + 1,
        num_outputs=lambda a: _count(a),
        input_names=input_names,
        output_names=lambda a: ([f"output_{i}" for i in range(a.num_weights)] if multi
                                else ["output"]),
        mutate_inputs=lambda a: [per_weight * i + s for i in range(_count(a)) for s in states],
        infer_shape=_infer_shape(name, per_weight),
        infer_type=_infer_type(name, per_weight, master_copy),
        compute={XP: _compute(per_weight, master_copy, _each_weight if multi else _one_weight)},
        gradient=NoGradient("optimizer update"),
        inplace=lambda a: [(per_weight * i, i) for i in range(_count(a))],
        domain=Domain(_sample(per_weight, multi), _reference(name, per_weight, multi),
                      rtol=1e-4, atol=1e-6,
                      dtypes=("float32",) if master_copy else ("float32", "float64")),
    )


_STEP = """``g = clip(rescale_grad * grad, clip_gradient)``, ``mean = beta1 * mean + (1 - beta1)
* g``, ``var = beta2 * var + (1 - beta2) * g^2``, new weight ``weight - eta * (lr * mean /
(sqrt(var) + epsilon) + wd * weight)``.  ``rescale_grad`` is a one-value array; when it is
NaN, infinite or 0 nothing is updated."""

OPS = [
    _adamw_op("_adamw_update", False, False,
              f"""AdamW step; ``mean`` and ``var`` are updated in place: {_STEP}"""),
    _adamw_op("_mp_adamw_update", True, False,
              f"""AdamW step of a float16 (or any) weight through its float32 master copy
``weight32``; ``mean``, ``var`` (float32) and ``weight32`` are updated in place, and the output
is the new master copy cast to the weight's dtype: {_STEP}"""),
    _adamw_op("_multi_adamw_update", False, True,
              f"""``_adamw_update`` of ``num_weights`` weights in one call: the inputs are
``weight_0, grad_0, mean_0, var_0, weight_1, ..., rescale_grad``; weight ``i`` takes
``lrs[i]``, ``wds[i]`` and ``etas[i]``, and output ``i`` is its new value: {_STEP}"""),
    _adamw_op("_multi_mp_adamw_update", True, True,
              f"""``_mp_adamw_update`` of ``num_weights`` weights in one call: the inputs
are ``weight_0, grad_0, mean_0, var_0, weight32_0, weight_1, ..., rescale_grad``: {_STEP}"""),
]
