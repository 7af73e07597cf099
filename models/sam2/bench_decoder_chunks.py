#!/usr/bin/env python3
"""Decoder time per prompt against the prompts per run (16 boxes in chunks of 1, 2, 4, 8, 16,
alternating), in plain onnxruntime with 2 intra-op threads, on the real-size exports of README.md
("Real-size benchmarks"): the sam2-onnx batched decoder and the transformers decoder, random inputs.

    .venv-torch/bin/python models/sam2/bench_decoder_chunks.py [ROUNDS]   (default 2)
"""
import os
import sys
import time

import numpy as np
import onnxruntime as ort

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real-size") + "/"
N = 16
so = ort.SessionOptions()
so.intra_op_num_threads = 2


def transformers_decoder():
    d = ort.InferenceSession(R + "transformers/prompt_encoder_mask_decoder.onnx", so, providers=["CPUExecutionProvider"])
    e = {
        "image_embeddings.0": np.random.randn(1, 32, 256, 256).astype(np.float32),
        "image_embeddings.1": np.random.randn(1, 64, 128, 128).astype(np.float32),
        "image_embeddings.2": np.random.randn(1, 256, 64, 64).astype(np.float32),
    }

    def run(b):
        f = dict(e)
        f["input_points"] = np.zeros((1, b, 0, 2), np.float32)
        f["input_labels"] = np.zeros((1, b, 0), np.int64)
        f["input_boxes"] = (np.random.rand(1, b, 4) * 500).astype(np.float32)
        d.run(None, f)

    return run


def sam2onnx_batched_decoder():
    d = ort.InferenceSession(R + "sam2_tiny_random_1024_sam2onnx_batched_decoder.onnx", so, providers=["CPUExecutionProvider"])
    e = {
        "image_embed": np.random.randn(1, 256, 64, 64).astype(np.float32),
        "high_res_feat_0": np.random.randn(1, 32, 256, 256).astype(np.float32),
        "high_res_feat_1": np.random.randn(1, 64, 128, 128).astype(np.float32),
        "mask_input": np.zeros([1, 1, 256, 256], np.float32),
        "has_mask_input": np.zeros([1, 1], np.float32),
    }

    def run(b):
        f = dict(e)
        f["point_coords"] = (np.random.rand(b, 2, 2) * 1000).astype(np.float32)
        f["point_labels"] = np.tile(np.array([[2, 3]], np.int64), (b, 1))  # box corners
        d.run(None, f)

    return run


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    for name, make in [("sam2onnx batched", sam2onnx_batched_decoder), ("transformers", transformers_decoder)]:
        run = make()
        run(1)
        run(4)  # warm-up
        res = {c: [] for c in (1, 2, 4, 8, 16)}
        for _ in range(rounds):
            for c in res:
                t = time.perf_counter()
                for _ in range(N // c):
                    run(c)
                res[c].append((time.perf_counter() - t) * 1e3 / N)
        print(name, f"ms per prompt for {N} prompts in chunks of:", ", ".join(f"{c}: {np.median(v):.0f}" for c, v in res.items()))


if __name__ == "__main__":
    main()
