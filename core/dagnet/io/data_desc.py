"""``DataDesc``: the name, shape, dtype and layout of one input an iterator provides."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["DataDesc"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Describes one data or label input: a ``(name, shape)`` tuple with ``dtype`` and
    ``layout`` attributes.

    It compares and unpacks as the plain pair, so code that builds
    ``[('data', (32, 784))]`` by hand and code that reads ``provide_data`` agree.
    ``layout`` says what each axis means; the ``'N'`` in it marks the batch axis
    (``'NCHW'`` for images, ``'NTC'`` for sequences).
    """

    def __new__(cls, name: str, shape: Sequence[int], dtype: Any = np.float32,
                layout: str = "NCHW") -> DataDesc:
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The axis of ``layout`` that holds the batch (``'N'``): 0 when ``layout`` is None,
        -1 when it has no ``'N'`` (the whole array goes to every device)."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes: Iterable[tuple[str, Sequence[int]]],
                 types: Iterable[tuple[str, Any]] | None) -> list[DataDesc]:
        """DataDescs from ``[(name, shape), ...]`` and, when given, ``[(name, dtype), ...]``."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        dtypes = dict(types)
        return [DataDesc(name, shape, dtypes[name]) for name, shape in shapes]
