"""mx.profiler: records of engine work as a Chrome trace, aggregate statistics, and the
Python-side Domain/Task/Frame/Event/Counter/Marker."""

from __future__ import annotations

import json

import pytest

import dagnet as mx
from dagnet import profiler


@pytest.fixture
def trace_file(tmp_path):
    path = tmp_path / "trace.json"
    profiler.set_config(filename=str(path), profile_all=True, aggregate_stats=True)
    profiler.dumps(reset=True)
    yield path
    profiler.set_state("stop")
    profiler.set_config(profile_all=False, aggregate_stats=False, filename="profile.json")


def events(path):
    return json.loads(path.read_text())["traceEvents"]


def test_operator_calls_are_recorded_with_device_and_duration(trace_file):
    profiler.set_state("run")
    x = mx.nd.zeros((10, 10))
    y = mx.nd.sqrt(x) + 1
    y = y + 1
    mx.nd.waitall()
    profiler.set_state("stop")
    profiler.dump()
    trace = events(trace_file)
    ops = [e for e in trace if e.get("cat") == "operator"]
    assert [e["name"] for e in ops if e["name"] in ("sqrt", "_plus_scalar")] == \
        ["sqrt", "_plus_scalar", "_plus_scalar"]
    for e in ops:
        assert e["ph"] == "X" and e["dur"] >= 0 and e["ts"] > 0
    processes = {e["pid"]: e["args"]["name"] for e in trace if e["ph"] == "M"}
    assert processes[ops[0]["pid"]] == "cpu/0"
    assert any(e.get("cat") == "Device Storage" and e["ph"] == "C" for e in trace)
    stats = json.loads(profiler.dumps(format="json"))
    assert stats["Time"]["operator"]["sqrt"]["Count"] == 1
    assert stats["Time"]["operator"]["_plus_scalar"]["Count"] == 2
    assert stats["Memory"]["Device Storage"]["Memory: cpu/0"]["Max"] > 0
    assert set(stats["Unit"]) == {"Time", "Memory"}


def test_nothing_is_recorded_when_stopped_or_paused(trace_file):
    mx.nd.ones((3,)).wait_to_read()  # not running
    profiler.set_state("run")
    profiler.pause()
    mx.nd.ones((3,)).wait_to_read()
    profiler.resume()
    (mx.nd.ones((3,)) * 2).wait_to_read()
    profiler.set_state("stop")
    names = set(json.loads(profiler.dumps(format="json"))["Time"]["operator"])
    assert "_mul_scalar" in names
    assert json.loads(profiler.dumps(format="json"))["Time"]["operator"]["_ones"][
        "Count"] == 1
    assert not mx.engine.listening()  # stopped: the engines pay nothing


def test_dumps_table_sorting_and_reset(trace_file):
    profiler.set_state("run")
    for _ in range(3):
        mx.nd.ones((4,)).wait_to_read()
    (mx.nd.ones((4,)) + 1).wait_to_read()
    profiler.set_state("stop")
    table = profiler.dumps()
    assert "operator" in table and "Total Count" in table and "_plus_scalar" in table
    for sort_by, key in [("count", "Count"), ("total", "Total"), ("avg", "Avg")]:
        for ascending in (True, False):
            rows = json.loads(profiler.dumps(format="json", sort_by=sort_by,
                                             ascending=ascending))["Time"]["operator"]
            values = [row[key] for row in rows.values()]
            assert values == sorted(values, reverse=not ascending)
    profiler.dumps(reset=True)
    assert json.loads(profiler.dumps(format="json"))["Time"] == {}


def test_python_side_objects(trace_file):
    profiler.set_state("run")
    domain = profiler.Domain("MyDomain")
    task, frame, event = domain.new_task("t"), domain.new_frame("f"), profiler.Event("e")
    for span in (task, frame, event):
        span.start()
        span.stop()
    counter = domain.new_counter("c", 5)
    counter += 2
    counter -= 1
    assert counter.value == 6
    domain.new_marker("m").mark("thread")
    profiler.set_state("stop")
    profiler.dump(finished=False)
    trace = events(trace_file)
    by_name = {e["name"]: e for e in trace if e["ph"] != "M"}
    assert by_name["t"]["cat"] == "MyDomain" and by_name["f"]["cat"] == "MyDomain,frame"
    assert by_name["e"]["cat"] == "event" and by_name["m"]["ph"] == "i"
    assert [e["args"]["c"] for e in trace if e["name"] == "c"] == [5, 7, 6]
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    assert stats["MyDomain"]["t"]["Count"] == 1 and stats["event"]["e"]["Count"] == 1
    profiler.dump(finished=False)  # a continuous dump keeps what it wrote
    assert len(events(trace_file)) == len(trace)
    profiler.dump(finished=True)
    profiler.dump()
    assert [e for e in events(trace_file) if e["ph"] != "M"] == []


def test_bad_settings_are_refused():
    with pytest.raises(mx.base.MXNetError, match="unknown option 'bogus'"):
        profiler.set_config(bogus=1)
    with pytest.raises(mx.base.MXNetError, match="True or False"):
        profiler.set_config(profile_all="maybe")
    with pytest.raises(mx.base.MXNetError, match="'run' or 'stop'"):
        profiler.set_state("go")
    with pytest.raises(mx.base.MXNetError, match="format"):
        profiler.dumps(format="xml")
    with pytest.raises(mx.base.MXNetError, match="sort_by"):
        profiler.dumps(sort_by="median")
    with pytest.raises(mx.base.MXNetError, match="scope"):
        profiler.Marker(profiler.Domain("d"), "m").mark("everywhere")
    with pytest.raises(mx.base.MXNetError, match="Domain"):
        profiler.Task("not a domain", "t")
    with pytest.raises(mx.base.MXNetError, match="before start"):
        profiler.Event("e").stop()


def test_dumps_is_empty_without_aggregate_stats():
    profiler.set_config(aggregate_stats=False)
    assert profiler.dumps() == ""
