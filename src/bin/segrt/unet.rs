//! `segrt unet`: segment image files or folders with a UNet model.

use std::path::{Path, PathBuf};
use std::time::Instant;

use image::{DynamicImage, GrayImage};
use indicatif::{ProgressBar, ProgressStyle};

use segrt::image::intensity::Intensity;
use segrt::options::{ThresholdMode, TileMode};
use segrt::{Options, UnetSegmenter};

use crate::annotate::objects;
use crate::args::{count, ArenaArgs, CacheArgs, ModelArgs, SessionArgs};
use crate::batch::{save_png, Batch};
use crate::files::{decode, display_rgb, file_name, list_images, make_overlay, output_names, Pixels};
use crate::folder_run::{Done, FolderRun, ImageRunArgs};
use crate::medical::{self, Volume};
use crate::CliResult;

#[derive(clap::Args)]
pub struct UnetArgs {
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
    #[command(flatten)]
    session: SessionArgs,
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
    arena: ArenaArgs,
    #[command(flatten)]
    model_args: ModelArgs,
    #[command(flatten)]
    run_args: ImageRunArgs,
    /// Image files or folders (PNG, JPEG, BMP, TIFF, PNM; a folder's images are taken, not its subfolders),
    /// DICOM files, DICOM series (a folder of .dcm files) and NIfTI volumes (.nii, .nii.gz).
    /// Outputs are named after the input's stem; inputs sharing a stem (l05.jpg, l05.bmp) get the
    /// extension added (l05_jpg_mask.png, l05_bmp_mask.png). A volume's slices give
    /// <stem>_<slice>_mask.png, and a NIfTI volume also <stem>_mask.nii[.gz] with its geometry
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

pub fn unet(args: UnetArgs, ort: Option<PathBuf>) -> CliResult {
    let intensity = args.run_args.intensity.intensity()?;
    let options = unet_options(&args, ort)?;
    // DICOM and NIfTI inputs: every header is read (and every refusal made) before anything is written.
    let (volume_paths, image_paths): (Vec<PathBuf>, Vec<PathBuf>) = args.inputs.iter().cloned().partition(|p| medical::is_medical(p));
    let volumes = volume_paths.iter().map(|p| Ok((p.clone(), Volume::open(p)?))).collect::<CliResult<Vec<_>>>()?;
    if !volumes.is_empty() && args.run_args.intensity.rescale.is_some() {
        return Err(
            "--rescale: DICOM and NIfTI inputs carry their own rescale (RescaleSlope/Intercept, scl_slope/scl_inter), which segrt applies"
                .into(),
        );
    }
    let inputs = if image_paths.is_empty() { Vec::new() } else { list_images(&image_paths)? };
    if inputs.is_empty() && volumes.is_empty() {
        return Err("no image files found in the given inputs".into());
    }
    let names = output_names(&inputs)?;
    // A volume's outputs (<stem>_mask.png, <stem>_<k>_mask.png) must not overwrite another input's.
    let mut taken: std::collections::HashMap<String, &Path> =
        names.iter().zip(&inputs).map(|(n, p)| (n.to_lowercase(), p.as_path())).collect();
    for (path, _) in &volumes {
        let stem = medical::stem(path);
        if let Some(other) = taken.insert(stem.to_lowercase(), path) {
            return Err(format!(
                "{} and {} would both be written as {stem}_mask.png: segment them in separate runs (each with its own --out) or rename one",
                other.display(),
                path.display()
            )
            .into());
        }
    }
    let (seg, load_ms) = load_segmenter(&args.model, options)?;
    seg.core().set_intensity(intensity).map_err(|e| e.to_string())?;
    let p = seg.provider();
    note!("model loaded in {load_ms:.1} ms; provider {}; model cache {}", p.in_use, seg.info().cache.status.as_str());
    note!("intensity: {}", seg.info().session.intensity);
    crate::args::note_trt_profile("the model runs", p);
    if let Some(reason) = &p.fallback_reason {
        note!("warning: running on the CPU: {reason}");
    }
    if p.requested != "CPU" && !p.nodes.is_empty() {
        note!("nodes per provider: {}", segrt::engine::providers::placement::describe(&p.nodes));
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    if !volumes.is_empty() && (Batch::wanted(&args.run_args.batch) || !args.run_args.annotate.annotations.is_empty()) {
        return Err(
            "--annotations, --shard, --resume and --log take image files: segment DICOM and NIfTI volumes in a run of their own".into()
        );
    }
    // A multi-class model's mask holds class indices, 0 the background: a category per other class.
    let classes = seg.spec().classes.unwrap_or(1);
    let categories = crate::annotate::categories(&args.run_args.annotate, classes.saturating_sub(1).max(1))?;
    let mut run = FolderRun::start(&args.run_args, "unet", &args.out, categories, &inputs, &names)?;
    let bar = ProgressBar::new((inputs.len() + volumes.iter().map(|(_, v)| v.slice_count()).sum::<usize>()) as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let mut failures = 0;
    for (i, (path, name)) in inputs.iter().zip(&names).enumerate() {
        bar.set_message(file_name(path));
        if !run.todo(path) {
            bar.inc(1);
            continue;
        }
        let started = Instant::now();
        let outcome = decode(path).and_then(|img| {
            let (mask, _) = segment_image(&seg, &img)?;
            let outputs = write_outputs(&args.out, name, &img, &mask, args.overlay)?;
            let size = (mask.width() as usize, mask.height() as usize);
            let objects = match run.shapes() {
                Some(shapes) => {
                    objects::instances(&segrt::contours::MaskView::new(mask.as_raw(), size.0, size.1, 0)?, shapes, classes <= 1)?
                }
                None => Vec::new(),
            };
            Ok(Done { outputs, size, objects })
        });
        if let Some(e) = run.finish_input(i, path, name, started, outcome)? {
            bar.suspend(|| note!("segrt: error: {}: {e}", path.display()));
        }
        bar.inc(1);
    }
    for (path, volume) in &volumes {
        let (chosen, from_file) = volume.intensity(intensity);
        let outcome = seg.core().set_intensity(chosen).map_err(|e| e.to_string().into()).and_then(|_| {
            bar.suspend(|| {
                note!("{}: {}", path.display(), volume.describe());
                note!("intensity: {}{}", seg.info().session.intensity, from_file.map(|n| format!(" ({n})")).unwrap_or_default());
            });
            segment_volume(&seg, volume, chosen.as_ref(), &args, &medical::stem(path), &bar)
        });
        if let Err(e) = outcome {
            bar.suspend(|| note!("segrt: error: {}: {e}", path.display()));
            failures += 1;
        }
    }
    bar.finish_and_clear();
    failures += run.failures;
    let total = run.done + run.failures + volumes.len();
    let what = if volumes.is_empty() { "images" } else { "inputs" };
    note!("{} of {total} {what} segmented into {}", total - failures, args.out.display());
    for line in run.finish()? {
        note!("{line}");
    }
    if failures > 0 {
        return Err(format!("{failures} image(s) failed").into());
    }
    Ok(())
}

/// A volume slice by slice: `<name>_<k>_mask.png` (and overlays) per slice, then the mask volume
/// (NIfTI in -> `<name>_mask.nii[.gz]` with the input's header). One slice's floats at a time.
fn segment_volume(
    seg: &UnetSegmenter,
    volume: &Volume,
    intensity: Option<&Intensity>,
    args: &UnetArgs,
    name: &str,
    bar: &ProgressBar,
) -> CliResult {
    let n = volume.slice_count();
    let (w, h) = volume.size();
    let display = Volume::display_range(intensity);
    let mut masks = Vec::with_capacity(w * h * n);
    let mut foreground = 0usize;
    for k in 0..n {
        bar.set_message(format!("{name} slice {k}"));
        let slice = volume.slice(k)?;
        let pixels = slice.pixels();
        let s = seg.segment(&pixels.view()?, false).map_err(|e| e.to_string())?;
        let mask = GrayImage::from_raw(w as u32, h as u32, s.mask).ok_or("mask size mismatch")?;
        let slice_name = if n == 1 { name.to_string() } else { format!("{name}_{k:03}") };
        let mask_path = args.out.join(format!("{slice_name}_mask.png"));
        mask.save(&mask_path).map_err(|e| format!("cannot write {}: {e}", mask_path.display()))?;
        if args.overlay {
            let path = args.out.join(format!("{slice_name}_overlay.png"));
            make_overlay(&slice.display_rgb(display), &mask).save(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        foreground += mask.as_raw().iter().filter(|v| **v != 0).count();
        masks.extend_from_slice(mask.as_raw());
        bar.inc(1);
    }
    let volume_file = volume.write_mask_volume(&args.out, name, &masks)?;
    bar.suspend(|| {
        note!(
            "{name}: {n} slice(s), {foreground} mask voxels{}",
            volume_file.map(|p| format!("; mask volume {}", p.display())).unwrap_or_default()
        )
    });
    Ok(())
}

/// The session options the `unet` command's flags ask for.
pub fn unet_options(args: &UnetArgs, ort: Option<PathBuf>) -> CliResult<Options> {
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
        arena: args.arena.policy(),
        ..Options::default()
    };
    args.session.apply(&mut options)?;
    args.model_args.apply(&mut options)?;
    Ok(options)
}

pub fn load_segmenter(model: &Path, options: Options) -> CliResult<(UnetSegmenter, f64)> {
    let t = Instant::now();
    let seg = UnetSegmenter::from_file(model, options).map_err(|e| e.to_string())?;
    Ok((seg, t.elapsed().as_secs_f64() * 1e3))
}

/// The file's pixels as they are (see [`Pixels`]): 8-bit gray as GRAY8, 16-bit gray as GRAY16,
/// 16-bit colour as RGB48, everything else as RGB24.
pub fn segment_image(seg: &UnetSegmenter, img: &DynamicImage) -> CliResult<(GrayImage, segrt::unet::RunStats)> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let pixels = Pixels::of(img);
    let s = seg.segment(&pixels.view()?, false).map_err(|e| e.to_string())?;
    let mask = GrayImage::from_raw(w as u32, h as u32, s.mask).ok_or("mask size mismatch")?;
    Ok((mask, s.run.stats))
}

/// Writes `<name>_mask.png` (and `<name>_overlay.png`) into `out`, each whole or not at all (a
/// temporary name, then a rename); `name` comes from [`output_names`]. Returns the files written.
pub fn write_outputs(out: &Path, name: &str, img: &DynamicImage, mask: &GrayImage, overlay: bool) -> CliResult<Vec<PathBuf>> {
    let mask_path = out.join(format!("{name}_mask.png"));
    save_png(mask, &mask_path)?;
    let mut written = vec![mask_path];
    if overlay {
        let path = out.join(format!("{name}_overlay.png"));
        save_png(&make_overlay(&display_rgb(img), mask), &path)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Command};
    use clap::Parser;

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
    fn gpu_flags_set_the_gpu_options() {
        use segrt::options::{ConvSearch, GpuOptions};
        assert_eq!(options(&[]).unwrap().gpu, GpuOptions::default());
        let flags = [
            "--gpu-mem-limit",
            "512",
            "--conv-search",
            "exhaustive",
            "--require-all-nodes",
            "--trt-cache",
            "trt",
            "--trt-fp16",
            "--decoder-provider",
            "CUDA",
            "--trt-profiles",
            "off",
        ];
        let expected = GpuOptions {
            require_all_nodes: true,
            mem_limit: 512 << 20,
            conv_search: ConvSearch::Exhaustive,
            trt_cache_dir: Some("trt".into()),
            trt_fp16: true,
            decoder_provider: Some(segrt::options::Provider::Cuda),
            trt_profiles: segrt::options::TrtProfiles::Off,
            openvino: Default::default(),
        };
        assert_eq!(options(&flags).unwrap().gpu, expected);
        let device = options(&["--decoder-provider", "cuda:1"]).unwrap_err();
        assert!(device.contains("the decoder runs on --provider's device"), "{device}");
        assert!(options(&["--conv-search", "fastest"]).unwrap_err().contains("possible values: auto, heuristic, exhaustive, default"));
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
}
