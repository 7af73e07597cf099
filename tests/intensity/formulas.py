"""The intensity pipelines segrt's intensity stage must reproduce, written out in numpy from their
sources (see docs/src/guide/images.md), on a fixed CT-like image. Writes expected.json beside this
file; tests/intensity_formulas.rs runs segrt on the same pixels and settings and compares, and
checks that this script still writes the committed file.

    python tests/intensity/formulas.py [OUT.json]
"""
import json
import sys
from pathlib import Path

import numpy as np

# 8x8 stored int16 values from -1200 to 3000 HU, in a fixed scrambled order.
N = 64
stored = np.array([round(-1200 + (i * 37 % N) * (4200 / (N - 1))) for i in range(N)], dtype=np.int16)
x = stored.astype(np.float64)


def monai_scale_intensity_range(img, a_min, a_max, b_min, b_max, clip):
    """MONAI ScaleIntensityRange: scale, then clip to [b_min, b_max]."""
    img = (img - a_min) / (a_max - a_min)
    img = img * (b_max - b_min) + b_min
    return np.clip(img, b_min, b_max) if clip else img


def monai_scale_intensity_range_percentiles(img, lower, upper, b_min, b_max, clip):
    a_min, a_max = np.percentile(img, lower), np.percentile(img, upper)
    return monai_scale_intensity_range(img, a_min, a_max, b_min, b_max, clip)


def nnunet_ct(img, p005, p995, mean, std):
    """nnU-Net CTNormalization: fixed dataset percentiles and statistics."""
    return (np.clip(img, p005, p995) - mean) / max(std, 1e-8)


def medsam_ct(img, level, width):
    """MedSAM pre_CT_MR.py: clip to the window, min-max to 0..255; inference: /255 (min-max of an
    image holding 0 and 255). segrt does not copy the np.uint8 truncation between the two."""
    lo, hi = level - width / 2, level + width / 2
    c = np.clip(img, lo, hi)
    c = (c - c.min()) / (c.max() - c.min()) * 255.0
    return c / 255.0


def halcon_all_channels(img, rmin=-127.0, rmax=128.0):
    """HALCON preprocess_dl_model_images, 'all_channels': scale = (Rmax-Rmin)/(max-min),
    shift = Rmin - scale*min."""
    mn, mx = img.min(), img.max()
    scale = (rmax - rmin) / (mx - mn) if mx > mn else 1.0
    return img * scale + (rmin - scale * mn)


def dicom_rescale_then_window(stored_u16, slope, intercept, low, high):
    """pydicom apply_modality_lut (v*slope + intercept), then MONAI's window to 0..1."""
    hu = stored_u16 * slope + intercept
    return monai_scale_intensity_range(hu, low, high, 0.0, 1.0, True)


stored_u16 = (stored.astype(np.int32) + 1200).astype(np.uint16)  # CT stored values, intercept -1200
cases = [
    # name, stored values and format, segrt settings, model normalisation (scale, mean, std), expected
    dict(name="monai_scale_intensity_range", format="GRAY16S", stored=stored.tolist(),
         intensity=dict(range="window", low=-175.0, high=250.0, out_low=0.0, out_high=1.0),
         model=dict(scale=1.0, mean=0.0, std=1.0),
         expected=monai_scale_intensity_range(x, -175.0, 250.0, 0.0, 1.0, True).tolist()),
    dict(name="nnunet_ct", format="GRAY16S", stored=stored.tolist(),
         intensity=dict(range="window", low=-958.0, high=1521.0, out_low=-958.0, out_high=1521.0),
         model=dict(scale=1.0, mean=95.3, std=310.2),
         expected=nnunet_ct(x, -958.0, 1521.0, 95.3, 310.2).tolist()),
    dict(name="medsam_ct", format="GRAY16S", stored=stored.tolist(),
         intensity=dict(range="window", low=40.0 - 200.0, high=40.0 + 200.0, out_low=0.0, out_high=255.0),
         model=dict(scale=1.0 / 255.0, mean=0.0, std=1.0),
         expected=medsam_ct(x, 40.0, 400.0).tolist()),
    dict(name="halcon_min_max", format="GRAY16S", stored=stored.tolist(),
         intensity=dict(range="min_max", out_low=-127.0, out_high=128.0),
         model=dict(scale=1.0, mean=0.0, std=1.0),
         expected=halcon_all_channels(x).tolist()),
    dict(name="monai_percentiles", format="GRAY16S", stored=stored.tolist(),
         intensity=dict(range="percentiles", low=0.5, high=99.5, out_low=0.0, out_high=1.0),
         model=dict(scale=1.0, mean=0.0, std=1.0),
         expected=monai_scale_intensity_range_percentiles(x, 0.5, 99.5, 0.0, 1.0, True).tolist()),
    dict(name="dicom_rescale_then_window", format="GRAY16", stored=stored_u16.tolist(),
         intensity=dict(range="window", low=-160.0, high=240.0, out_low=0.0, out_high=1.0, slope=1.0, intercept=-1200.0),
         model=dict(scale=1.0, mean=0.0, std=1.0),
         expected=dicom_rescale_then_window(stored_u16.astype(np.float64), 1.0, -1200.0, -160.0, 240.0).tolist()),
    dict(name="raw_hu_none", format="GRAY16", stored=stored_u16.tolist(),
         intensity=dict(range="none", slope=1.0, intercept=-1200.0),
         model=dict(scale=1.0, mean=0.0, std=1.0),
         expected=(stored_u16.astype(np.float64) - 1200.0).tolist()),
]

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("expected.json")
out.write_text(json.dumps({"width": 8, "height": 8, "cases": cases}, indent=1) + "\n")
