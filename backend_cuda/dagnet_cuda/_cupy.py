"""The one place cupy is imported: lazily, once, keeping the reason if it fails."""

from __future__ import annotations

import importlib
import importlib.util
import threading
from typing import Any

from dagnet import BackendUnavailableError

_INSTALL_HINT = "install it with pip install 'dagnet[cuda]' (the cupy wheel matching your CUDA)"
_lock = threading.Lock()
_state: dict[str, Any] = {}


def probe() -> tuple[Any | None, str | None]:
    """``(cupy, None)`` when cupy imports and sees a GPU, else ``(None, reason)``."""
    with _lock:
        if "result" not in _state:
            _state["result"] = _probe()
        return _state["result"]


def _probe() -> tuple[Any | None, str | None]:
    try:
        spec = importlib.util.find_spec("cupy")
    except (ImportError, ValueError):  # a broken entry in sys.modules
        spec = None
    if spec is None:
        return None, f"cupy is not installed; {_INSTALL_HINT}"
    try:
        cupy = importlib.import_module("cupy")
    except Exception as error:
        return None, f"cupy failed to import ({type(error).__name__}: {error}); {_INSTALL_HINT}"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:
        return None, f"no usable CUDA driver or device ({type(error).__name__}: {error})"
    if count == 0:
        return None, "cupy is installed but no CUDA device is visible"
    return cupy, None


def require() -> Any:
    """cupy, or a :class:`BackendUnavailableError` saying what is missing."""
    cupy, reason = probe()
    if cupy is None:
        raise BackendUnavailableError(f"the cuda backend is unavailable: {reason}")
    return cupy
