//! Time spent per module, for per-frame figures.

use std::time::Instant;

use super::model::Module;

/// Milliseconds spent per module (and in pre/post-processing) since a tracker was created: callers
/// take differences around a call for per-frame figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModuleTimes {
    /// Frame pre-processing (colour conversion, resize, normalisation).
    pub preprocess_ms: f64,
    pub image_encoder_ms: f64,
    pub memory_attention_ms: f64,
    pub mask_decoder_ms: f64,
    pub memory_encoder_ms: f64,
    /// Masks at the frame's size (upsampling, thresholding).
    pub postprocess_ms: f64,
}

impl ModuleTimes {
    /// `self - earlier`, field by field.
    pub fn since(&self, earlier: &ModuleTimes) -> ModuleTimes {
        ModuleTimes {
            preprocess_ms: self.preprocess_ms - earlier.preprocess_ms,
            image_encoder_ms: self.image_encoder_ms - earlier.image_encoder_ms,
            memory_attention_ms: self.memory_attention_ms - earlier.memory_attention_ms,
            mask_decoder_ms: self.mask_decoder_ms - earlier.mask_decoder_ms,
            memory_encoder_ms: self.memory_encoder_ms - earlier.memory_encoder_ms,
            postprocess_ms: self.postprocess_ms - earlier.postprocess_ms,
        }
    }

    pub(super) fn slot(&mut self, module: Module) -> &mut f64 {
        match module {
            Module::ImageEncoder => &mut self.image_encoder_ms,
            Module::MemoryAttention => &mut self.memory_attention_ms,
            Module::MemoryEncoder => &mut self.memory_encoder_ms,
            Module::MaskDecoder => &mut self.mask_decoder_ms,
        }
    }
}

pub(super) fn elapsed_ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}
