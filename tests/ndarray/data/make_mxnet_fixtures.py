"""Write the MXNet-made fixture files that ``tests/ndarray/test_io.py`` reads.

Needs Apache MXNet 1.9.1 (``import mxnet``); the tests do not run this script and do
not need MXNet -- they check the committed ``*.params`` files beside it.  Run it from
any directory with MXNet's interpreter, e.g.::

    /work/mxref/bin/python tests/ndarray/data/make_mxnet_fixtures.py

Every array is ``fixture_values(dtype, shape)`` (the tests recompute the same formula),
so a test knows each file's expected names, dtypes, shapes and values.  MXNet 1.9.1
cannot write the two oldest record layouts (version 1, and the legacy record without
a magic number); this script writes those two files byte by byte, following MXNet's
``NDArray::LegacyLoad``, and checks that MXNet 1.9.1 loads them to the expected arrays.
"""

from __future__ import annotations

import math
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# the dtypes MXNet 1.9.1's Python API can create, in the order of their type flags
# (mshadow's flags 8-11, int16 ... uint64, exist in C++ but Python cannot wrap them)
DTYPES = ["float32", "float64", "float16", "uint8", "int32", "int8", "int64", "bool"]
DTYPE_SHAPE = (2, 3)


def fixture_values(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """The array of ``dtype`` and ``shape`` the fixtures hold (a fixed formula)."""
    dt = np.dtype(dtype)
    count = math.prod(shape)
    index = np.arange(count, dtype=np.int64)
    if dt.kind == "b":
        values = index % 3 == 0
    elif dt.kind == "f":
        values = (index - count // 2) * 0.75 + 0.5
    elif dt.kind == "i":
        values = (index * 7) % 200 - 100
        if dt.itemsize >= 4:
            values = values * 1000003
    else:
        values = (index * 7) % 200 + 3
        if dt.itemsize >= 4:
            values = values * 1000003
    return values.astype(dt).reshape(shape)


def _check(mx, path, expected, np_shape=False):
    """Load ``path`` with MXNet and compare with ``expected`` (a list or a dict)."""
    if np_shape:
        with mx.np_shape(True):
            loaded = mx.nd.load(path)
    else:
        loaded = mx.nd.load(path)
    assert type(loaded) is type(expected), path
    pairs = (zip(loaded, expected) if isinstance(expected, list)
             else ((loaded[k], expected[k]) for k in expected))
    if isinstance(expected, dict):
        assert list(loaded) == list(expected), path
    for got, want in pairs:
        got = got.asnumpy()
        assert got.dtype == want.dtype and got.shape == want.shape, (path, got, want)
        np.testing.assert_array_equal(got, want)


def _legacy_file(arrays: list[np.ndarray], version1: bool) -> bytes:
    """An NDArray-list file of ``arrays`` in the version-1 layout (magic, uint32 ndim,
    int64 dims) or the magic-less legacy layout (uint32 ndim, uint32 dims)."""
    flags = {np.dtype(name): flag for flag, name in enumerate(DTYPES)}
    out = [struct.pack("<QQQ", 0x112, 0, len(arrays))]
    for arr in arrays:
        if version1:
            out.append(struct.pack("<Ii", 0xF993FAC8, arr.ndim))
            out.append(struct.pack(f"<{arr.ndim}q", *arr.shape))
        else:
            out.append(struct.pack(f"<I{arr.ndim}I", arr.ndim, *arr.shape))
        out.append(struct.pack("<iii", 1, 0, flags[arr.dtype]))
        out.append(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
    out.append(struct.pack("<Q", 0))
    return b"".join(out)


def main() -> None:
    """Write every fixture into this directory and check MXNet reads each back."""
    import mxnet as mx

    assert mx.__version__ == "1.9.1", mx.__version__

    def nd(dtype, shape):
        return mx.nd.array(fixture_values(dtype, shape), dtype=dtype)

    def path(name):
        return os.path.join(HERE, name)

    # a list, as mx.nd.save(fname, [..]) writes it
    lst = [("float32", (2, 3)), ("int64", (4,)), ("uint8", (2, 2, 2)), ("float16", (3,))]
    mx.nd.save(path("mxnet_list.params"), [nd(d, s) for d, s in lst])
    _check(mx, path("mxnet_list.params"), [fixture_values(d, s) for d, s in lst])

    # a dict with the names mx.model.save_checkpoint / Module.save_checkpoint use
    dct = {"arg:fc1_weight": ("float32", (3, 4)), "arg:fc1_bias": ("float32", (3,)),
           "aux:bn0_moving_mean": ("float32", (3,)), "aux:bn0_moving_var": ("float64", (3,))}
    mx.nd.save(path("mxnet_dict.params"), {k: nd(d, s) for k, (d, s) in dct.items()})
    _check(mx, path("mxnet_dict.params"), {k: fixture_values(d, s) for k, (d, s) in dct.items()})

    # one array per dtype, named by the dtype
    mx.nd.save(path("mxnet_dtypes.params"), {d: nd(d, DTYPE_SHAPE) for d in DTYPES})
    _check(mx, path("mxnet_dtypes.params"), {d: fixture_values(d, DTYPE_SHAPE) for d in DTYPES})

    # zero-size arrays next to a plain one
    empty = [("float32", (0,)), ("int32", (2, 0)), ("float64", (1, 2))]
    mx.nd.save(path("mxnet_empty.params"), [nd(d, s) for d, s in empty])
    _check(mx, path("mxnet_empty.params"), [fixture_values(d, s) for d, s in empty])

    # NumPy-shape semantics: version-3 records, a 0-d array among them
    npshape = {"scalar": ("float32", ()), "empty": ("float32", (0, 3)), "m": ("int32", (2, 2))}
    with mx.np_shape(True):
        mx.nd.save(path("mxnet_np_shape.params"), {k: nd(d, s) for k, (d, s) in npshape.items()})
    _check(mx, path("mxnet_np_shape.params"),
           {k: fixture_values(d, s) for k, (d, s) in npshape.items()}, np_shape=True)

    # a 0-d array saved outside NumPy-shape semantics: MXNet writes a version-2 record
    # with ndim 0 followed by the value, which MXNet 1.9.1 itself cannot load back
    mx.nd.save(path("mxnet_v2_scalar.params"), [nd("float64", ()), nd("float32", (2,))])

    # a gluon Block's save_parameters
    net = mx.gluon.nn.Dense(3, in_units=2)
    net.initialize()
    net.weight.set_data(nd("float32", (3, 2)))
    net.bias.set_data(nd("float32", (3,)))
    net.save_parameters(path("mxnet_gluon_dense.params"))
    _check(mx, path("mxnet_gluon_dense.params"),
           {"weight": fixture_values("float32", (3, 2)), "bias": fixture_values("float32", (3,))})

    # the two old layouts, checked against MXNet's loader
    old = [fixture_values("float32", (2, 3)), fixture_values("int32", (4,))]
    for name, version1 in (("mxnet_v1.params", True), ("mxnet_legacy.params", False)):
        with open(path(name), "wb") as stream:
            stream.write(_legacy_file(old, version1))
        _check(mx, path(name), old)

    # bfloat16 (type flag 12), which dagnet refuses with a clear error
    bfloat16 = np.dtype([("bfloat16", np.uint16)])
    mx.nd.save(path("mxnet_bfloat16.params"), [nd("float32", (4,)).astype(bfloat16)])

    # sparse storage: dagnet loads these as RowSparseNDArray / CSRNDArray
    dense = fixture_values("float32", (4, 3)) * (np.arange(4)[:, None] % 2)
    mx.nd.save(path("mxnet_row_sparse.params"), [mx.nd.array(dense).tostype("row_sparse")])
    mx.nd.save(path("mxnet_csr.params"), {"w": mx.nd.array(dense).tostype("csr")})

    for name in sorted(os.listdir(HERE)):
        if name.endswith(".params"):
            print(f"{name}: {os.path.getsize(path(name))} bytes")


if __name__ == "__main__":
    main()
