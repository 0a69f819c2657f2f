"""NDArray dispatch: microseconds per ``x = x + y`` through dagnet.nd, per engine.

    python benchmarks/ndarray_dispatch.py [--ops 2000] [--repeat 5]

A chain of ``--ops`` additions ``x = x + y`` on float32 arrays, then one
wait, per engine; next to the same chain in plain numpy (``x = x + y`` on
numpy arrays, allocating like the NDArray version does).  Run at 100
elements (dispatch cost dominates) and at 1,000,000 elements (the kernel
dominates: the ratio to numpy is what matters there).

Targets: <= 5 us per op on naive and <= 8 us on threaded_per_device at 100
elements; <= 1.3x numpy at 1,000,000 elements.  For comparison, MXNet 1.9.1
on this kind of machine: 9.2 us (NaiveEngine), 14.8 us
(ThreadedEnginePerDevice), 2.8x to 3.2x numpy at 1,000,000 elements.
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import Stats, positive, print_header, print_table, timed

import dagnet

TARGET_US = {"naive": 5.0, "threaded_per_device": 8.0}
TARGET_RATIO = 1.3


def time_numpy(size: int, ops: int) -> float:
    """Seconds per ``x = x + y`` in plain numpy."""
    x = np.ones(size, np.float32)
    y = np.ones(size, np.float32)

    def run() -> None:
        nonlocal x
        for _ in range(ops):
            x = x + y

    return timed(run) / ops


def time_ndarray(engine: str, size: int, ops: int) -> float:
    """Seconds per ``x = x + y`` through dagnet.nd on ``engine`` (chain, then one wait)."""
    with dagnet.config.set(engine=engine):
        x = dagnet.nd.ones((size,))
        y = dagnet.nd.ones((size,))
        for _ in range(50):  # warm the caches and the storage pool
            x = x + y
        dagnet.nd.waitall()
        start_value = float(x[0].asscalar())

        def run() -> None:
            nonlocal x
            for _ in range(ops):
                x = x + y
            x.wait_to_read()

        seconds = timed(run) / ops
        expected = start_value + ops
        got = float(x[0].asscalar())
        if got != expected:
            raise SystemExit(f"{engine}: wrong result {got}, expected {expected}")
        dagnet.nd.waitall()
        return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=positive, default=2000, help="additions per chain")
    parser.add_argument("--large-ops", type=positive, default=200,
                        help="additions per chain at 1,000,000 elements")
    parser.add_argument("--repeat", type=positive, default=5)
    parser.add_argument("--engines", nargs="*", default=None)
    args = parser.parse_args(argv)
    engines = args.engines or dagnet.engine.names()
    print_header("dagnet.nd dispatch: x = x + y", [("engines", ", ".join(engines))])

    for size, ops in ((100, args.ops), (1_000_000, args.large_ops)):
        numpy_samples, samples = [], {name: [] for name in engines}
        for _ in range(args.repeat):  # engines in turn in every round
            numpy_samples.append(time_numpy(size, ops))
            for name in engines:
                samples[name].append(time_ndarray(name, size, ops))
        base = Stats(numpy_samples)
        rows = [["numpy", f"{base.median * 1e6:.2f}", f"{base.min * 1e6:.2f}", "1.00", ""]]
        for name in engines:
            stats = Stats(samples[name])
            ratio = stats.median / base.median
            if size == 100:
                target = f"<= {TARGET_US[name]:.0f} us" if name in TARGET_US else ""
            else:
                target = f"<= {TARGET_RATIO}x numpy"
            rows.append([name, f"{stats.median * 1e6:.2f}", f"{stats.min * 1e6:.2f}",
                         f"{ratio:.2f}", target])
        print_table(f"{size:,} float32 elements, chain of {ops}, median of {args.repeat}",
                    ["", "us/op median", "us/op min", "x numpy", "target"], rows)


if __name__ == "__main__":
    main()
