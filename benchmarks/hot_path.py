"""The hot path, dagnet against Apache MXNet 1.9.1: one table, every ratio from one run.

    python benchmarks/hot_path.py [--mxnet-python PATH] [--repeat 5] [--only NAME ...]

Each workload is written once (the classes below take the framework module
as ``mx``) and runs on dagnet in this process and, with ``--mxnet-python``
naming a python that has ``mxnet==1.9.1``, on MXNet in a worker process of
that python per MXNet engine (MXNet picks its engine once per process).
Within every round each workload is measured on both sides in turn (the
order flips every round), so load elsewhere on the machine disturbs both
alike; the table gives the median and the minimum over ``--repeat`` rounds,
and the ratios and verdicts are taken on the medians.  Without
``--mxnet-python`` only the dagnet and numpy columns are filled.

BLAS and OpenMP run one thread on both sides (``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` = 1, set before numpy is imported);
dagnet's engines keep their configured worker count, MXNet its defaults.

Workloads (engine pairs: naive/NaiveEngine, threaded/ThreadedEngine,
threaded_per_device/ThreadedEnginePerDevice):

small     ``x = x + y`` on 100 float32 through ``mx.nd``: a chain of ``--ops``
          additions ending in one wait, per op; naive and threaded_per_device.
          Target: <= 0.6x MXNet.
mlp       one training step of a 784-512-512-10 MLP (FullyConnected + relu,
          SoftmaxOutput), float32, at each ``--batches`` size: through
          ``simple_bind`` (``forward(is_train=True)``, ``backward()``) and
          through ``mx.autograd`` (``record``, ``backward``), each followed by
          ``mx.nd.sgd_update(w, g, out=w, lr=0.01)`` on every parameter;
          ``--steps`` steps ending in one wait, per step; threaded_per_device
          (the default engine on both sides); "numpy" is the same step by
          hand.  Targets: executor <= 1.0x MXNet at batch 128 and <= 1.1x at
          batch 8; autograd <= 1.15x dagnet's own executor step (MXNet's
          autograd step is shown for reference).
chain     the same ``x = x + y`` chain on 1,000,000 float32 (``--large-ops``
          additions), threaded and threaded_per_device; "numpy" is
          ``x = x + y`` on numpy arrays (a new array per op, like the NDArray
          chain).  Target: <= 1.3x numpy (MXNet's ratio for reference).
gradcheck ``mx.test_utils.check_numeric_gradient(sym, location,
          dtype=np.float64)`` with MXNet's defaults otherwise, on
          FullyConnected (data 32x64, num_hidden 64), seconds per call;
          threaded_per_device.  Target: <= 0.5 s.  MXNet's call takes
          seconds, so it is measured ``--mxnet-gradcheck-repeat`` times
          (default 1), in the first rounds.

Every measurement checks its result: the chains their final values, each
training step its weight updates over two steps against the numpy step (at
construction), and the gradient check its own verdict.  A failure on
either side is shown as "error" in the table and explained below it; the
other rows still run.
"""

from __future__ import annotations

import os

from _mxnet import MXNET_ENGINES, THREAD_ENV, MXNetError, MXNetWorker

os.environ.update(THREAD_ENV)  # before numpy is imported: one BLAS/OpenMP thread

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    Stats,
    comparison_parser,
    format_table,
    positive,
    print_header,
    timed,
)

# ---------------------------------------------------------------- workloads
# Each takes ``mx`` (dagnet, mxnet, or None for numpy) and keyword parameters;
# ``run()`` returns the seconds of one measurement.  They run in both
# processes, so they use only the API dagnet and MXNet 1.9.1 share, and numpy.

LAYERS = (784, 512, 512, 10)
LR = 0.01


class WrongResult(AssertionError):
    """A workload computed something other than expected."""


def check_chain(value: np.ndarray, expected: float) -> None:
    if not np.all(value == expected):
        bad = value[value != expected]
        raise WrongResult(f"chain ended at {bad[0]} ({bad.size} of {value.size} elements), "
                          f"expected {expected}")


class NDChain:
    """``x = x + y`` through ``mx.nd``, ``ops`` times from x = 1, y = 1, then one wait."""

    def __init__(self, mx, size: int, ops: int):
        self.mx, self.ops = mx, ops
        self.x0 = mx.nd.ones((size,), dtype="float32")
        self.y = mx.nd.ones((size,), dtype="float32")
        x = self.x0
        for _ in range(min(ops, 50)):  # warm caches and the storage pool
            x = x + self.y
        check_chain(x.asnumpy(), 1 + min(ops, 50))

    def run(self) -> float:
        x, y = self.x0, self.y

        def chain() -> None:
            nonlocal x
            for _ in range(self.ops):
                x = x + y
            x.wait_to_read()

        seconds = timed(chain) / self.ops
        check_chain(x.asnumpy(), 1 + self.ops)
        return seconds


class NumpyChain:
    """The same chain on numpy arrays: ``x = x + y`` makes a new array per op."""

    def __init__(self, mx, size: int, ops: int):
        self.ops = ops
        self.x0 = np.ones(size, np.float32)
        self.y = np.ones(size, np.float32)

    def run(self) -> float:
        x, y = self.x0, self.y

        def chain() -> None:
            nonlocal x
            for _ in range(self.ops):
                x = x + y

        seconds = timed(chain) / self.ops
        check_chain(x, 1 + self.ops)
        return seconds


def mlp_data(batch: int) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Parameters, data and labels; ``RandomState`` gives the same numbers on any numpy."""
    rs = np.random.RandomState(0)
    params = {}
    for i, (fan_in, fan_out) in enumerate(zip(LAYERS, LAYERS[1:]), start=1):
        params[f"fc{i}_weight"] = (rs.standard_normal((fan_out, fan_in)) * 0.05).astype(np.float32)
        params[f"fc{i}_bias"] = (rs.standard_normal(fan_out) * 0.01).astype(np.float32)
    rs = np.random.RandomState(batch)
    data = rs.standard_normal((batch, LAYERS[0])).astype(np.float32)
    label = rs.randint(0, LAYERS[-1], batch).astype(np.float32)
    return params, data, label


class _Steps:
    """Timing and checking shared by the training-step workloads."""

    def __init__(self, batch: int, steps: int):
        self.steps = steps
        self.initial, self.data, self.label = mlp_data(batch)

    def step(self) -> None:
        raise NotImplementedError

    def weights(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def wait(self) -> None:
        pass

    def check_against_numpy(self, steps: int = 2) -> None:
        """``steps`` steps must move every parameter as the numpy step does."""
        reference = NumpyMLP(None, len(self.data), 1)
        for _ in range(steps):
            reference.step()
            self.step()
        self.wait()
        want, got = reference.weights(), self.weights()
        for name, start in self.initial.items():
            moved, expected = got[name] - start, want[name] - start
            error = float(np.abs(moved - expected).max())
            scale = float(np.abs(expected).max())
            if not error <= 1e-2 * scale + 1e-7:
                raise WrongResult(f"{name} after {steps} steps is off the numpy step's by "
                                  f"{error:.3g} (its updates are up to {scale:.3g})")

    def run(self) -> float:
        def steps() -> None:
            for _ in range(self.steps):
                self.step()
            self.wait()

        seconds = timed(steps) / self.steps
        for name, value in self.weights().items():
            if not np.isfinite(value).all():
                raise WrongResult(f"{name} is not finite after {self.steps} steps")
        return seconds


class NumpyMLP(_Steps):
    """The step by hand: forward, softmax cross-entropy backward, ``w -= lr * g``."""

    def __init__(self, mx, batch: int, steps: int):
        super().__init__(batch, steps)
        self.w = [self.initial[f"fc{i}_weight"].copy() for i in range(1, len(LAYERS))]
        self.b = [self.initial[f"fc{i}_bias"].copy() for i in range(1, len(LAYERS))]
        self.onehot = np.eye(LAYERS[-1], dtype=np.float32)[self.label.astype(int)]

    def step(self) -> None:
        acts = [self.data]
        for i, (w, b) in enumerate(zip(self.w, self.b)):
            z = acts[-1] @ w.T + b
            acts.append(np.maximum(z, 0) if i < len(self.w) - 1 else z)
        z = acts[-1]
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        grad = p - self.onehot
        for i in range(len(self.w) - 1, -1, -1):
            dw = grad.T @ acts[i]
            db = grad.sum(axis=0)
            if i > 0:
                grad = (grad @ self.w[i]) * (acts[i] > 0)
            self.w[i] -= LR * dw
            self.b[i] -= LR * db

    def weights(self) -> dict[str, np.ndarray]:
        names = [(f"fc{i}_weight", f"fc{i}_bias") for i in range(1, len(LAYERS))]
        return {k: v for (wn, bn), w, b in zip(names, self.w, self.b)
                for k, v in ((wn, w), (bn, b))}


def mlp_symbol(mx):
    h = mx.sym.Variable("data")
    for i, hidden in enumerate(LAYERS[1:], start=1):
        h = mx.sym.FullyConnected(h, num_hidden=hidden, name=f"fc{i}")
        if i < len(LAYERS) - 1:
            h = mx.sym.Activation(h, act_type="relu", name=f"relu{i}")
    return mx.sym.SoftmaxOutput(h, name="softmax")


class ExecutorMLP(_Steps):
    """Bound once with ``simple_bind``; a step is forward, backward, ``sgd_update`` per weight."""

    def __init__(self, mx, batch: int, steps: int):
        super().__init__(batch, steps)
        self.mx = mx
        self.ex = mlp_symbol(mx).simple_bind(mx.cpu(), data=self.data.shape,
                                             grad_req={k: "write" for k in self.initial})
        for name, value in self.initial.items():
            self.ex.arg_dict[name][:] = value
        self.ex.arg_dict["data"][:] = self.data
        self.ex.arg_dict["softmax_label"][:] = self.label
        self.pairs = [(self.ex.arg_dict[k], self.ex.grad_dict[k]) for k in self.initial]
        self.check_against_numpy()

    def step(self) -> None:
        self.ex.forward(is_train=True)
        self.ex.backward()
        for w, g in self.pairs:
            self.mx.nd.sgd_update(w, g, out=w, lr=LR)

    def wait(self) -> None:
        self.mx.nd.waitall()

    def weights(self) -> dict[str, np.ndarray]:
        return {k: self.ex.arg_dict[k].asnumpy() for k in self.initial}


class AutogradMLP(_Steps):
    """The same step through ``mx.autograd``: record the forward, backward, ``sgd_update``."""

    def __init__(self, mx, batch: int, steps: int):
        super().__init__(batch, steps)
        self.mx = mx
        self.params = {k: mx.nd.array(v, dtype="float32") for k, v in self.initial.items()}
        for p in self.params.values():
            p.attach_grad()
        self.x = mx.nd.array(self.data, dtype="float32")
        self.y = mx.nd.array(self.label, dtype="float32")
        self.check_against_numpy()

    def step(self) -> None:
        mx, p = self.mx, self.params
        with mx.autograd.record():
            h = self.x
            for i in range(1, len(LAYERS)):
                h = mx.nd.FullyConnected(h, p[f"fc{i}_weight"], p[f"fc{i}_bias"],
                                         num_hidden=LAYERS[i])
                if i < len(LAYERS) - 1:
                    h = mx.nd.Activation(h, act_type="relu")
            out = mx.nd.SoftmaxOutput(h, self.y)
        out.backward()
        for w in p.values():
            mx.nd.sgd_update(w, w.grad, out=w, lr=LR)

    def wait(self) -> None:
        self.mx.nd.waitall()

    def weights(self) -> dict[str, np.ndarray]:
        return {k: v.asnumpy() for k, v in self.params.items()}


class GradCheckFC:
    """``check_numeric_gradient`` on FullyConnected, float64, MXNet's signature and defaults."""

    def __init__(self, mx, batch: int, features: int, hidden: int):
        self.mx = mx
        self.sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=hidden, name="fc")
        rs = np.random.RandomState(0)
        self.location = {
            "data": rs.uniform(-1, 1, (batch, features)),
            "fc_weight": rs.uniform(-1, 1, (hidden, features)),
            "fc_bias": rs.uniform(-1, 1, hidden),
        }

    def run(self) -> float:
        np.random.seed(0)  # MXNet draws the output projection from numpy's global generator
        return timed(lambda: self.mx.test_utils.check_numeric_gradient(
            self.sym, self.location, dtype=np.float64))


WORKLOADS = {cls.__name__: cls for cls in (NDChain, NumpyChain, NumpyMLP, ExecutorMLP,
                                           AutogradMLP, GradCheckFC)}

# ----------------------------------------------------------- the comparison

UNITS = {"us/op": (1e6, 2), "ms/step": (1e3, 3), "s/call": (1.0, 3)}


@dataclass
class Cell:
    """One thing measured once per round: a workload on one side and engine."""

    side: str  # "dagnet", "mxnet" or "numpy"
    engine: str | None
    workload: str
    params: dict
    max_samples: int | None = None
    samples: list[float] = field(default_factory=list)
    error: str | None = None

    @property
    def key(self) -> tuple:
        return (self.side, self.engine, self.workload, tuple(sorted(self.params.items())))

    def stats(self) -> Stats | None:
        return Stats(self.samples) if self.samples and not self.error else None


@dataclass
class Row:
    label: str
    engine: str
    unit: str
    dagnet: Cell
    mxnet: Cell | None
    numpy: Cell | None = None
    target: float | None = None
    basis: str = "MXNet"  # what the target's ratio divides by: MXNet, numpy, executor, or "s"
    executor: Cell | None = None  # the dagnet executor cell, for basis "executor"


def build_rows(args: argparse.Namespace, with_mxnet: bool) -> list[list[Row]]:
    """The table's rows in groups; a group's cells are measured together each round."""
    cells: dict[tuple, Cell] = {}

    def cell(side: str, engine: str | None, workload: str, max_samples: int | None = None,
             **params) -> Cell | None:
        if side == "mxnet" and not with_mxnet:
            return None
        new = Cell(side, engine, workload, params, max_samples)
        return cells.setdefault(new.key, new)

    def pair(engine: str, workload: str, mxnet_samples: int | None = None, **params):
        return (cell("dagnet", engine, workload, **params),
                cell("mxnet", engine, workload, mxnet_samples, **params))

    groups = []
    tpd = "threaded_per_device"
    if "small" in args.only:
        for engine in ("naive", tpd):
            groups.append([Row("x = x + y, 100 float32", engine, "us/op",
                               *pair(engine, "NDChain", size=100, ops=args.ops), target=0.6)])
    if "mlp" in args.only:
        for batch in args.batches:
            steps = dict(batch=batch, steps=args.steps)
            numpy = cell("numpy", None, "NumpyMLP", **steps)
            executor = pair(tpd, "ExecutorMLP", **steps)
            groups.append([
                Row(f"MLP step, simple_bind, batch {batch}", tpd, "ms/step", *executor, numpy,
                    target={128: 1.0, 8: 1.1}.get(batch)),
                Row(f"MLP step, autograd, batch {batch}", tpd, "ms/step",
                    *pair(tpd, "AutogradMLP", **steps), numpy, target=1.15, basis="executor",
                    executor=executor[0]),
            ])
    if "chain" in args.only:
        numpy = cell("numpy", None, "NumpyChain", size=1_000_000, ops=args.large_ops)
        groups.append([Row("x = x + y, 1M float32", engine, "us/op",
                           *pair(engine, "NDChain", size=1_000_000, ops=args.large_ops), numpy,
                           target=1.3, basis="numpy") for engine in ("threaded", tpd)])
    if "gradcheck" in args.only:
        groups.append([Row("check_numeric_gradient, FC 32x64->64 f64", tpd, "s/call",
                           *pair(tpd, "GradCheckFC", args.mxnet_gradcheck_repeat,
                                 batch=32, features=64, hidden=64),
                           target=0.5, basis="s")])
    return groups


def group_cells(group: list[Row]) -> list[Cell]:
    """The group's distinct cells in measuring order: numpy, then dagnet and MXNet per row."""
    seen: dict[tuple, Cell] = {}
    for row in group:
        for c in (row.numpy, row.dagnet, row.mxnet):
            if c is not None:
                seen.setdefault(c.key, c)
    return list(seen.values())


class Runner:
    """Builds each cell's workload on first use (dagnet and numpy here, MXNet in its worker)."""

    def __init__(self, dagnet, workers: dict[str, MXNetWorker]):
        self.dagnet = dagnet
        self.workers = workers
        self.built: dict[tuple, object] = {}

    def measure(self, c: Cell) -> None:
        if c.error or (c.max_samples is not None and len(c.samples) >= c.max_samples):
            return
        try:
            c.samples.append(self._measure(c))
        except MXNetError as error:
            c.error = str(error)
        except Exception as error:  # dagnet is changing under this script: report, go on
            c.error = f"{type(error).__name__}: {error}"

    def _measure(self, c: Cell) -> float:
        if c.side == "mxnet":
            return self.workers[c.engine].measure(c.workload, c.params)
        if c.side == "numpy":
            if c.key not in self.built:
                self.built[c.key] = WORKLOADS[c.workload](None, **c.params)
            return self.built[c.key].run()
        with self.dagnet.config.set(engine=c.engine):
            if c.key not in self.built:
                self.built[c.key] = WORKLOADS[c.workload](self.dagnet, **c.params)
            return self.built[c.key].run()


def fmt(stats: Stats | None, unit: str, which: str = "median") -> str:
    if stats is None:
        return "-"
    scale, digits = UNITS[unit]
    return f"{getattr(stats, which) * scale:.{digits}f}"


def cell_text(c: Cell | None, unit: str, which: str = "median") -> str:
    if c is None:
        return "-"
    if c.error:
        return "error"
    return fmt(c.stats(), unit, which)


def ratio(a: Stats | None, b: Stats | None) -> float | None:
    return a.median / b.median if a and b else None


def table_rows(groups: list[list[Row]]) -> tuple[list[list[str]], list[str]]:
    rows, notes = [], []
    for group in groups:
        for row in group:
            d, m = row.dagnet.stats(), row.mxnet.stats() if row.mxnet else None
            n = row.numpy.stats() if row.numpy else None
            vs_mxnet = ratio(d, m)
            if row.basis == "MXNet":
                judged, target = vs_mxnet, f"<= {row.target}x MXNet"
            elif row.basis == "numpy":
                judged, target = ratio(d, n), f"<= {row.target}x numpy"
            elif row.basis == "executor":
                judged = ratio(d, row.executor.stats())
                target = f"<= {row.target}x executor"
            else:
                judged, target = (d.median if d else None), f"<= {row.target} s"
            if row.target is None:
                target, meets = "-", "-"
            elif judged is None:
                meets = "n/a"
            else:
                meets = "yes" if judged <= row.target else "NO"
            judged_text = "-" if judged is None else (
                f"{judged:.3f} s" if row.basis == "s" else f"{judged:.2f}x")
            rows.append([
                row.label, row.engine, row.unit,
                cell_text(row.dagnet, row.unit), cell_text(row.dagnet, row.unit, "min"),
                cell_text(row.mxnet, row.unit), cell_text(row.mxnet, row.unit, "min"),
                "-" if vs_mxnet is None else f"{vs_mxnet:.2f}x",
                cell_text(row.numpy, row.unit),
                target, judged_text, meets,
            ])
            for c in (row.dagnet, row.mxnet, row.numpy):
                if c is not None and c.error:
                    note = f"{row.label} [{row.engine}], {c.side}: {c.error}"
                    if note not in notes:
                        notes.append(note)
    return rows, notes


def main(argv: list[str] | None = None) -> int:
    parser = comparison_parser(__doc__, "only dagnet and numpy are measured")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        choices=["small", "mlp", "chain", "gradcheck"],
                        default=["small", "mlp", "chain", "gradcheck"],
                        help="workloads to run: small, mlp, chain, gradcheck (default all)")
    parser.add_argument("--ops", type=positive, default=3000,
                        help="additions per chain at 100 elements (default 3000)")
    parser.add_argument("--large-ops", type=positive, default=100,
                        help="additions per chain at 1,000,000 elements (default 100)")
    parser.add_argument("--steps", type=positive, default=30,
                        help="training steps per measurement (default 30)")
    parser.add_argument("--batches", type=positive, nargs="+", default=[128, 8],
                        help="MLP batch sizes (default 128 8)")
    parser.add_argument("--mxnet-gradcheck-repeat", type=positive, default=1,
                        help="MXNet gradient-check calls, in the first rounds (default 1: "
                             "each takes seconds)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds to wait for one MXNet answer before giving up on that "
                             "worker (default 300)")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    groups_needed = build_rows(args, with_mxnet=bool(args.mxnet_python))
    workers: dict[str, MXNetWorker] = {}
    if args.mxnet_python:
        if not os.path.exists(args.mxnet_python):
            parser.error(f"--mxnet-python {args.mxnet_python!r} does not exist")
        engines = sorted({c.engine for g in groups_needed for c in group_cells(g)
                          if c.side == "mxnet"})
        for engine in engines:  # start them now: they import mxnet while dagnet imports
            workers[engine] = MXNetWorker(args.mxnet_python, engine, "hot_path", args.timeout)

    import dagnet

    facts = [
        ("dagnet", f"{dagnet.__version__} from {os.path.dirname(dagnet.__file__)}"),
        ("dagnet cpu_workers", f"{dagnet.config.get('cpu_workers')} (0: one per core)"),
        ("threads", ", ".join(f"{k}={v}" for k, v in THREAD_ENV.items()
                              if k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                       "MKL_NUM_THREADS"))),
        ("rounds", f"{args.repeat}; in each, every workload on each side in turn"),
    ]
    broken: list[str] = []
    if workers:
        facts.append(("mxnet python", args.mxnet_python))
        for engine, worker in workers.items():
            try:
                info = worker.ready()
            except MXNetError as error:
                broken.append(str(error))
                facts.append((f"mxnet {MXNET_ENGINES[engine]}", "did not start (see below)"))
                continue
            version = info["mxnet"] + ("" if info["mxnet"] == "1.9.1" else
                                       "  (WARNING: not 1.9.1)")
            facts.append((f"mxnet {info['engine']}",
                          f"mxnet {version}, numpy {info['numpy']}, python {info['python']}, "
                          f"{'+'.join(info['features'])}"))
    else:
        facts.append(("mxnet", "not measured (give --mxnet-python PATH)"))
    print_header("dagnet vs Apache MXNet 1.9.1: the hot path", facts)
    sys.stdout.flush()

    runner = Runner(dagnet, workers)
    for r in range(args.repeat):
        print(f"round {r + 1}/{args.repeat} ...", file=sys.stderr, flush=True)
        for group in groups_needed:
            cells = group_cells(group)
            for c in (reversed(cells) if r % 2 else cells):
                runner.measure(c)
    for worker in workers.values():
        worker.close()

    rows, notes = table_rows(groups_needed)
    print(f"median and min of {args.repeat} rounds; dagnet/MXNet and the target's ratio "
          "from the medians")
    print(format_table(
        ["workload", "engine", "unit", "dagnet", "min", "MXNet", "min", "dagnet/MXNet", "numpy",
         "target", "measured", "meets"],
        rows, align="<<<>>>>>>>>>"))
    if "mlp" in args.only:
        print("numpy: the MLP step by hand (forward, backward, w -= lr * g); MXNet on the "
              "autograd rows: its own autograd step, for reference")
    if "chain" in args.only:
        print("numpy: x = x + y on numpy arrays; MXNet on the 1M rows for reference "
              "(its engine of the same name)")
    if "gradcheck" in args.only and workers:
        print(f"MXNet's gradient check: {args.mxnet_gradcheck_repeat} call(s) "
              "(--mxnet-gradcheck-repeat)")
    for note in broken + notes:
        print(f"error: {note}")
    print(f"({time.perf_counter() - started:.0f} s in all)")
    return 1 if notes or broken else 0


if __name__ == "__main__":
    sys.exit(main())
