"""mx.mon.Monitor on a module: what it names, when it collects, its statistics."""

import numpy as np
import pytest

import dagnet as mx


def _module():
    x = mx.sym.var("data")
    x = mx.sym.FullyConnected(x, num_hidden=2, name="fc")
    x = mx.sym.Activation(x, act_type="sigmoid", name="act")
    x = mx.sym.LinearRegressionOutput(x, name="out")
    mod = mx.mod.Module(x, label_names=["out_label"])
    mod.bind(data_shapes=[("data", (1, 2))], label_shapes=[("out_label", (1, 2))])
    mod.init_params(arg_params={"fc_weight": mx.nd.ones((2, 2)), "fc_bias": mx.nd.zeros(2)})
    return mod


def _batch():
    return mx.io.DataBatch(data=[mx.nd.array([[1.0, 2.0]])], label=[mx.nd.zeros((1, 2))])


def test_monitor_sees_outputs_gradients_and_arguments():
    mod = _module()
    mon = mx.mon.Monitor(1, stat_func=lambda x: mx.nd.sum(mx.nd.abs(x)), sort=True)
    mod.install_monitor(mon)
    mon.tic()
    mod.forward_backward(_batch())
    names = [name for _, name, _ in mon.toc()]
    assert names == sorted(names)
    assert {"fc_output", "act_output", "out_output", "fc_backward_data", "fc_backward_weight",
            "fc_backward_bias", "act_backward_data", "data", "fc_weight", "fc_bias",
            "out_label"} <= set(names)
    result = dict((name, text) for _, name, text in mon.toc() or [])
    assert result == {}  # toc without tic: nothing collected


def test_monitor_statistic_values_and_pattern():
    mod = _module()
    mon = mx.mon.Monitor(1, pattern="fc_weight|data")
    mod.install_monitor(mon)
    mon.tic()
    mod.forward(_batch())
    results = {name: text for _, name, text in mon.toc()}
    assert set(results) == {"data", "fc_weight"}
    # the default statistic: norm(x) / sqrt(size)
    assert float(results["fc_weight"].strip().strip("[]")) == pytest.approx(1.0)
    assert float(results["data"].strip().strip("[]")) == pytest.approx(np.sqrt(5 / 2))


def test_monitor_collects_every_interval_th_batch():
    mod = _module()
    mon = mx.mon.Monitor(2, pattern="fc_output")
    mod.install_monitor(mon)
    collected = []
    for _ in range(4):
        mon.tic()
        mod.forward(_batch())
        collected.append(len(mon.toc()))
    assert collected == [1, 0, 1, 0]


def test_monitor_refuses_a_bad_interval():
    with pytest.raises(ValueError, match="interval"):
        mx.mon.Monitor(0)
