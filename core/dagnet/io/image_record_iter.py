"""``ImageRecordIter``: MXNet's threaded image pipeline over a ``.rec`` file.

Records are found by their byte offsets (the ``.idx``, or a scan of the chunk
headers), split into ``num_parts`` contiguous parts of near-equal size
(``part_index`` picks one: parts are disjoint and together hold every record),
and, per epoch, shuffled with a generator seeded by ``seed`` and the epoch.  In a
job started by ``dagnet launch``, each worker reads its own part with
``part_index=kv.rank, num_parts=kv.num_workers`` (``kv`` its dist KVStore).

``preprocess_threads`` worker threads read, decode (Pillow releases the GIL
while decoding and resizing), crop, mirror and normalize the images of each
batch straight into the batch's float32 buffer; numpy's arithmetic releases the
GIL too, so the threads run in parallel.  A batching thread keeps up to
``prefetch_buffer`` finished batches in a bounded queue.  Every image's random
choices come from a generator seeded by (``seed_aug`` or ``seed``, epoch,
position in the part), so a run is reproducible whatever the thread timing.

An image that cannot be decoded is skipped with a warning that names the file
and the record, as MXNet skips it, and the iterator counts them
(``skipped_records``); a truncated or corrupt ``.rec``, a label width that does
not match a record's labels, or an image smaller than the crop raise an
:class:`ImageRecordError` naming the file and the record.  Errors stop the
worker threads: none is left behind, and ``close()`` (or dropping the
iterator) stops them too.
"""

from __future__ import annotations

import io as _bytes_io
import logging
import os
import queue
import random
import threading
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .. import ndarray as nd
from .. import recordio
from .._errors import DagnetError
from .data_batch import DataBatch
from .data_desc import DataDesc
from .data_iter import DataIter

__all__ = ["ImageRecordError", "ImageRecordIter", "ImageRecordUInt8Iter",
           "ImageRecordInt8Iter", "RecordPipeline"]

_END = object()
_CHUNK = 4  # images per worker task: small enough to balance, large enough to amortize

# MXNet's augmentation parameters dagnet's pipeline does not implement, with their
# "off" values: set to anything else, they raise rather than be silently ignored.
_UNSUPPORTED = {
    "random_resized_crop": False, "max_crop_size": -1, "min_crop_size": -1,
    "max_random_area": 1.0, "min_random_area": 1.0, "shuffle_chunk_size": 0,
}
# MXNet's affine augmentation parameters, with their "off" values.
_AFFINE = {"max_rotate_angle": 0, "max_shear_ratio": 0.0, "rotate": -1,
           "max_random_scale": 1.0, "min_random_scale": 1.0, "max_aspect_ratio": 0.0,
           "min_aspect_ratio": None, "max_img_size": 1e10, "min_img_size": 0.0}
_PCA_EIGVAL = np.array([55.46, 4.794, 1.148], np.float32)
_PCA_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                        [-0.5836, -0.6948, 0.4203]], np.float32)
# MXNet parameters with no effect here (devices, logging, C++ scheduling).
_IGNORED = {"verbose", "device_id", "ctx", "shuffle_chunk_seed", "aug_seq", "rotate_list",
            "num_decode_threads"}


class ImageRecordError(DagnetError, ValueError):
    """A bad ``ImageRecordIter`` parameter, or a record it cannot turn into an example."""


def _pil() -> Any:
    from PIL import Image

    return Image


class RecordPipeline:
    """The state and threads behind one ImageRecordIter.  Its threads refer to this
    object, never to the iterator, so a dropped iterator is collected and stops them."""

    def __init__(self, out_dtype: Any, normalize: bool, path_imgrec: str = "",
                 data_shape: Any = None, batch_size: int = 0,
                 path_imgidx: str = "", path_imglist: str = "", label_width: int = 1,
                 shuffle: bool = False, seed: int = 0, seed_aug: int | None = None,
                 rand_crop: bool = False, rand_mirror: bool = False, mirror: bool = False,
                 resize: int = -1, pad: int = 0, fill_value: int = 255, inter_method: int = 1,
                 mean_img: str = "", mean_r: float = 0.0, mean_g: float = 0.0,
                 mean_b: float = 0.0, mean_a: float = 0.0, std_r: float = 1.0,
                 std_g: float = 1.0, std_b: float = 1.0, std_a: float = 1.0,
                 scale: float = 1.0, brightness: float = 0.0, contrast: float = 0.0,
                 saturation: float = 0.0, pca_noise: float = 0.0,
                 max_random_contrast: float = 0.0, max_random_illumination: float = 0.0,
                 preprocess_threads: int = 4,
                 prefetch_buffer: int = 4, round_batch: bool = True, part_index: int = 0,
                 num_parts: int = 1, data_name: str = "data",
                 label_name: str = "softmax_label", dtype: Any = None, **kwargs: Any):
        self.batch_size = int(batch_size)
        self._OUT_DTYPE, self._NORMALIZE = out_dtype, normalize
        self._affine_params = {name: kwargs.pop(name, off) for name, off in _AFFINE.items()}
        self._affine_on = any(self._affine_params[name] != off for name, off in _AFFINE.items())
        self.pca_noise = float(pca_noise)
        self.random_hls = tuple(int(kwargs.pop(name, 0))
                                for name in ("random_h", "random_l", "random_s"))
        self.max_random_contrast = float(max_random_contrast)
        self.max_random_illumination = float(max_random_illumination)
        self._check_params(path_imgrec, data_shape, batch_size, part_index, num_parts,
                           preprocess_threads, label_width, kwargs)
        self.path_imgrec = os.fspath(path_imgrec)
        self.data_shape = tuple(int(d) for d in data_shape)
        self.label_width = int(label_width)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.seed_aug = self.seed if seed_aug is None else int(seed_aug)
        self.rand_crop, self.rand_mirror, self.mirror = bool(rand_crop), bool(rand_mirror), \
            bool(mirror)
        self.resize, self.pad, self.fill_value = int(resize), int(pad), int(fill_value)
        self.inter_method = int(inter_method)
        self.brightness, self.contrast, self.saturation = brightness, contrast, saturation
        self.round_batch = bool(round_batch)
        self.part_index, self.num_parts = int(part_index), int(num_parts)
        self.preprocess_threads = max(1, int(preprocess_threads))
        self.prefetch_buffer = max(1, int(prefetch_buffer))
        channels = self.data_shape[0]
        means = np.array([mean_r, mean_g, mean_b, mean_a][:channels], dtype=np.float32)
        stds = np.array([std_r, std_g, std_b, std_a][:channels], dtype=np.float32)
        if channels == 1:
            means, stds = means[:1], stds[:1]
        self._mean = means.reshape(-1, 1, 1)
        self._scale = np.float32(scale)
        self._std = stds.reshape(-1, 1, 1)
        self._out_dtype = np.dtype(self._OUT_DTYPE if dtype is None else dtype)
        if self._NORMALIZE and self._out_dtype.kind != "f":
            raise ImageRecordError(f"ImageRecordIter: dtype {dtype!r} cannot hold normalized "
                                   f"pixels; use float16, float32 or float64 (or "
                                   f"ImageRecordUInt8Iter for raw pixels)")
        self._labels_from_list = _read_image_list(path_imglist, self.label_width) \
            if path_imglist else None
        self._offsets = self._part_offsets(path_imgidx)
        self.skipped_records = 0
        self._skip_lock = threading.Lock()
        self._local = threading.local()
        self._files: list[Any] = []
        self._mean_img = self._load_mean_img(mean_img) if mean_img else None
        self.label_width = self._label_row_width()
        self.provide_data = [DataDesc(data_name, (self.batch_size,) + self.data_shape,
                                      self._out_dtype.type)]
        label_shape = (self.batch_size, self.label_width) if self.label_width > 1 \
            else (self.batch_size,)
        self.provide_label = [DataDesc(label_name, label_shape, np.float32)]
        self._pool: ThreadPoolExecutor | None = None
        self._queue: queue.Queue[Any] | None = None
        self._producer: threading.Thread | None = None
        self._stop = threading.Event()
        self._epoch = -1
        self._batch: DataBatch | None = None
        self._lent: tuple[Any, np.ndarray] | None = None
        self._free: queue.SimpleQueue[np.ndarray] = queue.SimpleQueue()
        self.reset()

    # -- parameters ------------------------------------------------------------------------
    @staticmethod
    def _check_params(path_imgrec: Any, data_shape: Any, batch_size: int, part_index: int,
                      num_parts: int, threads: int, label_width: int,
                      kwargs: dict[str, Any]) -> None:
        if not path_imgrec:
            raise ImageRecordError("ImageRecordIter needs path_imgrec (a .rec file made by "
                                   "`dagnet im2rec` or MXNet's im2rec)")
        if not os.path.isfile(path_imgrec):
            raise ImageRecordError(f"ImageRecordIter: path_imgrec {os.fspath(path_imgrec)!r} "
                                   f"does not exist")
        if data_shape is None or len(tuple(data_shape)) != 3 or \
                tuple(data_shape)[0] not in (1, 3, 4):
            raise ImageRecordError(f"ImageRecordIter: data_shape must be (channels, height, "
                                   f"width) with 1, 3 or 4 channels, got {data_shape!r}")
        if int(batch_size) <= 0:
            raise ImageRecordError(f"ImageRecordIter: batch_size must be positive, got "
                                   f"{batch_size!r}")
        if not 0 <= int(part_index) < int(num_parts):
            raise ImageRecordError(f"ImageRecordIter: part_index {part_index} is out of "
                                   f"range for num_parts {num_parts}")
        if int(label_width) < 1:
            raise ImageRecordError(f"ImageRecordIter: label_width must be >= 1, got "
                                   f"{label_width}")
        for name, value in kwargs.items():
            if name in _UNSUPPORTED:
                if value != _UNSUPPORTED[name]:
                    raise ImageRecordError(
                        f"ImageRecordIter: {name}={value!r} is not supported by dagnet's "
                        f"image pipeline (it supports resize, pad, rand_crop, rand_mirror, "
                        f"mirror, brightness, contrast, saturation, mean/std); leave "
                        f"{name} at {_UNSUPPORTED[name]!r} or augment with mx.image")
            elif name not in _IGNORED:
                warnings.warn(f"ImageRecordIter: unknown parameter {name!r} ignored "
                              f"(as MXNet ignores it)", stacklevel=4)

    def _part_offsets(self, path_imgidx: str) -> np.ndarray:
        if path_imgidx:
            if not os.path.isfile(path_imgidx):
                raise ImageRecordError(
                    f"ImageRecordIter: path_imgidx {path_imgidx!r} does not exist; make it "
                    f"with `dagnet im2rec`, or leave path_imgidx out to scan "
                    f"{self.path_imgrec!r}")
            index = recordio.MXIndexedRecordIO(path_imgidx, self.path_imgrec, "r")
            offsets = np.array(sorted(index.idx.values()), dtype=np.int64)
            index.close()
        else:
            offsets = np.array(recordio.record_offsets(self.path_imgrec), dtype=np.int64)
        part = np.array_split(np.arange(len(offsets)), self.num_parts)[self.part_index]
        self._first_record = int(part[0]) if len(part) else 0
        return offsets[part]

    @property
    def num_records(self) -> int:
        """How many records this part reads per epoch."""
        return len(self._offsets)

    # -- epochs ------------------------------------------------------------------------------
    def reset(self) -> None:
        """Start the next epoch (a new shuffle, when ``shuffle``)."""
        self._shutdown()
        self._epoch += 1
        order = np.arange(len(self._offsets))
        if self.shuffle:
            np.random.default_rng([self.seed, self._epoch]).shuffle(order)
        self._stop = threading.Event()
        self._queue = queue.Queue(maxsize=self.prefetch_buffer)
        self._pool = ThreadPoolExecutor(self.preprocess_threads,
                                        thread_name_prefix="dagnet-imagerecord")
        self._producer = threading.Thread(target=self._produce, args=(order, self._epoch),
                                          name="dagnet-imagerecord-batcher", daemon=True)
        self._producer.start()

    def close(self) -> None:
        """Stop the worker threads and drop prefetched batches."""
        try:
            self._shutdown()
        except Exception:  # interpreter shutdown: the threading module may be gone
            pass

    def _shutdown(self) -> None:
        if self._producer is None:
            return
        self._stop.set()
        while self._producer.is_alive():
            try:  # unblock a producer waiting on a full queue
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._producer.join(timeout=0.05)
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._producer = self._pool = self._queue = None
        for handle in self._files:
            handle.close()
        self._files.clear()
        self._local = threading.local()

    # -- the consumer side -------------------------------------------------------------------
    def next(self) -> DataBatch:
        """The next batch; StopIteration at the end of the epoch."""
        if self._queue is None:
            raise StopIteration
        item = self._queue.get()
        if item is _END:
            self._queue.put(_END)
            raise StopIteration
        if isinstance(item, BaseException):
            self._shutdown()
            raise item
        data, label, pad, index = item
        self._recycle()
        out = nd.empty(data.shape, dtype=data.dtype)
        nd.assign(out, data, owned=True)  # copied by the engine, off this thread
        label_out = nd.empty(label.shape, dtype=np.float32)
        nd.assign(label_out, label, owned=True)
        self._lent = (out, data)
        self._batch = DataBatch([out], [label_out], pad=pad, index=index)
        return self._batch

    def _recycle(self) -> None:
        """Hand the last batch's buffer back to the producer once its copy is done."""
        if self._lent is not None:
            out, data = self._lent
            self._lent = None
            out.wait_to_read()
            if self._free.qsize() < self.prefetch_buffer + 2:
                self._free.put(data)

    def iter_next(self) -> bool:
        """Move to the next batch; False at the end of the epoch."""
        try:
            self.next()
        except StopIteration:
            return False
        return True

    def getdata(self) -> Any:
        """The current batch's data array (one NDArray, as MXNet's C++ iterators give)."""
        return self._batch.data[0] if self._batch else None

    def getlabel(self) -> Any:
        """The current batch's label array (one NDArray)."""
        return self._batch.label[0] if self._batch else None

    def getpad(self) -> int | None:
        """How many examples at the end of the current batch only pad it."""
        return self._batch.pad if self._batch else None

    def getindex(self) -> Any:
        """The record numbers (in the file) of the current batch's examples."""
        return self._batch.index if self._batch else None

    # -- the producer side -------------------------------------------------------------------
    def _produce(self, order: np.ndarray, epoch: int) -> None:
        try:
            self._produce_batches(order, epoch)
        except BaseException as error:  # handed to the consumer, raised from next()
            self._put(error)
        else:
            self._put(_END)

    def _put(self, item: Any) -> None:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return
            except queue.Full:
                continue

    def _produce_batches(self, order: np.ndarray, epoch: int) -> None:
        n, size = len(order), self.batch_size
        if n == 0:
            return
        pending: deque[Any] = deque()
        depth = max(2, self.preprocess_threads)
        start = 0
        while start < n and not self._stop.is_set():
            positions = np.arange(start, start + size)
            valid = positions < n
            pad = int((~valid).sum())
            if pad and self.round_batch:
                positions = positions % n
                valid[:] = True
            data = self._buffer()
            if pad and not self.round_batch:
                data[~valid] = 0
            label = np.zeros((size, self.label_width), dtype=np.float32)
            slots = np.nonzero(valid)[0]
            futures = [self._pool.submit(self._fill_chunk, data, label, order, positions,
                                         slots[i:i + _CHUNK], epoch)
                       for i in range(0, len(slots), _CHUNK)]
            index = self._first_record + order[positions % n]
            pending.append((data, label, pad, index, futures))
            while len(pending) >= depth:
                self._finish(pending.popleft())
            start += size
        while pending and not self._stop.is_set():
            self._finish(pending.popleft())

    def _buffer(self) -> np.ndarray:
        """A batch buffer: one the consumer has handed back, or a new one.  Reusing them
        spares the page faults of touching 38 MB of fresh memory per batch."""
        try:
            return self._free.get_nowait()
        except queue.Empty:
            return np.empty((self.batch_size,) + self.data_shape, dtype=self._out_dtype)

    def _finish(self, entry: Any) -> None:
        data, label, pad, index, futures = entry
        for future in futures:
            future.result()
        if self.label_width == 1:
            label = label[:, 0]
        self._put((data, label, pad, index))

    def _file(self) -> Any:
        handle = getattr(self._local, "file", None)
        if handle is None:
            handle = self._local.file = open(self.path_imgrec, "rb")  # noqa: SIM115
            with self._skip_lock:
                self._files.append(handle)
        return handle

    def _fill_chunk(self, data: np.ndarray, label: np.ndarray, order: np.ndarray,
                    positions: np.ndarray, slots: np.ndarray, epoch: int) -> None:
        file = self._file()
        n = len(order)
        for slot in slots:
            if self._stop.is_set():
                return
            position = int(positions[slot]) % n
            record = int(order[position])
            rng = random.Random((self.seed_aug * 1_000_003 + epoch) * 1_000_003 + position)
            self._fill_one(file, record, data[slot], label[slot], rng)

    def _record_bytes(self, file: Any, record: int) -> bytes:
        file.seek(int(self._offsets[record]))
        payload = recordio.read_record(file, self.path_imgrec, self._first_record + record)
        if payload is None:
            raise ImageRecordError(f"ImageRecordIter: record {self._first_record + record} of "
                                   f"{self.path_imgrec!r} is past the end of the file")
        return payload

    def _fill_one(self, file: Any, record: int, out: np.ndarray, label_out: np.ndarray,
                  rng: random.Random) -> None:
        number = self._first_record + record
        try:
            header, encoded = recordio.unpack(self._record_bytes(file, record))
        except recordio.RecordIOError as error:
            raise ImageRecordError(f"ImageRecordIter: {error}") from error
        label_out[:] = self._label(header, number)
        for _attempt in range(len(self._offsets)):
            try:
                image = self._decode(encoded)
                break
            except Exception as error:  # noqa: BLE001 - any decoder failure means skip it
                self._skip(number, error)
                # MXNet drops the image; a batch keeps its size, so take the next record
                record = (record + 1) % len(self._offsets)
                number = self._first_record + record
                header, encoded = recordio.unpack(self._record_bytes(file, record))
                label_out[:] = self._label(header, number)
        else:  # pragma: no cover - every record undecodable
            raise ImageRecordError(f"ImageRecordIter: no record of {self.path_imgrec!r} "
                                   f"holds an image that can be decoded")
        self._augment_into(image, out, rng, number, label_out)

    def _skip(self, number: int, error: Exception) -> None:
        with self._skip_lock:
            self.skipped_records += 1
            count = self.skipped_records
        message = (f"ImageRecordIter: skipped record {number} of {self.path_imgrec!r}: "
                   f"its image cannot be decoded ({error}); {count} skipped so far")
        warnings.warn(message, stacklevel=2)
        logging.getLogger(__name__).warning(message)

    def _label(self, header: Any, number: int) -> Any:
        if self._labels_from_list is not None:
            try:
                return self._labels_from_list[int(header.id)]
            except KeyError:
                raise ImageRecordError(
                    f"ImageRecordIter: record {number} of {self.path_imgrec!r} has id "
                    f"{header.id}, which the image list does not hold") from None
        if header.flag > 0:
            labels = np.asarray(header.label, dtype=np.float32)
            if labels.size != self.label_width:
                raise ImageRecordError(
                    f"ImageRecordIter: record {number} of {self.path_imgrec!r} has "
                    f"{labels.size} labels but label_width={self.label_width}; set "
                    f"label_width={labels.size}")
            return labels
        if self.label_width != 1:
            raise ImageRecordError(
                f"ImageRecordIter: record {number} of {self.path_imgrec!r} has 1 label but "
                f"label_width={self.label_width}; set label_width=1")
        return header.label

    def _decode(self, encoded: bytes) -> Any:
        Image = _pil()
        image = Image.open(_bytes_io.BytesIO(encoded))
        mode = {1: "L", 3: "RGB", 4: "RGBA"}[self.data_shape[0]]
        if image.mode != mode:
            image = image.convert(mode)
        else:
            image.load()
        return image

    def _resample(self, old: tuple[int, int], new: tuple[int, int], rng: random.Random) -> Any:
        Image = _pil()
        interp = self.inter_method
        if interp == 9:
            interp = 2 if new[0] > old[0] and new[1] > old[1] else \
                3 if new[0] < old[0] and new[1] < old[1] else 1
        elif interp == 10:
            interp = rng.randint(0, 4)
        return {0: Image.Resampling.NEAREST, 1: Image.Resampling.BILINEAR,
                2: Image.Resampling.BICUBIC, 3: Image.Resampling.BOX,
                4: Image.Resampling.LANCZOS}[interp]

    def _label_row_width(self) -> int:
        """How many values each example's label row holds."""
        return self.label_width

    def _augment_into(self, image: Any, out: np.ndarray, rng: random.Random,
                      number: int, label_out: np.ndarray | None = None) -> None:
        chw = self._pixels(image, rng, number, augment=True)
        if not self._NORMALIZE:
            out[...] = chw
            return
        if self._mean_img is not None:
            np.subtract(chw, self._mean_img, out=out, casting="unsafe")
            out *= self._scale
        else:  # (pixel - mean) / std * scale, in MXNet's order, so the values match bit for bit
            np.subtract(chw, self._mean, out=out, casting="unsafe")
            out /= self._std
            if self._scale != 1:
                out *= self._scale
        if self.max_random_contrast > 0 or self.max_random_illumination > 0:
            contrast = 1 + rng.uniform(-self.max_random_contrast, self.max_random_contrast)
            illumination = rng.uniform(-self.max_random_illumination,
                                       self.max_random_illumination)
            out *= np.float32(contrast)
            out += np.float32(illumination * self._scale)

    def _pixels(self, image: Any, rng: random.Random, number: int,
                augment: bool) -> np.ndarray:
        """The image resized, padded, cropped, mirrored and jittered, as CHW (without
        ``augment``: the centre crop alone, as the mean image is taken)."""
        _, crop_h, crop_w = self.data_shape
        if self.resize > 0:
            w, h = image.size
            size = (self.resize, self.resize * h // w) if h > w else \
                (self.resize * w // h, self.resize)
            image = image.resize(size, self._resample((w, h), size, rng))
        if augment and self._affine_on:
            image = self._affine(image, rng)
        if self.pad > 0:
            Image = _pil()
            w, h = image.size
            fill = (self.fill_value,) * len(image.getbands())
            padded = Image.new(image.mode, (w + 2 * self.pad, h + 2 * self.pad),
                               fill if len(fill) > 1 else fill[0])
            padded.paste(image, (self.pad, self.pad))
            image = padded
        w, h = image.size
        if h < crop_h:
            size = (int(crop_h / h * w), crop_h)
            image = image.resize(size, self._resample((w, h), size, rng))
            w, h = image.size
        if w < crop_w:
            size = (crop_w, int(crop_w / w * h))
            image = image.resize(size, self._resample((w, h), size, rng))
            w, h = image.size
        if h < crop_h or w < crop_w:
            raise ImageRecordError(
                f"ImageRecordIter: record {number} of {self.path_imgrec!r}: image "
                f"{w}x{h} is smaller than the crop {crop_w}x{crop_h}")
        y, x = h - crop_h, w - crop_w
        if self.rand_crop and augment:
            y, x = rng.randint(0, y), rng.randint(0, x)
        else:
            y, x = y // 2, x // 2
        if (w, h) != (crop_w, crop_h):
            image = image.crop((x, y, x + crop_w, y + crop_h))
        pixels = np.asarray(image)
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        if augment and (self.mirror or (self.rand_mirror and rng.random() < 0.5)):
            pixels = pixels[:, ::-1]
        chw = pixels.transpose(2, 0, 1)  # a view: the normalization reads it in place
        if augment and (self.brightness > 0 or self.contrast > 0 or self.saturation > 0):
            chw = self._jitter(chw.astype(np.float32), rng)
        if augment and any(self.random_hls) and chw.shape[0] >= 3:
            shifts = [rng.randint(-v, v) for v in self.random_hls]
            chw = chw.astype(np.float32)
            chw[:3] = _shift_hls(chw[:3], *shifts)
        if augment and self.pca_noise > 0 and chw.shape[0] >= 3:
            alpha = np.array([rng.gauss(0, self.pca_noise) for _ in range(3)], np.float32)
            noise = (_PCA_EIGVEC @ (alpha * _PCA_EIGVAL)).reshape(3, 1, 1)
            chw = chw.astype(np.float32)
            chw[:3] = np.clip(chw[:3] + noise, 0, 255)
        return chw

    def _affine(self, image: Any, rng: random.Random) -> Any:
        """MXNet's random affine transform: shear, rotation, scale and aspect ratio drawn
        from their ranges, the result sized to the scaled image (within the size limits)
        and centred, filled with ``fill_value`` where nothing maps."""
        p = self._affine_params
        shear = rng.random() * p["max_shear_ratio"] * 2 - p["max_shear_ratio"]
        angle = rng.randint(-int(p["max_rotate_angle"]), int(p["max_rotate_angle"]))
        if p["rotate"] > 0:
            angle = p["rotate"]
        a, b = np.cos(np.radians(angle)), np.sin(np.radians(angle))
        scale = rng.random() * (p["max_random_scale"] - p["min_random_scale"]) + \
            p["min_random_scale"]
        if p["min_aspect_ratio"] is not None:
            low, high = p["min_aspect_ratio"], p["max_aspect_ratio"]
        else:
            low, high = 1 - p["max_aspect_ratio"], 1 + p["max_aspect_ratio"]
        ratio = rng.random() * (high - low) + low
        hs = 2 * scale / (1 + ratio)
        ws = ratio * hs
        cols, rows = image.size
        new_w = int(max(p["min_img_size"], min(p["max_img_size"], scale * cols)))
        new_h = int(max(p["min_img_size"], min(p["max_img_size"], scale * rows)))
        m = np.array([[hs * a - shear * b * ws, hs * b + shear * a * ws, 0.0],
                      [-b * ws, a * ws, 0.0], [0.0, 0.0, 1.0]])
        m[0, 2] = (new_w - (m[0, 0] * cols + m[0, 1] * rows)) / 2
        m[1, 2] = (new_h - (m[1, 0] * cols + m[1, 1] * rows)) / 2
        inverse = np.linalg.inv(m)  # Pillow maps output pixels back to input ones
        # OpenCV addresses pixels by their corners, Pillow by their centres
        inverse[:2, 2] += 0.5 - inverse[:2, :2] @ np.array([0.5, 0.5])
        fill = (self.fill_value,) * len(image.getbands())
        Image = _pil()
        resample = self._resample((cols, rows), (new_w, new_h), rng)
        if resample not in (Image.Resampling.NEAREST, Image.Resampling.BILINEAR,
                            Image.Resampling.BICUBIC):
            resample = Image.Resampling.BICUBIC  # Pillow warps with these three only
        return image.transform((max(new_w, 1), max(new_h, 1)), Image.Transform.AFFINE,
                               tuple(inverse[:2].ravel()), resample,
                               fillcolor=fill if len(fill) > 1 else fill[0])

    def _jitter(self, chw: np.ndarray, rng: random.Random) -> np.ndarray:
        alphas = [1.0 + rng.uniform(-v, v) for v in
                  (self.brightness, self.contrast, self.saturation)]
        steps = [0, 1, 2]
        rng.shuffle(steps)
        gray_coef = np.array([0.299, 0.587, 0.114], np.float32).reshape(3, 1, 1)
        for step in steps:
            alpha = alphas[step]
            if step == 0 and self.brightness > 0:
                chw *= alpha
            elif step == 1 and self.contrast > 0 and chw.shape[0] >= 3:
                gray_mean = float((chw[:3] * gray_coef).sum(axis=0).mean())
                chw = chw * alpha + (1 - alpha) * gray_mean
            elif step == 2 and self.saturation > 0 and chw.shape[0] >= 3:
                gray = (chw[:3] * gray_coef).sum(axis=0, keepdims=True)
                chw = chw * alpha + (1 - alpha) * gray
            np.clip(chw, 0, 255, out=chw)
        return chw

    # -- the mean image ------------------------------------------------------------------------
    def _load_mean_img(self, path: str) -> np.ndarray:
        if os.path.isfile(path):
            loaded = nd.load(path)
            array = next(iter(loaded.values())) if isinstance(loaded, dict) else loaded[0]
            mean = array.asnumpy().astype(np.float32)
            if mean.shape != self.data_shape:
                raise ImageRecordError(f"ImageRecordIter: mean_img {path!r} has shape "
                                       f"{mean.shape}, data_shape is {self.data_shape}")
            return mean
        logging.getLogger(__name__).info("ImageRecordIter: computing the mean image %s", path)
        total = np.zeros(self.data_shape, dtype=np.float64)
        with open(self.path_imgrec, "rb") as file:
            for record in range(len(self._offsets)):
                number = self._first_record + record
                header, encoded = recordio.unpack(self._record_bytes(file, record))
                image = self._decode(encoded)
                total += self._pixels(image, random.Random(0), number, augment=False)
        mean = (total / max(1, len(self._offsets))).astype(np.float32)
        nd.save(path, {"mean_img": nd.array(mean)})
        return mean


class ImageRecordIter(DataIter):
    """Batches of decoded, augmented images from a RecordIO file, as MXNet 1.x's
    ``mx.io.ImageRecordIter``: data ``(batch_size,) + data_shape`` float32 (CHW, RGB),
    label ``(batch_size,)`` (or ``(batch_size, label_width)``) float32.

    Per image: resize the shorter edge to ``resize`` (if > 0), pad by ``pad`` pixels
    of ``fill_value``, scale up an image smaller than the crop, crop ``data_shape``
    (at random with ``rand_crop``, else centred), mirror (always with ``mirror``,
    with probability 1/2 with ``rand_mirror``), jitter ``brightness``/``contrast``/
    ``saturation``, add ``pca_noise`` lighting, then ``(pixel - mean) / std * scale``
    per channel (``mean_img``: a mean image file, computed and saved on first use when
    missing), times a random contrast plus a random illumination
    (``max_random_contrast``, ``max_random_illumination``).  MXNet's affine
    augmentation (``max_rotate_angle``/``rotate``, ``max_shear_ratio``,
    ``min/max_random_scale``, ``min/max_aspect_ratio``, ``min/max_img_size``) runs
    after the resize, with MXNet's matrix; ``random_h``/``random_l``/``random_s`` shift
    hue, lightness and saturation in OpenCV's 8-bit HLS.  The random-sized crop
    parameters raise: they are not implemented.
    ``round_batch`` fills the last batch from the start of the epoch (its ``pad``
    says how many); without it, the last batch is zero-filled past the data.
    """

    _OUT_DTYPE: Any = np.float32
    _NORMALIZE = True

    _PIPELINE: Any = RecordPipeline

    def __init__(self, path_imgrec: str = "", data_shape: Any = None, batch_size: int = 0,
                 **kwargs: Any):
        self._pipeline = self._PIPELINE(self._OUT_DTYPE, self._NORMALIZE, path_imgrec,
                                        data_shape, batch_size, **kwargs)
        super().__init__(self._pipeline.batch_size)
        self.provide_data = self._pipeline.provide_data
        self.provide_label = self._pipeline.provide_label

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_pipeline":
            raise AttributeError(name)
        return getattr(self._pipeline, name)

    def reset(self) -> None:
        """Start the next epoch (a new shuffle, when ``shuffle``)."""
        self._pipeline.reset()

    def close(self) -> None:
        """Stop the worker threads and drop prefetched batches."""
        self._pipeline.close()

    def __del__(self) -> None:
        pipeline = self.__dict__.get("_pipeline")
        if pipeline is not None:
            pipeline.close()

    def next(self) -> DataBatch:
        """The next batch; StopIteration at the end of the epoch."""
        return self._pipeline.next()

    def iter_next(self) -> bool:
        """Move to the next batch; False at the end of the epoch."""
        return self._pipeline.iter_next()

    def getdata(self) -> Any:
        """The current batch's data array (one NDArray, as MXNet's C++ iterators give)."""
        return self._pipeline.getdata()

    def getlabel(self) -> Any:
        """The current batch's label array (one NDArray)."""
        return self._pipeline.getlabel()

    def getpad(self) -> int | None:
        """How many examples at the end of the current batch only pad it."""
        return self._pipeline.getpad()

    def getindex(self) -> Any:
        """The record numbers (in the file) of the current batch's examples."""
        return self._pipeline.getindex()


class ImageRecordUInt8Iter(ImageRecordIter):
    """:class:`ImageRecordIter` without normalization: uint8 batches of the cropped,
    mirrored pixels."""

    _OUT_DTYPE = np.uint8
    _NORMALIZE = False


class ImageRecordInt8Iter(ImageRecordIter):
    """:class:`ImageRecordIter` without normalization, as int8 (pixel values wrap as
    MXNet's cast does)."""

    _OUT_DTYPE = np.int8
    _NORMALIZE = False


def _shift_hls(rgb: np.ndarray, dh: int, dl: int, ds: int) -> np.ndarray:
    """MXNet's HSL jitter on a CHW RGB array of 0-255 values: to OpenCV's 8-bit HLS
    (hue 0-180, lightness and saturation 0-255), add the shifts, clamp, and back."""
    r, g, b = (rgb / 255.0).astype(np.float64)
    high, low = np.maximum(np.maximum(r, g), b), np.minimum(np.minimum(r, g), b)
    light = (high + low) / 2
    diff = high - low
    flat = diff == 0
    safe = np.where(flat, 1, diff)
    sat = np.where(flat, 0, np.where(light < 0.5, diff / np.where(flat, 1, high + low),
                                     diff / np.where(flat, 1, 2 - high - low)))
    hue = np.where(high == r, (g - b) / safe * 60,
                   np.where(high == g, (b - r) / safe * 60 + 120, (r - g) / safe * 60 + 240))
    hue = np.where(flat, 0, hue % 360)
    hue8 = np.clip(np.rint(hue / 2) + dh, 0, 180)
    light = np.clip(np.rint(light * 255) + dl, 0, 255) / 255
    sat = np.clip(np.rint(sat * 255) + ds, 0, 255) / 255
    hue = hue8 * 2 % 360 / 60
    chroma = (1 - np.abs(2 * light - 1)) * sat
    second = chroma * (1 - np.abs(hue % 2 - 1))
    base = light - chroma / 2
    sector = np.floor(hue).astype(int)
    zeros = np.zeros_like(chroma)
    table = [(chroma, second, zeros), (second, chroma, zeros), (zeros, chroma, second),
             (zeros, second, chroma), (second, zeros, chroma), (chroma, zeros, second)]
    out = np.zeros((3,) + chroma.shape)
    for k, channels in enumerate(table):
        mask = sector == k
        for c in range(3):
            out[c][mask] = channels[c][mask]
    return np.clip(np.rint((out + base) * 255), 0, 255).astype(np.float32)


def _read_image_list(path: str, label_width: int) -> dict[int, np.ndarray]:
    labels = {}
    try:
        with open(path) as file:
            for number, line in enumerate(file, 1):
                fields = line.strip().split("\t")
                if fields == [""]:
                    continue
                values = fields[1:-1]
                if len(values) != label_width:
                    raise ImageRecordError(
                        f"ImageRecordIter: line {number} of {path!r} has {len(values)} "
                        f"labels but label_width={label_width}")
                labels[int(fields[0])] = np.array(values, dtype=np.float32)
    except OSError as error:
        raise ImageRecordError(f"ImageRecordIter: cannot read path_imglist {path!r}: "
                               f"{error.strerror}") from error
    return labels
