"""Watch the arrays of a training run (MXNet's ``mx.mon.Monitor``).

A monitor installed on executors (``module.install_monitor(mon)``) receives every
node output the forward pass writes and every gradient the backward pass writes
(named ``<node>_output`` and ``<node>_backward_<input>``), and at :meth:`Monitor.toc`
the arguments and auxiliary states; names matching ``pattern`` are kept as
``(step, name, statistic)`` for the steps :meth:`Monitor.tic` activates (every
``interval``-th).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from math import sqrt
from typing import Any

from .ndarray import NDArray, norm

__all__ = ["Monitor"]


def _rms(x: NDArray) -> NDArray:
    """The default statistic: ``norm(x) / sqrt(x.size)``."""
    return norm(x) / sqrt(x.size)


class Monitor:
    """Collects ``stat_func(array)`` for arrays whose names match ``pattern`` on every
    ``interval``-th batch; ``sort`` orders the results by name, ``monitor_all`` adds
    every operator's inputs to its outputs."""

    def __init__(self, interval: int, stat_func: Callable[[NDArray], Any] | None = None,
                 pattern: str = ".*", sort: bool = False, monitor_all: bool = False):
        if int(interval) < 1:
            raise ValueError(f"Monitor: interval must be a positive number of batches, got "
                             f"{interval!r}")
        self.interval = int(interval)
        self.stat_func = stat_func or _rms
        self.activated = False
        self.queue: list[tuple[int, str, Any]] = []
        self.step = 0
        self.exes: list[Any] = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

    def stat_helper(self, name: str, array: NDArray) -> None:
        """The executors' callback: record ``array``'s statistic while activated."""
        if self.activated and self.re_prog.match(name):
            self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe: Any) -> None:
        """Watch executor ``exe``."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self) -> None:
        """Start a batch: collect during it if it is an ``interval``-th one."""
        if self.step % self.interval == 0:
            for exe in self.exes:
                for array in exe.arg_arrays:
                    array.wait_to_read()
                for array in exe.aux_arrays:
                    array.wait_to_read()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self) -> list[tuple[int, str, str]]:
        """End the batch: ``(step, name, statistic as text)`` for what was collected,
        the matching arguments and auxiliary states included."""
        if not self.activated:
            return []
        for exe in self.exes:
            for array in exe.arg_arrays:
                array.wait_to_read()
            for array in exe.aux_arrays:
                array.wait_to_read()
        for exe in self.exes:
            for name, array in exe.arg_dict.items():
                self.stat_helper(name, array)
            for name, array in exe.aux_dict.items():
                self.stat_helper(name, array)
        self.activated = False
        queue = sorted(self.queue, key=lambda item: item[1]) if self.sort else self.queue
        results = []
        for step, name, values in queue:
            values = [values] if isinstance(values, NDArray) else list(values)
            text = "".join(f"{v.asnumpy()}\t" for v in values)
            results.append((step, name, text))
        self.queue = []
        return results

    def toc_print(self) -> None:
        """:meth:`toc`, logged at INFO level."""
        for step, name, text in self.toc():
            logging.info("Batch: %7d %30s %s", step, name, text)
