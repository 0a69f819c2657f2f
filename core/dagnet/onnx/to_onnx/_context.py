"""What an export translation works with: the MXNet node it translates
(:class:`ExportNode`) and the ONNX graph it writes into (:class:`OnnxBuilder`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import OnnxExportError

__all__ = ["ExportNode", "OnnxBuilder"]

Shape = tuple[int, ...]


@dataclass
class ExportNode:
    """One MXNet node as a translation sees it.

    ``attrs`` are the operator's parsed parameters (defaults filled in, typed:
    ``node.attrs.kernel`` is a tuple), ``inputs`` and ``outputs`` the ONNX value
    names, with the shapes and dtypes shape and type inference found for the
    example input shapes.  With ``dynamic`` set those shapes are examples only:
    a translation must not bake the dimensions that may change (the batch) into
    the graph.
    """

    name: str
    op: str
    attrs: Any
    raw_attrs: dict[str, str]
    inputs: list[str]
    in_shapes: list[Shape | None]
    in_dtypes: list[np.dtype | None]
    outputs: list[str]
    out_shapes: list[Shape | None]
    out_dtypes: list[np.dtype | None]
    opset: int
    dynamic: bool = False
    used_outputs: set[int] = field(default_factory=set)

    def fail(self, why: str) -> OnnxExportError:
        """An :class:`OnnxExportError` naming this node, for a value it cannot translate."""
        return OnnxExportError(f"cannot export node {self.name!r} (operator {self.op!r}) to ONNX "
                               f"opset {self.opset}: {why}")

    def rank(self, index: int = 0) -> int:
        """The number of dimensions of input ``index``."""
        shape = self.in_shapes[index]
        if shape is None:
            raise self.fail(f"the shape of input {index} is unknown")
        return len(shape)

    def out_rank(self, index: int = 0) -> int:
        """The number of dimensions of output ``index``."""
        shape = self.out_shapes[index]
        if shape is None:
            raise self.fail(f"the shape of output {index} is unknown")
        return len(shape)


class OnnxBuilder:
    """Collects an ONNX graph: nodes, initializers (constants deduplicated), inputs
    and outputs, with unique names and the opset's form of the operators whose
    signature changed between opsets 12 and 13 (axes as attribute or as input)."""

    def __init__(self, onnx: Any, opset: int) -> None:
        self.onnx = onnx
        self.helper = onnx.helper
        self.opset = opset
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.inputs: list[Any] = []
        self.outputs: list[Any] = []
        self.scope = "graph"
        self.defined: set[str] = set()
        self._taken: set[str] = set()
        self._constants: dict[tuple[str, Shape, bytes], str] = {}

    # names -------------------------------------------------------------------------
    def unique(self, hint: str) -> str:
        """A name not used yet in the graph, ``hint`` itself when free."""
        name, n = hint, 1
        while name in self._taken:
            name = f"{hint}_{n}"
            n += 1
        self._taken.add(name)
        return name

    def reserve(self, name: str) -> str:
        """Claim ``name`` exactly (an error when it is taken)."""
        if name in self._taken:
            raise OnnxExportError(f"the ONNX name {name!r} is used twice")
        self._taken.add(name)
        return name

    # values ------------------------------------------------------------------------
    def onnx_dtype(self, dtype: Any) -> int:
        """The ONNX element type of a numpy dtype."""
        return int(self.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))

    def add_input(self, name: str, dtype: Any, shape: Sequence[int | str | None] | None) -> None:
        """A graph input."""
        self.inputs.append(self.helper.make_tensor_value_info(name, self.onnx_dtype(dtype), shape))
        self.defined.add(name)

    def add_output(self, name: str, dtype: Any, shape: Sequence[int | str | None] | None) -> None:
        """A graph output."""
        self.outputs.append(self.helper.make_tensor_value_info(name, self.onnx_dtype(dtype), shape))

    def initializer(self, name: str, value: np.ndarray) -> str:
        """An initializer named ``name`` holding ``value``."""
        array = np.array(value, order="C")  # (np.ascontiguousarray makes 0-D arrays 1-D)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        self.defined.add(name)
        return name

    def const(self, value: Any, dtype: Any = None, name: str | None = None) -> str:
        """A constant tensor (an initializer); equal constants are stored once."""
        array = np.asarray(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if name is None and key in self._constants:
            return self._constants[key]
        value_name = self.unique(name or f"{self.scope}_const")
        self.initializer(value_name, array)
        if name is None:
            self._constants[key] = value_name
        return value_name

    def ints(self, values: Sequence[int] | int) -> str:
        """A 1-D int64 constant (axes, shapes, starts and ends)."""
        return self.const(np.array(values, dtype=np.int64).reshape(-1))

    def scalar(self, value: Any, dtype: Any) -> str:
        """A 0-D constant of ``dtype``."""
        return self.const(np.array(value).astype(dtype))

    # nodes -------------------------------------------------------------------------
    def op(self, op_type: str, inputs: Sequence[str], outputs: int | Sequence[str] = 1,
           **attrs: Any) -> Any:
        """Add one node; returns its output name (a list when it has several).

        ``outputs`` is a count (names are made up from the node being translated) or
        the names to write; attributes whose value is None are left out."""
        if isinstance(outputs, int):
            names = [self.unique(f"{self.scope}_{op_type.lower()}") for _ in range(outputs)]
        else:
            names = list(outputs)
        node = self.helper.make_node(
            op_type, list(inputs), names, name=self.unique(f"{self.scope}_{op_type}"),
            **{key: value for key, value in attrs.items() if value is not None})
        self.nodes.append(node)
        self.defined.update(name for name in names if name)
        return names[0] if len(names) == 1 else names

    def identity(self, x: str, out: str | None = None) -> str:
        """``x`` under the name ``out`` (an Identity node), or ``x`` itself without one."""
        if out is None or out == x:
            return x
        return self.op("Identity", [x], [out])

    def cast(self, x: str, dtype: Any, out: str | None = None) -> str:
        """``x`` converted to the numpy ``dtype``."""
        return self.op("Cast", [x], [out] if out else 1, to=self.onnx_dtype(dtype))

    def cast_if(self, x: str, src: Any, dst: Any, out: str | None = None) -> str:
        """``x`` as ``dst`` (a Cast only where the dtypes differ)."""
        if src is not None and np.dtype(src) == np.dtype(dst):
            return self.identity(x, out)
        return self.cast(x, dst, out)

    def shape(self, x: str) -> str:
        """The shape of ``x``, a 1-D int64 tensor."""
        return self.op("Shape", [x])

    def dims(self, x: str, start: int, end: int | None = None) -> str:
        """``shape(x)[start:end]`` as a 1-D int64 tensor."""
        stop = np.iinfo(np.int64).max if end is None else end
        return self.op("Slice", [self.shape(x), self.ints(start), self.ints(stop)])

    def slice(self, x: str, starts: Sequence[int] | str, ends: Sequence[int] | str,
              axes: Sequence[int], steps: Sequence[int] | None = None, out: str | None = None
              ) -> str:
        """ONNX Slice with constant (or given) starts and ends."""
        inputs = [starts if isinstance(starts, str) else self.ints(list(starts)),
                  ends if isinstance(ends, str) else self.ints(list(ends)),
                  self.ints(list(axes))]
        if steps is not None:
            inputs.append(self.ints(list(steps)))
        return self.op("Slice", [x, *inputs], [out] if out else 1)

    def reshape(self, x: str, shape: Sequence[int] | str, out: str | None = None) -> str:
        """``x`` reshaped to a constant (0 copies a dimension, -1 infers it) or given shape."""
        target = shape if isinstance(shape, str) else self.ints(list(shape))
        return self.op("Reshape", [x, target], [out] if out else 1)

    def concat(self, parts: Sequence[str], axis: int, out: str | None = None) -> str:
        """Concat, or the single part itself."""
        if len(parts) == 1 and out is None:
            return parts[0]
        return self.op("Concat", list(parts), [out] if out else 1, axis=axis)

    # forms that changed between opsets 12 and 13 ------------------------------------
    def squeeze(self, x: str, axes: Sequence[int] | None, out: str | None = None) -> str:
        """Squeeze ``axes`` (all size-1 axes when None)."""
        outs = [out] if out else 1
        if axes is None:
            return self.op("Squeeze", [x], outs)
        if self.opset >= 13:
            return self.op("Squeeze", [x, self.ints(list(axes))], outs)
        return self.op("Squeeze", [x], outs, axes=list(axes))

    def unsqueeze(self, x: str, axes: Sequence[int], out: str | None = None) -> str:
        """Insert size-1 axes at ``axes`` (positions in the output)."""
        outs = [out] if out else 1
        if self.opset >= 13:
            return self.op("Unsqueeze", [x, self.ints(list(axes))], outs)
        return self.op("Unsqueeze", [x], outs, axes=list(axes))

    def reduce(self, op_type: str, x: str, axes: Sequence[int] | None, keepdims: bool,
               out: str | None = None) -> str:
        """A Reduce* operator over ``axes`` (every axis when None)."""
        outs = [out] if out else 1
        keep = int(bool(keepdims))
        axes_as_input = (op_type == "ReduceSum" and self.opset >= 13) or self.opset >= 18
        if axes is None:
            return self.op(op_type, [x], outs, keepdims=keep)
        if axes_as_input:
            return self.op(op_type, [x, self.ints(list(axes))], outs, keepdims=keep)
        return self.op(op_type, [x], outs, axes=list(axes), keepdims=keep)

    def split(self, x: str, axis: int, sizes: Sequence[int] | None, count: int,
              outs: Sequence[str] | None = None) -> list[str]:
        """Split along ``axis`` into ``count`` parts, of ``sizes`` or equal."""
        names: int | list[str] = list(outs) if outs else count
        if sizes is None:
            result = self.op("Split", [x], names, axis=axis)
        elif self.opset >= 13:
            result = self.op("Split", [x, self.ints(list(sizes))], names, axis=axis)
        else:
            result = self.op("Split", [x], names, axis=axis, split=list(sizes))
        return result if isinstance(result, list) else [result]
