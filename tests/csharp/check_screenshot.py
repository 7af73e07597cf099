"""Checks a WinForms self-test screenshot: not blank, and showing the mask overlay colour.

usage: check_screenshot.py shot.png unet|sam2
The sample blends mask pixels as (pixel + 3 * colour) / 4 with UnetColor (255, 40, 40) or
Sam2Color (40, 160, 255), so overlay pixels fall in the boxes below whatever the image under them.
"""
import sys

import numpy as np
from PIL import Image

path, kind = sys.argv[1], sys.argv[2]
rgb = np.asarray(Image.open(path).convert("RGB")).astype(int)
r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
luma = 0.299 * r + 0.587 * g + 0.114 * b
if kind == "unet":
    overlay = (r >= 191) & (g <= 94) & (b <= 94)
else:
    overlay = (r >= 30) & (r <= 94) & (g >= 120) & (g <= 184) & (b >= 191)
share = overlay.mean()
print(f"{path}: {rgb.shape[1]}x{rgb.shape[0]}, luminance std {luma.std():.1f}, {kind} overlay pixels {overlay.sum()} ({100 * share:.2f} %)")
assert luma.std() > 10, "the screenshot is blank"
assert share > 0.005, f"no {kind} overlay in the screenshot"
