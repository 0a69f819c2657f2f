"""``mx.optimizer.contrib``: optimizers MXNet keeps outside its main set -- GroupAdaGrad."""

from __future__ import annotations

from typing import Any

from .. import ndarray
from .._argcheck import real
from .._errors import ParamError
from ._base import Optimizer, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-D weight (MXNet's contrib
    ``GroupAdaGrad``): ``g = clip(rescale_grad * grad)``,
    ``history += mean(g^2, axis=1)`` (one value per row),
    ``weight -= lr * g / sqrt(history + eps)``.  A row_sparse gradient updates only its
    rows.  Weight decay is not supported (``wd`` must be 0)."""

    def __init__(self, eps: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = real("GroupAdaGrad", "eps", eps, minimum=0.0)

    def create_state(self, index: Any, weight: Any) -> Any:
        """A zero history of one value per row, ``(rows, 1)``, of the weight's storage
        type."""
        if len(weight.shape) != 2:
            raise ParamError(f"GroupAdaGrad: the weight must be 2-D (one rate per row), got "
                             f"shape {tuple(weight.shape)}")
        return ndarray.zeros((weight.shape[0], 1), weight.context, dtype=weight.dtype,
                             stype=weight.stype)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """One GroupAdaGrad step, in place (``_contrib_group_adagrad_update``)."""
        self._update_count(index)
        wd = self._get_wd(index)
        if wd != 0:
            raise ParamError(f"GroupAdaGrad does not support weight decay; got wd={wd} (set "
                             f"wd=0 and the parameters' wd_mult do not matter then)")
        ndarray.contrib.group_adagrad_update(weight, grad, state, out=weight,
                                             lr=self._get_lr(index),
                                             epsilon=self.float_stable_eps,
                                             rescale_grad=self.rescale_grad,
                                             **self._clip_kwargs())
