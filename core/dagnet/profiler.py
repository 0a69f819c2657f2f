"""The profiler (MXNet's ``mx.profiler``): what the engines ran, on which device, when and
for how long, written as a Chrome trace (``chrome://tracing``, Perfetto) and summed up
in the table :func:`dumps` prints.

    mx.profiler.set_config(filename="trace.json", aggregate_stats=True)
    mx.profiler.set_state("run")
    ...                                   # operator calls, executors, autograd
    mx.profiler.set_state("stop")
    mx.profiler.dump()                    # trace.json
    print(mx.profiler.dumps())            # count, total, min, max, average per operator

Records come from the engine listener (``dagnet.engine.add_listener``): one per
function an engine ran -- an operator call, a bundle of them, an executor
segment, a variable deletion (``DeleteVariable``) -- in the domain
``operator``, or ``Custom Operator`` (named ``<op_type>::<name>``) for the
operator calls a Python custom operator made and for its own Python code
(``<op_type>::pure_python``).  With ``profile_memory`` the memory in use on
the device is sampled after each.  Your own code is marked with
:class:`Domain`, :class:`Task`, :class:`Frame`, :class:`Event`,
:class:`Counter` and :class:`Marker`.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from typing import Any

from . import engine as _engine
from . import storage as _storage
from ._errors import DagnetError

__all__ = [
    "Counter", "Domain", "Event", "Frame", "Marker", "ProfilerError", "Task", "dump",
    "dump_profile", "dumps", "pause", "profiler_set_config", "profiler_set_state", "resume",
    "set_config", "set_kvstore_handle", "set_state",
]


class ProfilerError(DagnetError, ValueError):
    """A profiler setting or call that cannot be honoured: an unknown key, state or scope."""


# -- configuration --------------------------------------------------------------------
_DEFAULTS: dict[str, Any] = {
    "filename": "profile.json",
    "profile_all": False,
    "profile_symbolic": True,
    "profile_imperative": True,
    "profile_memory": True,
    "profile_api": True,
    "continuous_dump": False,
    "dump_period": 1.0,
    "aggregate_stats": False,
    "profile_process": "worker",
}
_DOCS = {
    "filename": "the file dump() writes the Chrome trace to",
    "profile_all": "record everything below",
    "profile_symbolic": "record the operators executors run",
    "profile_imperative": "record imperative operator calls",
    "profile_memory": "sample the device memory in use after each operation",
    "profile_api": "record the Python-side objects (Task, Frame, Event, Counter, Marker)",
    "continuous_dump": "dump(finished=False) rewrites the file with everything so far",
    "dump_period": "seconds between continuous dumps (kept for MXNet; dump() writes)",
    "aggregate_stats": "keep the per-operator statistics dumps() returns",
    "profile_process": "'worker' (this process) or 'server' (a KVStore server)",
}
_EPOCH = time.time() - _engine.clock()  # trace timestamps are wall-clock microseconds


def _micros(seconds: float) -> int:
    return int((seconds + _EPOCH) * 1e6)


def _flag(key: str, value: Any) -> bool:
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "0", "false"):
        return value.strip().lower() in ("1", "true")
    if isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    raise ProfilerError(f"set_config: {key}={value!r} must be True or False ({_DOCS[key]})")


def _process(value: Any) -> str:
    if value not in ("worker", "server"):
        raise ProfilerError(f"profile_process must be 'worker' or 'server', got {value!r}")
    if value == "server":
        raise ProfilerError("profile_process='server' profiles a KVStore server process; this "
                            "process runs no server (profile the server in its own process)")
    return value


class _Profiler:
    """The process's profiler: settings, state, the trace so far and the statistics."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.config = dict(_DEFAULTS)
        self.running = False
        self.paused = False
        self.events: list[dict[str, Any]] = []
        self.processes: dict[str, int] = {}  # trace "process" (device or domain) -> pid
        self.times: dict[str, dict[str, list[float]]] = {}  # domain -> name -> [n, sum, lo, hi]
        self.memory: dict[str, list[float]] = {}  # "Memory: cpu/0" -> [n, sum, lo, hi] (kB)
        self.kvstore: Any = None

    # -- recording ---------------------------------------------------------------
    def recording(self) -> bool:
        return self.running and not self.paused

    def pid(self, process: str) -> int:
        pid = self.processes.get(process)
        if pid is None:
            pid = self.processes[process] = len(self.processes)
        return pid

    def add(self, event: dict[str, Any], process: str) -> None:
        event["pid"] = self.pid(process)
        self.events.append(event)

    def count_time(self, domain: str, name: str, millis: float) -> None:
        if not self.config["aggregate_stats"]:
            return
        stats = self.times.setdefault(domain, {}).get(name)
        if stats is None:
            self.times[domain][name] = [1, millis, millis, millis]
        else:
            stats[0] += 1
            stats[1] += millis
            stats[2] = min(stats[2], millis)
            stats[3] = max(stats[3], millis)

    def hear(self, record: _engine.Execution) -> None:
        """The engine listener: one engine function ran."""
        config = self.config
        if not self.recording() or not (config["profile_all"] or config["profile_symbolic"]
                                        or config["profile_imperative"]):
            return
        name = "DeleteVariable" if record.prop is _engine.FnProperty.DELETE_VAR else record.name
        domain = "operator"
        if record.scope is not None:
            domain, name = "Custom Operator", f"{record.scope}::{name}"
        device = f"{record.ctx.device_type}/{record.ctx.device_id}"
        millis = (record.end - record.start) * 1e3
        with self.lock:
            self.add({"name": name, "cat": domain, "ph": "X", "ts": _micros(record.start),
                      "dur": max(_micros(record.end) - _micros(record.start), 0),
                      "tid": record.thread, "args": {"failed": record.failed}}, device)
            self.count_time(domain, name, millis)
        if config["profile_memory"] or config["profile_all"]:
            self.sample_memory(record.ctx, record.end, record.thread)

    def sample_memory(self, ctx: Any, when: float, thread: int) -> None:
        try:
            in_use = _storage.stats(ctx).in_use
        except DagnetError:  # a device without a pool yet: nothing allocated
            return
        name = f"Memory: {ctx.device_type}/{ctx.device_id}"
        with self.lock:
            self.add({"name": name, "cat": "Device Storage", "ph": "C", "ts": _micros(when),
                      "tid": thread, "args": {name: in_use}}, "Device Storage")
            if self.config["aggregate_stats"]:
                kb = in_use / 1e3
                stats = self.memory.get(name)
                if stats is None:
                    self.memory[name] = [1, kb, kb, kb]
                else:
                    stats[0] += 1
                    stats[1] += kb
                    stats[2] = min(stats[2], kb)
                    stats[3] = max(stats[3], kb)

    def api_event(self, event: dict[str, Any], process: str, millis: float | None) -> None:
        """Record an event of a Python-side object (when running and profile_api is on)."""
        if not self.recording() or not (self.config["profile_api"] or
                                        self.config["profile_all"]):
            return
        event.setdefault("tid", threading.get_ident())
        with self.lock:
            self.add(event, process)
            if millis is not None:
                self.count_time(event["cat"], event["name"], millis)

    # -- output --------------------------------------------------------------------
    def trace(self) -> dict[str, Any]:
        with self.lock:
            names = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": process}}
                     for process, pid in self.processes.items()]
            return {"traceEvents": names + list(self.events), "displayTimeUnit": "ms"}

    def statistics(self, sort_by: str, ascending: bool) -> dict[str, Any]:
        key = {"total": 1, "count": 0, "min": 2, "max": 3, "avg": None}[sort_by]

        def order(stats: list[float]) -> float:
            return stats[1] / stats[0] if key is None else stats[key]

        def table(items: dict[str, list[float]], with_total: bool) -> dict[str, Any]:
            ranked = sorted(items.items(), key=lambda kv: order(kv[1]), reverse=not ascending)
            out = {}
            for name, (n, total, low, high) in ranked:
                entry = {"Count": int(n)}
                if with_total:
                    entry["Total"] = round(total, 4)
                entry.update(Min=round(low, 4), Max=round(high, 4), Avg=round(total / n, 4))
                out[name] = entry
            return out

        with self.lock:
            return {
                "Time": {domain: table(items, True)
                         for domain, items in sorted(self.times.items())},
                "Memory": {"Device Storage": table(self.memory, False)} if self.memory else {},
                "Unit": {"Time": "ms", "Memory": "kB"},
            }


_profiler = _Profiler()
_listening = False
_state_lock = threading.Lock()


def set_config(**kwargs: Any) -> None:
    """Set profiler options (any of ``filename``, ``profile_all``, ``profile_symbolic``,
    ``profile_imperative``, ``profile_memory``, ``profile_api``, ``continuous_dump``,
    ``dump_period``, ``aggregate_stats``, ``profile_process``); the others keep their value."""
    unknown = sorted(set(kwargs) - set(_DEFAULTS))
    if unknown:
        known = "\n".join(f"  {k} (default {_DEFAULTS[k]!r}): {_DOCS[k]}" for k in _DEFAULTS)
        raise ProfilerError(f"set_config: unknown option {unknown[0]!r}; the options are:\n"
                            f"{known}")
    parsed = {}
    for key, value in kwargs.items():
        if key == "filename":
            if not isinstance(value, (str, os.PathLike)):
                raise ProfilerError(f"set_config: filename must be a path, got {value!r}")
            parsed[key] = os.fspath(value)
        elif key == "dump_period":
            parsed[key] = float(value)
        elif key == "profile_process":
            parsed[key] = _process(value)
        else:
            parsed[key] = _flag(key, value)
    with _profiler.lock:
        _profiler.config.update(parsed)


def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """Start (``'run'``) or stop (``'stop'``) recording; either ends a :func:`pause`."""
    global _listening
    _process(profile_process)
    if state not in ("run", "stop"):
        raise ProfilerError(f"set_state: state must be 'run' or 'stop', got {state!r}")
    with _state_lock:
        _profiler.running = state == "run"
        _profiler.paused = False
        if _profiler.running and not _listening:
            _engine.add_listener(_profiler.hear)
            _listening = True
        elif not _profiler.running and _listening:
            _engine.remove_listener(_profiler.hear)  # the engines go back to no cost at all
            _listening = False


def pause(profile_process: str = "worker") -> None:
    """Stop recording for a while, keeping the state: :func:`resume` goes on."""
    _process(profile_process)
    _profiler.paused = True


def resume(profile_process: str = "worker") -> None:
    """Record again after :func:`pause`."""
    _process(profile_process)
    _profiler.paused = False


def dump(finished: bool = True, profile_process: str = "worker") -> None:
    """Write the trace recorded so far to the configured ``filename`` (Chrome trace JSON).

    ``finished=True`` ends this trace: what is written is then forgotten, and
    the next dump starts a new one.  ``finished=False`` (continuous dumps)
    keeps it, so each dump rewrites the file with everything so far.
    """
    _process(profile_process)
    trace = _profiler.trace()
    filename = _profiler.config["filename"]
    with open(filename, "w", encoding="utf-8") as file:
        json.dump(trace, file, indent=1)
    if finished:
        with _profiler.lock:
            _profiler.events.clear()
            _profiler.processes.clear()


def dumps(reset: bool = False, format: str = "table", sort_by: str = "total",  # noqa: A002
          ascending: bool = False) -> str:
    """The aggregate statistics (with ``aggregate_stats=True``; else an empty string): per
    domain and name, the count and the total, minimum, maximum and average time in ms,
    and the device memory in use in kB.

    ``format``: ``'table'`` or ``'json'``; ``sort_by``: ``'total'``, ``'avg'``,
    ``'min'``, ``'max'`` or ``'count'``; ``reset``: start the statistics afresh.
    """
    if format not in ("table", "json"):
        raise ProfilerError(f"dumps: format must be 'table' or 'json', got {format!r}")
    if sort_by not in ("total", "avg", "min", "max", "count"):
        raise ProfilerError(f"dumps: sort_by must be one of total, avg, min, max, count, got "
                            f"{sort_by!r}")
    if not _profiler.config["aggregate_stats"]:
        text = ""
    else:
        stats = _profiler.statistics(sort_by, bool(ascending))
        text = json.dumps(stats, indent=4) if format == "json" else _table(stats)
    if reset:
        with _profiler.lock:
            _profiler.times.clear()
            _profiler.memory.clear()
    return text


def _table(stats: dict[str, Any]) -> str:
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for domain, items in stats["Memory"].items():
        lines += [domain, "=================",
                  f"{'Name':<30}{'Total Count':>11}    {'Min Use  (kB)':>13}    "
                  f"{'Max Use  (kB)':>13}    {'Avg Use  (kB)':>13}",
                  f"{'----':<30}{'-----------':>11}    {'-' * 13}    {'-' * 13}    {'-' * 13}"]
        lines += [f"{name:<30}{s['Count']:>11}    {s['Min']:>13.4f}    {s['Max']:>13.4f}    "
                  f"{s['Avg']:>13.4f}" for name, s in items.items()]
        lines.append("")
    for domain, items in stats["Time"].items():
        lines += [domain, "=================",
                  f"{'Name':<30}{'Total Count':>11}    {'Time (ms)':>13}    "
                  f"{'Min Time (ms)':>13}    {'Max Time (ms)':>13}    {'Avg Time (ms)':>13}",
                  f"{'----':<30}{'-----------':>11}    {'---------':>13}    {'-' * 13}    "
                  f"{'-' * 13}    {'-' * 13}"]
        lines += [f"{name:<30}{s['Count']:>11}    {s['Total']:>13.4f}    {s['Min']:>13.4f}    "
                  f"{s['Max']:>13.4f}    {s['Avg']:>13.4f}" for name, s in items.items()]
        lines.append("")
    return "\n".join(lines) + "\n"


def set_kvstore_handle(handle: Any) -> None:
    """Remember the KVStore whose server ``profile_process='server'`` would address (MXNet
    API; dagnet profiles servers in their own processes)."""
    _profiler.kvstore = handle


# -- MXNet's older names ----------------------------------------------------------------
def profiler_set_config(mode: str = "symbolic", filename: str = "profile.json") -> None:
    """Deprecated MXNet spelling: ``set_config(profile_<mode>=True, filename=...)``."""
    if mode not in ("symbolic", "imperative", "api", "memory", "all"):
        raise ProfilerError(f"profiler_set_config: mode must be symbolic, imperative, api, "
                            f"memory or all, got {mode!r}")
    set_config(**{f"profile_{mode}": True, "filename": filename})


def profiler_set_state(state: str = "stop") -> None:
    """Deprecated MXNet spelling of :func:`set_state`."""
    set_state(state)


def dump_profile() -> None:
    """Deprecated MXNet spelling of :func:`dump`."""
    dump(True)


# -- marking your own code ------------------------------------------------------------------
_ids = itertools.count(1)


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str):
        raise ProfilerError(f"{what}: name must be a string, got {type(name).__name__} {name!r}")
    return name


def _check_domain(domain: Any, what: str) -> Domain:
    if not isinstance(domain, Domain):
        raise ProfilerError(f"{what}: domain must be a profiler.Domain, got {domain!r}")
    return domain


class Domain:
    """A named group (a trace "process") for tasks, frames, counters and markers."""

    def __init__(self, name: str):
        self.name = _check_name(name, "Domain")

    def __str__(self) -> str:
        return self.name

    def new_task(self, name: str) -> Task:
        """A :class:`Task` in this domain."""
        return Task(self, name)

    def new_frame(self, name: str) -> Frame:
        """A :class:`Frame` in this domain."""
        return Frame(self, name)

    def new_counter(self, name: str, value: int | None = None) -> Counter:
        """A :class:`Counter` in this domain, optionally set to ``value``."""
        return Counter(self, name, value)

    def new_marker(self, name: str) -> Marker:
        """A :class:`Marker` in this domain."""
        return Marker(self, name)


class _Span:
    """A named stretch of time from :meth:`start` to :meth:`stop`."""

    def __init__(self, name: str, process: str, category: str):
        self.name = name
        self._process, self._category_name = process, category
        self._start: float | None = None

    def start(self) -> None:
        """Begin the stretch."""
        self._start = _engine.clock()

    def stop(self) -> None:
        """End the stretch and record it (if the profiler is recording)."""
        if self._start is None:
            raise ProfilerError(f"{type(self).__name__} {self.name!r}: stop() before start()")
        begin, end, self._start = self._start, _engine.clock(), None
        _profiler.api_event({"name": self.name, "cat": self._category_name, "ph": "X",
                             "ts": _micros(begin), "dur": _micros(end) - _micros(begin)},
                            self._process, (end - begin) * 1e3)

    def __enter__(self) -> _Span:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __str__(self) -> str:
        return self.name


class Task(_Span):
    """A piece of work in a domain, timed from :meth:`start` to :meth:`stop`."""

    def __init__(self, domain: Domain, name: str):
        domain = _check_domain(domain, "Task")
        super().__init__(_check_name(name, "Task"), domain.name, domain.name)
        self.domain = domain


class Frame(_Span):
    """One iteration of a repeated piece of work (a training step) in a domain."""

    def __init__(self, domain: Domain, name: str):
        domain = _check_domain(domain, "Frame")
        super().__init__(_check_name(name, "Frame"), f"{domain.name},frame",
                         f"{domain.name},frame")
        self.domain = domain


class Event(_Span):
    """A timed stretch belonging to no domain."""

    def __init__(self, name: str):
        super().__init__(_check_name(name, "Event"), "event", "event")


class Counter:
    """A named number in a domain, recorded each time it changes."""

    def __init__(self, domain: Domain, name: str, value: int | None = None):
        self.domain = _check_domain(domain, "Counter")
        self.name = _check_name(name, "Counter")
        self._value = 0
        if value is not None:
            self.set_value(value)

    @property
    def value(self) -> int:
        """The current value."""
        return self._value

    def set_value(self, value: int) -> None:
        """Set the counter to ``value`` (a whole number)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProfilerError(f"Counter {self.name!r}: value must be a whole number, got "
                                f"{value!r}")
        self._value = value
        _profiler.api_event({"name": self.name, "cat": self.domain.name, "ph": "C",
                             "ts": _micros(_engine.clock()), "args": {self.name: value}},
                            self.domain.name, None)

    def increment(self, delta: int = 1) -> None:
        """Add ``delta``."""
        self.set_value(self._value + delta)

    def decrement(self, delta: int = 1) -> None:
        """Subtract ``delta``."""
        self.set_value(self._value - delta)

    def __iadd__(self, delta: int) -> Counter:
        self.increment(delta)
        return self

    def __isub__(self, delta: int) -> Counter:
        self.decrement(delta)
        return self

    def __str__(self) -> str:
        return self.name


_MARK_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class Marker:
    """A point in time worth seeing in the trace."""

    def __init__(self, domain: Domain, name: str):
        self.domain = _check_domain(domain, "Marker")
        self.name = _check_name(name, "Marker")

    def mark(self, scope: str = "process") -> None:
        """Record the marker now; ``scope`` is how far it reaches in the trace viewer
        (``'global'``, ``'process'``, ``'thread'``, ``'task'`` or ``'marker'``)."""
        if scope not in _MARK_SCOPES:
            raise ProfilerError(f"Marker {self.name!r}: scope must be one of "
                                f"{', '.join(sorted(_MARK_SCOPES))}, got {scope!r}")
        process = f"{self.domain.name},instant_marker"
        _profiler.api_event({"name": self.name, "cat": process, "ph": "i",
                             "ts": _micros(_engine.clock()), "s": _MARK_SCOPES[scope]},
                            process, None)

    def __str__(self) -> str:
        return self.name
