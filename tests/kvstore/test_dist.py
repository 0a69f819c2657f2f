"""The distributed stores on real Dask clusters on loopback, through ``dagnet launch``.

Every job here is bounded: a few dozen steps, a subprocess timeout, and a
heartbeat limit of a few seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import dagnet as mx
from dagnet.kvstore import DistributedKVStoreError

distributed = pytest.importorskip("distributed", reason="the distributed stores run on Dask "
                                  "distributed: pip install 'dagnet[dist]'")

sys.path.insert(0, str(Path(__file__).parent))
import dist_job  # noqa: E402

JOB = Path(__file__).parent / "dist_job.py"
STEPS = 24


@pytest.fixture(scope="session")
def dask_cluster():
    """A Dask cluster on 127.0.0.1 with two single-threaded worker processes."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    yield cluster
    cluster.close()


def launch(*args: str, timeout: float = 120, env: dict | None = None
           ) -> subprocess.CompletedProcess:
    """``dagnet launch ARGS`` as a user runs it, with a bound on its time."""
    return subprocess.run([sys.executable, "-m", "dagnet.cli", "launch", *args],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("servers", [1, 2])
def test_dist_sync_equals_one_process_bit_for_bit(tmp_path, servers):
    # with two servers, arrays of 20 elements or more are split over them: fc1's weight
    # (64) and fc2's (48); the biases live whole on one server or the other
    result = launch("-n", "2", "-s", str(servers), sys.executable, str(JOB), str(tmp_path),
                    "dist_sync", str(STEPS), env={"MXNET_KVSTORE_BIGARRAY_BOUND": "20"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "worker 0 of 2" in result.stdout and "worker 1 of 2" in result.stdout
    distributed_weights = dict(np.load(tmp_path / "weights.npz"))

    local, accuracy = dist_job.train(mx.kv.create("local"), [0, 1], STEPS)
    assert accuracy > 0.9
    assert distributed_weights.keys() == local.keys()
    for name, value in local.items():
        np.testing.assert_array_equal(distributed_weights[name], value, err_msg=name)


def test_dist_async_converges(tmp_path):
    # Async SGD's path depends on how the two workers' pushes interleave, which timing
    # decides: after STEPS steps accuracy ranged from 0.73 to 1.0 over runs; twice as
    # many steps reached 0.99 or more in every run.
    result = launch("-n", "2", "--kvstore-mode", "async", sys.executable, str(JOB),
                    str(tmp_path), "dist_async", str(2 * STEPS))
    assert result.returncode == 0, result.stdout + result.stderr
    accuracies = [float(line.rsplit(" ", 1)[1]) for line in result.stdout.splitlines()
                  if "accuracy" in line]
    assert len(accuracies) == 2 and min(accuracies) > 0.9


def test_a_dead_worker_is_a_clear_error_on_the_others(tmp_path):
    started = time.monotonic()
    # the default 5 s heartbeat limit: a shorter one mistakes a worker that a loaded
    # machine (or a first-time kernel compile holding the GIL) delays for a dead one
    result = launch("-n", "2", "--timeout", "5", sys.executable, str(JOB), str(tmp_path),
                    "dist_sync", str(STEPS), "5")
    assert result.returncode == 7  # the dead worker's status
    assert "worker 1 exited with status 7" in result.stderr
    assert "DistributedKVStoreError" in result.stderr
    assert "waits for worker 1, which stopped responding" in result.stderr
    assert time.monotonic() - started < 60
    assert not (tmp_path / "weights.npz").exists()


def test_launch_on_an_existing_cluster(tmp_path, dask_cluster):
    result = launch("-n", "2", "--scheduler", dask_cluster.scheduler_address, sys.executable,
                    str(JOB), str(tmp_path), "dist_sync", "8")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--- worker 0 (exit status 0) ---" in result.stdout
    assert "--- worker 1 (exit status 0) ---" in result.stdout
    assert (tmp_path / "weights.npz").exists()


def test_a_job_larger_than_the_cluster_is_refused(tmp_path, dask_cluster):
    result = launch("-n", "3", "--scheduler", dask_cluster.scheduler_address, sys.executable,
                    str(JOB), str(tmp_path), "dist_sync", "1")
    assert result.returncode == 2
    assert "2 worker threads but the job needs 3" in result.stderr


def test_mode_mismatch_and_missing_command_are_explained(tmp_path):
    result = launch("-n", "1", sys.executable, str(JOB), str(tmp_path), "dist_async", "1")
    assert result.returncode != 0
    assert "runs in sync mode but the script creates 'dist_async'" in result.stderr
    result = launch("-n", "2")
    assert result.returncode == 2 and "no command given" in result.stderr


def test_dist_store_outside_a_job_says_how_to_start_one(monkeypatch):
    monkeypatch.delenv("DAGNET_KV_SCHEDULER", raising=False)
    with pytest.raises(DistributedKVStoreError, match="dagnet launch -n 2"):
        mx.kv.create("dist_sync")


def test_module_fit_through_dist_sync_keeps_the_workers_identical(tmp_path):
    job = Path(__file__).parent / "dist_module_job.py"
    result = launch("-n", "2", sys.executable, str(job), str(tmp_path), "dist_sync")
    assert result.returncode == 0, result.stdout + result.stderr
    accuracies = [float(line.rsplit(" ", 1)[1]) for line in result.stdout.splitlines()
                  if "accuracy" in line]
    assert len(accuracies) == 2 and min(accuracies) > 0.9
    first, second = (dict(np.load(tmp_path / f"weights-{r}.npz")) for r in (0, 1))
    assert first.keys() == second.keys()
    for name in first:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)


OPTIMIZER_STATES_JOB = '''
import sys
import dagnet as mx
kv = mx.kv.create("dist_sync")
kv.init(0, mx.nd.ones((3,)))
kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
out = mx.nd.zeros((3,))
kv.pushpull(0, mx.nd.ones((3,)), out=out)           # momentum -0.2, weight 0.8
if kv.rank == 0:
    kv.save_optimizer_states(sys.argv[1])
kv.barrier()
kv.pushpull(0, mx.nd.ones((3,)) * 100, out=out)     # disturbs the momentum ...
kv.load_optimizer_states(sys.argv[1])               # ... which the saved states undo
kv.pushpull(0, mx.nd.ones((3,)), out=out)
sys.stdout.write(f"weight {out.asnumpy()[0]}\\n")  # one write: the workers share stdout
sys.stdout.flush()
'''


@pytest.mark.parametrize("servers", [1, 2])
def test_optimizer_states_are_saved_and_loaded_on_the_servers(tmp_path, servers):
    script = tmp_path / "states_job.py"
    script.write_text(OPTIMIZER_STATES_JOB)
    result = launch("-n", "2", "-s", str(servers), sys.executable, str(script),
                    str(tmp_path / "states"), env={"MXNET_KVSTORE_BIGARRAY_BOUND": "2"})
    assert result.returncode == 0, result.stdout + result.stderr
    weights = [float(line.split()[1]) for line in result.stdout.splitlines()
               if line.startswith("weight")]
    # after the disturbing step the weight is 0.8 + (0.9*(-0.2) - 0.1*200) = -19.38; the
    # last step starts from the momentum saved after step one: 0.9*(-0.2) - 0.1*2 = -0.38
    # (without the load it would be 0.9*(-20.18) - 0.2 = -18.362)
    assert weights == pytest.approx([-19.38 - 0.38] * 2, abs=1e-4)


SPARSE_JOB = '''
import sys
import numpy as np
import dagnet as mx
kv = mx.kv.create("dist_sync")
shape = (4, 2)
kv.init("e", mx.nd.sparse.zeros("row_sparse", shape))
mine = np.full((1, 2), kv.rank + 1, np.float32)
kv.push("e", mx.nd.sparse.row_sparse_array((mine, [2 * kv.rank]), shape=shape))
out = mx.nd.sparse.zeros("row_sparse", shape)
kv.row_sparse_pull("e", out=out, row_ids=mx.nd.array([2, 0, 2]))
dense = mx.nd.zeros(shape)
kv.pull("e", out=dense)
left = mx.nd.ones(shape).tostype("row_sparse")
kv.pull("e", out=left)
sys.stdout.write(f"rows {out.indices.asnumpy().tolist()} {out.asnumpy().ravel().tolist()} "
                 f"{dense.asnumpy().ravel().tolist()} {left.asnumpy().sum()}\\n")
sys.stdout.flush()
'''


def test_row_sparse_values_through_dist_sync(tmp_path):
    script = tmp_path / "sparse_job.py"
    script.write_text(SPARSE_JOB)
    result = launch("-n", "2", "-s", "1", sys.executable, str(script))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("rows")]
    summed = str([1.0, 1.0, 0.0, 0.0, 2.0, 2.0, 0.0, 0.0])
    assert lines == [f"rows [0, 2] {summed} {summed} 8.0"] * 2


def test_big_arrays_are_split_over_the_servers_and_small_ones_placed_by_key():
    from dagnet.kvstore._dist import BIGARRAY_BOUND, _placement

    big = _placement("w", BIGARRAY_BOUND + 1, 3)
    assert [server for server, _, _ in big] == [0, 1, 2]
    assert big[0][1] == 0 and big[-1][2] == BIGARRAY_BOUND + 1
    assert all(a[2] == b[1] for a, b in zip(big, big[1:]))  # contiguous, no gaps
    small = _placement("b", 10, 3)
    assert len(small) == 1 and small[0][1:] == (0, 10)
    assert small == _placement("b", 10, 3)  # the same in every process (no hash salt)
    assert _placement(7, BIGARRAY_BOUND * 2, 1) == [(0, 0, BIGARRAY_BOUND * 2)]
