#!/usr/bin/env python3
"""Export the SAM2 *video* (memory) modules as ONNX + prove each one against PyTorch.

Run from the repository root (same environment as export_sam2.py):

    .venv-torch/bin/python models/sam2/export_sam2_video.py                 # tiny -> models/sam2/video/
    .venv-torch/bin/python models/sam2/export_sam2_video.py --real-size models/sam2/real-size/video

The official video predictor (sam2/sam2_video_predictor.py SAM2VideoPredictor, on top of
sam2/modeling/sam2_base.py) runs, per frame and object, `track_step`:
  1. image encoder  (`forward_image` + `_prepare_backbone_features`)         -> video_image_encoder.onnx
  2. memory attention (`_prepare_memory_conditioned_features`, non-init frames) -> video_memory_attention.onnx
  3. prompt encoder + mask decoder + object pointer (`_forward_sam_heads`)      -> video_mask_decoder.onnx
  4. memory encoder (`_encode_new_memory`)                                      -> video_memory_encoder.onnx
The bookkeeping (which memories / object pointers to feed, bfloat16 storage of memories) stays in the
runtime; `video_ort_tracker.py` is its executable specification.

The model is export_sam2.py's tiny random-weight model (its TINY_OVERRIDES, seed, weight
conditioning; see condition_video_weights), built with `build_sam2_video_predictor` (so the video post-processing overrides apply:
dynamic multimask via stability, binarize_mask_from_pts_for_mem_enc) and two VIDEO overrides:
  * num_maskmem=7 (the real value; export_sam2.py used 2 only to instantiate), so the memory bank rules
    (1 conditioning + 6 previous frames) are exercised;
  * memory dim 8 (< d_model 16) as in the real model (64 < 256), so object pointers are split into
    C/mem_dim = 2 memory tokens each (the real model: 4).

RoPE: sam2's RoPEAttention uses complex tensors (torch.polar, view_as_complex), which ONNX cannot
express. `apply_rotary_real` is the same rotation with real cos/sin; `rope_check` proves it equal to
`sam2.modeling.position_encoding.apply_rotary_enc` (incl. rope_k_repeat and num_k_exclude_rope), and
the whole rewritten memory attention is checked against the original `model.memory_attention`.
"""
import argparse
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
sys.path.insert(0, HERE)
import export_sam2 as ex  # noqa: E402  (tiny config, seeds, conditioning, ORT helpers)

OUT_TINY = os.path.join(HERE, "video")
VIDEO_MEM_DIM = 8
VIDEO_NUM_MASKMEM = 7
NO_OBJ_SCORE = -1024.0


def video_overrides():
    """export_sam2.TINY_OVERRIDES with the two video changes (memory dim, num_maskmem)."""
    repl = {
        "++model.memory_attention.layer.cross_attention.kv_in_dim": VIDEO_MEM_DIM,
        "++model.memory_encoder.out_dim": VIDEO_MEM_DIM,
        "++model.memory_encoder.position_encoding.num_pos_feats": VIDEO_MEM_DIM,
        "++model.num_maskmem": VIDEO_NUM_MASKMEM,
    }
    out = []
    for o in ex.TINY_OVERRIDES:
        k = o.split("=")[0]
        out.append(f"{k}={repl[k]}" if k in repl else o)
    return out


def build_video_model(real_size=False, checkpoint=None, config=ex.CONFIG):
    """The official SAM2VideoPredictor (tiny random weights unless real_size/checkpoint), seed 0,
    export_sam2's weight conditioning for the tiny model. fill_hole_area is set to 0: the hole
    filling needs sam2's CUDA extension (absent here: it would only warn and do nothing)."""
    from sam2.build_sam import build_sam2_video_predictor

    tiny = not (real_size or checkpoint)
    image_model = ex.build_model() if tiny else None  # seed 0 + condition_random_weights inside
    torch.manual_seed(ex.SEED)
    model = build_sam2_video_predictor(config, ckpt_path=checkpoint, device="cpu",
                                       hydra_overrides_extra=video_overrides() if tiny else [])
    model.eval()
    model.fill_hole_area = 0
    if tiny:
        condition_video_weights(model, image_model)
    return model


MEM_ATTN_GAIN = 3.0
OBJ_SCORE_GAIN = 1000.0
OBJ_SCORE_BIAS = 182.14


@torch.no_grad()
def condition_video_weights(model, image_model):
    """Tiny model only. (1) The image encoder, prompt encoder and mask decoder are copied from
    export_sam2.build_model() (the committed image-mode fixtures' weights, already conditioned by
    condition_random_weights): the video overrides change the random stream (maskmem_tpos_enc and the
    memory encoder are drawn before the SAM heads), and that stream gave ~100 %-of-frame masks on the
    reference sequence, while the image-mode weights give ~45 %. (2) Memory attention: with random
    weights the memory hardly moved the tracked masks (dropping every object pointer changed the
    reference logits by 1.5e-2 and at most 0.03 % of a frame's pixels), so a tracker with wrong memory rules would still
    have matched the official masks. The last Linear (out_proj) of each memory cross-attention is
    multiplied by MEM_ATTN_GAIN: the memory now decides the tracked frames (their masks shrink from
    ~33 000 to ~21 500 px of 76 800). (3) Object-score head: random init gave a constant +0.01..0.05
    (object always present), so the no-object path (NO_OBJ_SCORE masks, no_obj_ptr,
    no_obj_embed_spatial) would never run in the reference. Its last Linear's weight is multiplied by
    OBJ_SCORE_GAIN and its bias set to OBJ_SCORE_BIAS, picked once so that the tracked frames' scores
    straddle 0 on video_reference.py's clip while the clicked frames stay present: of the biases tried
    (181.94..182.24 with MEM_ATTN_GAIN 3) 182.14 gives 18 present / 10 absent object-frames and the
    largest smallest |score| (0.005; onnxruntime's score error is ~3e-5). With random weights which
    frames come out absent has nothing to do with the picture (the hidden frame included)."""
    own = model.state_dict()
    for k, v in image_model.state_dict().items():
        if (k.startswith("image_encoder.") or k.startswith("sam_")) and k in own and own[k].shape == v.shape:
            own[k].copy_(v)
    for layer in model.memory_attention.layers:
        layer.cross_attn_image.out_proj.weight.mul_(MEM_ATTN_GAIN)
        layer.cross_attn_image.out_proj.bias.mul_(MEM_ATTN_GAIN)
    head = model.sam_mask_decoder.pred_obj_score_head
    last = head.layers[-1] if hasattr(head, "layers") else head
    last.weight.mul_(OBJ_SCORE_GAIN)
    last.bias.fill_(OBJ_SCORE_BIAS)


# ---------------------------------------------------------------------------------------------
# Rotary encoding with real numbers
# ---------------------------------------------------------------------------------------------
def rope_tables(attn, hw):
    """cos/sin [HW, D/2] of a RoPEAttention: the real and imaginary parts of its complex freqs_cis
    (compute_axial_cis = torch.polar(1, angle) -> exactly cos(angle), sin(angle))."""
    side = int(round(hw ** 0.5))
    fc = attn.compute_cis(end_x=side, end_y=side)
    return fc.real.contiguous().float(), fc.imag.contiguous().float()


def rotate_pairs(x, cos, sin):
    """x [..., L, D] with (x[2i], x[2i+1]) = one complex number; cos/sin [L, D/2].
    (a + ib)(c + is) = (ac - bs) + i(as + bc): what view_as_complex * freqs_cis computes."""
    x2 = x.unflatten(-1, (-1, 2))
    a, b = x2[..., 0], x2[..., 1]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def apply_rotary_real(q, k, cos, sin, repeat_freqs_k=False):
    """Real-valued twin of sam2.modeling.position_encoding.apply_rotary_enc.
    q [B,h,L,D]; k [B,h,Lk,D] with Lk = r*L when repeat_freqs_k (the same L positions repeated for each
    of the r memory frames, as freqs_cis.repeat does)."""
    qo = rotate_pairs(q.float(), cos, sin).type_as(q)
    if k.shape[-2] == 0:
        return qo, k
    if repeat_freqs_k:
        B, h, _, D = k.shape
        L = cos.shape[0]
        ko = rotate_pairs(k.float().reshape(B, h, -1, L, D), cos, sin).reshape(B, h, -1, D)
    else:
        ko = rotate_pairs(k.float(), cos, sin)
    return qo, ko.type_as(k)


def rope_attention_real(attn, q, k, v, cos, sin, num_k_exclude_rope=None):
    """RoPEAttention.forward (sam2/modeling/sam/transformer.py) with apply_rotary_real. The
    num_k_exclude_rope LAST keys (object pointers) are not rotated. num_k_exclude_rope may be a traced
    size, so the split stays dynamic in the ONNX graph."""
    q = attn._separate_heads(attn.q_proj(q), attn.num_heads)
    k = attn._separate_heads(attn.k_proj(k), attn.num_heads)
    v = attn._separate_heads(attn.v_proj(v), attn.num_heads)
    if num_k_exclude_rope is None:
        q, k = apply_rotary_real(q, k, cos, sin, repeat_freqs_k=attn.rope_k_repeat)
    else:
        n_rope = k.shape[-2] - num_k_exclude_rope
        q, k_rope = apply_rotary_real(q, k[:, :, :n_rope], cos, sin, repeat_freqs_k=attn.rope_k_repeat)
        k = torch.cat([k_rope, k[:, :, n_rope:]], dim=2)
    out = F.scaled_dot_product_attention(q, k, v)
    return attn.out_proj(attn._recombine_heads(out))


@torch.no_grad()
def rope_check(model, seed=0):
    """apply_rotary_enc (complex, original) vs apply_rotary_real on random q/k: plain (self-attention),
    keys repeated for r memory frames (rope_k_repeat), and the RoPEAttention module itself with the
    last keys excluded (num_k_exclude_rope). Returns rows (case, max abs diff)."""
    from sam2.modeling.position_encoding import apply_rotary_enc

    g = torch.Generator().manual_seed(seed)
    layer = model.memory_attention.layers[0]
    sa, ca = layer.self_attn, layer.cross_attn_image
    H = W = model.image_size // model.backbone_stride
    L = H * W
    cos, sin = rope_tables(sa, L)
    D = sa.internal_dim // sa.num_heads
    rows = []
    fc = sa.compute_cis(end_x=W, end_y=H)
    for r in (1, 2, 7):
        q = torch.randn(1, sa.num_heads, L, D, generator=g) * 3
        k = torch.randn(1, sa.num_heads, r * L, D, generator=g) * 3
        q0, k0 = apply_rotary_enc(q, k, freqs_cis=fc, repeat_freqs_k=r > 1)
        q1, k1 = apply_rotary_real(q, k, cos, sin, repeat_freqs_k=r > 1)
        rows.append((f"apply_rotary_enc q [1,{sa.num_heads},{L},{D}], k {r}x{L} (repeat_freqs_k={r > 1})",
                     max(float((q0 - q1).abs().max()), float((k0 - k1).abs().max()))))
    # whole attention modules, original forward vs real forward
    C = model.hidden_dim
    x = torch.randn(1, L, C, generator=g)
    rows.append(("RoPEAttention self-attention (original forward vs real)",
                 float((sa(x, x, x) - rope_attention_real(sa, x, x, x, cos, sin)).abs().max())))
    for n_mem, n_ptr in ((1, 0), (1, 2), (3, 8), (7, 32)):
        mem = torch.randn(1, n_mem * L + n_ptr, model.mem_dim, generator=g)
        ref = ca(x, mem.clone(), mem.clone(), num_k_exclude_rope=n_ptr)
        got = rope_attention_real(ca, x, mem, mem, cos, sin, num_k_exclude_rope=n_ptr)
        rows.append((f"RoPEAttention cross-attention, {n_mem} memory frames + {n_ptr} pointer tokens "
                     f"(rope_k_repeat, num_k_exclude_rope={n_ptr})", float((ref - got).abs().max())))
    return rows


# ---------------------------------------------------------------------------------------------
# Export wrappers
# ---------------------------------------------------------------------------------------------
class VideoImageEncoder(nn.Module):
    """forward_image (conv_s0/conv_s1 applied there) + _prepare_backbone_features, as
    SAM2VideoPredictor._get_image_feature. Outputs, all NCHW:
      image_embed      vision_feats[-1] + no_mem_embed: the decoder input on an INIT conditioning frame
                       (_prepare_memory_conditioned_features, directly_add_no_mem_embed)
      vision_feat      vision_feats[-1] raw: memory attention and memory encoder input
      vision_pos_enc   vision_pos_embeds[-1] (sine position encoding of the top level)
      high_res_feat_0/1  vision_feats[0], [1] (stride 4, 8)"""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, image):
        m = self.model
        backbone_out = m.forward_image(image)
        _, feats, pos, sizes = m._prepare_backbone_features(backbone_out)
        nchw = lambda x, s: x.permute(1, 2, 0).reshape(x.shape[1], x.shape[2], *s)
        top = nchw(feats[-1], sizes[-1])
        embed = nchw(feats[-1] + m.no_mem_embed, sizes[-1])
        return embed, top, nchw(pos[-1], sizes[-1]), nchw(feats[0], sizes[0]), nchw(feats[1], sizes[1])


class VideoMemoryAttention(nn.Module):
    """_prepare_memory_conditioned_features after the memory has been gathered, i.e. the part that is
    arithmetic on tensors (the selection of frames is the runtime's):
      memory tokens      = memory_feats [n,Cm,H,W] -> n*HW tokens (frame-major, as torch.cat of
                           flatten(2).permute(2,0,1))
      memory pos         = memory_pos_enc + maskmem_tpos_enc[num_maskmem - t_pos - 1]
      object pointers    = obj_ptrs [P,C] split into C/Cm tokens of Cm each (mem_dim < C)
      pointer pos        = obj_ptr_tpos_proj(get_1d_sine_pe(obj_ptr_tpos, dim=C)), repeated per split
                           token; obj_ptr_tpos = (signed frame distance) / t_diff_max, computed by the
                           runtime (t_diff_max = min(num_frames, max_obj_ptrs_in_encoder) - 1)
      then memory_attention(curr, curr_pos, memory, memory_pos, num_obj_ptr_tokens) with real RoPE."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.ma = model.memory_attention
        H = model.image_size // model.backbone_stride
        self.HW = H * H
        cos, sin = rope_tables(self.ma.layers[0].self_attn, self.HW)
        self.register_buffer("rope_cos", cos)
        self.register_buffer("rope_sin", sin)

    def forward(self, current_vision_feat, current_vision_pos_enc, memory_feats, memory_pos_enc,
                memory_t_pos, obj_ptrs, obj_ptr_tpos):
        from sam2.modeling.sam2_utils import get_1d_sine_pe

        m = self.model
        C, Cm = m.hidden_dim, m.mem_dim
        B, _, H, W = current_vision_feat.shape
        curr = current_vision_feat.flatten(2).permute(2, 0, 1)  # [HW,1,C]
        curr_pos = current_vision_pos_enc.flatten(2).permute(2, 0, 1)
        mem = memory_feats.permute(0, 2, 3, 1).reshape(-1, 1, Cm)  # [n*HW,1,Cm]
        tpos = m.maskmem_tpos_enc[m.num_maskmem - 1 - memory_t_pos]  # [n,1,1,Cm]
        mem_pos = (memory_pos_enc.permute(0, 2, 3, 1).reshape(memory_pos_enc.shape[0], -1, 1, Cm)
                   + tpos).reshape(-1, 1, Cm)
        split = C // Cm
        ptr_pos = get_1d_sine_pe(obj_ptr_tpos, dim=C if m.proj_tpos_enc_in_obj_ptrs else Cm)
        ptr_pos = m.obj_ptr_tpos_proj(ptr_pos)  # [P,Cm]
        ptrs = obj_ptrs.reshape(-1, 1, split, Cm).permute(0, 2, 1, 3).flatten(0, 1)  # [P*split,1,Cm]
        ptr_pos = ptr_pos[:, None, None, :].expand(-1, split, 1, Cm).reshape(-1, 1, Cm)
        memory = torch.cat([mem, ptrs], dim=0)
        memory_pos = torch.cat([mem_pos, ptr_pos], dim=0)
        n_ptr_tokens = ptrs.shape[0]
        # MemoryAttention.forward (batch_first) + MemoryAttentionLayer.forward
        out = curr
        if self.ma.pos_enc_at_input:
            out = out + 0.1 * curr_pos
        out, curr_pos, memory, memory_pos = (t.transpose(0, 1) for t in (out, curr_pos, memory, memory_pos))
        for layer in self.ma.layers:
            t2 = layer.norm1(out)
            qk = t2 + curr_pos if layer.pos_enc_at_attn else t2
            out = out + rope_attention_real(layer.self_attn, qk, qk, t2, self.rope_cos, self.rope_sin)
            t2 = layer.norm2(out)
            out = out + rope_attention_real(
                layer.cross_attn_image,
                t2 + curr_pos if layer.pos_enc_at_cross_attn_queries else t2,
                memory + memory_pos if layer.pos_enc_at_cross_attn_keys else memory,
                memory, self.rope_cos, self.rope_sin, num_k_exclude_rope=n_ptr_tokens)
            t2 = layer.norm3(out)
            out = out + layer.linear2(layer.activation(layer.linear1(t2)))
        out = self.ma.norm(out).transpose(0, 1)  # [HW,1,C]
        return out.permute(1, 2, 0).reshape(B, C, H, W)


def memory_attention_original(model, vis, vis_pos, mem_feats, mem_pos, t_pos, ptrs, ptr_tpos):
    """The same computation with sam2's own code (model.memory_attention with complex RoPE), the
    memory assembled as _prepare_memory_conditioned_features does it."""
    from sam2.modeling.sam2_utils import get_1d_sine_pe

    C, Cm = model.hidden_dim, model.mem_dim
    B, _, H, W = vis.shape
    to_cat, to_cat_pos = [], []
    for i in range(mem_feats.shape[0]):
        to_cat.append(mem_feats[i:i + 1].flatten(2).permute(2, 0, 1))
        e = mem_pos[i:i + 1].flatten(2).permute(2, 0, 1)
        to_cat_pos.append(e + model.maskmem_tpos_enc[model.num_maskmem - int(t_pos[i]) - 1])
    P = ptrs.shape[0]
    if P:
        obj_pos = model.obj_ptr_tpos_proj(get_1d_sine_pe(ptr_tpos, dim=C))
        obj_pos = obj_pos.unsqueeze(1).expand(-1, B, Cm)
        p = ptrs[:, None].reshape(-1, B, C // Cm, Cm).permute(0, 2, 1, 3).flatten(0, 1)
        obj_pos = obj_pos.repeat_interleave(C // Cm, dim=0)
        to_cat.append(p)
        to_cat_pos.append(obj_pos)
    out = model.memory_attention(curr=[vis.flatten(2).permute(2, 0, 1)],
                                 curr_pos=[vis_pos.flatten(2).permute(2, 0, 1)],
                                 memory=torch.cat(to_cat, 0), memory_pos=torch.cat(to_cat_pos, 0),
                                 num_obj_ptr_tokens=P * (C // Cm))
    return out.permute(1, 2, 0).view(B, C, H, W)


class VideoMemoryEncoder(nn.Module):
    """_encode_new_memory with the high-res mask made in the graph the way the predictor makes it:
    high_res = bilinear(align_corners=False) upsample of the chosen low-res logits to S x S (track_step
    / propagate_in_video_preflight), then binarised (is_mask_from_pts = 1 and
    binarize_mask_from_pts_for_mem_enc) or sigmoid, * sigmoid_scale_for_mem_enc + sigmoid_bias_for_mem_enc,
    memory_encoder(pix_feat, mask, skip_mask_sigmoid=True), + no_obj_embed_spatial where
    object_score_logits <= 0. Output maskmem_features [1,Cm,H,W] (the runtime stores it in
    bfloat16, as the predictor does), maskmem_pos_enc [1,Cm,H,W]."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, vision_feat, mask_logits, object_score_logits, is_mask_from_pts):
        m = self.model
        S = m.image_size
        high = F.interpolate(mask_logits, size=(S, S), mode="bilinear", align_corners=False)
        if m.binarize_mask_from_pts_for_mem_enc:
            binar = is_mask_from_pts.reshape(1, 1, 1, 1) > 0.5
            mask = torch.where(binar, (high > 0).float(), torch.sigmoid(high))
        else:  # the flag input stays in the graph's signature but is unused
            mask = torch.sigmoid(high) + 0 * is_mask_from_pts.reshape(1, 1, 1, 1)
        if m.sigmoid_scale_for_mem_enc != 1.0:
            mask = mask * m.sigmoid_scale_for_mem_enc
        if m.sigmoid_bias_for_mem_enc != 0.0:
            mask = mask + m.sigmoid_bias_for_mem_enc
        out = m.memory_encoder(vision_feat, mask, skip_mask_sigmoid=True)
        feats = out["vision_features"]
        if m.no_obj_embed_spatial is not None:
            appearing = (object_score_logits > 0).float()
            feats = feats + (1 - appearing[..., None, None]) * m.no_obj_embed_spatial[..., None, None]
        return feats, out["vision_pos_enc"][-1]


class VideoMaskDecoder(nn.Module):
    """_forward_sam_heads (prompt encoder + SAM mask decoder + object pointer), both output modes in
    one graph, chosen by multimask_output (the runtime decides it as SAM2Base._use_multimask):
      multimask_output = 1: best of tokens 1..3 by IoU; object pointer from that token
                            (use_multimask_token_for_obj_ptr)
      multimask_output = 0: token 0, or the best multimask token when token 0's stability score is
                            < dynamic_multimask_stability_thresh (MaskDecoder._dynamic_multimask_via_stability);
                            object pointer from token 0
    Points in model pixels (x * S / W, y * S / H); the (0,0)/-1 padding point is added in the graph
    (the predictor always pads: boxes=None). A frame without prompts: point_coords [[0,0]], label -1.
    mask_input [1,1,L,L] logits (the predictor's prev_sam_mask_logits, clamped +-32) blended by
    has_mask_input. Outputs: low_res_masks [1,1,L,L] (NO_OBJ_SCORE=-1024 where object_score_logits <= 0),
    iou_predictions [1,1], obj_ptr [1,C] (no_obj_ptr mixed in as fixed_no_obj_ptr), object_score_logits [1,1]."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.core = ex.DecoderCore(model)
        self.md = model.sam_mask_decoder

    def forward(self, image_embed, high_res_feat_0, high_res_feat_1, point_coords, point_labels,
                mask_input, has_mask_input, multimask_output):
        m, md, pe = self.model, self.md, self.core.pe
        sparse = self.core.embed_points(point_coords, point_labels.to(torch.float32))
        dense = self.core.embed_masks(mask_input, has_mask_input.reshape(-1, 1, 1, 1))
        masks, iou, tokens, score = md.predict_masks(
            image_embeddings=image_embed, image_pe=pe.get_dense_pe(), sparse_prompt_embeddings=sparse,
            dense_prompt_embeddings=dense, repeat_image=False,
            high_res_features=[high_res_feat_0, high_res_feat_1])
        multi = multimask_output.reshape(1, 1) > 0.5
        best = torch.argmax(iou[:, 1:], dim=-1) + 1  # [1]
        mask_multi = torch.gather(masks, 1, best.reshape(1, 1, 1, 1).expand(1, 1, *masks.shape[2:]))
        iou_multi = torch.gather(iou, 1, best.reshape(1, 1))
        if md.dynamic_multimask_via_stability:
            mask_single, iou_single = md._dynamic_multimask_via_stability(masks, iou)
        else:
            mask_single, iou_single = masks[:, 0:1], iou[:, 0:1]
        low = torch.where(multi[..., None, None], mask_multi, mask_single)
        iou_out = torch.where(multi, iou_multi, iou_single)
        if m.use_multimask_token_for_obj_ptr:
            tok_idx = torch.where(multi.reshape(1), best, torch.zeros_like(best))
        else:
            tok_idx = torch.zeros_like(best)
        token = torch.gather(tokens, 1, tok_idx.reshape(1, 1, 1).expand(1, 1, tokens.shape[2]))[:, 0]
        obj_ptr = m.obj_ptr_proj(token)
        if m.pred_obj_scores:
            appearing = score > 0
            low = torch.where(appearing[:, None, None], low, torch.full_like(low, NO_OBJ_SCORE))
            lam = appearing.float()
            if m.fixed_no_obj_ptr:
                obj_ptr = lam * obj_ptr
            obj_ptr = obj_ptr + (1 - lam) * m.no_obj_ptr
        return low, iou_out, obj_ptr, score


FILES = {
    "image_encoder": "video_image_encoder.onnx",
    "memory_attention": "video_memory_attention.onnx",
    "memory_encoder": "video_memory_encoder.onnx",
    "mask_decoder": "video_mask_decoder.onnx",
}
IO = {
    "image_encoder": (["image"], ["image_embed", "vision_feat", "vision_pos_enc", "high_res_feat_0",
                                  "high_res_feat_1"]),
    "memory_attention": (["current_vision_feat", "current_vision_pos_enc", "memory_feats", "memory_pos_enc",
                          "memory_t_pos", "obj_ptrs", "obj_ptr_tpos"], ["pix_feat_with_mem"]),
    "memory_encoder": (["vision_feat", "mask_logits", "object_score_logits", "is_mask_from_pts"],
                       ["maskmem_features", "maskmem_pos_enc"]),
    "mask_decoder": (["image_embed", "high_res_feat_0", "high_res_feat_1", "point_coords", "point_labels",
                      "mask_input", "has_mask_input", "multimask_output"],
                     ["low_res_masks", "iou_predictions", "obj_ptr", "object_score_logits"]),
}


def example_inputs(model, seed=0, n_mem=3, n_ptr=4, n_pts=2):
    g = torch.Generator().manual_seed(seed)
    S, C, Cm = model.image_size, model.hidden_dim, model.mem_dim
    H = S // model.backbone_stride
    L = S // 4
    r = lambda *s: torch.randn(*s, generator=g)
    with torch.no_grad():
        enc = VideoImageEncoder(model)(r(1, 3, S, S))
    embed, vis, pos, h0, h1 = enc
    return {
        "image_encoder": (r(1, 3, S, S),),
        "memory_attention": (vis, pos, r(n_mem, Cm, H, H), r(n_mem, Cm, H, H),
                             torch.tensor([0] + list(range(model.num_maskmem - 1, model.num_maskmem - n_mem, -1)),
                                          dtype=torch.int64)[:n_mem],
                             r(n_ptr, C), torch.linspace(-0.2, 1.0, n_ptr)),
        "memory_encoder": (vis, r(1, 1, L, L) * 8, torch.tensor([[1.5]]), torch.tensor([1.0])),
        "mask_decoder": (embed, h0, h1, torch.rand(1, n_pts, 2, generator=g) * S,
                         torch.tensor([[1, 0][:n_pts]], dtype=torch.int32), r(1, 1, L, L) * 4,
                         torch.tensor([1.0]), torch.tensor([1.0])),
    }


DYN = {
    "memory_attention": {"memory_feats": {0: "num_mem_frames"}, "memory_pos_enc": {0: "num_mem_frames"},
                         "memory_t_pos": {0: "num_mem_frames"}, "obj_ptrs": {0: "num_obj_ptrs"},
                         "obj_ptr_tpos": {0: "num_obj_ptrs"}},
    "mask_decoder": {"point_coords": {1: "num_points"}, "point_labels": {1: "num_points"}},
}


def wrappers(model):
    return {"image_encoder": VideoImageEncoder(model).eval(),
            "memory_attention": VideoMemoryAttention(model).eval(),
            "memory_encoder": VideoMemoryEncoder(model).eval(),
            "mask_decoder": VideoMaskDecoder(model).eval()}


def export_modules(model, outdir):
    import onnx

    os.makedirs(outdir, exist_ok=True)
    ins = example_inputs(model)
    for name, mod in wrappers(model).items():
        path = os.path.join(outdir, FILES[name])
        t0 = time.time()
        with torch.no_grad():
            torch.onnx.export(mod, ins[name], path, dynamo=False, opset_version=ex.OPSET,
                              do_constant_folding=True, input_names=IO[name][0], output_names=IO[name][1],
                              dynamic_axes=DYN.get(name))
        onnx.checker.check_model(path)
        print(f"  exported {FILES[name]} ({os.path.getsize(path)} B) in {time.time() - t0:.1f}s", flush=True)


def ort_feed(name, args):
    out = {}
    for n, a in zip(IO[name][0], args):
        out[n] = a.numpy()
    return out


@torch.no_grad()
def parity(model, outdir):
    """onnxruntime vs the PyTorch wrapper and, where one exists, vs sam2's own code path. Returns rows
    (module, case, output, max abs diff vs wrapper, max abs diff vs original or None)."""
    rows = []
    mods = wrappers(model)
    sess = {k: ex.ort_session(os.path.join(outdir, f), threads=2) for k, f in FILES.items()}

    def cmp(name, case, args, originals=None):
        ref = mods[name](*args)
        ref = ref if isinstance(ref, tuple) else (ref,)
        got = sess[name].run(None, ort_feed(name, args))
        for i, (o, r, g_) in enumerate(zip(IO[name][1], ref, got)):
            assert tuple(r.shape) == g_.shape, (name, o, r.shape, g_.shape)
            d = float(np.abs(r.numpy() - g_).max()) if g_.size else 0.0
            do = None
            if originals is not None and originals[i] is not None:
                do = float(np.abs(originals[i].numpy() - g_).max()) if g_.size else 0.0
            rows.append((name, case, o, d, do))

    S = model.image_size
    # image encoder vs forward_image + _prepare_backbone_features (original)
    for seed in (1, 2):
        x = torch.randn(1, 3, S, S, generator=torch.Generator().manual_seed(seed))
        bo = model.forward_image(x)
        _, feats, pos, sizes = model._prepare_backbone_features(bo)
        nchw = lambda t, s: t.permute(1, 2, 0).reshape(1, -1, *s)
        orig = (nchw(feats[-1] + model.no_mem_embed, sizes[-1]), nchw(feats[-1], sizes[-1]),
                nchw(pos[-1], sizes[-1]), nchw(feats[0], sizes[0]), nchw(feats[1], sizes[1]))
        cmp("image_encoder", f"random image seed {seed}", (x,), orig)
    # memory attention at several memory lengths
    for n_mem, n_ptr in ((1, 1), (2, 2), (4, 5), (7, 16), (7, 0)):
        a = example_inputs(model, seed=10 + n_mem, n_mem=n_mem, n_ptr=n_ptr)["memory_attention"]
        orig = memory_attention_original(model, *a)
        cmp("memory_attention", f"{n_mem} memory frames ({n_mem * a[0].shape[2] * a[0].shape[3]} tokens) + "
            f"{n_ptr} pointers ({n_ptr * (model.hidden_dim // model.mem_dim)} tokens)", a, (orig,))
    # memory encoder vs _encode_new_memory on the same high-res mask
    for flag, score in ((1.0, 2.0), (0.0, 2.0), (0.0, -3.0), (1.0, -3.0)):
        a = list(example_inputs(model, seed=20)["memory_encoder"])
        a[2], a[3] = torch.tensor([[score]]), torch.tensor([flag])
        high = F.interpolate(a[1], size=(S, S), mode="bilinear", align_corners=False)
        f, p = model._encode_new_memory([a[0].flatten(2).permute(2, 0, 1)], [tuple(a[0].shape[2:])], high,
                                        a[2], is_mask_from_pts=bool(flag))
        cmp("memory_encoder", f"is_mask_from_pts={flag:.0f}, object score {score:+.0f}", tuple(a), (f, p[-1]))
    # mask decoder vs _forward_sam_heads
    for n_pts, multi, has_mask, emb_shift in ((1, 1.0, 0.0, 0), (2, 0.0, 0.0, 0), (2, 0.0, 1.0, 0), (1, 1.0, 1.0, 0),
                                              (0, 1.0, 0.0, 0), (1, 1.0, 0.0, -5), (2, 0.0, 0.0, -5)):
        a = list(example_inputs(model, seed=30 + n_pts, n_pts=max(n_pts, 1))["mask_decoder"])
        a[0] = a[0] + emb_shift  # -5: an embedding for which the object score comes out negative
        if n_pts == 0:  # frame without prompts: the predictor's zeros / -1 point
            a[3], a[4] = torch.zeros(1, 1, 2), -torch.ones(1, 1, dtype=torch.int32)
        a[6], a[7] = torch.tensor([has_mask]), torch.tensor([multi])
        pin = None if n_pts == 0 else {"point_coords": a[3], "point_labels": a[4]}
        outs = model._forward_sam_heads(a[0], point_inputs=pin, mask_inputs=a[5] if has_mask else None,
                                        high_res_features=[a[1], a[2]], multimask_output=bool(multi))
        _, _, ious, low, _, ptr, score = outs
        best_iou = ious.max(-1, keepdim=True)[0] if multi else ious
        cmp("mask_decoder", f"{n_pts} points, multimask {multi:.0f}, mask input {has_mask:.0f}, "
            f"embed {emb_shift:+d}, object score {float(score):+.2f}", tuple(a),
            (low, best_iou, ptr, score))
    return rows


def metadata(model):
    m = model
    md = m.sam_mask_decoder
    H = m.image_size // m.backbone_stride
    return {
        "format_version": 1,
        "files": FILES,
        "io": {k: {"inputs": v[0], "outputs": v[1]} for k, v in IO.items()},
        "image_size": m.image_size,
        "backbone_stride": m.backbone_stride,
        "feat_size": [H, H],
        "low_res_size": m.image_size // 4,
        "hidden_dim": m.hidden_dim,
        "mem_dim": m.mem_dim,
        "obj_ptr_tokens_per_ptr": m.hidden_dim // m.mem_dim,
        "num_maskmem": m.num_maskmem,
        "memory_attention": {"d_model": m.memory_attention.d_model, "num_layers": m.memory_attention.num_layers,
                             "pos_enc_at_input": m.memory_attention.pos_enc_at_input,
                             "rope_theta": 10000.0},
        "sigmoid_scale_for_mem_enc": m.sigmoid_scale_for_mem_enc,
        "sigmoid_bias_for_mem_enc": m.sigmoid_bias_for_mem_enc,
        "binarize_mask_from_pts_for_mem_enc": bool(m.binarize_mask_from_pts_for_mem_enc),
        "use_mask_input_as_output_without_sam": bool(m.use_mask_input_as_output_without_sam),
        "max_cond_frames_in_attn": m.max_cond_frames_in_attn,
        "directly_add_no_mem_embed": bool(m.directly_add_no_mem_embed),
        "memory_temporal_stride_for_eval": m.memory_temporal_stride_for_eval,
        "non_overlap_masks_for_mem_enc": bool(m.non_overlap_masks_for_mem_enc),
        "use_obj_ptrs_in_encoder": bool(m.use_obj_ptrs_in_encoder),
        "max_obj_ptrs_in_encoder": m.max_obj_ptrs_in_encoder,
        "add_tpos_enc_to_obj_ptrs": bool(m.add_tpos_enc_to_obj_ptrs),
        "proj_tpos_enc_in_obj_ptrs": bool(m.proj_tpos_enc_in_obj_ptrs),
        "use_signed_tpos_enc_to_obj_ptrs": bool(m.use_signed_tpos_enc_to_obj_ptrs),
        "only_obj_ptrs_in_the_past_for_eval": bool(m.only_obj_ptrs_in_the_past_for_eval),
        "pred_obj_scores": bool(m.pred_obj_scores),
        "fixed_no_obj_ptr": bool(m.fixed_no_obj_ptr),
        "soft_no_obj_ptr": bool(m.soft_no_obj_ptr),
        "no_obj_embed_spatial": m.no_obj_embed_spatial is not None,
        "multimask_output_in_sam": bool(m.multimask_output_in_sam),
        "multimask_output_for_tracking": bool(m.multimask_output_for_tracking),
        "multimask_min_pt_num": m.multimask_min_pt_num,
        "multimask_max_pt_num": m.multimask_max_pt_num,
        "use_multimask_token_for_obj_ptr": bool(m.use_multimask_token_for_obj_ptr),
        "dynamic_multimask_via_stability": bool(md.dynamic_multimask_via_stability),
        "dynamic_multimask_stability_delta": float(md.dynamic_multimask_stability_delta),
        "dynamic_multimask_stability_thresh": float(md.dynamic_multimask_stability_thresh),
        "iou_prediction_use_sigmoid": bool(m.iou_prediction_use_sigmoid),
        "no_obj_score": NO_OBJ_SCORE,
        "mask_input_clamp": 32.0,
        "maskmem_features_storage_dtype": "bfloat16",
        # SAM2Base.mask_downsample (use_mask_input_as_output_without_sam): the stride-4 convolution
        # that turns a mask prompt (add_new_mask, at S x S) into the decoder's mask input when the
        # object pointer of a mask-prompted frame is computed (_use_mask_as_output). 1 -> 1 channel.
        "mask_downsample": {"kernel": m.mask_downsample.kernel_size[0], "stride": m.mask_downsample.stride[0],
                            "weight": [float(v) for v in m.mask_downsample.weight.reshape(-1)],
                            "bias": float(m.mask_downsample.bias.reshape(-1)[0])},
        "predictor": {"fill_hole_area": m.fill_hole_area, "non_overlap_masks": bool(m.non_overlap_masks),
                      "clear_non_cond_mem_around_input": bool(m.clear_non_cond_mem_around_input),
                      "add_all_frames_to_correct_as_cond": bool(m.add_all_frames_to_correct_as_cond)},
        "preprocessing": {"resize": "PIL Image.resize((S,S)) of the RGB frame (bicubic), as "
                                    "sam2.utils.misc._load_img_as_tensor",
                          "scale": "uint8 / 255.0 in float64, then float32", "mean": ex.IMAGENET_MEAN,
                          "std": ex.IMAGENET_STD},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real-size", metavar="OUTDIR",
                    help="real hiera-tiny dims (1024, random weights) into OUTDIR (git-ignored) instead of "
                         "the tiny fixtures in models/sam2/video/")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import logging
    logging.getLogger().setLevel(logging.ERROR)
    torch.set_num_threads(args.threads)
    np.random.seed(ex.SEED)
    real = bool(args.real_size)
    outdir = args.real_size or OUT_TINY
    model = build_video_model(real_size=real)
    n = lambda mod: sum(p.numel() for p in mod.parameters())
    print(f"model: image_size {model.image_size}, hidden {model.hidden_dim}, mem_dim {model.mem_dim}, "
          f"num_maskmem {model.num_maskmem}; params memory_attention {n(model.memory_attention)}, "
          f"memory_encoder {n(model.memory_encoder)}")
    print("rotary rewrite (real cos/sin) vs sam2's complex apply_rotary_enc / RoPEAttention:")
    for case, d in rope_check(model):
        print(f"  {d:.3g}  {case}")
        assert d < 1e-5, case
    export_modules(model, outdir)
    with open(os.path.join(outdir, "video_metadata.json"), "w") as f:
        json.dump(metadata(model), f, indent=1)
        f.write("\n")
    print("onnxruntime vs torch wrapper / vs sam2's original code path (max abs diff):")
    tol = 1e-4 if not real else 1e-3
    for name, case, o, d, do in parity(model, outdir):
        print(f"  {name:16s} {o:21s} wrapper {d:.3g}  original {'-' if do is None else f'{do:.3g}'}  ({case})")
        assert d < tol and (do is None or do < tol), (name, case, o, d, do)
    print("I/O:")
    for k, fn in FILES.items():
        ins, outs = ex.io_table(os.path.join(outdir, fn))
        print(f"  {fn} ({os.path.getsize(os.path.join(outdir, fn))} B)")
        for i in ins:
            print(f"    in  {i}")
        for o in outs:
            print(f"    out {o}")


if __name__ == "__main__":
    main()
