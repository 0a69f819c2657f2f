"""The ``dagnet`` pytest plugin: fixtures parametrized over the registered engines
and backends, so conformance tests run once per engine and per backend.

Fixtures:

- ``dagnet_engine_name`` / ``dagnet_engine``: every registered engine (a fresh
  instance per test, shut down afterwards).
- ``dagnet_backend_name`` / ``dagnet_backend``: every registered backend;
  unavailable ones are skipped with the backend's own reason.

Loading this plugin imports only ``dagnet``'s light core: plugins are
discovered when a test first asks for one of these fixtures.
"""

from __future__ import annotations

import pytest


def _engine_names() -> list[str]:
    from dagnet import plugins

    return list(plugins.engines())


def _backend_params() -> list:
    from dagnet import plugins

    params = []
    for registration in plugins.backends().registrations():
        reason = registration.value.unavailable_reason
        marks = (
            [pytest.mark.skip(reason=f"backend {registration.name!r}: {reason}")] if reason else []
        )
        params.append(pytest.param(registration.name, marks=marks, id=registration.name))
    return params


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "dagnet_engine_name" in metafunc.fixturenames:
        metafunc.parametrize("dagnet_engine_name", _engine_names())
    if "dagnet_backend_name" in metafunc.fixturenames:
        metafunc.parametrize("dagnet_backend_name", _backend_params())


@pytest.fixture
def dagnet_engine(dagnet_engine_name: str):
    """A fresh engine of each registered kind; shut down after the test (a function a
    failing test left outstanding is abandoned after the engine's ``exit_timeout``, with
    a warning naming it, instead of hanging the session)."""
    from dagnet import engine

    instance = engine.create(dagnet_engine_name)
    yield instance
    instance.shutdown(timeout=instance.exit_timeout)


@pytest.fixture
def dagnet_backend(dagnet_backend_name: str):
    """Each available registered backend."""
    from dagnet import plugins

    return plugins.backends()[dagnet_backend_name]
