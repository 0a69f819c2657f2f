"""Control-flow operators (MXNet's ``src/operator/control_flow.cc``): ``_foreach``,
``_while_loop`` and ``_cond`` run a subgraph -- a symbol traced from the user's Python
function by ``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond``, carried as its JSON in
the ``subgraph`` parameter -- as often as their inputs say."""
