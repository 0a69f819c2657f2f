"""dagnet's CPU backend on numpy (entry point ``cpu``)."""

from .backend import CPUBackend

__all__ = ["CPUBackend"]
