#!/usr/bin/env python3
"""The official SAM2AutomaticMaskGenerator (sam2 1.1.0) with its networks replaced by ONNX Runtime
sessions: the same work as segrt's segment-everything (examples/bench_everything.rs), for the ratio.

    python benches/everything_python.py ENCODER DECODER FRAME.png [--sides 16,32] [--batch 64]

The encoder is the ONNX export's (run once, outside the timed part, as segrt's bench does); the
generator's own code does everything else: its point grid, batching (points_per_batch prompts per
decoder run when the decoder has a prompt batch axis, else one), `postprocess_masks` (bilinear to the
image size), the filters, RLE encoding and NMS. Prints the decoder time, the rest, and prompts/s.
"""
import sys
import time
import warnings

import numpy as np
import onnxruntime as ort
import torch
from PIL import Image


def main():
    warnings.filterwarnings("ignore")
    from sam2.automatic_mask_generator import SAM2AutomaticMaskGenerator

    args = sys.argv[1:]
    opt = lambda n, d: args[args.index(n) + 1] if n in args else d
    enc_path, dec_path, frame = [a for a in args if a.endswith((".onnx", ".png"))][:3]
    sides = [int(v) for v in opt("--sides", "16,32").split(",")]
    so = ort.SessionOptions()
    so.log_severity_level = 3
    enc = ort.InferenceSession(enc_path, so, providers=["CPUExecutionProvider"])
    dec = ort.InferenceSession(dec_path, so, providers=["CPUExecutionProvider"])
    batched = isinstance(dec.get_inputs()[3].shape[0], str)
    S = enc.get_inputs()[0].shape[2]
    rgb = np.asarray(Image.open(frame).convert("RGB"))

    class Stub(torch.nn.Module):  # what SAM2ImagePredictor reads from the model
        image_size = S

    gen = None
    timers = {"decoder": 0.0, "runs": 0}
    for side in sides:
        gen = SAM2AutomaticMaskGenerator.__new__(SAM2AutomaticMaskGenerator)
        from sam2.utils.amg import build_all_layer_point_grids
        from sam2.utils.transforms import SAM2Transforms
        gen.point_grids = build_all_layer_point_grids(side, 0, 1)
        gen.points_per_batch = int(opt("--batch", "64")) if batched else 1
        gen.pred_iou_thresh, gen.stability_score_thresh, gen.stability_score_offset = 0.8, 0.95, 1.0
        gen.mask_threshold, gen.box_nms_thresh, gen.crop_n_layers = 0.0, 0.7, 0
        gen.crop_nms_thresh, gen.crop_overlap_ratio, gen.crop_n_points_downscale_factor = 0.7, 512 / 1500, 1
        gen.min_mask_region_area, gen.output_mode, gen.use_m2m, gen.multimask_output = 0, "binary_mask", False, True

        class Predictor:  # SAM2ImagePredictor's interface, networks on ONNX Runtime
            device = torch.device("cpu")
            _transforms = SAM2Transforms(resolution=S, mask_threshold=0.0)

            def set_image(self, image):
                self._orig_hw = [image.shape[:2]]
                x = self._transforms(image)[None].numpy()
                self._feats = dict(zip([o.name for o in enc.get_outputs()], enc.run(None, {enc.get_inputs()[0].name: x})))

            def reset_predictor(self):
                pass

            def _predict(self, coords, labels, multimask_output=True, return_logits=True):
                t = time.perf_counter()
                feed = {i.name: self._feats[i.name] for i in dec.get_inputs()[:3]}
                feed.update(point_coords=coords.numpy().astype(np.float32), point_labels=labels.numpy().astype(np.int64),
                            mask_input=np.zeros((1, 1, S // 4, S // 4), np.float32), has_mask_input=np.zeros((1, 1), np.float32))
                low, iou = dec.run(None, feed)
                timers["decoder"] += time.perf_counter() - t
                timers["runs"] += 1
                low = torch.from_numpy(low)
                masks = self._transforms.postprocess_masks(low, self._orig_hw[-1])
                return masks, torch.from_numpy(iou), torch.clamp(low, -32.0, 32.0)

        gen.predictor = Predictor()
        t = time.perf_counter()
        gen.predictor.set_image(rgb)
        enc_ms = (time.perf_counter() - t) * 1e3
        gen.predictor.set_image = lambda image: None  # encoded once, as in segrt's bench
        timers.update(decoder=0.0, runs=0)
        t = time.perf_counter()
        with torch.no_grad():
            anns = gen.generate(rgb)
        total = time.perf_counter() - t
        n = side * side
        print(f"python {side}x{side}: encoder {enc_ms:.0f} ms; {n} prompts in {timers['runs']} decoder runs: decoder "
              f"{timers['decoder'] * 1e3:.0f} ms, rest {(total - timers['decoder']) * 1e3:.0f} ms, total {total * 1e3:.0f} ms "
              f"({n / total:.1f} prompts/s); {len(anns)} objects")


if __name__ == "__main__":
    main()
