"""Writes gluoncv/*-symbol.json.gz: the symbol graphs GluonCV's model zoo builds, for
tests/onnx/test_gluoncv.py.  Run with Apache MXNet 1.9.1 and GluonCV 0.11.0 installed
(not dagnet): ``python make_gluoncv_graphs.py [OUT_DIR]``.  No weights are written."""

from __future__ import annotations

import gzip
import sys
import tempfile
from pathlib import Path

import mxnet as mx
from gluoncv import model_zoo

# name: (input size, keyword arguments of get_model)
GRAPHS = {
    "ssd_300_mobilenet0.25_voc": (300, {}),
    "yolo3_mobilenet0.25_voc": (128, {}),
    "center_net_mobilenetv3_small_duc_voc": (128, {}),
    "fastscnn_citys": (256, {"height": 256, "width": 256}),
    "mobile_pose_mobilenetv3_small": (128, {}),
}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, (size, kwargs) in GRAPHS.items():
        net = model_zoo.get_model(name, pretrained=False, pretrained_base=False, **kwargs)
        net.initialize()
        net.hybridize()
        net(mx.nd.zeros((1, 3, size, size)))
        with tempfile.TemporaryDirectory() as tmp:
            net.export(str(Path(tmp) / name))
            text = (Path(tmp) / f"{name}-symbol.json").read_bytes()
        (out / f"{name}-symbol.json.gz").write_bytes(gzip.compress(text, mtime=0))
        print(name, len(text), "bytes of JSON")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "gluoncv")
