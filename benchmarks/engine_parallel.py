"""Engine parallelism: two independent chains of matmuls, per engine.

    python benchmarks/engine_parallel.py [--steps 20] [--size 512] [--workers 2] [--repeat 5]

Each chain repeatedly multiplies its own float32 matrix by a shared
orthogonal one (``np.matmul(x, w, out=y)``, then x and y swap, so values stay
finite without extra work).  Every matmul is one ``push_sync`` that mutates
its chain's variable and reads the shared weight's variable; the two chains
are pushed interleaved, and the clock runs from the first push until
``wait_for_all()`` returns.  BLAS is held to one thread, so any speedup comes
from the engine running the two chains on two workers (numpy releases the
GIL inside matmul).  For reference, the same work as plain numpy: both chains
one after the other, and each in its own Python thread.

Target: threaded_per_device >= 1.8x faster than naive on 2 cores.
"""

# ruff: noqa: E402 - BLAS reads its thread count once, when numpy loads it
from __future__ import annotations

import os

BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
for _name in BLAS_THREAD_VARS:
    os.environ[_name] = "1"

import argparse
import threading

import numpy as np
from _common import Stats, load_average, positive, print_header, print_table, timed

import dagnet

TARGETS = {"threaded_per_device": 1.8}


class Chain:
    """One chain of matmuls: ``x <- x @ w``, ``steps`` times, in preallocated buffers."""

    def __init__(self, x0: np.ndarray, w: np.ndarray):
        self.x0 = x0
        self.w = w
        self.x = x0.copy()
        self.y = np.empty_like(x0)

    def reset(self) -> None:
        np.copyto(self.x, self.x0)

    def step(self, run_ctx: dagnet.engine.RunContext | None) -> None:
        np.matmul(self.x, self.w, out=self.y)
        self.x, self.y = self.y, self.x

    def run(self, steps: int) -> None:
        for _ in range(steps):
            self.step(None)


def make_chains(count: int, size: int, seed: int = 0) -> list[Chain]:
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((size, size)))
    w = np.ascontiguousarray(q, dtype=np.float32)
    return [Chain(rng.standard_normal((size, size)).astype(np.float32), w)
            for _ in range(count)]


def time_engine(engine: dagnet.engine.Engine, chains: list[Chain], steps: int) -> float:
    """Seconds from the first push of the interleaved chains until wait_for_all() returns."""
    ctx, push = dagnet.cpu(), engine.push_sync
    reads = [engine.new_var("w")]
    pushes = [(chain.step, [engine.new_var(f"chain{i}")]) for i, chain in enumerate(chains)]
    for chain in chains:
        chain.reset()

    def run() -> None:
        for _ in range(steps):
            for fn, writes in pushes:
                push(fn, ctx, const_vars=reads, mutate_vars=writes)
        engine.wait_for_all()

    return timed(run)


def time_sequential(chains: list[Chain], steps: int) -> float:
    for chain in chains:
        chain.reset()
    return timed(lambda: [chain.run(steps) for chain in chains])


def time_threads(chains: list[Chain], steps: int) -> float:
    """Each chain in its own Python thread; thread start and join are timed."""
    for chain in chains:
        chain.reset()

    def run() -> None:
        threads = [threading.Thread(target=chain.run, args=(steps,)) for chain in chains]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    return timed(run)


def check(chains: list[Chain], expected: list[np.ndarray], what: str) -> None:
    """The chains' results match the sequential ones: every step ran, in order."""
    for i, (chain, want) in enumerate(zip(chains, expected, strict=True)):
        if not np.allclose(chain.x, want, rtol=1e-4, atol=1e-4):
            raise RuntimeError(f"{what}: chain {i} differs from the sequential result")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=positive, default=20, help="matmuls per chain (default 20)")
    parser.add_argument("--size", type=positive, default=512, help="matrix side (default 512)")
    parser.add_argument("--chains", type=positive, default=2,
                        help="independent chains (default 2)")
    parser.add_argument("--workers", type=int, default=2,
                        help="cpu_workers for the threaded engines (default 2; 0 means one "
                             "per core)")
    parser.add_argument("--repeat", type=positive, default=5,
                        help="measurements of each kind; median and min reported (default 5)")
    parser.add_argument("--engines", nargs="+", metavar="NAME",
                        help="engines to measure (default: every registered engine)")
    args = parser.parse_args(argv)

    names = args.engines or sorted(dagnet.engine.names())
    if "naive" not in names:
        names.insert(0, "naive")  # the baseline every speedup is measured against
    try:
        dagnet.config.set(cpu_workers=args.workers)
        engines = {name: dagnet.engine.create(name) for name in names}
    except dagnet.DagnetError as error:  # an unknown engine, a bad worker count
        parser.error(error.args[0])
    workers = dagnet.config.get("cpu_workers")

    print_header("dagnet engine parallelism", [
        ("blas threads", ", ".join(f"{v}={os.environ[v]}" for v in BLAS_THREAD_VARS)),
        ("cpu_workers", f"{workers} ({'one per core' if workers == 0 else 'set'})"),
        ("work", f"{args.chains} chains x {args.steps} matmuls, {args.size}x{args.size} float32"),
        ("repeat", f"{args.repeat} (median and min reported)"),
    ])

    chains = make_chains(args.chains, args.size)
    time_sequential(chains, args.steps)
    expected = [chain.x.copy() for chain in chains]
    for engine in engines.values():  # start workers, warm up BLAS
        time_engine(engine, chains, 2)

    samples: dict[str, list[float]] = {key: [] for key in [*names, "sequential", "threads"]}
    for _ in range(args.repeat):
        for name, engine in engines.items():
            samples[name].append(time_engine(engine, chains, args.steps))
            check(chains, expected, name)
        samples["sequential"].append(time_sequential(chains, args.steps))
        samples["threads"].append(time_threads(chains, args.steps))
        check(chains, expected, "numpy in threads")
    for engine in engines.values():
        engine.shutdown()

    stats = {key: Stats(values) for key, values in samples.items()}
    ops = args.chains * args.steps
    rows = []
    for name in names:
        speedup = stats["naive"].median / stats[name].median
        speedup_min = stats["naive"].min / stats[name].min
        target = TARGETS.get(name)
        rows.append([name, f"{stats[name].median * 1e3:.1f}", f"{stats[name].min * 1e3:.1f}",
                     f"{stats[name].median / ops * 1e3:.2f}", f"{speedup:.2f}x",
                     f"{speedup_min:.2f}x",
                     f"{stats['sequential'].median / stats[name].median:.2f}x",
                     f">= {target:g}x" if target else "-",
                     ("yes" if speedup >= target else "NO") if target else "-"])
    print_table(
        f"engines: {ops} matmuls pushed, first push to wait_for_all() done "
        "(speedup vs naive: of the medians, and of the minimums; vs numpy: of the medians)",
        ["engine", "median ms", "min ms", "ms/matmul", "speedup", "speedup of min",
         "vs numpy 1 thread", "target", "meets"],
        rows)

    base = stats["sequential"].median
    rows = [[label, f"{stats[key].median * 1e3:.1f}", f"{stats[key].min * 1e3:.1f}",
             f"{base / stats[key].median:.2f}x",
             f"{stats['sequential'].min / stats[key].min:.2f}x"]
            for key, label in (("sequential", "numpy, one thread"),
                               ("threads", f"numpy, {args.chains} Python threads"))]
    print_table("reference: the same matmuls as plain numpy (speedup vs one thread)",
                ["run", "median ms", "min ms", "speedup", "speedup of min"], rows)

    threads_speedup = base / stats["threads"].median
    if threads_speedup < 0.9 * min(args.chains, os.cpu_count() or 1):
        print(f"note: plain numpy in {args.chains} threads ran only {threads_speedup:.2f}x "
              f"faster than in one, so the machine did not give this run "
              f"{args.chains} free cores; the engines' speedups are capped the same way. "
              f"Load average now: {load_average() or 'unknown'}.")


if __name__ == "__main__":
    main()
