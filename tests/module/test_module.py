"""``mx.mod.Module``: fit equals the hand-written executor loop bit for bit, learns a
synthetic problem, predicts and scores padded batches, reshapes for other batch
sizes, round-trips checkpoints (optimizer states too) and explains misuse."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import dagnet as mx
from dagnet.module import ModuleStateError

BATCH = 16
LR = {"learning_rate": 0.3, "momentum": 0.9, "wd": 0.001}


def problem(n=60, seed=0):
    """Two classes split by a plane: ``n`` examples of 5 features."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 5)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] - x[:, 2] > 0).astype(np.float32)
    return x, y


def mlp():
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
    h = mx.sym.Activation(h, act_type="tanh", name="tanh1")
    h = mx.sym.FullyConnected(h, num_hidden=2, name="fc2")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def numpy_forward(params, x):
    """The MLP's softmax output computed with numpy."""
    h = np.tanh(x @ params["fc1_weight"].T + params["fc1_bias"])
    z = h @ params["fc2_weight"].T + params["fc2_bias"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def host(params):
    return {k: v.asnumpy() for k, v in params.items()}


def trained_module(x, y, num_epoch=3, **fit_kwargs):
    mx.random.seed(11)
    mod = mx.mod.Module(mlp(), context=fit_kwargs.pop("context", mx.cpu()))
    train = mx.io.NDArrayIter(x, y, batch_size=BATCH)
    mod.fit(train, num_epoch=num_epoch, initializer=mx.init.Xavier(),
            optimizer_params=LR, **fit_kwargs)
    return mod


def hand_written_loop(x, y, num_epoch=3):
    """What fit does, written with simple_bind and an updater."""
    mx.random.seed(11)
    net = mlp()
    ex = net.simple_bind(mx.cpu(), data=(BATCH, 5), softmax_label=(BATCH,))
    params = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    init = mx.init.Xavier()
    for name in sorted(params):
        init(mx.init.InitDesc(name), ex.arg_dict[name])
    opt = mx.optimizer.SGD(rescale_grad=1.0 / BATCH, param_idx2name=dict(enumerate(params)),
                           **LR)
    updater = mx.optimizer.get_updater(opt)
    train = mx.io.NDArrayIter(x, y, batch_size=BATCH)
    for _ in range(num_epoch):
        for batch in train:
            ex.forward(is_train=True, data=batch.data[0], softmax_label=batch.label[0])
            ex.backward()
            for i, name in enumerate(params):
                updater(i, ex.grad_dict[name], ex.arg_dict[name])
        train.reset()
    return {name: ex.arg_dict[name].asnumpy() for name in params}


@pytest.mark.parametrize("kvstore", ["local", "store-object", None])
def test_fit_equals_the_hand_written_loop_bit_for_bit(engine_name, kvstore):
    x, y = problem()
    store = mx.kv.create("local") if kvstore == "store-object" else kvstore
    mod = trained_module(x, y, kvstore=store)
    expected = hand_written_loop(x, y)

    arg_params, aux_params = mod.get_params()
    assert sorted(arg_params) == sorted(expected) and aux_params == {}
    for name, value in expected.items():
        np.testing.assert_array_equal(arg_params[name].asnumpy(), value, err_msg=name)
    # a store object given to fit is the one that updates (MXNet's update_on_kvstore)
    assert mod._update_on_kvstore == (kvstore == "store-object")


def test_fit_learns_a_separable_problem_and_two_devices_agree_with_one():
    x, y = problem(n=200, seed=3)
    one = trained_module(x, y, num_epoch=6)
    two = trained_module(x, y, num_epoch=6, context=[mx.cpu(0), mx.cpu(1)])
    # two halves' gradients summed differ from one batch's only by float rounding

    accuracy = dict(one.score(mx.io.NDArrayIter(x, y, batch_size=BATCH), "acc"))["accuracy"]
    assert accuracy > 0.95
    for name, value in one.get_params()[0].items():
        np.testing.assert_allclose(two.get_params()[0][name].asnumpy(), value.asnumpy(),
                                   rtol=1e-4, atol=1e-4, err_msg=name)


def test_predict_cuts_the_padding_and_score_counts_it_as_mxnet_does():
    x, y = problem()
    mod = trained_module(x, y, num_epoch=1)
    params = host(mod.get_params()[0])
    data = mx.io.NDArrayIter(x, y, batch_size=BATCH)  # 60 = 3 * 16 + 12: pad 4

    predicted = mod.predict(data)
    np.testing.assert_allclose(predicted.asnumpy(), numpy_forward(params, x), rtol=1e-5,
                               atol=1e-6)
    per_batch = mod.predict(data, merge_batches=False)
    assert [len(b[0]) for b in per_batch] == [16, 16, 16, 12]
    assert mod.predict(data, num_batch=2).shape == (32, 2)

    # MXNet's score includes the 4 examples that pad the last batch (the first four)
    padded = np.concatenate([x, x[:4]]), np.concatenate([y, y[:4]])
    expected = (numpy_forward(params, padded[0]).argmax(axis=1) == padded[1]).mean()
    (name, value), = mod.score(data, "acc")
    assert name == "accuracy" and value == pytest.approx(expected)
    assert mod.score(data, "acc", num_batch=1)[0][1] == pytest.approx(
        (numpy_forward(params, x[:16]).argmax(axis=1) == y[:16]).mean())


def test_a_batch_of_another_size_reshapes_and_the_next_full_batch_reshapes_back():
    x, y = problem()
    mod = trained_module(x, y, num_epoch=1)
    params = host(mod.get_params()[0])

    mod.forward(mx.io.DataBatch([mx.nd.array(x[:3])], [mx.nd.array(y[:3])]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), numpy_forward(params, x[:3]),
                               rtol=1e-5, atol=1e-6)
    assert mod.output_shapes == [("softmax_output", (3, 2))]
    assert mod.data_shapes[0].shape == (3, 5) and mod.label_shapes[0].shape == (3,)

    mod.forward(mx.io.DataBatch([mx.nd.array(x[:BATCH])]), is_train=False)  # no labels
    assert mod.output_shapes == [("softmax_output", (BATCH, 2))]
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               numpy_forward(params, x[:BATCH]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mod.predict(x[:5]).asnumpy(), numpy_forward(params, x[:5]),
                               rtol=1e-5, atol=1e-6)


class UnevenIter(mx.io.DataIter):
    """Batches of 16, 16, 16 and a last one of 12 examples (no padding)."""

    def __init__(self, x, y):
        super().__init__(BATCH)
        self.x, self.y = x, y
        self.provide_data = [mx.io.DataDesc("data", (BATCH, 5))]
        self.provide_label = [mx.io.DataDesc("softmax_label", (BATCH,))]
        self.cursor = 0

    def reset(self):
        self.cursor = 0

    def next(self):
        if self.cursor >= len(self.x):
            raise StopIteration
        part = slice(self.cursor, self.cursor + BATCH)
        self.cursor += BATCH
        return mx.io.DataBatch([mx.nd.array(self.x[part])], [mx.nd.array(self.y[part])], pad=0)


def test_a_smaller_last_training_batch_trains_as_in_mxnet():
    x, y = problem()
    rng = np.random.default_rng(5)
    start = {"fc1_weight": rng.standard_normal((8, 5)) * 0.3, "fc1_bias": np.zeros(8),
             "fc2_weight": rng.standard_normal((2, 8)) * 0.3, "fc2_bias": np.zeros(2)}
    mod = mx.mod.Module(mlp())
    mod.fit(UnevenIter(x, y), num_epoch=2, optimizer_params=LR,
            arg_params={k: mx.nd.array(v.astype(np.float32)) for k, v in start.items()})

    # MXNet 1.9.1 gives these for the same data, start and optimizer (rescale_grad stays
    # 1/16 for the batch of 12)
    params = host(mod.get_params()[0])
    np.testing.assert_allclose(params["fc2_bias"], [-0.13073234, 0.13073234], rtol=1e-5)
    np.testing.assert_allclose(params["fc1_weight"][0], [-0.66268903, -0.55036634, 0.5488492,
                                                         0.31901702, 0.09306043], rtol=1e-5)
    assert mod.data_shapes[0].shape == (12, 5)  # bound to the last batch's shape, as MXNet
    full = mx.nd.array(x[:BATCH])
    np.testing.assert_allclose(mod.predict(full).asnumpy(), numpy_forward(params, x[:BATCH]),
                               rtol=1e-5, atol=1e-6)


# fit on a trained module warns that it keeps the parameters, as MXNet does
@pytest.mark.filterwarnings("ignore:Parameters already initialized")
@pytest.mark.parametrize("kvstore", ["local", "store-object"])
def test_a_checkpoint_round_trip_gives_identical_predictions_and_optimizer_states(
        tmp_path, kvstore):
    x, y = problem()
    store = mx.kv.create("local") if kvstore == "store-object" else kvstore
    mod = trained_module(x, y, num_epoch=2, kvstore=store)
    prefix = str(tmp_path / "mlp")
    mod.save_checkpoint(prefix, 2, save_optimizer_states=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "mlp-0002.params", "mlp-0002.states", "mlp-symbol.json"]

    train = mx.io.NDArrayIter(x, y, batch_size=BATCH)
    loaded = mx.mod.Module.load(prefix, 2, load_optimizer_states=True)
    loaded.bind(train.provide_data, train.provide_label)
    again = mx.kv.create("local") if kvstore == "store-object" else kvstore
    loaded.init_optimizer(kvstore=again, optimizer_params=LR)
    np.testing.assert_array_equal(loaded.predict(train).asnumpy(), mod.predict(train).asnumpy())

    # one more epoch from the saved momentum gives what the original module gets
    for module, kv in ((mod, store), (loaded, again)):
        train.reset()
        module.fit(train, num_epoch=3, begin_epoch=2, kvstore=kv, optimizer_params=LR)
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), value.asnumpy())


@pytest.mark.filterwarnings("ignore:Parameters already initialized")
def test_without_the_optimizer_states_a_resumed_run_differs(tmp_path):
    x, y = problem()
    mod = trained_module(x, y, num_epoch=2)
    mod.save_checkpoint(str(tmp_path / "mlp"), 2)
    train = mx.io.NDArrayIter(x, y, batch_size=BATCH)
    loaded = mx.mod.Module.load(str(tmp_path / "mlp"), 2)
    for module in (mod, loaded):
        module.fit(train, num_epoch=3, begin_epoch=2, optimizer_params=LR)
    assert not np.array_equal(loaded.get_params()[0]["fc1_weight"].asnumpy(),
                              mod.get_params()[0]["fc1_weight"].asnumpy())


def test_inputs_need_grad_gives_the_data_gradient_and_fixed_params_stay():
    x, y = problem()
    mx.random.seed(2)
    mod = mx.mod.Module(mlp(), fixed_param_names=["fc1_weight"])
    mod.bind([("data", (BATCH, 5))], [("softmax_label", (BATCH,))], inputs_need_grad=True)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    before = host(mod.get_params()[0])
    batch = mx.io.DataBatch([mx.nd.array(x[:BATCH])], [mx.nd.array(y[:BATCH])])
    mod.forward_backward(batch)
    mod.update()

    ex = mlp().bind(mx.cpu(), {**{k: mx.nd.array(v) for k, v in before.items()},
                               "data": mx.nd.array(x[:BATCH]),
                               "softmax_label": mx.nd.array(y[:BATCH])},
                    args_grad={"data": mx.nd.zeros((BATCH, 5))})
    ex.forward(is_train=True)
    ex.backward()
    (data_grad,) = mod.get_input_grads()
    np.testing.assert_allclose(data_grad.asnumpy(), ex.grad_dict["data"].asnumpy(), rtol=1e-6)
    after = host(mod.get_params()[0])
    np.testing.assert_array_equal(after["fc1_weight"], before["fc1_weight"])
    assert not np.array_equal(after["fc1_bias"], before["fc1_bias"])


def test_auxiliary_states_are_parameters_of_the_checkpoint(tmp_path):
    data = mx.sym.Variable("data")
    h = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=4, name="fc"), name="bn")
    net = mx.sym.LinearRegressionOutput(h, name="lro")
    x = np.random.default_rng(0).standard_normal((20, 3)).astype(np.float32)
    train = mx.io.NDArrayIter(x, x[:, :1].repeat(4, axis=1), batch_size=10,
                              label_name="lro_label")
    mod = mx.mod.Module(net, label_names=["lro_label"])
    mod.fit(train, num_epoch=1, eval_metric="mse")
    arg_params, aux_params = mod.get_params()
    assert sorted(aux_params) == ["bn_moving_mean", "bn_moving_var"]
    assert not np.allclose(aux_params["bn_moving_mean"].asnumpy(), 0)  # training moved it

    mx.model.save_checkpoint(str(tmp_path / "bn"), 1, net, arg_params, aux_params)
    assert sorted(mx.nd.load(str(tmp_path / "bn-0001.params"))) == [
        "arg:bn_beta", "arg:bn_gamma", "arg:fc_bias", "arg:fc_weight",
        "aux:bn_moving_mean", "aux:bn_moving_var"]
    sym, args, auxs = mx.model.load_checkpoint(str(tmp_path / "bn"), 1)
    assert sym.tojson() == net.tojson()
    for saved, params in ((args, arg_params), (auxs, aux_params)):
        assert sorted(saved) == sorted(params)
        for name, value in params.items():
            np.testing.assert_array_equal(saved[name].asnumpy(), value.asnumpy())


def test_names_and_shapes_are_reported_after_bind():
    mod = mx.mod.Module(mlp())
    assert mod.data_names == ["data"] and mod.label_names == ["softmax_label"]
    assert mod.output_names == ["softmax_output"]
    assert not (mod.binded or mod.params_initialized or mod.optimizer_initialized)
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    assert mod.data_shapes == [("data", (4, 5))] and mod.label_shapes == [("softmax_label", (4,))]
    assert mod.output_shapes == [("softmax_output", (4, 2))]
    mod.init_params()
    mod.init_optimizer()
    assert mod.binded and mod.params_initialized and mod.optimizer_initialized
    assert mod._optimizer.rescale_grad == 0.25  # 1 / batch size, as MXNet sets it


def test_misuse_is_explained(caplog):
    net = mlp()
    with pytest.raises(ValueError, match=r"(?s)data_names=\['x'\].*'x' is not found.*data"):
        mx.mod.Module(net, data_names=["x"])
    with pytest.warns(UserWarning, match="label_names=\\['lab'\\]"):
        mx.mod.Module(net, label_names=["lab"])
    mod = mx.mod.Module(net)
    with pytest.raises(ModuleStateError, match="call bind"):
        mod.init_params()
    with pytest.raises(ModuleStateError, match="call bind"):
        mod.forward(mx.io.DataBatch([mx.nd.zeros((4, 5))]))
    with pytest.raises(ValueError, match="don't match names specified by data_names"):
        mod.bind([("x", (4, 5))])
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))], for_training=False)
    with caplog.at_level(logging.WARNING):
        mod.bind([("data", (4, 5))])
    assert "Already bound, ignoring bind()" in caplog.text
    with pytest.raises(ModuleStateError, match="init_params"):
        mod.predict(mx.nd.zeros((4, 5)))
    mod.init_params()
    with pytest.warns(UserWarning, match="already initialized"):
        mod.init_params()
    with pytest.raises(ModuleStateError, match="for_training=True"):
        mod.backward()
    with pytest.raises(ModuleStateError, match="init_optimizer"):
        mod.update()
    with pytest.raises(RuntimeError, match="parameters lack 'fc1_bias', 'fc1_weight', 'fc2_bias'"):
        mod.set_params({}, {})
    with pytest.raises(TypeError, match="must be a DataIter"):
        mod.predict([1, 2, 3])
    with pytest.raises(ValueError, match="num_epoch"):
        mod.fit(mx.io.NDArrayIter(np.zeros((4, 5)), np.zeros(4), batch_size=4))
    used = mx.io.NDArrayIter(np.zeros((4, 5)), np.zeros(4), batch_size=4)
    mod.predict(used)
    with pytest.raises(ValueError, match="no batch in epoch 0.*needs reset"):
        mx.mod.Module(net).fit(used, num_epoch=1)
