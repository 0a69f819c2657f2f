"""The errors of ``dagnet.gluon``: each an ``MXNetError`` and the builtin MXNet 1.x raises in
the same place (Gluon's own checks are ``assert`` statements in MXNet, hence the
``AssertionError`` ones), so ``except AssertionError`` and ``except MXNetError`` both work."""

from __future__ import annotations

from .._errors import DagnetError

__all__ = ["DeferredInitializationError", "GluonAssertionError", "GluonError",
           "GluonValueError", "GluonTypeError"]


class GluonError(DagnetError):
    """A Gluon object used in a state that does not allow it (a ``RuntimeError``): a
    parameter read before it is initialized, or on a context it does not live on."""


class DeferredInitializationError(GluonError):
    """A parameter whose shape is not known yet was read; its initialization happens at
    the first forward pass, which infers the shape from the data."""


class GluonAssertionError(DagnetError, AssertionError):
    """A Gluon argument that contradicts what is already there (a shape, dtype or name
    mismatch), an ``AssertionError`` as in MXNet."""


class GluonValueError(DagnetError, ValueError):
    """A Gluon argument with a bad value."""


class GluonTypeError(DagnetError, TypeError):
    """A Gluon argument of the wrong type."""
