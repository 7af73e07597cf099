//! Helpers for tests that drive segrt through its C ABI, as a host program would.
#![allow(dead_code)]

use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::ptr;

use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
pub fn model(name: &str) -> PathBuf {
    repo().join("models").join(name)
}
pub fn sample(name: &str) -> PathBuf {
    repo().join("models/samples").join(name)
}
pub fn samples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("models/samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png") && !p.to_string_lossy().ends_with("_gt.png"))
        .collect();
    v.sort();
    v
}

pub struct Rgb {
    pub w: usize,
    pub h: usize,
    pub data: Vec<u8>,
}
pub fn load_rgb(p: &Path) -> Rgb {
    let img = image::open(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).to_rgb8();
    Rgb { w: img.width() as usize, h: img.height() as usize, data: img.into_raw() }
}
pub fn load_gray(p: &Path) -> Vec<u8> {
    image::open(p).unwrap().to_luma8().into_raw()
}
pub fn gt_for(p: &Path) -> Vec<u8> {
    let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
    load_gray(&p.with_file_name(format!("{stem}_gt.png")))
}

pub fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// The calling thread's last error message.
pub fn last_error() -> String {
    let n = unsafe { seg_last_error(ptr::null_mut(), 0) };
    let mut buf = vec![0 as c_char; n];
    unsafe { seg_last_error(buf.as_mut_ptr(), n) };
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

pub struct Session(pub *mut SegSession);
unsafe impl Send for Session {}
unsafe impl Sync for Session {}
impl Drop for Session {
    fn drop(&mut self) {
        unsafe { seg_free(self.0) };
    }
}

/// `SegOptions o = { sizeof o }; seg_options_default(&o);`, as a C host writes it.
pub fn default_options() -> SegOptions {
    // SAFETY: every field of SegOptions is an integer, a float or a nullable pointer: all-zero is valid.
    let mut o: SegOptions = unsafe { std::mem::zeroed() };
    o.struct_size = std::mem::size_of::<SegOptions>() as u32;
    assert_eq!(unsafe { seg_options_default(&mut o) }, SegStatus::SEG_OK, "{}", last_error());
    o
}

pub fn create(model_path: &Path, options: Option<&SegOptions>) -> Result<Session, (SegStatus, String)> {
    let path = cstr(model_path.to_str().unwrap());
    let mut s: *mut SegSession = ptr::null_mut();
    let st = unsafe { seg_create(path.as_ptr(), options.map_or(ptr::null(), |o| o as *const _), &mut s) };
    if st == SegStatus::SEG_OK {
        Ok(Session(s))
    } else {
        assert!(s.is_null(), "out_session written on failure");
        Err((st, last_error()))
    }
}

pub fn image_desc(data: &[u8], w: usize, h: usize, stride: i32, format: SegPixelFormat) -> SegImage {
    SegImage {
        data: data.as_ptr(),
        width: w as i32,
        height: h as i32,
        stride,
        format: format as i32,
        plane1: ptr::null(),
        plane2: ptr::null(),
    }
}

pub struct RunOut {
    pub mask: Vec<u8>,
    pub prob: Vec<f32>,
    pub info: SegRunInfo,
}

pub fn run(s: &Session, img: &SegImage) -> Result<RunOut, (SegStatus, String)> {
    let (w, h) = (img.width as usize, img.height as usize);
    let mut mask = vec![0u8; w * h];
    let mut prob = vec![0f32; w * h];
    let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let mut info = SegRunInfo { struct_size: std::mem::size_of::<SegRunInfo>() as u32, ..Default::default() };
    let st = unsafe { seg_run_unet(s.0, img, &m, prob.as_mut_ptr(), prob.len(), &mut info, ptr::null_mut()) };
    if st == SegStatus::SEG_OK {
        Ok(RunOut { mask, prob, info })
    } else {
        Err((st, last_error()))
    }
}

pub fn run_rgb(s: &Session, img: &Rgb) -> RunOut {
    run(s, &image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24)).unwrap_or_else(|e| panic!("run failed: {e:?}"))
}

pub fn iou(mask: &[u8], gt: &[u8]) -> f64 {
    let (mut i, mut u) = (0u64, 0u64);
    for (a, b) in mask.iter().zip(gt) {
        let (a, b) = (*a > 127, *b > 127);
        i += (a && b) as u64;
        u += (a || b) as u64;
    }
    if u == 0 {
        1.0
    } else {
        i as f64 / u as f64
    }
}

pub fn agreement(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64
}

pub fn sam2_dir() -> PathBuf {
    repo().join("models/sam2")
}

/// A SAM2 session from an encoder and a decoder in models/sam2, with default options.
pub fn create_sam2(encoder: &str, decoder: &str) -> Result<Session, (SegStatus, String)> {
    create_sam2_with(encoder, decoder, None)
}

/// A SAM2 session from an encoder and a decoder in models/sam2 (`options` None: the defaults).
pub fn create_sam2_with(encoder: &str, decoder: &str, options: Option<&SegOptions>) -> Result<Session, (SegStatus, String)> {
    let (e, d) = (cstr(sam2_dir().join(encoder).to_str().unwrap()), cstr(sam2_dir().join(decoder).to_str().unwrap()));
    let mut s = ptr::null_mut();
    match unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), options.map_or(ptr::null(), |o| o as *const _), &mut s) } {
        SegStatus::SEG_OK => Ok(Session(s)),
        st => Err((st, last_error())),
    }
}

/// A call control (`seg_control_create`), freed on drop; shareable with the thread that cancels.
pub struct Control(pub *mut segrt::ffi::SegCallControl);
unsafe impl Send for Control {}
unsafe impl Sync for Control {}
impl Control {
    pub fn new() -> Self {
        let mut c = ptr::null_mut();
        assert_eq!(unsafe { segrt::ffi::seg_control_create(&mut c) }, SegStatus::SEG_OK, "{}", last_error());
        Control(c)
    }
    /// The pointer, borrowed through the whole struct (a closure capturing `.0` alone is not `Send`).
    pub fn ptr(&self) -> *mut segrt::ffi::SegCallControl {
        self.0
    }
}
impl Drop for Control {
    fn drop(&mut self) {
        assert_eq!(unsafe { segrt::ffi::seg_control_free(self.0) }, SegStatus::SEG_OK);
    }
}

/// `seg_session_info` of a live handle, parsed.
pub fn session_info(session: *mut SegSession) -> serde_json::Value {
    let mut n = 0usize;
    assert_eq!(unsafe { seg_session_info(session, ptr::null_mut(), 0, &mut n) }, SegStatus::SEG_OK);
    let mut buf = vec![0 as c_char; n];
    assert_eq!(unsafe { seg_session_info(session, buf.as_mut_ptr(), n, &mut n) }, SegStatus::SEG_OK);
    serde_json::from_str(&unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy()).unwrap()
}

/// The demo UNet's outputs for a fixed 256x256 input, straight from an ONNX Runtime session (the pool
/// tests compare sessions built in different ways).
pub fn unet_outputs(s: &mut ort::session::Session) -> Vec<f32> {
    let input = ndarray::Array4::<f32>::from_shape_fn((1, 3, 256, 256), |(_, c, y, x)| ((x * 7 + y * 3 + c * 11) % 256) as f32 / 255.0);
    let name = s.inputs()[0].name().to_string();
    let out = s.run(ort::inputs![name => ort::value::Tensor::from_array(input).unwrap()]).unwrap();
    out[0].try_extract_array::<f32>().unwrap().iter().copied().collect()
}

/// Two calls on `pool` at once, each holding its session until both have one: the second finds the
/// first session busy, so the pool builds another. Their `unet_outputs`.
pub fn two_calls_at_once(pool: &segrt::engine::SessionPool) -> Vec<Vec<f32>> {
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|scope| {
        let calls: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    pool.with(|s, _| {
                        barrier.wait(); // both calls hold a session at the same time
                        Ok(unet_outputs(s))
                    })
                    .unwrap()
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    })
}

/// Record sizes and capacities at their extremes, for the calls that write arrays of records:
/// `(record_size, capacity)` pairs around the record's own size, 32-bit limits and the address space.
pub fn extreme_record_sizes(record: usize) -> Vec<(usize, usize)> {
    let sizes = [
        0,
        1,
        record - 1,
        record,
        record + 1,
        2 * record,
        1 << 31,
        1 << 32,
        1 << 62,
        1 << 63,
        usize::MAX / 2,
        usize::MAX / 2 + 1,
        usize::MAX,
    ];
    let capacities = [0, 1, 2, 192, 1 << 32, usize::MAX / record, usize::MAX / record + 1, isize::MAX as usize, usize::MAX];
    sizes.iter().flat_map(|s| capacities.iter().map(move |c| (*s, *c))).collect()
}

/// What a call given `record_size` x `capacity` must do: `Some(false)` refuse it (too small a record,
/// or an array larger than the address space), `Some(true)` accept it where a buffer of `buffer_bytes`
/// honestly holds that array, `None` where no test buffer can (the pair is skipped).
pub fn record_array_expectation(record: usize, record_size: usize, capacity: usize, buffer_bytes: usize) -> Option<bool> {
    match record_size.checked_mul(capacity) {
        _ if record_size < record => Some(false),
        None => Some(false),
        Some(bytes) if bytes > isize::MAX as usize => Some(false),
        Some(bytes) if bytes <= buffer_bytes => Some(true),
        Some(_) => None,
    }
}

/// The side of the reference tests' scenes: 512x512, where the geometric oracle decoder's disc has a
/// radius of 40 pixels.
pub const DISC_SCENE: usize = 512;

/// A gray `DISC_SCENE`-square RGB image with discs of radius 40 of the given colours.
pub fn scene(discs: &[((usize, usize), [u8; 3])]) -> Vec<u8> {
    const N: usize = DISC_SCENE;
    let mut px = vec![128u8; N * N * 3];
    for y in 0..N {
        for x in 0..N {
            for ((cx, cy), colour) in discs {
                if (x as f32 - *cx as f32).powi(2) + (y as f32 - *cy as f32).powi(2) <= 40f32.powi(2) {
                    px[(y * N + x) * 3..(y * N + x) * 3 + 3].copy_from_slice(colour);
                }
            }
        }
    }
    px
}

/// The 0/255 mask of one disc of `scene`.
pub fn disc_mask((cx, cy): (usize, usize)) -> Vec<u8> {
    const N: usize = DISC_SCENE;
    (0..N * N)
        .map(|i| {
            let (x, y) = ((i % N) as f32, (i / N) as f32);
            ((x - cx as f32).powi(2) + (y - cy as f32).powi(2) <= 40f32.powi(2)) as u8 * 255
        })
        .collect()
}
