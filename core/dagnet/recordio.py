"""``dagnet.recordio``: MXNet's RecordIO files (``.rec``, with an optional ``.idx``).

The bytes are those of dmlc-core's RecordIO, so files written by MXNet 1.x read
here and the reverse.  A record is stored as one or more chunks, each::

    uint32 magic = 0xced7230a | uint32 lrec | payload | zero padding to 4 bytes

with ``lrec = cflag << 29 | length``.  A record whose payload holds the magic
number at a 4-byte aligned offset is cut there (the magic itself is dropped and
restored on reading): cflag 0 is a whole record, 1 its first chunk, 2 a middle
one, 3 its last.  An ``.idx`` file has one ``key<TAB>byte offset`` line per
record.

A record of an image data set starts with an :data:`IRHeader` packed by
:func:`pack` (``flag``: how many float32 labels follow the header, 0 when the
single label sits in the header itself; ``label``; ``id``; ``id2``), then the
encoded image (:func:`pack_img`).

>>> import dagnet as mx, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "tmp.rec")
>>> with mx.recordio.MXRecordIO(path, "w") as writer:
...     for i in range(3):
...         writer.write(b"record_%d" % i)
>>> reader = mx.recordio.MXRecordIO(path, "r")
>>> reader.read(), reader.read(), reader.read(), reader.read()
(b'record_0', b'record_1', b'record_2', None)
"""

from __future__ import annotations

import numbers
import os
import struct
from collections import namedtuple
from typing import Any

import numpy as np

from ._errors import DagnetError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "RecordIOError", "pack", "unpack",
           "pack_img", "unpack_img", "record_offsets"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_CHUNK_HEADER = struct.Struct("<II")
_MAX_LENGTH = 1 << 29
_IR_FORMAT = struct.Struct("<IfQQ")
IR_SIZE = _IR_FORMAT.size


class RecordIOError(DagnetError, ValueError):
    """A RecordIO file that cannot be read (truncated, corrupt, not RecordIO) or a
    RecordIO object used the wrong way (writing a reader, a missing ``.idx``)."""


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """The header :func:`pack` puts in front of a record: ``flag`` (the number
of float32 labels that follow the header; 0 when ``label`` is one number), ``label``
(a float or an array of floats), ``id`` and ``id2`` (unsigned 64-bit integers, usually
the record's key)."""


class MXRecordIO:
    """Sequential reading (``flag='r'``) or writing (``flag='w'``) of a RecordIO file.

    ``read()`` gives the next record's bytes, or None at the end of the file; a
    truncated or corrupt file raises :class:`RecordIOError` naming the file, the
    byte offset and the record's index.  Opened in one process, an object read
    from another raises (as MXNet's does): pickle it instead, which reopens it.
    """

    def __init__(self, uri: str | os.PathLike[str], flag: str):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid: int | None = None
        self.is_open = False
        self.writable = flag == "w"
        self._file: Any = None
        self._record_index = 0
        self.open()

    # -- opening and closing -------------------------------------------------------------
    def open(self) -> None:
        """Open the file: truncate it for writing, or go to its start for reading."""
        if self.flag not in ("r", "w"):
            raise RecordIOError(f"MXRecordIO: invalid flag {self.flag!r} for {self.uri!r}; "
                                f"expected 'r' (read) or 'w' (write)")
        try:
            self._file = open(self.uri, "rb" if self.flag == "r" else "wb")  # noqa: SIM115
        except OSError as error:
            raise RecordIOError(f"MXRecordIO: cannot open {self.uri!r} for "
                                f"{'reading' if self.flag == 'r' else 'writing'}: "
                                f"{error.strerror}") from error
        self.writable = self.flag == "w"
        self.pid = os.getpid()
        self.is_open = True
        self._record_index = 0

    def close(self) -> None:
        """Close the file (written records are flushed); closing twice does nothing."""
        if not self.is_open:
            return
        self._file.close()
        self._file = None
        self.is_open = False
        self.pid = None

    def reset(self) -> None:
        """Go back to the first record; a writer starts the file over, empty."""
        self.close()
        self.open()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the file object may be gone already
            pass

    def __enter__(self) -> MXRecordIO:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        is_open = self.is_open
        position = self._file.tell() if is_open and not self.writable else None
        self.close()
        state = dict(self.__dict__)
        state["is_open"] = is_open
        state["_file"] = None
        state["_position"] = position
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        position = state.pop("_position", None)
        self.__dict__.update(state)
        was_open = self.is_open
        self.is_open = False
        if was_open:
            self.open()
            if position:
                self._file.seek(position)

    def _check_pid(self, allow_reset: bool = False) -> None:
        if self.pid != os.getpid():
            if allow_reset:
                self.reset()
            else:
                raise RecordIOError(
                    f"MXRecordIO {self.uri!r} was opened in process {self.pid} and is used "
                    f"in process {os.getpid()}; open it again in this process (or pickle it "
                    f"to send it there)")

    def _need_open(self, writing: bool) -> None:
        if not self.is_open:
            raise RecordIOError(f"MXRecordIO {self.uri!r} is closed; call open() first")
        if writing != self.writable:
            raise RecordIOError(
                f"MXRecordIO {self.uri!r} was opened with flag {self.flag!r}; "
                f"{'writing needs' if writing else 'reading needs'} "
                f"flag {'w' if writing else 'r'!r}")

    # -- records -------------------------------------------------------------------------
    def write(self, buf: bytes | bytearray | memoryview) -> None:
        """Append ``buf`` as one record."""
        self._need_open(writing=True)
        self._check_pid(allow_reset=False)
        if not isinstance(buf, (bytes, bytearray, memoryview)):
            raise RecordIOError(f"MXRecordIO.write takes bytes, got {type(buf).__name__}; "
                                f"encode text first (s.encode('utf-8'))")
        self._file.write(encode_record(bytes(buf)))
        self._record_index += 1

    def read(self) -> bytes | None:
        """The next record's bytes, or None after the last record."""
        self._need_open(writing=False)
        self._check_pid(allow_reset=False)
        record = read_record(self._file, self.uri, self._record_index)
        if record is not None:
            self._record_index += 1
        return record

    def tell(self) -> int:
        """The byte offset where the next record will be written (or read)."""
        if not self.is_open:
            raise RecordIOError(f"MXRecordIO {self.uri!r} is closed; call open() first")
        return self._file.tell()


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with its ``.idx``: records by key, in any order.

    ``write_idx(key, buf)`` appends a record and its ``key<TAB>offset`` line;
    ``read_idx(key)`` seeks and reads.  ``keys`` lists the keys in file order and
    ``idx`` maps each key to its byte offset.
    """

    def __init__(self, idx_path: str | os.PathLike[str], uri: str | os.PathLike[str],
                 flag: str, key_type: type = int):
        self.idx_path = os.fspath(idx_path)
        self.idx: dict[Any, int] = {}
        self.keys: list[Any] = []
        self.key_type = key_type
        self.fidx: Any = None
        super().__init__(uri, flag)

    def open(self) -> None:
        """Open the record file and its index (reading the index in full)."""
        if self.flag == "r" and not os.path.isfile(self.idx_path):
            raise RecordIOError(
                f"MXIndexedRecordIO: index file {self.idx_path!r} (for {os.fspath(self.uri)!r}) "
                f"does not exist; make one with `dagnet im2rec` or read the .rec "
                f"sequentially with MXRecordIO")
        super().open()
        self.idx = {}
        self.keys = []
        self.fidx = open(self.idx_path, self.flag)  # noqa: SIM115
        if not self.writable:
            for number, line in enumerate(self.fidx, 1):
                fields = line.strip().split("\t")
                if fields == [""]:
                    continue
                try:
                    key, offset = self.key_type(fields[0]), int(fields[1])
                except (ValueError, IndexError) as error:
                    raise RecordIOError(
                        f"MXIndexedRecordIO: line {number} of {self.idx_path!r} is "
                        f"{line.rstrip()!r}; expected 'key<TAB>byte offset'") from error
                self.idx[key] = offset
                self.keys.append(key)

    def close(self) -> None:
        """Close the record file and the index."""
        if not self.is_open:
            return
        super().close()
        self.fidx.close()
        self.fidx = None

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def seek(self, idx: Any) -> None:
        """Move the reader to the record with key ``idx``."""
        self._need_open(writing=False)
        self._check_pid(allow_reset=True)
        try:
            offset = self.idx[idx]
        except KeyError:
            raise RecordIOError(
                f"MXIndexedRecordIO: no record with key {idx!r} in {self.idx_path!r} "
                f"({len(self.keys)} keys)") from None
        self._file.seek(offset)
        self._record_index = idx  # errors then name the record by its key

    def tell(self) -> int:
        """The byte offset where the next record will be written."""
        return super().tell()

    def read_idx(self, idx: Any) -> bytes:
        """The record with key ``idx``."""
        self.seek(idx)
        record = self.read()
        if record is None:
            raise RecordIOError(f"MXIndexedRecordIO: key {idx!r} points at byte "
                                f"{self.idx[idx]}, past the end of {self.uri!r}")
        return record

    def write_idx(self, idx: Any, buf: bytes | bytearray | memoryview) -> None:
        """Append ``buf`` as the record with key ``idx``."""
        key = self.key_type(idx)
        offset = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{offset}\n")
        self.idx[key] = offset
        self.keys.append(key)


# -- the chunk format ------------------------------------------------------------------------
def encode_record(payload: bytes) -> bytes:
    """The bytes dmlc-core writes for one record: chunks cut at aligned magic numbers."""
    length = len(payload)
    if length >= _MAX_LENGTH:
        raise RecordIOError(f"a RecordIO record holds less than 2**29 bytes; got {length}")
    pieces = []
    start = 0
    aligned_end = length - length % 4
    search = payload.find(_MAGIC_BYTES)
    while 0 <= search < aligned_end:
        if search % 4 == 0 and search + 4 <= aligned_end:
            cflag = 1 if start == 0 else 2
            pieces.append(_CHUNK_HEADER.pack(_MAGIC, cflag << 29 | (search - start)))
            pieces.append(payload[start:search])
            start = search + 4
            search = payload.find(_MAGIC_BYTES, start)
        else:
            search = payload.find(_MAGIC_BYTES, search + 1)
    cflag = 3 if start else 0
    pieces.append(_CHUNK_HEADER.pack(_MAGIC, cflag << 29 | (length - start)))
    pieces.append(payload[start:])
    pieces.append(b"\0" * (-length % 4))
    return b"".join(pieces)


def _chunk_header(header: bytes, uri: str, index: int, offset: int) -> tuple[int, int]:
    """``(cflag, length)`` of the 8-byte chunk header read at ``offset``, checked; ``uri``
    and ``index`` (the record's position) name the place in errors."""
    if len(header) < 8:
        raise RecordIOError(
            f"RecordIO file {uri!r} is truncated: record {index} at byte {offset} has "
            f"{len(header)} of its 8 header bytes")
    magic, lrec = _CHUNK_HEADER.unpack(header)
    if magic != _MAGIC:
        raise RecordIOError(
            f"RecordIO file {uri!r} is corrupt at byte {offset} (record {index}): expected "
            f"the magic number 0xced7230a, found {magic:#010x}; the file is damaged or not "
            f"a RecordIO file")
    return lrec >> 29, lrec & (_MAX_LENGTH - 1)


def read_record(file: Any, uri: str, index: int) -> bytes | None:
    """Read one record from a binary file at a record boundary; None at the end.

    ``uri`` and ``index`` (the record's position in the file) only name the record
    in errors.
    """
    parts = []
    while True:
        offset = file.tell()
        header = file.read(8)
        if not header and not parts:
            return None
        cflag, length = _chunk_header(header, uri, index, offset)
        padded = length + (-length % 4)
        body = file.read(padded)
        if len(body) < padded:
            raise RecordIOError(
                f"RecordIO file {uri!r} is truncated: record {index} at byte {offset} "
                f"declares {length} bytes, only {len(body)} remain")
        if cflag in (0, 1) and parts:
            raise RecordIOError(
                f"RecordIO file {uri!r} is corrupt at byte {offset} (record {index}): a new "
                f"record starts before the last chunk of the one before it")
        parts.append(body[:length])
        if cflag in (0, 3):
            return _MAGIC_BYTES.join(parts) if len(parts) > 1 else parts[0]
        if cflag == 2 and len(parts) == 1:
            raise RecordIOError(
                f"RecordIO file {uri!r} is corrupt at byte {offset} (record {index}): "
                f"a middle chunk with no first chunk before it")


def record_offsets(uri: str | os.PathLike[str]) -> list[int]:
    """The byte offset of every record in a ``.rec`` file, read from the chunk headers
    alone (payloads are skipped): what an ``.idx`` would hold, for files without one."""
    uri = os.fspath(uri)
    offsets = []
    size = os.path.getsize(uri)
    with open(uri, "rb") as file:
        offset = 0
        in_record = False
        while offset < size:
            cflag, length = _chunk_header(file.read(8), uri, len(offsets), offset)
            if not in_record:
                offsets.append(offset)
            in_record = cflag in (1, 2)
            offset += 8 + length + (-length % 4)
            if offset > size:
                raise RecordIOError(
                    f"RecordIO file {uri!r} is truncated: record {len(offsets) - 1} "
                    f"declares {length} bytes, past the end of the file ({size} bytes)")
            file.seek(offset)
    return offsets


# -- headers and images ----------------------------------------------------------------------
def pack(header: IRHeader | tuple[Any, Any, Any, Any], s: bytes) -> bytes:
    """A record of ``header`` (an :data:`IRHeader` or a 4-tuple) followed by ``s``.

    A numeric label goes in the header (flag 0); an array of labels is stored as
    float32 after the header, with ``flag`` set to their number.
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
        labels = b""
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        labels = label.tobytes()
    return _IR_FORMAT.pack(*header) + labels + bytes(s)


def unpack(s: bytes) -> tuple[IRHeader, bytes]:
    """Split a record made by :func:`pack` into its :data:`IRHeader` and payload."""
    if len(s) < IR_SIZE:
        raise RecordIOError(f"recordio.unpack: a record of {len(s)} bytes is shorter than "
                            f"the {IR_SIZE}-byte IRHeader; it was not made by pack()")
    header = IRHeader(*_IR_FORMAT.unpack_from(s))
    s = s[IR_SIZE:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise RecordIOError(f"recordio.unpack: the header declares {header.flag} labels "
                                f"but the record holds {len(s)} bytes after it")
        label = np.frombuffer(s, dtype=np.float32, count=header.flag)
        header = header._replace(label=label)
        s = s[4 * header.flag:]
    return header, s


def pack_img(header: IRHeader | tuple[Any, Any, Any, Any], img: Any, quality: int = 95,
             img_fmt: str = ".jpg") -> bytes:
    """:func:`pack` ``header`` with ``img`` (a BGR or gray uint8 numpy array, as OpenCV
    holds images) encoded as ``img_fmt`` ('.jpg' with ``quality`` 1-100, or '.png' with
    ``quality`` its compression level 0-9)."""
    from .image import encode_image

    array = np.asarray(img)
    if array.ndim == 3 and array.shape[2] == 3:
        array = array[:, :, ::-1]
    return pack(header, encode_image(array, img_fmt, quality))


def unpack_img(s: bytes, iscolor: int = -1) -> tuple[IRHeader, np.ndarray]:
    """Split a record made by :func:`pack_img` into its header and the decoded image, a
    numpy array in OpenCV's layout: BGR ``(h, w, 3)`` for colour, ``(h, w)`` for gray;
    ``iscolor`` 1 forces colour, 0 gray, -1 keeps the file's."""
    from .image import decode_image

    header, payload = unpack(s)
    array = decode_image(payload, flag=iscolor)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    elif array.ndim == 3 and array.shape[2] >= 3:
        array = np.ascontiguousarray(array[:, :, 2::-1])
    return header, array
