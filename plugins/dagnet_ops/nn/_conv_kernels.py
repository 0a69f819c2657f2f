"""The convolution kernels the layers call: oneDNN's for float32 arrays on numpy when it
is installed and switched on (see ``_onednn``), otherwise the im2col kernels of
``_im2col`` (any dtype, numpy or cupy).  Signatures are the im2col ones."""

from __future__ import annotations

import numpy as np

from . import _im2col, _onednn
from ._common import threads_for

__all__ = ["conv_forward", "conv_grad_data", "conv_grad_weight", "conv_grads"]


def _plain(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array)


def conv_forward(xp, x, w, stride, dilate, pad, groups, out=None):
    """Cross-correlation of ``x`` ``(N, C, *S)`` with filters ``w`` ``(F, C/groups, *K)``:
    ``(N, F, *out)``, written into ``out`` when given and it fits (it must not overlap
    ``x``)."""
    lib = _onednn.library_for(xp, x, w)
    if lib is not None:
        y = _onednn.conv_forward(lib, _plain(x), _plain(w), stride, dilate, pad, groups,
                                 threads_for(xp), out)
        if y is not None:
            return y
    return _im2col.conv_forward(xp, x, w, stride, dilate, pad, groups, out)


def conv_grad_data(xp, dy, w, x_shape, stride, dilate, pad, groups, out=None):
    """The gradient of :func:`conv_forward` with respect to its input of shape ``x_shape``
    (also the transposed convolution of ``dy`` with ``w``), written into ``out`` when given
    and it fits (it must not overlap ``dy``)."""
    lib = _onednn.library_for(xp, dy, w)
    if lib is not None:
        dx = _onednn.conv_grad_data(lib, _plain(dy), _plain(w), x_shape, stride, dilate, pad,
                                    groups, threads_for(xp), out)
        if dx is not None:
            return dx
    return _im2col.conv_grad_data(xp, dy, w, x_shape, stride, dilate, pad, groups, out)


def conv_grad_weight(xp, x, dy, w_shape, stride, dilate, pad, groups, out=None):
    """The gradient of :func:`conv_forward` with respect to the filters (shape ``w_shape``),
    written into ``out`` when given and the kernel can (else a new array)."""
    lib = _onednn.library_for(xp, x, dy)
    if lib is not None:
        dw = _onednn.conv_grad_weight(lib, _plain(x), _plain(dy), w_shape, stride, dilate, pad,
                                      groups, threads_for(xp), out)
        if dw is not None:
            return dw
    return _im2col.conv_grad_weight(xp, x, dy, w_shape, stride, dilate, pad, groups)


def conv_grads(xp, dy, x, w, stride, dilate, pad, groups, dx_out=None, dw_out=None):
    """Both gradients of :func:`conv_forward`, ``(dx, dw)``, as :func:`conv_grad_data` and
    :func:`conv_grad_weight` give them; oneDNN's two passes share one layout change of
    ``dy``."""
    lib = _onednn.library_for(xp, dy, x, w)
    if lib is not None:
        grads = _onednn.conv_grads(lib, _plain(dy), _plain(x), _plain(w), stride, dilate, pad,
                                   groups, threads_for(xp), dx_out, dw_out)
        if grads is not None:
            return grads
    return (conv_grad_data(xp, dy, w, x.shape, stride, dilate, pad, groups, dx_out),
            conv_grad_weight(xp, x, dy, w.shape, stride, dilate, pad, groups, dw_out))
