#!/usr/bin/env python3
"""Parity of segrt's UNet pipeline with a plain Python reference (onnxruntime + numpy + Pillow).

The reference does what segrt documents, the usual Python way:
  RGB image (gray models: Pillow convert("L")) -> Pillow resize BILINEAR to the model size -> x/255
  -> NCHW/NHWC float32 -> onnxruntime -> sigmoid when the output holds logits
  -> Pillow mode "F" BILINEAR resize back to the image size -> prob > 0.5 -> 0/255.
segrt's masks come from its CLI (`segrt unet`). Each model/image pair must agree on >= 99.9 % of pixels.
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from PIL import Image

MODELS = ["demo_unet.onnx", "test/unet_gray.onnx", "test/unet_nhwc.onnx", "test/unet_sigmoid.onnx"]
GOAL = 0.999


def reference_mask(session: ort.InferenceSession, path: pathlib.Path) -> np.ndarray:
    inp = session.get_inputs()[0]
    shape = inp.shape
    nhwc = shape[1] not in (1, 3)
    channels = shape[3] if nhwc else shape[1]
    mh, mw = (shape[1], shape[2]) if nhwc else (shape[2], shape[3])
    img = Image.open(path).convert("RGB")
    w, h = img.size
    if channels == 1:
        img = img.convert("L")
    x = np.asarray(img.resize((mw, mh), Image.BILINEAR), dtype=np.float32) / 255.0
    if x.ndim == 2:
        x = x[:, :, None]
    x = x[None] if nhwc else x.transpose(2, 0, 1)[None]
    y = session.run(None, {inp.name: np.ascontiguousarray(x)})[0]
    y = y[0, :, :, 0] if nhwc else y[0, 0]
    if y.min() < 0.0 or y.max() > 1.0:
        y = 1.0 / (1.0 + np.exp(-y))
    prob = np.asarray(Image.fromarray(y.astype(np.float32), "F").resize((w, h), Image.BILINEAR))
    return np.where(prob > 0.5, 255, 0).astype(np.uint8)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segrt", required=True, help="path of the segrt executable")
    ap.add_argument("--repo", default=str(pathlib.Path(__file__).resolve().parents[2]))
    args = ap.parse_args()
    repo = pathlib.Path(args.repo)
    samples = sorted(p for p in (repo / "models/samples").glob("*.png") if not p.stem.endswith("_gt"))
    passed = failed = 0
    for model in MODELS:
        model_path = repo / "models" / model
        session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
        with tempfile.TemporaryDirectory() as out:
            cmd = [args.segrt, "unet", "--model", str(model_path), "--out", out, *map(str, samples)]
            subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
            for s in samples:
                ours = np.asarray(Image.open(pathlib.Path(out) / f"{s.stem}_mask.png"))
                ref = reference_mask(session, s)
                agree = float((ours == ref).mean())
                # an empty reference mask would make the comparison vacuous
                ok = agree >= GOAL and (ref > 0).sum() > 100
                passed += ok
                failed += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {model:<26} {s.name:<16} {agree * 100:8.4f} % identical "
                      f"({int((ours != ref).sum())} of {ref.size} pixels differ)")
    print(f"parity: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
