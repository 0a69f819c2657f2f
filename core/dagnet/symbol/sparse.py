"""``mx.sym.sparse`` (MXNet's ``mxnet.symbol.sparse``): ``sparse.foo`` is the operator
``_sparse_foo`` when one is registered (``_sparse_retain``), else ``foo`` itself
(``dot``, ``elemwise_add``), which handle sparse storage too."""

from __future__ import annotations

from .. import plugins as _plugins
from ._frontend import Namespace, SymbolFunction
from ._frontend import function as _function

_operators = Namespace("sparse", "_sparse_")


def __getattr__(name: str) -> SymbolFunction:
    if not name.startswith("__") and "_sparse_" + name not in _plugins.ops():
        return _function(name)
    return _operators.__getattr__(name)


__dir__ = _operators.__dir__
