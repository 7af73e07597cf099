"""Makes the tiny fault-test models (onnx.helper only, no training; committed, a few hundred bytes).

    python models/test/make_fault_models.py

not_segmentation.onnx: a valid ONNX classifier, image [1,3,32,32] -> class_scores [1,3]
(GlobalAveragePool + Flatten): loads in ONNX Runtime, but is not a segmentation model.
"""
from pathlib import Path

import onnx
from onnx import TensorProto, helper

here = Path(__file__).parent
graph = helper.make_graph(
    [
        helper.make_node("GlobalAveragePool", ["image"], ["pooled"]),
        helper.make_node("Flatten", ["pooled"], ["class_scores"], axis=1),
    ],
    "not_segmentation",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
    [helper.make_tensor_value_info("class_scores", TensorProto.FLOAT, [1, 3])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="segrt make_fault_models.py")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, here / "not_segmentation.onnx")
print("wrote", here / "not_segmentation.onnx")
