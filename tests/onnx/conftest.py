"""Fixtures of the ONNX tests: the onnx and onnxruntime modules (each test skips, saying
which extra installs them, when they are missing) and a runner of ONNX models."""

from __future__ import annotations

import numpy as np
import pytest

_EXTRA = 'needs the onnx extra: pip install "dagnet[onnx]"'


@pytest.fixture
def onnx():
    """The onnx package (the test is skipped without it)."""
    return pytest.importorskip("onnx", reason=f"onnx is not installed; ONNX support {_EXTRA}")


@pytest.fixture
def ort():
    """The onnxruntime package (the test is skipped without it)."""
    return pytest.importorskip("onnxruntime",
                               reason=f"onnxruntime is not installed; ONNX support {_EXTRA}")


@pytest.fixture
def run_onnx(onnx, ort):
    """``run_onnx(model, *arrays)``: the outputs of ONNX Runtime on one thread for a
    ModelProto or file, the arrays fed to the graph's inputs in order."""

    def run(model, *arrays):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        feeds = {i.name: np.asarray(a) for i, a in zip(session.get_inputs(), arrays)}
        return session.run(None, feeds)

    return run
