"""``dagnet launch``: start a distributed training job on Dask distributed.

The launcher starts the job's parameter servers (Dask actors, see
:class:`dagnet.kvstore.ParameterServer`) and ``num_workers`` copies of the training
command, each told its rank and how to reach the server through environment
variables (:data:`dagnet.kvstore.JOB_ENV`).  A script then creates
``mx.kv.create('dist_sync')`` (or ``'dist_async'``) and trains as usual.

- Without ``scheduler`` the launcher starts a local Dask cluster on loopback
  (127.0.0.1) with one worker per server, and runs the training processes
  on this machine; their output is this process's output.
- With ``scheduler`` (the address of a running ``dask scheduler``) it joins that
  cluster: the servers go on its workers (round robin) and each training process
  runs as a Dask task on a worker (round robin), so ``dask worker`` processes on
  several machines spread the training over them.  The command and its files
  must exist at the same paths on every machine, as for MXNet's launcher.  Each
  process's output is printed when it ends.

The job ends when every training process has; when one fails, the others fail
within seconds (the server notices the missing heartbeat) and the launcher
returns the failed process's exit status.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

from ._errors import DagnetError

__all__ = ["launch", "LaunchError"]

_GRACE = 20.0  # seconds the other workers get to stop on their own after one failed


class LaunchError(DagnetError, RuntimeError):
    """The job could not be started (no Dask, an unreachable scheduler, bad arguments)."""


def launch(command: Sequence[str], num_workers: int, scheduler: str | None = None,
           mode: str = "sync", timeout: float = 5.0, env: dict[str, str] | None = None,
           num_servers: int = 1) -> int:
    """Run ``command`` as ``num_workers`` training processes of one job; return the job's
    exit status (0 when every process succeeded, else the first failure's status).

    ``mode``: ``'sync'`` (for ``dist_sync``) or ``'async'`` (``dist_async``);
    ``timeout``: seconds of silence after which a server declares a worker lost;
    ``env``: extra environment variables for the training processes;
    ``num_servers``: parameter servers, each on its own Dask worker where there are
    enough (big arrays are split over them)."""
    command = list(command)
    if not command:
        raise LaunchError("dagnet launch: no command given; usage: dagnet launch -n 2 python "
                          "train.py [args ...]")
    if not isinstance(num_workers, int) or num_workers < 1:
        raise LaunchError(f"dagnet launch: the number of workers must be at least 1, got "
                          f"{num_workers!r}")
    if not isinstance(num_servers, int) or num_servers < 1:
        raise LaunchError(f"dagnet launch: the number of servers must be at least 1, got "
                          f"{num_servers!r}")
    if mode not in ("sync", "async"):
        raise LaunchError(f"dagnet launch: mode must be 'sync' or 'async', got {mode!r}")
    try:
        from distributed import Client, LocalCluster
    except ImportError as error:
        raise LaunchError(f"dagnet launch runs jobs on Dask distributed, which is not "
                          f"installed ({error}); install it with pip install 'dagnet[dist]'"
                          ) from None
    from .kvstore import JOB_ENV, ParameterServer

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=num_servers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None,
                               silence_logs=logging.ERROR)
        address = cluster.scheduler_address
    else:
        address = scheduler
    try:
        try:
            client = Client(address, timeout=30)
        except OSError as error:
            raise LaunchError(f"dagnet launch: cannot reach the Dask scheduler at {address}: "
                              f"{error}") from None
        with client:
            hosts = sorted(client.nthreads())
            job_id = uuid.uuid4().hex[:8]
            servers = [client.submit(ParameterServer, num_workers, mode, timeout, actor=True,
                                     workers=[hosts[i % len(hosts)]] if hosts else None,
                                     key=f"dagnet-parameter-server-{job_id}-{i}").result()
                       for i in range(num_servers)]
            job = {JOB_ENV["scheduler"]: address,
                   JOB_ENV["server_address"]: ",".join(s._address for s in servers),
                   JOB_ENV["server_key"]: ",".join(s.key for s in servers),
                   JOB_ENV["mode"]: mode,
                   JOB_ENV["num_workers"]: str(num_workers)}
            base = {**(env or {}), **job}
            if cluster is not None:
                return _run_here(command, num_workers, base)
            return _run_on_cluster(client, command, num_workers, base)
    finally:
        if cluster is not None:
            cluster.close()


def _worker_env(base: dict[str, str], rank: int) -> dict[str, str]:
    from .kvstore import JOB_ENV

    return {**os.environ, **base, JOB_ENV["rank"]: str(rank)}


def _run_here(command: list[str], num_workers: int, base: dict[str, str]) -> int:
    """The training processes as children of this one, output shared; the first failure's
    status, after the others stopped (or were stopped after a grace period)."""
    children = [subprocess.Popen(command, env=_worker_env(base, rank))
                for rank in range(num_workers)]
    status = 0
    failed_at = None
    try:
        while None in [child.poll() for child in children]:  # poll each, every time
            for rank, child in enumerate(children):
                if child.returncode not in (None, 0) and status == 0:
                    status = child.returncode
                    failed_at = time.monotonic()
                    print(f"dagnet launch: worker {rank} exited with status {status}",
                          file=sys.stderr)
            if failed_at is not None and time.monotonic() - failed_at > _GRACE:
                for child in children:
                    if child.poll() is None:
                        child.terminate()
            time.sleep(0.05)
    except KeyboardInterrupt:
        for child in children:
            child.terminate()
        raise
    for rank, child in enumerate(children):
        if child.returncode != 0 and status == 0:
            status = child.returncode
            print(f"dagnet launch: worker {rank} exited with status {status}", file=sys.stderr)
    return status


def _run_command(command: list[str], env: dict[str, str], cwd: str) -> tuple[int, str]:
    """What a Dask worker runs: the training command, its status and output."""
    result = subprocess.run(command, env={**os.environ, **env}, cwd=cwd, capture_output=True,
                            text=True)
    return result.returncode, result.stdout + result.stderr


def _run_on_cluster(client: Any, command: list[str], num_workers: int,
                    base: dict[str, str]) -> int:
    """The training processes as tasks on the cluster's workers, round robin."""
    from distributed import as_completed

    from .kvstore import JOB_ENV

    threads = client.nthreads()
    workers = sorted(threads)
    if sum(threads.values()) < num_workers:
        raise LaunchError(f"dagnet launch: the Dask cluster has {sum(threads.values())} worker "
                          f"threads but the job needs {num_workers} training processes running "
                          f"at once; start more with `dask worker SCHEDULER_ADDRESS` or launch "
                          f"fewer")
    futures = {}
    for rank in range(num_workers):
        env = {**base, JOB_ENV["rank"]: str(rank)}
        future = client.submit(_run_command, command, env, os.getcwd(), pure=False,
                               workers=[workers[rank % len(workers)]],
                               key=f"dagnet-worker-{rank}-{uuid.uuid4().hex[:8]}")
        futures[future] = rank
    status = 0
    for future in as_completed(futures):
        rank = futures[future]
        try:
            code, output = future.result()
        except Exception as error:  # the Dask worker running it died, or the task failed
            code, output = 1, f"its Dask task failed: {type(error).__name__}: {error}\n"
        sys.stdout.write(f"--- worker {rank} (exit status {code}) ---\n{output}")
        sys.stdout.flush()
        if code != 0 and status == 0:
            status = code
    return status
