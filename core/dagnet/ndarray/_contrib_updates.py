"""``mx.nd.contrib``'s AdamW updates: MXNet's Python wrappers over the ``_adamw_update``
family, which take ``rescale_grad`` as a number or a one-value array (the operators read
it from an array, so a loss scaler may change it without the host reading it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _frontend
from ._creation import full
from ._ndarray import NDArray

__all__ = ["adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update"]


def _scale_array(rescale_grad: Any, like: NDArray) -> NDArray:
    """``rescale_grad`` as a one-value float32 array on ``like``'s device."""
    if isinstance(rescale_grad, NDArray):
        return rescale_grad.as_in_context(like.context)
    return full((1,), rescale_grad, ctx=like.context, dtype="float32")


def adamw_update(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray,
                 rescale_grad: Any, lr: float, eta: float, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0,
                 clip_gradient: float = -1, out: Any = None, name: str | None = None,
                 **kwargs: Any) -> NDArray:
    """One AdamW step (operator ``_adamw_update``): ``mean`` and ``var`` are updated in
    place and the new weight returned (``out=weight`` writes it back).  Nothing changes
    when ``rescale_grad`` is NaN, infinite or 0."""
    return _frontend.call("_adamw_update", weight, grad, mean, var,
                          _scale_array(rescale_grad, weight), lr=lr, eta=eta, beta1=beta1,
                          beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
                          out=out, name=name, **kwargs)


def mp_adamw_update(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray,
                    weight32: NDArray, rescale_grad: Any, lr: float, eta: float,
                    beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                    wd: float = 0, clip_gradient: float = -1, out: Any = None,
                    name: str | None = None, **kwargs: Any) -> NDArray:
    """:func:`adamw_update` of a (float16) weight through its float32 master copy
    ``weight32`` (operator ``_mp_adamw_update``); ``mean``, ``var`` and ``weight32`` are
    float32 and updated in place."""
    return _frontend.call("_mp_adamw_update", weight, grad, mean, var, weight32,
                          _scale_array(rescale_grad, weight), lr=lr, eta=eta, beta1=beta1,
                          beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
                          out=out, name=name, **kwargs)


def _interleave(*columns: Sequence[NDArray]) -> list[NDArray]:
    return [array for group in zip(*columns) for array in group]


def multi_adamw_update(weights: Sequence[NDArray], grads: Sequence[NDArray],
                       mean: Sequence[NDArray], var: Sequence[NDArray], rescale_grad: Any,
                       lrs: Sequence[float], wds: Sequence[float], etas: Sequence[float],
                       out: Any = None, name: str | None = None, size: int = 0,
                       **kwargs: Any) -> Any:
    """:func:`adamw_update` of several weights in one call (operator
    ``_multi_adamw_update``): weight ``i`` takes ``lrs[i]``, ``wds[i]`` and ``etas[i]``;
    ``size`` is how many (default: all of ``weights``)."""
    size = size or len(weights)
    return _frontend.call("_multi_adamw_update", *_interleave(weights, grads, mean, var),
                          _scale_array(rescale_grad, weights[0]), out=out, name=name,
                          num_weights=size, lrs=lrs, wds=wds, etas=etas, **kwargs)


def multi_mp_adamw_update(weights: Sequence[NDArray], grads: Sequence[NDArray],
                          mean: Sequence[NDArray], var: Sequence[NDArray],
                          weights32: Sequence[NDArray], rescale_grad: Any,
                          lrs: Sequence[float], wds: Sequence[float], etas: Sequence[float],
                          out: Any = None, name: str | None = None, size: int = 0,
                          **kwargs: Any) -> Any:
    """:func:`mp_adamw_update` of several weights in one call (operator
    ``_multi_mp_adamw_update``), each with its float32 master copy in ``weights32``."""
    size = size or len(weights)
    return _frontend.call("_multi_mp_adamw_update",
                          *_interleave(weights, grads, mean, var, weights32),
                          _scale_array(rescale_grad, weights[0]), out=out, name=name,
                          num_weights=size, lrs=lrs, wds=wds, etas=etas, **kwargs)
