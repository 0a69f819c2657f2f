"""``mx.model`` checkpoints and ``mx.callback``: the files and log lines MXNet writes."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest

import dagnet as mx


def param(nbatch, metric=None, epoch=0):
    return mx.model.BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric, locals={})


def accuracy_of(correct, total):
    metric = mx.metric.create("acc")
    labels = mx.nd.array(np.arange(total) % 2)
    preds = np.zeros((total, 2), dtype=np.float32)
    preds[np.arange(total), (np.arange(total) + (np.arange(total) >= correct)) % 2] = 1
    metric.update([labels], [mx.nd.array(preds)])
    return metric


def messages(caplog):
    return [record.getMessage() for record in caplog.records]


def tiny_net():
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def test_checkpoint_files_are_named_and_keyed_as_mxnet_writes_them(tmp_path, caplog):
    net = tiny_net()
    args = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.array([1, 2])}
    aux = {"stat": mx.nd.array([5.0])}
    with caplog.at_level(logging.INFO):
        mx.model.save_checkpoint(str(tmp_path / "net"), 7, net, args, aux)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net-0007.params", "net-symbol.json"]
    assert f'Saved checkpoint to "{tmp_path / "net"}-0007.params"' in messages(caplog)
    assert sorted(mx.nd.load(str(tmp_path / "net-0007.params"))) == [
        "arg:fc_bias", "arg:fc_weight", "aux:stat"]

    sym, loaded_args, loaded_aux = mx.model.load_checkpoint(str(tmp_path / "net"), 7)
    assert sym.list_arguments() == net.list_arguments()
    np.testing.assert_array_equal(loaded_args["fc_bias"].asnumpy(), [1, 2])
    np.testing.assert_array_equal(loaded_aux["stat"].asnumpy(), [5])
    with pytest.raises(FileNotFoundError):
        mx.model.load_checkpoint(str(tmp_path / "net"), 8)


def test_speedometer_logs_speed_and_metric_every_frequent_batches(caplog):
    speedometer = mx.callback.Speedometer(batch_size=4, frequent=2)
    metric = accuracy_of(3, 4)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):
            speedometer(param(nbatch, metric))
    lines = messages(caplog)
    assert len(lines) == 2
    assert re.fullmatch(r"Epoch\[0\] Batch \[0-2\]\tSpeed: [\d.]+ samples/sec\t"
                        r"accuracy=0.750000", lines[0])
    # auto_reset emptied the local counts after the first line
    assert re.fullmatch(r"Epoch\[0\] Batch \[2-4\]\tSpeed: [\d.]+ samples/sec\taccuracy=nan",
                        lines[1])


def test_speedometer_without_reset_or_metric(caplog):
    cumulative = mx.callback.Speedometer(batch_size=4, frequent=1, auto_reset=False)
    bare = mx.callback.Speedometer(batch_size=4, frequent=1)
    metric = accuracy_of(1, 4)
    with caplog.at_level(logging.INFO):
        for nbatch in range(2):
            cumulative(param(nbatch, metric, epoch=3))
            bare(param(nbatch, epoch=3))
    first, second = messages(caplog)
    assert re.fullmatch(r"Epoch\[3\] Batch \[0-1\]\tSpeed: [\d.]+ samples/sec\t"
                        r"accuracy=0.250000", first)
    assert re.fullmatch(r"Iter\[3\] Batch \[1\]\tSpeed: [\d.]+ samples/sec", second)
    assert metric.num_inst == 4  # not reset


def test_log_train_metric_and_progress_bar_and_validation_log(caplog):
    metric = accuracy_of(2, 4)
    with caplog.at_level(logging.INFO):
        log = mx.callback.log_train_metric(period=2, auto_reset=True)
        for nbatch in range(3):
            log(param(nbatch, metric))
        mx.callback.ProgressBar(total=4, length=8)(param(1))
        mx.callback.LogValidationMetricsCallback()(param(0, accuracy_of(3, 4), epoch=2))
    assert messages(caplog) == [
        "Iter[0] Batch[0] Train-accuracy=0.500000",
        "Iter[0] Batch[2] Train-accuracy=nan",
        "[==------] 25%\r",
        "Epoch[2] Validation-accuracy=0.750000",
    ]
    with pytest.raises(mx.ParamError, match="period must be >= 1"):
        mx.callback.log_train_metric(0)


def test_do_checkpoint_saves_every_period_epochs_numbered_from_one(tmp_path):
    callback = mx.callback.do_checkpoint(str(tmp_path / "run"), period=2)
    args = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros(2)}
    for epoch in range(4):
        callback(epoch, tiny_net(), args, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "run-0002.params", "run-0004.params", "run-symbol.json"]


def test_fit_logs_the_epoch_lines_and_calls_the_callbacks(tmp_path, caplog):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 3)).astype(np.float32)
    train = mx.io.NDArrayIter(x, (x[:, 0] > 0).astype(np.float32), batch_size=4)
    seen = []
    mod = mx.mod.Module(tiny_net())
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_data=train, num_epoch=2,
                batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)),
                epoch_end_callback=[mx.callback.do_checkpoint(str(tmp_path / "m")),
                                    mx.callback.module_checkpoint(mod, str(tmp_path / "s"),
                                                                  save_optimizer_states=True)],
                eval_end_callback=mx.callback.LogValidationMetricsCallback())
    assert seen == [(e, b) for e in range(2) for b in range(3)]
    lines = messages(caplog)
    for epoch in range(2):
        assert any(re.fullmatch(rf"Epoch\[{epoch}\] Train-accuracy=[\d.]+", m) for m in lines)
        assert any(re.fullmatch(rf"Epoch\[{epoch}\] Time cost=[\d.]+", m) for m in lines)
        # once from fit, once from the eval-end callback
        assert sum(bool(re.fullmatch(rf"Epoch\[{epoch}\] Validation-accuracy=[\d.]+", m))
                   for m in lines) == 2
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["m-0001.params", "m-0002.params", "m-symbol.json", "s-0001.params",
                     "s-0001.states", "s-0002.params", "s-0002.states", "s-symbol.json"]
