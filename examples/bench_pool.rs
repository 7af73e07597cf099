//! The session pool under host threads, measured through the C ABI (figures, not assertions):
//!
//!   cargo run --release --example bench_pool -- [--only churn,storm,sam2,throughput] [--churn N]
//!       [--storm-threads N] [--storm-runs K] [--storm-model PATH] [--window-s S] [--rounds R]
//!       [--throughput-model PATH]
//!
//! 1. Thread churn: N short-lived threads (default 500), each spawned, doing one UNet run on one
//!    handle and exiting, against the same number of runs on one long-lived thread, in alternating
//!    blocks of 50 so both see the same machine. Per-run medians (spawn + run + join for the churn),
//!    their ratio, and the sessions the handle built.
//! 2. Storm: 32 host threads on one handle (demo UNet and the base-32 UNet at 512x512 that
//!    `models/make_bench_models.py` writes into models/generated/), mixed image sizes (the five
//!    bundled samples); every mask compared byte for byte with the one-thread result. Memory: process
//!    RSS before/after creating the handle, after one run, after forcing a second session, and after
//!    the storm; the pool's own figures from `seg_session_info`; and the model file size.
//! 3. SAM2 (when `models/sam2/export_sam2.py --real-size models/sam2/real-size` has been run): one
//!    image embedding, 32 threads clicking on it, masks compared with one thread; then two threads
//!    encoding two different images at once (a second encoder session) for the encoder's memory.
//! 4. Throughput (runs/s) of one handle with 1, 2, 8 and 32 calling threads, default options (sessions
//!    on ONNX Runtime's global thread pool) against `intra_threads = 1, max_sessions = 2` (per-session
//!    pools dividing the cores); all cells measured once per round (every other round in reverse
//!    order), rounds repeated, medians reported.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use segrt::ffi::*;

/// A handle that threads may share (the C ABI allows any number of threads per handle).
#[derive(Clone, Copy)]
struct H(*mut SegSession);
unsafe impl Send for H {}
unsafe impl Sync for H {}
impl H {
    /// Through a method, so closures capture the whole (Send) handle, not its raw pointer field.
    fn ptr(self) -> *mut SegSession {
        self.0
    }
}

/// An RGB24 image owned by the benchmark.
struct Img {
    name: String,
    rgb: Vec<u8>,
    w: usize,
    h: usize,
}

impl Img {
    fn load(path: &Path) -> Img {
        let im = image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).to_rgb8();
        let (w, h) = (im.width() as usize, im.height() as usize);
        Img { name: path.file_name().unwrap().to_string_lossy().into_owned(), rgb: im.into_raw(), w, h }
    }
    fn seg(&self) -> SegImage {
        SegImage {
            data: self.rgb.as_ptr(),
            width: self.w as i32,
            height: self.h as i32,
            stride: 0,
            format: SegPixelFormat::SEG_FORMAT_RGB24 as i32,
            plane1: ptr::null(),
            plane2: ptr::null(),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let only: Vec<String> = value("--only").map(|v| v.split(',').map(str::to_owned).collect()).unwrap_or_default();
    let want = |part: &str| only.is_empty() || only.iter().any(|o| o == part);
    let churn_n: usize = value("--churn").and_then(|v| v.parse().ok()).unwrap_or(500);
    let storm_threads: usize = value("--storm-threads").and_then(|v| v.parse().ok()).unwrap_or(32);
    let storm_runs: usize = value("--storm-runs").and_then(|v| v.parse().ok()).unwrap_or(3);
    let window = Duration::from_secs_f64(value("--window-s").and_then(|v| v.parse().ok()).unwrap_or(3.0));
    let rounds: usize = value("--rounds").and_then(|v| v.parse().ok()).unwrap_or(3);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let demo = repo.join("models/demo_unet.onnx");
    let throughput_model = value("--throughput-model").map(PathBuf::from).unwrap_or_else(|| demo.clone());

    // Load ONNX Runtime before the first figure, so no figure carries its one-time cost.
    assert_eq!(unsafe { seg_runtime_init(ptr::null()) }, SegStatus::SEG_OK, "{}", last_error());
    println!(
        "bench_pool: {} logical CPUs; figures from a shared (loaded) machine; medians; RSS = VmRSS of this process",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    let sample = Img::load(&repo.join("models/samples/lesion_02.png"));

    if want("churn") {
        churn(&demo, &sample, churn_n);
    }
    if want("storm") {
        let samples: Vec<Img> = (1..=5).map(|i| Img::load(&repo.join(format!("models/samples/lesion_{i:02}.png")))).collect();
        // `--storm-model PATH` measures one model alone (a fresh process gives clean RSS figures).
        let models = match value("--storm-model") {
            Some(p) => vec![PathBuf::from(p)],
            None => vec![demo.clone(), repo.join("models/generated/unet_base32_512.onnx")],
        };
        for model in models {
            if model.exists() {
                storm(&model, &samples, storm_threads, storm_runs);
            } else {
                println!("\n({} not found: `python models/make_bench_models.py` makes it; needs PyTorch)", model.display());
            }
        }
    }
    if want("sam2") {
        let dir = repo.join("models/sam2/real-size");
        let (enc, dec) =
            (dir.join("sam2_tiny_random_1024_samexporter_encoder.onnx"), dir.join("sam2_tiny_random_1024_samexporter_decoder.onnx"));
        if enc.exists() && dec.exists() {
            sam2_storm(&repo, &enc, &dec, storm_threads);
        } else {
            println!(
                "\n(SAM2 skipped: {} not found; `python models/sam2/export_sam2.py --real-size models/sam2/real-size` makes it)",
                enc.display()
            );
        }
    }
    if want("throughput") {
        throughput(&throughput_model, &sample, window, rounds);
    }
}

// ---------------------------------------------------------------------------------------------
// 1. thread churn

fn churn(model: &Path, img: &Img, n: usize) {
    let h = create(model, None);
    let mut mask = vec![0u8; img.w * img.h];
    for _ in 0..3 {
        run_unet(h, img, &mut mask);
    }
    const BLOCK: usize = 50;
    let (mut short, mut long) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let t_all = Instant::now();
    while short.len() < n {
        let k = BLOCK.min(n - short.len());
        // k short-lived threads, one after another: spawn, one run, exit.
        for _ in 0..k {
            let t = Instant::now();
            std::thread::scope(|s| {
                s.spawn(|| {
                    let mut m = vec![0u8; img.w * img.h];
                    run_unet(h, img, &mut m);
                });
            });
            short.push(ms(t));
        }
        // k runs on this (long-lived) thread.
        for _ in 0..k {
            let t = Instant::now();
            run_unet(h, img, &mut mask);
            long.push(ms(t));
        }
    }
    let total = t_all.elapsed().as_secs_f64();
    let pool = &info(h)["pool"];
    let (s, l) = (median(&mut short), median(&mut long));
    println!("\n1. thread churn: {} ({}x{} image), {n} short-lived threads x 1 run vs {n} runs on one long-lived thread, alternating blocks of {BLOCK} ({total:.1} s in all)", model.file_name().unwrap().to_string_lossy(), img.w, img.h);
    println!(
        "   per run: short-lived threads {s:.2} ms (spawn + run + join), long-lived thread {l:.2} ms; ratio {:.3} (goal <= 1.2)",
        s / l
    );
    println!(
        "   sessions created {} (max_sessions {}), waits {}, sessions now {}; goal: created <= max_sessions",
        pool["created"], pool["max_sessions"], pool["waits"], pool["sessions"]
    );
    free(h);
}

// ---------------------------------------------------------------------------------------------
// 2. storm: 32 threads on one handle, bit-identical results, memory

fn storm(model: &Path, samples: &[Img], threads: usize, runs: usize) {
    let file = std::fs::metadata(model).map(|m| m.len()).unwrap_or(0);
    let name = model.file_name().unwrap().to_string_lossy().into_owned();
    let rss0 = rss();
    let h = create(model, None);
    let rss1 = rss();
    // One thread: the reference masks (and the first session's working buffers).
    let reference: Vec<Vec<u8>> = samples
        .iter()
        .map(|img| {
            let mut m = vec![0u8; img.w * img.h];
            run_unet(h, img, &mut m);
            m
        })
        .collect();
    let rss2 = rss();
    // A second session, forced by two calls at once (repeated until the pool has built it).
    let mut tries = 0;
    while info(h)["pool"]["created"].as_u64().unwrap_or(0) < 2 && tries < 20 {
        tries += 1;
        let barrier = Barrier::new(2);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    let img = &samples[1];
                    let mut m = vec![0u8; img.w * img.h];
                    barrier.wait();
                    run_unet(h, img, &mut m);
                });
            }
        });
    }
    let rss3 = rss();
    let pool_before = info(h)["pool"].clone();

    // The storm: `threads` threads start together, each runs `runs` times over the mixed sizes.
    let barrier = Arc::new(Barrier::new(threads));
    let t = Instant::now();
    let results: Vec<(usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let barrier = barrier.clone();
                let reference = &reference;
                s.spawn(move || {
                    barrier.wait();
                    let (mut mismatched_runs, mut mismatched_pixels) = (0, 0);
                    for r in 0..runs {
                        let k = (i + r) % samples.len();
                        let img = &samples[k];
                        let mut m = vec![0u8; img.w * img.h];
                        run_unet(h, img, &mut m);
                        let diff = m.iter().zip(&reference[k]).filter(|(a, b)| a != b).count();
                        if diff > 0 {
                            mismatched_runs += 1;
                            mismatched_pixels += diff;
                        }
                    }
                    (mismatched_runs, mismatched_pixels)
                })
            })
            .collect();
        handles.into_iter().map(|j| j.join().unwrap()).collect()
    });
    let secs = t.elapsed().as_secs_f64();
    let rss4 = rss();
    let pool = info(h)["pool"].clone();
    let bad_runs: usize = results.iter().map(|r| r.0).sum();
    let bad_pixels: usize = results.iter().map(|r| r.1).sum();
    println!("\n2. storm: {name} ({}), {threads} threads x {runs} runs over {} image sizes, {:.1} s", mb(file), samples.len(), secs);
    println!(
        "   sessions {} / max_sessions {} (created {}, waits {}); mismatching runs vs one thread: {bad_runs} of {} ({bad_pixels} pixels)",
        pool["sessions"],
        pool["max_sessions"],
        pool["created"],
        pool["waits"],
        threads * runs
    );
    println!(
        "   RSS: before handle {}, after seg_create {} (+{}), after 1-thread runs {} (+{}), with 2 sessions {} (+{}), after the storm {} (peak VmHWM {})",
        mb(rss0),
        mb(rss1),
        mb(rss1.saturating_sub(rss0)),
        mb(rss2),
        mb(rss2.saturating_sub(rss1)),
        mb(rss3),
        mb(rss3.saturating_sub(rss2)),
        mb(rss4),
        mb(hwm())
    );
    let extra = pool_before["bytes_per_extra_session"].as_u64();
    println!(
        "   pool: bytes_first_session {}, bytes_per_extra_session {} (building the 2nd session) = {} of the model file; 2nd session incl. its first run's working buffers (RSS delta) {} = {:.0} %",
        pool_before["bytes_first_session"].as_u64().map(mb).unwrap_or("n/a".into()),
        extra.map(mb).unwrap_or("n/a".into()),
        extra.map(|e| format!("{:.0} %", 100.0 * e as f64 / file as f64)).unwrap_or("n/a".into()),
        mb(rss3.saturating_sub(rss2)),
        100.0 * rss3.saturating_sub(rss2) as f64 / file as f64
    );
    free(h);
}

// ---------------------------------------------------------------------------------------------
// 3. SAM2: clicks from 32 threads on one embedding; a second encoder session

fn sam2_storm(repo: &Path, enc: &Path, dec: &Path, threads: usize) {
    let (enc_file, dec_file) = (std::fs::metadata(enc).unwrap().len(), std::fs::metadata(dec).unwrap().len());
    let e = CString::new(enc.to_str().unwrap()).unwrap();
    let d = CString::new(dec.to_str().unwrap()).unwrap();
    let rss0 = rss();
    let mut raw = ptr::null_mut();
    let t = Instant::now();
    assert_eq!(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), ptr::null(), &mut raw) }, SegStatus::SEG_OK, "{}", last_error());
    let create_s = t.elapsed().as_secs_f64();
    let h = H(raw);
    let rss1 = rss();
    let img = Img::load(&repo.join("models/samples/lesion_05.png"));
    // Two more images, neither cached, for two encodes at once (a cached image would not encode).
    let others = [Img::load(&repo.join("models/samples/lesion_03.png")), Img::load(&repo.join("models/samples/lesion_04.png"))];
    let mut enc_ms = 0.0;
    assert_eq!(unsafe { seg_sam2_set_image(h.ptr(), &img.seg(), &mut enc_ms, ptr::null_mut()) }, SegStatus::SEG_OK, "{}", last_error());
    let rss2 = rss();
    // Clicks spread over the image; one thread gives the reference masks.
    let points: Vec<SegPoint> =
        (0..8).map(|i| SegPoint { x: (img.w * (1 + i % 4) / 5) as f32, y: (img.h * (1 + i / 4) / 3) as f32, label: 1 }).collect();
    let click = |p: &SegPoint, m: &mut [u8]| {
        let out = SegMask { data: m.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
        let status = unsafe {
            seg_run_sam2_points(
                h.ptr(),
                ptr::null(),
                p,
                1,
                ptr::null(),
                ptr::null(),
                0,
                0,
                &out,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        assert_eq!(status, SegStatus::SEG_OK, "{}", last_error());
    };
    let reference: Vec<Vec<u8>> = points
        .iter()
        .map(|p| {
            let mut m = vec![0u8; img.w * img.h];
            click(p, &mut m);
            m
        })
        .collect();
    let rss3 = rss();
    let runs = 2;
    let barrier = Barrier::new(threads);
    let t = Instant::now();
    let bad: Vec<(usize, usize)> = std::thread::scope(|s| {
        let joins: Vec<_> = (0..threads)
            .map(|i| {
                let (barrier, reference, points, click) = (&barrier, &reference, &points, &click);
                s.spawn(move || {
                    barrier.wait();
                    let (mut runs_bad, mut px_bad) = (0, 0);
                    for r in 0..runs {
                        let k = (i + r) % points.len();
                        let mut m = vec![0u8; img.w * img.h];
                        click(&points[k], &mut m);
                        let diff = m.iter().zip(&reference[k]).filter(|(a, b)| a != b).count();
                        if diff > 0 {
                            runs_bad += 1;
                            px_bad += diff;
                        }
                    }
                    (runs_bad, px_bad)
                })
            })
            .collect();
        joins.into_iter().map(|j| j.join().unwrap()).collect()
    });
    let storm_s = t.elapsed().as_secs_f64();
    let rss4 = rss();
    let after_clicks = info(h);
    // Two different images encoded at once: the encoder pool builds its second session.
    let barrier = Barrier::new(2);
    let t = Instant::now();
    std::thread::scope(|s| {
        for im in &others {
            let barrier = &barrier;
            s.spawn(move || {
                barrier.wait();
                let status = unsafe { seg_sam2_set_image(h.ptr(), &im.seg(), ptr::null_mut(), ptr::null_mut()) };
                assert_eq!(status, SegStatus::SEG_OK, "{}", last_error());
            });
        }
    });
    let enc2_s = t.elapsed().as_secs_f64();
    let rss5 = rss();
    let last = info(h);
    let (ep, dp) = (&last["encoder_pool"], &last["decoder_pool"]);
    let bad_runs: usize = bad.iter().map(|b| b.0).sum();
    let bad_px: usize = bad.iter().map(|b| b.1).sum();
    println!(
        "\n3. SAM2 real-size hiera-tiny (random weights, samexporter): encoder {} , decoder {}; seg_create_sam2 {create_s:.1} s, encoder run {enc_ms:.0} ms ({}x{})",
        mb(enc_file),
        mb(dec_file),
        img.w,
        img.h
    );
    println!(
        "   {threads} threads x {runs} clicks on one embedding: {storm_s:.1} s; decoder sessions {} / max {} (created {}, waits {}); mismatching clicks vs one thread: {bad_runs} of {} ({bad_px} pixels)",
        after_clicks["decoder_pool"]["sessions"],
        after_clicks["decoder_pool"]["max_sessions"],
        after_clicks["decoder_pool"]["created"],
        after_clicks["decoder_pool"]["waits"],
        threads * runs
    );
    println!(
        "   two images encoded at once: {enc2_s:.1} s; encoder sessions {} / max {} (created {})",
        ep["sessions"], ep["max_sessions"], ep["created"]
    );
    println!(
        "   RSS: before {}, after seg_create_sam2 {} (+{}), after encoding {} (+{}), after 1-thread clicks {} (+{}), after {threads}-thread clicks {} (+{}), after 2nd encoder session {} (+{}), peak {}",
        mb(rss0),
        mb(rss1),
        mb(rss1.saturating_sub(rss0)),
        mb(rss2),
        mb(rss2.saturating_sub(rss1)),
        mb(rss3),
        mb(rss3.saturating_sub(rss2)),
        mb(rss4),
        mb(rss4.saturating_sub(rss3)),
        mb(rss5),
        mb(rss5.saturating_sub(rss4)),
        mb(hwm())
    );
    for (what, p, file) in [("encoder", ep, enc_file), ("decoder", dp, dec_file)] {
        let extra = p["bytes_per_extra_session"].as_u64();
        println!(
            "   {what} pool: bytes_first_session {}, bytes_per_extra_session {} = {} of the model file ({})",
            p["bytes_first_session"].as_u64().map(mb).unwrap_or("n/a".into()),
            extra.map(mb).unwrap_or("n/a".into()),
            extra.map(|e| format!("{:.0} %", 100.0 * e as f64 / file as f64)).unwrap_or("n/a".into()),
            mb(file)
        );
    }
    free(h);
}

// ---------------------------------------------------------------------------------------------
// 4. throughput

fn throughput(model: &Path, img: &Img, window: Duration, rounds: usize) {
    let counts = [1usize, 2, 8, 32];
    let mut divided = options_default();
    divided.intra_threads = 1;
    divided.max_sessions = 2;
    let configs =
        [("default (global thread pool)", create(model, None)), ("intra_threads 1, max_sessions 2", create(model, Some(&divided)))];
    // Warm up: every session each configuration may build, built before timing.
    for (_, h) in &configs {
        let _ = rate(*h, img, 8, Duration::from_millis(500));
    }
    let mut cells = vec![vec![Vec::new(); counts.len()]; configs.len()];
    let mut switches = vec![vec![(0usize, 0u64); counts.len()]; configs.len()];
    for round in 0..rounds {
        // Every other round in reverse order, so no thread count always comes last (the load of these
        // shared cores drifts within a round).
        let mut order: Vec<usize> = (0..counts.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for ci in order {
            for (k, (_, h)) in configs.iter().enumerate() {
                let (r, runs, csw) = rate(*h, img, counts[ci], window);
                cells[k][ci].push(r);
                switches[k][ci].0 += runs;
                switches[k][ci].1 += csw;
            }
        }
    }
    let medians: Vec<Vec<f64>> = cells.iter_mut().map(|c| c.iter_mut().map(|v| median(v)).collect()).collect();
    let best = medians.iter().flatten().cloned().fold(0.0, f64::max);
    println!(
        "\n4. throughput: {} on a {}x{} image, runs/s (median of {rounds} rounds of {:.1} s windows; cells interleaved, every other round reversed)",
        model.file_name().unwrap().to_string_lossy(),
        img.w,
        img.h,
        window.as_secs_f64()
    );
    println!("   {:<34} {}", "calling threads:", counts.map(|n| format!("{n:>8}")).join(""));
    for (k, (label, h)) in configs.iter().enumerate() {
        let pool = &info(*h)["pool"];
        println!(
            "   {:<34} {}   (sessions {} / max {}, waits {})",
            label,
            medians[k].iter().map(|v| format!("{v:>8.2}")).collect::<String>(),
            pool["sessions"],
            pool["max_sessions"],
            pool["waits"]
        );
    }
    for (k, (label, _)) in configs.iter().enumerate() {
        println!(
            "   {:<34} {}   (context switches per run, all rounds)",
            label,
            switches[k].iter().map(|(runs, csw)| format!("{:>8.1}", *csw as f64 / (*runs).max(1) as f64)).collect::<String>()
        );
    }
    for (k, (label, _)) in configs.iter().enumerate() {
        // The goal (no collapse from oversubscription) compares a configuration with itself; the
        // best cell of all says which configuration serves this machine better.
        let own_best = medians[k].iter().cloned().fold(0.0, f64::max);
        println!(
            "   {label}: 8 threads {:.2}x, 32 threads {:.2}x of its best cell ({own_best:.2} runs/s; goal >= 0.9x); {:.2}x / {:.2}x of the best cell of all ({best:.2})",
            medians[k][2] / own_best,
            medians[k][3] / own_best,
            medians[k][2] / best,
            medians[k][3] / best
        );
    }
    for (_, h) in configs {
        free(h);
    }
}

/// Runs/s of `n` threads calling `h` until `window` has passed (runs under way then finish and count).
fn rate(h: H, img: &Img, n: usize, window: Duration) -> (f64, usize, u64) {
    let barrier = Barrier::new(n + 1);
    let switches0 = context_switches();
    let (runs, secs) = std::thread::scope(|s| {
        let joins: Vec<_> = (0..n)
            .map(|_| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut m = vec![0u8; img.w * img.h];
                    barrier.wait();
                    let end = Instant::now() + window;
                    let mut runs = 0usize;
                    while Instant::now() < end {
                        run_unet(h, img, &mut m);
                        runs += 1;
                    }
                    runs
                })
            })
            .collect();
        barrier.wait();
        let t = Instant::now();
        let runs: usize = joins.into_iter().map(|j| j.join().unwrap()).sum();
        (runs, t.elapsed().as_secs_f64())
    });
    (runs as f64 / secs, runs, context_switches() - switches0)
}

/// Context switches of the whole process so far (voluntary + involuntary, all threads).
fn context_switches() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return 0;
    }
    let usage = unsafe { usage.assume_init() };
    (usage.ru_nvcsw + usage.ru_nivcsw) as u64
}

// ---------------------------------------------------------------------------------------------
// helpers

fn options_default() -> SegOptions {
    // SAFETY: all-zero is a valid SegOptions (integers, floats, nullable pointers).
    let mut o: SegOptions = unsafe { std::mem::zeroed() };
    o.struct_size = std::mem::size_of::<SegOptions>() as u32;
    assert_eq!(unsafe { seg_options_default(&mut o) }, SegStatus::SEG_OK);
    o
}

fn create(model: &Path, options: Option<&SegOptions>) -> H {
    let path = CString::new(model.to_str().unwrap()).unwrap();
    let mut h = ptr::null_mut();
    let o = options.map_or(ptr::null(), |o| o as *const SegOptions);
    assert_eq!(unsafe { seg_create(path.as_ptr(), o, &mut h) }, SegStatus::SEG_OK, "{}: {}", model.display(), last_error());
    H(h)
}

fn free(h: H) {
    assert_eq!(unsafe { seg_free(h.ptr()) }, SegStatus::SEG_OK);
}

fn run_unet(h: H, img: &Img, mask: &mut [u8]) {
    let out = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let status = unsafe { seg_run_unet(h.ptr(), &img.seg(), &out, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) };
    assert_eq!(status, SegStatus::SEG_OK, "{}: {}", img.name, last_error());
}

fn info(h: H) -> serde_json::Value {
    let mut len = 0usize;
    assert_eq!(unsafe { seg_session_info(h.ptr(), ptr::null_mut(), 0, &mut len) }, SegStatus::SEG_OK);
    let mut buf = vec![0u8; len];
    assert_eq!(unsafe { seg_session_info(h.ptr(), buf.as_mut_ptr().cast(), len, &mut len) }, SegStatus::SEG_OK);
    buf.truncate(buf.iter().position(|b| *b == 0).unwrap_or(buf.len()));
    serde_json::from_slice(&buf).expect("seg_session_info JSON")
}

fn last_error() -> String {
    let mut buf = vec![0u8; 4096];
    let n = unsafe { seg_last_error(buf.as_mut_ptr().cast(), buf.len()) };
    buf.truncate(n.min(buf.len()));
    String::from_utf8_lossy(&buf).trim_end_matches('\0').to_owned()
}

/// A line of /proc/self/status in bytes (VmRSS, VmHWM); 0 where unavailable.
fn status_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .map_or(0, |kb| kb * 1024)
}

fn rss() -> u64 {
    status_kb("VmRSS:")
}

fn hwm() -> u64 {
    status_kb("VmHWM:")
}

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
