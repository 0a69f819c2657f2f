"""Convolutional networks on the CPU, dagnet against Apache MXNet 1.9.1: one training step.

    python benchmarks/cnn_step.py [--mxnet-python PATH] [--repeat 5] [--threads 1 2]
                                  [--only lenet resnet18 resnet50]

One step is ``forward(is_train=True)`` and ``backward()`` of an executor bound
with ``simple_bind`` (gradients written for every parameter, none for the data
and the labels, as a ``Module`` binds them), ending in ``waitall``, on random
data.  The networks are those of MXNet 1.9.1's
``example/image-classification/symbols``, rebuilt here with the API both
frameworks share:

lenet     ``lenet.py``: two 5x5 convolutions with tanh and 2x2 max pooling, two
          fully connected layers; 1x28x28 images, batch 32.
resnet18  ``resnet.py`` with ``num_layers=18, image_shape=3,32,32`` (basic
          blocks, 64 to 512 filters, a 3x3 first convolution); batch 32.
resnet50  ``resnet.py`` with ``num_layers=50, image_shape=3,224,224``
          (bottleneck blocks, a 7x7 first convolution and max pooling); batch 8.

Each network runs at every ``--threads`` count.  dagnet's threads are its
kernel threads (``config cpu_kernel_threads``: oneDNN's OpenMP threads for the
convolutions and max pooling's gradient when ``onednn-cpu-gomp`` is installed;
otherwise a convolution shares its blocks of samples out over them) and its
engine workers (``cpu_workers``), with BLAS held to one thread per call (set
with threadpoolctl around each measurement): OpenBLAS's own threads wait for
each other spinning, and on the shared 2-core machine a 2-thread BLAS made a
resnet-18 step 4x slower, not faster.  ``DAGNET_CPU_ONEDNN=0`` measures dagnet
on its numpy kernels.  MXNet's
are ``OMP_NUM_THREADS`` and ``MXNET_CPU_WORKER_NTHREADS`` of a worker process
per thread count (MXNet reads them once per process).  Within every round
each cell is measured on both sides in turn, the order flipping every round,
so load elsewhere on the machine disturbs both alike; the table gives the
median and the minimum over ``--repeat`` rounds and the ratio of the medians.
Target: dagnet <= 1.2x MXNet's time for every network and thread count.

Both sides start from the same parameters (``RandomState``), and every
measurement checks that the outputs and the gradients stayed finite.
"""

from __future__ import annotations

import os

from _mxnet import THREAD_ENV, MXNetError, describe_workers, threaded_workers

os.environ.update(THREAD_ENV)  # before numpy is imported: BLAS starts with one thread

import contextlib  # noqa: E402
import sys  # noqa: E402
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
    timed,
)

# ---------------------------------------------------------------- networks
# Written once for both frameworks (``mx`` is dagnet or mxnet), following MXNet 1.9.1's
# example/image-classification/symbols/lenet.py and resnet.py.


def lenet(mx, num_classes: int = 10):
    """LeNet-5 as in ``lenet.py`` (without the spatial transformer)."""
    body = mx.sym.Variable("data")
    for i, filters in enumerate((20, 50), start=1):
        body = mx.sym.Convolution(data=body, kernel=(5, 5), num_filter=filters, name=f"conv{i}")
        body = mx.sym.Activation(data=body, act_type="tanh", name=f"tanh{i}")
        body = mx.sym.Pooling(data=body, pool_type="max", kernel=(2, 2), stride=(2, 2),
                              name=f"pool{i}")
    body = mx.sym.Flatten(data=body)
    body = mx.sym.FullyConnected(data=body, num_hidden=500, name="fc1")
    body = mx.sym.Activation(data=body, act_type="tanh", name="tanh3")
    body = mx.sym.FullyConnected(data=body, num_hidden=num_classes, name="fc2")
    return mx.sym.SoftmaxOutput(data=body, name="softmax")


def _batch_norm(mx, data, name, fix_gamma=False):
    return mx.sym.BatchNorm(data=data, fix_gamma=fix_gamma, eps=2e-5, momentum=0.9, name=name)


def _conv(mx, data, filters, kernel, stride, pad, name):
    return mx.sym.Convolution(data=data, num_filter=filters, kernel=kernel, stride=stride,
                              pad=pad, no_bias=True, workspace=256, name=name)


def residual_unit(mx, data, filters, stride, dim_match, name, bottle_neck):
    """A pre-activation residual unit: basic (two 3x3) or bottleneck (1x1, 3x3, 1x1)."""
    act1 = mx.sym.Activation(data=_batch_norm(mx, data, name + "_bn1"), act_type="relu",
                             name=name + "_relu1")
    if bottle_neck:
        body = _conv(mx, act1, filters // 4, (1, 1), (1, 1), (0, 0), name + "_conv1")
        body = mx.sym.Activation(data=_batch_norm(mx, body, name + "_bn2"), act_type="relu",
                                 name=name + "_relu2")
        body = _conv(mx, body, filters // 4, (3, 3), stride, (1, 1), name + "_conv2")
        body = mx.sym.Activation(data=_batch_norm(mx, body, name + "_bn3"), act_type="relu",
                                 name=name + "_relu3")
        body = _conv(mx, body, filters, (1, 1), (1, 1), (0, 0), name + "_conv3")
    else:
        body = _conv(mx, act1, filters, (3, 3), stride, (1, 1), name + "_conv1")
        body = mx.sym.Activation(data=_batch_norm(mx, body, name + "_bn2"), act_type="relu",
                                 name=name + "_relu2")
        body = _conv(mx, body, filters, (3, 3), (1, 1), (1, 1), name + "_conv2")
    shortcut = data if dim_match else _conv(mx, act1, filters, (1, 1), stride, (0, 0),
                                            name + "_sc")
    return body + shortcut


def resnet(mx, num_layers: int, image_shape: tuple, num_classes: int = 10):
    """``resnet.py``'s ``get_symbol`` for images larger than 28x28 (4 stages)."""
    if num_layers >= 50:
        filter_list, bottle_neck = [64, 256, 512, 1024, 2048], True
    else:
        filter_list, bottle_neck = [64, 64, 128, 256, 512], False
    units = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3]}[num_layers]
    data = mx.sym.identity(data=mx.sym.Variable("data"), name="id")
    data = _batch_norm(mx, data, "bn_data", fix_gamma=True)
    if image_shape[1] <= 32:
        body = _conv(mx, data, filter_list[0], (3, 3), (1, 1), (1, 1), "conv0")
    else:
        body = _conv(mx, data, filter_list[0], (7, 7), (2, 2), (3, 3), "conv0")
        body = mx.sym.Activation(data=_batch_norm(mx, body, "bn0"), act_type="relu",
                                 name="relu0")
        body = mx.sym.Pooling(data=body, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                              pool_type="max")
    for i, count in enumerate(units):
        stride = (1, 1) if i == 0 else (2, 2)
        body = residual_unit(mx, body, filter_list[i + 1], stride, False,
                             f"stage{i + 1}_unit1", bottle_neck)
        for j in range(count - 1):
            body = residual_unit(mx, body, filter_list[i + 1], (1, 1), True,
                                 f"stage{i + 1}_unit{j + 2}", bottle_neck)
    body = mx.sym.Activation(data=_batch_norm(mx, body, "bn1"), act_type="relu", name="relu1")
    body = mx.sym.Pooling(data=body, global_pool=True, kernel=(7, 7), pool_type="avg",
                          name="pool1")
    body = mx.sym.FullyConnected(data=mx.sym.Flatten(data=body), num_hidden=num_classes,
                                 name="fc1")
    return mx.sym.SoftmaxOutput(data=body, name="softmax")


NETWORKS = {
    "lenet": (lambda mx: lenet(mx), (1, 28, 28), 32),
    "resnet18": (lambda mx: resnet(mx, 18, (3, 32, 32)), (3, 32, 32), 32),
    "resnet50": (lambda mx: resnet(mx, 50, (3, 224, 224)), (3, 224, 224), 8),
}


class WrongResult(AssertionError):
    """A workload computed something other than expected."""


class CNNStep:
    """A network bound with ``simple_bind``; ``run()`` gives seconds per training step."""

    def __init__(self, mx, net: str, threads: int, steps: int):
        self.mx, self.steps, self.threads = mx, steps, threads
        build, shape, batch = NETWORKS[net]
        self.dagnet = mx.__name__.startswith("dagnet")
        symbol = build(mx)
        params = [n for n in symbol.list_arguments() if n not in ("data", "softmax_label")]
        req = {n: "write" for n in params}
        req.update(data="null", softmax_label="null")
        with self._threads():
            self.ex = symbol.simple_bind(mx.cpu(), data=(batch, *shape), grad_req=req)
        rs = np.random.RandomState(0)
        for name in symbol.list_arguments():
            array = self.ex.arg_dict[name]
            if name == "data":
                value = rs.standard_normal(array.shape)
            elif name == "softmax_label":
                value = rs.randint(0, 10, array.shape)
            elif name.endswith("gamma"):
                value = np.ones(array.shape)
            elif name.endswith("beta") or name.endswith("bias"):
                value = np.zeros(array.shape)
            else:  # Xavier-like scale keeps the activations finite through deep networks
                fan_in = int(np.prod(array.shape[1:]))
                value = rs.standard_normal(array.shape) * np.sqrt(2.0 / fan_in)
            array[:] = value.astype(np.float32)
        for name, array in self.ex.aux_dict.items():
            array[:] = np.ones(array.shape, np.float32) if name.endswith("var") else 0
        self.grads = [self.ex.grad_dict[n] for n in params]
        with self._threads():
            self._step()  # warm caches, pools and any compiled kernels
            mx.nd.waitall()
        self._check()

    def _threads(self):
        stack = contextlib.ExitStack()
        if self.dagnet:
            stack.enter_context(blas_threads(1))
            stack.enter_context(self.mx.config.set(cpu_workers=self.threads,
                                                   cpu_kernel_threads=self.threads))
        return stack

    def _step(self) -> None:
        self.ex.forward(is_train=True)
        self.ex.backward()

    def _check(self) -> None:
        out = self.ex.outputs[0].asnumpy()
        if not np.isfinite(out).all():
            raise WrongResult("the network's output is not finite")
        if not np.allclose(out.sum(axis=1), 1.0, atol=1e-3):
            raise WrongResult("the softmax output's rows do not sum to 1")
        for g in self.grads:
            if not np.isfinite(g.asnumpy()).all():
                raise WrongResult("a gradient is not finite")

    def run(self) -> float:
        def steps() -> None:
            for _ in range(self.steps):
                self._step()
            self.mx.nd.waitall()

        with self._threads():
            seconds = timed(steps) / self.steps
        self._check()
        return seconds


WORKLOADS = {"CNNStep": CNNStep}

# ----------------------------------------------------------- the comparison


@dataclass
class Cell:
    side: str
    net: str
    threads: int
    samples: list[float] = field(default_factory=list)
    error: str | None = None

    def stats(self) -> Stats | None:
        return Stats(self.samples) if self.samples and not self.error else None


def main(argv: list[str] | None = None) -> int:
    parser = comparison_parser(__doc__, "only dagnet is measured")
    parser.add_argument("--threads", type=positive, nargs="+", default=[1, 2],
                        help="thread counts (default 1 2)")
    parser.add_argument("--only", nargs="+", choices=sorted(NETWORKS), default=list(NETWORKS),
                        metavar="NET", help="networks: lenet resnet18 resnet50 (default all)")
    parser.add_argument("--steps", type=positive, default=0,
                        help="steps per measurement (default: 20 for lenet, 2 for resnet18, "
                             "1 for resnet50)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds to wait for one MXNet answer (default 600)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    default_steps = {"lenet": 20, "resnet18": 2, "resnet50": 1}

    workers = threaded_workers(args.mxnet_python, args.threads, "cnn_step", args.timeout)

    import dagnet

    facts = [("dagnet", f"{dagnet.__version__} from {os.path.dirname(dagnet.__file__)}"),
             ("dagnet engine", str(dagnet.config.get("engine"))),
             ("rounds", f"{args.repeat}; in each, every cell on each side in turn")]
    worker_facts, broken = describe_workers(workers)
    facts += worker_facts
    print_header("dagnet vs Apache MXNet 1.9.1: one CNN training step", facts)
    sys.stdout.flush()

    cells = []
    for net in args.only:
        for threads in args.threads:
            pair = [Cell("dagnet", net, threads)]
            if threads in workers:
                pair.append(Cell("mxnet", net, threads))
            cells.append(pair)
    built: dict[tuple, CNNStep] = {}

    def measure(c: Cell) -> None:
        if c.error:
            return
        steps = args.steps or default_steps[c.net]
        params = dict(net=c.net, threads=c.threads, steps=steps)
        try:
            if c.side == "mxnet":
                c.samples.append(workers[c.threads].measure("CNNStep", params))
            else:
                key = (c.net, c.threads)
                if key not in built:
                    built[key] = CNNStep(dagnet, **params)
                c.samples.append(built[key].run())
        except MXNetError as error:
            c.error = str(error)
        except Exception as error:  # report and go on with the other cells
            c.error = f"{type(error).__name__}: {error}"

    for r in range(args.repeat):
        print(f"round {r + 1}/{args.repeat} ...", file=sys.stderr, flush=True)
        for pair in cells:
            for c in (reversed(pair) if r % 2 else pair):
                measure(c)
    for worker in workers.values():
        worker.close()

    rows, notes = [], []
    for pair in cells:
        d = pair[0].stats()
        m = pair[1].stats() if len(pair) > 1 else None
        ratio = d.median / m.median if d and m else None
        _, shape, batch = NETWORKS[pair[0].net]

        def ms(s, which):
            return "-" if s is None else f"{getattr(s, which) * 1e3:.1f}"

        rows.append([pair[0].net, "x".join(map(str, shape)), batch, pair[0].threads,
                     ms(d, "median"), ms(d, "min"), ms(m, "median"), ms(m, "min"),
                     "-" if ratio is None else f"{ratio:.2f}x",
                     "-" if ratio is None else ("yes" if ratio <= 1.2 else "NO")])
        for c in pair:
            if c.error:
                notes.append(f"{c.net}, {c.threads} thread(s), {c.side}: {c.error}")
    print(f"ms per step, median and min of {args.repeat} rounds; the ratio from the medians")
    print(format_table(["network", "image", "batch", "threads", "dagnet", "min", "MXNet", "min",
                        "dagnet/MXNet", "<= 1.2x"], rows, align="<<>>>>>>>>"))
    for note in broken + notes:
        print(f"error: {note}")
    print(f"({time.perf_counter() - started:.0f} s in all)")
    return 1 if notes or broken else 0


if __name__ == "__main__":
    sys.exit(main())
