"""Memory planning: intermediate bytes an executor allocates with planning on and off.

    python benchmarks/memory_plan.py [--layers 20] [--width 1024] [--batch 256] [--repeat 3]

A ``--layers``-deep MLP (FullyConnected ``--width`` wide, ReLU, SoftmaxOutput),
float32, bound for training with batch ``--batch``.  For each setting of the
``memory_plan`` config key: the bytes of intermediate storage the executor
allocated (``Executor.memory_stats()``), next to the live-set peak (the most
intermediate bytes alive at one step: the least a plan without in-place
sharing could allocate), the peak resident memory of a child process that
binds and runs forward+backward (``resource.getrusage``), and the ms per
forward+backward.  Each setting runs in its own process so the resident
peaks do not mix.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys

from _common import Stats, positive, print_header, print_table


def measure(layers: int, width: int, batch: int, planned: bool, repeat: int) -> dict:
    """Bind and run the network in this process; what ``main`` prints for one setting."""
    import time

    import numpy as np

    import dagnet as mx

    h = mx.sym.Variable("data")
    for i in range(layers):
        h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=width, name=f"fc{i}"),
                              act_type="relu", name=f"relu{i}")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="out"),
                               name="softmax")
    with mx.config.set(memory_plan=planned):
        ex = net.simple_bind(mx.cpu(), data=(batch, width))
    rng = np.random.default_rng(0)
    for name, array in ex.arg_dict.items():
        if name.endswith("weight"):
            array[:] = rng.standard_normal(array.shape).astype(np.float32) * (2 / width) ** 0.5
    ex.arg_dict["data"][:] = rng.standard_normal((batch, width)).astype(np.float32)
    times = []
    for _ in range(repeat + 1):
        start = time.perf_counter()
        ex.forward(is_train=True)
        ex.backward()
        mx.nd.waitall()
        times.append(time.perf_counter() - start)
    stats = ex.memory_stats()
    stats["ms"] = Stats(times[1:]).median * 1e3
    stats["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return stats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=positive, default=20)
    parser.add_argument("--width", type=positive, default=1024)
    parser.add_argument("--batch", type=positive, default=256)
    parser.add_argument("--repeat", type=positive, default=3,
                        help="forward+backward passes timed per setting (default 3)")
    parser.add_argument("--child", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.layers, args.width, args.batch, args.child == "on",
                                 args.repeat)))
        return
    print_header("dagnet executor memory planning", [
        ("network", f"{args.layers} x FullyConnected({args.width}) + ReLU, SoftmaxOutput, "
                    f"float32, batch {args.batch}"),
    ])
    rows = []
    for setting in ("on", "off"):
        out = subprocess.run(
            [sys.executable, __file__, "--child", setting, "--layers", str(args.layers),
             "--width", str(args.width), "--batch", str(args.batch), "--repeat",
             str(args.repeat)], capture_output=True, text=True, check=True)
        stats = json.loads(out.stdout.strip().splitlines()[-1])
        mib = 2 ** 20
        rows.append([setting, f"{stats['intermediate_bytes'] / mib:.1f}",
                     f"{stats['live_peak_bytes'] / mib:.1f}", stats["blocks"],
                     stats["inner_buffers"], stats["inplace"],
                     f"{stats['maxrss_kib'] / 1024:.0f}", f"{stats['ms']:.1f}"])
    print_table("intermediate storage with memory_plan on and off",
                ["memory_plan", "allocated MiB", "live-set peak MiB", "blocks", "inner buffers",
                 "in place", "peak RSS MiB", "ms fwd+bwd"], rows)


if __name__ == "__main__":
    main()
