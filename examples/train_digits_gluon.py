"""Train the digits network of ``train_digits.py`` with Gluon: ``nn.HybridSequential``
layers, hybridized into one cached graph, ``SoftmaxCrossEntropyLoss`` and a
``gluon.Trainer``.

The same layers, data split, initializer and optimizer settings; after training
the model is exported (``digits_gluon-symbol.json`` and ``-0000.params``, which
MXNet's ``SymbolBlock.imports`` reads too) and saved with ``save_parameters``.

    python examples/train_digits_gluon.py [--epochs 12] [--engine naive] [--no-hybridize]
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
from train_digits import Progress, load_digits, parse_args

import dagnet as mx
from dagnet import gluon
from dagnet.gluon import nn


def build_network() -> nn.HybridSequential:
    """Two 3x3 convolutions with max pooling, a hidden Dense layer and the 10 class scores."""
    net = nn.HybridSequential(prefix="digits_")
    with net.name_scope():
        net.add(nn.Conv2D(16, kernel_size=3, padding=1, activation="relu"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Flatten(),
                nn.Dense(64, activation="relu"),
                nn.Dense(10))
    return net


def main(argv: list[str] | None = None) -> float:
    argv = list(sys.argv[1:] if argv is None else argv)
    hybridize = "--no-hybridize" not in argv
    argv = [a for a in argv if a != "--no-hybridize"]
    args = parse_args(argv, with_kvstore=False, description=__doc__.split("\n\n")[0])
    if args.engine:
        mx.config.set(engine=args.engine)
    ctx = mx.gpu(0) if args.backend == "cuda" else mx.cpu()
    mx.random.seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(args.seed)
    batch = args.batch_size

    net = build_network()
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), ctx=ctx)
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    steps = len(x_train) // batch
    # the rate falls to nothing over the run, so the last epochs settle instead of jumping
    schedule = mx.lr_scheduler.CosineScheduler(max_update=steps * args.epochs, base_lr=args.lr)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": args.lr, "momentum": args.momentum, "wd": args.wd,
                             "lr_scheduler": schedule})

    print(f"training on {len(x_train)} digits with gluon "
          f"({'hybridized' if hybridize else 'imperative'}), testing on {len(x_test)}; "
          f"engine {mx.engine.current().name}, device {ctx}")
    test_data = mx.nd.array(x_test, ctx=ctx)
    started = time.perf_counter()
    accuracy = 0.0
    rng = np.random.default_rng(args.seed)
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(x_train))
        progress = Progress(epoch, args.epochs, steps)
        losses = []
        for step in range(steps):
            index = order[step * batch:(step + 1) * batch]
            data = mx.nd.array(x_train[index], ctx=ctx)
            label = mx.nd.array(y_train[index], ctx=ctx)
            with mx.autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(batch)
            if step % 10 == 9 or step == steps - 1:
                losses.append(float(loss.mean().asscalar()))
                progress.update(step + 1, float(np.mean(losses)))
        progress.close()
        scores = net(test_data).asnumpy()
        accuracy = float((scores.argmax(axis=1) == y_test).mean())
        print(f"epoch {epoch:>2}/{args.epochs}  loss {np.mean(losses):.4f}  "
              f"held-out accuracy {accuracy:.4f}  ({time.perf_counter() - started:.1f} s)")
    os.makedirs(args.out, exist_ok=True)
    net.save_parameters(os.path.join(args.out, "digits_gluon.params"))
    if hybridize:
        net.export(os.path.join(args.out, "digits_gluon"))
    return accuracy


if __name__ == "__main__":
    main()
