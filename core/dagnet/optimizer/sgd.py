"""Descent by the gradient's direction: SGD (with momentum), Nesterov's NAG, Signum and
SGLD."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import ndarray, random
from .._argcheck import real
from ._base import Optimizer, register

__all__ = ["SGD", "NAG", "Signum", "SGLD"]


@register
class SGD(Optimizer):
    """Stochastic gradient descent, with momentum and weight decay.

    With ``g = clip(rescale_grad * grad, clip_gradient) + wd * weight``:
    without momentum, ``weight -= lr * g`` (``sgd_update``); with it, the state
    ``mom = momentum * mom - lr * g`` and ``weight += mom`` (``sgd_mom_update``).
    Weight decay is added after clipping.  With a row_sparse gradient and
    ``lazy_update`` (the default), only the rows the gradient holds are updated --
    their weight decay and momentum included; the momentum then has the weight's
    storage type.  ``lazy_update=False`` gives the dense update.
    """

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = real("SGD", "momentum", momentum, minimum=0.0)
        self.lazy_update = bool(lazy_update)

    def create_state(self, index: Any, weight: Any) -> Any:
        """A zero momentum like ``weight`` (of its storage type for lazy updates, else
        dense), or ``None`` without momentum."""
        if self.momentum == 0.0:
            return None
        stype = weight.stype if self.lazy_update else "default"
        return ndarray.zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)

    def create_state_multi_precision(self, index: Any, weight: Any) -> Any:
        """For a float16 weight with ``multi_precision``: ``(momentum, float32 master)``
        (MXNet's order for SGD and NAG); otherwise :meth:`create_state`."""
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return (self.create_state(index, master), master)
        return super().create_state_multi_precision(index, weight)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """:meth:`update`; a float16 weight with ``multi_precision`` is updated through its
        float32 master copy, which is then cast back into ``weight``."""
        if not isinstance(index, (list, tuple)) and self.multi_precision \
                and weight.dtype == np.float16:
            momentum, master = state
            self.update(index, master, grad.astype(np.float32), momentum)
            ndarray.cast(master, dtype=weight.dtype, out=weight)
        else:
            super().update_multi_precision(index, weight, grad, state)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """One SGD step on ``weight`` (and ``state``, the momentum), in place."""
        self._update_count(index)
        kwargs = dict(lr=self._get_lr(index), wd=self._get_wd(index),
                      rescale_grad=self.rescale_grad, lazy_update=self.lazy_update,
                      **self._clip_kwargs())
        if state is None:
            ndarray.sgd_update(weight, grad, out=weight, **kwargs)
        else:
            ndarray.sgd_mom_update(weight, grad, state, out=weight, momentum=self.momentum,
                                   **kwargs)


@register
class NAG(SGD):
    """Nesterov accelerated gradient: SGD whose step looks ahead along the momentum.

    With ``step = lr * (clip(rescale_grad * grad) + wd * weight)``: the momentum
    ``mom = momentum * mom - step`` and ``weight += momentum * mom - step``
    (``nag_mom_update``); without momentum, plain SGD.
    """

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """One NAG step on ``weight`` (and ``state``, the momentum), in place."""
        if state is None:
            super().update(index, weight, grad, state)
            return
        self._update_count(index)
        ndarray.nag_mom_update(weight, grad, state, out=weight, momentum=self.momentum,
                               lr=self._get_lr(index), wd=self._get_wd(index),
                               rescale_grad=self.rescale_grad, **self._clip_kwargs())


@register
class Signum(Optimizer):
    """Signum (Bernstein et al., 2018): a fixed-size step along the sign of the momentum.

    ``mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)``,
    ``weight = (1 - lr * wd_lh) * weight + lr * sign(mom)`` (``signum_update``);
    without momentum, ``weight = (1 - lr * (wd + wd_lh)) * weight - lr * sign(grad)``
    (``signsgd_update``).  ``wd_lh`` is decoupled weight decay (Loshchilov & Hutter).
    """

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = real("Signum", "momentum", momentum, minimum=0.0)
        self.wd_lh = real("Signum", "wd_lh", wd_lh, minimum=0.0)

    def create_state(self, index: Any, weight: Any) -> Any:
        """A zero momentum like ``weight`` (of its storage type), or ``None`` without
        momentum."""
        if self.momentum == 0.0:
            return None
        return ndarray.zeros(weight.shape, weight.context, dtype=weight.dtype,
                             stype=weight.stype)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """One Signum step on ``weight`` (and its momentum ``state``), in place."""
        self._update_count(index)
        kwargs = dict(lr=self._get_lr(index), rescale_grad=self.rescale_grad,
                      **self._clip_kwargs())
        if state is None:
            ndarray.signsgd_update(weight, grad, out=weight, wd=self._get_wd(index) + self.wd_lh,
                                   **kwargs)
        else:
            ndarray.signum_update(weight, grad, state, out=weight, wd=self._get_wd(index),
                                  momentum=self.momentum, wd_lh=self.wd_lh, **kwargs)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics (Welling & Teh, 2011): half an SGD step plus
    Gaussian noise of variance ``lr``, so the weights sample the posterior:
    ``weight += -lr / 2 * (clip(rescale_grad * grad) + wd * weight) + N(0, sqrt(lr))``."""

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """One SGLD step on ``weight``, in place."""
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = grad * self.rescale_grad
        if self.clip_gradient:
            g = ndarray.clip(g, -self.clip_gradient, self.clip_gradient)
        noise = random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                              ctx=weight.context)
        weight[:] = weight - lr / 2 * (g + wd * weight) + noise
