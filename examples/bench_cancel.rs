//! How fast a cancelled call returns, and what encoding ahead saves a click (figures, not assertions),
//! through the C ABI as a host calls it:
//!
//!   cargo run --release --example bench_cancel -- [--sam2 DIR] [--video DIR] [--cancels 20] [--unet-size 8000]
//!       [--track-frames 100]
//!
//! Defaults to the real-size hiera-tiny pair (random weights) that
//! `models/sam2/export_sam2.py --real-size models/sam2/real-size --conventions samexporter` writes and
//! the video modules of `models/sam2/export_sam2_video.py --real-size models/sam2/real-size/video`
//! (both git-ignored), and the bundled demo UNet.
//!
//! For each long call: a 1920x1080 SAM2 encode, segment-everything with a 32x32 grid (encoder cached),
//! a tiled UNet on an N x N picture and the steps of a 100-frame 1280x720 track, a thread cancels
//! the call after a random delay; the table gives the cancel-to-return time (p50, p95, max) of the
//! calls that were cancelled while running. Then the time from a click made 1 s after an image was
//! shown to its mask: with the encode started when the image was shown (encoding ahead), and
//! without (the click encodes).

use std::ffi::CString;
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use segrt::ffi::*;

struct Args {
    sam2: PathBuf,
    video: PathBuf,
    cancels: usize,
    unet_size: usize,
    track_frames: usize,
}

fn parse_args() -> Result<Args, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        sam2: root.join("models/sam2/real-size"),
        video: root.join("models/sam2/real-size/video"),
        cancels: 20,
        unet_size: 8000,
        track_frames: 100,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<usize>().map_err(|_| format!("{flag}: '{v}' is not a whole number"));
        match flag.as_str() {
            "--sam2" => a.sam2 = value.into(),
            "--video" => a.video = value.into(),
            "--cancels" => a.cancels = num(&value)?.max(1),
            "--unet-size" => a.unet_size = num(&value)?.max(256),
            "--track-frames" => a.track_frames = num(&value)?.max(3),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

fn last_error() -> String {
    let mut buf = vec![0u8; 2048];
    let n = unsafe { seg_last_error(buf.as_mut_ptr() as *mut _, buf.len()) };
    buf.truncate(n.saturating_sub(1).min(buf.len()));
    String::from_utf8_lossy(&buf).into_owned()
}

fn check(st: SegStatus, what: &str) -> Result<(), String> {
    if st == SegStatus::SEG_OK {
        Ok(())
    } else {
        Err(format!("{what}: {st:?} {}", last_error()))
    }
}

/// A picture with structure (gradients and a disc), BGR.
fn picture(w: usize, h: usize, shift: usize) -> Vec<u8> {
    let mut p = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = (x as i64 - (w / 3 + shift) as i64, y as i64 - (h / 2) as i64);
            let disc = dx * dx + dy * dy < (h as i64 / 5).pow(2);
            let px = &mut p[(y * w + x) * 3..][..3];
            px.copy_from_slice(&if disc { [200, 60, 40] } else { [(x * 90 / w) as u8 + 40, (y * 70 / h) as u8 + 50, 100] });
        }
    }
    p
}

fn image(data: &[u8], w: usize, h: usize) -> SegImage {
    SegImage {
        data: data.as_ptr(),
        width: w as i32,
        height: h as i32,
        stride: 0,
        format: SegPixelFormat::SEG_FORMAT_BGR24 as i32,
        plane1: ptr::null(),
        plane2: ptr::null(),
    }
}

struct Control(*mut SegCallControl);
unsafe impl Send for Control {}
unsafe impl Sync for Control {}
impl Control {
    fn new() -> Self {
        let mut c = ptr::null_mut();
        unsafe { seg_control_create(&mut c) };
        Control(c)
    }
}
impl Drop for Control {
    fn drop(&mut self) {
        unsafe { seg_control_free(self.0) };
    }
}

/// xorshift, seeded: the same delays on every run.
static RNG: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
fn random_below(limit: Duration) -> Duration {
    let mut x = RNG.load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    RNG.store(x, Ordering::Relaxed);
    limit.mul_f64((x % 10_000) as f64 / 10_000.0)
}

/// Runs `call` under a control cancelled after `delay` from another thread. Returns the status and,
/// when it was cancelled while running, the time from the cancel to the return.
fn cancelled_after(delay: Duration, call: &mut dyn FnMut(*mut SegCallControl) -> SegStatus) -> (SegStatus, Option<Duration>) {
    let control = Control::new();
    let (st, returned, cancelled_at) = std::thread::scope(|s| {
        let c = &control;
        let canceller = s.spawn(move || {
            std::thread::sleep(delay);
            let at = Instant::now();
            unsafe { seg_control_cancel(c.0) };
            at
        });
        let st = call(control.0);
        let returned = Instant::now();
        (st, returned, canceller.join().unwrap())
    });
    let latency = (st == SegStatus::SEG_CANCELLED && returned >= cancelled_at).then(|| returned - cancelled_at);
    (st, latency)
}

struct Row {
    name: String,
    alone: Duration,
    latencies: Vec<Duration>,
    finished: usize,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn print_header() {
    println!("cancel to return (a thread cancels each call after a random delay; calls cancelled while running):");
    println!("{:<34} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8}", "call", "alone ms", "cancelled", "finished", "p50 ms", "p95 ms", "max ms");
}

/// Prints a row as soon as it is measured (a long run still shows what it has).
fn print_row(r: &Row) {
    {
        let mut l = r.latencies.clone();
        l.sort();
        let at = |q: f64| l.get(((l.len() as f64 - 1.0) * q).round() as usize).map_or(f64::NAN, |d| ms(*d));
        println!(
            "{:<34} {:>10.0} {:>9} {:>8} {:>8.1} {:>8.1} {:>8.1}",
            r.name,
            ms(r.alone),
            l.len(),
            r.finished,
            at(0.5),
            at(0.95),
            at(1.0)
        );
    }
}

/// Cancels `call` `n` times after random delays below `window`.
fn measure(
    name: &str,
    alone: Duration,
    window: Duration,
    n: usize,
    call: &mut dyn FnMut(*mut SegCallControl) -> SegStatus,
) -> Result<Row, String> {
    let mut row = Row { name: name.into(), alone, latencies: Vec::new(), finished: 0 };
    for _ in 0..n {
        match cancelled_after(random_below(window), call) {
            (SegStatus::SEG_CANCELLED, Some(l)) => row.latencies.push(l),
            (SegStatus::SEG_CANCELLED, None) => {}
            (SegStatus::SEG_OK, _) => row.finished += 1,
            (st, _) => return Err(format!("{name}: {st:?} {}", last_error())),
        }
    }
    Ok(row)
}

fn timed(call: &mut dyn FnMut(*mut SegCallControl) -> SegStatus, what: &str) -> Result<Duration, String> {
    let t = Instant::now();
    check(call(ptr::null_mut()), what)?;
    Ok(t.elapsed())
}

fn main() -> Result<(), String> {
    let args = parse_args()?;
    let cstr = |p: PathBuf| CString::new(p.to_str().unwrap()).unwrap();
    print_header();
    let (w, h) = (1920usize, 1080usize);
    let frame = picture(w, h, 0);
    let other = picture(w, h, 40);

    // SAM2 encode and segment-everything on the real-size pair.
    let (enc, dec) = (
        cstr(args.sam2.join("sam2_tiny_random_1024_samexporter_encoder.onnx")),
        cstr(args.sam2.join("sam2_tiny_random_1024_samexporter_decoder.onnx")),
    );
    let mut sam = ptr::null_mut();
    check(unsafe { seg_create_sam2(enc.as_ptr(), dec.as_ptr(), ptr::null(), &mut sam) }, "SAM2 pair (see --sam2)")?;
    let img = image(&frame, w, h);
    let mut encode = |control: *mut SegCallControl| unsafe {
        seg_sam2_reset(sam);
        seg_sam2_set_image(sam, &img, ptr::null_mut(), control)
    };
    let alone = timed(&mut encode, "encode")?;
    print_row(&measure("SAM2.1 tiny encode 1920x1080", alone, alone, args.cancels, &mut encode)?);

    check(unsafe { seg_sam2_set_image(sam, &img, ptr::null_mut(), ptr::null_mut()) }, "encode")?;
    let mut labels = vec![0u16; w * h];
    let mut call = 0u32;
    let mut everything = |control: *mut SegCallControl| unsafe {
        let mut o: SegEverythingOptions = std::mem::zeroed();
        o.struct_size = std::mem::size_of::<SegEverythingOptions>() as u32;
        seg_everything_options_default(&mut o);
        o.points_per_side = 32;
        // Options never asked before: the session's last result never serves, the prompts run every time.
        call += 1;
        o.pred_iou_thresh = 0.8 - call as f32 * 1e-4;
        let l = SegLabelImage { data: labels.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
        let mut count = 0usize;
        seg_sam2_everything(sam, ptr::null(), &o, &l, ptr::null_mut(), 0, 0, &mut count, ptr::null_mut(), control)
    };
    let alone = timed(&mut everything, "everything")?;
    print_row(&measure("everything 32x32 (encoder cached)", alone, alone.min(Duration::from_secs(10)), args.cancels, &mut everything)?);

    // Encoding ahead: a click 1 s after the image is shown.
    let mut mask = vec![0u8; w * h];
    let click = |image: *const SegImage, mask: &mut [u8]| unsafe {
        let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
        let p = SegPoint { x: w as f32 / 3.0, y: h as f32 / 2.0, label: 1 };
        seg_run_sam2_points(sam, image, &p, 1, ptr::null(), ptr::null(), 0, 0, &m, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
    };
    let mut ahead = Vec::new();
    let mut behind = Vec::new();
    for trial in 0..3 {
        let pixels = if trial % 2 == 0 { &other } else { &frame };
        let shown = image(pixels, w, h);
        unsafe { seg_sam2_reset(sam) };
        // The host's worker thread: the session and the image description go there.
        struct Shared(*mut SegSession, SegImage);
        unsafe impl Send for Shared {}
        unsafe impl Sync for Shared {}
        let shared = Shared(sam, shown);
        let took = std::thread::scope(|scope| {
            let s = &shared;
            let encoder = scope.spawn(move || unsafe { seg_sam2_set_image(s.0, &s.1, ptr::null_mut(), ptr::null_mut()) });
            std::thread::sleep(Duration::from_secs(1));
            let t = Instant::now();
            let st = click(ptr::null(), &mut mask);
            let took = t.elapsed();
            (st, encoder.join().unwrap(), took)
        });
        check(took.0, "click with encoding ahead")?;
        check(took.1, "encode ahead")?;
        ahead.push(took.2);
        unsafe { seg_sam2_reset(sam) };
        std::thread::sleep(Duration::from_secs(1));
        let t = Instant::now();
        check(click(&shown, &mut mask), "click that encodes")?;
        behind.push(t.elapsed());
    }
    let list = |v: &[Duration]| v.iter().map(|d| format!("{:.0}", ms(*d))).collect::<Vec<_>>().join(", ");
    println!("click 1 s after the image was shown, click to mask (ms): encoding ahead {}; click encodes {}", list(&ahead), list(&behind));
    unsafe { seg_free(sam) };

    // A tiled UNet on a large picture.
    let model = cstr(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/demo_unet.onnx"));
    let mut unet = ptr::null_mut();
    check(unsafe { seg_create(model.as_ptr(), ptr::null(), &mut unet) }, "demo UNet")?;
    let n = args.unet_size;
    let big = picture(n, n, 0);
    let big_img = image(&big, n, n);
    let mut big_mask = vec![0u8; n * n];
    let mut tiled = |control: *mut SegCallControl| unsafe {
        let m = SegMask { data: big_mask.as_mut_ptr(), width: n as i32, height: n as i32, stride: 0 };
        seg_run_unet(unet, &big_img, &m, ptr::null_mut(), 0, ptr::null_mut(), control)
    };
    let alone = timed(&mut tiled, "tiled UNet")?;
    print_row(&measure(&format!("tiled UNet {n}x{n}"), alone, alone, args.cancels, &mut tiled)?);
    unsafe { seg_free(unet) };

    // The steps of a 100-frame track (each frame: encoder + memory attention + decoder + memory encoder).
    let models = cstr(args.video.clone());
    let mut video = ptr::null_mut();
    check(unsafe { seg_create_sam2_video(models.as_ptr(), ptr::null(), &mut video) }, "video modules (see --video)")?;
    let (tw, th) = (1280usize, 720usize);
    let frames: Vec<Vec<u8>> = (0..8).map(|i| picture(tw, th, i * 12)).collect();
    let mut track = ptr::null_mut();
    check(unsafe { seg_track_create(video, ptr::null(), &mut track) }, "track")?;
    let first = image(&frames[0], tw, th);
    let mut index = 0i64;
    check(unsafe { seg_track_add_frame(track, &first, &mut index, ptr::null_mut(), ptr::null_mut()) }, "add_frame")?;
    let p = SegPoint { x: tw as f32 / 3.0, y: th as f32 / 2.0, label: 1 };
    let mut objects = [SegTrackObject::default(); 1];
    let mut tmask = vec![0u8; tw * th];
    let mut count = 0usize;
    let m = SegMask { data: tmask.as_mut_ptr(), width: tw as i32, height: th as i32, stride: 0 };
    let osize = std::mem::size_of::<SegTrackObject>();
    check(
        unsafe {
            seg_track_add_prompt(
                track,
                0,
                1,
                &p,
                1,
                ptr::null(),
                objects.as_mut_ptr(),
                osize,
                &m,
                1,
                &mut count,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        },
        "add_prompt",
    )?;
    let mut step = |i: usize, control: *mut SegCallControl| unsafe {
        let f = image(&frames[i % frames.len()], tw, th);
        seg_track_next(track, &f, objects.as_mut_ptr(), osize, &m, 1, &mut count, ptr::null_mut(), control)
    };
    let t = Instant::now();
    check(step(1, ptr::null_mut()), "track step")?;
    let alone = t.elapsed();
    let mut row = Row { name: format!("track step 1280x720 ({} frames)", args.track_frames), alone, latencies: Vec::new(), finished: 0 };
    for i in 2..=args.track_frames {
        match cancelled_after(random_below(alone.mul_f64(1.3)), &mut |c| step(i, c)) {
            (SegStatus::SEG_CANCELLED, l) => {
                row.latencies.extend(l);
                check(step(i, ptr::null_mut()), "track step after a cancel")?; // the frame again, uncancelled
            }
            (SegStatus::SEG_OK, _) => row.finished += 1,
            (st, _) => return Err(format!("track step: {st:?} {}", last_error())),
        }
    }
    print_row(&row);
    unsafe {
        seg_track_free(track);
        seg_free(video);
    }

    Ok(())
}
