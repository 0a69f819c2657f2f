"""``gluon.data``: datasets, samplers and the DataLoader that batches them.

``gluon.data.vision`` adds the image datasets and transforms.
"""

from __future__ import annotations

from . import vision
from .dataloader import DataLoader, default_batchify_fn, default_mp_batchify_fn
from .dataset import ArrayDataset, Dataset, DatasetError, RecordFileDataset, SimpleDataset
from .sampler import (
    BatchSampler,
    FilterSampler,
    IntervalSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
)
from .worker_pool import DataLoaderTimeoutError, DataLoaderWorkerError

__all__ = ["ArrayDataset", "BatchSampler", "DataLoader", "DataLoaderTimeoutError",
           "DataLoaderWorkerError", "Dataset", "DatasetError", "FilterSampler",
           "IntervalSampler", "RandomSampler", "RecordFileDataset", "Sampler",
           "SequentialSampler", "SimpleDataset", "default_batchify_fn",
           "default_mp_batchify_fn", "vision"]
