"""Image datasets: MNIST, FashionMNIST, CIFAR10/100 read from their standard files
in ``root``, images in class folders, and images packed in a RecordIO file.

Nothing is downloaded: a missing file raises :class:`~dagnet.gluon.data.DatasetError`
saying which file to put where and where it is published.
"""

from __future__ import annotations

import gzip
import os
import struct
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .... import ndarray
from ..dataset import Dataset, DatasetError, RecordFileDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset"]


def _default_root(name: str) -> str:
    home = os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet"))
    return os.path.join(home, "datasets", name)


def _require(root: str, names: list[str], dataset: str, source: str) -> list[str]:
    paths = [os.path.join(root, name) for name in names]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise DatasetError(
            f"{dataset}: {', '.join(repr(p) for p in missing)} not found; dagnet does not "
            f"download datasets: put the standard files ({', '.join(names)}) in "
            f"root={root!r} (published at {source})")
    return paths


class _LocalDataset(Dataset):
    """Images (an NDArray, NHWC uint8) and int32 labels read once from local files."""

    def __init__(self, root: str, transform: Callable | None):
        self._root = os.path.expanduser(root)
        self._transform = transform
        data, label = self._read()
        self._data = ndarray.array(data, dtype=data.dtype)
        self._label = label

    def _read(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def __getitem__(self, idx: int) -> Any:
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)


class MNIST(_LocalDataset):
    """The MNIST digits: 28x28x1 uint8 images and int32 labels, read from the four
    gzipped IDX files (``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
    ``t10k-images-idx3-ubyte.gz``, ``t10k-labels-idx1-ubyte.gz``) in ``root``.
    ``transform(data, label)`` is applied to each sample."""

    _name = "MNIST"
    _source = "http://yann.lecun.com/exdb/mnist/"

    def __init__(self, root: str = _default_root("mnist"), train: bool = True,
                 transform: Callable | None = None):
        self._train = train
        super().__init__(root, transform)

    def _read(self) -> tuple[np.ndarray, np.ndarray]:
        prefix = "train" if self._train else "t10k"
        data_file, label_file = _require(
            self._root, [f"{prefix}-images-idx3-ubyte.gz", f"{prefix}-labels-idx1-ubyte.gz"],
            self._name, self._source)
        with gzip.open(label_file, "rb") as fin:
            magic, count = struct.unpack(">II", fin.read(8))
            label = np.frombuffer(fin.read(), dtype=np.uint8).astype(np.int32)
        with gzip.open(data_file, "rb") as fin:
            magic, n, rows, cols = struct.unpack(">IIII", fin.read(16))
            data = np.frombuffer(fin.read(), dtype=np.uint8)
        if magic != 2051 or len(label) != count or data.size != n * rows * cols or n != count:
            raise DatasetError(f"{self._name}: {data_file!r} and {label_file!r} are not a "
                               f"matching pair of IDX image and label files")
        return data.reshape(n, rows, cols, 1), label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, in MNIST's file names and format."""

    _name = "FashionMNIST"
    _source = "https://github.com/zalandoresearch/fashion-mnist"

    def __init__(self, root: str = _default_root("fashion-mnist"), train: bool = True,
                 transform: Callable | None = None):
        super().__init__(root, train, transform)


class CIFAR10(_LocalDataset):
    """CIFAR-10: 32x32x3 uint8 images and int32 labels, read from the binary version's
    ``data_batch_1.bin`` .. ``data_batch_5.bin`` and ``test_batch.bin`` in ``root``
    (or in ``root/cifar-10-batches-bin``, as the archive unpacks)."""

    _name = "CIFAR10"
    _source = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
    _folder = "cifar-10-batches-bin"
    _label_bytes = 1

    def __init__(self, root: str = _default_root("cifar10"), train: bool = True,
                 transform: Callable | None = None):
        self._train = train
        super().__init__(root, transform)

    def _files(self) -> list[str]:
        if self._train:
            return [f"data_batch_{i}.bin" for i in range(1, 6)]
        return ["test_batch.bin"]

    def _label_column(self) -> int:
        return 0

    def _read(self) -> tuple[np.ndarray, np.ndarray]:
        names = self._files()
        nested = os.path.join(self._root, self._folder)
        root = nested if not os.path.isfile(os.path.join(self._root, names[0])) \
            and os.path.isdir(nested) else self._root
        datas, labels = [], []
        width = 3072 + self._label_bytes
        for path in _require(root, names, self._name, self._source):
            raw = np.fromfile(path, dtype=np.uint8)
            if raw.size % width:
                raise DatasetError(f"{self._name}: {path!r} is not a CIFAR binary file (its "
                                   f"size is not a multiple of {width} bytes)")
            raw = raw.reshape(-1, width)
            datas.append(raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            labels.append(raw[:, self._label_column()].astype(np.int32))
        return np.ascontiguousarray(np.concatenate(datas)), np.concatenate(labels)


class CIFAR100(CIFAR10):
    """CIFAR-100 from the binary version's ``train.bin`` and ``test.bin``; labels are
    the 20 coarse classes, or the 100 fine ones with ``fine_label=True``."""

    _name = "CIFAR100"
    _source = "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz"
    _folder = "cifar-100-binary"
    _label_bytes = 2

    def __init__(self, root: str = _default_root("cifar100"), fine_label: bool = False,
                 train: bool = True, transform: Callable | None = None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _files(self) -> list[str]:
        return ["train.bin" if self._train else "test.bin"]

    def _label_column(self) -> int:
        return 1 if self._fine_label else 0


class ImageRecordDataset(RecordFileDataset):
    """Images packed in a RecordIO file: each sample is ``(image, label)``, the image
    decoded to HWC uint8 (``flag=0`` for grey, 1 for colour)."""

    def __init__(self, filename: str, flag: int = 1, transform: Callable | None = None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx: int) -> Any:
        from .... import image, recordio

        header, img = recordio.unpack(super().__getitem__(idx))
        data = image.imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(data, header.label)
        return data, header.label


class ImageFolderDataset(Dataset):
    """Images in one folder per class (``root/car/1.jpg``, ``root/bus/2.png``):
    ``synsets[i]`` is the folder name of label ``i``, ``items`` the (path, label)
    pairs.  Files other than .jpg, .jpeg and .png are skipped with a warning."""

    _exts = (".jpg", ".jpeg", ".png")

    def __init__(self, root: str, flag: int = 1, transform: Callable | None = None):
        self._root = os.path.expanduser(root)
        if not os.path.isdir(self._root):
            raise DatasetError(f"ImageFolderDataset: {self._root!r} is not a folder (give "
                               f"a folder holding one subfolder of images per class)")
        self._flag = flag
        self._transform = transform
        self.synsets: list[str] = []
        self.items: list[tuple[str, int]] = []
        for folder in sorted(os.listdir(self._root)):
            path = os.path.join(self._root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=2)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(os.listdir(path)):
                filename = os.path.join(path, name)
                if os.path.splitext(name)[1].lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename}: only {', '.join(self._exts)} files "
                                  f"are read", stacklevel=2)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx: int) -> Any:
        from .... import image

        path, label = self.items[idx]
        data = image.imread(path, self._flag)
        if self._transform is not None:
            return self._transform(data, label)
        return data, label

    def __len__(self) -> int:
        return len(self.items)
