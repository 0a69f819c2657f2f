"""``mx.nd.random`` (MXNet's ``mxnet.ndarray.random``): the samplers of ``mx.random``
(``uniform``, ``normal``, ``randint``, ``multinomial``, ...), returning NDArrays."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from .. import random  # the samplers live a layer up; looked up at first use

    return getattr(random, name)


def __dir__() -> list[str]:
    from .. import random

    return dir(random)
