"""The SGD updates (plain and momentum) of several weights in one call, and the Adam update,
compiled with numba.

The SGD kernels take tuples with one entry per weight: 1-D C-contiguous arrays of one
float dtype (weights, gradients, momenta, outputs; an output may be its weight) and
per-weight factors already rounded to that dtype; :func:`adam` takes one weight's arrays
and factors.  Each makes one trip through memory per weight, and releases the
interpreter lock once for the whole call: a worker running it never waits for the lock
between passes or weights while another thread (the one pushing the next step's
operators) holds it.

The arithmetic is numpy's kernels' (``dagnet_ops.optimizer``) element by element, in the
same order and the same dtype, with no fused multiply-adds, so both give identical bits.
The descent step of weight ``k``, without clipping::

    step = grad * scale[k]               (scale = lr * rescale_grad)
    step = step + decay[k] * weight      (decay = lr * wd; only where decays[k])

and with clipping (``clipping``, bounds ``-bound, bound``)::

    step = clip(grad * rescale, -bound, bound)
    step = step + decay[k] * weight      (decay = wd; only where decays[k])
    step = step * scale[k]               (scale = lr)
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["adam", "sgd", "sgd_mom"]

_jit = njit(nogil=True, cache=True)


@_jit
def _step(g, w, scale, decay, decays, clipping, rescale, bound):
    """One element's descent step (see the module's docstring)."""
    if clipping:
        step = g * rescale
        if step > bound:
            step = bound
        elif step < -bound:
            step = -bound
        if decays:
            step = step + decay * w
        return step * scale
    step = g * scale
    if decays:
        step = step + decay * w
    return step


@_jit
def sgd(weights, grads, outs, scales, decays_by, decays, clipping, rescale, bound):
    """``outs[k] = weights[k] - step`` for every weight ``k``."""
    for k in range(len(weights)):
        w, g, o = weights[k], grads[k], outs[k]
        scale, decay, with_decay = scales[k], decays_by[k], decays[k]
        for i in range(w.size):
            o[i] = w[i] - _step(g[i], w[i], scale, decay, with_decay, clipping, rescale, bound)
    return 0


@_jit
def sgd_mom(weights, grads, moms, outs, scales, decays_by, decays, clipping, rescale, bound,
            momentum):
    """``moms[k] = moms[k] * momentum - step`` and ``outs[k] = weights[k] + moms[k]`` for
    every weight ``k``."""
    for k in range(len(weights)):
        w, g, m, o = weights[k], grads[k], moms[k], outs[k]
        scale, decay, with_decay = scales[k], decays_by[k], decays[k]
        for i in range(w.size):
            step = _step(g[i], w[i], scale, decay, with_decay, clipping, rescale, bound)
            mi = m[i] * momentum - step
            m[i] = mi
            o[i] = w[i] + mi
    return 0


@_jit
def adam(w, g, mean, var, o, lr, wd, rescale, clipping, bound, beta1, one_minus_beta1, beta2,
         one_minus_beta2, epsilon):
    """``adam_update`` on 1-D arrays, the factors rounded to their dtype; as numpy's kernel::

        g = clip(grad * rescale + wd * weight, -bound, bound)    (clipping only)
        mean = beta1 * mean + one_minus_beta1 * g
        var = beta2 * var + one_minus_beta2 * g * g
        out = weight - lr * mean / (sqrt(var) + epsilon)
    """
    for i in range(w.size):
        wi = w[i]
        gi = g[i] * rescale + wd * wi
        if clipping:
            if gi > bound:
                gi = bound
            elif gi < -bound:
                gi = -bound
        mi = beta1 * mean[i] + one_minus_beta1 * gi
        vi = beta2 * var[i] + one_minus_beta2 * gi * gi
        mean[i] = mi
        var[i] = vi
        o[i] = wi - lr * mi / (np.sqrt(vi) + epsilon)
    return 0
