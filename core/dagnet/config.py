"""dagnet's configuration: typed keys, environment variables and scoped overrides.

Lookup order for a key: the innermost active ``with config.set(...)`` scope,
then values set without ``with``, then the environment variable
``DAGNET_<KEY>`` (upper case), then the default.  The engine also accepts
MXNet's ``MXNET_ENGINE_TYPE`` names, ``cpu_workers`` MXNet's
``MXNET_CPU_WORKER_NTHREADS`` and ``subgraph_backend`` MXNet's
``MXNET_SUBGRAPH_BACKEND``.

>>> import dagnet
>>> with dagnet.config.set(engine="naive"):
...     dagnet.config.get("engine")
'naive'
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._errors import ConfigError

__all__ = ["Key", "keys", "get", "set", "refresh", "describe", "generation"]


@dataclass(frozen=True)
class Key:
    """One configuration key: its type, default, description and validator."""

    name: str
    type: type
    default: Any
    description: str
    check: Callable[[Any], str | None] | None = None

    @functools.cached_property
    def env_var(self) -> str:
        return "DAGNET_" + self.name.upper()


def _positive(value: Any) -> str | None:
    return None if value >= 1 else "must be at least 1"


def _non_negative(value: Any) -> str | None:
    return None if value >= 0 else "must be 0 or more"


def _choice(*choices: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in choices else f"expected one of {', '.join(choices)}"

    return check


_KEYS: dict[str, Key] = {
    key.name: key
    for key in [
        Key("engine", str, "threaded_per_device",
            "execution engine: naive, threaded, threaded_per_device or a plugin's engine"),
        Key("cpu_workers", int, 1,
            "worker threads per CPU device for the threaded engines, 0 for one per core "
            "(MXNet's MXNET_CPU_WORKER_NTHREADS is read too; one by default, as there: "
            "kernels have BLAS threads of their own)",
            lambda v: None if v >= 0 else "must be 0 (one per core) or more"),
        Key("cpu_kernel_threads", int, 1,
            "threads one CPU kernel may split its work over (convolution: blocks of samples); "
            "each calls BLAS, which keeps its own thread count", _positive),
        Key("cpu_onednn", bool, True,
            "float32 convolutions and max pooling on the CPU run oneDNN's kernels when its "
            "library is installed (pip install onednn-cpu-gomp); off, or without it, numpy's"),
        Key("cpu_jit", bool, True,
            "BatchNorm and the SGD and Adam updates on float32 and float64 CPU data run "
            "kernels compiled with numba when numba is installed (pip install numba); off, "
            "or without it, numpy's"),
        Key("engine_inline_bytes", int, 16384,
            "the largest function (the bytes it reads and writes, where its pusher says, as "
            "imperative operators do) a threaded engine runs on the pushing thread when it "
            "has nothing outstanding: handing it to a worker would cost more than it takes; "
            "0 never does", _non_negative),
        Key("engine_max_pending", int, 16,
            "functions a pushing thread may have outstanding on a threaded engine before a "
            "push waits for the workers to catch up (the bound doubles while functions are "
            "quick, up to 8 times this)", _positive),
        Key("engine_switch_interval", float, 0.0002,
            "seconds a thread waiting for Python's interpreter lock waits before the thread "
            "holding it must hand it over (sys.setswitchinterval), set from when a threaded "
            "engine's workers start if Python's is longer: with Python's 0.005, a worker "
            "that finishes a kernel while the pushing thread runs Python waits up to that "
            "long to go on; Python's is put back while the workers' functions take "
            "microseconds; 0 leaves Python's setting alone",
            lambda v: None if v >= 0 else "must be 0 (leave Python's) or more"),
        Key("engine_exit_timeout", float, 5.0,
            "seconds interpreter exit waits for an engine's outstanding functions before it "
            "warns, naming them, and exits anyway",
            _non_negative),
        Key("engine_fork_timeout", float, 2.0,
            "seconds os.fork() (and multiprocessing's fork, a DataLoader's worker processes) "
            "waits for the engines' outstanding functions before it forks anyway: the parent "
            "keeps that work, and the child, which never runs it, reports what it writes as "
            "failed (EngineForkError) at a wait there",
            _non_negative),
        Key("gpu_workers", int, 1, "compute workers (each with its own stream) per GPU", _positive),
        Key("copy_workers", int, 1, "copy workers per GPU and direction", _positive),
        Key("priority_workers", int, 1, "workers of the per-device engine's priority lane",
            _positive),
        Key("storage_pool", str, "exact",
            "storage pool policy: exact (reuse blocks of the same rounded size), "
            "round (round up to a power of two) or unpooled",
            _choice("exact", "round", "unpooled")),
        Key("storage_pool_limit", int, 1 << 30,
            "bytes of freed blocks one device's pool keeps for reuse; a block freed beyond "
            "that goes back to the device (host memory held idle by a pool is memory the "
            "operating system cannot give elsewhere), 0 for no limit",
            lambda v: None if v >= 0 else "must be 0 (no limit) or more"),
        Key("temp_space_copies", int, 4,
            "temp-space buffers per device handed out round-robin", _positive),
        Key("memory_plan", bool, True,
            "executors plan memory: outputs computed in place over inputs nothing else reads, "
            "and inner buffers reused once their last reader ran; off gives every buffer its "
            "own block (same results, more memory)"),
        Key("eliminate_common_expr", bool, True,
            "executors merge operator nodes that compute the same thing from the same inputs "
            "before planning (MXNet's MXNET_ELIMINATE_COMMON_EXPR is read too)"),
        Key("graph_passes", bool, True,
            "executors run the installed graph passes (`dagnet plugins` lists them; the "
            "built-in 'nchw16c_layout' keeps convolution networks' float32 CPU activations "
            "in oneDNN's blocked layout) on the graph before planning"),
        Key("subgraph_backend", str, "",
            "the subgraph backend whose graph passes executors run at bind instead of the "
            "every-bind ones (MXNet's MXNET_SUBGRAPH_BACKEND is read too): a backend name "
            "such as 'default', 'NONE' for no pass at all, empty for the every-bind passes"),
        Key("disabled_graph_passes", str, "",
            "comma-separated names of graph passes executors do not run (`dagnet plugins` "
            "lists the passes), e.g. DAGNET_DISABLED_GRAPH_PASSES=fold_batch_norm,fuse_conv"),
        Key("exec_bulk_size", int, 15,
            "executors push a chain of up to this many nodes, and autograd's backward pass "
            "up to this many backward operators, as one engine operation (MXNet's bulk "
            "execution); 1 pushes every node on its own", _positive),
        Key("exec_bulk_inference", bool, True,
            "executors run a forward pass outside training as one engine operation per "
            "device, whatever its branches, as MXNet does (MXNET_EXEC_BULK_EXEC_INFERENCE "
            "is read too); 0 bulks it as a training pass (exec_bulk_size), so that "
            "independent branches can run at the same time on the threaded engines"),
        Key("exec_replay", bool, True,
            "executors run a chain of nodes again by the calls its kernels offered (oneDNN's "
            "primitives on the nodes' arrays) while those hold, instead of through each "
            "kernel's checks; 0 always runs the kernels"),
        Key("autoload_plugins", bool, True,
            "load plugins from the 'dagnet' entry points (DAGNET_DISABLE_PLUGIN_AUTOLOAD=1 "
            "turns it off as well)"),
    ]
}

_MXNET_ENGINES = {
    "NaiveEngine": "naive",
    "ThreadedEngine": "threaded",
    "ThreadedEnginePooled": "threaded",
    "ThreadedEnginePerDevice": "threaded_per_device",
}

_lock = threading.RLock()
_global: dict[str, Any] = {}
_scopes: list[dict[str, Any]] = []
_generation = 0  # bumped whenever a value is set, a scope entered or left, or refresh()


def generation() -> int:
    """A number that changes whenever a configured value may have changed.

    Hot paths cache what they derive from config (the current engine, say) and
    recompute only when this moves.  Environment variables are not watched.
    """
    return _generation


def _bump() -> None:
    global _generation
    _generation += 1


def keys() -> dict[str, Key]:
    """All known keys by name."""
    return dict(_KEYS)


def _key(name: str) -> Key:
    key = _KEYS.get(name) if isinstance(name, str) else None
    if key is None:
        raise ConfigError(
            f"unknown config key {name!r}; expected one of {', '.join(sorted(_KEYS))}"
        )
    return key


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _a(type_: type) -> str:
    name = type_.__name__
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def _parse_env(key: Key, raw: str, variable: str | None = None) -> Any:
    """A value of ``key``'s type from the text of its environment variable (``variable``,
    default ``DAGNET_<KEY>``)."""
    variable = variable or key.env_var
    text = raw.strip().lower()
    if key.type is bool:
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
    elif key.type is int or key.type is float:
        try:
            return key.type(text)
        except ValueError:
            pass
    else:
        return raw.strip()
    spelled = {bool: f"one of {', '.join(_TRUE + _FALSE)}", int: "a whole number",
               float: "a number"}[key.type]
    raise ConfigError(
        f"config key {key.name!r} from environment variable {variable} is {raw!r}, "
        f"which is not {_a(key.type)}; set {variable} to {spelled}, or unset it"
    )


def _coerce(key: Key, value: Any, source: str) -> Any:
    """Insist on the declared type (strings are parsed only from the environment; a
    whole number is a float too)."""
    if key.type is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if key.type is int and isinstance(value, bool) or not isinstance(value, key.type):
        raise ConfigError(
            f"config key {key.name!r} from {source} must be {_a(key.type)}, "
            f"got {type(value).__name__} {value!r}: {key.description}"
        )
    problem = key.check(value) if key.check else None
    if problem:
        raise ConfigError(f"config key {key.name!r} from {source} is {value!r}: {problem}")
    return value


def get(name: str) -> Any:
    """The current value of ``name`` (scope, then global, then environment, then default).

    Kernels ask at every call, so the common case -- nothing set, no variable -- is kept
    short: the lock is taken only while values are set."""
    key = _KEYS.get(name) if type(name) is str else None
    if key is None:
        key = _key(name)
    if _scopes or _global:
        with _lock:
            for scope in reversed(_scopes):
                if name in scope:
                    return scope[name]
            if name in _global:
                return _global[name]
    if name == "autoload_plugins" and os.environ.get("DAGNET_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    raw = os.environ.get(key.env_var)
    if raw is not None and raw != "":
        return _coerce(key, _parse_env(key, raw), f"environment variable {key.env_var}")
    if name in _MXNET_VARIABLES:
        return _from_mxnet_variables(key)
    return key.default


# keys that MXNet's own environment variables also set: those read as the key's own
# variable would be, and the two below whose values MXNet spells otherwise
_MXNET_VARIABLE = {"eliminate_common_expr": "MXNET_ELIMINATE_COMMON_EXPR",
                   "cpu_workers": "MXNET_CPU_WORKER_NTHREADS",
                   "exec_bulk_inference": "MXNET_EXEC_BULK_EXEC_INFERENCE"}
_MXNET_VARIABLES = frozenset({"engine", "subgraph_backend", *_MXNET_VARIABLE})


def _from_mxnet_variables(key: Key) -> Any:
    """:func:`get` of a key in ``_MXNET_VARIABLES`` when neither a value nor its own
    variable is set: MXNet's variable, else the default."""
    name = key.name
    if name == "engine" and os.environ.get("MXNET_ENGINE_TYPE"):
        mx_name = os.environ["MXNET_ENGINE_TYPE"]
        return _MXNET_ENGINES.get(mx_name, mx_name)
    if name == "subgraph_backend" and os.environ.get("MXNET_SUBGRAPH_BACKEND"):
        return os.environ["MXNET_SUBGRAPH_BACKEND"].strip()
    variable = _MXNET_VARIABLE.get(name)
    if variable and os.environ.get(variable):
        return _coerce(key, _parse_env(key, os.environ[variable], variable),
                       f"environment variable {variable}")
    return key.default


def canonical_engine_name(name: str) -> str:
    """Map MXNet's engine type names (``ThreadedEnginePerDevice``) to dagnet's."""
    return _MXNET_ENGINES.get(name, name)


class set:  # noqa: A001 - mirrors dask.config.set
    """Set configuration values, for good or, used with ``with``, for a scope.

    ``dagnet.config.set(engine="naive")`` changes the value for the process;
    ``with dagnet.config.set(engine="naive"): ...`` changes it until the block
    ends.  Values are checked against the key's type at once.
    """

    def __init__(self, values: dict[str, Any] | None = None, **kwargs: Any):
        updates = {**(values or {}), **kwargs}
        checked = {
            name: _coerce(_key(name), value, "dagnet.config.set") for name, value in updates.items()
        }
        with _lock:
            self._previous = {name: _global.get(name, _MISSING) for name in checked}
            _global.update(checked)
            _bump()
        self._values = checked

    def __enter__(self) -> set:
        with _lock:
            # Undo the global write and hold the values in a scope instead.
            for name, old in self._previous.items():
                if old is _MISSING:
                    _global.pop(name, None)
                else:
                    _global[name] = old
            _scopes.append(self._values)
            _bump()
        return self

    def __exit__(self, *exc: object) -> None:
        with _lock:
            # By identity: equal scopes may be nested, and refresh() may have
            # cleared this one already.
            for index in range(len(_scopes) - 1, -1, -1):
                if _scopes[index] is self._values:
                    del _scopes[index]
                    break
            _bump()


_MISSING = object()


def refresh() -> None:
    """Forget every value set in this process (scopes included); defaults and env remain."""
    with _lock:
        _global.clear()
        _scopes.clear()
        _bump()


def describe() -> str:
    """A table of every key with its current value, for ``dagnet config``."""
    rows = [f"{k.name:<20} {get(k.name)!r:<24} {k.description}" for k in _KEYS.values()]
    return "\n".join(rows)
