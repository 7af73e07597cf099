"""segrt's C ABI (include/segrt.h) through ctypes, for the tests on real models.

Only what these tests call: options, UNet and SAM sessions, images in every 8-bit packed format.
Versioned structs get `struct_size` set before the `*_default()` call, as the header asks.
"""
import argparse
import ctypes as C
import pathlib

import numpy as np

GRAY8, BGR24, BGRA32, RGB24, RGBA32 = 0, 1, 2, 3, 4
RESIZE_NEAREST, RESIZE_BILINEAR, RESIZE_BICUBIC, RESIZE_LANCZOS3, RESIZE_BILINEAR_NO_ANTIALIAS = range(5)
SIGMOID_AUTO = 0


class SegOptions(C.Structure):
    _fields_ = [
        ("struct_size", C.c_uint32), ("provider", C.c_int32), ("device_id", C.c_int32),
        ("provider_policy", C.c_int32), ("intra_threads", C.c_int32), ("input_width", C.c_int32),
        ("input_height", C.c_int32), ("size_multiple", C.c_int32), ("resize_filter", C.c_int32),
        ("channel_order", C.c_int32), ("scale", C.c_float), ("mean", C.c_float * 3), ("std", C.c_float * 3),
        ("sigmoid", C.c_int32), ("threshold_mode", C.c_int32), ("threshold", C.c_float),
        ("min_area", C.c_uint32), ("close_kernel", C.c_uint32), ("fill_holes", C.c_uint32),
        ("reserved0", C.c_uint32), ("max_pixels", C.c_uint64), ("ort_path", C.c_char_p),
        ("tile_mode", C.c_int32), ("tile_width", C.c_int32), ("tile_height", C.c_int32),
        ("tile_overlap", C.c_int32), ("tile_batch", C.c_int32), ("max_sessions", C.c_int32),
        ("max_model_bytes", C.c_uint64), ("max_memory_bytes", C.c_uint64), ("output_name", C.c_char_p),
        ("cache_mode", C.c_int32), ("arena", C.c_uint32), ("cache_dir", C.c_char_p),
    ]


class SegImage(C.Structure):
    _fields_ = [("data", C.c_void_p), ("width", C.c_int32), ("height", C.c_int32), ("stride", C.c_int32),
                ("format", C.c_int32), ("plane1", C.c_void_p), ("plane2", C.c_void_p)]


class SegPoint(C.Structure):
    _fields_ = [("x", C.c_float), ("y", C.c_float), ("label", C.c_int32)]


class SegBox(C.Structure):
    _fields_ = [("x1", C.c_float), ("y1", C.c_float), ("x2", C.c_float), ("y2", C.c_float)]


class SegMask(C.Structure):
    _fields_ = [("data", C.c_void_p), ("width", C.c_int32), ("height", C.c_int32), ("stride", C.c_int32)]


class SegrtError(RuntimeError):
    pass


class Segrt:
    """The library, loaded from `lib` (target/debug/libsegrt.so), ONNX Runtime from `ort`."""

    def __init__(self, lib: pathlib.Path, ort: pathlib.Path):
        self.lib = C.CDLL(str(lib))
        L = self.lib
        p = C.c_void_p
        L.seg_last_error.argtypes = [C.c_char_p, C.c_size_t]
        L.seg_last_error.restype = C.c_size_t
        L.seg_runtime_init.argtypes = [C.c_char_p]
        L.seg_options_default.argtypes = [C.POINTER(SegOptions)]
        L.seg_create.argtypes = [C.c_char_p, C.POINTER(SegOptions), C.POINTER(p)]
        L.seg_create_sam2.argtypes = [C.c_char_p, C.c_char_p, C.POINTER(SegOptions), C.POINTER(p)]
        L.seg_free.argtypes = [p]
        L.seg_run_unet.argtypes = [p, C.POINTER(SegImage), C.POINTER(SegMask), C.POINTER(C.c_float), C.c_size_t, p, p]
        L.seg_sam2_set_image.argtypes = [p, C.POINTER(SegImage), C.POINTER(C.c_double), p]
        L.seg_sam2_reset.argtypes = [p]
        L.seg_run_sam2_points.argtypes = [p, C.POINTER(SegImage), C.POINTER(SegPoint), C.c_size_t, C.POINTER(SegBox),
                                          C.POINTER(C.c_float), C.c_size_t, C.c_uint32, C.POINTER(SegMask),
                                          C.POINTER(C.c_float), p, p]
        for f in ("seg_runtime_init", "seg_options_default", "seg_create", "seg_create_sam2", "seg_free",
                  "seg_run_unet", "seg_sam2_set_image", "seg_sam2_reset", "seg_run_sam2_points"):
            getattr(L, f).restype = C.c_int32
        self.check(L.seg_runtime_init(str(ort.resolve()).encode()), "seg_runtime_init")

    def check(self, status: int, what: str) -> None:
        if status != 0:
            buf = C.create_string_buffer(2048)
            self.lib.seg_last_error(buf, len(buf))
            raise SegrtError(f"{what}: status {status}: {buf.value.decode(errors='replace')}")

    def options(self, **fields) -> SegOptions:
        o = SegOptions(struct_size=C.sizeof(SegOptions))
        self.check(self.lib.seg_options_default(C.byref(o)), "seg_options_default")
        for k, v in fields.items():
            if k in ("mean", "std"):
                v = (C.c_float * 3)(*v)
            elif k == "output_name" and v is not None:
                v = v.encode()
            setattr(o, k, v)
        return o

    def unet(self, model: pathlib.Path, **fields) -> "Session":
        o = self.options(**fields)
        h = C.c_void_p()
        self.check(self.lib.seg_create(str(model).encode(), C.byref(o), C.byref(h)), f"seg_create {model}")
        return Session(self, h)

    def sam(self, encoder: pathlib.Path, decoder: pathlib.Path, **fields) -> "Session":
        o = self.options(**fields)
        h = C.c_void_p()
        self.check(self.lib.seg_create_sam2(str(encoder).encode(), str(decoder).encode(), C.byref(o), C.byref(h)),
                   f"seg_create_sam2 {encoder}")
        return Session(self, h)


def parse_args(description: str) -> argparse.Namespace:
    """The options every real-model test takes: the library, ONNX Runtime and the fetched files."""
    root = pathlib.Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=str(root / "target/debug/libsegrt.so"))
    ap.add_argument("--ort", default=str(next((root / ".onnxruntime").glob("libonnxruntime.so*"), "")))
    ap.add_argument("--weights", default=str(root / ".real-weights"))
    return ap.parse_args()


def image_of(pixels: np.ndarray, fmt: int):
    """A SegImage over `pixels` (HxW gray or HxWxC packed, C-contiguous uint8); keep `pixels` alive."""
    assert pixels.dtype == np.uint8 and pixels.flags["C_CONTIGUOUS"]
    h, w = pixels.shape[:2]
    return SegImage(data=pixels.ctypes.data, width=w, height=h, stride=0, format=fmt)


class Session:
    def __init__(self, segrt: Segrt, handle: C.c_void_p):
        self.segrt, self.handle = segrt, handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.handle:
            self.segrt.lib.seg_free(self.handle)
            self.handle = None

    def run_unet(self, pixels: np.ndarray, fmt: int):
        """(mask 0/255, probability) at the image's size."""
        h, w = pixels.shape[:2]
        mask = np.zeros((h, w), np.uint8)
        prob = np.zeros((h, w), np.float32)
        img = image_of(pixels, fmt)
        out = SegMask(data=mask.ctypes.data, width=w, height=h, stride=0)
        self.segrt.check(self.segrt.lib.seg_run_unet(self.handle, C.byref(img), C.byref(out),
                                                     prob.ctypes.data_as(C.POINTER(C.c_float)), prob.size, None, None),
                         "seg_run_unet")
        return mask, prob

    def set_image(self, pixels: np.ndarray, fmt: int) -> float:
        img = image_of(pixels, fmt)
        ms = C.c_double()
        self.segrt.check(self.segrt.lib.seg_sam2_set_image(self.handle, C.byref(img), C.byref(ms), None),
                         "seg_sam2_set_image")
        return ms.value

    def reset(self) -> None:
        self.segrt.check(self.segrt.lib.seg_sam2_reset(self.handle), "seg_sam2_reset")

    def points(self, size, points=(), box=None):
        """Mask (0/255) and predicted IoU of a prompt on the image set last; `size` = (w, h) of it,
        `points` = [(x, y, label)], `box` = (x1, y1, x2, y2) or None."""
        w, h = size
        mask = np.zeros((h, w), np.uint8)
        pts = (SegPoint * max(len(points), 1))(*[SegPoint(x, y, label) for x, y, label in points])
        bbox = C.byref(SegBox(*box)) if box is not None else None
        out = SegMask(data=mask.ctypes.data, width=w, height=h, stride=0)
        score = C.c_float()
        self.segrt.check(self.segrt.lib.seg_run_sam2_points(self.handle, None, pts if points else None, len(points), bbox,
                                                            None, 0, 0, C.byref(out), C.byref(score), None, None),
                         "seg_run_sam2_points")
        return mask, score.value
