"""``_npi_<d>``: the samplers behind ``mx.np.random`` (MXNet's
``src/operator/numpy/random``), and ``_npi_bernoulli`` and ``_npi_mvn_fallback``.

Each distribution parameter is either a number (an operator parameter) or an array (an
input; the parameter is then ``None``).  Arrays broadcast against each other and against
``size``, NumPy's way; the output has shape ``size``, else the parameters' broadcast shape
(``()`` for numbers alone).  A parameter out of its range fails the kernel with a
ValueError, raised at the next wait on the output, as in MXNet.

Where a sample is a smooth function of its parameters and of noise that does not depend on
them (``normal``: ``loc + scale * eps``), the operator keeps that noise as a hidden second
output and its gradient is the reparameterized one MXNet gives
(``_backward_broadcast_<d>``): ``d sample / d parameter`` at the drawn noise, summed over
the axes a parameter was broadcast along.  ``uniform``, ``gamma``, ``power``, ``bernoulli``
and the multivariate normal have no such gradient: zero for the first four, as in MXNet,
none for the last.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dagnet import DTypeError, ParamError, ShapeError
from dagnet.operator import (
    XP,
    Case,
    Domain,
    DType,
    Field,
    Gradient,
    NoGradient,
    Op,
    OpReqType,
    Params,
    Shape,
    ZeroGradient,
    assign,
    merge_dtype,
    merge_shape,
    shape_is_known,
)
from dagnet.resource import ResourceRequest

from .._broadcast import reduce_to
from .._draw import Draw
from ._distributions import Scalar, check_values
from .samplers import FLOAT_DTYPES, NOTE, DeviceField

__all__ = ["OPS", "NumpyDistribution", "NUMPY_DISTRIBUTIONS"]


@dataclass(frozen=True)
class NumpyDistribution:
    """A distribution of ``mx.np.random``: its parameters (MXNet's names and ranges), a
    description, ``draw(generator, xp, params, shape) -> (sample, noise)`` (float64;
    ``params`` are floats or float64 arrays broadcasting to ``shape``; ``noise`` is None
    without a reparameterized gradient) and ``slopes(xp, params, noise, sample)``: the
    derivative of the sample with respect to each parameter (None: the gradient is zero)."""

    name: str
    scalars: tuple[Scalar, ...]
    doc: str
    draw: Callable[[Any, Any, Sequence[Any], tuple], tuple[Any, Any]]
    slopes: Callable[[Any, Sequence[Any], Any, Any], list] | None = None
    ordered = False  # what check_values asks: no parameter bounds another here


# -- the distributions -------------------------------------------------------------------
def _uniform(g, xp, params, shape):
    low, high = params
    return low + (high - low) * g.random(shape), None


def _normal(g, xp, params, shape):
    loc, scale = params
    noise = g.standard_normal(shape)
    return loc + scale * noise, noise


def _logistic(g, xp, params, shape):
    loc, scale = params
    u = g.random(shape)
    noise = xp.log(u) - xp.log1p(-u)
    return loc + scale * noise, noise


def _gumbel(g, xp, params, shape):
    loc, scale = params
    noise = -xp.log(g.standard_exponential(shape))
    return loc + scale * noise, noise


def _location_scale_slopes(xp, params, noise, sample):
    return [xp.ones_like(noise), noise]


def _exponential(g, xp, params, shape):
    (scale,) = params
    noise = g.standard_exponential(shape)
    return scale * noise, noise


def _rayleigh(g, xp, params, shape):
    (scale,) = params
    noise = xp.sqrt(2.0 * g.standard_exponential(shape))
    return scale * noise, noise


def _scale_slopes(xp, params, noise, sample):
    return [noise]


def _weibull(g, xp, params, shape):
    (a,) = params
    noise = g.standard_exponential(shape)
    return noise ** (1.0 / a), noise


def _weibull_slopes(xp, params, noise, sample):
    # d/da noise^(1/a) = -noise^(1/a) log(noise) / a^2 (0 where the sample is 0)
    (a,) = params
    positive = sample > 0
    log_noise = xp.log(xp.where(positive, noise, 1.0))
    return [xp.where(positive, -sample * log_noise / (a * a), 0.0)]


def _pareto(g, xp, params, shape):
    # NumPy's pareto (Lomax): exp(E / a) - 1 with E standard exponential
    (a,) = params
    noise = g.standard_exponential(shape)
    return xp.expm1(noise / a), noise


def _pareto_slopes(xp, params, noise, sample):
    (a,) = params
    return [-(sample + 1.0) * noise / (a * a)]


def _power(g, xp, params, shape):
    (a,) = params
    return g.random(shape) ** (1.0 / a), None


def _gamma(g, xp, params, shape):
    k, scale = params
    return g.standard_gamma(xp.broadcast_to(xp.asarray(k, dtype=xp.float64), shape)) * scale, \
        None


def _loc():
    return Scalar("loc", float, None, "location")


def _scale(what="scale"):
    return Scalar("scale", float, None, what, low=0.0)


def _shape_a(what):
    return Scalar("a", float, None, what, low=0.0, open_low=True)


NUMPY_DISTRIBUTIONS = {d.name: d for d in (
    NumpyDistribution(
        "uniform",
        (Scalar("low", float, None, "lower bound (inclusive)"),
         Scalar("high", float, None, "upper bound (exclusive)")),
        "the uniform distribution on ``[low, high)``", _uniform),
    NumpyDistribution(
        "normal", (_loc(), _scale(what="standard deviation")),
        "the normal distribution with mean ``loc`` and standard deviation ``scale``",
        _normal, _location_scale_slopes),
    NumpyDistribution(
        "logistic", (_loc(), _scale()),
        "the logistic distribution ``loc + scale * log(u / (1 - u))``, ``u`` uniform",
        _logistic, _location_scale_slopes),
    NumpyDistribution(
        "gumbel", (_loc(), _scale()),
        "the Gumbel distribution ``loc - scale * log(e)``, ``e`` standard exponential",
        _gumbel, _location_scale_slopes),
    NumpyDistribution(
        "exponential",
        (Scalar("scale", float, 1.0, "scale (the mean, 1 / rate)", low=0.0),),
        "the exponential distribution with mean ``scale``", _exponential, _scale_slopes),
    NumpyDistribution(
        "rayleigh", (Scalar("scale", float, 1.0, "scale (the mode)", low=0.0),),
        "the Rayleigh distribution ``scale * sqrt(2 e)``, ``e`` standard exponential",
        _rayleigh, _scale_slopes),
    NumpyDistribution(
        "weibull", (_shape_a("shape"),),
        "the Weibull distribution ``e ** (1 / a)``, ``e`` standard exponential",
        _weibull, _weibull_slopes),
    NumpyDistribution(
        "pareto", (_shape_a("shape"),),
        "the Pareto II (Lomax) distribution ``exp(e / a) - 1``, ``e`` standard exponential, "
        "as NumPy's", _pareto, _pareto_slopes),
    NumpyDistribution(
        "powerd", (_shape_a("exponent"),),
        "the power distribution ``u ** (1 / a)`` on ``[0, 1]``, ``u`` uniform", _power),
    NumpyDistribution(
        "gamma",
        (Scalar("shape", float, None, "shape (k)", low=0.0, open_low=True),
         Scalar("scale", float, None, "scale (the mean is shape * scale)", low=0.0,
                open_low=True)),
        "the gamma distribution with shape ``shape`` and scale ``scale``", _gamma),
)}


# -- shared rules --------------------------------------------------------------------------
def _size_field() -> Field:
    return Field(Shape, None, "the output shape (None: the parameters' broadcast shape)")


def _ctx_field() -> Field:
    return DeviceField(str, "", "the device to sample on, as 'cpu(0)' ('': the current "
                                "device); used by the front end")


def _broadcast_to(name: str, shapes: Sequence[tuple], size: tuple | None) -> tuple:
    """The output shape: ``size``, which the parameter shapes must broadcast to, else the
    parameter shapes broadcast together (NumPy's rules)."""
    shapes = [tuple(s) for s in shapes]
    listed = ", ".join(str(s) for s in shapes)
    try:
        together = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        raise ShapeError(f"operator {name!r}: parameter shapes {listed} do not broadcast "
                         f"together") from None
    if size is None:
        return together
    try:
        fits = len(together) <= len(size) and np.broadcast_shapes(together, size) == size
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"operator {name!r}: parameter shapes {listed} do not broadcast to "
                         f"size={size}")
    return size


def _infer_shape(name: str, n_outputs: int):
    def infer(attrs, ins, outs):
        size = None if attrs.size is None else tuple(attrs.size)
        out = outs[0]
        if all(shape_is_known(s) for s in ins):
            out = merge_shape(out, _broadcast_to(name, ins, size), f"operator {name!r}, output")
        elif size is not None:
            out = merge_shape(out, size, f"operator {name!r}, output")
        return ins, [out] * n_outputs

    return infer


def _infer_type(n_outputs: int, default: str = "float32"):
    def infer(attrs, ins, outs):
        wanted = getattr(attrs, "dtype", None)
        out = np.dtype(wanted) if wanted is not None else outs[0]
        if out is None:
            out = np.dtype(default)
        out = merge_dtype(out, outs[0], "sampled output")
        return ins, [out] * n_outputs

    return infer


def _parameters(attrs: Params, names: Sequence[str], inputs: Sequence[Any], xp: Any) -> list:
    """Each parameter: its number, or (where it is None) the next input in float64."""
    arrays = iter(inputs)
    return [next(arrays).astype(xp.float64) if getattr(attrs, n) is None
            else float(getattr(attrs, n)) for n in names]


def _draw_case(d: Draw, scalars: Sequence[Scalar]) -> Case:
    """Some parameters as arrays (inputs), the others as numbers; ``size`` None or a shape
    the arrays broadcast to."""
    shape = d.shape(d.int(0, 2))
    inputs, params = [], {}
    for s in scalars:
        low = (0.0 if s.low is None else s.low) + 0.5
        if d.bool(f"{s.name} as an array"):
            inputs.append(np.asarray(d.rng.uniform(low, low + 2.0,
                                                   size=d.choice([shape, shape[-1:]]))))
            params[s.name] = None
        else:
            params[s.name] = d.float(low, low + 2.0, s.name)
    if d.bool("size"):
        params["size"] = d.shape(d.int(0, 1)) + shape
    return Case(inputs, params)


# -- _npi_<d> -----------------------------------------------------------------------------
def _random_op(name: str, description: str, **fields: Any) -> Op:
    """A sampler's record: it draws from the device's generator, and only writes."""
    return Op(name, description=f"{description}\n\n{NOTE}", resources=[ResourceRequest("random")],
              supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}), **fields)


def _params_class(dist: NumpyDistribution) -> type[Params]:
    fields = {s.name: Field(float, s.default, f"{s.desc} (None: given as the input of that "
                                              f"name)", optional=True) for s in dist.scalars}
    fields["size"] = _size_field()
    fields["ctx"] = _ctx_field()
    # MXNet's normal, uniform and gamma have it; dagnet's other samplers too (their front
    # ends do not), so that float64 samples can be checked against central differences
    fields["dtype"] = Field(DType, None, "the output dtype (None: float32, or the output "
                                         "array's)", choices=FLOAT_DTYPES)
    name = "Numpy" + "".join(part.title() for part in dist.name.split("_")) + "Param"
    return type(name, (Params,), fields)


def _array_names(dist: NumpyDistribution) -> Callable[[Params], list[str]]:
    return lambda attrs: [s.name for s in dist.scalars if getattr(attrs, s.name) is None]


def _sampler(dist: NumpyDistribution) -> list[Op]:
    name = f"_npi_{dist.name}"
    names = [s.name for s in dist.scalars]
    params = _params_class(dist)
    inputs = _array_names(dist)
    outputs = 1 if dist.slopes is None else 2

    def compute(attrs, ctx, arrays, req, outs):
        xp = ctx.xp
        values = _parameters(attrs, names, arrays, xp)
        check_values(name, dist, names, values, xp)
        sample, noise = dist.draw(ctx.requested[0].generator, xp, values, tuple(outs[0].shape))
        assign(outs[0], req[0], sample)
        if noise is not None:
            assign(outs[1], req[1], noise)

    def sample(draw):
        d = Draw(draw)
        case = _draw_case(d, dist.scalars)
        # the gradient check needs float64 samples (central differences)
        case.params["dtype"] = "float64" if dist.slopes else d.choice(FLOAT_DTYPES, "dtype")
        return case

    gradient: Any = ZeroGradient()
    records = []
    if dist.slopes is not None:
        backward_name = f"_backward_broadcast_{dist.name}"
        gradient = Gradient(backward_name, uses=("out_grad", "in_data", "out_data"))
        records.append(_backward(backward_name, name, dist, params))
    forward = _random_op(
        name,
        f"Samples from {dist.doc} (``mx.np.random``): parameters {', '.join(names)} as "
        f"numbers or as arrays (inputs, broadcasting NumPy's way); shape ``size`` or the "
        f"parameters' broadcast shape."
        + ("  Gradient: reparameterized (a hidden output keeps the noise); the conformance "
           "suite checks it against central differences that draw the same noise."
           if dist.slopes is not None else "  Gradient: zero, as in MXNet."),
        params=params,
        num_inputs=lambda attrs: len(inputs(attrs)),
        num_outputs=outputs,
        num_visible_outputs=1,
        input_names=inputs,
        output_names=["output", "noise"][:outputs],
        infer_shape=_infer_shape(name, outputs),
        infer_type=_infer_type(outputs),
        compute={XP: compute},
        gradient=gradient,
        domain=Domain(sample, None),
    )
    return [forward, *records]


def _backward(name: str, forward: str, dist: NumpyDistribution, params: type[Params]) -> Op:
    """``dy, *array parameters, sample, noise -> one gradient per array parameter``."""
    names = [s.name for s in dist.scalars]

    def compute(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        n = len(outputs)
        dy, arrays, sample, noise = inputs[0], inputs[1:1 + n], inputs[1 + n], inputs[2 + n]
        values = _parameters(attrs, names, arrays, xp)
        slopes = dist.slopes(xp, values, noise.astype(xp.float64), sample.astype(xp.float64))
        grads = [slope for slope, n_ in zip(slopes, names) if getattr(attrs, n_) is None]
        for out, r, array, slope in zip(outputs, req, arrays, grads):
            assign(out, r, reduce_to(xp, dy * slope, array.shape).astype(out.dtype))

    return Op(name, description=f"Gradient of {forward} with respect to its array "
                                f"parameters.", params=params,
              num_inputs=lambda attrs: len(_array_names(dist)(attrs)) + 3,
              num_outputs=lambda attrs: len(_array_names(dist)(attrs)),
              compute={XP: compute}, is_backward=True, forward_op=forward)


# -- _npi_bernoulli ------------------------------------------------------------------------
class BernoulliParam(Params):
    prob = Field(float, None, "probability of a 1 (None: given as the input, unless logit)")
    logit = Field(float, None, "log-odds of a 1 (None: given as the input, unless prob)")
    is_logit = Field(bool, False, "whether the input holds log-odds rather than "
                                  "probabilities")
    size = _size_field()
    ctx = _ctx_field()
    dtype = Field(DType, None, "the output dtype (None: float32, or the output array's)",
                  choices=("uint8", "int32", "float16", "float32", "float64", "bool"))


def _bernoulli_arrays(attrs: Params) -> list[str]:
    if attrs.prob is None and attrs.logit is None:
        return ["logit" if attrs.is_logit else "prob"]
    return []


def _bernoulli(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    if inputs:
        value = inputs[0].astype(xp.float64)
    else:
        value = float(attrs.logit if attrs.is_logit else attrs.prob)
    if attrs.is_logit:
        prob = 1.0 / (1.0 + xp.exp(-xp.asarray(value)))
    else:
        prob = xp.asarray(value)
        if bool(((prob < 0) | (prob > 1) | xp.isnan(prob)).any()):
            raise ParamError(f"operator '_npi_bernoulli': prob must lie in [0, 1]; got "
                             f"values in [{float(prob.min())}, {float(prob.max())}]")
    out = outputs[0]
    assign(out, req[0], ctx.requested[0].generator.random(tuple(out.shape)) < prob)


def _sample_bernoulli(draw):
    d = Draw(draw)
    shape = d.shape(d.int(0, 2))
    is_logit = d.bool("is_logit")
    params = {"is_logit": is_logit}
    inputs = []
    key = "logit" if is_logit else "prob"
    if d.bool("array"):
        inputs.append(d.uniform(shape, -2.0, 2.0) if is_logit else d.uniform(shape, 0.0, 1.0))
    else:
        params[key] = d.float(-2.0, 2.0, key) if is_logit else d.float(0.0, 1.0, key)
    if d.bool("size"):
        params["size"] = d.shape(1) + shape
    params["dtype"] = d.choice(["float32", "int32", "bool"], "dtype")
    return Case(inputs, params)


Bernoulli = _random_op(
    "_npi_bernoulli",
    "Samples 1 with probability ``prob`` (or ``sigmoid(logit)``), else 0, as "
    "``mx.npx.random.bernoulli``: the parameter a number or an array (the input); shape "
    "``size`` or the parameter's.  A probability outside [0, 1] fails the kernel with a "
    "ValueError.  Gradient: zero.",
    params=BernoulliParam,
    num_inputs=lambda attrs: len(_bernoulli_arrays(attrs)),
    input_names=_bernoulli_arrays,
    output_names=["output"],
    infer_shape=_infer_shape("_npi_bernoulli", 1),
    infer_type=_infer_type(1),
    compute={XP: _bernoulli},
    gradient=ZeroGradient(),
    domain=Domain(_sample_bernoulli, None),
)


# -- _npi_mvn_fallback ---------------------------------------------------------------------
class MultivariateNormalParam(Params):
    size = _size_field()


def _mvn_batch(name: str, ins: list) -> list[tuple] | None:
    mean, cov = ins
    if not (shape_is_known(mean) and shape_is_known(cov)):
        return None
    if len(mean) < 1 or len(cov) < 2 or cov[-1] != cov[-2] or mean[-1] != cov[-1]:
        raise ShapeError(f"operator {name!r}: mean must have shape (..., k) and cov shape "
                         f"(..., k, k); got {tuple(mean)} and {tuple(cov)}")
    return [tuple(mean[:-1]), tuple(cov[:-2])]


def _mvn_infer_shape(attrs, ins, outs):
    batch = _mvn_batch("_npi_mvn_fallback", ins)
    out = outs[0]
    if batch is not None:
        shape = _broadcast_to("_npi_mvn_fallback", batch, None)
        if attrs.size is not None:
            shape = tuple(attrs.size) + shape
        out = merge_shape(out, shape + (ins[0][-1],), "operator '_npi_mvn_fallback', output")
    return ins, [out]


def _mvn_infer_type(attrs, ins, outs):
    mean = ins[0]
    if mean is not None and np.dtype(mean).name not in FLOAT_DTYPES:
        raise DTypeError(f"operator '_npi_mvn_fallback': mean must be a float16, float32 or "
                         f"float64 array, got {np.dtype(mean).name}")
    return ins, [merge_dtype(mean, outs[0], "operator '_npi_mvn_fallback': output")]


def _mvn(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    mean, cov = (a.astype(xp.float64) for a in inputs)
    # cov = V diag(w) V^T; V sqrt(w) is a square root that, unlike Cholesky's, exists for
    # every positive semi-definite matrix (a degenerate cov too, as NumPy allows)
    w, v = xp.linalg.eigh(cov)
    root = v * xp.sqrt(xp.clip(w, 0.0, None))[..., None, :]
    out = outputs[0]
    z = ctx.requested[0].generator.standard_normal(tuple(out.shape))
    assign(out, req[0], mean + xp.matmul(root, z[..., None])[..., 0])


def _sample_mvn(draw):
    d = Draw(draw)
    k = d.int(1, 3, "k")
    factor = d.uniform((k, k))
    cov = factor @ factor.T + np.eye(k)
    mean = d.uniform(d.shape(d.int(0, 1)) + (k,))
    params = {"size": d.shape(1)} if d.bool("size") else {}
    return Case([mean, cov], params)


MultivariateNormal = _random_op(
    "_npi_mvn_fallback",
    "Samples from multivariate normal distributions, as "
    "``mx.np.random.multivariate_normal``: ``mean`` of shape ``(..., k)``, ``cov`` of shape "
    "``(..., k, k)`` (positive semi-definite), their batch shapes broadcast; output "
    "``size + batch + (k,)`` in ``mean``'s dtype.  Not differentiable, as in MXNet.",
    params=MultivariateNormalParam,
    num_inputs=2,
    input_names=["mean", "cov"],
    output_names=["output"],
    infer_shape=_mvn_infer_shape,
    infer_type=_mvn_infer_type,
    compute={XP: _mvn},
    gradient=NoGradient("sampling a multivariate normal has no gradient in MXNet"),
    domain=Domain(_sample_mvn, None),
)

OPS = [op for d in NUMPY_DISTRIBUTIONS.values() for op in _sampler(d)] + \
    [Bernoulli, MultivariateNormal]
