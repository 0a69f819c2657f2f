"""Changing shapes and joining arrays, NumPy's way: ``reshape`` (one ``-1`` inferred, ``0``
a real size), ``transpose``, ``expand_dims``, ``squeeze``, ``swapaxes``, ``moveaxis``,
``broadcast_to``, ``concatenate``, ``stack``, ``split``, ``where``, ``clip`` and friends.

Reshapes are views of the same memory (differentiable under autograd like the
NDArray's); the others are the registered operators of the same meaning.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as onp

from .. import ndarray as nd
from .._errors import ShapeError
from ..ndarray import NDArray
from ._array import (
    NumpyError,
    OrderNotSupportedError,
    _reshaped,
    connect,
    ndarray,
    reshape_view,
    wrap,
    zeros_from,
)
from ._elementwise import as_operand, maximum, minimum, promote

__all__ = ["reshape", "transpose", "expand_dims", "squeeze", "swapaxes", "moveaxis", "ravel",
           "broadcast_to", "broadcast_arrays", "concatenate", "stack", "vstack", "hstack", "dstack",
           "split", "array_split", "where", "clip", "repeat", "take", "tile", "flip",
           "normalize_axis"]


def _array(a: Any) -> ndarray:
    a = as_operand(a)
    if not isinstance(a, NDArray):
        from ._creation import array

        a = array(a)
    return a


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """``axis`` as a non-negative index for an array of ``ndim`` dimensions."""
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise NumpyError(f"{what} {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim if ndim else 0


def _target_shape(size: int, newshape: Any) -> tuple[int, ...]:
    if isinstance(newshape, (int, onp.integer)):
        newshape = (newshape,)
    dims = [int(d) for d in newshape]
    shown = tuple(dims)
    if any(d < -1 for d in dims):
        raise ShapeError(f"cannot reshape array of size {size} into shape {shown}: sizes must "
                         f"be >= 0, or -1 for the one inferred")
    unknown = [i for i, d in enumerate(dims) if d == -1]
    if len(unknown) > 1:
        raise ShapeError(f"cannot reshape into shape {shown}: can only specify one unknown "
                         f"dimension (-1)")
    known = math.prod(d for d in dims if d != -1)
    if unknown:
        if known == 0 or size % known:
            raise ShapeError(f"cannot reshape array of size {size} into shape {shown}")
        dims[unknown[0]] = size // known
    if math.prod(dims) != size:
        raise ShapeError(f"cannot reshape array of size {size} into shape {shown}")
    return tuple(dims)


def reshape(a: Any, newshape: Any, order: str = "C") -> ndarray:
    """``a`` with shape ``newshape`` (NumPy's rules: ``0`` is a size, one ``-1`` is
    inferred); a view of the same memory."""
    if order != "C":
        raise OrderNotSupportedError(f"reshape: order={order!r} is not supported; only 'C'")
    a = _array(a)
    shape = _target_shape(a.size, newshape)
    if a.size == 0:  # no values to share: a new empty array of the shape
        return zeros_from(shape, a.dtype, a.context, a)
    source = a if a.ndim else NDArray.reshape(a, (1,))
    return wrap(reshape_view(source, shape))


def transpose(a: Any, axes: Sequence[int] | None = None) -> ndarray:
    """``a`` with its axes permuted by ``axes`` (reversed when None)."""
    a = _array(a)
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    axes = tuple(normalize_axis(x, a.ndim) for x in axes)
    if sorted(axes) != list(range(a.ndim)):
        raise NumpyError(f"transpose: axes {axes} are not a permutation of the {a.ndim} axes")
    if a.ndim < 2 or axes == tuple(range(a.ndim)):
        return a.copy()
    return wrap(nd.transpose(a, axes=axes))


def expand_dims(a: Any, axis: int) -> ndarray:
    """``a`` with a new axis of length 1 at ``axis``."""
    a = _array(a)
    at = normalize_axis(axis, a.ndim + 1)
    return reshape(a, a.shape[:at] + (1,) + a.shape[at:])


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> ndarray:
    """``a`` without its axes of length 1 (all of them, or those in ``axis``)."""
    a = _array(a)
    if a.ndim == 0:  # NumPy lets a scalar "drop" axis 0 (or -1): nothing changes
        for x in (axis if isinstance(axis, (tuple, list)) else () if axis is None else (axis,)):
            if x not in (0, -1):
                raise NumpyError(f"squeeze: axis {x} is out of bounds for an array of "
                                 f"dimension 0")
        return a.copy()
    if axis is None:
        drop = {i for i, d in enumerate(a.shape) if d == 1}
    else:
        drop = {normalize_axis(x, a.ndim) for x in (axis if isinstance(axis, (tuple, list))
                                                     else (axis,))}
        for i in drop:
            if a.shape[i] != 1:
                raise NumpyError(f"squeeze: cannot select axis {i}: its size is {a.shape[i]}, "
                                 f"not 1")
    return reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in drop))


def swapaxes(a: Any, axis1: int, axis2: int) -> ndarray:
    """``a`` with axes ``axis1`` and ``axis2`` exchanged."""
    a = _array(a)
    order = list(range(a.ndim))
    i, j = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    order[i], order[j] = order[j], order[i]
    return transpose(a, order)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]
             ) -> ndarray:
    """``a`` with axes ``source`` (an int or a sequence) moved to positions
    ``destination`` (as many); the other axes keep their order."""
    a = _array(a)
    sources = [source] if isinstance(source, (int, onp.integer)) else list(source)
    targets = [destination] if isinstance(destination, (int, onp.integer)) \
        else list(destination)
    if len(sources) != len(targets):
        raise NumpyError(f"moveaxis: source {source} and destination {destination} must "
                         f"have the same number of elements")
    src = [normalize_axis(x, a.ndim, "source") for x in sources]
    dst = [normalize_axis(x, a.ndim, "destination") for x in targets]
    for name, axes in (("source", src), ("destination", dst)):
        if len(set(axes)) != len(axes):
            raise NumpyError(f"moveaxis: repeated axis in {name} {axes}")
    order = [i for i in range(a.ndim) if i not in src]
    for position, axis in sorted(zip(dst, src)):
        order.insert(position, axis)
    return transpose(a, order)


def ravel(a: Any, order: str = "C") -> ndarray:
    """``a`` as a 1-d array."""
    return reshape(a, (-1,), order)


def _kept_dims(source: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with each ``-2`` (MXNet's "keep this dimension") replaced by the source's
    dimension at that place, the shapes aligned on the right."""
    if -2 not in shape:
        return shape
    offset = len(shape) - len(source)
    kept = []
    for i, dim in enumerate(shape):
        if dim == -2:
            if i < offset:
                raise ShapeError(f"broadcast_to: -2 at position {i} of {shape} has no "
                                 f"dimension of the source shape {source} to keep")
            dim = source[i - offset]
        kept.append(dim)
    return tuple(kept)


def broadcast_to(array: Any, shape: Sequence[int]) -> ndarray:
    """``array`` broadcast to ``shape`` (NumPy's rules; a ``-2`` keeps the source's
    dimension there, as MXNet allows)."""
    array = _array(array)
    shape = (int(shape),) if isinstance(shape, (int, onp.integer)) else tuple(int(d) for d in shape)
    shape = _kept_dims(array.shape, shape)
    try:
        onp.broadcast_shapes(array.shape, shape)
    except ValueError:
        raise ShapeError(f"cannot broadcast an array of shape {array.shape} to {shape}") \
            from None
    if array.shape == shape:
        return array.copy()
    if 0 in shape:
        return zeros_from(shape, array.dtype, array.context, array)
    padded = (1,) * (len(shape) - array.ndim) + array.shape
    source = NDArray.reshape(array, padded) if padded != array.shape else array
    return wrap(nd.broadcast_to(source, shape=shape))


def broadcast_arrays(*args: Any) -> list[ndarray]:
    """The arrays broadcast against each other."""
    arrays = [_array(a) for a in args]
    shape = onp.broadcast_shapes(*(a.shape for a in arrays))
    return [a if a.shape == shape else broadcast_to(a, shape) for a in arrays]


def _common(arrays: Sequence[Any]) -> list[ndarray]:
    arrays = [_array(a) for a in arrays]
    if not arrays:
        raise NumpyError("need at least one array to join")
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        dtype = promote(dtype, a.dtype)
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays]


def concatenate(seq: Sequence[Any], axis: int | None = 0, out: ndarray | None = None) -> ndarray:
    """The arrays of ``seq`` joined along ``axis`` (flattened first when None)."""
    arrays = _common(seq)
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise NumpyError("zero-dimensional arrays cannot be concatenated")
    for a in arrays:
        if a.ndim != ndim:
            raise ShapeError(f"concatenate: all arrays must have the same number of "
                             f"dimensions; got {[x.shape for x in arrays]}")
    axis = normalize_axis(axis, ndim)
    for a in arrays:
        if a.shape[:axis] + a.shape[axis + 1:] != arrays[0].shape[:axis] + \
                arrays[0].shape[axis + 1:]:
            raise ShapeError(f"concatenate: the shapes {[x.shape for x in arrays]} differ "
                             f"outside axis {axis}")
    kept = [a for a in arrays if a.shape[axis]]
    if not kept:
        shape = list(arrays[0].shape)
        shape[axis] = 0
        result = zeros_from(tuple(shape), arrays[0].dtype, arrays[0].context, *arrays)
    elif len(kept) == 1:
        result = kept[0].copy()
    else:
        result = wrap(nd.concat(*kept, dim=axis))
    if kept:
        result = connect(result, *[a for a in arrays if not a.shape[axis]])
    if out is not None:
        out[...] = result
        return out
    return result


def stack(arrays: Sequence[Any], axis: int = 0, out: ndarray | None = None) -> ndarray:
    """The arrays (all of one shape) joined along a new axis ``axis``."""
    arrays = _common(arrays)
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ShapeError(f"stack: all input arrays must have the same shape; got "
                         f"{[a.shape for a in arrays]}")
    at = normalize_axis(axis, len(shape) + 1)
    return concatenate([expand_dims(a, at) for a in arrays], axis=at, out=out)


def vstack(arrays: Sequence[Any], out: ndarray | None = None) -> ndarray:
    """The arrays joined along the first axis (1-d arrays as rows)."""
    arrays = [_array(a) for a in arrays]
    return concatenate([a.reshape(1, -1) if a.ndim < 2 else a for a in arrays], axis=0, out=out)


def hstack(arrays: Sequence[Any]) -> ndarray:
    """The arrays joined along the second axis (the first for 1-d arrays; scalars are
    1-d arrays of one value)."""
    arrays = [_array(a) for a in arrays]
    arrays = [a.reshape((1,)) if a.ndim == 0 else a for a in arrays]
    return concatenate(arrays, axis=0 if arrays and arrays[0].ndim == 1 else 1)


def dstack(arrays: Sequence[Any]) -> ndarray:
    """The arrays joined along the third axis (scalars, 1-d and 2-d arrays first made 3-d
    as ``(1, 1, 1)``, ``(1, N, 1)`` and ``(M, N, 1)``)."""
    arrays = [_array(a) for a in arrays]
    lifted = []
    for a in arrays:
        if a.ndim == 0:
            a = a.reshape((1, 1, 1))
        elif a.ndim == 1:
            a = a.reshape((1, a.shape[0], 1))
        elif a.ndim == 2:
            a = a.reshape(a.shape + (1,))
        lifted.append(a)
    return concatenate(lifted, axis=2)


def _split_at(a: ndarray, bounds: Sequence[int], axis: int) -> list[ndarray]:
    lead = (slice(None),) * axis
    pieces = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        pieces.append(a[lead + (slice(start, max(start, stop)),)])
    return pieces


def split(ary: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[ndarray]:
    """``ary`` cut along ``axis`` into ``indices_or_sections`` equal parts (an int, which
    must divide the axis), or at the given indices (a sequence)."""
    ary = _array(ary)
    axis = normalize_axis(axis, ary.ndim)
    size = ary.shape[axis]
    if isinstance(indices_or_sections, (int, onp.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise NumpyError("split: the number of sections must be larger than 0")
        if size % sections:
            raise NumpyError("array split does not result in an equal division")
        each = size // sections
        bounds = [i * each for i in range(sections + 1)]
    else:
        points = [min(max(int(p) + (size if int(p) < 0 else 0), 0), size)
                  for p in indices_or_sections]
        bounds = [0, *points, size]
    return _split_at(ary, bounds, axis)


def array_split(ary: Any, indices_or_sections: int | Sequence[int],
                axis: int = 0) -> list[ndarray]:
    """As :func:`split`, but an int need not divide the axis: the first parts get one
    more element each."""
    ary = _array(ary)
    if not isinstance(indices_or_sections, (int, onp.integer)):
        return split(ary, indices_or_sections, axis)
    axis = normalize_axis(axis, ary.ndim)
    sections = int(indices_or_sections)
    if sections <= 0:
        raise NumpyError("array_split: the number of sections must be larger than 0")
    each, extra = divmod(ary.shape[axis], sections)
    sizes = [each + 1] * extra + [each] * (sections - extra)
    return _split_at(ary, onp.cumsum([0, *sizes]).tolist(), axis)


def where(condition: Any, x: Any = None, y: Any = None) -> ndarray:
    """Elements of ``x`` where ``condition`` is true, else of ``y`` (all broadcast)."""
    if x is None or y is None:
        raise NumpyError("where(condition) without x and y is not provided by dagnet.numpy; "
                         "pass both x and y")
    condition = _array(condition)
    like = x if isinstance(x, NDArray) else y if isinstance(y, NDArray) else condition
    from ._creation import array

    xs = [v if isinstance(v, NDArray) else array(v, dtype=like.dtype if isinstance(
        like, NDArray) and like is not condition else None) for v in (x, y)]
    xs = _common(xs)
    shape = onp.broadcast_shapes(condition.shape, xs[0].shape, xs[1].shape)
    cond, xv, yv = (a if a.shape == shape else broadcast_to(a, shape)
                    for a in (condition, *xs))
    if not shape:
        cond, xv, yv = (NDArray.reshape(a, (1,)) for a in (cond, xv, yv))
    return _reshaped(nd.where(cond, xv, yv), shape)


def clip(a: Any, a_min: Any, a_max: Any, out: ndarray | None = None) -> ndarray:
    """``a`` with values below ``a_min`` raised to it and above ``a_max`` lowered to it
    (either may be None; arrays are broadcast)."""
    a = _array(a)
    if a_min is None and a_max is None:
        raise NumpyError("clip: a_min and a_max cannot both be None")
    if isinstance(a_min, NDArray) or isinstance(a_max, NDArray):
        result = a
        if a_min is not None:
            result = maximum(result, a_min)
        if a_max is not None:
            result = minimum(result, a_max)
    else:
        low = -onp.inf if a_min is None else float(a_min)
        high = onp.inf if a_max is None else float(a_max)
        result = wrap(nd.clip(a, a_min=low, a_max=high)) if a.ndim else \
            _reshaped(nd.clip(NDArray.reshape(a, (1,)), a_min=low, a_max=high), ())
    if out is not None:
        out[...] = result
        return out
    return result


def repeat(a: Any, repeats: int, axis: int | None = None) -> ndarray:
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (flattened when
    None)."""
    a = _array(a)
    if axis is None:
        a, axis = ravel(a), 0
    return wrap(nd.repeat(a, repeats=int(repeats), axis=normalize_axis(axis, a.ndim)))


def take(a: Any, indices: Any, axis: int | None = None, mode: str = "raise") -> ndarray:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None);
    ``mode`` 'raise' checks the indices, 'clip' and 'wrap' as NumPy."""
    a = _array(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, a.ndim)
    index = _array(indices)
    if mode == "raise":
        values = index.asnumpy()
        size = a.shape[axis]
        if values.size and (values.max() >= size or values.min() < -size):
            raise IndexError(f"take: an index is out of bounds for axis {axis} with size {size}")
        mode = "wrap"
    if index.ndim == 0:
        return _reshaped(nd.take(a, NDArray.reshape(index, (1,)), axis=axis, mode=mode),
                         a.shape[:axis] + a.shape[axis + 1:])
    return wrap(nd.take(a, index, axis=axis, mode=mode))


def tile(A: Any, reps: int | Sequence[int]) -> ndarray:  # noqa: N803 - NumPy's name
    """``A`` repeated ``reps`` times (per axis)."""
    A = _array(A)  # noqa: N806
    reps = (int(reps),) if isinstance(reps, (int, onp.integer)) else tuple(int(r) for r in reps)
    if not reps:
        return A.copy()
    ndim = max(A.ndim, len(reps))
    shape = tuple(d * r for d, r in zip((1,) * (ndim - A.ndim) + A.shape,
                                        (1,) * (ndim - len(reps)) + reps))
    if 0 in shape:
        return zeros_from(shape, A.dtype, A.context, A)
    if A.ndim == 0:
        A = NDArray.reshape(A, (1,))  # noqa: N806
    return wrap(nd.tile(A, reps=reps))


def flip(m: Any, axis: int | Sequence[int] | None = None) -> ndarray:
    """``m`` with the order of elements reversed along ``axis`` (all axes when None)."""
    m = _array(m)
    if m.ndim == 0:
        return m.copy()
    axes = range(m.ndim) if axis is None else (axis if isinstance(axis, (tuple, list))
                                              else (axis,))
    return wrap(nd.reverse(m, axis=tuple(normalize_axis(x, m.ndim) for x in axes)))
