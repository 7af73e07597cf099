//! The encoder side: an image's embedding, encoded once and shared by every call and thread on the
//! segmenter, and the calls that wait for an encode in flight.

use std::sync::Arc;
use std::time::Instant;

use super::encoding::Encoding;
use super::spec::{EncoderInput, Family, Feature};
use super::{ms, no_image, Sam2Segmenter, Sam2Stats};
use crate::control::{self, Stage};
use crate::engine::{self, io::f32_output};
use crate::error::{Error, ErrorKind, Result};
use crate::image::intensity::{image_key, mapping_for, Intensity};
use crate::image::tensor::{prepare, Element, Fit, Layout, Normalisation, TensorData, TensorFormat};
use crate::image::{check_size, ImageView};

/// One encoder output: its role, shape and values.
pub(super) type FeatureMap = (Feature, Vec<i64>, Vec<f32>);

/// The encoder output for one image.
pub(super) struct Embedding {
    pub(super) key: u64,
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) features: Vec<FeatureMap>,
    /// The intensity setting it was encoded under (`setting_key`).
    pub(super) setting: u64,
}

/// What a call starts with: its image (`None`: the image set last), the intensity setting it runs
/// under (taken once, at its start) and its image's key under that setting (`intensity::image_key`).
pub(super) struct CallImage<'i> {
    pub(super) image: Option<&'i ImageView<'i>>,
    pub(super) key: Option<u64>,
    pub(super) setting: Option<Intensity>,
}

/// A number for an intensity setting (0 = none set).
pub(super) fn setting_key(setting: Option<&Intensity>) -> u64 {
    setting.map_or(0, |i| i.key().max(1))
}

impl Sam2Segmenter {
    /// Encodes `image` now unless it is the cached one (or is being encoded by another call: then
    /// waits for that). Returns (pre-processing ms, encoder ms), both 0 when no encoder ran here.
    /// Any thread: a host encodes an image as soon as it shows it, and clicks arriving meanwhile
    /// wait only for the rest of this encode; setting a newer image cancels this one.
    pub fn set_image(&self, image: &ImageView<'_>) -> Result<(f64, f64)> {
        let call = self.call_image(Some(image))?;
        let (_, stats) = self.embedding_for(&call, true)?;
        Ok((stats.encoder_preprocess_ms, stats.encoder_ms))
    }

    /// What a call starts with (see `CallImage`), its image's size checked against `max_pixels`.
    pub(super) fn call_image<'i>(&self, image: Option<&'i ImageView<'i>>) -> Result<CallImage<'i>> {
        let setting = self.core.intensity();
        let key = image.map(|img| {
            check_size(img.width() as i64, img.height() as i64, self.options().max_pixels).map(|_| image_key(img, setting.as_ref()))
        });
        Ok(CallImage { image, key: key.transpose()?, setting })
    }

    /// The embedding of the call's image, or without one of the image set last: the cached one,
    /// the one another call is encoding (waited for), or encoded here. `set_last` (a `set_image`
    /// call) makes the image the image set last, cancelling an encode of another image set before;
    /// a call that carries its image never cancels another's encode, and when the encode it waited
    /// for is cancelled it encodes its image itself. The image set last serves only under the
    /// intensity setting it was encoded with.
    pub(super) fn embedding_for(&self, call: &CallImage<'_>, set_last: bool) -> Result<(Arc<Embedding>, Sam2Stats)> {
        let found = self.embedding_lookup(call, set_last)?;
        if call.image.is_none() && found.0.setting != setting_key(call.setting.as_ref()) {
            return Err(Error::invalid(
                "the intensity setting changed since the image was set: pass the image again to encode it under the new setting",
            ));
        }
        Ok(found)
    }

    fn embedding_lookup(&self, call: &CallImage<'_>, set_last: bool) -> Result<(Arc<Embedding>, Sam2Stats)> {
        let CallImage { image, key, setting } = call;
        let (image, key, setting) = (*image, *key, setting.as_ref());
        let reused = Sam2Stats { encoder_reused: true, ..Sam2Stats::default() };
        loop {
            let started = {
                let mut state = self.state();
                // Checked before anything changes: a refused call has no effect (it would
                // otherwise supersede, and so cancel, the very encode it was called from).
                if state.encoding.iter().chain(&state.carried).any(|e| e.runs_on_this_thread()) {
                    return Err(Error::invalid(
                        "called from inside this handle's own image encode (a progress or log callback): \
                         segrt is not re-entered from its callbacks; nothing was changed",
                    ));
                }
                if set_last && state.encoding.as_ref().is_some_and(|e| key != Some(e.key)) {
                    // A newer image: the encode of the one set before is no longer wanted.
                    if let Some(older) = state.encoding.take() {
                        older.superseded.cancel();
                    }
                }
                let pending = match key {
                    None => state.encoding.clone(),
                    Some(k) => state.encoding.iter().chain(&state.carried).find(|e| e.key == k).cloned(),
                };
                let cached = state.embedding.clone().filter(|e| key.is_none_or(|k| k == e.key));
                match (pending, cached, image, key) {
                    (Some(encoding), ..) => {
                        drop(state);
                        match encoding.wait() {
                            Ok(embedding) => return Ok((embedding, reused)),
                            // Someone else's encode of these pixels was cancelled: a call with its
                            // own image (and its own control not cancelled) encodes it itself.
                            Err(e) if e.kind == ErrorKind::Cancelled && key.is_some() && control::checkpoint().is_ok() => continue,
                            Err(e) => return Err(e),
                        }
                    }
                    (None, Some(embedding), ..) => return Ok((embedding, reused)),
                    (None, None, Some(img), Some(k)) => {
                        let encoding = Encoding::start(k, (img.width(), img.height()));
                        if set_last {
                            state.encoding = Some(encoding.clone());
                        } else {
                            state.carried.push(encoding.clone());
                        }
                        encoding
                    }
                    _ => return Err(no_image()),
                }
            };
            let image = image.expect("an encode starts only with an image");
            let result = if set_last {
                control::also(started.superseded.clone(), || self.encode(image, started.key, setting))
            } else {
                self.encode(image, started.key, setting)
            };
            {
                let mut state = self.state();
                // The image set last is installed while it still is that (not replaced nor reset);
                // a carried image as the cached one unless an image set last is on its way.
                let install = if state.encoding.as_ref().is_some_and(|e| Arc::ptr_eq(e, &started)) {
                    state.encoding = None;
                    true
                } else {
                    let before = state.carried.len();
                    state.carried.retain(|e| !Arc::ptr_eq(e, &started));
                    state.carried.len() < before && state.encoding.is_none()
                };
                if let (true, Ok((embedding, _))) = (install, &result) {
                    if state.previous.as_ref().is_some_and(|(k, _)| *k != embedding.key) {
                        state.previous = None;
                    }
                    state.embedding = Some(embedding.clone());
                }
            }
            started.finish(result.as_ref().map(|(e, _)| e.clone()).map_err(Clone::clone));
            return result.map_err(|e| {
                let replaced = started.superseded.is_cancelled() && e.kind == ErrorKind::Cancelled;
                if replaced {
                    Error::new(ErrorKind::Cancelled, "the encode was cancelled: a newer image was set on this handle, or it was reset")
                } else {
                    e
                }
            });
        }
    }

    /// Runs the encoder on `image` (without holding the state lock: clicks on the cached image go
    /// on meanwhile).
    fn encode(&self, image: &ImageView<'_>, key: u64, setting: Option<&Intensity>) -> Result<(Arc<Embedding>, Sam2Stats)> {
        let t0 = Instant::now();
        let mut t1 = t0;
        let features = self.run_encoder(image, &mut t1, setting)?;
        let stats = Sam2Stats { encoder_preprocess_ms: ms(t0, t1), encoder_ms: ms(t1, Instant::now()), ..Sam2Stats::default() };
        Ok((Arc::new(Embedding { key, width: image.width(), height: image.height(), features, setting: setting_key(setting) }), stats))
    }

    /// How the encoder wants `image`: RGB, resized to the model (stretched for SAM2, long side +
    /// zero padding for SAM1), ImageNet-normalised float32 or raw uint8, NCHW.
    fn encoder_format(&self, (w, h): (usize, usize)) -> (TensorFormat, Normalisation, Fit) {
        let s = self.spec.image_size;
        let fit = match self.spec.family {
            Family::Sam2 => Fit::Resize,
            Family::Sam1 => {
                let k = s as f64 / w.max(h) as f64;
                let side = |v: usize| ((v as f64 * k).round() as usize).clamp(1, s);
                Fit::Place { width: side(w), height: side(h) }
            }
        };
        let (element, norm) = match self.spec.encoder_input {
            EncoderInput::NormalizedF32 => (Element::F32, Normalisation::rgb(1.0 / 255.0, self.spec.pixel_mean, self.spec.pixel_std)),
            EncoderInput::RawU8 => (
                Element::U8,
                // Raw 0..255 values: the graph normalises.
                Normalisation::rgb(1.0, [0.0; 3], [1.0; 3]),
            ),
        };
        (TensorFormat { channels: 3, layout: Layout::Nchw, element }, norm, fit)
    }

    /// The encoder's input tensor for `image`, in fresh buffers (for benchmarks and tools).
    pub fn encoder_tensor(&self, image: &ImageView<'_>) -> Result<TensorData> {
        let s = self.spec.image_size;
        let (format, norm, fit) = self.encoder_format((image.width(), image.height()));
        let norm = norm.with_mapping(mapping_for(self.core.intensity().as_ref(), image)?);
        prepare(image, &format, (s, s), &norm, fit)
    }

    /// The encoder run on `image`, its input built by the shared pre-processing in the thread's
    /// reused buffers.
    fn run_encoder(&self, image: &ImageView<'_>, prepared: &mut Instant, setting: Option<&Intensity>) -> Result<Vec<FeatureMap>> {
        let s = self.spec.image_size;
        let (format, norm, fit) = self.encoder_format((image.width(), image.height()));
        let norm = norm.with_mapping(mapping_for(setting, image)?);
        // The input is built in the session's own buffers once the session is ours.
        self.encoder.with(|session, pre| {
            pre.start_batch(&format, (s, s), 1)?;
            pre.fill(0, image, &format, (s, s), &norm, fit)?;
            *prepared = Instant::now();
            let features = {
                let input = pre.tensor().input(vec![1, 3, s as i64, s as i64])?;
                let inputs = ort::inputs![self.spec.encoder_input_name.as_str() => input];
                control::progress(Stage::Encode, 0.0)?;
                let features = engine::run(session, inputs, self.encoder.releases_arena(), "SAM2 encoder run", |outputs| {
                    let mut features = Vec::new();
                    for (role, name) in &self.spec.encoder_outputs {
                        let (shape, data) = f32_output(outputs, name, "SAM2 encoder")?;
                        features.push((*role, shape, data));
                    }
                    Ok(features)
                })?;
                control::progress(Stage::Encode, 1.0)?;
                features
            };
            pre.shrink();
            Ok(features)
        })
    }
}
