"""oneDNN's CPU kernels for dagnet's layers (convolution, max pooling and its gradient; the
fused convolution and fully connected layers of inference graphs), called through ctypes.

Used when the ``onednn-cpu-gomp`` wheel is installed (``libdnnl.so.3`` in the
environment's ``lib``) and ``config cpu_onednn`` is on (``DAGNET_CPU_ONEDNN=0`` turns it
off); otherwise :func:`library` is None and layers run their numpy kernels.  Why the
library did not load is logged at debug level (logger ``dagnet_ops.nn.onednn``) and kept
by :func:`unavailable_reason`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dagnet import config

from ..._threads import threads_for
from ._batch_norm import batch_norm_backward, batch_norm_forward
from ._convolution import (
    channel_block,
    conv_forward,
    conv_grad_data,
    conv_grad_weight,
    conv_grads,
    fuses_eltwise,
    inference_kernel,
    runs_on_blocks,
    takes_blocked,
)
from ._inner_product import inner_product_kernel
from ._library import DISTRIBUTION, Library, OneDNNError, failure, load
from ._pooling import max_pool, max_pool_grad
from ._primitive import (
    BLOCKED_TAGS,
    CHANNEL_BLOCK,
    KernelReplay,
    ReorderReplay,
    blocked_shape,
    plain_shape,
    thread_scope,
)
from ._reorder import layout_change_replay, to_blocked, to_plain

__all__ = ["library", "library_for", "unavailable_reason", "OneDNNError", "DISTRIBUTION",
           "conv_forward", "conv_grad_data", "conv_grad_weight", "conv_grads", "max_pool",
           "max_pool_grad", "blocked_shape", "plain_shape", "takes_blocked", "CHANNEL_BLOCK",
           "to_blocked", "to_plain", "batch_norm_forward", "batch_norm_backward",
           "inference_kernel", "inner_product_kernel", "fuses_eltwise", "channel_block",
           "runs_on_blocks", "BLOCKED_TAGS", "KernelReplay", "ReorderReplay", "thread_scope",
           "replay_scope", "offer_for_thread", "layout_change_replay"]


def library() -> Library | None:
    """The loaded oneDNN library if kernels should use it now, else None."""
    if not config.get("cpu_onednn"):
        return None
    return load()


def library_for(xp: Any, *arrays: Any) -> Library | None:
    """The library when it should run a layer's kernel on ``arrays``: float32 arrays on
    numpy, with the library loaded and switched on; else None (numpy's kernels run)."""
    if xp is not np or any(a.dtype != np.float32 for a in arrays):
        return None
    return library()


def unavailable_reason() -> str | None:
    """Why :func:`library` is None (switched off, or the load error), or None if it is not."""
    if not config.get("cpu_onednn"):
        return "switched off (config cpu_onednn / DAGNET_CPU_ONEDNN)"
    load()
    return failure()


def replay_scope() -> tuple:
    """What replayed oneDNN calls (``KernelReplay``, ``ReorderReplay``) depend on besides
    their arrays: the thread and its arena (:func:`thread_scope`), the library (config
    ``cpu_onednn``) and the kernel threads they were made for."""
    return thread_scope(), library(), threads_for(np)


_OFFERS_KEPT = 8  # offers a node keeps: one per thread (and thread count) that ran it


def offer_for_thread(state: Any, kept: dict, positions: Sequence[int],
                     make: Callable[[tuple], tuple[Sequence[Callable], Callable] | None]
                     ) -> None:
    """Offer the executor the node's run just made as oneDNN's calls (see
    ``NodeState.offer_replay``), made for the running thread: ``make(scope)`` gives them and
    their ``check`` (None: nothing to offer) once per :func:`replay_scope`, and ``kept``,
    the node's own dict for the run, keeps what was offered per scope, a few at most.
    They hold while that scope and the inputs at ``positions`` are unchanged."""
    scope = replay_scope()
    offer = kept.get(scope)
    if offer is not None:
        state.replay = offer
        return
    made = make(scope)
    if made is None:
        return
    state.offer_replay(made[0], positions, replay_scope, made[1])
    if len(kept) >= _OFFERS_KEPT:
        kept.clear()
    kept[scope] = state.replay
