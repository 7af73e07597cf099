//! Cancellation and progress through the C ABI (`SegCallControl`): a call cancelled from another
//! thread, before it starts or from its progress callback returns `SEG_CANCELLED`, writes none of
//! its outputs, and leaves the session or track as it was: the next call gives bit-identical
//! results. Cancel-to-return times are printed (figures, not checks: this machine is shared).

mod common;

use std::ffi::c_void;
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

/// A progress callback that records (stage, fraction) and stops the call at its `stop_at`-th report.
struct Recorder {
    seen: std::sync::Mutex<Vec<(i32, f32)>>,
    stop_at: usize,
}
unsafe extern "C" fn record(stage: i32, fraction: f32, user_data: *mut c_void) -> i32 {
    let r = unsafe { &*(user_data as *const Recorder) };
    let mut seen = r.seen.lock().unwrap();
    seen.push((stage, fraction));
    (seen.len() < r.stop_at) as i32
}

/// A UNet run under `control` into a mask pre-filled with 0x33.
fn unet_run(s: &Session, img: &Rgb, control: *mut SegCallControl) -> (SegStatus, Vec<u8>) {
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut mask = vec![0x33u8; img.w * img.h];
    let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let mut info = SegRunInfo { struct_size: std::mem::size_of::<SegRunInfo>() as u32, tiles: 777, ..Default::default() };
    let st = unsafe { seg_run_unet(s.0, &desc, &m, ptr::null_mut(), 0, &mut info, control) };
    if st != SegStatus::SEG_OK {
        assert_eq!(info.tiles, 777, "a failed call wrote its info");
    }
    (st, mask)
}

/// A picture large enough that a tiled run takes seconds: a sample tiled 2x2.
fn large_picture() -> Rgb {
    let s = load_rgb(&sample("lesion_01.png"));
    let (w, h) = (s.w * 2, s.h * 2);
    let mut data = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            let src = ((y % s.h) * s.w + x % s.w) * 3;
            data[(y * w + x) * 3..][..3].copy_from_slice(&s.data[src..src + 3]);
        }
    }
    Rgb { data, w, h }
}

#[test]
fn a_tiled_unet_run_cancelled_from_another_thread_writes_nothing_and_the_next_run_is_identical() {
    let mut o = default_options();
    o.tile_mode = SegTileMode::SEG_TILE_ON as i32;
    o.tile_width = 256;
    o.tile_height = 256;
    o.tile_batch = 1;
    o.max_sessions = 1;
    let s = create(&model("demo_unet.onnx"), Some(&o)).unwrap();
    let img = large_picture();
    let (st, expected) = unet_run(&s, &img, ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());

    // Cancel once the run reports its first tiles.
    let control = Control::new();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    struct Signal(std::sync::Mutex<Option<mpsc::Sender<()>>>);
    unsafe extern "C" fn on_progress(_stage: i32, fraction: f32, user_data: *mut c_void) -> i32 {
        let s = unsafe { &*(user_data as *const Signal) };
        if fraction > 0.0 {
            if let Some(tx) = s.0.lock().unwrap().take() {
                let _ = tx.send(());
            }
        }
        1
    }
    let signal = Signal(std::sync::Mutex::new(Some(started_tx)));
    assert_eq!(
        unsafe { seg_control_set_progress(control.0, Some(on_progress), &signal as *const Signal as *mut c_void) },
        SegStatus::SEG_OK
    );
    let cancelled_at = std::sync::Mutex::new(None);
    let (st, mask, returned) = std::thread::scope(|scope| {
        let (c, at) = (&control, &cancelled_at);
        scope.spawn(move || {
            started_rx.recv().unwrap();
            std::thread::sleep(Duration::from_millis(50));
            *at.lock().unwrap() = Some(Instant::now());
            assert_eq!(unsafe { seg_control_cancel(c.ptr()) }, SegStatus::SEG_OK);
        });
        let (st, mask) = unet_run(&s, &img, control.0);
        (st, mask, Instant::now())
    });
    assert_eq!(st, SegStatus::SEG_CANCELLED, "{}", last_error());
    assert!(last_error().contains("cancelled"), "{}", last_error());
    assert!(mask.iter().all(|v| *v == 0x33), "a cancelled run wrote the mask");
    let latency = returned - cancelled_at.lock().unwrap().unwrap();
    println!("tiled UNet {}x{}: cancel to return {:.1} ms", img.w, img.h, latency.as_secs_f64() * 1e3);

    // Still cancelled: the next call under it returns at once; after a reset the run completes.
    assert_eq!(unet_run(&s, &img, control.0).0, SegStatus::SEG_CANCELLED);
    assert_eq!(unsafe { seg_control_reset(control.0) }, SegStatus::SEG_OK);
    assert_eq!(unsafe { seg_control_set_progress(control.0, None, ptr::null_mut()) }, SegStatus::SEG_OK);
    let (st, again) = unet_run(&s, &img, control.0);
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    assert!(again == expected, "the run after a cancellation differs");
}

#[test]
fn a_single_onnx_runtime_run_is_terminated() {
    // One whole-image run at 1024x1024 on the dynamic UNet: no segrt loop to check a flag in, so
    // only ONNX Runtime's terminate flag can stop it.
    let mut o = default_options();
    o.input_width = 1024;
    o.input_height = 1024;
    o.max_sessions = 1;
    let s = create(&repo().join("models/test/unet_dynamic.onnx"), Some(&o)).unwrap();
    let img = load_rgb(&sample("lesion_01.png"));
    let t0 = Instant::now();
    assert_eq!(unet_run(&s, &img, ptr::null_mut()).0, SegStatus::SEG_OK, "{}", last_error());
    let whole = t0.elapsed();
    let control = Control::new();
    let recorder = Recorder { seen: Default::default(), stop_at: usize::MAX };
    unsafe { seg_control_set_progress(control.0, Some(record), &recorder as *const Recorder as *mut c_void) };
    let (st, cancel_to_return) = std::thread::scope(|scope| {
        let (c, r) = (&control, &recorder);
        let canceller = scope.spawn(move || {
            // The run has started once its progress was reported.
            while r.seen.lock().unwrap().is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(100));
            unsafe { seg_control_cancel(c.ptr()) };
            Instant::now()
        });
        let (st, _) = unet_run(&s, &img, control.0);
        let returned = Instant::now();
        (st, returned - canceller.join().unwrap())
    });
    assert_eq!(*recorder.seen.lock().unwrap(), vec![(SegStage::SEG_STAGE_RUN as i32, 0.0)]);
    assert_eq!(st, SegStatus::SEG_CANCELLED, "the run ended before the cancel: {}", last_error());
    println!(
        "one ONNX Runtime run (whole run {:.0} ms): cancel to return {:.1} ms",
        whole.as_secs_f64() * 1e3,
        cancel_to_return.as_secs_f64() * 1e3
    );
}

fn sam2_session() -> Session {
    create_sam2("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx").unwrap()
}

fn set_image(s: &Session, img: &Rgb, control: *mut SegCallControl) -> (SegStatus, f64) {
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut ms = -1.0;
    let st = unsafe { seg_sam2_set_image(s.0, &desc, &mut ms, control) };
    (st, ms)
}

#[test]
fn a_cancelled_sam2_encode_caches_nothing_and_clicks_stay_exact() {
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let s = sam2_session();
    let control = Control::new();
    // The progress callback stops the call at the encoder's first report: before the run.
    let recorder = Recorder { seen: Default::default(), stop_at: 1 };
    unsafe { seg_control_set_progress(control.0, Some(record), &recorder as *const Recorder as *mut c_void) };
    let (st, ms) = set_image(&s, &img, control.0);
    assert_eq!(st, SegStatus::SEG_CANCELLED, "{}", last_error());
    assert_eq!(ms, -1.0, "a cancelled call wrote out_encoder_ms");
    assert_eq!(*recorder.seen.lock().unwrap(), vec![(SegStage::SEG_STAGE_ENCODE as i32, 0.0)]);
    // Nothing was cached: the next encode runs, and a click after it equals a fresh session's.
    let (st, ms) = set_image(&s, &img, ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK);
    assert!(ms > 0.0, "the encoder did not run after a cancelled encode: {ms}");
    let click = |s: &Session, control: *mut SegCallControl| {
        let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
        let mut mask = vec![0x33u8; img.w * img.h];
        let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
        let p = SegPoint { x: 105.0, y: 105.0, label: 1 };
        let mut score = -1.0f32;
        let st =
            unsafe { seg_run_sam2_points(s.0, &desc, &p, 1, ptr::null(), ptr::null(), 0, 0, &m, &mut score, ptr::null_mut(), control) };
        (st, mask, score)
    };
    let fresh = click(&sam2_session(), ptr::null_mut());
    assert_eq!(fresh.0, SegStatus::SEG_OK);
    assert!(click(&s, ptr::null_mut()) == fresh);
    // A click under a cancelled control: nothing written.
    unsafe { seg_control_cancel(control.0) };
    let (st, mask, score) = click(&s, control.0);
    assert_eq!(st, SegStatus::SEG_CANCELLED);
    assert!(mask.iter().all(|v| *v == 0x33) && score == -1.0);
}

#[test]
fn segment_everything_reports_its_prompt_batches_and_stops_when_asked() {
    let s = create_sam2("sam2_oracle_encoder.onnx", "sam2_oracle_decoder.onnx").unwrap();
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut o = SegEverythingOptions::defaults();
    o.points_per_side = 8;
    o.points_per_batch = 4;
    o.stability_score_thresh = 0.5;
    let run = |control: *mut SegCallControl| {
        let mut n = usize::MAX;
        let st = unsafe { seg_sam2_everything(s.0, &desc, &o, ptr::null(), ptr::null_mut(), 0, 0, &mut n, ptr::null_mut(), control) };
        (st, n)
    };
    let control = Control::new();
    // The encoder reports 0 and 1, then each prompt batch: stop at the second batch.
    let recorder = Recorder { seen: Default::default(), stop_at: 4 };
    unsafe { seg_control_set_progress(control.0, Some(record), &recorder as *const Recorder as *mut c_void) };
    let (st, n) = run(control.0);
    assert_eq!(st, SegStatus::SEG_CANCELLED, "{}", last_error());
    assert_eq!(n, usize::MAX, "a cancelled call wrote its count");
    let seen = recorder.seen.lock().unwrap().clone();
    let prompts = SegStage::SEG_STAGE_PROMPTS as i32;
    assert!(seen.len() >= 3 && seen.iter().filter(|(s, _)| *s == prompts).count() >= 2, "{seen:?}");
    let fractions: Vec<f32> = seen.iter().filter(|(s, _)| *s == prompts).map(|(_, f)| *f).collect();
    assert!(fractions.windows(2).all(|w| w[0] < w[1]) && fractions[0] == 0.0, "{fractions:?}");
    // Not cached as a result: the same call without a control runs and finds the objects.
    let (st, n) = run(ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    assert!(n > 0 && n != usize::MAX);
}

fn video_session() -> Session {
    let dir = cstr(repo().join("models/sam2/video").to_str().unwrap());
    let mut s = ptr::null_mut();
    assert_eq!(unsafe { seg_create_sam2_video(dir.as_ptr(), ptr::null(), &mut s) }, SegStatus::SEG_OK, "{}", last_error());
    Session(s)
}

struct Track(*mut SegTrack);
impl Drop for Track {
    fn drop(&mut self) {
        unsafe { seg_track_free(self.0) };
    }
}

fn frames() -> Vec<Rgb> {
    let dir: PathBuf = repo().join("models/sam2/video/reference");
    let index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    index["frames"].as_array().unwrap().iter().take(4).map(|f| load_rgb(&dir.join(f.as_str().unwrap()))).collect()
}

fn state(t: &Track) -> SegTrackState {
    let mut s = SegTrackState { struct_size: std::mem::size_of::<SegTrackState>() as u32, ..Default::default() };
    assert_eq!(unsafe { seg_track_state(t.0, &mut s) }, SegStatus::SEG_OK);
    s
}

/// A track with frame 0 added and one object clicked on it.
fn prompted_track(video: &Session, frames: &[Rgb]) -> Track {
    let mut raw = ptr::null_mut();
    assert_eq!(unsafe { seg_track_create(video.0, ptr::null(), &mut raw) }, SegStatus::SEG_OK);
    let t = Track(raw);
    let f = &frames[0];
    let desc = image_desc(&f.data, f.w, f.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    assert_eq!(unsafe { seg_track_add_frame(t.0, &desc, ptr::null_mut(), ptr::null_mut(), ptr::null_mut()) }, SegStatus::SEG_OK);
    let click = SegPoint { x: 150.0, y: 110.0, label: 1 };
    let st = unsafe {
        seg_track_add_prompt(
            t.0,
            0,
            1,
            &click,
            1,
            ptr::null(),
            ptr::null_mut(),
            0,
            ptr::null(),
            0,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    t
}

fn next(t: &Track, f: &Rgb, control: *mut SegCallControl) -> (SegStatus, Vec<u8>) {
    let desc = image_desc(&f.data, f.w, f.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut mask = vec![0x33u8; f.w * f.h];
    let m = SegMask { data: mask.as_mut_ptr(), width: f.w as i32, height: f.h as i32, stride: 0 };
    let mut n = 0usize;
    let st = unsafe { seg_track_next(t.0, &desc, ptr::null_mut(), 0, &m, 1, &mut n, ptr::null_mut(), control) };
    (st, mask)
}

#[test]
fn a_track_call_cancelled_midway_leaves_the_track_as_it_was() {
    let video = video_session();
    let frames = frames();
    let reference = prompted_track(&video, &frames);
    let expected: Vec<Vec<u8>> = frames[1..]
        .iter()
        .map(|f| next(&reference, f, ptr::null_mut()))
        .map(|(st, m)| {
            assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
            m
        })
        .collect();

    let t = prompted_track(&video, &frames);
    let control = Control::new();
    // Stop at the 2nd model run of the call (after the frame's encoder, inside tracking): the frame
    // was encoded and the tracking had begun when the call was stopped.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    unsafe extern "C" fn stop_at_second(_stage: i32, _fraction: f32, _user_data: *mut c_void) -> i32 {
        (CALLS.fetch_add(1, Ordering::SeqCst) < 1) as i32
    }
    unsafe { seg_control_set_progress(control.0, Some(stop_at_second), ptr::null_mut()) };
    let before = state(&t);
    let (st, mask) = next(&t, &frames[1], control.0);
    assert_eq!(st, SegStatus::SEG_CANCELLED, "{}", last_error());
    assert!(CALLS.load(Ordering::SeqCst) >= 2, "the call was not stopped midway");
    assert!(mask.iter().all(|v| *v == 0x33), "a cancelled call wrote a mask");
    let after = state(&t);
    assert_eq!(
        (after.frames, after.objects, after.held_frames, after.held_outputs, after.tracking_started),
        (before.frames, before.objects, before.held_frames, before.held_outputs, before.tracking_started),
        "the cancelled call changed the track"
    );
    // Going on without a control gives exactly the uninterrupted track's masks.
    for (f, want) in frames[1..].iter().zip(&expected) {
        let (st, got) = next(&t, f, ptr::null_mut());
        assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
        assert!(got == *want, "a frame after the cancelled call differs");
    }
}

#[test]
fn control_handles_are_checked() {
    let control = Control::new();
    // A control is not a session, and a session is not a control.
    assert_eq!(unsafe { seg_free(control.0.cast()) }, SegStatus::SEG_WRONG_SESSION_KIND);
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    assert_eq!(unsafe { seg_control_cancel(s.0.cast()) }, SegStatus::SEG_WRONG_SESSION_KIND);
    let img = load_rgb(&sample("lesion_01.png"));
    assert_eq!(unet_run(&s, &img, s.0.cast()).0, SegStatus::SEG_WRONG_SESSION_KIND);
    // Made-up, freed and NULL handles.
    let bogus = 0x1234usize as *mut SegCallControl;
    assert_eq!(unsafe { seg_control_cancel(bogus) }, SegStatus::SEG_INVALID_HANDLE);
    assert_eq!(unet_run(&s, &img, bogus).0, SegStatus::SEG_INVALID_HANDLE);
    assert_eq!(unsafe { seg_control_free(ptr::null_mut()) }, SegStatus::SEG_OK);
    let mut raw = ptr::null_mut();
    assert_eq!(unsafe { seg_control_create(&mut raw) }, SegStatus::SEG_OK);
    assert_eq!(unsafe { seg_control_free(raw) }, SegStatus::SEG_OK);
    assert_eq!(unsafe { seg_control_free(raw) }, SegStatus::SEG_INVALID_HANDLE);
    assert_eq!(unsafe { seg_control_create(ptr::null_mut()) }, SegStatus::SEG_NULL_POINTER);
    // A control that was never cancelled changes nothing.
    let (st, mask) = unet_run(&s, &img, control.0);
    assert_eq!(st, SegStatus::SEG_OK);
    assert!(mask == unet_run(&s, &img, ptr::null_mut()).1);
}
