"""mx.contrib.amp: the casts, the graph rewrite, init's patching and loss scaling."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dagnet as mx
from dagnet.contrib import amp


def _mlp():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    act = mx.sym.Activation(fc, act_type="softrelu", name="act")
    both = mx.sym.elemwise_add(act, mx.sym.relu(fc, name="r"), name="sum")
    return mx.sym.SoftmaxOutput(both, name="sm")


def _ops(sym):
    return [(n["op"], n["name"]) for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"]


def test_amp_cast_touches_only_float16_and_float32():
    a = mx.sym.var("a")
    cast = mx.sym.amp_cast(a, dtype="float16")
    assert cast.infer_type(a=np.float32)[1] == [np.float16]
    assert cast.infer_type(a=np.float64)[1] == [np.float64]
    assert cast.infer_type(a=np.int32)[1] == [np.int32]


@pytest.mark.parametrize("narrow, want", [(False, np.float32), (True, np.float16)])
def test_amp_multicast_picks_one_precision_and_leaves_other_dtypes(narrow, want):
    a, b, c = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")
    cast = mx.sym.amp_multicast(a, b, c, num_outputs=3, cast_narrow=narrow)
    assert cast.infer_type(a=np.float16, b=np.float32, c=np.int32)[1] == [want, want, np.int32]


def test_amp_cast_gradient_comes_back_in_the_input_dtype():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.amp_cast(x, dtype="float16")
        loss = (y * 2).sum()
    loss.backward()
    assert y.dtype == np.float16 and x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 3), 2.0))


def test_convert_symbol_inserts_casts_by_operator_group():
    converted = amp.convert_symbol(_mlp())
    ops = _ops(converted)
    assert ("amp_cast", "data_amp_cast_float16") in ops
    assert ("amp_cast", "fc_weight_amp_cast_float16") in ops
    assert ("amp_cast", "fc_amp_cast_float32") in ops        # softrelu: conditional float32
    assert ("amp_multicast", "sum_amp_multicast") in ops     # element-wise sum: widest
    assert converted.list_arguments() == _mlp().list_arguments()
    types = dict.fromkeys(converted.list_arguments(), np.float32)
    _, out_types, _ = converted.infer_type(**types)
    assert out_types == [np.float32]


def test_convert_symbol_runs_close_to_the_float32_graph():
    rng = np.random.default_rng(0)
    args = {"data": rng.standard_normal((3, 5)), "fc_weight": rng.standard_normal((4, 5)),
            "fc_bias": rng.standard_normal(4), "sm_label": np.array([0, 1, 2])}
    results = []
    for sym in (_mlp(), amp.convert_symbol(_mlp())):
        exe = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()})
        results.append(exe.forward()[0].asnumpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-2, atol=1e-3)


def test_convert_symbol_leaves_excluded_nodes_alone():
    converted = amp.convert_symbol(_mlp(), excluded_sym_names=["fc"])
    assert not any(name.startswith(("data_amp", "fc_weight_amp")) for _, name in _ops(converted))


def test_convert_symbol_refuses_contradicting_lists_and_unknown_data_names():
    with pytest.raises(ValueError, match="both"):
        amp.convert_symbol(_mlp(), target_dtype_ops=["FullyConnected"],
                           fp32_ops=["FullyConnected"])
    with pytest.raises(ValueError, match="not arguments"):
        amp.convert_symbol(_mlp(), data_names=["images"])
    with pytest.raises(ValueError, match="float16"):
        amp.convert_symbol(_mlp(), target_dtype="float64")


def test_convert_model_casts_parameters_only_low_precision_ops_read():
    args = {"fc_weight": mx.nd.ones((4, 5)), "fc_bias": mx.nd.ones(4)}
    sym, arg_params, aux = amp.convert_model(_mlp(), args, {}, cast_optional_params=True)
    assert arg_params["fc_weight"].dtype == np.float16
    assert arg_params["fc_bias"].dtype == np.float16
    _, kept, _ = amp.convert_model(_mlp(), args, {})
    assert kept["fc_weight"].dtype == np.float32
    with pytest.raises(ValueError, match="not arguments"):
        amp.convert_model(_mlp(), {"conv_weight": mx.nd.ones(1)}, {})


def test_lists_name_registered_operators():
    assert {"Convolution", "Deconvolution", "FullyConnected"} <= set(amp.list_lp16_ops("float16"))
    assert "softmax" in amp.list_fp32_ops("float16")
    assert "elemwise_add" in amp.list_widest_type_cast("float16")
    assert ("Activation", "act_type", ["softrelu"]) in amp.list_conditional_fp32_ops("float16")
    grouped = set(amp.list_lp16_ops("float16")) | set(amp.list_fp32_ops("float16"))
    assert not grouped & set(amp.list_lp16_fp32_ops("float16"))


def test_loss_scaler_halves_on_overflow_and_grows_after_clean_steps():
    scaler = amp.LossScaler(init_scale=8.0, scale_seq_len=2)
    assert scaler.has_overflow([mx.nd.array([np.inf])])
    assert scaler.has_overflow([mx.nd.array([1.0])]) is False
    assert scaler.loss_scale == 4.0
    assert not scaler.has_overflow([mx.nd.array([1.0])])
    assert not scaler.has_overflow([mx.nd.array([1.0])])
    assert scaler.loss_scale == 8.0


def test_init_patches_the_front_ends():
    # init is global and one-way, as in MXNet: run it in a fresh interpreter
    code = textwrap.dedent("""
        import numpy as np
        import dagnet as mx
        from dagnet.contrib import amp
        from dagnet.contrib.amp import amp as amp_module
        assert amp_module._amp_initialized is False
        amp.init()
        assert amp_module._amp_initialized is True  # the flag libraries read
        x, w, b = mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), mx.nd.ones(4)
        y = mx.nd.FullyConnected(x, w, b, num_hidden=4)
        s = mx.nd.softmax(y)
        z = mx.nd.elemwise_add(y, mx.nd.ones((2, 4)))
        sym = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=2, name="fc")
        print(y.dtype.__name__, s.dtype.__name__, z.dtype.__name__,
              sym.infer_type(d=np.float32)[1][0].__name__)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["float16", "float32", "float32", "float16"]
