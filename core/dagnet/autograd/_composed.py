"""Composed gradient rules run imperatively: the operator namespace ``F`` a
:class:`~dagnet.operator.ComposedGradient` calls, and the arrays it is given.

Each ``F`` call is an ordinary imperative operator call, so while the backward
pass records (``grad(..., create_graph=True)``) every call joins the graph and
the gradient it builds can be differentiated again.  The arrays a rule reads
are given as views that carry their entry in the forward graph (a recorded
node keeps fresh arrays on its inputs' and outputs' memory, which carry none),
so the calls made on them are recorded against the right nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ndarray import NDArray, invoke, new_array, prepared, wrap_chunk
from ..operator import OpReqType, Params, get_op
from ._graph import record_call
from ._mode import is_recording

__all__ = ["ImperativeOps", "OPS", "entry_view"]


class ImperativeOps:
    """The ``F`` of composed gradient rules in autograd: ``F.<op>(*arrays, **params)`` runs
    the registered operator ``op`` on NDArrays; ``F.call`` runs one that infers no shapes.
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        get_op(name)  # an unknown name fails here, naming close ones

        def call(*arrays: NDArray, **params: Any) -> Any:
            return invoke(name, arrays, params)

        call.__name__ = name
        return call

    @staticmethod
    def call(name: str, arrays: Sequence[NDArray], attrs: Params | None = None,
             like: Sequence[NDArray] | None = None) -> Any:
        """Run operator ``name`` on ``arrays`` with the parsed parameters ``attrs``; with
        ``like``, its outputs take the shapes and dtypes of those arrays (for backward
        operators, which infer none).  Returns the output, or a list of several."""
        call = prepared(name, attrs.to_dict() if attrs is not None else {})
        arrays = list(arrays)
        if like is None:
            return call.run(arrays)
        if len(like) != call.n_out:
            raise ValueError(f"F.call({name!r}): the operator has {call.n_out} output(s) but "
                             f"like= gives {len(like)}; give one array per output")
        dev = arrays[0]._chunk.dev if arrays else like[0]._chunk.dev
        outs = [new_array(a._shape, a._dtype, dev) for a in like]
        if is_recording():
            record_call(call, arrays, outs, None)
        call.run_into(arrays, outs, [OpReqType.WRITE] * len(outs))
        return outs[0] if len(outs) == 1 else outs


OPS = ImperativeOps()


def entry_view(array: NDArray, entry: tuple | None) -> NDArray:
    """A view of ``array``'s memory that carries ``entry`` (None: outside every graph)."""
    view = wrap_chunk(array._chunk, array._offset, array._shape, array._dtype, array._strides,
                      array._data)
    if entry is not None and entry[0].live:
        view.__dict__["_ag"] = entry
    return view
