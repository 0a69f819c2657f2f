"""The optimizer base class, its registry, and the :class:`Updater` that keeps each
weight's state."""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import ndarray
from .._argcheck import ArgumentTypeError, integer, real
from .._errors import DagnetError, ParamError, UnknownNameError
from ..lr_scheduler import LRScheduler
from ..util import is_np_array

__all__ = ["Optimizer", "Updater", "register", "create", "get_updater",
           "UnknownOptimizerError", "LRSchedulerConflict"]


def _rate(owner: str, name: str, value: Any) -> float:
    """A learning rate: any finite real number.  Negative rates step up the gradient (as
    in MXNet, which takes them too: gradient ascent, or a sentinel a caller replaces)."""
    value = real(owner, name, value)
    if not np.isfinite(value):
        raise ParamError(f"{owner}: {name} must be a finite number, got {value}")
    return value


class UnknownOptimizerError(UnknownNameError, ValueError):
    """An optimizer name nobody registered (a ``ValueError`` too, as in MXNet)."""


class LRSchedulerConflict(DagnetError, UserWarning):
    """``set_learning_rate`` on an optimizer whose rate comes from its ``lr_scheduler``
    (raised, as MXNet raises its ``UserWarning``)."""


class Optimizer:
    """Base class of the optimizers: the learning rate and weight decay of each weight,
    and the count of updates.

    Parameters: ``rescale_grad`` multiplies every gradient first (often
    ``1 / batch_size``); ``clip_gradient`` clips the rescaled gradient into
    ``[-clip_gradient, clip_gradient]`` (``None`` or ``0``: no clipping);
    ``learning_rate`` (default 0.01, or the scheduler's ``base_lr``, which a given
    ``learning_rate`` overwrites); ``lr_scheduler`` maps ``num_update`` to a rate;
    ``wd`` is the L2 weight decay; ``param_idx2name`` maps update indices to names,
    which then get ``wd_mult`` 0 unless they end in ``_weight`` or ``_gamma``;
    ``sym`` supplies ``__lr_mult__``/``__wd_mult__`` attributes of its arguments;
    ``param_dict`` maps indices to objects with ``lr_mult``/``wd_mult`` (Gluon
    parameters); ``begin_num_update`` starts the update counts;
    ``multi_precision`` keeps a float32 master copy of float16 weights.
    ``aggregate_num`` (0 here) is how many weights one call of
    :meth:`update_multi_precision` may take as lists; the :class:`Updater` hands an
    optimizer that sets it lists of up to that many weights of one dtype (MXNet's
    aggregated updates: one operator call instead of one per weight).

    The rate for index ``i`` is ``learning_rate * lr_mult(i)`` and its decay
    ``wd * wd_mult(i)``, where the multiplier comes from ``param_dict``, else
    ``set_lr_mult``/``set_wd_mult`` by index, else by name.
    """

    opt_registry: dict[str, type[Optimizer]] = {}

    def __init__(self, rescale_grad: float = 1.0, param_idx2name: Mapping[int, str] | None = None,
                 wd: float = 0.0, clip_gradient: float | None = None,
                 learning_rate: float | None = None, lr_scheduler: LRScheduler | None = None,
                 sym: Any = None, begin_num_update: int = 0, multi_precision: bool = False,
                 param_dict: Mapping[int, Any] | None = None) -> None:
        owner = type(self).__name__
        self.rescale_grad = real(owner, "rescale_grad", rescale_grad)
        self.clip_gradient = (None if clip_gradient is None
                              else real(owner, "clip_gradient", clip_gradient, minimum=0.0))
        self.wd = real(owner, "wd", wd)
        self.lr_scheduler = _scheduler(owner, lr_scheduler)
        self.lr = self._initial_lr(owner, learning_rate)
        self.begin_num_update = integer(owner, "begin_num_update", begin_num_update, minimum=0)
        self.num_update = self.begin_num_update
        # whether it was made in NumPy mode (npx.set_np / @use_np), as MXNet records; dagnet's
        # Updater takes mx.np and mx.nd arrays alike, since an mx.np array is an NDArray
        self.allow_np_array = is_np_array()
        # One table of per-index update counts per device: each device's copy of a
        # weight is updated, and counted, on its own.
        self._all_index_update_counts: dict[int, dict[Any, int]] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.multi_precision = bool(multi_precision)
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, Mapping):
            raise ArgumentTypeError(f"{owner}: param_idx2name must be a dict of update index "
                                    f"to parameter name, got {type(param_idx2name).__name__}")
        self.idx2name = dict(param_idx2name)
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = dict(param_dict) if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    def _initial_lr(self, owner: str, learning_rate: float | None) -> float | None:
        if learning_rate is None:
            return None if self.lr_scheduler is not None else 0.01
        learning_rate = _rate(owner, "learning_rate", learning_rate)
        if self.lr_scheduler is not None and self.lr_scheduler.base_lr != learning_rate:
            warnings.warn(f"{owner}: learning_rate={learning_rate} overwrites the lr_scheduler's "
                          f"base_lr={self.lr_scheduler.base_lr}", UserWarning, stacklevel=3)
            self.lr_scheduler.base_lr = learning_rate
        return learning_rate

    @staticmethod
    def register(klass: type[Optimizer]) -> type[Optimizer]:
        """Register ``klass`` under its lower-cased class name for :func:`create`; usable as
        a decorator.  Re-registering a name warns and replaces."""
        if not (isinstance(klass, type) and issubclass(klass, Optimizer)):
            raise ArgumentTypeError(f"optimizer.register: {klass!r} is not a subclass of "
                                    f"dagnet.optimizer.Optimizer; derive your class from it")
        name = klass.__name__.lower()
        previous = Optimizer.opt_registry.get(name)
        if previous is not None and previous is not klass:
            warnings.warn(f"optimizer {name!r}: {klass.__module__}.{klass.__qualname__} "
                          f"replaces {previous.__module__}.{previous.__qualname__}",
                          UserWarning, stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
        """An optimizer by registered name, case-insensitively: ``create('sgd', momentum=0.9)``."""
        if not isinstance(name, str):
            raise ArgumentTypeError(f"optimizer.create: name must be a str such as 'sgd', "
                                    f"got {type(name).__name__}")
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            known = ", ".join(sorted(Optimizer.opt_registry))
            raise UnknownOptimizerError(
                f"unknown optimizer {name!r}; expected one of {known} "
                f"(register a custom one with @dagnet.optimizer.register)")
        return klass(**kwargs)

    @property
    def learning_rate(self) -> float:
        """The current base rate: the scheduler's at ``num_update``, else ``lr``."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        """Set the base rate; an error when a scheduler decides it."""
        if self.lr_scheduler is not None:
            raise LRSchedulerConflict(
                f"{type(self).__name__}: the learning rate comes from its lr_scheduler; change "
                f"the scheduler's base_lr instead, or create the optimizer without one")
        self.lr = _rate(type(self).__name__, "lr", lr)

    def set_lr_mult(self, args_lr_mult: Mapping[Any, float]) -> None:
        """Set learning-rate multipliers by parameter name or update index; names from
        ``sym``'s ``__lr_mult__`` attributes come first, and ``args_lr_mult`` overrides them."""
        self.lr_mult = self._symbol_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: Mapping[Any, float]) -> None:
        """Set weight-decay multipliers by parameter name or update index.

        Every name in ``param_idx2name`` that does not end in ``_weight`` or ``_gamma``
        (biases, betas, ...) gets 0 first; then ``sym``'s ``__wd_mult__`` attributes;
        then ``args_wd_mult``.
        """
        self.wd_mult = {name: 0.0 for name in self.idx2name.values()
                        if not name.endswith(("_weight", "_gamma"))}
        self.wd_mult.update(self._symbol_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _symbol_mults(self, key: str) -> dict[Any, float]:
        if not self.sym_info:
            return {}
        attrs, arg_names = self.sym_info
        return {name: float(attrs[name][key]) for name in arg_names
                if key in attrs.get(name, {})}

    def _set_current_context(self, device_id: int) -> None:
        """Count updates for the device ``device_id`` from now on."""
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    def _update_count(self, index: Any) -> None:
        """Count one more update of ``index`` (or of each index of a list) and raise
        ``num_update`` to the largest count."""
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    def _get_lrs(self, indices: Sequence[Any]) -> list[float]:
        """The learning rate of each index: the base rate times its ``lr_mult``."""
        lr = self.learning_rate
        return [lr * self._mult(index, self.lr_mult, "lr_mult") for index in indices]

    def _get_lr(self, index: Any) -> float:
        """The learning rate of ``index``."""
        return self._get_lrs([index])[0]

    def _get_wds(self, indices: Sequence[Any]) -> list[float]:
        """The weight decay of each index: ``wd`` times its ``wd_mult``."""
        return [self.wd * self._mult(index, self.wd_mult, "wd_mult") for index in indices]

    def _get_wd(self, index: Any) -> float:
        """The weight decay of ``index``."""
        return self._get_wds([index])[0]

    def _mult(self, index: Any, mults: Mapping[Any, float], attr: str) -> float:
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in mults:
            return mults[index]
        if index in self.idx2name:
            return mults.get(self.idx2name[index], 1.0)
        return 1.0

    def create_state(self, index: Any, weight: Any) -> Any:
        """The state the update of ``weight`` needs (momentum, moments, ...), or ``None``.
        Called once per weight."""
        return None

    def create_state_multi_precision(self, index: Any, weight: Any) -> Any:
        """:meth:`create_state`, and for a float16 weight with ``multi_precision`` a float32
        master copy: ``(master, state)``."""
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return (master, self.create_state(index, master))
        if weight.dtype == np.float16:
            warnings.warn(f"{type(self).__name__}: accumulating float16 weights in float16 can "
                          f"lose accuracy; pass multi_precision=True to update a float32 copy",
                          UserWarning, stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """Update ``weight`` in place from ``grad`` and ``state`` (from :meth:`create_state`)."""
        raise NotImplementedError(f"{type(self).__name__} must define update(index, weight, "
                                  f"grad, state)")

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        """:meth:`update`; with a float32 master copy the update applies to the copy (with
        the gradient cast to float32), which is then cast back into ``weight``."""
        if isinstance(index, (list, tuple)):  # several weights at once, each on its own
            for idx, w, g, st in zip(index, weight, grad, state):
                self.update_multi_precision(idx, w, g, st)
            return
        if self.multi_precision and weight.dtype == np.float16:
            master, inner = state
            self.update(index, master, grad.astype(np.float32), inner)
            ndarray.cast(master, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)

    def _clip_kwargs(self) -> dict[str, float]:
        # MXNet passes clip_gradient only when it is truthy, so 0 turns clipping off.
        return {"clip_gradient": self.clip_gradient} if self.clip_gradient else {}

    def __getstate__(self) -> dict[str, Any]:
        # Gluon parameters hold arrays and a trainer; they are not part of the optimizer.
        state = self.__dict__.copy()
        del state["param_dict"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__ = state
        self.param_dict = {}


def _scheduler(owner: str, lr_scheduler: Any) -> LRScheduler | None:
    if lr_scheduler is not None and not isinstance(lr_scheduler, LRScheduler):
        raise ArgumentTypeError(
            f"{owner}: lr_scheduler must be a dagnet.lr_scheduler.LRScheduler such as "
            f"FactorScheduler(step=100), got {type(lr_scheduler).__name__}")
    return lr_scheduler


register = Optimizer.register
create = Optimizer.create_optimizer


class Updater:
    """Applies an optimizer to indexed weights and keeps their states (what a KVStore
    calls): ``updater(index, grad, weight)``, with lists of indices, gradients and
    weights accepted too.  A weight's state is created at its first update."""

    def __init__(self, optimizer: Optimizer) -> None:
        if not isinstance(optimizer, Optimizer):
            raise ArgumentTypeError(f"Updater: expected a dagnet.optimizer.Optimizer such as "
                                    f"mx.optimizer.SGD(), got {type(optimizer).__name__}")
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}
        # False for states loaded by set_states: they move to the weight's device at
        # their next use.
        self.states_synced: dict[Any, bool] = {}

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        """Update ``weight`` (or each of a list of weights) from its gradient."""
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        indices = [idx.decode() if isinstance(idx, bytes) else idx for idx in indices]
        for idx, w in zip(indices, weights):
            self._prepare_state(idx, w)
        size = getattr(self.optimizer, "aggregate_num", 0)
        if size <= 0:
            for idx, g, w in zip(indices, grads, weights):
                self.optimizer.update_multi_precision(idx, w, g, self.states[idx])
            return
        by_dtype: dict[Any, list[tuple]] = {}
        for update in zip(indices, weights, grads):
            by_dtype.setdefault(update[1].dtype, []).append(update)
        for updates in by_dtype.values():
            for start in range(0, len(updates), size):
                group_indices, group_weights, group_grads = map(list, zip(
                    *updates[start:start + size]))
                self.optimizer.update_multi_precision(
                    group_indices, group_weights, group_grads,
                    [self.states[idx] for idx in group_indices])

    def _prepare_state(self, index: Any, weight: Any) -> None:
        if index not in self.states:
            self.states[index] = self.optimizer.create_state_multi_precision(index, weight)
        elif not self.states_synced[index]:
            self.states[index] = self.sync_state_context(self.states[index], weight.context)
        self.states_synced[index] = True

    def sync_state_context(self, state: Any, context: Any) -> Any:
        """``state`` (an NDArray, or nested tuples and lists of them) on ``context``."""
        if isinstance(state, ndarray.NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            return type(state)(self.sync_state_context(s, context) for s in state)
        return state

    def set_states(self, states: bytes) -> None:
        """Load states saved by :meth:`get_states` (and the optimizer, if it was saved)."""
        loaded = pickle.loads(states)
        if isinstance(loaded, tuple) and len(loaded) == 2 and isinstance(loaded[1], Optimizer):
            self.states, self.optimizer = loaded
        else:
            self.states = loaded
        self.states_synced = dict.fromkeys(self.states, False)

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states pickled; with ``dump_optimizer``, the optimizer too (its rate,
        schedule and update counts)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer: Optimizer) -> Updater:
    """An :class:`Updater` for ``optimizer``."""
    return Updater(optimizer)
