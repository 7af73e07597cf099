"""Real-size UNets for the benchmark (random weights: the architecture and size are what matter for speed).

    .venv-torch/bin/python models/make_bench_models.py      # needs PyTorch + onnx; CI never runs it

Writes into models/generated/ (git-ignored): unet_base32_512.onnx and unet_base64_512.onnx (fp32,
input [1,3,512,512], output logits [1,1,512,512]), the same UNet architecture as the demo model
(make_models.py) at base 32 and 64 channels, and their fp16 versions with fp16 inputs and outputs
(unet_base32_512_fp16.onnx, unet_base64_512_fp16.onnx; needs onnxconverter-common).
"""
import os

import onnx
import torch
from onnxconverter_common import float16

from make_models import UNet, export

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "generated")
os.makedirs(OUT, exist_ok=True)
for base in (32, 64):
    torch.manual_seed(base)
    net = UNet(base=base)
    fp32 = os.path.join(OUT, f"unet_base{base}_512.onnx")
    export(net, fp32, (1, 3, 512, 512))
    onnx.save(float16.convert_float_to_float16(onnx.load(fp32), keep_io_types=False), fp32.replace(".onnx", "_fp16.onnx"))
