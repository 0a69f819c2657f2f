"""Every registered backend against the conformance suite (cuda skips, with its
reason, where cupy or a GPU is missing)."""

from __future__ import annotations

from dagnet.testing.backend_suite import BackendConformance


class TestBackend(BackendConformance):
    pass
