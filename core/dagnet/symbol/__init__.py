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
``random.normal`` and ``random.randn`` make sampling nodes.  ``np`` and ``npx``
apply ``mx.np`` / ``mx.npx`` functions to symbols.
"""

from __future__ import annotations

from typing import Any

from . import _internal as _internal  # noqa: F401 - mx.sym._internal, MXNet's namespace
from . import contrib, image, linalg, op, random, sparse
from ._compose import SymbolArgumentError
from ._deferred import expand_deferred, has_deferred
from ._frontend import Namespace, SymbolFunction
from ._frontend import function as _function
from ._helpers import arange, eye, full, hypot, maximum, minimum, ones, pow, power, zeros
from ._json import SymbolFormatError, load, load_json
from ._node import Entry, Node
from ._numpy_namespace import np, npx
from ._numpy_style import histogram, split_v2
from ._symbol import Group, NotImplementedForSymbol, Symbol, UnknownOutputError, Variable, var

__all__ = [
    "arange", "contrib", "Entry", "expand_deferred", "eye", "full", "Group", "has_deferred",
    "histogram", "hypot", "image", "linalg", "load", "load_json", "maximum", "minimum",
    "Namespace", "Node", "NotImplementedForSymbol", "np", "npx", "numpy", "numpy_extension",
    "ones", "op", "pow", "power", "random", "sparse", "split_v2", "Symbol", "SymbolArgumentError",
    "SymbolFormatError", "SymbolFunction", "UnknownOutputError", "var", "Variable", "zeros",
]


numpy, numpy_extension = np, npx  # MXNet's longer names of mx.sym.np and mx.sym.npx


def __getattr__(name: str) -> Any:
    # Only names not defined above get here: the registered operators.
    if name.startswith("__"):
        raise AttributeError(f"module 'dagnet.symbol' has no attribute {name!r}")
    fn = globals()[name] = _function(name)
    return fn


def __dir__() -> list[str]:
    from .. import plugins

    return sorted(set(globals()) | set(plugins.ops()))
