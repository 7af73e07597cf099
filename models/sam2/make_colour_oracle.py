"""A colour oracle encoder for reference-based segmentation tests (pure onnx.helper, no torch):
`sam2_colour_oracle_encoder.onnx` takes SAM2's `image` [1,3,1024,1024] (ImageNet-normalised RGB) and
gives `image_embed` [1,256,64,64] = the mean normalised colour of each 16 x 16 cell, repeated 85 times,
plus one constant channel (0.25); `high_res_feats_0/1` are zeros of their real shapes. Paired with the
geometric oracle decoder (`sam2_oracle_decoder.onnx`: a disc at the first positive click), a find
locates objects by colour and decodes discs: exact, predictable masks for the library's tests.

    .venv-torch/bin/python models/sam2/make_colour_oracle.py     # writes models/sam2/ (~1 kB)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as oh, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
S = 1024


def main():
    nodes = [
        oh.make_node("AveragePool", ["image"], ["pooled"], kernel_shape=[16, 16], strides=[16, 16]),
        oh.make_node("Tile", ["pooled", "repeats"], ["tiled"]),
        oh.make_node("ReduceMean", ["image"], ["m"], keepdims=1),
        oh.make_node("Mul", ["m", "zero"], ["m0"]),
        oh.make_node("Add", ["m0", "quarter"], ["q"]),
        oh.make_node("Expand", ["q", "const_shape"], ["const"]),
        oh.make_node("Concat", ["tiled", "const"], ["image_embed"], axis=1),
        oh.make_node("Expand", ["m0", "hr0_shape"], ["high_res_feats_0"]),
        oh.make_node("Expand", ["m0", "hr1_shape"], ["high_res_feats_1"]),
    ]
    inits = [
        nh.from_array(np.asarray([1, 85, 1, 1], np.int64), "repeats"),
        nh.from_array(np.zeros((1, 1, 1, 1), np.float32), "zero"),
        nh.from_array(np.full((1, 1, 1, 1), 0.25, np.float32), "quarter"),
        nh.from_array(np.asarray([1, 1, S // 16, S // 16], np.int64), "const_shape"),
        nh.from_array(np.asarray([1, 32, S // 4, S // 4], np.int64), "hr0_shape"),
        nh.from_array(np.asarray([1, 64, S // 8, S // 8], np.int64), "hr1_shape"),
    ]
    outputs = [
        oh.make_tensor_value_info("high_res_feats_0", TP.FLOAT, [1, 32, S // 4, S // 4]),
        oh.make_tensor_value_info("high_res_feats_1", TP.FLOAT, [1, 64, S // 8, S // 8]),
        oh.make_tensor_value_info("image_embed", TP.FLOAT, [1, 256, S // 16, S // 16]),
    ]
    g = oh.make_graph(nodes, "sam2_colour_oracle_encoder", [oh.make_tensor_value_info("image", TP.FLOAT, [1, 3, S, S])],
                      outputs, inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)], producer_name="segrt-oracle")
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(HERE, "sam2_colour_oracle_encoder.onnx")
    onnx.save(m, path)
    # check: a red square in gray gives red cells where it is
    import onnxruntime as ort
    img = np.full((1, 3, S, S), -0.2, np.float32)
    img[:, 0, 64:128, 64:128] = 2.0
    e = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(["image_embed"], {"image": img})[0]
    assert e.shape == (1, 256, 64, 64) and abs(e[0, 0, 5, 5] - 2.0) < 1e-5 and abs(e[0, 0, 0, 0] + 0.2) < 1e-5
    assert abs(e[0, 255, 0, 0] - 0.25) < 1e-6
    print(f"{path}: {os.path.getsize(path)} bytes, checked")


if __name__ == "__main__":
    main()
