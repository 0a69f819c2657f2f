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

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

import dagnet

__version__ = "1.9.1"

_PREFIX = __name__ + "."


class _DagnetModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``mxnet.X`` as dagnet's module ``dagnet.X``, the same module object."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX):
            return None
        name = "dagnet." + fullname[len(_PREFIX):]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name is not None and (name + ".").startswith(error.name + "."):
                return None  # dagnet has no such module: "No module named mxnet.X"
            raise  # the module exists, and importing it failed: that error is the news
        spec = importlib.machinery.ModuleSpec(fullname, self,
                                              is_package=hasattr(module, "__path__"))
        spec.loader_state = (module, module.__spec__)
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return spec.loader_state[0]

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the alias's spec on dagnet's module: put its own back.
        module.__spec__ = module.__spec__.loader_state[1]


if not any(isinstance(finder, _DagnetModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _DagnetModules())


def __getattr__(name: str) -> Any:
    return getattr(dagnet, name)


def __dir__() -> list[str]:
    return sorted(set(dir(dagnet)) | {"__version__"})
