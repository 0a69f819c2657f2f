"""``dagnet.io``: data iterators, as ``mxnet.io`` in MXNet 1.x.

>>> import numpy as np, dagnet as mx
>>> it = mx.io.NDArrayIter(np.zeros((10, 3)), np.arange(10), batch_size=4)
>>> it.provide_data
[DataDesc[data,(4, 3),<class 'numpy.float32'>,NCHW]]
>>> [batch.pad for batch in it]
[0, 0, 2]
"""

from __future__ import annotations

from .csv_iter import CSVIter, TextDataError
from .data_batch import DataBatch
from .data_desc import DataDesc
from .data_iter import DataIter
from .image_det_record_iter import ImageDetRecordIter
from .image_record_iter import (
    ImageRecordError,
    ImageRecordInt8Iter,
    ImageRecordIter,
    ImageRecordUInt8Iter,
)
from .libsvm_iter import LibSVMIter
from .mnist_iter import MNISTIter
from .ndarray_iter import NDArrayIter
from .prefetching_iter import IteratorClosedError, PrefetchingIter
from .resize_iter import ResizeIter

__all__ = [
    "DataBatch",
    "DataDesc",
    "DataIter",
    "IteratorClosedError",
    "NDArrayIter",
    "PrefetchingIter",
    "ResizeIter",
    "CSVIter",
    "ImageDetRecordIter",
    "ImageRecordError",
    "ImageRecordInt8Iter",
    "ImageRecordIter",
    "ImageRecordUInt8Iter",
    "LibSVMIter",
    "MNISTIter",
    "TextDataError",
]
