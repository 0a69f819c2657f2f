"""Train a small convolutional network on scikit-learn's handwritten digits with the
symbolic API and the graph executor -- MXNet 1.x code, run by dagnet.

The data ships with scikit-learn (1,797 grey 8x8 images of the digits 0-9),
so nothing is downloaded.  A fifth is held out; the network trains on the
rest with SGD and momentum, prints the loss and the held-out accuracy after
each epoch, and saves the trained symbol and parameters in MXNet's formats
(``digits-symbol.json``, ``digits-NNNN.params``) so ``mx.sym.load`` and
``mx.nd.load`` (or MXNet itself) read them back.

With ``--kvstore`` the gradients go through a key-value store, which runs the
optimizer; ``--kvstore dist_sync --workers 2`` trains data-parallel in two
processes on a local Dask cluster (started through ``dagnet launch``; install
``dagnet[dist]``), each computing half of every batch.

    python examples/train_digits.py [--epochs 12] [--engine naive] [--backend cuda]
    python examples/train_digits.py --kvstore dist_sync --workers 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import dagnet as mx


def parse_args(argv: list[str] | None = None, with_kvstore: bool = True,
               description: str | None = None) -> argparse.Namespace:
    """The command line; ``with_kvstore`` adds ``--kvstore`` and ``--workers``."""
    parser = argparse.ArgumentParser(description=description or __doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=12, help="passes over the training set")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05, help="SGD learning rate")
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--wd", type=float, default=1e-4, help="weight decay")
    parser.add_argument("--seed", type=int, default=7, help="seeds the split and the weights")
    parser.add_argument("--engine", default=None,
                        help="execution engine (naive, threaded, threaded_per_device); "
                             "default: as configured")
    parser.add_argument("--backend", default="cpu", choices=["cpu", "cuda"],
                        help="device to train on")
    parser.add_argument("--out", default=".", help="folder for the saved symbol and parameters")
    if not with_kvstore:
        return parser.parse_args(argv)
    parser.add_argument("--kvstore", default=None,
                        choices=["local", "device", "dist_sync", "dist_async"],
                        help="update through a KVStore of this type (default: an updater in "
                             "this process)")
    parser.add_argument("--workers", type=int, default=1,
                        help="training processes for a dist_* store (started with dagnet "
                             "launch on a local Dask cluster)")
    return parser.parse_args(argv)


def load_digits(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Images as (N, 1, 8, 8) float32 in [0, 1], labels as float32; a stratified 80/20 split."""
    from sklearn.datasets import load_digits as sklearn_digits

    digits = sklearn_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.float32)
    rng = np.random.default_rng(seed)
    train, test = [], []
    for digit in range(10):
        index = rng.permutation(np.flatnonzero(digits.target == digit))
        cut = int(round(len(index) * 0.8))
        train.extend(index[:cut])
        test.extend(index[cut:])
    train, test = rng.permutation(train), np.array(test)
    return images[train], labels[train], images[test], labels[test]


def build_network() -> mx.sym.Symbol:
    """conv(16) - relu - pool - conv(32) - relu - pool - fc(64) - relu - fc(10) - softmax."""
    data = mx.sym.Variable("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=16, name="conv1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    net = mx.sym.Convolution(net, kernel=(3, 3), pad=(1, 1), num_filter=32, name="conv2")
    net = mx.sym.Activation(net, act_type="relu", name="relu2")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool2")
    net = mx.sym.Flatten(net, name="flatten")
    net = mx.sym.FullyConnected(net, num_hidden=64, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu3")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


class Progress:
    """A one-line progress bar on a terminal; one line per epoch elsewhere (CI logs)."""

    def __init__(self, epoch: int, epochs: int, steps: int):
        self.prefix = f"epoch {epoch:>2}/{epochs}"
        self.steps = steps
        self.live = sys.stderr.isatty()

    def update(self, step: int, loss: float) -> None:
        if not self.live:
            return
        done = int(30 * step / self.steps)
        sys.stderr.write(f"\r{self.prefix} [{'=' * done}{' ' * (30 - done)}] "
                         f"{step}/{self.steps} loss {loss:.4f}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.live:
            sys.stderr.write("\r" + " " * 79 + "\r")


def cross_entropy(probabilities: np.ndarray, labels: np.ndarray) -> float:
    picked = probabilities[np.arange(len(labels)), labels.astype(np.int64)]
    return float(-np.log(np.maximum(picked, 1e-12)).mean())


def relaunch(args: argparse.Namespace, argv: list[str] | None) -> int:
    """Run this script as ``args.workers`` processes of a distributed job."""
    from dagnet.launcher import launch

    command = [sys.executable, os.path.abspath(__file__), *(sys.argv[1:] if argv is None
                                                            else argv)]
    mode = "async" if args.kvstore == "dist_async" else "sync"
    return launch(command, args.workers, mode=mode)


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv)
    distributed = bool(args.kvstore) and args.kvstore.startswith("dist_")
    if args.workers > 1 and not distributed:
        raise SystemExit("--workers needs --kvstore dist_sync or dist_async")
    if distributed and "DAGNET_KV_RANK" not in os.environ:
        sys.exit(relaunch(args, argv))
    if args.engine:
        mx.config.set(engine=args.engine)
    ctx = mx.gpu(0) if args.backend == "cuda" else mx.cpu()
    mx.random.seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(args.seed)
    batch = args.batch_size
    kv = mx.kv.create(args.kvstore) if args.kvstore else None
    rank, workers = (kv.rank, kv.num_workers) if kv else (0, 1)
    if batch % workers:
        raise SystemExit(f"--batch-size {batch} does not split evenly over {workers} workers")
    shard = batch // workers  # this worker computes rows [rank*shard, (rank+1)*shard) of a batch
    report = print if rank == 0 else (lambda *a, **k: None)

    net = build_network()
    executor = net.simple_bind(ctx, data=(shard, 1, 8, 8), softmax_label=(shard,))
    params = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    initializer = mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)
    for name in params:
        initializer(mx.init.InitDesc(name), executor.arg_dict[name])
    optimizer = mx.optimizer.SGD(learning_rate=args.lr, momentum=args.momentum, wd=args.wd,
                                 rescale_grad=1.0 / batch, param_idx2name=dict(enumerate(params)))
    if kv:
        for i, name in enumerate(params):
            kv.init(i, executor.arg_dict[name])
            kv.pull(i, out=executor.arg_dict[name])  # every worker starts from rank 0's
        kv.set_optimizer(optimizer)
    else:
        updater = mx.optimizer.get_updater(optimizer)
    evaluator = executor.reshape(allow_up_sizing=True, data=(len(x_test), 1, 8, 8),
                                 softmax_label=(len(x_test),))

    report(f"training on {len(x_train)} digits, testing on {len(x_test)}; "
           f"engine {mx.engine.current().name}, device {ctx}"
           + (f", kvstore {kv.type} with {workers} worker(s)" if kv else ""))
    steps = len(x_train) // batch
    started = time.perf_counter()
    accuracy = 0.0
    rng = np.random.default_rng(args.seed)
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(x_train))
        progress = Progress(epoch, args.epochs, steps) if rank == 0 else None
        losses = []
        for step in range(steps):
            index = order[step * batch + rank * shard:step * batch + (rank + 1) * shard]
            executor.forward(is_train=True, data=x_train[index], softmax_label=y_train[index])
            executor.backward()
            if kv:
                kv.pushpull(list(range(len(params))), [executor.grad_dict[n] for n in params],
                            out=[executor.arg_dict[n] for n in params])
            else:
                for i, name in enumerate(params):
                    updater(i, executor.grad_dict[name], executor.arg_dict[name])
            if step % 10 == 9 or step == steps - 1:
                losses.append(cross_entropy(executor.outputs[0].asnumpy(), y_train[index]))
                if progress:
                    progress.update(step + 1, float(np.mean(losses)))
        if progress:
            progress.close()
        evaluator.forward(is_train=False, data=x_test, softmax_label=y_test)
        predicted = evaluator.outputs[0].asnumpy().argmax(axis=1)
        accuracy = float((predicted == y_test).mean())
        report(f"epoch {epoch:>2}/{args.epochs}  loss {np.mean(losses):.4f}  "
               f"held-out accuracy {accuracy:.4f}  ({time.perf_counter() - started:.1f} s)")

    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        prefix = os.path.join(args.out, "digits")
        net.save(f"{prefix}-symbol.json")
        saved = {f"arg:{name}": executor.arg_dict[name] for name in params}
        saved.update({f"aux:{name}": array for name, array in executor.aux_dict.items()})
        mx.nd.save(f"{prefix}-{args.epochs:04d}.params", saved)
        report(f"saved {prefix}-symbol.json and {prefix}-{args.epochs:04d}.params; "
               f"held-out accuracy {accuracy:.4f}")
    if kv and workers > 1:
        kv.barrier()  # nobody leaves while another still needs the server
    return accuracy


if __name__ == "__main__":
    main()
