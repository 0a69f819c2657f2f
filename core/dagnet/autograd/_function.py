"""``autograd.Function``: a differentiable function with a hand-written gradient.

As in MXNet 1.x, a subclass defines ``forward(*inputs)`` and
``backward(*output_grads)`` on NDArrays; calling an instance inside
``record()`` runs ``forward`` with recording off and puts one node in the
graph whose gradient is ``backward``.  Each instance is called once (it keeps
what ``save_for_backward`` stored for that call).
"""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..operator import Gradient, NoGradient
from ._composed import entry_view
from ._errors import AutogradError
from ._graph import Node, in_graph, record_call
from ._mode import _Scope, is_recording

__all__ = ["Function", "FunctionCall", "Unrecorded", "unrecorded_gradient"]


class _FunctionOp:
    """What the backward pass asks of a recorded call's operator: its gradient rule."""

    gradient = Gradient("Function.backward", uses=("out_grad",))


class FunctionCall:
    """The record of one :class:`Function` call, in the place of an operator call."""

    op = _FunctionOp
    mutated = ()

    def __init__(self, function: Function, num_outputs: int):
        self.function = function
        self.name = f"{type(function).__name__} (autograd.Function)"
        self.n_visible = num_outputs


class _UnrecordedOp:
    """The operator of an :class:`Unrecorded` call: a backward result without a gradient."""

    is_backward = True

    def __init__(self, reason: str):
        self.gradient = NoGradient(reason)


class Unrecorded:
    """The record of a gradient that Python code computed outside the graph while the
    backward pass recorded (``create_graph=True``): differentiating it again is refused."""

    mutated = ()
    n_visible = 1

    def __init__(self, function_name: str):
        self.name = f"{function_name}.backward"
        self.op = _UnrecordedOp(
            f"{function_name}.backward computed this gradient outside the recorded graph "
            f"(from arrays in no graph, or by running an executor), so it cannot be "
            f"differentiated again; an autograd.Function's backward must compute it with "
            f"NDArray operations on its head gradients and saved arrays, and a hybridized "
            f"Gluon block runs its backward through its executor: call hybridize(False) on "
            f"it for higher-order gradients (or hybridize(inline_limit=n) with n at least "
            f"its number of operators, which records them one by one)")


def unrecorded_gradient(node: Node, result: NDArray) -> NDArray:
    """``result``, a gradient the Python backward of the Function ``node`` computed outside
    every graph while ``create_graph`` recorded, as the output of a node that refuses to be
    differentiated (its parents are ``node``'s, so it is reached, and refused, exactly when
    a gradient through it is asked for)."""
    name = type(node.call.function).__name__
    opaque = Node(Unrecorded(name), list(node.parents), [], [result])
    return entry_view(result, (opaque, 0))


class Function:
    """Subclass and define ``forward`` and ``backward`` (MXNet's ``autograd.Function``).

    ``forward`` takes and returns NDArrays (one or a tuple) and may keep what the
    gradient needs with :meth:`save_for_backward`; ``backward`` takes one gradient
    per output and returns one per input, each of its input's shape.
    """

    #: the operator a call is shown as in :func:`get_symbol`'s graph (MXNet's name)
    graph_op_name = "_CustomFunction"

    def __init__(self) -> None:
        self._used = False
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *args: Any) -> None:
        """Keep ``args`` for :meth:`backward` as ``self.saved_tensors``."""
        self.saved_tensors = args

    def forward(self, *inputs: NDArray) -> NDArray | tuple[NDArray, ...]:
        """The function's value; override it."""
        raise NotImplementedError(f"{type(self).__name__} must define forward(self, *inputs)")

    def backward(self, *output_grads: NDArray) -> NDArray | tuple[NDArray, ...]:
        """One gradient per input from one per output; override it."""
        raise NotImplementedError(f"{type(self).__name__} must define backward(self, "
                                  f"*output_grads)")

    def __call__(self, *inputs: NDArray) -> NDArray | tuple[NDArray, ...]:
        if self._used:
            raise AutogradError(f"this {type(self).__name__} instance was called already; each "
                                f"Function instance is called once (it keeps that call's saved "
                                f"tensors): create another instance")
        self._used = True
        for index, array in enumerate(inputs):
            if not isinstance(array, NDArray):
                raise TypeError(f"{type(self).__name__}: input {index} must be an NDArray, got "
                                f"{type(array).__name__}")
        recording = is_recording()
        with _Scope(recording=False, training=None):
            result = self.forward(*inputs)
        single = isinstance(result, NDArray)
        outputs = [result] if single else list(result) if isinstance(result, (list, tuple)) \
            else None
        if not outputs or not all(isinstance(o, NDArray) for o in outputs):
            raise TypeError(f"{type(self).__name__}.forward must return an NDArray or a tuple "
                            f"of NDArrays, got {type(result).__name__}")
        if recording:
            self._record(inputs, outputs)
        return result

    def _record(self, inputs: tuple, outputs: list[NDArray]) -> None:
        if any(o is a for o in outputs for a in inputs) and any(map(in_graph, inputs)):
            raise AutogradError(f"{type(self).__name__}.forward returned one of its inputs; "
                                f"return a new array (x.copy()) so the output can have its own "
                                f"place in the graph")
        record_call(FunctionCall(self, len(outputs)), inputs, outputs, None)

    def gradients_into(self, node: Node, head_grads: list[NDArray],
                       targets: list[tuple[NDArray, str] | None],
                       needed: list[bool]) -> list[NDArray | None]:
        """:meth:`gradients`, told where they end: ``targets[i]`` is ``(array, req)``
        when input ``i``'s gradient is all its variable gets, so it may be written
        (``req='write'``) or added (``'add'``) straight into ``array``, its ``.grad``;
        otherwise None.  ``needed[i]`` is False where nobody uses input ``i``'s
        gradient.  Returns one entry per input: the gradient, or None where it went
        into its target or is not needed.  This class writes nothing there; a subclass
        that can compute into given arrays (a hybridized block's executor) overrides it
        to save buffers and copies."""
        return self.gradients(node, head_grads)

    def gradients(self, node: Node, head_grads: list[NDArray]) -> list[NDArray]:
        """``backward`` on the head gradients, checked against the inputs (called by the
        backward pass, with recording off)."""
        result = self.backward(*head_grads)
        grads = [result] if isinstance(result, NDArray) else list(result)
        name = type(self).__name__
        if len(grads) != len(node.in_meta):
            raise AutogradError(f"{name}.backward returned {len(grads)} gradient(s) but forward "
                                f"took {len(node.in_meta)} input(s); return one per input")
        for index, (grad, (shape, _)) in enumerate(zip(grads, node.in_meta)):
            if not isinstance(grad, NDArray) or grad.shape != shape:
                got = grad.shape if isinstance(grad, NDArray) else type(grad).__name__
                raise AutogradError(f"{name}.backward: gradient {index} is {got}, but input "
                                    f"{index} has shape {shape}; return an NDArray of the "
                                    f"input's shape")
        return grads
