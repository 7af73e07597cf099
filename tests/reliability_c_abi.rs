//! Load through the C ABI: thread storms on one UNet and one SAM2 handle compared bit for bit with
//! single-threaded runs, handles created and freed concurrently, a handle freed while calls are in
//! flight, and per-thread sessions released when their threads exit.
//!
//! The storm size is `SEGRT_STORM_CALLS` calls per thread (default 25 here; the closing figures
//! use 500: `SEGRT_STORM_CALLS=500 cargo test --release --test reliability_c_abi -- --nocapture`).

mod common;

use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

const THREADS: usize = 8;

fn storm_calls() -> usize {
    std::env::var("SEGRT_STORM_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(25)
}

/// Sessions of one thread each, at most `STORM_SESSIONS` of them: 8 calling threads share them.
fn one_thread_options() -> SegOptions {
    let mut o = default_options();
    o.intra_threads = 1;
    o.max_sessions = STORM_SESSIONS;
    o
}

const STORM_SESSIONS: i32 = 3;

/// Inputs of several sizes and layouts, so threads do different work at the same time.
fn storm_inputs() -> Vec<(Vec<u8>, usize, usize, SegPixelFormat)> {
    let mut v = Vec::new();
    for name in ["lesion_06.png", "lesion_04.png", "lesion_02.png"] {
        let img = load_rgb(&sample(name));
        v.push((img.data.clone(), img.w, img.h, SegPixelFormat::SEG_FORMAT_RGB24));
        let bgra: Vec<u8> = img.data.chunks(3).flat_map(|p| [p[2], p[1], p[0], 255]).collect();
        v.push((bgra, img.w, img.h, SegPixelFormat::SEG_FORMAT_BGRA32));
    }
    v
}

#[test]
fn unet_storm_matches_single_thread_bit_for_bit() {
    let s = Arc::new(create(&model("demo_unet.onnx"), Some(&one_thread_options())).unwrap());
    let inputs = Arc::new(storm_inputs());
    let expected: Arc<Vec<Vec<u8>>> =
        Arc::new(inputs.iter().map(|(d, w, h, f)| run(&s, &image_desc(d, *w, *h, 0, *f)).unwrap().mask).collect());
    let calls = storm_calls();
    let mismatches = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (s, inputs, expected, mismatches) = (s.clone(), inputs.clone(), expected.clone(), mismatches.clone());
            std::thread::spawn(move || {
                for i in 0..calls {
                    let k = (t * 7 + i) % inputs.len();
                    let (d, w, h, f) = &inputs[k];
                    let out = run(&s, &image_desc(d, *w, *h, 0, *f)).unwrap_or_else(|e| panic!("thread {t} call {i}: {e:?}"));
                    if out.mask != expected[k] {
                        mismatches.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a storm thread panicked");
    }
    let secs = start.elapsed().as_secs_f64();
    let info = session_info(s.0);
    println!(
        "UNet storm: {THREADS} threads x {calls} calls = {} runs in {secs:.1} s ({:.0} runs/s), {} masks differing from the single-thread run; pool {}",
        THREADS * calls,
        (THREADS * calls) as f64 / secs,
        mismatches.load(Ordering::Relaxed),
        info["pool"]
    );
    assert_eq!(mismatches.load(Ordering::Relaxed), 0);
    // 8 threads shared at most STORM_SESSIONS sessions, and waited for them rather than build more.
    let pool = &info["pool"];
    assert!(pool["created"].as_i64().unwrap() <= STORM_SESSIONS as i64, "{info}");
    assert_eq!(pool["sessions"], pool["created"], "{info}");
    assert_eq!(pool["busy"], 0, "{info}");
    assert!(pool["waits"].as_u64().unwrap() > 0, "8 threads on 3 sessions must have waited: {info}");
}

fn sam2_session() -> Session {
    let dir = repo().join("models/sam2");
    let (e, d) = (
        cstr(dir.join("sam2_tiny_sam2onnx_encoder.onnx").to_str().unwrap()),
        cstr(dir.join("sam2_tiny_sam2onnx_decoder.onnx").to_str().unwrap()),
    );
    let mut s = ptr::null_mut();
    let o = one_thread_options();
    assert_eq!(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &o, &mut s) }, SegStatus::SEG_OK, "{}", last_error());
    Session(s)
}

fn sam2_mask(s: &Session, img: &Rgb, points: &[SegPoint]) -> Result<Vec<u8>, (SegStatus, String)> {
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut mask = vec![0u8; img.w * img.h];
    let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let st = unsafe {
        seg_run_sam2_points(
            s.0,
            &desc,
            points.as_ptr(),
            points.len(),
            ptr::null(),
            ptr::null(),
            0,
            0,
            &m,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if st == SegStatus::SEG_OK {
        Ok(mask)
    } else {
        Err((st, last_error()))
    }
}

#[test]
fn sam2_storm_with_mixed_set_image_and_clicks_matches_single_thread() {
    let s = Arc::new(sam2_session());
    let refs = repo().join("models/sam2/reference");
    let images = Arc::new(vec![load_rgb(&refs.join("img0.png")), load_rgb(&refs.join("img1.png"))]);
    let prompts: Arc<Vec<(usize, Vec<SegPoint>)>> = Arc::new(vec![
        (0, vec![SegPoint { x: 105.0, y: 105.0, label: 1 }]),
        (0, vec![SegPoint { x: 105.0, y: 105.0, label: 1 }, SegPoint { x: 240.0, y: 140.0, label: 0 }]),
        (1, vec![SegPoint { x: 60.0, y: 100.0, label: 1 }]),
        (1, vec![SegPoint { x: 140.0, y: 60.0, label: 1 }]),
    ]);
    let expected: Arc<Vec<Vec<u8>>> = Arc::new(prompts.iter().map(|(i, p)| sam2_mask(&s, &images[*i], p).unwrap()).collect());
    let calls = storm_calls();
    let mismatches = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (s, images, prompts, expected, mismatches) =
                (s.clone(), images.clone(), prompts.clone(), expected.clone(), mismatches.clone());
            std::thread::spawn(move || {
                for i in 0..calls {
                    let k = (t + i) % prompts.len();
                    if (t + i) % 5 == 0 {
                        // Another thread's image may replace the cache at any time: clicks carry their image.
                        // A newer image set by another thread cancels this encode (SEG_CANCELLED, by
                        // design); a click carrying its image is never cancelled by anyone else.
                        let other = &images[(t + i) % 2];
                        let desc = image_desc(&other.data, other.w, other.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
                        let st = unsafe { seg_sam2_set_image(s.0, &desc, ptr::null_mut(), ptr::null_mut()) };
                        assert!(matches!(st, SegStatus::SEG_OK | SegStatus::SEG_CANCELLED), "set_image: {st:?} {}", last_error());
                    }
                    let (img, points) = (&images[prompts[k].0], &prompts[k].1);
                    let mask = sam2_mask(&s, img, points).unwrap_or_else(|e| panic!("thread {t} call {i}: {e:?}"));
                    if mask != expected[k] {
                        mismatches.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a storm thread panicked");
    }
    println!(
        "SAM2 storm: {THREADS} threads x {calls} calls (clicks on 2 images, set_image every 5th) in {:.1} s, {} masks differing from the single-thread run",
        start.elapsed().as_secs_f64(),
        mismatches.load(Ordering::Relaxed)
    );
    assert_eq!(mismatches.load(Ordering::Relaxed), 0);
}

#[test]
fn handles_created_and_freed_concurrently() {
    let model_bytes = Arc::new(std::fs::read(model("demo_unet.onnx")).unwrap());
    let img = Arc::new(load_rgb(&sample("lesion_06.png")));
    let expected = run_rgb(&create(&model("demo_unet.onnx"), None).unwrap(), &img).mask;
    let expected = Arc::new(expected);
    let per_thread = 6;
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let (model_bytes, img, expected) = (model_bytes.clone(), img.clone(), expected.clone());
            std::thread::spawn(move || {
                let o = one_thread_options();
                for _ in 0..per_thread {
                    let mut s = ptr::null_mut();
                    assert_eq!(
                        unsafe { seg_create_from_memory(model_bytes.as_ptr(), model_bytes.len(), &o, &mut s) },
                        SegStatus::SEG_OK,
                        "{}",
                        last_error()
                    );
                    let session = Session(s);
                    assert_eq!(run_rgb(&session, &img).mask, *expected);
                    let raw = session.0;
                    drop(session); // seg_free
                    assert_eq!(unsafe { seg_free(raw) }, SegStatus::SEG_INVALID_HANDLE, "double free detected");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a create/free thread panicked");
    }
    println!("{} handles created, used and freed on {THREADS} threads at once", THREADS * per_thread);
}

#[test]
fn freeing_a_handle_while_calls_are_in_flight_is_safe() {
    // Contract: a call that has started finishes normally (it holds the session alive); calls that
    // start after seg_free get SEG_INVALID_HANDLE. Never undefined behaviour.
    let s = create(&model("demo_unet.onnx"), Some(&one_thread_options())).unwrap();
    let raw = s.0 as usize;
    std::mem::forget(s); // freed by hand below
    let img = Arc::new(load_rgb(&sample("lesion_02.png")));
    let (ok, invalid) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (img, ok, invalid) = (img.clone(), ok.clone(), invalid.clone());
            std::thread::spawn(move || loop {
                let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
                let mut mask = vec![0u8; img.w * img.h];
                let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
                match unsafe { seg_run_unet(raw as *mut SegSession, &desc, &m, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) } {
                    SegStatus::SEG_OK => {
                        assert!(mask.contains(&255), "a call that ran returned a real mask");
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                    SegStatus::SEG_INVALID_HANDLE => {
                        invalid.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    other => panic!("unexpected {other:?}: {}", last_error()),
                }
            })
        })
        .collect();
    while ok.load(Ordering::Relaxed) < 4 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(unsafe { seg_free(raw as *mut SegSession) }, SegStatus::SEG_OK);
    for w in workers {
        w.join().expect("a worker panicked");
    }
    println!(
        "free while in flight: {} runs completed, then {} calls got SEG_INVALID_HANDLE",
        ok.load(Ordering::Relaxed),
        invalid.load(Ordering::Relaxed)
    );
    assert_eq!(invalid.load(Ordering::Relaxed), 4);
}

#[test]
fn short_lived_threads_reuse_the_pools_sessions() {
    let s = Arc::new(create(&model("demo_unet.onnx"), Some(&one_thread_options())).unwrap());
    let img = Arc::new(load_rgb(&sample("lesion_06.png")));
    let churn = |n: usize| {
        for _ in 0..n {
            let (s, img) = (s.clone(), img.clone());
            std::thread::spawn(move || {
                run_rgb(&s, &img);
            })
            .join()
            .unwrap();
        }
    };
    churn(5); // warm-up: allocator arenas, ONNX Runtime's per-thread caches
    let before = segrt::engine::memory::resident_bytes().unwrap_or(0);
    churn(40);
    let after = segrt::engine::memory::resident_bytes().unwrap_or(0);
    let info = session_info(s.0);
    println!(
        "thread churn: 40 short-lived threads each ran once; pool {}, RSS {:.1} MB -> {:.1} MB",
        info["pool"],
        before as f64 / 1e6,
        after as f64 / 1e6
    );
    // One thread at a time: the session built at creation served all 45 threads.
    assert_eq!(info["pool"]["created"], 1, "{info}");
    assert_eq!(info["pool"]["sessions"], 1, "{info}");
}
