"""``mx.nd.image`` (MXNet's ``mxnet.ndarray.image``): each operator registered as
``_image_<name>``, under ``<name>``."""

from __future__ import annotations

from ._frontend import Namespace

_operators = Namespace("image", "_image_")
__getattr__ = _operators.__getattr__
__dir__ = _operators.__dir__
