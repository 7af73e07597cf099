"""Real-size UNets for the benchmark (random weights: the architecture and size are what matter for speed).

    /work/pyenv-torch/bin/python models/make_bench_models.py      # needs PyTorch + onnx; CI never runs it

Writes into models/generated/ (git-ignored): unet_base32_512.onnx and unet_base64_512.onnx (fp32,
input [1,3,512,512], output logits [1,1,512,512]), the same UNet architecture as the demo model
(make_models.py) at base 32 and 64 channels.
"""
import os

import torch

from make_models import UNet, export

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "generated")
os.makedirs(OUT, exist_ok=True)
for base in (32, 64):
    torch.manual_seed(base)
    net = UNet(base=base)
    export(net, os.path.join(OUT, f"unet_base{base}_512.onnx"), (1, 3, 512, 512))
