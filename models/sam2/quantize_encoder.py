#!/usr/bin/env python3
"""INT8 SAM2 image encoder for CPUs, from an fp32 encoder .onnx, with ONNX Runtime's quantisation tools.

Only the encoder is quantised: it costs ~40x a click (decoder) and is where INT8 pays; the decoder
stays fp32 and takes the int8 encoder's (float32) outputs unchanged. The encoder's input and output
names, dtypes and shapes are kept, so segrt recognises the result under the same export convention
as the fp32 file (samexporter, sam2-onnx, osam/ryouchinsa with its uint8 input, ...).

Methods:
  dynamic (default)  weights int8 per output channel, activations quantised at run time
                     (`quantize_dynamic`, MatMulInteger/DynamicQuantizeLinear); no calibration data.
  static             weights and activations int8 in QDQ form, activation ranges calibrated (MinMax) on
                     generated images (flat shapes on textured backgrounds, seeded) pre-processed as
                     segrt does for that encoder (stretch to SxS, /255 + ImageNet mean/std, or raw
                     uint8 for a uint8-input encoder).

By default the model is first run through `quant_pre_process` (symbolic shape inference + ORT graph
optimisation), as ONNX Runtime recommends before quantising. Deterministic: the same input gives a
byte-identical output (numpy seed fixed; dynamic quantisation uses no data).

Examples (from the repository root, in an environment with onnx + onnxruntime==1.31.1):
  python models/sam2/quantize_encoder.py models/sam2/real-size/sam2_tiny_random_1024_samexporter_encoder.onnx \\
      models/sam2/real-size/sam2_tiny_random_1024_samexporter_encoder.int8.onnx
  python models/sam2/quantize_encoder.py --method static --calib-images 8 in.onnx out.int8.onnx
"""

import argparse
import os
import sys
import tempfile

import numpy as np
import onnx

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def synthetic_image(seed, width, height):
    """An RGB uint8 HxWx3 image: a smooth gradient background with noise and a few flat shapes
    (ellipses and rectangles). Same seed, same image, on any machine (numpy's PCG64)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    c0, c1 = rng.uniform(30, 220, 3), rng.uniform(30, 220, 3)
    t = (xx / max(width - 1, 1) * rng.uniform(0.2, 1.0) + yy / max(height - 1, 1) * rng.uniform(0.2, 1.0)) / 2.0
    img = c0[None, None, :] * (1 - t[..., None]) + c1[None, None, :] * t[..., None]
    img += rng.normal(0, 6, img.shape)
    for _ in range(int(rng.integers(3, 6))):
        colour = rng.uniform(0, 255, 3)
        cx, cy = rng.uniform(0.15, 0.85) * width, rng.uniform(0.15, 0.85) * height
        rx, ry = rng.uniform(0.06, 0.22) * width, rng.uniform(0.06, 0.22) * height
        if rng.random() < 0.5:
            inside = ((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1.0
        else:
            inside = (np.abs(xx - cx) <= rx) & (np.abs(yy - cy) <= ry)
        img[inside] = colour + rng.normal(0, 3, (int(inside.sum()), 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def encoder_input(rgb, size, dtype):
    """segrt's SAM2 pre-processing for a calibration image: stretch to size x size (bilinear), then
    NCHW float32 normalised with ImageNet mean/std, or NCHW uint8 for a uint8-input encoder."""
    from PIL import Image

    resized = np.asarray(Image.fromarray(rgb).resize((size, size), Image.BILINEAR))
    if dtype == np.uint8:
        return resized.transpose(2, 0, 1)[None].copy()
    x = (resized.astype(np.float32) / 255.0 - IMAGENET_MEAN) / IMAGENET_STD
    return x.transpose(2, 0, 1)[None].astype(np.float32).copy()


def encoder_image_input(model):
    """(name, size, numpy dtype) of the encoder's single image input [1,3,S,S]."""
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        sys.exit(f"expected one encoder input, found {[i.name for i in inputs]}")
    inp = inputs[0]
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in inp.type.tensor_type.shape.dim]
    if len(dims) != 4 or dims[1] != 3:
        sys.exit(f"encoder input {inp.name} is not [1,3,S,S]: {dims}")
    size = dims[2] if dims[2] > 0 else 1024
    dtype = onnx.helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type)
    return inp.name, size, dtype


class SyntheticImages:
    """onnxruntime.quantization.CalibrationDataReader over generated images."""

    def __init__(self, name, size, dtype, count, seed):
        self.items = iter(
            {name: encoder_input(synthetic_image(seed + i, *shape), size, dtype)}
            for i, shape in zip(range(count), [(640, 480), (480, 640), (800, 800), (1024, 576)] * count)
        )

    def get_next(self):
        return next(self.items, None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="fp32 SAM2 encoder .onnx")
    ap.add_argument("output", help="where to write the INT8 encoder .onnx")
    ap.add_argument("--method", choices=["dynamic", "static"], default="dynamic")
    ap.add_argument("--ops", default="MatMul",
                    help="comma-separated op types to quantise (default MatMul: Hiera's attention and MLP "
                         "projections; adding Conv quantises the patch embedding and FPN convolutions too)")
    ap.add_argument("--weight-type", choices=["qint8", "quint8"], default="qint8")
    ap.add_argument("--per-tensor", action="store_true", help="one weight scale per tensor (default: per channel)")
    ap.add_argument("--full-range", dest="reduce_range", action="store_false",
                    help="8-bit weights (default: 7-bit). Only for CPUs with VNNI: on AVX2 alone ONNX "
                         "Runtime's u8s8 kernel (vpmaddubsw) saturates 8-bit products; measured on the "
                         "tiny encoders on an AVX2 EPYC: 6-32%% mean output error with 8-bit, 0.4-1.7%% with 7-bit")
    ap.add_argument("--no-preprocess", action="store_true", help="skip quant_pre_process")
    ap.add_argument("--calib-images", type=int, default=8, help="static: number of generated calibration images")
    ap.add_argument("--seed", type=int, default=0, help="static: seed of the first calibration image")
    args = ap.parse_args()

    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    np.random.seed(args.seed)
    model = onnx.load(args.input)
    name, size, dtype = encoder_image_input(model)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    wtype = QuantType.QInt8 if args.weight_type == "qint8" else QuantType.QUInt8
    with tempfile.TemporaryDirectory() as tmp:
        src = args.input
        if not args.no_preprocess:
            src = os.path.join(tmp, "pre.onnx")
            try:
                quant_pre_process(args.input, src, skip_symbolic_shape=False)
            except AssertionError:
                # The legacy exporter's If nodes (Hiera's padding branches) break ORT's symbolic
                # shape inference; ONNX shape inference + ORT graph optimisation still run.
                print("symbolic shape inference failed on this graph; pre-processing without it")
                quant_pre_process(args.input, src, skip_symbolic_shape=True)
        if args.method == "dynamic":
            quantize_dynamic(src, args.output, op_types_to_quantize=ops, per_channel=not args.per_tensor,
                             reduce_range=args.reduce_range, weight_type=wtype)
        else:
            reader = SyntheticImages(name, size, dtype, args.calib_images, args.seed)
            quantize_static(src, args.output, reader, quant_format=QuantFormat.QDQ, op_types_to_quantize=ops,
                            per_channel=not args.per_tensor, reduce_range=args.reduce_range,
                            activation_type=QuantType.QInt8, weight_type=wtype,
                            calibrate_method=CalibrationMethod.MinMax,
                            extra_options={"ActivationSymmetric": False, "WeightSymmetric": True})
    out = onnx.load(args.output)
    # The interface segrt matches on must be unchanged.
    io = lambda m: ([(i.name, i.type.tensor_type.elem_type) for i in m.graph.input
                     if i.name not in {t.name for t in m.graph.initializer}],
                    [(o.name, o.type.tensor_type.elem_type) for o in m.graph.output])
    if io(out) != io(model):
        sys.exit(f"quantisation changed the encoder's interface: {io(model)} -> {io(out)}")
    q_nodes = sum(n.op_type in ("MatMulInteger", "ConvInteger", "DynamicQuantizeLinear", "QuantizeLinear",
                                "DynamicQuantizeMatMul", "QLinearMatMul", "QLinearConv") for n in out.graph.node)
    print(f"{args.input} ({os.path.getsize(args.input)} B) -> {args.output} ({os.path.getsize(args.output)} B), "
          f"{args.method}, ops {ops}, {q_nodes} quantisation nodes")


if __name__ == "__main__":
    main()
