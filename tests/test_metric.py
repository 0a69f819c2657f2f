"""dagnet.metric against values computed by MXNet 1.9.1 for the same inputs, including
MXNet's choices (class-index predictions, per-batch F1 averaging); composite metrics,
create and register, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dagnet as mx

nd = mx.nd.array
P = [[0.1, 0.2, 0.7], [0.5, 0.3, 0.2], [0.3, 0.4, 0.3], [0.2, 0.5, 0.3]]
L = [2, 1, 1, 0]
B1 = ([0, 1, 1, 1], [[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.1, 0.9]])
B2 = ([1, 0, 0], [[0.2, 0.8], [0.4, 0.6], [0.9, 0.1]])
R1 = ([1.0, 2.0, 3.0], [1.5, 1.0, 3.5])
R2 = ([0.0, -1.0], [0.5, 1.0])
R3 = ([0.0, -1.0, 2.0], [0.5, 1.0, 2.5])


def run(metric, batches):
    """get() after each batch (labels and predictions as lists of NDArrays)."""
    out = []
    for label, pred in batches:
        metric.update([nd(label)], [nd(pred)])
        name, value = metric.get()
        assert metric.get_global() == (name, value)
        out.append(value)
    return name, out


# (metric, batches, MXNet's name, MXNet's value after each batch)
CASES = {
    "accuracy": (mx.metric.Accuracy(), [(L, P)], "accuracy", [0.5]),
    "accuracy_of_indices": (mx.metric.Accuracy(), [([0, 1, 2, 3], [0.9, 1.7, 2.2, 2.0])],
                            "accuracy", [0.75]),
    "accuracy_axis0": (mx.metric.Accuracy(axis=0),
                       [([0, 2, 1], [[0.1, 0.9, 0.2], [0.8, 0.05, 0.3], [0.1, 0.05, 0.5]])],
                       "accuracy", [0.0]),
    "top_k": (mx.metric.TopKAccuracy(top_k=2), [(L, P)], "top_k_accuracy_2", [0.75]),
    "cross_entropy": (mx.metric.CrossEntropy(), [(L, P)], "cross-entropy",
                      [1.0215940475463867]),
    "nll": (mx.metric.NegativeLogLikelihood(), [(L, P)], "nll-loss", [1.0215940475463867]),
    "perplexity": (mx.metric.Perplexity(ignore_label=None), [(L, P)], "perplexity",
                   [2.7776188934730373]),
    "perplexity_ignore": (mx.metric.Perplexity(ignore_label=1), [(L, P)], "perplexity",
                          [2.672612413409831]),
    "f1_macro": (mx.metric.F1(), [B1, B2], "f1", [0.8, 0.7333333333333334]),
    "f1_micro": (mx.metric.F1(average="micro"), [B1, B2], "f1", [0.8, 0.75]),
    "mcc_macro": (mx.metric.MCC(), [B1, B2], "mcc", [0.5773502691896258, 0.5386751345948129]),
    "mcc_micro": (mx.metric.MCC(average="micro"), [B1, B2], "mcc",
                  [0.5773502691896258, 0.4166666666666667]),
    "mse": (mx.metric.MSE(), [R1, R2], "mse", [0.5, 1.3125]),
    "rmse": (mx.metric.RMSE(), [R1, R2], "rmse", [0.7071067690849304, 1.0824223458766937]),
    "mae": (mx.metric.MAE(), [R1, R2], "mae", [0.6666666865348816, 0.9583333432674408]),
    "pearsonr": (mx.metric.PearsonCorrelation(), [R1, R3], "pearsonr",
                 [0.7559289460184544, 0.7972784076979946]),
    "pearsonr_micro": (mx.metric.PearsonCorrelation(average="micro"), [R1, R3], "pearsonr",
                       [0.7559289460184544, 0.7646014547562571]),
    "loss": (mx.metric.Loss(), [R1, R2], "loss", [2.0, 1.5]),
    "custom": (mx.metric.np(lambda label, pred: float(np.abs(label - pred).max())), [R1, R2],
               "custom(<lambda>)", [1.0, 1.5]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_match_mxnet(case):
    metric, batches, name, expected = CASES[case]
    metric.reset()
    got_name, got = run(metric, batches)
    assert got_name == name
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_local_and_global():
    acc = mx.metric.create("acc")
    acc.update([nd([0, 1])], [nd([[1, 0], [1, 0]])])
    acc.reset_local()
    assert math.isnan(acc.get()[1]) and acc.get_global() == ("accuracy", 0.5)
    acc.update([nd([1])], [nd([[0, 1]])])
    assert acc.get() == ("accuracy", 1.0)
    assert acc.get_global()[1] == pytest.approx(2 / 3)
    assert (acc.num_inst, acc.sum_metric) == (1, 1)
    assert acc.get_name_value() == [("accuracy", 1.0)]
    acc.reset()
    assert math.isnan(acc.get_global()[1])
    assert str(mx.metric.create("mse")) == "EvalMetric: {'mse': nan}"


def test_single_arrays_and_numpy_inputs():
    acc = mx.metric.Accuracy()
    acc.update(nd([0, 1, 1]), nd([[0.3, 0.7], [0, 1], [0.4, 0.6]]))
    assert acc.get() == ("accuracy", 2 / 3)
    mse = mx.metric.MSE()
    mse.update([np.array(R1[0], np.float32)], [np.array(R1[1], np.float32)])
    assert mse.get() == ("mse", 0.5)


def test_f1_macro_averages_batches_and_micro_does_not():
    macro, micro = mx.metric.F1(), mx.metric.F1(average="micro")
    for metric in (macro, micro):
        for label, pred in (B1, B2):
            metric.update([nd(label)], [nd(pred)])
    assert macro.get()[1] == pytest.approx((0.8 + 2 / 3) / 2)
    assert micro.get()[1] == 0.75


def test_top_k_larger_than_classes_counts_every_example():
    top = mx.metric.TopKAccuracy(top_k=5)
    top.update([nd(L)], [nd(P)])
    assert top.get() == ("top_k_accuracy_5", 1.0)


def test_custom_metric_with_counts_and_extra_outputs():
    metric = mx.metric.CustomMetric(lambda label, pred: (float(label.sum()), label.size),
                                    name="mean_label", allow_extra_outputs=True)
    metric.update([nd([1.0, 3.0])], [nd([0.0, 0.0]), nd([9.0])])
    assert metric.get() == ("mean_label", 2.0)

    def my_metric(label, pred):
        return 0.0

    assert mx.metric.np(my_metric).name == "my_metric"
    assert mx.metric.create(my_metric).name == "my_metric"


def test_update_dict_picks_named_arrays():
    acc = mx.metric.Accuracy(output_names=["out"], label_names=["lab"])
    acc.update_dict({"other": nd([5]), "lab": nd([1])}, {"out": nd([[0.0, 1.0]])})
    assert acc.get() == ("accuracy", 1.0)


def test_composite():
    composite = mx.metric.create(["acc", "f1"])
    assert isinstance(composite, mx.metric.CompositeEvalMetric)
    composite.add(mx.metric.MSE())
    composite.update([nd(B1[0])], [nd(B1[1])])
    names, values = composite.get()
    assert names == ["accuracy", "f1", "mse"] and values[:2] == [0.75, 0.8]
    assert composite.get_global()[0] == names
    assert composite.get_name_value()[1] == ("f1", 0.8)
    assert composite.get_metric(1).name == "f1"
    composite.reset()
    assert all(math.isnan(v) for v in composite.get()[1])
    with pytest.raises(mx.metric.MetricError, match="holds 3 metric"):
        composite.get_metric(3)


def test_create_names_aliases_and_configs():
    expected = {"acc": "Accuracy", "accuracy": "Accuracy", "ce": "CrossEntropy",
                "CrossEntropy": "CrossEntropy", "nll_loss": "NegativeLogLikelihood",
                "f1": "F1", "MSE": "MSE", "rmse": "RMSE", "mae": "MAE", "loss": "Loss",
                "pearsonr": "PearsonCorrelation", "composite": "CompositeEvalMetric",
                "mcc": "MCC"}
    for name, cls in expected.items():
        assert type(mx.metric.create(name)).__name__ == cls
    assert mx.metric.create("top_k_accuracy", top_k=3).name == "top_k_accuracy_3"
    assert mx.metric.create("top_k_acc", 4).top_k == 4
    assert mx.metric.create("perplexity", ignore_label=-1).ignore_label == -1
    acc = mx.metric.create("acc", axis=0)
    assert mx.metric.create(acc) is acc
    config = mx.metric.create(["acc", "mse"]).get_config()
    assert config["metrics"][0] == {"axis": 1, "metric": "Accuracy", "name": "accuracy",
                                    "output_names": None, "label_names": None}
    rebuilt = mx.metric.create(config)
    assert [m.name for m in rebuilt.metrics] == ["accuracy", "mse"]
    assert mx.metric.create('["acc", {"axis": 0}]').axis == 0


def test_register_a_metric(monkeypatch):
    monkeypatch.setattr(mx.metric, "_REGISTRY", dict(mx.metric._REGISTRY))

    @mx.metric.register
    @mx.metric.alias("always_one")
    class AlwaysOne(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__("one")

        def update(self, labels, preds):
            self.sum_metric += 1
            self.num_inst += 1

    for name in ("alwaysone", "ALWAYS_ONE"):
        assert isinstance(mx.metric.create(name), AlwaysOne)
    with pytest.warns(UserWarning, match="replaces"):
        mx.metric.register(mx.metric.MSE, "always_one")
    with pytest.raises(TypeError, match="subclass of EvalMetric"):
        mx.metric.register(dict)


def test_unknown_metric_lists_the_names():
    with pytest.raises(mx.UnknownNameError) as info:
        mx.metric.create("accuracyy")
    message = str(info.value)
    assert "unknown metric 'accuracyy'" in message
    assert "acc, accuracy," in message and "dagnet.metric.register" in message
    assert isinstance(info.value, KeyError)


def test_errors_say_how_to_fix():
    with pytest.raises(mx.ShapeError, match="length of labels 2 does not match.*predictions 1"):
        mx.metric.Accuracy().update([nd([1]), nd([0])], [nd([[0, 1]])])
    with pytest.raises(ValueError, match="one label per example"):
        mx.metric.Accuracy().update([nd([1, 0, 1])], [nd([[0, 1], [1, 0]])])
    with pytest.raises(mx.metric.MetricError, match="binary classification only.*3 classes"):
        mx.metric.F1().update([nd([0, 1, 2])], [nd([[0, 1], [1, 0], [1, 0]])])
    with pytest.raises(mx.ParamError, match="use Accuracy"):
        mx.metric.TopKAccuracy()
    with pytest.raises(mx.ParamError, match="'macro', 'micro'"):
        mx.metric.F1(average="weighted")
    with pytest.raises(mx.ShapeError, match="one class index per example"):
        mx.metric.CrossEntropy().update([nd([0, 1])], [nd([[0.5, 0.5]])])
    with pytest.raises(mx.ShapeError, match="same shape"):
        mx.metric.MSE().update([nd([[1.0, 2.0]])], [nd([[1.0, 2.0, 3.0]])])
    with pytest.raises(TypeError, match="already a metric"):
        mx.metric.create(mx.metric.MSE(), name="x")


def test_lazy_submodule():
    import dagnet

    assert "metric" in dagnet.__all__ and dagnet.metric.Accuracy is mx.metric.Accuracy


def _confusion_batch(confusion):
    """Labels and one-hot predictions whose confusion matrix (pred x label) is ``confusion``."""
    labels, preds = [], []
    for pred, row in enumerate(confusion):
        for label, count in enumerate(row):
            labels += [label] * count
            preds += [pred] * count
    k = len(confusion)
    return [mx.nd.array(labels)], [mx.nd.array(np.eye(k)[preds])]


def test_pcc_equals_mcc_for_two_classes_and_takes_indices():
    labels, preds = _confusion_batch([[7, 3], [2, 5]])
    pcc, mcc = mx.metric.create("pcc"), mx.metric.create("mcc")
    pcc.update(labels, preds)
    mcc.update(labels, preds)
    assert pcc.get()[1] == pytest.approx(mcc.get()[1])
    by_index = mx.metric.PCC()
    by_index.update(labels, [p.argmax(axis=1) for p in preds])
    assert by_index.get()[1] == pytest.approx(pcc.get()[1])


def test_pcc_multiclass_matches_the_pearson_correlation_of_one_hot_vectors():
    confusion = [[23, 13, 3], [7, 19, 11], [2, 5, 17]]
    labels, preds = _confusion_batch(confusion)
    metric = mx.metric.PCC()
    metric.update(labels, preds)
    onehot_label = np.eye(3)[labels[0].asnumpy().astype(int)]
    onehot_pred = preds[0].asnumpy()
    centred_l = onehot_label - onehot_label.mean(axis=0)
    centred_p = onehot_pred - onehot_pred.mean(axis=0)
    want = (centred_l * centred_p).sum() / np.sqrt((centred_l ** 2).sum() * (centred_p ** 2).sum())
    assert metric.get()[1] == pytest.approx(want)
    # batching and order do not change it; classes grow as they are seen
    split = mx.metric.PCC()
    for i in reversed(range(len(labels[0]))):
        split.update([labels[0][i:i + 1]], [preds[0][i:i + 1]])
    assert split.get()[1] == pytest.approx(want)
    split.reset_local()
    assert np.isnan(split.get()[1]) and split.get_global()[1] == pytest.approx(want)
