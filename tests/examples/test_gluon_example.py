"""The Gluon digits example trains, hybridized, to the accuracy of the symbolic one, and
what it exports loads back as a SymbolBlock that predicts as the trained network."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dagnet as mx

pytest.importorskip("sklearn", reason="the digits examples read scikit-learn's bundled data; "
                    "install it with pip install -e '.[examples]'")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ACCURACY = re.compile(r"held-out accuracy (\d\.\d+)")


def test_gluon_example_reaches_97_percent_and_exports(tmp_path):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "train_digits_gluon.py"), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    assert "gluon (hybridized)" in result.stdout
    accuracy = float(ACCURACY.findall(result.stdout)[-1])
    assert accuracy >= 0.97

    sys.path.insert(0, str(EXAMPLES))
    try:
        from train_digits import load_digits
        from train_digits_gluon import build_network
    finally:
        sys.path.remove(str(EXAMPLES))
    _, _, x_test, y_test = load_digits(seed=7)
    imported = mx.gluon.SymbolBlock.imports(str(tmp_path / "digits_gluon-symbol.json"),
                                            ["data"], str(tmp_path / "digits_gluon-0000.params"))
    predicted = imported(mx.nd.array(x_test)).asnumpy().argmax(axis=1)
    assert float((predicted == y_test).mean()) == pytest.approx(accuracy, abs=1e-4)
    net = build_network()
    net.load_parameters(str(tmp_path / "digits_gluon.params"))
    np.testing.assert_array_equal(net(mx.nd.array(x_test)).asnumpy().argmax(axis=1), predicted)
