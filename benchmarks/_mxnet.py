"""Running a benchmark's workloads on Apache MXNet 1.x, in a subprocess, beside dagnet.

A script that compares dagnet with MXNet writes each workload once, as a class
whose constructor takes the framework module (``dagnet`` or ``mxnet``, used as
``mx``) and keyword parameters, and whose ``run()`` returns the seconds of one
measurement (checking its own result).  The script's module lists them in a
``WORKLOADS`` dict and must not import dagnet at import time.

MXNet lives in its own python (a virtual environment with ``mxnet==1.9.1`` and
``numpy<1.24``; dagnet's tests never need it).  :class:`MXNetWorker` starts that
python on this file, one process per MXNet engine, because MXNet reads
``MXNET_ENGINE_TYPE`` once per process.  The worker imports the script's module,
builds a workload on its first request and keeps it, and answers each request
with one measurement, so the caller can measure dagnet and MXNet in turn within
every round.  Requests and replies are JSON lines on the worker's stdin and a
private copy of its stdout; whatever MXNet prints goes to a log file whose tail
is shown when the worker fails.

Standard library only: the parent imports this before numpy.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import subprocess
import sys
import tempfile
import time
import traceback

__all__ = ["MXNET_ENGINES", "THREAD_ENV", "MXNetError", "MXNetWorker", "threaded_worker",
           "threaded_workers", "describe_workers"]

#: dagnet engine name -> the MXNet engine it is compared with
MXNET_ENGINES = {
    "naive": "NaiveEngine",
    "threaded": "ThreadedEngine",
    "threaded_per_device": "ThreadedEnginePerDevice",
}

#: one BLAS / OpenMP thread on both sides
THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
}


class MXNetError(RuntimeError):
    """The MXNet side failed: a workload raised, or the worker died or hung."""


class MXNetWorker:
    """One MXNet process with one engine, answering measurement requests.

    The process starts at construction and imports mxnet in the background;
    :meth:`ready` waits for it.  After a crash or a timeout every later request
    raises :class:`MXNetError` at once with the first failure's reason.
    """

    def __init__(self, python: str, engine: str, module: str, timeout: float = 300.0,
                 env: dict[str, str] | None = None):
        if engine not in MXNET_ENGINES:
            raise ValueError(f"unknown engine {engine!r}; expected one of "
                             f"{', '.join(sorted(MXNET_ENGINES))}")
        self.engine = engine
        self.mxnet_engine = MXNET_ENGINES[engine]
        self.timeout = timeout
        self.info: dict | None = None
        self._failure: str | None = None
        environment = dict(os.environ)
        environment.update(THREAD_ENV)
        environment.update(env or {})
        environment["MXNET_ENGINE_TYPE"] = self.mxnet_engine
        environment.pop("PYTHONPATH", None)  # the other python must not see this one's packages
        here = os.path.dirname(os.path.abspath(__file__))
        self._log = tempfile.TemporaryFile(mode="w+b")
        self._proc = subprocess.Popen(
            [python, "-u", os.path.abspath(__file__), module],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            cwd=here, env=environment)
        self._buffer = b""

    def ready(self) -> dict:
        """Wait until mxnet is imported; the worker's facts (versions, engine, features)."""
        if self.info is None:
            reply = self._receive()
            if "ready" not in reply:
                self._fail(f"unexpected first reply {reply!r}")
            self.info = reply["ready"]
        return self.info

    def measure(self, workload: str, params: dict) -> float:
        """Seconds of one measurement of ``workload(mx, **params)`` on MXNet."""
        self.ready()
        self._send({"workload": workload, "params": params})
        reply = self._receive()
        if "error" in reply:
            raise MXNetError(reply["error"])
        return float(reply["seconds"])

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._log.close()

    def _send(self, message: dict) -> None:
        if self._failure:
            raise MXNetError(self._failure)
        try:
            self._proc.stdin.write(json.dumps(message).encode() + b"\n")
            self._proc.stdin.flush()
        except OSError as error:
            self._fail(f"cannot write to the worker: {error}")

    def _receive(self) -> dict:
        if self._failure:
            raise MXNetError(self._failure)
        deadline = time.monotonic() + self.timeout
        out = self._proc.stdout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self._proc.kill()
                self._fail(f"no answer within {self.timeout:.0f} s")
            readable, _, _ = select.select([out], [], [], left)
            if readable:
                chunk = os.read(out.fileno(), 65536)
                if not chunk:
                    self._proc.wait()
                    self._fail(f"the worker exited with status {self._proc.returncode}")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _fail(self, reason: str) -> None:
        self._log.flush()
        self._log.seek(0)
        tail = self._log.read().decode(errors="replace").strip().splitlines()[-15:]
        self._failure = (f"MXNet worker ({self.mxnet_engine}): {reason}"
                         + ("\n  " + "\n  ".join(tail) if tail else ""))
        raise MXNetError(self._failure)


def threaded_worker(python: str, threads: int, module: str, timeout: float) -> MXNetWorker:
    """An MXNet worker (ThreadedEnginePerDevice) whose OpenMP, BLAS and engine workers run
    ``threads`` threads."""
    env = {name: str(threads) for name in THREAD_ENV}
    env["MXNET_CPU_WORKER_NTHREADS"] = str(threads)
    return MXNetWorker(python, "threaded_per_device", module, timeout, env)


def threaded_workers(python: str | None, thread_counts, module: str, timeout: float
                     ) -> dict[int, MXNetWorker]:
    """A :func:`threaded_worker` per thread count, started at once (they import mxnet while
    the caller imports dagnet); none without ``python``."""
    if not python:
        return {}
    if not os.path.exists(python):
        raise SystemExit(f"--mxnet-python {python!r} does not exist")
    return {threads: threaded_worker(python, threads, module, timeout)
            for threads in thread_counts}


def describe_workers(workers: dict[int, MXNetWorker]) -> tuple[list[tuple[str, str]], list[str]]:
    """A header fact per worker (waiting for it to be ready), and the failures of those
    that did not start."""
    facts, broken = [], []
    for threads, worker in workers.items():
        try:
            info = worker.ready()
            facts.append((f"mxnet, {threads} thread(s)",
                          f"mxnet {info['mxnet']}, numpy {info['numpy']}, "
                          f"{'+'.join(info['features'])}"))
        except MXNetError as error:
            broken.append(str(error))
    if not workers:
        facts.append(("mxnet", "not measured (give --mxnet-python PATH)"))
    return facts, broken


def _serve(module_name: str) -> int:
    """The worker's loop: import mxnet and the module, then answer requests."""
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything printed by MXNet or a workload goes to the log, not the replies
    sys.stdout = sys.stderr

    def reply(message: dict) -> None:
        replies.write(json.dumps(message) + "\n")

    try:
        import mxnet as mx
        import numpy as np

        module = importlib.import_module(module_name)
        workloads = module.WORKLOADS
        features = mx.runtime.Features()
        reply({"ready": {
            "mxnet": mx.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
            "engine": os.environ.get("MXNET_ENGINE_TYPE", ""),
            "features": [name for name in ("MKLDNN", "OPENMP", "BLAS_OPEN", "BLAS_MKL")
                         if features.is_enabled(name)],
        }})
    except Exception:
        reply({"error": traceback.format_exc()})
        return 1

    built: dict[str, object] = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            key = json.dumps([request["workload"], request["params"]], sort_keys=True)
            if key not in built:
                built[key] = workloads[request["workload"]](mx, **request["params"])
            reply({"seconds": built[key].run()})
        except Exception as error:
            reply({"error": f"{type(error).__name__}: {error}"})
    return 0


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))
