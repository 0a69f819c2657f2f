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
def onnx_session(onnx, ort):
    """``onnx_session(model)``: a runner ``run(*arrays)`` of one ONNX Runtime session on
    one thread for a ModelProto or file, the arrays fed to the graph's inputs in order
    (a large model is serialized and loaded once however often it runs)."""

    def session(model):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
        loaded = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])

        def run(*arrays):
            feeds = {i.name: np.asarray(a) for i, a in zip(loaded.get_inputs(), arrays)}
            return loaded.run(None, feeds)

        return run

    return session


@pytest.fixture
def run_onnx(onnx_session):
    """``run_onnx(model, *arrays)``: the outputs of ONNX Runtime on one thread for a
    ModelProto or file, the arrays fed to the graph's inputs in order."""

    def run(model, *arrays):
        return onnx_session(model)(*arrays)

    return run
