"""``_random_pdf_<d>``: densities (or probabilities) of samples under distributions given
per element of parameter arrays (MXNet's ``src/operator/random/pdf_op``), with their
gradients with respect to the samples and the parameters.

Inputs: ``sample`` and the parameter arrays, which share one shape ``P``; ``sample``'s
shape starts with ``P``, each parameter element covering the samples below it.  The
output has ``sample``'s shape.  ``is_log=True`` gives the log-density.  For the
Dirichlet the parameters are vectors: ``alpha`` has shape ``B + (k,)``, ``sample``
``B + S + (k,)`` and the output ``B + S``.

Gradients: the parameters' are summed over the samples each element covers; the
samples' gradient is zero for the discrete distributions (Poisson, negative binomial)
and for the uniform density, as in MXNet.  No support check is made (the uniform's
density is ``1 / (high - low)`` everywhere), as in MXNet.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    assign,
    elemwise_type,
    merge_shape,
)

from .._draw import Draw
from ._special import digamma, gammaln

__all__ = ["OPS"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class PdfParam(Params):
    is_log = Field(bool, False, "return the log-density instead of the density")


@dataclass(frozen=True)
class Density:
    """A distribution's log-density ``logpdf(xp, x, *params)`` and its gradient
    ``grad(xp, x, *params) -> (d/dx, d/dparam...)`` (arrays broadcasting to ``x``)."""

    name: str
    inputs: tuple[str, ...]
    doc: str
    logpdf: Callable[..., Any]
    grad: Callable[..., tuple]
    discrete: bool = False
    sample: Callable[[Draw, tuple], list] | None = None


# -- the densities -------------------------------------------------------------------
def _uniform_logpdf(xp, x, low, high):
    return xp.broadcast_to(-xp.log(high - low), x.shape)


def _uniform_grad(xp, x, low, high):
    width = high - low
    return xp.zeros_like(x), 1.0 / width, -1.0 / width


def _normal_logpdf(xp, x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - xp.log(sigma) - _LOG_SQRT_2PI


def _normal_grad(xp, x, mu, sigma):
    var = sigma * sigma
    return (mu - x) / var, (x - mu) / var, ((x - mu) ** 2 - var) / (var * sigma)


def _gamma_logpdf(xp, x, alpha, beta):  # beta is the rate here, as in MXNet's pdf
    return alpha * xp.log(beta) + (alpha - 1) * xp.log(x) - beta * x - gammaln(xp, alpha)


def _gamma_grad(xp, x, alpha, beta):
    return ((alpha - 1) / x - beta, xp.log(beta) + xp.log(x) - digamma(xp, alpha),
            alpha / beta - x)


def _exponential_logpdf(xp, x, lam):
    return xp.log(lam) - lam * x


def _exponential_grad(xp, x, lam):
    return -lam * xp.ones_like(x), 1.0 / lam - x


def _poisson_logpdf(xp, x, lam):
    return x * xp.log(lam) - gammaln(xp, x + 1) - lam


def _poisson_grad(xp, x, lam):
    return xp.zeros_like(x), x / lam - 1


def _nb_logpdf(xp, x, k, p):  # failures before the k-th success, success probability p
    return (gammaln(xp, x + k) - gammaln(xp, x + 1) - gammaln(xp, k) + k * xp.log(p)
            + x * xp.log(1 - p))


def _nb_grad(xp, x, k, p):
    return (xp.zeros_like(x), digamma(xp, x + k) - digamma(xp, k) + xp.log(p),
            k / p - x / (1 - p))


def _gnb_as_nb(mu, alpha):
    return 1.0 / alpha, 1.0 / (mu * alpha + 1.0)


def _gnb_logpdf(xp, x, mu, alpha):
    return _nb_logpdf(xp, x, *_gnb_as_nb(mu, alpha))


def _gnb_grad(xp, x, mu, alpha):
    k, p = _gnb_as_nb(mu, alpha)
    _, dk, dp = _nb_grad(xp, x, k, p)
    den = mu * alpha + 1.0
    return (xp.zeros_like(x), -dp * alpha / den ** 2,
            -dk / alpha ** 2 - dp * mu / den ** 2)


def _dirichlet_logpdf(xp, x, alpha):  # the last axis holds the k components
    return (((alpha - 1) * xp.log(x)).sum(axis=-1) + gammaln(xp, alpha.sum(axis=-1))
            - gammaln(xp, alpha).sum(axis=-1))


def _dirichlet_grad(xp, x, alpha):
    total = digamma(xp, alpha.sum(axis=-1, keepdims=True))
    return (alpha - 1) / x, xp.log(x) + total - digamma(xp, alpha)


# -- conformance-suite draws ----------------------------------------------------------
def _positive(d, shape, low, high):
    return d.rng.uniform(low, high, size=shape)


def _counts(d, shape):
    return d.rng.integers(0, 8, size=shape).astype(np.float64)


def _draw_uniform(d, p, s):
    low = d.rng.uniform(-2, 2, size=p)
    high = low + _positive(d, p, 0.5, 2.0)
    x = low.reshape(p + (1,) * len(s)) + 0.25 * (high - low).reshape(p + (1,) * len(s))
    return [np.broadcast_to(x, p + s).copy(), low, high]


DENSITIES = (
    Density("uniform", ("low", "high"), "the uniform distribution on ``[low, high)``",
            _uniform_logpdf, _uniform_grad, sample=_draw_uniform),
    Density("normal", ("mu", "sigma"),
            "the normal distribution with mean ``mu`` and standard deviation ``sigma``",
            _normal_logpdf, _normal_grad,
            sample=lambda d, p, s: [d.rng.uniform(-3, 3, size=p + s),
                                    d.rng.uniform(-2, 2, size=p), _positive(d, p, 0.5, 2)]),
    Density("gamma", ("alpha", "beta"),
            "the gamma distribution with shape ``alpha`` and rate ``beta`` (density "
            "``beta^alpha x^(alpha-1) e^(-beta x) / Gamma(alpha)``)",
            _gamma_logpdf, _gamma_grad,
            sample=lambda d, p, s: [_positive(d, p + s, 0.2, 3), _positive(d, p, 0.5, 3),
                                    _positive(d, p, 0.5, 2)]),
    Density("exponential", ("lam",), "the exponential distribution with rate ``lam``",
            _exponential_logpdf, _exponential_grad,
            sample=lambda d, p, s: [_positive(d, p + s, 0.1, 3), _positive(d, p, 0.5, 2)]),
    Density("poisson", ("lam",), "the Poisson distribution with mean ``lam``",
            _poisson_logpdf, _poisson_grad, discrete=True,
            sample=lambda d, p, s: [_counts(d, p + s), _positive(d, p, 0.5, 5)]),
    Density("negative_binomial", ("k", "p"),
            "the negative binomial distribution of the failures before the ``k``-th "
            "success, each trial succeeding with probability ``p``",
            _nb_logpdf, _nb_grad, discrete=True,
            sample=lambda d, p, s: [_counts(d, p + s), _positive(d, p, 0.5, 5),
                                    _positive(d, p, 0.2, 0.8)]),
    Density("generalized_negative_binomial", ("mu", "alpha"),
            "the negative binomial distribution with mean ``mu`` and dispersion ``alpha`` "
            "(``k = 1 / alpha``, ``p = 1 / (1 + mu * alpha)``)",
            _gnb_logpdf, _gnb_grad, discrete=True,
            sample=lambda d, p, s: [_counts(d, p + s), _positive(d, p, 0.5, 3),
                                    _positive(d, p, 0.2, 1.5)]),
)

_DIRICHLET = Density(
    "dirichlet", ("alpha",),
    "the Dirichlet distribution with concentration ``alpha`` (a vector per distribution, "
    "in the last axis)",
    _dirichlet_logpdf, _dirichlet_grad)


# -- shapes ------------------------------------------------------------------------------
def _scalar_params_shape(name):
    def infer(attrs, ins, outs):
        params = None
        for i, s in enumerate(ins[1:], start=1):
            params = merge_shape(params, s, f"operator {name!r}, parameter input {i}")
        sample = merge_shape(ins[0], outs[0], f"operator {name!r}, sample and output")
        if sample is not None and params is not None:
            if len(params) > len(sample) or any(
                    a and b and a != b for a, b in zip(params, sample)):
                raise ShapeError(
                    f"operator {name!r}: the parameters' shape {tuple(params)} must be the "
                    f"leading part of the sample's shape {tuple(sample)}")
            params = merge_shape(params, tuple(sample[:len(params)]),
                                 f"operator {name!r}, parameters")
        return [sample] + [params] * (len(ins) - 1), [sample]

    return infer


def _dirichlet_shape(attrs, ins, outs):
    sample, alpha = ins
    name = "_random_pdf_dirichlet"
    if sample is None or alpha is None:
        return ins, outs
    if len(alpha) > len(sample) or len(alpha) == 0:
        raise ShapeError(f"operator {name!r}: alpha's shape {tuple(alpha)} must have at least "
                         f"one axis and no more than the sample's shape {tuple(sample)}")
    wanted = tuple(sample[:len(alpha) - 1]) + (sample[-1],)
    alpha = merge_shape(alpha, wanted, f"operator {name!r}: alpha (batch axes of the sample, "
                                       f"then its last axis)")
    out = (1,) if len(sample) == 1 else tuple(sample[:-1])
    return [sample, alpha], [merge_shape(outs[0], out, f"operator {name!r}, output")]


# -- kernels -------------------------------------------------------------------------------
def _expand(p, extra):
    return p.reshape(p.shape + (1,) * extra)


def _scalar_forward(density):
    def forward(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        x = inputs[0].astype(xp.float64)
        extra = x.ndim - inputs[1].ndim
        params = [_expand(p.astype(xp.float64), extra) for p in inputs[1:]]
        log = density.logpdf(xp, x, *params)
        assign(outputs[0], req[0], log if attrs.is_log else xp.exp(log))

    return forward


def _scalar_backward(density):
    n = len(density.inputs)

    def backward(attrs, ctx, inputs, req, outputs):
        # inputs: head, sample, parameters..., output
        xp = ctx.xp
        head, x = inputs[0].astype(xp.float64), inputs[1].astype(xp.float64)
        out = inputs[2 + n].astype(xp.float64)
        extra = x.ndim - inputs[2].ndim
        params = [_expand(p.astype(xp.float64), extra) for p in inputs[2:2 + n]]
        scale = head if attrs.is_log else head * out
        grads = density.grad(xp, x, *params)
        axes = tuple(range(x.ndim - extra, x.ndim))
        assign(outputs[0], req[0], xp.broadcast_to(scale * grads[0], x.shape))
        for i in range(n):
            full = xp.broadcast_to(scale * grads[1 + i], x.shape)
            assign(outputs[1 + i], req[1 + i], full.sum(axis=axes) if axes else full)

    return backward


def _dirichlet_alpha(sample_ndim, alpha):
    # alpha: B + (k,) -> B + (1,)*len(S) + (k,) against the sample B + S + (k,)
    extra = sample_ndim - alpha.ndim
    return alpha.reshape(alpha.shape[:-1] + (1,) * extra + alpha.shape[-1:]), extra


def _dirichlet_forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    x = inputs[0].astype(xp.float64)
    alpha, _ = _dirichlet_alpha(x.ndim, inputs[1].astype(xp.float64))
    log = _dirichlet_logpdf(xp, x, alpha)
    value = log if attrs.is_log else xp.exp(log)
    assign(outputs[0], req[0], value.reshape(outputs[0].shape))


def _dirichlet_backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    head, x = inputs[0].astype(xp.float64), inputs[1].astype(xp.float64)
    out = inputs[3].astype(xp.float64)
    alpha, extra = _dirichlet_alpha(x.ndim, inputs[2].astype(xp.float64))
    scale = (head if attrs.is_log else head * out).reshape(x.shape[:-1] + (1,))
    d_x, d_alpha = _dirichlet_grad(xp, x, alpha)
    assign(outputs[0], req[0], scale * d_x)
    first = alpha.ndim - 1 - extra
    full = scale * d_alpha
    assign(outputs[1], req[1], full.sum(axis=tuple(range(first, first + extra))) if extra
           else full)


def _draw_dirichlet(draw):
    d = Draw(draw)
    batch, samples = d.shape(d.int(0, 2)), d.shape(d.int(0, 2))
    k = d.int(2, 4, "components")
    x = d.rng.uniform(0.2, 1.0, size=batch + samples + (k,))
    x /= x.sum(axis=-1, keepdims=True)
    return Case([x, d.rng.uniform(0.5, 3.0, size=batch + (k,))], {"is_log": d.bool("is_log")})


def _dirichlet_reference(params, x, alpha):
    attrs = PdfParam.parse("_random_pdf_dirichlet", params)
    a, _ = _dirichlet_alpha(x.ndim, alpha)
    log = _dirichlet_logpdf(np, x, a)
    value = log if attrs.is_log else np.exp(log)
    return value.reshape((1,) if x.ndim == 1 else x.shape[:-1])


# -- the operators ---------------------------------------------------------------------------
def _reference(density):
    def reference(params, x, *ps):
        attrs = PdfParam.parse(f"_random_pdf_{density.name}", params)
        extra = x.ndim - ps[0].ndim
        log = density.logpdf(np, x, *[_expand(p, extra) for p in ps])
        return log if attrs.is_log else np.exp(log)

    return reference


def _sampler(density):
    def sample(draw):
        d = Draw(draw)
        params_shape, samples_shape = d.shape(d.int(1, 2)), d.shape(d.int(0, 2))
        return Case(density.sample(d, params_shape, samples_shape), {"is_log": d.bool("is_log")})

    return sample


_SHAPES = """The parameter inputs share one shape ``P``, the leading part of ``sample``'s shape;
the output has ``sample``'s shape (Dirichlet: ``alpha`` is ``B + (k,)``, ``sample``
``B + S + (k,)``, the output ``B + S``).  The parameters' gradients are summed over the
samples each element covers; the samples' gradient is zero for discrete distributions
and for the uniform density."""


def _description(density, extra=""):
    kind = "probability" if density.discrete else "density"
    return (f"The {kind} (``is_log``: its logarithm) of ``sample`` under {density.doc}, one "
            f"distribution per element of {', '.join(density.inputs)}.{extra}\n\n{_SHAPES}")


def _pdf_ops(density, infer_shape, forward, backward, domain):
    name = f"_random_pdf_{density.name}"
    n = len(density.inputs)
    return [
        Op(
            name,
            description=_description(density),
            params=PdfParam,
            num_inputs=n + 1,
            input_names=["sample", *density.inputs],
            output_names=["output"],
            infer_shape=infer_shape,
            infer_type=elemwise_type,
            compute={XP: forward},
            gradient=Gradient(f"_backward_pdf_{density.name}",
                              uses=("out_grad", "in_data", "out_data")),
            domain=domain,
            aliases=(f"random_pdf_{density.name}",),
        ),
        Op(f"_backward_pdf_{density.name}", params=PdfParam, num_inputs=n + 3,
           num_outputs=n + 1, compute={XP: backward}, is_backward=True, forward_op=name),
    ]


OPS = [op for density in DENSITIES for op in _pdf_ops(
    density, _scalar_params_shape(f"_random_pdf_{density.name}"), _scalar_forward(density),
    _scalar_backward(density),
    Domain(_sampler(density), _reference(density),
           differentiable=tuple(range(1, len(density.inputs) + 1)) if density.discrete
           else None))]
OPS += _pdf_ops(_DIRICHLET, _dirichlet_shape, _dirichlet_forward, _dirichlet_backward,
                Domain(_draw_dirichlet, _dirichlet_reference))
