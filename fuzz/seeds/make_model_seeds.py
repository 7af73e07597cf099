"""Writes the small seed models of the model_bytes fuzz target (onnx.helper only, a few hundred bytes
each; committed). Small seeds keep each execution cheap: ONNX Runtime parses and plans every input,
and the 1 MB test models allowed only a few executions per second. scripts/fuzz.sh also caps mutated
inputs at -max_len bytes.

    python fuzz/seeds/make_model_seeds.py        (needs the onnx package; writes into model_bytes/)

The folder also holds copies of three small committed models (models/test/not_segmentation.onnx,
models/sam2/sam2_oracle_encoder.onnx and sam2_oracle_decoder.onnx), so the non-segmentation refusal
and the SAM2 convention detection have seeds too.
"""
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = Path(__file__).parent / "model_bytes"
rng = np.random.default_rng(18)


def conv(name, cin, cout):
    w = numpy_helper.from_array(rng.standard_normal((cout, cin, 1, 1)).astype(np.float32), f"{name}_w")
    b = numpy_helper.from_array(np.zeros(cout, np.float32), f"{name}_b")
    return w, b


def save(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="segrt make_model_seeds.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, here / f"{name}.onnx")
    print("wrote", here / f"{name}.onnx", (here / f"{name}.onnx").stat().st_size, "bytes")


# binary UNet stand-in, NCHW, fixed 16x16: one 1x1 convolution to a logit map
w, b = conv("c", 3, 1)
save("unet_nchw_binary", [helper.make_node("Conv", ["image", "c_w", "c_b"], ["logits"])],
     [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 16, 16])],
     [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1, 16, 16])], [w, b])

# multi-class, dynamic height and width
w, b = conv("c", 3, 3)
save("unet_dynamic_multiclass", [helper.make_node("Conv", ["input", "c_w", "c_b"], ["output"])],
     [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, "height", "width"])],
     [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, "height", "width"])], [w, b])

# gray NHWC with the sigmoid inside the graph
w, b = conv("c", 1, 1)
save("unet_nhwc_gray_sigmoid", [
    helper.make_node("Transpose", ["image"], ["nchw"], perm=[0, 3, 1, 2]),
    helper.make_node("Conv", ["nchw", "c_w", "c_b"], ["logits"]),
    helper.make_node("Sigmoid", ["logits"], ["prob"]),
    helper.make_node("Transpose", ["prob"], ["mask"], perm=[0, 2, 3, 1]),
], [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 16, 16, 1])],
   [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 16, 16, 1])], [w, b])

# float16 input and output
w, b = conv("c", 3, 1)
save("unet_fp16", [
    helper.make_node("Cast", ["image"], ["image32"], to=TensorProto.FLOAT),
    helper.make_node("Conv", ["image32", "c_w", "c_b"], ["logits32"]),
    helper.make_node("Cast", ["logits32"], ["logits"], to=TensorProto.FLOAT16),
], [helper.make_tensor_value_info("image", TensorProto.FLOAT16, [1, 3, 16, 16])],
   [helper.make_tensor_value_info("logits", TensorProto.FLOAT16, [1, 1, 16, 16])], [w, b])
