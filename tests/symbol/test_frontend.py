"""``dagnet.sym.<op>``: functions made from the operator registry, with the operator's
documentation and signature; a third-party operator appears like a built-in one; an
unknown name fails with close names."""

from __future__ import annotations

import inspect

import pytest

import dagnet as mx
from dagnet import DagnetError


def test_docstring_comes_from_the_registry():
    doc = mx.sym.FullyConnected.__doc__
    assert "num_hidden : int, required" in doc
    assert "NDArray" not in doc
    assert "name : str, optional" in doc and "attr : dict" in doc
    assert doc.rstrip().endswith("The result symbol.")


def test_help_shows_parameter_docs(capsys):
    help(mx.sym.FullyConnected)
    text = capsys.readouterr().out
    assert "num_hidden" in text and "no_bias" in text and "flatten" in text


def test_signature():
    assert str(inspect.signature(mx.sym.FullyConnected)) == (
        "(data=None, weight=None, bias=None, *, num_hidden, no_bias=False, flatten=True, "
        "name=None, attr=None)")
    assert str(inspect.signature(mx.sym.Concat)).startswith("(*data, num_args")


def test_functions_are_cached_and_listed():
    assert mx.sym.FullyConnected is mx.symbol.FullyConnected
    assert mx.sym is mx.symbol
    assert "FullyConnected" in dir(mx.sym) and "quadratic" in dir(mx.sym)
    assert repr(mx.sym.FullyConnected) == "<function dagnet.sym.FullyConnected>"


def test_third_party_operator():
    assert "f(x) = ax^2+bx+c" in mx.sym.quadratic.__doc__
    assert "data : Symbol" in mx.sym.quadratic.__doc__
    q = mx.sym.quadratic(mx.sym.Variable("x"), a=1, b=2, c=3)
    assert q.name == "quadratic0"
    assert q.list_arguments() == ["x"]
    assert q.list_attr() == {"a": "1", "b": "2", "c": "3"}
    assert q.infer_shape(x=(2, 3)) == ([(2, 3)], [(2, 3)], [])
    assert '"op": "quadratic"' in q.tojson()
    assert mx.sym.load_json(q.tojson()).list_attr() == q.list_attr()


def test_unknown_name_suggests_close_names():
    with pytest.raises(AttributeError, match="did you mean FullyConnected") as info:
        _ = mx.sym.FullyConected
    assert isinstance(info.value, DagnetError) and isinstance(info.value, KeyError)
    assert "dagnet.sym has no function 'FullyConected'" in str(info.value)
    assert not hasattr(mx.sym, "no_such_operator")
    with pytest.raises(AttributeError):
        _ = mx.sym.__no_such_dunder__


def test_symbol_functions_take_out_and_ignore_it():
    """MXNet's mx.sym functions have the NDArray functions' ``out=``, which means nothing for
    a symbol: the node is the same as without it."""
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    with_out = mx.sym.elemwise_add(a, b, out=a, name="s")
    assert with_out.list_arguments() == ["a", "b"]
    assert with_out.tojson() == mx.sym.elemwise_add(a, b, name="s").tojson()
