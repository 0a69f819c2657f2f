"""Helpers for the operator-definition tests: call a kernel directly on numpy arrays
(operators are registered for one test with the ``register`` fixture of tests/conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dagnet.operator import OpContext, OpReqType


def run(op, attrs, inputs, req=None, outputs=None, requested=()):
    """Call ``op``'s cpu kernel on numpy arrays; outputs default to zeros of the inferred shapes."""
    if outputs is None:
        _, shapes = op.shapes(attrs, [np.shape(a) for a in inputs])
        _, dtypes = op.dtypes(attrs, [np.asarray(a).dtype for a in inputs])
        outputs = [np.zeros(s, d) for s, d in zip(shapes, dtypes, strict=True)]
    req = list(req) if req is not None else [OpReqType.WRITE] * len(outputs)
    op.kernel_for("cpu")(
        attrs, OpContext(False, None, list(requested), np), list(inputs), req, outputs
    )
    return outputs


@pytest.fixture
def call():
    """``call(op, attrs, inputs, req=None, outputs=None, requested=())`` runs the cpu kernel
    directly on numpy arrays and returns the outputs."""
    return run
