"""The optimizers behind :class:`~.svrg_module.SVRGModule`: the user's optimizer for the
weights, and an assignment for the full gradients accumulated in a key-value store under
``<name>_full`` keys."""

from __future__ import annotations

from typing import Any

from ... import optimizer as opt
from ..._argcheck import ArgumentTypeError

__all__: list[str] = []

# the arguments of the Optimizer base class; the rest are the wrapped optimizer's own
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate",
                "lr_scheduler", "sym", "begin_num_update", "multi_precision", "param_dict")


def _is_full_gradient_key(name: Any) -> bool:
    return isinstance(name, str) and name.endswith("_full")


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """Replaces the weight with the pushed value: a key-value store using it keeps the
    sum of what the devices and workers push (the full gradients)."""

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        weight[:] = grad


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Sends the updates of ``<name>_full`` keys to an :class:`_AssignmentOptimizer` and
    every other update to ``default_optimizer`` (a name, created with the keyword
    arguments, or an Optimizer)."""

    def __init__(self, default_optimizer: Any, **kwargs: Any) -> None:
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = opt.create(default_optimizer, **kwargs)
        elif isinstance(default_optimizer, opt.Optimizer):
            self.default_opt = default_optimizer
        else:
            raise ArgumentTypeError(f"_SVRGOptimizer: default_optimizer must be an optimizer "
                                    f"name such as 'sgd' or an Optimizer, got "
                                    f"{type(default_optimizer).__name__}")
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs: Any) -> dict[str, Any]:
        """The keyword arguments the Optimizer base class takes."""
        return {key: value for key, value in kwargs.items() if key in _BASE_PARAMS}

    def _check_index(self, index: Any) -> Any:
        """The parameter name of update index ``index`` (a name is its own)."""
        if isinstance(index, str):
            return index
        try:
            return self.idx2name[index]
        except KeyError:
            raise ArgumentTypeError(
                f"_SVRGOptimizer: update index {index!r} has no parameter name; give "
                f"param_idx2name (SVRGModule.init_optimizer does)") from None

    def _target(self, index: Any) -> opt.Optimizer:
        return self.aux_opt if _is_full_gradient_key(self._check_index(index)) \
            else self.default_opt

    def _set_current_context(self, device_id: int) -> None:
        super()._set_current_context(device_id)
        self.default_opt._set_current_context(device_id)

    def set_learning_rate(self, lr: float) -> None:
        super().set_learning_rate(lr)
        self.default_opt.set_learning_rate(lr)

    def create_state(self, index: Any, weight: Any) -> Any:
        return self._target(index).create_state(index, weight)

    def create_state_multi_precision(self, index: Any, weight: Any) -> Any:
        return self._target(index).create_state_multi_precision(index, weight)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._target(index).update(index, weight, grad, state)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        if isinstance(index, (list, tuple)):
            for idx, w, g, st in zip(index, weight, grad, state):
                self.update_multi_precision(idx, w, g, st)
            return
        self._target(index).update_multi_precision(index, weight, grad, state)
