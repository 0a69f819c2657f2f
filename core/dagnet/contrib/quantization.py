"""MXNet's ``mx.contrib.quantization``: the calibration that chooses the ranges a model's
int8/uint8 layers stand for.

Quantized models run here as MXNet's CPU build runs them (``_contrib_quantize_v2``,
``_sg_mkldnn_conv``, ``_contrib_quantized_pooling``, ``_contrib_dequantize``), and this
module gives the calibration MXNet uses to make them: collectors a monitor callback feeds
with each layer's outputs (their minimum and maximum, or a histogram), the histogram
merge, and the entropy calibration that picks, per layer, the threshold whose int8
distribution diverges least (KL) from the float one, as MXNet's ``calibrate_entropy``.

MXNet's graph rewriting (``quantize_model``, ``quantize_graph``, ``quantize_net``) is not
provided: code importing ``*`` from here gets the calibration and no such names.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from .. import ndarray
from .. import symbol as _symbol

__all__ = ["combine_histogram"]


def _host(arr: Any) -> np.ndarray:
    """``arr`` (an NDArray, or anything numpy takes) as a numpy array."""
    return arr.asnumpy() if isinstance(arr, ndarray.NDArray) else np.asarray(arr)


def combine_histogram(old_hist: tuple, arr: Any, new_min: float, new_max: float,
                      new_th: float) -> tuple:
    """Add ``arr``'s values to the histogram ``old_hist`` = ``(hist, edges, min, max,
    threshold)`` over ``(-threshold, threshold)``: within the old threshold the bins stay;
    beyond it, whole bins of the old width are added on both sides until ``new_th`` is
    covered.  Returns the histogram in the same form."""
    hist, edges, old_min, old_max, old_th = old_hist
    values = _host(arr)
    if new_th <= old_th:
        counts, _ = np.histogram(values, bins=len(hist), range=(-old_th, old_th))
        return hist + counts, edges, min(old_min, new_min), max(old_max, new_max), old_th
    step = 2 * old_th / len(hist)
    added = int((new_th - old_th) // step + 1)  # bins added on each side
    bins = 2 * added + len(hist)
    threshold = added * step + old_th
    counts, new_edges = np.histogram(values, bins=bins, range=(-threshold, threshold))
    counts[added:bins - added] += hist
    return counts, new_edges, min(old_min, new_min), max(old_max, new_max), threshold


class _LayerHistogramCollector:
    """A monitor callback (``collect(name, array)``) keeping a histogram of each included
    layer output, merged over batches with :func:`combine_histogram`, in ``hist_dict``."""

    def __init__(self, num_bins: int = 8001, include_layer: Any = None,
                 logger: logging.Logger | None = None):
        self.hist_dict: dict[str, tuple] = {}
        self.num_bins = num_bins
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name: str, arr: Any) -> None:
        """Add ``arr``'s values to layer ``name``'s histogram (if the layer is included)."""
        if self.include_layer is not None and name not in self.include_layer:
            return
        values = _host(arr)
        if self.logger:
            self.logger.debug("Collecting layer %s histogram of shape %s", name, values.shape)
        low, high = float(values.min()), float(values.max())
        threshold = max(abs(low), abs(high))
        if name in self.hist_dict:
            self.hist_dict[name] = combine_histogram(self.hist_dict[name], values, low, high,
                                                     threshold)
        else:
            hist, edges = np.histogram(values, bins=self.num_bins, range=(-threshold, threshold))
            self.hist_dict[name] = (hist, edges, low, high, threshold)


class _LayerOutputMinMaxCollector:
    """A monitor callback (``collect(name, array)``) keeping each included layer output's
    running minimum and maximum in ``min_max_dict`` (the "naive" calibration)."""

    def __init__(self, quantized_dtype: str, include_layer: Any = None,
                 logger: logging.Logger | None = None):
        self.min_max_dict: dict[str, tuple[float, float]] = {}
        self.quantized_dtype = quantized_dtype
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name: str, arr: Any) -> None:
        """Widen layer ``name``'s range by ``arr``'s values (if the layer is included)."""
        if self.include_layer is not None and name not in self.include_layer:
            return
        values = _host(arr)
        low, high = float(values.min()), float(values.max())
        if name in self.min_max_dict:
            old_low, old_high = self.min_max_dict[name]
            low, high = min(old_low, low), max(old_high, high)
        self.min_max_dict[name] = (low, high)
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%f, max_range=%f", name, low, high)


def _smooth_distribution(p: np.ndarray, eps: float = 0.0001) -> np.ndarray:
    """``p`` with its zeros raised to ``eps`` and that mass taken evenly off its non-zero
    entries (so a KL divergence against it is finite), in float32."""
    zeros = p == 0
    n_zeros = int(zeros.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        raise ValueError("the distribution is malformed: every entry is 0")
    eps1 = np.float32(eps) * np.float32(n_zeros) / np.float32(n_nonzeros)
    if eps1 >= 1.0:
        raise ValueError(f"cannot smooth a distribution with {n_zeros} zeros and only "
                         f"{n_nonzeros} non-zero entries")
    return p.astype(np.float32) + np.where(zeros, np.float32(eps), -eps1).astype(np.float32)


def _float32_sum(values: np.ndarray) -> np.float32:
    """The float32 sum taken left to right (MXNet's calibration sums so; the divergence
    curve is flat enough near its minimum that the order of rounding picks the bin)."""
    return np.cumsum(values, dtype=np.float32)[-1]


def _divergence(hist: np.ndarray, start: int, stop: int, num_quantized_bins: int) -> float:
    """The KL divergence between the histogram cut to bins ``[start, stop)`` (the mass
    outside folded into its end bins) and that cut merged into ``num_quantized_bins`` bins
    and spread back over its non-empty bins, in float32 as MXNet's calibrate_entropy."""
    counts = hist.astype(np.int64)
    sliced = counts[start:stop].copy()
    sliced[0] = 0  # the end bins of the cut count into p's ends only, as MXNet's
    p = sliced.astype(np.float32)
    p[0] = _float32_sum(counts[:start + 1].astype(np.float32))
    p[-1] = _float32_sum(counts[stop - 1:].astype(np.float32))
    # merge into num_quantized_bins bins of `merged` bins each (the last takes the rest),
    # then spread each merged total evenly over its non-empty bins
    merged = len(sliced) // num_quantized_bins
    cut = (num_quantized_bins - 1) * merged
    head = sliced[:cut].reshape(num_quantized_bins - 1, merged)
    totals = np.append(head.sum(axis=1), sliced[cut:].sum()).astype(np.float32)
    filled = np.append(np.count_nonzero(head, axis=1), np.count_nonzero(sliced[cut:]))
    share = totals / np.maximum(filled, 1).astype(np.float32)
    spread = np.append(np.repeat(share[:-1], merged), np.full(len(sliced) - cut, share[-1]))
    q = np.where((p != 0) & (np.repeat(filled, [merged] * (num_quantized_bins - 1)
                                       + [len(sliced) - cut]) > 0),
                 spread, np.float32(0)).astype(np.float32)
    try:
        p, q = _smooth_distribution(p), _smooth_distribution(q)
    except ValueError:
        return math.inf
    p, q = p / _float32_sum(p), q / _float32_sum(q)
    return float(_float32_sum(p * np.log(p / q)))


def _get_optimal_threshold(hist_data: tuple, quantized_dtype: str,
                           num_quantized_bins: int = 255) -> tuple:
    """``(min, max, threshold, divergence)`` for one layer's histogram: the threshold (a
    bin edge) whose cut of the distribution diverges least from its quantized version.
    A non-negative layer quantized to uint8 (or ``auto``) gets twice the bins."""
    hist, edges, min_val, max_val, _ = hist_data
    num_bins = len(hist)
    if num_bins % 2 != 1:
        raise ValueError(f"the histogram needs an odd number of bins (a zero bin in the "
                         f"middle), got {num_bins}")
    if min_val >= 0 and quantized_dtype in ("auto", "uint8"):
        num_quantized_bins = num_quantized_bins * 2 + 1
    hist = np.asarray(hist)
    zero = num_bins // 2
    best, best_threshold = math.inf, float(edges[-1])
    for half in range(num_quantized_bins // 2, zero + 1):
        divergence = _divergence(hist, zero - half, zero + half + 1, num_quantized_bins)
        if divergence < best:
            best, best_threshold = divergence, float(edges[zero + half + 1])
    return min_val, max_val, best_threshold, best


def _get_optimal_thresholds(hist_dict: dict, quantized_dtype: str,
                            num_quantized_bins: int = 255,
                            logger: logging.Logger | None = None) -> dict:
    """Each layer's calibrated range from its histogram: ``(0, threshold)`` for a
    non-negative layer quantized to uint8 (or ``auto``), ``(-threshold, threshold)``
    otherwise.  The histograms are consumed (removed from ``hist_dict``)."""
    if logger:
        logger.info("Calculating optimal thresholds for quantization using KL divergence "
                    "with num_quantized_bins=%d", num_quantized_bins)
    thresholds = {}
    for name in list(hist_dict):
        min_val, max_val, th, divergence = _get_optimal_threshold(
            hist_dict.pop(name), quantized_dtype, num_quantized_bins)
        unsigned = min_val >= 0 and quantized_dtype in ("auto", "uint8")
        thresholds[name] = (0, th) if unsigned else (-th, th)
        if logger:
            logger.debug("layer=%s, min_val=%f, max_val=%f, th=%f, divergence=%f", name,
                         min_val, max_val, th, divergence)
    return thresholds


def _load_sym(sym: Any, logger: logging.Logger | None = None) -> Any:
    """A symbol, or the symbol saved in the JSON file ``sym``."""
    if isinstance(sym, str):
        if logger:
            logger.info("Loading symbol from file %s", sym)
        return _symbol.load(sym)
    if isinstance(sym, _symbol.Symbol):
        return sym
    raise TypeError(f"_load_sym takes a Symbol or the path of a symbol file, got "
                    f"{type(sym).__name__}")


def _load_params(params: Any, logger: logging.Logger | None = None) -> tuple[dict, dict]:
    """``(arg_params, aux_params)`` from a ``.params`` file (its ``arg:``/``aux:`` keys) or
    a pair of dicts."""
    if isinstance(params, str):
        if logger:
            logger.info("Loading params from file %s", params)
        arg_params, aux_params = {}, {}
        for key, value in ndarray.load(params).items():
            kind, _, name = key.partition(":")
            if kind == "arg":
                arg_params[name] = value
            elif kind == "aux":
                aux_params[name] = value
        return arg_params, aux_params
    if isinstance(params, (tuple, list)) and len(params) == 2:
        return params[0], params[1]
    raise TypeError("params must be the path of a .params file or a pair of dicts "
                    "(arg_params, aux_params)")
