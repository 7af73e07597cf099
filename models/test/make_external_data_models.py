#!/usr/bin/env python3
"""Tiny UNet-shaped models whose weights live in a side file (ONNX external data), for the tests of
loading such models (tests/unet_c_abi.rs): a 1x1 convolution RGB -> 1 channel at 64x64 whose weight and
bias are stored in `unet_external.onnx_data` beside `unet_external.onnx`; the same model with its
weights inside (`unet_inline.onnx`, the expected masks); and two whose location is refused, one
leaving the folder (`../unet_external.onnx_data`) and one absolute (`/etc/hostname`).

Run with any Python that has onnx (never used by CI; the files are committed, 2 KB in all):

    .venv-torch/bin/python models/test/make_external_data_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "external")


def model():
    w = numpy_helper.from_array(np.array([1.5, -2.0, 0.75], np.float32).reshape(1, 3, 1, 1), "weight")
    b = numpy_helper.from_array(np.array([0.25], np.float32), "bias")
    node = helper.make_node("Conv", ["image", "weight", "bias"], ["mask"])
    graph = helper.make_graph(
        [node],
        "external_data_unet",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 64, 64])],
        [w, b],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="segrt tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def point_to(m, location):
    """Every initializer's data marked external at `location` (the bytes are not written)."""
    for t in m.graph.initializer:
        raw = numpy_helper.to_array(t).tobytes()
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for k, v in (("location", location), ("offset", "0"), ("length", str(len(raw)))):
            e = t.external_data.add()
            e.key, e.value = k, v
    return m


def main():
    os.makedirs(HERE, exist_ok=True)
    onnx.save_model(model(), os.path.join(HERE, "unet_inline.onnx"))
    onnx.save_model(
        model(),
        os.path.join(HERE, "unet_external.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="unet_external.onnx_data",
        size_threshold=0,
    )
    for name, location in (("unet_escaping.onnx", "../unet_external.onnx_data"), ("unet_absolute.onnx", "/etc/hostname")):
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(point_to(model(), location).SerializeToString())
    for f in sorted(os.listdir(HERE)):
        print(f, os.path.getsize(os.path.join(HERE, f)))


if __name__ == "__main__":
    main()
