"""Choosing an engine: by argument, ``dagnet.config``, ``DAGNET_ENGINE``,
MXNet's ``MXNET_ENGINE_TYPE``, or the default; unknown names; switching."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import dagnet
from dagnet import config
from dagnet.engine import Engine
from dagnet.testing.engine_suite import GUARD

MXNET_NAMES = {
    "NaiveEngine": "naive",
    "ThreadedEngine": "threaded",
    "ThreadedEnginePerDevice": "threaded_per_device",
}
BUILTIN = sorted(set(MXNET_NAMES.values()))


@pytest.fixture(autouse=True)
def no_engine_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGNET_ENGINE", raising=False)
    monkeypatch.delenv("MXNET_ENGINE_TYPE", raising=False)


def test_builtin_engines_are_registered() -> None:
    assert set(BUILTIN) <= set(dagnet.engine.names())


@pytest.mark.parametrize("name", BUILTIN)
def test_create_gives_a_new_engine_each_time(name: str) -> None:
    first, second = dagnet.engine.create(name), dagnet.engine.create(name)
    try:
        assert isinstance(first, Engine) and first is not second
        assert first.name == second.name == name
    finally:
        first.shutdown()
        second.shutdown()


@pytest.mark.parametrize("name", BUILTIN)
def test_get_gives_the_shared_engine(name: str) -> None:
    engine = dagnet.engine.get(name)
    assert engine.name == name and dagnet.engine.get(name) is engine


@pytest.mark.parametrize("mxnet_name", sorted(MXNET_NAMES))
def test_mxnet_names_choose_the_same_engine(mxnet_name: str) -> None:
    assert dagnet.engine.get(mxnet_name) is dagnet.engine.get(MXNET_NAMES[mxnet_name])
    engine = dagnet.engine.create(mxnet_name)
    assert engine.name == MXNET_NAMES[mxnet_name]
    engine.shutdown()


@pytest.mark.parametrize("name", BUILTIN)
def test_config_scope_chooses(name: str) -> None:
    before = config.get("engine")
    with config.set(engine=name):
        assert dagnet.engine.current().name == name
        assert dagnet.engine.get() is dagnet.engine.get(name)
    assert config.get("engine") == before
    assert dagnet.engine.current().name == dagnet.engine.get(before).name


def test_argument_beats_config() -> None:
    with config.set(engine="naive"):
        assert dagnet.engine.get("threaded").name == "threaded"
        assert dagnet.engine.create("threaded").name == "threaded"


@pytest.mark.parametrize("name", BUILTIN)
def test_dagnet_engine_env(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("DAGNET_ENGINE", name)
    assert dagnet.engine.current().name == name


@pytest.mark.parametrize("mxnet_name", sorted(MXNET_NAMES))
def test_mxnet_engine_type_env(monkeypatch: pytest.MonkeyPatch, mxnet_name: str) -> None:
    monkeypatch.setenv("MXNET_ENGINE_TYPE", mxnet_name)
    assert dagnet.engine.current().name == MXNET_NAMES[mxnet_name]


def test_dagnet_engine_beats_mxnet_engine_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MXNET_ENGINE_TYPE", "NaiveEngine")
    monkeypatch.setenv("DAGNET_ENGINE", "threaded")
    assert dagnet.engine.current().name == "threaded"


def test_config_beats_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGNET_ENGINE", "naive")
    with config.set(engine="threaded"):
        assert dagnet.engine.current().name == "threaded"


def test_default_is_threaded_per_device() -> None:
    # A fresh interpreter: nothing set by this one's tests can leak in.
    env = {k: v for k, v in os.environ.items()
           if k not in ("DAGNET_ENGINE", "MXNET_ENGINE_TYPE")}
    result = subprocess.run(
        [sys.executable, "-c", "import dagnet; print(dagnet.engine.current().name)"],
        env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "threaded_per_device"


def _by_argument(_: pytest.MonkeyPatch) -> None:
    dagnet.engine.get("bogus")


def _by_create(_: pytest.MonkeyPatch) -> None:
    dagnet.engine.create("bogus")


def _by_config(_: pytest.MonkeyPatch) -> None:
    with config.set(engine="bogus"):
        dagnet.engine.current()


def _by_dagnet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGNET_ENGINE", "bogus")
    dagnet.engine.current()


def _by_mxnet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MXNET_ENGINE_TYPE", "bogus")
    dagnet.engine.current()


@pytest.mark.parametrize("choose", [_by_argument, _by_create, _by_config, _by_dagnet_env,
                                    _by_mxnet_env], ids=lambda f: f.__name__[4:])
def test_unknown_engine_lists_engines_and_ways_to_choose(monkeypatch: pytest.MonkeyPatch,
                                                         choose) -> None:
    with pytest.raises(dagnet.UnknownNameError) as info:
        choose(monkeypatch)
    message = str(info.value)
    assert isinstance(info.value, KeyError)
    assert message.startswith("unknown engine 'bogus'")
    assert f"expected one of {', '.join(sorted(dagnet.engine.names()))}" in message
    for way in ("dagnet.engine.create(", "dagnet.config.set(engine=", "DAGNET_ENGINE",
                "MXNET_ENGINE_TYPE"):
        assert way in message


def test_unknown_engine_suggests_a_close_name() -> None:
    with pytest.raises(dagnet.UnknownNameError, match="did you mean threaded"):
        dagnet.engine.get("thread")


def test_engine_name_must_be_a_string() -> None:
    with pytest.raises(TypeError) as info:
        dagnet.engine.get(3)
    assert isinstance(info.value, dagnet.DagnetError)


def test_switching_engines_drains_the_previous() -> None:
    """current() under a new engine first finishes the old one's work, so data
    moves between engines with nothing in flight."""
    with config.set(engine="threaded"):
        first = dagnet.engine.current()
        gate = threading.Event()
        done: list[str] = []

        def slow(run_ctx) -> None:
            gate.wait(GUARD)
            done.append("slow")

        first.push_sync(slow, mutate_vars=[first.new_var()])
        release = threading.Timer(0.2, gate.set)
        release.start()
        try:
            with config.set(engine="naive"):
                assert dagnet.engine.current().name == "naive"
                assert done == ["slow"]
        finally:
            gate.set()
            release.cancel()
        first.wait_for_all(timeout=GUARD)


@pytest.mark.parametrize("name", ["threaded", "threaded_per_device"])
def test_config_sets_the_run_ahead_bound(name: str) -> None:
    with dagnet.config.set(engine_max_pending=4):
        engine = dagnet.engine.create(name)
    try:
        assert engine.max_pending == 4
    finally:
        engine.shutdown()


@pytest.mark.parametrize("name", ["naive", "threaded", "threaded_per_device"])
def test_config_sets_the_exit_timeout(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("DAGNET_ENGINE_EXIT_TIMEOUT", "0.25")
    engine = dagnet.engine.create(name)
    try:
        assert engine.exit_timeout == 0.25
    finally:
        engine.shutdown()


@pytest.mark.parametrize(("name", "lane"), [("threaded", "all"),
                                             ("threaded_per_device", "cpu(0)/compute")])
def test_workers_restart_with_the_configured_count(name: str, lane: str) -> None:
    engine = dagnet.engine.create(name)
    try:
        for workers in (1, 3, 2):
            with dagnet.config.set(cpu_workers=workers):
                engine.shutdown()  # stopped workers start again with the count configured
                engine.push_sync(lambda run_ctx: None, dagnet.cpu(),
                                 mutate_vars=[engine.new_var()])
                engine.wait_for_all()
            assert engine.lanes()[lane] == workers
    finally:
        engine.shutdown()
