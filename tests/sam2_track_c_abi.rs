//! SAM2 video tracking through the C ABI (`seg_create_sam2_video`, `seg_track_*`): the official
//! predictor's masks through the ABI, the ABI against the Rust tracker it wraps, and every bad input
//! and lifecycle case a host meets (frames of another size, prompts on frames never fed, buffers
//! too small, several threads, reset and free during a run, a 500-frame soak).

mod common;

use std::path::PathBuf;
use std::ptr;
use std::sync::Arc;

use common::*;
use segrt::ffi::*;
use segrt::sam2::video::{Propagation, PropagationDirection, Tracker, TrackerOptions, VideoModel};
use segrt::{ImageView, Options, PixelFormat};
use serde_json::Value;

fn video_dir() -> PathBuf {
    repo().join("models/sam2/video")
}

fn reference() -> Value {
    serde_json::from_str(&std::fs::read_to_string(video_dir().join("reference/index.json")).unwrap()).unwrap()
}

/// The reference clip's frames, RGB, 320x240.
fn frames() -> Vec<Rgb> {
    reference()["frames"].as_array().unwrap().iter().map(|f| load_rgb(&video_dir().join("reference").join(f.as_str().unwrap()))).collect()
}

fn reference_mask(name: &str) -> Vec<u8> {
    load_gray(&video_dir().join("reference").join(name))
}

fn video_session() -> Session {
    let dir = cstr(video_dir().to_str().unwrap());
    let mut options = default_options();
    options.intra_threads = 2;
    let mut s = ptr::null_mut();
    let st = unsafe { seg_create_sam2_video(dir.as_ptr(), &options, &mut s) };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    Session(s)
}

struct Track(*mut SegTrack);
unsafe impl Send for Track {}
unsafe impl Sync for Track {}
impl Drop for Track {
    fn drop(&mut self) {
        unsafe { seg_track_free(self.0) };
    }
}

fn track_options(num_frames: u32, keep_frames: u32) -> SegTrackOptions {
    let mut o = SegTrackOptions {
        struct_size: std::mem::size_of::<SegTrackOptions>() as u32,
        num_frames: 0,
        keep_frames: 0,
        reserved: 0,
        reserved2: [0; 4],
        volume: 0,
        corrections_as_conditioning: 0,
    };
    assert_eq!(unsafe { seg_track_options_default(&mut o) }, SegStatus::SEG_OK);
    o.num_frames = num_frames;
    o.keep_frames = keep_frames;
    o
}

fn track(session: &Session, options: Option<SegTrackOptions>) -> Track {
    let mut t = ptr::null_mut();
    let st = unsafe { seg_track_create(session.0, options.as_ref().map_or(ptr::null(), |o| o as *const _), &mut t) };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    Track(t)
}

fn rgb_image(f: &Rgb) -> SegImage {
    image_desc(&f.data, f.w, f.h, 0, SegPixelFormat::SEG_FORMAT_RGB24)
}

/// Every object of one frame as the ABI returns it.
#[derive(Debug, Clone)]
struct Frame {
    objects: Vec<SegTrackObjectEq>,
    masks: Vec<Vec<u8>>,
    info: SegTrackInfo,
}

/// `SegTrackObject` compared field by field.
#[derive(Debug, Clone, PartialEq)]
struct SegTrackObjectEq(i32, u32, u32, u32, u64, [i32; 4]);

impl From<&SegTrackObject> for SegTrackObjectEq {
    fn from(o: &SegTrackObject) -> Self {
        SegTrackObjectEq(o.object_id, o.present, o.has_output, o.score.to_bits(), o.area, [o.x0, o.y0, o.x1, o.y1])
    }
}

/// Output buffers for `n` objects of `w` x `h`, filled with a sentinel.
struct Outputs {
    objects: Vec<SegTrackObject>,
    mask_data: Vec<Vec<u8>>,
    masks: Vec<SegMask>,
    count: usize,
    info: SegTrackInfo,
}

impl Outputs {
    fn new(n: usize, w: usize, h: usize) -> Outputs {
        let mut mask_data: Vec<Vec<u8>> = (0..n).map(|_| vec![77u8; w * h]).collect();
        let masks = mask_data.iter_mut().map(|m| SegMask { data: m.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 }).collect();
        let sentinel = SegTrackObject { object_id: -77, ..Default::default() };
        let info = SegTrackInfo { struct_size: std::mem::size_of::<SegTrackInfo>() as u32, frame: -77, ..Default::default() };
        Outputs { objects: vec![sentinel; n], mask_data, masks, count: 777, info }
    }

    fn untouched(&self) -> bool {
        self.objects.iter().all(|o| o.object_id == -77)
            && self.mask_data.iter().all(|m| m.iter().all(|v| *v == 77))
            && self.info.frame == -77
    }

    fn frame(self) -> Frame {
        assert_eq!(self.count, self.objects.len());
        Frame { objects: self.objects.iter().map(Into::into).collect(), masks: self.mask_data, info: self.info }
    }
}

type Call<'a> = dyn FnMut(*mut SegTrackObject, *const SegMask, usize, *mut usize, *mut SegTrackInfo) -> SegStatus + 'a;

/// Runs a frame-output call with buffers for `n` objects.
fn with_outputs(n: usize, (w, h): (usize, usize), call: &mut Call<'_>) -> Result<Frame, (SegStatus, String)> {
    let mut out = Outputs::new(n, w, h);
    let st = call(out.objects.as_mut_ptr(), out.masks.as_ptr(), n, &mut out.count, &mut out.info);
    if st == SegStatus::SEG_OK {
        Ok(out.frame())
    } else {
        assert!(out.untouched(), "a failed call ({st:?}) wrote into its outputs");
        Err((st, last_error()))
    }
}

fn add_frame(t: &Track, f: &Rgb) -> Result<i64, (SegStatus, String)> {
    let mut index = -1;
    match unsafe { seg_track_add_frame(t.0, &rgb_image(f), &mut index, ptr::null_mut(), ptr::null_mut()) } {
        SegStatus::SEG_OK => Ok(index),
        st => Err((st, last_error())),
    }
}

fn prompt(
    t: &Track,
    n: usize,
    size: (usize, usize),
    frame: i64,
    object: i32,
    points: &[SegPoint],
    bbox: Option<SegBox>,
) -> Result<Frame, (SegStatus, String)> {
    let pts = if points.is_empty() { ptr::null() } else { points.as_ptr() };
    let b = bbox.as_ref().map_or(ptr::null(), |b| b as *const _);
    with_outputs(n, size, &mut |o, m, c, cnt, i| unsafe {
        seg_track_add_prompt(
            t.0,
            frame,
            object,
            pts,
            points.len(),
            b,
            o,
            std::mem::size_of::<SegTrackObject>(),
            m,
            c,
            cnt,
            i,
            ptr::null_mut(),
        )
    })
}

fn track_frame(t: &Track, n: usize, size: (usize, usize), frame: i64) -> Result<Frame, (SegStatus, String)> {
    with_outputs(n, size, &mut |o, m, c, cnt, i| unsafe {
        seg_track_frame(t.0, frame, o, std::mem::size_of::<SegTrackObject>(), m, c, cnt, i, ptr::null_mut())
    })
}

fn next(t: &Track, n: usize, f: &Rgb) -> Result<Frame, (SegStatus, String)> {
    let img = rgb_image(f);
    with_outputs(n, (f.w, f.h), &mut |o, m, c, cnt, i| unsafe {
        seg_track_next(t.0, &img, o, std::mem::size_of::<SegTrackObject>(), m, c, cnt, i, ptr::null_mut())
    })
}

fn state(t: &Track) -> SegTrackState {
    let mut s = SegTrackState { struct_size: std::mem::size_of::<SegTrackState>() as u32, ..Default::default() };
    assert_eq!(unsafe { seg_track_state(t.0, &mut s) }, SegStatus::SEG_OK, "{}", last_error());
    s
}

fn click(x: f32, y: f32, label: i32) -> SegPoint {
    SegPoint { x, y, label }
}

fn points_of(e: &Value) -> Vec<SegPoint> {
    e["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(e["labels"].as_array().unwrap())
        .map(|(p, l)| click(p[0].as_f64().unwrap() as f32, p[1].as_f64().unwrap() as f32, l.as_i64().unwrap() as i32))
        .collect()
}

fn identical_pct(mask: &[u8], reference: &[u8]) -> f64 {
    assert_eq!(mask.len(), reference.len());
    mask.iter().zip(reference).filter(|(a, b)| (**a > 127) == (**b > 127)).count() as f64 * 100.0 / mask.len() as f64
}

/// Area and inclusive box of a 0/255 mask, computed here independently of segrt.
fn area_and_box(mask: &[u8], w: usize) -> (u64, [i32; 4]) {
    let on: Vec<(usize, usize)> = mask.iter().enumerate().filter(|(_, v)| **v != 0).map(|(i, _)| (i % w, i / w)).collect();
    if on.is_empty() {
        return (0, [0; 4]);
    }
    let xs = on.iter().map(|p| p.0);
    let ys = on.iter().map(|p| p.1);
    (
        on.len() as u64,
        [xs.clone().min().unwrap() as i32, ys.clone().min().unwrap() as i32, xs.max().unwrap() as i32, ys.max().unwrap() as i32],
    )
}

fn check_records(f: &Frame, w: usize) {
    for (o, m) in f.objects.iter().zip(&f.masks) {
        assert!(m.iter().all(|v| *v == 0 || *v == 255));
        let (area, bbox) = area_and_box(m, w);
        assert_eq!((o.4, o.5), (area, bbox), "object {}: record does not describe its mask", o.0);
    }
}

/// The reference's clicks, then tracking frame by frame, then the correction: every mask and flag
/// through the C ABI against the official predictor (>= 99.5 % identical pixels, flags equal).
#[test]
fn the_official_predictor_through_the_c_abi() {
    let idx = reference();
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let session = video_session();
    let t = track(&session, Some(track_options(frames.len() as u32, 0)));
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(add_frame(&t, f).unwrap(), i as i64);
    }
    let events = idx["events"].as_array().unwrap();
    let mut worst = 100.0f64;
    let mut compare = |f: &Frame, masks: &[&str], flags: &[bool], what: &str| {
        check_records(f, size.0);
        for (k, (m, r)) in f.masks.iter().zip(masks).enumerate() {
            let p = identical_pct(m, &reference_mask(r));
            worst = worst.min(p);
            assert!(p >= 99.5, "{what}, object {k}: {p:.3} % identical pixels");
        }
        let got: Vec<bool> = f.objects.iter().map(|o| o.1 == 1).collect();
        assert_eq!(got, flags, "{what}: object-present flags");
    };
    for (n, e) in events[..3].iter().enumerate() {
        let objects = if n == 0 { 1 } else { 2 };
        let f = prompt(&t, objects, size, e["frame"].as_i64().unwrap(), e["obj_id"].as_i64().unwrap() as i32, &points_of(e), None).unwrap();
        let masks: Vec<&str> = e["masks"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        let clicked = f.objects.iter().position(|o| o.0 == e["obj_id"].as_i64().unwrap() as i32).unwrap();
        assert_eq!(f.objects[clicked].1 == 1, e["object_present"].as_bool().unwrap());
        compare(&f, &masks, &f.objects.iter().map(|o| o.1 == 1).collect::<Vec<_>>(), &format!("click {n}"));
    }
    for rec in idx["propagation"].as_array().unwrap() {
        let frame = rec["frame"].as_i64().unwrap();
        let f = track_frame(&t, 2, size, frame).unwrap();
        assert_eq!(f.info.frame, frame);
        assert_eq!(f.info.objects, 2);
        let objs = rec["objects"].as_array().unwrap();
        let masks: Vec<&str> = objs.iter().map(|o| o["mask"].as_str().unwrap()).collect();
        let flags: Vec<bool> = objs.iter().map(|o| o["object_present"].as_bool().unwrap()).collect();
        compare(&f, &masks, &flags, &format!("frame {frame}"));
    }
    let e = &events[3];
    let f = prompt(&t, 2, size, e["frame"].as_i64().unwrap(), 2, &points_of(e), None).unwrap();
    let masks: Vec<&str> = e["masks"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert!(f.objects[1].1 == 1 && e["object_present"].as_bool().unwrap());
    compare(&f, &masks, &f.objects.iter().map(|o| o.1 == 1).collect::<Vec<_>>(), "correction");
    println!("worst mask: {worst:.3} % identical pixels to the official predictor");
    let s = state(&t);
    assert_eq!((s.objects, s.frames, s.width, s.height, s.tracking_started), (2, 14, 320, 240, 1));
}

/// Streaming through `seg_track_next` gives exactly what the Rust tracker gives for the same calls.
#[test]
fn streaming_equals_the_rust_tracker() {
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let session = video_session();
    let t = track(&session, Some(track_options(0, 2)));
    let options = Options { intra_threads: 2, ..Options::default() };
    let model = Arc::new(VideoModel::from_dir(&video_dir(), options).unwrap());
    let mut tracker = Tracker::new(model, TrackerOptions { num_frames: None, keep_frames: Some(2), ..Default::default() }).unwrap();
    fn view(f: &Rgb) -> ImageView<'_> {
        ImageView::new(&f.data, f.w, f.h, 0, PixelFormat::Rgb24).unwrap()
    }

    assert_eq!(add_frame(&t, &frames[0]).unwrap(), 0);
    tracker.add_frame(&view(&frames[0])).unwrap();
    let f = prompt(&t, 1, size, -1, 1, &[click(60.0, 100.0, 1)], None).unwrap();
    let r = tracker.add_points(0, 1, &[[60.0, 100.0]], &[1]).unwrap();
    assert_eq!(f.masks[0], r.objects[0].mask);
    let bbox = SegBox { x1: 200.0, y1: 20.0, x2: 300.0, y2: 90.0 };
    let f = prompt(&t, 2, size, 0, 7, &[], Some(bbox)).unwrap();
    let r = tracker.add_prompt(0, 7, &[], &[], Some([200.0, 20.0, 300.0, 90.0])).unwrap();
    assert_eq!(f.masks, r.objects.iter().map(|o| o.mask.clone()).collect::<Vec<_>>());
    for (i, frame) in frames.iter().enumerate().skip(1) {
        let f = next(&t, 2, frame).unwrap();
        let k = tracker.add_frame(&view(frame)).unwrap();
        let r = tracker.track_frame(k).unwrap();
        assert_eq!(f.info.frame, i as i64);
        check_records(&f, size.0);
        for (got, want) in f.objects.iter().zip(&r.objects) {
            assert_eq!((got.0, got.1 == 1, got.2 == 1, f32::from_bits(got.3)), (want.object_id, want.present, true, want.score.unwrap()));
        }
        assert_eq!(f.masks, r.objects.iter().map(|o| o.mask.clone()).collect::<Vec<_>>(), "frame {i}");
        let timed = f.info.image_encoder_ms + f.info.memory_attention_ms + f.info.mask_decoder_ms + f.info.memory_encoder_ms;
        assert!(f.info.image_encoder_ms > 0.0 && f.info.mask_decoder_ms > 0.0 && timed.is_finite());
    }
    let s = state(&t);
    assert_eq!((s.objects, s.frames, s.held_frames, s.keep_frames), (2, 14, 2, 2));
}

/// Every refused call names the problem, writes nothing and leaves the track as it was.
#[test]
fn bad_input_is_refused_before_anything_changes() {
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let session = video_session();
    let t = track(&session, None);
    let status = |r: Result<Frame, (SegStatus, String)>| r.map(|_| ()).unwrap_err();

    // Nothing to track yet.
    let (st, msg) = status(next(&t, 1, &frames[0]));
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("no object to track"), "{msg}");
    assert_eq!(state(&t).frames, 0);
    // A prompt on a frame never fed.
    assert_eq!(add_frame(&t, &frames[0]).unwrap(), 0);
    let (st, msg) = status(prompt(&t, 1, size, 5, 1, &[click(60.0, 100.0, 1)], None));
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("frame 5: the track has 1 frames"), "{msg}");
    // Bad prompts: no point and no box, a label of 2, a reversed box.
    for (points, bbox, expected) in [
        (vec![], None, "no prompt: give at least one point or a box"),
        (vec![click(1.0, 1.0, 2)], None, "label 2"),
        (vec![], Some(SegBox { x1: 50.0, y1: 50.0, x2: 10.0, y2: 60.0 }), "must have x2 > x1 and y2 > y1"),
    ] {
        let (st, msg) = status(prompt(&t, 1, size, 0, 1, &points, bbox));
        assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
        assert!(msg.contains(expected), "expected '{expected}' in {msg}");
    }
    assert_eq!(state(&t).objects, 0, "a refused prompt created an object");
    prompt(&t, 1, size, 0, 1, &[click(60.0, 100.0, 1)], None).unwrap();

    // Buffers too small: the count comes back, nothing runs (no frame added).
    let img = rgb_image(&frames[1]);
    let mut out = Outputs::new(1, size.0, size.1);
    let mut count = 0usize;
    let st = unsafe {
        seg_track_next(
            t.0,
            &img,
            out.objects.as_mut_ptr(),
            std::mem::size_of::<SegTrackObject>(),
            out.masks.as_ptr(),
            0,
            &mut count,
            &mut out.info,
            ptr::null_mut(),
        )
    };
    assert_eq!((st, count), (SegStatus::SEG_BUFFER_TOO_SMALL, 1));
    assert!(out.untouched());
    assert_eq!(state(&t).frames, 1);
    // A mask of another size than the frames.
    let (st, msg) = status(with_outputs(1, (size.0, size.1 - 1), &mut |o, m, c, cnt, i| unsafe {
        seg_track_next(t.0, &img, o, std::mem::size_of::<SegTrackObject>(), m, c, cnt, i, ptr::null_mut())
    }));
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("out_masks[0] is 320x239"), "{msg}");
    // A frame of another size mid-track.
    let small = Rgb { w: 160, h: 120, data: vec![0; 160 * 120 * 3] };
    let (st, msg) = status(next(&t, 1, &small));
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("is 160x120 but the track's frames are 320x240"), "{msg}");
    assert_eq!(state(&t).frames, 1);
    // An info struct from nowhere.
    let mut info = SegTrackInfo { struct_size: 4, ..Default::default() };
    let st = unsafe {
        seg_track_frame(
            t.0,
            0,
            ptr::null_mut(),
            std::mem::size_of::<SegTrackObject>(),
            ptr::null(),
            0,
            ptr::null_mut(),
            &mut info,
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    let mut bad = track_options(0, 0);
    bad.struct_size = 3;
    let mut t2 = ptr::null_mut();
    assert_eq!(unsafe { seg_track_create(session.0, &bad, &mut t2) }, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(t2.is_null());

    // Tracking has started: a new object counts in the buffers' check (refused here with the count,
    // the track unchanged); the known one still takes corrections.
    next(&t, 1, &frames[1]).unwrap();
    let (st, msg) = status(prompt(&t, 1, size, -1, 9, &[click(10.0, 10.0, 1)], None));
    assert_eq!(st, SegStatus::SEG_BUFFER_TOO_SMALL);
    assert!(msg.contains("the track has 2"), "{msg}");
    assert_eq!(state(&t).objects, 1);
    let f = prompt(&t, 1, size, -1, 1, &[click(70.0, 100.0, 1)], None).unwrap();
    assert_eq!(f.info.frame, 1);
    // Tracking a frame no longer held (keep_frames 8 by default) is refused with the reason.
    for f in frames.iter().skip(2).take(8) {
        next(&t, 1, f).unwrap();
    }
    let s = state(&t);
    assert_eq!((s.frames, s.held_frames, s.keep_frames), (10, 8, 8));
    let (st, msg) = status(track_frame(&t, 1, size, 0));
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("no longer held"), "{msg}");
    // Reset: as new.
    assert_eq!(unsafe { seg_track_reset(t.0) }, SegStatus::SEG_OK);
    let s = state(&t);
    assert_eq!((s.frames, s.objects, s.width, s.tracking_started), (0, 0, 0, 0));
}

/// Handles of one kind are refused by the other kind's functions (and not freed); a freed
/// handle is detected; a track outlives the session it came from.
#[test]
fn handle_kinds_and_lifetimes() {
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let session = video_session();
    let t = track(&session, None);
    assert_eq!(unsafe { seg_free(t.0.cast()) }, SegStatus::SEG_WRONG_SESSION_KIND);
    assert!(last_error().contains("release it with seg_track_free"), "{}", last_error());
    assert_eq!(unsafe { seg_track_free(session.0.cast()) }, SegStatus::SEG_WRONG_SESSION_KIND);
    let unet = create(&model("demo_unet.onnx"), None).unwrap();
    let mut t2 = ptr::null_mut();
    assert_eq!(unsafe { seg_track_create(unet.0, ptr::null(), &mut t2) }, SegStatus::SEG_WRONG_SESSION_KIND);
    assert!(last_error().contains("not a SAM2 video session"), "{}", last_error());
    let img = rgb_image(&frames[0]);
    assert_eq!(
        unsafe { seg_run_unet(session.0, &img, ptr::null(), ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) },
        SegStatus::SEG_WRONG_SESSION_KIND
    );
    // The session goes first; the track keeps the model.
    drop(session);
    assert_eq!(add_frame(&t, &frames[0]).unwrap(), 0);
    prompt(&t, 1, size, 0, 1, &[click(60.0, 100.0, 1)], None).unwrap();
    next(&t, 1, &frames[1]).unwrap();
    let raw = t.0;
    drop(t);
    assert_eq!(unsafe { seg_track_free(raw) }, SegStatus::SEG_INVALID_HANDLE);
    assert_eq!(unsafe { seg_track_reset(raw) }, SegStatus::SEG_INVALID_HANDLE);
    assert_eq!(unsafe { seg_track_free(ptr::null_mut()) }, SegStatus::SEG_OK);
}

/// Several threads on one track: calls run one at a time, none is lost; a reset and a free from
/// other threads while calls run give documented statuses only, and nothing crashes.
#[test]
fn threads_reset_and_free_during_runs() {
    let frames = Arc::new(frames());
    let size = (frames[0].w, frames[0].h);
    let session = video_session();
    let t = Arc::new(track(&session, None));
    add_frame(&t, &frames[0]).unwrap();
    prompt(&t, 1, size, 0, 1, &[click(60.0, 100.0, 1)], None).unwrap();
    let workers: Vec<_> = (0..4)
        .map(|k| {
            let (t, frames) = (t.clone(), frames.clone());
            std::thread::spawn(move || (0..3).map(|i| next(&t, 1, &frames[1 + (k * 3 + i) % 13]).unwrap().info.frame).collect::<Vec<i64>>())
        })
        .collect();
    let mut indices: Vec<i64> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    indices.sort();
    assert_eq!(indices, (1..=12).collect::<Vec<i64>>(), "every call got its own frame index");
    assert_eq!(state(&t).frames, 13);

    // A thread streams while another resets the track (the streamer starts over), then frees it.
    // The reset and the free wait for frames the streamer tracked (counted in `tracked`), not for a
    // time: on a loaded machine a frame can take longer than any fixed pause.
    let tracked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let streamer = {
        let (t, frames, tracked) = (t.clone(), frames.clone(), tracked.clone());
        std::thread::spawn(move || {
            let (mut ok, mut restarts) = (0, 0);
            for i in 0..300 {
                match next(&t, 1, &frames[i % 14]) {
                    Ok(_) => {
                        ok += 1;
                        tracked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    Err((SegStatus::SEG_INVALID_ARGUMENT, msg)) if msg.contains("no object to track") => {
                        restarts += 1;
                        let again = add_frame(&t, &frames[0]).and_then(|_| prompt(&t, 1, size, -1, 1, &[click(60.0, 100.0, 1)], None));
                        if let Err((st, msg)) = again {
                            return (ok, restarts, st, msg);
                        }
                    }
                    Err((st, msg)) => return (ok, restarts, st, msg),
                }
            }
            (ok, restarts, SegStatus::SEG_OK, "never freed".into())
        })
    };
    // Until the streamer has tracked `n` frames, or stopped.
    let wait_for = |n: usize| {
        while tracked.load(std::sync::atomic::Ordering::SeqCst) < n && !streamer.is_finished() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    };
    wait_for(1);
    assert_eq!(unsafe { seg_track_reset(t.0) }, SegStatus::SEG_OK);
    // Two frames more: at most one was in flight when the reset came, so one was tracked after it.
    wait_for(tracked.load(std::sync::atomic::Ordering::SeqCst) + 2);
    assert_eq!(unsafe { seg_track_free(t.0) }, SegStatus::SEG_OK);
    let (ok, restarts, end, msg) = streamer.join().unwrap();
    println!("streamer: {ok} frames tracked, {restarts} restart(s), then {end:?}: {msg}");
    assert_eq!(restarts, 1, "the reset must be seen exactly once");
    assert!(ok >= 2, "{ok} frames tracked");
    // The call running when the track was freed finished normally; the next one found no track.
    assert_eq!(end, SegStatus::SEG_INVALID_HANDLE, "{msg}");
    // Dropping our copy frees it again: a detected double free, not a crash.
}

/// A frame in any layout a host has (BGR with padded rows as from a Bitmap, BGRA, planar as
/// HALCON's three channels) gives the masks of the same pixels as RGB.
#[test]
fn frame_layouts_give_the_same_masks() {
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let session = video_session();
    let (w, h) = size;
    let layouts: Vec<(&str, Vec<Vec<u8>>, SegPixelFormat, i32)> = frames[..3]
        .iter()
        .map(|f| {
            let px = |x: usize, y: usize| &f.data[(y * w + x) * 3..(y * w + x) * 3 + 3];
            let mut bgr = vec![0u8; (w * 3 + 5) * h];
            let mut bgra = vec![0u8; w * 4 * h];
            let mut planar = vec![0u8; w * h * 3];
            for y in 0..h {
                for x in 0..w {
                    let p = px(x, y);
                    bgr[y * (w * 3 + 5) + x * 3..][..3].copy_from_slice(&[p[2], p[1], p[0]]);
                    bgra[(y * w + x) * 4..][..4].copy_from_slice(&[p[2], p[1], p[0], 255]);
                    for c in 0..3 {
                        planar[c * w * h + y * w + x] = p[c];
                    }
                }
            }
            vec![bgr, bgra, planar]
        })
        .fold(
            vec![
                ("BGR24 padded", vec![], SegPixelFormat::SEG_FORMAT_BGR24, (w * 3 + 5) as i32),
                ("BGRA32", vec![], SegPixelFormat::SEG_FORMAT_BGRA32, 0),
                ("planar RGB", vec![], SegPixelFormat::SEG_FORMAT_PLANAR_RGB8, 0),
            ],
            |mut acc, per_frame| {
                for (slot, data) in acc.iter_mut().zip(per_frame) {
                    slot.1.push(data);
                }
                acc
            },
        );
    let run = |images: Vec<SegImage>| -> Vec<Vec<u8>> {
        let t = track(&session, None);
        let mut masks = Vec::new();
        for (i, img) in images.iter().enumerate() {
            if i == 0 {
                assert_eq!(
                    unsafe { seg_track_add_frame(t.0, img, ptr::null_mut(), ptr::null_mut(), ptr::null_mut()) },
                    SegStatus::SEG_OK,
                    "{}",
                    last_error()
                );
                masks.extend(prompt(&t, 1, size, 0, 1, &[click(60.0, 100.0, 1)], None).unwrap().masks);
            } else {
                masks.extend(
                    with_outputs(1, size, &mut |o, m, c, n, inf| unsafe {
                        seg_track_next(t.0, img, o, std::mem::size_of::<SegTrackObject>(), m, c, n, inf, ptr::null_mut())
                    })
                    .unwrap()
                    .masks,
                );
            }
        }
        masks
    };
    let rgb = run(frames[..3].iter().map(rgb_image).collect());
    assert!(rgb.iter().any(|m| m.contains(&255)), "the reference masks are empty");
    for (name, data, format, stride) in &layouts {
        let images = data
            .iter()
            .map(|d| {
                let mut img = image_desc(d, w, h, *stride, *format);
                if *format == SegPixelFormat::SEG_FORMAT_PLANAR_RGB8 {
                    img.plane1 = d[w * h..].as_ptr();
                    img.plane2 = d[2 * w * h..].as_ptr();
                }
                img
            })
            .collect();
        assert!(run(images) == rgb, "{name}: masks differ from the RGB frames'");
    }
}

/// Every record size and capacity at its extremes on the calls that write `SegTrackObject`
/// records (prompt, track a frame, next frame): refused with nothing changed where no address
/// space holds the array (or the record is too small), written at the caller's stride where the
/// buffer holds it.
#[test]
fn record_sizes_at_their_extremes_are_refused_or_honoured() {
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let session = video_session();
    let t = track(&session, None);
    assert_eq!(add_frame(&t, &frames[0]).unwrap(), 0);
    prompt(&t, 1, size, 0, 1, &[click(60.0, 100.0, 1)], None).unwrap();
    let record = std::mem::size_of::<SegTrackObject>();
    const BUFFER: usize = 1 << 12;
    let img = rgb_image(&frames[1]);
    let (mut refused, mut written) = (0, 0);
    for (object_size, capacity) in extreme_record_sizes(record) {
        let Some(accepted) = record_array_expectation(record, object_size, capacity, BUFFER) else { continue };
        // `seg_track_next` adds a frame when it succeeds: only where the pair is refused.
        let calls: &[&str] = if accepted { &["prompt", "frame"] } else { &["prompt", "frame", "next"] };
        for call in calls {
            let mut buffer = vec![0x5Au8; BUFFER];
            let mut count = 777usize;
            let frames_before = state(&t).frames;
            let objects = buffer.as_mut_ptr().cast::<SegTrackObject>();
            let point = click(60.0, 100.0, 1);
            let st = unsafe {
                match *call {
                    "prompt" => seg_track_add_prompt(
                        t.0,
                        0,
                        1,
                        &point,
                        1,
                        ptr::null(),
                        objects,
                        object_size,
                        ptr::null(),
                        capacity,
                        &mut count,
                        ptr::null_mut(),
                        ptr::null_mut(),
                    ),
                    "frame" => {
                        seg_track_frame(t.0, 0, objects, object_size, ptr::null(), capacity, &mut count, ptr::null_mut(), ptr::null_mut())
                    }
                    _ => {
                        seg_track_next(t.0, &img, objects, object_size, ptr::null(), capacity, &mut count, ptr::null_mut(), ptr::null_mut())
                    }
                }
            };
            let what = format!("{call}: object_size {object_size} x capacity {capacity}");
            if !accepted {
                assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "{what}: {}", last_error());
                assert!(count == 777 && buffer.iter().all(|b| *b == 0x5A), "{what}: a refused call wrote");
                assert_eq!(state(&t).frames, frames_before, "{what}: a refused call changed the track");
                refused += 1;
            } else if capacity == 0 {
                assert_eq!((st, count), (SegStatus::SEG_BUFFER_TOO_SMALL, 1), "{what}: {}", last_error());
            } else {
                assert_eq!((st, count), (SegStatus::SEG_OK, 1), "{what}: {}", last_error());
                assert_eq!(i32::from_ne_bytes(buffer[..4].try_into().unwrap()), 1, "{what}: the record's object id");
                assert!(buffer[record..].iter().all(|b| *b == 0x5A), "{what}: wrote past the record");
                written += 1;
            }
        }
    }
    println!("record sizes at their extremes: {refused} calls refused, {written} written");
    assert!(refused > 100 && written > 4);
}

/// Frames of 16-bit, signed 16-bit and float pixels, with the video session's window set to give
/// the 8-bit values back, are tracked as the 8-bit frames; the window set on the session reaches
/// its tracks, and a zero-width window is refused.
#[test]
fn wide_frames_through_the_sessions_window_give_the_8bit_masks() {
    let frames = frames();
    let (w, h) = (frames[0].w, frames[0].h);
    let session = video_session();
    let run = |images: &[SegImage]| -> Vec<Vec<u8>> {
        let t = track(&session, None);
        let mut masks = Vec::new();
        for (i, img) in images.iter().enumerate() {
            if i == 0 {
                let st = unsafe { seg_track_add_frame(t.0, img, ptr::null_mut(), ptr::null_mut(), ptr::null_mut()) };
                assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
                masks.extend(prompt(&t, 1, (w, h), 0, 1, &[click(60.0, 100.0, 1)], None).unwrap().masks);
            } else {
                let frame = with_outputs(1, (w, h), &mut |o, m, c, n, inf| unsafe {
                    seg_track_next(t.0, img, o, std::mem::size_of::<SegTrackObject>(), m, c, n, inf, ptr::null_mut())
                });
                masks.extend(frame.unwrap_or_else(|e| panic!("{e:?}")).masks);
            }
        }
        masks
    };
    let rgb = run(&frames[..3].iter().map(rgb_image).collect::<Vec<_>>());
    let set_window = |low: f64, high: f64| {
        let mut i: SegIntensity = unsafe { std::mem::zeroed() };
        i.struct_size = std::mem::size_of::<SegIntensity>() as u32;
        assert_eq!(unsafe { seg_intensity_default(&mut i) }, SegStatus::SEG_OK);
        (i.range, i.low, i.high) = (SegIntensityRange::SEG_INTENSITY_WINDOW as i32, low, high);
        unsafe { seg_set_intensity(session.0, &i) }
    };
    type Encode = fn(u8) -> Vec<u8>;
    let cases: [(&str, SegPixelFormat, Encode, (f64, f64)); 3] = [
        ("u16", SegPixelFormat::SEG_FORMAT_RGB48, |v| (v as u16 * 256 + 100).to_le_bytes().to_vec(), (100.0, 100.0 + 255.0 * 256.0)),
        ("i16", SegPixelFormat::SEG_FORMAT_RGB48S, |v| (v as i16 * 16 - 2000).to_le_bytes().to_vec(), (-2000.0, -2000.0 + 255.0 * 16.0)),
        ("f32", SegPixelFormat::SEG_FORMAT_RGB96F, |v| (v as f32 / 256.0).to_le_bytes().to_vec(), (0.0, 255.0 / 256.0)),
    ];
    for (name, format, encode, (low, high)) in cases {
        let data: Vec<Vec<u8>> = frames[..3].iter().map(|f| f.data.iter().flat_map(|v| encode(*v)).collect()).collect();
        let images: Vec<SegImage> = data.iter().map(|d| image_desc(d, w, h, 0, format)).collect();
        assert_eq!(set_window(low, high), SegStatus::SEG_OK, "{}", last_error());
        assert!(run(&images) == rgb, "{name}: masks differ from the 8-bit frames'");
    }
    assert_eq!(set_window(5.0, 5.0), SegStatus::SEG_INVALID_ARGUMENT);
    assert!(last_error().contains("zero or negative width"), "{}", last_error());
    assert!(session_info(session.0)["intensity"].as_str().unwrap().contains("window 0..0.99609375"));
}

/// What `seg_track_propagate` handed its frame callback: per frame, the records and masks.
#[derive(Default)]
struct Delivered {
    frames: Vec<(i64, Vec<SegTrackObjectEq>, Vec<Vec<u8>>)>,
    out: Option<Outputs>,
    stop_after: Option<usize>,
}

unsafe extern "C" fn on_frame(frame: i64, count: usize, user_data: *mut std::ffi::c_void) -> i32 {
    let d = unsafe { &mut *(user_data as *mut Delivered) };
    let out = d.out.as_ref().unwrap();
    assert_eq!(count, out.count);
    let records = out.objects[..count].iter().map(Into::into).collect();
    d.frames.push((frame, records, out.mask_data[..count].to_vec()));
    (d.stop_after != Some(d.frames.len())) as i32
}

fn propagation(direction: SegTrackDirection, start: Option<i64>, max_frames: i64) -> SegPropagation {
    let mut p = SegPropagation { struct_size: std::mem::size_of::<SegPropagation>() as u32, ..unsafe { std::mem::zeroed() } };
    assert_eq!(unsafe { seg_propagation_default(&mut p) }, SegStatus::SEG_OK);
    assert_eq!((p.direction, p.use_start_frame, p.max_frames), (SegTrackDirection::SEG_TRACK_FORWARD as i32, 0, -1));
    p.direction = direction as i32;
    if let Some(s) = start {
        (p.use_start_frame, p.start_frame) = (1, s);
    }
    p.max_frames = max_frames;
    p
}

/// Runs `seg_track_propagate` with buffers for `n` objects; returns the status and what was delivered.
fn propagate(
    t: &Track,
    n: usize,
    size: (usize, usize),
    request: Option<&SegPropagation>,
    stop_after: Option<usize>,
    control: *mut SegCallControl,
) -> (SegStatus, Delivered) {
    let mut d = Delivered { out: Some(Outputs::new(n, size.0, size.1)), stop_after, ..Default::default() };
    let out = d.out.as_mut().unwrap();
    let (objects, masks, count, info) =
        (out.objects.as_mut_ptr(), out.masks.as_ptr(), &mut out.count as *mut usize, &mut out.info as *mut SegTrackInfo);
    let st = unsafe {
        seg_track_propagate(
            t.0,
            request.map_or(ptr::null(), |r| r as *const _),
            objects,
            std::mem::size_of::<SegTrackObject>(),
            masks,
            n,
            count,
            Some(on_frame),
            &mut d as *mut Delivered as *mut std::ffi::c_void,
            info,
            control,
        )
    };
    (st, d)
}

fn volume_options(keep_frames: u32) -> SegTrackOptions {
    let mut o = track_options(14, keep_frames);
    o.volume = 1;
    o
}

/// The volume workflow through the C ABI: slices fed without encoding, a middle slice clicked,
/// both ways, a second object added after tracking, both ways from its slice; every delivered frame
/// equals the Rust tracker's (which the official predictor's parity tests cover).
#[test]
fn a_volume_propagates_both_ways_through_the_abi_as_the_tracker_does() {
    let session = video_session();
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let t = track(&session, Some(volume_options(2)));
    for f in &frames {
        let mut info = SegTrackInfo { struct_size: std::mem::size_of::<SegTrackInfo>() as u32, ..Default::default() };
        assert_eq!(unsafe { seg_track_add_frame(t.0, &rgb_image(f), ptr::null_mut(), &mut info, ptr::null_mut()) }, SegStatus::SEG_OK);
        assert_eq!(info.image_encoder_ms, 0.0, "a volume's slices are encoded when needed");
    }
    let s = state(&t);
    assert_eq!((s.frames, s.held_frames, s.volume), (14, 0, 1));
    let c = frames[7].w as f32 / 2.0;
    prompt(&t, 1, size, 7, 1, &[click(c, 100.0, 1)], None).unwrap();
    let both = propagation(SegTrackDirection::SEG_TRACK_BOTH_WAYS, None, -1);
    let (st, first) = propagate(&t, 1, size, Some(&both), None, ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    let order: Vec<i64> = first.frames.iter().map(|f| f.0).collect();
    assert_eq!(order, [7, 8, 9, 10, 11, 12, 13, 7, 6, 5, 4, 3, 2, 1, 0]);
    assert_eq!(first.out.as_ref().unwrap().info.frame, 0);
    assert!(state(&t).held_frames <= 3, "2 cached + the conditioning slice");
    // A second object after tracking started, on slice 10; both ways from there.
    let f = prompt(&t, 2, size, 10, 2, &[click(190.0, 140.0, 1)], None).unwrap();
    assert_eq!(f.objects.len(), 2);
    let from10 = propagation(SegTrackDirection::SEG_TRACK_BOTH_WAYS, Some(10), -1);
    let (st, second) = propagate(&t, 2, size, Some(&from10), None, ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    assert_eq!(second.frames.len(), 4 + 11);

    // The same with the Rust tracker, every frame held.
    let model = Arc::new(VideoModel::from_dir(&video_dir(), Options { intra_threads: 2, ..Options::default() }).unwrap());
    let mut r = Tracker::new(model, TrackerOptions { num_frames: Some(14), ..Default::default() }).unwrap();
    for f in &frames {
        r.add_frame(&ImageView::new(&f.data, f.w, f.h, 0, PixelFormat::Rgb24).unwrap()).unwrap();
    }
    r.add_points(7, 1, &[[c, 100.0]], &[1]).unwrap();
    let mut expected = Vec::new();
    let mut collect = |_: &Tracker, fm: &segrt::sam2::video::FrameMasks| {
        expected.push((fm.frame as i64, fm.objects.iter().map(|o| o.mask.clone()).collect::<Vec<_>>()));
        Ok(())
    };
    r.propagate_with(Propagation { direction: PropagationDirection::BothWays, ..Default::default() }, &mut collect).unwrap();
    r.add_points(10, 2, &[[190.0, 140.0]], &[1]).unwrap();
    r.propagate_with(Propagation { start_frame: Some(10), direction: PropagationDirection::BothWays, max_frames: None }, &mut collect)
        .unwrap();
    let got: Vec<(i64, Vec<Vec<u8>>)> = first.frames.iter().chain(&second.frames).map(|(f, _, m)| (*f, m.clone())).collect();
    assert_eq!(got.len(), expected.len());
    for ((gf, gm), (ef, em)) in got.iter().zip(&expected) {
        assert_eq!(gf, ef);
        assert!(gm == em, "frame {gf}: the ABI's masks differ from the tracker's");
    }
    // Records describe the masks.
    for (frame, records, masks) in &second.frames {
        for (rec, mask) in records.iter().zip(masks) {
            assert_eq!(rec.4, mask.iter().filter(|v| **v == 255).count() as u64, "frame {frame}");
        }
    }
}

#[test]
fn propagation_stops_cancels_reports_progress_and_refuses_bad_requests() {
    let session = video_session();
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let t = track(&session, Some(volume_options(3)));
    for f in &frames[..8] {
        add_frame(&t, f).unwrap();
    }
    prompt(&t, 1, size, 4, 1, &[click(110.0, 100.0, 1)], None).unwrap();
    // The frame callback stops after 3 frames: SEG_CANCELLED, those 3 stay tracked.
    let (st, d) = propagate(&t, 1, size, None, Some(3), ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_CANCELLED);
    assert!(last_error().contains("stopped by the frame callback after frame 6"), "{}", last_error());
    assert_eq!(d.frames.iter().map(|f| f.0).collect::<Vec<_>>(), [4, 5, 6]);
    assert_eq!(state(&t).held_outputs, 3, "the conditioning output and frames 5, 6");
    // Progress through a control ends at 1.
    let control = Control::new();
    let seen = Box::into_raw(Box::new(Vec::<(i32, f32)>::new()));
    unsafe extern "C" fn progress(stage: i32, fraction: f32, user: *mut std::ffi::c_void) -> i32 {
        unsafe { (*(user as *mut Vec<(i32, f32)>)).push((stage, fraction)) };
        1
    }
    assert_eq!(unsafe { seg_control_set_progress(control.ptr(), Some(progress), seen.cast()) }, SegStatus::SEG_OK);
    let reverse = propagation(SegTrackDirection::SEG_TRACK_REVERSE, Some(-1), 3);
    let (st, d) = propagate(&t, 1, size, Some(&reverse), None, control.ptr());
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    assert_eq!(d.frames.iter().map(|f| f.0).collect::<Vec<_>>(), [7, 6, 5, 4]);
    let seen = unsafe { Box::from_raw(seen) };
    let stages: Vec<f32> = seen.iter().filter(|(s, _)| *s == SegStage::SEG_STAGE_PROPAGATION as i32).map(|(_, f)| *f).collect();
    assert_eq!(stages, [0.0, 0.25, 0.5, 0.75, 1.0]);
    // Bad requests: nothing runs, nothing is written, the track is unchanged.
    let before = state(&t);
    for (request, what) in [
        (propagation(SegTrackDirection::SEG_TRACK_FORWARD, Some(8), -1), "frame 8"),
        (propagation(SegTrackDirection::SEG_TRACK_FORWARD, Some(-9), -1), "frame -9"),
        (propagation(SegTrackDirection::SEG_TRACK_FORWARD, None, -2), "max_frames is -2"),
        (SegPropagation { direction: 7, ..propagation(SegTrackDirection::SEG_TRACK_FORWARD, None, -1) }, "SegTrackDirection value 7"),
        (SegPropagation { use_start_frame: 2, ..propagation(SegTrackDirection::SEG_TRACK_FORWARD, None, -1) }, "use_start_frame is 2"),
    ] {
        let (st, d) = propagate(&t, 1, size, Some(&request), None, ptr::null_mut());
        assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "{what}");
        assert!(last_error().contains(what), "{what}: {}", last_error());
        assert!(d.frames.is_empty() && d.out.as_ref().unwrap().untouched());
    }
    let after = state(&t);
    assert_eq!((before.held_outputs, before.objects), (after.held_outputs, after.objects));
    // An object removed twice; prompts cleared for an unknown object.
    prompt(&t, 2, size, 2, 5, &[click(200.0, 60.0, 1)], None).unwrap();
    assert_eq!(unsafe { seg_track_remove_object(t.0, 5) }, SegStatus::SEG_OK);
    assert_eq!(unsafe { seg_track_remove_object(t.0, 5) }, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(last_error().contains("object 5 is not in the track"), "{}", last_error());
    let r = with_outputs(1, size, &mut |o, m, c, cnt, i| unsafe {
        seg_track_clear_prompts(t.0, 2, 5, o, std::mem::size_of::<SegTrackObject>(), m, c, cnt, i)
    });
    assert_eq!(r.unwrap_err().0, SegStatus::SEG_INVALID_ARGUMENT);
    assert_eq!(state(&t).objects, 1);
    // Clearing the conditioning prompt leaves the object without one: propagation says so.
    let f = with_outputs(1, size, &mut |o, m, c, cnt, i| unsafe {
        seg_track_clear_prompts(t.0, 4, 1, o, std::mem::size_of::<SegTrackObject>(), m, c, cnt, i)
    })
    .unwrap();
    assert_eq!(f.objects.len(), 1);
    let (st, _) = propagate(&t, 1, size, None, None, ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
}

/// A streamed track reaches back only to the frames it holds; ABI 1.0's smaller SegTrackOptions
/// still creates one.
#[test]
fn a_streamed_track_refuses_to_go_back_past_what_it_holds() {
    let session = video_session();
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let mut old = track_options(0, 3);
    old.struct_size = 16; // ABI 1.0's layout
    let t = track(&session, Some(old));
    assert_eq!(state(&t).volume, 0);
    for f in &frames[..6] {
        add_frame(&t, f).unwrap();
    }
    prompt(&t, 1, size, 5, 1, &[click(130.0, 100.0, 1)], None).unwrap();
    let reverse = propagation(SegTrackDirection::SEG_TRACK_REVERSE, None, -1);
    let (st, d) = propagate(&t, 1, size, Some(&reverse), None, ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(last_error().contains("frame 2 is no longer held"), "{}", last_error());
    assert!(d.frames.is_empty());
    // Within what it holds it goes back.
    let (st, d) = propagate(&t, 1, size, Some(&propagation(SegTrackDirection::SEG_TRACK_REVERSE, None, 2)), None, ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    assert_eq!(d.frames.iter().map(|f| f.0).collect::<Vec<_>>(), [5, 4, 3]);
    let mut bad = track_options(0, 3);
    bad.struct_size = 20; // ends inside a field
    let mut t2 = ptr::null_mut();
    assert_eq!(unsafe { seg_track_create(session.0, &bad, &mut t2) }, SegStatus::SEG_INVALID_ARGUMENT);
}

/// A frame callback that calls its own track (the host's natural mistake: read the state, remove an
/// object, reset) gets `SEG_INVALID_ARGUMENT` at once instead of waiting forever for the lock its
/// own propagation holds (without the guard this test hangs until nextest's timeout fails it); the
/// propagation goes on, and the track is usable afterwards.
#[test]
fn a_track_called_from_its_own_frame_callback_refuses_instead_of_hanging() {
    struct Reentry {
        track: *mut SegTrack,
        statuses: Vec<SegStatus>,
        message: String,
    }
    unsafe extern "C" fn call_own_track(_frame: i64, _count: usize, user_data: *mut std::ffi::c_void) -> i32 {
        let r = unsafe { &mut *(user_data as *mut Reentry) };
        let mut s = SegTrackState { struct_size: std::mem::size_of::<SegTrackState>() as u32, ..Default::default() };
        r.statuses.push(unsafe { seg_track_state(r.track, &mut s) });
        r.message = last_error();
        r.statuses.push(unsafe { seg_track_remove_object(r.track, 1) });
        r.statuses.push(unsafe { seg_track_reset(r.track) });
        1
    }
    let session = video_session();
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let t = track(&session, Some(volume_options(2)));
    for f in &frames[..4] {
        assert_eq!(
            unsafe { seg_track_add_frame(t.0, &rgb_image(f), ptr::null_mut(), ptr::null_mut(), ptr::null_mut()) },
            SegStatus::SEG_OK
        );
    }
    prompt(&t, 1, size, 1, 1, &[click(160.0, 100.0, 1)], None).unwrap();
    let mut out = Outputs::new(1, size.0, size.1);
    let mut r = Reentry { track: t.0, statuses: Vec::new(), message: String::new() };
    let both = propagation(SegTrackDirection::SEG_TRACK_BOTH_WAYS, None, -1);
    let st = unsafe {
        seg_track_propagate(
            t.0,
            &both,
            out.objects.as_mut_ptr(),
            std::mem::size_of::<SegTrackObject>(),
            out.masks.as_ptr(),
            1,
            &mut out.count,
            Some(call_own_track),
            &mut r as *mut Reentry as *mut std::ffi::c_void,
            &mut out.info,
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    assert_eq!(r.statuses.len(), 3 * 5, "frames 1, 2, 3, then 1, 0");
    assert!(r.statuses.iter().all(|s| *s == SegStatus::SEG_INVALID_ARGUMENT), "{:?}", r.statuses);
    assert!(r.message.contains("own frame, progress or log callback"), "{}", r.message);
    let s = state(&t);
    assert_eq!((s.objects, s.frames), (1, 4), "nothing the callback asked for happened");
    assert_eq!(unsafe { seg_track_remove_object(t.0, 1) }, SegStatus::SEG_OK, "usable after the call: {}", last_error());
}

/// `seg_track_propagate(track, NULL, ...)` starts at the earliest conditioning frame of any object,
/// pending prompts included (the official predictor consolidates them, then takes the minimum over
/// every object's conditioning frames): an object already tracked from frame 3 and then clicked on
/// frame 1 is propagated from frame 1; so after tracking a frame by hand instead of propagating.
#[test]
fn a_default_propagation_starts_at_the_earliest_prompt_pending_ones_included() {
    let session = video_session();
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let order = |d: &Delivered| d.frames.iter().map(|f| f.0).collect::<Vec<_>>();
    for track_by_hand in [false, true] {
        let t = track(&session, Some(volume_options(2)));
        for f in &frames[..6] {
            add_frame(&t, f).unwrap();
        }
        prompt(&t, 1, size, 3, 1, &[click(160.0, 100.0, 1)], None).unwrap();
        if track_by_hand {
            track_frame(&t, 1, size, 4).unwrap();
        } else {
            let (st, d) = propagate(&t, 1, size, None, None, ptr::null_mut());
            assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
            assert_eq!(order(&d), [3, 4, 5]);
        }
        // Frame 1 was never tracked for object 1: the click makes it a conditioning frame.
        prompt(&t, 1, size, 1, 1, &[click(150.0, 90.0, 1)], None).unwrap();
        let (st, d) = propagate(&t, 1, size, None, None, ptr::null_mut());
        assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
        println!("tracked frame 4 by hand first: {track_by_hand}; default propagation visited {:?}", order(&d));
        assert_eq!(order(&d), [1, 2, 3, 4, 5], "tracked frame 4 by hand first: {track_by_hand}");
    }
}

/// `SegPropagation.reserved` must be 0, as every reserved field: a request with garbage there is
/// refused before anything runs, so the field can be given a meaning later.
#[test]
fn a_propagation_request_with_a_reserved_field_set_is_refused() {
    let session = video_session();
    let frames = frames();
    let size = (frames[0].w, frames[0].h);
    let t = track(&session, Some(volume_options(2)));
    for f in &frames[..3] {
        add_frame(&t, f).unwrap();
    }
    prompt(&t, 1, size, 0, 1, &[click(160.0, 100.0, 1)], None).unwrap();
    let request = SegPropagation { reserved: 7, ..propagation(SegTrackDirection::SEG_TRACK_FORWARD, None, -1) };
    let (st, d) = propagate(&t, 1, size, Some(&request), None, ptr::null_mut());
    println!("reserved 7: {st:?} \"{}\"", last_error());
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(last_error().contains("SegPropagation.reserved must be 0"), "{}", last_error());
    assert!(d.frames.is_empty() && d.out.as_ref().unwrap().untouched());
    assert_eq!(state(&t).held_outputs, 1, "nothing was tracked");
    let (st, d) = propagate(&t, 1, size, Some(&propagation(SegTrackDirection::SEG_TRACK_FORWARD, None, -1)), None, ptr::null_mut());
    assert_eq!((st, d.frames.len()), (SegStatus::SEG_OK, 3), "{}", last_error());
}

/// A track's clicks and boxes are checked as an image's are (`seg_run_sam2_points`): the same
/// prompts are refused with the same messages, and the track is unchanged.
#[test]
fn track_prompts_are_checked_as_image_prompts_are() {
    let frames = frames();
    let f = &frames[0];
    let size = (f.w, f.h);
    let image = create_sam2("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx").unwrap();
    let desc = rgb_image(f);
    let image_error = |points: &[SegPoint], bbox: Option<SegBox>| {
        let mut mask = vec![0u8; f.w * f.h];
        let m = SegMask { data: mask.as_mut_ptr(), width: f.w as i32, height: f.h as i32, stride: 0 };
        let pts = if points.is_empty() { ptr::null() } else { points.as_ptr() };
        let b = bbox.as_ref().map_or(ptr::null(), |b| b as *const SegBox);
        let st = unsafe {
            seg_run_sam2_points(
                image.0,
                &desc,
                pts,
                points.len(),
                b,
                ptr::null(),
                0,
                0,
                &m,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        (st, last_error())
    };
    let session = video_session();
    let t = track(&session, Some(volume_options(2)));
    add_frame(&t, f).unwrap();
    prompt(&t, 1, size, 0, 1, &[click(160.0, 100.0, 1)], None).unwrap();
    let before = state(&t);
    let far_box = SegBox { x1: 5000.0, y1: 5000.0, x2: 9000.0, y2: 9000.0 };
    let flat_box = SegBox { x1: 50.0, y1: 60.0, x2: 50.0, y2: 90.0 };
    let mut differ = Vec::new();
    for (what, points, bbox) in [
        ("a click far outside", vec![click(1e9, -5e8, 1)], None),
        ("a box far outside", vec![], Some(far_box)),
        ("a zero-width box", vec![], Some(flat_box)),
        ("a click on the edge outside", vec![click(size.0 as f32 + 0.5, 10.0, 1)], None),
    ] {
        let (image_status, image_message) = image_error(&points, bbox);
        assert_eq!(image_status, SegStatus::SEG_INVALID_ARGUMENT, "{what}: the image path refuses it");
        let got = prompt(&t, 1, size, 0, 1, &points, bbox);
        println!("{what}: image {image_status:?} \"{image_message}\"; track {:?}", got.as_ref().map(|_| "SEG_OK").map_err(|e| e.clone()));
        if got.map(|_| ()).err() != Some((image_status, image_message)) {
            differ.push(what);
        }
    }
    assert!(differ.is_empty(), "not refused as on an image: {differ:?}");
    let after = state(&t);
    assert_eq!((before.objects, before.held_outputs), (after.objects, after.held_outputs), "the track is unchanged");
    // Inside the frame, the edge included, a prompt is taken as on an image.
    prompt(&t, 2, size, 0, 2, &[click(size.0 as f32, size.1 as f32, 1)], Some(SegBox { x1: 0.0, y1: 0.0, x2: 40.0, y2: 30.0 })).unwrap();
}

/// `seg_track_add_mask` (the official `add_new_mask`) through the C ABI on the recorded two-frame
/// video (models/sam2/video/reference/memory/, case ellipse_0_to_7): frame 0 prompted with the
/// ellipse's mask, frame 1 tracked gives the official mask and object score; an empty mask, one of
/// another size and a NULL mask are refused with nothing written.
#[test]
fn a_mask_prompt_is_add_new_mask() {
    let dir = video_dir().join("reference/memory");
    let index: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    let case = index["cases"].as_array().unwrap().iter().find(|c| c["name"] == "ellipse_0_to_7").unwrap().clone();
    let frames = frames();
    let (w, h) = (frames[0].w, frames[0].h);
    let session = video_session();
    let t = track(&session, Some(track_options(2, 0)));
    add_frame(&t, &frames[0]).unwrap();
    add_frame(&t, &frames[7]).unwrap();
    let add_mask = |mask: &mut Vec<u8>, mw: usize, mh: usize, null: bool| {
        let m = SegMask { data: mask.as_mut_ptr(), width: mw as i32, height: mh as i32, stride: 0 };
        let mp: *const SegMask = if null { ptr::null() } else { &m };
        with_outputs(1, (w, h), &mut |o, out, c, cnt, i| unsafe {
            seg_track_add_mask(t.0, 0, 1, mp, o, std::mem::size_of::<SegTrackObject>(), out, c, cnt, i, ptr::null_mut())
        })
    };
    assert_eq!(add_mask(&mut vec![0u8; w * h], w, h, false).unwrap_err().0, SegStatus::SEG_INVALID_ARGUMENT);
    assert_eq!(add_mask(&mut vec![255u8; w * h], w - 1, h, false).unwrap_err().0, SegStatus::SEG_INVALID_ARGUMENT);
    assert_eq!(add_mask(&mut vec![255u8; w * h], w, h, true).unwrap_err().0, SegStatus::SEG_NULL_POINTER);
    assert_eq!(state(&t).objects, 0, "a refused mask adds no object");
    let mut mask = load_gray(&dir.join(case["references"][0]["mask"].as_str().unwrap()));
    let prompted = add_mask(&mut mask, w, h, false).unwrap();
    assert_eq!((prompted.objects[0].0, prompted.objects[0].1), (1, 1));
    assert_eq!(f32::from_bits(prompted.objects[0].3), 10.0, "a mask prompt's object score");
    let tracked = track_frame(&t, 1, (w, h), 1).unwrap();
    let official = load_gray(&dir.join(case["mask"].as_str().unwrap()));
    let same = identical_pct(&tracked.masks[0], &official);
    let score = f32::from_bits(tracked.objects[0].3);
    let official_score = case["object_score_logit"].as_f64().unwrap() as f32;
    println!("frame 1 after a mask prompt on frame 0: {same:.3} % identical pixels, score {score} (official {official_score})");
    assert!(same >= 99.5, "{same}");
    assert!((score - official_score).abs() <= 1e-3, "{score} against {official_score}");
}
