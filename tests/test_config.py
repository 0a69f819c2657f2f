"""Configuration: typed keys, environment variables, MXNet engine names and
scoped overrides."""

from __future__ import annotations

import os
import re

import pytest

import dagnet
from dagnet import config

DEFAULTS = {
    "engine": "threaded_per_device",
    "cpu_workers": 1,
    "cpu_kernel_threads": 1,
    "cpu_onednn": True,
    "cpu_jit": True,
    "gpu_workers": 1,
    "copy_workers": 1,
    "priority_workers": 1,
    "storage_pool": "exact",
    "storage_pool_limit": 1 << 30,
    "temp_space_copies": 4,
    "memory_plan": True,
    "eliminate_common_expr": True,
    "graph_passes": True,
    "subgraph_backend": "",
    "disabled_graph_passes": "",
    "exec_bulk_size": 15,
    "exec_bulk_inference": True,
    "exec_replay": True,
    "engine_inline_bytes": 16384,
    "engine_max_pending": 16,
    "engine_switch_interval": 0.0002,
    "engine_exit_timeout": 5.0,
    "engine_fork_timeout": 2.0,
    "autoload_plugins": True,
}


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    """No configuration from the environment or from earlier tests; restored afterwards."""
    for name in list(os.environ):
        if name.startswith("DAGNET_") or name.startswith("MXNET_"):
            monkeypatch.delenv(name)
    config.refresh()
    yield
    config.refresh()


# -- keys and defaults -----------------------------------------------------------
def test_keys_are_typed_with_defaults():
    keys = config.keys()
    assert set(keys) == set(DEFAULTS)
    for name, key in keys.items():
        assert isinstance(key, config.Key) and key.name == name
        assert type(key.default) is key.type
        assert key.env_var == "DAGNET_" + name.upper()
        assert key.description
        assert config.get(name) == DEFAULTS[name]


def test_describe_lists_every_key():
    table = config.describe()
    for name in DEFAULTS:
        assert name in table


# -- setting -------------------------------------------------------------------
def test_set_without_with_lasts_until_refresh():
    config.set(cpu_workers=3, engine="naive")
    assert config.get("cpu_workers") == 3 and config.get("engine") == "naive"
    config.set({"storage_pool": "round"})
    assert config.get("storage_pool") == "round"
    config.refresh()
    assert config.get("cpu_workers") == 1 and config.get("storage_pool") == "exact"


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("cpu_workers", "4", "an int"),
    ("cpu_workers", 1.5, "an int"),
    ("cpu_workers", True, "an int"),
    ("cpu_workers", None, "an int"),
    ("temp_space_copies", 2.0, "an int"),
    ("engine", 3, "a str"),
    ("storage_pool", b"exact", "a str"),
    ("autoload_plugins", 1, "a bool"),
    ("autoload_plugins", "yes", "a bool"),
], ids=repr)
def test_wrong_type_names_key_value_and_type(name, value, expected):
    with pytest.raises(dagnet.ConfigError) as info:
        config.set(**{name: value})
    message = str(info.value)
    assert repr(name) in message and repr(value) in message
    assert f"must be {expected}" in message
    assert isinstance(info.value, ValueError)
    assert config.get(name) == DEFAULTS[name]


@pytest.mark.parametrize(("name", "value", "problem"), [
    ("cpu_workers", -1, "must be 0 (one per core) or more"),
    ("gpu_workers", 0, "must be at least 1"),
    ("cpu_kernel_threads", 0, "must be at least 1"),
    ("temp_space_copies", 0, "must be at least 1"),
    ("storage_pool", "huge", "expected one of exact, round, unpooled"),
])
def test_out_of_range(name, value, problem):
    expected = f"config key {name!r} from dagnet.config.set is {value!r}: {problem}"
    with pytest.raises(dagnet.ConfigError, match=re.escape(expected)):
        config.set(**{name: value})


def test_a_failed_set_changes_nothing():
    with pytest.raises(dagnet.ConfigError):
        config.set(engine="naive", cpu_workers="many")
    assert config.get("engine") == DEFAULTS["engine"]


@pytest.mark.parametrize("use", [
    lambda: config.get("engines"),
    lambda: config.set(engines="naive"),
    lambda: config.set(engines="naive").__enter__(),
    lambda: config.get(None),
    lambda: config.get(["engine"]),
], ids=["get", "set", "with", "None", "list"])
def test_unknown_key_lists_the_keys(use):
    with pytest.raises(dagnet.ConfigError, match="unknown config key") as info:
        use()
    assert ", ".join(sorted(DEFAULTS)) in str(info.value)


# -- environment -------------------------------------------------------------------
def test_engine_from_environment(monkeypatch):
    monkeypatch.setenv("DAGNET_ENGINE", "naive")
    assert config.get("engine") == "naive"
    config.set(engine="threaded")  # set() wins over the environment
    assert config.get("engine") == "threaded"


@pytest.mark.parametrize(("raw", "value"), [("3", 3), (" 12 ", 12), ("0", 0), ("", 1)])
def test_int_from_environment(monkeypatch, raw, value):
    monkeypatch.setenv("DAGNET_CPU_WORKERS", raw)
    assert config.get("cpu_workers") == value


@pytest.mark.parametrize("raw", ["abc", "2.5", "3 workers", "0x10"])
def test_bad_int_in_environment_names_the_variable(monkeypatch, raw):
    monkeypatch.setenv("DAGNET_CPU_WORKERS", raw)
    with pytest.raises(dagnet.ConfigError) as info:
        config.get("cpu_workers")
    message = str(info.value)
    assert "environment variable DAGNET_CPU_WORKERS" in message
    assert repr(raw) in message and "an int" in message


def test_out_of_range_in_environment_names_the_variable(monkeypatch):
    monkeypatch.setenv("DAGNET_CPU_WORKERS", "-2")
    with pytest.raises(dagnet.ConfigError, match="DAGNET_CPU_WORKERS is -2: must be 0"):
        config.get("cpu_workers")
    monkeypatch.setenv("DAGNET_STORAGE_POOL", "pooled")
    with pytest.raises(dagnet.ConfigError, match="STORAGE_POOL is 'pooled': expected one of"):
        config.get("storage_pool")


@pytest.mark.parametrize(("raw", "value"), [
    ("1", True), ("true", True), ("TRUE", True), ("yes", True), ("On", True),
    ("0", False), ("false", False), ("no", False), ("off", False), (" False ", False),
])
def test_bool_from_environment(monkeypatch, raw, value):
    monkeypatch.setenv("DAGNET_AUTOLOAD_PLUGINS", raw)
    assert config.get("autoload_plugins") is value


@pytest.mark.parametrize("raw", ["maybe", "2", "y"])
def test_bad_bool_in_environment_names_the_variable(monkeypatch, raw):
    monkeypatch.setenv("DAGNET_AUTOLOAD_PLUGINS", raw)
    expected = f"DAGNET_AUTOLOAD_PLUGINS is {raw!r}, which is not a bool"
    with pytest.raises(dagnet.ConfigError, match=expected):
        config.get("autoload_plugins")


def test_disable_plugin_autoload_switch(monkeypatch):
    monkeypatch.setenv("DAGNET_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert config.get("autoload_plugins") is False


@pytest.mark.parametrize(("mxnet", "dagnet_name"), [
    ("NaiveEngine", "naive"),
    ("ThreadedEngine", "threaded"),
    ("ThreadedEnginePooled", "threaded"),
    ("ThreadedEnginePerDevice", "threaded_per_device"),
])
def test_mxnet_engine_type(monkeypatch, mxnet, dagnet_name):
    monkeypatch.setenv("MXNET_ENGINE_TYPE", mxnet)
    assert config.get("engine") == dagnet_name
    assert config.canonical_engine_name(mxnet) == dagnet_name
    monkeypatch.setenv("DAGNET_ENGINE", "threaded")  # dagnet's own variable wins
    assert config.get("engine") == "threaded"


def test_env_is_read_at_each_get(monkeypatch):
    monkeypatch.setenv("DAGNET_TEMP_SPACE_COPIES", "2")
    assert config.get("temp_space_copies") == 2
    monkeypatch.setenv("DAGNET_TEMP_SPACE_COPIES", "5")
    assert config.get("temp_space_copies") == 5


# -- scopes --------------------------------------------------------------------
def test_scope_restores_on_exit():
    with config.set(engine="naive", cpu_workers=2) as scope:
        assert isinstance(scope, config.set)
        assert config.get("engine") == "naive" and config.get("cpu_workers") == 2
    assert config.get("engine") == DEFAULTS["engine"]
    assert config.get("cpu_workers") == DEFAULTS["cpu_workers"]


def test_nested_scopes():
    with config.set(cpu_workers=2):
        with config.set(cpu_workers=3, engine="naive"):
            assert config.get("cpu_workers") == 3 and config.get("engine") == "naive"
            with config.set(cpu_workers=2):  # equal to an outer scope
                assert config.get("cpu_workers") == 2
            assert config.get("cpu_workers") == 3
        assert config.get("cpu_workers") == 2 and config.get("engine") == DEFAULTS["engine"]
    assert config.get("cpu_workers") == DEFAULTS["cpu_workers"]


def test_scope_restores_on_exception():
    with pytest.raises(RuntimeError, match="boom"):
        with config.set(storage_pool="round"):
            with config.set(storage_pool="unpooled"):
                raise RuntimeError("boom")
    assert config.get("storage_pool") == "exact"


def test_scope_keeps_a_value_set_before_it():
    config.set(cpu_workers=7)
    with config.set(cpu_workers=2):
        assert config.get("cpu_workers") == 2
    assert config.get("cpu_workers") == 7


def test_scope_wins_over_environment(monkeypatch):
    monkeypatch.setenv("DAGNET_ENGINE", "threaded")
    with config.set(engine="naive"):
        assert config.get("engine") == "naive"
    assert config.get("engine") == "threaded"


def test_refresh_inside_a_scope():
    with config.set(engine="naive"):
        config.refresh()
        assert config.get("engine") == DEFAULTS["engine"]
    assert config.get("engine") == DEFAULTS["engine"]  # and leaving the scope is quiet


def test_a_float_key_takes_whole_numbers_and_parses_its_environment_variable(monkeypatch):
    with config.set(engine_exit_timeout=2):
        assert config.get("engine_exit_timeout") == 2.0
        assert isinstance(config.get("engine_exit_timeout"), float)
    monkeypatch.setenv("DAGNET_ENGINE_EXIT_TIMEOUT", "0.5")
    assert config.get("engine_exit_timeout") == 0.5
    monkeypatch.setenv("DAGNET_ENGINE_EXIT_TIMEOUT", "soon")
    with pytest.raises(dagnet.ConfigError, match="DAGNET_ENGINE_EXIT_TIMEOUT to a number"):
        config.get("engine_exit_timeout")
    with pytest.raises(dagnet.ConfigError, match="must be 0 or more"):
        config.set(engine_exit_timeout=-1)


def test_mxnet_cpu_worker_count_is_read_after_dagnets_own(monkeypatch):
    monkeypatch.setenv("MXNET_CPU_WORKER_NTHREADS", "3")
    assert config.get("cpu_workers") == 3
    monkeypatch.setenv("DAGNET_CPU_WORKERS", "2")
    assert config.get("cpu_workers") == 2
    monkeypatch.delenv("DAGNET_CPU_WORKERS")
    monkeypatch.setenv("MXNET_CPU_WORKER_NTHREADS", "lots")
    with pytest.raises(dagnet.ConfigError, match="set MXNET_CPU_WORKER_NTHREADS to a whole"):
        config.get("cpu_workers")


def test_mxnet_subgraph_backend_is_read_after_dagnets_own(monkeypatch):
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "default")
    assert config.get("subgraph_backend") == "default"
    monkeypatch.setenv("DAGNET_SUBGRAPH_BACKEND", "NONE")
    assert config.get("subgraph_backend") == "NONE"


def test_mxnet_inference_bulking_from_environment(monkeypatch):
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_INFERENCE", "0")
    assert config.get("exec_bulk_inference") is False
    monkeypatch.setenv("DAGNET_EXEC_BULK_INFERENCE", "1")  # dagnet's own name wins
    assert config.get("exec_bulk_inference") is True


def test_mxnet_eliminate_common_expr_from_environment(monkeypatch):
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")
    assert config.get("eliminate_common_expr") is False
    monkeypatch.setenv("DAGNET_ELIMINATE_COMMON_EXPR", "1")  # dagnet's own name wins
    assert config.get("eliminate_common_expr") is True
