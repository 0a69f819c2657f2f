"""Optimizers that scale each coordinate's step by its gradient history: Adam and Adamax,
Nadam, AdaGrad, AdaDelta, RMSProp, FTML, FTRL and LAMB."""

from __future__ import annotations

import math
from typing import Any

from .. import ndarray
from .._argcheck import real
from .._errors import ParamError
from ._base import Optimizer, register

__all__ = ["Adam", "Adamax", "Nadam", "AdaGrad", "AdaDelta", "RMSProp", "FTML", "Ftrl", "LAMB"]


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014, arXiv:1412.6980).

    At the weight's ``t``-th update, with
    ``g = clip(rescale_grad * grad + wd * weight, clip_gradient)`` (weight decay
    before clipping, unlike SGD):
    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g**2``,
    ``weight -= lr_t * m / (sqrt(v) + epsilon)``, where the bias correction is folded
    into the rate, ``lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)``, so ``epsilon``
    is not bias-corrected.  The state is ``(m, v)``; the step is ``adam_update``.
    With a row_sparse gradient and ``lazy_update`` (the default) only the rows the
    gradient holds are updated (the moments then have the weight's storage type);
    ``lazy_update=False`` gives the dense update.
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _decay_rate("beta1", beta1)
        self.beta2 = _decay_rate("beta2", beta2)
        self.epsilon = real("Adam", "epsilon", epsilon, minimum=0.0)
        self.lazy_update = bool(lazy_update)

    def create_state(self, index: Any, weight: Any) -> tuple[Any, Any]:
        """Zero first and second moments ``(m, v)`` like ``weight`` (of its storage type
        for lazy updates, else dense)."""
        stype = weight.stype if self.lazy_update else "default"
        return _zeros(weight, stype), _zeros(weight, stype)

    def update(self, index: Any, weight: Any, grad: Any, state: tuple[Any, Any]) -> None:
        """One Adam step on ``weight`` and its moments ``state``, in place."""
        self._update_count(index)
        t = self._index_update_count[index]
        lr = self._get_lr(index) * math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        mean, var = state
        ndarray.adam_update(weight, grad, mean, var, out=weight, lr=lr, wd=self._get_wd(index),
                            beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                            rescale_grad=self.rescale_grad, lazy_update=self.lazy_update,
                            **self._clip_kwargs())


def _decay_rate(name: str, value: Any, owner: str = "Adam") -> float:
    value = real(owner, name, value, minimum=0.0)
    if value >= 1.0:
        # The bias correction divides by 1 - beta1**t, and beta2 = 1 never updates v.
        raise ParamError(f"{owner}: {name} must be in [0, 1), got {value}; the usual values "
                         f"are beta1=0.9, beta2=0.999")
    return value


def _zeros(weight: Any, stype: str = "default") -> Any:
    return ndarray.zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)


def _clipped(opt: Optimizer, grad: Any, weight: Any = None, wd: float = 0.0) -> Any:
    """``clip(rescale_grad * grad (+ wd * weight))`` as a new array."""
    g = grad * opt.rescale_grad
    if weight is not None and wd:
        g = g + wd * weight
    if opt.clip_gradient:
        g = ndarray.clip(g, -opt.clip_gradient, opt.clip_gradient)
    return g


@register
class Adamax(Optimizer):
    """AdaMax (Kingma & Ba, 2014, section 7): Adam with the infinity norm.

    ``g = clip(rescale_grad * grad + wd * weight)``, ``m = beta1 m + (1 - beta1) g``,
    ``u = max(beta2 u, |g|)``, ``weight -= lr / (1 - beta1^t) * m / u``.
    """

    def __init__(self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _decay_rate("beta1", beta1, "Adamax")
        self.beta2 = _decay_rate("beta2", beta2, "Adamax")

    def create_state(self, index: Any, weight: Any) -> tuple[Any, Any]:
        """Zero ``(m, u)`` like ``weight``."""
        return _zeros(weight), _zeros(weight)

    def update(self, index: Any, weight: Any, grad: Any, state: tuple[Any, Any]) -> None:
        """One AdaMax step, in place."""
        self._update_count(index)
        t = self._index_update_count[index]
        lr = self._get_lr(index) / (1.0 - self.beta1 ** t)
        g = _clipped(self, grad, weight, self._get_wd(index))
        m, u = state
        m[:] = self.beta1 * m + (1.0 - self.beta1) * g
        u[:] = ndarray.maximum(self.beta2 * u, ndarray.abs(g))
        weight[:] = weight - lr * m / u


@register
class Nadam(Optimizer):
    """Nesterov-accelerated Adam (Dozat, 2016), with the momentum schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96^(t * schedule_decay))``.

    With ``g = clip(rescale_grad * grad + wd * weight)`` and the product of the
    schedule so far ``M_t``: ``m = beta1 m + (1 - beta1) g``,
    ``v = beta2 v + (1 - beta2) g^2``,
    ``m_bar = (1 - mu_t) g / (1 - M_t) + mu_{t+1} m / (1 - M_t mu_{t+1})``,
    ``weight -= lr * m_bar / (sqrt(v / (1 - beta2^t)) + epsilon)``.
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, schedule_decay: float = 0.004, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _decay_rate("beta1", beta1, "Nadam")
        self.beta2 = _decay_rate("beta2", beta2, "Nadam")
        self.epsilon = real("Nadam", "epsilon", epsilon, minimum=0.0)
        self.schedule_decay = real("Nadam", "schedule_decay", schedule_decay, minimum=0.0)
        self.m_schedule = 1.0

    def create_state(self, index: Any, weight: Any) -> tuple[Any, Any]:
        """Zero ``(m, v)`` like ``weight``."""
        return _zeros(weight), _zeros(weight)

    def _mu(self, t: int) -> float:
        return self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))

    def update(self, index: Any, weight: Any, grad: Any, state: tuple[Any, Any]) -> None:
        """One Nadam step, in place."""
        self._update_count(index)
        t = self._index_update_count[index]
        lr = self._get_lr(index)
        g = _clipped(self, grad, weight, self._get_wd(index))
        mu_t, mu_next = self._mu(t), self._mu(t + 1)
        self.m_schedule *= mu_t
        m, v = state
        m[:] = self.beta1 * m + (1.0 - self.beta1) * g
        v[:] = self.beta2 * v + (1.0 - self.beta2) * g * g
        m_bar = ((1.0 - mu_t) / (1.0 - self.m_schedule)) * g + \
            (mu_next / (1.0 - self.m_schedule * mu_next)) * m
        v_hat = v / (1.0 - self.beta2 ** t)
        weight[:] = weight - lr * m_bar / (ndarray.sqrt(v_hat) + self.epsilon)


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al., 2011): ``history += g^2`` with ``g = clip(rescale_grad *
    grad)``, ``weight -= lr * (g / sqrt(history + eps) + wd * weight)``.  A row_sparse
    gradient updates only its rows (``sparse.adagrad_update``, which needs ``wd=0``)."""

    def __init__(self, eps: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = real("AdaGrad", "eps", eps, minimum=0.0)

    def create_state(self, index: Any, weight: Any) -> Any:
        """A zero squared-gradient history like ``weight`` (of its storage type)."""
        return _zeros(weight, weight.stype)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """One AdaGrad step, in place."""
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if grad.stype == "row_sparse":
            ndarray.sparse.adagrad_update(weight, grad, state, out=weight, lr=lr, wd=wd,
                                          epsilon=self.float_stable_eps,
                                          rescale_grad=self.rescale_grad,
                                          **self._clip_kwargs())
            return
        g = _clipped(self, grad)
        state[:] = state + g * g
        weight[:] = weight - lr * (g / ndarray.sqrt(state + self.float_stable_eps) + wd * weight)


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler, 2012), which needs no learning rate: with ``g = clip(rescale_grad *
    grad)``, ``acc_g = rho acc_g + (1 - rho) g^2``,
    ``delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g``,
    ``acc_delta = rho acc_delta + (1 - rho) delta^2``, ``weight -= delta + wd * weight``."""

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rho = _decay_rate("rho", rho, "AdaDelta")
        self.epsilon = real("AdaDelta", "epsilon", epsilon, minimum=0.0)

    def create_state(self, index: Any, weight: Any) -> tuple[Any, Any]:
        """Zero accumulated squared gradients and steps like ``weight``."""
        return _zeros(weight), _zeros(weight)

    def update(self, index: Any, weight: Any, grad: Any, state: tuple[Any, Any]) -> None:
        """One AdaDelta step, in place."""
        self._update_count(index)
        wd = self._get_wd(index)
        g = _clipped(self, grad)
        acc_g, acc_delta = state
        acc_g[:] = self.rho * acc_g + (1.0 - self.rho) * g * g
        delta = ndarray.sqrt(acc_delta + self.epsilon) / ndarray.sqrt(acc_g + self.epsilon) * g
        acc_delta[:] = self.rho * acc_delta + (1.0 - self.rho) * delta * delta
        weight[:] = weight - (delta + wd * weight)


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (``rmsprop_update``), or with ``centered`` Graves'
    (``rmspropalex_update``, with momentum ``gamma2``); ``clip_weights`` bounds the
    weights after each step.  See the operators for the formulas."""

    def __init__(self, learning_rate: float = 0.001, gamma1: float = 0.9, gamma2: float = 0.9,
                 epsilon: float = 1e-8, centered: bool = False,
                 clip_weights: float | None = None, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = _decay_rate("gamma1", gamma1, "RMSProp")
        self.gamma2 = real("RMSProp", "gamma2", gamma2, minimum=0.0)
        self.epsilon = real("RMSProp", "epsilon", epsilon, minimum=0.0)
        self.centered = bool(centered)
        self.clip_weights = clip_weights

    def create_state(self, index: Any, weight: Any) -> tuple[Any, ...]:
        """``(n,)``, or centred ``(n, g, delta)``, zero, like ``weight`` (of its storage
        type)."""
        if self.centered:
            return tuple(_zeros(weight, weight.stype) for _ in range(3))
        return (_zeros(weight, weight.stype),)

    def update(self, index: Any, weight: Any, grad: Any, state: tuple[Any, ...]) -> None:
        """One RMSProp step, in place."""
        self._update_count(index)
        kwargs = dict(lr=self._get_lr(index), wd=self._get_wd(index),
                      rescale_grad=self.rescale_grad, gamma1=self.gamma1, epsilon=self.epsilon,
                      **self._clip_kwargs())
        if self.clip_weights:
            kwargs["clip_weights"] = self.clip_weights
        if self.centered:
            ndarray.rmspropalex_update(weight, grad, *state, out=weight, gamma2=self.gamma2,
                                       **kwargs)
        else:
            ndarray.rmsprop_update(weight, grad, state[0], out=weight, **kwargs)


@register
class FTML(Optimizer):
    """Follow the Moving Leader (Zheng & Kwok, 2017) (``ftml_update``)."""

    def __init__(self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.beta1 = _decay_rate("beta1", beta1, "FTML")
        self.beta2 = _decay_rate("beta2", beta2, "FTML")
        self.epsilon = real("FTML", "epsilon", epsilon, minimum=0.0)

    def create_state(self, index: Any, weight: Any) -> tuple[Any, Any, Any]:
        """Zero ``(d, v, z)`` like ``weight``."""
        return _zeros(weight), _zeros(weight), _zeros(weight)

    def update(self, index: Any, weight: Any, grad: Any, state: tuple[Any, Any, Any]) -> None:
        """One FTML step, in place."""
        self._update_count(index)
        t = self._index_update_count[index]
        clip = {"clip_grad": self.clip_gradient} if self.clip_gradient else {}
        ndarray.ftml_update(weight, grad, *state, out=weight, lr=self._get_lr(index),
                            wd=self._get_wd(index), t=t, beta1=self.beta1, beta2=self.beta2,
                            epsilon=self.epsilon, rescale_grad=self.rescale_grad, **clip)


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al., 2013) with L1 strength ``lamda1`` and per-coordinate
    rate smoothing ``beta`` (``ftrl_update``)."""

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1.0,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.lamda1 = real("Ftrl", "lamda1", lamda1, minimum=0.0)
        self.beta = real("Ftrl", "beta", beta, minimum=0.0)

    def create_state(self, index: Any, weight: Any) -> tuple[Any, Any]:
        """Zero ``(z, n)`` like ``weight`` (of its storage type: a row_sparse weight and
        gradient update only the gradient's rows)."""
        return _zeros(weight, weight.stype), _zeros(weight, weight.stype)

    def update(self, index: Any, weight: Any, grad: Any, state: tuple[Any, Any]) -> None:
        """One FTRL step, in place."""
        self._update_count(index)
        z, n = state
        ndarray.ftrl_update(weight, grad, z, n, out=weight, lr=self._get_lr(index),
                            wd=self._get_wd(index), lamda1=self.lamda1, beta=self.beta,
                            rescale_grad=self.rescale_grad, **self._clip_kwargs())


@register
class LAMB(Optimizer):
    """LAMB (You et al., 2019): Adam's direction plus weight decay, its step scaled by the
    trust ratio ``||weight|| / ||direction||`` (the weight norm bounded by
    ``lower_bound``/``upper_bound``; ratio 1 when either norm is 0).  With
    ``bias_correction`` the moments are divided by ``1 - beta^t``."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None,
                 upper_bound: float | None = None, bias_correction: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _decay_rate("beta1", beta1, "LAMB")
        self.beta2 = _decay_rate("beta2", beta2, "LAMB")
        self.epsilon = real("LAMB", "epsilon", epsilon, minimum=0.0)
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bool(bias_correction)

    def create_state(self, index: Any, weight: Any) -> tuple[Any, Any]:
        """Zero ``(mean, var)`` like ``weight``."""
        return _zeros(weight), _zeros(weight)

    def update(self, index: Any, weight: Any, grad: Any, state: tuple[Any, Any]) -> None:
        """One LAMB step, in place."""
        self._update_count(index)
        t = self._index_update_count[index]
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = _clipped(self, grad)
        mean, var = state
        mean[:] = self.beta1 * mean + (1.0 - self.beta1) * g
        var[:] = self.beta2 * var + (1.0 - self.beta2) * g * g
        mean_hat, var_hat = mean, var
        if self.bias_correction:
            mean_hat = mean / (1.0 - self.beta1 ** t)
            var_hat = var / (1.0 - self.beta2 ** t)
        direction = mean_hat / (ndarray.sqrt(var_hat) + self.epsilon) + wd * weight
        # the trust ratio stays on the device: no wait for the norms
        r1 = ndarray.norm(weight)
        if self.lower_bound:
            r1 = ndarray.maximum(r1, self.lower_bound)
        if self.upper_bound:
            r1 = ndarray.minimum(r1, self.upper_bound)
        r2 = ndarray.norm(direction)
        both = (r1 > 0) * (r2 > 0)
        ratio = ndarray.where(both, r1 / (r2 + (r2 == 0)), ndarray.ones_like(r1))
        weight[:] = weight - ndarray.broadcast_mul(lr * direction, ratio)
