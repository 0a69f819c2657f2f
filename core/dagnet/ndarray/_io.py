"""Saving and loading NDArrays in MXNet 1.x's binary NDArray-list format (``.params``).

``dagnet.nd.save`` writes, and ``dagnet.nd.load`` / ``load_frombuffer`` read, the files
of MXNet 1.x's ``mx.nd.save``, ``save_checkpoint`` and gluon ``save_parameters``.  All
numbers are little-endian::

    file   := uint64 0x112 (list magic), uint64 0 (reserved),
              uint64 count, count x record,
              uint64 name_count (0 for a list, else count), name_count x string
    string := uint64 length, length bytes (UTF-8)
    record := uint32 magic 0xF993FAC9 (version 2), int32 storage type (0: dense),
              shape, int32 dev_type, int32 dev_id, int32 type flag, the raw values
              (C order, ``prod(shape) * itemsize`` bytes)
    shape  := int32 ndim, ndim x int64

Type flags are mshadow's: 0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8,
6 int64, 7 bool, 8 int16, 9 uint16, 10 uint32, 11 uint64 (12, bfloat16, is refused).
MXNet 1.9.1 reads only flags 0-7 (and 12): it refuses a whole file holding an array of
flags 8-11 ("Unknown type enum"), which MXNet 2.x reads; cast such arrays (say to int32
or int64) before saving a file for MXNet 1.x.

Saving writes version-2 records with the CPU context (dev_type 1, dev_id 0), as MXNet
1.x writes them by default; arrays on other devices are written from host copies.  The
bytes are those MXNet 1.9.1 writes for the same arrays.  A 0-d array is the exception:
MXNet writes a version-2 record with ndim 0 that it cannot read back, so when any array
is 0-d dagnet writes every record as version 3 (magic 0xF993FACA), as MXNet does under
NumPy-shape semantics; MXNet loads such a file inside ``with mx.np_shape(True):``.
Under NumPy-shape semantics every record is version 3 (dense arrays only), and, as in
MXNet, a version-3 record loads only under NumPy-shape semantics and an older one only
outside them (unless they are on for every thread, ``set_np_shape(2)``).

A sparse array (storage type 1, row_sparse, or 2, csr) is a version-2 record whose
storage type is followed by its storage shape (the shape of its stored values);
after the type flag come, per auxiliary array (row_sparse: indices; csr: indptr,
indices), its type flag and shape; then the values, then each auxiliary array's
bytes.  dagnet writes and reads these as MXNet does.

Loading also reads version-3 records (ndim 0 is a 0-d array), version-2 records with
ndim 0 followed by a value (MXNet 1.5+ writes these for 0-d arrays), version-1 records
(magic 0xF993FAC8, no storage type) and the older records without a magic (uint32
ndim, uint32 dims).  Records of an uninitialised array and truncated or corrupt
bytes raise :class:`NDArrayFileError` (a ``ValueError``); the context in a record is
ignored (arrays go to ``ctx``).
Files written by dagnet before this format (numpy ``.npz`` archives with a
``__dagnet__`` manifest) still load.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._errors import DagnetError
from ..util import is_np_shape, is_np_shape_global
from ._creation import array
from ._ndarray import NDArray

__all__ = ["save", "load", "load_frombuffer", "NDArrayFileError", "dumps_raw", "loads_raw"]


class NDArrayFileError(DagnetError, ValueError):
    """Bytes that are not an NDArray file dagnet can read (truncated, corrupt, or holding
    arrays it does not support): ``mx.base.MXNetError`` and ``ValueError``, as MXNet's
    loader raises."""

_LIST_MAGIC = 0x112
_V1_MAGIC = 0xF993FAC8
_V2_MAGIC = 0xF993FAC9
_V3_MAGIC = 0xF993FACA
_CPU_DEV_TYPE = 1
_DEV_TYPES = (1, 2, 3, 5)  # cpu, gpu, cpu_pinned, cpu_shared
# mshadow type flag -> dtype (the flag is the index)
_DTYPES = tuple(np.dtype(name) for name in (
    "float32", "float64", "float16", "uint8", "int32", "int8", "int64", "bool",
    "int16", "uint16", "uint32", "uint64"))
_FLAGS = {dtype: flag for flag, dtype in enumerate(_DTYPES)}
_BFLOAT16_FLAG = 12
_ITEMSIZES = {flag: dtype.itemsize for flag, dtype in enumerate(_DTYPES)} | {_BFLOAT16_FLAG: 2}
_SPARSE = {1: ("row_sparse", 1), 2: ("csr", 2)}  # storage type -> (name, aux arrays)


def _items(data: Any) -> tuple[list[str], list[NDArray]]:
    """The names (empty for a list) and arrays to save, checked."""
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, Mapping):
        names = list(data)
        if not all(isinstance(n, str) for n in names):
            raise TypeError("save: dict keys must be strings")
        arrays = [data[n] for n in names]
    elif isinstance(data, (list, tuple)):
        names, arrays = [], list(data)
    else:
        raise TypeError(f"save: expected an NDArray, a list of NDArrays or a dict of str to "
                        f"NDArray, got {type(data).__name__}")
    for index, item in enumerate(arrays):
        if not isinstance(item, NDArray):
            label = repr(names[index]) if names else str(index)
            raise TypeError(f"save: item {label} is {type(item).__name__}, not an NDArray")
    return names, arrays


def _record_bytes(host: np.ndarray, magic: int) -> list[bytes]:
    """One dense array record: header, CPU context, type flag, values."""
    flag = _FLAGS.get(host.dtype)
    if flag is None:
        raise TypeError(f"save: dtype {host.dtype} has no MXNet type flag")
    return [struct.pack(f"<Iii{host.ndim}q", magic, 0, host.ndim, *host.shape),
            struct.pack("<iii", _CPU_DEV_TYPE, 0, flag),
            np.ascontiguousarray(host, host.dtype.newbyteorder("<")).tobytes()]


def _sparse_record_bytes(array: NDArray) -> list[bytes]:
    """One sparse array record (see the module docstring)."""
    from ._sparse import components_on_host

    values, aux = components_on_host(array)
    flag = _FLAGS.get(values.dtype)
    if flag is None:
        raise TypeError(f"save: dtype {values.dtype} has no MXNet type flag")
    stype = 1 if array.stype == "row_sparse" else 2

    def shape_bytes(shape: tuple) -> bytes:
        return struct.pack(f"<i{len(shape)}q", len(shape), *shape)

    out = [struct.pack("<Ii", _V2_MAGIC, stype), shape_bytes(values.shape),
           shape_bytes(array.shape), struct.pack("<iii", _CPU_DEV_TYPE, 0, flag)]
    for part in aux:
        out.append(struct.pack("<i", _FLAGS[part.dtype]) + shape_bytes(part.shape))
    for part in [values, *aux]:
        out.append(np.ascontiguousarray(part, part.dtype.newbyteorder("<")).tobytes())
    return out


def dumps_raw(array: NDArray) -> bytes:
    """One array as the raw record MXNet pickles an NDArray to
    (``MXNDArraySaveRawBytes``)."""
    host = array.asnumpy()
    return b"".join(_record_bytes(host, _V3_MAGIC if host.ndim == 0 else _V2_MAGIC))


def loads_raw(buf: bytes | bytearray | memoryview) -> np.ndarray:
    """The host values of a raw record :func:`dumps_raw` (or MXNet) wrote; the device
    it names is not needed."""
    reader = _Reader(buf)
    try:
        record = _record(reader)
    except _Truncated:
        raise NDArrayFileError(f"the NDArray state is truncated (at byte {reader.pos} of "
                               f"{len(reader.buf)})") from None
    except _BadFile as error:
        raise NDArrayFileError(f"the NDArray state is not an NDArray record: {error}") from None
    if isinstance(record, str):
        raise NDArrayFileError(f"the NDArray state holds a {record} array, which dagnet does "
                               f"not support")
    if isinstance(record, tuple):
        raise NDArrayFileError(f"the NDArray state holds a {record[0]} array; unpickle it "
                               f"as a sparse array")
    return record


def _dumps(names: list[str], arrays: list[NDArray]) -> bytes:
    """The bytes of an NDArray-list file holding ``arrays`` under ``names``."""
    # waits for pending writes; host copies (sparse arrays are written as they are stored)
    np_shape = is_np_shape()
    if np_shape and any(item.stype != "default" for item in arrays):
        raise NDArrayFileError("mx.nd.save: sparse arrays cannot be saved under NumPy shape "
                               "semantics; save them outside `with mx.np_shape(True):` or "
                               "convert them with .tostype('default')")
    hosts = [item if item.stype != "default" else item.asnumpy() for item in arrays]
    zero_dim = any(isinstance(h, np.ndarray) and h.ndim == 0 for h in hosts)
    magic = _V3_MAGIC if np_shape or zero_dim else _V2_MAGIC
    out = [struct.pack("<QQQ", _LIST_MAGIC, 0, len(hosts))]
    for host in hosts:
        out.extend(_record_bytes(host, magic) if isinstance(host, np.ndarray)
                   else _sparse_record_bytes(host))
    out.append(struct.pack("<Q", len(names)))
    for name in names:
        encoded = name.encode("utf-8")
        out.append(struct.pack("<Q", len(encoded)) + encoded)
    return b"".join(out)


def save(fname: str | os.PathLike, data: NDArray | Sequence[NDArray] | Mapping[str, NDArray]
         ) -> None:
    """Save one NDArray, a list of them, or a dict of name -> NDArray to ``fname`` in
    MXNet 1.x's binary format (see the module docstring); MXNet 1.x's ``mx.nd.load``
    reads the file.

    Waits for the arrays' pending writes.  :func:`load` returns a list for a single
    array or a list, and a dict for a dict.  The file name is used as given.
    """
    payload = _dumps(*_items(data))
    with open(os.fspath(fname), "wb") as stream:
        stream.write(payload)


class _Truncated(Exception):
    """The buffer ended inside a field."""


class _Reader:
    """Little-endian fields read one after another from a buffer."""

    def __init__(self, buf: bytes | memoryview) -> None:
        self.buf = memoryview(buf).cast("B")
        self.pos = 0

    def take(self, size: int) -> memoryview:
        if size < 0 or self.pos + size > len(self.buf):
            raise _Truncated
        self.pos += size
        return self.buf[self.pos - size:self.pos]

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))

    def shape(self, dim_format: str = "q", ndim: int | None = None) -> tuple[int, ...] | None:
        """A shape (int32 ndim unless given, then the dims); None for ndim < 0."""
        if ndim is None:
            (ndim,) = self.unpack("i")
        return None if ndim < 0 else self.unpack(f"{ndim}{dim_format}")


class _BadFile(Exception):
    """The buffer is not a readable NDArray-list file; the message says why."""


class _WrongShapeSemantics(Exception):
    """A record saved under the other NumPy-shape semantics than those in force."""


def _check_shape_semantics(magic: int) -> None:
    """MXNet's rule: version-3 records (saved under NumPy shape semantics) load only
    under them, older ones only outside them unless they are on for every thread."""
    if magic == _V3_MAGIC and not is_np_shape():
        raise _WrongShapeSemantics(
            "it was saved under NumPy shape semantics and must be loaded under them: "
            "load it inside `with mx.np_shape(True):` (or under @mx.use_np_shape)")
    if magic != _V3_MAGIC and is_np_shape() and not is_np_shape_global():
        raise _WrongShapeSemantics(
            "it was not saved under NumPy shape semantics but is being loaded under them: "
            "load it inside `with mx.np_shape(False):`")


def _record(reader: _Reader, in_file: bool = False) -> np.ndarray | str | tuple:
    """One array record: its values, ``(stype, shape, values, aux)`` for a sparse array,
    or what dagnet cannot hold ("bfloat16").  A record ``in_file`` must match the NumPy
    shape semantics in force (a pickled array's record need not)."""
    (magic,) = reader.unpack("I")
    sparse = None
    if magic in (_V2_MAGIC, _V3_MAGIC):
        (stype,) = reader.unpack("i")
        if stype != 0:
            if stype not in _SPARSE:
                raise _BadFile(f"unknown storage type {stype}")
            sparse = _SPARSE[stype]
            storage_shape = reader.shape()
        shape = reader.shape()
        if shape is None:  # ndim -1: MXNet 1.5+'s uninitialised array
            raise _BadFile("it holds an uninitialised NDArray (no shape)")
        if shape == () and magic == _V2_MAGIC and sparse is None:
            # a 0-d array (MXNet 1.5+) is followed by a context; MXNet < 1.5 wrote an
            # uninitialised array as ndim 0 and nothing more
            (dev_type,) = reader.unpack("i")
            reader.pos -= 4
            if dev_type not in _DEV_TYPES:
                raise _BadFile("it holds an uninitialised NDArray (no shape)")
    else:
        shape = reader.shape("q") if magic == _V1_MAGIC else reader.shape("I", ndim=magic)
        if not shape:
            raise _BadFile("it holds an uninitialised NDArray (no shape)")
    if any(dim < 0 for dim in shape):
        raise _BadFile(f"it holds an NDArray of unknown shape {shape}")
    if in_file:
        _check_shape_semantics(magic)
    _dev_type, _dev_id, flag = reader.unpack("iii")
    if sparse is not None:
        aux = [(reader.unpack("i")[0], reader.shape()) for _ in range(sparse[1])]
        if storage_shape is None or any(s is None or f not in _ITEMSIZES
                                        for f, s in [(flag, ())] + aux):
            raise _BadFile("a sparse record is malformed")
        if math.prod(storage_shape) == 0 and aux[-1][1]:
            # MXNet rebuilds an unset storage shape from the indices, as its loader does
            storage_shape = (aux[-1][1][:1] + shape[1:] if sparse[0] == "row_sparse"
                             else aux[-1][1])
        if _BFLOAT16_FLAG in [flag] + [f for f, _ in aux]:
            for part_flag, part_shape in [(flag, storage_shape)] + aux:
                reader.take(math.prod(part_shape) * _ITEMSIZES[part_flag])
            return "bfloat16"
        parts = []
        for part_flag, part_shape in [(flag, storage_shape)] + aux:
            dtype = _DTYPES[part_flag]
            raw = reader.take(math.prod(part_shape) * dtype.itemsize)
            parts.append(np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype)
                         .reshape(part_shape))
        return (sparse[0], tuple(shape), parts[0], parts[1:])
    if flag not in _ITEMSIZES:
        raise _BadFile(f"unknown type flag {flag}")
    if flag == _BFLOAT16_FLAG:
        reader.take(math.prod(shape) * _ITEMSIZES[flag])
        return "bfloat16"
    dtype = _DTYPES[flag]
    raw = reader.take(math.prod(shape) * dtype.itemsize)
    return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(shape)


def _parse(buf: bytes | memoryview, source: str) -> tuple[list[str], list[np.ndarray]]:
    """Names and host arrays of an NDArray-list file; ``source`` names it in errors."""
    reader = _Reader(buf)
    expected = ("an MXNet/dagnet NDArray file (as written by mx.nd.save: 8-byte magic "
                "0x112, then the arrays)")
    try:
        (magic,) = reader.unpack("Q")
        if magic != _LIST_MAGIC:
            raise _BadFile(f"it starts with {bytes(reader.buf[:8]).hex()}, not the magic 0x112")
        _reserved, count = reader.unpack("QQ")
        records = []
        for index in range(count):
            try:
                records.append(_record(reader, in_file=True))
            except _BadFile as error:
                raise _BadFile(f"array {index}: {error}") from None
        (name_count,) = reader.unpack("Q")
        names = [bytes(reader.take(reader.unpack("Q")[0])).decode("utf-8")
                 for _ in range(name_count)]
        if name_count not in (0, count):
            raise _BadFile(f"it has {count} arrays but {name_count} names")
    except _Truncated:
        raise NDArrayFileError(f"{source} is not {expected}: it ends early (truncated at byte "
                         f"{reader.pos} of {len(reader.buf)})") from None
    except (_BadFile, UnicodeDecodeError) as error:
        raise NDArrayFileError(f"{source} is not {expected}: {error}") from None
    except _WrongShapeSemantics as error:
        raise NDArrayFileError(f"cannot load {source}: {error}") from None
    unsupported = {(f"{names[i]!r}" if names else f"array {i}") + f" ({kind})": kind
                   for i, kind in enumerate(records) if isinstance(kind, str)}
    if unsupported:
        raise NDArrayFileError(
            f"{source} holds arrays dagnet does not support (it has no bfloat16): "
            f"{', '.join(unsupported)}; with MXNet, cast bfloat16 arrays "
            f"(arr.astype('float32')) and save them again with mx.nd.save")
    return names, records


def _load_npz(stream: Any, source: str) -> tuple[list[str], list[np.ndarray]]:
    """Names and arrays of a file from an earlier dagnet: an ``.npz`` with a
    ``__dagnet__`` JSON manifest and the arrays ``a0``, ``a1``, ..."""
    with np.load(stream, allow_pickle=False) as archive:
        if "__dagnet__" not in archive.files:
            raise NDArrayFileError(f"{source} is an .npz archive without a dagnet manifest, not an "
                             f"NDArray file; read it with numpy.load")
        manifest = json.loads(str(archive["__dagnet__"]))
        arrays = [archive[f"a{i}"] for i in range(len(archive.files) - 1)]
    return (manifest["names"] if manifest["kind"] == "dict" else []), arrays


def _result(names: list[str], hosts: list[Any], ctx: Any
            ) -> list[NDArray] | dict[str, NDArray]:
    from ..context import cpu

    where = ctx if ctx is not None else cpu()
    arrays = [array(host, ctx=where, dtype=host.dtype) if isinstance(host, np.ndarray)
              else _sparse_result(host, where) for host in hosts]
    return dict(zip(names, arrays)) if names else arrays


def _sparse_result(record: tuple, ctx: Any) -> NDArray:
    from ._sparse_creation import from_host_components

    stype, shape, values, aux = record
    try:
        return from_host_components(stype, shape, values, aux, ctx)
    except ValueError as error:
        raise NDArrayFileError(f"a {stype} record is malformed: {error}") from None


def load(fname: str | os.PathLike, ctx: Any = None) -> list[NDArray] | dict[str, NDArray]:
    """Load an NDArray file written by MXNet 1.x's ``mx.nd.save`` (also a
    ``save_checkpoint`` or gluon ``save_parameters`` ``.params`` file) or by :func:`save`.

    Returns a list when the file stores no names, else a dict of name -> NDArray, with
    the arrays on ``ctx`` (default the CPU).  Raises ``ValueError`` for a file that is
    not an NDArray file, is truncated, or holds sparse or bfloat16 arrays.
    """
    path = os.fspath(fname)
    with open(path, "rb") as stream:
        if stream.read(2) == b"PK":  # an .npz from an earlier dagnet
            stream.seek(0)
            return _result(*_load_npz(stream, path), ctx)
        stream.seek(0)
        payload = stream.read()
    return _result(*_parse(payload, path), ctx)


def load_frombuffer(buf: bytes | bytearray | memoryview, ctx: Any = None
                    ) -> list[NDArray] | dict[str, NDArray]:
    """Load NDArrays from ``buf``, the bytes of a file :func:`load` reads (MXNet's
    ``mx.nd.load_frombuffer``): a list, or a dict of name -> NDArray, on ``ctx``."""
    if isinstance(buf, str):
        raise TypeError("load_frombuffer: buf must be bytes (open the file in 'rb' mode), "
                        "got str")
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_frombuffer: buf must be bytes, got {type(buf).__name__}")
    return _result(*_parse(buf, "the buffer"), ctx)
