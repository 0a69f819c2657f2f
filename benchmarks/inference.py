"""Inference, dagnet against MXNet 1.9.1 (plain and oneDNN-optimized) and ONNX Runtime.

    python benchmarks/inference.py [--mxnet-python PATH] [--repeat 5] [--threads 1 2]
                                   [--only resnet50_v1 mobilenetv2_1.0] [--batches 1 8]
                                   [--plain]

One forward pass of a Gluon model-zoo network (``vision.get_model(name)``, random
weights), hybridized with ``static_alloc=True, static_shape=True`` and called outside
``autograd.record()``, on a random float32 batch of 3x224x224 images, ending in a wait
for the output: milliseconds per forward pass.  The sides, as a new user would run them:

dagnet      this process: ``net(x)``, so the executor is bound for inference and
            dagnet's inference graph passes run (``--plain`` adds a column of the same
            network with the graph passes off: ``config graph_passes=False``).
MXNet       a worker process of ``--mxnet-python`` per thread count: the same.
MKLDNN      the same worker, the network also passed through
            ``net.optimize_for(x, backend="MKLDNN")`` (MXNet's oneDNN graph passes).
ORT         the same worker: ONNX Runtime on the ONNX file MXNet's
            ``mx.onnx.export_model`` writes from the exported network
            (``intra_op_num_threads`` = the thread count, sequential execution, every
            graph optimization).

Every side loads the same parameters: this process draws them (``RandomState``; BatchNorm
statistics too, so folding them is checked) and saves them as a ``.params`` file the
workers load.  Every side's output must agree with dagnet's plain graph (graph passes off)
to 1e-4 relative (the largest difference over the largest reference value); the table
marks a side that does not.  Threads: dagnet's kernel threads and engine workers
(``cpu_kernel_threads``, ``cpu_workers``) with BLAS on one thread; MXNet's
``OMP_NUM_THREADS`` and ``MXNET_CPU_WORKER_NTHREADS``; ONNX Runtime's intra-op threads.
Within every round each cell is measured on every side in turn (the order flipping every
round), so load elsewhere on the machine disturbs them alike; the table gives the median
over ``--repeat`` rounds (a measurement averages as many forward passes as fit in about
``--seconds``) of wall time, or with ``--clock cpu`` of the process's CPU time.  Target
(issue 27): dagnet <= 0.9x the fastest other side in every row.
"""

from __future__ import annotations

import os

from _mxnet import THREAD_ENV, MXNetError, describe_workers, threaded_workers

os.environ.update(THREAD_ENV)  # before numpy is imported: BLAS starts with one thread

import contextlib  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    Stats,
    blas_threads,
    comparison_parser,
    format_table,
    positive,
    print_header,
)

NETWORKS = ("resnet50_v1", "mobilenetv2_1.0")
IMAGE = (3, 224, 224)
TOLERANCE = 1e-4
TARGET = 0.9
SIDES = ("mxnet", "mkldnn", "ort", "dagnet")
LABELS = {"mxnet": "MXNet", "mkldnn": "MKLDNN", "ort": "ORT", "dagnet": "dagnet",
          "plain": "dagnet plain"}


class WrongResult(AssertionError):
    """A side computed something other than the reference."""


# ---------------------------------------------------------------- the workloads
# Built in this process (dagnet) or in a worker of --mxnet-python (mxnet); ``run()`` gives
# the seconds of one forward pass, averaged over as many as fit in ``seconds``.


def random_parameters(mx, net) -> None:
    """Draw every parameter of ``net`` (initialized, shapes known) from a seeded
    ``RandomState``: convolution and dense weights at He scale, BatchNorm's scale, shift
    and moving statistics around their usual values."""
    rs = np.random.RandomState(0)
    for name, param in sorted(net.collect_params().items()):
        shape = param.shape
        if name.endswith("gamma"):
            value = rs.uniform(0.5, 1.5, shape)
        elif name.endswith("running_var"):
            value = rs.uniform(0.5, 1.5, shape)
        elif name.endswith(("beta", "bias", "running_mean")):
            value = rs.normal(0, 0.1, shape)
        else:
            value = rs.normal(0, np.sqrt(2.0 / int(np.prod(shape[1:]))), shape)
        param.set_data(mx.nd.array(value.astype(np.float32)))


def input_batch(batch: int) -> np.ndarray:
    return np.random.RandomState(batch).standard_normal((batch, *IMAGE)).astype(np.float32)


def _calibrated(forward, seconds: float) -> int:
    """How many forward passes fit in ``seconds`` (at least one), after a warm-up."""
    forward()
    start = time.perf_counter()
    forward()
    return max(1, round(seconds / max(time.perf_counter() - start, 1e-6)))


class Forward:
    """A network's forward pass on one side; the output is saved to ``output`` once built.

    ``side``: ``dagnet`` / ``plain`` (dagnet with graph passes off) here, ``mxnet`` /
    ``mkldnn`` / ``ort`` in MXNet's worker.  ``params``: the ``.params`` file to load;
    ``workdir``: where the worker writes the network's ONNX file."""

    def __init__(self, mx, side: str, net: str, batch: int, threads: int, params: str,
                 output: str, workdir: str, seconds: float, clock: str = "wall"):
        self.mx, self.side, self.threads = mx, side, threads
        self.clock = time.process_time if clock == "cpu" else time.perf_counter
        x = input_batch(batch)
        with self._threads():
            if side == "ort":
                self.forward = self._onnx_runtime(net, x, params, workdir)
            else:
                self.forward = self._gluon(net, x, params)
            result = self.forward()
            self.count = _calibrated(self.forward, seconds)
        np.save(output, result)

    def _threads(self):
        stack = contextlib.ExitStack()
        if self.side in ("dagnet", "plain"):
            stack.enter_context(blas_threads(1))
            stack.enter_context(self.mx.config.set(cpu_workers=self.threads,
                                                   cpu_kernel_threads=self.threads))
        return stack

    def _gluon(self, name: str, x: np.ndarray, params: str):
        mx = self.mx
        net = mx.gluon.model_zoo.vision.get_model(name)
        net.load_parameters(params, ctx=mx.cpu())
        data = mx.nd.array(x)
        net.hybridize(static_alloc=True, static_shape=True)
        if self.side == "mkldnn":
            net.optimize_for(data, backend="MKLDNN", static_alloc=True, static_shape=True)
        plain = self.side == "plain"

        def forward() -> np.ndarray:
            # passes run where an executor is bound, at any call: the cached graph binds a
            # second one to the data array itself the second time it is given
            with mx.config.set(graph_passes=False) if plain else contextlib.nullcontext():
                out = net(data)
            out.wait_to_read()
            return out

        forward()
        return lambda: forward().asnumpy()

    def _onnx_runtime(self, name: str, x: np.ndarray, params: str, workdir: str):
        import onnxruntime

        mx = self.mx
        path = os.path.join(workdir, f"{name}-{x.shape[0]}.onnx")
        if not os.path.exists(path):
            net = mx.gluon.model_zoo.vision.get_model(name)
            net.load_parameters(params, ctx=mx.cpu())
            net.hybridize()
            net(mx.nd.array(x))
            prefix = os.path.join(workdir, f"{name}-{x.shape[0]}")
            net.export(prefix)
            mx.onnx.export_model(f"{prefix}-symbol.json", f"{prefix}-0000.params",
                                 [x.shape], np.float32, path)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = onnxruntime.InferenceSession(path, options,
                                               providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}
        return lambda: session.run(None, feed)[0]

    def run(self) -> float:
        with self._threads():
            start = self.clock()
            for _ in range(self.count):
                self.forward()
            return (self.clock() - start) / self.count


WORKLOADS = {"Forward": Forward}


# ----------------------------------------------------------------- the comparison


@dataclass
class Cell:
    side: str
    net: str
    batch: int
    threads: int
    output: str
    samples: list[float] = field(default_factory=list)
    error: str | None = None
    difference: float | None = None  # largest difference / largest reference value

    def stats(self) -> Stats | None:
        return Stats(self.samples) if self.samples and not self.error else None


def save_parameters(dagnet, names: list[str], workdir: str) -> dict[str, str]:
    """The ``.params`` file of each network's random parameters, drawn here."""
    files = {}
    for name in names:
        net = dagnet.gluon.model_zoo.vision.get_model(name)
        net.initialize()
        net(dagnet.nd.zeros((1, *IMAGE)))  # shapes known
        random_parameters(dagnet, net)
        files[name] = os.path.join(workdir, f"{name}.params")
        net.save_parameters(files[name])
    return files


def relative_difference(output: np.ndarray, reference: np.ndarray) -> float:
    if output.shape != reference.shape:
        raise WrongResult(f"output shape {output.shape}, the reference's {reference.shape}")
    scale = float(np.abs(reference).max()) or 1.0
    return float(np.abs(output.astype(np.float64) - reference).max()) / scale


def main(argv: list[str] | None = None) -> int:
    parser = comparison_parser(__doc__, "only dagnet is measured (that python needs onnx "
                                        "and onnxruntime too)")
    parser.add_argument("--threads", type=positive, nargs="+", default=[1, 2],
                        help="thread counts (default 1 2)")
    parser.add_argument("--only", nargs="+", choices=NETWORKS, default=list(NETWORKS),
                        metavar="NET", help=f"networks: {' '.join(NETWORKS)} (default all)")
    parser.add_argument("--batches", type=positive, nargs="+", default=[1, 8],
                        help="batch sizes (default 1 8)")
    parser.add_argument("--plain", action="store_true",
                        help="also time dagnet with its graph passes off")
    parser.add_argument("--seconds", type=float, default=0.5,
                        help="about how long one measurement runs (default 0.5)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="what a measurement counts: wall time (default), or the "
                             "process's CPU time, steadier on a busy machine at one thread "
                             "(at more, threads that spin while they wait count too)")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds to wait for one MXNet answer (default 900)")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    workers = threaded_workers(args.mxnet_python, args.threads, "inference", args.timeout)

    import dagnet

    facts = [("dagnet", f"{dagnet.__version__} from {os.path.dirname(dagnet.__file__)}"),
             ("dagnet engine", str(dagnet.config.get("engine"))),
             ("cpu", _cpu_name()),
             ("rounds", f"{args.repeat}; in each, every cell on each side in turn")]
    worker_facts, broken = describe_workers(workers)
    facts += worker_facts
    print_header("Inference: dagnet vs MXNet 1.9.1 and ONNX Runtime", facts)
    sys.stdout.flush()

    workdir = tempfile.mkdtemp(prefix="dagnet-inference-")
    params = save_parameters(dagnet, args.only, workdir)
    sides = [s for s in SIDES if s == "dagnet" or workers] + (["plain"] if args.plain else [])
    rows: list[list[Cell]] = []
    for net in args.only:
        for batch in args.batches:
            for threads in args.threads:
                rows.append([Cell(side, net, batch, threads, os.path.join(
                    workdir, f"{side}-{net}-{batch}-{threads}.npy")) for side in sides])
    built: dict[tuple, Forward] = {}

    def measure(c: Cell) -> None:
        if c.error:
            return
        request = dict(side=c.side, net=c.net, batch=c.batch, threads=c.threads,
                       params=params[c.net], output=c.output, workdir=workdir,
                       seconds=args.seconds, clock=args.clock)
        try:
            if c.side in ("dagnet", "plain"):
                key = (c.side, c.net, c.batch, c.threads)
                if key not in built:
                    built[key] = Forward(dagnet, **request)
                c.samples.append(built[key].run())
            else:
                c.samples.append(workers[c.threads].measure("Forward", request))
        except MXNetError as error:
            c.error = str(error)
        except Exception as error:  # report and go on with the other cells
            c.error = f"{type(error).__name__}: {error}"

    for r in range(args.repeat):
        print(f"round {r + 1}/{args.repeat} ...", file=sys.stderr, flush=True)
        for cells in rows:
            for c in (reversed(cells) if r % 2 else cells):
                measure(c)
    for worker in workers.values():
        worker.close()

    notes = check_outputs(dagnet, rows, params, workdir)
    print_results(rows, sides, args.repeat, args.clock)
    for note in broken + notes:
        print(f"error: {note}")
    print(f"({time.perf_counter() - started:.0f} s in all)")
    return 1 if notes or broken else 0


def check_outputs(dagnet, rows: list[list[Cell]], params: dict[str, str], workdir: str
                  ) -> list[str]:
    """Compare every side's output with dagnet's plain graph (graph passes off); the
    failures, as notes."""
    notes = []
    references: dict[tuple, np.ndarray] = {}
    for cells in rows:
        first = cells[0]
        key = (first.net, first.batch)
        if key not in references:
            path = os.path.join(workdir, f"reference-{first.net}-{first.batch}.npy")
            Forward(dagnet, "plain", first.net, first.batch, 1, params[first.net], path,
                    workdir, 0.0)
            references[key] = np.load(path).astype(np.float64)
        for c in cells:
            if c.error is None and os.path.exists(c.output):
                try:
                    c.difference = relative_difference(np.load(c.output), references[key])
                except WrongResult as error:
                    c.error = str(error)
            if c.error:
                notes.append(f"{c.net}, batch {c.batch}, {c.threads} thread(s), "
                             f"{LABELS[c.side]}: {c.error}")
            elif c.difference is not None and c.difference > TOLERANCE:
                notes.append(f"{c.net}, batch {c.batch}, {c.threads} thread(s), "
                             f"{LABELS[c.side]}: output differs from dagnet's plain graph by "
                             f"{c.difference:.2e} relative (more than {TOLERANCE})")
    return notes


def print_results(rows: list[list[Cell]], sides: list[str], repeat: int, clock: str) -> None:
    def ms(c: Cell) -> str:
        s = c.stats()
        if c.error:
            return "error"
        if s is None:
            return "-"
        mark = "" if c.difference is None or c.difference <= TOLERANCE else " !"
        return f"{s.median * 1e3:.1f}{mark}"

    table = []
    for cells in rows:
        by_side = {c.side: c for c in cells}
        others = [by_side[s].stats() for s in ("mxnet", "mkldnn", "ort") if s in by_side]
        others = [s.median for s in others if s is not None]
        mine = by_side["dagnet"].stats()
        ratio = mine.median / min(others) if mine and others else None
        first = cells[0]
        table.append([first.net, first.batch, first.threads, *(ms(by_side[s]) for s in sides),
                      "-" if ratio is None else f"{ratio:.2f}x",
                      "-" if ratio is None else ("yes" if ratio <= TARGET else "NO")])
    print(f"ms per forward pass ({clock} time), median of {repeat} rounds; dagnet / best from "
          f"the medians; '!' marks an output off dagnet's plain graph by more than {TOLERANCE} "
          f"relative")
    print(format_table(["network", "batch", "threads", *(LABELS[s] for s in sides),
                        "dagnet/best", f"<= {TARGET}x"], rows=table,
                       align="<>>" + ">" * (len(sides) + 2)))
    print()
    differences = []
    for cells in rows:
        first = cells[0]
        differences.append([first.net, first.batch, first.threads, *(
            "-" if c.difference is None else f"{c.difference:.1e}" for c in cells)])
    print("largest difference from dagnet's plain graph, over the largest reference value")
    print(format_table(["network", "batch", "threads", *(LABELS[s] for s in sides)],
                       differences, align="<>>" + ">" * len(sides)))


def _cpu_name() -> str:
    """The processor's model name and its widest vector instructions (Linux)."""
    try:
        with open("/proc/cpuinfo") as info:
            text = info.read()
    except OSError:
        return "unknown"
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines()
                  if line.startswith("model name")), "unknown")
    simd = "AVX-512" if " avx512f" in text else "AVX2" if " avx2" in text else "no AVX2"
    return f"{model} ({simd})"


if __name__ == "__main__":
    sys.exit(main())
