"""``_numpy_function``: a call of an ``mx.np`` / ``mx.npx`` function in a symbol
(``mx.sym.np.tensordot(a, b, 2)``), expanded into the operators it runs.

``mx.np`` functions compose registered operators with parameters that depend on the input
shapes, so the node is graph-only: once the shapes and dtypes of its inputs are known (an
executor binding the graph), ``expand`` runs the function once on zero arrays of those
shapes under :class:`dagnet.autograd.Tracer` and the node is replaced by the operators it
called (see :mod:`dagnet.symbol`'s deferred nodes).  ``function`` names the function
(``tensordot``, ``linalg.norm``, ``npx.relu``), ``arguments`` holds its other arguments as
JSON, with ``{"__input__": i}`` where node input ``i`` goes.
"""

from __future__ import annotations

import functools
import importlib
import json
from typing import Any

import numpy as np

from dagnet import ParamError, ShapeError, autograd, util
from dagnet import ndarray as nd
from dagnet.operator import REQUIRED, Case, Domain, Field, OpBuilder, Params, get_op

__all__ = ["OPS", "decode"]


class NumpyFunctionParam(Params):
    function = Field(str, REQUIRED, "the mx.np function: 'tensordot', 'linalg.norm', "
                                    "'npx.relu'")
    arguments = Field(str, "[[], {}]", "its positional and keyword arguments as JSON, with "
                                       "{\"__input__\": i} for node input i")
    num_args = Field(int, REQUIRED, "the node's inputs (the symbols among the arguments)",
                     low=0)
    num_outputs = Field(int, 1, "the arrays the function returns", low=1)


def decode(value: Any, inputs: list[Any]) -> Any:
    """An argument from its JSON form, the node's inputs put back in place."""
    if isinstance(value, list):
        return [decode(v, inputs) for v in value]
    if isinstance(value, dict):
        if "__input__" in value:
            return inputs[value["__input__"]]
        if "__tuple__" in value:
            return tuple(decode(v, inputs) for v in value["__tuple__"])
        if "__dtype__" in value:
            return np.dtype(value["__dtype__"])
        return {k: decode(v, inputs) for k, v in value.items()}
    return value


def _target(name: str) -> Any:
    """The function a dotted name gives, from mx.np (``npx.`` names from mx.npx)."""
    parts = name.split(".")
    where: Any = importlib.import_module("dagnet.numpy")
    if parts[0] == "npx":
        where, parts = importlib.import_module("dagnet.numpy_extension"), parts[1:]
    try:
        for part in parts:
            where = getattr(where, part)
    except AttributeError as error:
        raise ParamError(f"operator '_numpy_function': no function {name!r} in mx.np / mx.npx "
                         f"({error})") from None
    return where


@functools.lru_cache(maxsize=256)
def _traced(attrs: NumpyFunctionParam, shapes: tuple, dtypes: tuple) -> tuple:
    """(graph over variables arg0..., output shapes, output dtypes) of one call."""
    fn = _target(attrs.function)
    with util.np_shape(True), util.np_array(True):
        zeros = [nd.zeros(s, dtype=d).as_np_ndarray() for s, d in zip(shapes, dtypes)]
        args, kwargs = decode(json.loads(attrs.arguments), zeros)
        with autograd.Tracer() as tracer:
            for index, array in enumerate(zeros):
                tracer.variable(f"arg{index}", array)
            result = fn(*args, **kwargs)
            outputs = list(result) if isinstance(result, (list, tuple)) else [result]
            graph = tracer.symbol(outputs) if tracer.problem is None else None
    if tracer.problem is not None:
        raise ShapeError(f"mx.sym.np.{attrs.function} cannot be part of a symbol here: "
                         f"{tracer.problem}; call it on mx.np arrays instead")
    _fill_constants(graph, tracer.constants, attrs.function)
    if len(outputs) != attrs.num_outputs:
        raise ShapeError(f"mx.sym.np.{attrs.function} gives {len(outputs)} outputs here, "
                         f"but the symbol was built for {attrs.num_outputs}")
    return graph, [o.shape for o in outputs], [o.dtype for o in outputs]


def _fill_constants(graph: Any, constants: dict, function: str) -> None:
    """Turn the graph's constants (arrays the function made without an operator, such as
    ``zeros``) into ``_full`` nodes; one of varying values cannot be a node."""
    full = get_op("_full")
    for node in graph._nodes():
        if node.op is not None or node.name not in constants:
            continue
        host = constants[node.name].asnumpy()
        if host.size and not (host == host.flat[0]).all():
            raise ShapeError(f"mx.sym.np.{function} uses an array of values made outside "
                             f"operators, which a symbol cannot hold; call it on mx.np "
                             f"arrays instead")
        value = host.flat[0].item() if host.size else 0
        params = full.parse_params({"shape": host.shape, "value": float(value),
                                    "dtype": host.dtype.name})
        node.op, node.attrs, node.params = full, params, params.to_strings()


def _infer_shape(attrs, ins, outs):
    if not all(s is not None for s in ins):
        return ins, outs
    float32 = (np.dtype(np.float32),) * len(ins)  # dtypes are known only when it is expanded
    _, shapes, _ = _traced(attrs, tuple(tuple(s) for s in ins), float32)
    return ins, shapes


def _infer_type(attrs, ins, outs):
    return ins, outs  # known once the node is expanded, with the shapes


def _expand(attrs, shapes, dtypes):
    graph, _, _ = _traced(attrs, tuple(tuple(s) for s in shapes),
                          tuple(np.dtype(d) for d in dtypes))
    return graph


# -- the conformance suite's examples: a few functions with numpy's own as the reference ----
_EXAMPLES = {  # function: (input shapes, keyword arguments, numpy reference)
    "tensordot": ([(2, 3), (3, 4)], {"axes": 1}, lambda a, b: np.tensordot(a, b, 1)),
    "sum": ([(2, 3)], {"axis": -1}, lambda a: a.sum(axis=-1)),
    "npx.relu": ([(3,)], {}, lambda a: np.maximum(a, 0)),
    "stack": ([(2,), (2,)], {"axis": 1}, lambda a, b: np.stack([a, b], axis=1)),
}


def _sample(draw):
    from ._draw import Draw

    d = Draw(draw)
    name = d.choice(sorted(_EXAMPLES), "function")
    shapes, kwargs, _ = _EXAMPLES[name]
    arrays = [d.away_from_zero(s) for s in shapes]
    count = len(shapes)
    inputs = [{"__input__": i} for i in range(count)]
    args = [inputs] if name == "stack" else inputs
    return Case(arrays, {"function": name, "arguments": json.dumps([args, kwargs]),
                         "num_args": count})


def _reference(params, *arrays):
    return _EXAMPLES[params["function"]][2](*arrays)


OPS = [
    OpBuilder("_numpy_function")
    .describe("A call of an mx.np / mx.npx function in a symbol (mx.sym.np.*), replaced by "
              "the operators the function runs once the input shapes are known.")
    .set_params(NumpyFunctionParam)
    .set_num_inputs(lambda a: a.num_args)
    .set_num_outputs(lambda a: a.num_outputs)
    .set_key_var_num_args("num_args")
    .set_infer_shape(_infer_shape)
    .set_infer_type(_infer_type)
    .set_expand(_expand)
    .set_domain(Domain(_sample, reference=_reference, rtol=1e-5, atol=1e-6))
    .build()
]
