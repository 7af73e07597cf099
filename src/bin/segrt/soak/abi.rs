//! The soak's calls go through the C ABI, as a host's do (C, C++, .NET, HALCON): options as a
//! `SegOptions`, pixels and masks as descriptors, handles freed with `seg_free`, failures read with
//! `seg_last_error`. A leak or a handle mix-up at the boundary (a last-error string per thread, a
//! handle table entry, a track that is never released) shows in the soak's memory as it would in a
//! station's process.

use std::ffi::{c_char, CString};
use std::path::Path;
use std::ptr::{null, null_mut};

use segrt::ffi::*;
use segrt::options::{CacheMode, Options};

use crate::CliResult;

/// A call that did not return `SEG_OK`: its status and `seg_last_error`'s message.
#[derive(Debug, Clone)]
pub struct CallError {
    pub status: SegStatus,
    pub message: String,
}

pub type CallResult<T = ()> = Result<T, CallError>;

fn check(status: SegStatus) -> CallResult {
    if status == SegStatus::SEG_OK {
        Ok(())
    } else {
        Err(CallError { status, message: last_error() })
    }
}

/// The message of the last failed call on this thread.
fn last_error() -> String {
    // SAFETY: NULL with capacity 0 asks for the size only.
    let size = unsafe { seg_last_error(null_mut(), 0) };
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: `buf` holds `buf.len()` writable bytes.
    unsafe { seg_last_error(buf.as_mut_ptr().cast::<c_char>(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn c_path(path: &Path, what: &str) -> CliResult<CString> {
    let text = path.to_str().ok_or_else(|| format!("{what} {}: the C ABI takes UTF-8 paths", path.display()))?;
    Ok(CString::new(text).map_err(|_| format!("{what} {}: a NUL inside the path", path.display()))?)
}

/// A host's `SegOptions`: the defaults (`seg_options_default`), then the fields the soak's flags set
/// (provider, policy, GPU settings, threads, pool, memory budget, cache, arena, normalisation, output).
/// The strings it points to live beside it.
pub struct HostOptions {
    raw: SegOptions,
    _strings: Vec<CString>,
}

impl HostOptions {
    pub fn new(o: &Options) -> CliResult<HostOptions> {
        let mut raw = SegOptions { struct_size: size_of::<SegOptions>() as u32, ..SegOptions::defaults() };
        // SAFETY: a live struct whose struct_size is its own size.
        check(unsafe { seg_options_default(&mut raw) }).map_err(|e| e.message)?;
        let mut strings = Vec::new();
        let mut keep = |s: CString| {
            let p = s.as_ptr();
            strings.push(s);
            p
        };
        raw.provider = SegProvider::from(o.provider) as i32;
        raw.device_id = o.device_id;
        raw.provider_policy = SegProviderPolicy::from(o.provider_policy) as i32;
        raw.intra_threads = i32::try_from(o.intra_threads).map_err(|_| "--intra-threads: too many")?;
        raw.max_sessions = i32::try_from(o.max_sessions).map_err(|_| "--max-sessions: too many")?;
        raw.max_memory_bytes = o.max_memory_bytes;
        // A normalisation left at the defaults lets the model's metadata decide, as for any C host.
        (raw.scale, raw.mean, raw.std) = (o.scale, o.mean, o.std);
        if let Some(name) = &o.output_name {
            raw.output_name = keep(CString::new(name.as_str()).map_err(|_| "--output: a NUL inside the name")?);
        }
        if let Some(ort) = &o.ort_path {
            raw.ort_path = keep(c_path(ort, "--ort")?);
        }
        match &o.cache {
            CacheMode::Off => raw.cache_mode = SegCacheMode::SEG_CACHE_OFF as i32,
            CacheMode::BesideModel => raw.cache_mode = SegCacheMode::SEG_CACHE_BESIDE_MODEL as i32,
            CacheMode::Dir(dir) => {
                raw.cache_mode = SegCacheMode::SEG_CACHE_DIR as i32;
                raw.cache_dir = keep(c_path(dir, "--cache-dir")?);
            }
        }
        raw.arena = SegArena::from(o.arena) as u32;
        let gpu = &o.gpu;
        raw.gpu_mem_limit = gpu.mem_limit;
        raw.conv_search = SegConvSearch::from(gpu.conv_search) as i32;
        raw.require_all_nodes = gpu.require_all_nodes as u32;
        if let Some(dir) = &gpu.trt_cache_dir {
            raw.trt_cache_dir = keep(c_path(dir, "--trt-cache")?);
        }
        raw.trt_fp16 = gpu.trt_fp16 as u32;
        // SegDecoderProvider's values are SegProvider's plus one; 0 = where `provider` says.
        raw.decoder_provider = gpu.decoder_provider.map_or(0, |p| SegProvider::from(p) as i32 + 1);
        raw.trt_profiles = SegTrtProfiles::from(gpu.trt_profiles) as i32;
        Ok(HostOptions { raw, _strings: strings })
    }
}

/// A session handle (UNet, SAM2 pair or video model), released with `seg_free`.
pub struct Session(*mut SegSession);

// SAFETY: segrt's handles may be used and freed from any thread (the C ABI's thread-safety contract).
unsafe impl Send for Session {}
// SAFETY: as above; every call on a handle is safe from several threads at once.
unsafe impl Sync for Session {}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: a handle this process created and frees once.
        unsafe { seg_free(self.0) };
    }
}

impl Session {
    fn made(status: SegStatus, handle: *mut SegSession) -> CallResult<Session> {
        check(status).map(|()| Session(handle))
    }

    pub fn unet(model: &Path, options: &HostOptions) -> CliResult<CallResult<Session>> {
        let path = c_path(model, "model")?;
        let mut h = null_mut();
        // SAFETY: a NUL-terminated path, valid options, a writable out-pointer.
        Ok(Session::made(unsafe { seg_create(path.as_ptr(), &options.raw, &mut h) }, h))
    }

    pub fn sam2(encoder: &Path, decoder: &Path, options: &HostOptions) -> CliResult<CallResult<Session>> {
        let (e, d) = (c_path(encoder, "encoder")?, c_path(decoder, "decoder")?);
        let mut h = null_mut();
        // SAFETY: as for `unet`.
        Ok(Session::made(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &options.raw, &mut h) }, h))
    }

    pub fn video(dir: &Path, options: &HostOptions) -> CliResult<CallResult<Session>> {
        let path = c_path(dir, "video models folder")?;
        let mut h = null_mut();
        // SAFETY: as for `unet`.
        Ok(Session::made(unsafe { seg_create_sam2_video(path.as_ptr(), &options.raw, &mut h) }, h))
    }

    /// `seg_session_info`'s JSON (the provider in use, the pool, the model cache).
    pub fn info(&self) -> String {
        let mut size = 0usize;
        // SAFETY: a pure size query (NULL, 0) with a writable `out_len`.
        unsafe { seg_session_info(self.0, null_mut(), 0, &mut size) };
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: `buf` holds `buf.len()` writable bytes.
        unsafe { seg_session_info(self.0, buf.as_mut_ptr().cast::<c_char>(), buf.len(), &mut size) };
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }

    pub fn run_unet(&self, image: &Rgb, mask: &mut [u8]) -> CallResult {
        // SAFETY: the descriptors cover `image` and `mask`, which outlive the call.
        check(unsafe { seg_run_unet(self.0, &image.desc(), &image.mask(mask), null_mut(), 0, null_mut(), null_mut()) })
    }

    pub fn set_image(&self, image: &Rgb) -> CallResult {
        // SAFETY: as for `run_unet`.
        check(unsafe { seg_sam2_set_image(self.0, &image.desc(), null_mut(), null_mut()) })
    }

    /// Clicks and/or a box on the image set last (`image` NULL: the cached embedding, as a host's
    /// clicks after `seg_sam2_set_image`).
    pub fn click(&self, size: &Rgb, points: &[SegPoint], bbox: Option<SegBox>, mask: &mut [u8]) -> CallResult {
        let b = bbox.as_ref().map_or(null(), |b| b as *const SegBox);
        // SAFETY: `points` and the box outlive the call; the mask descriptor covers `mask`.
        check(unsafe {
            seg_run_sam2_points(
                self.0,
                null(),
                points.as_ptr(),
                points.len(),
                b,
                null(),
                0,
                0,
                &size.mask(mask),
                null_mut(),
                null_mut(),
                null_mut(),
            )
        })
    }

    /// Many boxes on the image set last, one mask each (`masks`: one buffer of the image's size per box).
    pub fn boxes(&self, size: &Rgb, boxes: &[SegBox], masks: &mut [Vec<u8>]) -> CallResult {
        let prompts: Vec<SegSam2Prompt> =
            boxes.iter().map(|b| SegSam2Prompt { points: null(), n_points: 0, bbox: *b, has_box: 1, reserved: 0 }).collect();
        let outs: Vec<SegMask> = masks.iter_mut().map(|m| size.mask(m)).collect();
        // SAFETY: `prompts` and `outs` hold `boxes.len()` records each, the masks' buffers outlive the call.
        check(unsafe {
            seg_sam2_segment_prompts(
                self.0,
                null(),
                prompts.as_ptr(),
                size_of::<SegSam2Prompt>(),
                prompts.len(),
                outs.as_ptr(),
                null_mut(),
                null_mut(),
                null_mut(),
            )
        })
    }
}

/// A track made from a video session, released with `seg_track_free`.
pub struct Track(*mut SegTrack);

// SAFETY: as for `Session`: tracks may be used and freed from any thread.
unsafe impl Send for Track {}

impl Drop for Track {
    fn drop(&mut self) {
        // SAFETY: a track this process created and frees once.
        unsafe { seg_track_free(self.0) };
    }
}

impl Track {
    pub fn new(video: &Session) -> CallResult<Track> {
        let mut t = null_mut();
        // SAFETY: a live video handle, default options, a writable out-pointer.
        check(unsafe { seg_track_create(video.0, null(), &mut t) }).map(|()| Track(t))
    }

    /// Adds the first frame and clicks each object on it (one point per object, its id = index + 1).
    pub fn start(&self, frame: &Rgb, clicks: &[SegPoint], masks: &mut [Vec<u8>]) -> CallResult {
        // SAFETY: a live track and a descriptor covering `frame`.
        check(unsafe { seg_track_add_frame(self.0, &frame.desc(), null_mut(), null_mut(), null_mut()) })?;
        for (k, click) in clicks.iter().enumerate() {
            let outs: Vec<SegMask> = masks.iter_mut().map(|m| frame.mask(m)).collect();
            let mut count = 0usize;
            // SAFETY: one point; `outs.len()` masks of the frame's size; a writable count.
            check(unsafe {
                seg_track_add_prompt(
                    self.0,
                    -1,
                    k as i32 + 1,
                    click,
                    1,
                    null(),
                    null_mut(),
                    0,
                    outs.as_ptr(),
                    outs.len(),
                    &mut count,
                    null_mut(),
                    null_mut(),
                )
            })?;
        }
        Ok(())
    }

    /// Streams the next frame: adds it and tracks every object on it.
    pub fn next(&self, frame: &Rgb, masks: &mut [Vec<u8>]) -> CallResult {
        let outs: Vec<SegMask> = masks.iter_mut().map(|m| frame.mask(m)).collect();
        let mut count = 0usize;
        // SAFETY: a descriptor covering `frame`; `outs.len()` masks of its size; a writable count.
        check(unsafe {
            seg_track_next(self.0, &frame.desc(), null_mut(), 0, outs.as_ptr(), outs.len(), &mut count, null_mut(), null_mut())
        })
    }
}

/// A decoded 8-bit RGB picture, as a camera hands it over.
pub struct Rgb {
    pub pixels: Vec<u8>,
    pub width: usize,
    pub height: usize,
}

impl Rgb {
    fn desc(&self) -> SegImage {
        SegImage {
            data: self.pixels.as_ptr(),
            width: self.width as i32,
            height: self.height as i32,
            stride: 0,
            format: SegPixelFormat::SEG_FORMAT_RGB24 as i32,
            plane1: null(),
            plane2: null(),
        }
    }

    /// A mask descriptor of this picture's size over `buf` (at least width x height bytes).
    fn mask(&self, buf: &mut [u8]) -> SegMask {
        debug_assert!(buf.len() >= self.width * self.height);
        SegMask { data: buf.as_mut_ptr(), width: self.width as i32, height: self.height as i32, stride: 0 }
    }

    pub fn mask_buffer(&self) -> Vec<u8> {
        vec![0; self.width * self.height]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's default options reach the C ABI as `seg_options_default` writes them: the
    /// conversion sets nothing a host would not.
    #[test]
    fn default_options_are_the_c_defaults() {
        let host = HostOptions::new(&Options::default()).unwrap_or_else(|e| panic!("{e}"));
        let mut c = SegOptions { struct_size: size_of::<SegOptions>() as u32, ..SegOptions::defaults() };
        // SAFETY: a live struct whose struct_size is its own size.
        unsafe { seg_options_default(&mut c) };
        // The budgets: 0 means the default in C; the library states the default itself.
        let o = Options::default();
        c.max_memory_bytes = o.max_memory_bytes;
        assert_eq!(format!("{:?}", host.raw), format!("{c:?}"));
    }

    #[test]
    fn gpu_and_cache_settings_reach_the_c_fields() {
        use segrt::options::Provider;
        let mut o = Options { provider: Provider::Cuda, device_id: 1, ..Options::default() };
        o.gpu.decoder_provider = Some(Provider::Cpu);
        o.gpu.mem_limit = 1 << 30;
        o.cache = CacheMode::Dir("/tmp/segrt-cache".into());
        let host = HostOptions::new(&o).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(host.raw.provider, SegProvider::SEG_PROVIDER_CUDA as i32);
        assert_eq!(host.raw.device_id, 1);
        assert_eq!(host.raw.decoder_provider, SegDecoderProvider::SEG_DECODER_PROVIDER_CPU as i32);
        assert_eq!(host.raw.gpu_mem_limit, 1 << 30);
        assert_eq!(host.raw.cache_mode, SegCacheMode::SEG_CACHE_DIR as i32);
        assert!(!host.raw.cache_dir.is_null());
    }
}
