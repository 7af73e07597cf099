//! Reference-based segmentation exports: create, add (teach), save, load, find, free.

use std::ffi::c_char;
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::sam2::reference::{FindMode, FindOptions, FindResult, MemoryReference, Reference};
use crate::sam2::video::VideoModel;
use crate::sam2::Sam2Segmenter;

use super::boundary::{required, utf8_path};
use super::enums::{SegRefinement, SegStatus};
use super::handles::{lookup, AnyReference, Handle, SegCallControl, SegSession, Slot};
use super::images::{rows, SegImage, SegMask};
use super::prologue::{create, on, on_controlled, release, run};
use super::reference_types::{SegFindInfo, SegFindOptions, SegFound, SegReference};
use super::sam2_types::SegLabelImage;
use super::versioned::{fill_defaults, out_size, record_array, report_count, write_records, write_versioned};

/// The model behind a session a reference is used with.
#[derive(Clone, Copy)]
enum Model<'a> {
    Image(&'a Sam2Segmenter),
    Video(&'a Arc<VideoModel>),
}

fn model_of(session: &Handle) -> Result<Model<'_>> {
    if let Ok(sam) = session.get::<Sam2Segmenter>() {
        return Ok(Model::Image(sam));
    }
    match session.get::<Arc<VideoModel>>() {
        Ok(video) => Ok(Model::Video(video)),
        Err(_) => Err(session.wrong_kind("a SAM2 session (seg_create) or a SAM2 video session (seg_create_sam2_video)")),
    }
}

impl Model<'_> {
    fn max_pixels(self) -> u64 {
        match self {
            Model::Image(sam) => sam.options().max_pixels,
            Model::Video(video) => video.options().max_pixels,
        }
    }
}

fn other_session(taught_on: &str, given: &str) -> Error {
    Error::unsupported_model(format!(
        "the reference was taught on a {taught_on} and cannot be used with a {given}: use a {taught_on} of the same model, or teach a new reference"
    ))
}

impl AnyReference {
    fn new(model: Model<'_>, image: &ImageView<'_>, mask: &[u8], stride: usize) -> Result<Self> {
        Ok(match model {
            Model::Image(sam) => AnyReference::Image(Reference::new(sam, image, mask, stride)?),
            Model::Video(video) => AnyReference::Memory(MemoryReference::new(video, image, mask, stride)?),
        })
    }

    fn add(&self, model: Model<'_>, image: &ImageView<'_>, mask: &[u8], stride: usize) -> Result<()> {
        match (self, model) {
            (AnyReference::Image(r), Model::Image(sam)) => r.add(sam, image, mask, stride),
            (AnyReference::Memory(r), Model::Video(video)) => r.add(video, image, mask, stride),
            (AnyReference::Image(_), Model::Video(_)) => Err(other_session("SAM2 image session", "SAM2 video session")),
            (AnyReference::Memory(_), Model::Image(_)) => Err(other_session("SAM2 video session", "SAM2 image session")),
        }
    }

    fn find(&self, model: Model<'_>, image: &ImageView<'_>, options: &FindOptions) -> Result<FindResult> {
        match (self, model) {
            (AnyReference::Image(r), Model::Image(sam)) => r.find(sam, image, options),
            (AnyReference::Memory(r), Model::Video(video)) => r.find(video, image, options),
            (AnyReference::Image(_), Model::Video(_)) => Err(other_session("SAM2 image session", "SAM2 video session")),
            (AnyReference::Memory(_), Model::Image(_)) => Err(other_session("SAM2 video session", "SAM2 image session")),
        }
    }

    fn save(&self, path: &std::path::Path) -> Result<()> {
        match self {
            AnyReference::Image(r) => r.save(path),
            AnyReference::Memory(r) => r.save(path),
        }
    }

    fn load(model: Model<'_>, path: &std::path::Path) -> Result<Self> {
        Ok(match model {
            Model::Image(sam) => AnyReference::Image(Reference::load(sam, path)?),
            Model::Video(video) => AnyReference::Memory(MemoryReference::load(video, path)?),
        })
    }
}

/// Fills `options` with the defaults: `SegFindOptions o = { .struct_size = sizeof o }; seg_find_options_default(&o);`.
///
/// # Safety
/// `options` must be NULL or point to `options->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_find_options_default(options: *mut SegFindOptions) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    run(|| unsafe { fill_defaults(options, SegFindOptions::defaults(), "options") })
}

/// Creates an empty reference; teach it with `seg_reference_add` (or load one with
/// `seg_reference_load`). A reference holds embeddings, not images, and is used with any session of
/// the model and kind it was taught with: taught on a SAM2 image session it locates the object by
/// its embedding (every SAM pair segrt runs); taught on a SAM2 video session (`seg_create_sam2_video`)
/// it uses the memory approach (each example a conditioning frame prompted with its mask, each find
/// tracked against them as the official video predictor tracks the next frame). Release it with
/// `seg_reference_free`.
/// Thread safety: a reference may be used from any number of threads at once; an `add` meanwhile
/// takes effect for the finds that start after it.
///
/// # Safety
/// `out_reference` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_reference_create(out_reference: *mut *mut SegReference) -> SegStatus {
    // SAFETY: `out_reference` NULL or writable (the contract).
    unsafe { create(out_reference, || Ok(()), |()| Ok(Handle::Reference(Box::default()))) }
}

/// Teaches the reference one more example: `image` and the object's `mask` on it (the image's size;
/// any non-zero byte is the object), encoded on `session`: a SAM2 image session (its cached image
/// becomes this one; teaching also finds the object in its own image a few ways, a few decoder runs,
/// to choose how finds prompt it) or a SAM2 video session (the memory approach: the image and mask
/// become one more conditioning frame). The first example fixes the model and the kind of session:
/// later ones and finds must use a session of the same model and kind (another kind gives
/// `SEG_MODEL_UNSUPPORTED`). An empty mask, a mask covering the whole image, a mask of another
/// size or a session of another model give `SEG_INVALID_ARGUMENT` / `SEG_MODEL_UNSUPPORTED` and
/// leave the reference as it was.
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: the reference as before the call).
///
/// # Safety
/// `image` and `mask` must describe readable memory of the sizes they state.
#[no_mangle]
pub unsafe extern "C" fn seg_reference_add(
    reference: *mut SegReference,
    session: *mut SegSession,
    image: *const SegImage,
    mask: *const SegMask,
    control: *mut SegCallControl,
) -> SegStatus {
    on_controlled(reference, control, |slot: &Slot| {
        let session = lookup(session)?;
        let model = model_of(&session)?;
        // SAFETY: NULL or a valid descriptor of readable pixels (the contract).
        let view = unsafe { required(image, "image")?.view(model.max_pixels())? };
        // SAFETY: NULL or a valid descriptor of readable bytes (the contract).
        let (bytes, stride) = unsafe { mask_bytes(mask, (view.width(), view.height()))? };
        let current = slot.read().unwrap_or_else(|p| p.into_inner()).clone();
        match current {
            Some(r) => r.add(model, &view, bytes, stride),
            None => {
                let taught = Arc::new(AnyReference::new(model, &view, bytes, stride)?);
                let mut slot = slot.write().unwrap_or_else(|p| p.into_inner());
                match slot.as_ref() {
                    // another thread taught it meanwhile: this example joins it
                    Some(r) => r.add(model, &view, bytes, stride),
                    None => {
                        *slot = Some(taught);
                        Ok(())
                    }
                }
            }
        }
    })
}

/// Saves the reference to `path` (UTF-8): a versioned file with the model's identity and a
/// checksum, written whole or not at all. A reference without an example gives `SEG_INVALID_ARGUMENT`.
///
/// # Safety
/// `path` must be NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn seg_reference_save(reference: *mut SegReference, path: *const c_char) -> SegStatus {
    on(reference, |slot: &Slot| {
        // SAFETY: NULL or NUL-terminated (the contract).
        let path = unsafe { utf8_path(path, "path")? };
        taught(slot)?.save(&path)
    })
}

/// Loads a reference saved by `seg_reference_save`, for use with `session`'s model (a SAM2 image or
/// video session, the kind it was taught on). A damaged file gives `SEG_MODEL_INVALID`, a file of
/// another model or of a newer format `SEG_MODEL_UNSUPPORTED`, a file taught on the other kind of
/// session `SEG_INVALID_ARGUMENT`, a missing one `SEG_MODEL_NOT_FOUND`; `*out_reference` is then not
/// written.
///
/// # Safety
/// `path` must be NULL or NUL-terminated; `out_reference` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_reference_load(
    session: *mut SegSession,
    path: *const c_char,
    out_reference: *mut *mut SegReference,
) -> SegStatus {
    // SAFETY: NULL or NUL-terminated (the contract).
    let args = || Ok((unsafe { utf8_path(path, "path")? }, lookup(session)?));
    let make = |(path, session): (std::path::PathBuf, Arc<Handle>)| {
        let loaded = AnyReference::load(model_of(&session)?, &path)?;
        Ok(Handle::Reference(Box::new(RwLock::new(Some(Arc::new(loaded))))))
    };
    // SAFETY: `out_reference` NULL or writable (the contract).
    unsafe { create(out_reference, args, make) }
}

/// Finds the taught object in `image` on `session` (a SAM2 image session: its cached encoding when
/// `image` is the image encoded last, else the encoder runs once; a SAM2 video session, for a
/// reference taught on one: the image is encoded and tracked as the frame after the examples, never
/// joining the reference's memory; `SEG_FIND_BEST` only, the score the sigmoid of the object score,
/// whose official decision is 0.5; no refinement, no colour).
///
/// - `options`: NULL for the defaults (`seg_find_options_default`).
/// - `out_mask` (optional, the image's size): `SEG_FIND_BEST`: the best match, 255, when present
///   (all 0 otherwise); `SEG_FIND_ALL`: every instance found.
/// - `out_labels` (optional, the image's size, `SEG_FIND_ALL` only): 0 = background, instance k = k,
///   best first; an overlap goes to the better instance.
/// - `out_found`/`found_size`/`found_capacity` (optional): one record per match (`SEG_FIND_BEST`:
///   exactly one, present or not). `found_size` is `sizeof(SegFound)` as the caller was compiled
///   with. A capacity below the number found gives `SEG_BUFFER_TOO_SMALL` with `*out_count` set and
///   nothing else written: `options.max_instances` records are always enough.
/// - `out_count` (optional): the number of matches.
/// - `out_info` (optional): what ran and its times.
///
/// A reference without an example, a session of another model or of another intensity setting, or
/// an output of the wrong size give a status and write nothing.
/// Thread safety: any number of threads at once, on the same or different sessions.
/// `control`: NULL, or a `SegCallControl` to cancel the call and receive its progress.
///
/// # Safety
/// Every pointer must be NULL or valid for the sizes it states.
#[no_mangle]
pub unsafe extern "C" fn seg_reference_find(
    reference: *mut SegReference,
    session: *mut SegSession,
    image: *const SegImage,
    options: *const SegFindOptions,
    out_mask: *const SegMask,
    out_labels: *const SegLabelImage,
    out_found: *mut SegFound,
    found_size: usize,
    found_capacity: usize,
    out_count: *mut usize,
    out_info: *mut SegFindInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    on_controlled(reference, control, |slot: &Slot| {
        let taught = taught(slot)?;
        let session = lookup(session)?;
        let model = model_of(&session)?;
        // SAFETY: NULL or a valid `SegFindOptions` (the contract).
        let options = unsafe { SegFindOptions::read(options)? };
        // SAFETY: NULL or a valid descriptor of readable pixels (the contract).
        let view = unsafe { required(image, "image")?.view(model.max_pixels())? };
        let (w, h) = (view.width(), view.height());
        if out_found.is_null() && found_capacity > 0 {
            return Err(Error::null("out_found (found_capacity is not 0)"));
        }
        let stride = if out_found.is_null() { 0 } else { record_array::<SegFound>(found_size, found_capacity, "SegFound")? };
        // SAFETY: NULL or a valid `SegFindInfo` (the contract).
        let info_size = unsafe { out_size(out_info)? };
        // SAFETY: NULL or a valid mask descriptor (the contract).
        let mut mask = match unsafe { out_mask.as_ref() } {
            None => None,
            // SAFETY: `height` rows of `stride` writable bytes (the contract).
            Some(m) => Some(unsafe { m.target()? }),
        };
        if let Some(m) = &mask {
            if (m.width(), m.height()) != (w, h) {
                return Err(Error::invalid(format!("out_mask is {}x{} but the image is {w}x{h}", m.width(), m.height())));
            }
        }
        // SAFETY: NULL or a readable `SegLabelImage` (the contract).
        let labels = unsafe { label_rows(out_labels, (w, h))? };
        if labels.is_some() && options.mode != FindMode::All {
            return Err(Error::invalid("out_labels is for SEG_FIND_ALL: pass NULL for the best match"));
        }
        let result = taught.find(model, &view, &options)?;
        let n = result.instances.len();
        // SAFETY: `out_count` is NULL or writable (the contract).
        unsafe { report_count(out_count, n, "out_found", !out_found.is_null(), found_capacity, "matches")? };
        if let Some(m) = &mut mask {
            for y in 0..h {
                m.row_mut(y).copy_from_slice(&result.mask[y * w..(y + 1) * w]);
            }
        }
        if let (Some((rows, stride)), Some(l)) = (labels, &result.labels) {
            for y in 0..h {
                rows[y * stride..y * stride + w].copy_from_slice(&l[y * w..(y + 1) * w]);
            }
        }
        if !out_found.is_null() {
            // SAFETY: `found_capacity` >= n records of `stride` bytes (checked above and the contract).
            unsafe { write_records(out_found, stride, &records(&result)) };
        }
        let s = &result.stats;
        let info = SegFindInfo {
            struct_size: 0, // the caller's is kept
            found: n as u32,
            refinement: SegRefinement::from(result.refinement) as i32,
            decoder_runs: s.decoder_runs as u32,
            encoder_reused: s.encoder_reused as u32,
            reserved: 0,
            encoder_ms: s.encoder_ms,
            maps_ms: s.maps_ms,
            decoder_ms: s.decoder_ms,
            postprocess_ms: s.postprocess_ms,
        };
        // SAFETY: `info_size` bytes of `out_info`, checked by `out_size`.
        unsafe { write_versioned(&info, out_info, info_size) };
        Ok(())
    })
}

/// Releases a reference (NULL is accepted). Finds running on it finish first.
///
/// # Safety
/// Any value may be passed.
#[no_mangle]
pub unsafe extern "C" fn seg_reference_free(reference: *mut SegReference) -> SegStatus {
    release(reference, |h| matches!(h, Handle::Reference(_)), "a reference (release sessions with seg_free)")
}

fn taught(slot: &Slot) -> Result<Arc<AnyReference>> {
    slot.read().unwrap_or_else(|p| p.into_inner()).clone().ok_or_else(|| {
        Error::invalid("the reference has no example yet: teach it with seg_reference_add, or load one with seg_reference_load")
    })
}

fn records(result: &FindResult) -> Vec<SegFound> {
    result
        .instances
        .iter()
        .enumerate()
        .map(|(i, f)| SegFound {
            id: i as u32 + 1,
            present: f.present as u32,
            score: f.score,
            predicted_iou: f.predicted_iou,
            x0: f.bbox[0],
            y0: f.bbox[1],
            x1: f.bbox[2],
            y1: f.bbox[3],
            area: f.area,
            point_x: f.point.0,
            point_y: f.point.1,
            similarity: f.similarity,
            colour: f.colour,
        })
        .collect()
}

/// The caller's input mask as bytes and row stride, checked to have the image's size.
///
/// # Safety
/// `mask` must be NULL or describe `height` rows of `stride` readable bytes.
pub(crate) unsafe fn mask_bytes<'a>(mask: *const SegMask, (w, h): (usize, usize)) -> Result<(&'a [u8], usize)> {
    // SAFETY: NULL or a valid descriptor (the contract).
    let m = unsafe { mask.as_ref() }.ok_or_else(|| Error::null("mask"))?;
    if (m.width as i64, m.height as i64) != (w as i64, h as i64) {
        return Err(Error::invalid(format!(
            "the mask is {}x{} but the image is {w}x{h}: it must have the image's size",
            m.width, m.height
        )));
    }
    if m.data.is_null() {
        return Err(Error::null("mask data"));
    }
    let (stride, len) = rows(m.stride, (w, h), 1, "mask")?;
    // SAFETY: `height` rows of `stride` readable bytes (the contract); `len` ends at the last row's
    // `width` bytes and fits in isize.
    Ok((unsafe { std::slice::from_raw_parts(m.data.cast_const(), len) }, stride))
}

/// The caller's label image rows and their stride (values), checked to have the image's size.
///
/// # Safety
/// `labels` must be NULL or describe `height` rows of `stride` writable values.
unsafe fn label_rows<'a>(labels: *const SegLabelImage, (w, h): (usize, usize)) -> Result<Option<(&'a mut [u16], usize)>> {
    // SAFETY: NULL or a readable descriptor (the contract).
    let Some(l) = (unsafe { labels.as_ref() }) else { return Ok(None) };
    if l.data.is_null() {
        return Err(Error::null("label image data"));
    }
    if (l.width, l.height) != (w as i32, h as i32) {
        return Err(Error::invalid(format!("the label image is {}x{} but the image is {w}x{h}", l.width, l.height)));
    }
    let (stride, len) = rows(l.stride, (w, h), 2, "label image")?;
    // SAFETY: `height` rows of `stride` values are writable (the contract); `len` ends at the last
    // row's `width` values and its bytes fit in isize.
    Ok(Some((unsafe { std::slice::from_raw_parts_mut(l.data, len) }, stride)))
}
