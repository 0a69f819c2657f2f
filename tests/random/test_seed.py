"""``dagnet.random.seed``: any Python int MXNet takes (its C int keeps seeds modulo
2**32), per device or for all, and clear errors for the rest."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet


def _draw():
    return dagnet.random.uniform(shape=(6,)).asnumpy()


def test_seeds_equal_modulo_2_32_give_the_same_stream():
    dagnet.random.seed(-5)
    negative = _draw()
    dagnet.random.seed(2**32 - 5)
    np.testing.assert_array_equal(_draw(), negative)
    dagnet.random.seed(2**70 + 3)
    huge = _draw()
    dagnet.random.seed(3)
    np.testing.assert_array_equal(_draw(), huge)
    dagnet.random.seed(np.int64(3))
    np.testing.assert_array_equal(_draw(), huge)
    dagnet.random.seed(4)
    assert not np.array_equal(_draw(), huge)


def test_seed_for_one_device_by_context_or_name():
    for ctx in (dagnet.cpu(0), "cpu", "cpu(0)"):
        dagnet.random.seed(11, ctx=ctx)
        first = _draw()
        dagnet.random.seed(11, ctx=ctx)
        np.testing.assert_array_equal(_draw(), first)


@pytest.mark.parametrize("bad", [1.5, "3", None])
def test_seed_must_be_an_int(bad):
    with pytest.raises(dagnet.base.MXNetError, match="seed_state must be an int"):
        dagnet.random.seed(bad)


def test_seed_ctx_must_name_a_device():
    with pytest.raises(dagnet.base.MXNetError, match="ctx must be 'all' or a dagnet Context"):
        dagnet.random.seed(1, ctx=3)
