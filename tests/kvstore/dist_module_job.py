"""``Module.fit`` through a distributed store, for the distributed KVStore tests.

Run by ``dagnet launch`` as ``python dist_module_job.py OUT KVSTORE``: each worker
fits the network of :mod:`dist_job` on its half of the data set through
``mx.mod.Module`` and writes its final weights to ``OUT/weights-RANK.npz``.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from dist_job import dataset, network

import dagnet as mx


def main() -> None:
    out, kind = sys.argv[1], sys.argv[2]
    kv = mx.kv.create(kind)
    x, y = dataset()
    rows = slice(kv.rank, None, kv.num_workers)
    train = mx.io.NDArrayIter(x[rows], y[rows], batch_size=16)
    module = mx.mod.Module(network())
    mx.random.seed(kv.rank)  # different initial weights: the store must replace them
    module.fit(train, num_epoch=3, kvstore=kv, optimizer="sgd",
               optimizer_params={"learning_rate": 0.2, "momentum": 0.9})
    accuracy = module.score(mx.io.NDArrayIter(x, y, batch_size=64), "acc")[0][1]
    sys.stdout.write(f"worker {kv.rank}: accuracy {accuracy:.4f}\n")  # one write: no interleaving
    sys.stdout.flush()
    arg_params, _ = module.get_params()
    np.savez(os.path.join(out, f"weights-{kv.rank}.npz"),
             **{name: array.asnumpy() for name, array in arg_params.items()})


if __name__ == "__main__":
    main()
