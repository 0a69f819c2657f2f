"""Train the digits network of ``train_digits.py`` imperatively: NDArray operators
recorded with ``mx.autograd`` instead of a bound symbol.

The same layers, data split, initializer and optimizer; the forward pass is
written as calls to ``mx.nd.<op>`` inside ``autograd.record()``, and
``loss.backward()`` fills each parameter's ``.grad`` from the same gradient
rules the executor uses.

    python examples/train_digits_autograd.py [--epochs 12] [--engine naive]
"""

from __future__ import annotations

import time

import numpy as np
from train_digits import Progress, cross_entropy, load_digits, parse_args

import dagnet as mx

SHAPES = {
    "conv1_weight": (16, 1, 3, 3), "conv1_bias": (16,),
    "conv2_weight": (32, 16, 3, 3), "conv2_bias": (32,),
    "fc1_weight": (64, 128), "fc1_bias": (64,),
    "fc2_weight": (10, 64), "fc2_bias": (10,),
}


def forward(p: dict[str, mx.nd.NDArray], data: mx.nd.NDArray) -> mx.nd.NDArray:
    """The network of ``train_digits.build_network`` up to the class scores."""
    nd = mx.nd
    x = nd.Convolution(data, p["conv1_weight"], p["conv1_bias"], kernel=(3, 3), pad=(1, 1),
                       num_filter=16)
    x = nd.Pooling(nd.relu(x), kernel=(2, 2), stride=(2, 2), pool_type="max")
    x = nd.Convolution(x, p["conv2_weight"], p["conv2_bias"], kernel=(3, 3), pad=(1, 1),
                       num_filter=32)
    x = nd.Pooling(nd.relu(x), kernel=(2, 2), stride=(2, 2), pool_type="max")
    x = nd.relu(nd.FullyConnected(nd.flatten(x), p["fc1_weight"], p["fc1_bias"], num_hidden=64))
    return nd.FullyConnected(x, p["fc2_weight"], p["fc2_bias"], num_hidden=10)


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv, with_kvstore=False, description=__doc__.split("\n\n")[0])
    if args.engine:
        mx.config.set(engine=args.engine)
    ctx = mx.gpu(0) if args.backend == "cuda" else mx.cpu()
    mx.random.seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(args.seed)
    batch = args.batch_size

    params = {}
    initializer = mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)
    for name, shape in SHAPES.items():
        params[name] = mx.nd.zeros(shape, ctx=ctx)
        initializer(mx.init.InitDesc(name), params[name])
        params[name].attach_grad()
    names = list(SHAPES)
    optimizer = mx.optimizer.SGD(learning_rate=args.lr, momentum=args.momentum, wd=args.wd,
                                 rescale_grad=1.0 / batch, param_idx2name=dict(enumerate(names)))
    updater = mx.optimizer.get_updater(optimizer)

    print(f"training on {len(x_train)} digits with autograd, testing on {len(x_test)}; "
          f"engine {mx.engine.current().name}, device {ctx}")
    steps = len(x_train) // batch
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
                output = mx.nd.SoftmaxOutput(forward(params, data), label)
            output.backward()
            for i, name in enumerate(names):
                updater(i, params[name].grad, params[name])
            if step % 10 == 9 or step == steps - 1:
                losses.append(cross_entropy(output.asnumpy(), y_train[index]))
                progress.update(step + 1, float(np.mean(losses)))
        progress.close()
        scores = forward(params, test_data).asnumpy()
        accuracy = float((scores.argmax(axis=1) == y_test).mean())
        print(f"epoch {epoch:>2}/{args.epochs}  loss {np.mean(losses):.4f}  "
              f"held-out accuracy {accuracy:.4f}  ({time.perf_counter() - started:.1f} s)")
    return accuracy


if __name__ == "__main__":
    main()
