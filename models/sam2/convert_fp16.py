#!/usr/bin/env python3
"""fp16 SAM2 image encoder for GPU execution providers (CUDA, TensorRT, DirectML), from an fp32
encoder .onnx, with onnxconverter-common's `float16.convert_float_to_float16`.

Weights and internal computation become float16 (half the file, tensor-core matmuls on GPUs). On a
CPU an fp16 model is usually slower than fp32 (ONNX Runtime's CPU provider casts most fp16 ops back
to fp32): use `quantize_encoder.py` (INT8) for CPUs instead.

--keep-io-types (the default) keeps the encoder's input and outputs float32 (uint8 input of an
osam/ryouchinsa encoder stays uint8) with Cast nodes at the edges, so the file has exactly the fp32
encoder's interface: segrt recognises it under the same export convention and feeds it the same
decoder. --no-keep-io-types makes the input and outputs float16 too; segrt's SAM2 path reads float32
(or uint8) encoder inputs and float32 features only and refuses such a file with a message naming
the dtype (its UNet path does read fp16 tensors).

Deterministic: the same input gives a byte-identical output (no data, no randomness).

Example (from the repository root):
  python models/sam2/convert_fp16.py models/sam2/real-size/sam2_tiny_random_1024_samexporter_encoder.onnx \\
      models/sam2/real-size/sam2_tiny_random_1024_samexporter_encoder.fp16.onnx
"""

import argparse
import os
import sys

import onnx


def fix_casts(graph):
    """onnxconverter-common 1.16 marks the outputs of `Cast(to=float)` nodes as float16 (so their
    consumers are converted) but leaves `to=float`, which ONNX Runtime rejects ("Type (tensor(float16))
    of output arg ... of node (.../Cast) does not match expected type (tensor(float))"). The legacy
    exporter emits such Casts for shape arithmetic (Hiera's attention scale) and the uint8 input of
    osam encoders. Set `to` to what the graph now declares. Returns how many were changed."""
    declared = {v.name: v.type.tensor_type.elem_type for v in list(graph.value_info) + list(graph.output)}
    fixed = 0
    for node in graph.node:
        for attr in node.attribute:
            for g in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs):
                fixed += fix_casts(g)
        if node.op_type != "Cast":
            continue
        to = next(a for a in node.attribute if a.name == "to")
        want = declared.get(node.output[0])
        if to.i == onnx.TensorProto.FLOAT and want == onnx.TensorProto.FLOAT16:
            to.i = onnx.TensorProto.FLOAT16
            fixed += 1
    return fixed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="fp32 SAM2 encoder .onnx")
    ap.add_argument("output", help="where to write the fp16 encoder .onnx")
    ap.add_argument("--keep-io-types", action=argparse.BooleanOptionalAction, default=True,
                    help="keep float32 (or uint8) inputs and float32 outputs (default; what segrt's SAM2 path reads)")
    ap.add_argument("--op-block-list", default="",
                    help="comma-separated op types to keep in float32 in addition to onnxconverter-common's "
                         "default list")
    args = ap.parse_args()

    from onnxconverter_common import float16

    model = onnx.load(args.input)
    block = None
    if args.op_block_list:
        block = sorted(set(float16.DEFAULT_OP_BLOCK_LIST) | {o.strip() for o in args.op_block_list.split(",") if o.strip()})
    out = float16.convert_float_to_float16(model, keep_io_types=args.keep_io_types, op_block_list=block)
    fixed = fix_casts(out.graph)
    if fixed:
        print(f"{fixed} Cast node(s) set to float16 to match their converted outputs")
    onnx.save(out, args.output)
    onnx.checker.check_model(args.output)
    io = lambda m: ([(i.name, onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type).name)
                     for i in m.graph.input], [(o.name, onnx.helper.tensor_dtype_to_np_dtype(
                         o.type.tensor_type.elem_type).name) for o in m.graph.output])
    if args.keep_io_types and io(out) != io(model):
        sys.exit(f"conversion changed the encoder's interface: {io(model)} -> {io(out)}")
    print(f"{args.input} ({os.path.getsize(args.input)} B) -> {args.output} ({os.path.getsize(args.output)} B), "
          f"inputs {io(out)[0]}, outputs {io(out)[1]}")


if __name__ == "__main__":
    main()
