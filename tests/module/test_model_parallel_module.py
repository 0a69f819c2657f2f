"""Modules with ``group2ctxs``: each data-parallel executor places its ``ctx_group`` s,
and the executor group takes ``(name, shape)`` pairs and shares inputs with another."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.module.executor_group import DataParallelExecutorGroup, group2ctx_per_context


def _net():
    with mx.AttrScope(ctx_group="dev1"):
        a = mx.sym.Variable("a") * 2
    with mx.AttrScope(ctx_group="dev2"):
        return mx.sym.FullyConnected(a, num_hidden=3, name="fc")


def test_group2ctx_per_context_spreads_one_dict_over_the_contexts():
    c = mx.cpu
    assert group2ctx_per_context(None, 2) == [None, None]
    assert group2ctx_per_context({"g": c(1), "h": [c(2)]}, 2) == [{"g": c(1), "h": c(2)}] * 2
    assert group2ctx_per_context({"g": [c(1), c(2)]}, 2) == [{"g": c(1)}, {"g": c(2)}]
    assert group2ctx_per_context([{"g": c(1)}, {"g": c(3)}], 2) == [{"g": c(1)}, {"g": c(3)}]
    with pytest.raises(mx.ContextError, match=r"group2ctxs\['g'\] has 3 contexts for 2"):
        group2ctx_per_context({"g": [c(1)] * 3}, 2)
    with pytest.raises(mx.ContextError, match="1 dicts for 2 contexts"):
        group2ctx_per_context([{"g": c(1)}], 2)


def test_module_places_groups_and_matches_the_unplaced_module():
    results = []
    for group2ctxs in ({"dev1": mx.cpu(1), "dev2": mx.cpu(2)}, None):
        mod = mx.mod.Module(_net(), data_names=["a"], label_names=None, group2ctxs=group2ctxs)
        mod.bind(data_shapes=[("a", (2, 4))], inputs_need_grad=True)
        mod.init_params(mx.init.Constant(0.5))
        mod.forward(mx.io.DataBatch([mx.nd.ones((2, 4))]), is_train=True)
        mod.backward([mx.nd.ones((2, 3))])
        results.append((mod.get_outputs()[0], mod.get_input_grads()[0],
                        mod._exec_group.execs[0].arg_dict["fc_weight"].context))
    (out, grad, weight_ctx), (plain_out, plain_grad, plain_ctx) = results
    assert (out.context, grad.context, weight_ctx) == (mx.cpu(2), mx.cpu(1), mx.cpu(2))
    assert plain_ctx == mx.cpu()
    np.testing.assert_array_equal(out.asnumpy(), plain_out.asnumpy())
    np.testing.assert_array_equal(grad.asnumpy(), plain_grad.asnumpy())


def test_bucketing_module_passes_group2ctxs_to_every_bucket():
    def sym_gen(key):
        with mx.AttrScope(ctx_group="dev1"):
            net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
        return net * key, ("data",), None

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=1, context=[mx.cpu(0)],
                                 group2ctxs=[{"dev1": mx.cpu(3)}])
    mod.bind(data_shapes=[("data", (2, 3))])
    mod.init_params()
    mod.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], bucket_key=2,
                                provide_data=[mx.io.DataDesc("data", (2, 3))]))
    assert mod.get_outputs()[0].context == mx.cpu(3)


def test_executor_group_takes_pairs_and_shares_inputs_and_parameters():
    net = _net()
    first = DataParallelExecutorGroup(net, [mx.cpu(0), mx.cpu(1)], [1, 1], [("a", (4, 4))],
                                      None, ["fc_weight", "fc_bias"], True, False)
    assert [sorted(d) for d in first.shared_data_arrays] == [["a"], ["a"]]
    second = DataParallelExecutorGroup(net * 3, [mx.cpu(0), mx.cpu(1)], [1, 1],
                                       [("a", (4, 4))], None, ["fc_weight"], True, False,
                                       shared_group=first)
    assert second.shared_data_arrays is first.shared_data_arrays
    for one, other in zip(first.execs, second.execs):
        assert other.arg_dict["a"] is one.arg_dict["a"]
        assert other.arg_dict["fc_weight"] is one.arg_dict["fc_weight"]
        assert other.grad_dict["fc_weight"] is one.grad_dict["fc_weight"]
        # fc_bias is no parameter of the second group: an input of its own, kept shared
        assert other.arg_dict["fc_bias"] is not one.arg_dict["fc_bias"]
    assert sorted(first.shared_data_arrays[0]) == ["a", "fc_bias"]
