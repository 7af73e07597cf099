//! SAM2 exports: create from an encoder/decoder pair, set the image, click, reset.

use std::ffi::c_char;
use std::path::PathBuf;

use crate::error::{Error, ErrorKind, Result};
use crate::sam2::{Prompt, Sam2Segmenter};

use super::boundary::{caller_slice, caller_slice_mut, required, utf8_path};
use super::enums::SegStatus;
use super::external_data::create_sam2;
use super::handles::{Handle, SegCallControl, SegSession};
use super::images::{optional_view, SegImage, SegMask};
use super::options::SegOptions;
use super::prologue::{create, on, on_controlled, run};
use super::sam2_types::{
    mask_input_from, prompt_from, SegBox, SegEverythingInfo, SegEverythingObject, SegEverythingOptions, SegLabelImage, SegPoint,
    SegSam2Prompt, SegSam2PromptsInfo, SegSam2Result, SEG_SAM2_REFINE,
};
use super::versioned::{fill_defaults, out_size, read_records, record_array, report_count, write_records, write_versioned};

/// Creates a SAM2 session from an image-encoder and a prompt-decoder ONNX file (UTF-8 paths).
/// The export convention (samexporter, sam2-onnx, osam/ryouchinsa, uint8 encoders, SAM1-style) is
/// recognised from input/output names and types; an unrecognised pair gives `SEG_MODEL_UNSUPPORTED`
/// with the inputs/outputs found. Ownership, failure and thread-safety rules as for `seg_create`.
///
/// # Safety
/// Paths must be NULL or NUL-terminated; `options` NULL or a valid `SegOptions`; `out_session` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_create_sam2(
    encoder_path: *const c_char,
    decoder_path: *const c_char,
    options: *const SegOptions,
    out_session: *mut *mut SegSession,
) -> SegStatus {
    // SAFETY: both paths are NULL or NUL-terminated (the contract).
    let paths = || unsafe { Ok((utf8_path(encoder_path, "encoder_path")?, utf8_path(decoder_path, "decoder_path")?)) };
    // SAFETY: NULL or a valid `SegOptions` (the contract).
    let make =
        |(e, d): (PathBuf, PathBuf)| Ok(Handle::Sam2(Box::new(Sam2Segmenter::from_files(&e, &d, unsafe { SegOptions::read(options)? })?)));
    // SAFETY: `out_session` NULL or writable (the contract).
    unsafe { create(out_session, paths, make) }
}

/// Like `seg_create_sam2`, from model bytes in memory (copied; the caller keeps ownership).
///
/// # Safety
/// Each data pointer must point to its length in readable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_create_sam2_from_memory(
    encoder_data: *const u8,
    encoder_len: usize,
    decoder_data: *const u8,
    decoder_len: usize,
    options: *const SegOptions,
    out_session: *mut *mut SegSession,
) -> SegStatus {
    // SAFETY: as the contract states (forwarded); no side files.
    unsafe { create_sam2((encoder_data, encoder_len), (decoder_data, decoder_len), None, options, out_session) }
}

/// Encodes `image` now (e.g. on a background thread right after the user opens it) so later clicks
/// only run the decoder. Does nothing when the same pixels are already cached. `out_encoder_ms`
/// (optional) receives the time spent (pre-processing + encoder), 0 when no encoder ran in this
/// call (the cache was used, or another call was encoding the same pixels and this one waited).
/// Thread safety: any thread; the cached embedding belongs to the session and serves all threads.
///
/// Encoding ahead: from the moment this call starts, `image` is "the image set last". A click or
/// segment-everything call on it (image NULL, or the same pixels) made meanwhile on another thread
/// waits for this encode instead of running its own; its own `control` can still cancel its wait.
/// A newer image set on the session (or `seg_sam2_reset`) cancels this encode: this call then
/// returns `SEG_CANCELLED`, as do the calls on the image set last (image NULL) that waited for it;
/// a call that passed the same pixels itself encodes them instead (nobody else cancels it). Do not call the same session from
/// this call's progress or log callback (refused with `SEG_INVALID_ARGUMENT`: it would wait for itself).
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// `image` must describe readable pixels; `out_encoder_ms` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_sam2_set_image(
    session: *mut SegSession,
    image: *const SegImage,
    out_encoder_ms: *mut f64,
    control: *mut SegCallControl,
) -> SegStatus {
    on_controlled(session, control, |sam: &Sam2Segmenter| {
        // SAFETY: NULL or describes readable pixels (the contract).
        let view = unsafe { required(image, "image")?.view(sam.options().max_pixels)? };
        let (pre_ms, ms) = sam.set_image(&view)?;
        if !out_encoder_ms.is_null() {
            // SAFETY: not NULL, so writable (the contract).
            unsafe { out_encoder_ms.write(pre_ms + ms) };
        }
        Ok(())
    })
}

/// Forgets the cached image embedding and the previous mask of a SAM2 session, and cancels an
/// encode in flight (its `seg_sam2_set_image` returns `SEG_CANCELLED`).
///
/// # Safety
/// Any value may be passed as `session`.
#[no_mangle]
pub unsafe extern "C" fn seg_sam2_reset(session: *mut SegSession) -> SegStatus {
    on(session, |sam: &Sam2Segmenter| {
        sam.reset();
        Ok(())
    })
}

/// Segments the object at the clicked points (and/or inside the box) and writes its mask, 0/255 at
/// the image's size, into `out_mask`.
///
/// - `image`: the picture clicked on; the encoder runs only when its pixels differ from the cached
///   image. NULL uses the image given to `seg_sam2_set_image` (or the last call).
/// - `points`/`n_points`: clicks in original image pixels, label 1 = include, 0 = exclude. May be
///   NULL/0 when `bbox` is given.
/// - `bbox`: optional (NULL = none), in original image pixels.
/// - `mask_input`/`mask_input_len`: optional (NULL/0 = none) low-res logits of an earlier call on the
///   same image (its `SegSam2Result.low_res_logits`, `low_res_width x low_res_height` floats) to
///   refine: the caller's own refinement state, so threads refining different objects on one
///   session never mix.
/// - `flags`: 0 or `SEG_SAM2_REFINE` (without `mask_input`: feed the session's previous chosen
///   low-res logits back, a convenience for one interacting thread). A decoder without a mask input
///   (Hugging Face transformers' `prompt_encoder_mask_decoder.onnx`) refuses `mask_input` and
///   `SEG_SAM2_REFINE` with `SEG_MODEL_UNSUPPORTED`.
/// - `out_score`: optional, the chosen mask's predicted IoU.
/// - `out_result`: optional; see `SegSam2Result` (all masks, scores, low-res logits, timings).
///
/// Outputs are written only on success. Thread safety: any number of threads at once.
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// All pointers must be NULL or valid for the sizes stated.
#[no_mangle]
pub unsafe extern "C" fn seg_run_sam2_points(
    session: *mut SegSession,
    image: *const SegImage,
    points: *const SegPoint,
    n_points: usize,
    bbox: *const SegBox,
    mask_input: *const f32,
    mask_input_len: usize,
    flags: u32,
    out_mask: *const SegMask,
    out_score: *mut f32,
    out_result: *mut SegSam2Result,
    control: *mut SegCallControl,
) -> SegStatus {
    on_controlled(session, control, |sam: &Sam2Segmenter| {
        // SAFETY: NULL or describes writable rows (the contract).
        let out_mask = unsafe { required(out_mask, "out_mask")? };
        if points.is_null() && n_points > 0 {
            return Err(Error::null("points"));
        }
        if flags & !SEG_SAM2_REFINE != 0 {
            return Err(Error::invalid(format!("unknown flags 0x{flags:x} (known: SEG_SAM2_REFINE = 1)")));
        }
        // SAFETY: NULL or a valid `SegSam2Result` (the contract).
        let result_size = unsafe { out_size(out_result)? };
        // SAFETY: as above; the caller's struct is only read here (copied below).
        let result = unsafe { out_result.as_ref() };
        let (lw, lh) = sam.low_res_size();
        // SAFETY: the prompt's pointers are NULL or valid for their lengths (the contract).
        let clicks = unsafe { prompt_from(points, n_points, bbox)? };
        // SAFETY: as above.
        let mask_input = unsafe { mask_input_from(mask_input, mask_input_len, lw * lh)? };
        let prompt = Prompt { mask_input, refine: flags & SEG_SAM2_REFINE != 0, ..clicks };
        // SAFETY: NULL or describes readable pixels (the contract).
        let view = unsafe { optional_view(image, sam.options().max_pixels)? };
        // SAFETY: as above.
        let mut mask = unsafe { out_mask.target()? };
        let mut all_masks = None;
        if let Some(r) = &result {
            if !r.low_res_logits.is_null() && r.low_res_len < lw * lh {
                return Err(Error::new(
                    ErrorKind::BufferTooSmall,
                    format!("low_res_logits holds {} floats, needs {}", r.low_res_len, lw * lh),
                ));
            }
            if !r.all_masks.is_null() {
                // SAFETY: not NULL, so `all_masks_len` writable bytes (the contract).
                all_masks = Some(unsafe { caller_slice_mut(r.all_masks, r.all_masks_len, "all_masks")? });
            }
        }
        // The pipeline checks the mask's size before running anything, and writes nothing on failure.
        let run = sam.predict_into(view.as_ref(), &prompt, &mut mask, all_masks).map_err(|e| {
            if e.kind == ErrorKind::NoImage {
                Error::invalid("no image: pass one, or call seg_sam2_set_image first")
            } else {
                e
            }
        })?;
        if !out_score.is_null() {
            // SAFETY: not NULL, so writable (the contract).
            unsafe { out_score.write(run.scores[run.chosen]) };
        }
        if let Some(r) = result {
            // SAFETY: `result_size` bytes of `out_result`, checked by `out_size`; its buffers as checked above.
            unsafe { r.write_run(&run, out_result, result_size) };
        }
        Ok(())
    })
}

/// Segments many objects on one image in one call: prompt i's mask, 0/255 at the image's size, into
/// `out_masks[i]` (a station's detector boxes, one mask each). The image is encoded once (the
/// session's cached embedding, as for clicks); the decoder runs once per chunk of prompts where the
/// decoder export has a prompt batch axis (prompts with the same number of points share a run; a
/// box counts as its two corners; transformers' objects axis: the same number of points, and a box
/// each or none), in chunks bounded by `max_memory_bytes`, and prompt by prompt
/// where it has not. Each mask and score equal those of a `seg_run_sam2_points` call with the same
/// points and box (flags 0, no mask input).
///
/// - `image`: the picture; NULL uses the image set last, as `seg_run_sam2_points` does.
/// - `prompts`/`n_prompts`: an array of `n_prompts` records of `prompt_size` bytes
///   (`sizeof(SegSam2Prompt)`); 1 to 4096 prompts, each with at least one point or a box.
/// - `out_masks`: `n_prompts` caller-owned masks, each of the image's size.
/// - `out_scores`: optional (NULL = not wanted), `n_prompts` floats: each chosen mask's predicted IoU.
/// - `out_info`: optional; see `SegSam2PromptsInfo` (decoder runs, batch size, times).
///
/// Every argument is checked before anything runs (a bad one: `SEG_INVALID_ARGUMENT` naming the
/// prompt or mask); outputs are written only on success. The session's previous mask (for
/// `SEG_SAM2_REFINE`) is left as it was. Thread safety: any number of threads at once.
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_STAGE_PROMPTS` between decoder runs, ending at 1.0; `SEG_CANCELLED`: no output
/// written, the handle as before the call).
///
/// # Safety
/// `prompts` must point to `n_prompts` records of `prompt_size` readable bytes, each prompt's
/// `points` to its `n_points` points; `out_masks` to `n_prompts` masks describing writable rows;
/// `out_scores` NULL or `n_prompts` writable floats; `out_info` NULL or a valid `SegSam2PromptsInfo`.
#[no_mangle]
pub unsafe extern "C" fn seg_sam2_segment_prompts(
    session: *mut SegSession,
    image: *const SegImage,
    prompts: *const SegSam2Prompt,
    prompt_size: usize,
    n_prompts: usize,
    out_masks: *const SegMask,
    out_scores: *mut f32,
    out_info: *mut SegSam2PromptsInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    on_controlled(session, control, |sam: &Sam2Segmenter| {
        if prompts.is_null() {
            return Err(Error::null("prompts"));
        }
        let stride = record_array::<SegSam2Prompt>(prompt_size, n_prompts, "SegSam2Prompt")?;
        if n_prompts == 0 {
            return Err(Error::invalid("n_prompts is 0: give at least one prompt"));
        }
        if n_prompts > crate::sam2::MAX_PROMPTS {
            return Err(Error::invalid(format!("{n_prompts} prompts: at most {} are accepted in one call", crate::sam2::MAX_PROMPTS)));
        }
        if out_masks.is_null() {
            return Err(Error::null("out_masks"));
        }
        // SAFETY: NULL or a valid `SegSam2PromptsInfo` (the contract).
        let info_size = unsafe { out_size(out_info)? };
        // SAFETY: `n_prompts` records of `prompt_size` readable bytes (the contract), checked above.
        let records = unsafe { read_records(prompts, stride, n_prompts, "SegSam2Prompt")? };
        let list = records
            .iter()
            .enumerate()
            // SAFETY: each prompt's points are NULL (none) or valid for `n_points` (the contract).
            .map(|(i, r)| unsafe { r.prompt() }.map_err(|e| e.context(format!("prompt {i}"))))
            .collect::<Result<Vec<_>>>()?;
        // SAFETY: `n_prompts` readable masks (the contract).
        let descs = unsafe { caller_slice(out_masks, n_prompts, "out_masks")? };
        // SAFETY: NULL or describes readable pixels (the contract).
        let view = unsafe { optional_view(image, sam.options().max_pixels)? };
        let mut masks = Vec::with_capacity(n_prompts);
        for (i, d) in descs.iter().enumerate() {
            // SAFETY: each mask describes writable rows (the contract).
            masks.push(unsafe { d.target() }.map_err(|e| e.context(format!("mask {i}")))?);
        }
        let scores = if out_scores.is_null() {
            None
        } else {
            // SAFETY: not NULL, so `n_prompts` writable floats (the contract).
            Some(unsafe { caller_slice_mut(out_scores, n_prompts, "out_scores")? })
        };
        // The pipeline checks every prompt and mask before running anything, and writes nothing on failure.
        let run = sam.predict_many(view.as_ref(), &list, &mut masks).map_err(|e| {
            if e.kind == ErrorKind::NoImage {
                Error::invalid("no image: pass one, or call seg_sam2_set_image first")
            } else {
                e
            }
        })?;
        if let Some(scores) = scores {
            scores.copy_from_slice(&run.scores);
        }
        // SAFETY: `info_size` bytes of `out_info`, checked by `out_size`.
        unsafe { write_versioned(&SegSam2PromptsInfo::from(&run.stats), out_info, info_size) };
        Ok(())
    })
}

/// Fills `options` with the defaults of SAM2's automatic mask generator, as `seg_options_default`
/// does: `SegEverythingOptions o = { .struct_size = sizeof o }; seg_everything_options_default(&o);`.
///
/// # Safety
/// `options` must be NULL or point to `options->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_everything_options_default(options: *mut SegEverythingOptions) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    run(|| unsafe { fill_defaults(options, SegEverythingOptions::defaults(), "options") })
}

/// Segments everything: prompts a grid of points over the image and keeps the masks SAM2's
/// automatic mask generator keeps (predicted-IoU and stability filters, box NMS), as a 16-bit
/// label image and one record per object.
///
/// - `image`: the picture; the encoder runs only when its pixels differ from the cached image
///   (clicks and everything share the cache). NULL uses the image set last.
/// - `options`: NULL for the defaults (`seg_everything_options_default`).
/// - `out_labels` (optional): image-sized, 0 = background, object k = k. Objects are painted largest
///   first, so a smaller object lying on a larger one stays visible; records keep the full masks.
///   At most 65535 objects are returned (the best by predicted IoU); `out_info->dropped` counts the rest.
/// - `out_objects`/`object_size`/`objects_capacity` (optional): records, best predicted IoU first (id
///   order); `object_size` is `sizeof(SegEverythingObject)` as the caller was compiled with (segrt
///   writes that much of each record, at that stride).
/// - `out_count` (optional): the number of objects.
/// - `out_info` (optional): counts and times.
///
/// Size query: the session keeps its last result (per image and options), so a call with
/// `out_objects` NULL and capacity 0 that learns `*out_count`, followed by the same call with a
/// buffer, decodes only once. A capacity below the count gives `SEG_BUFFER_TOO_SMALL` with
/// `*out_count` set and nothing else written. Options, buffer sizes and the image are checked before
/// anything runs; on failure the label image and records are not touched.
/// Thread safety: any number of threads at once.
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// Every pointer must be NULL or valid for the sizes it states.
#[no_mangle]
pub unsafe extern "C" fn seg_sam2_everything(
    session: *mut SegSession,
    image: *const SegImage,
    options: *const SegEverythingOptions,
    out_labels: *const SegLabelImage,
    out_objects: *mut SegEverythingObject,
    object_size: usize,
    objects_capacity: usize,
    out_count: *mut usize,
    out_info: *mut SegEverythingInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    on_controlled(session, control, |sam: &Sam2Segmenter| {
        // SAFETY: NULL or a valid `SegEverythingOptions` (the contract).
        let options = unsafe { SegEverythingOptions::read(options)? };
        if out_objects.is_null() && objects_capacity > 0 {
            return Err(Error::null("out_objects (objects_capacity is not 0)"));
        }
        let stride = if out_objects.is_null() {
            0
        } else {
            record_array::<SegEverythingObject>(object_size, objects_capacity, "SegEverythingObject")?
        };
        // SAFETY: NULL or a valid `SegEverythingInfo` (the contract).
        let info_size = unsafe { out_size(out_info)? };
        // SAFETY: NULL or describes readable pixels (the contract).
        let view = unsafe { optional_view(image, sam.options().max_pixels)? };
        let (w, h) = match &view {
            Some(v) => (v.width(), v.height()),
            None => sam.cached_image_size().ok_or_else(|| Error::invalid("no image: pass one, or call seg_sam2_set_image first"))?,
        };
        // SAFETY: NULL or a readable `SegLabelImage` describing writable rows (the contract).
        let labels = unsafe { out_labels.as_ref() }.map(|l| unsafe { l.target((w, h)) }).transpose()?;
        let (result, cached) = sam.everything(view.as_ref(), &options)?;
        let n = result.objects.len();
        // SAFETY: `out_count` is NULL or writable (the contract).
        unsafe { report_count(out_count, n, "out_objects", !out_objects.is_null(), objects_capacity, "objects")? };
        if let Some((labels, stride)) = labels {
            result.paint(labels, stride);
        }
        if !out_objects.is_null() {
            let records: Vec<SegEverythingObject> = result.objects.iter().map(SegEverythingObject::from).collect();
            // SAFETY: `objects_capacity` >= n records of `stride` bytes (checked above and the contract).
            unsafe { write_records(out_objects, stride, &records) };
        }
        // SAFETY: `info_size` bytes of `out_info`, checked by `out_size`.
        unsafe { write_versioned(&SegEverythingInfo::of(&result, cached), out_info, info_size) };
        Ok(())
    })
}
