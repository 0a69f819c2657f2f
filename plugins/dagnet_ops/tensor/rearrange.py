"""Block and diagonal rearrangements: ``depth_to_space``, ``space_to_depth`` and ``diag``
(MXNet's ``matrix_op.cc`` / ``diag_op.cc``).

Each is a :func:`.shape.layout_op`: a shape rule, a forward rearrangement and the
backward one that puts the head gradient back where each value came from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet.operator import REQUIRED, Field, Op, Params

from . import _sampling as S
from ._common import norm_axis, shape_error
from .shape import layout_op


# -- depth_to_space / space_to_depth ------------------------------------------------------------
class BlockParam(Params):
    block_size = Field(int, REQUIRED, "Blocks of [block_size. block_size] are moved", low=1)


def _nchw(op: str, shape: Any) -> tuple[int, int, int, int]:
    if len(shape) != 4:
        raise shape_error(op, f"expects a 4-D (N, C, H, W) input, got shape {tuple(shape)}")
    return tuple(shape)  # type: ignore[return-value]


def _d2s_shape(attrs: BlockParam, shape: Any) -> tuple:
    n, c, h, w = _nchw("depth_to_space", shape)
    b = attrs.block_size
    if c % (b * b):
        raise shape_error("depth_to_space", f"the channels ({c}) must be a multiple of "
                                            f"block_size^2 = {b * b}")
    return (n, c // (b * b), h * b, w * b)


def _s2d_shape(attrs: BlockParam, shape: Any) -> tuple:
    n, c, h, w = _nchw("space_to_depth", shape)
    b = attrs.block_size
    if h % b or w % b:
        raise shape_error("space_to_depth", f"height ({h}) and width ({w}) must be multiples "
                                            f"of block_size = {b}")
    return (n, c * b * b, h // b, w // b)


def _d2s(xp: Any, x: Any, b: int) -> Any:
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def _s2d(xp: Any, x: Any, b: int) -> Any:
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


def _block_sample(draw: Any, grow: bool) -> Any:
    from dagnet.operator import Case

    b = S.integer(draw, 1, 2, "block_size")
    n, c, h, w = (S.integer(draw, 1, 2, "n"), S.integer(draw, 1, 2, "c"),
                  S.integer(draw, 1, 2, "h"), S.integer(draw, 1, 2, "w"))
    shape = (n, c * b * b, h, w) if grow else (n, c, h * b, w * b)
    return Case([S.floats(draw, shape)], {"block_size": b})


# -- diag ---------------------------------------------------------------------------------------
class DiagParam(Params):
    k = Field(int, 0, "Diagonal in question. The default is 0. Use k>0 for diagonals above the "
                      "main diagonal, and k<0 for diagonals below the main diagonal. If input "
                      "has shape (S0 S1) k must be between -S0 and S1")
    axis1 = Field(int, 0, "The first axis of the sub-arrays of interest. Ignored when the input "
                          "is a 1-D array.")
    axis2 = Field(int, 1, "The second axis of the sub-arrays of interest. Ignored when the "
                          "input is a 1-D array.")


def _diag_shape(attrs: DiagParam, shape: Any) -> tuple:
    shape = tuple(shape)
    if len(shape) == 0:
        raise shape_error("diag", "the input must have at least 1 dimension")
    if len(shape) == 1:
        n = shape[0] + abs(attrs.k)
        return (n, n)
    a1 = norm_axis("diag", attrs.axis1, len(shape), "axis1")
    a2 = norm_axis("diag", attrs.axis2, len(shape), "axis2")
    if a1 == a2:
        raise shape_error("diag", f"axis1 and axis2 name the same axis ({a1})")
    s1, s2 = shape[a1], shape[a2]
    k = attrs.k
    size = min(s1, s2 - k) if k >= 0 else min(s1 + k, s2)
    if size <= 0:
        raise shape_error("diag", f"k={k} is outside the {s1} x {s2} matrices of input "
                                  f"{shape} (valid: {-s1 + 1} to {s2 - 1})")
    rest = tuple(d for i, d in enumerate(shape) if i not in (a1, a2))
    return rest + (size,)


def _diag_forward(xp: Any, x: Any, attrs: DiagParam, out_shape: Any) -> Any:
    if x.ndim == 1:
        return xp.diag(x, attrs.k)
    a1, a2 = attrs.axis1 % x.ndim, attrs.axis2 % x.ndim
    return xp.diagonal(x, attrs.k, a1, a2).copy()


def _diag_backward(xp: Any, g: Any, attrs: DiagParam, in_shape: Any) -> Any:
    if len(in_shape) == 1:
        return xp.diagonal(g, attrs.k).copy()
    ndim = len(in_shape)
    a1, a2 = attrs.axis1 % ndim, attrs.axis2 % ndim
    out = xp.zeros(in_shape, dtype=g.dtype)
    # the diagonal of ``out`` viewed with axes a1, a2 last, written element by element
    moved = xp.moveaxis(out, (a1, a2), (-2, -1))
    k, n = attrs.k, g.shape[-1]
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    moved[..., rows, cols] = g
    return out


def _diag_sample(draw: Any, shape: Any) -> dict:
    if len(shape) == 1:
        return {"k": S.integer(draw, -2, 2, "k")}
    a1 = S.integer(draw, 0, len(shape) - 1, "axis1")
    a2 = S.choice(draw, [a for a in range(len(shape)) if a != a1], "axis2")
    k = S.integer(draw, -shape[a1] + 1, shape[a2] - 1, "k")
    return {"k": k, "axis1": a1, "axis2": a2}


def _np_diag(p: DiagParam, x: np.ndarray) -> np.ndarray:
    return np.diag(x, p.k) if x.ndim == 1 else np.diagonal(x, p.k, p.axis1, p.axis2)


OPS: list[Op] = [
    *layout_op("depth_to_space", BlockParam, out_shape=_d2s_shape,
               forward=lambda xp, x, p, s: _d2s(xp, x, p.block_size),
               backward=lambda xp, g, p, s: _s2d(xp, g, p.block_size),
               case=lambda draw: _block_sample(draw, True),
               reference=lambda p, x: _d2s(np, x, p.block_size),
               desc="Move depth into space: an (N, C, H, W) input becomes (N, C/b^2, H b, W b) "
                    "with b = block_size, each group of b^2 channels spread over a b x b "
                    "block (the inverse of space_to_depth).  Dtype unchanged.  Gradient: the "
                    "head gradient moved back (space_to_depth)."),
    *layout_op("space_to_depth", BlockParam, out_shape=_s2d_shape,
               forward=lambda xp, x, p, s: _s2d(xp, x, p.block_size),
               backward=lambda xp, g, p, s: _d2s(xp, g, p.block_size),
               case=lambda draw: _block_sample(draw, False),
               reference=lambda p, x: _s2d(np, x, p.block_size),
               desc="Move space into depth: an (N, C, H, W) input becomes (N, C b^2, H/b, W/b) "
                    "with b = block_size, each b x b block stacked into channels (the inverse "
                    "of depth_to_space).  Dtype unchanged.  Gradient: the head gradient moved "
                    "back (depth_to_space)."),
    *layout_op("diag", DiagParam, out_shape=_diag_shape, forward=_diag_forward,
               backward=_diag_backward, sample=_diag_sample, reference=_np_diag,
               shape_kw={"max_dims": 3},
               desc="Diagonals: a 1-D input becomes a square matrix with it on diagonal ``k``; "
                    "an N-D input gives its ``k``-th diagonal over axes (axis1, axis2), that "
                    "axis pair dropped and the diagonal appended last (numpy's diagonal).  "
                    "Dtype unchanged.  Gradient: the head gradient put back on the diagonal, "
                    "zero elsewhere."),
]
