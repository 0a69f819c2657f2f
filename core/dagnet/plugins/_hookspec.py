"""Every hook a dagnet plugin can implement.

A plugin is a module (or object) of ``@dagnet.hookimpl`` functions, named
under ``[project.entry-points.dagnet]``.  Each hook is a *registrar*: it
receives a typed registry and calls ``add`` on it.  Hooks are called once,
when the registry is first needed, one plugin at a time, so the registry
knows which distribution provided each name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from ._registry import BackendRegistry, EngineRegistry, GraphPassRegistry, OpRegistry

hookspec = pluggy.HookspecMarker("dagnet")
hookimpl = pluggy.HookimplMarker("dagnet")


@hookspec
def dagnet_register_engines(engines: EngineRegistry) -> None:
    """Add execution engines: ``engines.add(name, factory, aliases=(), override=False)``.

    ``factory()`` returns a new engine instance.  Called when the first engine
    is created or the registry is listed.
    """


@hookspec
def dagnet_register_backends(backends: BackendRegistry) -> None:
    """Add device backends: ``backends.add(backend, override=False)``.

    Registration must be cheap and must not import the backend's array
    library: report missing libraries or devices through
    ``Backend.is_available`` / ``unavailable_reason`` instead.
    """


@hookspec
def dagnet_register_ops(ops: OpRegistry) -> None:
    """Add operators: ``ops.add(op, override=False)``.

    Called when the operator registry is first needed (``dagnet.nd.<op>``,
    ``dagnet ops``).
    """


@hookspec
def dagnet_register_graph_passes(passes: GraphPassRegistry) -> None:
    """Add graph passes: ``passes.add(name, rewrite, backends=(), on_bind=None,
    override=False)``.

    ``rewrite(graph)`` gets a :class:`dagnet.executor.BoundGraph` (a symbol's JSON with
    every node's output shapes and dtypes, the device and the backend options) and
    returns the rewritten JSON, or None to leave the graph as it is.  A pass runs when an
    executor is bound, or, when it names ``backends`` (MXNet's subgraph backends), when
    one of them is asked for (``Symbol.optimize_for(backend)``).  Called when the first
    executor is bound, a backend is asked for, or the registry is listed.
    """
