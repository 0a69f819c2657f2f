"""An end-to-end tour of dagnet's foundation on the default CPU backend and engine.

It builds a small dataflow by hand, the way dagnet's operators will: blocks of
memory from the pooled storage manager, random data from each device's random
resource, and a DAG of numpy kernels pushed to the dependency engine with the
variables they read and write.  The engine runs independent branches in
parallel and keeps conflicting writes in push order; the result is checked
against the same computation done directly with numpy.

    python examples/engine_pipeline.py [--engine naive] [--size 256] [--steps 8]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dagnet
from dagnet.resource import ResourceRequest


class Buffer:
    """A float32 matrix in pooled storage, tagged with an engine variable."""

    def __init__(self, engine, shape, ctx):
        self.ctx = ctx
        self.handle = dagnet.storage.alloc(int(np.prod(shape)) * 4, ctx)
        self.array = self.handle.data[: self.handle.nbytes].view(np.float32).reshape(shape)
        self.var = engine.new_var()

    def release(self, engine):
        """Free the memory once every function using it has run."""
        handle = self.handle
        engine.delete_var(self.var, self.ctx, fn=lambda run_ctx: dagnet.storage.free(handle))


def build(engine, size, steps, devices):
    """Per device: random weights, then `steps` layers of tanh(x @ w), then a sum."""
    branches = []
    for ctx in devices:
        rng = dagnet.resource.request(ctx, ResourceRequest("random"))
        x, w = Buffer(engine, (size, size), ctx), Buffer(engine, (size, size), ctx)

        def init(run_ctx, x=x, w=w, rng=rng):
            x.array[...] = rng.generator.standard_normal(x.array.shape, dtype=np.float32)
            w.array[...] = rng.generator.standard_normal(w.array.shape, dtype=np.float32)
            w.array /= np.sqrt(size)

        engine.push_sync(init, ctx, mutate_vars=[x.var, w.var, rng.var], name=f"init@{ctx}")
        for step in range(steps):
            def layer(run_ctx, x=x, w=w):
                np.tanh(x.array @ w.array, out=x.array)

            engine.push_sync(layer, ctx, const_vars=[w.var], mutate_vars=[x.var],
                             name=f"layer{step}@{ctx}")
        branches.append((ctx, x, w))
    total = Buffer(engine, (1,), devices[0])

    def reduce(run_ctx):
        total.array[0] = sum(float(x.array.sum()) for _, x, _ in branches)

    engine.push_sync(reduce, devices[0], const_vars=[x.var for _, x, _ in branches],
                     mutate_vars=[total.var], name="reduce")
    return branches, total


def reference(size, steps, devices):
    """The same numbers computed directly with numpy and the same seeded streams."""
    total = 0.0
    for ctx in devices:
        gen = np.random.Generator(np.random.PCG64(dagnet.resource.device_seed(7, ctx)))
        x = gen.standard_normal((size, size), dtype=np.float32)
        w = gen.standard_normal((size, size), dtype=np.float32) / np.float32(np.sqrt(size))
        for _ in range(steps):
            x = np.tanh(x @ w)
        total += float(x.sum())
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default=None, help="engine name (default: config/env)")
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args(argv)
    if args.engine:
        dagnet.config.set(engine=args.engine)

    engine = dagnet.engine.current()
    devices = [dagnet.cpu(0), dagnet.cpu(1)]
    dagnet.random.seed(7)
    start = time.perf_counter()
    branches, total = build(engine, args.size, args.steps, devices)
    engine.wait_for_var(total.var)
    elapsed = time.perf_counter() - start
    result = float(total.array[0])
    expected = reference(args.size, args.steps, devices)

    print(f"engine: {engine.name}; devices: {', '.join(map(str, devices))}")
    print(f"{len(devices)} branches x {args.steps} layers of tanh(x @ w), {args.size}x{args.size} "
          f"float32: {elapsed * 1e3:.1f} ms")
    print(f"sum through the engine: {result:.6f}; direct numpy: {expected:.6f}")
    for _, x, w in branches:
        x.release(engine)
        w.release(engine)
    total.release(engine)
    engine.wait_for_all()
    stats = dagnet.storage.stats(devices[0])
    print(f"storage on {devices[0]}: peak {stats.peak} B, pooled after release {stats.pooled} B, "
          f"in use {stats.in_use} B")
    if not np.isclose(result, expected, rtol=1e-4, atol=1e-3):
        raise SystemExit(f"mismatch: engine gave {result}, numpy gave {expected}")
    print("ok: the engine's result matches numpy")


if __name__ == "__main__":
    main()
