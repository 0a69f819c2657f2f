"""Greedy non-maximum suppression over boxes already in score order, compiled with numba.

The overlap of two boxes is computed with the very operations, in the same order and in
float64, as ``_contrib_box_iou``'s numpy kernel, so the compiled suppression keeps exactly
the boxes the numpy one keeps, ties and all.  Each kept box visits only the candidates after
it that are still alive, where the numpy kernel compares it with all of them at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["greedy_keep"]


@njit(nogil=True, cache=True)
def greedy_keep(corners, classes, by_class, thresh):
    """Which of the ``n`` candidates survive: ``corners`` is ``(n, 4)`` float64 (left, top,
    right, bottom) in descending score; each survivor suppresses the later candidates whose
    IoU with it exceeds ``thresh`` (and, with ``by_class``, whose ``classes`` entry equals
    its own).  Returns a boolean mask."""
    n = corners.shape[0]
    alive = np.ones(n, dtype=np.bool_)
    for i in range(n):
        if not alive[i]:
            continue
        al, at, ar, ab = corners[i, 0], corners[i, 1], corners[i, 2], corners[i, 3]
        area_a = np.maximum(0.0, ar - al) * np.maximum(0.0, ab - at)
        for j in range(i + 1, n):
            if not alive[j] or (by_class and classes[j] != classes[i]):
                continue
            bl, bt, br, bb = corners[j, 0], corners[j, 1], corners[j, 2], corners[j, 3]
            # numpy's maximum and minimum: a NaN coordinate gives a NaN overlap, as there
            width = np.maximum(0.0, np.minimum(ar, br) - np.maximum(al, bl))
            height = np.maximum(0.0, np.minimum(ab, bb) - np.maximum(at, bt))
            inter = width * height
            iou = 0.0
            if inter > 0:
                union = area_a + np.maximum(0.0, br - bl) * np.maximum(0.0, bb - bt) - inter
                iou = inter / union
            if iou > thresh:
                alive[j] = False
    return alive
