"""Training step: milliseconds per step of an MLP through the executor, next to numpy.

    python benchmarks/train_step.py [--steps 50] [--repeat 3] [--engines ...]

The network is 784-512-512-10 (FullyConnected, ReLU, SoftmaxOutput), float32,
random data.  One step is forward, backward and an SGD update of every
parameter (``mx.nd.sgd_update(w, g, out=w, lr=...)``), timed over
``--steps`` steps ending in one wait; next to it the same network written by
hand in numpy (forward, backward, ``w -= lr * g``) in the same run.  BLAS is
limited to one thread so both sides do the same arithmetic on one core.
When ``dagnet.autograd`` can record, the same step through autograd is a row
too.

Targets: <= 1.1x numpy at batch 128, <= 1.3x numpy at batch 8.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"  # before numpy is imported: one BLAS thread for both sides

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402

import numpy as np  # noqa: E402
from _common import Stats, positive, print_header, print_table, timed  # noqa: E402

import dagnet as mx  # noqa: E402

LAYERS = (784, 512, 512, 10)
LR = 0.01
TARGETS = {128: 1.1, 8: 1.3}


def make_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    params = {}
    for i, (fan_in, fan_out) in enumerate(zip(LAYERS, LAYERS[1:]), start=1):
        params[f"fc{i}_weight"] = (rng.standard_normal((fan_out, fan_in)) * 0.05).astype(np.float32)
        params[f"fc{i}_bias"] = np.zeros(fan_out, np.float32)
    return params


def make_data(rng: np.random.Generator, batch: int) -> tuple[np.ndarray, np.ndarray]:
    data = rng.standard_normal((batch, LAYERS[0])).astype(np.float32)
    label = rng.integers(0, LAYERS[-1], batch).astype(np.float32)
    return data, label


def mlp_symbol() -> mx.sym.Symbol:
    h = mx.sym.Variable("data")
    for i, hidden in enumerate(LAYERS[1:], start=1):
        h = mx.sym.FullyConnected(h, num_hidden=hidden, name=f"fc{i}")
        if i < len(LAYERS) - 1:
            h = mx.sym.Activation(h, act_type="relu", name=f"relu{i}")
    return mx.sym.SoftmaxOutput(h, name="softmax")


class NumpyMLP:
    """The same network by hand: forward, backward through softmax cross-entropy, SGD."""

    def __init__(self, params: dict[str, np.ndarray], data: np.ndarray, label: np.ndarray):
        self.w = [params[f"fc{i}_weight"].copy() for i in range(1, len(LAYERS))]
        self.b = [params[f"fc{i}_bias"].copy() for i in range(1, len(LAYERS))]
        self.data = data
        self.onehot = np.eye(LAYERS[-1], dtype=np.float32)[label.astype(int)]

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


class ExecutorMLP:
    """The network bound once; a step is forward, backward and one sgd_update per parameter."""

    def __init__(self, params: dict[str, np.ndarray], data: np.ndarray, label: np.ndarray):
        self.ex = mlp_symbol().simple_bind(mx.cpu(), data=data.shape,
                                           grad_req={k: "write" for k in params})
        self.ex.copy_params_from(params)
        self.ex.forward(data=data, softmax_label=label)
        self.pairs = [(self.ex.arg_dict[k], self.ex.grad_dict[k]) for k in params]

    def step(self) -> None:
        self.ex.forward(is_train=True)
        self.ex.backward()
        for w, g in self.pairs:
            mx.nd.sgd_update(w, g, out=w, lr=LR)

    def wait(self) -> None:
        mx.nd.waitall()


class AutogradMLP:
    """The network through dagnet.autograd: record, backward, sgd_update."""

    def __init__(self, params: dict[str, np.ndarray], data: np.ndarray, label: np.ndarray):
        from dagnet import autograd

        self.autograd = autograd
        self.params = {k: mx.nd.array(v) for k, v in params.items()}
        for p in self.params.values():
            p.attach_grad()
        self.data, self.label = mx.nd.array(data), mx.nd.array(label)

    def step(self) -> None:
        p = self.params
        with self.autograd.record():
            h = self.data
            for i in range(1, len(LAYERS)):
                h = mx.nd.FullyConnected(h, p[f"fc{i}_weight"], p[f"fc{i}_bias"],
                                         num_hidden=LAYERS[i])
                if i < len(LAYERS) - 1:
                    h = mx.nd.Activation(h, act_type="relu")
            out = mx.nd.SoftmaxOutput(h, self.label)
        out.backward()
        for w in p.values():
            mx.nd.sgd_update(w, w.grad, out=w, lr=LR)

    def wait(self) -> None:
        mx.nd.waitall()


def autograd_unavailable() -> str | None:
    """Why the autograd row is left out, or None when it can run."""
    try:
        from dagnet import autograd
    except ImportError as error:
        return f"dagnet.autograd is not importable ({error})"
    if not hasattr(autograd, "record"):
        return "dagnet.autograd has no record() yet"
    return None


def time_steps(model: object, steps: int) -> float:
    """Seconds per step over ``steps`` steps and one final wait."""
    def run() -> None:
        for _ in range(steps):
            model.step()
        if hasattr(model, "wait"):
            model.wait()

    return timed(run) / steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=positive, default=50,
                        help="training steps per measurement (default 50)")
    parser.add_argument("--repeat", type=positive, default=3,
                        help="measurements per row; median and min reported (default 3)")
    parser.add_argument("--batches", type=positive, nargs="+", default=[128, 8])
    parser.add_argument("--engines", nargs="+", metavar="NAME",
                        help="engines for the executor rows (default: threaded_per_device "
                             "and naive)")
    parser.add_argument("--profile", type=positive, metavar="BATCH",
                        help="instead of the table, cProfile executor steps at this batch size "
                             "on the naive engine")
    args = parser.parse_args(argv)
    engines = args.engines or ["threaded_per_device", "naive"]
    rng = np.random.default_rng(0)
    params = make_params(rng)

    if args.profile:
        with mx.config.set(engine="naive"):
            model = ExecutorMLP(params, *make_data(rng, args.profile))
            time_steps(model, 5)
            profiler = cProfile.Profile()
            profiler.enable()
            time_steps(model, args.steps)
            profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
        return

    skipped = autograd_unavailable()
    print_header("dagnet training step (MLP 784-512-512-10, float32, SGD)", [
        ("blas threads", "1 (OPENBLAS_NUM_THREADS=1 and friends)"),
        ("steps", f"{args.steps} per measurement, {args.repeat} measurements"),
        ("autograd", skipped or "measured"),
    ])
    rows = []
    for batch in args.batches:
        data, label = make_data(rng, batch)
        models: dict[str, object] = {"numpy (by hand)": NumpyMLP(params, data, label)}
        for name in engines:
            with mx.config.set(engine=name):
                models[f"executor ({name})"] = ExecutorMLP(params, data, label)
        if skipped is None:
            models["autograd (threaded_per_device)"] = AutogradMLP(params, data, label)
        samples: dict[str, list[float]] = {k: [] for k in models}
        for label_name, model in models.items():  # warm up
            engine = label_name.split("(")[-1].rstrip(")")
            with mx.config.set(engine=engine if engine in engines else "threaded_per_device"):
                time_steps(model, 3)
        for _ in range(args.repeat):
            for label_name, model in models.items():
                engine = label_name.split("(")[-1].rstrip(")")
                with mx.config.set(engine=engine if engine in engines else
                                   "threaded_per_device"):
                    samples[label_name].append(time_steps(model, args.steps))
        base = Stats(samples["numpy (by hand)"]).median
        for label_name, values in samples.items():
            stats = Stats(values)
            ratio = stats.median / base
            target = TARGETS.get(batch)
            is_numpy = label_name.startswith("numpy")
            rows.append([batch, label_name, f"{stats.median * 1e3:.3f}", f"{stats.min * 1e3:.3f}",
                         f"{ratio:.2f}x",
                         "-" if is_numpy or target is None else f"<= {target}x",
                         "-" if is_numpy or target is None else
                         ("yes" if ratio <= target else "NO")])
    print_table("ms per training step (forward + backward + SGD update), median of repeats",
                ["batch", "path", "median ms", "min ms", "vs numpy", "target", "meets"],
                rows, align=">>>>>>>")
    if skipped:
        print(f"autograd row left out: {skipped}")


if __name__ == "__main__":
    main()
