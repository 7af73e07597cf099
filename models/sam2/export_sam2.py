#!/usr/bin/env python3
"""Export small SAM2 ONNX test fixtures + PyTorch reference outputs for segrt.

Run from the repository root:

    .venv-torch/bin/python models/sam2/export_sam2.py              # tiny fixtures + reference + oracle
    .venv-torch/bin/python models/sam2/export_sam2.py --real-size models/sam2/real-size
    .venv-torch/bin/python models/sam2/export_sam2.py --checkpoint sam2.1_hiera_tiny.pt \
        --real-size models/sam2/real-size

Provenance / pins
-----------------
* sam2 == 1.1.0 from PyPI (sdist sam2-1.1.0.tar.gz,
  sha256 7e0ea252d43c10d853e3acfce0b5770ac683c30481bd6de311300e9d44f45b74), installed with
  ``SAM2_BUILD_CUDA=0 pip install --no-build-isolation --no-deps sam2==1.1.0``
  plus hydra-core 1.3.8, iopath 0.1.10, torchvision 0.29.2 (``--no-deps``: keeps torch untouched).
  This PyPI upload is not Meta's (models/sam2/README.md, provenance), but its ``sam2/`` code and sam2.1
  configs are byte-identical to facebookresearch/sam2@2b90b9f.
* torch 2.15.0, onnx 1.23.2, onnxruntime 1.31.1, numpy 2.4.6 (the versions used to make the
  committed files).
* Legacy TorchScript exporter: ``torch.onnx.export(..., dynamo=False, opset_version=17)``.
* Seeds: torch.manual_seed(0) right before ``build_sam2`` (random weights); numpy seed 0.

The tiny model is the real SAM2 code path (Hiera trunk, FPN neck, prompt encoder, two-way mask
decoder) shrunk with hydra overrides (TINY_OVERRIDES below). Everything is deterministic: two runs
produce the same reference numbers (ONNX bytes may differ only in exporter metadata).
"""
import argparse
import hashlib
import json
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
SAM2_VERSION = "1.1.0"
SAM2_SDIST_SHA256 = "7e0ea252d43c10d853e3acfce0b5770ac683c30481bd6de311300e9d44f45b74"
CONFIG = "configs/sam2.1/sam2.1_hiera_t.yaml"
OPSET = 17
SEED = 0

# ---------------------------------------------------------------------------------------------
# Tiny model. Trunk dims 8/16/32/64 (embed_dim 8 rather than 16) and neck d_model 16 (rather than
# 32) so that the 7 ONNX files + reference data stay under the 9 MB budget: the mask decoder's
# two-way transformer MLP width (2048) and IoU-head width (256) are hard-coded in sam2 code, so the
# decoder costs ~ d_model * 33 KB no matter what. See README.md for the sizes of the d_model 32
# variant. window_spec / bkg spatial size shrunk so windows tile the 64/32/16/8 stage grids.
# ---------------------------------------------------------------------------------------------
TRUNK_DIM = 8
D_MODEL = 16
MEM_DIM = 16
TINY_SIZE = 256
TINY_OVERRIDES = [
    f"++model.image_size={TINY_SIZE}",
    f"++model.image_encoder.trunk.embed_dim={TRUNK_DIM}",
    "++model.image_encoder.trunk.num_heads=1",
    "++model.image_encoder.trunk.stages=[1,1,3,1]",
    "++model.image_encoder.trunk.global_att_blocks=[4]",
    "++model.image_encoder.trunk.window_spec=[8,4,4,4]",
    "++model.image_encoder.trunk.window_pos_embed_bkg_spatial_size=[4,4]",
    f"++model.image_encoder.neck.d_model={D_MODEL}",
    "++model.image_encoder.neck.backbone_channel_list=[%d,%d,%d,%d]"
    % (TRUNK_DIM * 8, TRUNK_DIM * 4, TRUNK_DIM * 2, TRUNK_DIM),
    f"++model.image_encoder.neck.position_encoding.num_pos_feats={D_MODEL}",
    # memory attention / memory encoder are not exported; sized only so the model instantiates
    f"++model.memory_attention.d_model={D_MODEL}",
    "++model.memory_attention.num_layers=1",
    f"++model.memory_attention.layer.d_model={D_MODEL}",
    "++model.memory_attention.layer.dim_feedforward=32",
    f"++model.memory_attention.layer.self_attention.embedding_dim={D_MODEL}",
    "++model.memory_attention.layer.self_attention.feat_sizes=[%d,%d]" % (TINY_SIZE // 16, TINY_SIZE // 16),
    f"++model.memory_attention.layer.cross_attention.embedding_dim={D_MODEL}",
    "++model.memory_attention.layer.cross_attention.feat_sizes=[%d,%d]" % (TINY_SIZE // 16, TINY_SIZE // 16),
    f"++model.memory_attention.layer.cross_attention.kv_in_dim={MEM_DIM}",
    f"++model.memory_encoder.in_dim={D_MODEL}",
    f"++model.memory_encoder.out_dim={MEM_DIM}",
    f"++model.memory_encoder.position_encoding.num_pos_feats={MEM_DIM}",
    f"++model.memory_encoder.mask_downsampler.embed_dim={D_MODEL}",
    f"++model.memory_encoder.fuser.layer.dim={D_MODEL}",
    "++model.num_maskmem=2",
]

IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]


def build_model(real_size=False, checkpoint=None, config=CONFIG):
    from sam2.build_sam import build_sam2

    torch.manual_seed(SEED)
    overrides = [] if (real_size or checkpoint) else list(TINY_OVERRIDES)
    # build_sam2 also appends the dynamic_multimask_via_stability post-processing overrides; they
    # only matter for multimask_output=False, which no wrapper here uses.
    model = build_sam2(config, ckpt_path=checkpoint, device="cpu", hydra_overrides_extra=overrides)
    model.eval()
    if not (real_size or checkpoint):
        condition_random_weights(model)
    return model


MASK_LOGIT_GAIN = 40.0
IOU_GAIN = 20.0


@torch.no_grad()
def condition_random_weights(model):
    """Plain random init gives mask logits of +-0.2 and IoU scores within 1e-4 of each other, so
    the binary masks and the argmax would flip on float noise. Rescale two output layers (weights
    only, the code path is unchanged): the last Linear of each hypernetwork MLP (mask logits scale
    linearly) and the last Linear of the IoU head (pre-sigmoid)."""
    md = model.sam_mask_decoder
    for mlp in md.output_hypernetworks_mlps:
        mlp.layers[-1].weight.mul_(MASK_LOGIT_GAIN)
        mlp.layers[-1].bias.mul_(MASK_LOGIT_GAIN)
    md.iou_prediction_head.layers[-1].weight.mul_(IOU_GAIN)
    md.iou_prediction_head.layers[-1].bias.mul_(IOU_GAIN)


# ---------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------
class EncoderCore(nn.Module):
    """Exactly SAM2ImagePredictor.set_image after the transforms.

    forward_image() already applies sam_mask_decoder.conv_s0 / conv_s1 to the two high-res FPN
    levels (sam2_base.py), so they must NOT be applied a second time here."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        s = model.image_size
        self.feat_sizes = [(s // 4, s // 4), (s // 8, s // 8), (s // 16, s // 16)]

    def forward(self, x):
        backbone_out = self.model.forward_image(x)
        _, vision_feats, _, _ = self.model._prepare_backbone_features(backbone_out)
        if self.model.directly_add_no_mem_embed:
            vision_feats[-1] = vision_feats[-1] + self.model.no_mem_embed
        feats = [
            f.permute(1, 2, 0).reshape(1, -1, *fs)
            for f, fs in zip(vision_feats[::-1], self.feat_sizes[::-1])
        ][::-1]
        return feats[2], feats[0], feats[1]  # image_embed, high_res_0, high_res_1


class EncoderSamexporter(nn.Module):  # outputs high_res_feats_0, high_res_feats_1, image_embed
    def __init__(self, model):
        super().__init__()
        self.core = EncoderCore(model)

    def forward(self, image):
        e, h0, h1 = self.core(image)
        return h0, h1, e


class EncoderSam2onnx(nn.Module):  # outputs image_embed, high_res_feat_0, high_res_feat_1
    def __init__(self, model):
        super().__init__()
        self.core = EncoderCore(model)

    def forward(self, image):
        return self.core(image)


class EncoderOsamU8(nn.Module):
    """uint8 NCHW RGB [1,3,S,S] (already resized) -> /255 -> ImageNet normalisation in the graph."""

    def __init__(self, model):
        super().__init__()
        self.core = EncoderCore(model)
        self.register_buffer("mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1))

    def forward(self, input):
        x = input.to(torch.float32) / 255.0
        x = (x - self.mean) / self.std
        return self.core(x)  # image_embeddings, high_res_features1, high_res_features2


class DecoderCore(nn.Module):
    """Prompt encoder + mask decoder, as SAM2ImagePredictor._predict does it, with the exporters'
    graph-friendly rewrites: the (0,0)/-1 padding point is appended IN the graph (the predictor
    always calls the prompt encoder with boxes=None, so it always pads); the mask prompt is blended
    with has_mask_input. Returns ALL 4 mask tokens (token 0 = single-mask output) unclamped."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.pe = model.sam_prompt_encoder
        self.md = model.sam_mask_decoder
        self.image_size = model.image_size

    def embed_points(self, coords, labels):
        coords = coords + 0.5
        pad_pt = torch.zeros((coords.shape[0], 1, 2), dtype=coords.dtype)
        pad_lb = -torch.ones((labels.shape[0], 1), dtype=labels.dtype)
        coords = torch.cat([coords, pad_pt], dim=1)
        labels = torch.cat([labels, pad_lb], dim=1)
        coords = coords / self.image_size
        emb = self.pe.pe_layer._pe_encoding(coords)
        lab = labels.unsqueeze(-1).expand_as(emb)
        emb = emb * (lab != -1)
        emb = emb + self.pe.not_a_point_embed.weight * (lab == -1)
        for i in range(self.pe.num_point_embeddings):
            emb = emb + self.pe.point_embeddings[i].weight * (lab == i)
        return emb

    def embed_masks(self, mask_input, has_mask_input):
        m = has_mask_input * self.pe.mask_downscaling(mask_input)
        return m + (1 - has_mask_input) * self.pe.no_mask_embed.weight.reshape(1, -1, 1, 1)

    def forward(self, image_embed, hr0, hr1, coords, labels, mask_input, has_mask_input, repeat_image=False):
        sparse = self.embed_points(coords, labels.to(torch.float32))
        dense = self.embed_masks(mask_input, has_mask_input)
        masks, iou, _, _ = self.md.predict_masks(
            image_embeddings=image_embed,
            image_pe=self.pe.get_dense_pe(),
            sparse_prompt_embeddings=sparse,
            dense_prompt_embeddings=dense,
            repeat_image=repeat_image,
            high_res_features=[hr0, hr1],
        )
        return masks, iou


class DecoderSamexporter(nn.Module):
    """(a) samexporter: masks = 3 multimask logits clamped to +-32 (as samexporter does)."""

    def __init__(self, model):
        super().__init__()
        self.core = DecoderCore(model)

    def forward(self, image_embed, high_res_feats_0, high_res_feats_1, point_coords, point_labels,
                mask_input, has_mask_input):
        m, iou = self.core(image_embed, high_res_feats_0, high_res_feats_1, point_coords,
                           point_labels, mask_input, has_mask_input)
        return torch.clamp(m[:, 1:], -32.0, 32.0), iou[:, 1:]


def upsample_to(masks, size_hw):
    return F.interpolate(masks, size=(size_hw[0], size_hw[1]), mode="bilinear", align_corners=False)


class DecoderSamexporterOrigSize(nn.Module):
    """(b) samexporter + orig_im_size int32 [2] (H,W): 3 multimask logits upsampled in the graph
    straight from S/4 to HxW (bilinear, align_corners=False), from the UNclamped logits like
    SAM2Transforms.postprocess_masks."""

    def __init__(self, model):
        super().__init__()
        self.core = DecoderCore(model)

    def forward(self, image_embed, high_res_feats_0, high_res_feats_1, point_coords, point_labels,
                mask_input, has_mask_input, orig_im_size):
        m, iou = self.core(image_embed, high_res_feats_0, high_res_feats_1, point_coords,
                           point_labels, mask_input, has_mask_input)
        return upsample_to(m[:, 1:], orig_im_size.to(torch.int64)), iou[:, 1:]


class DecoderSam2onnx(nn.Module):
    """(c) sam2-onnx: point_labels int64, has_mask_input [1,1], low_res_masks NOT clamped."""

    def __init__(self, model):
        super().__init__()
        self.core = DecoderCore(model)

    def forward(self, image_embed, high_res_feat_0, high_res_feat_1, point_coords, point_labels,
                mask_input, has_mask_input):
        m, iou = self.core(image_embed, high_res_feat_0, high_res_feat_1, point_coords,
                           point_labels, mask_input, has_mask_input.reshape(-1, 1, 1, 1))
        return m[:, 1:], iou[:, 1:]


class DecoderSam2onnxBatched(nn.Module):
    """sam2-onnx I/O with a dynamic PROMPT BATCH axis: point_coords [B,N,2], point_labels int64 [B,N]
    (one prompt per row, as SAM2ImagePredictor._predict batches the automatic mask generator's
    points), one image embedding repeated in the graph (predict_masks(repeat_image=True)), one
    mask_input [1,1,L,L] / has_mask_input [1,1] shared by the batch; low_res_masks [B,3,L,L]
    unclamped, iou_predictions [B,3]."""

    def __init__(self, model):
        super().__init__()
        self.core = DecoderCore(model)

    def forward(self, image_embed, high_res_feat_0, high_res_feat_1, point_coords, point_labels,
                mask_input, has_mask_input):
        m, iou = self.core(image_embed, high_res_feat_0, high_res_feat_1, point_coords,
                           point_labels, mask_input, has_mask_input.reshape(-1, 1, 1, 1), repeat_image=True)
        return m[:, 1:], iou[:, 1:]


def export_batched_decoder(model, outdir, prefix, S):
    """Exports {prefix}_sam2onnx_batched_decoder.onnx and checks it against the one-prompt
    sam2onnx decoder (which must exist in outdir) on 5 prompts at once. Returns the max abs diffs."""
    import onnx

    L = S // 4
    path = os.path.join(outdir, f"{prefix}_sam2onnx_batched_decoder.onnx")
    with torch.no_grad():
        e, h0, h1 = EncoderCore(model).eval()(torch.randn(1, 3, S, S))
    dec = DecoderSam2onnxBatched(model).eval()
    args = (e, h0, h1, torch.rand(3, 1, 2) * S, torch.ones(3, 1, dtype=torch.int64),
            torch.zeros(1, 1, L, L), torch.zeros(1, 1))
    names_in = ["image_embed", "high_res_feat_0", "high_res_feat_1", "point_coords", "point_labels",
                "mask_input", "has_mask_input"]
    dyn = {"point_coords": {0: "num_prompts", 1: "num_points"}, "point_labels": {0: "num_prompts", 1: "num_points"},
           "low_res_masks": {0: "num_prompts"}, "iou_predictions": {0: "num_prompts"}}
    with torch.no_grad():
        torch.onnx.export(dec, args, path, dynamo=False, opset_version=OPSET, do_constant_folding=True,
                          input_names=names_in, output_names=["low_res_masks", "iou_predictions"],
                          dynamic_axes=dyn)
    onnx.checker.check_model(path)
    # 5 prompts at once against 5 runs of the one-prompt decoder
    single = ort_session(os.path.join(outdir, f"{prefix}_sam2onnx_decoder.onnx"))
    batched = ort_session(path)
    feats = {"image_embed": e.numpy(), "high_res_feat_0": h0.numpy(), "high_res_feat_1": h1.numpy()}
    pts = np.random.RandomState(3).rand(5, 1, 2).astype(np.float32) * S
    common = dict(feats, mask_input=np.zeros((1, 1, L, L), np.float32), has_mask_input=np.zeros((1, 1), np.float32))
    bm, bi = batched.run(None, dict(common, point_coords=pts, point_labels=np.ones((5, 1), np.int64)))
    dm = di = 0.0
    for k in range(5):
        sm, si = single.run(None, dict(common, point_coords=pts[k:k + 1], point_labels=np.ones((1, 1), np.int64)))
        dm, di = max(dm, float(np.abs(sm[0] - bm[k]).max())), max(di, float(np.abs(si[0] - bi[k]).max()))
    print(f"  exported {os.path.basename(path)}: batched vs one prompt per run: masks {dm:.2g}, iou {di:.2g}")
    return dm, di


class DecoderOsam(nn.Module):
    """(d) ryouchinsa/osam: 4 masks (token 0 + 3 multimask) upsampled (unclamped) to orig_im_size
    int64 [2]; iou_predictions [1,4]; plus low_res_masks [1,4,S/4,S/4] clamped to +-32, exactly as
    ryouchinsa/sam-cpp-macos export_onnx.py does (that output is the only way to refine)."""

    def __init__(self, model):
        super().__init__()
        self.core = DecoderCore(model)

    def forward(self, image_embeddings, high_res_features1, high_res_features2, point_coords,
                point_labels, mask_input, has_mask_input, orig_im_size):
        m, iou = self.core(image_embeddings, high_res_features1, high_res_features2, point_coords,
                           point_labels, mask_input, has_mask_input)
        return upsample_to(m, orig_im_size), iou, torch.clamp(m, -32.0, 32.0)


# ---------------------------------------------------------------------------------------------
# Conventions
# ---------------------------------------------------------------------------------------------
def conventions(prefix):
    """name -> dict(encoder file, decoder file, wrapper classes, I/O names, dtypes)."""
    return {
        "samexporter": dict(
            encoder=f"{prefix}_samexporter_encoder.onnx", decoder=f"{prefix}_samexporter_decoder.onnx",
            enc_cls=EncoderSamexporter, dec_cls=DecoderSamexporter,
            enc_in="image", enc_in_dtype="float32",
            enc_out=["high_res_feats_0", "high_res_feats_1", "image_embed"],
            dec_in=["image_embed", "high_res_feats_0", "high_res_feats_1", "point_coords",
                    "point_labels", "mask_input", "has_mask_input"],
            dec_out=["masks", "iou_predictions"],
            labels_dtype="float32", has_mask_shape=[1], orig_size_dtype=None,
            n_masks=3, masks_at_orig=False, low_res_out="masks", clamped=True,
        ),
        "samexporter_origsize": dict(
            encoder=f"{prefix}_samexporter_encoder.onnx",
            decoder=f"{prefix}_samexporter_origsize_decoder.onnx",
            enc_cls=None, dec_cls=DecoderSamexporterOrigSize,
            enc_in="image", enc_in_dtype="float32",
            enc_out=["high_res_feats_0", "high_res_feats_1", "image_embed"],
            dec_in=["image_embed", "high_res_feats_0", "high_res_feats_1", "point_coords",
                    "point_labels", "mask_input", "has_mask_input", "orig_im_size"],
            dec_out=["masks", "iou_predictions"],
            labels_dtype="float32", has_mask_shape=[1], orig_size_dtype="int32",
            n_masks=3, masks_at_orig=True, low_res_out=None, clamped=False,
        ),
        "sam2onnx": dict(
            encoder=f"{prefix}_sam2onnx_encoder.onnx", decoder=f"{prefix}_sam2onnx_decoder.onnx",
            enc_cls=EncoderSam2onnx, dec_cls=DecoderSam2onnx,
            enc_in="image", enc_in_dtype="float32",
            enc_out=["image_embed", "high_res_feat_0", "high_res_feat_1"],
            dec_in=["image_embed", "high_res_feat_0", "high_res_feat_1", "point_coords",
                    "point_labels", "mask_input", "has_mask_input"],
            dec_out=["low_res_masks", "iou_predictions"],
            labels_dtype="int64", has_mask_shape=[1, 1], orig_size_dtype=None,
            n_masks=3, masks_at_orig=False, low_res_out="low_res_masks", clamped=False,
        ),
        "osam": dict(
            encoder=f"{prefix}_osam_encoder.onnx", decoder=f"{prefix}_osam_decoder.onnx",
            enc_cls=EncoderOsamU8, dec_cls=DecoderOsam,
            enc_in="input", enc_in_dtype="uint8",
            enc_out=["image_embeddings", "high_res_features1", "high_res_features2"],
            dec_in=["image_embeddings", "high_res_features1", "high_res_features2", "point_coords",
                    "point_labels", "mask_input", "has_mask_input", "orig_im_size"],
            dec_out=["masks", "iou_predictions", "low_res_masks"],
            labels_dtype="float32", has_mask_shape=[1], orig_size_dtype="int64",
            n_masks=4, masks_at_orig=True, low_res_out="low_res_masks", clamped=True,
        ),
    }


# encoder outputs in core order (image_embed, hr0, hr1) -> the convention's names
def enc_core_names(c):
    n = c["enc_out"]
    return (n[2], n[0], n[1]) if c["enc_out"][0].startswith("high_res") else (n[0], n[1], n[2])


def export_convention(model, name, c, outdir, S, done_encoders):
    import onnx

    os.makedirs(outdir, exist_ok=True)
    core = EncoderCore(model).eval()
    enc_path = os.path.join(outdir, c["encoder"])
    if c["enc_cls"] is not None and enc_path not in done_encoders:
        enc = c["enc_cls"](model).eval()
        if c["enc_in_dtype"] == "uint8":
            x = torch.randint(0, 256, (1, 3, S, S), dtype=torch.uint8)
        else:
            x = torch.randn(1, 3, S, S)
        t0 = time.time()
        with torch.no_grad():
            torch.onnx.export(enc, (x,), enc_path, dynamo=False, opset_version=OPSET,
                              do_constant_folding=True, input_names=[c["enc_in"]],
                              output_names=c["enc_out"])
        print(f"  exported {os.path.basename(enc_path)} in {time.time() - t0:.1f}s", flush=True)
        done_encoders.add(enc_path)
    # decoder
    with torch.no_grad():
        e, h0, h1 = core(torch.randn(1, 3, S, S))
    dec = c["dec_cls"](model).eval()
    L = S // 4
    n_pts = 3
    coords = torch.rand(1, n_pts, 2) * S
    labels = torch.tensor([[2, 3, 1]], dtype=torch.float32)
    if c["labels_dtype"] == "int64":
        labels = labels.to(torch.int64)
    mask_in = torch.randn(1, 1, L, L)
    has_mask = torch.ones(c["has_mask_shape"], dtype=torch.float32)
    args = [e, h0, h1, coords, labels, mask_in, has_mask]  # decoder order: embed, hr0, hr1, ...
    dyn = {"point_coords": {1: "num_points"}, "point_labels": {1: "num_points"}}
    if c["orig_size_dtype"] is not None:
        dt = torch.int32 if c["orig_size_dtype"] == "int32" else torch.int64
        args.append(torch.tensor([S + 37, S - 21], dtype=dt))
        for o in c["dec_out"]:
            if o == "masks":
                dyn[o] = {2: "orig_height", 3: "orig_width"}
    dec_path = os.path.join(outdir, c["decoder"])
    t0 = time.time()
    with torch.no_grad():
        torch.onnx.export(dec, tuple(args), dec_path, dynamo=False, opset_version=OPSET,
                          do_constant_folding=True, input_names=c["dec_in"],
                          output_names=c["dec_out"], dynamic_axes=dyn)
    print(f"  exported {os.path.basename(dec_path)} in {time.time() - t0:.1f}s", flush=True)
    for p in (enc_path, dec_path):
        onnx.checker.check_model(p)


def export_all(model, outdir, prefix, S, which=None):
    convs = conventions(prefix)
    done = set()
    for name, c in convs.items():
        if which and name not in which:
            continue
        if c["enc_cls"] is None and (which and "samexporter" not in which):
            # origsize shares the samexporter encoder: make sure it exists
            c = dict(c, enc_cls=EncoderSamexporter)
        export_convention(model, name, c, outdir, S, done)
    return convs


# ---------------------------------------------------------------------------------------------
# onnxruntime helpers
# ---------------------------------------------------------------------------------------------
def ort_session(path, threads=None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    if threads:
        so.intra_op_num_threads = threads
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def io_table(path):
    s = ort_session(path)
    return ([(i.name, i.type, i.shape) for i in s.get_inputs()],
            [(o.name, o.type, o.shape) for o in s.get_outputs()])


def np_dtype(name):
    return {"float32": np.float32, "int64": np.int64, "int32": np.int32, "uint8": np.uint8}[name]


def run_decoder_ort(sess, c, feats, coords_model, labels, mask_in, has_mask, orig_hw):
    e, h0, h1 = feats
    feed = {
        c["dec_in"][0]: e, c["dec_in"][1]: h0, c["dec_in"][2]: h1,
        "point_coords": np.asarray(coords_model, np.float32)[None],
        "point_labels": np.asarray(labels, np_dtype(c["labels_dtype"]))[None],
        "mask_input": np.asarray(mask_in, np.float32).reshape(1, 1, *mask_in.shape[-2:]),
        "has_mask_input": np.full(c["has_mask_shape"], has_mask, np.float32),
    }
    if c["orig_size_dtype"]:
        feed["orig_im_size"] = np.asarray(orig_hw, np_dtype(c["orig_size_dtype"]))
    return dict(zip(c["dec_out"], sess.run(c["dec_out"], feed)))


# ---------------------------------------------------------------------------------------------
# Reference images and prompts
# ---------------------------------------------------------------------------------------------
def make_images():
    from PIL import Image, ImageDraw

    imgs = {}
    # img0: 320x240 (W x H), landscape
    im = Image.new("RGB", (320, 240), (40, 90, 160))
    d = ImageDraw.Draw(im)
    d.rectangle([0, 170, 319, 239], fill=(70, 140, 60))
    d.ellipse([60, 60, 150, 150], fill=(230, 200, 40))
    d.rectangle([190, 80, 290, 200], fill=(200, 40, 40))
    d.polygon([(240, 20), (300, 70), (180, 70)], fill=(245, 245, 245))
    imgs["img0"] = dict(
        image=im,
        prompts=dict(
            point=dict(points=[[105, 105]], labels=[1]),
            point_neg=dict(points=[[105, 105], [240, 140]], labels=[1, 0]),
            box=dict(box=[185, 75, 295, 205]),
            box_point=dict(box=[185, 75, 295, 205], points=[[240, 140]], labels=[1]),
        ),
    )
    # img1: 200x300 (W x H), portrait
    im = Image.new("RGB", (200, 300), (220, 215, 200))
    d = ImageDraw.Draw(im)
    d.ellipse([30, 30, 170, 170], fill=(30, 60, 140))
    d.rectangle([50, 200, 150, 280], fill=(20, 150, 90))
    d.ellipse([85, 85, 115, 115], fill=(250, 250, 250))
    imgs["img1"] = dict(
        image=im,
        prompts=dict(
            point=dict(points=[[60, 100]], labels=[1]),
            point_neg=dict(points=[[60, 100], [100, 100]], labels=[1, 0]),
            box=dict(box=[45, 195, 155, 285]),
            box_point=dict(box=[25, 25, 175, 175], points=[[140, 60]], labels=[1]),
        ),
    )
    return imgs


def prompt_arrays(p, W, H, S):
    """Concatenated (points, labels) in ORIGINAL pixels, box corners first (labels 2,3), and the
    same mapped to model space with the reference mapping x*S/W, y*S/H."""
    pts, lbs = [], []
    if "box" in p:
        x0, y0, x1, y1 = p["box"]
        pts += [[x0, y0], [x1, y1]]
        lbs += [2, 3]
    if "points" in p:
        pts += p["points"]
        lbs += p["labels"]
    pts = np.asarray(pts, np.float64)
    model = np.stack([pts[:, 0] * S / W, pts[:, 1] * S / H], axis=1).astype(np.float32)
    return pts.astype(np.float32), np.asarray(lbs, np.int64), model


# ---------------------------------------------------------------------------------------------
# PyTorch reference (SAM2ImagePredictor)
# ---------------------------------------------------------------------------------------------
def torch_decode_all4(model, predictor, coords_model, labels, mask_in):
    """SAM2ImagePredictor._predict, but keeping all 4 mask tokens (for the 4-mask convention).
    coords_model already in model space; boxes are passed as leading points with labels 2,3,
    exactly what _predict builds from `box`."""
    pe, md = model.sam_prompt_encoder, model.sam_mask_decoder
    c = torch.as_tensor(coords_model, dtype=torch.float32)[None]
    l = torch.as_tensor(labels, dtype=torch.int32)[None]
    mi = None if mask_in is None else torch.as_tensor(mask_in, dtype=torch.float32).reshape(1, 1, *mask_in.shape[-2:])
    with torch.no_grad():
        sparse, dense = pe(points=(c, l), boxes=None, masks=mi)
        feats = predictor._features
        masks, iou, _, _ = md.predict_masks(
            image_embeddings=feats["image_embed"][-1].unsqueeze(0), image_pe=pe.get_dense_pe(),
            sparse_prompt_embeddings=sparse, dense_prompt_embeddings=dense, repeat_image=False,
            high_res_features=[f[-1].unsqueeze(0) for f in feats["high_res_feats"]])
    return masks[0].numpy(), iou[0].numpy()


class BinWriter:
    """Writes float32/uint8 little-endian raw files, de-duplicated by content."""

    def __init__(self, d):
        self.d = d
        self.by_hash = {}
        os.makedirs(d, exist_ok=True)

    def write(self, name, arr, dtype=np.float32):
        a = np.ascontiguousarray(np.asarray(arr, dtype=np.dtype(dtype).newbyteorder("<")))
        h = hashlib.sha256(a.tobytes() + str(a.shape).encode()).hexdigest()
        if h in self.by_hash:
            return self.by_hash[h]
        fn = name + ".bin"
        with open(os.path.join(self.d, fn), "wb") as f:
            f.write(a.tobytes())
        self.by_hash[h] = dict(file=fn, shape=list(a.shape), dtype=np.dtype(dtype).name)
        return self.by_hash[h]

    def write_png(self, name, mask_bool):
        from PIL import Image

        a = (np.asarray(mask_bool, bool).astype(np.uint8) * 255)
        h = hashlib.sha256(a.tobytes() + str(a.shape).encode()).hexdigest()
        if h in self.by_hash:
            return self.by_hash[h]["file"]
        fn = name + ".png"
        Image.fromarray(a, mode="L").save(os.path.join(self.d, fn), optimize=True)
        self.by_hash[h] = dict(file=fn)
        return fn


def make_reference(model, outdir, prefix, S):
    from sam2.sam2_image_predictor import SAM2ImagePredictor

    refdir = os.path.join(outdir, "reference")
    os.makedirs(refdir, exist_ok=True)
    for f in os.listdir(refdir):
        os.remove(os.path.join(refdir, f))
    bw = BinWriter(refdir)
    convs = conventions(prefix)
    predictor = SAM2ImagePredictor(model)
    # SAM2ImagePredictor hard-codes the 1024-input feature sizes [(256,256),(128,128),(64,64)]
    predictor._bb_feat_sizes = [(S // 4, S // 4), (S // 8, S // 8), (S // 16, S // 16)]
    core = EncoderCore(model).eval()
    sessions = {}
    for name, c in convs.items():
        sessions[name] = (ort_session(os.path.join(outdir, c["encoder"])),
                          ort_session(os.path.join(outdir, c["decoder"])))
    index = dict(
        format_version=1,
        description="SAM2 tiny fixtures: PyTorch reference outputs (see README.md)",
        model_size=S, low_res_size=S // 4,
        mean=IMAGENET_MEAN, std=IMAGENET_STD,
        images={}, entries=[],
        conventions={
            name: dict(
                encoder=c["encoder"], decoder=c["decoder"], encoder_input=c["enc_in"],
                encoder_input_dtype=c["enc_in_dtype"],
                encoder_outputs_embed_hr0_hr1=list(enc_core_names(c)),
                encoder_outputs_file_order=c["enc_out"], decoder_inputs=c["dec_in"],
                decoder_outputs=c["dec_out"], point_labels_dtype=c["labels_dtype"],
                has_mask_input_shape=c["has_mask_shape"], orig_im_size_dtype=c["orig_size_dtype"],
                num_masks=c["n_masks"], masks_at_original_size=c["masks_at_orig"],
                low_res_output=c["low_res_out"], low_res_clamped_32=c["clamped"],
            ) for name, c in convs.items()
        },
    )
    diffs = {}  # convention -> max abs diffs torch vs ort
    mismatch_px = {}

    def upd(key, v):
        diffs[key] = max(diffs.get(key, 0.0), float(v))

    for img_name, spec in make_images().items():
        im = spec["image"]
        W, H = im.size
        png = f"{img_name}.png"
        im.save(os.path.join(refdir, png), optimize=True)
        rgb = np.asarray(im.convert("RGB"))
        # --- reference preprocessing (SAM2Transforms: ToTensor -> Resize((S,S)) -> Normalize)
        x_ref = predictor._transforms(rgb)[None].float()  # [1,3,S,S]
        inp = bw.write(f"{img_name}_input_f32", x_ref.numpy())
        # uint8 input for the uint8 (osam) encoder: the reference resize result BEFORE
        # normalisation, quantised: u8 = round(clip((x*std+mean)*255, 0, 255)).
        mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
        std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
        u8 = torch.round(torch.clamp((x_ref * std + mean) * 255.0, 0, 255)).to(torch.uint8)
        index["images"][img_name] = dict(
            file=png, width=W, height=H, input_f32=inp,
            input_u8_rule="round(clip((input_f32*std+mean)*255,0,255)) as uint8, NCHW",
        )
        predictor.set_image(rgb)
        # torch features, float path and uint8 path
        with torch.no_grad():
            feats_f = [t.numpy() for t in core(x_ref)]
            xu = (u8.float() / 255.0 - mean) / std
            feats_u = [t.numpy() for t in core(xu)]
        # sanity: predictor features == our core
        assert np.array_equal(predictor._features["image_embed"].numpy(), feats_f[0])
        # ORT encoders
        ort_feats = {}
        for name, c in convs.items():
            es = sessions[name][0]
            feed = u8.numpy() if c["enc_in_dtype"] == "uint8" else x_ref.numpy()
            outs = dict(zip(c["enc_out"], es.run(c["enc_out"], {c["enc_in"]: feed})))
            names = enc_core_names(c)
            of = [outs[n] for n in names]
            tf = feats_u if c["enc_in_dtype"] == "uint8" else feats_f
            for a, b in zip(of, tf):
                upd(f"{name}/encoder", np.abs(a - b).max())
            ort_feats[name] = of
        prev, prev_file = {}, {}
        for pname in ["point", "point_neg", "box", "box_point", "refine"]:
            p = spec["prompts"]["point" if pname == "refine" else pname]
            pts, lbs, pts_model = prompt_arrays(p, W, H, S)
            for name, c in convs.items():
                four = c["n_masks"] == 4
                # previous call's chosen low-res logits for refinement
                mask_in, has_mask = np.zeros((S // 4, S // 4), np.float32), 0.0
                if pname == "refine":
                    mask_in, has_mask = prev[name], 1.0
                if four:
                    # uint8-path features: reproduce the predictor decode with those features
                    saved = predictor._features
                    predictor._features = {
                        "image_embed": torch.from_numpy(feats_u[0]),
                        "high_res_feats": [torch.from_numpy(feats_u[1]), torch.from_numpy(feats_u[2])],
                    }
                    m4, iou4 = torch_decode_all4(model, predictor, pts_model, lbs,
                                                 mask_in if has_mask else None)
                    predictor._features = saved
                    logits, iou = m4, iou4
                    # the 4-mask decoder's low_res_masks output is clamped
                    low = np.clip(logits, -32, 32)
                else:
                    box = None
                    pp, pl = None, None
                    if "box" in p:
                        box = np.asarray(p["box"], np.float32)
                    if "points" in p:
                        pp, pl = np.asarray(p["points"], np.float32), np.asarray(p["labels"])
                    masks_o, iou, low = predictor.predict(
                        point_coords=pp, point_labels=pl, box=box,
                        mask_input=(mask_in[None] if has_mask else None),
                        multimask_output=True, return_logits=True)
                    # cross-check with our all-4 decode (prompt order: box corners first)
                    m4, iou4 = torch_decode_all4(model, predictor, pts_model, lbs,
                                                 mask_in if has_mask else None)
                    upd("predictor_vs_all4_decode", np.abs(np.clip(m4[1:], -32, 32) - low).max())
                    upd("predictor_vs_all4_decode", np.abs(iou4[1:] - iou).max())
                    logits = m4[1:]
                chosen = int(np.argmax(iou))
                # final binary mask: chosen UNclamped low-res logits -> bilinear straight to HxW
                up = F.interpolate(torch.from_numpy(logits[None, chosen:chosen + 1]), size=(H, W),
                                   mode="bilinear", align_corners=False)[0, 0].numpy()
                binary = up > 0.0
                if not four:
                    assert np.array_equal(binary, masks_o[chosen] > 0.0)
                prev_store = low[chosen] if four else np.clip(logits[chosen], -32, 32)
                # ---- ORT decode
                ds = sessions[name][1]
                res = run_decoder_ort(ds, c, ort_feats[name], pts_model,
                                      lbs, mask_in, has_mask, (H, W))
                if c["low_res_out"]:
                    ref_low = np.clip(logits, -32, 32) if c["clamped"] else logits
                    upd(f"{name}/low_res", np.abs(res[c["low_res_out"]][0] - ref_low).max())
                if c["masks_at_orig"]:
                    ref_up = F.interpolate(torch.from_numpy(logits[None]), size=(H, W),
                                           mode="bilinear", align_corners=False)[0].numpy()
                    upd(f"{name}/masks_orig_size", np.abs(res["masks"][0] - ref_up).max())
                    mm = int(((res["masks"][0, chosen] > 0) != binary).sum())
                    mismatch_px[name] = max(mismatch_px.get(name, 0), mm)
                upd(f"{name}/iou", np.abs(res["iou_predictions"][0] - iou).max())
                # ---- store
                tag = f"{img_name}_{pname}"
                stored = np.clip(logits, -32, 32) if c["clamped"] else logits
                if four:  # size budget: only the chosen channel of the 4-mask (uint8-path) output
                    low_file = bw.write(f"{tag}_u8path_lowres_chosen", stored[None, chosen:chosen + 1])
                    low_file = dict(low_file, output_channels=[chosen])
                else:
                    low_file = bw.write(f"{tag}_lowres{len(logits)}", stored[None])
                    low_file = dict(low_file, output_channels=list(range(len(logits))))
                mask_png = bw.write_png(f"{tag}_{'u8path_' if four else ''}mask", binary)
                srt = np.sort(iou)[::-1]
                entry = dict(
                    image=img_name, prompt=pname, convention=name,
                    encoder=c["encoder"], decoder=c["decoder"],
                    encoder_input=("input_u8 (see images[].input_u8_rule)" if four else "input_f32"),
                    points=pts.tolist(), labels=lbs.tolist(),
                    box=(p.get("box")), points_model=pts_model.tolist(),
                    mask_input=(None if pname != "refine" else prev_file[name]),
                    has_mask_input=has_mask,
                    low_res_logits=dict(low_file, clamped=bool(c["clamped"]),
                                        output=c["low_res_out"]),
                    iou_predictions=[float(v) for v in iou],
                    chosen_index=chosen, iou_margin=float(srt[0] - srt[1]),
                    mask_png=mask_png, mask_area=int(binary.sum()),
                    max_abs_logit=float(np.abs(logits).max()),
                )
                index["entries"].append(entry)
                if pname == "point":
                    # refinement input = the chosen (clamped, as returned) low-res logits
                    prev[name] = prev_store
                    prev_file[name] = dict(file=low_file["file"], file_shape=low_file["shape"],
                                           file_channel=(0 if four else chosen),
                                           shape=[1, 1, S // 4, S // 4], clamped=True)
    with open(os.path.join(refdir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    return diffs, mismatch_px, index


# ---------------------------------------------------------------------------------------------
# Geometric oracle (pure onnx.helper, no torch)
# ---------------------------------------------------------------------------------------------
ORACLE_SIZE = 1024
ORACLE_RADII = [10.0, 20.0, 30.0]  # low-res px, per output mask
ORACLE_IOU = [0.5, 0.9, 0.7]  # middle highest -> chosen mask = radius 20


def build_oracle(outdir):
    import onnx
    from onnx import TensorProto as TP, helper as oh, numpy_helper as nh

    S, L = ORACLE_SIZE, ORACLE_SIZE // 4
    shapes = {"high_res_feats_0": [1, 32, S // 4, S // 4], "high_res_feats_1": [1, 64, S // 8, S // 8],
              "image_embed": [1, 256, S // 16, S // 16]}
    # encoder: every output = mean(image) broadcast to the real shapes
    nodes = [oh.make_node("ReduceMean", ["image"], ["m"], keepdims=1)]
    inits = []
    for n, shp in shapes.items():
        inits.append(nh.from_array(np.asarray(shp, np.int64), f"{n}_shape"))
        nodes.append(oh.make_node("Expand", ["m", f"{n}_shape"], [n]))
    g = oh.make_graph(nodes, "sam2_oracle_encoder",
                      [oh.make_tensor_value_info("image", TP.FLOAT, [1, 3, S, S])],
                      [oh.make_tensor_value_info(n, TP.FLOAT, s) for n, s in shapes.items()], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", OPSET)], producer_name="segrt-oracle")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(outdir, "sam2_oracle_encoder.onnx"))

    # decoder: disc around the FIRST point whose label == 1 (model-space coords, no +0.5 shift);
    # low-res pixel (i, j) centre = ((j+0.5)*4, (i+0.5)*4) in model space.
    # logit_k = radius_k - distance (low-res px), k = 0,1,2. iou = ORACLE_IOU.
    grid = (np.arange(L, dtype=np.float32) + 0.5) * (S / L)
    inits = [
        nh.from_array(np.float32(1.0).reshape(()), "one"),
        nh.from_array(np.float32(0.0).reshape(()), "zero"),
        nh.from_array(np.float32(S / L).reshape(()), "stride"),
        nh.from_array(np.asarray(1, np.int64).reshape(()), "axis1"),
        nh.from_array(np.asarray([1], np.int64), "ax1"),
        nh.from_array(np.asarray([2], np.int64), "ax2"),
        nh.from_array(np.asarray([0], np.int64), "i0"),
        nh.from_array(np.asarray([1], np.int64), "i1"),
        nh.from_array(grid.reshape(1, 1, 1, L), "gx"),
        nh.from_array(grid.reshape(1, 1, L, 1), "gy"),
        nh.from_array(np.asarray(ORACLE_RADII, np.float32).reshape(1, 3, 1, 1), "radii"),
        nh.from_array(np.asarray(ORACLE_IOU, np.float32).reshape(1, 3), "iou_const"),
    ]
    nodes = [
        oh.make_node("Equal", ["point_labels", "one"], ["is_pos"]),
        oh.make_node("Cast", ["is_pos"], ["pos_f"], to=TP.FLOAT),
        oh.make_node("CumSum", ["pos_f", "axis1"], ["cum"]),
        oh.make_node("Equal", ["cum", "one"], ["cum_is1"]),
        oh.make_node("Cast", ["cum_is1"], ["cum1_f"], to=TP.FLOAT),
        oh.make_node("Mul", ["pos_f", "cum1_f"], ["first"]),  # one-hot of first positive [1,N]
        oh.make_node("Unsqueeze", ["first", "ax2"], ["first3"]),  # [1,N,1]
        oh.make_node("Mul", ["point_coords", "first3"], ["sel"]),
        oh.make_node("ReduceSum", ["sel", "ax1"], ["pxy"], keepdims=0),  # [1,2]
        oh.make_node("Gather", ["pxy", "i0"], ["px"], axis=1),  # [1,1]
        oh.make_node("Gather", ["pxy", "i1"], ["py"], axis=1),
        oh.make_node("Unsqueeze", ["px", "ax2"], ["px3"]),
        oh.make_node("Unsqueeze", ["px3", "ax2"], ["px4"]),  # [1,1,1,1]
        oh.make_node("Unsqueeze", ["py", "ax2"], ["py3"]),
        oh.make_node("Unsqueeze", ["py3", "ax2"], ["py4"]),
        oh.make_node("Sub", ["gx", "px4"], ["dx"]),  # [1,1,1,L]
        oh.make_node("Sub", ["gy", "py4"], ["dy"]),  # [1,1,L,1]
        oh.make_node("Mul", ["dx", "dx"], ["dx2"]),
        oh.make_node("Mul", ["dy", "dy"], ["dy2"]),
        oh.make_node("Add", ["dx2", "dy2"], ["d2"]),  # [1,1,L,L]
        oh.make_node("Sqrt", ["d2"], ["d_model"]),
        oh.make_node("Div", ["d_model", "stride"], ["d_low"]),
        oh.make_node("Sub", ["radii", "d_low"], ["disc"]),  # [1,3,L,L]
    ]
    # consume every other input cheaply (0 * mean) so a runtime must feed all of them
    extra = ["image_embed", "high_res_feats_0", "high_res_feats_1", "mask_input", "has_mask_input"]
    acc = "disc"
    for i, n in enumerate(extra):
        nodes += [oh.make_node("ReduceMean", [n], [f"{n}_m"], keepdims=0),
                  oh.make_node("Mul", [f"{n}_m", "zero"], [f"{n}_z"]),
                  oh.make_node("Add", [acc, f"{n}_z"], [f"acc{i}"])]
        acc = f"acc{i}"
    nodes.append(oh.make_node("Identity", [acc], ["masks"]))
    nodes.append(oh.make_node("Identity", ["iou_const"], ["iou_predictions"]))
    inputs = [
        oh.make_tensor_value_info("image_embed", TP.FLOAT, shapes["image_embed"]),
        oh.make_tensor_value_info("high_res_feats_0", TP.FLOAT, shapes["high_res_feats_0"]),
        oh.make_tensor_value_info("high_res_feats_1", TP.FLOAT, shapes["high_res_feats_1"]),
        oh.make_tensor_value_info("point_coords", TP.FLOAT, [1, "num_points", 2]),
        oh.make_tensor_value_info("point_labels", TP.FLOAT, [1, "num_points"]),
        oh.make_tensor_value_info("mask_input", TP.FLOAT, [1, 1, L, L]),
        oh.make_tensor_value_info("has_mask_input", TP.FLOAT, [1]),
    ]
    outputs = [oh.make_tensor_value_info("masks", TP.FLOAT, [1, 3, L, L]),
               oh.make_tensor_value_info("iou_predictions", TP.FLOAT, [1, 3])]
    g = oh.make_graph(nodes, "sam2_oracle_decoder", inputs, outputs, inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", OPSET)], producer_name="segrt-oracle")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(outdir, "sam2_oracle_decoder.onnx"))


ORACLE_SIZES = [(1920, 1080), (1080, 1920), (333, 777), (4000, 300)]  # (W, H)
ORACLE_CLICKS = [(0.5, 0.5), (0.37, 0.61), (0.8, 0.25)]  # fractions of (W, H), then floor


def verify_oracle(outdir):
    enc = ort_session(os.path.join(outdir, "sam2_oracle_encoder.onnx"))
    dec = ort_session(os.path.join(outdir, "sam2_oracle_decoder.onnx"))
    S, L = ORACLE_SIZE, ORACLE_SIZE // 4
    feats = enc.run(["image_embed", "high_res_feats_0", "high_res_feats_1"],
                    {"image": np.zeros((1, 3, S, S), np.float32)})
    rows = []
    for W, H in ORACLE_SIZES:
        for fx, fy in ORACLE_CLICKS:
            cx, cy = int(fx * W), int(fy * H)
            # negative point first: the oracle must pick the first LABEL-1 point
            coords = np.asarray([[[5.0, 5.0], [cx * S / W, cy * S / H], [900.0, 900.0]]], np.float32)
            labels = np.asarray([[0, 1, 1]], np.float32)
            m, iou = dec.run(["masks", "iou_predictions"], {
                "image_embed": feats[0], "high_res_feats_0": feats[1], "high_res_feats_1": feats[2],
                "point_coords": coords, "point_labels": labels,
                "mask_input": np.zeros((1, 1, L, L), np.float32),
                "has_mask_input": np.zeros([1], np.float32)})
            k = int(np.argmax(iou[0]))
            up = F.interpolate(torch.from_numpy(m[:, k:k + 1]), size=(H, W), mode="bilinear",
                               align_corners=False)[0, 0].numpy()
            ys, xs = np.nonzero(up > 0)
            ex, ey = xs.mean() - cx, ys.mean() - cy
            rows.append(dict(W=W, H=H, click=[cx, cy], chosen=k, area=int(len(xs)),
                             err_x=float(ex), err_y=float(ey)))
    return rows


def verify_wrappers(model, outdir, c, S, seed=0):
    """torch wrapper vs onnxruntime on a random image and a box + 2-point prompt (+ mask input)
    at an odd original size. Returns {output: max abs diff}."""
    g = torch.Generator().manual_seed(seed)
    enc_cls = c["enc_cls"] or EncoderSamexporter
    enc, dec = enc_cls(model).eval(), c["dec_cls"](model).eval()
    if c["enc_in_dtype"] == "uint8":
        x = torch.randint(0, 256, (1, 3, S, S), generator=g, dtype=torch.uint8)
    else:
        x = torch.randn(1, 3, S, S, generator=g)
    es = ort_session(os.path.join(outdir, c["encoder"]))
    ds = ort_session(os.path.join(outdir, c["decoder"]))
    with torch.no_grad():
        t_enc = [t.numpy() for t in enc(x)]
    o_enc = es.run(c["enc_out"], {c["enc_in"]: x.numpy()})
    diffs = {n: float(np.abs(a - b).max()) for n, a, b in zip(c["enc_out"], t_enc, o_enc)}
    feats = dict(zip(c["enc_out"], o_enc))
    coords = np.asarray([[0.2 * S, 0.3 * S], [0.7 * S, 0.8 * S], [0.5 * S, 0.55 * S], [0.1 * S, 0.9 * S]],
                        np.float32)
    labels = np.asarray([2, 3, 1, 0])
    mask_in = torch.randn(1, 1, S // 4, S // 4, generator=g).numpy() * 5
    res = run_decoder_ort(ds, c, [feats[n] for n in enc_core_names(c)], coords, labels, mask_in, 1.0,
                          (333, 517))
    targs = [torch.from_numpy(feats[n]) for n in enc_core_names(c)] + [
        torch.from_numpy(coords[None]),
        torch.from_numpy(labels[None].astype(np_dtype(c["labels_dtype"]))),
        torch.from_numpy(mask_in), torch.ones(c["has_mask_shape"])]
    if c["orig_size_dtype"]:
        targs.append(torch.tensor([333, 517], dtype=getattr(torch, c["orig_size_dtype"])))
    with torch.no_grad():
        t_dec = [t.numpy() for t in dec(*targs)]
    for n, t in zip(c["dec_out"], t_dec):
        assert res[n].shape == t.shape, (n, res[n].shape, t.shape)
        diffs[n] = float(np.abs(res[n] - t).max())
    return diffs


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------
def time_pair(outdir, c, S, reps=20, threads=2):
    enc = ort_session(os.path.join(outdir, c["encoder"]), threads)
    dec = ort_session(os.path.join(outdir, c["decoder"]), threads)
    x = (np.random.RandomState(0).randint(0, 256, (1, 3, S, S)).astype(np.uint8)
         if c["enc_in_dtype"] == "uint8" else np.random.RandomState(0).randn(1, 3, S, S).astype(np.float32))
    run_enc = lambda: enc.run(c["enc_out"], {c["enc_in"]: x})
    outs = dict(zip(c["enc_out"], run_enc()))
    feats = [outs[n] for n in enc_core_names(c)]
    run_enc()
    t = time.perf_counter()
    n_enc = max(2, reps // (10 if S > 512 else 1))
    for _ in range(n_enc):
        run_enc()
    t_enc = (time.perf_counter() - t) / n_enc * 1000
    res = {}
    for npts in (1, 5):
        coords = np.random.RandomState(1).rand(npts, 2).astype(np.float32) * S
        labels = np.ones(npts, np.int64)
        f = lambda: run_decoder_ort(dec, c, feats, coords, labels,
                                    np.zeros((S // 4, S // 4), np.float32), 0.0, (1080, 1920))
        f()
        t = time.perf_counter()
        for _ in range(reps):
            f()
        res[npts] = (time.perf_counter() - t) / reps * 1000
    return t_enc, res


# ---------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real-size", metavar="OUTDIR",
                    help="export the real-size architecture (1024 input; random weights unless "
                         "--checkpoint) into OUTDIR instead of the tiny fixtures")
    ap.add_argument("--checkpoint", metavar="PATH", help="real SAM2 checkpoint (.pt) to export")
    ap.add_argument("--config", default=CONFIG, help="sam2 hydra config for --real-size/--checkpoint")
    ap.add_argument("--conventions", default="samexporter,samexporter_origsize,sam2onnx,osam",
                    help="comma list for --real-size/--checkpoint")
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--batched-decoder", action="store_true",
                    help="only export the sam2onnx-style decoder with a dynamic prompt batch axis "
                         "(<prefix>_sam2onnx_batched_decoder.onnx; the sam2onnx pair must already exist)")
    ap.add_argument("--no-export", action="store_true",
                    help="--real-size/--checkpoint: only verify + time files already in OUTDIR")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import logging
    logging.getLogger().setLevel(logging.ERROR)
    np.random.seed(SEED)

    if args.batched_decoder:
        real = bool(args.real_size or args.checkpoint)
        outdir = (args.real_size or os.path.join(HERE, "real-size")) if real else HERE
        prefix = ("sam2_" + ("ckpt" if args.checkpoint else "tiny_random") + "_1024") if real else "sam2_tiny"
        model = build_model(real_size=real, checkpoint=args.checkpoint, config=args.config)
        export_batched_decoder(model, outdir, prefix, model.image_size)
        return

    if args.real_size or args.checkpoint:
        outdir = args.real_size or os.path.join(HERE, "real-size")
        prefix = "sam2_" + ("ckpt" if args.checkpoint else "tiny_random") + "_1024"
        model = build_model(real_size=True, checkpoint=args.checkpoint, config=args.config)
        S = model.image_size
        which = args.conventions.split(",")
        t0 = time.time()
        convs = conventions(prefix)
        if not args.no_export:
            export_all(model, outdir, prefix, S, which)
            print(f"export took {time.time() - t0:.0f}s")
        for name in which:
            c = convs[name]
            for fn in (c["encoder"], c["decoder"]):
                print(f"  {fn}: {os.path.getsize(os.path.join(outdir, fn)) / 1e6:.1f} MB")
            d = verify_wrappers(model, outdir, c, S)
            print(f"  torch vs onnxruntime {name}: " + ", ".join(f"{k} {v:.2g}" for k, v in d.items()))
        if not args.skip_timing:
            for name in which[:1]:
                te, td = time_pair(outdir, convs[name], S, reps=10)
                print(f"  timing {name}: encoder {te:.0f} ms, decoder {td[1]:.1f} ms (1 pt) "
                      f"{td[5]:.1f} ms (5 pts)")
        return

    outdir = HERE
    prefix = "sam2_tiny"
    model = build_model()
    S = model.image_size
    n = lambda mod: sum(p.numel() for p in mod.parameters())
    print(f"tiny model: image_size {S}, params total {n(model)}, trunk {n(model.image_encoder.trunk)}, "
          f"neck {n(model.image_encoder.neck)}, prompt enc {n(model.sam_prompt_encoder)}, "
          f"mask dec {n(model.sam_mask_decoder)}")
    convs = export_all(model, outdir, prefix, S)
    build_oracle(outdir)
    print("torch wrapper vs onnxruntime (random image, box + 2 points, mask input, 333x517):")
    for name, c in convs.items():
        d = verify_wrappers(model, outdir, c, S)
        print(f"  {name}: " + ", ".join(f"{k} {v:.2g}" for k, v in d.items()))
    print("I/O:")
    files = sorted({c[k] for c in convs.values() for k in ("encoder", "decoder")}) + [
        "sam2_oracle_encoder.onnx", "sam2_oracle_decoder.onnx"]
    for fn in files:
        ins, outs = io_table(os.path.join(outdir, fn))
        print(f"  {fn} ({os.path.getsize(os.path.join(outdir, fn))} B)")
        for i in ins:
            print(f"    in  {i}")
        for o in outs:
            print(f"    out {o}")
    diffs, mism, index = make_reference(model, outdir, prefix, S)
    print("max abs diff torch vs onnxruntime:")
    for k, v in sorted(diffs.items()):
        print(f"  {k}: {v:.3g}")
    print("binary mask pixels differing (in-graph upsample vs torch):", mism)
    print("reference entries:", len(index["entries"]))
    for e in index["entries"]:
        print(f"  {e['image']:5s} {e['prompt']:10s} {e['convention']:21s} chosen {e['chosen_index']} "
              f"margin {e['iou_margin']:.4f} area {e['mask_area']} max|logit| {e['max_abs_logit']:.2f}")
    rows = verify_oracle(outdir)
    print("oracle centroid errors (pixel-index centroid - click):")
    for r in rows:
        print(f"  {r['W']}x{r['H']} click {r['click']} chosen {r['chosen']} area {r['area']} "
              f"err ({r['err_x']:+.3f}, {r['err_y']:+.3f})")
    with open(os.path.join(outdir, "reference", "oracle_check.json"), "w") as f:
        json.dump(dict(sizes=ORACLE_SIZES, clicks_frac=ORACLE_CLICKS, radii=ORACLE_RADII,
                       iou=ORACLE_IOU, rows=rows), f, indent=1)
    if not args.skip_timing:
        print("timing (onnxruntime CPU, 2 intra-op threads):")
        for name, c in convs.items():
            te, td = time_pair(outdir, c, S)
            print(f"  {name}: encoder {te:.2f} ms, decoder {td[1]:.2f} ms (1 pt), {td[5]:.2f} ms (5 pts)")
        te, td = time_pair(outdir, dict(encoder="sam2_oracle_encoder.onnx", decoder="sam2_oracle_decoder.onnx",
                                        **{k: convs["samexporter"][k] for k in convs["samexporter"]
                                           if k not in ("encoder", "decoder")}), ORACLE_SIZE)
        print(f"  oracle: encoder {te:.2f} ms, decoder {td[1]:.2f} ms")
    total = 0
    for root, _, fs in os.walk(outdir):
        if "real-size" in root:
            continue
        for f in fs:
            total += os.path.getsize(os.path.join(root, f))
    print(f"total size under models/sam2 (excluding real-size/): {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
