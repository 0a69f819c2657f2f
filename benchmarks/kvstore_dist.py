"""Distributed KVStore on Dask: push-pull cost and data-parallel training throughput.

    python benchmarks/kvstore_dist.py [--mb 10] [--rounds 20] [--repeat 3] [--epochs 12]
                                      [--servers 1 2]

Needs ``dagnet[dist]`` and ``scikit-learn`` (for the digits).

1. **push-pull**: a job of 2 workers started with ``dagnet launch`` on a local
   Dask cluster; each worker times ``kv.pushpull(0, a, out=b)`` of a ``--mb``
   MB float32 array through ``dist_sync`` with 1 and with 2 parameter servers
   (every pushpull waits for the other worker's push, sums, and returns the
   sum; the array is split over the servers), next to a bare Dask round trip
   of the same array in the same process: a call on one server actor that
   returns its argument.  Target: pushpull <= 1.2x the bare round trip.
2. **training throughput**: ``examples/train_digits.py`` for ``--epochs``
   epochs with no store (one process), and through ``dist_sync`` with 1 and
   2 workers; digits per second of training time (the time the example
   reports after its last epoch).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

from _common import Stats, positive, print_header, print_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGITS = os.path.join(ROOT, "examples", "train_digits.py")
TARGET = 1.2


def worker(mb: int, rounds: int, repeat: int) -> None:
    """One worker of the push-pull job (run by ``dagnet launch``)."""
    import numpy as np

    import dagnet as mx

    kv = mx.kv.create("dist_sync")
    size = mb * 2**20 // 4
    value = mx.nd.array(np.ones(size, np.float32))
    out = mx.nd.zeros((size,))
    kv.init(0, value)
    host = value.asnumpy()
    kv.pushpull(0, value, out=out)  # warm up both paths
    kv._servers[0].echo(host).result()
    push_pull, echo = [], []
    for _ in range(repeat):
        kv.barrier()
        start = time.perf_counter()
        for _ in range(rounds):
            kv.pushpull(0, value, out=out)
        out.wait_to_read()
        push_pull.append((time.perf_counter() - start) / rounds)
        kv.barrier()
        start = time.perf_counter()
        for _ in range(rounds):
            host_out = kv._servers[0].echo(host).result()
        out[:] = host_out
        out.wait_to_read()
        echo.append((time.perf_counter() - start) / rounds)
    if kv.rank == 0:
        print(f"RESULT {Stats(push_pull).median} {Stats(push_pull).min} {Stats(echo).median} "
              f"{Stats(echo).min}", flush=True)
    kv.barrier()


def push_pull_rows(mb: int, rounds: int, repeat: int, servers: int) -> list[list[str]]:
    command = [sys.executable, "-m", "dagnet.cli", "launch", "-n", "2", "-s", str(servers),
               sys.executable,
               os.path.abspath(__file__), "--worker", "--mb", str(mb), "--rounds", str(rounds),
               "--repeat", str(repeat)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    found = re.search(r"RESULT (\S+) (\S+) (\S+) (\S+)", result.stdout)
    if result.returncode != 0 or not found:
        raise SystemExit(f"the push-pull job failed:\n{result.stdout}\n{result.stderr}")
    pp_med, pp_min, echo_med, echo_min = map(float, found.groups())
    ratio = pp_med / echo_med
    return [
        ["bare Dask round trip (actor echo)", f"{echo_med * 1e3:.2f}", f"{echo_min * 1e3:.2f}",
         "1.00x", "-", "-"],
        [f"dist_sync pushpull, 2 workers, {servers} server(s)", f"{pp_med * 1e3:.2f}",
         f"{pp_min * 1e3:.2f}",
         f"{ratio:.2f}x", f"<= {TARGET}x", "yes" if ratio <= TARGET else "NO"],
    ]


def train_seconds(epochs: int, *extra: str) -> float:
    """Training time the digits example reports after its last epoch."""
    command = [sys.executable, DIGITS, "--epochs", str(epochs), "--out",
               os.path.join(ROOT, ".bench-digits"), *extra]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    times = re.findall(r"accuracy \d\.\d+\s+\((\d+\.\d+) s\)", result.stdout)
    if result.returncode != 0 or not times:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")
    return float(times[-1])


def throughput_rows(epochs: int, repeat: int) -> list[list[str]]:
    samples_per_epoch = (1438 // 32) * 32
    runs = [("one process, no store", ()),
            ("dist_sync, 1 worker", ("--kvstore", "dist_sync", "--workers", "1")),
            ("dist_sync, 2 workers", ("--kvstore", "dist_sync", "--workers", "2"))]
    seconds = {label: [] for label, _ in runs}
    for _ in range(repeat):
        for label, extra in runs:
            seconds[label].append(train_seconds(epochs, *extra))
    base = Stats(seconds[runs[0][0]]).median
    rows = []
    for label, _ in runs:
        stats = Stats(seconds[label])
        rows.append([label, f"{stats.median:.2f}",
                     f"{samples_per_epoch * epochs / stats.median:.0f}",
                     f"{base / stats.median:.2f}x"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=positive, default=10, help="size of the pushed array")
    parser.add_argument("--rounds", type=positive, default=20, help="pushpulls per measurement")
    parser.add_argument("--repeat", type=positive, default=3)
    parser.add_argument("--epochs", type=positive, default=12, help="digits epochs per run")
    parser.add_argument("--servers", type=positive, nargs="+", default=[1, 2],
                        help="parameter servers of the push-pull jobs (dagnet launch -s), one "
                             "job each")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.mb, args.rounds, args.repeat)
        return
    print_header("dagnet distributed KVStore on Dask",
                 [("job", "dagnet launch -n 2 on a local Dask cluster (127.0.0.1)")])
    for servers in args.servers:
        print_table(f"push-pull of {args.mb} MB float32 per worker, {servers} server(s), "
                    f"ms per round (median and min of {args.repeat})",
                    ["path", "median ms", "min ms", "vs bare", "target", "meets"],
                    push_pull_rows(args.mb, args.rounds, args.repeat, servers))
    print_table(f"digits training, batch 32, {args.epochs} epochs (median of {args.repeat})",
                ["run", "train s", "digits/s", "vs one process"],
                throughput_rows(args.epochs, args.repeat))


if __name__ == "__main__":
    main()
