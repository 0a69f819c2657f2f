"""Every registered operator, built-in or third-party, on every available backend and
every registered engine: declarations complete, forward, write modes, in-place pairs
and gradient (see dagnet.testing.op_suite)."""

from __future__ import annotations

import pytest

from dagnet.operator import get_op, list_ops
from dagnet.testing.op_suite import check_operator, missing_declarations

FORWARD_OPS = [name for name in list_ops() if not get_op(name).is_backward]


@pytest.mark.parametrize("name", FORWARD_OPS)
def test_operator_declares_what_the_suite_needs(name):
    assert missing_declarations(get_op(name)) == []


@pytest.mark.parametrize("name", FORWARD_OPS)
def test_operator_conforms(name, dagnet_backend_name, dagnet_engine_name):
    check_operator(name, backends=[dagnet_backend_name], engines=[dagnet_engine_name],
                   max_examples=None if dagnet_engine_name == "naive" else 4)
