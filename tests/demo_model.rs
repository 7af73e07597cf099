//! The committed demo model on the inputs hosts hand it: colour, gray and 16-bit versions of the
//! held-out samples (`models/samples`, not in the training set), each scored against the ground
//! truth. A model that keys on the lesions' colour tint finds next to nothing in the gray ones.
//!
//! And at scales and in contexts other than the untiled run's: tiled inference at full resolution
//! (as the .NET test "tiled inference at full resolution" does) and tiles cut across a mosaic of
//! copies at the model's own scale. A model that learnt the lesions' shape at one scale only, with
//! the whole picture as context, misses lesions cut by tile edges or seen larger there.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use segrt::ffi::{SegOptions, SegPixelFormat, SegTileMode};

const GOAL: f64 = 0.9;
/// Tiled lesion_04 (the .NET test's bound) and the tiled mosaic. The demo model trained without gray or
/// scale augmentation (the model before the gray, colour and scale retraining) scored 0.975 and 0.981 here; retrained models that lost
/// the robustness to scale scored 0.38-0.86 on lesion_04 tiled and 0.80 on the mosaic; the committed
/// model 0.9498 and 0.9637 (its lesion_04 tiled figure swings between training rounds: models/README.md).
const TILED_GOAL: f64 = 0.94;
const MOSAIC_GOAL: f64 = 0.95;

/// The Pillow `L` gray of a sample, as a host holding a gray picture would pass it.
fn gray_of(img: &Rgb) -> Vec<u8> {
    img.data.chunks(3).map(|p| segrt::image::luminance(p[0], p[1], p[2])).collect()
}

/// 8-bit value -> 16-bit with content in the low byte too (a small pattern of +-100), as a
/// 16-bit camera would give; reading it back to 8 bits rounds to the original value.
fn widen(v: u8, i: usize) -> u16 {
    let spread = (i as i32 * 37 % 201) - 100;
    (v as i32 * 257 + spread).clamp(0, 65535) as u16
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("segrt-demo-model-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Masks of `files` from `segrt unet` with the demo model, in the order given.
fn cli_masks(files: &[PathBuf], out: &Path) -> Vec<Vec<u8>> {
    let demo = model("demo_unet.onnx");
    let mut args = vec!["unet".to_string(), "--model".into(), demo.display().to_string(), "--out".into(), out.display().to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let o = Command::new(env!("CARGO_BIN_EXE_segrt")).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    files.iter().map(|f| load_gray(&out.join(format!("{}_mask.png", f.file_stem().unwrap().to_string_lossy())))).collect()
}

/// Prints every score; returns those below the goal.
fn below_goal(kind: &str, scores: &[(String, f64)]) -> Vec<String> {
    for (name, v) in scores {
        println!("demo model, {kind:<16} {name}: IoU {v:.4}");
    }
    scores.iter().filter(|(_, v)| *v < GOAL).map(|(n, v)| format!("{kind} {n} {v:.4}")).collect()
}

fn check(kind: &str, scores: &[(String, f64)]) {
    let low = below_goal(kind, scores);
    assert!(low.is_empty(), "IoU below {GOAL}: {}", low.join(", "));
}

#[test]
fn demo_model_on_colour_inputs() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let scores: Vec<(String, f64)> = samples()
        .iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), iou(&run_rgb(&s, &load_rgb(p)).mask, &gt_for(p))))
        .collect();
    check("RGB24", &scores);
}

#[test]
fn demo_model_on_swapped_colour_inputs() {
    // BGR bytes declared RGB24 (a host's channel-order mix-up): the lesions turn bluish.
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let scores: Vec<(String, f64)> = samples()
        .iter()
        .map(|p| {
            let img = load_rgb(p);
            let bgr: Vec<u8> = img.data.chunks(3).flat_map(|c| [c[2], c[1], c[0]]).collect();
            let out = run(&s, &image_desc(&bgr, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24)).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), iou(&out.mask, &gt_for(p)))
        })
        .collect();
    check("BGR as RGB24", &scores);
}

#[test]
fn demo_model_on_gray_inputs() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let scores: Vec<(String, f64)> = samples()
        .iter()
        .map(|p| {
            let img = load_rgb(p);
            let gray = gray_of(&img);
            let out = run(&s, &image_desc(&gray, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_GRAY8)).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), iou(&out.mask, &gt_for(p)))
        })
        .collect();
    check("GRAY8", &scores);
}

#[test]
fn demo_model_on_16_bit_files() {
    // segrt takes 16-bit pictures as files (the CLI reads them as 16 bits and maps each by its own
    // min-max to 0..255, the default intensity stage): colour and gray PNGs.
    let dir = tmp("in");
    let mut files = Vec::new();
    let mut truths = Vec::new();
    for p in samples() {
        let img = load_rgb(&p);
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let (w, h) = (img.w as u32, img.h as u32);
        let rgb16: Vec<u16> = img.data.iter().enumerate().map(|(i, v)| widen(*v, i)).collect();
        let gray16: Vec<u16> = gray_of(&img).iter().enumerate().map(|(i, v)| widen(*v, i)).collect();
        let colour_path = dir.join(format!("{stem}_rgb16.png"));
        let gray_path = dir.join(format!("{stem}_gray16.png"));
        image::ImageBuffer::<image::Rgb<u16>, _>::from_raw(w, h, rgb16).unwrap().save(&colour_path).unwrap();
        image::ImageBuffer::<image::Luma<u16>, _>::from_raw(w, h, gray16).unwrap().save(&gray_path).unwrap();
        // the files really are 16-bit
        let (colour_file, gray_file) = (image::open(&colour_path).unwrap(), image::open(&gray_path).unwrap());
        assert!(matches!(colour_file, image::DynamicImage::ImageRgb16(_)));
        assert!(matches!(gray_file, image::DynamicImage::ImageLuma16(_)));
        // and hold the sample's picture: read to 8 bits they give it back
        assert_eq!(colour_file.to_rgb8().as_raw(), &img.data);
        assert_eq!(gray_file.to_luma8().into_raw(), gray_of(&img));
        files.extend([colour_path, gray_path]);
        truths.extend([gt_for(&p), gt_for(&p)]);
    }
    let masks = cli_masks(&files, &tmp("out"));
    let score = |suffix: &str| -> Vec<(String, f64)> {
        files
            .iter()
            .zip(&masks)
            .zip(&truths)
            .filter(|((f, _), _)| f.to_string_lossy().ends_with(suffix))
            .map(|((f, m), gt)| (f.file_name().unwrap().to_string_lossy().into_owned(), iou(m, gt)))
            .collect()
    };
    let (colour, gray) = (score("_rgb16.png"), score("_gray16.png"));
    assert_eq!((colour.len(), gray.len()), (samples().len(), samples().len()));
    let mut low = below_goal("16-bit RGB file", &colour);
    low.extend(below_goal("16-bit gray file", &gray));
    assert!(low.is_empty(), "IoU below {GOAL}: {}", low.join(", "));
}

/// The demo model in tiled mode: 256x256 tiles at full resolution, the default 64-pixel overlap.
fn tiled_demo() -> Session {
    let options = SegOptions { tile_mode: SegTileMode::SEG_TILE_ON as i32, ..default_options() };
    create(&model("demo_unet.onnx"), Some(&options)).unwrap()
}

#[test]
fn demo_model_tiled_at_full_resolution() {
    // lesion_04 (333x777) in 2 x 4 tiles: the lesions about 1.3x wider and 3x taller than when the
    // picture is resized whole, and cut by the tiles' edges (the .NET test UnetTiled).
    let p = sample("lesion_04.png");
    let out = run_rgb(&tiled_demo(), &load_rgb(&p));
    let v = iou(&out.mask, &gt_for(&p));
    println!("demo model, tiled lesion_04.png: {} tiles, IoU {v:.4}", out.info.tiles);
    assert_eq!(out.info.tiles, 8);
    assert!(v >= TILED_GOAL, "tiled lesion_04 IoU {v:.4} below {TILED_GOAL}");
}

#[test]
fn demo_model_tiled_on_a_mosaic_at_its_own_scale() {
    // lesion_04 resized to 256x256 (what the model sees of it untiled), four copies in a 512x512
    // mosaic: 3 x 3 tiles, most of them cut across two or four copies.
    use image::imageops::{resize, FilterType};
    let p = sample("lesion_04.png");
    let small = resize(&image::open(&p).unwrap().to_rgb8(), 256, 256, FilterType::Triangle);
    let small_gt = resize(&image::open(p.with_file_name("lesion_04_gt.png")).unwrap().to_luma8(), 256, 256, FilterType::Nearest);
    let (mut data, mut gt) = (Vec::with_capacity(512 * 512 * 3), Vec::with_capacity(512 * 512));
    for y in 0..512u32 {
        for x in 0..512u32 {
            data.extend_from_slice(&small.get_pixel(x % 256, y % 256).0);
            gt.push(small_gt.get_pixel(x % 256, y % 256)[0]);
        }
    }
    let out = run_rgb(&tiled_demo(), &Rgb { w: 512, h: 512, data });
    let v = iou(&out.mask, &gt);
    println!("demo model, tiled 2x2 mosaic of lesion_04 at 256x256: {} tiles, IoU {v:.4}", out.info.tiles);
    assert_eq!(out.info.tiles, 9);
    assert!(v >= MOSAIC_GOAL, "tiled mosaic IoU {v:.4} below {MOSAIC_GOAL}");
}
