"""MXNet 1.x's Python package, served by dagnet.

``import mxnet as mx`` runs on dagnet: ``mx.nd is dagnet.nd``, and every module
path MXNet code imports (``mxnet.gluon.data.dataloader``, ``mxnet.symbol.contrib``,
``mxnet.ndarray.random`` ...) is dagnet's module of the same name -- the same
object, not a copy.  The package holds no logic of its own: a name MXNet code
needs is added to dagnet.

``mxnet.__version__`` is the MXNet API level dagnet implements; dagnet's own
version is ``dagnet.__version__``.
"""

from __future__ import annotations

import importlib as _importlib
import importlib.abc as _abc
import importlib.machinery as _machinery
import sys as _sys
from types import ModuleType as _ModuleType
from typing import Any as _Any

import dagnet as _dagnet

__version__ = "1.9.1"
__all__ = [*_dagnet.__all__]  # what ``from mxnet import *`` gives: dagnet's names

_PREFIX = __name__ + "."


class _DagnetModules(_abc.MetaPathFinder, _abc.Loader):
    """Finds ``mxnet.X`` as dagnet's module ``dagnet.X``, the same module object."""

    def find_spec(self, fullname: str, path: _Any = None, target: _Any = None
                  ) -> _machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX):
            return None
        name = "dagnet." + fullname[len(_PREFIX):]
        try:
            module = _importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name is not None and (name + ".").startswith(error.name + "."):
                return None  # dagnet has no such module: "No module named mxnet.X"
            raise  # the module exists, and importing it failed: that error is the news
        spec = _machinery.ModuleSpec(fullname, self, is_package=hasattr(module, "__path__"))
        spec.loader_state = (module, module.__spec__)
        return spec

    def create_module(self, spec: _machinery.ModuleSpec) -> _ModuleType:
        return spec.loader_state[0]

    def exec_module(self, module: _ModuleType) -> None:
        # The import system stamped the alias's spec on dagnet's module: put its own back.
        module.__spec__ = module.__spec__.loader_state[1]


if not any(isinstance(finder, _DagnetModules) for finder in _sys.meta_path):
    _sys.meta_path.insert(0, _DagnetModules())


def __getattr__(name: str) -> _Any:
    return getattr(_dagnet, name)


def __dir__() -> list[str]:
    return sorted(set(dir(_dagnet)) | {"__version__"})
