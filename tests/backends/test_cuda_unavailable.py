"""Without cupy the cuda backend is registered but unavailable, says why and how to
fix it, and never imports cupy."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import dagnet
from dagnet import plugins, storage

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cupy") is not None, reason="cupy is installed here")


def _cuda():
    return plugins.backends()["cuda"]


def test_registered_but_unavailable():
    backend = _cuda()
    assert backend.device_type == "gpu"
    assert dagnet.backend.find_backend("gpu") is backend
    assert backend.is_available is False
    reason = backend.unavailable_reason
    assert "cupy is not installed" in reason
    assert "pip install 'dagnet[cuda]'" in reason
    assert backend not in dagnet.backend.available_backends()
    assert "unavailable" in repr(backend)


def test_no_gpus():
    assert _cuda().num_devices() == 0
    assert dagnet.num_gpus() == 0


def test_storage_alloc_on_gpu_says_what_is_missing():
    with pytest.raises(dagnet.BackendUnavailableError) as info:
        storage.alloc(16, dagnet.gpu(0))
    message = str(info.value)
    assert "gpu(0)" in message
    assert "cupy is not installed" in message
    assert "pip install 'dagnet[cuda]'" in message
    assert isinstance(info.value, RuntimeError)
    # nothing was half-created for the device
    assert dagnet.gpu(0) not in storage.manager().devices()


def test_fresh_manager_and_resources_fail_the_same_way():
    from dagnet.resource import ResourceManager, ResourceRequest

    with pytest.raises(dagnet.BackendUnavailableError, match="cupy"):
        storage.StorageManager().alloc(1, dagnet.gpu(1))
    for kind in ("random", "temp_space"):
        with pytest.raises(dagnet.BackendUnavailableError, match="cupy"):
            ResourceManager().request(dagnet.gpu(0), ResourceRequest(kind))


@pytest.mark.parametrize("use", [
    lambda b: b.xp,
    lambda b: b.alloc(8, 0),
    lambda b: b.from_host([1.0], 0),
    lambda b: b.create_stream(0),
    lambda b: b.create_random(0, 0),
], ids=["xp", "alloc", "from_host", "create_stream", "create_random"])
def test_direct_backend_use_raises_with_the_reason(use):
    with pytest.raises(dagnet.BackendUnavailableError, match=r"cupy is not installed.*pip install"):
        use(_cuda())


def test_cupy_was_never_imported():
    assert "cupy" not in sys.modules


def test_cupy_is_not_imported_by_using_the_registry():
    # A clean interpreter: looking at backends, counting GPUs and failing an alloc
    # must leave cupy unimported.
    code = (
        "import sys, dagnet\n"
        "assert dagnet.num_gpus() == 0\n"
        "assert not dagnet.plugins.backends()['cuda'].is_available\n"
        "try:\n"
        "    dagnet.storage.alloc(4, dagnet.gpu(0))\n"
        "except dagnet.BackendUnavailableError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('alloc on gpu(0) did not fail')\n"
        "assert 'cupy' not in sys.modules, 'cupy was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
