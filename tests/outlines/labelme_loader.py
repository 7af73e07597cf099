"""LabelMe's own JSON loader, without its GUI: `labelme` (pip) needs PyQt5 and onnxruntime to import,
so this takes `labelme/_label_file.py` (`read_label_file`: every key and type check LabelMe makes when
it opens a file, the image found from `imagePath` and its size compared) and `labelme/utils/image.py`
from the pinned wheel, and runs them with stand-ins for the modules they import but do not use here
(PyQt5.QtGui for a type annotation, tifffile for .tif images, loguru for a debug line).

    read_label_file = load(wheel_path)
    data = read_label_file("x.json")   # raises LabelFileReadError on what LabelMe refuses
"""
import hashlib
import sys
import types
import zipfile

WHEEL = "labelme-6.3.1-py3-none-any.whl"
SHA256 = "024568ce67ca915e8000db790fbec32a874c0e726d13604d4566c54f95814658"


def load(wheel_path):
    with open(wheel_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{wheel_path}: sha256 {digest}, expected {SHA256} ({WHEEL})")
    z = zipfile.ZipFile(wheel_path)
    image_src = z.read("labelme/utils/image.py").decode()
    label_file_src = z.read("labelme/_label_file.py").decode()

    qt = types.ModuleType("PyQt5")
    qt.QtGui = types.SimpleNamespace(QImage=object)
    sys.modules.setdefault("PyQt5", qt)
    sys.modules.setdefault("PyQt5.QtGui", qt.QtGui)
    tiff = types.ModuleType("tifffile")

    def no_tiff(*_a, **_k):
        raise RuntimeError("tifffile stand-in: no .tif images in these tests")

    tiff.imread = no_tiff
    sys.modules.setdefault("tifffile", tiff)
    loguru = types.ModuleType("loguru")
    loguru.logger = types.SimpleNamespace(debug=lambda *a, **k: None, info=lambda *a, **k: None, warning=lambda *a, **k: None)
    sys.modules.setdefault("loguru", loguru)

    pkg = types.ModuleType("labelme")
    pkg.__path__ = []
    pkg.__version__ = "6.3.1"
    utils = types.ModuleType("labelme.utils")
    exec(compile(image_src, "labelme/utils/image.py", "exec"), utils.__dict__)
    pkg.utils = utils
    sys.modules["labelme"] = pkg
    sys.modules["labelme.utils"] = utils
    label_file = types.ModuleType("labelme._label_file")
    label_file.__dict__["__name__"] = "labelme._label_file"
    sys.modules["labelme._label_file"] = label_file
    exec(compile(label_file_src, "labelme/_label_file.py", "exec"), label_file.__dict__)
    return label_file.read_label_file
