"""``dagnet.model``: checkpoints of a symbol and its parameters in MXNet's file layout,
and the record a training loop hands to its batch callbacks.

``save_checkpoint(prefix, epoch, ...)`` writes ``prefix-symbol.json`` (the graph)
and ``prefix-%04d.params`` (an NDArray file whose keys are ``arg:<name>`` for
arguments and ``aux:<name>`` for auxiliary states), the files MXNet 1.x writes
and reads, so checkpoints move between the two.
"""

from __future__ import annotations

import logging
from collections import namedtuple
from collections.abc import Mapping
from typing import Any

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]

_log = logging.getLogger(__name__)

BatchEndParam = namedtuple("BatchEndParam", ["epoch", "nbatch", "eval_metric", "locals"])
BatchEndParam.__doc__ = """What a batch-end callback receives: the ``epoch``, the index
``nbatch`` of the batch in it, the ``eval_metric`` being accumulated and the ``locals``
of the loop that calls it."""


def save_checkpoint(prefix: str, epoch: int, symbol: Any, arg_params: Mapping[str, Any],
                    aux_params: Mapping[str, Any], remove_amp_cast: bool = True) -> None:
    """Write ``prefix-symbol.json`` (unless ``symbol`` is None) and
    ``prefix-%04d.params`` % ``epoch`` holding the parameters (copied to the CPU) under
    ``arg:<name>`` and ``aux:<name>``."""
    from . import ndarray
    from .context import cpu

    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    saved = {f"arg:{name}": value.as_in_context(cpu()) for name, value in arg_params.items()}
    saved.update({f"aux:{name}": value.as_in_context(cpu())
                  for name, value in aux_params.items()})
    param_name = _params_file(prefix, epoch)
    ndarray.save(param_name, saved)
    _log.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix: str, epoch: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(arg_params, aux_params)`` from ``prefix-%04d.params`` % ``epoch``."""
    from . import ndarray

    param_name = _params_file(prefix, epoch)
    saved = ndarray.load(param_name)
    arg_params: dict[str, Any] = {}
    aux_params: dict[str, Any] = {}
    if not saved:
        _log.warning("Params file '%s' is empty", param_name)
        return arg_params, aux_params
    if not isinstance(saved, Mapping):
        raise ValueError(f"load_params: {param_name!r} holds a list of arrays without names; "
                         f"a checkpoint names them 'arg:<name>' and 'aux:<name>' (write it "
                         f"with save_checkpoint)")
    for key, value in saved.items():
        kind, _, name = key.partition(":")
        if kind == "arg" and name:
            arg_params[name] = value
        elif kind == "aux" and name:
            aux_params[name] = value
    return arg_params, aux_params


def load_checkpoint(prefix: str, epoch: int) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """``(symbol, arg_params, aux_params)`` written by :func:`save_checkpoint`."""
    from . import symbol

    sym = symbol.load(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(prefix, epoch)
    return sym, arg_params, aux_params


def _params_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{int(epoch):04d}.params"
