"""The per-thread scopes MXNet code sets on the class: AttrScope.current,
NameManager.current, and the NumPy-array scope."""

import threading

import dagnet as mx
from dagnet.attribute import AttrScope
from dagnet.name import NameManager
from dagnet.util import _NumpyArrayScope


def _in_thread(fn):
    result = []
    thread = threading.Thread(target=lambda: result.append(fn()))
    thread.start()
    thread.join()
    return result[0]


def test_attr_scope_current_is_per_thread_and_settable():
    AttrScope.current = AttrScope(y="hi")
    try:
        assert _in_thread(lambda: AttrScope.current._attr) == {}
        assert AttrScope.current._attr == {"y": "hi"}
        with AttrScope(x="1"):
            assert AttrScope.current._attr == {"y": "hi", "x": "1"}
    finally:
        AttrScope.current = AttrScope()


def test_name_manager_current_is_per_thread_and_settable():
    mine = NameManager()
    NameManager.current = mine
    try:
        assert NameManager.current is mine
        assert _in_thread(lambda: NameManager.current) is not mine
        assert mx.sym.var("x").name == "x" and mine.get(None, "fc") == "fc0"
    finally:
        NameManager.current = NameManager()


def test_numpy_array_scope_records_what_it_sets():
    scope = _NumpyArrayScope(True)
    assert scope._is_np_array is True
    with scope:
        assert mx.is_np_array()
    assert not mx.is_np_array()
