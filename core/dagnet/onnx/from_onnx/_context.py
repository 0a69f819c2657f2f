"""What an import translation works with: the ONNX node (:class:`ImportNode`), its
inputs as dagnet symbols or known constants, and the graph being built
(:class:`SymbolGraph`), which turns constants into parameters when a symbol needs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import symbol as sym
from .._errors import OnnxImportError

__all__ = ["ImportNode", "SymbolGraph", "Value"]

Value = Any  # a Symbol, or a numpy array for a value known while importing


class SymbolGraph:
    """The symbol being built: graph inputs, parameters (initializers and constants a
    symbol reads) and the names already taken."""

    def __init__(self) -> None:
        self.params: dict[str, np.ndarray] = {}
        self._variables: dict[str, Any] = {}
        self._taken: set[str] = set()
        self._constant_names: dict[int, str] = {}
        self.input_shapes: dict[str, tuple[int | None, ...]] = {}

    def unique(self, hint: str) -> str:
        """A node name not used yet (``hint`` when free)."""
        base = hint or "node"
        name, n = base, 1
        while name in self._taken:
            name = f"{base}_{n}"
            n += 1
        self._taken.add(name)
        return name

    def input(self, name: str, shape: tuple[int | None, ...] | None = None) -> Any:
        """The variable of a graph input (its shape, where the model states it, helps
        find the shapes of what is computed from it)."""
        self._taken.add(name)
        if shape is not None and all(d is not None for d in shape):
            self.input_shapes[name] = tuple(int(d) for d in shape)
        variable = self._variables[name] = sym.var(name)
        return variable

    def infer_shape(self, value: Any) -> tuple[int, ...] | None:
        """The shape dagnet's inference finds for a symbol, from the model's input shapes
        and the parameters (None where it cannot)."""
        known = {n: s for n, s in self.input_shapes.items()}
        known.update({n: v.shape for n, v in self.params.items()})
        inputs = set(value.list_inputs())
        try:
            _, out_shapes, _ = value.infer_shape_partial(
                **{n: s for n, s in known.items() if n in inputs})
        except Exception:  # noqa: BLE001 - an unknown shape, not an error of the import
            return None
        if not out_shapes or out_shapes[0] is None or not out_shapes[0]:
            return None
        return tuple(int(d) for d in out_shapes[0])

    def parameter(self, name: str, value: np.ndarray) -> Any:
        """The variable holding ``value`` (made once per array and name)."""
        key = id(value)
        if key in self._constant_names:
            return self._variables[self._constant_names[key]]
        if name in self.params and self.params[name] is not value:
            name = self.unique(name)
        else:
            self._taken.add(name)
        self.params[name] = value
        self._constant_names[key] = name
        variable = self._variables[name] = sym.var(name, shape=value.shape,
                                                     dtype=value.dtype)
        return variable


@dataclass
class ImportNode:
    """One ONNX node as a translation sees it: decoded attributes, inputs (symbols or
    numpy constants, None for an omitted optional input) with the shapes and types
    ONNX's shape inference found (None where unknown), and the opset."""

    op_type: str
    name: str
    attrs: dict[str, Any]
    values: list[Value]
    value_names: list[str]
    shapes: list[tuple[int | None, ...] | None]
    dtypes: list[np.dtype | None]
    outputs: list[str]
    out_shapes: list[tuple[int | None, ...] | None]
    opset: int
    graph: SymbolGraph
    sym_name: str = ""
    _params_used: list[str] = field(default_factory=list)

    def fail(self, why: str) -> OnnxImportError:
        """An :class:`OnnxImportError` naming this node."""
        return OnnxImportError(f"cannot import ONNX node {self.name!r} ({self.op_type}, opset "
                               f"{self.opset}): {why}")

    def attr(self, key: str, default: Any = None) -> Any:
        """An attribute's value, or ``default``."""
        return self.attrs.get(key, default)

    def has(self, index: int) -> bool:
        """Whether input ``index`` is given."""
        return index < len(self.values) and self.values[index] is not None

    def is_const(self, index: int) -> bool:
        """Whether input ``index`` is known while importing."""
        return self.has(index) and isinstance(self.values[index], np.ndarray)

    def all_const(self) -> bool:
        """Whether every given input is known while importing."""
        return all(isinstance(v, np.ndarray) for v in self.values if v is not None)

    def const(self, index: int, what: str = "") -> np.ndarray:
        """Input ``index`` as a numpy array; an error when it is computed by the graph."""
        if not self.is_const(index):
            raise self.fail(f"input {index} ({what or self.value_names[index]!r}) must be a "
                            f"constant (an initializer or computed from constants)")
        return self.values[index]

    def sym(self, index: int) -> Any:
        """Input ``index`` as a symbol (a constant becomes a parameter)."""
        value = self.values[index]
        if isinstance(value, np.ndarray):
            return self.graph.parameter(self.value_names[index] or f"{self.name}_const", value)
        if value is None:
            raise self.fail(f"input {index} is required")
        return value

    def rank(self, index: int = 0) -> int:
        """The number of dimensions of input ``index``."""
        if self.is_const(index):
            return self.values[index].ndim
        shape = self.shape(index)
        if shape is None:
            raise self.fail(f"the rank of input {index} is unknown (ONNX shape inference could "
                            f"not find it); give the model's inputs fixed ranks")
        return len(shape)

    def shape(self, index: int = 0) -> tuple[int | None, ...] | None:
        """The static shape of input ``index`` (None dims unknown), or None."""
        if self.is_const(index):
            return tuple(self.values[index].shape)
        shape = self.shapes[index] if index < len(self.shapes) else None
        if shape is None and self.has(index):
            shape = self.graph.infer_shape(self.values[index])
        return shape

    def static_shape(self, index: int = 0) -> tuple[int, ...] | None:
        """The shape of input ``index`` when every dimension is known, else None."""
        shape = self.shape(index)
        if shape is None or any(d is None for d in shape):
            return None
        return tuple(int(d) for d in shape)

    def axes(self, attr_name: str = "axes", input_index: int = 1) -> list[int] | None:
        """Axes given as an attribute (older opsets) or as a constant input (newer)."""
        if attr_name in self.attrs:
            return [int(a) for a in self.attrs[attr_name]]
        if self.has(input_index):
            return [int(a) for a in np.atleast_1d(self.const(input_index, attr_name))]
        return None
