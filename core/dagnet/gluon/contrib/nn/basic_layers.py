"""The contributed layers of MXNet 1.x's ``gluon.contrib.nn``."""

from __future__ import annotations

import warnings
from typing import Any

from .... import context
from .... import ndarray as nd
from ..._errors import GluonAssertionError
from ...block import Block, HybridBlock
from ...nn import BatchNorm, Concatenate, HybridConcatenate

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "PixelShuffle1D", "PixelShuffle2D",
           "PixelShuffle3D", "SparseEmbedding", "SyncBatchNorm"]


class Concurrent(Concatenate):
    """Runs every child on the same input and concatenates the outputs along ``axis``
    (default the last)."""


class HybridConcurrent(HybridConcatenate):
    """The hybrid :class:`Concurrent`."""


class Identity(HybridBlock):
    """Returns its input (a placeholder branch in a ``Concurrent``)."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return x


class SparseEmbedding(Block):
    """An embedding whose weight and weight gradient are both row_sparse: for very large
    vocabularies trained through a KVStore, which sends only the rows a batch uses
    (``weight.row_sparse_data(x)``).  Optimizers update those rows lazily.

    Input: integer indices of any shape; output: that shape plus ``output_dim``."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32",
                 weight_initializer: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x: Any) -> Any:
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


def _factors(factor: Any, n: int) -> tuple[int, ...]:
    try:
        return (int(factor),) * n
    except TypeError:
        factors = tuple(int(f) for f in factor)
        if len(factors) != n:
            raise GluonAssertionError(f"wrong length {len(factors)}") from None
        return factors


class PixelShuffle1D(HybridBlock):
    """``(N, f*C, W)`` to ``(N, C, W*f)``: channel groups become sub-pixel positions."""

    def __init__(self, factor: int):
        super().__init__()
        self._factor = int(factor)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))  # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))  # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))  # (N, C, W*f)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """``(N, f1*f2*C, H, W)`` to ``(N, C, H*f1, W*f2)``."""

    def __init__(self, factor: Any):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))  # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))  # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))  # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))  # (N, C, H*f1, W*f2)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """``(N, f1*f2*f3*C, D, H, W)`` to ``(N, C, D*f1, H*f2, W*f3)``."""

    def __init__(self, factor: Any):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))  # (N, C, f1*f2*f3, D, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2 * f3, 0, 0, 0))  # (N, C, f1, f2*f3, D, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f2, f3, 0, 0, 0))  # (N, C, f1, f2, f3, D, H, W)
        x = F.transpose(x, (0, 1, 5, 2, 6, 3, 7, 4))  # (N, C, D, f1, H, f2, W, f3)
        return F.reshape(x, (0, 0, -3, -3, -3))  # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._factors})"


class SyncBatchNorm(BatchNorm):
    """Batch normalization over axis 1 whose batch statistics span ``num_devices`` devices:
    the block is called once per device on that device's part of the batch (in parallel),
    and every part is normalized with the whole batch's mean and variance
    (``_contrib_SyncBatchNorm``, keyed by the block's prefix).  ``num_devices`` defaults
    to the number of GPUs (1 without any), with a warning, as in MXNet."""

    def __init__(self, in_channels: int = 0, num_devices: int | None = None,
                 momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", **kwargs: Any):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        if num_devices is None:
            warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please "
                          "manually set num_devices", UserWarning, stacklevel=2)
            num_devices = max(context.num_gpus(), 1)
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats, "ndev": num_devices,
                        "key": self.prefix}

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any, running_mean: Any,
                       running_var: Any) -> Any:
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                                       **self._kwargs)
