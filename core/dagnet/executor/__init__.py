"""``dagnet.executor``: symbols bound to arrays and run (MXNet's graph executor).

>>> import dagnet as mx
>>> net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")
>>> ex = net.simple_bind(mx.cpu(), data=(2, 3))
>>> ex.forward(is_train=True)[0].shape
(2, 4)
>>> ex.backward(out_grads=mx.nd.ones((2, 4)))
>>> ex.grad_dict["fc_bias"].asnumpy()
array([2., 2., 2., 2.], dtype=float32)

The executor adds the backward steps from every operator's gradient rule,
plans memory from the operators' declarations (``dagnet.config`` key
``memory_plan``, ``DAGNET_MEMORY_PLAN=0`` turns planning off) and pushes
every node to the engine.  ``group2ctx`` runs each ``ctx_group`` of nodes on its
own device (model parallelism), with copies where the graph crosses devices.
Graph passes that plugins register rewrite a bound graph first (see
:class:`BoundGraph`; ``dagnet.config`` keys ``graph_passes`` and
``disabled_graph_passes``); those serving a subgraph backend (MXNet's ``MKLDNN``,
``default``) run on request: :func:`optimize_for` (``Symbol.optimize_for``), or at bind
through ``dagnet.config`` key ``subgraph_backend`` (``MXNET_SUBGRAPH_BACKEND``), with the
options :func:`set_backend_options` keeps.  An executor bound without gradients runs the
graph the passes rewrote for inference.
"""

from __future__ import annotations

from ._bind import bind, simple_bind
from ._cached_op import CachedOp, CachedOpError
from ._executor import Executor, UnknownArgumentError, UnknownParameterError
from ._graph_passes import (
    BoundGraph,
    GraphPassError,
    backend_options,
    clear_backend_options,
    disabled_graph_passes,
    set_backend_options,
)
from ._optimize_for import optimize_for

__all__ = ["BoundGraph", "CachedOp", "CachedOpError", "Executor", "GraphPassError",
           "UnknownArgumentError", "UnknownParameterError", "backend_options", "bind",
           "clear_backend_options", "disabled_graph_passes", "optimize_for",
           "set_backend_options", "simple_bind"]
