//! Recognising a SAM2 (or SAM1) encoder/decoder pair from its input/output names, dtypes and
//! ranks. Public exports disagree on names and types (see shared SAM-INTEROP notes); nothing here
//! relies on position alone.

use ort::session::Session;
use ort::value::{TensorElementType, ValueType};
use serde::Serialize;

use crate::engine::io::{describe, inputs_of, outputs_of, TensorInfo};
use crate::error::{Error, Result};

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
    pub mask_input: String,
    /// (height, width) of `mask_input`.
    pub mask_input_size: (usize, usize),
    pub has_mask_input: String,
    pub has_mask_input_shape: Vec<i64>,
    /// `orig_im_size` input and its element type, when the decoder upsamples in the graph.
    pub orig_im_size: Option<(String, NumberType)>,
    /// The mask output (low-res or full-size logits) and the IoU output.
    pub masks_output: String,
    pub iou_output: String,
    /// A separate low-res logits output, when the main mask output is full-size.
    pub low_res_output: Option<String>,
}

fn tensor(ty: &ValueType) -> Option<(TensorElementType, Vec<i64>)> {
    match ty {
        ValueType::Tensor { ty, shape, .. } => Some((*ty, shape.iter().copied().collect())),
        _ => None,
    }
}

/// Feature role from a name: anything with "high_res" or "image_features_N" is a high-res feature
/// (ordered by its number), anything else with "embed" is the embedding.
fn feature_role(name: &str, all: &[&str]) -> Option<Feature> {
    let lower = name.to_ascii_lowercase();
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
    pub fn detect(encoder: &Session, decoder: &Session) -> Result<Self> {
        let (ein, eout, din, dout) = (inputs_of(encoder), outputs_of(encoder), inputs_of(decoder), outputs_of(decoder));
        let unsupported = |why: String| {
            Error::unsupported_model(format!(
                "{why}. Expected a SAM2 image encoder (one image input [1,3,S,S] float32 or uint8; outputs image_embed and \
                 high-res features) and a prompt decoder (point_coords, point_labels, mask_input, has_mask_input[, orig_im_size]; \
                 outputs masks/low_res_masks and iou_predictions). Found encoder inputs: {}; encoder outputs: {}; \
                 decoder inputs: {}; decoder outputs: {}",
                describe(&ein),
                describe(&eout),
                describe(&din),
                describe(&dout)
            ))
        };

        // Encoder: one rank-4 image input.
        if encoder.inputs().len() != 1 {
            return Err(unsupported(format!("the encoder has {} inputs, not 1", encoder.inputs().len())));
        }
        let (ety, eshape) = tensor(encoder.inputs()[0].dtype()).ok_or_else(|| unsupported("the encoder input is not a tensor".into()))?;
        if eshape.len() != 4 || eshape[1] != 3 {
            return Err(unsupported("the encoder input is not [1,3,S,S]".into()));
        }
        let encoder_input = match ety {
            TensorElementType::Float32 => EncoderInput::NormalizedF32,
            TensorElementType::Uint8 => EncoderInput::RawU8,
            other => return Err(unsupported(format!("encoder input type {other} is neither float32 nor uint8"))),
        };
        let image_size = if eshape[2] > 0 { eshape[2] as usize } else { 1024 };

        let names = |v: &[TensorInfo]| v.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        let eout_names = names(&eout);
        let eout_refs: Vec<&str> = eout_names.iter().map(String::as_str).collect();
        let encoder_outputs: Vec<(Feature, String)> =
            eout_names.iter().filter_map(|n| feature_role(n, &eout_refs).map(|r| (r, n.clone()))).collect();

        // Decoder inputs by name.
        let din_names = names(&din);
        let din_refs: Vec<&str> = din_names.iter().map(String::as_str).collect();
        let find = |pred: &dyn Fn(&str) -> bool| din.iter().find(|t| pred(&t.name.to_ascii_lowercase()));
        let coords = find(&|n| n == "point_coords" || n.contains("coords"))
            .ok_or_else(|| unsupported("the decoder has no point_coords input".into()))?;
        let labels = find(&|n| n == "point_labels" || n.contains("labels"))
            .ok_or_else(|| unsupported("the decoder has no point_labels input".into()))?;
        let has_mask = find(&|n| n.contains("has_mask")).ok_or_else(|| unsupported("the decoder has no has_mask_input input".into()))?;
        let mask_in = find(&|n| n.contains("mask_input") && !n.contains("has_mask"))
            .ok_or_else(|| unsupported("the decoder has no mask_input input".into()))?;
        let orig = din.iter().find(|t| t.name.to_ascii_lowercase().contains("orig_im_size"));
        let decoder_features: Vec<(Feature, String)> = din_names
            .iter()
            .filter(|n| ![&coords.name, &labels.name, &has_mask.name, &mask_in.name].contains(n) && !n.contains("orig_im_size"))
            .filter_map(|n| feature_role(n, &din_refs).map(|r| (r, n.clone())))
            .collect();
        if !decoder_features.iter().any(|(r, _)| *r == Feature::Embed) {
            return Err(unsupported("the decoder has no image embedding input".into()));
        }
        for (role, name) in &decoder_features {
            if !encoder_outputs.iter().any(|(r, _)| r == role) {
                return Err(unsupported(format!("the decoder input '{name}' ({role:?}) has no matching encoder output")));
            }
        }
        let number_type = |t: &TensorInfo| match t.dtype.as_str() {
            "f32" => Ok(NumberType::F32),
            "i64" => Ok(NumberType::I64),
            "i32" => Ok(NumberType::I32),
            other => Err(unsupported(format!("{} has type {other}, expected f32, i64 or i32", t.name))),
        };
        let label_type = number_type(labels)?;
        let mask_input_size = match mask_in.shape.as_slice() {
            [_, _, h, w] if *h > 0 && *w > 0 => (*h as usize, *w as usize),
            _ => (image_size / 4, image_size / 4),
        };

        // Decoder outputs: IoU (rank 2) and masks (rank 4, the one not called low_res when both exist).
        let iou = dout
            .iter()
            .find(|t| t.name.to_ascii_lowercase().contains("iou"))
            .ok_or_else(|| unsupported("the decoder has no iou_predictions output".into()))?;
        let mask_outputs: Vec<&TensorInfo> = dout.iter().filter(|t| t.name != iou.name && t.shape.len() == 4 && t.dtype == "f32").collect();
        let low_res = mask_outputs.iter().find(|t| t.name.to_ascii_lowercase().contains("low_res"));
        let main = mask_outputs
            .iter()
            .find(|t| !t.name.to_ascii_lowercase().contains("low_res"))
            .or(low_res)
            .ok_or_else(|| unsupported("the decoder has no float mask output of rank 4".into()))?;
        let low_res_output = low_res.filter(|l| l.name != main.name).map(|l| l.name.clone());

        let family = if decoder_features.iter().all(|(r, _)| *r == Feature::Embed) && orig.is_some_and(|o| o.dtype == "f32") {
            Family::Sam1
        } else {
            Family::Sam2
        };
        let convention = match (family, encoder_input, label_type, orig.is_some()) {
            (Family::Sam1, ..) => "sam1",
            (_, EncoderInput::RawU8, ..) => "uint8-encoder",
            (_, _, NumberType::I64, _) => "sam2-onnx",
            (_, _, NumberType::I32, _) => "onnxruntime-tools",
            (_, _, NumberType::F32, true) => "samexporter+orig_im_size",
            (_, _, NumberType::F32, false) => "samexporter",
        };
        let convention = if eout_names.iter().any(|n| n == "high_res_features1") { "osam".to_string() } else { convention.to_string() };
        Ok(Sam2Spec {
            convention,
            family,
            encoder_input_name: encoder.inputs()[0].name().to_string(),
            encoder_input,
            image_size,
            encoder_outputs,
            decoder_features,
            point_coords: coords.name.clone(),
            point_labels: labels.name.clone(),
            label_type,
            mask_input: mask_in.name.clone(),
            mask_input_size,
            has_mask_input: has_mask.name.clone(),
            has_mask_input_shape: has_mask.shape.iter().map(|d| if *d < 0 { 1 } else { *d }).collect(),
            orig_im_size: orig.map(|o| Ok::<_, Error>((o.name.clone(), number_type(o)?))).transpose()?,
            masks_output: main.name.clone(),
            iou_output: iou.name.clone(),
            low_res_output,
        })
    }
}
