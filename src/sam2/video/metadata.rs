//! `video_metadata.json`: the model constants the tracker needs, and the settings it implements.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};

/// `video_metadata.json`: the model constants the tracker needs (other keys are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct VideoMetadata {
    pub format_version: u32,
    pub files: VideoFiles,
    pub io: VideoIo,
    pub image_size: usize,
    pub low_res_size: usize,
    pub hidden_dim: usize,
    pub num_maskmem: usize,
    pub max_cond_frames_in_attn: i64,
    pub memory_temporal_stride_for_eval: i64,
    pub max_obj_ptrs_in_encoder: usize,
    pub add_tpos_enc_to_obj_ptrs: bool,
    pub proj_tpos_enc_in_obj_ptrs: bool,
    pub use_signed_tpos_enc_to_obj_ptrs: bool,
    pub only_obj_ptrs_in_the_past_for_eval: bool,
    pub directly_add_no_mem_embed: bool,
    pub multimask_output_in_sam: bool,
    pub multimask_output_for_tracking: bool,
    pub multimask_min_pt_num: usize,
    pub multimask_max_pt_num: usize,
    pub no_obj_score: f32,
    pub mask_input_clamp: f32,
    pub maskmem_features_storage_dtype: String,
    /// A mask prompt is taken as the frame's output without the decoder (sam2's configurations all
    /// do; the mask prompt refuses models that do not).
    #[serde(default)]
    pub use_mask_input_as_output_without_sam: bool,
    /// The convolution that turns a mask prompt into the decoder's mask input (absent from the
    /// metadata of older exports: the mask prompt refuses them).
    #[serde(default)]
    pub mask_downsample: Option<MaskDownsample>,
    pub predictor: PredictorSettings,
    pub preprocessing: Preprocessing,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct VideoFiles {
    pub image_encoder: String,
    pub memory_attention: String,
    pub memory_encoder: String,
    pub mask_decoder: String,
}

/// Input and output names of one module, in order.
#[derive(Debug, Clone, Deserialize)]
pub struct ModuleIo {
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct VideoIo {
    pub image_encoder: ModuleIo,
    pub memory_attention: ModuleIo,
    pub memory_encoder: ModuleIo,
    pub mask_decoder: ModuleIo,
}

/// `SAM2Base.mask_downsample`: a one-channel convolution, `kernel` x `kernel` weights (row-major)
/// and a bias, applied with stride `stride`.
#[derive(Debug, Clone, Deserialize)]
pub struct MaskDownsample {
    pub kernel: usize,
    pub stride: usize,
    pub weight: Vec<f32>,
    pub bias: f32,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PredictorSettings {
    pub non_overlap_masks: bool,
    pub clear_non_cond_mem_around_input: bool,
    pub add_all_frames_to_correct_as_cond: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Preprocessing {
    pub mean: [f32; 3],
    pub std: [f32; 3],
}

impl VideoMetadata {
    pub fn parse(json: &str) -> Result<Self> {
        let m: VideoMetadata =
            serde_json::from_str(json).map_err(|e| Error::new(ErrorKind::ModelInvalid, format!("video_metadata.json: {e}")))?;
        m.check()?;
        Ok(m)
    }

    /// The settings this tracker implements (as video_ort_tracker.py asserts them).
    fn check(&self) -> Result<()> {
        let unsupported = |what: &str| Err(Error::unsupported_model(format!("video_metadata.json: {what} is not supported")));
        if self.format_version != 1 {
            return unsupported(&format!("format_version {}", self.format_version));
        }
        if self.max_cond_frames_in_attn != -1 {
            return unsupported("max_cond_frames_in_attn other than -1");
        }
        if self.memory_temporal_stride_for_eval != 1 {
            return unsupported("memory_temporal_stride_for_eval other than 1");
        }
        if !(self.add_tpos_enc_to_obj_ptrs && self.proj_tpos_enc_in_obj_ptrs) {
            return unsupported("object pointers without projected temporal encoding");
        }
        if !self.directly_add_no_mem_embed {
            return unsupported("directly_add_no_mem_embed = false");
        }
        if self.predictor.clear_non_cond_mem_around_input || self.predictor.non_overlap_masks {
            return unsupported("clear_non_cond_mem_around_input / non_overlap_masks");
        }
        if !matches!(self.maskmem_features_storage_dtype.as_str(), "bfloat16" | "float32") {
            return unsupported(&format!("maskmem_features_storage_dtype '{}'", self.maskmem_features_storage_dtype));
        }
        if self.image_size == 0
            || self.low_res_size == 0
            || self.hidden_dim == 0
            || self.num_maskmem == 0
            || self.max_obj_ptrs_in_encoder == 0
        {
            return Err(Error::new(ErrorKind::ModelInvalid, "video_metadata.json: a size is 0"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_with_unsupported_settings_is_refused() {
        let json = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/models/sam2/video/video_metadata.json")).unwrap();
        assert!(VideoMetadata::parse(&json).is_ok());
        let changed = json.replace("\"memory_temporal_stride_for_eval\": 1", "\"memory_temporal_stride_for_eval\": 2");
        assert_ne!(changed, json);
        assert_eq!(VideoMetadata::parse(&changed).unwrap_err().kind, ErrorKind::ModelUnsupported);
        assert_eq!(VideoMetadata::parse("{}").unwrap_err().kind, ErrorKind::ModelInvalid);
    }
}
