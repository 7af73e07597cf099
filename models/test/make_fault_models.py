"""Makes the tiny fault-test models (onnx.helper only, no training; committed, a few hundred bytes).

    python models/test/make_fault_models.py

not_segmentation.onnx: a valid ONNX classifier, image [1,3,32,32] -> class_scores [1,3]
(GlobalAveragePool + Flatten): loads in ONNX Runtime, but is not a segmentation model. The provider
probe (src/engine/providers/probe.rs) encodes the same graph in code; a unit test checks that the two agree.

unet_fixed_20000.onnx: a valid UNet-shaped model with a FIXED input [1,3,20000,20000] (a 1x1 Conv to
one channel, then Sigmoid -> mask [1,1,20000,20000]). Its input tensor alone is 4.8 GB: with
max_pixels raised to 5e8, a run must be refused with a status (out of memory / too large), never abort
(tests/reliability2_c_abi.rs, "an allocation failure never aborts the process").

run_fails_reshape.onnx: loads (dynamic input [1,3,H,W] float, rank-4 output), but every run fails
inside ONNX Runtime: a Reshape of the 3*H*W input values to [1,1,-1,7] fails unless H or W is a
multiple of 7 (segrt rounds dynamic sizes to a multiple of 32; a 64x64 image gives 12288 values).
Used to check that ONNX Runtime's own error output reaches the log callback and not the host's
stderr.

ort_huge_intermediate.onnx: dynamic input [1,3,H,W] -> 1x1 Conv to 4096 channels -> ReduceMean over
channels -> Sigmoid -> mask [1,1,H,W]. segrt's own buffers stay small (12 MB for 1024x1024), but ONNX
Runtime's intermediate tensor is 4096*H*W floats (17 GB at 1024x1024): under an address-space limit it is
ONNX Runtime's allocation that fails, which must come back as a status.
"""
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = Path(__file__).parent


def save(model, name):
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, here / name)
    print("wrote", here / name, (here / name).stat().st_size, "bytes")


def opset():
    return [helper.make_opsetid("", 17)]


graph = helper.make_graph(
    [
        helper.make_node("GlobalAveragePool", ["image"], ["pooled"]),
        helper.make_node("Flatten", ["pooled"], ["class_scores"], axis=1),
    ],
    "not_segmentation",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
    [helper.make_tensor_value_info("class_scores", TensorProto.FLOAT, [1, 3])],
)
save(helper.make_model(graph, opset_imports=opset(), producer_name="segrt make_fault_models.py"), "not_segmentation.onnx")

graph = helper.make_graph(
    [
        helper.make_node("Conv", ["image", "w"], ["logits"], kernel_shape=[1, 1]),
        helper.make_node("Sigmoid", ["logits"], ["mask"]),
    ],
    "unet_fixed_20000",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 20000, 20000])],
    [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 20000, 20000])],
    initializer=[numpy_helper.from_array(np.array([1.0, -1.0, 0.5], dtype=np.float32).reshape(1, 3, 1, 1), "w")],
)
save(helper.make_model(graph, opset_imports=opset(), producer_name="segrt make_fault_models.py"), "unet_fixed_20000.onnx")

graph = helper.make_graph(
    [
        helper.make_node("Reshape", ["image", "shape"], ["reshaped"]),
        helper.make_node("Sigmoid", ["reshaped"], ["mask"]),
    ],
    "run_fails_reshape",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, "height", "width"])],
    [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, "out_h", "out_w"])],
    initializer=[numpy_helper.from_array(np.array([1, 1, -1, 7], dtype=np.int64), "shape")],
)
save(helper.make_model(graph, opset_imports=opset(), producer_name="segrt make_fault_models.py"), "run_fails_reshape.onnx")

graph = helper.make_graph(
    [
        helper.make_node("Conv", ["image", "w"], ["wide"], kernel_shape=[1, 1]),
        helper.make_node("ReduceMean", ["wide"], ["logits"], axes=[1], keepdims=1),
        helper.make_node("Sigmoid", ["logits"], ["mask"]),
    ],
    "ort_huge_intermediate",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, "height", "width"])],
    [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, "height", "width"])],
    initializer=[numpy_helper.from_array(np.full((4096, 3, 1, 1), 0.01, dtype=np.float32), "w")],
)
save(helper.make_model(graph, opset_imports=opset(), producer_name="segrt make_fault_models.py"), "ort_huge_intermediate.onnx")
