//! Sequences of SAM2 tracking calls on a fresh track (seg_track_*): frames of odd sizes and strides,
//! prompts with any coordinates, labels, boxes and frame indices (negative ones too), output arrays
//! too small or absent, masks of the wrong size, info and state structs of any size, resets in
//! between. Besides "no panic", it checks the promises of the tracking ABI: a failed call writes
//! nothing into its outputs, a successful one fills exactly the track's objects with 0/255 masks,
//! and the frame count moves only when a frame call succeeds.
//!
//! Runs on the tiny video modules (models/sam2/video) with small frames, a handful of calls per input.
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use segrt::ffi::*;

use crate::paths::{check, model_cstr, with_cancel_at, Handle};

#[derive(Arbitrary, Debug)]
pub enum Call {
    /// A frame: the size delta from the first frame's (0 = same), a row padding, a pixel format.
    AddFrame {
        size_delta: i8,
        padding: u8,
        format: u8,
    },
    Next {
        size_delta: i8,
        outputs: Outputs,
    },
    Prompt {
        frame: i8,
        object: i8,
        points: Vec<(f32, f32, i8)>,
        bbox: Option<(f32, f32, f32, f32)>,
        outputs: Outputs,
    },
    Track {
        frame: i8,
        outputs: Outputs,
    },
    Reset,
    State {
        struct_size: u8,
    },
}

#[derive(Arbitrary, Debug)]
pub struct Outputs {
    capacity: u8,
    records: bool,
    masks: bool,
    /// Added to every mask's width (0 = the frame's).
    mask_width_delta: i8,
    count: bool,
    info_size: Option<u8>,
    /// Cancel the call: before it starts (0) or at its n-th progress report.
    cancel_at: Option<u8>,
}

#[derive(Arbitrary, Debug)]
pub struct Input {
    /// Start from a frame with one object prompted on it, so that later calls reach tracking.
    primed: bool,
    keep_frames: u8,
    calls: Vec<Call>,
}

const W: i32 = 48;
const H: i32 = 40;
const SENTINEL: u8 = 0x5A;

/// Frame-output calls (prompt, track, next) that succeeded, for the smoke test's report.
pub static SUCCEEDED: AtomicUsize = AtomicUsize::new(0);

fn session() -> &'static Handle {
    static S: OnceLock<Handle> = OnceLock::new();
    S.get_or_init(|| {
        let dir = model_cstr("sam2/video");
        let mut s = ptr::null_mut();
        assert_eq!(unsafe { seg_create_sam2_video(dir.as_ptr(), ptr::null(), &mut s) } as i32, 0, "fuzz video session");
        Handle(s)
    })
}

struct Track(*mut SegTrack);
impl Drop for Track {
    fn drop(&mut self) {
        assert_eq!(unsafe { seg_track_free(self.0) } as i32, 0);
    }
}

fn state(t: &Track) -> SegTrackState {
    let mut s = SegTrackState { struct_size: std::mem::size_of::<SegTrackState>() as u32, ..Default::default() };
    assert_eq!(unsafe { seg_track_state(t.0, &mut s) } as i32, 0);
    s
}

/// A frame's pixels: a pattern, so the encoder sees something.
fn pixels(h: i32, stride: usize, seed: usize) -> Vec<u8> {
    (0..stride * h.max(1) as usize).map(|i| ((i + seed * 31) * 7 % 251) as u8).collect()
}

/// Runs one frame-output call with the buffers `o` asks for and checks what the ABI promises.
fn with_outputs(
    t: &Track,
    o: &Outputs,
    call: &str,
    run: impl FnOnce(*mut SegTrackObject, *const SegMask, usize, *mut usize, *mut SegTrackInfo, *mut SegCallControl) -> SegStatus,
) -> SegStatus {
    let before = state(t);
    let (fw, fh) = if before.width > 0 { (before.width, before.height) } else { (W, H) };
    let capacity = (o.capacity % 5) as usize;
    let mw = (fw + (o.mask_width_delta % 3) as i32).max(1);
    let mut mask_data: Vec<Vec<u8>> = (0..capacity).map(|_| vec![SENTINEL; (mw * fh) as usize]).collect();
    let masks: Vec<SegMask> = mask_data.iter_mut().map(|m| SegMask { data: m.as_mut_ptr(), width: mw, height: fh, stride: 0 }).collect();
    let mut records = vec![SegTrackObject { object_id: -12345, ..Default::default() }; capacity];
    let mut count = usize::MAX;
    let mut info = [0u8; 256]; // every size a u8 can claim: segrt reads a longer struct's tail
    if let Some(size) = o.info_size {
        info[..4].copy_from_slice(&(size as u32).to_ne_bytes());
    }
    let status = check(
        with_cancel_at(o.cancel_at, |control| {
            run(
                if o.records { records.as_mut_ptr() } else { ptr::null_mut() },
                if o.masks { masks.as_ptr() } else { ptr::null() },
                capacity,
                if o.count { &mut count } else { ptr::null_mut() },
                if o.info_size.is_some() { info.as_mut_ptr().cast() } else { ptr::null_mut() },
                control,
            )
        }),
        call,
    );
    let after = state(t);
    let untouched = records.iter().all(|r| r.object_id == -12345) && mask_data.iter().all(|m| m.iter().all(|v| *v == SENTINEL));
    if status == SegStatus::SEG_OK {
        SUCCEEDED.fetch_add(1, Ordering::Relaxed);
        let n = after.objects as usize;
        if o.count {
            assert_eq!(count, n, "{call}: count");
        }
        if o.records {
            assert!(records[..n].iter().all(|r| r.object_id != -12345), "{call}: records not filled");
            assert!(records[n..].iter().all(|r| r.object_id == -12345), "{call}: wrote past the objects");
        }
        if o.masks {
            assert!(mask_data[..n].iter().all(|m| m.iter().all(|v| *v == 0 || *v == 255)), "{call}: masks not 0/255");
        }
    } else {
        assert!(untouched, "a failed {call} ({status:?}) wrote into its outputs");
        if status == SegStatus::SEG_BUFFER_TOO_SMALL && o.count {
            assert_eq!(
                count,
                after.objects as usize + (call == "seg_track_add_prompt") as usize * (count > after.objects as usize) as usize
            );
        }
        if call == "seg_track_next" {
            assert_eq!(after.frames, before.frames, "a failed seg_track_next added a frame");
        }
        if status == SegStatus::SEG_CANCELLED {
            let key = |s: &SegTrackState| (s.objects, s.frames, s.width, s.height, s.held_frames, s.held_outputs, s.tracking_started);
            assert_eq!(key(&after), key(&before), "a cancelled {call} changed the track");
        }
    }
    status
}

pub fn run(input: Input) {
    let s = session();
    let mut options = SegTrackOptions {
        struct_size: std::mem::size_of::<SegTrackOptions>() as u32,
        num_frames: 0,
        keep_frames: 0,
        reserved: 0,
        reserved2: [0; 4],
        volume: 0,
        corrections_as_conditioning: 0,
    };
    assert_eq!(unsafe { seg_track_options_default(&mut options) } as i32, 0);
    options.keep_frames = (input.keep_frames % 4) as u32;
    // Volumes too: frames kept as pixels, encoded when needed.
    options.volume = ((input.keep_frames / 4) % 2) as u32;
    let mut raw = ptr::null_mut();
    assert_eq!(unsafe { seg_track_create(s.0, &options, &mut raw) } as i32, 0);
    let t = Track(raw);
    if input.primed {
        let data = pixels(H, (W * 3) as usize, 0);
        let image = SegImage { data: data.as_ptr(), width: W, height: H, stride: 0, format: 1, plane1: ptr::null(), plane2: ptr::null() };
        assert_eq!(unsafe { seg_track_add_frame(t.0, &image, ptr::null_mut(), ptr::null_mut(), ptr::null_mut()) } as i32, 0);
        let click = SegPoint { x: 20.0, y: 15.0, label: 1 };
        let (null_objects, null_masks) = (ptr::null_mut(), ptr::null());
        let st = unsafe {
            seg_track_add_prompt(
                t.0,
                0,
                1,
                &click,
                1,
                ptr::null(),
                null_objects,
                std::mem::size_of::<SegTrackObject>(),
                null_masks,
                0,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        assert_eq!(st as i32, 0);
    }
    for (k, call) in input.calls.iter().take(6).enumerate() {
        match call {
            Call::AddFrame { size_delta, padding, format } => {
                let (w, h) = (W + (size_delta % 3) as i32, H);
                // Gray, BGR, BGRA or RGB: bytes per pixel for each.
                let (format, bpp) = [(0, 1), (1, 3), (2, 4), (3, 3)][(*format % 4) as usize];
                let stride = (w.max(0) as usize) * bpp + (*padding % 8) as usize;
                let data = pixels(h, stride, k);
                let image = SegImage {
                    data: data.as_ptr(),
                    width: w,
                    height: h,
                    stride: stride as i32,
                    format,
                    plane1: ptr::null(),
                    plane2: ptr::null(),
                };
                let before = state(&t).frames;
                let mut index = -7i64;
                let st =
                    check(unsafe { seg_track_add_frame(t.0, &image, &mut index, ptr::null_mut(), ptr::null_mut()) }, "seg_track_add_frame");
                let after = state(&t).frames;
                if st == SegStatus::SEG_OK {
                    assert_eq!((index, after), (before, before + 1));
                } else {
                    assert_eq!((index, after), (-7, before), "a failed seg_track_add_frame added a frame");
                }
            }
            Call::Next { size_delta, outputs } => {
                let (w, h) = (W + (size_delta % 3) as i32, H);
                let data = pixels(h, (w.max(0) * 3) as usize, k);
                let image =
                    SegImage { data: data.as_ptr(), width: w, height: h, stride: 0, format: 1, plane1: ptr::null(), plane2: ptr::null() };
                with_outputs(&t, outputs, "seg_track_next", |o, m, c, n, i, control| unsafe {
                    seg_track_next(t.0, &image, o, std::mem::size_of::<SegTrackObject>(), m, c, n, i, control)
                });
            }
            Call::Prompt { frame, object, points, bbox, outputs } => {
                let points: Vec<SegPoint> =
                    points.iter().take(5).map(|(x, y, l)| SegPoint { x: *x % 200.0, y: *y % 200.0, label: (*l % 3) as i32 }).collect();
                let bbox = bbox.map(|(x1, y1, x2, y2)| SegBox { x1: x1 % 200.0, y1: y1 % 200.0, x2: x2 % 200.0, y2: y2 % 200.0 });
                let pts = if points.is_empty() { ptr::null() } else { points.as_ptr() };
                let b = bbox.as_ref().map_or(ptr::null(), |b| b as *const SegBox);
                with_outputs(&t, outputs, "seg_track_add_prompt", |o, m, c, n, i, control| unsafe {
                    seg_track_add_prompt(
                        t.0,
                        *frame as i64 % 4,
                        (*object % 3) as i32,
                        pts,
                        points.len(),
                        b,
                        o,
                        std::mem::size_of::<SegTrackObject>(),
                        m,
                        c,
                        n,
                        i,
                        control,
                    )
                });
            }
            Call::Track { frame, outputs } => {
                with_outputs(&t, outputs, "seg_track_frame", |o, m, c, n, i, control| unsafe {
                    seg_track_frame(t.0, *frame as i64 % 4, o, std::mem::size_of::<SegTrackObject>(), m, c, n, i, control)
                });
            }
            Call::Reset => {
                assert_eq!(unsafe { seg_track_reset(t.0) } as i32, 0);
                let s = state(&t);
                assert_eq!((s.frames, s.objects), (0, 0));
            }
            Call::State { struct_size } => {
                // Room for every size a u8 can claim: segrt reads a longer struct's tail (to refuse a non-zero one).
                let mut bytes = [0xEEu8; 256];
                bytes[..4].copy_from_slice(&(*struct_size as u32).to_ne_bytes());
                let st = check(unsafe { seg_track_state(t.0, bytes.as_mut_ptr().cast()) }, "seg_track_state");
                let size = std::mem::size_of::<SegTrackState>();
                if st == SegStatus::SEG_OK {
                    let written = (*struct_size as usize).min(size);
                    assert!(bytes[written.max(4)..].iter().all(|b| *b == 0xEE), "seg_track_state wrote past struct_size");
                } else {
                    assert!(bytes[4..].iter().all(|b| *b == 0xEE), "a failed seg_track_state wrote");
                }
            }
        }
    }
}
