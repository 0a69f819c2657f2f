"""A Gluon training step, dagnet against Apache MXNet 1.9.1: one table, ratios from one run.

    python benchmarks/gluon_step.py [--mxnet-python PATH] [--repeat 5] [--steps 30]

The workload is issue 12's: a 784-512-512-10 MLP (``nn.Dense`` with relu, float32)
trained with ``gluon.loss.SoftmaxCrossEntropyLoss`` and ``gluon.Trainer`` ('sgd',
learning rate 0.01): per step ``with autograd.record(): loss = L(net(x), y)``,
``loss.backward()``, ``trainer.step(batch)``; ``--steps`` steps end in one wait, and
the figure is per step.  Two forms, each at batch 128 and 8:

hybridized   ``net.hybridize(static_alloc=True, static_shape=True)``: target
             <= 1.0x MXNet's hybridized step.
imperative   no hybridize: target <= 1.0x MXNet's imperative step.

Both sides start from the same weights and data (numpy, seeded) and each workload
checks, when it is built, that two of its steps move the weights as the same step
written in numpy does.  Within every round dagnet and MXNet are measured in turn
(the order flips every round); the table gives the median and the minimum over
``--repeat`` rounds and the ratio of the medians.  BLAS and OpenMP run one thread
on both sides; both use their default engine (dagnet's threaded_per_device, MXNet's
ThreadedEnginePerDevice).
"""

from __future__ import annotations

import os

from _mxnet import MXNET_ENGINES, THREAD_ENV, MXNetError, MXNetWorker

os.environ.update(THREAD_ENV)  # before numpy is imported: one BLAS/OpenMP thread

import sys  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    Stats,
    comparison_parser,
    format_table,
    positive,
    print_header,
    timed,
)

LAYERS = (784, 512, 512, 10)
LR = 0.01
ENGINE = "threaded_per_device"


class WrongResult(AssertionError):
    """A workload computed something other than expected."""


def start_weights() -> list[tuple[np.ndarray, np.ndarray]]:
    """(weight, bias) per layer, as Dense stores them: weight (out, in)."""
    rng = np.random.default_rng(0)
    return [(rng.normal(0, 0.05, (n_out, n_in)).astype(np.float32),
             np.zeros(n_out, np.float32)) for n_in, n_out in zip(LAYERS, LAYERS[1:])]


def batch_data(batch: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return (rng.uniform(0, 1, (batch, LAYERS[0])).astype(np.float32),
            rng.integers(0, LAYERS[-1], batch).astype(np.float32))


def numpy_steps(weights, x, y, steps):
    """The same step by hand: mean softmax cross-entropy gradient, SGD."""
    weights = [(w.astype(np.float64), b.astype(np.float64)) for w, b in weights]
    for _ in range(steps):
        acts = [x.astype(np.float64)]
        for i, (w, b) in enumerate(weights):
            z = acts[-1] @ w.T + b
            acts.append(np.maximum(z, 0) if i < len(weights) - 1 else z)
        logits = acts[-1]
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        delta = p
        delta[np.arange(len(y)), y.astype(int)] -= 1
        delta /= len(y)  # trainer.step(batch) rescales the summed gradient
        new = []
        for i in reversed(range(len(weights))):
            w, b = weights[i]
            gw, gb = delta.T @ acts[i], delta.sum(axis=0)
            if i:
                delta = (delta @ w) * (acts[i] > 0)
            new.append((w - LR * gw, b - LR * gb))
        weights = new[::-1]
    return weights


def _make_workload(mx, batch: int, steps: int, hybridize: bool):
    gluon, nd, autograd = mx.gluon, mx.nd, mx.autograd
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        for units in LAYERS[1:-1]:
            net.add(gluon.nn.Dense(units, activation="relu"))
        net.add(gluon.nn.Dense(LAYERS[-1]))
    net.initialize(mx.init.Zero())
    x_host, y_host = batch_data(batch)
    x, y = nd.array(x_host), nd.array(y_host)
    net(x)  # shapes known: the weights exist now
    dense = [layer for layer in net]
    start = start_weights()
    for layer, (w, b) in zip(dense, start):
        layer.weight.set_data(nd.array(w))
        layer.bias.set_data(nd.array(b))
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)

    def wait():
        for layer in dense:
            layer.weight.data().wait_to_read()

    for _ in range(2):
        step()
    got = [(layer.weight.data().asnumpy(), layer.bias.data().asnumpy()) for layer in dense]
    want = numpy_steps(start, x_host, y_host, 2)
    for (gw, gb), (ww, wb) in zip(got, want):
        if not (np.allclose(gw, ww, rtol=1e-3, atol=1e-5) and
                np.allclose(gb, wb, rtol=1e-3, atol=1e-5)):
            raise WrongResult("two Gluon steps do not match the numpy step "
                              f"(worst weight difference {np.abs(gw - ww).max():.3g})")
    return step, wait


class GluonStep:
    """``steps`` Gluon training steps then one wait; ``run()`` gives seconds per step."""

    def __init__(self, mx, batch: int, steps: int, hybridize: bool):
        self.steps = steps
        self.step, self.wait = _make_workload(mx, batch, steps, hybridize)

    def run(self) -> float:
        def steps() -> None:
            for _ in range(self.steps):
                self.step()
            self.wait()

        return timed(steps) / self.steps


WORKLOADS = {"GluonStep": GluonStep}


def main(argv: list[str] | None = None) -> int:
    parser = comparison_parser(__doc__, "only dagnet runs")
    parser.add_argument("--steps", type=positive, default=30,
                        help="training steps per measurement (default 30)")
    parser.add_argument("--batches", type=positive, nargs="+", default=[128, 8],
                        help="batch sizes (default 128 8)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds to wait for one MXNet answer (default 300)")
    args = parser.parse_args(argv)

    worker = None
    if args.mxnet_python:
        if not os.path.exists(args.mxnet_python):
            parser.error(f"--mxnet-python {args.mxnet_python!r} does not exist")
        worker = MXNetWorker(args.mxnet_python, ENGINE, "gluon_step", args.timeout)

    import dagnet

    facts = [("dagnet", f"{dagnet.__version__} from {os.path.dirname(dagnet.__file__)}"),
             ("engines", f"dagnet {ENGINE}, MXNet {MXNET_ENGINES[ENGINE]}"),
             ("rounds", f"{args.repeat}; in each, dagnet and MXNet in turn")]
    problems: list[str] = []
    if worker is not None:
        try:
            info = worker.ready()
            facts.append(("mxnet", f"{info['mxnet']}, numpy {info['numpy']}, python "
                                   f"{info['python']}"))
        except MXNetError as error:
            problems.append(f"MXNet did not start: {error}")
            worker = None
    print_header("dagnet vs Apache MXNet 1.9.1: a Gluon training step", facts)
    sys.stdout.flush()

    cases = [(form, batch) for form in ("hybridized", "imperative") for batch in args.batches]
    samples: dict[tuple, dict[str, list[float]]] = {c: {"dagnet": [], "mxnet": []}
                                                    for c in cases}
    built: dict[tuple, GluonStep] = {}
    failed: dict[tuple, str] = {}
    for r in range(args.repeat):
        print(f"round {r + 1}/{args.repeat} ...", file=sys.stderr, flush=True)
        for case in cases:
            form, batch = case
            params = {"batch": batch, "steps": args.steps, "hybridize": form == "hybridized"}
            sides = ["dagnet", "mxnet"] if r % 2 == 0 else ["mxnet", "dagnet"]
            for side in sides:
                key = (case, side)
                if key in failed or (side == "mxnet" and worker is None):
                    continue
                try:
                    if side == "mxnet":
                        samples[case][side].append(worker.measure("GluonStep", params))
                    else:
                        with dagnet.config.set(engine=ENGINE):
                            if case not in built:
                                built[case] = GluonStep(dagnet, **params)
                            samples[case][side].append(built[case].run())
                except Exception as error:  # report it in the table, measure the rest
                    failed[key] = f"{type(error).__name__}: {error}"
    if worker is not None:
        worker.close()

    rows = []
    for case in cases:
        form, batch = case
        d = Stats(samples[case]["dagnet"]) if samples[case]["dagnet"] else None
        m = Stats(samples[case]["mxnet"]) if samples[case]["mxnet"] else None
        ratio = d.median / m.median if d and m else None
        rows.append([f"MLP step, Gluon {form}", str(batch),
                     f"{d.median * 1e3:.3f}" if d else "error" if (case, "dagnet") in failed
                     else "-", f"{d.min * 1e3:.3f}" if d else "-",
                     f"{m.median * 1e3:.3f}" if m else "error" if (case, "mxnet") in failed
                     else "-", f"{m.min * 1e3:.3f}" if m else "-",
                     "-" if ratio is None else f"{ratio:.2f}x", "<= 1.0x MXNet",
                     "n/a" if ratio is None else ("yes" if ratio <= 1.0 else "NO")])
    print(f"ms per step, median and min of {args.repeat} rounds of {args.steps} steps")
    print(format_table(["workload", "batch", "dagnet", "min", "MXNet", "min", "dagnet/MXNet",
                        "target", "meets"], rows, align="<>>>>>>>>"))
    for (case, side), reason in failed.items():
        problems.append(f"{case[0]} batch {case[1]}, {side}: {reason}")
    for note in problems:
        print(f"  ! {note}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
