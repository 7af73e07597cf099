"""Writes the C test's inputs as binary PPM/PGM (C has no PNG decoder): make_inputs.py REPO OUT_DIR"""
import pathlib
import sys

from PIL import Image

repo, out = map(pathlib.Path, sys.argv[1:3])
out.mkdir(parents=True, exist_ok=True)
Image.open(repo / "models/samples/lesion_01.png").convert("RGB").save(out / "lesion_01.ppm")
Image.open(repo / "models/samples/lesion_01_gt.png").convert("L").save(out / "lesion_01_gt.pgm")
Image.open(repo / "models/sam2/reference/img0.png").convert("RGB").save(out / "img0.ppm")
Image.open(repo / "models/sam2/reference/img0_point_mask.png").convert("L").save(out / "img0_point_mask.pgm")
