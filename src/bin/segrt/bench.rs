//! `segrt bench`: what a model costs on this station, for the user's own models and image.
//!
//! Both: session build time without a model cache, on a first start (which writes the cache) and
//! on a cached start, and the time from creating the session to the first mask for each (medians of
//! `--start-runs`, in a private cache folder removed afterwards).
//! UNet: session build time, stage medians (decoding the image is excluded), the whole segrt call
//! (what `seg_run_unet` runs) against a bare ONNX Runtime run of the same model on the prepared tensor (alternating
//! blocks, so both see the same machine), runs per second against the number of calling threads,
//! the session pool afterwards and the provider in use. SAM2: build time of the pair, the encoder,
//! clicks (decoder + mask), the click as a C host makes it against a bare ONNX Runtime decoder run on
//! prepared inputs (alternating blocks) and clicks per second against calling threads.
//! Both: the process's resident memory after each stage and its peak during it (create, runs or
//! encodes and clicks, free), measured before anything else is built in the process.

use segrt::engine::providers::placement::NodeCount;
use std::path::{Path, PathBuf};
use std::time::Instant;

use image::DynamicImage;
use ort::session::Session;
use serde::Serialize;

use segrt::image::tensor::{prepare, Fit, Normalisation};
use segrt::options::CacheMode;
use segrt::sam2::{Point, Prompt, Sam2Segmenter};
use segrt::{ImageView, MaskMut, Options, PixelFormat, UnetSegmenter};

use crate::args::{parse_provider, ArenaArgs, CacheArgs, GpuArgs};
use crate::files::decode;
use crate::resident::{describe, StageMemory, Stages};
use crate::CliResult;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// A UNet model (or give --encoder and --decoder for SAM2)
    #[arg(long, conflicts_with_all = ["encoder", "decoder"], required_unless_present = "encoder")]
    model: Option<PathBuf>,
    /// SAM2 image encoder
    #[arg(long, requires = "decoder")]
    encoder: Option<PathBuf>,
    /// SAM2 prompt decoder
    #[arg(long, requires = "encoder")]
    decoder: Option<PathBuf>,
    /// The image to run on (default: a bundled sample scaled to 1920x1080)
    #[arg(long)]
    image: Option<PathBuf>,
    /// Execution provider: cpu, cuda[:ID], tensorrt[:ID], directml[:ID], openvino
    #[arg(long, default_value = "cpu")]
    provider: String,
    /// Calling threads to measure throughput with, comma-separated
    #[arg(long, default_value = "1,2,4", value_name = "N,N,...")]
    threads: String,
    /// Runs per figure (medians)
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// SAM2: encoder runs for its figure (the median; each on another picture, so none is cached)
    #[arg(long, default_value_t = 1)]
    encoder_runs: usize,
    /// Also write the figures as JSON here
    #[arg(long)]
    json: Option<PathBuf>,
    /// Starts to measure without a model cache, first (writing it) and cached (medians); 0 = skip
    #[arg(long, default_value_t = 3)]
    start_runs: usize,
    #[command(flatten)]
    cache: CacheArgs,
    #[command(flatten)]
    arena: ArenaArgs,
    #[command(flatten)]
    gpu: GpuArgs,
}

/// Session start-up with and without the model cache (medians over `runs`, ms).
#[derive(Serialize)]
struct Starts {
    runs: usize,
    /// Session build with no cache (ONNX Runtime optimises the model).
    build_no_cache_ms: f64,
    /// Session build with an empty cache: optimises and writes the cache file.
    build_first_ms: f64,
    /// Session build from the cache file.
    build_cached_ms: f64,
    /// `build_cached_ms / build_no_cache_ms`.
    cached_vs_no_cache: f64,
    /// From creating the session to the first mask (UNet: one image; SAM2: encoder + one click).
    first_mask_no_cache_ms: f64,
    first_mask_first_ms: f64,
    first_mask_cached_ms: f64,
    /// What the cache reported on the first and on the cached start (e.g. "miss", "hit").
    status_first: String,
    status_cached: String,
}

#[derive(Serialize)]
struct Throughput {
    threads: usize,
    runs_per_second: f64,
}

#[derive(Serialize)]
struct Report {
    model: String,
    image: String,
    provider_in_use: String,
    /// Nodes ONNX Runtime assigned to each provider (the encoder's for SAM2).
    nodes: Vec<NodeCount>,
    session_build_ms: f64,
    starts: Option<Starts>,
    stages_ms: serde_json::Value,
    call_vs_bare_run: Option<f64>,
    throughput: Vec<Throughput>,
    pool: serde_json::Value,
    /// Resident memory after each stage and its peak during it (MiB).
    memory: Vec<StageMemory>,
}

impl Report {
    /// What was measured, where it ran and how long its sessions took to build; the rest empty.
    fn head(
        model: String,
        image: String,
        (provider_in_use, nodes): (String, Vec<NodeCount>),
        build: f64,
        stages_ms: serde_json::Value,
    ) -> Report {
        Report {
            model,
            image,
            provider_in_use,
            nodes,
            session_build_ms: build,
            starts: None,
            stages_ms,
            call_vs_bare_run: None,
            throughput: Vec::new(),
            pool: serde_json::Value::Null,
            memory: Vec::new(),
        }
    }
}

pub fn bench(args: BenchArgs, ort: Option<PathBuf>) -> CliResult {
    let (provider, device_id) = parse_provider(&args.provider)?;
    let threads: Vec<usize> = args
        .threads
        .split(',')
        .map(|t| t.trim().parse::<usize>().ok().filter(|n| (1..=256).contains(n)))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("--threads '{}': expected numbers from 1 to 256, e.g. 1,2,4", args.threads))?;
    if args.runs == 0 || args.encoder_runs == 0 {
        return Err("--runs and --encoder-runs must be at least 1".into());
    }
    let (img, image_name) = match &args.image {
        Some(path) => (decode(path)?, path.display().to_string()),
        None => {
            let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/samples/lesion_02.png");
            let img = decode(&sample)?.resize_exact(1920, 1080, image::imageops::FilterType::Triangle);
            (img, "a bundled sample scaled to 1920x1080".to_string())
        }
    };
    let options = Options {
        ort_path: ort,
        provider,
        device_id,
        cache: args.cache.mode(),
        arena: args.arena.policy(),
        gpu: args.gpu.options(),
        ..Options::default()
    };
    let mut report = match (&args.model, &args.encoder, &args.decoder) {
        (Some(model), ..) => bench_unet(model, &img, image_name, options.clone(), &threads, args.runs)?,
        (None, Some(encoder), Some(decoder)) => {
            bench_sam2(encoder, decoder, &img, image_name, options.clone(), &threads, (args.runs, args.encoder_runs))?
        }
        _ => return Err("give --model, or --encoder and --decoder".into()),
    };
    if args.start_runs > 0 {
        let rgb = img.to_rgb8();
        let view = view(&rgb)?;
        let (w, h) = (view.width(), view.height());
        let start = |cache: CacheMode| -> CliResult<(f64, f64, String)> {
            let options = Options { cache, max_sessions: 1, ..options.clone() };
            let mut mask = vec![0u8; w * h];
            let t = Instant::now();
            let status = match (&args.model, &args.encoder, &args.decoder) {
                (Some(model), ..) => {
                    let seg = UnetSegmenter::from_file(model, options).map_err(|e| e.to_string())?;
                    let built = ms(t);
                    seg.segment_into(&view, &mut MaskMut::new(&mut mask, w, h, 0)?, None).map_err(|e| e.to_string())?;
                    (built, ms(t), seg.info().cache.status)
                }
                (None, Some(encoder), Some(decoder)) => {
                    let sam = Sam2Segmenter::from_files(encoder, decoder, options).map_err(|e| e.to_string())?;
                    let built = ms(t);
                    let prompt = Prompt { points: vec![Point { x: w as f32 / 2.0, y: h as f32 / 2.0, label: 1 }], ..Prompt::default() };
                    sam.predict_into(Some(&view), &prompt, &mut MaskMut::new(&mut mask, w, h, 0)?, None).map_err(|e| e.to_string())?;
                    let info = sam.info();
                    let status = info.encoder_cache.status;
                    if info.decoder_cache.status != status {
                        return Err(format!("encoder cache {:?} but decoder cache {:?}", status, info.decoder_cache.status).into());
                    }
                    (built, ms(t), status)
                }
                _ => unreachable!("checked above"),
            };
            Ok((status.0, status.1, status.2.as_str().to_string()))
        };
        report.starts = Some(measure_starts(args.start_runs, &start)?);
    }
    print(&report)?;
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Builds sessions without a cache, with an empty cache and from the cache, `runs` times each in
/// turn, in a private folder removed afterwards.
fn measure_starts(runs: usize, start: &dyn Fn(CacheMode) -> CliResult<(f64, f64, String)>) -> CliResult<Starts> {
    let dir = std::env::temp_dir().join(format!("segrt-bench-cache-{}", std::process::id()));
    let result = (|| -> CliResult<Starts> {
        let (mut build, mut first_mask) = ([vec![], vec![], vec![]], [vec![], vec![], vec![]]);
        let (mut status_first, mut status_cached) = (String::new(), String::new());
        for _ in 0..runs {
            let _ = std::fs::remove_dir_all(&dir);
            for (i, cache) in [CacheMode::Off, CacheMode::Dir(dir.clone()), CacheMode::Dir(dir.clone())].into_iter().enumerate() {
                let (b, m, status) = start(cache)?;
                build[i].push(b);
                first_mask[i].push(m);
                match i {
                    1 => status_first = status,
                    2 => status_cached = status,
                    _ => {}
                }
            }
        }
        let [b0, b1, b2] = build.map(median);
        let [m0, m1, m2] = first_mask.map(median);
        Ok(Starts {
            runs,
            build_no_cache_ms: b0,
            build_first_ms: b1,
            build_cached_ms: b2,
            cached_vs_no_cache: b2 / b0,
            first_mask_no_cache_ms: m0,
            first_mask_first_ms: m1,
            first_mask_cached_ms: m2,
            status_first,
            status_cached,
        })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn print(r: &Report) -> CliResult {
    say!("{}: {} on {}", r.model, r.provider_in_use, r.image);
    if !r.nodes.is_empty() {
        say!("  nodes per provider: {}", segrt::engine::providers::placement::describe(&r.nodes));
    }
    say!("  session build: {:.1} ms", r.session_build_ms);
    if let Some(s) = &r.starts {
        say!(
            "  session build (medians of {}): no cache {:.1} ms, first start {:.1} ms (cache {}), cached start {:.1} ms (cache {}): cached / no cache = {:.2}",
            s.runs,
            s.build_no_cache_ms,
            s.build_first_ms,
            s.status_first,
            s.build_cached_ms,
            s.status_cached,
            s.cached_vs_no_cache
        );
        say!(
            "  create to first mask (medians): no cache {:.1} ms, first start {:.1} ms, cached start {:.1} ms",
            s.first_mask_no_cache_ms,
            s.first_mask_first_ms,
            s.first_mask_cached_ms
        );
    }
    say!("  stages (medians, ms): {}", r.stages_ms);
    if let Some(ratio) = r.call_vs_bare_run {
        say!("  whole segrt call (pre-processing, run, mask) / bare ONNX Runtime run of the same model: {ratio:.3}");
    }
    say!("  resident memory, MiB: {}", describe(&r.memory));
    for t in &r.throughput {
        say!("  {:>3} calling thread(s): {:.2} runs/s", t.threads, t.runs_per_second);
    }
    say!("  session pool afterwards: {}", r.pool);
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs `call` from `threads` threads, `runs` times in all; returns calls per second.
fn throughput(threads: usize, runs: usize, call: &(dyn Fn() -> CliResult + Sync)) -> CliResult<f64> {
    let per_thread = runs.div_ceil(threads);
    let start = Instant::now();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads).map(|_| scope.spawn(move || (0..per_thread).try_for_each(|_| call()))).collect();
        workers.into_iter().filter_map(|w| w.join().ok().and_then(|r| r.err())).map(|e| e.to_string()).collect()
    });
    if let Some(e) = failures.first() {
        return Err(e.clone().into());
    }
    Ok((per_thread * threads) as f64 / start.elapsed().as_secs_f64())
}

fn view(rgb: &image::RgbImage) -> CliResult<ImageView<'_>> {
    Ok(ImageView::new(rgb.as_raw(), rgb.width() as usize, rgb.height() as usize, 0, PixelFormat::Rgb24).map_err(|e| e.to_string())?)
}

fn bench_unet(model: &Path, img: &DynamicImage, image: String, options: Options, threads: &[usize], runs: usize) -> CliResult<Report> {
    let rgb = img.to_rgb8();
    let view = view(&rgb)?;
    let (w, h) = (view.width(), view.height());
    let env = segrt::runtime::environment(options.ort_path.as_deref()).map_err(|e| e.to_string())?;
    let mut memory = Stages::start();
    let t = Instant::now();
    let max_sessions = threads.iter().copied().max().unwrap_or(1);
    let seg = UnetSegmenter::from_file(model, Options { max_sessions, ..options }).map_err(|e| e.to_string())?;
    let build = ms(t);
    memory.end("create");

    let mut mask = vec![0u8; w * h];
    let mut run = || seg.segment_into(&view, &mut MaskMut::new(&mut mask, w, h, 0)?, None);
    run().map_err(|e| e.to_string())?; // warm-up
    memory.end("first run");
    let (mut pre, mut infer, mut post, mut call) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs.min(3) {
        run().map_err(|e| e.to_string())?;
    }
    memory.end("runs");

    // The call, and a bare run of the same model on the prepared tensor, in alternating blocks.
    let mut builder = Session::builder(env).map_err(|e| format!("bare ONNX Runtime session: {e}"))?;
    let mut bare_session = builder.commit_from_file(model).map_err(|e| format!("bare ONNX Runtime session: {e}"))?;
    let spec = seg.spec().clone();
    let size = spec.model_size((w, h), seg.options());
    let tensor =
        prepare(&view, &spec.tensor_format(), size, &Normalisation::from(seg.options()), Fit::Resize).map_err(|e| e.to_string())?;
    let shape = spec.input_shape(size.0, size.1).to_vec();
    let mut bare = Vec::new();
    const BLOCK: usize = 5;
    for _ in 0..runs.div_ceil(BLOCK) {
        for _ in 0..BLOCK {
            let t = Instant::now();
            let r = run().map_err(|e| e.to_string())?;
            call.push(ms(t));
            pre.push(r.stats.preprocess_ms);
            infer.push(r.stats.inference_ms);
            post.push(r.stats.postprocess_ms);
        }
        for _ in 0..BLOCK {
            let input = tensor.input(shape.clone()).map_err(|e| e.to_string())?;
            let t = Instant::now();
            let out = bare_session.run(ort::inputs![spec.input_name.as_str() => input]).map_err(|e| e.to_string())?;
            bare.push(ms(t));
            drop(out);
        }
    }
    let (call_ms, bare_ms) = (median(call), median(bare));

    let mut rates = Vec::new();
    for &n in threads {
        let one = || -> CliResult {
            let mut mask = vec![0u8; w * h];
            seg.segment_into(&view, &mut MaskMut::new(&mut mask, w, h, 0)?, None).map_err(|e| e.to_string())?;
            Ok(())
        };
        rates.push(Throughput { threads: n, runs_per_second: throughput(n, runs.max(n), &one)? });
    }
    let info = serde_json::to_value(seg.info()).map_err(|e| e.to_string())?;
    let (provider_in_use, nodes) = (seg.provider().in_use.clone(), seg.provider().nodes.clone());
    drop((bare_session, seg));
    memory.end("free");
    let stages_ms = serde_json::json!({
        "preprocess": median(pre), "inference": median(infer), "postprocess": median(post),
        "whole_call": call_ms, "bare_run": bare_ms, "model_size": [size.0, size.1]
    });
    let head = Report::head(model.display().to_string(), format!("{image} ({w}x{h})"), (provider_in_use, nodes), build, stages_ms);
    Ok(Report {
        call_vs_bare_run: Some(call_ms / bare_ms),
        throughput: rates,
        pool: info["pool"].clone(),
        memory: memory.into_rows(),
        ..head
    })
}

fn bench_sam2(
    encoder: &Path,
    decoder: &Path,
    img: &DynamicImage,
    image: String,
    options: Options,
    threads: &[usize],
    (runs, encoder_runs): (usize, usize),
) -> CliResult<Report> {
    let rgb = img.to_rgb8();
    let view = view(&rgb)?;
    let (w, h) = (view.width(), view.height());
    // Another picture for the second encode: the same one mirrored.
    let mirrored = image::imageops::flip_horizontal(&rgb);
    let env = segrt::runtime::environment(options.ort_path.as_deref()).map_err(|e| e.to_string())?;
    let mut memory = Stages::start();
    let t = Instant::now();
    let max_sessions = threads.iter().copied().max().unwrap_or(1);
    let sam = Sam2Segmenter::from_files(encoder, decoder, Options { max_sessions, ..options }).map_err(|e| e.to_string())?;
    let build = ms(t);
    memory.end("create");
    let mirrored_view = self::view(&mirrored)?;
    sam.set_image(&mirrored_view).map_err(|e| e.to_string())?;
    memory.end("encode");
    // The picture and it upside down in turn (each a new image for the cache, which holds the
    // image set last), ending on the picture.
    let flipped = image::imageops::flip_vertical(&rgb);
    let flipped_view = self::view(&flipped)?;
    let (mut pre, mut enc) = (Vec::new(), Vec::new());
    for i in (0..encoder_runs).rev() {
        let (p, e) = sam.set_image(if i % 2 == 0 { &view } else { &flipped_view }).map_err(|e| e.to_string())?;
        pre.push(p);
        enc.push(e);
    }
    let (pre_ms, encoder_ms) = (median(pre), median(enc));
    memory.end("encode again");
    let prompt = Prompt { points: vec![Point { x: w as f32 / 2.0, y: h as f32 / 2.0, label: 1 }], ..Prompt::default() };
    // As a C host clicks: on the image set last, into a mask of its own.
    let mut host_mask = vec![0u8; w * h];
    let mut click = || -> CliResult<segrt::sam2::Sam2Run> {
        Ok(sam.predict_into(None, &prompt, &mut MaskMut::new(&mut host_mask, w, h, 0)?, None).map_err(|e| e.to_string())?)
    };
    click()?; // warm-up
    let (mut whole, mut dec, mut post) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        let r = click()?;
        whole.push(ms(t));
        dec.push(r.stats.decoder_ms);
        post.push(r.stats.postprocess_ms);
    }
    memory.end("clicks");

    // The click, and a bare decoder run on the same embedding and prompt, in alternating blocks
    // (the point_coords/mask_input layouts; transformers' layout has no bare comparison).
    let (call_ms, bare_ms) = if sam.spec().layout.is_transformers() {
        (median(whole.clone()), None)
    } else {
        let mut bare = BareDecoder::new(env, encoder, decoder, &sam, &view, &prompt)?;
        let (mut call, mut bare_ms) = (Vec::new(), Vec::new());
        const BLOCK: usize = 5;
        for _ in 0..runs.div_ceil(BLOCK) {
            for _ in 0..BLOCK {
                let t = Instant::now();
                click()?;
                call.push(ms(t));
            }
            for _ in 0..BLOCK {
                bare_ms.push(bare.run()?);
            }
        }
        (median(call), Some(median(bare_ms)))
    };

    let mut rates = Vec::new();
    for &n in threads {
        let one = || -> CliResult {
            let mut mask = vec![0u8; w * h];
            sam.predict_into(None, &prompt, &mut MaskMut::new(&mut mask, w, h, 0)?, None).map_err(|e| e.to_string())?;
            Ok(())
        };
        rates.push(Throughput { threads: n, runs_per_second: throughput(n, runs.max(n), &one)? });
    }
    let info = serde_json::to_value(sam.info()).map_err(|e| e.to_string())?;
    let (provider_in_use, nodes) = (sam.placement(), sam.provider().nodes.clone());
    drop(sam);
    memory.end("free");
    let stages_ms = serde_json::json!({
        "encoder_preprocess": pre_ms, "encoder": encoder_ms,
        "click": median(whole), "click_decoder": median(dec), "click_mask": median(post),
        "click_alternating": call_ms, "bare_decoder_run": bare_ms
    });
    let model = format!("{} + {}", encoder.display(), decoder.display());
    let head = Report::head(model, format!("{image} ({w}x{h})"), (provider_in_use, nodes), build, stages_ms);
    Ok(Report {
        call_vs_bare_run: bare_ms.map(|b| call_ms / b),
        throughput: rates,
        pool: serde_json::json!({ "encoder": info["encoder_pool"], "decoder": info["decoder_pool"] }),
        memory: memory.into_rows(),
        ..head
    })
}

/// A plain ONNX Runtime decoder session (segrt's environment: the same thread pool) and its inputs
/// for one prompt on an image, prepared once: the embedding from a plain encoder session's run.
struct BareDecoder {
    session: Session,
    inputs: Vec<(String, ort::value::DynValue)>,
}

impl BareDecoder {
    fn new(
        env: &ort::environment::Environment,
        encoder: &Path,
        decoder: &Path,
        sam: &Sam2Segmenter,
        view: &ImageView<'_>,
        prompt: &Prompt,
    ) -> CliResult<BareDecoder> {
        use ort::value::Tensor;
        use segrt::sam2::{model_space, NumberType};
        let bare = |e: ort::Error| format!("bare ONNX Runtime session: {e}");
        let spec = sam.spec();
        if spec.layout.is_transformers() {
            return Err("the bare-session comparison covers the point_coords/mask_input decoders, not transformers' layout".into());
        }
        let side = spec.image_size as i64;
        let tensor = sam.encoder_tensor(view).map_err(|e| e.to_string())?;
        let mut features = Vec::new();
        {
            let mut session = Session::builder(env).map_err(bare)?.commit_from_file(encoder).map_err(bare)?;
            let input = tensor.input(vec![1, 3, side, side]).map_err(|e| e.to_string())?;
            let outputs = session.run(ort::inputs![spec.encoder_input_name.as_str() => input]).map_err(bare)?;
            for (role, name) in &spec.decoder_features {
                let encoder_name = &spec.encoder_outputs.iter().find(|(r, _)| r == role).ok_or("no encoder output for a decoder input")?.1;
                let (shape, data) = outputs[encoder_name.as_str()].try_extract_tensor::<f32>().map_err(bare)?;
                features.push((name.clone(), Tensor::from_array((shape.to_vec(), data.to_vec())).map_err(bare)?.into_dyn()));
            }
        }
        let number = |ty: NumberType, shape: Vec<i64>, values: &[f32]| -> Result<ort::value::DynValue, ort::Error> {
            Ok(match ty {
                NumberType::F32 => Tensor::from_array((shape, values.to_vec()))?.into_dyn(),
                NumberType::I64 => Tensor::from_array((shape, values.iter().map(|v| *v as i64).collect::<Vec<_>>()))?.into_dyn(),
                NumberType::I32 => Tensor::from_array((shape, values.iter().map(|v| *v as i32).collect::<Vec<_>>()))?.into_dyn(),
            })
        };
        let (w, h) = (view.width(), view.height());
        let (coords, labels) = model_space(prompt, spec.family, spec.image_size, (w, h));
        let n = labels.len();
        let (mh, mw) = spec.mask_input_size;
        let mut inputs = features;
        inputs.push((spec.point_coords.clone(), Tensor::from_array(([1usize, n, 2], coords)).map_err(bare)?.into_dyn()));
        inputs.push((spec.point_labels.clone(), number(spec.label_type, vec![1, n as i64], &labels).map_err(bare)?));
        inputs.push((spec.mask_input.clone(), Tensor::from_array(([1usize, 1, mh, mw], vec![0f32; mh * mw])).map_err(bare)?.into_dyn()));
        let count = spec.has_mask_input_shape.iter().product::<i64>().max(1) as usize;
        let has_mask = Tensor::from_array((spec.has_mask_input_shape.clone(), vec![0f32; count])).map_err(bare)?.into_dyn();
        inputs.push((spec.has_mask_input.clone(), has_mask));
        if let Some((name, ty)) = &spec.orig_im_size {
            inputs.push((name.clone(), number(*ty, vec![2], &[h as f32, w as f32]).map_err(bare)?));
        }
        let session = Session::builder(env).map_err(bare)?.commit_from_file(decoder).map_err(bare)?;
        Ok(BareDecoder { session, inputs })
    }

    /// One run (ms), its outputs dropped.
    fn run(&mut self) -> CliResult<f64> {
        let inputs: Vec<(std::borrow::Cow<'_, str>, ort::session::SessionInputValue<'_>)> =
            self.inputs.iter().map(|(name, value)| (name.as_str().into(), value.view().into())).collect();
        let t = Instant::now();
        let outputs = self.session.run(inputs).map_err(|e| format!("bare ONNX Runtime decoder run: {e}"))?;
        let elapsed = ms(t);
        drop(outputs);
        Ok(elapsed)
    }
}
