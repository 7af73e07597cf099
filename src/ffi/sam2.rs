//! SAM2 exports: create from an encoder/decoder pair, set the image, click, reset.

use std::ffi::c_char;

use crate::engine::read_model_bytes;
use crate::error::{Error, ErrorKind};
use crate::sam2::{BoxPrompt, Point, Prompt, Sam2Segmenter};

use super::boundary::{caller_slice, caller_slice_mut, guard, utf8_path};
use super::control::{call_control, SegCallControl};
use super::enums::SegStatus;
use super::handles::{lookup, register, Handle};
use super::images::{SegImage, SegMask};
use super::options::SegOptions;
use super::sam2_types::{
    SegBox, SegEverythingInfo, SegEverythingObject, SegEverythingOptions, SegLabelImage, SegPoint, SegSam2Prompt, SegSam2PromptsInfo,
    SegSam2Result, SEG_SAM2_REFINE,
};
use super::session::SegSession;
use super::versioned::{fill_defaults, out_size, read_records, record_array, write_records, write_versioned};

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
    guard(|| {
        // SAFETY: both paths are NULL or NUL-terminated (the contract).
        let encoder = unsafe { utf8_path(encoder_path, "encoder_path")? };
        // SAFETY: as above.
        let decoder = unsafe { utf8_path(decoder_path, "decoder_path")? };
        if out_session.is_null() {
            return Err(Error::null("out_session"));
        }
        // SAFETY: NULL or a valid `SegOptions` (the contract).
        let options = unsafe { SegOptions::read(options)? };
        let sam = Sam2Segmenter::from_files(&encoder, &decoder, options)?;
        // SAFETY: not NULL, so writable (the contract).
        unsafe { out_session.write(register(Handle::Sam2(Box::new(sam)))) };
        Ok(())
    })
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
    guard(|| {
        if encoder_data.is_null() || decoder_data.is_null() {
            return Err(Error::null(if encoder_data.is_null() { "encoder_data" } else { "decoder_data" }));
        }
        if out_session.is_null() {
            return Err(Error::null("out_session"));
        }
        // SAFETY: NULL or a valid `SegOptions` (the contract).
        let options = unsafe { SegOptions::read(options)? };
        // The lengths are checked before anything is copied.
        // SAFETY: both models are not NULL, so their lengths in readable bytes (the contract).
        let e = read_model_bytes(unsafe { caller_slice(encoder_data, encoder_len, "encoder_data")? }, options.max_model_bytes)
            .map_err(|e| e.context("encoder"))?;
        // SAFETY: as above.
        let d = read_model_bytes(unsafe { caller_slice(decoder_data, decoder_len, "decoder_data")? }, options.max_model_bytes)
            .map_err(|e| e.context("decoder"))?;
        let sam = Sam2Segmenter::from_memory(e, d, options)?;
        // SAFETY: not NULL, so writable (the contract).
        unsafe { out_session.write(register(Handle::Sam2(Box::new(sam)))) };
        Ok(())
    })
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
    guard(|| {
        let control = call_control(control)?;
        crate::control::scope(control, || {
            let handle = lookup(session)?;
            let sam = handle.sam2()?;
            if image.is_null() {
                return Err(Error::null("image"));
            }
            // SAFETY: not NULL, and describes readable pixels (the contract).
            let view = unsafe { (*image).view(sam.options().max_pixels)? };
            let (pre_ms, ms) = sam.set_image(&view)?;
            if !out_encoder_ms.is_null() {
                // SAFETY: not NULL, so writable (the contract).
                unsafe { out_encoder_ms.write(pre_ms + ms) };
            }
            Ok(())
        })
    })
}

/// Forgets the cached image embedding and the previous mask of a SAM2 session, and cancels an
/// encode in flight (its `seg_sam2_set_image` returns `SEG_CANCELLED`).
///
/// # Safety
/// Any value may be passed as `session`.
#[no_mangle]
pub unsafe extern "C" fn seg_sam2_reset(session: *mut SegSession) -> SegStatus {
    guard(|| {
        let handle = lookup(session)?;
        handle.sam2()?.reset();
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
    guard(|| {
        let control = call_control(control)?;
        crate::control::scope(control, || {
            let handle = lookup(session)?;
            let sam = handle.sam2()?;
            if out_mask.is_null() {
                return Err(Error::null("out_mask"));
            }
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
            let prompt = unsafe { prompt_from(points, n_points, bbox, mask_input, mask_input_len, flags, lw * lh)? };
            // SAFETY: not NULL, and describes readable pixels (the contract).
            let view = if image.is_null() { None } else { Some(unsafe { (*image).view(sam.options().max_pixels)? }) };
            // SAFETY: not NULL, and describes writable rows (the contract).
            let mut mask = unsafe { (*out_mask).target()? };
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
                let mut out = *r;
                out.chosen_index = run.chosen as i32;
                out.num_masks = run.scores.len() as i32;
                out.encoder_reused = run.stats.encoder_reused as u32;
                out.scores = [0.0; 4];
                for (d, s) in out.scores.iter_mut().zip(&run.scores) {
                    *d = *s;
                }
                out.encoder_ms = run.stats.encoder_preprocess_ms + run.stats.encoder_ms;
                out.decoder_ms = run.stats.decoder_ms;
                out.postprocess_ms = run.stats.postprocess_ms;
                out.low_res_width = run.low_res_size.0 as i32;
                out.low_res_height = run.low_res_size.1 as i32;
                if !r.low_res_logits.is_null() {
                    // SAFETY: not NULL, so `low_res_len` >= lw * lh writable floats (checked above).
                    unsafe { std::slice::from_raw_parts_mut(r.low_res_logits, run.low_res.len()) }.copy_from_slice(&run.low_res);
                }
                // SAFETY: `result_size` bytes of `out_result`, checked by `out_size`.
                unsafe { write_versioned(&out, out_result, result_size) };
            }
            Ok(())
        })
    })
}

/// The prompt of a `seg_run_sam2_points` call: points, box, the caller's mask input and the
/// refinement flag.
///
/// # Safety
/// As for `seg_run_sam2_points`.
unsafe fn prompt_from(
    points: *const SegPoint,
    n_points: usize,
    bbox: *const SegBox,
    mask_input: *const f32,
    mask_input_len: usize,
    flags: u32,
    low_res_len: usize,
) -> crate::error::Result<Prompt> {
    if n_points > crate::sam2::MAX_POINTS {
        return Err(Error::invalid(format!("{n_points} points: at most {} are accepted", crate::sam2::MAX_POINTS)));
    }
    // SAFETY: `n_points` > 0 only with `points` not NULL (checked by the caller) and valid for them.
    let pts = unsafe { caller_slice(points, n_points, "points")? };
    let mask_input = if mask_input.is_null() {
        if mask_input_len != 0 {
            return Err(Error::null("mask_input (mask_input_len is not 0)"));
        }
        None
    } else {
        if mask_input_len != low_res_len {
            return Err(Error::invalid(format!(
                "mask_input_len is {mask_input_len}: mask_input must hold the {low_res_len} low-res logits an earlier call returned"
            )));
        }
        // SAFETY: not NULL, so `mask_input_len` readable floats (the contract).
        Some(unsafe { caller_slice(mask_input, mask_input_len, "mask_input")? }.to_vec())
    };
    Ok(Prompt {
        points: pts.iter().map(|p| Point { x: p.x, y: p.y, label: p.label }).collect(),
        // SAFETY: NULL or a readable `SegBox` (the contract).
        bbox: unsafe { bbox.as_ref() }.map(|b| BoxPrompt { x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2 }),
        refine: flags & SEG_SAM2_REFINE != 0,
        mask_input,
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
    guard(|| {
        let control = call_control(control)?;
        crate::control::scope(control, || {
            let handle = lookup(session)?;
            let sam = handle.sam2()?;
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
            let mut list = Vec::with_capacity(n_prompts);
            for (i, r) in records.iter().enumerate() {
                let bad = |e: Error| e.context(format!("prompt {i}"));
                if r.points.is_null() && r.n_points > 0 {
                    return Err(bad(Error::null("points (n_points is not 0)")));
                }
                if r.has_box > 1 || r.reserved != 0 {
                    return Err(bad(Error::invalid(format!(
                        "has_box is {} and reserved {}: has_box must be 0 or 1, reserved 0",
                        r.has_box, r.reserved
                    ))));
                }
                let bbox = (r.has_box == 1).then_some(&r.bbox);
                // SAFETY: the prompt's points are NULL (none) or valid for `n_points` (the contract).
                list.push(
                    unsafe {
                        prompt_from(r.points, r.n_points, bbox.map_or(std::ptr::null(), |b| b as *const SegBox), std::ptr::null(), 0, 0, 0)
                    }
                    .map_err(bad)?,
                );
            }
            // SAFETY: `n_prompts` readable masks (the contract).
            let descs = unsafe { caller_slice(out_masks, n_prompts, "out_masks")? };
            // SAFETY: not NULL, and describes readable pixels (the contract).
            let view = if image.is_null() { None } else { Some(unsafe { (*image).view(sam.options().max_pixels)? }) };
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
            let s = &run.stats;
            let info = SegSam2PromptsInfo {
                struct_size: 0, // the caller's is kept
                batched: (s.batch > 1) as u32,
                batch: s.batch as u32,
                prompts: s.prompts as u32,
                decoder_runs: s.decoder_runs as u32,
                encoder_reused: s.encoder_reused as u32,
                encoder_ms: s.encoder_ms,
                decoder_ms: s.decoder_ms,
                postprocess_ms: s.postprocess_ms,
            };
            // SAFETY: `info_size` bytes of `out_info`, checked by `out_size`.
            unsafe { write_versioned(&info, out_info, info_size) };
            Ok(())
        })
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
    guard(|| unsafe { fill_defaults(options, SegEverythingOptions::defaults(), "options") })
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
    guard(|| {
        let control = call_control(control)?;
        crate::control::scope(control, || {
            let handle = lookup(session)?;
            let sam = handle.sam2()?;
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
            // SAFETY: not NULL, and describes readable pixels (the contract).
            let view = if image.is_null() { None } else { Some(unsafe { (*image).view(sam.options().max_pixels)? }) };
            let (w, h) = match &view {
                Some(v) => (v.width(), v.height()),
                None => sam.cached_image_size().ok_or_else(|| Error::invalid("no image: pass one, or call seg_sam2_set_image first"))?,
            };
            // SAFETY: NULL or a readable `SegLabelImage` (the contract).
            let labels = match unsafe { out_labels.as_ref() } {
                None => None,
                Some(l) => {
                    if l.data.is_null() {
                        return Err(Error::null("label image data"));
                    }
                    if (l.width, l.height) != (w as i32, h as i32) {
                        return Err(Error::invalid(format!(
                            "the label image is {}x{} but the image is {w}x{h}: it must have the image's size",
                            l.width, l.height
                        )));
                    }
                    let stride = if l.stride == 0 { w } else { usize::try_from(l.stride).unwrap_or(0) };
                    if stride < w {
                        return Err(Error::invalid(format!("label image stride {} is smaller than its width {w}", l.stride)));
                    }
                    let len = stride
                        .checked_mul(h - 1)
                        .and_then(|v| v.checked_add(w))
                        .filter(|v| v.checked_mul(2).is_some_and(|b| b <= isize::MAX as usize))
                        .ok_or_else(|| Error::invalid("label image stride x height overflows the address space"))?;
                    // SAFETY: `height` rows of `stride` values are writable (the contract); `len` ends at
                    // the last row's `width` values, and its bytes fit in isize.
                    Some((unsafe { std::slice::from_raw_parts_mut(l.data, len) }, stride))
                }
            };
            let (result, cached) = sam.everything(view.as_ref(), &options)?;
            let n = result.objects.len();
            if !out_count.is_null() {
                // SAFETY: not NULL, so writable (the contract).
                unsafe { out_count.write(n) };
            }
            if !out_objects.is_null() && objects_capacity < n {
                return Err(Error::new(
                    ErrorKind::BufferTooSmall,
                    format!("out_objects holds {objects_capacity} records, {n} objects were found (the count is in *out_count)"),
                ));
            }
            if let Some((labels, stride)) = labels {
                result.paint(labels, stride);
            }
            if !out_objects.is_null() {
                let records: Vec<SegEverythingObject> = result
                    .objects
                    .iter()
                    .map(|o| SegEverythingObject {
                        id: o.id,
                        mask_index: o.mask_index as i32,
                        x0: o.bbox[0] as i32,
                        y0: o.bbox[1] as i32,
                        x1: o.bbox[2] as i32,
                        y1: o.bbox[3] as i32,
                        area: o.area,
                        predicted_iou: o.predicted_iou,
                        stability_score: o.stability_score,
                        point_x: o.point[0],
                        point_y: o.point[1],
                    })
                    .collect();
                // SAFETY: `objects_capacity` >= n records of `stride` bytes (checked above and the contract).
                unsafe { write_records(out_objects, stride, &records) };
            }
            {
                let s = &result.stats;
                let info = SegEverythingInfo {
                    struct_size: 0, // the caller's is kept
                    batched: (s.batch > 1) as u32,
                    batch: s.batch as u32,
                    prompts: s.prompts as u32,
                    decoder_runs: s.decoder_runs as u32,
                    masks_decoded: s.masks_decoded as u32,
                    after_iou: s.after_iou as u32,
                    after_stability: s.after_stability as u32,
                    after_nms: s.after_nms as u32,
                    objects: n as u32,
                    dropped: result.dropped as u32,
                    encoder_reused: (s.encoder_reused || cached) as u32,
                    cached: cached as u32,
                    reserved: 0,
                    encoder_ms: if cached { 0.0 } else { s.encoder_ms },
                    decoder_ms: if cached { 0.0 } else { s.decoder_ms },
                    postprocess_ms: if cached { 0.0 } else { s.postprocess_ms },
                };
                // SAFETY: `info_size` bytes of `out_info`, checked by `out_size`.
                unsafe { write_versioned(&info, out_info, info_size) };
            }
            Ok(())
        })
    })
}
