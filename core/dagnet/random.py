"""Random numbers (MXNet's ``mx.random``): ``seed`` and the samplers ``uniform``,
``normal`` and ``randn``, which call the ``_random_*`` operators through
:mod:`dagnet.ndarray`."""

from __future__ import annotations

from typing import Any

from . import resource
from ._errors import ParamError, ResourceError
from .context import Context

__all__ = ["seed", "uniform", "normal", "randn"]


class _NullType:
    """MXNet's ``_Null``: the argument was not given."""

    def __repr__(self) -> str:
        return "_Null"


_Null: Any = _NullType()


def seed(seed_state: int, ctx: str | Context = "all") -> None:
    """Seed the random generators, as ``mx.random.seed(seed_state, ctx='all')``.

    With ``ctx='all'`` every device's generator, including devices first used
    later, restarts from a stream derived from ``seed_state`` and the device
    alone, so results do not depend on the order devices are used in.
    """
    if isinstance(ctx, Context):
        resource.manager().seed(seed_state, ctx)
    elif isinstance(ctx, str) and ctx == "all":
        resource.manager().seed(seed_state)
    else:
        raise ResourceError(
            f"random.seed: ctx must be 'all' or a dagnet Context such as dagnet.cpu(1), "
            f"got {ctx!r}")


def check_scalar_params(where: str, params: dict[str, Any], array_type: type) -> None:
    """Refuse distribution parameters given as arrays (``array_type``: NDArray or Symbol):
    MXNet's per-element ``_sample_*`` operators are not implemented."""
    arrays = [k for k, v in params.items() if isinstance(v, array_type)]
    if arrays:
        raise ParamError(
            f"{where}: {', '.join(arrays)} given as {array_type.__name__}; dagnet samples with "
            f"scalar parameters only (MXNet's _sample_* operators are not implemented); pass "
            f"floats")


def _sample(op_name: str, params: dict[str, Any], shape: Any, dtype: Any, ctx: Any, out: Any,
            kwargs: dict[str, Any]) -> Any:
    from . import ndarray

    check_scalar_params(f"random.{op_name.rsplit('_', 1)[-1]}", params, ndarray.NDArray)
    call = dict(params, **kwargs)
    if shape is not _Null:
        call["shape"] = shape
    else:  # as MXNet: out's shape, else one sample
        call["shape"] = tuple(out.shape) if out is not None else (1,)
    if dtype is not _Null and dtype is not None:
        call["dtype"] = dtype
    elif out is not None:
        call["dtype"] = out.dtype
    if ctx is not None:
        call["ctx"] = ctx
    return getattr(ndarray, op_name)(out=out, **call)


def uniform(low: float = 0, high: float = 1, shape: Any = _Null, dtype: Any = _Null,
            ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples from the uniform distribution on ``[low, high)`` (``mx.random.uniform``).

    ``shape`` (default: one sample, or ``out``'s shape), ``dtype`` (default
    float32), ``ctx`` (default: the current device); ``out`` receives the samples.
    """
    return _sample("_random_uniform", {"low": low, "high": high}, shape, dtype, ctx, out, kwargs)


def normal(loc: float = 0, scale: float = 1, shape: Any = _Null, dtype: Any = _Null,
           ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples from the normal distribution with mean ``loc`` and standard deviation
    ``scale`` (``mx.random.normal``); ``shape``, ``dtype``, ``ctx`` and ``out`` as
    :func:`uniform`."""
    return _sample("_random_normal", {"loc": loc, "scale": scale}, shape, dtype, ctx, out, kwargs)


def randn(*shape: int, loc: float = 0, scale: float = 1, dtype: Any = _Null,
          ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Normal samples of shape ``shape`` given positionally (``mx.random.randn(2, 3)``)."""
    return normal(loc, scale, shape if shape else _Null, dtype, ctx, out, **kwargs)
