"""``gluon.data.vision``: image datasets read from local files."""

from __future__ import annotations

from .datasets import CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset, ImageRecordDataset

__all__ = ["CIFAR10", "CIFAR100", "MNIST", "FashionMNIST", "ImageFolderDataset",
           "ImageRecordDataset"]
