"""``FusedRNN``: the initializer of a fused ``RNN`` operator's flat parameter vector."""

from __future__ import annotations

from typing import Any

from ..initializer import InitDesc, Initializer, create, register

__all__ = ["FusedRNN"]


@register
class FusedRNN(Initializer):
    """Initializes the one parameter vector of a fused RNN piece by piece: each
    per-gate weight and bias (as :meth:`FusedRNNCell.unpack_weights` names them) with
    ``init``, or, when ``init`` is None, with the initializer the whole vector is being
    initialized by; an LSTM's forget-gate biases are set to ``forget_bias``."""

    def __init__(self, init: Initializer | str | None, num_hidden: int, num_layers: int,
                 mode: str, bidirectional: bool = False, forget_bias: float = 1.0) -> None:
        if isinstance(init, Initializer):
            init = init.dumps()
        super().__init__(init=init, num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = create(init) if init is not None else None
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        from .rnn_cell import FusedRNNCell

        cell = FusedRNNCell(self._num_hidden, self._num_layers, self._mode,
                            self._bidirectional, forget_bias=self._forget_bias, prefix="")
        parts = cell.unpack_weights({"parameters": arr})
        fallback = self._init if self._init is not None else desc.global_init
        for name, part in parts.items():
            if self._mode == "lstm" and name.endswith("_f_bias"):
                part[:] = self._forget_bias
            elif fallback is None or isinstance(fallback, FusedRNN):
                raise ValueError(f"FusedRNN: no initializer for {name!r}; give FusedRNN an "
                                 f"init, or initialize the parameters with another "
                                 f"initializer")
            else:
                fallback(InitDesc(name, global_init=desc.global_init), part)
        arr[:] = cell.pack_weights(parts)["parameters"]
