"""What every update shares: the learning-rate parameters, the gradient preprocessing
and shape/type rules, when the compiled kernels apply, and a conformance-suite domain."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    NoGradient,
    Op,
    OpReqType,
    Params,
    elemwise_shape,
)

from .. import _jit
from .._draw import Draw

__all__ = ["UpdateParam", "blocks", "clip", "compiled_kernels", "descent_step",
           "reference_gradient", "update_op"]

# Elements per block (512 KiB of float32): a block of the weight, the gradient and the
# block-sized temporary fit in a 2 MiB L2 cache together, so an update whose arrays do
# not fit still streams each array through memory about once.  Smaller blocks gain no
# more on one thread, and each block costs a GIL hand-over when workers run updates
# side by side (on two workers, 64Ki-element blocks lost twice what these lose).
BLOCK = 1 << 17

_JIT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # what the compiled kernels take


class UpdateParam(Params):
    lr = Field(float, REQUIRED, "learning rate")
    wd = Field(float, 0.0, "weight decay: adds wd * weight to the gradient")
    rescale_grad = Field(float, 1.0, "multiply the gradient by this first (e.g. 1 / batch size)")
    clip_gradient = Field(float, -1.0, "clip the gradient into [-clip_gradient, clip_gradient]; "
                                       "a negative value turns clipping off")
    lazy_update = Field(bool, True, "with a row_sparse gradient: update only the rows it holds "
                                    "(their weight decay and states included); False gives "
                                    "the dense update (dense gradients: always dense)")


def blocks(xp: Any, *arrays: Any) -> Iterator[tuple]:
    """Matching flat slices of ``BLOCK`` elements of same-shape arrays, views that write
    through; on numpy only, and only where every array is C-contiguous (one tuple of the
    arrays themselves otherwise, as for arrays of one block: a GPU gains nothing from
    blocking).

    An elementwise update run block by block keeps its temporaries in the cache instead
    of writing and reading back whole-array temporaries.
    """
    shape = arrays[0].shape
    if xp is not np or arrays[0].size <= BLOCK or \
            not all(a.shape == shape and a.flags.c_contiguous for a in arrays):
        yield arrays
        return
    flat = [a.reshape(-1) for a in arrays]
    for start in range(0, flat[0].size, BLOCK):
        yield tuple(f[start:start + BLOCK] for f in flat)


def compiled_kernels(xp: Any, req: Sequence[OpReqType], arrays: Sequence[Any]) -> Any:
    """The compiled update kernels (``dagnet_ops._jit``, family ``"updates"``: one pass,
    one release of the interpreter lock, numpy's bits) when they apply to ``arrays`` (the
    update's inputs and outputs): numpy arrays, all float32 or all float64 and C-contiguous,
    every output written (``req``, not added to), the kernels loaded.  None otherwise, and
    numpy's kernels run."""
    if xp is not np or any(r is not OpReqType.WRITE and r is not OpReqType.INPLACE
                           for r in req):
        return None
    dtype = arrays[0].dtype
    if dtype not in _JIT_DTYPES or not all(a.dtype == dtype and a.flags.c_contiguous
                                           for a in arrays):
        return None
    return _jit.kernels("updates")


def clip(xp, grad, bound):
    """``grad`` clipped into ``[-bound, bound]`` when ``bound >= 0`` (MXNet's rule)."""
    return xp.clip(grad, -bound, bound) if bound >= 0 else grad


def descent_step(xp, attrs, weight, grad):
    """``lr * (clip(rescale_grad * grad) + wd * weight)`` as a new array, in as few passes
    over memory as the parameters allow (no clip pass when clipping is off, no weight-decay
    pass when ``wd`` is 0, the learning rate folded into the scale when nothing clips)."""
    if attrs.clip_gradient >= 0:
        step = grad * attrs.rescale_grad
        xp.clip(step, -attrs.clip_gradient, attrs.clip_gradient, out=step)
        if attrs.wd:
            step += attrs.wd * weight
        step *= attrs.lr
        return step
    step = grad * (attrs.lr * attrs.rescale_grad)
    if attrs.wd:
        step += (attrs.lr * attrs.wd) * weight
    return step


def update_op(name: str, params: type[Params], compute: Callable, inputs: Sequence[str],
              states: Sequence[int], reference: Callable, description: str,
              state_range: Callable[[Draw, tuple], list] | None = None,
              extra_params: Callable[[Draw], dict] | None = None) -> Op:
    """An update operator: every input and the output share one shape and dtype; the
    ``states`` inputs are written in place; no gradient.  The conformance suite draws
    the common parameters itself; ``extra_params`` draws the others."""

    def sample(draw):
        d = Draw(draw)
        shape = d.shape(d.int(1, 2), 1, 4)
        arrays = [d.uniform(shape, -2, 2), d.uniform(shape, -2, 2)]
        arrays += state_range(d, shape) if state_range else [d.uniform(shape) for _ in states]
        values = {field: d.float(*bounds, field) for field, bounds in _SAMPLED.items()
                  if field in params.fields()}
        if d.bool("clip"):
            values["clip_gradient"] = d.float(0.0, 1.0, "clip_gradient")
        if extra_params is not None:
            values.update(extra_params(d))
        return Case(arrays, values)

    return Op(
        name,
        description=description,
        params=params,
        num_inputs=len(inputs),
        input_names=list(inputs),
        output_names=["output"],
        mutate_inputs=list(states),
        infer_shape=elemwise_shape(name),
        compute={XP: compute},
        gradient=NoGradient("optimizer update"),
        inplace=[(0, 0)],
        domain=Domain(sample, reference),
    )


_SAMPLED = {"lr": (0.001, 1.0), "wd": (0.0, 0.1), "rescale_grad": (0.1, 2.0),
            "momentum": (0.0, 0.99), "beta1": (0.0, 0.99), "beta2": (0.0, 0.999),
            "epsilon": (1e-8, 1e-3)}


def reference_gradient(p, weight, grad):
    """numpy: ``clip(rescale_grad * grad)``."""
    g = grad * p.rescale_grad
    return np.clip(g, -p.clip_gradient, p.clip_gradient) if p.clip_gradient >= 0 else g
