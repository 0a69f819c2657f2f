"""``dagnet im2rec``: image lists and RecordIO files, as MXNet's ``tools/im2rec.py``.

``dagnet im2rec --list PREFIX ROOT`` lists the images under ``ROOT`` (with
``--recursive``, each subfolder is a class, labelled in sorted order) into
``PREFIX.lst``, or ``PREFIX_train.lst``/``PREFIX_val.lst``/``PREFIX_test.lst``
per ``--train-ratio``/``--test-ratio`` (and ``_0``, ``_1``, ... per
``--chunks``); lines are ``index<TAB>label(s)<TAB>relative path``, shuffled
with MXNet's seed unless ``--no-shuffle``.

``dagnet im2rec PREFIX ROOT`` packs every ``PREFIX*.lst`` into ``.rec`` and
``.idx`` files: each image is read (``--color``), centre-cropped to a square
(``--center-crop``), its shorter edge resized (``--resize``), encoded
(``--encoding``, ``--quality``) and stored behind an IRHeader holding its label
(all labels with ``--pack-label``) and its index; ``--pass-through`` stores the
file's bytes untouched.  ``--num-thread`` worker processes prepare the records;
the main process writes them in list order, with a tqdm progress bar.  Images
that cannot be read are skipped with a message, and counted.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from .. import recordio
from .codec import ImageDecodeError, decode_image, encode_image, read_image_file
from .image import resize_array

__all__ = ["HELP", "main", "parser", "list_images", "write_list", "make_lists", "pack_list"]

_EXTS = [".jpeg", ".jpg", ".png"]


def list_images(root: str, recursive: bool, exts: list[str]) -> list[tuple[int, str, float]]:
    """(index, path relative to ``root``, label) of every image under ``root``: with
    ``recursive``, each subfolder (in sorted order) is a class labelled 0, 1, ...;
    otherwise the files directly in ``root``, labelled 0."""
    images = []
    exts = [e.lower() for e in exts]
    if recursive:
        labels: dict[str, int] = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            for fname in sorted(files):
                if os.path.splitext(fname)[1].lower() in exts:
                    folder = os.path.relpath(path, root)
                    if folder not in labels:
                        labels[folder] = len(labels)
                    images.append((len(images), os.path.relpath(os.path.join(path, fname), root),
                                   float(labels[folder])))
        for folder, label in labels.items():
            print(folder, label)
    else:
        for fname in sorted(os.listdir(root)):
            full = os.path.join(root, fname)
            if os.path.isfile(full) and os.path.splitext(fname)[1].lower() in exts:
                images.append((len(images), fname, 0.0))
    return images


def write_list(path: str, items: list[tuple[Any, ...]]) -> None:
    """Write ``items`` (index, path, label, ...) as a ``.lst`` file."""
    with open(path, "w") as file:
        for item in items:
            labels = "".join(f"{label:f}\t" for label in item[2:])
            file.write(f"{item[0]}\t{labels}{item[1]}\n")


def make_lists(prefix: str, root: str, recursive: bool = False, exts: list[str] | None = None,
               chunks: int = 1, train_ratio: float = 1.0, test_ratio: float = 0.0,
               shuffle: bool = True) -> list[str]:
    """List the images under ``root`` into ``.lst`` files named from ``prefix``, split
    into ``chunks`` and into train/val/test by the ratios; the paths written."""
    images = list_images(root, recursive, exts or _EXTS)
    if shuffle:
        random.seed(100)
        random.shuffle(images)
    written = []
    total = len(images)
    chunk_size = (total + chunks - 1) // chunks if total else 0
    for i in range(chunks):
        chunk = images[i * chunk_size:(i + 1) * chunk_size]
        suffix = f"_{i}" if chunks > 1 else ""
        sep = int(chunk_size * train_ratio)
        sep_test = int(chunk_size * test_ratio)
        if train_ratio == 1.0:
            parts = [(f"{prefix}{suffix}.lst", chunk)]
        else:
            parts = []
            if test_ratio:
                parts.append((f"{prefix}{suffix}_test.lst", chunk[:sep_test]))
            if train_ratio + test_ratio < 1.0:
                parts.append((f"{prefix}{suffix}_val.lst", chunk[sep_test + sep:]))
            parts.append((f"{prefix}{suffix}_train.lst", chunk[sep_test:sep_test + sep]))
        for path, items in parts:
            write_list(path, items)
            written.append(path)
    return written


def _read_list(path: str) -> list[tuple[int, str, list[float]]]:
    items = []
    with open(path) as file:
        for number, line in enumerate(file, 1):
            fields = [f for f in line.strip().split("\t") if f]
            if not fields:
                continue
            if len(fields) < 3:
                raise ImageDecodeError(f"im2rec: line {number} of {path!r} has {len(fields)} "
                                       f"fields; expected index, label(s), path")
            try:
                items.append((int(fields[0]), fields[-1], [float(v) for v in fields[1:-1]]))
            except ValueError as error:
                raise ImageDecodeError(f"im2rec: line {number} of {path!r}: {error}") from error
    return items


def _encode_record(task: tuple[Any, ...]) -> tuple[int, bytes | None, str | None]:
    """(index, the record's bytes or None, why it was skipped) for one list item."""
    (index, rel_path, labels), root, options = task
    full = os.path.join(root, rel_path)
    label: Any = labels if options["pack_label"] and len(labels) > 1 else labels[0]
    header = recordio.IRHeader(0, label, index, 0)
    try:
        raw = read_image_file(full)
        if options["pass_through"]:
            return index, recordio.pack(header, raw), None
        flag = options["color"]
        image = decode_image(raw, flag=flag if flag in (0, 1) else -1)
        if options["center_crop"]:
            h, w = image.shape[:2]
            if h > w:
                margin = (h - w) // 2
                image = image[margin:margin + w]
            else:
                margin = (w - h) // 2
                image = image[:, margin:margin + h]
        if options["resize"]:
            h, w = image.shape[:2]
            size = (options["resize"], h * options["resize"] // w) if h > w else \
                (w * options["resize"] // h, options["resize"])
            image = resize_array(np.ascontiguousarray(image), size[0], size[1], interp=1)
        encoded = encode_image(image, options["encoding"], options["quality"])
        return index, recordio.pack(header, encoded), None
    except Exception as error:  # noqa: BLE001 - one bad image skips, as MXNet's tool does
        return index, None, f"{full}: {error}"


def pack_list(list_path: str, root: str, num_thread: int = 1, progress: bool = True,
              **options: Any) -> tuple[int, int]:
    """Pack the images of ``list_path`` into ``.rec``/``.idx`` beside it; (records
    written, images skipped)."""
    from tqdm import tqdm

    defaults = {"pass_through": False, "color": 1, "center_crop": False, "resize": 0,
                "encoding": ".jpg", "quality": 95, "pack_label": False}
    defaults.update(options)
    items = _read_list(list_path)
    base = os.path.splitext(list_path)[0]
    writer = recordio.MXIndexedRecordIO(base + ".idx", base + ".rec", "w")
    tasks = [(item, root, defaults) for item in items]
    written = skipped = 0
    bar = tqdm(total=len(tasks), desc=os.path.basename(base + ".rec"), unit="img",
               disable=not progress, file=sys.stderr)
    try:
        if num_thread > 1:
            with ProcessPoolExecutor(num_thread) as pool:
                results = pool.map(_encode_record, tasks, chunksize=16)
                for index, record, problem in results:
                    written, skipped = _store(writer, index, record, problem, written, skipped)
                    bar.update(1)
        else:
            for task in tasks:
                index, record, problem = _encode_record(task)
                written, skipped = _store(writer, index, record, problem, written, skipped)
                bar.update(1)
    finally:
        bar.close()
        writer.close()
    return written, skipped


def _store(writer: Any, index: int, record: bytes | None, problem: str | None, written: int,
           skipped: int) -> tuple[int, int]:
    if record is None:
        print(f"im2rec: skipped {problem}", file=sys.stderr)
        return written, skipped + 1
    writer.write_idx(index, record)
    return written + 1, skipped


HELP = ("make image lists (--list) or pack images into RecordIO .rec/.idx files, as "
        "MXNet's tools/im2rec.py")


def parser() -> argparse.ArgumentParser:
    """The ``dagnet im2rec`` argument parser."""
    parser = argparse.ArgumentParser(prog="dagnet im2rec", description=HELP)
    parser.add_argument("prefix", help="prefix of the .lst files to make or to pack")
    parser.add_argument("root", help="folder the images' paths are relative to")
    made = parser.add_argument_group("making lists")
    made.add_argument("--list", action="store_true", help="make .lst files instead of .rec")
    made.add_argument("--exts", nargs="+", default=_EXTS, help="image file extensions")
    made.add_argument("--chunks", type=int, default=1, help="split the list into N chunks")
    made.add_argument("--train-ratio", type=float, default=1.0, help="share for training")
    made.add_argument("--test-ratio", type=float, default=0.0, help="share for testing")
    made.add_argument("--recursive", action="store_true",
                      help="each subfolder of ROOT is a class with its own label")
    made.add_argument("--no-shuffle", dest="shuffle", action="store_false",
                      help="keep the images in folder order")
    packing = parser.add_argument_group("packing records")
    packing.add_argument("--pass-through", action="store_true",
                         help="store the image files' bytes without decoding them")
    packing.add_argument("--resize", type=int, default=0,
                         help="resize the shorter edge to this size (0: keep)")
    packing.add_argument("--center-crop", action="store_true",
                         help="crop the centre square before resizing")
    packing.add_argument("--quality", type=int, default=95,
                         help="JPEG quality 1-100, or PNG compression level 0-9")
    packing.add_argument("--num-thread", type=int, default=1,
                         help="worker processes that read and encode the images")
    packing.add_argument("--color", type=int, default=1, choices=[-1, 0, 1],
                         help="1: colour, 0: gray, -1: as stored")
    packing.add_argument("--encoding", default=".jpg", choices=[".jpg", ".png"],
                         help="how the images are encoded in the records")
    packing.add_argument("--pack-label", action="store_true",
                         help="store every label of a .lst line (multi-label records)")
    packing.add_argument("--no-progress", dest="progress", action="store_false",
                         help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``dagnet im2rec`` with the arguments after the subcommand; the exit status."""
    args = parser().parse_args(argv)
    if args.list:
        for path in make_lists(args.prefix, args.root, args.recursive, args.exts, args.chunks,
                               args.train_ratio, args.test_ratio, args.shuffle):
            print(f"wrote {path}")
        return 0
    if os.path.isdir(args.prefix):
        folder, stem = args.prefix, ""
    else:
        folder, stem = os.path.split(args.prefix)
        folder = folder or "."
    if args.prefix.endswith(".lst"):
        lists = [args.prefix]
    else:
        lists = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                       if f.startswith(stem) and f.endswith(".lst"))
    if not lists:
        print(f"dagnet im2rec: no .lst file matches {args.prefix!r}; make one with --list",
              file=sys.stderr)
        return 2
    for list_path in lists:
        written, skipped = pack_list(
            list_path, args.root, args.num_thread, args.progress, pass_through=args.pass_through,
            color=args.color, center_crop=args.center_crop, resize=args.resize,
            encoding=args.encoding, quality=args.quality, pack_label=args.pack_label)
        print(f"{os.path.splitext(list_path)[0]}.rec: {written} records"
              + (f", {skipped} images skipped" if skipped else ""))
    return 0
