"""Engine overhead: microseconds each pushed operation costs, per engine.

    python benchmarks/engine_overhead.py [--ops 20000] [--numpy-ops 2000] [--repeat 5]

(a) Empty functions, each mutating one variable: all on one variable (a
    dependent chain) and each on its own variable (independent work).  Time
    from the first push until ``wait_for_all()`` returns, divided by the
    number of pushes.
(b) A chain of small in-place numpy additions (``np.add(a, b, out=a)`` on
    100 float32 elements), each pushed with ``push_sync`` mutating one
    variable, next to the same calls made directly; the difference is the
    engine's overhead per operation.

Every measurement is repeated (engines in turn within each round, so a
noisy machine disturbs them alike); the tables give the median and the
minimum.  Targets: naive <= 3 us, threaded engines <= 8 us per operation.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

import numpy as np
from _common import Stats, positive, print_header, print_table, timed

import dagnet

TARGETS_US = {"naive": 3.0, "threaded": 8.0, "threaded_per_device": 8.0}


def empty(run_ctx: dagnet.engine.RunContext) -> None:
    """The pushed function when only the engine's own cost is wanted."""


def time_chain(engine: dagnet.engine.Engine, ops: int) -> float:
    """Seconds per push: ``ops`` empty functions all mutating one variable."""
    ctx, push, writes = dagnet.cpu(), engine.push_sync, [engine.new_var()]

    def run() -> None:
        for _ in range(ops):
            push(empty, ctx, mutate_vars=writes)
        engine.wait_for_all()

    return timed(run) / ops


def time_independent(engine: dagnet.engine.Engine, ops: int) -> float:
    """Seconds per push: ``ops`` empty functions, each mutating a variable of its own."""
    ctx, push = dagnet.cpu(), engine.push_sync
    writes = [[engine.new_var()] for _ in range(ops)]  # made before the clock starts

    def run() -> None:
        for w in writes:
            push(empty, ctx, mutate_vars=w)
        engine.wait_for_all()

    return timed(run) / ops


def time_numpy(engine: dagnet.engine.Engine, ops: int, size: int) -> tuple[float, float]:
    """Seconds per op for ``ops`` in-place additions: (through the engine, called directly)."""
    ctx, push, writes = dagnet.cpu(), engine.push_sync, [engine.new_var()]
    add = np.add
    a = np.ones(size, dtype=np.float32)
    b = np.full(size, 1e-3, dtype=np.float32)

    def step(run_ctx: dagnet.engine.RunContext) -> None:
        add(a, b, out=a)

    def through_engine() -> None:
        for _ in range(ops):
            push(step, ctx, mutate_vars=writes)
        engine.wait_for_all()

    def direct() -> None:
        for _ in range(ops):
            add(a, b, out=a)

    direct_s = timed(direct) / ops
    a[:] = 1
    engine_s = timed(through_engine) / ops
    expected = np.float32(1)
    for _ in range(ops):  # the same float32 rounding as the engine's chain
        expected = np.float32(expected + np.float32(1e-3))
    if not np.allclose(a, expected, rtol=1e-6):
        raise RuntimeError(
            f"{engine.name}: the chain of additions gave {a[0]}, expected {expected}")
    return engine_s, direct_s


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}"


def verdict(name: str, seconds: float) -> tuple[str, str]:
    target = TARGETS_US.get(name)
    if target is None:
        return "-", "-"
    return f"<= {target:g}", "yes" if seconds * 1e6 <= target else "NO"


def profile_push_path(engine: dagnet.engine.Engine, ops: int) -> None:
    """cProfile of pushing a chain of empty functions, on the main thread only.

    Worker threads are not profiled: for the threaded engines this shows what
    the pushing thread pays, including the tracker work it does under the lock.
    """
    time_chain(engine, 200)  # start the workers before profiling
    profiler = cProfile.Profile()
    profiler.enable()
    time_chain(engine, ops)
    profiler.disable()
    engine.shutdown()
    print(f"cProfile of {ops} pushes on {engine.name!r} (main thread only), by own time:")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=positive, default=20_000,
                        help="empty functions pushed per measurement (default 20000)")
    parser.add_argument("--numpy-ops", type=positive, default=2_000,
                        help="numpy additions per measurement (default 2000)")
    parser.add_argument("--size", type=positive, default=100,
                        help="float32 elements per numpy addition (default 100)")
    parser.add_argument("--repeat", type=positive, default=5,
                        help="measurements of each kind; median and min reported (default 5)")
    parser.add_argument("--engines", nargs="+", metavar="NAME",
                        help="engines to measure (default: every registered engine)")
    parser.add_argument("--workers", type=int, default=None,
                        help="cpu_workers for the threaded engines (default: the configured "
                             "value; 0 means one per core)")
    parser.add_argument("--profile", metavar="NAME",
                        help="instead of the tables, cProfile the push path of engine NAME")
    args = parser.parse_args(argv)

    names = [args.profile] if args.profile else args.engines or sorted(dagnet.engine.names())
    try:
        if args.workers is not None:
            dagnet.config.set(cpu_workers=args.workers)
        engines = {name: dagnet.engine.create(name) for name in names}
    except dagnet.DagnetError as error:  # an unknown engine, a bad worker count
        parser.error(error.args[0])
    workers = dagnet.config.get("cpu_workers")
    if args.profile:
        profile_push_path(engines[args.profile], args.ops)
        return

    print_header("dagnet engine overhead", [
        ("cpu_workers", f"{workers} ({'one per core' if workers == 0 else 'set'})"),
        ("engines", ", ".join(names)),
        ("repeat", f"{args.repeat} (median and min reported)"),
    ])

    for engine in engines.values():  # start workers, warm caches
        time_chain(engine, 200)
        time_independent(engine, 200)
        time_numpy(engine, 200, args.size)

    chain = {name: [] for name in names}
    independent = {name: [] for name in names}
    through = {name: [] for name in names}
    direct = {name: [] for name in names}
    overhead = {name: [] for name in names}
    for _ in range(args.repeat):
        for name, engine in engines.items():
            chain[name].append(time_chain(engine, args.ops))
            independent[name].append(time_independent(engine, args.ops))
            engine_s, direct_s = time_numpy(engine, args.numpy_ops, args.size)
            through[name].append(engine_s)
            direct[name].append(direct_s)
            overhead[name].append(engine_s - direct_s)  # paired: same round, same engine
    for engine in engines.values():
        engine.shutdown()

    rows = []
    for name in names:
        for label, samples in (("chain (1 var)", chain[name]),
                               ("independent", independent[name])):
            stats = Stats(samples)
            rows.append([name, label, args.ops, us(stats.median), us(stats.min),
                         *verdict(name, stats.median)])
    print_table(
        "(a) empty functions, one mutate variable each: us per push, "
        "first push to wait_for_all() done",
        ["engine", "workload", "ops", "median us/op", "min us/op", "target", "meets"],
        rows, align="<<>>>>>")

    rows = []
    for name in names:
        over = Stats(overhead[name])
        rows.append([name, args.numpy_ops, us(Stats(through[name]).median),
                     us(Stats(direct[name]).median), us(over.median), us(over.min),
                     *verdict(name, over.median)])
    print_table(
        f"(b) chain of np.add(a, b, out=a) on {args.size} float32, one mutate variable: "
        "us per op",
        ["engine", "ops", "engine", "direct", "overhead median", "overhead min", "target",
         "meets"],
        rows)


if __name__ == "__main__":
    main()
