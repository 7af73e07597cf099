//! Models given in memory with their side files (ONNX external data): `SegExternalFile` and
//! `seg_create_from_memory_with_data`, `seg_create_sam2_from_memory_with_data`, and the creation
//! from memory that these and the plain `seg_create_from_memory`, `seg_create_sam2_from_memory`
//! share (`create_unet`, `create_sam2`). A model read from a file needs none of this: its side files
//! are read beside it (`engine::external_data`).

use std::ffi::c_char;
use std::sync::Arc;

use crate::engine::external_data::ExternalData;
use crate::engine::read_model_bytes;
use crate::error::{Error, Result};
use crate::options::Options;
use crate::sam2::Sam2Segmenter;
use crate::unet::UnetSegmenter;

use super::boundary::{caller_slice, utf8_str};
use super::enums::SegStatus;
use super::handles::{Handle, SegSession};
use super::options::SegOptions;
use super::prologue::create;
use super::versioned::{read_records, record_array};

/// One side file of a model given in memory (ONNX external data: the weights of models over 2 GB,
/// and of many Hub exports, `model.onnx` + `model.onnx_data`). Passed as an array with the caller's
/// `sizeof(SegExternalFile)` (`file_size`), so the record can grow: a newer host's longer record is
/// accepted when the bytes this library does not know are zero.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegExternalFile {
    /// UTF-8 location of the file exactly as the model names it (its initializers' external data
    /// `location`, e.g. "model.onnx_data"): relative and inside the model's folder.
    pub location: *const c_char,
    /// The file's `len` bytes, copied during the call (the caller keeps ownership).
    pub data: *const u8,
    pub len: usize,
}

/// A caller's array of side files: `n` records of `size` bytes (its `sizeof(SegExternalFile)`).
#[derive(Clone, Copy)]
pub(super) struct SideFiles {
    pub records: *const SegExternalFile,
    pub size: usize,
    pub n: usize,
}

/// Reads the records of `files` into the side files of `model`: every location
/// the model names must be given, once, and nothing else; each at most `options.max_model_bytes`.
///
/// # Safety
/// `files.records` NULL (with `n` 0) or `n` readable records; each `location` NUL-terminated,
/// each `data` `len` readable bytes.
unsafe fn side_files(model: &[u8], files: SideFiles, options: &Options) -> Result<Arc<ExternalData>> {
    let SideFiles { records: files, size: file_size, n: n_files } = files;
    if files.is_null() && n_files > 0 {
        return Err(Error::null("files (n_files is not 0)"));
    }
    let mut given: Vec<(String, Vec<u8>)> = Vec::new();
    if n_files > 0 {
        let stride = record_array::<SegExternalFile>(file_size, n_files, "SegExternalFile")?;
        // SAFETY: `n_files` records of `file_size` readable bytes (the contract), checked above.
        let records = unsafe { read_records(files, stride, n_files, "SegExternalFile")? };
        for (i, r) in records.iter().enumerate() {
            // SAFETY: NUL-terminated (the contract).
            let location = unsafe { utf8_str(r.location, "SegExternalFile.location") }.map_err(|e| e.context(format!("file {i}")))?;
            if given.iter().any(|(l, _)| *l == location) {
                return Err(Error::invalid(format!("file {i}: the external data '{location}' is given twice")));
            }
            if r.data.is_null() {
                return Err(Error::null("SegExternalFile.data").context(format!("file {i}")));
            }
            // The length is checked before anything is copied.
            // SAFETY: `len` readable bytes (the contract), only read during the call.
            let bytes = read_model_bytes(unsafe { caller_slice(r.data, r.len, "SegExternalFile.data")? }, options.max_model_bytes)
                .map_err(|e| e.context(format!("external data '{location}'")))?;
            given.push((location.to_string(), bytes));
        }
    }
    Ok(Arc::new(ExternalData::given(model, given, options.max_model_bytes)?))
}

/// Like `seg_create_from_memory`, for a model that keeps weights in side files (ONNX external data):
/// `files` holds `n_files` records (`file_size` = `sizeof(SegExternalFile)`), one per side file the
/// model names; every one must be given, and nothing else (`SEG_INVALID_ARGUMENT` for a file the
/// model does not name, `SEG_MODEL_INVALID` naming one that is missing). Model and files are copied;
/// the caller keeps ownership. `seg_create_from_memory` refuses such a model (`SEG_MODEL_INVALID`,
/// naming its side file); `seg_create` reads the side files beside the model file.
///
/// # Safety
/// `model_data` must point to `model_len` readable bytes; `files` NULL (with `n_files` 0) or
/// `n_files` records of `file_size` readable bytes, each `location` NUL-terminated and each `data`
/// `len` readable bytes; `options` NULL or a valid `SegOptions`; `out_session` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_create_from_memory_with_data(
    model_data: *const u8,
    model_len: usize,
    files: *const SegExternalFile,
    file_size: usize,
    n_files: usize,
    options: *const SegOptions,
    out_session: *mut *mut SegSession,
) -> SegStatus {
    let files = SideFiles { records: files, size: file_size, n: n_files };
    // SAFETY: as the contract states (forwarded).
    unsafe { create_unet(model_data, model_len, Some(files), options, out_session) }
}

/// Like `seg_create_sam2_from_memory`, with the side files of each model (see
/// `seg_create_from_memory_with_data`): `encoder_files` for the encoder, `decoder_files` for the
/// decoder (NULL and 0 for a model without side files), records of `file_size` bytes.
///
/// # Safety
/// As for `seg_create_sam2_from_memory` and `seg_create_from_memory_with_data`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn seg_create_sam2_from_memory_with_data(
    encoder_data: *const u8,
    encoder_len: usize,
    encoder_files: *const SegExternalFile,
    n_encoder_files: usize,
    decoder_data: *const u8,
    decoder_len: usize,
    decoder_files: *const SegExternalFile,
    n_decoder_files: usize,
    file_size: usize,
    options: *const SegOptions,
    out_session: *mut *mut SegSession,
) -> SegStatus {
    let files = (
        SideFiles { records: encoder_files, size: file_size, n: n_encoder_files },
        SideFiles { records: decoder_files, size: file_size, n: n_decoder_files },
    );
    let (encoder, decoder) = ((encoder_data, encoder_len), (decoder_data, decoder_len));
    // SAFETY: as the contract states (forwarded).
    unsafe { create_sam2(encoder, decoder, Some(files), options, out_session) }
}

/// A UNet session from the model bytes at `model` (`len` of them), with its side files when `files`
/// is given: `seg_create_from_memory` and `seg_create_from_memory_with_data`.
///
/// # Safety
/// As for `seg_create_from_memory_with_data` (`files` None: no side files read).
pub(super) unsafe fn create_unet(
    model: *const u8,
    len: usize,
    files: Option<SideFiles>,
    options: *const SegOptions,
    out_session: *mut *mut SegSession,
) -> SegStatus {
    let args = || if model.is_null() { Err(Error::null("model_data")) } else { Ok(()) };
    let make = |()| {
        // SAFETY: NULL or a valid `SegOptions` (the contract).
        let options = unsafe { SegOptions::read(options)? };
        // The length is checked before anything is copied.
        // SAFETY: not NULL, so `len` readable bytes (the contract), only read during the call.
        let bytes = read_model_bytes(unsafe { caller_slice(model, len, "model_data")? }, options.max_model_bytes)?;
        let side_files = match files {
            // SAFETY: as the contract states for `files`.
            Some(files) => unsafe { side_files(&bytes, files, &options)? },
            None => Arc::default(),
        };
        Ok(Handle::Unet(Box::new(UnetSegmenter::from_memory_with(bytes, options, side_files)?)))
    };
    // SAFETY: `out_session` NULL or writable (the contract).
    unsafe { create(out_session, args, make) }
}

/// A SAM2 session from an encoder's and a decoder's bytes (pointer and length each), with each
/// model's side files when `files` is given: `seg_create_sam2_from_memory` and
/// `seg_create_sam2_from_memory_with_data`.
///
/// # Safety
/// As for `seg_create_sam2_from_memory_with_data` (`files` None: no side files read).
pub(super) unsafe fn create_sam2(
    (encoder_data, encoder_len): (*const u8, usize),
    (decoder_data, decoder_len): (*const u8, usize),
    files: Option<(SideFiles, SideFiles)>,
    options: *const SegOptions,
    out_session: *mut *mut SegSession,
) -> SegStatus {
    let args = || match (encoder_data.is_null(), decoder_data.is_null()) {
        (false, false) => Ok(()),
        (encoder, _) => Err(Error::null(if encoder { "encoder_data" } else { "decoder_data" })),
    };
    let make = |()| {
        // SAFETY: NULL or a valid `SegOptions` (the contract).
        let options = unsafe { SegOptions::read(options)? };
        let max = options.max_model_bytes;
        // The lengths are checked before anything is copied.
        // SAFETY: both models are not NULL, so their lengths in readable bytes (the contract).
        let e =
            read_model_bytes(unsafe { caller_slice(encoder_data, encoder_len, "encoder_data")? }, max).map_err(|e| e.context("encoder"))?;
        // SAFETY: as above.
        let d =
            read_model_bytes(unsafe { caller_slice(decoder_data, decoder_len, "decoder_data")? }, max).map_err(|e| e.context("decoder"))?;
        let sam = match files {
            None => Sam2Segmenter::from_memory(e, d, options)?,
            Some((encoder_files, decoder_files)) => {
                // SAFETY: as the contract states for the file arrays.
                let encoder_files = unsafe { side_files(&e, encoder_files, &options) }.map_err(|e| e.context("encoder"))?;
                // SAFETY: as above.
                let decoder_files = unsafe { side_files(&d, decoder_files, &options) }.map_err(|e| e.context("decoder"))?;
                Sam2Segmenter::from_memory_with(e, d, options, [encoder_files, decoder_files])?
            }
        };
        Ok(Handle::Sam2(Box::new(sam)))
    };
    // SAFETY: `out_session` NULL or writable (the contract).
    unsafe { create(out_session, args, make) }
}
