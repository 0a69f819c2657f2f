"""How the estimator trains and evaluates on one batch; subclass :class:`BatchProcessor`
to change it (several losses, other inputs) without subclassing the estimator."""

from __future__ import annotations

from typing import Any

from .... import autograd
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Runs the estimator's network on one batch of ``(data, label)``.

    :meth:`fit_batch` records the forward pass and runs the backward pass (the gradient
    step itself is the :class:`GradientUpdateHandler`'s); :meth:`evaluate_batch` runs the
    validation network and loss.  Both split the batch over ``estimator.context`` along
    ``batch_axis`` and return ``(data, label, pred, loss)``, each a list with one entry
    per device.
    """

    def _get_data_and_label(self, batch: Any, ctx: Any, batch_axis: int = 0
                            ) -> tuple[list[Any], list[Any]]:
        if not isinstance(batch, (list, tuple)) or len(batch) < 2:
            raise TypeError(f"BatchProcessor: a batch must be (data, label), got "
                            f"{type(batch).__name__}; give the DataLoader a dataset whose "
                            f"items are (data, label) pairs, or override fit_batch and "
                            f"evaluate_batch")
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator: Any, val_batch: Any, batch_axis: int = 0
                       ) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        """Run ``estimator.val_net`` and ``estimator.val_loss`` on ``val_batch``."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(p, y) for p, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator: Any, train_batch: Any, batch_axis: int = 0
                  ) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        """Run ``estimator.net`` and ``estimator.loss`` on ``train_batch`` under
        ``autograd.record()`` and back-propagate each device's loss."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(p, y) for p, y in zip(pred, label)]
        for value in loss:
            value.backward()
        return data, label, pred, loss
