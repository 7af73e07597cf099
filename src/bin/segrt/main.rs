//! `segrt`: the command-line tool. `segrt demo` runs the bundled model on the bundled samples;
//! `segrt unet` segments files or folders; `segrt sam2` segments clicked objects (or everything);
//! `segrt info` shows what segrt sees in a model; `segrt providers` lists the execution providers.
//! `segrt track` (track.rs) and `segrt bench` (bench.rs) have files of their own.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use image::{DynamicImage, GrayImage, RgbImage};
use indicatif::{ProgressBar, ProgressStyle};

use segrt::options::{Provider, ProviderPolicy, ThresholdMode, TileMode};
use segrt::sam2::{BoxPrompt, Point, Prompt, Sam2Segmenter};
use segrt::{ImageView, Options, PixelFormat, UnetSegmenter};

/// Image files segrt reads (by extension when a folder is given): PNG, JPEG, BMP, TIFF and PNM.
const IMAGE_EXTENSIONS: [&str; 11] = ["png", "jpg", "jpeg", "bmp", "tif", "tiff", "pgm", "ppm", "pbm", "pam", "pnm"];

#[derive(Parser)]
#[command(
    name = "segrt",
    version,
    arg_required_else_help = true,
    about = "Native segmentation runtime: UNet and SAM2 models on ONNX Runtime",
    after_help = "Images: PNG, JPEG, BMP, TIFF and PNM (.png .jpg .jpeg .bmp .tif .tiff .pgm .ppm .pbm .pam .pnm), \
                  8- or 16-bit, gray or colour.\nStart with: segrt demo"
)]
struct Cli {
    /// Absolute path of the ONNX Runtime library (default: SEGRT_ORT_PATH, beside segrt, the build tree)
    #[arg(long, global = true, value_name = "PATH", display_order = 100)]
    ort: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Segment the bundled sample images with the bundled demo UNet; writes masks and overlays
    Demo {
        /// Output folder
        #[arg(long, default_value = "out/demo")]
        out: PathBuf,
        /// Folder holding demo_unet.onnx and samples/ [default: models/ beside this program if it has
        /// demo_unet.onnx (an unzipped package), else the models/ folder of the source tree it was built from]
        #[arg(long)]
        models: Option<PathBuf>,
    },
    /// Segment images (files or folders) with a UNet model
    #[command(
        arg_required_else_help = true,
        after_help = "Normalisation: a pixel value v (0..255; R,G,B, or gray) is resized and fed to the model as \
                      (v * scale - mean[c]) / std[c]. The default is scale 1/255, mean 0,0,0, std 1,1,1 (v / 255), unless \
                      the model's ONNX metadata states one (keys segrt.scale, segrt.mean, segrt.std, or ONNX's \
                      Image.NominalPixelRange). Any of --scale, --mean, --std sets it yourself, and the ones left out \
                      take the defaults above. `segrt info MODEL` shows the normalisation in use and where it came from.\n  \
                      ImageNet-trained models (U^2-Net-P): --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225\n  \
                      PP-OCR text detector ((v/255 - 0.5) / 0.5): --mean 0.5,0.5,0.5 --std 0.5,0.5,0.5\n  \
                      Models on raw 0..255 values: --scale 1\n\
                      Example, from the repository root: segrt unet --model models/demo_unet.onnx --overlay --out out/masks models/samples"
    )]
    Unet(UnetArgs),
    /// Segment the object at clicked points / inside a box with a SAM2 encoder + decoder pair
    #[command(
        arg_required_else_help = true,
        after_help = "Example, from the repository root (the bundled tiny models have random weights: the mask shows that \
                      the pipeline works, not a real segmentation):\n  \
                      segrt sam2 --encoder models/sam2/sam2_tiny_samexporter_encoder.onnx \\\n    \
                      --decoder models/sam2/sam2_tiny_samexporter_decoder.onnx \\\n    \
                      --point 105,105 --out out/sam2_mask.png --overlay out/sam2_overlay.png models/sam2/reference/img0.png"
    )]
    Sam2(Sam2Args),
    /// Track clicked objects through video frames with the SAM2 video modules (streaming, bounded memory)
    #[command(
        arg_required_else_help = true,
        after_help = "Clicks: --point X,Y[,LABEL] is a click on frame 0 (LABEL 1 = include, the default; 0 = exclude) \
                      of object 1, or of the --object given for it; --point-on FRAME:OBJ:X,Y[,LABEL] clicks any frame.\n\
                      Example, from the repository root (the bundled tiny modules have random weights: the masks show that \
                      the tracking works, not a real segmentation):\n  \
                      segrt track --models models/sam2/video --frames models/sam2/video/reference/frames \\\n    \
                      --point 60,100 --point 250,50 --object 1 --object 2 --out out/track --overlay"
    )]
    Track(track::TrackArgs),
    /// List the execution providers: in the loaded ONNX Runtime build, and initialising on this machine
    Providers {
        /// GPU index to try
        #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
        device: i32,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Measure a model on this station: build time, stages, the call against a bare ONNX Runtime run,
    /// runs per second against calling threads
    #[command(
        arg_required_else_help = true,
        after_help = "Examples, from the repository root:\n  segrt bench --model models/demo_unet.onnx --threads 1,2,4\n  \
                      segrt bench --encoder models/sam2/sam2_tiny_samexporter_encoder.onnx \\\n    \
                      --decoder models/sam2/sam2_tiny_samexporter_decoder.onnx --json bench.json"
    )]
    Bench(bench::BenchArgs),
    /// Show how segrt reads a UNet model, or a SAM2 encoder + decoder pair (JSON)
    #[command(
        arg_required_else_help = true,
        after_help = "For a UNet model: \"interpretation\" says which output is read and why (output_choice), \
                      \"normalisation\" the pixel normalisation in use and where it came from (source: default, \
                      model_metadata or caller). --scale/--mean/--std/--output show what `segrt unet` would do with them."
    )]
    Info {
        /// A UNet model, or a SAM2 encoder followed by its decoder
        #[arg(required = true, num_args = 1..=2)]
        models: Vec<PathBuf>,
        #[command(flatten)]
        model: ModelArgs,
    },
}

/// How a UNet model's input is normalised and which of its outputs is read.
#[derive(clap::Args, Clone, Default, Debug, PartialEq)]
pub struct ModelArgs {
    /// Pixel scale S in (v * S - mean) / std, v = 0..255: a number, or a fraction such as 1/255
    /// [default: 1/255, or the model's metadata]
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    scale: Option<String>,
    /// Per-channel mean subtracted after scaling (R,G,B; gray models use the first) [default: 0,0,0, or the model's metadata]
    #[arg(long, value_name = "R,G,B", allow_hyphen_values = true)]
    mean: Option<String>,
    /// Per-channel divisor after the mean, non-zero (R,G,B) [default: 1,1,1, or the model's metadata]
    #[arg(long, value_name = "R,G,B", allow_hyphen_values = true)]
    std: Option<String>,
    /// The model output to read when it has several [default: the first float output with the
    /// input's height and width]
    #[arg(long, value_name = "NAME", visible_alias = "output-name")]
    output: Option<String>,
}

impl ModelArgs {
    /// Whether any flag was given.
    fn any(&self) -> bool {
        self.scale.is_some() || self.mean.is_some() || self.std.is_some() || self.output.is_some()
    }

    /// Sets the options' normalisation and output from the flags. Any of --scale/--mean/--std makes
    /// the normalisation the caller's: flags left out take segrt's defaults, not the model's metadata.
    fn apply(&self, options: &mut Options) -> CliResult {
        use segrt::unet::normalisation::{parse_scale, parse_three};
        if let Some(s) = &self.scale {
            options.scale = parse_scale(s).map_err(|e| format!("--scale '{s}': {e}"))?;
        }
        if let Some(m) = &self.mean {
            options.mean = parse_three(m, false).map_err(|e| format!("--mean '{m}': {e}"))?;
        }
        if let Some(d) = &self.std {
            options.std = parse_three(d, true).map_err(|e| format!("--std '{d}': {e}"))?;
        }
        options.explicit_normalisation |= self.scale.is_some() || self.mean.is_some() || self.std.is_some();
        if let Some(name) = &self.output {
            if name.is_empty() {
                return Err("--output: give the name of one of the model's outputs (segrt info MODEL lists them)".into());
            }
            options.output_name = Some(name.clone());
        }
        Ok(())
    }
}

/// Where the optimised model is cached between runs (see docs/src/guide/model-cache.md).
#[derive(clap::Args, Clone)]
pub struct CacheArgs {
    /// Cache ONNX Runtime's optimised model in this folder (created if missing): later starts skip the optimiser
    #[arg(long, value_name = "DIR", conflicts_with = "cache")]
    cache_dir: Option<PathBuf>,
    /// Cache the optimised model in a folder `segrt-cache` next to the model file
    #[arg(long)]
    cache: bool,
}

impl CacheArgs {
    pub fn mode(&self) -> segrt::options::CacheMode {
        use segrt::options::CacheMode;
        match (&self.cache_dir, self.cache) {
            // The library takes absolute folders only; on the command line a relative one means
            // the working directory, as for every other path.
            (Some(dir), _) => CacheMode::Dir(std::path::absolute(dir).unwrap_or_else(|_| dir.clone())),
            (None, true) => CacheMode::BesideModel,
            (None, false) => CacheMode::Off,
        }
    }
}

#[derive(clap::Args)]
struct Sam2Args {
    /// The SAM2 image encoder (.onnx): run once per image
    #[arg(long)]
    encoder: PathBuf,
    /// The SAM2 prompt decoder (.onnx) exported with that encoder: run once per prompt
    #[arg(long)]
    decoder: PathBuf,
    /// The image to segment (PNG, JPEG, BMP, TIFF or PNM)
    image: PathBuf,
    /// A click X,Y[,LABEL] in image pixels; LABEL 1 = include (default), 0 = exclude. Repeatable
    #[arg(long = "point", value_name = "X,Y[,LABEL]", allow_hyphen_values = true)]
    points: Vec<String>,
    /// A box X1,Y1,X2,Y2 in image pixels
    #[arg(long = "box", value_name = "X1,Y1,X2,Y2", allow_hyphen_values = true)]
    bbox: Option<String>,
    /// Run the prompt a second time with the first result as mask input (refinement)
    #[arg(long)]
    refine: bool,
    /// Where to write the mask (single channel, 0/255, the image's size)
    #[arg(long)]
    out: PathBuf,
    /// Also write an overlay PNG here
    #[arg(long)]
    overlay: Option<PathBuf>,
    /// ONNX Runtime intra-op threads (0 = one per physical core)
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = count)]
    threads: usize,
    #[command(flatten)]
    cache: CacheArgs,
    /// Segment everything (a grid of prompts, as SAM2's automatic mask generator): --out gets a
    /// 16-bit label image (0 = background, object k = k), --overlay colours each object
    #[arg(long, conflicts_with_all = ["points", "bbox", "refine"])]
    everything: bool,
    /// --everything: also write the objects' records here (JSON)
    #[arg(long, value_name = "FILE", requires = "everything")]
    json: Option<PathBuf>,
    /// --everything: prompts along each side of the image
    #[arg(long, default_value_t = 32, value_name = "N", requires = "everything", allow_negative_numbers = true, value_parser = count)]
    points_per_side: usize,
    /// --everything: prompts per decoder run (decoders with a prompt batch axis)
    #[arg(long, default_value_t = 64, value_name = "N", requires = "everything", allow_negative_numbers = true, value_parser = count)]
    points_per_batch: usize,
    /// --everything: keep masks whose predicted IoU is above this
    #[arg(long, default_value_t = 0.8, value_name = "T", requires = "everything", allow_negative_numbers = true)]
    pred_iou_thresh: f32,
    /// --everything: keep masks whose stability score is at least this
    #[arg(long, default_value_t = 0.95, value_name = "T", requires = "everything", allow_negative_numbers = true)]
    stability_score_thresh: f32,
    /// --everything: the stability score's logit offset
    #[arg(long, default_value_t = 1.0, value_name = "V", requires = "everything", allow_negative_numbers = true)]
    stability_score_offset: f32,
    /// --everything: logit threshold of a mask pixel
    #[arg(long, default_value_t = 0.0, value_name = "V", requires = "everything", allow_negative_numbers = true)]
    mask_threshold: f32,
    /// --everything: box IoU above which the lower-scored mask is dropped
    #[arg(long, default_value_t = 0.7, value_name = "T", requires = "everything", allow_negative_numbers = true)]
    box_nms_thresh: f32,
    /// --everything: remove holes and specks of at most N pixels of the decoder's mask resolution (0 = off)
    #[arg(long, default_value_t = 0, value_name = "N", requires = "everything", allow_negative_numbers = true, value_parser = count)]
    min_mask_region_area: usize,
}

#[derive(clap::Args)]
struct UnetArgs {
    /// The ONNX model
    #[arg(long)]
    model: PathBuf,
    /// Output folder for <stem>_mask.png (and <stem>_overlay.png)
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// A probability threshold in [0,1], or "otsu"
    #[arg(long, default_value = "0.5", allow_hyphen_values = true)]
    threshold: String,
    /// Remove foreground regions smaller than N pixels
    #[arg(long, default_value_t = 0, value_name = "N", allow_negative_numbers = true, value_parser = count)]
    min_area: usize,
    /// Morphological closing with a KxK square
    #[arg(long, default_value_t = 0, value_name = "K", allow_negative_numbers = true, value_parser = count)]
    close: usize,
    /// Fill holes inside foreground regions
    #[arg(long)]
    fill_holes: bool,
    /// Also write <stem>_overlay.png
    #[arg(long)]
    overlay: bool,
    /// ONNX Runtime intra-op threads (0 = one per physical core)
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = count)]
    threads: usize,
    /// Execution provider: cpu, cuda[:ID], tensorrt[:ID], directml[:ID], openvino
    #[arg(long, default_value = "cpu")]
    provider: String,
    /// Run on the CPU (with the reason printed) when the provider cannot start, instead of failing
    #[arg(long)]
    fallback: bool,
    /// Tiled inference at full resolution: off, on, or auto (when the image is over twice the tile)
    #[arg(long, default_value = "off")]
    tile: String,
    /// Tile size WxH for models with dynamic input size (fixed-size models use their own)
    #[arg(long, value_name = "WxH")]
    tile_size: Option<String>,
    /// Pixels shared by neighbouring tiles, blended
    #[arg(long, default_value_t = 64, allow_negative_numbers = true, value_parser = count)]
    tile_overlap: usize,
    /// Tiles per run for models with a dynamic batch axis
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_parser = count)]
    tile_batch: usize,
    #[command(flatten)]
    cache: CacheArgs,
    #[command(flatten)]
    model_args: ModelArgs,
    /// Image files or folders (PNG, JPEG, BMP, TIFF, PNM; a folder's images are taken, not its subfolders).
    /// Outputs are named after the input's stem; inputs sharing a stem (l05.jpg, l05.bmp) get the
    /// extension added (l05_jpg_mask.png, l05_bmp_mask.png)
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

/// Prints one line on standard output. Every stdout line of segrt goes through here, so that a
/// reader that goes away (`segrt demo | head -1`) ends the command quietly instead of a panic.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::print_line(format_args!($($arg)*))?
    };
}

/// Prints one line on standard error; a closed standard error is ignored (there is nowhere left to report).
macro_rules! note {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod bench;
mod track;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(e),
    };
    let result = match cli.ort.as_deref().map(absolute).transpose() {
        Err(e) => Err(e),
        Ok(ort) => match cli.command {
            Command::Demo { out, models } => demo(&models.unwrap_or_else(demo_models), &out, ort),
            Command::Unet(args) => unet(args, ort),
            Command::Sam2(args) => sam2(args, ort),
            Command::Track(args) => track::track(args, ort),
            Command::Info { models, model } => info(&models, &model, ort),
            Command::Providers { device, json } => providers(device, json, ort),
            Command::Bench(args) => bench::bench(args, ort),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`segrt demo | head -1`): stop quietly, as other tools do.
        Err(CliError::StdoutClosed) => ExitCode::SUCCESS,
        Err(CliError::Message(m)) => {
            note!("segrt: error: {m}");
            ExitCode::FAILURE
        }
    }
}

/// Argument-parser errors as one `segrt: error:` line (exit 2, clap's code); `--help`, `--version`
/// and a bare `segrt` / `segrt unet` keep clap's full usage text.
fn argument_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
        e.exit();
    }
    let text = e.render().to_string();
    // clap writes "error: <what>", maybe continued on indented lines, then a blank line, tips and usage.
    let what: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let what = what.join(" ");
    let what = what.strip_prefix("error: ").unwrap_or(&what);
    // The subcommand given, if any, for the pointer to the right --help.
    let cli = <Cli as clap::CommandFactory>::command();
    let command = match std::env::args().skip(1).find(|a| cli.get_subcommands().any(|s| s.get_name() == a)) {
        Some(sub) => format!("segrt {sub}"),
        None => "segrt".to_string(),
    };
    note!("segrt: error: {what} (see '{command} --help')");
    ExitCode::from(2)
}

/// A count given on the command line (pixels, threads, tiles): a whole number, 0 or more.
fn count(s: &str) -> Result<usize, String> {
    s.trim().parse().map_err(|_| "expected a whole number, 0 or more".to_string())
}

/// Why a command stopped.
enum CliError {
    /// Standard output was closed by its reader; nothing left to do, and nothing worth reporting.
    StdoutClosed,
    /// A one-line message for `segrt: error:`.
    Message(String),
}

impl From<String> for CliError {
    fn from(m: String) -> Self {
        CliError::Message(m)
    }
}
impl From<&str> for CliError {
    fn from(m: &str) -> Self {
        CliError::Message(m.to_string())
    }
}
impl From<segrt::Error> for CliError {
    fn from(e: segrt::Error) -> Self {
        CliError::Message(e.to_string())
    }
}
impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::StdoutClosed => f.write_str("standard output was closed"),
            CliError::Message(m) => f.write_str(m),
        }
    }
}

type CliResult<T = ()> = Result<T, CliError>;

fn print_line(args: std::fmt::Arguments) -> CliResult {
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.write_all(b"\n")).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(CliError::StdoutClosed),
        Err(e) => Err(format!("cannot write to standard output: {e}").into()),
    }
}

fn absolute(p: &Path) -> CliResult<PathBuf> {
    Ok(std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))?)
}

fn load_segmenter(model: &Path, options: Options) -> CliResult<(UnetSegmenter, f64)> {
    let t = Instant::now();
    let seg = UnetSegmenter::from_file(model, options).map_err(|e| e.to_string())?;
    Ok((seg, t.elapsed().as_secs_f64() * 1e3))
}

/// The demo's model folder when none is given: `models/` beside the executable first, so an unzipped
/// package (segrt.exe next to models/) works from any folder; then the source tree's, compiled in.
fn demo_models() -> PathBuf {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("models")));
    match beside {
        Some(dir) if dir.join("demo_unet.onnx").is_file() => dir,
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/models")),
    }
}

fn demo(models: &Path, out: &Path, ort: Option<PathBuf>) -> CliResult {
    let model = models.join("demo_unet.onnx");
    let samples = models.join("samples");
    let inputs: Vec<PathBuf> = list_images(std::slice::from_ref(&samples))?.into_iter().filter(|p| !stem(p).ends_with("_gt")).collect();
    if inputs.is_empty() {
        return Err(format!("no sample images in {}", samples.display()).into());
    }
    let names = output_names(&inputs)?;
    let options = Options { ort_path: ort, ..Options::default() };
    let (seg, load_ms) = load_segmenter(&model, options)?;
    let rt = segrt::runtime::loaded().expect("loaded by the segmenter");
    say!("segrt demo: {} on {} images", model.display(), inputs.len());
    say!("ONNX Runtime {} from {}", rt.version, rt.path.display());
    say!("model loaded in {load_ms:.1} ms; provider {}", seg.provider().in_use);
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut totals = [0f64; 4];
    for (path, name) in inputs.iter().zip(&names) {
        let t = Instant::now();
        let img = decode(path)?;
        let decode_ms = t.elapsed().as_secs_f64() * 1e3;
        let (mask, stats) = segment_image(&seg, &img)?;
        let t = Instant::now();
        write_outputs(out, name, &img, &mask, true)?;
        let write_ms = t.elapsed().as_secs_f64() * 1e3;
        let gt = path.with_file_name(format!("{}_gt.png", stem(path)));
        let iou = if gt.exists() { Some(iou(&mask, &decode(&gt)?.to_luma8())) } else { None };
        say!(
            "  {:<16} {:>4}x{:<4} decode {:>6.1} ms | pre {:>6.1} ms | infer {:>7.1} ms | post {:>6.1} ms | write {:>6.1} ms{}",
            file_name(path),
            img.width(),
            img.height(),
            decode_ms,
            stats.preprocess_ms,
            stats.inference_ms,
            stats.postprocess_ms,
            write_ms,
            iou.map(|v| format!(" | IoU vs ground truth {v:.3}")).unwrap_or_default()
        );
        for (i, v) in [stats.preprocess_ms, stats.inference_ms, stats.postprocess_ms, decode_ms + write_ms].iter().enumerate() {
            totals[i] += v;
        }
    }
    let n = inputs.len() as f64;
    say!(
        "mean per image: pre {:.1} ms, inference {:.1} ms, post {:.1} ms (file decode+write {:.1} ms)",
        totals[0] / n,
        totals[1] / n,
        totals[2] / n,
        totals[3] / n
    );
    say!("masks and overlays written to {}", absolute(out)?.display());
    Ok(())
}

fn unet(args: UnetArgs, ort: Option<PathBuf>) -> CliResult {
    let options = unet_options(&args, ort)?;
    let inputs = list_images(&args.inputs)?;
    if inputs.is_empty() {
        return Err("no image files found in the given inputs".into());
    }
    let names = output_names(&inputs)?;
    let (seg, load_ms) = load_segmenter(&args.model, options)?;
    let p = seg.provider();
    note!("model loaded in {load_ms:.1} ms; provider {}; model cache {}", p.in_use, seg.info().cache.status.as_str());
    if let Some(reason) = &p.fallback_reason {
        note!("warning: running on the CPU: {reason}");
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let bar = ProgressBar::new(inputs.len() as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let mut failures = 0;
    for (path, name) in inputs.iter().zip(&names) {
        bar.set_message(file_name(path));
        let outcome = decode(path).and_then(|img| {
            let (mask, _) = segment_image(&seg, &img)?;
            write_outputs(&args.out, name, &img, &mask, args.overlay)
        });
        if let Err(e) = outcome {
            bar.suspend(|| note!("segrt: error: {}: {e}", path.display()));
            failures += 1;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    note!("{} of {} images segmented into {}", inputs.len() - failures, inputs.len(), args.out.display());
    if failures > 0 {
        return Err(format!("{failures} image(s) failed").into());
    }
    Ok(())
}

/// The session options the `unet` command's flags ask for.
fn unet_options(args: &UnetArgs, ort: Option<PathBuf>) -> CliResult<Options> {
    let (provider, device_id) = parse_provider(&args.provider)?;
    let (threshold_mode, threshold) = match args.threshold.trim() {
        "otsu" => (ThresholdMode::Otsu, 0.5),
        t => match t.parse::<f32>() {
            Ok(v) if (0.0..=1.0).contains(&v) => (ThresholdMode::Fixed, v),
            Ok(_) => return Err(format!("--threshold {t}: a probability threshold must be within [0, 1] (or 'otsu')").into()),
            Err(_) => return Err(format!("--threshold '{t}' is neither a number in [0,1] nor 'otsu'").into()),
        },
    };
    let mut options = Options {
        ort_path: ort,
        provider,
        device_id,
        provider_policy: if args.fallback { ProviderPolicy::Fallback } else { ProviderPolicy::Require },
        intra_threads: args.threads,
        threshold_mode,
        threshold,
        min_area: args.min_area,
        close_kernel: args.close,
        fill_holes: args.fill_holes,
        tile_mode: match args.tile.as_str() {
            "off" => TileMode::Off,
            "on" => TileMode::On,
            "auto" => TileMode::Auto,
            other => return Err(format!("--tile '{other}': expected off, on or auto").into()),
        },
        tile_size: match &args.tile_size {
            None => None,
            Some(v) => Some(
                v.split_once('x')
                    .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
                    .ok_or_else(|| format!("--tile-size '{v}': expected WxH, e.g. 512x512"))?,
            ),
        },
        tile_overlap: args.tile_overlap,
        tile_batch: args.tile_batch,
        cache: args.cache.mode(),
        ..Options::default()
    };
    args.model_args.apply(&mut options)?;
    Ok(options)
}

fn info(models: &[PathBuf], model_args: &ModelArgs, ort: Option<PathBuf>) -> CliResult {
    let mut options = Options { ort_path: ort, ..Options::default() };
    let json = match models {
        [model] => {
            model_args.apply(&mut options)?;
            serde_json::to_string_pretty(&load_segmenter(model, options)?.0.info())
        }
        [_, _] if model_args.any() => return Err("--scale, --mean, --std and --output apply to a UNet model, not a SAM2 pair".into()),
        [encoder, decoder] => {
            let sam = Sam2Segmenter::from_files(encoder, decoder, options).map_err(|e| e.to_string())?;
            serde_json::to_string_pretty(&sam.info())
        }
        _ => return Err("give one UNet model, or a SAM2 encoder and decoder".into()),
    };
    say!("{}", json.map_err(|e| e.to_string())?);
    Ok(())
}

fn providers(device: i32, json: bool, ort: Option<PathBuf>) -> CliResult {
    let options = Options { ort_path: ort, device_id: device, ..Options::default() };
    let probes = segrt::engine::probe_providers(&options).map_err(|e| e.to_string())?;
    if json {
        say!("{}", serde_json::to_string_pretty(&probes).map_err(|e| e.to_string())?);
        return Ok(());
    }
    let rt = segrt::runtime::RuntimeInfo::current();
    say!("ONNX Runtime {} from {}", rt.version, rt.path);
    say!("{:<12} {:>5}  {:<26} {:<8} {:<11} why not", "provider", "value", "ONNX Runtime name", "in build", "initialises");
    for p in &probes {
        let yes = |b: bool| if b { "yes" } else { "no" };
        let reason = p.reason.as_deref().unwrap_or("").lines().next().unwrap_or("");
        say!("{:<12} {:>5}  {:<26} {:<8} {:<11} {reason}", p.name, p.value, p.onnxruntime_name, yes(p.in_this_build), yes(p.initialises));
    }
    Ok(())
}

fn parse_numbers(s: &str, what: &str, counts: &[usize]) -> CliResult<Vec<f32>> {
    let v: Vec<f32> = s
        .split(',')
        .map(|p| p.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{what} '{s}': not a list of numbers"))?;
    if !counts.contains(&v.len()) {
        return Err(format!(
            "{what} '{s}': expected {} comma-separated numbers",
            counts.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or ")
        )
        .into());
    }
    Ok(v)
}

fn sam2(args: Sam2Args, ort: Option<PathBuf>) -> CliResult {
    if args.overlay.as_ref().is_some_and(|o| same_file_name(o, &args.out)) {
        return Err(format!("--overlay and --out both name {}: give two different files", args.out.display()).into());
    }
    if args.everything {
        return sam2_everything(args, ort);
    }
    let mut prompt = Prompt { refine: false, ..Prompt::default() };
    for p in &args.points {
        let v = parse_numbers(p, "--point", &[2, 3])?;
        prompt.points.push(Point { x: v[0], y: v[1], label: v.get(2).map_or(1, |l| *l as i32) });
    }
    if let Some(b) = &args.bbox {
        let v = parse_numbers(b, "--box", &[4])?;
        prompt.bbox = Some(BoxPrompt { x1: v[0], y1: v[1], x2: v[2], y2: v[3] });
    }
    let options = Options { ort_path: ort, intra_threads: args.threads, cache: args.cache.mode(), ..Options::default() };
    let t = Instant::now();
    let sam = Sam2Segmenter::from_files(&args.encoder, &args.decoder, options).map_err(|e| e.to_string())?;
    let info = sam.info();
    note!(
        "models loaded in {:.1} ms; convention {}; provider {}; model cache: encoder {}, decoder {}",
        t.elapsed().as_secs_f64() * 1e3,
        sam.spec().convention,
        sam.provider().in_use,
        info.encoder_cache.status.as_str(),
        info.decoder_cache.status.as_str()
    );
    let img = decode(&args.image)?;
    let rgb = img.to_rgb8();
    let (w, h) = (rgb.width() as usize, rgb.height() as usize);
    let view = ImageView::new(rgb.as_raw(), w, h, 0, PixelFormat::Rgb24).map_err(|e| e.to_string())?;
    let mut out = sam.predict(Some(&view), &prompt, false).map_err(|e| e.to_string())?;
    report_click(&out, "click");
    if args.refine {
        prompt.refine = true;
        out = sam.predict(Some(&view), &prompt, false).map_err(|e| e.to_string())?;
        report_click(&out, "refined");
    }
    let mask = GrayImage::from_raw(w as u32, h as u32, out.mask).ok_or("mask size mismatch")?;
    mask.save(&args.out).map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    if let Some(path) = &args.overlay {
        make_overlay(&rgb, &mask).save(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    note!("mask written to {}", args.out.display());
    Ok(())
}

/// `segrt sam2 --everything`: the label image, an overlay and the records.
fn sam2_everything(args: Sam2Args, ort: Option<PathBuf>) -> CliResult {
    if args.overlay.as_ref().is_some_and(|o| same_file_name(o, &args.out)) {
        return Err(format!("--overlay and --out both name {}: give two different files", args.out.display()).into());
    }
    let opts = segrt::sam2::EverythingOptions {
        points_per_side: args.points_per_side,
        points_per_batch: args.points_per_batch,
        pred_iou_thresh: args.pred_iou_thresh,
        stability_score_thresh: args.stability_score_thresh,
        stability_score_offset: args.stability_score_offset,
        mask_threshold: args.mask_threshold,
        box_nms_thresh: args.box_nms_thresh,
        min_mask_region_area: args.min_mask_region_area,
        crop_n_layers: 0,
    };
    opts.validate().map_err(|e| format!("--everything: {}", e.message))?;
    let options = Options { ort_path: ort, intra_threads: args.threads, cache: args.cache.mode(), ..Options::default() };
    let t = Instant::now();
    let sam = Sam2Segmenter::from_files(&args.encoder, &args.decoder, options).map_err(|e| e.to_string())?;
    note!(
        "models loaded in {:.1} ms; convention {}; provider {}; prompt batch {}",
        t.elapsed().as_secs_f64() * 1e3,
        sam.spec().convention,
        sam.provider().in_use,
        if sam.batched_prompts() { "yes" } else { "no (one prompt per decoder run)" }
    );
    let img = decode(&args.image)?;
    let rgb = img.to_rgb8();
    let (w, h) = (rgb.width() as usize, rgb.height() as usize);
    let view = ImageView::new(rgb.as_raw(), w, h, 0, PixelFormat::Rgb24).map_err(|e| e.to_string())?;
    let (result, _) = sam.everything(Some(&view), &opts).map_err(|e| e.to_string())?;
    let s = &result.stats;
    note!(
        "everything: encoder {:.1} ms | {} prompts in {} decoder runs, {:.1} ms ({:.1} prompts/s) | post-processing {:.1} ms | \
         masks {} -> IoU filter {} -> stability filter {} -> NMS {} objects{}",
        s.encoder_ms,
        s.prompts,
        s.decoder_runs,
        s.decoder_ms,
        s.prompts as f64 / (s.decoder_ms / 1e3).max(1e-9),
        s.postprocess_ms,
        s.masks_decoded,
        s.after_iou,
        s.after_stability,
        s.after_nms,
        if result.dropped > 0 { format!(" ({} beyond 65535 left out)", result.dropped) } else { String::new() }
    );
    let mut labels = vec![0u16; w * h];
    result.paint(&mut labels, w);
    let label_img: image::ImageBuffer<image::Luma<u16>, Vec<u16>> =
        image::ImageBuffer::from_raw(w as u32, h as u32, labels.clone()).ok_or("label size mismatch")?;
    label_img.save(&args.out).map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    if let Some(path) = &args.overlay {
        let mut out = rgb.clone();
        for (px, l) in out.pixels_mut().zip(&labels) {
            if *l != 0 {
                // a colour per object, spread over the hue circle by a golden-ratio step
                let hue = (*l as f32 * 0.618_034).fract() * 6.0;
                let x = 1.0 - (hue % 2.0 - 1.0).abs();
                let (r, g, b) = match hue as u32 {
                    0 => (1.0, x, 0.0),
                    1 => (x, 1.0, 0.0),
                    2 => (0.0, 1.0, x),
                    3 => (0.0, x, 1.0),
                    4 => (x, 0.0, 1.0),
                    _ => (1.0, 0.0, x),
                };
                for (p, c) in px.0.iter_mut().zip([r, g, b]) {
                    *p = ((*p as f32 + c * 255.0) / 2.0) as u8;
                }
            }
        }
        out.save(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.json {
        let objects: Vec<serde_json::Value> = result
            .objects
            .iter()
            .map(|o| {
                serde_json::json!({
                    "id": o.id, "bbox_xyxy": o.bbox, "area": o.area, "predicted_iou": o.predicted_iou,
                    "stability_score": o.stability_score, "point": o.point, "mask_index": o.mask_index,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "image": args.image, "width": w, "height": h, "objects": objects, "dropped": result.dropped,
            "options": {
                "points_per_side": opts.points_per_side, "points_per_batch": opts.points_per_batch,
                "pred_iou_thresh": opts.pred_iou_thresh, "stability_score_thresh": opts.stability_score_thresh,
                "stability_score_offset": opts.stability_score_offset, "mask_threshold": opts.mask_threshold,
                "box_nms_thresh": opts.box_nms_thresh, "min_mask_region_area": opts.min_mask_region_area,
            },
            "stats": {
                "prompts": s.prompts, "decoder_runs": s.decoder_runs, "batch": s.batch, "masks_decoded": s.masks_decoded,
                "after_iou": s.after_iou, "after_stability": s.after_stability, "after_nms": s.after_nms,
                "encoder_ms": s.encoder_ms, "decoder_ms": s.decoder_ms, "postprocess_ms": s.postprocess_ms,
            },
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    note!("{} objects; labels written to {}", result.objects.len(), args.out.display());
    Ok(())
}

fn report_click(out: &segrt::sam2::Sam2Output, what: &str) {
    let s = &out.run.stats;
    note!(
        "{what}: encoder {} | decoder {:.1} ms | upsample+threshold {:.1} ms | mask {} of {} (predicted IoU {:.3})",
        if s.encoder_reused {
            "cached".to_string()
        } else {
            format!("{:.1} ms (+ {:.1} ms pre-processing)", s.encoder_ms, s.encoder_preprocess_ms)
        },
        s.decoder_ms,
        s.postprocess_ms,
        out.run.chosen,
        out.run.scores.len(),
        out.run.scores[out.run.chosen]
    );
}

fn parse_provider(s: &str) -> CliResult<(Provider, i32)> {
    let (name, id) = s.split_once(':').unwrap_or((s, "0"));
    let id: i32 = id.parse().map_err(|_| format!("--provider '{s}': device id must be a number"))?;
    match name.to_ascii_lowercase().as_str() {
        "cpu" => Ok((Provider::Cpu, 0)),
        "cuda" => Ok((Provider::Cuda, id)),
        "tensorrt" => Ok((Provider::TensorRt, id)),
        "directml" => Ok((Provider::DirectMl, id)),
        "openvino" => Ok((Provider::OpenVino, 0)),
        _ => {
            Err(format!("--provider '{s}': expected cpu, cuda[:ID], tensorrt[:ID], directml[:ID] or openvino (see `segrt providers`)")
                .into())
        }
    }
}

fn decode(path: &Path) -> CliResult<DynamicImage> {
    Ok(image::open(path).map_err(|e| format!("cannot read image {}: {e}", path.display()))?)
}

/// Gray files go in as GRAY8, everything else as RGB24.
fn segment_image(seg: &UnetSegmenter, img: &DynamicImage) -> CliResult<(GrayImage, segrt::unet::RunStats)> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let gray;
    let rgb;
    let view = if matches!(img, DynamicImage::ImageLuma8(_) | DynamicImage::ImageLuma16(_)) {
        gray = img.to_luma8();
        ImageView::new(gray.as_raw(), w, h, 0, PixelFormat::Gray8)
    } else {
        rgb = img.to_rgb8();
        ImageView::new(rgb.as_raw(), w, h, 0, PixelFormat::Rgb24)
    }
    .map_err(|e| e.to_string())?;
    let s = seg.segment(&view, false).map_err(|e| e.to_string())?;
    let mask = GrayImage::from_raw(w as u32, h as u32, s.mask).ok_or("mask size mismatch")?;
    Ok((mask, s.run.stats))
}

/// Writes `<name>_mask.png` (and `<name>_overlay.png`) into `out`; `name` comes from [`output_names`].
fn write_outputs(out: &Path, name: &str, img: &DynamicImage, mask: &GrayImage, overlay: bool) -> CliResult<PathBuf> {
    let mask_path = out.join(format!("{name}_mask.png"));
    mask.save(&mask_path).map_err(|e| format!("cannot write {}: {e}", mask_path.display()))?;
    if overlay {
        let path = out.join(format!("{name}_overlay.png"));
        make_overlay(&img.to_rgb8(), mask).save(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(mask_path)
}

/// The output name of each input, unique within the run so that no output of the run overwrites
/// another: the file stem (`a.png` -> `a`), or, for inputs that share a stem (`l05.jpg`, `l05.bmp`),
/// stem and extension (`l05_jpg`, `l05_bmp`). Names are compared ignoring case, as Windows and macOS
/// file systems do. Inputs that would still share a name (the same file name in two folders) are
/// refused, naming both, before anything is written.
fn output_names(inputs: &[PathBuf]) -> CliResult<Vec<String>> {
    let key = |s: &str| s.to_lowercase();
    let mut stems: HashMap<String, usize> = HashMap::new();
    for p in inputs {
        *stems.entry(key(&stem(p))).or_default() += 1;
    }
    let names: Vec<String> = inputs
        .iter()
        .map(|p| {
            let s = stem(p);
            match p.extension() {
                Some(ext) if stems[&key(&s)] > 1 => format!("{s}_{}", ext.to_string_lossy()),
                _ => s,
            }
        })
        .collect();
    let mut seen: HashMap<String, &Path> = HashMap::new();
    for (name, path) in names.iter().zip(inputs) {
        if let Some(first) = seen.insert(key(name), path) {
            // The same file name in two folders: name the plain output, as the user would expect it.
            let name = if key(&file_name(first)) == key(&file_name(path)) { stem(path) } else { name.clone() };
            return Err(format!(
                "{} and {} would both be written as {name}_mask.png: segment them in separate runs (each with its own --out) \
                 or rename one",
                first.display(),
                path.display()
            )
            .into());
        }
    }
    Ok(names)
}

fn same_file_name(a: &Path, b: &Path) -> bool {
    match (absolute(a), absolute(b)) {
        (Ok(a), Ok(b)) => a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase(),
        _ => a == b,
    }
}

/// Tints mask pixels: red for 255 (binary), a palette colour per class index otherwise.
fn make_overlay(rgb: &RgbImage, mask: &GrayImage) -> RgbImage {
    const PALETTE: [[u8; 3]; 6] = [[255, 0, 0], [0, 200, 0], [0, 90, 255], [255, 200, 0], [200, 0, 255], [0, 220, 220]];
    let mut out = rgb.clone();
    for (px, m) in out.pixels_mut().zip(mask.pixels()) {
        let m = m.0[0];
        if m != 0 {
            let c = if m == 255 { PALETTE[0] } else { PALETTE[(m as usize - 1) % PALETTE.len()] };
            for (p, c) in px.0.iter_mut().zip(c) {
                *p = ((*p as u16 + c as u16) / 2) as u8;
            }
        }
    }
    out
}

fn iou(mask: &GrayImage, gt: &GrayImage) -> f64 {
    let (mut inter, mut union) = (0u64, 0u64);
    for (a, b) in mask.pixels().zip(gt.pixels()) {
        let (a, b) = (a.0[0] > 127, b.0[0] > 127);
        inter += (a && b) as u64;
        union += (a || b) as u64;
    }
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

/// The image files named or found (by extension, not recursively) in the given folders, in order;
/// a file reached twice (`dir` and `dir/a.png`) is taken once.
fn list_images(inputs: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| format!("cannot list {}: {e}", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .filter(|p| {
                    p.extension().and_then(|e| e.to_str()).is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
                })
                .collect();
            files.sort();
            out.extend(files);
        } else if input.is_file() {
            out.push(input.clone());
        } else {
            return Err(format!("{} does not exist", input.display()).into());
        }
    }
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
    Ok(out)
}

fn stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}
fn file_name(p: &Path) -> String {
    p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unet_args(flags: &[&str]) -> Result<UnetArgs, clap::Error> {
        let argv = ["segrt", "unet", "--model", "m.onnx"].iter().chain(flags).chain(&["a.png"]).copied();
        match Cli::try_parse_from(argv)?.command {
            Command::Unet(args) => Ok(args),
            _ => unreachable!("parsed as unet"),
        }
    }

    fn options(flags: &[&str]) -> Result<Options, String> {
        let args = unet_args(flags).map_err(|e| e.to_string())?;
        unet_options(&args, None).map_err(|e| e.to_string())
    }

    #[test]
    fn normalisation_flags_set_the_options_and_mark_them_the_callers() {
        let o = options(&["--mean", "0.485,0.456,0.406", "--std", "0.229,0.224,0.225"]).unwrap();
        assert_eq!((o.scale, o.mean, o.std, o.explicit_normalisation), (1.0 / 255.0, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225], true));
        let o = options(&["--scale", "1"]).unwrap();
        assert_eq!((o.scale, o.mean, o.std, o.explicit_normalisation), (1.0, [0.0; 3], [1.0; 3], true));
        // The defaults given on purpose are still the caller's: the model's metadata is not used.
        let o = options(&["--scale", "1/255"]).unwrap();
        assert_eq!((o.scale, o.explicit_normalisation), (1.0 / 255.0, true));
        assert!(segrt::unet::normalisation::set_by_caller(&o));
        // No flag: the library may take the model's metadata.
        let o = options(&[]).unwrap();
        assert_eq!((o.explicit_normalisation, o.output_name.as_deref()), (false, None));
        assert!(!segrt::unet::normalisation::set_by_caller(&o));
        let o = options(&["--output", "1959"]).unwrap();
        assert_eq!((o.output_name.as_deref(), o.explicit_normalisation), (Some("1959"), false));
        let o = options(&["--output-name", "1960", "--mean=-1,0,1"]).unwrap();
        assert_eq!((o.output_name.as_deref(), o.mean), (Some("1960"), [-1.0, 0.0, 1.0]));
    }

    #[test]
    fn bad_normalisation_flags_say_which_flag_and_why() {
        for (flags, needle) in [
            (&["--mean", "0.5,0.5"][..], "--mean '0.5,0.5': expected three comma-separated numbers R,G,B, got 2"),
            (&["--std", "0.2,0,0.2"][..], "--std '0.2,0,0.2': a standard deviation of 0 would divide by zero"),
            (&["--std", "1,1,nan"][..], "--std '1,1,nan': 'nan' is not a finite number"),
            (&["--mean", "a,b,c"][..], "--mean 'a,b,c': 'a' is not a number"),
            (&["--scale", "0"][..], "--scale '0': the scale must be a finite, non-zero number"),
            (&["--scale", "1/0"][..], "--scale '1/0'"),
            (&["--output", ""][..], "--output: give the name"),
        ] {
            let e = options(flags).unwrap_err();
            assert!(e.contains(needle), "{flags:?}: {e}");
        }
    }

    #[test]
    fn info_takes_the_flags_for_a_unet_model_only() {
        let cli = Cli::try_parse_from(["segrt", "info", "--mean", "1,2,3", "m.onnx"]).unwrap();
        let Command::Info { models, model } = cli.command else { unreachable!("parsed as info") };
        assert_eq!((models.len(), model.mean.as_deref()), (1, Some("1,2,3")));
        let e = info(&[PathBuf::from("e.onnx"), PathBuf::from("d.onnx")], &model, None).err().unwrap();
        assert!(e.to_string().contains("apply to a UNet model"), "{e}");
    }
}
