"""mxnet.operator's introspection: registered names and MXNet-style argument descriptions."""

from __future__ import annotations

import pytest

import dagnet as mx
from dagnet.operator import (
    OperatorArguments,
    get_all_registered_operators,
    get_operator_arguments,
)


def test_every_registered_operator_is_listed():
    names = get_all_registered_operators()
    assert isinstance(names, list) and "Activation" in names and "_backward_Activation" in names


def test_arguments_read_as_mxnet_describes_them():
    args = get_operator_arguments("Activation")
    assert isinstance(args, OperatorArguments)
    assert args.names == ["data", "act_type"] and args.narg == 2
    assert args.types == ["NDArray-or-Symbol",
                          "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"]
    concat = get_operator_arguments("Concat")
    assert concat.types[0] == "NDArray-or-Symbol[]"
    assert concat.types[2] == "int, optional, default='1'"


def test_unknown_operator_is_a_clear_error():
    with pytest.raises(mx.MXNetError, match="no_such_op"):
        get_operator_arguments("no_such_op")
