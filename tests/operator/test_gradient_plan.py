"""The gradient builder (``dagnet.operator.plan_backward``) on small hand-made graphs.

The executor's and autograd's backward passes are tested end to end elsewhere;
here the plan itself: which nodes need a backward, in what order, what each
reads, where each gradient goes and how many parts reach every entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from dagnet.operator import Gradient, NodeFacts, NoGradient, ZeroGradient, plan_backward


@dataclass(eq=False)
class FakeNode:
    name: str
    rule: object = None
    inputs: list = field(default_factory=list)
    aux: tuple = ()
    outputs: int = 1
    visible: int = 1

    def __repr__(self) -> str:
        return self.name


class View:
    @staticmethod
    def is_leaf(node):
        return node.rule is None

    @staticmethod
    def describe(node):
        return NodeFacts(node.rule, node.inputs, node.aux, node.visible, node.outputs)


UNARY = Gradient("_backward_unary", uses=("out_grad", "in_data"))
LOSS = Gradient("_backward_loss", uses=("in_data", "out_data"))


def test_a_diamond_sums_two_parts_into_the_shared_input():
    x, w = FakeNode("x"), FakeNode("w")
    a = FakeNode("a", UNARY, [(x, 0)])
    b = FakeNode("b", UNARY, [(x, 0)])
    c = FakeNode("c", Gradient("_backward_c", uses=("out_grad",)), [(a, 0), (b, 0), (w, 0)])
    plan = plan_backward(View, [x, w, a, b, c], [(c, 0)], wanted=lambda leaf: leaf is x)
    assert [step.node for step in plan.steps] == [c, b, a]
    assert plan.needed == {a, b, c}
    assert plan.seeded == [0]
    assert plan.parts == {(c, 0): 1, (a, 0): 1, (b, 0): 1, (x, 0): 2}
    first = plan.steps[0]
    assert first.reads == (("out_grad", 0),)
    # w is not wanted: its gradient is computed by the operator but goes nowhere
    assert first.targets == [(0, (a, 0)), (1, (b, 0)), (2, None)]
    assert plan.steps[1].reads == (("out_grad", 0), ("in_data", 0))


def test_reads_follow_the_order_uses_names_them():
    x = FakeNode("x")
    rule = Gradient("_backward_two", uses=("out_data", "out_grad", "in_data"))
    node = FakeNode("two", rule, [(x, 0), (x, 0)], outputs=3, visible=2)
    plan = plan_backward(View, [node], [(node, 0)], wanted=lambda leaf: True)
    assert plan.steps[0].reads == (("out_data", 0), ("out_data", 1), ("out_data", 2),
                                   ("out_grad", 0), ("out_grad", 1),
                                   ("in_data", 0), ("in_data", 1))
    assert plan.parts[(x, 0)] == 2


def test_a_rule_may_read_some_outputs_only():
    x = FakeNode("x")
    rule = Gradient("_backward_norm", uses=("out_grad", "out_data"), out_data=(2, 1))
    node = FakeNode("norm", rule, [(x, 0)], outputs=3)
    plan = plan_backward(View, [node], [(node, 0)], wanted=lambda leaf: True)
    assert plan.steps[0].reads == (("out_grad", 0), ("out_data", 2), ("out_data", 1))


def test_listing_outputs_read_needs_out_data_in_uses():
    with pytest.raises(ValueError, match="name 'out_data' in uses"):
        Gradient("_backward_norm", uses=("out_grad",), out_data=(1,))


def test_auxiliary_inputs_take_no_gradient_and_do_not_make_a_node_needed():
    x, moving = FakeNode("x"), FakeNode("moving_mean")
    norm = FakeNode("bn", UNARY, [(x, 0), (moving, 0)], aux=(1,))
    plan = plan_backward(View, [norm], [(norm, 0)], wanted=lambda leaf: True)
    assert plan.steps[0].targets == [(0, (x, 0))]
    only_aux = plan_backward(View, [norm], [(norm, 0)], wanted=lambda leaf: leaf is moving)
    assert only_aux.steps == [] and only_aux.needed == set() and only_aux.seeded == []


def test_a_loss_makes_its_own_head_gradient_and_a_leaf_head_is_seeded():
    x = FakeNode("x")
    loss = FakeNode("softmax", LOSS, [(x, 0)])
    plan = plan_backward(View, [loss], [(loss, 0), (x, 0)], wanted=lambda leaf: True)
    assert plan.seeded == [1]
    assert plan.parts[(x, 0)] == 2  # the loss's gradient and the head's seed


def test_nodes_without_a_gradient_are_refused_only_on_a_path():
    x, y = FakeNode("x"), FakeNode("y")
    blocked = FakeNode("argsort", NoGradient("it is a permutation"), [(x, 0)])
    stopped = FakeNode("BlockGrad", ZeroGradient(), [(y, 0)])
    total = FakeNode("add", Gradient("_backward_add"), [(blocked, 0), (stopped, 0)])
    plan = plan_backward(View, [blocked, stopped, total], [(total, 0)],
                         wanted=lambda leaf: leaf is y)
    assert plan.refused == []
    assert plan.zero == [stopped]
    assert plan.steps[0].targets == [(0, None), (1, (stopped, 0))]
    refused = plan_backward(View, [blocked, stopped, total], [(total, 0)],
                            wanted=lambda leaf: True)
    assert refused.refused == [(blocked, "it is a permutation")]


def test_inputs_outside_the_graph_take_nothing():
    x = FakeNode("x")
    node = FakeNode("mul", Gradient("_backward_mul"), [(x, 0), None])
    plan = plan_backward(View, [node], [(node, 0)], wanted=lambda leaf: True)
    assert plan.steps[0].targets == [(0, (x, 0)), (1, None)]
