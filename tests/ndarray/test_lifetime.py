"""Memory: a chunk frees its block through the engine once its last array is gone."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import numpy as np

import dagnet as mx


def test_dropped_arrays_give_their_memory_back(engine_name):
    ctx = mx.cpu(5)  # a device of its own, so other tests do not disturb the count
    mx.nd.zeros((1,), ctx=ctx)
    mx.nd.waitall()
    gc.collect()
    mx.nd.waitall()
    base = mx.storage.stats(ctx).in_use
    x = mx.nd.zeros((1000,), ctx=ctx)
    view = x[10:20]
    del x
    gc.collect()
    mx.nd.waitall()
    assert mx.storage.stats(ctx).in_use > base  # the view keeps the chunk alive
    view[:] = 1
    del view
    gc.collect()
    mx.nd.waitall()
    assert mx.storage.stats(ctx).in_use == base


def test_memory_is_freed_only_after_pending_work(engine_name):
    x = mx.nd.zeros((64,))
    out = mx.nd._ndtest_slow(x, seconds=0.02, add=3.0)
    del x  # deleted while the slow function still reads it
    gc.collect()
    np.testing.assert_array_equal(out.asnumpy(), np.full(64, 3.0))


def test_exit_with_work_in_flight_is_clean():
    script = textwrap.dedent("""
        import dagnet as mx
        keep = []
        for engine in ("naive", "threaded", "threaded_per_device"):
            mx.config.set(engine=engine)
            x = mx.nd.ones((1000,))
            for _ in range(50):  # copies and assignments: no operator library needed
                y = x.copy()
                y[:] = 2
                x[1:3] = y[5:7]
                x = x.astype("float64")
            keep.append(x[1:5])
        print("done")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    assert "Exception ignored" not in result.stderr and "Traceback" not in result.stderr


def test_arrays_in_reference_cycles_are_freed_at_the_next_safe_point(engine_name):
    ctx = mx.cpu(6)
    mx.nd.zeros((1,), ctx=ctx)
    gc.collect()
    mx.nd.waitall()
    base = mx.storage.stats(ctx).in_use
    holder = [mx.nd.zeros((4096,), ctx=ctx)]
    holder.append(holder)  # only the cyclic collector can free this
    del holder
    gc.collect()  # finalized during collection: deletion is deferred, not run inside it
    mx.nd.waitall()  # a safe point: the deletion is pushed, then waited for
    mx.nd.waitall()
    assert mx.storage.stats(ctx).in_use == base
