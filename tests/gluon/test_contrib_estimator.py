"""gluon.contrib.estimator: the training loop, its default and user event handlers,
checkpoints and early stopping, and the errors for bad arguments."""

from __future__ import annotations

import io
import logging
import os
import re
import warnings

import numpy as np
import pytest

import dagnet as mx
from dagnet import gluon
from dagnet.gluon.contrib.estimator import (
    BatchEnd,
    BatchProcessor,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochEnd,
    Estimator,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    ValidationHandler,
)


def _loader(n=12, batch_size=4, in_dim=3, out_dim=2):
    data = mx.nd.array(np.random.RandomState(0).rand(n, in_dim))
    label = mx.nd.array(np.random.RandomState(1).rand(n, out_dim))
    return gluon.data.DataLoader(gluon.data.ArrayDataset(data, label), batch_size=batch_size)


def _estimator(out_dim=2, **kwargs):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(out_dim))
    net.initialize()
    kwargs.setdefault("trainer", gluon.Trainer(net.collect_params(), "sgd",
                                               {"learning_rate": 0.1}))
    return Estimator(net, loss=gluon.loss.L2Loss(), **kwargs)


def _quiet(est):
    est.logger.handlers = [logging.NullHandler()]
    return est


def test_fit_trains_and_tracks_the_loss_as_default_metric():
    est = _quiet(_estimator())
    assert [m.name for m in est.train_metrics] == ["training l2loss"]
    assert [m.name for m in est.val_metrics] == ["validation l2loss"]
    loader = _loader()
    est.fit(loader, epochs=1)
    first = est.train_metrics[0].get()[1]
    est.fit(loader, epochs=20)
    assert est.train_metrics[0].get()[1] < first


def test_softmax_cross_entropy_suggests_accuracy():
    net = gluon.nn.Dense(3)
    with pytest.warns(UserWarning, match="No trainer"):
        est = Estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss())
    assert isinstance(est.train_metrics[0], mx.metric.Accuracy)
    assert isinstance(est.train_metrics[1], mx.metric.Loss)


def test_fit_by_batches_stops_mid_epoch():
    est = _quiet(_estimator())
    counter = StoppingHandler()
    est.fit(_loader(n=12, batch_size=4), batches=5, event_handlers=[counter])
    assert counter.current_batch == 5
    assert counter.current_epoch == 2


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="gluon.loss.Loss"):
        _estimator().__class__(gluon.nn.Dense(1), loss="mse")
    with pytest.raises(ValueError, match="EvalMetric"):
        _estimator(train_metrics="acc")
    with pytest.raises(ValueError, match="gluon.Trainer"):
        _estimator(trainer="sgd")
    with pytest.raises(ValueError, match="Context"):
        _estimator(context="cpu")
    with pytest.raises(AssertionError, match="not available"):
        _estimator(context=[mx.gpu(99)])
    with pytest.raises(ValueError, match="fit_batch"):
        _estimator(batch_processor=object())
    est = _quiet(_estimator())
    with pytest.raises(ValueError, match="DataLoader"):
        est.fit(mx.io.NDArrayIter(np.ones((4, 3)), np.ones((4, 2)), batch_size=2), epochs=1)
    with pytest.raises(ValueError, match="exactly one of epochs and batches"):
        est.fit(_loader(), epochs=1, batches=2)
    with pytest.raises(ValueError, match="exactly one"):
        est.fit(_loader())
    with pytest.raises(ValueError, match="event handler"):
        est.fit(_loader(), epochs=1, event_handlers=[object()])
    with pytest.raises(ValueError, match="log_interval"):
        LoggingHandler(log_interval="batch")


def test_no_trainer_warns_and_uses_sgd():
    net = gluon.nn.Dense(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = Estimator(net, loss=gluon.loss.L2Loss())
    assert any("No trainer specified" in str(w.message) for w in caught)
    assert type(est.trainer.optimizer).__name__ == "SGD"
    assert est.trainer.learning_rate == pytest.approx(0.001)


def test_initializer_of_an_initialized_net_warns():
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Estimator(net, loss=gluon.loss.L2Loss(), initializer=mx.init.One(),
                  trainer=gluon.Trainer(net.collect_params(), "sgd"))
    assert any("already fully initialized" in str(w.message) for w in caught)


def test_default_handlers_are_sorted_by_priority():
    est = _estimator()
    stop = EarlyStoppingHandler(monitor=est.train_metrics[0], mode="min")
    handlers = est._prepare_default_handlers(None, [stop])
    kinds = [type(h) for h in handlers]
    assert kinds[0] is GradientUpdateHandler and kinds[1] is MetricHandler
    assert kinds[-1] is LoggingHandler and len(handlers) == 5


def test_handlers_must_use_the_estimators_metrics():
    est = _quiet(_estimator())
    foreign = LoggingHandler(metrics=[mx.metric.RMSE()])
    with pytest.raises(ValueError, match="estimator.train_metrics"):
        est.fit(_loader(), epochs=1, event_handlers=[foreign])
    own = LoggingHandler(metrics=est.train_metrics)
    est.fit(_loader(), epochs=1, event_handlers=[own])


def test_custom_handler_stops_training():
    class StopAfter(TrainBegin, BatchEnd, EpochEnd):
        def train_begin(self, estimator, *args, **kwargs):
            self.batches = 0

        def batch_end(self, estimator, *args, **kwargs):
            self.batches += 1
            return self.batches >= 2

        def epoch_end(self, estimator, *args, **kwargs):
            # a batch_end stop ends the epoch; the epoch_end answer ends training
            return self.batches >= 2

    est = _quiet(_estimator())
    handler = StopAfter()
    est.fit(_loader(), epochs=5, event_handlers=[handler])
    assert handler.batches == 2


def test_validation_runs_val_net_and_handlers_every_epoch():
    class Seen(EpochEnd):
        count = 0

        def epoch_end(self, estimator, *args, **kwargs):
            Seen.count += 1

    est = _quiet(_estimator(val_loss=gluon.loss.L1Loss()))
    val = ValidationHandler(_loader(), est.evaluate, event_handlers=Seen())
    est.fit(_loader(), val_data=_loader(), epochs=2, event_handlers=[val])
    assert Seen.count == 2
    name, value = est.val_metrics[0].get()
    assert name == "validation l2loss" and np.isfinite(value)


def test_logging_interval_lines():
    est = _estimator()
    out = io.StringIO()
    est.logger.handlers = [logging.StreamHandler(out)]
    est.fit(_loader(n=20, batch_size=4), epochs=1,
            event_handlers=[LoggingHandler(log_interval=2, metrics=est.train_metrics)])
    lines = [line for line in out.getvalue().splitlines()
             if re.match(r"\[Epoch 0\]\[Batch \d+\]\[Samples \d+\] time/interval: "
                         r"\d+\.\d+s training l2loss: \d+\.\d+", line)]
    assert len(lines) == 3  # batches 0, 2, 4 of 5
    assert "Training begin: using optimizer SGD" in out.getvalue()
    assert "[Epoch 0] Finished in" in out.getvalue()


def test_checkpoints_by_batch_keep_the_newest_and_the_symbol(tmp_path):
    est = _quiet(_estimator())
    est.net.hybridize()
    handler = CheckpointHandler(str(tmp_path), model_prefix="m", epoch_period=None,
                                batch_period=2, max_checkpoints=2)
    est.fit(_loader(n=12, batch_size=4), batches=7, event_handlers=[handler])
    files = sorted(os.listdir(tmp_path))
    assert files == ["m-epoch1batch3.params", "m-epoch1batch3.states",
                     "m-epoch1batch5.params", "m-epoch1batch5.states", "m-symbol.json"]
    sym = mx.sym.load(str(tmp_path / "m-symbol.json"))
    assert "data" in sym.list_arguments()


def test_checkpoint_best_and_resume(tmp_path):
    est = _quiet(_estimator())
    monitor = est.train_metrics[0]
    handler = CheckpointHandler(str(tmp_path), model_prefix="r", monitor=monitor,
                                save_best=True, mode="min", max_checkpoints=1)
    est.fit(_loader(), epochs=2, event_handlers=[handler])
    assert (tmp_path / "r-best.params").exists() and (tmp_path / "r-best.states").exists()
    assert (tmp_path / "r-epoch1batch6.params").exists()
    assert not (tmp_path / "r-epoch0batch3.params").exists()
    trained = est.net.collect_params()
    weight = next(iter(trained.values())).data().asnumpy().copy()

    # a fresh network resumes from the newest checkpoint and trains the epochs left
    fresh = _quiet(_estimator())
    resume = CheckpointHandler(str(tmp_path), model_prefix="r", max_checkpoints=1,
                               resume_from_checkpoint=True)
    loaded = []

    class Check(TrainBegin):
        priority = 1  # after the checkpoint handler loaded the weights

        def train_begin(self, estimator, *args, **kwargs):
            p = next(iter(estimator.net.collect_params().values()))
            loaded.append(p.data().asnumpy().copy())

    fresh.fit(_loader(), epochs=4, event_handlers=[resume, Check()])
    assert fresh.max_epoch == 2
    np.testing.assert_allclose(loaded[0], weight)
    assert (tmp_path / "r-epoch3batch12.params").exists()
    assert not (tmp_path / "r-epoch1batch6.params").exists()

    done = CheckpointHandler(str(tmp_path), model_prefix="r", resume_from_checkpoint=True)
    with pytest.raises(ValueError, match="resume_from_checkpoint=False"):
        _quiet(_estimator()).fit(_loader(), epochs=4, event_handlers=[done])


def test_checkpoint_save_best_needs_a_monitor(tmp_path):
    with pytest.raises(ValueError, match="monitor"):
        CheckpointHandler(str(tmp_path), save_best=True)


def test_early_stopping_waits_patience_epochs():
    est = _quiet(_estimator())
    # 'max' on a loss that falls: never improves after the first epoch
    stop = EarlyStoppingHandler(monitor=est.train_metrics[0], mode="max", patience=2)
    est.fit(_loader(), epochs=10, event_handlers=[stop])
    assert stop.stopped_epoch == 2 and stop.current_epoch == 3
    with pytest.raises(ValueError, match="CompositeEvalMetric"):
        EarlyStoppingHandler(monitor=mx.metric.CompositeEvalMetric())
    with pytest.raises(ValueError, match="monitor"):
        EarlyStoppingHandler(monitor="acc")


def test_early_stopping_auto_mode_follows_the_metric_name():
    with pytest.warns(UserWarning, match="grows"):
        assert EarlyStoppingHandler(mx.metric.Accuracy()).monitor_op is np.greater
    with pytest.warns(UserWarning, match="shrinks"):
        assert EarlyStoppingHandler(mx.metric.MSE()).monitor_op is np.less


def test_custom_batch_processor_is_used():
    class Doubling(BatchProcessor):
        calls = 0

        def fit_batch(self, estimator, train_batch, batch_axis=0):
            Doubling.calls += 1
            return super().fit_batch(estimator, train_batch, batch_axis)

    est = _quiet(_estimator(batch_processor=Doubling()))
    est.fit(_loader(n=8, batch_size=4), epochs=1)
    assert Doubling.calls == 2
