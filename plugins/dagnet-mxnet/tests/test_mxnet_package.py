"""The ``mxnet`` package: dagnet under MXNet's names, the same objects."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import dagnet


def test_import_mxnet_gives_dagnets_modules():
    import mxnet as mx

    assert mx.nd is dagnet.nd and mx.sym is dagnet.sym and mx.gluon is dagnet.gluon
    assert mx.nd.NDArray is dagnet.nd.NDArray
    assert mx.__version__ == "1.9.1" and dagnet.__version__ != mx.__version__
    assert (mx.nd.ones((2,)) + 1).asnumpy().tolist() == [2.0, 2.0]


@pytest.mark.parametrize("path", [
    "mxnet.gluon.data.dataloader", "mxnet.gluon.nn", "mxnet.gluon.utils", "mxnet.image.image",
    "mxnet.ndarray.contrib", "mxnet.ndarray.image", "mxnet.ndarray.linalg", "mxnet.ndarray.random",
    "mxnet.ndarray.sparse", "mxnet.registry", "mxnet.symbol.contrib", "mxnet.symbol.image",
    "mxnet.symbol.linalg", "mxnet.symbol.random", "mxnet.symbol.sparse",
])
def test_every_module_path_is_dagnets_module(path):
    module = importlib.import_module(path)
    assert module is importlib.import_module("dagnet." + path[len("mxnet."):])
    assert module.__spec__.name == "dagnet." + path[len("mxnet."):]  # its own, not the alias's


def test_from_imports_of_names_mxnet_code_uses():
    from mxnet.gluon.data.dataloader import ForkingPickler, _as_in_context  # noqa: F401
    from mxnet.gluon.utils import _get_repo_file_url, replace_file  # noqa: F401
    from mxnet.image.image import _get_interp_method
    from mxnet.ndarray.contrib import BilinearResize2D
    from mxnet.symbol.contrib import SyncBatchNorm

    assert _get_interp_method(9, (10, 10, 20, 20)) == 2
    assert BilinearResize2D is dagnet.nd.contrib.BilinearResize2D
    assert SyncBatchNorm is dagnet.sym.contrib.SyncBatchNorm


def test_a_module_dagnet_lacks_is_not_found_by_its_mxnet_name():
    with pytest.raises(ModuleNotFoundError, match="mxnet.no_such_module"):
        importlib.import_module("mxnet.no_such_module")


def test_a_module_that_fails_to_import_reports_its_own_error(tmp_path):
    """An error inside a dagnet module is not turned into "no module named": run in a
    fresh interpreter where dagnet.gluon.nn fails on import."""
    script = (
        "import sys, types, importlib.abc, importlib.machinery\n"
        "class Broken(importlib.abc.MetaPathFinder, importlib.abc.Loader):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'dagnet.gluon.nn':\n"
        "            return importlib.machinery.ModuleSpec(name, self)\n"
        "    def create_module(self, spec): return None\n"
        "    def exec_module(self, module): import not_installed_dependency\n"
        "sys.meta_path.insert(0, Broken())\n"
        "import mxnet.gluon.nn\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "No module named 'not_installed_dependency'" in result.stderr, result.stderr


def test_star_import_gives_dagnets_names():
    namespace: dict = {}
    exec("from mxnet import *", namespace)
    assert namespace["nd"] is dagnet.nd and namespace["cpu"] is dagnet.cpu
    assert "importlib" not in namespace and "_dagnet" not in namespace
