#!/usr/bin/env python3
"""Checks ONNX models for what ONNX Runtime's DirectML provider is known to refuse or to leave to the
CPU, without a GPU (only the `onnx` package):

  - Reshape with allowzero=1: the DirectML provider refuses it (other runtimes strip the attribute in a
    DirectML copy of the model, which is the same graph when no shape input holds a 0);
  - tensors of type double (DirectML has no float64 operators);
  - control flow (If, Loop, Scan): run by ONNX Runtime on the CPU, with copies to and from the GPU;
  - the opset, and every operator type with its count, for comparison with the DirectML provider's
    operator list;
  - inputs with dynamic dimensions (DirectML runs them; ONNX Runtime's docs ask DirectML sessions to
    turn memory patterns off and run sequentially, which segrt's DirectML sessions are to do).

    python3 tests/gpu/directml_model_check.py MODEL.onnx [...]   exit 1 when a model has a refused node
"""
import collections
import sys

import onnx
from onnx import TensorProto

CONTROL_FLOW = {"If", "Loop", "Scan"}


def graphs(graph):
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from graphs(attr.g)
            for g in attr.graphs:
                yield from graphs(g)


def check(path):
    model = onnx.load(path, load_external_data=False)
    opset = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    ops = collections.Counter()
    refused, notes = [], []
    for g in graphs(model.graph):
        for node in g.node:
            ops[node.op_type if not node.domain else f"{node.domain}.{node.op_type}"] += 1
            if node.op_type == "Reshape":
                allowzero = next((a.i for a in node.attribute if a.name == "allowzero"), 0)
                if allowzero:
                    refused.append(f"Reshape '{node.name}' has allowzero=1")
            if node.op_type in CONTROL_FLOW:
                notes.append(f"{node.op_type} '{node.name}' runs on the CPU under DirectML")
        doubles = [v.name for v in list(g.input) + list(g.output) + list(g.value_info) if v.type.tensor_type.elem_type == TensorProto.DOUBLE]
        doubles += [t.name for t in g.initializer if t.data_type == TensorProto.DOUBLE]
        if doubles:
            refused.append(f"float64 tensors: {', '.join(doubles[:5])}{' ...' if len(doubles) > 5 else ''}")
    dynamic = []
    for v in model.graph.input:
        dims = [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in v.type.tensor_type.shape.dim]
        if any(isinstance(d, str) for d in dims):
            dynamic.append(f"{v.name}{dims}")
    print(f"== {path}: opset {opset}, {sum(ops.values())} nodes")
    print("   operators: " + ", ".join(f"{k} {n}" for k, n in sorted(ops.items())))
    if dynamic:
        print("   dynamic inputs: " + "; ".join(dynamic))
    for n in notes:
        print("   note: " + n)
    for r in refused:
        print("   REFUSED by DirectML: " + r)
    if not refused:
        print("   nothing DirectML is known to refuse")
    return not refused


if __name__ == "__main__":
    ok = [check(p) for p in sys.argv[1:]]
    sys.exit(0 if all(ok) else 1)
