"""``mx.sym.np`` and ``mx.sym.npx``: ``mx.np`` / ``mx.npx`` functions applied to symbols.

``mx.sym.np.tensordot(a, b, 2)`` is one ``_numpy_function`` node holding the function's name
and its other arguments; when an executor binds the graph the node becomes the operators
``mx.np.tensordot`` runs for the input shapes then known (see :mod:`._deferred`).  The
symbols may appear anywhere among the arguments (``mx.sym.np.stack([a, b])``).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as onp

from ._frontend import function
from ._symbol import Symbol

__all__ = ["Namespace", "np", "npx"]

# functions returning several arrays: how many, from their arguments
_SPLITS = ("split", "array_split", "hsplit", "vsplit", "dsplit")
_FIXED_OUTPUTS = {"linalg.svd": 3, "linalg.qr": 2, "linalg.slogdet": 2, "linalg.eig": 2,
                  "linalg.eigh": 2}


def _outputs(name: str, args: tuple, kwargs: dict, inputs: list[Symbol]) -> int:
    if name in _FIXED_OUTPUTS:
        return _FIXED_OUTPUTS[name]
    if name in ("meshgrid", "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d"):
        return max(1, len(inputs)) if name != "meshgrid" or len(inputs) else 1
    if name == "unravel_index":  # one index array per dimension of the shape given
        shape = args[1] if len(args) > 1 else kwargs.get("shape")
        return len(shape) if isinstance(shape, (tuple, list)) else 1
    if name in _SPLITS:
        sections = args[1] if len(args) > 1 else kwargs.get("indices_or_sections")
        if isinstance(sections, (int, onp.integer)):
            return int(sections)
        return len(sections) + 1
    return 1


class _Encoder:
    """An argument in JSON, each Symbol replaced by ``{"__input__": i}``."""

    def __init__(self) -> None:
        self.inputs: list[Symbol] = []

    def __call__(self, value: Any) -> Any:
        if isinstance(value, Symbol):
            self.inputs.append(value)
            return {"__input__": len(self.inputs) - 1}
        if isinstance(value, tuple):
            return {"__tuple__": [self(v) for v in value]}
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict):
            return {str(k): self(v) for k, v in value.items()}
        if isinstance(value, onp.dtype) or (isinstance(value, type)
                                           and issubclass(value, onp.generic)):
            return {"__dtype__": onp.dtype(value).name}
        if isinstance(value, onp.generic):
            return value.item()
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise TypeError(f"mx.sym.np: cannot hold an argument of type {type(value).__name__} "
                        f"({value!r}) in a symbol; pass symbols, numbers, strings, tuples "
                        f"or dtypes")


class Namespace:
    """``mx.sym.np`` (``prefix`` ''), ``mx.sym.np.linalg`` ('linalg.'), ``mx.sym.npx``
    ('npx.') ...: each attribute is the function of that name applied to symbols."""

    _Symbol = Symbol  # MXNet's name for the symbol class of its numpy namespace

    def __init__(self, prefix: str):
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in ("linalg", "random", "fft"):
            return Namespace(f"{self._prefix}{name}.")
        full = self._prefix + name

        def call(*args: Any, **kwargs: Any) -> Any:
            name_arg = kwargs.pop("name", None)
            encode = _Encoder()
            arguments = json.dumps([encode(list(args)), encode(kwargs)])
            count = _outputs(full, args, kwargs, encode.inputs)
            result = function("_numpy_function")(
                *encode.inputs, function=full, arguments=arguments,
                num_args=len(encode.inputs), num_outputs=count, name=name_arg)
            return list(result) if count > 1 else result

        call.__name__ = call.__qualname__ = name
        call.__doc__ = f"``mx.np.{full}`` applied to symbols (see dagnet.numpy)."
        return call

    def __repr__(self) -> str:
        return f"<dagnet.sym namespace {('np.' + self._prefix).rstrip('.')}>"


np = Namespace("")
npx = Namespace("npx.")
