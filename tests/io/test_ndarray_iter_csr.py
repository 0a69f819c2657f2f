"""NDArrayIter over csr inputs (CSRNDArray or scipy): CSRNDArray batches, 'discard' only."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx

DENSE = (np.arange(24, dtype=np.float32).reshape(6, 4) % 3 == 0) * np.arange(24).reshape(6, 4)


def test_csr_batches_are_csr_and_hold_the_rows():
    csr = mx.nd.array(DENSE.astype(np.float32)).tostype("csr")
    it = mx.io.NDArrayIter({"csr": csr, "dense": DENSE}, DENSE[:, 0], batch_size=4,
                           last_batch_handle="discard")
    batches = list(it)
    assert len(batches) == 1
    (first, second) = batches[0].data
    assert first.stype == "csr" and second.stype == "default"
    np.testing.assert_array_equal(first.asnumpy(), DENSE[:4])


def test_scipy_input_and_padding_refused():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    source = scipy_sparse.csr_matrix(DENSE)
    with pytest.raises(NotImplementedError, match="discard"):
        mx.io.NDArrayIter(source, None, batch_size=4)
    it = mx.io.NDArrayIter(source, None, batch_size=3, last_batch_handle="discard")
    batch = next(iter(it))
    assert batch.data[0].stype == "csr" and not batch.label
    np.testing.assert_array_equal(batch.data[0].asnumpy(), DENSE[:3])
