//! What reference-based segmentation (`crate::sam2::reference`) reads from the image predictor: an
//! image's embedding (encoded once, the segmenter's cache), its geometry on the encoder's grid, and
//! decoder runs on it that leave the session's state (the previous mask) alone.

use std::sync::Arc;
use std::time::Instant;

use super::embedding::{setting_key, Embedding};
use super::prompt::{validate_prompt, Prompt};
use super::spec::{Family, Feature};
use super::{ms, Sam2Run, Sam2Segmenter, Sam2Stats};
use crate::error::{Error, Result};
use crate::image::{ImageView, MaskMut};

/// An image's encoder output, shared with the segmenter's cache.
#[derive(Clone)]
pub struct ImageFeatures {
    embedding: Arc<Embedding>,
}

/// The lowest-resolution embedding of an image: `channels x rows x cols`, channel-major.
pub struct EmbedTensor<'a> {
    pub channels: usize,
    pub rows: usize,
    pub cols: usize,
    pub data: &'a [f32],
}

impl ImageFeatures {
    /// The image's (width, height).
    pub fn size(&self) -> (usize, usize) {
        (self.embedding.width, self.embedding.height)
    }

    /// The embedding the decoder reads (`image_embed`): 256 x 64 x 64 for 1024-pixel models.
    pub fn embed(&self) -> Result<EmbedTensor<'_>> {
        let (_, shape, data) = self
            .embedding
            .features
            .iter()
            .find(|(role, _, _)| *role == Feature::Embed)
            .ok_or_else(|| Error::unsupported_model("the encoder gives no image embedding"))?;
        match shape.as_slice() {
            [1, c, h, w] | [c, h, w] if *c > 0 && *h > 0 && *w > 0 && data.len() == (c * h * w) as usize => {
                Ok(EmbedTensor { channels: *c as usize, rows: *h as usize, cols: *w as usize, data })
            }
            _ => Err(Error::unsupported_model(format!("the image embedding has shape {shape:?}, expected [1, C, H, W]"))),
        }
    }

    /// The intensity setting the image was encoded under (0 = none).
    pub fn setting(&self) -> u64 {
        self.embedding.setting
    }
}

impl Sam2Segmenter {
    /// The features of `image`: the cached embedding when these pixels are cached (or being encoded
    /// by another call: waited for), else encoded now (it becomes the cached image, as for a click).
    pub fn image_features(&self, image: &ImageView<'_>) -> Result<(ImageFeatures, Sam2Stats)> {
        let call = self.call_image(Some(image))?;
        let (embedding, stats) = self.embedding_for(&call, false)?;
        Ok((ImageFeatures { embedding }, stats))
    }

    /// One decoder run of `prompt` on `features`, its mask into `mask` (the image's size). Unlike
    /// [`predict_into`](Self::predict_into) it neither reads nor sets the session's previous mask:
    /// a mask input comes only from `prompt.mask_input`.
    pub fn decode_features(&self, features: &ImageFeatures, prompt: &Prompt, mask: &mut MaskMut<'_>) -> Result<Sam2Run> {
        let embedding = &features.embedding;
        let (w, h) = (embedding.width, embedding.height);
        if (mask.width(), mask.height()) != (w, h) {
            return Err(Error::invalid(format!("mask is {}x{} but the image is {w}x{h}", mask.width(), mask.height())));
        }
        validate_prompt(prompt, w, h)?;
        self.check_profile_points(prompt)?;
        if prompt.mask_input.is_some() && !self.spec.takes_mask_input() {
            return Err(Error::unsupported_model("this decoder takes no mask input"));
        }
        let t0 = Instant::now();
        let decoded = self.decoder.with(|session, _| self.decode(session, embedding, prompt, prompt.mask_input.as_deref()))?;
        let t1 = Instant::now();
        let mut run = self.finish(decoded, mask, None)?;
        run.stats =
            Sam2Stats { decoder_ms: ms(t0, t1), postprocess_ms: ms(t1, Instant::now()), encoder_reused: true, ..Sam2Stats::default() };
        Ok(run)
    }

    /// How the encoder's square frame holds an image of `(w, h)`: the (width, height) of the image's
    /// part of the frame, in model pixels (SAM1: long side to the model size, top-left; SAM2:
    /// stretched to the whole frame), and the frame's side.
    pub fn frame_of(&self, (w, h): (usize, usize)) -> ((f64, f64), f64) {
        let s = self.spec.image_size as f64;
        match self.spec.family {
            Family::Sam2 => ((s, s), s),
            Family::Sam1 => {
                let k = s / w.max(h) as f64;
                let side = |v: usize| (v as f64 * k).round().clamp(1.0, s);
                ((side(w), side(h)), s)
            }
        }
    }

    /// A number for the intensity setting now in use (0 = none): what an embedding was encoded under.
    pub fn intensity_setting_key(&self) -> u64 {
        setting_key(self.core().intensity().as_ref())
    }

    /// A hash of the encoder's and decoder's bytes: what a saved reference must have been made with.
    pub fn model_identity(&self) -> u128 {
        self.model_identity
    }
}
