//! `segrt soak`: a station's own models on its own images for hours (or a number of calls), from
//! several threads, through the C ABI as its host calls them (`abi`), in a realistic mix of jobs
//! (`workload`). Every interval it records the process's memory, threads and handles and the GPU's
//! memory (`crate::process`, `gpu`), the latency percentiles and failures of the calls (`stats`), and
//! writes them as CSV rows put on the disk at once (`csv_log`). At the end, or at Ctrl+C, it fits
//! the memory trend (`trend`), draws the plots (`plots`) and writes the report with the station table
//! and the leak verdict (`report`); it fails (exit 1) when memory grows or calls fail beyond the limits.

mod abi;
mod csv_log;
mod gpu;
mod plots;
mod report;
mod sampler;
mod stats;
mod trend;
mod workload;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use segrt::options::Provider;
use segrt::Options;

use crate::args::{count, ArenaArgs, CacheArgs, ModelArgs, SessionArgs};
use crate::files::{decode, list_images, stem};
use crate::CliResult;

use abi::{HostOptions, Rgb, Session};
use csv_log::CsvLog;
use report::{duration, Report};
use sampler::{MemoryRange, Run};
use stats::Recorder;
use workload::{Budget, Job, Shape, Workload};

/// Images decoded and cycled through (a station's folder may hold thousands).
const MAX_IMAGES: usize = 64;

#[derive(clap::Args)]
pub struct SoakArgs {
    /// A UNet model (the `unet` job)
    #[arg(long, value_name = "MODEL")]
    unet: Option<PathBuf>,
    /// SAM2 image encoder, with --decoder (the `sam2` job: encode, clicks, a box, many boxes)
    #[arg(long, requires = "decoder")]
    encoder: Option<PathBuf>,
    /// SAM2 prompt decoder, with --encoder
    #[arg(long, requires = "encoder")]
    decoder: Option<PathBuf>,
    /// Folder of the SAM2 video modules (video_metadata.json and its ONNX files) (the `track` job)
    #[arg(long, value_name = "DIR")]
    video: Option<PathBuf>,
    /// Frames streamed through the tracks, resized to the first one's size [default: reference/frames in
    /// --video's folder, else the images]
    #[arg(long, value_name = "DIR")]
    frames: Option<PathBuf>,
    /// Jobs and their weights, e.g. unet=4,sam2=1,track=1 [default: that, of the models given]
    #[arg(long, value_name = "JOB=W,...")]
    mix: Option<String>,
    /// Calling threads (each its own SAM2 session and track; the UNet and video sessions shared)
    #[arg(long, default_value_t = 1, value_parser = count)]
    threads: usize,
    /// How long to run, in hours (e.g. 72)
    #[arg(long, conflicts_with = "minutes", value_name = "H")]
    hours: Option<f64>,
    /// How long to run, in minutes
    #[arg(long, value_name = "M")]
    minutes: Option<f64>,
    /// Calls to make (with --hours or --minutes: whichever ends first)
    #[arg(long, value_name = "N")]
    calls: Option<u64>,
    /// Seconds between samples (a CSV row each)
    #[arg(long, default_value_t = 60.0, value_name = "S")]
    interval: f64,
    /// Share of the run, from its start, left out of the memory trend (%)
    #[arg(long, default_value_t = 20.0, value_name = "PERCENT")]
    warmup: f64,
    /// Output folder: intervals.csv, failures.csv, memory.png, latency.png, report.md
    #[arg(long, default_value = "out/soak")]
    out: PathBuf,
    /// Fail when private memory grows more than this, MiB per 1000 calls (the whole 95 % interval
    /// above it); "off": report the trend only (runs too short for their warm-up to end)
    #[arg(long, default_value = "0.1", value_name = "MIB|off", value_parser = parse_limit)]
    max_growth: Limit,
    /// Fail when more calls than this fail
    #[arg(long, default_value_t = 0, value_name = "N")]
    max_failures: u64,
    /// Stop at the first failed call (the report is written all the same)
    #[arg(long)]
    stop_on_failure: bool,
    /// sam2 job: clicks refining one object after the encoder (1, 2, ... points)
    #[arg(long, default_value_t = 3, value_parser = count)]
    clicks: usize,
    /// sam2 job: boxes segmented in one call (0 = none)
    #[arg(long, default_value_t = 8, value_parser = count)]
    prompts: usize,
    /// track job: frames streamed per job
    #[arg(long, default_value_t = 8, value_parser = count)]
    track_frames: usize,
    /// A new track (first frame, two objects clicked) every N frames of a thread's stream
    #[arg(long, default_value_t = 200, value_parser = count)]
    track_length: usize,
    /// ONNX Runtime intra-op threads of each session (0 = the shared pool, one per physical core)
    #[arg(long, default_value_t = 0, value_parser = count)]
    intra_threads: usize,
    /// Most ONNX Runtime sessions a model keeps for concurrent calls (0 = one per physical core)
    #[arg(long, default_value_t = 0, value_parser = count)]
    max_sessions: usize,
    /// Memory budget of one UNet or many-box call, MiB (0 = segrt's default, 8 GiB)
    #[arg(long, default_value_t = 0, value_name = "MIB")]
    memory_budget: u64,
    #[command(flatten)]
    session: SessionArgs,
    #[command(flatten)]
    cache: CacheArgs,
    #[command(flatten)]
    arena: ArenaArgs,
    #[command(flatten)]
    model: ModelArgs,
    /// Images or folders of images for the unet and sam2 jobs [default: the bundled samples]
    images: Vec<PathBuf>,
}

/// A limit, or none ("off").
#[derive(Clone, Copy)]
struct Limit(Option<f64>);

fn parse_limit(s: &str) -> Result<Limit, String> {
    match s.trim() {
        "off" => Ok(Limit(None)),
        v => v
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| Limit(Some(v)))
            .ok_or_else(|| "a number of MiB, 0 or more, or off".to_string()),
    }
}

fn rgb(path: &Path) -> CliResult<Rgb> {
    let img = decode(path)?.to_rgb8();
    let (width, height) = (img.width() as usize, img.height() as usize);
    Ok(Rgb { pixels: img.into_raw(), width, height })
}

/// The images of the unet and sam2 jobs (at most `MAX_IMAGES`), and the tracking frames; `bundled`
/// when no image was given and the bundled samples stand in (said on stderr and in the report, so a
/// station's acceptance run is never the samples' by mistake).
struct Pictures {
    paths: Vec<PathBuf>,
    images: Vec<Rgb>,
    frames: Vec<Rgb>,
    bundled: bool,
}

fn pictures(args: &SoakArgs, jobs: &[Job]) -> CliResult<Pictures> {
    let needs_images = jobs.contains(&Job::Unet) || jobs.contains(&Job::Sam2);
    let bundled = args.images.is_empty();
    let paths: Vec<PathBuf> = if bundled {
        let samples = crate::demo::demo_models().join("samples");
        if needs_images {
            note!("soak: no images given: the bundled samples in {} stand in for the station's", samples.display());
        }
        list_images(&[samples])?.into_iter().filter(|p| !stem(p).ends_with("_gt")).collect()
    } else {
        list_images(&args.images)?
    };
    if needs_images && paths.is_empty() {
        let given = args.images.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        return Err(format!("no image files in {given} (PNG, JPEG, BMP, TIFF, ...): the unet and sam2 jobs need some").into());
    }
    let paths: Vec<PathBuf> = paths.into_iter().take(MAX_IMAGES).collect();
    let images = if needs_images { paths.iter().map(|p| rgb(p)).collect::<CliResult<Vec<_>>>()? } else { Vec::new() };
    let mut frames = Vec::new();
    if jobs.contains(&Job::Track) {
        let bundled = args.video.as_ref().map(|v| v.join("reference/frames")).filter(|d| d.is_dir());
        let frame_paths = match args.frames.clone().or(bundled) {
            Some(dir) => list_images(&[dir])?,
            None => paths.clone(),
        };
        // A track's frames share one size: the others are resized to the first's, as a camera's would be.
        let mut size = None;
        for path in frame_paths.iter().take(MAX_IMAGES) {
            let img = decode(path)?.to_rgb8();
            let (w, h) = *size.get_or_insert((img.width(), img.height()));
            let img = if (img.width(), img.height()) == (w, h) {
                img
            } else {
                image::imageops::resize(&img, w, h, image::imageops::FilterType::Triangle)
            };
            frames.push(Rgb { pixels: img.into_raw(), width: w as usize, height: h as usize });
        }
        if frames.is_empty() {
            return Err("no frames for the track job (give --frames DIR)".into());
        }
    }
    Ok(Pictures { paths, images, frames, bundled: bundled && needs_images })
}

/// The provider a session runs on, from `seg_session_info` ("in_use" wherever it is).
fn in_use(info: &str) -> String {
    fn find(v: &serde_json::Value) -> Option<String> {
        match v {
            serde_json::Value::Object(m) => {
                m.get("in_use").and_then(|s| s.as_str().map(String::from)).or_else(|| m.values().find_map(find))
            }
            _ => None,
        }
    }
    serde_json::from_str(info).ok().as_ref().and_then(find).unwrap_or_else(|| "?".to_string())
}

fn created(what: &str, r: abi::CallResult<Session>) -> CliResult<Session> {
    r.map_err(|e| format!("{what}: {}: {}", e.status.name(), e.message).into())
}

pub fn soak(args: SoakArgs, ort: Option<PathBuf>) -> CliResult {
    if !(1..=256).contains(&args.threads) {
        return Err("--threads: from 1 to 256".into());
    }
    if !(args.interval >= 0.05 && args.interval.is_finite()) {
        return Err("--interval: at least 0.05 seconds".into());
    }
    if !(0.0..100.0).contains(&args.warmup) {
        return Err("--warmup: a percentage from 0 to below 100".into());
    }
    let planned_s = args.hours.map(|h| h * 3600.0).or(args.minutes.map(|m| m * 60.0));
    if planned_s.is_some_and(|s| !(s > 0.0 && s.is_finite())) || args.calls == Some(0) {
        return Err("--hours, --minutes and --calls must be above 0".into());
    }
    if planned_s.is_none() && args.calls.is_none() {
        return Err("give how long to run: --hours H, --minutes M or --calls N".into());
    }
    let mut available = Vec::new();
    available.extend(args.unet.as_ref().map(|_| Job::Unet));
    available.extend(args.encoder.as_ref().map(|_| Job::Sam2));
    available.extend(args.video.as_ref().map(|_| Job::Track));
    if available.is_empty() {
        return Err("give the models to run: --unet MODEL, --encoder E --decoder D, --video DIR (any of them)".into());
    }
    let mix = match &args.mix {
        Some(s) => workload::parse_mix(s)?,
        None => [(Job::Unet, 4), (Job::Sam2, 1), (Job::Track, 1)].into_iter().filter(|(j, _)| available.contains(j)).collect(),
    };
    if let Some((job, _)) = mix.iter().find(|(j, _)| !available.contains(j)) {
        let flag = match job {
            Job::Unet => "--unet",
            Job::Sam2 => "--encoder and --decoder",
            Job::Track => "--video",
        };
        return Err(format!("--mix has the {} job: give {flag}", job.name()).into());
    }
    if args.model.any() && args.unet.is_none() {
        return Err("--scale, --mean, --std and --output are the UNet's: give --unet".into());
    }
    let jobs: Vec<Job> = mix.iter().map(|(j, _)| *j).collect();
    let Pictures { paths: image_paths, images, frames, bundled } = pictures(&args, &jobs)?;

    let mut options = Options {
        ort_path: ort,
        intra_threads: args.intra_threads,
        max_sessions: args.max_sessions,
        cache: args.cache.mode(),
        arena: args.arena.policy(),
        ..Options::default()
    };
    if args.memory_budget > 0 {
        options.max_memory_bytes = args.memory_budget.saturating_mul(1 << 20);
    }
    args.session.apply(&mut options)?;
    let mut unet_options = options.clone();
    args.model.apply(&mut unet_options)?;
    let (host, unet_host) = (HostOptions::new(&options)?, HostOptions::new(&unet_options)?);

    let load = Instant::now();
    let unet = match &args.unet {
        Some(m) if jobs.contains(&Job::Unet) => Some(created("--unet", Session::unet(m, &unet_host)?)?),
        _ => None,
    };
    let mut sam2 = Vec::new();
    if let (Some(e), Some(d), true) = (&args.encoder, &args.decoder, jobs.contains(&Job::Sam2)) {
        for _ in 0..args.threads {
            sam2.push(created("--encoder/--decoder", Session::sam2(e, d, &host)?)?);
        }
    }
    let video = match &args.video {
        Some(dir) if jobs.contains(&Job::Track) => Some(created("--video", Session::video(dir, &host)?)?),
        _ => None,
    };
    let load_ms = load.elapsed().as_secs_f64() * 1e3;

    let kinds: Vec<&'static str> = jobs.iter().flat_map(|j| j.kinds().iter().copied()).collect();
    let mix_text = mix.iter().map(|(j, w)| format!("{}={w}", j.name())).collect::<Vec<_>>().join(",");
    let provider = [unet.as_ref(), sam2.first(), video.as_ref()].into_iter().flatten().map(|s| in_use(&s.info())).collect::<Vec<_>>();
    let mut setup = vec![
        (
            "segrt".to_string(),
            format!(
                "{} ({} {}, {} logical CPUs)",
                env!("CARGO_PKG_VERSION"),
                std::env::consts::OS,
                std::env::consts::ARCH,
                num_cpus::get()
            ),
        ),
        ("calls".to_string(), "through the C ABI, as a host makes them".to_string()),
        (
            "mix".to_string(),
            format!(
                "{mix_text} on {} thread(s); clicks {}, boxes per call {}, frames per track job {}, a new track every {} frames",
                args.threads, args.clicks, args.prompts, args.track_frames, args.track_length
            ),
        ),
        ("providers in use".to_string(), provider.join(", ")),
        ("sessions created in".to_string(), format!("{load_ms:.0} ms")),
        ("sampling".to_string(), format!("every {} s", args.interval)),
    ];
    if let Some(rt) = segrt::runtime::loaded() {
        setup.push(("ONNX Runtime".to_string(), format!("{} ({})", rt.version, rt.path.display())));
    }
    for (name, path) in
        [("UNet", &args.unet), ("SAM2 encoder", &args.encoder), ("SAM2 decoder", &args.decoder), ("video modules", &args.video)]
    {
        if let Some(p) = path {
            setup.push((name.to_string(), p.display().to_string()));
        }
    }
    if !images.is_empty() {
        let sizes: std::collections::BTreeSet<String> = images.iter().map(|i| format!("{}x{}", i.width, i.height)).collect();
        let first = image_paths.first().map(|p| p.display().to_string()).unwrap_or_default();
        setup.push((
            "images".to_string(),
            format!(
                "{}{} ({}; first {first})",
                images.len(),
                if bundled { " bundled samples (no images given)" } else { "" },
                sizes.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    if let Some(f) = frames.first() {
        setup.push((
            "tracking frames".to_string(),
            format!("{} of {}x{} (others resized to it), streamed in a loop", frames.len(), f.width, f.height),
        ));
    }
    if let Ok(leak) = std::env::var("SEGRT_INJECT_LEAK_BYTES") {
        setup.push(("SEGRT_INJECT_LEAK_BYTES".to_string(), format!("{leak} (a test build leaks that much per C-ABI call)")));
    }

    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let mut log = CsvLog::create(&args.out, &kinds)?;
    let gpu = if options.provider == Provider::Cpu {
        Err("n/a: the models run on the CPU".to_string())
    } else {
        gpu::GpuMemory::open(options.device_id).map_err(|why| format!("n/a: {why}"))
    };
    let gpu_note = match &gpu {
        Ok(_) => format!("in use on GPU {} by all processes (NVML)", options.device_id),
        Err(why) => why.clone(),
    };

    let planned = match (planned_s, args.calls) {
        (Some(s), Some(n)) => format!("{} or {n} calls", duration(s)),
        (Some(s), None) => duration(s),
        (None, Some(n)) => format!("{n} calls"),
        (None, None) => unreachable!("checked above"),
    };
    note!(
        "soak: {mix_text} on {} thread(s), for {planned}; providers {}; a sample every {} s into {}",
        args.threads,
        provider.join(", "),
        args.interval,
        args.out.display()
    );

    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let (stop, interrupted) = (stop.clone(), interrupted.clone());
        let handler = ctrlc::set_handler(move || {
            if interrupted.swap(true, Ordering::SeqCst) {
                note!("soak: second Ctrl+C: stopping without the report");
                std::process::exit(130);
            }
            note!("soak: Ctrl+C: finishing the calls in flight, then writing the report (Ctrl+C again quits at once)");
            stop.store(true, Ordering::SeqCst);
        });
        if let Err(e) = handler {
            note!("warning: Ctrl+C cannot be caught ({e}): it will end the run without a report");
        }
    }

    let started = Instant::now();
    let budget = Budget::new(planned_s.map(|s| started + Duration::from_secs_f64(s)), args.calls, stop.clone());
    let recorder = Recorder::new(kinds.clone(), started, args.stop_on_failure.then(|| stop.clone()));
    let shape = Shape {
        clicks: args.clicks,
        prompts: args.prompts,
        track_frames: args.track_frames.max(1),
        track_length: args.track_length.max(1),
    };
    let work = Workload::new(workload::schedule(&mix), images, frames, unet, sam2, video, shape);
    let mut run = Run::new(recorder.take());
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..args.threads)
            .map(|t| {
                let (work, recorder, budget, done) = (&work, &recorder, &budget, &done);
                s.spawn(move || {
                    workload::run(t, work, recorder, budget);
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        let interval = Duration::from_secs_f64(args.interval);
        let (mut next, mut probe) = (started + interval, Instant::now());
        let mut range = MemoryRange::default();
        loop {
            let finished = loop {
                let now = Instant::now();
                if budget.stopped() || done.load(Ordering::SeqCst) == args.threads || budget.deadline.is_some_and(|d| now >= d) {
                    break true;
                }
                if now >= next {
                    break false;
                }
                if now >= probe {
                    range.add(&crate::process::sample());
                    probe = now + sampler::PROBE;
                }
                std::thread::sleep((next - now).min(probe - now).min(Duration::from_millis(100)));
            };
            if finished {
                break;
            }
            if !run.sample(&recorder, &mut log, gpu.as_ref().ok(), crate::process::sample(), std::mem::take(&mut range)) {
                stop.store(true, Ordering::SeqCst);
                break;
            }
            next += interval;
        }
        // The last, shorter interval: the process as the run ended (before its threads exit and
        // give memory back), and the calls that were in flight then.
        let figures = crate::process::sample();
        for w in workers {
            let _ = w.join();
        }
        if run.disk_error.is_none() {
            run.sample(&recorder, &mut log, gpu.as_ref().ok(), figures, range);
        }
    });

    let why_stopped = if let Some(e) = &run.disk_error {
        format!("stopped: {e}")
    } else if interrupted.load(Ordering::SeqCst) {
        "stopped with Ctrl+C".to_string()
    } else if args.stop_on_failure && run.total.all.failed > 0 {
        "stopped at the first failed call (--stop-on-failure)".to_string()
    } else if args.calls.is_some_and(|n| run.total.all.calls() >= n) {
        format!("{} calls made", run.total.all.calls())
    } else {
        "the planned time ran out".to_string()
    };
    let elapsed = run.samples.last().map_or(0.0, |s| s.elapsed_s);
    let warmup_s = elapsed * args.warmup / 100.0;
    // The last sample is left out: taken as the run ends, it may see threads gone and their memory
    // given back.
    let fitted = &run.samples[..run.samples.len().saturating_sub(1)];
    let points = sampler::trend_points(fitted, warmup_s);
    let figure = if fitted.iter().any(|s| s.process.private_mib.is_some()) {
        "private memory"
    } else {
        "resident memory (this system reports no private figure)"
    };
    let verdict = trend::judge(&points, args.max_growth.0, figure);

    let mut plots = Vec::new();
    if run.disk_error.is_none() {
        let title = format!("segrt soak: {mix_text}, {} thread(s), {}", args.threads, duration(elapsed));
        let drawn = [
            (
                "memory.png",
                "memory over time",
                plots::memory(&args.out.join("memory.png"), &run.samples, warmup_s, verdict.trend.as_ref(), &title),
            ),
            ("latency.png", "latency percentiles over time", plots::latency(&args.out.join("latency.png"), &run.samples, &title)),
        ];
        for (file, alt, result) in drawn {
            match result {
                Ok(()) => plots.push((file.to_string(), alt.to_string())),
                Err(e) => note!("warning: {e}"),
            }
        }
    }
    let command = std::env::args().map(|a| if a.contains(' ') { format!("\"{a}\"") } else { a }).collect::<Vec<_>>().join(" ");
    let report = Report {
        command,
        setup,
        why_stopped,
        planned,
        kinds: &kinds,
        run: &run.total,
        samples: &run.samples,
        first_failures: &run.first_failures,
        gpu_note,
        warmup_percent: args.warmup,
        verdict: &verdict,
        max_failures: args.max_failures,
        plots,
    };
    let written = report.write(&args.out);
    say!("segrt soak: {} after {} ({})", report.outcome(), duration(elapsed), report.why_stopped);
    say!("{}", report.summary());
    match &written {
        Ok(()) => say!("report: {}", args.out.join("report.md").display()),
        Err(e) => note!("segrt: error: {e}"),
    }
    if let Some(e) = run.disk_error {
        return Err(format!(
            "{e}; sampling stopped there, and with it the run (the disk may be full): the files keep the intervals written before"
        )
        .into());
    }
    written?;
    match report.breaches().as_slice() {
        [] => Ok(()),
        why => Err(format!("the run did not hold: {}", why.join("; ")).into()),
    }
}
