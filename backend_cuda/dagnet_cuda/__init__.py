"""dagnet's CUDA backend on cupy (entry point ``cuda``; install ``dagnet[cuda]``).

Registration never imports cupy: the backend reports itself unavailable,
with the reason, when cupy or a GPU is missing.
"""

from .backend import CUDABackend

__all__ = ["CUDABackend"]
