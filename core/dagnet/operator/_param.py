"""Operator parameters (MXNet's ``dmlc::Parameter``): typed fields with defaults,
descriptions and ranges, parsed from Python values or from the strings that
symbol JSON stores.

    class QuadraticParam(Params):
        a = Field(float, 0.0, "coefficient of the quadratic term")
        b = Field(float, 0.0, "coefficient of the linear term")
        c = Field(float, 0.0, "constant term")
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._errors import ParamError

__all__ = ["Field", "Params", "Shape", "DType", "REQUIRED", "NoParams"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


class Shape:
    """Marker type: a tuple of ints, written ``(3, 3)``, ``[3, 3]`` or ``3``."""


class DType:
    """Marker type: a numpy dtype, written ``'float32'`` or given as ``np.float32``."""


_TYPE_NAMES = {int: "int", float: "float", bool: "bool", str: "str", Shape: "shape", DType: "dtype"}


class Field:
    """One parameter: its type, default, description and allowed values.

    ``low``/``high`` bound numbers (inclusive); ``choices`` lists allowed
    values; ``optional=True`` admits ``None`` (written ``'None'``).
    """

    def __init__(
        self,
        type: type,
        default: Any = REQUIRED,
        desc: str = "",
        *,
        low: float | None = None,
        high: float | None = None,
        choices: Iterable[Any] | None = None,
        optional: bool = False,
    ):
        if type not in _TYPE_NAMES:
            raise TypeError(
                f"Field type must be one of {', '.join(_TYPE_NAMES.values())}, got {type!r}"
            )
        self.type = type
        self.default = default
        self.desc = desc
        self.low = low
        self.high = high
        self.choices = tuple(choices) if choices is not None else None
        self.optional = optional or default is None
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def type_text(self) -> str:
        text = _TYPE_NAMES[self.type]
        if self.choices:
            text = "{" + ", ".join(repr(c) for c in self.choices) + "}"
        if self.optional:
            text += " or None"
        return text

    def doc(self) -> str:
        """One line for a docstring: ``name : type, default=...  description``."""
        default = "required" if self.required else f"default={self.default!r}"
        bounds = ""
        if self.low is not None or self.high is not None:
            bounds = (
                f", range [{self.low if self.low is not None else '-inf'}, "
                f"{self.high if self.high is not None else 'inf'}]"
            )
        return f"{self.name} : {self.type_text()}, {default}{bounds}\n    {self.desc}"

    def parse(self, value: Any, op_name: str) -> Any:
        """``value`` (Python or string) converted to this field's type, or a ParamError."""

        def fail(why: str) -> ParamError:
            return ParamError(
                f"operator {op_name!r}: parameter {self.name!r} = {value!r} {why} "
                f"(expected {self.type_text()}: {self.desc or 'no description'})"
            )

        if value is None or (isinstance(value, str) and value.strip() == "None"):
            if self.optional:
                return None
            raise fail("may not be None")
        try:
            parsed = self._convert(value)
        except (ValueError, TypeError, SyntaxError):
            raise fail(f"is not a valid {_TYPE_NAMES[self.type]}") from None
        if self.choices is not None and parsed not in self.choices:
            raise fail("is not one of the allowed values")
        if self.low is not None and _below(parsed, self.low):
            raise fail(f"is below the minimum {self.low}")
        if self.high is not None and _above(parsed, self.high):
            raise fail(f"is above the maximum {self.high}")
        return parsed

    def _convert(self, value: Any) -> Any:
        kind = self.type
        if kind is bool:
            if isinstance(value, str):
                text = value.strip().lower()
                if text in ("true", "1"):
                    return True
                if text in ("false", "0"):
                    return False
                raise ValueError(value)
            if isinstance(value, (bool, np.bool_)) or (
                isinstance(value, (int, np.integer)) and value in (0, 1)
            ):
                return bool(value)
            raise TypeError(value)
        if kind is int:
            if isinstance(value, str):
                value = ast.literal_eval(value.strip())
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                if isinstance(value, (float, np.floating)) and float(value).is_integer():
                    return int(value)
                raise TypeError(value)
            return int(value)
        if kind is float:
            if isinstance(value, str):
                return float(value.strip())
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.number)
            ):
                raise TypeError(value)
            return float(value)
        if kind is str:
            if not isinstance(value, str):
                raise TypeError(value)
            return value
        if kind is Shape:
            if isinstance(value, str):
                value = ast.literal_eval(value.strip()) if value.strip() else ()
            if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                return (int(value),)
            items = tuple(value)
            if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items):
                raise TypeError(value)
            return tuple(int(i) for i in items)
        return np.dtype(value)  # DType

    def to_string(self, value: Any) -> str:
        """The string symbol JSON stores for ``value`` (MXNet's spelling)."""
        if value is None:
            return "None"
        if self.type is Shape:
            return "(" + ", ".join(str(v) for v in value) + ("," if len(value) == 1 else "") + ")"
        if self.type is DType:
            return np.dtype(value).name
        return str(value)


def _below(value: Any, bound: float) -> bool:
    return any(v < bound for v in value) if isinstance(value, tuple) else value < bound


def _above(value: Any, bound: float) -> bool:
    return any(v > bound for v in value) if isinstance(value, tuple) else value > bound


# Params.parse's answers for attributes given as strings, by (class, operator, items)
_PARSED: dict[tuple, Params] = {}
_PARSED_LIMIT = 8192


class Params:
    """Base class of an operator's parameter set; subclasses declare :class:`Field` s.

    ``Params.parse(op_name, kwargs)`` checks every value and fills defaults;
    the instance exposes fields as attributes, compares by value and hashes,
    and ``to_strings()`` gives the JSON form.
    """

    _fields: dict[str, Field] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, Field] = {}
        for base in reversed(cls.__mro__[1:]):
            fields.update(getattr(base, "_fields", {}))
        fields.update({k: v for k, v in vars(cls).items() if isinstance(v, Field)})
        cls._fields = fields

    def __init__(self, **values: Any):
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @classmethod
    def fields(cls) -> dict[str, Field]:
        """The declared fields by name, in declaration order."""
        return dict(cls._fields)

    @classmethod
    def parse(cls, op_name: str, kwargs: Mapping[str, Any]) -> Params:
        """Check ``kwargs`` against the fields and return a complete parameter set.

        Attributes given as strings (a loaded or rewritten graph's) are parsed once per
        operator and text: the parameter set is immutable, so nodes of the same
        attributes share it."""
        if all(type(value) is str for value in kwargs.values()):
            key = (cls, op_name, tuple(kwargs.items()))
            parsed = _PARSED.get(key)
            if parsed is None:
                if len(_PARSED) >= _PARSED_LIMIT:
                    _PARSED.clear()
                parsed = _PARSED[key] = cls._parse(op_name, kwargs)
            return parsed
        return cls._parse(op_name, kwargs)

    @classmethod
    def _parse(cls, op_name: str, kwargs: Mapping[str, Any]) -> Params:
        unknown = [k for k in kwargs if k not in cls._fields]
        if unknown:
            known = ", ".join(cls._fields) or "none"
            raise ParamError(
                f"operator {op_name!r} has no parameter {unknown[0]!r}; its parameters are {known}"
            )
        values = {}
        for name, field in cls._fields.items():
            if name in kwargs:
                values[name] = field.parse(kwargs[name], op_name)
            elif field.required:
                raise ParamError(
                    f"operator {op_name!r} needs parameter {name!r} "
                    f"({field.type_text()}: {field.desc or 'no description'})"
                )
            else:
                values[name] = field.default
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The parsed values by name."""
        return {name: getattr(self, name) for name in self._fields}

    def to_strings(self) -> dict[str, str]:
        """Every value as the string symbol JSON stores."""
        return {name: field.to_string(getattr(self, name)) for name, field in self._fields.items()}

    def replace(self, **changes: Any) -> Params:
        """A copy with some values changed (already parsed values)."""
        return type(self)(**{**self.to_dict(), **changes})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("operator parameters are immutable; use replace()")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.to_dict() == self.to_dict()

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.to_strings().items())))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"{type(self).__name__}({inner})"


class NoParams(Params):
    """The parameter set of an operator that takes none."""
