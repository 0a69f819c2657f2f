"""mx.contrib.quantization: the calibration collectors, the histogram merge and the
entropy (KL) calibration, against MXNet 1.9.1's values."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import dagnet as mx
from dagnet.contrib import quantization as q


def _histogram():
    rng = np.random.RandomState(0)
    a = rng.normal(0, 1, 20000).astype(np.float32)
    a[:5] = [8, -7, 6, 9.5, -3]
    th = float(np.abs(a).max())
    hist, edges = np.histogram(a, bins=1001, range=(-th, th))
    b = rng.normal(0, 2, 5000).astype(np.float32)
    b[0] = 15
    return a, q.combine_histogram((hist, edges, float(a.min()), float(a.max()), th), b,
                                  float(b.min()), float(b.max()), float(np.abs(b).max()))


def test_combine_histogram_widens_by_whole_bins_as_mxnet():
    a, (hist, edges, low, high, th) = _histogram()
    assert len(hist) == 1581 and hist.sum() == 25000  # MXNet's values
    assert th == pytest.approx(15.004495504495505) and high == 15.0 and low < -7.0
    assert len(edges) == len(hist) + 1 and edges[0] == pytest.approx(-th)
    # within the old threshold the bins stay and the counts add up
    same = q.combine_histogram((hist, edges, low, high, th), a, float(a.min()), 9.5, 9.5)
    assert same[0].sum() == 45000 and same[4] == th


def test_entropy_threshold_matches_mxnet():
    _, hist = _histogram()
    low, high, th, divergence = q._get_optimal_threshold(hist, "int8", num_quantized_bins=255)
    assert th == pytest.approx(8.361139297485352, rel=1e-6)  # MXNet 1.9.1's pick
    assert divergence == pytest.approx(0.006779828574508429, rel=1e-4)
    assert q._get_optimal_thresholds({"x": hist}, "int8") == {"x": (-th, th)}


def test_a_non_negative_layer_gets_uint8_bins_and_a_range_from_zero():
    a, _ = _histogram()
    relu = np.abs(a)
    hist, edges = np.histogram(relu, bins=1001, range=(-relu.max(), relu.max()))
    data = (hist, edges, float(relu.min()), float(relu.max()), float(relu.max()))
    _, _, th, _ = q._get_optimal_threshold(data, "auto", 255)
    assert th == pytest.approx(6.026473522186279, rel=1e-6)  # MXNet 1.9.1's pick
    hists = {"relu": data}
    assert q._get_optimal_thresholds(hists, "uint8") == {"relu": (0, th)}
    assert hists == {}  # consumed


def test_collectors_follow_the_included_layers(caplog):
    minmax = q._LayerOutputMinMaxCollector("int8", include_layer={"conv_output"},
                                           logger=logging.getLogger("calib"))
    with caplog.at_level(logging.DEBUG, logger="calib"):
        minmax.collect("conv_output", mx.nd.array([-1.0, 2.0]))
        minmax.collect("conv_output", mx.nd.array([0.5, 3.0]))
        minmax.collect("other_output", mx.nd.array([100.0]))
    assert minmax.min_max_dict == {"conv_output": (-1.0, 3.0)}
    assert "conv_output" in caplog.text
    hist = q._LayerHistogramCollector(num_bins=11)
    hist.collect("x", mx.nd.array([-1.0, 0.0, 1.0]))
    hist.collect("x", np.array([4.0]))
    counts, _, low, high, th = hist.hist_dict["x"]
    assert counts.sum() == 4 and (low, high) == (-1.0, 4.0) and th >= 4.0


def test_errors():
    with pytest.raises(ValueError, match="odd number of bins"):
        q._get_optimal_threshold((np.ones(4), np.arange(5.0), 0.0, 1.0, 1.0), "int8")
    with pytest.raises(ValueError, match="every entry is 0"):
        q._smooth_distribution(np.zeros(3))


def test_load_sym_and_params(tmp_path):
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    sym.save(str(tmp_path / "m-symbol.json"))
    mx.nd.save(str(tmp_path / "m.params"), {"arg:fc_weight": mx.nd.ones((2, 3)),
                                             "aux:bn_moving_mean": mx.nd.zeros(2)})
    assert q._load_sym(str(tmp_path / "m-symbol.json")).list_arguments() == \
        ["data", "fc_weight", "fc_bias"]
    assert q._load_sym(sym) is sym
    args, aux = q._load_params(str(tmp_path / "m.params"))
    assert list(args) == ["fc_weight"] and list(aux) == ["bn_moving_mean"]
    with pytest.raises(TypeError, match="Symbol or the path"):
        q._load_sym(3)


def test_the_module_path_mxnet_code_imports():
    namespace: dict = {}
    exec("from dagnet.contrib.quantization import *", namespace)
    assert "combine_histogram" in namespace
