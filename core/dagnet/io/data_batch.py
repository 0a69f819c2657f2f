"""``DataBatch``: what one step of a data iterator hands to the model."""

from __future__ import annotations

from typing import Any

from .._argcheck import ArgumentTypeError
from .data_desc import DataDesc

__all__ = ["DataBatch"]


class DataBatch:
    """One batch: ``data`` and ``label`` are lists of NDArrays, each holding
    ``batch_size`` examples along its batch axis.

    ``pad`` counts the examples at the end that only fill the batch up (ignore them
    when predicting); ``index`` holds the example indices when the iterator knows
    them; ``bucket_key``, ``provide_data`` and ``provide_label`` describe the batch
    for bucketing models whose shapes change from batch to batch.
    """

    def __init__(self, data: list[Any] | tuple[Any, ...] | None,
                 label: list[Any] | tuple[Any, ...] | None = None, pad: int | None = None,
                 index: Any = None, bucket_key: Any = None,
                 provide_data: list[DataDesc] | None = None,
                 provide_label: list[DataDesc] | None = None):
        for what, value in (("data", data), ("label", label)):
            if value is not None and not isinstance(value, (list, tuple)):
                raise ArgumentTypeError(
                    f"DataBatch: {what} must be a list of NDArrays, got "
                    f"{type(value).__name__}; wrap a single array as [{what}]")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"
