"""Weight initializers (MXNet's ``mx.init`` / ``mx.initializer``).

An initializer is called with an :class:`InitDesc` (the parameter's name, its
symbol attributes and the global initializer) and the array to fill::

    >>> import dagnet as mx
    >>> w = mx.nd.zeros((64, 32))
    >>> mx.init.Xavier()(mx.init.InitDesc("fc1_weight"), w)

The name's suffix picks what is done: ``*weight`` gets the initializer's own
rule, ``*bias``/``*beta`` zero, ``*gamma`` one, and batch-norm statistics
(``*moving_mean``, ``*moving_var``, ...) their neutral values.  A variable
declared with ``mx.sym.Variable(init=...)`` carries that initializer (as JSON)
in its ``__init__`` attribute, which then wins over the suffix.

Random initializers draw from dagnet's seeded generators, so
``mx.random.seed(n)`` makes them reproducible.
"""

from __future__ import annotations

import json
import logging
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import random
from ._argcheck import ArgumentTypeError, choice, real
from ._errors import ParamError, ShapeError, UnknownNameError

__all__ = [
    "InitDesc", "Initializer", "register", "unregister", "alias", "create",
    "Zero", "One", "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu",
    "Bilinear", "LSTMBias", "Mixed", "Load",
]

_log = logging.getLogger(__name__)


class InitDesc(str):
    """A parameter's name, as a ``str``, with what decides its initialization.

    ``attrs`` are the variable's symbol attributes (``Symbol.attr_dict()[name]``),
    ``global_init`` the initializer to fall back on (set to the first initializer
    the descriptor is given to).
    """

    attrs: dict[str, str]
    global_init: Initializer | None

    def __new__(cls, name: str, attrs: Mapping[str, str] | None = None,
                global_init: Initializer | None = None) -> InitDesc:
        desc = super().__new__(cls, name)
        desc.attrs = dict(attrs) if attrs else {}
        desc.global_init = global_init
        return desc


_REGISTRY: dict[str, type[Initializer]] = {}


class Initializer:
    """Base class of the initializers.

    A subclass defines ``_init_weight(desc, arr)``; it may override the rules for
    the other suffixes (``_init_bias``, ``_init_gamma``, ``_init_beta``) too.
    The keyword arguments given to ``__init__`` are what :meth:`dumps` saves, so
    ``create(init.dumps())`` rebuilds an equal initializer.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._verbose = False
        self._print_func: Callable[[Any], str] | None = None

    def set_verbosity(self, verbose: bool = False,
                      print_func: Callable[[Any], str] | None = None) -> Initializer:
        """Log each array initialized, with ``print_func(arr)`` (default: its root mean
        square, ``norm(arr) / sqrt(arr.size)``).  Returns ``self``."""
        self._verbose = verbose
        self._print_func = print_func or _root_mean_square
        return self

    def dumps(self) -> str:
        """The initializer as JSON, ``'["name", {kwargs}]'``: what ``Variable(init=...)`` stores
        and :func:`create` reads back."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc: str, arr: Any) -> None:
        """Fill ``arr`` (an NDArray, in place) as the parameter ``desc`` needs.

        ``desc`` is an :class:`InitDesc`; a plain ``str`` is taken as one without
        attributes.  An ``__init__`` attribute names the initializer whose weight rule
        fills the array; otherwise the suffix of the name picks the rule.
        """
        if not isinstance(desc, str):
            raise ArgumentTypeError(
                f"{type(self).__name__}: desc must be the parameter's name, as an "
                f"InitDesc or a str, got {type(desc).__name__}; call init(InitDesc(name), arr)")
        if not isinstance(desc, InitDesc):
            desc = InitDesc(desc)
        if desc.global_init is None:
            desc.global_init = self
        declared = desc.attrs.get("__init__", "")
        if declared:
            create(declared)._init_weight(desc, arr)
            self._verbose_print(desc, declared, arr)
            return
        for suffix, rule in _SUFFIX_RULES:
            if desc.endswith(suffix):
                getattr(self, rule)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"

    def _verbose_print(self, desc: str, rule: str, arr: Any) -> None:
        if self._verbose and self._print_func:
            _log.info("Initialized %s as %s: %s", desc, rule, self._print_func(arr))

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _init_weight(desc, arr)")

    def _init_bias(self, desc: InitDesc, arr: Any) -> None:
        arr[:] = 0.0

    def _init_gamma(self, desc: InitDesc, arr: Any) -> None:
        arr[:] = 1.0

    def _init_beta(self, desc: InitDesc, arr: Any) -> None:
        arr[:] = 0.0

    def _init_zero(self, desc: InitDesc, arr: Any) -> None:
        arr[:] = 0.0

    def _init_one(self, desc: InitDesc, arr: Any) -> None:
        arr[:] = 1.0

    def _init_default(self, desc: InitDesc, arr: Any) -> None:
        suffixes = ", ".join(s for s, _ in _SUFFIX_RULES)
        raise ParamError(
            f"cannot tell how to initialize {str(desc)!r}: its name ends in none of {suffixes}; "
            f"declare it with mx.sym.Variable({str(desc)!r}, init=mx.init.Uniform()) (or another "
            f"initializer), or use mx.init.Mixed to match it by pattern")


# Checked in order; the first suffix the name ends with wins.  MXNet 1.x leaves the
# batch-norm statistics to the `__init__` attribute that its BatchNorm sets on them;
# they are listed here so that they initialize the same way without it.
_SUFFIX_RULES = (
    ("weight", "_init_weight"),
    ("bias", "_init_bias"),
    ("gamma", "_init_gamma"),
    ("beta", "_init_beta"),
    ("moving_mean", "_init_zero"),
    ("moving_var", "_init_one"),
    ("moving_inv_var", "_init_zero"),
    ("moving_avg", "_init_zero"),
    ("min", "_init_zero"),
    ("max", "_init_one"),
)


def _root_mean_square(arr: Any) -> str:
    values = arr.asnumpy()
    return str(float(np.linalg.norm(values)) / math.sqrt(max(values.size, 1)))


def register(klass: type[Initializer], name: str | None = None) -> type[Initializer]:
    """Register ``klass`` for :func:`create` under ``name`` (default: its class name),
    case-insensitively; usable as a decorator.  Re-registering a name warns and replaces."""
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise ArgumentTypeError(
            f"initializer.register: {klass!r} is not a subclass of dagnet.init.Initializer; "
            f"derive your class from it and define _init_weight")
    key = (name or klass.__name__).lower()
    previous = _REGISTRY.get(key)
    if previous is not None and previous is not klass:
        warnings.warn(f"initializer {key!r}: {klass.__module__}.{klass.__qualname__} replaces "
                      f"{previous.__module__}.{previous.__qualname__}", UserWarning, stacklevel=2)
    _REGISTRY[key] = klass
    return klass


def unregister(name: str, klass: type[Initializer] | None = None) -> None:
    """Forget the initializer registered as ``name`` -- only if it is still ``klass``,
    where given (a name registered again since stays).  An unknown name is ignored."""
    key = name.lower()
    if klass is None or _REGISTRY.get(key) is klass:
        _REGISTRY.pop(key, None)


def alias(*aliases: str) -> Callable[[type[Initializer]], type[Initializer]]:
    """A decorator registering the class under each of ``aliases`` as well."""

    def decorate(klass: type[Initializer]) -> type[Initializer]:
        for name in aliases:
            register(klass, name)
        return klass

    return decorate


def create(init: Initializer | str, /, **kwargs: Any) -> Initializer:
    """An initializer from an instance (returned as is), a registered name
    (``create('xavier', magnitude=2)``), or the JSON of :meth:`Initializer.dumps`."""
    if isinstance(init, Initializer):
        if kwargs:
            raise ParamError(f"initializer.create: {init!r} is already an initializer; "
                             f"keyword arguments {sorted(kwargs)} cannot apply to it")
        return init
    if not isinstance(init, str):
        raise ArgumentTypeError(f"initializer.create: expected an Initializer, a name such as "
                                f"'uniform', or its JSON, got {type(init).__name__}")
    if init.startswith("["):
        name, kwargs = _parse_dumped(init, kwargs)
        return create(name, **kwargs)
    klass = _REGISTRY.get(init.lower())
    if klass is None:
        raise UnknownNameError(
            f"unknown initializer {init!r}; expected one of {', '.join(sorted(_REGISTRY))} "
            f"(register a custom one with @dagnet.init.register)")
    return klass(**kwargs)


def _parse_dumped(text: str, kwargs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    try:
        name, dumped = json.loads(text)
    except ValueError as error:
        raise ParamError(f"initializer.create: {text!r} is not the JSON of Initializer.dumps(), "
                         f"'[\"name\", {{kwargs}}]' ({error})") from None
    if kwargs:
        raise ParamError(f"initializer.create: {text!r} already holds its arguments; "
                         f"keyword arguments {sorted(kwargs)} cannot be added to it")
    return name, dumped


@register
@alias("zeros")
class Zero(Initializer):
    """Fill weights with 0."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Fill weights with 1."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        arr[:] = 1


@register
class Constant(Initializer):
    """Fill weights with ``value``: a scalar, or an array (NDArray, numpy) that
    broadcasts to the weight's shape."""

    def __init__(self, value: Any) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        arr[:] = self.value

    def dumps(self) -> str:
        """As :meth:`Initializer.dumps`, with an array ``value`` written as nested lists."""
        value = self.value
        if not np.isscalar(value):
            value = value.tolist() if isinstance(value, np.ndarray) else value.asnumpy().tolist()
        self._kwargs["value"] = value  # as MXNet: the kwargs hold what was written
        return json.dumps(["constant", self._kwargs])


@register
class Uniform(Initializer):
    """Weights drawn uniformly from ``[-scale, scale)``."""

    def __init__(self, scale: float = 0.07) -> None:
        super().__init__(scale=scale)
        self.scale = real("Uniform", "scale", scale, minimum=0.0)

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        _uniform(-self.scale, self.scale, arr)


@register
class Normal(Initializer):
    """Weights drawn from the normal distribution with mean 0 and standard deviation ``sigma``."""

    def __init__(self, sigma: float = 0.01) -> None:
        super().__init__(sigma=sigma)
        self.sigma = real("Normal", "sigma", sigma, minimum=0.0)

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        _normal(0.0, self.sigma, arr)


def _uniform(low: float, high: float, arr: Any) -> None:
    # The array's own context: the sampler would otherwise use the current device.
    random.uniform(low, high, shape=tuple(arr.shape), ctx=arr.context, out=arr)


def _normal(loc: float, scale: float, arr: Any) -> None:
    random.normal(loc, scale, shape=tuple(arr.shape), ctx=arr.context, out=arr)


@register
class Orthogonal(Initializer):
    """An orthogonal weight (Saxe et al., 2013, arXiv:1312.6120), times ``scale``.

    A ``(nout, prod(shape[1:]))`` matrix of uniform ``[-1, 1)`` (``rand_type='uniform'``)
    or standard normal (``'normal'``) samples is decomposed by SVD, and whichever
    orthonormal factor has its shape, reshaped, is the weight.
    """

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform") -> None:
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = real("Orthogonal", "scale", scale)
        self.rand_type = choice("Orthogonal", "rand_type", rand_type, ("uniform", "normal"))

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            sample = random.uniform(-1.0, 1.0, shape=(nout, nin), ctx=arr.context)
        else:
            sample = random.normal(0.0, 1.0, shape=(nout, nin), ctx=arr.context)
        matrix = sample.asnumpy().astype(np.float64)
        u, _, v = np.linalg.svd(matrix, full_matrices=False)
        basis = u if u.shape == matrix.shape else v
        arr[:] = (self.scale * basis.reshape(arr.shape)).astype(arr.dtype)


@register
class Xavier(Initializer):
    """Xavier/Glorot initialization (Glorot & Bengio, 2010), which keeps the gradients'
    scale about equal across layers.

    With ``fan_in = shape[1] * r`` and ``fan_out = shape[0] * r``, where ``r`` is the
    product of the dimensions after the second (the receptive field of a convolution),
    ``factor`` is ``(fan_in + fan_out) / 2`` (``factor_type='avg'``), ``fan_in``
    (``'in'``) or ``fan_out`` (``'out'``), and ``c = sqrt(magnitude / factor)``.
    Weights are drawn uniformly from ``[-c, c)`` (``rnd_type='uniform'``) or from the
    normal distribution with standard deviation ``c`` (``'gaussian'``).  The weight
    must have at least two dimensions.
    """

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg",
                 magnitude: float = 3) -> None:
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        owner = type(self).__name__
        self.rnd_type = choice(owner, "rnd_type", rnd_type, ("uniform", "gaussian"))
        self.factor_type = choice(owner, "factor_type", factor_type, ("avg", "in", "out"))
        self.magnitude = real(owner, "magnitude", magnitude, minimum=0.0)

    def scale(self, shape: Sequence[int], name: str = "weight") -> float:
        """``c`` for a weight of ``shape``: the uniform bound or the normal's deviation."""
        if len(shape) < 2:
            raise ShapeError(
                f"{type(self).__name__}: cannot initialize {name!r} of shape {tuple(shape)}: "
                f"fan-in and fan-out need at least 2 dimensions; initialize vectors with "
                f"Variable(init=mx.init.Uniform()) or another initializer")
        receptive = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        return math.sqrt(self.magnitude / factor)

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        c = self.scale(tuple(arr.shape), str(desc))
        if self.rnd_type == "uniform":
            _uniform(-c, c, arr)
        else:
            _normal(0.0, c, arr)


@register
class MSRAPrelu(Xavier):
    """He initialization for (P)ReLU layers (He et al., 2015, arXiv:1502.01852):
    :class:`Xavier` with ``rnd_type='gaussian'`` and ``magnitude = 2 / (1 + slope**2)``,
    where ``slope`` is the initial negative slope of the PReLU."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25) -> None:
        slope = real("MSRAPrelu", "slope", slope)
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope**2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Weights of a bilinear-upsampling deconvolution, ``(C, 1, k, k)``-shaped: each
    kernel is the outer product of two triangle (tent) filters of width ``k``."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        shape = tuple(arr.shape)
        if len(shape) != 4:
            raise ShapeError(f"Bilinear: {str(desc)!r} has shape {shape}; an upsampling kernel "
                             f"is 4-D, (channels, 1, height, width)")
        f = math.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        x = np.arange(shape[3])
        y = np.arange(shape[2])
        kernel = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c))
        arr[:] = np.broadcast_to(kernel, shape).astype(np.float32)


@register
class LSTMBias(Initializer):
    """An LSTM cell's biases (input, forget, cell, output gates stacked): 0, except the
    forget gate's ``forget_bias`` (Jozefowicz et al., 2015, recommend 1.0)."""

    def __init__(self, forget_bias: float = 1.0) -> None:
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = real("LSTMBias", "forget_bias", forget_bias)

    def _init_weight(self, desc: InitDesc, arr: Any) -> None:
        hidden = arr.shape[0] // 4
        values = np.zeros(tuple(arr.shape), dtype=np.float32)
        values[hidden:2 * hidden] = self.forget_bias
        arr[:] = values


class Mixed:
    """Initialize each parameter with the initializer of the first regular expression in
    ``patterns`` that matches its name (``re.match``, so at the start); end with ``'.*'``
    to give a default."""

    def __init__(self, patterns: Sequence[str], initializers: Sequence[Any]) -> None:
        if len(patterns) != len(initializers):
            raise ParamError(f"Mixed: {len(patterns)} patterns but {len(initializers)} "
                             f"initializers; give one initializer per pattern")
        self.map = [(re.compile(p), create(i) if isinstance(i, str) else i)
                    for p, i in zip(patterns, initializers)]

    def __call__(self, desc: str, arr: Any) -> None:
        """Initialize ``arr`` with the initializer of the first pattern ``desc`` matches."""
        for pattern, init in self.map:
            if pattern.match(desc):
                init(desc, arr)
                return
        patterns = ", ".join(repr(p.pattern) for p, _ in self.map)
        raise ParamError(f"Mixed: parameter {str(desc)!r} matches none of the patterns "
                         f"{patterns}; add '.*' last with a default initializer")


class Load:
    """Initialize parameters from saved arrays: ``param`` is a file written by
    ``mx.nd.save`` or a ``{name: NDArray}`` dict; an ``arg:`` or ``aux:`` prefix on a
    saved name is dropped.  Parameters not found are left to ``default_init``."""

    def __init__(self, param: str | Mapping[str, Any], default_init: Any = None,
                 verbose: bool = False) -> None:
        if isinstance(param, str):
            from . import ndarray

            param = ndarray.load(param)
        if not isinstance(param, Mapping):
            raise ArgumentTypeError(f"Load: param must be a file name or a dict of name to "
                                    f"NDArray, got {type(param).__name__}; save arrays under "
                                    f"names with mx.nd.save(fname, {{'w': arr}})")
        self.param = {_strip_prefix(name): arr for name, arr in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, desc: str, arr: Any) -> None:
        """Copy the saved array named ``desc`` into ``arr``, else use ``default_init``."""
        saved = self.param.get(str(desc))
        if saved is not None:
            if tuple(saved.shape) != tuple(arr.shape):
                raise ShapeError(f"Load: {str(desc)!r} has shape {tuple(arr.shape)} but the "
                                 f"saved array has shape {tuple(saved.shape)}")
            arr[:] = saved
            if self.verbose:
                _log.info("Initialized %s by loading", desc)
            return
        if self.default_init is None:
            raise UnknownNameError(
                f"Load: {str(desc)!r} is not among the saved arrays and no default_init was "
                f"given; pass Load(param, default_init=mx.init.Uniform()) or save it")
        self.default_init(desc, arr)
        if self.verbose:
            _log.info("Initialized %s by default", desc)


def _strip_prefix(name: str) -> str:
    return name[4:] if name.startswith(("arg:", "aux:")) else name
