"""Convolution, transposed convolution and pooling layers in 1, 2 and 3 dimensions
(``Conv2D``, ``Conv2DTranspose``, ``MaxPool2D``, ``GlobalAvgPool2D``, ...), with MXNet
1.x's parameters, defaults and names (``conv0_weight``, ``pool0``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from ... import symbol
from .._errors import GluonAssertionError
from ..block import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tuple(value: Any, n: int, what: str) -> tuple:
    if isinstance(value, Number):
        return (value,) * n
    value = tuple(value)
    if len(value) != n:
        raise GluonAssertionError(f"{what} must be a number or a list of {n} ints")
    return value


def _weight_shapes(op_name: str, data_shape: list[int], kwargs: dict) -> list:
    """The weight and bias shapes the operator infers for data of ``data_shape``."""
    data = symbol.var("data", shape=tuple(data_shape))
    return getattr(symbol, op_name)(data, **kwargs).infer_shape_partial()[0]


class _Conv(HybridBlock):
    """Convolution-like layers: ``op_name`` (Convolution or Deconvolution) with a
    ``weight`` and an optional ``bias``, then an optional activation."""

    def __init__(self, channels: int, kernel_size: tuple, strides: Any, padding: Any,
                 dilation: Any, groups: int, layout: str, in_channels: int = 0,
                 activation: str | None = None, use_bias: bool = True,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 op_name: str = "Convolution", adj: Any = None, prefix: str | None = None,
                 params: Any = None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            self._op_name = op_name
            self._kwargs = {
                "kernel": kernel_size, "stride": _tuple(strides, n, "strides"),
                "dilate": _tuple(dilation, n, "dilation"), "pad": _tuple(padding, n, "padding"),
                "num_filter": channels, "num_group": groups, "no_bias": not use_bias,
                "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            dshape = [0] * (n + 2)
            dshape[layout.find("N")] = 1
            dshape[layout.find("C")] = in_channels
            shapes = _weight_shapes(op_name, dshape, self._kwargs)
            self.weight = self.params.get("weight", shape=shapes[1], init=weight_initializer,
                                          allow_deferred_init=True)
            self.bias = (self.params.get("bias", shape=shapes[2], init=bias_initializer,
                                         allow_deferred_init=True) if use_bias else None)
            self.act = (Activation(activation, prefix=activation + "_")
                        if activation is not None else None)

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name="fwd", **self._kwargs)
        else:
            out = op(x, weight, bias, name="fwd", **self._kwargs)
        return self.act(out) if self.act is not None else out

    def _alias(self) -> str:
        return "conv"

    def __repr__(self) -> str:
        k = self._kwargs
        n = len(k["kernel"])
        shape = self.weight.shape
        text = (f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, "
                f"kernel_size={k['kernel']}, stride={k['stride']}")
        if k["pad"] != (0,) * n:
            text += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            text += f", dilation={k['dilate']}"
        if getattr(self, "outpad", (0,) * n) != (0,) * n:
            text += f", output_padding={self.outpad}"
        if k["num_group"] != 1:
            text += f", groups={k['num_group']}"
        if self.bias is None:
            text += ", bias=False"
        if self.act:
            text += f", {self.act}"
        return text + ")"


def _conv_class(n: int, transpose: bool) -> type:
    default_layout = _LAYOUTS[n][0]
    ones, zeros = (1,) * n if n > 1 else 1, (0,) * n if n > 1 else 0

    def __init__(self: Any, channels: int, kernel_size: Any, strides: Any = ones,
                 padding: Any = zeros, *args: Any, **kwargs: Any) -> None:
        names = (["output_padding"] if transpose else []) + [
            "dilation", "groups", "layout", "activation", "use_bias", "weight_initializer",
            "bias_initializer", "in_channels"]
        defaults = {"output_padding": zeros, "dilation": ones, "groups": 1,
                    "layout": default_layout, "activation": None, "use_bias": True,
                    "weight_initializer": None, "bias_initializer": "zeros", "in_channels": 0}
        values = dict(defaults)
        values.update(zip(names, args))
        for name in names:
            if name in kwargs:
                values[name] = kwargs.pop(name)
        layout = values["layout"]
        allowed = _LAYOUTS[n] if not transpose and n > 1 else (_LAYOUTS[n][0],)
        if layout not in allowed:
            raise GluonAssertionError(f"Only supports {' and '.join(map(repr, allowed))} "
                                      f"layout for now")
        kernel_size = _tuple(kernel_size, n, "kernel_size")
        adj = _tuple(values["output_padding"], n, "output_padding") if transpose else None
        op_name = kwargs.pop("op_name", "Deconvolution" if transpose else "Convolution")
        _Conv.__init__(self, channels, kernel_size, strides, padding, values["dilation"],
                       values["groups"], layout, values["in_channels"], values["activation"],
                       values["use_bias"], values["weight_initializer"],
                       values["bias_initializer"], op_name=op_name, adj=adj, **kwargs)
        if transpose:
            self.outpad = adj

    name = f"Conv{n}D{'Transpose' if transpose else ''}"
    what = "transposed convolution (deconvolution)" if transpose else "convolution"
    doc = (f"{n}-D {what} layer: ``{name}(channels, kernel_size, strides, padding"
           f"{', output_padding' if transpose else ''}, dilation, groups, layout, activation, "
           f"use_bias, weight_initializer, bias_initializer, in_channels)`` with MXNet's "
           f"defaults (layout {default_layout!r}; ``in_channels`` 0 is inferred at the first "
           f"call).")
    return type(name, (_Conv,), {"__init__": __init__, "__doc__": doc,
                                 "__module__": __name__})


Conv1D = _conv_class(1, False)
Conv2D = _conv_class(2, False)
Conv3D = _conv_class(3, False)
Conv1DTranspose = _conv_class(1, True)
Conv2DTranspose = _conv_class(2, True)
Conv3DTranspose = _conv_class(3, True)


class _Pooling(HybridBlock):
    """Pooling layers: ``F.Pooling`` with MXNet's parameters."""

    def __init__(self, pool_size: tuple, strides: Any, padding: Any, ceil_mode: bool,
                 global_pool: bool, pool_type: str, layout: str,
                 count_include_pad: bool | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        n = len(pool_size)
        if strides is None:
            strides = pool_size
        allowed = _LAYOUTS[n]
        if layout not in allowed:
            raise GluonAssertionError(f"Only {' and '.join(allowed)} layouts are valid for "
                                      f"{n}D Pooling")
        self._kwargs = {"kernel": pool_size, "stride": _tuple(strides, n, "strides"),
                        "pad": _tuple(padding, n, "padding"), "global_pool": global_pool,
                        "pool_type": pool_type, "layout": layout,
                        "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self) -> str:
        return "pool"

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return (f"{type(self).__name__}(size={k['kernel']}, stride={k['stride']}, "
                f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
                f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, "
                f"layout={k['layout']})")


def _pool_class(n: int, pool_type: str) -> type:
    default_layout = _LAYOUTS[n][0]
    size = (2,) * n if n > 1 else 2

    if pool_type == "max":
        def __init__(self: Any, pool_size: Any = size, strides: Any = None, padding: Any = 0,
                     layout: str = default_layout, ceil_mode: bool = False,
                     **kwargs: Any) -> None:
            _Pooling.__init__(self, _tuple(pool_size, n, "pool_size"), strides, padding,
                              ceil_mode, False, "max", layout, **kwargs)
    else:
        def __init__(self: Any, pool_size: Any = size, strides: Any = None, padding: Any = 0,
                     ceil_mode: bool = False, layout: str = default_layout,
                     count_include_pad: bool = True, **kwargs: Any) -> None:
            _Pooling.__init__(self, _tuple(pool_size, n, "pool_size"), strides, padding,
                              ceil_mode, False, "avg", layout, count_include_pad, **kwargs)

    name = f"{pool_type.capitalize()}Pool{n}D"
    doc = (f"{n}-D {pool_type} pooling over windows of ``pool_size`` (default 2 per axis) "
           f"moved by ``strides`` (default the window), layout {default_layout!r}.")
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc,
                                    "__module__": __name__})


def _global_pool_class(n: int, pool_type: str) -> type:
    default_layout = _LAYOUTS[n][0]

    def __init__(self: Any, layout: str = default_layout, **kwargs: Any) -> None:
        _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)

    name = f"Global{pool_type.capitalize()}Pool{n}D"
    doc = f"{n}-D global {pool_type} pooling: one value per sample and channel."
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc,
                                    "__module__": __name__})


MaxPool1D = _pool_class(1, "max")
MaxPool2D = _pool_class(2, "max")
MaxPool3D = _pool_class(3, "max")
AvgPool1D = _pool_class(1, "avg")
AvgPool2D = _pool_class(2, "avg")
AvgPool3D = _pool_class(3, "avg")
GlobalMaxPool1D = _global_pool_class(1, "max")
GlobalMaxPool2D = _global_pool_class(2, "max")
GlobalMaxPool3D = _global_pool_class(3, "max")
GlobalAvgPool1D = _global_pool_class(1, "avg")
GlobalAvgPool2D = _global_pool_class(2, "avg")
GlobalAvgPool3D = _global_pool_class(3, "avg")


class ReflectionPad2D(HybridBlock):
    """Pads the two spatial axes of NCHW data by reflection."""

    def __init__(self, padding: Any = 0, **kwargs: Any):
        super().__init__(**kwargs)
        if isinstance(padding, Number):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        self._padding = padding

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.pad(x, mode="reflect", pad_width=self._padding)
