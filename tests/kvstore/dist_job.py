"""A small data-parallel training job for the distributed KVStore tests.

Run by ``dagnet launch`` as ``python dist_job.py OUT KVSTORE STEPS [CRASH_AT]``:
each worker trains a softmax MLP on its shard of every batch through
``simple_bind``, pushes its gradients and pulls the updated weights; worker 0
writes the final weights to ``OUT/weights.npz``.  With ``CRASH_AT`` worker 1
dies (``os._exit``) at that step.  The tests import :func:`train` to run the same
job in one process with a local store and one executor per shard.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import dagnet as mx

BATCH = 32
SHARDS = 2
CLASSES = 3


def dataset(seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Three Gaussian blobs in 4-D, 512 points."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((CLASSES, 4)) * 3
    labels = rng.integers(0, CLASSES, 512)
    points = centers[labels] + rng.standard_normal((512, 4))
    return points.astype(np.float32), labels.astype(np.float32)


def network() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    hidden = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=16, name="fc1"),
                               act_type="relu")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(hidden, num_hidden=CLASSES, name="fc2"),
                                name="softmax")


def initial_params(names: list[str]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    shapes = {"fc1_weight": (16, 4), "fc1_bias": (16,), "fc2_weight": (CLASSES, 16),
              "fc2_bias": (CLASSES,)}
    return {n: (rng.standard_normal(shapes[n]) * 0.3).astype(np.float32) for n in names}


def train(kv: object, shards: list[int], steps: int, crash_at: int | None = None
          ) -> tuple[dict[str, np.ndarray], float]:
    """Train on ``shards`` (the parts of each batch this process computes) through ``kv``;
    the final weights and the accuracy on the whole data set."""
    x, y = dataset()
    net = network()
    per_shard = BATCH // SHARDS
    executors = [net.simple_bind(mx.cpu(), data=(per_shard, 4)) for _ in shards]
    names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    init = initial_params(names)
    for i, name in enumerate(names):
        kv.init(i, mx.nd.array(init[name]))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9,
                                      rescale_grad=1.0 / BATCH))
    for i, name in enumerate(names):
        kv.pull(i, out=[e.arg_dict[name] for e in executors])
    for step in range(steps):
        if crash_at is not None and step == crash_at and 1 in shards and len(shards) == 1:
            os._exit(7)
        start = (step * BATCH) % len(x)
        for shard, executor in zip(shards, executors):
            rows = slice(start + shard * per_shard, start + (shard + 1) * per_shard)
            executor.forward(is_train=True, data=x[rows], softmax_label=y[rows])
            executor.backward()
        for i, name in enumerate(names):
            kv.push(i, [e.grad_dict[name] for e in executors])
        for i, name in enumerate(names):
            kv.pull(i, out=[e.arg_dict[name] for e in executors])
    weights = {n: executors[0].arg_dict[n].asnumpy() for n in names}
    scorer = net.simple_bind(mx.cpu(), grad_req="null", data=x.shape)
    scorer.copy_params_from(weights)
    scorer.forward(data=x)
    accuracy = float((scorer.outputs[0].asnumpy().argmax(axis=1) == y).mean())
    return weights, accuracy


def main() -> None:
    out, kind, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    crash_at = int(sys.argv[4]) if len(sys.argv) > 4 else None
    kv = mx.kv.create(kind)
    weights, accuracy = train(kv, [kv.rank], steps, crash_at)
    # one write per line: the workers share the launcher's output, and print() writes the
    # text and the newline separately, so two workers' lines could interleave
    sys.stdout.write(f"worker {kv.rank} of {kv.num_workers}: accuracy {accuracy:.4f}\n")
    sys.stdout.flush()
    kv.barrier()
    if kv.rank == 0:
        np.savez(os.path.join(out, "weights.npz"), **weights)


if __name__ == "__main__":
    main()
