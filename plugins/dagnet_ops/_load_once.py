"""Optional compiled libraries, loaded on first use: the value, or why there is none."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["LoadOnce"]


class LoadOnce:
    """The result of ``load()``, called once on first :meth:`get`; when it raises one of
    ``errors``, None ever after, with the reason kept (:attr:`failure`) and logged at debug
    level on ``log`` as ``"<what> off, numpy kernels used instead: <reason>"``."""

    def __init__(self, load: Callable[[], Any], errors: tuple[type[BaseException], ...],
                 what: str, log: logging.Logger):
        self._load, self._errors, self._what, self._log = load, errors, what, log
        self._lock = threading.Lock()
        self._value: Any = None
        self.failure: str | None = None

    def get(self) -> Any:
        """The loaded value, or None when loading failed."""
        if self._value is not None or self.failure is not None:
            return self._value
        with self._lock:
            if self._value is None and self.failure is None:
                try:
                    self._value = self._load()
                except self._errors as exc:
                    self.failure = f"{type(exc).__name__}: {exc}"
                    self._log.debug("%s off, numpy kernels used instead: %s", self._what,
                                    self.failure)
        return self._value

    def after_fork(self, reason: str) -> None:
        """In a forked child: a new lock (a thread the child lacks may have held the old one)
        and, if the value was loaded, None from now on with ``reason`` as the failure."""
        self._lock = threading.Lock()
        if self._value is not None:
            self._value, self.failure = None, reason
