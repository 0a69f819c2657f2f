"""The README's main job: the digits examples train to the promised accuracy.

Each example runs as a user runs it (a fresh interpreter, its command line),
so the engine switch, the saved files and the printed report are what is
checked, not a function imported past the argument parser.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import dagnet as mx

pytest.importorskip("sklearn", reason="the digits examples read scikit-learn's bundled data; "
                    "install it with pip install -e '.[examples]'")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ACCURACY = re.compile(r"held-out accuracy (\d\.\d+)")


def run_example(script: str, out: Path, *args: str) -> tuple[float, str]:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--out", str(out), *args],
        capture_output=True, text=True, timeout=300, cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    reported = ACCURACY.findall(result.stdout)
    assert reported, result.stdout
    return float(reported[-1]), result.stdout


@pytest.fixture(scope="module")
def default_engine_run(tmp_path_factory):
    """One 12-epoch run on the default engine, shared by the tests that read its report
    and its saved files."""
    out = tmp_path_factory.mktemp("digits")
    accuracy, stdout = run_example("train_digits.py", out)
    return out, accuracy, stdout


@pytest.mark.parametrize("engine", ["threaded_per_device", "naive"])
def test_symbolic_example_reaches_97_percent(tmp_path, engine, default_engine_run):
    if engine == mx.config.get("engine"):
        _, accuracy, stdout = default_engine_run
    else:
        accuracy, stdout = run_example("train_digits.py", tmp_path, "--engine", engine)
    assert f"engine {engine}" in stdout
    assert accuracy >= 0.97
    assert len(re.findall(r"^epoch\s+\d+/12", stdout, re.M)) == 12


def test_saved_model_reloads_and_predicts_as_trained(default_engine_run):
    out, accuracy, _ = default_engine_run
    net = mx.sym.load(str(out / "digits-symbol.json"))
    params = mx.nd.load(str(out / "digits-0012.params"))
    assert sorted(params) == sorted(f"arg:{n}" for n in net.list_arguments()
                                    if n not in ("data", "softmax_label"))

    sys.path.insert(0, str(EXAMPLES))
    try:
        from train_digits import load_digits
    finally:
        sys.path.remove(str(EXAMPLES))
    _, _, x_test, y_test = load_digits(seed=7)
    executor = net.simple_bind(mx.cpu(), grad_req="null", data=x_test.shape,
                               softmax_label=y_test.shape)
    executor.copy_params_from({k[4:]: v for k, v in params.items()})
    executor.forward(is_train=False, data=x_test)
    predicted = executor.outputs[0].asnumpy().argmax(axis=1)
    assert float((predicted == y_test).mean()) == pytest.approx(accuracy, abs=1e-4)


def test_autograd_example_matches_the_symbolic_one(tmp_path):
    symbolic, _ = run_example("train_digits.py", tmp_path / "sym", "--epochs", "4")
    imperative, _ = run_example("train_digits_autograd.py", tmp_path / "imp", "--epochs", "4")
    # the same layers, initial weights, data order and update rule
    assert imperative == pytest.approx(symbolic, abs=0.02)
    assert imperative > 0.9


def test_unknown_engine_is_refused_with_the_choices(tmp_path):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "train_digits.py"), "--out", str(tmp_path),
         "--engine", "turbo"], capture_output=True, text=True, timeout=120, cwd=EXAMPLES)
    assert result.returncode != 0
    assert "turbo" in result.stderr and "naive" in result.stderr
    assert not list(tmp_path.iterdir())


def test_two_workers_through_dist_sync_train_like_one(tmp_path):
    pytest.importorskip("distributed", reason="dist_sync runs on Dask: pip install "
                        "'dagnet[dist]'")
    single, _ = run_example("train_digits.py", tmp_path / "one", "--epochs", "3")
    accuracy, stdout = run_example("train_digits.py", tmp_path / "two", "--epochs", "3",
                                   "--kvstore", "dist_sync", "--workers", "2")
    assert "kvstore dist_sync with 2 worker(s)" in stdout
    assert stdout.count("epoch  3/3") == 1  # only worker 0 reports
    # half of each batch per worker, summed on the server: the same steps as one process
    assert accuracy == pytest.approx(single, abs=0.01)
    assert (tmp_path / "two" / "digits-0003.params").exists()
