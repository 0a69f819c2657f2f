"""Train a small convolutional network on scikit-learn's handwritten digits with the
symbolic API and the graph executor -- MXNet 1.x code, run by dagnet.

The data ships with scikit-learn (1,797 grey 8x8 images of the digits 0-9),
so nothing is downloaded.  A fifth is held out; the network trains on the
rest with SGD and momentum, prints the loss and the held-out accuracy after
each epoch, and saves the trained symbol and parameters in MXNet's formats
(``digits-symbol.json``, ``digits-NNNN.params``) so ``mx.sym.load`` and
``mx.nd.load`` read them back.

    python examples/train_digits.py [--epochs 12] [--engine naive] [--backend cuda]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import dagnet as mx


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv)
    if args.engine:
        mx.config.set(engine=args.engine)
    ctx = mx.gpu(0) if args.backend == "cuda" else mx.cpu()
    mx.random.seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(args.seed)
    batch = args.batch_size

    net = build_network()
    executor = net.simple_bind(ctx, data=(batch, 1, 8, 8), softmax_label=(batch,))
    params = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    initializer = mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)
    for name in params:
        initializer(mx.init.InitDesc(name), executor.arg_dict[name])
    optimizer = mx.optimizer.SGD(learning_rate=args.lr, momentum=args.momentum, wd=args.wd,
                                 rescale_grad=1.0 / batch, param_idx2name=dict(enumerate(params)))
    updater = mx.optimizer.get_updater(optimizer)
    evaluator = executor.reshape(allow_up_sizing=True, data=(len(x_test), 1, 8, 8),
                                 softmax_label=(len(x_test),))

    print(f"training on {len(x_train)} digits, testing on {len(x_test)}; "
          f"engine {mx.engine.current().name}, device {ctx}")
    steps = len(x_train) // batch
    started = time.perf_counter()
    accuracy = 0.0
    rng = np.random.default_rng(args.seed)
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(x_train))
        progress = Progress(epoch, args.epochs, steps)
        losses = []
        for step in range(steps):
            index = order[step * batch:(step + 1) * batch]
            executor.forward(is_train=True, data=x_train[index], softmax_label=y_train[index])
            executor.backward()
            for i, name in enumerate(params):
                updater(i, executor.grad_dict[name], executor.arg_dict[name])
            if step % 10 == 9 or step == steps - 1:
                losses.append(cross_entropy(executor.outputs[0].asnumpy(), y_train[index]))
                progress.update(step + 1, float(np.mean(losses)))
        progress.close()
        evaluator.forward(is_train=False, data=x_test, softmax_label=y_test)
        predicted = evaluator.outputs[0].asnumpy().argmax(axis=1)
        accuracy = float((predicted == y_test).mean())
        print(f"epoch {epoch:>2}/{args.epochs}  loss {np.mean(losses):.4f}  "
              f"held-out accuracy {accuracy:.4f}  ({time.perf_counter() - started:.1f} s)")

    os.makedirs(args.out, exist_ok=True)
    prefix = os.path.join(args.out, "digits")
    net.save(f"{prefix}-symbol.json")
    saved = {f"arg:{name}": executor.arg_dict[name] for name in params}
    saved.update({f"aux:{name}": array for name, array in executor.aux_dict.items()})
    mx.nd.save(f"{prefix}-{args.epochs:04d}.params", saved)
    print(f"saved {prefix}-symbol.json and {prefix}-{args.epochs:04d}.params; "
          f"held-out accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
