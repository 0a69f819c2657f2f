"""``dagnet.test_utils.check_numeric_gradient``: MXNet's signature, defaults and verdicts.

The operators are registered here the way an outside package would, each with a
correct gradient rule and with planted bugs; the check must pass the correct
ones and catch every bug, in float32 and float64, for ``grad_nodes`` given as a
list or as a dict of ``grad_req``, and with auxiliary states.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dagnet
import dagnet as mx
from dagnet.operator import XP, Gradient, NoParams, Op, assign, elemwise_shape
from dagnet.test_utils import check_numeric_gradient, default_numeric_eps

DTYPES = [np.float32, np.float64]


def _sin_mul(bug: str = "") -> list[Op]:
    """``y = sin(a) * b``; ``bug`` plants a wrong gradient: ``"scale"`` makes a's 1% too
    large, ``"last"`` spoils only the last element of b's, ``"no-add"`` overwrites b's
    gradient where ``grad_req='add'`` asks to add to it."""

    def forward(attrs, ctx, inputs, req, outputs):
        a, b = inputs
        assign(outputs[0], req[0], ctx.xp.sin(a) * b)

    def backward(attrs, ctx, inputs, req, outputs):
        head, a, b = inputs
        grad_a = head * ctx.xp.cos(a) * b
        grad_b = head * ctx.xp.sin(a)
        if bug == "scale":
            grad_a = grad_a * 1.01
        if bug == "last":
            grad_b = grad_b.copy()
            grad_b.reshape(-1)[-1] += 0.5
        assign(outputs[0], req[0], grad_a)
        if bug == "no-add":
            outputs[1][...] = grad_b
        else:
            assign(outputs[1], req[1], grad_b)

    return [
        Op("ngc_sin_mul", params=NoParams, input_names=["a", "b"],
           infer_shape=elemwise_shape("ngc_sin_mul"), compute={XP: forward},
           gradient=Gradient("_backward_ngc_sin_mul", ("out_grad", "in_data"))),
        Op("_backward_ngc_sin_mul", params=NoParams, num_inputs=3, num_outputs=2,
           is_backward=True, forward_op="ngc_sin_mul", compute={XP: backward}),
    ]


def _exp_shift(bug: bool = False) -> list[Op]:
    """``y = exp(data - shift)`` with ``shift`` an auxiliary state that a training-mode
    forward pass increments (as BatchNorm updates its moving statistics), so the
    numeric side is right only if every forward pass starts from the given state.
    ``bug``: the gradient forgets the shift."""

    def forward(attrs, ctx, inputs, req, outputs):
        data, shift = inputs
        assign(outputs[0], req[0], ctx.xp.exp(data - shift))
        if ctx.is_train:
            shift += 1.0

    def backward(attrs, ctx, inputs, req, outputs):
        head, data, _shift, out = inputs
        assign(outputs[0], req[0], head * (ctx.xp.exp(data) if bug else out))

    return [
        Op("ngc_exp_shift", params=NoParams, input_names=["data", "shift"], mutate_inputs=[1],
           infer_shape=lambda attrs, ins, outs: (ins[:1] * 2, ins[:1]),
           compute={XP: forward},
           gradient=Gradient("_backward_ngc_exp_shift", ("out_grad", "in_data", "out_data"))),
        Op("_backward_ngc_exp_shift", params=NoParams, num_inputs=4, num_outputs=1,
           is_backward=True, forward_op="ngc_exp_shift", compute={XP: backward}),
    ]


def _sin_mul_case(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    sym = mx.sym.ngc_sin_mul(mx.sym.Variable("a"), mx.sym.Variable("b"), name="m")
    return sym, {"a": rng.uniform(-2, 2, shape).astype(dtype),
                 "b": rng.uniform(-2, 2, shape).astype(dtype)}


# -- the signature and defaults are MXNet 1.9.1's --------------------------------------
def test_signature_and_defaults_are_mxnets():
    params = inspect.signature(check_numeric_gradient).parameters
    assert [(p.name, p.default) for p in params.values()] == [
        ("sym", inspect.Parameter.empty), ("location", inspect.Parameter.empty),
        ("aux_states", None), ("numeric_eps", None), ("rtol", None), ("atol", None),
        ("grad_nodes", None), ("use_forward_train", True), ("ctx", None),
        ("grad_stype_dict", None), ("dtype", np.float32)]
    assert default_numeric_eps() == {np.dtype(np.float16): 2.0**-6,
                                     np.dtype(np.float32): 2.0**-9,
                                     np.dtype(np.float64): 2.0**-14}


# -- correct gradients pass ----------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_correct_gradient_passes(register, dtype):
    register(*_sin_mul())
    sym, location = _sin_mul_case(dtype)
    check_numeric_gradient(sym, location, dtype=dtype)
    check_numeric_gradient(sym, [location["a"], location["b"]], grad_nodes=["b"], dtype=dtype)
    check_numeric_gradient(sym, location, grad_nodes={"a": "add", "b": "write"}, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("use_forward_train", [True, False])
def test_aux_states_are_restored_before_every_forward(register, dtype, use_forward_train):
    register(*_exp_shift())
    sym = mx.sym.ngc_exp_shift(mx.sym.Variable("data"), name="e")
    assert sym.list_auxiliary_states() == ["e_shift"]
    data = np.random.default_rng(1).uniform(-1, 1, (2, 5))
    shift = np.full((2, 5), 0.25)
    check_numeric_gradient(sym, [data], aux_states=[shift], dtype=dtype,
                           use_forward_train=use_forward_train)
    check_numeric_gradient(sym, {"data": data}, aux_states={"e_shift": shift}, dtype=dtype,
                           grad_nodes={"data": "add"}, use_forward_train=use_forward_train)


def test_float64_steps_finely_enough_for_tight_tolerances():
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=5, name="fc")
    rng = np.random.default_rng(2)
    location = {"data": rng.uniform(-1, 1, (4, 6)), "fc_weight": rng.uniform(-1, 1, (5, 6)),
                "fc_bias": rng.uniform(-1, 1, 5)}
    check_numeric_gradient(sym, location, dtype=np.float64)


def test_every_output_is_projected():
    x = mx.sym.Variable("x")
    check_numeric_gradient(mx.sym.Group([mx.sym.sin(x), mx.sym.square(x)]),
                           [np.linspace(-1, 1, 6).reshape(2, 3)], dtype=np.float64)


def test_configured_engine_is_left_alone():
    x = mx.sym.Variable("x")
    before = dagnet.engine.current()
    check_numeric_gradient(mx.sym.sin(x), [np.ones((2, 2))], dtype=np.float64)
    assert dagnet.engine.current() is before


# -- wrong gradients are caught -----------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_wrong_gradient_is_caught_with_every_argument(register, dtype):
    register(*_sin_mul(bug="scale"))
    sym, location = _sin_mul_case(dtype)
    with pytest.raises(AssertionError, match=r"gradient of argument 'a' \(grad_req='write', "
                                             rf"dtype {np.dtype(dtype).name}"):
        check_numeric_gradient(sym, location, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("grad_nodes", [["a"], {"a": "write"}, {"a": "add", "b": "null"}])
def test_wrong_gradient_is_caught_for_grad_nodes(register, dtype, grad_nodes):
    register(*_sin_mul(bug="scale"))
    sym, location = _sin_mul_case(dtype)
    with pytest.raises(AssertionError, match="gradient of argument 'a'"):
        check_numeric_gradient(sym, location, grad_nodes=grad_nodes, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_arguments_not_checked_are_not_blamed(register, dtype):
    register(*_sin_mul(bug="scale"))
    sym, location = _sin_mul_case(dtype)
    check_numeric_gradient(sym, location, grad_nodes=["b"], dtype=dtype)
    check_numeric_gradient(sym, location, grad_nodes={"a": "null", "b": "write"}, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_wrong_element_is_caught_and_named(register, dtype):
    register(*_sin_mul(bug="last"))
    sym, location = _sin_mul_case(dtype, shape=(4, 5))
    with pytest.raises(AssertionError, match=r"'b'.* in 1 of 20 elements; worst at index "
                                             r"\(3, 4\)"):
        check_numeric_gradient(sym, location, grad_nodes=["b"], dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_add_that_overwrites_is_caught(register, dtype):
    register(*_sin_mul(bug="no-add"))
    sym, location = _sin_mul_case(dtype)
    check_numeric_gradient(sym, location, grad_nodes={"a": "add", "b": "write"}, dtype=dtype)
    with pytest.raises(AssertionError, match=r"gradient of argument 'b' \(grad_req='add'"):
        check_numeric_gradient(sym, location, grad_nodes={"b": "add"}, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("grad_nodes", [None, ["data"], {"data": "add"}])
def test_wrong_gradient_with_aux_states_is_caught(register, dtype, grad_nodes):
    register(*_exp_shift(bug=True))
    sym = mx.sym.ngc_exp_shift(mx.sym.Variable("data"), name="e")
    data = np.random.default_rng(1).uniform(-1, 1, (2, 5))
    with pytest.raises(AssertionError, match="gradient of argument 'data'"):
        check_numeric_gradient(sym, [data], aux_states=[np.full((2, 5), 0.25)], dtype=dtype,
                               grad_nodes=grad_nodes)


def test_tolerances_are_by_dtype_or_given():
    x = mx.sym.Variable("x")
    location = [np.linspace(0.5, 2, 6).reshape(2, 3)]
    # float32's differences are good to about 1e-4 here: the default atol (1e-3) passes,
    # an absurdly tight one does not, as a number or a dict by dtype
    check_numeric_gradient(mx.sym.exp(x), location)
    for tight in (1e-12, {np.float32: 1e-12}):
        with pytest.raises(AssertionError, match="gradient of argument 'x'"):
            check_numeric_gradient(mx.sym.exp(x), location, rtol=tight, atol=tight)


# -- misuse is named ------------------------------------------------------------------
def test_misuse_is_named():
    x = mx.sym.Variable("x")
    sym, location = mx.sym.sin(x), [np.ones((2, 2))]
    with pytest.raises(TypeError, match="takes a Symbol.*check_op_numeric_gradient"):
        check_numeric_gradient("sin", location)
    with pytest.raises(AssertionError, match="dtype must be np.float16, np.float32 or"):
        check_numeric_gradient(sym, location, dtype=np.int32)
    with pytest.raises(AssertionError, match="numeric_eps=1e-06 is too small for float32"):
        check_numeric_gradient(sym, location, numeric_eps=1e-6)
    with pytest.raises(ValueError, match="grad_nodes must be None, a list"):
        check_numeric_gradient(sym, location, grad_nodes="x")
    with pytest.raises(ValueError, match="grad_nodes names 'y'.*its arguments are x"):
        check_numeric_gradient(sym, location, grad_nodes=["y"])
    with pytest.raises(ValueError, match="invalid grad_req {'x': 'inplace'}"):
        check_numeric_gradient(sym, location, grad_nodes={"x": "inplace"})
    with pytest.raises(ValueError, match="unknown storage types {'x': 'coo'}"):
        check_numeric_gradient(sym, location, grad_stype_dict={"x": "coo"})
    with pytest.raises(ValueError, match="location has 2 arrays for 1 names"):
        check_numeric_gradient(sym, location * 2)
