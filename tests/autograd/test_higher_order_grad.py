"""Higher-order gradients: ``grad(..., create_graph=True)`` records the backward pass, and
backward operators carry composed gradient rules, so gradients can be differentiated again.

Every second derivative is checked against central differences of the first-order
gradient (which the operator conformance suite checks against the forward), on every
engine; a few third derivatives against central differences of the second.
"""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
from dagnet import autograd, nd
from dagnet.operator import (
    XP,
    ComposedGradient,
    Gradient,
    NodeFacts,
    Op,
    elemwise_shape,
    plan_backward,
)

RNG = np.random.default_rng(11)
EPS = 1e-5

# op -> (sampling range, parameters); the ranges keep central differences off kinks and poles
UNARY = {
    "sin": ((-3, 3), {}), "cos": ((-3, 3), {}), "tan": ((-1.2, 1.2), {}),
    "sinh": ((-2, 2), {}), "cosh": ((-2, 2), {}), "tanh": ((-2, 2), {}),
    "arcsin": ((-0.8, 0.8), {}), "arccos": ((-0.8, 0.8), {}), "arctan": ((-3, 3), {}),
    "arcsinh": ((-3, 3), {}), "arccosh": ((1.2, 4), {}), "arctanh": ((-0.8, 0.8), {}),
    "radians": ((-3, 3), {}), "degrees": ((-3, 3), {}), "negative": ((-3, 3), {}),
    "relu": ((-3, 3), {}), "abs": ((-3, 3), {}), "sigmoid": ((-4, 4), {}),
    "softsign": ((-3, 3), {}), "log": ((0.2, 3), {}), "log2": ((0.2, 3), {}),
    "log10": ((0.2, 3), {}), "log1p": ((-0.7, 3), {}), "exp": ((-2, 2), {}),
    "expm1": ((-2, 2), {}), "reciprocal": ((0.3, 3), {}), "sqrt": ((0.2, 4), {}),
    "cbrt": ((0.2, 4), {}), "rsqrt": ((0.2, 4), {}), "rcbrt": ((0.2, 4), {}),
    "square": ((-3, 3), {}), "clip": ((-2, 2), {"a_min": -0.5, "a_max": 0.7}),
    "hard_sigmoid": ((-2, 2), {}), "_copy": ((-2, 2), {}), "erf": ((-2, 2), {}),
    "erfinv": ((-0.8, 0.8), {}),
    # what NDArray arithmetic with a number calls
    "_plus_scalar": ((-2, 2), {"scalar": 0.5}), "_minus_scalar": ((-2, 2), {"scalar": 0.5}),
    "_rminus_scalar": ((-2, 2), {"scalar": 0.5}), "_mul_scalar": ((-2, 2), {"scalar": -1.3}),
    "_div_scalar": ((-2, 2), {"scalar": 2.5}), "_rdiv_scalar": ((0.3, 3), {"scalar": 1.5}),
    "_power_scalar": ((0.3, 2), {"scalar": 2.5}), "_rpower_scalar": ((-1, 1), {"scalar": 1.7}),
    "_hypot_scalar": ((-2, 2), {"scalar": 0.8}), "_maximum_scalar": ((-2, 2), {"scalar": 0.3}),
    "_minimum_scalar": ((-2, 2), {"scalar": 0.3}),
}
KINKS = {"relu": [0.0], "abs": [0.0], "softsign": [0.0], "clip": [-0.5, 0.7],
         "hard_sigmoid": [-2.5, 2.5], "_maximum_scalar": [0.3], "_minimum_scalar": [0.3]}


# -- errors and the plan (first: tests that register operators leave the replaced registry
# -- to be freed by later operator calls, which the tests below make) ----------------------
def _ops_without_second_order():
    def forward(attrs, ctx, inputs, req, outputs):
        outputs[0][...] = inputs[0] ** 3

    def backward(attrs, ctx, inputs, req, outputs):
        outputs[0][...] = inputs[0] * 3 * inputs[1] ** 2

    return (Op("_hograd_cube", input_names=["data"], infer_shape=elemwise_shape("_hograd_cube"),
               compute={XP: forward}, gradient=Gradient("_backward__hograd_cube",
                                                        ("out_grad", "in_data"))),
            Op("_backward__hograd_cube", num_inputs=2, compute={XP: backward},
               is_backward=True, forward_op="_hograd_cube"))


def test_a_backward_op_without_a_rule_refuses_the_second_derivative(register):
    register(*_ops_without_second_order())
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        first = autograd.grad(nd._hograd_cube(x), x, create_graph=True)[0]
        np.testing.assert_allclose(first.asnumpy(), [3.0, 12.0])
        with pytest.raises(autograd.HigherOrderGradientError,
                           match="_backward__hograd_cube.*create_graph=False"):
            autograd.grad(first, x)
    assert issubclass(autograd.HigherOrderGradientError, autograd.NotDifferentiableError)


def test_a_composed_rule_returning_the_wrong_count_is_named(register):
    forward, backward = _ops_without_second_order()
    backward.gradient = ComposedGradient(lambda F, attrs, g, ins, outs, needed: [None])
    register(forward, backward)
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        first = autograd.grad(nd._hograd_cube(x), x, create_graph=True)[0]
        with pytest.raises(autograd.AutogradError, match="returned 1 gradient.*one per input"):
            autograd.grad(first, x)


def test_composed_gradient_checks_its_fields():
    with pytest.raises(ValueError, match="uses"):
        ComposedGradient(lambda *a: [], ("out_grad", "inputs"))
    with pytest.raises(ValueError, match="callable"):
        ComposedGradient("not a function")


class _Chain:
    """A two-node graph view: leaf ``x`` -> node ``n`` under ``rule``."""

    def __init__(self, rule):
        self.rule = rule

    def is_leaf(self, node):
        return node == "x"

    def describe(self, node):
        return NodeFacts(self.rule, [("x", 0)], (), 1, 1)


def test_plan_backward_runs_composed_rules_only_for_callers_that_run_them():
    rule = ComposedGradient(lambda *a: [None])
    view = _Chain(rule)
    runs = plan_backward(view, ["n"], [("n", 0)], lambda leaf: True, composed=True)
    assert [step.rule for step in runs.steps] == [rule] and not runs.refused
    refuses = plan_backward(view, ["n"], [("n", 0)], lambda leaf: True)
    assert not refuses.steps
    assert refuses.refused[0][0] == "n" and "only autograd runs" in refuses.refused[0][1]


def test_every_covered_backward_op_declares_a_composed_rule():
    binary = [f"{flavour}_{key}" for key in BINARY for flavour in ("broadcast",)]
    for name in [*UNARY, *FLAVOURS.values(), *binary, "add_n", "FullyConnected", "Dropout",
                 "Activation", "LeakyReLU", "dot", "batch_dot", "Convolution",
                 "Deconvolution", "softmax", "log_softmax", "softmin", "Pooling",
                 "Embedding"]:
        op = dagnet.operator.get_op(name)
        assert isinstance(dagnet.operator.get_op(op.gradient.backward).gradient,
                          ComposedGradient), name


# -- derivatives --------------------------------------------------------------------------
def _sample(name, shape=(2, 3)):
    (low, high), _ = UNARY[name]
    x = RNG.uniform(low, high, shape)
    for kink in KINKS.get(name, []):  # nudge values off the kinks
        near = np.abs(x - kink) < 0.05
        x[near] = kink + 0.1
    if name in ("cbrt", "rcbrt", "reciprocal", "_rdiv_scalar"):  # both signs
        x *= np.where(RNG.uniform(size=shape) < 0.5, -1.0, 1.0)
    return x


def _call(name, x):
    return dagnet.ndarray.invoke(name, [x], UNARY[name][1])


def _grad(name, values, head, create_graph=False):
    x = nd.array(values, dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = _call(name, x)
    return autograd.grad(y, x, head_grads=nd.array(head, dtype=np.float64),
                         create_graph=create_graph)[0]


def _second(name, values, head1, head2):
    x = nd.array(values, dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = _call(name, x)
        first = autograd.grad(y, x, head_grads=nd.array(head1, dtype=np.float64),
                              create_graph=True)[0]
        second = autograd.grad(first, x, head_grads=nd.array(head2, dtype=np.float64),
                               create_graph=True)[0]
    return first, second


@pytest.mark.parametrize("name", sorted(UNARY))
def test_second_derivative_matches_central_differences(engine, name):
    values = _sample(name)
    head1, head2 = RNG.standard_normal(values.shape), RNG.standard_normal(values.shape)
    first, second = _second(name, values, head1, head2)
    np.testing.assert_allclose(first.asnumpy(), _grad(name, values, head1).asnumpy(),
                               rtol=1e-12, atol=1e-12)
    # element-wise: perturbing every element at once differentiates each on its own
    numeric = (_grad(name, values + EPS, head1).asnumpy()
               - _grad(name, values - EPS, head1).asnumpy()) / (2 * EPS) * head2
    np.testing.assert_allclose(second.asnumpy(), numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["sin", "cos", "tanh", "sigmoid", "log", "exp", "arctan",
                                  "reciprocal"])
def test_third_derivative_matches_central_differences(engine, name):
    values = _sample(name, (4,))
    heads = [RNG.standard_normal(values.shape) for _ in range(3)]
    x = nd.array(values, dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = _call(name, x)
        for head in heads:
            y = autograd.grad(y, x, head_grads=nd.array(head, dtype=np.float64),
                              create_graph=True, retain_graph=True)[0]
    up = _second(name, values + EPS, heads[0], heads[1])[1].asnumpy()
    down = _second(name, values - EPS, heads[0], heads[1])[1].asnumpy()
    np.testing.assert_allclose(y.asnumpy(), (up - down) / (2 * EPS) * heads[2],
                               rtol=1e-5, atol=1e-7)


def test_backward_of_a_gradient_writes_the_second_derivative(engine):
    values = _sample("sin", (5,))
    x = nd.array(values, dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        first = autograd.grad(nd.sin(x), x, create_graph=True)[0]
    first.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), -np.sin(values), rtol=1e-12)


def test_a_gradient_reached_along_two_paths_is_summed_in_the_graph(engine):
    values = RNG.uniform(0.5, 2.0, (3,))
    x = nd.array(values, dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = nd.sin(x) * nd.exp(x)  # x reaches y twice: the first gradient is a recorded sum
        first = autograd.grad(y, x, create_graph=True)[0]
        second = autograd.grad(first, x)[0]
    # (sin e^x)'' = 2 cos(x) e^x
    np.testing.assert_allclose(first.asnumpy(), (np.sin(values) + np.cos(values))
                               * np.exp(values), rtol=1e-12)
    np.testing.assert_allclose(second.asnumpy(), 2 * np.cos(values) * np.exp(values),
                               rtol=1e-12)


@pytest.mark.parametrize("act_type", ["relu", "sigmoid", "tanh", "softrelu", "softsign"])
def test_activation_second_derivative_matches_central_differences(engine, act_type):
    values = RNG.uniform(-2, 2, (2, 3))
    values[np.abs(values) < 0.05] = 0.3  # off relu's and softsign's kink
    head1, head2 = RNG.standard_normal(values.shape), RNG.standard_normal(values.shape)

    def first(vals, create_graph=False):
        x = nd.array(vals, dtype=np.float64)
        x.attach_grad()
        with autograd.record():
            y = nd.Activation(x, act_type=act_type)
        return x, autograd.grad(y, x, head_grads=nd.array(head1, dtype=np.float64),
                                create_graph=create_graph)[0]

    x, grad = first(values, create_graph=True)
    with autograd.record():
        second = autograd.grad(grad, x, head_grads=nd.array(head2, dtype=np.float64))[0]
    numeric = (first(values + EPS)[1].asnumpy() - first(values - EPS)[1].asnumpy()) \
        / (2 * EPS) * head2
    np.testing.assert_allclose(second.asnumpy(), numeric, rtol=1e-5, atol=1e-7)


def test_the_gradient_of_a_linear_op_is_in_the_graph_with_a_zero_second_derivative(engine):
    x = nd.array([1.0, -2.0], dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        first = autograd.grad(nd.radians(x), x, create_graph=True)[0]
        second = autograd.grad(first, x)[0]
    np.testing.assert_allclose(first.asnumpy(), [np.pi / 180] * 2)
    np.testing.assert_array_equal(second.asnumpy(), [0.0, 0.0])


def test_dropout_second_derivative_is_zero_and_its_gradient_keeps_the_mask(engine):
    x = nd.array(RNG.standard_normal((4, 5)), dtype=np.float64)
    x.attach_grad()
    head = nd.array(RNG.standard_normal((4, 5)), dtype=np.float64)
    with autograd.record():
        y = nd.Dropout(x, p=0.5)
        first = autograd.grad(y, x, head_grads=head, create_graph=True)[0]
        second = autograd.grad(first, x)[0]
    mask = y.asnumpy() / np.where(x.asnumpy() == 0, 1, x.asnumpy())
    np.testing.assert_allclose(first.asnumpy(), head.asnumpy() * mask, rtol=1e-12)
    np.testing.assert_array_equal(second.asnumpy(), np.zeros((4, 5)))


def _central(fn, values):
    """d fn / d values for a scalar ``fn`` of an array, by central differences."""
    grad = np.zeros_like(values)
    for index in np.ndindex(values.shape):
        up, down = values.copy(), values.copy()
        up[index] += EPS
        down[index] -= EPS
        grad[index] = (fn(up) - fn(down)) / (2 * EPS)
    return grad


@pytest.mark.parametrize("flatten,shape", [(True, (2, 3, 2)), (False, (2, 3, 4))])
def test_fully_connected_mixed_second_derivatives_match_central_differences(engine, flatten,
                                                                            shape):
    hidden = 3
    features = int(np.prod(shape[1:])) if flatten else shape[-1]
    xv = RNG.standard_normal(shape)
    wv, bv = RNG.standard_normal((hidden, features)), RNG.standard_normal((hidden,))
    out_shape = (shape[0], hidden) if flatten else (*shape[:-1], hidden)
    o_y = RNG.standard_normal(out_shape)
    o_x, o_w = RNG.standard_normal(shape), RNG.standard_normal((hidden, features))

    def first_grads(x_values, w_values, b_values, create_graph=False):
        x, w, b = (nd.array(v, dtype=np.float64) for v in (x_values, w_values, b_values))
        for array in (x, w, b):
            array.attach_grad()
        with autograd.record():
            y = nd.FullyConnected(x, w, b, num_hidden=hidden, flatten=flatten)
            grads = autograd.grad(y, [x, w, b], head_grads=nd.array(o_y, dtype=np.float64),
                                  create_graph=create_graph)
        return (x, w, b), grads

    (x, w, b), (gx, gw, gb) = first_grads(xv, wv, bv, create_graph=True)
    with autograd.record():
        dx_then_w = autograd.grad(gx, [x, w, b], head_grads=nd.array(o_x, dtype=np.float64),
                                  retain_graph=True)
        dw_then_x = autograd.grad(gw, [x, w, b], head_grads=nd.array(o_w, dtype=np.float64))

    def contracted(which, head, **changed):
        values = {"x_values": xv, "w_values": wv, "b_values": bv, **changed}
        return float((first_grads(**values)[1][which].asnumpy() * head).sum())

    np.testing.assert_allclose(
        dx_then_w[1].asnumpy(), _central(lambda v: contracted(0, o_x, w_values=v), wv),
        rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        dw_then_x[0].asnumpy(), _central(lambda v: contracted(1, o_w, x_values=v), xv),
        rtol=1e-6, atol=1e-8)
    for result in (dx_then_w[0], dx_then_w[2], dw_then_x[1], dw_then_x[2]):  # linear in them
        np.testing.assert_array_equal(result.asnumpy(), np.zeros(result.shape))


def test_fully_connected_gradient_of_the_head_gradient(engine):
    """The first gradient depends on the head gradient too: differentiate with respect to it."""
    xv, wv, bv = RNG.standard_normal((2, 4)), RNG.standard_normal((3, 4)), np.zeros(3)
    x, w, b = (nd.array(v, dtype=np.float64) for v in (xv, wv, bv))
    o_y = nd.array(RNG.standard_normal((2, 3)), dtype=np.float64)
    for array in (x, w, b, o_y):
        array.attach_grad()
    with autograd.record():
        y = nd.FullyConnected(x, w, b, num_hidden=3)
        gx, gw, gb = autograd.grad(y, [x, w, b], head_grads=o_y * 1.0, create_graph=True)
        loss = (gx * gx).sum() + (gw * gw).sum() + (gb * gb).sum()
    loss.backward()
    # gx = o_y w, gw = o_y^T x, gb = sum(o_y): d loss / d o_y = 2 (gx w^T + x gw^T + gb)
    expected = 2 * (gx.asnumpy() @ wv.T + xv @ gw.asnumpy().T + gb.asnumpy())
    np.testing.assert_allclose(o_y.grad.asnumpy(), expected, rtol=1e-10)


# -- binary operators ---------------------------------------------------------------------
BINARY = {"add": (-2, 2), "sub": (-2, 2), "mul": (-2, 2), "div": (0.5, 2), "power": (0.3, 2),
          "maximum": (-2, 2), "minimum": (-2, 2)}
FLAVOURS = {"add": "elemwise_add", "sub": "elemwise_sub", "mul": "elemwise_mul",
            "div": "elemwise_div", "power": "_power", "maximum": "_maximum",
            "minimum": "_minimum"}


def _apart(a_shape, b_shape):
    """Operands on two grids offset by half a step: never within 0.05 of each other."""
    return (RNG.integers(-20, 20, a_shape) * 0.1 + 0.05, RNG.integers(-20, 20, b_shape) * 0.1)


def _binary_first(op, a_values, b_values, head, create_graph=False, params=None):
    a, b = nd.array(a_values, dtype=np.float64), nd.array(b_values, dtype=np.float64)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = dagnet.ndarray.invoke(op, [a, b], params)
        grads = autograd.grad(y, [a, b], head_grads=nd.array(head, dtype=np.float64),
                              create_graph=create_graph)
    return (a, b), grads


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3))])
@pytest.mark.parametrize("key", sorted(BINARY))
def test_binary_second_derivatives_match_central_differences(engine, key, shapes):
    low, high = BINARY[key]
    av, bv = RNG.uniform(low, high, shapes[0]), RNG.uniform(low, high, shapes[1])
    if key in ("maximum", "minimum"):  # keep the operands apart (the kink is where they tie)
        av, bv = _apart(shapes[0], shapes[1])
    op = FLAVOURS[key] if shapes[0] == shapes[1] else f"broadcast_{key}"
    _check_mixed(op, {}, av, bv, np.broadcast_shapes(*shapes))


@pytest.mark.parametrize("op,params,shapes", [
    ("dot", {}, ((2, 3), (3, 4))), ("dot", {"transpose_a": True}, ((3, 2), (3, 4))),
    ("dot", {"transpose_b": True}, ((2, 3, 2), (4, 2))), ("dot", {}, ((3,), (3,))),
    ("batch_dot", {}, ((2, 2, 3), (2, 3, 2))), ("batch_dot", {"transpose_b": True},
                                                ((2, 2, 3), (2, 4, 3)))])
def test_product_second_derivatives_match_central_differences(engine, op, params, shapes):
    av, bv = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    out_shape = dagnet.ndarray.invoke(op, [nd.array(av), nd.array(bv)], params).shape
    _check_mixed(op, params, av, bv, out_shape)


def _check_mixed(op, params, av, bv, out_shape):
    """The second derivatives of ``op(a, b)``'s gradients (contracted with random head
    gradients), with respect to both operands, against central differences."""
    head = RNG.standard_normal(out_shape)
    ga, gb = RNG.standard_normal(av.shape), RNG.standard_normal(bv.shape)
    (a, b), (da, db) = _binary_first(op, av, bv, head, create_graph=True, params=params)
    with autograd.record():
        second = autograd.grad([da, db], [a, b], head_grads=[nd.array(ga, dtype=np.float64),
                                                             nd.array(gb, dtype=np.float64)])

    def contracted(a_values, b_values):
        da, db = _binary_first(op, a_values, b_values, head, params=params)[1]
        return float((da.asnumpy() * ga).sum() + (db.asnumpy() * gb).sum())

    np.testing.assert_allclose(second[0].asnumpy(), _central(lambda v: contracted(v, bv), av),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(second[1].asnumpy(), _central(lambda v: contracted(av, v), bv),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("key", sorted(BINARY))
def test_binary_gradient_of_the_head_gradient(engine, key):
    """The first gradients are linear in the head gradient: their derivative with respect
    to it is the partial derivatives themselves."""
    low, high = BINARY[key]
    av, bv = RNG.uniform(low, high, (2, 3)), RNG.uniform(low, high, (2, 3))
    if key in ("maximum", "minimum"):
        av, bv = _apart((2, 3), (2, 3))
    a, b = nd.array(av, dtype=np.float64), nd.array(bv, dtype=np.float64)
    head = nd.array(RNG.standard_normal((2, 3)), dtype=np.float64)
    for array in (a, b, head):
        array.attach_grad()
    with autograd.record():
        y = dagnet.ndarray.invoke(FLAVOURS[key], [a, b])
        da, db = autograd.grad(y, [a, b], head_grads=head * 1.0, create_graph=True)
        total = (da + db).sum()
    total.backward()
    (_, _), (ones_a, ones_b) = _binary_first(FLAVOURS[key], av, bv, np.ones((2, 3)))
    np.testing.assert_allclose(head.grad.asnumpy(), ones_a.asnumpy() + ones_b.asnumpy(),
                               rtol=1e-12)


# -- linear operators: reshapes, transposes, slices, tiles, reductions ---------------------
LINEAR = [
    ("Reshape", {"shape": (3, 4)}), ("Flatten", {}), ("transpose", {"axes": (2, 0, 1)}),
    ("expand_dims", {"axis": 1}), ("slice_axis", {"axis": 1, "begin": 0, "end": 2}),
    ("tile", {"reps": (1, 2, 1)}), ("repeat", {"repeats": 2, "axis": 1}),
    ("sum", {"axis": 1}), ("mean", {"axis": (0, 2), "keepdims": True}), ("sum", {}),
    ("Pooling", {"kernel": (2,), "pool_type": "avg"}),
    ("Pooling", {"kernel": (2,), "pool_type": "sum", "stride": (1,), "pad": (1,)}),
]


@pytest.mark.parametrize("name,params", LINEAR)
def test_linear_op_gradient_is_differentiable_in_its_head_gradient(engine, name, params):
    """The gradient ``L^T(h)`` of a linear ``L`` does not depend on x, and its derivative
    with respect to the head gradient ``h``, contracted with ``G``, is ``L(G)``."""
    xv = RNG.standard_normal((2, 3, 2))
    x = nd.array(xv, dtype=np.float64)
    x.attach_grad()
    y = dagnet.ndarray.invoke(name, [x], params)
    head = nd.array(RNG.standard_normal(y.shape), dtype=np.float64)
    head.attach_grad()
    contraction = RNG.standard_normal(xv.shape)
    with autograd.record():
        y = dagnet.ndarray.invoke(name, [x], params)
        gx = autograd.grad(y, x, head_grads=head * 1.0, create_graph=True)[0]
        total = (gx * nd.array(contraction, dtype=np.float64)).sum()
    total.backward()
    expected = dagnet.ndarray.invoke(name, [nd.array(contraction, dtype=np.float64)], params)
    np.testing.assert_allclose(head.grad.asnumpy(), expected.asnumpy(), rtol=1e-12)
    with autograd.record():
        y = dagnet.ndarray.invoke(name, [x], params)
        gx = autograd.grad(y, x, head_grads=head, create_graph=True)[0]
        second = autograd.grad(gx, x)[0]
    np.testing.assert_array_equal(second.asnumpy(), np.zeros(xv.shape))


def _penalty(xv, wv, create_graph):
    """sum(grad_x(D)^2) for the critic D(x) = sum(tanh(FC(Flatten(x), w)) * 0.5): a gradient
    penalty, differentiated with respect to the weight when ``create_graph``."""
    x, w = nd.array(xv, dtype=np.float64), nd.array(wv, dtype=np.float64)
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        hidden = nd.FullyConnected(nd.Flatten(x), w, num_hidden=wv.shape[0], no_bias=True)
        critic = (nd.tanh(hidden) * 0.5).sum()
        gx = autograd.grad(critic, x, create_graph=create_graph)[0]
        penalty = (gx * gx).sum()
    if create_graph:
        penalty.backward()
        return w.grad.asnumpy()
    return float(penalty.asnumpy()[0])


def test_a_gradient_penalty_differentiates_through_the_network(engine):
    xv, wv = RNG.standard_normal((2, 2, 2)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(_penalty(xv, wv, True),
                               _central(lambda v: _penalty(xv, v, False), wv),
                               rtol=1e-6, atol=1e-8)


# -- autograd.Function and hybridized blocks ---------------------------------------------------
class _Cube(autograd.Function):
    """x^3 with a backward written in NDArray operations: differentiable again."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x * x

    def backward(self, dy):
        (x,) = self.saved_tensors
        return dy * 3 * x * x


class _OpaqueCube(_Cube):
    """The same gradient computed through numpy: outside every graph."""

    def backward(self, dy):
        (x,) = self.saved_tensors
        return nd.array(dy.asnumpy() * 3 * x.asnumpy() ** 2, dtype=x.dtype)


def test_a_function_whose_backward_uses_ndarray_operations_differentiates_again(engine):
    x = nd.array([1.0, -2.0, 0.5], dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        first = autograd.grad(_Cube()(x), x, create_graph=True)[0]
        second = autograd.grad(first, x)[0]
    np.testing.assert_allclose(first.asnumpy(), 3 * x.asnumpy() ** 2)
    np.testing.assert_allclose(second.asnumpy(), 6 * x.asnumpy())


def test_a_gradient_computed_outside_the_graph_refuses_to_differentiate_again(engine):
    x = nd.array([1.0, -2.0], dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        first = autograd.grad(_OpaqueCube()(x), x, create_graph=True)[0]
        np.testing.assert_allclose(first.asnumpy(), 3 * x.asnumpy() ** 2)
        with pytest.raises(autograd.HigherOrderGradientError,
                           match="_OpaqueCube.backward.*outside the recorded graph.*hybridize"):
            autograd.grad(first, x)


def test_gluon_dense_second_order_and_the_hybridized_refusal(engine):
    from dagnet import gluon

    x = nd.array(RNG.standard_normal((2, 4)), dtype=np.float32)
    x.attach_grad()
    # inline_limit: None runs imperatively; 2 (the default) inlines the block's two
    # operators into the recording, so they differentiate twice as imperative ones do;
    # 0 records one cached-graph node, whose backward pass is not recorded
    for inline_limit in (None, 2, 0):
        net = gluon.nn.Dense(3, activation="tanh")
        net.initialize(dagnet.init.Normal(0.5))
        if inline_limit is not None:
            net.hybridize(inline_limit=inline_limit)
        with autograd.record():
            gx = autograd.grad(net(x), x, create_graph=True)[0]
            penalty = (gx * gx).sum()
        if inline_limit == 0:
            with pytest.raises(autograd.HigherOrderGradientError,
                               match=r"hybridize\(False\).*hybridize\(inline_limit=n\)"):
                penalty.backward()
        else:
            penalty.backward()
            assert np.abs(net.weight.grad().asnumpy()).sum() > 0


# -- LeakyReLU ----------------------------------------------------------------------------------
@pytest.mark.parametrize("act_type", ["leaky", "elu", "selu", "gelu"])
def test_leaky_relu_second_derivative_matches_central_differences(engine, act_type):
    values = RNG.uniform(-2, 2, (2, 3))
    values[np.abs(values) < 0.05] = 0.3  # off the kink at 0
    head1, head2 = RNG.standard_normal(values.shape), RNG.standard_normal(values.shape)

    def first(vals, create_graph=False):
        x = nd.array(vals, dtype=np.float64)
        x.attach_grad()
        with autograd.record():
            y = nd.LeakyReLU(x, act_type=act_type, slope=0.3)
        return x, autograd.grad(y, x, head_grads=nd.array(head1, dtype=np.float64),
                                create_graph=create_graph)[0]

    x, grad = first(values, create_graph=True)
    with autograd.record():
        second = autograd.grad(grad, x, head_grads=nd.array(head2, dtype=np.float64))[0]
    numeric = (first(values + EPS)[1].asnumpy() - first(values - EPS)[1].asnumpy()) \
        / (2 * EPS) * head2
    np.testing.assert_allclose(second.asnumpy(), numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("gamma_shape", [(3,), (1,)])
def test_prelu_mixed_second_derivatives_match_central_differences(engine, gamma_shape):
    xv = RNG.uniform(-2, 2, (2, 3, 2))
    xv[np.abs(xv) < 0.05] = -0.3
    gv = RNG.uniform(0.1, 0.9, gamma_shape)
    _check_mixed("LeakyReLU", {"act_type": "prelu"}, xv, gv, xv.shape)


# -- Convolution and Deconvolution ---------------------------------------------------------------
def _affine_second(op, params, xv, wv, bv, heads, create_graph):
    """Gradients of ``op(x, w, b)`` for the head ``heads[0]``; with ``create_graph`` the
    gradient of their contraction with ``heads[1:]`` with respect to (x, w, b)."""
    arrays = [nd.array(v, dtype=np.float64) for v in (xv, wv, bv)]
    for array in arrays:
        array.attach_grad()
    with autograd.record():
        y = dagnet.ndarray.invoke(op, arrays, params)
        firsts = autograd.grad(y, arrays, head_grads=nd.array(heads[0], dtype=np.float64),
                               create_graph=create_graph)
        if not create_graph:
            return float(sum((f.asnumpy() * h).sum() for f, h in zip(firsts, heads[1:])))
        return autograd.grad(firsts, arrays,
                             head_grads=[nd.array(h, dtype=np.float64) for h in heads[1:]])


@pytest.mark.parametrize("op,params,x_shape,w_shape,out_shape", [
    ("Convolution", {"kernel": (2, 2), "num_filter": 2, "pad": (1, 0)}, (1, 2, 3, 2),
     (2, 2, 2, 2), (1, 2, 4, 1)),
    ("Convolution", {"kernel": (3,), "num_filter": 2, "stride": (2,), "num_group": 2},
     (1, 4, 5), (2, 2, 3), (1, 2, 2)),
    ("Deconvolution", {"kernel": (2, 2), "num_filter": 2, "stride": (2, 2), "no_bias": False},
     (1, 3, 2, 2),
     (3, 2, 2, 2), (1, 2, 4, 4)),
])
def test_convolution_mixed_second_derivatives_match_central_differences(engine, op, params,
                                                                        x_shape, w_shape,
                                                                        out_shape):
    xv, wv = RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)
    bv = RNG.standard_normal((params["num_filter"],))
    heads = [RNG.standard_normal(s) for s in (out_shape, x_shape, w_shape, bv.shape)]
    dx, dw, db = _affine_second(op, params, xv, wv, bv, heads, True)
    np.testing.assert_allclose(
        dx.asnumpy(), _central(lambda v: _affine_second(op, params, v, wv, bv, heads, False), xv),
        rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        dw.asnumpy(), _central(lambda v: _affine_second(op, params, xv, v, bv, heads, False), wv),
        rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(db.asnumpy(), np.zeros(bv.shape))  # nothing depends on b


# -- softmax family ------------------------------------------------------------------------------
@pytest.mark.parametrize("name,params", [
    ("softmax", {"axis": -1}), ("softmax", {"axis": 0, "temperature": 2.0}),
    ("log_softmax", {"axis": 1}), ("log_softmax", {"axis": 0, "temperature": 0.7}),
    ("softmin", {"axis": -1})])
def test_softmax_second_derivatives_match_central_differences(engine, name, params):
    xv = RNG.standard_normal((2, 3))
    head1, head2 = RNG.standard_normal(xv.shape), RNG.standard_normal(xv.shape)

    def first(values, create_graph=False):
        x = nd.array(values, dtype=np.float64)
        x.attach_grad()
        with autograd.record():
            y = dagnet.ndarray.invoke(name, [x], params)
        return x, autograd.grad(y, x, head_grads=nd.array(head1, dtype=np.float64),
                                create_graph=create_graph)[0]

    x, grad = first(xv, create_graph=True)
    with autograd.record():
        second = autograd.grad(grad, x, head_grads=nd.array(head2, dtype=np.float64))[0]

    def contracted(values):
        return float((first(values)[1].asnumpy() * head2).sum())

    np.testing.assert_allclose(second.asnumpy(), _central(contracted, xv), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,params", [
    ("softmax", {"axis": 0, "temperature": 2.0}), ("log_softmax", {"axis": 1}),
    ("softmin", {"axis": -1})])
def test_softmax_gradient_of_the_head_gradient_is_the_forward_directional_derivative(
        engine, name, params):
    """``d <J^T h, G> / dh = J G``: the forward's derivative along G, by central differences."""
    xv, direction = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    x = nd.array(xv, dtype=np.float64)
    x.attach_grad()
    head = nd.array(RNG.standard_normal((2, 3)), dtype=np.float64)
    head.attach_grad()
    with autograd.record():
        y = dagnet.ndarray.invoke(name, [x], params)
        gx = autograd.grad(y, x, head_grads=head * 1.0, create_graph=True)[0]
        total = (gx * nd.array(direction, dtype=np.float64)).sum()
    total.backward()

    def forward(values):
        return dagnet.ndarray.invoke(name, [nd.array(values, dtype=np.float64)], params).asnumpy()

    numeric = (forward(xv + EPS * direction) - forward(xv - EPS * direction)) / (2 * EPS)
    np.testing.assert_allclose(head.grad.asnumpy(), numeric, rtol=1e-6, atol=1e-8)


def test_max_pooling_gradient_refuses_to_differentiate_again(engine):
    x = nd.array(RNG.standard_normal((1, 2, 4)), dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, kernel=(2,), pool_type="max")
        gx = autograd.grad(y, x, create_graph=True)[0]
        with pytest.raises(autograd.HigherOrderGradientError, match="max pooling"):
            autograd.grad(gx, x)


def test_embedding_weight_gradient_is_differentiable_in_its_head_gradient(engine):
    data = nd.array([[0, 2], [2, 1]], dtype=np.float64)
    weight = nd.array(RNG.standard_normal((3, 4)), dtype=np.float64)
    weight.attach_grad()
    head = nd.array(RNG.standard_normal((2, 2, 4)), dtype=np.float64)
    head.attach_grad()
    contraction = nd.array(RNG.standard_normal((3, 4)), dtype=np.float64)
    with autograd.record():
        y = nd.Embedding(data, weight, input_dim=3, output_dim=4)
        gw = autograd.grad(y, weight, head_grads=head * 1.0, create_graph=True)[0]
        (gw * contraction).sum().backward()
    expected = nd.Embedding(data, contraction, input_dim=3, output_dim=4)
    np.testing.assert_allclose(head.grad.asnumpy(), expected.asnumpy(), rtol=1e-12)


def test_recorded_backward_passes_are_freed_by_reference_counting(engine):
    """Gradient-penalty steps with the cyclic collector off leave nothing behind: the
    recorded backward pass makes no reference cycles."""
    import gc

    w = nd.array(RNG.standard_normal((3, 4)))
    w.attach_grad()
    x = nd.array(RNG.standard_normal((2, 4)))
    x.attach_grad()

    def step():
        with autograd.record():
            hidden = nd.FullyConnected(x, w, num_hidden=3, no_bias=True)
            gx = autograd.grad((nd.tanh(hidden) * nd.sigmoid(hidden)).sum(), x,
                               create_graph=True)[0]
            penalty = ((gx * gx).sum() - 1) ** 2
        penalty.backward()

    for _ in range(5):
        step()
    nd.waitall()
    gc.collect()
    gc.disable()
    try:
        objects = len(gc.get_objects())
        for _ in range(100):
            step()
        nd.waitall()
        grown = len(gc.get_objects()) - objects
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert grown < 50 and unreachable < 50, (grown, unreachable)
