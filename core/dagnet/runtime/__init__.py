"""``dagnet.runtime``: what runs one operator on a device.

The layer under every front end (``ndarray``, ``symbol``/``executor``,
``autograd``): device records (:func:`device_of`), the engine work goes to
now (:func:`current_engine`), chunks -- a storage block and the engine
variable ordering its uses (:func:`new_chunk`) -- the engine's stream around
device work (:func:`stream_scope`), the per-thread training and recording
mode with the recorder's hooks, the recorded-graph leaves (:class:`Variable`)
and the one function that runs a kernel on device arrays
(:func:`kernel_function`, with :func:`request_resources`), bulk execution
(:func:`bulk_function`: several engine functions pushed as one), and what the
installation can do under MXNet's feature names (:class:`Features`, as
``mx.runtime.Features``).
"""

from __future__ import annotations

from ._bulk import EngineFunction, bulk_function, unique_vars
from ._chunk import (
    Chunk,
    adopt_host_buffer,
    bulk_or_push,
    current_engine,
    flush_bulk,
    flush_graveyard,
    new_chunk,
    pushing_engine,
)
from ._device import Device, device_of
from ._features import Feature, Features, feature_list
from ._kernel import kernel_function, request_resources
from ._mode import (
    hooks,
    install_recorder,
    is_recording,
    is_training,
    mode,
    set_recording,
    set_training,
)
from ._stream import stream_scope
from ._tape import (
    GRAD_REQS,
    AutogradError,
    Variable,
    check_copy_from,
    check_write,
    entry_of,
    forget_chunk,
    in_graph,
    mark_variable,
    remember_chunk,
)

__all__ = [
    "AutogradError", "Chunk", "Device", "EngineFunction", "Feature", "Features", "GRAD_REQS",
    "Variable", "feature_list",
    "bulk_function", "bulk_or_push", "check_copy_from", "check_write", "flush_bulk",
    "pushing_engine",
    "unique_vars",
    "current_engine", "device_of", "entry_of", "flush_graveyard", "forget_chunk", "hooks",
    "in_graph", "install_recorder", "is_recording", "is_training", "kernel_function",
    "mark_variable", "mode", "adopt_host_buffer", "new_chunk", "remember_chunk",
    "request_resources",
    "set_recording", "set_training", "stream_scope",
]
