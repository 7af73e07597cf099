//! `segrt`: the command-line tool. This file parses the arguments and dispatches; each subcommand
//! has a file of its own (`demo`, `unet`, `sam2` with `--everything`, `track`, `find`, `info`,
//! `providers`, `bench`, `soak`, `regions`, `merge`), over the shared flags (`args`), image-file
//! helpers (`files`) and process figures (`process`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use args::ModelArgs;

#[derive(Parser)]
#[command(
    name = "segrt",
    version,
    arg_required_else_help = true,
    about = "Native segmentation runtime: UNet and SAM2 models on ONNX Runtime",
    after_help = "Images: PNG, JPEG, BMP, TIFF and PNM (.png .jpg .jpeg .bmp .tif .tiff .pgm .ppm .pbm .pam .pnm), \
                  8- or 16-bit, gray or colour.\nStart with: segrt demo"
)]
pub struct Cli {
    /// Absolute path of the ONNX Runtime library (default: SEGRT_ORT_PATH, beside segrt, the build tree)
    #[arg(long, global = true, value_name = "PATH", display_order = 100)]
    ort: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
    Unet(unet::UnetArgs),
    /// Segment the object at clicked points / inside a box with a SAM2 encoder + decoder pair
    #[command(
        arg_required_else_help = true,
        after_help = "Example, from the repository root (the bundled tiny models have random weights: the mask shows that \
                      the pipeline works, not a real segmentation):\n  \
                      segrt sam2 --encoder models/sam2/sam2_tiny_samexporter_encoder.onnx \\\n    \
                      --decoder models/sam2/sam2_tiny_samexporter_decoder.onnx \\\n    \
                      --point 105,105 --out out/sam2_mask.png --overlay out/sam2_overlay.png models/sam2/reference/img0.png"
    )]
    Sam2(sam2::Sam2Args),
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
    /// Join the COCO files of a run's shards (--shard K/N) into one, as one run over all inputs writes it
    #[command(arg_required_else_help = true, after_help = "Example: segrt merge --out out/coco.json out/coco.shard-*.json")]
    Merge(merge::MergeArgs),
    /// The regions of a mask or label image with their outlines, holes and figures, as JSON
    #[command(arg_required_else_help = true)]
    Regions(regions::RegionsArgs),
    /// Teach an object once (an image and its mask, or a saved reference), then find it in every
    /// image of a folder without a click
    #[command(
        arg_required_else_help = true,
        after_help = "Example, from the repository root (teach, save the reference, search a folder; later runs \
                      load the reference with --reference FILE instead of --teach/--mask):\n  \
                      segrt find --encoder ENCODER.onnx --decoder DECODER.onnx --teach part.png --mask part_mask.png \\\n    \
                      --save part.segrtref --out out/found --overlay images/"
    )]
    Find(find::FindArgs),
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
    /// Run a station's models for hours (or N calls) and prove it held: memory, latency percentiles,
    /// failures per interval (CSV), plots, a report with the station table and a leak verdict
    #[command(
        arg_required_else_help = true,
        after_help = "Exit status 1 when memory grows beyond --max-growth or more calls fail than --max-failures \
                      (the report says which), or when the run cannot start or write its files.\n\
                      Example, from the repository root (the bundled models; a station gives its own and --hours 72):\n  \
                      segrt soak --unet models/demo_unet.onnx \\\n    \
                      --encoder models/sam2/sam2_tiny_samexporter_encoder.onnx --decoder models/sam2/sam2_tiny_samexporter_decoder.onnx \\\n    \
                      --video models/sam2/video --threads 2 --minutes 10 --interval 10 --out out/soak"
    )]
    Soak(soak::SoakArgs),
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
        #[command(flatten)]
        session: args::SessionArgs,
    },
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
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod annotate;
mod args;
mod batch;
mod bench;
mod demo;
mod files;
mod find;
mod folder_run;
mod info;
mod medical;
mod merge;
mod process;
mod providers;
mod regions;
mod resident;
mod sam2;
mod soak;
mod track;
mod unet;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(e),
    };
    let result = match cli.ort.as_deref().map(absolute).transpose() {
        Err(e) => Err(e),
        Ok(ort) => match cli.command {
            Command::Demo { out, models } => demo::demo(&models.unwrap_or_else(demo::demo_models), &out, ort),
            Command::Unet(args) => unet::unet(args, ort),
            Command::Sam2(args) => sam2::sam2(args, ort),
            Command::Track(args) => track::track(args, ort),
            Command::Find(args) => find::find(args, ort),
            Command::Info { models, model, session } => info::info(&models, &model, &session, ort),
            Command::Providers { device, json } => providers::providers(device, json, ort),
            Command::Bench(args) => bench::bench(args, ort),
            Command::Soak(args) => soak::soak(args, ort),
            Command::Regions(args) => regions::regions(args),
            Command::Merge(args) => merge::merge(args),
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

/// Why a command stopped.
pub enum CliError {
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

pub type CliResult<T = ()> = Result<T, CliError>;

pub fn print_line(args: std::fmt::Arguments) -> CliResult {
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.write_all(b"\n")).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(CliError::StdoutClosed),
        Err(e) => Err(format!("cannot write to standard output: {e}").into()),
    }
}

pub fn absolute(p: &Path) -> CliResult<PathBuf> {
    Ok(std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))?)
}
