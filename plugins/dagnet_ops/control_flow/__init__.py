"""Control-flow operators (MXNet's ``src/operator/control_flow.cc``): ``_foreach``,
``_while_loop`` and ``_cond`` run a subgraph -- a symbol traced from the user's Python
function by ``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond``, carried in the
``subgraphs`` parameter as a JSON list of graphs, where MXNet's symbol files keep them --
as often as their inputs say.  ``num_args`` counts the subgraphs and the node's inputs, as
MXNet's does.  ``_CachedOp`` runs its subgraph once: the node MXNet's subgraph backends
partition graphs into."""
