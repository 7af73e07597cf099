//! A track's frames: their pixels as the encoder reads them (`StoredFrame`), the encoder's outputs
//! per frame (`Features`), which frames are held and which can still be reached (`Frames`), and the
//! encoder's input tensor of a frame (`tensor`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::image::resize::resize_pil_bicubic;

use super::metadata::VideoMetadata;
use super::model::Array;

/// A frame's pixels (after the intensity stage) at the size it is encoded from: 8-bit RGB, or one
/// channel where the three are equal (a CT or MR slice: a third of the bytes a volume keeps).
pub(super) struct StoredFrame {
    pub(super) pixels: Vec<u8>,
    pub(super) channels: usize,
    pub(super) width: usize,
    pub(super) height: usize,
}

impl StoredFrame {
    pub(super) fn new(rgb: Vec<u8>, width: usize, height: usize) -> StoredFrame {
        if rgb.chunks_exact(3).all(|p| p[0] == p[1] && p[1] == p[2]) {
            let gray = rgb.chunks_exact(3).map(|p| p[0]).collect();
            return StoredFrame { pixels: gray, channels: 1, width, height };
        }
        StoredFrame { pixels: rgb, channels: 3, width, height }
    }
}

/// The image encoder's outputs for one frame.
pub(super) struct Features {
    pub(super) image_embed: Array,
    pub(super) vision_feat: Array,
    pub(super) vision_pos_enc: Array,
    pub(super) high_res_0: Array,
    pub(super) high_res_1: Array,
    /// When the tracker last used them (a volume evicts the least recently used).
    pub(super) last_use: AtomicU64,
}

impl Features {
    /// The image encoder's five outputs, in the order the metadata lists them.
    pub(super) fn from_outputs(mut o: Vec<Array>) -> Result<Features> {
        if o.len() != 5 {
            return Err(Error::unsupported_model("video image encoder: expected 5 outputs"));
        }
        let mut take = || o.remove(0);
        Ok(Features {
            image_embed: take(),
            vision_feat: take(),
            vision_pos_enc: take(),
            high_res_0: take(),
            high_res_1: take(),
            last_use: Default::default(),
        })
    }
}

/// The encoder's input tensor of a stored frame: `_load_img_as_tensor`, the frame resized to S x S
/// as PIL's default `resize` does (bicubic, bit-exact: `resize_pil_bicubic`; no resize when the
/// frame already is S x S), `u8 / 255`, then the metadata's mean / std, NCHW float32.
pub(super) fn tensor(frame: &StoredFrame, meta: &VideoMetadata) -> Result<Vec<f32>> {
    let s = meta.image_size;
    let (w, h, channels) = (frame.width, frame.height, frame.channels);
    let resized;
    let pixels = if (w, h) == (s, s) {
        &frame.pixels
    } else {
        // Each channel is resized on its own: a gray frame resized once is each of its RGB planes.
        resized = resize_pil_bicubic(&frame.pixels, (w, h), channels, (s, s))?;
        &resized
    };
    let p = &meta.preprocessing;
    let mut out = crate::alloc::vec_of(3 * s * s, 0f32, "a video frame tensor")?;
    for (c, plane) in out.chunks_exact_mut(s * s).enumerate() {
        for (o, px) in plane.iter_mut().zip(pixels.chunks_exact(channels)) {
            let x = (px[c.min(channels - 1)] as f64 / 255.0) as f32;
            *o = (x - p.mean[c]) / p.std[c];
        }
    }
    Ok(out)
}

/// The frames of a track: how many were added and their size, the encoder outputs held and (a
/// volume) every frame's pixels. Cloning is cheap: frames and outputs are shared.
#[derive(Clone, Default)]
pub(super) struct Frames {
    /// (width, height) of the first frame; every frame must have it.
    pub(super) size: Option<(usize, usize)>,
    pub(super) added: usize,
    pub(super) features: BTreeMap<usize, Arc<Features>>,
    /// A volume's frames (`TrackerOptions::volume`), to encode them when needed.
    pub(super) pixels: BTreeMap<usize, Arc<StoredFrame>>,
    /// Counts feature uses (least recently used eviction).
    clock: u64,
}

impl Frames {
    /// Refuses a next frame of `(w, h)` when the track's frames have another size.
    pub(super) fn check_size(&self, (w, h): (usize, usize)) -> Result<()> {
        match self.size {
            Some((fw, fh)) if (fw, fh) != (w, h) => Err(Error::invalid(format!(
                "frame {} is {w}x{h} but the track's frames are {fw}x{fh}: every frame must have the first frame's size",
                self.added
            ))),
            _ => Ok(()),
        }
    }

    /// Refuses a frame never added, or one a streamed track (keeping `keep_frames`) no longer holds.
    pub(super) fn check_reachable(&self, t: usize, keep_frames: Option<usize>) -> Result<()> {
        if t >= self.added {
            return Err(Error::invalid(format!("frame {t} was never added ({} frames so far)", self.added)));
        }
        if !self.features.contains_key(&t) && !self.pixels.contains_key(&t) {
            return Err(Error::invalid(format!(
                "frame {t} is no longer held: a streamed track keeps only its {} most recent frames \
                 (make the track a volume to reach every frame in both directions)",
                keep_frames.unwrap_or(0)
            )));
        }
        Ok(())
    }

    /// Frame `t`'s encoder outputs: held, or (a volume) encoded now by `encode`; marked as used now.
    pub(super) fn features(&mut self, t: usize, encode: impl FnOnce(&StoredFrame) -> Result<Features>) -> Result<Arc<Features>> {
        let feats = match self.features.get(&t) {
            Some(f) => f.clone(),
            None => {
                let frame = self.pixels.get(&t).cloned().ok_or_else(|| Error::internal(format!("frame {t} has no pixels")))?;
                let f = Arc::new(encode(&frame)?);
                self.features.insert(t, f.clone());
                f
            }
        };
        self.clock += 1;
        feats.last_use.store(self.clock, Ordering::Relaxed);
        Ok(feats)
    }

    /// Keeps the encoder outputs of `keep` frames besides the `pinned` ones: a volume the most
    /// recently used (its frames are encoded again when needed), a streamed track the most recent.
    /// Returns the oldest frame a streamed track can still reach (`None` for a volume: every one).
    pub(super) fn release(&mut self, keep: usize, volume: bool, pinned: &BTreeSet<usize>) -> Option<usize> {
        if volume {
            while self.features.len() > keep {
                let victim =
                    self.features.iter().filter(|(t, _)| !pinned.contains(t)).min_by_key(|(_, f)| f.last_use.load(Ordering::Relaxed));
                let Some((&t, _)) = victim else { break };
                self.features.remove(&t);
            }
            return None;
        }
        let oldest = self.added.saturating_sub(keep);
        self.features.retain(|t, _| *t >= oldest || pinned.contains(t));
        Some(oldest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gray frame kept as one channel gives the encoder exactly the tensor of its RGB form.
    #[test]
    fn a_gray_frame_kept_as_one_channel_gives_the_rgb_frames_tensor() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/sam2/video");
        let model = super::super::VideoModel::from_dir(&dir, crate::Options::default()).unwrap();
        let meta = model.metadata();
        let (w, h) = (97, 61);
        let rgb: Vec<u8> = (0..w * h).flat_map(|i| [((i * 37) % 251) as u8; 3]).collect();
        let gray = StoredFrame::new(rgb.clone(), w, h);
        assert_eq!((gray.channels, gray.pixels.len()), (1, w * h));
        let as_rgb = StoredFrame { pixels: rgb, channels: 3, width: w, height: h };
        assert!(tensor(&gray, meta).unwrap() == tensor(&as_rgb, meta).unwrap());
        let mut colour = as_rgb.pixels.clone();
        colour[4] = 1;
        assert_eq!(StoredFrame::new(colour, w, h).channels, 3, "one coloured pixel keeps RGB");
    }
}
