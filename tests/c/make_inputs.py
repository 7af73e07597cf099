"""Writes the C test's inputs as binary PPM/PGM (C has no PNG decoder): make_inputs.py REPO OUT_DIR"""
import json
import pathlib
import sys

from PIL import Image

repo, out = map(pathlib.Path, sys.argv[1:3])
out.mkdir(parents=True, exist_ok=True)
Image.open(repo / "models/samples/lesion_01.png").convert("RGB").save(out / "lesion_01.ppm")
Image.open(repo / "models/samples/lesion_01_gt.png").convert("L").save(out / "lesion_01_gt.pgm")
Image.open(repo / "models/sam2/reference/img0.png").convert("RGB").save(out / "img0.ppm")
Image.open(repo / "models/sam2/reference/img0_point_mask.png").convert("L").save(out / "img0_point_mask.pgm")

# SAM2 video reference clip (tests/c/test_track.cpp): frames as PPM, reference masks as PGM, and the
# events and propagation records of index.json as lines of text (C++ has no JSON or PNG reader here).
ref = repo / "models/sam2/video/reference"
video = out / "video"
video.mkdir(exist_ok=True)
index = json.loads((ref / "index.json").read_text())


def pgm(name):
    Image.open(ref / name).convert("L").save(video / (pathlib.Path(name).stem + ".pgm"))
    return pathlib.Path(name).stem + ".pgm"


lines = [f"frames {len(index['frames'])} {index['video_width']} {index['video_height']}"]
for i, f in enumerate(index["frames"]):
    Image.open(ref / f).convert("RGB").save(video / f"frame{i:02d}.ppm")
# event FRAME OBJ PRESENT NPOINTS (X Y LABEL)... NMASKS MASK...
for e in index["events"]:
    pts = " ".join(f"{x!r} {y!r} {l}" for (x, y), l in zip(e["points"], e["labels"]))
    masks = " ".join(pgm(m) for m in e["masks"])
    lines.append(f"event {e['frame']} {e['obj_id']} {int(e['object_present'])} {len(e['labels'])} {pts} {len(e['masks'])} {masks}")
# track FRAME NOBJ (OBJ PRESENT MASK)...
for rec in index["propagation"]:
    objs = " ".join(f"{o['obj_id']} {int(o['object_present'])} {pgm(o['mask'])}" for o in rec["objects"])
    lines.append(f"track {rec['frame']} {len(rec['objects'])} {objs}")
(video / "reference.txt").write_text("\n".join(lines) + "\n")

# The real MobileSAM-class pair's photo (only when .real-weights/ was fetched): raw BGR bytes, 451x300,
# for the C++ test and the HALCON glue test (BGR: the order OpenCV and most C++ hosts hold pixels in).
photo = repo / ".real-weights/photos/chelsea.png"
if photo.is_file():
    r, g, b = Image.open(photo).convert("RGB").split()
    (out / "chelsea.bgr").write_bytes(Image.merge("RGB", (b, g, r)).tobytes())
