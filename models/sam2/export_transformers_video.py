#!/usr/bin/env python3
"""Hugging Face transformers' `Sam2VideoModel` as segrt's four SAM2 video modules + a parity run.

    P=.venv-torch/bin/python   # torch + transformers 5.x + onnx + onnxruntime
    $P models/sam2/export_transformers_video.py [OUTDIR]              tiny random model (default out/transformers_video)
    $P models/sam2/export_transformers_video.py --from-pretrained facebook/sam2.1-hiera-tiny OUTDIR
                                                                      a transformers checkpoint (hub id or folder)

Builds a tiny random-weight `transformers.Sam2VideoModel` (transformers 5.x, seeded config below),
wraps its submodules into the I/O contract of export_sam2_video.py (the same input/output names and
shapes, the same split of work between graph and runtime) and writes

  OUTDIR/video_image_encoder.onnx      get_image_features (FPN, conv_s0/conv_s1) [+ no_memory_embedding]
  OUTDIR/video_memory_attention.onnx   memory_temporal_positional_encoding, temporal_positional_encoding_
                                       projection_layer(get_1d_sine_pe), pointer split, memory_attention
  OUTDIR/video_memory_encoder.onnx     _encode_new_memory (binarise/sigmoid, scale/bias, memory_encoder,
                                       occlusion_spatial_embedding_parameter)
  OUTDIR/video_mask_decoder.onnx       prompt_encoder + mask_decoder + object_pointer_proj (both output
                                       modes in one graph, as the official export)
  OUTDIR/video_metadata.json           the settings the Rust tracker reads
  OUTDIR/hf_reference/                 transformers' own video inference (Sam2VideoInferenceSession +
                                       Sam2VideoModel.propagate_in_video_iterator): one mask PNG per frame

then checks each ONNX module against the eager transformers code and prints the command that runs segrt's
tracker on the exported modules; `--compare DIR` compares segrt's masks in DIR with hf_reference/ (IoU).

Mapping (transformers name -> official sam2 name) and the differences found are in
docs/src/pipelines/sam2-tracking.md, "Video modules from Hugging Face transformers".
"""
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import export_sam2_video as ev  # noqa: E402  (FILES, IO, DYN: the contract)

SEED = 0
S = 256
C = 128  # hidden (FPN / decoder / memory attention) width
CM = 64  # memory dim: transformers hard-codes kv_in_dim=64 in Sam2VideoMemoryAttentionLayer.cross_attn_image
NUM_MASKMEM = 7
NO_OBJ_SCORE = -1024.0
FRAMES = os.path.join(HERE, "video", "reference", "frames")
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
MEM_ATTN_GAIN = 3.0
# --edgetam: transformers' EdgeTamVideoModel instead (RepViT trunk through timm; memory compressed by
# spatial_perceiver, EdgeTamVideoPerceiverResampler, into N1 + N2 latent tokens per frame).
EDGETAM = "--edgetam" in sys.argv
N1, N2 = 16, 16  # tiny perceiver: 16 1-D latents + a 4x4 grid of 2-D latents (released EdgeTAM: 256 + 256)
# --sam3-tracker: transformers' Sam3TrackerVideoModel (ViT, patch 14: S = 252, an 18x18 embedding; released:
# 1008, 72x72). Its released config has max_cond_frame_num = 4; the tiny one uses -1 (see the docs).
SAM3 = "--sam3-tracker" in sys.argv
if SAM3:
    S = 252
    MEAN = STD = [0.5, 0.5, 0.5]  # Sam3ImageProcessor / the SAM3 video processor: IMAGENET_STANDARD_MEAN/STD
FEAT = S // 14 if SAM3 else S // 16  # the embedding's side (module level; set_dims updates it)
# Object-score head (as export_sam2_video.py): random init gives a constant ~-0.07 (object never present);
# last Linear x OBJ_SCORE_GAIN, + OBJ_SCORE_SHIFT, picked once (of 75.0..76.6) so that the tracked frames'
# scores straddle 0 (click: 7 present / 6 absent, smallest |score| 0.06) while the clicked frame is present. (SAM2
# model; the same gain and shift leave the tiny EdgeTAM and SAM3-tracker models present on every frame.)
OBJ_SCORE_GAIN = 1000.0
OBJ_SCORE_SHIFT = 76.2


def tiny_config():
    from transformers import Sam2HieraDetConfig, Sam2VideoConfig, Sam2VisionConfig

    return Sam2VideoConfig(
        vision_config=Sam2VisionConfig(
            backbone_config=Sam2HieraDetConfig(
                hidden_size=8, num_attention_heads=1, image_size=[S, S], blocks_per_stage=[1, 1, 3, 1],
                embed_dim_per_stage=[8, 16, 32, 64], num_attention_heads_per_stage=[1, 1, 1, 1],
                window_size_per_stage=[8, 4, 4, 4], global_attention_blocks=[4],
                window_positional_embedding_background_size=[4, 4]),
            backbone_channel_list=[64, 32, 16, 8],
            backbone_feature_sizes=[[S // 4, S // 4], [S // 8, S // 8], [S // 16, S // 16]],
            fpn_hidden_size=C),
        prompt_encoder_config=dict(hidden_size=C, image_size=S, patch_size=16, mask_input_channels=16),
        mask_decoder_config=dict(hidden_size=C, mlp_dim=256, num_attention_heads=8, iou_head_hidden_dim=64),
        image_size=S, num_maskmem=NUM_MASKMEM,
        memory_attention_hidden_size=C, memory_attention_num_layers=2, memory_attention_feed_forward_hidden_size=256,
        memory_attention_rope_feat_sizes=[S // 16, S // 16],
        memory_encoder_hidden_size=C, memory_encoder_output_channels=CM, mask_downsampler_embed_dim=C,
        memory_fuser_embed_dim=C, memory_fuser_intermediate_dim=256,
    )


def tiny_edgetam_config():
    from transformers import EdgeTamVideoConfig, TimmWrapperConfig
    from transformers.models.edgetam.configuration_edgetam import EdgeTamVisionConfig

    trunk = TimmWrapperConfig(architecture="repvit_m1", model_args={
        "in_chans": 3, "features_only": True, "out_indices": [0, 1, 2, 3], "embed_dim": (8, 16, 32, 64),
        "depth": (1, 1, 1, 1)})
    g = int(round(N2 ** 0.5))
    return EdgeTamVideoConfig(
        vision_config=EdgeTamVisionConfig(
            backbone_config=trunk, backbone_channel_list=[64, 32, 16, 8],
            backbone_feature_sizes=[[S // 4, S // 4], [S // 8, S // 8], [S // 16, S // 16]], fpn_hidden_size=C),
        prompt_encoder_config=dict(hidden_size=C, image_size=S, patch_size=16, mask_input_channels=16),
        mask_decoder_config=dict(hidden_size=C, mlp_dim=256, num_attention_heads=8, iou_head_hidden_dim=64),
        image_size=S, num_maskmem=NUM_MASKMEM,
        memory_attention_hidden_size=C, memory_attention_num_layers=2, memory_attention_mlp_hidden_size=256,
        memory_attention_rope_feat_sizes=[S // 16, S // 16], memory_attention_rope_k_sizes=[g, g],
        perceiver_resampler_num_latents=N1, perceiver_resampler_num_latents_2d=N2,
        memory_encoder_hidden_size=C, memory_encoder_output_channels=CM, mask_downsampler_embed_dim=C,
        memory_fuser_embed_dim=C, memory_fuser_intermediate_dim=256,
    )


def tiny_sam3_config():
    from transformers import Sam3TrackerVideoConfig
    from transformers.models.sam3.configuration_sam3 import Sam3ViTConfig, Sam3VisionConfig

    g = FEAT
    return Sam3TrackerVideoConfig(
        vision_config=Sam3VisionConfig(
            backbone_config=Sam3ViTConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                          num_attention_heads=2, image_size=S, patch_size=14, window_size=6,
                                          global_attn_indexes=[1], pretrain_image_size=S),
            fpn_hidden_size=C, backbone_feature_sizes=[[4 * g, 4 * g], [2 * g, 2 * g], [g, g]]),
        prompt_encoder_config=dict(hidden_size=C, image_size=S, patch_size=14, mask_input_channels=16),
        mask_decoder_config=dict(hidden_size=C, mlp_dim=256, num_attention_heads=8, iou_head_hidden_dim=64),
        image_size=S, num_maskmem=NUM_MASKMEM, max_cond_frame_num=-1,
        memory_attention_hidden_size=C, memory_attention_num_layers=2, memory_attention_feed_forward_hidden_size=256,
        memory_attention_rope_feat_sizes=[g, g],
        memory_encoder_hidden_size=C, memory_encoder_output_channels=CM, mask_downsampler_embed_dim=C,
        memory_fuser_embed_dim=C, memory_fuser_intermediate_dim=256,
    )


def build_model():
    from transformers import EdgeTamVideoModel, Sam2VideoModel, Sam3TrackerVideoModel

    torch.manual_seed(SEED)
    cfg = tiny_edgetam_config() if EDGETAM else tiny_sam3_config() if SAM3 else tiny_config()
    cfg._attn_implementation = "eager"
    model = (EdgeTamVideoModel if EDGETAM else Sam3TrackerVideoModel if SAM3 else Sam2VideoModel)(cfg).eval()
    with torch.no_grad():
        # transformers' init (normal 0.02, zero embeddings) gives ~1e-3 logits; PyTorch defaults as the
        # official code builds them, random learnt embeddings, and gains so that memory matters.
        g = torch.Generator().manual_seed(SEED)
        for m in model.modules():
            if hasattr(m, "reset_parameters") and m is not model:
                m.reset_parameters()
        for p in (model.no_memory_embedding, model.memory_temporal_positional_encoding, model.no_object_pointer,
                  model.occlusion_spatial_embedding_parameter, model.no_memory_positional_encoding):
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
        md = model.mask_decoder
        for mlp in md.output_hypernetworks_mlps:
            mlp.proj_out.weight.mul_(40.0)
            mlp.proj_out.bias.mul_(40.0)
        md.iou_prediction_head.proj_out.weight.mul_(20.0)
        for layer in model.memory_attention.layers:
            layer.cross_attn_image.o_proj.weight.mul_(MEM_ATTN_GAIN)
            layer.cross_attn_image.o_proj.bias.mul_(MEM_ATTN_GAIN)
        po = md.pred_obj_score_head.proj_out
        po.weight.mul_(OBJ_SCORE_GAIN)
        po.bias.mul_(OBJ_SCORE_GAIN).add_(OBJ_SCORE_SHIFT)
        for layer in model.memory_encoder.memory_fuser.layers:  # layer scale 1e-6 would hide the fuser
            layer.scale.fill_(1.0)
    return model


# ---------------------------------------------------------------------------------------------
# The four modules, contract of export_sam2_video.py
# ---------------------------------------------------------------------------------------------
class ImageEncoder(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, image):
        out = self.m.get_image_features(image)
        feats, pos = out.fpn_hidden_states, out.fpn_position_encoding  # (HW,B,C), conv_s0/s1 applied
        sizes = self.m.backbone_feature_sizes
        nchw = lambda x, s: x.permute(1, 2, 0).reshape(x.shape[1], x.shape[2], *s)
        top = nchw(feats[-1], sizes[-1])
        embed = nchw(feats[-1] + self.m.no_memory_embedding, sizes[-1])
        return embed, top, nchw(pos[-1], sizes[-1]), nchw(feats[0], sizes[0]), nchw(feats[1], sizes[1])


class MemoryAttention(nn.Module):
    """_build_memory_attention_inputs + _process_object_pointers + memory_attention. memory_t_pos is the
    contract's (official) t_pos: 0 = conditioning frame, k = num_maskmem - (frames back). transformers
    indexes memory_temporal_positional_encoding[frames_back - 1] (cond: [-1]), i.e. the same row
    num_maskmem - 1 - t_pos as sam2's maskmem_tpos_enc."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, current_vision_feat, current_vision_pos_enc, memory_feats, memory_pos_enc,
                memory_t_pos, obj_ptrs, obj_ptr_tpos):
        from transformers.models.sam2_video.modeling_sam2_video import get_1d_sine_pe

        m = self.m
        Cm = m.mem_dim
        B, Cc, H, W = current_vision_feat.shape
        curr = current_vision_feat.flatten(2).permute(2, 0, 1)
        curr_pos = current_vision_pos_enc.flatten(2).permute(2, 0, 1)
        mem = memory_feats.permute(0, 2, 3, 1).reshape(-1, 1, Cm)
        tpos = m.memory_temporal_positional_encoding[m.num_maskmem - 1 - memory_t_pos]  # [n,1,1,Cm]
        mem_pos = (memory_pos_enc.permute(0, 2, 3, 1).reshape(memory_pos_enc.shape[0], -1, 1, Cm)
                   + tpos).reshape(-1, 1, Cm)
        split = Cc // Cm
        if m.config.enable_temporal_pos_encoding_for_object_pointers:
            ptr_pos = m.temporal_positional_encoding_projection_layer(get_1d_sine_pe(obj_ptr_tpos, dim=Cc))
        else:  # SAM2.0 checkpoints: zeros (official add_tpos_enc_to_obj_ptrs=False)
            ptr_pos = torch.zeros_like(obj_ptr_tpos)[:, None].expand(-1, Cm)
        ptrs = obj_ptrs.reshape(-1, 1, split, Cm).permute(0, 2, 1, 3).flatten(0, 1)
        ptr_pos = ptr_pos.repeat_interleave(split, dim=0)[:, None, :]
        memory = torch.cat([mem, ptrs], dim=0)
        memory_pos = torch.cat([mem_pos, ptr_pos], dim=0)
        kw = {"num_spatial_memory_tokens": memory_feats.shape[0]} if hasattr(m, "spatial_perceiver") else {}
        out = m.memory_attention(current_vision_features=curr, memory=memory,
                                 current_vision_position_embeddings=curr_pos,
                                 memory_posision_embeddings=memory_pos,
                                 num_object_pointer_tokens=ptrs.shape[0], **kw)
        return out.squeeze(1).transpose(1, 2).reshape(B, Cc, H, W)


class MemoryEncoder(nn.Module):
    """The high-res mask as _single_frame_forward makes it (bilinear, align_corners=False, to S) +
    _encode_new_memory (no antialiased resize at S)."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, vision_feat, mask_logits, object_score_logits, is_mask_from_pts):
        m, cfg = self.m, self.m.config
        high = F.interpolate(mask_logits, size=(S, S), mode="bilinear", align_corners=False)
        mm = 4 * mask_logits.shape[-1]  # _encode_new_memory: resized to 4 x mask_input_size when that is not S
        if mm != S and not hasattr(m, "spatial_perceiver"):  # SAM3 tracker: 1008 -> 1152 (an upsampling:
            high = F.interpolate(high, size=(mm, mm), mode="bilinear", align_corners=False)  # antialias = same)
        binar = is_mask_from_pts.reshape(1, 1, 1, 1) > 0.5
        mask = torch.where(binar, (high > 0).float(), torch.sigmoid(high))
        mask = mask * cfg.sigmoid_scale_for_mem_enc + cfg.sigmoid_bias_for_mem_enc
        feats, pos = m.memory_encoder(vision_feat, mask)
        if m.occlusion_spatial_embedding_parameter is not None:
            appearing = (object_score_logits > 0).float()
            feats = feats + (1 - appearing[..., None, None]) * m.occlusion_spatial_embedding_parameter[..., None, None]
        if hasattr(m, "spatial_perceiver"):  # EdgeTAM: [1, N1 + N2, Cm] latents -> [1, Cm, N1 + N2, 1]
            feats, pos = m.spatial_perceiver(feats, pos)
            feats, pos = feats.transpose(1, 2)[..., None], pos.transpose(1, 2)[..., None]
        return feats, pos


class MaskDecoder(nn.Module):
    """prompt_encoder + Sam2VideoMaskDecoder.forward with all four masks kept (its multimask_output is a
    Python bool; the selection below is its code for both values) + object_pointer_proj +
    no_object_pointer, as _single_frame_forward."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, image_embed, high_res_feat_0, high_res_feat_1, point_coords, point_labels,
                mask_input, has_mask_input, multimask_output):
        m = self.m
        pe, md = m.prompt_encoder, m.mask_decoder
        sparse = pe._embed_points(point_coords[:, None], point_labels[:, None], pad=True)  # [1,1,N+1,C]
        has = has_mask_input.reshape(1, 1, 1, 1)
        dense = has * pe.mask_embed(mask_input) + (1 - has) * pe.no_mask_embed.weight.reshape(1, -1, 1, 1)
        image_pe = m.get_image_wide_positional_embeddings()
        # Sam2VideoMaskDecoder.forward up to the selection
        B, Cc, H, W = image_embed.shape
        tokens = torch.cat([md.obj_score_token.weight, md.iou_token.weight, md.mask_tokens.weight], 0)
        tokens = torch.cat([tokens.repeat(1, 1, 1, 1), sparse], dim=2)
        pt, img = md.transformer(point_embeddings=tokens, image_embeddings=image_embed + dense,
                                 image_positional_embeddings=image_pe, attention_similarity=None,
                                 target_embedding=None)
        iou_tok, mask_toks = pt[:, :, 1, :], pt[:, :, 2:2 + md.num_mask_tokens, :]
        img = img.transpose(2, 3).view(B, Cc, H, W)
        up = md.upscale_conv1(img) + high_res_feat_1
        up = md.activation(md.upscale_layer_norm(up))
        up = md.activation(md.upscale_conv2(up) + high_res_feat_0)
        hyper = torch.stack([md.output_hypernetworks_mlps[i](mask_toks[:, :, i, :])
                             for i in range(md.num_mask_tokens)], dim=2)
        _, c2, h2, w2 = up.shape
        masks = (hyper @ up.view(B, 1, c2, h2 * w2)).view(B, 1, -1, h2, w2)  # [1,1,4,L,L]
        iou = md.iou_prediction_head(iou_tok)  # [1,1,4]
        score = md.pred_obj_score_head(pt[:, :, 0, :])[:, 0]  # [1,1]
        multi = multimask_output.reshape(1, 1) > 0.5
        best = torch.argmax(iou[:, :, 1:], dim=-1) + 1  # [1,1]
        mask_multi = torch.gather(masks, 2, best.reshape(1, 1, 1, 1, 1).expand(1, 1, 1, h2, w2))
        iou_multi = torch.gather(iou, 2, best.reshape(1, 1, 1))
        mask_single, iou_single = md._dynamic_multimask_via_stability(masks, iou)
        low = torch.where(multi, mask_multi[:, 0], mask_single[:, 0])  # [1,1,L,L]
        iou_out = torch.where(multi, iou_multi[:, 0], iou_single[:, 0])  # [1,1]
        tok_idx = torch.where(multi.reshape(1), best.reshape(1) - 1, torch.zeros_like(best.reshape(1)))
        # _single_frame_forward: token 0 when single, the best multimask token (index into tokens 1..3)
        sam_tokens = torch.where(multi.reshape(1, 1, 1), mask_toks[:, 0, 1:], mask_toks[:, 0, 0:1].expand(1, 3, -1))
        token = torch.gather(sam_tokens, 1, tok_idx.reshape(1, 1, 1).expand(1, 1, Cc))[:, 0]
        obj_ptr = m.object_pointer_proj(token)
        appearing = score > 0
        low = torch.where(appearing[:, :, None, None], low, torch.full_like(low, NO_OBJ_SCORE))
        lam = appearing.float()
        obj_ptr = lam * obj_ptr + (1 - lam) * m.no_object_pointer
        return low, iou_out, obj_ptr, score


def set_dims(model):
    """The module-level sizes from a loaded model (--from-pretrained)."""
    global S, C, CM, NUM_MASKMEM, FEAT, N1, N2
    S, C, CM, NUM_MASKMEM = model.image_size, model.hidden_dim, model.mem_dim, model.num_maskmem
    if EDGETAM:
        N1, N2 = model.config.perceiver_resampler_num_latents, model.config.perceiver_resampler_num_latents_2d
    FEAT = model.backbone_feature_sizes[-1][0]
    assert list(model.backbone_feature_sizes[-1]) == [FEAT, FEAT], model.backbone_feature_sizes
    if model.config.max_cond_frame_num != -1:  # the released SAM3 tracker: 4
        print(f"  note: max_cond_frame_num = {model.config.max_cond_frame_num}: segrt's tracker refuses this "
              "video_metadata.json (max_cond_frames_in_attn other than -1); see the docs")


def wrappers(model):
    return {"image_encoder": ImageEncoder(model).eval(), "memory_attention": MemoryAttention(model).eval(),
            "memory_encoder": MemoryEncoder(model).eval(), "mask_decoder": MaskDecoder(model).eval()}


def mem_hw():
    """A frame's memory as the memory encoder emits it: [1, Cm, *mem_hw()] (EdgeTAM: its N1 + N2 latents)."""
    return (N1 + N2, 1) if EDGETAM else (FEAT, FEAT)


def example_inputs(model, seed=0, n_mem=3, n_ptr=4, n_pts=2):
    g = torch.Generator().manual_seed(seed)
    H = FEAT
    L = 4 * FEAT
    r = lambda *s: torch.randn(*s, generator=g)
    with torch.no_grad():
        embed, vis, pos, h0, h1 = ImageEncoder(model)(r(1, 3, S, S))
    t_pos = torch.tensor([0] + list(range(NUM_MASKMEM - 1, 0, -1)), dtype=torch.int64)[:n_mem]
    return {
        "image_encoder": (r(1, 3, S, S),),
        "memory_attention": (vis, pos, r(n_mem, CM, *mem_hw()), r(n_mem, CM, *mem_hw()), t_pos, r(n_ptr, C),
                             torch.linspace(-0.2, 1.0, n_ptr)),
        "memory_encoder": (vis, r(1, 1, L, L) * 8, torch.tensor([[1.5]]), torch.tensor([1.0])),
        "mask_decoder": (embed, h0, h1, torch.rand(1, n_pts, 2, generator=g) * S,
                         torch.tensor([[1, 0][:n_pts]], dtype=torch.int32), r(1, 1, L, L) * 4,
                         torch.tensor([1.0]), torch.tensor([1.0])),
    }


def export(model, outdir):
    import onnx

    os.makedirs(outdir, exist_ok=True)
    ins = example_inputs(model)
    for name, mod in wrappers(model).items():
        path = os.path.join(outdir, ev.FILES[name])
        with torch.no_grad():
            torch.onnx.export(mod, ins[name], path, dynamo=False, opset_version=17, do_constant_folding=True,
                              input_names=ev.IO[name][0], output_names=ev.IO[name][1],
                              dynamic_axes=ev.DYN.get(name))
        onnx.checker.check_model(path)
        print(f"  exported {ev.FILES[name]} ({os.path.getsize(path)} B)", flush=True)


@torch.no_grad()
def memory_attention_eager(model, vis, vis_pos, mem_feats, mem_pos, t_pos, ptrs, ptr_tpos):
    """The same memory as transformers' _build_memory_attention_inputs/_process_object_pointers build
    it (relative offsets = num_maskmem - t_pos, cond = 0), through model.memory_attention."""
    from transformers.models.sam2_video.modeling_sam2_video import get_1d_sine_pe

    mems, poss = [], []
    for i in range(mem_feats.shape[0]):
        off = 0 if int(t_pos[i]) == 0 else model.num_maskmem - int(t_pos[i])
        mems.append(mem_feats[i:i + 1].flatten(2).permute(2, 0, 1))
        poss.append(mem_pos[i:i + 1].flatten(2).permute(2, 0, 1) + model.memory_temporal_positional_encoding[off - 1])
    n_tok = 0
    if ptrs.shape[0]:
        split = C // CM
        p = ptrs[:, None].reshape(-1, 1, split, CM).permute(0, 2, 1, 3).flatten(0, 1)
        pp = model.temporal_positional_encoding_projection_layer(get_1d_sine_pe(ptr_tpos, dim=C))
        if not model.config.enable_temporal_pos_encoding_for_object_pointers:
            pp = torch.zeros(ptrs.shape[0], CM)
        pp = pp.unsqueeze(1).expand(-1, 1, CM).repeat_interleave(split, dim=0)
        mems.append(p)
        poss.append(pp)
        n_tok = p.shape[0]
    out = model.memory_attention(current_vision_features=vis.flatten(2).permute(2, 0, 1), memory=torch.cat(mems),
                                 current_vision_position_embeddings=vis_pos.flatten(2).permute(2, 0, 1),
                                 memory_posision_embeddings=torch.cat(poss), num_object_pointer_tokens=n_tok,
                                 **({"num_spatial_memory_tokens": mem_feats.shape[0]} if EDGETAM else {}))
    return out.squeeze(1).transpose(1, 2).reshape(vis.shape)


@torch.no_grad()
def parity(model, outdir):
    import onnxruntime as ort

    mods = wrappers(model)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = {k: ort.InferenceSession(os.path.join(outdir, f), so, providers=["CPUExecutionProvider"])
            for k, f in ev.FILES.items()}
    worst = 0.0

    def cmp(name, case, args, originals=None):
        nonlocal worst
        ref = mods[name](*args)
        ref = ref if isinstance(ref, tuple) else (ref,)
        got = sess[name].run(None, {n: a.numpy() for n, a in zip(ev.IO[name][0], args)})
        for i, (o, r, g) in enumerate(zip(ev.IO[name][1], ref, got)):
            assert tuple(r.shape) == g.shape, (name, o, r.shape, g.shape)
            d = float(np.abs(r.numpy() - g).max())
            g_o = g
            if name == "memory_encoder" and i == 0 and not EDGETAM:  # transformers stores maskmem_features in bfloat16, as segrt
                g_o = torch.from_numpy(g).bfloat16().float().numpy()
            do = float(np.abs(originals[i].numpy() - g_o).max()) if originals and originals[i] is not None else None
            worst = max(worst, d, do or 0.0)
            print(f"  {name:16s} {o:20s} vs wrapper {d:.2g}  vs transformers {'-' if do is None else f'{do:.2g}'}  ({case})")

    for seed in (1, 2):
        x = torch.randn(1, 3, S, S, generator=torch.Generator().manual_seed(seed))
        cmp("image_encoder", f"seed {seed}", (x,))
    for n_mem, n_ptr in ((1, 1), (2, 2), (4, 5), (7, 16), (7, 0)):
        a = example_inputs(model, seed=10 + n_mem, n_mem=n_mem, n_ptr=n_ptr)["memory_attention"]
        cmp("memory_attention", f"{n_mem} memory frames + {n_ptr} pointers", a, (memory_attention_eager(model, *a),))
    for flag, score in ((1.0, 2.0), (0.0, 2.0), (0.0, -3.0)):
        a = list(example_inputs(model, seed=20)["memory_encoder"])
        a[2], a[3] = torch.tensor([[score]]), torch.tensor([flag])
        hi = F.interpolate(a[1], size=(S, S), mode="bilinear", align_corners=False)
        f, p = model._encode_new_memory(a[0].flatten(2).permute(2, 0, 1), hi, a[2], bool(flag))
        if EDGETAM:  # [B, N1 + N2, Cm], float32
            orig = (f.transpose(1, 2)[..., None], p.transpose(1, 2)[..., None])
        else:  # (HW, B, Cm), features in bfloat16
            orig = (f.float().permute(1, 2, 0).reshape(1, CM, *mem_hw()), p.permute(1, 2, 0).reshape(1, CM, *mem_hw()))
        cmp("memory_encoder", f"is_mask_from_pts={flag:.0f} score {score:+.0f}, bf16 as stored", tuple(a), orig)
    for n_pts, multi in ((1, 1.0), (2, 0.0), (1, 0.0)):
        a = list(example_inputs(model, seed=30 + n_pts, n_pts=n_pts)["mask_decoder"])
        a[6], a[7] = torch.tensor([0.0]), torch.tensor([multi])
        o = model._single_frame_forward(input_points=a[3][:, None], input_labels=a[4][:, None],
                                        image_embeddings=[a[1], a[2], a[0]], multimask_output=bool(multi))
        orig = (o.pred_masks, None, o.object_pointer, o.object_score_logits[:, 0])
        cmp("mask_decoder", f"{n_pts} points multimask {multi:.0f}", tuple(a), orig)
    return worst


def metadata(model):
    cfg = model.config
    md = model.mask_decoder
    return {
        "format_version": 1, "files": ev.FILES,
        "io": {k: {"inputs": v[0], "outputs": v[1]} for k, v in ev.IO.items()},
        "image_size": S, "backbone_stride": S // FEAT, "feat_size": [FEAT, FEAT], "low_res_size": 4 * FEAT,
        "hidden_dim": C, "mem_dim": CM, "obj_ptr_tokens_per_ptr": C // CM, "num_maskmem": NUM_MASKMEM,
        "memory_attention": {"d_model": C, "num_layers": cfg.memory_attention_num_layers,
                             "pos_enc_at_input": True, "rope_theta": float(cfg.rope_parameters["rope_theta"])},
        "sigmoid_scale_for_mem_enc": cfg.sigmoid_scale_for_mem_enc,
        "sigmoid_bias_for_mem_enc": cfg.sigmoid_bias_for_mem_enc,
        "binarize_mask_from_pts_for_mem_enc": True,  # _encode_new_memory: is_mask_from_pts and not training
        "use_mask_input_as_output_without_sam": True,
        "max_cond_frames_in_attn": cfg.max_cond_frame_num,
        "directly_add_no_mem_embed": True,
        "memory_temporal_stride_for_eval": 1,  # _gather_memory_frame_outputs: stride 1 only
        "non_overlap_masks_for_mem_enc": False,
        "use_obj_ptrs_in_encoder": True,
        "max_obj_ptrs_in_encoder": cfg.max_object_pointers_in_encoder,
        "add_tpos_enc_to_obj_ptrs": bool(cfg.enable_temporal_pos_encoding_for_object_pointers),
        "proj_tpos_enc_in_obj_ptrs": True, "use_signed_tpos_enc_to_obj_ptrs": True,
        "only_obj_ptrs_in_the_past_for_eval": True,
        "pred_obj_scores": True, "fixed_no_obj_ptr": True, "soft_no_obj_ptr": False,
        "no_obj_embed_spatial": bool(cfg.enable_occlusion_spatial_embedding),
        "multimask_output_in_sam": cfg.multimask_output_in_sam,
        "multimask_output_for_tracking": cfg.multimask_output_for_tracking,
        "multimask_min_pt_num": cfg.multimask_min_pt_num, "multimask_max_pt_num": cfg.multimask_max_pt_num,
        "use_multimask_token_for_obj_ptr": True,
        "dynamic_multimask_via_stability": bool(md.dynamic_multimask_via_stability),
        "dynamic_multimask_stability_delta": float(md.dynamic_multimask_stability_delta),
        "dynamic_multimask_stability_thresh": float(md.dynamic_multimask_stability_thresh),
        "iou_prediction_use_sigmoid": True, "no_obj_score": NO_OBJ_SCORE, "mask_input_clamp": 32.0,
        "maskmem_features_storage_dtype": "float32" if EDGETAM else "bfloat16",  # EdgeTAM: _encode_new_memory keeps float32
        "predictor": {"fill_hole_area": 0, "non_overlap_masks": False, "clear_non_cond_mem_around_input": False,
                      "add_all_frames_to_correct_as_cond": False},
        "preprocessing": {"resize": "PIL Image.resize((S,S)) of the RGB frame (bicubic)",
                          "scale": "uint8 / 255.0 in float64, then float32", "mean": MEAN, "std": STD},
        "source": f"transformers {type(model).__name__} (export_transformers_video.py)",
    }


def load_frames():
    names = sorted(f for f in os.listdir(FRAMES) if f.endswith(".png"))
    px, size = [], None
    for n in names:
        im = Image.open(os.path.join(FRAMES, n)).convert("RGB")
        size = im.size
        a = np.asarray(im.resize((S, S), Image.BICUBIC), dtype=np.float64) / 255.0
        a = (a.astype(np.float32) - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
        px.append(torch.from_numpy(a).permute(2, 0, 1))
    return names, torch.stack(px), size


# Scenarios: clicks (frame, x, y, label) in frame pixels, object 1; both_ways = propagate forward then in
# reverse from the clicked frame (segrt track --both-ways; transformers propagate_in_video_iterator twice).
SCENARIOS = {
    "click": dict(clicks=[(0, 60.0, 100.0, 1)], both_ways=False),
    "two_clicks": dict(clicks=[(0, 60.0, 100.0, 1), (0, 250.0, 50.0, 0)], both_ways=False),
    "middle_both_ways": dict(clicks=[(6, 60.0, 100.0, 1)], both_ways=True),
}


def segrt_args(sc):
    out = []
    for f, x, y, lab in sc["clicks"]:
        out.append(f"--point-on {f}:1:{x:g},{y:g},{lab}")
    return " ".join(out) + (" --both-ways" if sc["both_ways"] else "")


@torch.no_grad()
def hf_reference(model, outdir, name, sc):
    """transformers' own video inference on the same preprocessed frames (the processor's resize is
    not used so that both sides see identical pixels): the clicks as
    Sam2VideoProcessor.process_new_points_or_boxes_for_video_frame stores them (model pixels), then
    model(inference_session, frame_idx) on the clicked frame and propagate_in_video_iterator (and again
    with reverse=True); masks as the official predictor makes them (bilinear, align_corners=False, to
    the frame size, > 0)."""
    from transformers.models.edgetam_video.modeling_edgetam_video import EdgeTamVideoInferenceSession
    from transformers.models.sam2_video.modeling_sam2_video import Sam2VideoInferenceSession

    names, px, (W, H) = load_frames()
    from transformers.models.sam3_tracker_video.modeling_sam3_tracker_video import Sam3TrackerVideoInferenceSession

    sess = (EdgeTamVideoInferenceSession if EDGETAM else Sam3TrackerVideoInferenceSession if SAM3
            else Sam2VideoInferenceSession)(video=px, video_height=H, video_width=W, dtype=torch.float32)
    obj_idx = sess.obj_id_to_idx(1)
    frame = sc["clicks"][0][0]
    pts = torch.tensor([[[[x * S / W, y * S / H] for _, x, y, _ in sc["clicks"]]]], dtype=torch.float32)
    labels = torch.tensor([[[lab for *_, lab in sc["clicks"]]]], dtype=torch.int32)
    sess.add_point_inputs(obj_idx, frame, {"point_coords": pts, "point_labels": labels})
    sess.obj_with_new_inputs = [1]
    model(inference_session=sess, frame_idx=frame)
    ref = os.path.join(outdir, "hf_reference", name)
    os.makedirs(ref, exist_ok=True)
    res = {}
    runs = [False, True] if sc["both_ways"] else [False]
    for reverse in runs:
        for out in model.propagate_in_video_iterator(sess, start_frame_idx=frame, reverse=reverse):
            lo = out.pred_masks.reshape(1, 1, 4 * FEAT, 4 * FEAT).float()
            m = (F.interpolate(lo, size=(H, W), mode="bilinear", align_corners=False)[0, 0] > 0).numpy()
            stem = os.path.splitext(names[out.frame_idx])[0]
            Image.fromarray((m * 255).astype(np.uint8)).save(os.path.join(ref, f"{stem}_obj1.png"))
            res[out.frame_idx] = (int(m.sum()), round(float(out.object_score_logits), 3))
    print(f"  transformers, {name}: {len(res)} frames; (mask px of {H * W}, object score) per frame: "
          f"{[res[k] for k in sorted(res)]}")


def compare(outdir, name, segrt_dir):
    ref = os.path.join(outdir, "hf_reference", name)
    ious = []
    for f in sorted(os.listdir(ref)):
        a = np.asarray(Image.open(os.path.join(ref, f))) > 127
        b = np.asarray(Image.open(os.path.join(segrt_dir, f))) > 127
        u = np.logical_or(a, b).sum()
        ious.append(1.0 if u == 0 else float(np.logical_and(a, b).sum()) / float(u))
        print(f"  {f}: IoU {ious[-1]:.5f}  (transformers {a.sum()} px, segrt {b.sum()} px)")
    print(f"  min IoU {min(ious):.5f}, mean {np.mean(ious):.5f}")
    return min(ious)


def main():
    warnings.filterwarnings("ignore")
    torch.set_num_threads(2)
    args = sys.argv[1:sys.argv.index("--compare")] if "--compare" in sys.argv else sys.argv[1:]
    args = [a for a in args if a not in ("--edgetam", "--sam3-tracker")]
    outdir = args[0] if args else os.path.join(ROOT, "out", "transformers_video")
    if "--compare" in sys.argv:  # --compare SCENARIO SEGRT_OUT
        i = sys.argv.index("--compare")
        ok = compare(outdir, sys.argv[i + 1], sys.argv[i + 2])
        sys.exit(0 if ok >= 0.995 else 1)
    import transformers

    if "--from-pretrained" in sys.argv:  # a transformers checkpoint (hub id or folder): facebook/sam2.1-hiera-tiny
        from transformers import EdgeTamVideoModel, Sam2VideoModel, Sam3TrackerVideoModel

        src = sys.argv[sys.argv.index("--from-pretrained") + 1]
        args = [a for a in args if a not in ("--from-pretrained", src)]
        outdir = args[0] if args else os.path.join(ROOT, "out", "transformers_video")
        cls = EdgeTamVideoModel if EDGETAM else Sam3TrackerVideoModel if SAM3 else Sam2VideoModel
        model = cls.from_pretrained(src, attn_implementation="eager").eval()
    else:
        model = build_model()
        if "--save-pretrained" in sys.argv:  # the tiny model as a transformers checkpoint folder
            model.save_pretrained(sys.argv[sys.argv.index("--save-pretrained") + 1])
            args = args[:1] if args and not args[0].startswith("--") else []
            outdir = args[0] if args else os.path.join(ROOT, "out", "transformers_video")
    set_dims(model)
    print(f"transformers {transformers.__version__}: {type(model).__name__} S={S} feat={FEAT} C={C} mem_dim={CM} num_maskmem={NUM_MASKMEM}")
    export(model, outdir)
    with open(os.path.join(outdir, "video_metadata.json"), "w") as f:
        json.dump(metadata(model), f, indent=1)
        f.write("\n")
    print("onnxruntime vs wrapper / vs transformers' own code path (max abs diff):")
    worst = parity(model, outdir)
    print(f"  worst {worst:.3g}")
    frames = os.path.relpath(FRAMES, ROOT)
    print("then, per scenario:")
    for name, sc in SCENARIOS.items():
        hf_reference(model, outdir, name, sc)
        print(f"    segrt track --models {outdir} --frames {frames} {segrt_args(sc)} --out {outdir}/segrt/{name}\n"
              f"    {sys.executable} {os.path.relpath(__file__, ROOT)} {outdir} --compare {name} {outdir}/segrt/{name}")


if __name__ == "__main__":
    main()
