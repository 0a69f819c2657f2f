"""``mx.registry``: registering classes under a base class, and creating them by name."""

from __future__ import annotations

import pytest

import dagnet
from dagnet import registry


class Shape:
    pass


register = registry.get_register_func(Shape, "shape")
alias = registry.get_alias_func(Shape, "shape")
create = registry.get_create_func(Shape, "shape")


@register
class Square(Shape):
    def __init__(self, side=1):
        self.side = side


@alias("disc", "round")
class Circle(Shape):
    def __init__(self, radius=1):
        self.radius = radius


def test_create_by_name_keywords_dict_and_json():
    assert create("square", side=2).side == 2
    assert create("SQUARE").side == 1  # names are lower-cased
    assert create(shape="round", radius=3).radius == 3
    assert create({"shape": "disc", "radius": 4}).radius == 4
    assert create('["square", {"side": 5}]').side == 5
    assert create('{"shape": "square", "side": 6}').side == 6
    existing = Square(7)
    assert create(existing) is existing
    assert set(registry.get_registry(Shape)) >= {"square", "disc", "round"}


def test_bad_names_and_classes_say_what_is_wrong():
    with pytest.raises(KeyError, match="'triangle' is not a registered shape; expected one of"):
        create("triangle")
    with pytest.raises(TypeError, match="subclasses of Shape"):
        register(int)
    with pytest.raises(TypeError, match="additional arguments"):
        create(Square(), side=2)
    with pytest.raises(TypeError, match="say which shape"):
        create()


def test_a_name_registered_again_warns_and_replaces():
    class Other(Shape):
        pass

    with pytest.warns(UserWarning, match="overriding existing shape"):
        register(Other, "square")
    assert isinstance(create("square"), Other)
    register(Square)


def test_mx_registry_is_this_module():
    assert dagnet.registry is registry
