#!/usr/bin/env python3
"""Tiny random-weight SAM2 in Hugging Face transformers' layout (the onnx-community exports) + references.

Builds a small `transformers.Sam2Model` from a seeded config, exports

  transformers/vision_encoder.onnx               pixel_values -> image_embeddings.0/1/2
  transformers/prompt_encoder_mask_decoder.onnx  input_points, input_labels, input_boxes, image_embeddings.0/1/2
                                                 -> iou_scores, pred_masks, object_score_logits

with the names and dynamic axes of the onnx-community `*-ONNX` repositories (transformers.js `Sam2Model`),
and writes reference outputs made by transformers' own `Sam2Processor` + `Sam2Model` (eager PyTorch, not the
ONNX files) on the committed test images `reference/img0.png` and `reference/img1.png`:
`transformers/reference/index.json` (prompts, scores, chosen index) and one PNG per mask.

Run in a venv with torch + transformers (never used by CI):

    ../venv-hf/bin/python models/sam2/export_transformers.py   (a venv outside the clone)
    ../venv-hf/bin/python models/sam2/export_transformers.py [--edgetam | --sam3-tracker] --real-size models/sam2/real-size

Versions and seeds are recorded in index.json and in models/sam2/README.md.
"""

import copy
import json
import os
import sys

import numpy as np
import torch
import transformers
from PIL import Image
from transformers import Sam2Config, Sam2HieraDetConfig, Sam2ImageProcessor, Sam2Model, Sam2Processor, Sam2VisionConfig

HERE = os.path.dirname(os.path.abspath(__file__))
# `--sam3-tracker`: the SAM3 tracker's graphs instead (ViT backbone, stride 14: S = 252, an 18x18
# embedding, a 72x72 low-res grid; the released model is 1008 px, 72x72 embedding, 288x288 low-res).
SAM3 = "--sam3-tracker" in sys.argv
# `--edgetam`: EdgeTAM's graphs (a RepViT trunk through timm, stride 16, SAM2's processor).
EDGETAM = "--edgetam" in sys.argv
# `--real-size DIR`: the released architecture instead of the tiny one (sam2.1-hiera-tiny: transformers'
# `Sam2Config()` defaults; EdgeTAM: full RepViT-M1 at 1024; SAM3 tracker: `Sam3TrackerConfig()` defaults,
# 1008 px), random weights, exported into DIR/<the folder name below> (keep DIR git-ignored, e.g.
# models/sam2/real-size); no references, only a check of the graphs against the eager model.
REAL = sys.argv[sys.argv.index("--real-size") + 1] if "--real-size" in sys.argv else None
# `--small-pictures`: no export; references on two pictures smaller than the 64x64 low-res grid (img0
# and img1 shrunk), into transformers/reference/small/, made by the same seeded model (checked against
# the committed decoder first). Their masks are shrunk from the low-res logits, which transformers'
# post_process_masks does with F.interpolate(bilinear, align_corners=False), no antialiasing.
SMALL = "--small-pictures" in sys.argv
# `--traced-plainly`: no references; the decoder traced the plain way third parties export it
# (`Sam2Model.forward` itself under PyTorch's non-dynamo exporter, opset 18, the objects axis fixed at
# 1, a box in the dummy), into transformers_plain/prompt_encoder_mask_decoder.onnx. Such a graph
# cannot take the empty [1,0,4] box tensor (it appends three box tokens whatever it is given); segrt
# must tell. Pair it with transformers/vision_encoder.onnx (the same seeded model).
PLAIN = "--traced-plainly" in sys.argv
NAME = "transformers_sam3_tracker" if SAM3 else "transformers_edgetam" if EDGETAM else "transformers"
OUT = os.path.join(REAL, NAME) if REAL else os.path.join(HERE, NAME)
REF = os.path.join(OUT, "reference")
IMAGES = os.path.join(HERE, "reference")
SEED = 0
if REAL:
    SIZE = 1008 if SAM3 else 1024
    LOW_RES = 288 if SAM3 else 256
else:
    SIZE = 252 if SAM3 else 256  # model input (S)
    LOW_RES = 72 if SAM3 else 64  # 4x the embedding's grid (S/14 or S/16)
MASK_LOGIT_GAIN = 40.0
IOU_GAIN = 20.0

# The same prompts as the official-SAM2 fixtures (reference/index.json): a click, two clicks with a
# negative one, a box, a box with a click. Original image pixels.
PROMPTS = {
    "img0": {
        "point": dict(points=[[105.0, 105.0]], labels=[1]),
        "point_neg": dict(points=[[105.0, 105.0], [240.0, 140.0]], labels=[1, 0]),
        "box": dict(box=[185.0, 75.0, 295.0, 205.0]),
        "box_point": dict(points=[[240.0, 140.0]], labels=[1], box=[185.0, 75.0, 295.0, 205.0]),
    },
    "img1": {
        "point": dict(points=[[60.0, 100.0]], labels=[1]),
        "point_neg": dict(points=[[60.0, 100.0], [100.0, 100.0]], labels=[1, 0]),
        "box": dict(box=[45.0, 195.0, 155.0, 285.0]),
        "box_point": dict(points=[[140.0, 60.0]], labels=[1], box=[25.0, 25.0, 175.0, 175.0]),
    },
}


def tiny_config():
    """A small SAM2.1-shaped config: the full code path (Hiera with q-pooling, windowed + global
    attention, FPN, conv_s0/s1, prompt encoder, two-way transformer, hypernetworks, IoU and object-score
    heads) at S = 256, FPN width 16."""
    d = 16  # FPN / decoder width (channels 2, 4, 16 for the three embeddings)
    return Sam2Config(
        vision_config=Sam2VisionConfig(
            backbone_config=Sam2HieraDetConfig(
                hidden_size=8,
                num_attention_heads=1,
                image_size=[SIZE, SIZE],
                blocks_per_stage=[1, 1, 3, 1],
                embed_dim_per_stage=[8, 16, 32, 64],
                num_attention_heads_per_stage=[1, 1, 1, 1],
                window_size_per_stage=[8, 4, 4, 4],
                global_attention_blocks=[4],
                window_positional_embedding_background_size=[4, 4],
            ),
            backbone_channel_list=[64, 32, 16, 8],
            backbone_feature_sizes=[[SIZE // 4, SIZE // 4], [SIZE // 8, SIZE // 8], [SIZE // 16, SIZE // 16]],
            fpn_hidden_size=d,
        ),
        prompt_encoder_config=dict(hidden_size=d, image_size=SIZE, patch_size=16, mask_input_channels=16),
        mask_decoder_config=dict(hidden_size=d, mlp_dim=64, num_attention_heads=8, iou_head_hidden_dim=32),
    )


def tiny_sam3_tracker():
    """A small SAM3-tracker config: ViT (patch 14, windowed + global attention, RoPE), its FPN neck,
    the SAM2-style prompt encoder and mask decoder; S = 252, embedding 18x18."""
    from transformers import Sam3TrackerConfig, Sam3TrackerModel
    from transformers.models.sam3.configuration_sam3 import Sam3ViTConfig, Sam3VisionConfig

    d = 16
    g = SIZE // 14
    config = Sam3TrackerConfig(
        vision_config=Sam3VisionConfig(
            backbone_config=Sam3ViTConfig(
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                image_size=SIZE,
                patch_size=14,
                window_size=6,
                global_attn_indexes=[1],
                pretrain_image_size=SIZE,
            ),
            fpn_hidden_size=d,
            backbone_feature_sizes=[[4 * g, 4 * g], [2 * g, 2 * g], [g, g]],
        ),
        prompt_encoder_config=dict(hidden_size=d, image_size=SIZE, patch_size=14, mask_input_channels=16),
        mask_decoder_config=dict(hidden_size=d, mlp_dim=64, num_attention_heads=8, iou_head_hidden_dim=32),
    )
    return config, Sam3TrackerModel


def tiny_edgetam():
    """A small EdgeTAM config: timm's RepViT (`repvit_m1` with 4 stages of depth 1, widths 8-64) as
    transformers builds it (`TimmWrapperConfig`, features_only), the FPN neck, SAM2's prompt encoder and
    mask decoder; S = 256, embedding 16x16."""
    from transformers import EdgeTamConfig, EdgeTamModel, TimmWrapperConfig
    from transformers.models.edgetam.configuration_edgetam import EdgeTamVisionConfig

    d = 16
    trunk = TimmWrapperConfig(
        architecture="repvit_m1",
        model_args={"in_chans": 3, "features_only": True, "out_indices": [0, 1, 2, 3], "embed_dim": (8, 16, 32, 64), "depth": (1, 1, 1, 1)},
    )
    config = EdgeTamConfig(
        vision_config=EdgeTamVisionConfig(
            backbone_config=trunk,
            backbone_channel_list=[64, 32, 16, 8],
            backbone_feature_sizes=[[SIZE // 4, SIZE // 4], [SIZE // 8, SIZE // 8], [SIZE // 16, SIZE // 16]],
            fpn_hidden_size=d,
        ),
        prompt_encoder_config=dict(hidden_size=d, image_size=SIZE, patch_size=16, mask_input_channels=16),
        mask_decoder_config=dict(hidden_size=d, mlp_dim=64, num_attention_heads=8, iou_head_hidden_dim=32),
    )
    return config, EdgeTamModel


def real_size_model():
    """The released architecture with random weights: sam2.1-hiera-tiny (transformers' `Sam2Config()`
    defaults: Hiera 96 wide, stages [1,2,7,2], global blocks [5,7,9], FPN 256, 1024 px), EdgeTAM
    (timm `repvit_m1`: widths 48-384, depths [2,2,14,2], FPN 256, 1024 px; `EdgeTamConfig()`'s own
    default trunk is resnet50, so it is named here) or the SAM3 tracker (`Sam3TrackerConfig()`: ViT
    1024 wide, 32 layers, 16 heads, window 24, global layers [7,15,23,31], patch 14, 1008 px)."""
    if SAM3:
        from transformers import Sam3TrackerConfig, Sam3TrackerModel

        return Sam3TrackerModel(Sam3TrackerConfig())
    if EDGETAM:
        from transformers import EdgeTamConfig, EdgeTamModel, TimmWrapperConfig
        from transformers.models.edgetam.configuration_edgetam import EdgeTamVisionConfig

        trunk = TimmWrapperConfig(
            architecture="repvit_m1", model_args={"in_chans": 3, "features_only": True, "out_indices": [0, 1, 2, 3]}
        )
        return EdgeTamModel(EdgeTamConfig(vision_config=EdgeTamVisionConfig(backbone_config=trunk)))
    return Sam2Model(Sam2Config())


def export_real_size():
    """`--real-size DIR`: export the released architecture (random weights, `condition_random_weights`
    as the tiny models) and check both graphs against the eager model on one random picture and a box."""
    import time

    import onnxruntime as ort

    torch.manual_seed(SEED)
    np.random.seed(SEED)
    model = real_size_model().eval()
    condition_random_weights(model)
    params = sum(p.numel() for p in model.parameters())
    vision = sum(p.numel() for p in model.vision_encoder.parameters())
    print(f"{type(model).__name__}: {params / 1e6:.1f} M parameters ({vision / 1e6:.1f} M in the vision encoder), S = {SIZE}")
    t = time.time()
    enc_path, dec_path = export(copy.deepcopy(model), references=False)
    print(f"export took {time.time() - t:.0f} s")
    pixel = torch.randn(1, 3, SIZE, SIZE)
    pts = torch.zeros(1, 1, 0, 2)
    lbl = torch.zeros(1, 1, 0, dtype=torch.int64)
    box = torch.tensor([[[100.0, 150.0, 600.0, 500.0]]]) * SIZE / 1024
    with torch.no_grad():
        e = VisionEncoder(model)(pixel)
        iou, masks, _ = PromptEncoderMaskDecoder(model)(pts, lbl, box, *e)
    so = ort.SessionOptions()
    enc = ort.InferenceSession(enc_path, so, providers=["CPUExecutionProvider"])
    oe = enc.run(None, {"pixel_values": pixel.numpy()})
    de = max(float(np.abs(a - b.numpy()).max()) for a, b in zip(oe, e))
    dec = ort.InferenceSession(dec_path, so, providers=["CPUExecutionProvider"])
    feeds = {"input_points": pts.numpy(), "input_labels": lbl.numpy(), "input_boxes": box.numpy()}
    feeds.update({f"image_embeddings.{i}": oe[i] for i in range(3)})
    o_iou, o_masks, _ = dec.run(None, feeds)
    print(
        f"onnxruntime vs torch: embeddings {de:.2g}, mask logits {float(np.abs(o_masks - masks.numpy()).max()):.2g}, "
        f"iou {float(np.abs(o_iou - iou.numpy()).max()):.2g}; pred_masks {list(o_masks.shape)}"
    )
    for p in (enc_path, dec_path):
        size = os.path.getsize(p) + sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT) if f.endswith(".data"))
        print(f"{p}: {os.path.getsize(p) / 1e6:.1f} MB" + (f" ({size / 1e6:.1f} MB with external data)" if size != os.path.getsize(p) else ""))


def condition_random_weights(model):
    """transformers' own init (normal, std 0.02) gives mask logits of about 1e-3 and IoU scores within
    float noise of each other. Re-initialise every layer with PyTorch's defaults (as the official SAM2
    code builds its modules), then scale two output layers (weights only, the code path is unchanged),
    as export_sam2.py does."""
    md = model.mask_decoder
    with torch.no_grad():
        for m in model.modules():
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()
        for mlp in md.output_hypernetworks_mlps:
            mlp.proj_out.weight.mul_(MASK_LOGIT_GAIN)
            mlp.proj_out.bias.mul_(MASK_LOGIT_GAIN)
        md.iou_prediction_head.proj_out.weight.mul_(IOU_GAIN)
        md.iou_prediction_head.proj_out.bias.mul_(IOU_GAIN)


class VisionEncoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        e = self.model.get_image_embeddings(pixel_values)
        return e[0], e[1], e[2]


class PromptEncoderMaskDecoder(torch.nn.Module):
    """`Sam2Model.forward` on precomputed embeddings, `multimask_output=True`, written out so that the
    traced graph accepts `input_boxes` [B,0,4] ("no box") and `input_points` [B,obj,0,2] ("no points").

    Tracing `Sam2Model.forward` itself with a box bakes the box branch's shapes: fed [1,0,4] boxes, the
    resulting graph still appends three box tokens (ONNX Runtime's Concat accepts the empty input and
    keeps its axis length), so point-only prompts decode wrong masks. Here the box tokens of each object
    are selected with a dynamic length (3 with a box, 0 without) and concatenated after the point tokens,
    as `Sam2PromptEncoder.forward` orders them. The prompt encoder never adds the (0,0)/-1 padding point
    (`pad=False`): the eager model adds it when `input_boxes is None`, so a runtime appends it itself
    for prompts without a box. `main` checks this graph against the eager model on every prompt."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_points, input_labels, input_boxes, e0, e1, e2):
        pe = self.model.prompt_encoder
        b = input_points.shape[0]
        points = pe._embed_points(input_points, input_labels, pad=False)  # [B,obj,N,C]
        # One box per object (a zero box where there is none), gathered with dynamic indices so that
        # the objects axis stays dynamic; its 3 tokens as _embed_boxes makes them.
        n_obj = torch._shape_as_tensor(input_points)[1]
        n_boxes = torch._shape_as_tensor(input_boxes)[1]
        padded = torch.cat([input_boxes, e2[:, :1, 0, :4] * 0], dim=1)  # [B,nb+1,4]
        index = torch.clamp(torch.arange(n_obj), max=torch.clamp(n_boxes - 1, min=0))
        boxes = torch.index_select(padded, 1, index)  # [B,obj,4]
        coords = (boxes + 0.5).unflatten(-1, (2, 2))
        # Sam2PositionalEmbedding.forward without its in-place column writes (which the tracer records
        # with the dummy's object count): coordinates / S, 2c - 1, @ gaussian matrix, 2 pi, sin | cos.
        c = (2 * (coords / pe.input_image_size) - 1) @ pe.shared_embedding.positional_embedding * (2 * np.pi)
        corners = torch.cat([torch.sin(c), torch.cos(c)], dim=-1) + pe.point_embed.weight[2:4]
        pad = corners[:, :, :1, :] * 0 + pe.not_a_point_embed.weight
        box_tokens = torch.cat([corners, pad], dim=2)  # [B,obj,3,C]
        n_box = torch.clamp(torch._shape_as_tensor(input_boxes)[1], max=1) * 3
        box_tokens = torch.index_select(box_tokens, 2, torch.arange(n_box))
        sparse = torch.cat([points, box_tokens], dim=2)
        h, w = pe.image_embedding_size
        dense = pe.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(b, -1, h, w)
        image_pe = self.model.get_image_wide_positional_embeddings().repeat(b, 1, 1, 1)
        masks, iou, _, object_score_logits = self.model.mask_decoder(
            image_embeddings=e2,
            image_positional_embeddings=image_pe,
            sparse_prompt_embeddings=sparse,
            dense_prompt_embeddings=dense,
            multimask_output=True,
            high_resolution_features=[e0, e1],
        )
        return iou, masks, object_score_logits


def export(model, references=True):
    os.makedirs(REF if references else OUT, exist_ok=True)
    enc_path = os.path.join(OUT, "vision_encoder.onnx")
    dec_path = os.path.join(OUT, "prompt_encoder_mask_decoder.onnx")
    pixel = torch.randn(1, 3, SIZE, SIZE)
    emb_names = ["image_embeddings.0", "image_embeddings.1", "image_embeddings.2"]
    torch.onnx.export(
        VisionEncoder(model),
        (pixel,),
        enc_path,
        input_names=["pixel_values"],
        output_names=emb_names,
        dynamic_axes={"pixel_values": {0: "batch_size"}, **{n: {0: "batch_size"} for n in emb_names}},
        opset_version=17,
        do_constant_folding=True,
        dynamo=False,
    )
    with torch.no_grad():
        e = VisionEncoder(model)(pixel)
    pts = torch.tensor([[[[10.0, 20.0], [30.0, 40.0]]]])
    lbl = torch.tensor([[[1, 0]]], dtype=torch.int64)
    box = torch.tensor([[[5.0, 6.0, 100.0, 120.0]]])
    torch.onnx.export(
        PromptEncoderMaskDecoder(model),
        (pts, lbl, box, *e),
        dec_path,
        input_names=["input_points", "input_labels", "input_boxes", *emb_names],
        output_names=["iou_scores", "pred_masks", "object_score_logits"],
        dynamic_axes={
            "input_points": {0: "batch_size", 1: "point_batch_size", 2: "num_points"},
            "input_labels": {0: "batch_size", 1: "point_batch_size", 2: "num_points"},
            "input_boxes": {0: "batch_size", 1: "num_boxes"},
            **{n: {0: "batch_size"} for n in emb_names},
            "iou_scores": {0: "batch_size", 1: "point_batch_size"},
            "pred_masks": {0: "batch_size", 1: "point_batch_size"},
            "object_score_logits": {0: "batch_size", 1: "point_batch_size"},
        },
        opset_version=17,
        do_constant_folding=True,
        dynamo=False,
    )
    return enc_path, dec_path


# Pictures smaller than the low-res grid: (source image, size), prompts in the small picture's pixels.
SMALL_PICTURES = {
    "small0": (
        "img0",
        (48, 36),
        {
            "point": dict(points=[[15.75, 15.75]], labels=[1]),
            "box": dict(box=[27.75, 11.25, 44.25, 30.75]),
        },
    ),
    "small1": (
        "img1",
        (30, 45),
        {
            "point": dict(points=[[9.0, 15.0]], labels=[1]),
            "box_point": dict(points=[[21.0, 9.0]], labels=[1], box=[3.75, 3.75, 26.25, 26.25]),
        },
    ),
}


def small_pictures(model, processor):
    """`--small-pictures`: transformers' own pipeline (processor, eager model, post_process_masks) on
    pictures smaller than the low-res grid, after checking that the seeded model is the committed
    decoder's (same logits through onnxruntime)."""
    import onnxruntime as ort

    out_dir = os.path.join(REF, "small")
    os.makedirs(out_dir, exist_ok=True)
    enc = ort.InferenceSession(os.path.join(OUT, "vision_encoder.onnx"), providers=["CPUExecutionProvider"])
    dec = ort.InferenceSession(os.path.join(OUT, "prompt_encoder_mask_decoder.onnx"), providers=["CPUExecutionProvider"])
    entries, images, worst = [], {}, 0.0
    for name, (source, size, prompts) in SMALL_PICTURES.items():
        image = Image.open(os.path.join(IMAGES, f"{source}.png")).convert("RGB").resize(size, Image.BILINEAR)
        image.save(os.path.join(out_dir, f"{name}.png"), optimize=True)
        images[name] = dict(file=f"{name}.png")
        w, h = image.size
        for pname, p in prompts.items():
            kwargs = {}
            if "points" in p:
                kwargs["input_points"] = [[p["points"]]]
                kwargs["input_labels"] = [[p["labels"]]]
            if "box" in p:
                kwargs["input_boxes"] = [[p["box"]]]
            inputs = processor(images=image, return_tensors="pt", **kwargs)
            with torch.no_grad():
                out = model(**inputs, multimask_output=True)
            feeds = onnx_inputs(inputs["pixel_values"], p, processor, (h, w))
            embs = enc.run(None, {"pixel_values": inputs["pixel_values"].numpy()})
            feeds.update({f"image_embeddings.{i}": embs[i] for i in range(3)})
            worst = max(worst, float(np.abs(dec.run(None, feeds)[1][0, 0] - out.pred_masks[0, 0].numpy()).max()))
            iou = out.iou_scores[0, 0].numpy()
            masks = processor.post_process_masks(out.pred_masks, inputs["original_sizes"])[0][0].numpy()
            files = []
            for k in range(masks.shape[0]):
                f = f"{name}_{pname}_mask{k}.png"
                Image.fromarray((masks[k] * 255).astype(np.uint8)).save(os.path.join(out_dir, f), optimize=True)
                files.append(f)
            print(f"{name} {w}x{h} {pname:<10} iou {np.round(iou, 4)} fg {masks[int(np.argmax(iou))].mean() * 100:.1f} %")
            entries.append(
                dict(
                    image=name,
                    prompt=pname,
                    points=p.get("points", []),
                    labels=p.get("labels", []),
                    box=p.get("box"),
                    iou_scores=[float(v) for v in iou],
                    chosen_index=int(np.argmax(iou)),
                    mask_pngs=files,
                )
            )
    assert worst < 1e-3, f"the seeded model is not the committed decoder: logits differ by {worst}"
    index = dict(
        format_version=1,
        description="Pictures smaller than the 64x64 low-res grid (img0/img1 shrunk with Pillow's bilinear): masks and "
        "scores from transformers' Sam2Processor + Sam2Model (eager), post_process_masks (F.interpolate bilinear, "
        "align_corners=False, no antialias, > 0). See models/sam2/README.md.",
        model_size=SIZE,
        low_res_size=LOW_RES,
        images=images,
        provenance=dict(torch=torch.__version__, transformers=transformers.__version__, seed=SEED),
        onnx_check=dict(committed_decoder_vs_eager_logit_max_abs=worst),
        entries=entries,
    )
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    print(f"committed decoder vs eager model: logits differ by at most {worst:.2e}")


class PlainDecoder(torch.nn.Module):
    """`Sam2Model.forward` on precomputed embeddings, traced as it is (what `--traced-plainly` exports)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_points, input_labels, input_boxes, e0, e1, e2):
        out = self.model(
            input_points=input_points,
            input_labels=input_labels,
            input_boxes=input_boxes,
            image_embeddings=[e0, e1, e2],
            multimask_output=True,
        )
        return out.iou_scores, out.pred_masks, out.object_score_logits


def export_plainly(model):
    """`--traced-plainly`: the decoder as third parties trace it, checked against the eager model with a box."""
    import onnxruntime as ort

    out_dir = os.path.join(HERE, "transformers_plain")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "prompt_encoder_mask_decoder.onnx")
    with torch.no_grad():
        e = VisionEncoder(model)(torch.randn(1, 3, SIZE, SIZE))
    pts = torch.tensor([[[[10.0, 20.0], [30.0, 40.0]]]])
    lbl = torch.tensor([[[1, 0]]], dtype=torch.int64)
    box = torch.tensor([[[5.0, 6.0, 100.0, 120.0]]])
    names = ["image_embeddings.0", "image_embeddings.1", "image_embeddings.2"]
    torch.onnx.export(
        PlainDecoder(model),
        (pts, lbl, box, *e),
        path,
        input_names=["input_points", "input_labels", "input_boxes", *names],
        output_names=["iou_scores", "pred_masks", "object_score_logits"],
        dynamic_axes={
            "input_points": {0: "batch_size", 2: "num_points_per_image"},
            "input_labels": {0: "batch_size", 2: "num_points_per_image"},
            "input_boxes": {0: "batch_size", 1: "num_boxes_per_image"},
            **{n: {0: "batch_size"} for n in names},
            "iou_scores": {0: "batch_size", 1: "num_boxes_or_points"},
            "pred_masks": {0: "batch_size", 1: "num_boxes_or_points"},
            "object_score_logits": {0: "batch_size", 1: "num_boxes_or_points"},
        },
        opset_version=18,
        do_constant_folding=True,
        dynamo=False,
    )
    dec = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {"input_points": pts.numpy(), "input_labels": lbl.numpy(), "input_boxes": box.numpy()}
    feeds.update({n: t.numpy() for n, t in zip(names, e)})
    with torch.no_grad():
        want = PlainDecoder(model)(pts, lbl, box, *e)[1].numpy()
    print(f"{path}: {os.path.getsize(path)} bytes; with a box, logits vs eager {np.abs(dec.run(None, feeds)[1] - want).max():.2e}")
    # Without a box (what runtimes send for clicks): the graph still appends box tokens.
    feeds["input_boxes"] = np.zeros((1, 0, 4), np.float32)
    feeds["input_points"] = np.array([[[[10.0, 20.0], [0.0, 0.0]]]], np.float32)
    feeds["input_labels"] = np.array([[[1, -1]]], np.int64)
    runs = [dec.run(None, feeds)[1] for _ in range(3)]
    with torch.no_grad():
        eager = model(
            input_points=torch.tensor([[[[10.0, 20.0]]]]), input_labels=torch.tensor([[[1]]]), image_embeddings=list(e), multimask_output=True
        ).pred_masks.numpy()
    print(f"without a box: logits vs eager {max(np.abs(r - eager).max() for r in runs):.3g}, run to run {np.abs(runs[0] - runs[1]).max():.3g}")


def onnx_inputs(pv, prompt, processor, size_hw):
    """What a runtime feeds the exported pair for `prompt` (the rule segrt follows): coordinates scaled
    as the processor does; no box -> input_boxes [1,0,4] and the (0,0)/-1 padding point appended (the
    eager model pads when input_boxes is None); no points -> input_points [1,1,0,2]."""
    h, w = size_hw
    sx, sy = SIZE / w, SIZE / h
    pts = [[x * sx, y * sy] for x, y in prompt.get("points", [])]
    lbl = list(prompt.get("labels", []))
    if "box" not in prompt:
        pts.append([0.0, 0.0])
        lbl.append(-1)
        boxes = np.zeros((1, 0, 4), np.float32)
    else:
        b = prompt["box"]
        boxes = np.array([[[b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy]]], np.float32)
    return {
        "input_points": np.array(pts, np.float32).reshape(1, 1, len(pts), 2),
        "input_labels": np.array(lbl, np.int64).reshape(1, 1, len(lbl)),
        "input_boxes": boxes,
    }


def main():
    if REAL:
        export_real_size()
        return
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    if SAM3:
        from transformers import Sam3ImageProcessor, Sam3TrackerProcessor

        config, cls = tiny_sam3_tracker()
        model = cls(config).eval()
        size = {"height": SIZE, "width": SIZE}
        processor = Sam3TrackerProcessor(image_processor=Sam3ImageProcessor(size=size, mask_size={"height": LOW_RES, "width": LOW_RES}))
    elif EDGETAM:
        config, cls = tiny_edgetam()
        model = cls(config).eval()
        processor = Sam2Processor(
            image_processor=Sam2ImageProcessor(size={"height": SIZE, "width": SIZE}, mask_size={"height": LOW_RES, "width": LOW_RES})
        )
    else:
        model = Sam2Model(tiny_config()).eval()
        processor = Sam2Processor(
            image_processor=Sam2ImageProcessor(size={"height": SIZE, "width": SIZE}, mask_size={"height": LOW_RES, "width": LOW_RES})
        )
    condition_random_weights(model)
    if SMALL:
        small_pictures(model, processor)
        return
    if PLAIN:
        export_plainly(model)
        return
    # Exported from a copy: tracing EdgeTAM's timm trunk updates its BatchNorm running statistics,
    # which would leave the eager model (the reference) different from the graph.
    enc_path, dec_path = export(copy.deepcopy(model))

    import onnxruntime as ort

    enc = ort.InferenceSession(enc_path, providers=["CPUExecutionProvider"])
    dec = ort.InferenceSession(dec_path, providers=["CPUExecutionProvider"])
    entries = []
    worst = {"onnx_vs_torch_logit_max_abs": 0.0, "onnx_vs_torch_iou_max_abs": 0.0}
    for img_name, prompts in PROMPTS.items():
        image = Image.open(os.path.join(IMAGES, f"{img_name}.png")).convert("RGB")
        w, h = image.size
        for pname, p in prompts.items():
            kwargs = {}
            if "points" in p:
                kwargs["input_points"] = [[p["points"]]]
                kwargs["input_labels"] = [[p["labels"]]]
            if "box" in p:
                kwargs["input_boxes"] = [[p["box"]]]
            inputs = processor(images=image, return_tensors="pt", **kwargs)
            with torch.no_grad():
                out = model(**inputs, multimask_output=True)
            iou = out.iou_scores[0, 0].numpy()
            masks = processor.post_process_masks(out.pred_masks, inputs["original_sizes"])[0][0].numpy()  # [3,H,W] bool
            chosen = int(np.argmax(iou))
            files = []
            for k in range(masks.shape[0]):
                f = f"{img_name}_{pname}_mask{k}.png"
                Image.fromarray((masks[k] * 255).astype(np.uint8)).save(os.path.join(REF, f), optimize=True)
                files.append(f)
            # The exported pair, fed as segrt feeds it, against the eager model.
            feeds = onnx_inputs(inputs["pixel_values"], p, processor, (h, w))
            embs = enc.run(None, {"pixel_values": inputs["pixel_values"].numpy()})
            feeds.update({f"image_embeddings.{i}": embs[i] for i in range(3)})
            o_iou, o_masks, _ = dec.run(None, feeds)
            dl = float(np.abs(o_masks[0, 0] - out.pred_masks[0, 0].numpy()).max())
            if "box" not in p:
                # ablation: the same prompt without the appended padding point
                feeds["input_points"] = feeds["input_points"][:, :, :-1]
                feeds["input_labels"] = feeds["input_labels"][:, :, :-1]
                nopad = float(np.abs(dec.run(None, feeds)[1][0, 0] - out.pred_masks[0, 0].numpy()).max())
                worst["without_padding_point_logit_max_abs_min"] = min(worst.get("without_padding_point_logit_max_abs_min", 1e9), nopad)
            di = float(np.abs(o_iou[0, 0] - iou).max())
            worst["onnx_vs_torch_logit_max_abs"] = max(worst["onnx_vs_torch_logit_max_abs"], dl)
            worst["onnx_vs_torch_iou_max_abs"] = max(worst["onnx_vs_torch_iou_max_abs"], di)
            low = out.pred_masks[0, 0].numpy()
            print(
                f"{img_name} {pname:<10} iou {np.round(iou, 4)} chosen {chosen} |logit| max {np.abs(low).max():.3g} "
                f"fg {masks[chosen].mean() * 100:.1f} %  onnx-vs-torch logits {dl:.2e} iou {di:.2e}"
            )
            entries.append(
                dict(
                    image=img_name,
                    prompt=pname,
                    points=p.get("points", []),
                    labels=p.get("labels", []),
                    box=p.get("box"),
                    iou_scores=[float(v) for v in iou],
                    chosen_index=chosen,
                    mask_pngs=files,
                    object_score_logit=float(out.object_score_logits[0, 0, 0]),
                    processor_input_points=inputs["input_points"][0, 0].tolist() if "input_points" in inputs else None,
                    processor_input_boxes=inputs["input_boxes"][0].tolist() if "input_boxes" in inputs else None,
                )
            )
    index = dict(
        format_version=1,
        description=f"Tiny random-weight transformers {type(model).__name__}: masks and scores from transformers' own "
        f"{type(processor).__name__} + {type(model).__name__} (eager PyTorch), multimask_output=True, post_process_masks "
        "(bilinear to the original size, > 0). See models/sam2/README.md.",
        model_size=SIZE,
        low_res_size=LOW_RES,
        model=type(model).__name__,
        images={k: dict(file=f"../../reference/{k}.png") for k in PROMPTS},
        provenance=dict(
            torch=torch.__version__,
            transformers=transformers.__version__,
            onnxruntime=ort.__version__,
            timm=__import__("timm").__version__ if EDGETAM else None,
            numpy=np.__version__,
            python=sys.version.split()[0],
            seed=SEED,
            exporter="torch.onnx.export(dynamo=False, opset_version=17, do_constant_folding=True)",
            weight_conditioning=dict(hypernetwork_proj_out_gain=MASK_LOGIT_GAIN, iou_head_proj_out_gain=IOU_GAIN),
        ),
        onnx_check=worst,
        entries=entries,
    )
    with open(os.path.join(REF, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    print(json.dumps(worst))
    for p in (enc_path, dec_path):
        print(p, os.path.getsize(p))


if __name__ == "__main__":
    main()
