"""MXNet's subgraph machinery: the ``_CachedOp`` operator, a node that runs a whole symbol
held in its attributes, and the ``default`` / ``default_v2`` subgraph backends, which
partition a graph into such nodes by operator names (MXNet's
``src/operator/subgraph/default_subgraph_property*.cc`` and ``build_subgraph.cc``)."""
