"""A ``dagnet launch`` job for the sharding test: ``python shard_job.py REC OUT``.

Each worker reads its part of ``REC`` through ImageRecordIter
(``part_index=kv.rank, num_parts=kv.num_workers``) and writes the labels it saw
to ``OUT/rank<k>.txt``.
"""

from __future__ import annotations

import sys

import dagnet as mx


def main(rec: str, out: str) -> None:
    kv = mx.kv.create("dist_sync")
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=4,
                               round_batch=False, part_index=kv.rank,
                               num_parts=kv.num_workers, preprocess_threads=1)
    labels = []
    for batch in it:
        labels.extend(batch.label[0].asnumpy()[:4 - batch.pad].tolist())
    with open(f"{out}/rank{kv.rank}.txt", "w") as file:
        file.write(" ".join(str(int(v)) for v in labels))
    print(f"worker {kv.rank} of {kv.num_workers}: {len(labels)} records")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
