"""Random programs of writes through views, in-place operators and copies give the
same values as numpy on every engine: the engine orders them by the shared variable."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagnet as mx

ROWS, COLS = 4, 3

_rows = st.tuples(st.integers(0, ROWS - 1), st.integers(1, ROWS)).map(
    lambda p: slice(min(p), max(p[0] + 1, p[1])))

_steps = st.one_of(
    st.tuples(st.just("set_rows"), _rows, st.integers(-5, 5)),
    st.tuples(st.just("set_column"), st.integers(0, COLS - 1), st.integers(-5, 5)),
    st.tuples(st.just("add_row"), st.integers(0, ROWS - 1), st.integers(-3, 3)),
    st.tuples(st.just("scale_rows"), _rows, st.integers(-2, 2)),
    st.tuples(st.just("add_other"), _rows, st.just(0)),
    st.tuples(st.just("copy_to_other"), _rows, st.just(0)),
    st.tuples(st.just("slow_add"), st.integers(0, ROWS - 1), st.integers(1, 3)),
)


def _run(steps):
    x, other = mx.nd.zeros((ROWS, COLS)), mx.nd.ones((ROWS, COLS))
    want, want_other = np.zeros((ROWS, COLS), np.float32), np.ones((ROWS, COLS), np.float32)
    for kind, where, value in steps:
        if kind == "set_rows":
            x[where] = value
            want[where] = value
        elif kind == "set_column":
            x[:, where] = value
            want[:, where] = value
        elif kind == "add_row":
            row = x[where]
            row += value
            want[where] += value
        elif kind == "scale_rows":
            rows = x[where]
            rows *= value
            want[where] *= value
        elif kind == "add_other":
            part = other[where]
            part += x[where]
            want_other[where] += want[where]
        elif kind == "copy_to_other":
            x[where].copyto(other[where])
            want_other[where] = want[where]
        else:  # a slow writer on one row, to give threaded engines a chance to reorder
            row = x[where]
            mx.nd._ndtest_slow(row, seconds=0.001, add=float(value), out=row)
            want[where] += value
    np.testing.assert_array_equal(x.asnumpy(), want)
    np.testing.assert_array_equal(other.asnumpy(), want_other)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_steps, min_size=1, max_size=12))
def test_random_programs_match_numpy(dagnet_engine_name, steps):
    with mx.config.set(engine=dagnet_engine_name):
        _run(steps)
        mx.nd.waitall()
