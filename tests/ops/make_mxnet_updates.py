"""Regenerate data/mxnet_updates.json: MXNet 1.9.1's optimizer update operators run on
fixed inputs, with the states they leave and their results.

Run with a python that has mxnet==1.9.1; the tests that read the file never need MXNet.
"""

import json
import os
from pathlib import Path

import mxnet as mx
import numpy as np

COMMON = {"rescale_grad": 0.5, "lr": 0.1, "wd": 0.01}
CASES = {  # key (op, '#' variant): (number of inputs, parameters)
    "signsgd_update": (2, {"clip_gradient": 0.3}),
    "signum_update": (3, {"momentum": 0.9, "clip_gradient": 0.3, "wd_lh": 0.02}),
    "signum_update#noclip": (3, {"momentum": 0.9}),
    "nag_mom_update": (3, {"momentum": 0.9, "clip_gradient": 0.3}),
    "nag_mom_update#noclip": (3, {"momentum": 0.9}),
    "ftml_update": (5, {"t": 3, "beta1": 0.6, "beta2": 0.999, "epsilon": 1e-8,
                        "clip_grad": 0.3}),
    "ftrl_update": (4, {"lamda1": 0.01, "beta": 1.0, "clip_gradient": 0.3}),
    "rmsprop_update": (3, {"gamma1": 0.9, "epsilon": 1e-8, "clip_gradient": 0.3,
                           "clip_weights": 0.5}),
    "rmspropalex_update": (5, {"gamma1": 0.9, "gamma2": 0.8, "epsilon": 1e-8,
                               "clip_gradient": 0.3, "clip_weights": 0.5}),
}
# states that must be non-negative (second moments, accumulators)
POSITIVE = {"ftml_update": {2: 0.5, 3: 0.0}, "ftrl_update": {3: 0.0},
            "rmsprop_update": {2: 0.5}, "rmspropalex_update": {2: 0.5}}


def main() -> None:
    rng = np.random.default_rng(0)
    out = {}
    for key, (count, extra) in CASES.items():
        name = key.split("#")[0]
        params = dict(COMMON, **extra)
        arrays = [rng.uniform(-1, 1, (3, 4)).astype(np.float32) for _ in range(count)]
        for index, floor in POSITIVE.get(name, {}).items():
            arrays[index] = np.abs(arrays[index]) + floor
        nds = [mx.nd.array(a) for a in arrays]
        result = getattr(mx.nd, name)(*nds, **params)
        out[key] = {"params": params, "inputs": [a.tolist() for a in arrays],
                    "after": [x.asnumpy().tolist() for x in nds],
                    "result": result.asnumpy().tolist()}
    (Path(__file__).parent / "data" / "mxnet_updates.json").write_text(json.dumps(out))
    os._exit(0)  # MXNet 1.9.1's engine can fail at interpreter shutdown on this machine


if __name__ == "__main__":
    main()
