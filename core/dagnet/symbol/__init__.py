"""``dagnet.sym``: symbolic graphs (MXNet's ``mx.sym``).

>>> import dagnet as mx
>>> data = mx.sym.Variable("data")
>>> net = mx.sym.FullyConnected(data, num_hidden=10, name="fc1")
>>> net.list_arguments()
['data', 'fc1_weight', 'fc1_bias']
>>> net.infer_shape(data=(4, 3))[0]
[(4, 3), (10, 3), (10,)]

Every registered operator is ``dagnet.sym.<name>`` with MXNet's call
convention and automatic names; ``Variable``/``var``, ``Group``, ``load`` and
``load_json`` make symbols without an operator; ``random.uniform``,
``random.normal`` and ``random.randn`` make sampling nodes.
"""

from __future__ import annotations

import importlib
from typing import Any

from .. import plugins as _plugins
from ._compose import SymbolArgumentError
from ._frontend import Namespace, SymbolFunction
from ._frontend import function as _function
from ._helpers import arange, eye, full, hypot, maximum, minimum, ones, pow, power, zeros
from ._json import SymbolFormatError, load, load_json
from ._node import Entry, Node
from ._numpy_style import histogram, split_v2
from ._symbol import Group, NotImplementedForSymbol, Symbol, UnknownOutputError, Variable, var

__all__ = [
    "arange", "contrib", "Entry", "eye", "full", "Group", "histogram", "hypot", "image", "linalg",
    "load", "load_json", "maximum", "minimum", "Namespace", "Node", "NotImplementedForSymbol",
    "ones", "op", "pow", "power", "sparse", "split_v2", "Symbol", "SymbolArgumentError",
    "SymbolFormatError", "SymbolFunction", "UnknownOutputError", "var", "Variable", "zeros",
]


_internal = Namespace("_internal")
op = Namespace("op")
contrib = Namespace("contrib", "_contrib_")
linalg = Namespace("linalg", "_linalg_")
image = Namespace("image", "_image_")


class _SparseNamespace(Namespace):
    """``mx.sym.sparse``: ``sparse.foo`` is the operator ``_sparse_foo`` when one is
    registered (``_sparse_retain``), else ``foo`` itself (``dot``, ``elemwise_add``)."""

    def __getattr__(self, name: str) -> SymbolFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._prefix + name in _plugins.ops():
            return super().__getattr__(name)
        return _function(name)


sparse = _SparseNamespace("sparse", "_sparse_")


def __getattr__(name: str) -> Any:
    # Only names not defined above get here: the ``random`` namespace (imported on first
    # use, as MXNet's ``mx.sym.random``) and the registered operators.
    if name == "random":
        return importlib.import_module(f"{__name__}.random")
    if name.startswith("__"):
        raise AttributeError(f"module 'dagnet.symbol' has no attribute {name!r}")
    fn = globals()[name] = _function(name)
    return fn


def __dir__() -> list[str]:
    from .. import plugins

    return sorted(set(globals()) | set(plugins.ops()))
