//! The decoder's side of a pair: its prompt inputs, the features it takes, its mask and IoU outputs,
//! in SAM's own layout or in Hugging Face transformers'.

use crate::engine::io::TensorInfo;

use super::{feature_role, DecoderLayout, Feature, NumberType};

/// What the decoder declares: prompt inputs, the features it takes, its mask and IoU outputs.
pub(super) struct DecoderSide {
    pub(super) features: Vec<(Feature, String)>,
    pub(super) point_coords: String,
    pub(super) point_labels: String,
    pub(super) label_type: NumberType,
    pub(super) mask_input: String,
    pub(super) mask_input_size: (usize, usize),
    pub(super) has_mask_input: String,
    pub(super) has_mask_input_shape: Vec<i64>,
    pub(super) prompt_batch: bool,
    pub(super) mask_input_batch: bool,
    pub(super) has_mask_input_batch: bool,
    pub(super) orig_im_size: Option<(String, NumberType)>,
    pub(super) masks_output: String,
    pub(super) iou_output: String,
    pub(super) low_res_output: Option<String>,
    pub(super) layout: DecoderLayout,
    /// Side of the image embedding's grid, where the decoder declares it (transformers' layout).
    pub(super) embed_side: Option<usize>,
}

fn number_type(t: &TensorInfo) -> std::result::Result<NumberType, String> {
    match t.dtype.as_str() {
        "f32" => Ok(NumberType::F32),
        "i64" => Ok(NumberType::I64),
        "i32" => Ok(NumberType::I32),
        other => Err(format!("{} has type {other}, expected f32, i64 or i32", t.name)),
    }
}

impl DecoderSide {
    pub(super) fn read(inputs: &[TensorInfo], outputs: &[TensorInfo], image_size: usize) -> std::result::Result<Self, String> {
        // Inputs by name (exact, then substring): exports disagree on names, never on these words.
        let find = |pred: &dyn Fn(&str) -> bool, what: &str| {
            inputs.iter().find(|t| pred(&t.name.to_ascii_lowercase())).ok_or_else(|| format!("the decoder has no {what} input"))
        };
        let coords = find(&|n| n == "point_coords" || n.contains("coords"), "point_coords")?;
        let labels = find(&|n| n == "point_labels" || n.contains("labels"), "point_labels")?;
        let has_mask = find(&|n| n.contains("has_mask"), "has_mask_input")?;
        let mask_in = find(&|n| n.contains("mask_input") && !n.contains("has_mask"), "mask_input")?;
        let orig = inputs.iter().find(|t| t.name.to_ascii_lowercase().contains("orig_im_size"));
        let names: Vec<&str> = inputs.iter().map(|t| t.name.as_str()).collect();
        let prompt_inputs = [&coords.name, &labels.name, &has_mask.name, &mask_in.name];
        let features: Vec<(Feature, String)> = names
            .iter()
            .filter(|n| !prompt_inputs.iter().any(|p| p == *n) && !n.contains("orig_im_size"))
            .filter_map(|n| feature_role(n, &names).map(|r| (r, n.to_string())))
            .collect();
        if !features.iter().any(|(r, _)| *r == Feature::Embed) {
            return Err("the decoder has no image embedding input".into());
        }
        let mask_input_size = match mask_in.shape.as_slice() {
            [_, _, h, w] if *h > 0 && *w > 0 => (*h as usize, *w as usize),
            _ => (image_size / 4, image_size / 4),
        };

        // Outputs: IoU (rank 2) and masks (rank 4, the one not called low_res when both exist).
        let iou =
            outputs.iter().find(|t| t.name.to_ascii_lowercase().contains("iou")).ok_or("the decoder has no iou_predictions output")?;
        let mask_outputs: Vec<&TensorInfo> =
            outputs.iter().filter(|t| t.name != iou.name && t.shape.len() == 4 && t.dtype == "f32").collect();
        let low_res = mask_outputs.iter().find(|t| t.name.to_ascii_lowercase().contains("low_res"));
        let main = mask_outputs
            .iter()
            .find(|t| !t.name.to_ascii_lowercase().contains("low_res"))
            .or(low_res)
            .ok_or("the decoder has no float mask output of rank 4")?;
        Ok(DecoderSide {
            features,
            point_coords: coords.name.clone(),
            point_labels: labels.name.clone(),
            label_type: number_type(labels)?,
            mask_input: mask_in.name.clone(),
            mask_input_size,
            has_mask_input: has_mask.name.clone(),
            has_mask_input_shape: has_mask.shape.iter().map(|d| if *d < 0 { 1 } else { *d }).collect(),
            prompt_batch: coords.shape.first().is_some_and(|d| *d < 0),
            mask_input_batch: coords.shape.first().is_some_and(|d| *d < 0) && mask_in.shape.first().is_some_and(|d| *d < 0),
            has_mask_input_batch: coords.shape.first().is_some_and(|d| *d < 0) && has_mask.shape.first().is_some_and(|d| *d < 0),
            orig_im_size: orig.map(|o| Ok::<_, String>((o.name.clone(), number_type(o)?))).transpose()?,
            masks_output: main.name.clone(),
            iou_output: iou.name.clone(),
            low_res_output: low_res.filter(|l| l.name != main.name).map(|l| l.name.clone()),
            layout: DecoderLayout::PointsAndLabels,
            embed_side: None,
        })
    }

    /// Hugging Face transformers' layout (onnx-community `prompt_encoder_mask_decoder.onnx`, also
    /// EdgeTAM's and the SAM3 tracker's): `input_points` [B,obj,N,2] f32, `input_labels` [B,obj,N]
    /// int64, `input_boxes` [B,obj,4] f32, the encoder's `image_embeddings.0/1/2`; outputs
    /// `iou_scores` [B,obj,3], `pred_masks` [B,obj,3,h,w], `object_score_logits`. No mask input.
    /// The low-res size comes from `pred_masks` (else 4x the embedding's grid, else S/4), never assumed.
    pub(super) fn read_transformers(inputs: &[TensorInfo], outputs: &[TensorInfo], image_size: usize) -> std::result::Result<Self, String> {
        let by_name = |list: &[TensorInfo], name: &str| list.iter().find(|t| t.name == name).cloned();
        let (points, labels, boxes) = (
            by_name(inputs, "input_points").ok_or("no input_points")?,
            by_name(inputs, "input_labels").ok_or("no input_labels")?,
            by_name(inputs, "input_boxes").ok_or("no input_boxes")?,
        );
        if points.shape.len() != 4 || labels.shape.len() != 3 || boxes.shape.len() != 3 {
            return Err(format!(
                "input_points {:?}, input_labels {:?}, input_boxes {:?} are not of rank 4, 3, 3 ([B,obj,N,2], [B,obj,N], [B,obj,4])",
                points.shape, labels.shape, boxes.shape
            ));
        }
        let names: Vec<&str> = inputs.iter().map(|t| t.name.as_str()).collect();
        let features: Vec<(Feature, String)> = names
            .iter()
            .filter(|n| n.starts_with("image_embeddings"))
            .filter_map(|n| feature_role(n, &names).map(|r| (r, n.to_string())))
            .collect();
        if !features.iter().any(|(r, _)| *r == Feature::Embed) {
            return Err("the decoder has no image_embeddings.N input".into());
        }
        let iou = by_name(outputs, "iou_scores").ok_or("the decoder has no iou_scores output")?;
        let masks = by_name(outputs, "pred_masks").ok_or("the decoder has no pred_masks output")?;
        if masks.shape.len() != 5 {
            return Err(format!("pred_masks has shape {:?}, expected [B,obj,3,h,w]", masks.shape));
        }
        let embed_grid = features.iter().find(|(r, _)| *r == Feature::Embed).and_then(|(_, n)| by_name(inputs, n)).and_then(|t| {
            match t.shape.as_slice() {
                [_, _, h, w] if *h > 0 && *w > 0 => Some((*h as usize, *w as usize)),
                _ => None,
            }
        });
        let mask_input_size = match &masks.shape[3..] {
            [h, w] if *h > 0 && *w > 0 => (*h as usize, *w as usize),
            _ => embed_grid.map(|(h, w)| (4 * h, 4 * w)).unwrap_or((image_size / 4, image_size / 4)),
        };
        Ok(DecoderSide {
            features,
            point_coords: points.name.clone(),
            point_labels: labels.name.clone(),
            label_type: number_type(&labels)?,
            mask_input: String::new(),
            mask_input_size,
            has_mask_input: String::new(),
            has_mask_input_shape: Vec::new(),
            prompt_batch: points.shape[1] < 0,
            mask_input_batch: false,
            has_mask_input_batch: false,
            orig_im_size: None,
            masks_output: masks.name.clone(),
            iou_output: iou.name.clone(),
            low_res_output: None,
            layout: DecoderLayout::Transformers { input_boxes: boxes.name.clone() },
            embed_side: embed_grid.filter(|(h, w)| h == w).map(|(h, _)| h),
        })
    }
}
