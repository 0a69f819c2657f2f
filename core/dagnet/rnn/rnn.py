"""Checkpoints of networks built from RNN cells, with each cell's weights saved in
their unpacked (per-gate) form, as MXNet's ``save_rnn_checkpoint`` writes them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..model import load_checkpoint, save_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = ["save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def _cell_list(cells: BaseRNNCell | list[BaseRNNCell]) -> list[BaseRNNCell]:
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells: BaseRNNCell | list[BaseRNNCell], prefix: str, epoch: int,
                        symbol: Any, arg_params: Mapping[str, Any],
                        aux_params: Mapping[str, Any]) -> None:
    """:func:`~dagnet.model.save_checkpoint` with ``cells``' weights unpacked first."""
    args = dict(arg_params)
    for cell in _cell_list(cells):
        args = cell.unpack_weights(args)
    save_checkpoint(prefix, epoch, symbol, args, aux_params)


def load_rnn_checkpoint(cells: BaseRNNCell | list[BaseRNNCell], prefix: str, epoch: int
                        ) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """:func:`~dagnet.model.load_checkpoint` with ``cells``' weights packed again."""
    sym, args, aux = load_checkpoint(prefix, epoch)
    for cell in _cell_list(cells):
        args = cell.pack_weights(args)
    return sym, args, aux


def do_rnn_checkpoint(cells: BaseRNNCell | list[BaseRNNCell], prefix: str, period: int = 1
                      ) -> Callable[..., None]:
    """An epoch-end callback for ``Module.fit`` saving an RNN checkpoint every
    ``period`` epochs."""
    period = int(max(1, period))

    def _callback(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)

    return _callback
