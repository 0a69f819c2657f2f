"""``dagnet.numpy_extension`` (``mx.npx``): MXNet 1.x's operators that NumPy lacks, for
``mx.np`` arrays, and the switches of NumPy semantics.

>>> import dagnet as mx
>>> mx.npx.set_np()
>>> mx.npx.relu(mx.np.array([-1.0, 2.0]))
array([0., 2.])
>>> mx.npx.reset_np()

Each operator function is the registered operator of MXNet's legacy name
(``npx.fully_connected`` is ``FullyConnected``, ``npx.batch_norm`` is
``BatchNorm`` ...), called with MXNet's arguments; its results are
``mx.np.ndarray``.  A name outside this subset raises an ``AttributeError``
saying so.
"""

from __future__ import annotations

from typing import Any

from ..context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from ..util import (
    is_np_array,
    is_np_shape,
    np_array,
    np_shape,
    reset_np,
    set_np,
    use_np,
    use_np_array,
    use_np_shape,
)
from . import random
from ._nonzero import nonzero
from ._operators import OPERATORS, load, operator_function, reshape, save, waitall

__all__ = [
    "Context", "cpu", "cpu_pinned", "current_context", "gpu", "is_np_array", "is_np_shape",
    "load", "nonzero", "np_array", "np_shape", "num_gpus", "random", "reset_np", "reshape",
    "save", "set_np",
    "use_np", "use_np_array", "use_np_shape", "waitall", *sorted(OPERATORS),
]

globals().update({name: operator_function(name, op) for name, op in OPERATORS.items()})


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(f"module 'dagnet.numpy_extension' has no attribute {name!r}")
    from ..numpy import NotProvidedError

    raise NotProvidedError(f"dagnet.numpy_extension does not provide {name!r} yet; see "
                           f"dagnet.numpy_extension.__all__ for what it has")
