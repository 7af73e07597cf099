"""The usual Python pre/post-processing around a UNet, timed: what segrt's stages are compared with.

usage: prepost_cv2.py IMAGE MODEL_W MODEL_H ITERS
       -> one JSON line {"pre_ms", "pre_area_ms", "post_ms"}: medians

pre:  cv2.imread result (BGR) -> cvtColor to RGB -> cv2.resize (INTER_LINEAR) to the model size ->
      float32 / 255 -> HWC to NCHW, contiguous. INTER_LINEAR samples 2x2 pixels even when shrinking
      (no antialiasing), like segrt's SEG_RESIZE_BILINEAR_NO_ANTIALIAS.
pre_area: the same with INTER_AREA, OpenCV's antialiased shrink, the counterpart of segrt's default
      (Pillow-style) BILINEAR.
post: logits [1,1,h,w] -> sigmoid -> cv2.resize back to the image size (INTER_LINEAR) -> > 0.5 -> uint8 0/255.
"""
import json
import sys
import time

import cv2
import numpy as np

path, mw, mh, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
bgr = cv2.imread(path, cv2.IMREAD_COLOR)
h, w = bgr.shape[:2]
logits = np.random.default_rng(0).standard_normal((1, 1, mh, mw)).astype(np.float32)


def pre(interpolation=cv2.INTER_LINEAR):
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    small = cv2.resize(rgb, (mw, mh), interpolation=interpolation)
    x = small.astype(np.float32) / 255.0
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


def post():
    prob = 1.0 / (1.0 + np.exp(-logits[0, 0]))
    big = cv2.resize(prob, (w, h), interpolation=cv2.INTER_LINEAR)
    return (big > 0.5).astype(np.uint8) * 255


def median_ms(fn):
    fn()
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


print(json.dumps({"pre_ms": median_ms(pre), "pre_area_ms": median_ms(lambda: pre(cv2.INTER_AREA)), "post_ms": median_ms(post), "cv2": cv2.__version__, "threads": cv2.getNumThreads()}))
