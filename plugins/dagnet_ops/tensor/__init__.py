"""The tensor operators of MXNet 1.x (``src/operator/tensor``), written once against ``xp``.

One module per family, each listing its operators in ``OPS``:

- :mod:`.elemwise_unary`: ``exp``, ``relu``, ``clip``, ``Cast``, ``BlockGrad`` ...
- :mod:`.elemwise_binary`: ``elemwise_*`` (same shapes) and ``broadcast_*`` (numpy broadcasting)
- :mod:`.scalar`: ``_plus_scalar`` ... (what ``NDArray + 2`` calls)
- :mod:`.reduce`: ``sum``, ``mean``, ``max``, ``norm``, ``argmax`` ...
- :mod:`.shape`: ``Reshape``, ``transpose``, ``Concat``, ``slice``, ``tile``, ``broadcast_to`` ...
- :mod:`.indexing`: ``take``, ``pick``, ``one_hot``, ``where``, ``gather_nd``, ``batch_take``
- :mod:`.dot`: ``dot``, ``batch_dot``
- :mod:`.sort`: ``sort``, ``argsort``, ``topk``
- :mod:`.creation`: ``_zeros``, ``_ones``, ``_full``, ``_arange``, ``_eye``, ``zeros_like``,
  ``ones_like``

Shared helpers live in the private modules ``_common`` (kernels, inference,
backward records) and ``_sampling`` (hypothesis draws for the conformance
suite; hypothesis is imported only when a case is drawn).
"""
