"""Where pretrained parameter files are looked for: ``root`` (default
``$MXNET_HOME/models``, else ``~/.mxnet/models``) holding ``<name>-<anything>.params`` or
``<name>.params`` as MXNet's model store saves them.  dagnet bundles no weights and does
not download them: put the file there (from a machine with MXNet's model store)."""

from __future__ import annotations

import glob
import os

from .._errors import GluonValueError

__all__ = ["get_model_file", "default_root", "purge"]


def default_root() -> str:
    """The folder pretrained parameters are looked for in."""
    home = os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet"))
    return os.path.join(os.path.expanduser(home), "models")


def get_model_file(name: str, root: str | None = None) -> str:
    """The path of the pretrained parameters of model ``name`` under ``root``; an error
    saying where to put the file when there is none."""
    root = os.path.expanduser(root or default_root())
    found = sorted(glob.glob(os.path.join(root, f"{name}-*.params")))
    exact = os.path.join(root, f"{name}.params")
    if os.path.exists(exact):
        return exact
    if found:
        return found[-1]
    raise GluonValueError(f"no pretrained parameters for model {name!r} in {root}: dagnet does "
                          f"not download model weights; copy {name}-<hash>.params from MXNet's "
                          f"model store into that folder (or pass root=), or create the model "
                          f"with pretrained=False and load_parameters() your own file")


def purge(root: str | None = None) -> None:
    """Delete every ``.params`` file under ``root``."""
    root = os.path.expanduser(root or default_root())
    for path in glob.glob(os.path.join(root, "*.params")):
        os.remove(path)
