"""The basic layers: containers (``Sequential``, ``HybridSequential``, ``Concatenate``,
``HybridConcatenate``), ``Dense``, ``Dropout``, ``Embedding``, the normalizations
(``BatchNorm``, ``InstanceNorm``, ``LayerNorm``, ``GroupNorm``), ``Flatten`` and the
function wrappers ``Lambda`` / ``HybridLambda``.  Parameter names and defaults are
MXNet 1.x's (``dense0_weight``, ``batchnorm0_running_mean``, ...)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import ndarray, symbol
from .._errors import GluonAssertionError, GluonValueError
from ..block import Block, HybridBlock
from ..utils import indent
from .activations import Activation

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm",
           "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Lambda", "HybridLambda",
           "Concatenate", "HybridConcatenate"]


def _children_repr(block: Block) -> str:
    lines = "\n".join(f"  ({key}): {indent(repr(child), 2)}"
                      for key, child in block._children.items())
    return f"{type(block).__name__}(\n{lines}\n)"


class _Stack:
    """What both sequential containers share: ``add``, indexing, slicing and ``len``."""

    def add(self, *blocks: Block) -> None:
        """Append blocks, run in order."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self) -> str:
        return _children_repr(self)

    def __getitem__(self, key: int | slice) -> Any:
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self) -> int:
        return len(self._children)


class Sequential(_Stack, Block):
    """Runs its children one after the other."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def forward(self, x: Any) -> Any:
        for block in self._children.values():
            x = block(x)
        return x

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Hybridize the children (a warning suggests HybridSequential when all are hybrid)."""
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          f"HybridBlocks. Consider using HybridSequential for the best "
                          f"performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Stack, HybridBlock):
    """Runs its (hybrid) children one after the other; hybridizable as a whole."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        for block in self._children.values():
            x = block(x)
        return x


class Concatenate(Sequential):
    """Runs every child on the same input and concatenates the outputs along ``axis``."""

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x: Any) -> Any:
        return ndarray.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcatenate(HybridSequential):
    """The hybrid :class:`Concatenate`."""

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Dense(HybridBlock):
    """A fully connected layer, ``activation(dot(x, weight.T) + bias)``: ``weight`` of
    shape ``(units, in_units)`` (``in_units`` inferred at the first call when 0), ``bias``
    of shape ``(units,)``; ``flatten`` collapses all but the first axis of ``x`` first."""

    def __init__(self, units: int, activation: str | None = None, use_bias: bool = True,
                 flatten: bool = True, dtype: Any = "float32", weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", in_units: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            self.act = (Activation(activation, prefix=activation + "_")
                        if activation is not None else None)

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name="fwd")
        return self.act(out) if self.act is not None else out

    def __repr__(self) -> str:
        shape = self.weight.shape
        layout = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        return f"{type(self).__name__}({layout}, {self.act if self.act else 'linear'})"


class Dropout(HybridBlock):
    """Zeroes each element with probability ``rate`` in training (scaling the rest by
    ``1 / (1 - rate)``); ``axes`` share one mask along those axes."""

    def __init__(self, rate: float, axes: tuple = (), **kwargs: Any):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class BatchNorm(HybridBlock):
    """Batch normalization over ``axis`` (the channels) with moving statistics
    ``running_mean``/``running_var`` updated in training (``momentum``); ``center``/``scale``
    learn ``beta``/``gamma``."""

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get("running_mean", grad_req="null",
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null",
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype: Any) -> None:
        """Cast the parameters (float16 keeps them float32, as the operator needs)."""
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any, running_mean: Any,
                       running_var: Any) -> Any:
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                           **self._kwargs)

    def __repr__(self) -> str:
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        channels = self.gamma.shape[0]
        return f"{type(self).__name__}({content}, in_channels={channels if channels else None})"


class Embedding(HybridBlock):
    """Rows of ``weight`` (``input_dim`` x ``output_dim``) looked up by integer index.

    With ``sparse_grad=True`` the weight's gradient is row_sparse: it holds only the
    rows the batch looked up, so optimizers update those rows lazily."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32",
                 weight_initializer: Any = None, sparse_grad: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True,
                                      grad_stype="row_sparse" if sparse_grad else "default")

    def hybrid_forward(self, F: Any, x: Any, weight: Any) -> Any:
        kwargs = {k: v for k, v in self._kwargs.items() if k != "sparse_grad"}
        return F.Embedding(x, weight, name="fwd", **kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """Collapses all axes but the first."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.flatten(x)

    def __repr__(self) -> str:
        return type(self).__name__


class _Norm(HybridBlock):
    """Normalizations with a ``gamma`` scale and ``beta`` shift."""

    def _norm_params(self, shape: tuple, center: bool, scale: bool, beta_initializer: Any,
                     gamma_initializer: Any) -> None:
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=shape, init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=shape, init=beta_initializer, allow_deferred_init=True)

    def __repr__(self) -> str:
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        if isinstance(self, GroupNorm):
            return f"{type(self).__name__}({content})"
        return f"{type(self).__name__}({content}, in_channels={self.gamma.shape[0]})"


class InstanceNorm(_Norm):
    """Normalizes each sample's each channel over its spatial axes (``axis`` is the
    channel axis)."""

    def __init__(self, axis: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._norm_params((in_channels,), center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any) -> Any:
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd",
                              eps=self._epsilon).swapaxes(1, self._axis)


class LayerNorm(_Norm):
    """Normalizes each sample over ``axis`` (default the last), then scales and shifts
    per element of that axis."""

    def __init__(self, axis: int = -1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", in_channels: int = 0,
                 prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self._norm_params((in_channels,), center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F: Any, data: Any, gamma: Any, beta: Any) -> Any:
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class GroupNorm(_Norm):
    """Normalizes each sample over groups of ``num_groups`` channels (axis 1)."""

    def __init__(self, num_groups: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", prefix: str | None = None,
                 params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self._norm_params((num_groups,), center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F: Any, data: Any, gamma: Any, beta: Any) -> Any:
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)


class Lambda(Block):
    """A block running ``function`` (a callable, or the name of an ``mx.nd`` function)."""

    def __init__(self, function: Any, prefix: str | None = None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(ndarray, function):
                raise GluonAssertionError(f"Function name {function} is not found in ndarray.")
            self._func_impl = getattr(ndarray, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise GluonValueError(f"Unrecognized function in lambda: {function} of type "
                                  f"{type(function)}")

    def forward(self, *args: Any) -> Any:
        return self._func_impl(*args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._func_impl.__name__})"


class HybridLambda(HybridBlock):
    """A hybrid block running ``function(F, x, *args)`` (or the ``mx.nd``/``mx.sym``
    function of that name)."""

    def __init__(self, function: Any, prefix: str | None = None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not (hasattr(ndarray, function) and hasattr(symbol, function)):
                raise GluonAssertionError(f"Function name {function} is not found in "
                                          f"symbol/ndarray.")
            name = function
            self._func = lambda F, *args: getattr(F, name)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise GluonValueError(f"Unrecognized function in lambda: {function} of type "
                                  f"{type(function)}")

    def hybrid_forward(self, F: Any, x: Any, *args: Any) -> Any:
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._func_name})"
