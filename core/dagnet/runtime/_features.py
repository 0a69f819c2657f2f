"""``mx.runtime.Features``: what this installation can do, under MXNet 1.x's feature names.

MXNet reports the options its native library was compiled with; dagnet has no
native library of its own, so each feature says whether dagnet, as installed
here, provides it: ``CUDA`` when the cuda backend can run, the CPU instruction
sets numpy's kernels dispatch to, the BLAS and LAPACK numpy was built with,
``DIST_KVSTORE`` when Dask distributed is installed.  Features dagnet does not
use (cuDNN, NCCL, TensorRT, oneDNN, OpenCV, ...) are off.
"""

from __future__ import annotations

import importlib.util
from collections import OrderedDict
from typing import Any

import numpy as np

from .._errors import UnknownNameError
from ..backend import find_backend

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9.1's feature names, in its order.
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
          "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
          "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
          "SIGNAL_HANDLER", "DEBUG", "TVM_OP")

# numpy's names for the instruction sets MXNet lists
_CPU = {"CPU_SSE": "SSE", "CPU_SSE2": "SSE2", "CPU_SSE3": "SSE3", "CPU_SSE4_1": "SSE41",
        "CPU_SSE4_2": "SSE42", "CPU_AVX": "AVX", "CPU_AVX2": "AVX2", "F16C": "F16C"}


class Feature:
    """One feature: its ``name`` and whether it is ``enabled``."""

    __slots__ = ("name", "enabled")

    def __init__(self, name: str, enabled: bool):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self) -> str:
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def feature_list() -> list[Feature]:
    """Every feature MXNet 1.9.1 names, with whether this installation provides it."""
    found = _found()
    return [Feature(name, found.get(name, False)) for name in _NAMES]


class Features(OrderedDict):
    """The features by name (MXNet's ``mx.runtime.Features()``).  One instance per
    process, as in MXNet: every call returns the same object, probed on the first."""

    _instance: Features | None = None

    def __new__(cls) -> Features:
        if cls._instance is None:
            instance = super().__new__(cls)
            OrderedDict.__init__(instance, ((f.name, f) for f in feature_list()))
            cls._instance = instance
        return cls._instance

    def __init__(self) -> None:
        pass  # filled once, in __new__

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` (any case) is enabled; an unknown name raises
        (a ``RuntimeError``, as in MXNet, and a ``KeyError``)."""
        name = feature_name.upper()
        if name not in self:
            raise UnknownNameError(f"Feature '{name}' is unknown, known features are: "
                                   f"{list(self.keys())}")
        return self[name].enabled


def _found() -> dict[str, bool]:
    found: dict[str, bool] = {}
    cuda = find_backend("gpu")
    found["CUDA"] = cuda is not None and cuda.is_available
    cpu = _numpy_cpu_features()
    for name, numpy_name in _CPU.items():
        found[name] = cpu.get(numpy_name, False)
    blas, lapack = _numpy_libraries()
    found["BLAS_OPEN"] = "openblas" in blas
    found["BLAS_MKL"] = "mkl" in blas
    found["BLAS_APPLE"] = "accelerate" in blas
    found["BLAS_ATLAS"] = "atlas" in blas
    found["LAPACK"] = bool(lapack)
    found["DIST_KVSTORE"] = importlib.util.find_spec("distributed") is not None
    return found


def _numpy_cpu_features() -> dict[str, bool]:
    for module in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            return dict(importlib.import_module(module).__cpu_features__)
        except (ImportError, AttributeError):
            continue
    return {}


def _numpy_libraries() -> tuple[str, str]:
    """The names of the BLAS and LAPACK numpy was built with (lower case; empty when
    numpy does not say)."""
    try:
        config: Any = np.show_config(mode="dicts")
        dependencies = config["Build Dependencies"]
    except (TypeError, KeyError):  # numpy before 1.26 prints it; its __config__ keeps it
        return _old_numpy_libraries()
    names = []
    for key in ("blas", "lapack"):
        entry = dependencies.get(key, {})
        names.append(str(entry.get("name", "")).lower() if entry.get("found") else "")
    return names[0], names[1]


def _old_numpy_libraries() -> tuple[str, str]:
    """:func:`_numpy_libraries` from the ``*_opt_info`` dicts of numpy before 1.26."""
    config = getattr(np, "__config__", None)
    names = []
    for kind in ("blas", "lapack"):
        libraries: list[str] = []
        for suffix in ("_ilp64_opt_info", "_opt_info"):
            info = getattr(config, kind + suffix, None)
            if isinstance(info, dict):
                libraries += [str(name).lower() for name in info.get("libraries", ())]
        names.append(" ".join(libraries))
    return names[0], names[1]
