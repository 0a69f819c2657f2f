"""Descent by the gradient's direction: SGD (with momentum), Nesterov's NAG, Signum and
SGLD."""

from __future__ import annotations

import math
import os
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

    Dense weights of one dtype are updated ``aggregate_num`` at a time (the environment
    variable ``MXNET_OPTIMIZER_AGGREGATION_SIZE``, default 4, as in MXNet) by one
    ``multi_sgd_update`` or ``multi_sgd_mom_update`` call, which computes for each weight
    what its own ``sgd_update`` or ``sgd_mom_update`` would.
    """

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = real("SGD", "momentum", momentum, minimum=0.0)
        self.lazy_update = bool(lazy_update)
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

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
        float32 master copy, which is then cast back into ``weight``.  Lists of dense
        weights without master copies are updated in one operator call."""
        if isinstance(index, (list, tuple)):
            if self._aggregates(weight, grad):
                self._update_aggregated(index, weight, grad, state)
            else:
                super().update_multi_precision(index, weight, grad, state)
            return
        if self.multi_precision and weight.dtype == np.float16:
            momentum, master = state
            self.update(index, master, grad.astype(np.float32), momentum)
            ndarray.cast(master, dtype=weight.dtype, out=weight)
        else:
            super().update_multi_precision(index, weight, grad, state)

    def _aggregates(self, weights: list, grads: list) -> bool:
        """Whether ``weights`` can take one multi-weight call: all dense (their gradients
        too), none updated through a float32 master copy."""
        return all(w.stype == "default" and g.stype == "default" for w, g in zip(weights, grads)) \
            and not (self.multi_precision and any(w.dtype == np.float16 for w in weights))

    def _update_aggregated(self, indices: list, weights: list, grads: list,
                           states: list) -> None:
        self._update_count(indices)
        # tuples: the call's parameters are then hashable, and prepared once
        kwargs = dict(num_weights=len(weights), lrs=tuple(self._get_lrs(indices)),
                      wds=tuple(self._get_wds(indices)), rescale_grad=self.rescale_grad,
                      **self._clip_kwargs())
        if self.momentum == 0.0:
            inputs = [a for pair in zip(weights, grads) for a in pair]
            ndarray.multi_sgd_update(*inputs, out=weights, **kwargs)
        else:
            inputs = [a for triple in zip(weights, grads, states) for a in triple]
            ndarray.multi_sgd_mom_update(*inputs, out=weights, momentum=self.momentum, **kwargs)

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
    (``nag_mom_update``); without momentum, plain SGD.  Weights are updated one at a
    time (``nag_mom_update`` has no multi-weight form).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.aggregate_num = 0

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
