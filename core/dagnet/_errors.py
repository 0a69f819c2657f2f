"""The exception hierarchy: every dagnet error derives from :class:`DagnetError`
and from the builtin that fits, so ``except KeyError`` keeps working."""

from __future__ import annotations

from typing import Any

__all__ = [
    "DagnetError",
    "ConfigError",
    "PluginError",
    "DuplicateRegistrationError",
    "UnknownNameError",
    "EngineError",
    "EngineTypeError",
    "DeletedVariableError",
    "OperatorFailedError",
    "OperatorFailedIndexError",
    "OperatorFailedValueError",
    "OperatorFailedTypeError",
    "OperatorFailedAttributeError",
    "OperatorFailedNotImplementedError",
    "EngineDeadlockError",
    "EngineTimeoutError",
    "EngineForkError",
    "BackendUnavailableError",
    "StorageError",
    "ParamError",
    "ShapeError",
    "DTypeError",
    "OperatorError",
    "ContextError",
    "ResourceError",
    "NotImplementedForSymbol",
]


class DagnetError(RuntimeError):
    """Root of every error raised by dagnet: MXNet's ``MXNetError`` (``dagnet.base``), a
    ``RuntimeError`` as MXNet's is."""


class ConfigError(DagnetError, ValueError):
    """A configuration key is unknown or its value has the wrong type or range."""


class PluginError(DagnetError, RuntimeError):
    """A plugin could not be loaded or broke while registering."""


class DuplicateRegistrationError(PluginError, ValueError):
    """Two providers registered the same name without ``override=True``."""


class UnknownNameError(DagnetError, KeyError):
    """An engine, backend or operator name that no plugin registered."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class EngineError(DagnetError, RuntimeError):
    """Misuse of the dependency engine."""


class EngineTypeError(EngineError, TypeError):
    """An engine call got the wrong kind of argument: a function that is not
    callable, a variable not from ``new_var``, a context that is not a Context."""


class DeletedVariableError(EngineError, ValueError):
    """A variable was used after ``delete_var`` (or an operator after ``delete_operator``)."""


class OperatorFailedError(EngineError):
    """A pushed function raised; re-raised at a wait on an affected variable.

    ``operator`` names the function that failed, ``original`` is its exception
    (also chained as ``__cause__``, so the original traceback is printed).
    """

    def __init__(self, message: str, operator: str, original: BaseException):
        super().__init__(message)
        self.operator = operator
        self.original = original

    @staticmethod
    def wrapping(message: str, operator: str, original: BaseException) -> OperatorFailedError:
        """The error a wait raises for ``original``: an :class:`OperatorFailedError` that is
        also the builtin type MXNet raises for such a failure (``IndexError``,
        ``ValueError``, ``TypeError``, ``AttributeError``, ``NotImplementedError``, as
        ``mxnet.error`` maps them), so ``except IndexError`` catches an out-of-bounds
        index found inside a kernel while the message stays dagnet's."""
        for builtin, error_class in _FAILED_AS:
            if isinstance(original, builtin):
                return error_class(message, operator, original)
        return OperatorFailedError(message, operator, original)


class OperatorFailedIndexError(OperatorFailedError, IndexError):
    """A pushed function raised an ``IndexError`` (MXNet's ``mxnet.error.IndexError``)."""


class OperatorFailedValueError(OperatorFailedError, ValueError):
    """A pushed function raised a ``ValueError`` (MXNet's ``mxnet.error.ValueError``)."""


class OperatorFailedTypeError(OperatorFailedError, TypeError):
    """A pushed function raised a ``TypeError`` (MXNet's ``mxnet.error.TypeError``)."""


class OperatorFailedAttributeError(OperatorFailedError, AttributeError):
    """A pushed function raised an ``AttributeError`` (MXNet's ``mxnet.error.AttributeError``)."""


class OperatorFailedNotImplementedError(OperatorFailedError, NotImplementedError):
    """A pushed function raised a ``NotImplementedError`` (MXNet's
    ``mxnet.error.NotImplementedError``)."""


_FAILED_AS = (
    (NotImplementedError, OperatorFailedNotImplementedError),
    (IndexError, OperatorFailedIndexError),
    (ValueError, OperatorFailedValueError),
    (TypeError, OperatorFailedTypeError),
    (AttributeError, OperatorFailedAttributeError),
)


class EngineDeadlockError(EngineError):
    """A wait from inside an engine function that could only deadlock."""


class EngineTimeoutError(EngineError, TimeoutError):
    """A wait ran past its timeout; the message names who holds the variable."""


class EngineForkError(EngineError):
    """A function was outstanding when the process forked: the child never ran it, so
    what it writes is undefined there (raised in the child, wrapped in
    :class:`OperatorFailedError`, at a wait on what it writes)."""


class BackendUnavailableError(DagnetError, RuntimeError):
    """A device backend is registered but cannot run here (no library, no device)."""


class StorageError(DagnetError, ValueError):
    """Misuse of the storage manager: double free, foreign handle, bad size."""


class ParamError(DagnetError, ValueError):
    """An operator parameter is unknown, missing, mistyped or out of range."""


class ShapeError(DagnetError, ValueError):
    """Shapes that an operator cannot accept, or that contradict each other."""


class DTypeError(DagnetError, TypeError):
    """A dtype an operator does not support, or dtypes that contradict each other."""


class OperatorError(DagnetError, ValueError):
    """Misuse of an operator: wrong number of inputs, no kernel for a device, mixed devices."""


class ContextError(DagnetError, ValueError):
    """A device context that cannot exist: a bad device type or device id."""


class ResourceError(DagnetError, ValueError):
    """A bad resource request or random seed: unknown kind, not a context, negative seed."""


class NotImplementedForSymbol(DagnetError, NotImplementedError):
    """An NDArray-only operation asked of a Symbol (its truth value, for one).

    Raised with a message, or as MXNet raises it: ``(function, alias, *args)``.
    """

    def __init__(self, function: Any, alias: str | None = None, *args: Any):
        if callable(function):
            message = f"Function {function.__name__}"
            if alias:
                message += f' (namely operator "{alias}")'
            if args:
                message += f" with arguments ({', '.join(str(type(a)) for a in args)})"
            function = message + " is not implemented for Symbol and only available in NDArray."
        super().__init__(function)
