"""Images per second through ``mx.io.ImageRecordIter``, dagnet beside MXNet 1.9.1.

    python benchmarks/image_pipeline.py [--mxnet-python PATH] [--images 640] [--repeat 5]

Writes a ``.rec`` of JPEG images (quality 90, 256 pixels on the short side,
random sizes up to 256x384, smooth synthetic content) with ``dagnet.recordio``,
then times whole epochs of ``ImageRecordIter`` over it: decode, random
224x224 crop, random mirror, mean/std normalization, into float32 batches of
64 (3x224x224), with ``preprocess_threads`` 1 and 2.  Each measurement is one
epoch after ``reset()``, until the last batch's data is ready; dagnet and MXNet
(in a worker process, see ``_mxnet.py``) are measured in turn within every
round on the same file.  The table gives the median and best images/s and
dagnet's throughput as a multiple of MXNet's (the target: >= 0.8x at 2
threads).  Without ``--mxnet-python`` only dagnet's column is filled.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Stats, positive, print_header, print_table, timed  # noqa: E402
from _mxnet import THREAD_ENV, MXNetError, MXNetWorker  # noqa: E402

BATCH = 64
SHAPE = (3, 224, 224)
MEAN = {"mean_r": 123.68, "mean_g": 116.28, "mean_b": 103.53}
STD = {"std_r": 58.395, "std_g": 57.12, "std_b": 57.375}


class ImageRecordEpoch:
    """One epoch of ImageRecordIter over ``path`` with ``threads`` preprocessing threads;
    ``run()`` checks the batch shape and the image count and returns the seconds."""

    def __init__(self, mx, path: str, threads: int, images: int):
        self.mx = mx
        self.images = images
        self.it = mx.io.ImageRecordIter(
            path_imgrec=path, data_shape=SHAPE, batch_size=BATCH, rand_crop=True,
            rand_mirror=True, preprocess_threads=threads, prefetch_buffer=4, **MEAN, **STD)

    def _epoch(self) -> None:
        seen = 0
        for batch in self.it:
            data = batch.data[0]
            data.wait_to_read()
            assert data.shape == (BATCH,) + SHAPE
            seen += BATCH - (batch.pad or 0)
        assert seen == self.images, (seen, self.images)

    def run(self) -> float:
        self.it.reset()
        return timed(self._epoch)


WORKLOADS = {"ImageRecordEpoch": ImageRecordEpoch}


def make_rec(path: str, count: int) -> int:
    """Write ``count`` JPEG records to ``path``; their total encoded bytes."""
    import io

    import numpy as np
    from PIL import Image

    from dagnet.recordio import IRHeader, MXRecordIO, pack

    rng = np.random.RandomState(0)
    total = 0
    with MXRecordIO(path, "w") as writer:
        for i in range(count):
            h, w = (256, int(rng.randint(256, 385))) if i % 2 else \
                (int(rng.randint(256, 385)), 256)
            y, x = np.mgrid[0:h, 0:w].astype(np.float32)
            channels = []
            for _ in range(3):
                fy, fx, phase = rng.uniform(0.005, 0.05, 2).tolist() + [rng.uniform(0, 6)]
                channels.append(127 + 90 * np.sin(fy * y + fx * x + phase))
            image = np.stack(channels, axis=2) + rng.normal(0, 12, (h, w, 3))
            out = io.BytesIO()
            Image.fromarray(np.clip(image, 0, 255).astype(np.uint8)).save(
                out, format="JPEG", quality=90)
            total += len(out.getvalue())
            writer.write(pack(IRHeader(0, float(i % 1000), i, 0), out.getvalue()))
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mxnet-python", metavar="PATH",
                        help="a python that has mxnet==1.9.1, to measure MXNet beside dagnet")
    parser.add_argument("--images", type=positive, default=640,
                        help="images in the .rec (default 640: 10 batches)")
    parser.add_argument("--repeat", type=positive, default=5,
                        help="epochs measured per cell (default 5)")
    parser.add_argument("--threads", type=positive, nargs="+", default=[1, 2],
                        help="preprocess_threads values (default 1 2)")
    args = parser.parse_args(argv)
    os.environ.update(THREAD_ENV)

    import dagnet

    workdir = tempfile.mkdtemp(prefix="dagnet-image-bench-")
    path = os.path.join(workdir, "bench.rec")
    encoded = make_rec(path, args.images)
    extra = [("data", f"{args.images} JPEG images, {encoded / args.images / 1024:.0f} KiB "
                      f"each on average, in {path}"),
             ("pipeline", "decode, random crop 224x224, random mirror, mean/std, "
                          "float32 batches of 64")]
    worker = None
    if args.mxnet_python:
        worker = MXNetWorker(args.mxnet_python, "threaded_per_device", "image_pipeline")
        info = worker.ready()
        extra.append(("mxnet", f"{info['mxnet']} (numpy {info['numpy']}, python "
                               f"{info['python']})"))
    print_header("ImageRecordIter throughput: dagnet vs MXNet 1.9.1", extra)

    rows = []
    try:
        for threads in args.threads:
            ours = ImageRecordEpoch(dagnet, path, threads, args.images)
            params = {"path": path, "threads": threads, "images": args.images}
            dagnet_s, mxnet_s = [], []
            ours.run()  # warm-up epoch: page cache, thread start, first allocations
            if worker:
                worker.measure("ImageRecordEpoch", params)
            for _ in range(args.repeat):
                dagnet_s.append(ours.run())
                if worker:
                    mxnet_s.append(worker.measure("ImageRecordEpoch", params))
            ours.it.close()
            d = Stats([args.images / s for s in dagnet_s])
            m = Stats([args.images / s for s in mxnet_s]) if mxnet_s else None
            rows.append([threads, f"{d.median:.0f}", f"{max(d.samples):.0f}",
                         f"{m.median:.0f}" if m else "-", f"{max(m.samples):.0f}" if m else "-",
                         f"{d.median / m.median:.2f}x" if m else "-"])
    except MXNetError as error:
        print(f"MXNet failed: {error}", file=sys.stderr)
        return 1
    finally:
        if worker:
            worker.close()
    print_table("images/s (median and best of the epochs)",
                ["preprocess_threads", "dagnet median", "dagnet best", "MXNet median",
                 "MXNet best", "dagnet/MXNet"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
