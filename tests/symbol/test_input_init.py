"""Operators declare how the variables feeding them start (Op.input_init): LeakyReLU's
prelu slope starts at 0.25 unless the variable says otherwise."""

import numpy as np

import dagnet as mx


def test_prelu_gamma_starts_at_a_quarter_through_module_init_params():
    sym = mx.sym.LeakyReLU(mx.sym.var("data"), act_type="prelu", name="p")
    assert sym.attr_dict()["p_gamma"]["__init__"] == '["Constant", {"value": 0.25}]'
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[("data", (4, 3))])
    mod.init_params()
    np.testing.assert_array_equal(mod.get_params()[0]["p_gamma"].asnumpy(), np.full(3, 0.25))
    # kept through JSON
    assert mx.sym.load_json(sym.tojson()).attr_dict()["p_gamma"]["__init__"] == \
        '["Constant", {"value": 0.25}]'


def test_a_variable_with_its_own_initializer_keeps_it():
    gamma = mx.sym.var("g", init=mx.init.Constant(3))
    sym = mx.sym.LeakyReLU(mx.sym.var("data"), gamma, act_type="prelu")
    assert sym.attr_dict()["g"]["__init__"] == '["constant", {"value": 3}]'


def test_other_operators_leave_their_variables_alone():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    assert "__init__" not in sym.attr_dict().get("fc_weight", {})
