"""``mxnet.symbol.symbol``: the module path MXNet 1.x code imports :class:`Symbol` and the
symbol helpers from; the names are ``dagnet.symbol``'s, the same objects."""

from __future__ import annotations

from . import (
    Group,
    Symbol,
    Variable,
    arange,
    eye,
    full,
    histogram,
    hypot,
    load,
    load_json,
    maximum,
    minimum,
    ones,
    pow,
    power,
    split_v2,
    var,
    zeros,
)

__all__ = [
    "Group", "Symbol", "Variable", "arange", "eye", "full", "histogram", "hypot", "load",
    "load_json", "maximum", "minimum", "ones", "pow", "power", "split_v2", "var", "zeros",
]
