"""What autograd raises; every class derives from :class:`dagnet.DagnetError`."""

from __future__ import annotations

from ..runtime import AutogradError

__all__ = ["AutogradError", "AutogradArgumentError", "NotDifferentiableError",
           "HigherOrderGradientError"]


class AutogradArgumentError(AutogradError, ValueError):
    """A bad argument: head gradients of the wrong count or shape, an unknown
    ``grad_req``, a variable that does not require a gradient."""


class NotDifferentiableError(AutogradError):
    """The gradient runs through something without a gradient: an operator declaring
    ``NoGradient`` (or no rule at all), or an index form autograd cannot record."""


class HigherOrderGradientError(NotDifferentiableError, NotImplementedError):
    """A gradient of a gradient (``grad(..., create_graph=True)`` differentiated again)
    runs through a backward operator that declares no gradient of its own."""
