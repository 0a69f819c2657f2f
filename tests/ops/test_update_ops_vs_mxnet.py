"""The optimizer update operators give MXNet 1.9.1's results: outputs and updated
states on inputs MXNet ran (tests/ops/make_mxnet_updates.py wrote the fixture)."""

import json
from pathlib import Path

import numpy as np
import pytest

import dagnet as mx

CASES = json.loads((Path(__file__).parent / "data" / "mxnet_updates.json").read_text())


# rmspropalex: n - g^2 goes negative for some of these inputs, nan as in MXNet
@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")
@pytest.mark.parametrize("key", sorted(CASES))
def test_update_matches_mxnet(key, engine_name):
    case = CASES[key]
    arrays = [mx.nd.array(a) for a in case["inputs"]]
    result = getattr(mx.nd, key.split("#")[0])(*arrays, **case["params"])
    np.testing.assert_allclose(result.asnumpy(), case["result"], rtol=1e-5, atol=1e-6)
    for array, after in zip(arrays, case["after"]):
        np.testing.assert_allclose(array.asnumpy(), after, rtol=1e-5, atol=1e-6)
