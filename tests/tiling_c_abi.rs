//! Tiled inference through the C ABI: a small defect that resizing the whole image erases is found
//! when the image is cut into model-sized tiles at full resolution.
mod common;

use std::ptr;

use common::*;
use segrt::ffi::SegTileMode;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

/// A 2560x1920 RGB frame of flat, slightly noisy background with one 40x40 patch holding a bundled
/// lesion sample shrunk to that size, and the ground truth. Resized whole to the demo model's
/// 256x256, the patch becomes 4x5 pixels (the demo model trained with small pictures pasted in
/// finds a 64x64 patch, 6x8 pixels there, untiled).
fn frame_with_small_defect() -> (Rgb, Vec<u8>) {
    const PATCH: u32 = 40;
    let (w, h, x0, y0) = (2560usize, 1920usize, 1600usize, 1200usize);
    let lesion = image::open(sample("lesion_05.png")).unwrap().to_rgb8();
    let truth = image::open(sample("lesion_05_gt.png")).unwrap().to_luma8();
    let patch = image::imageops::resize(&lesion, PATCH, PATCH, image::imageops::FilterType::Triangle);
    let patch_truth = image::imageops::resize(&truth, PATCH, PATCH, image::imageops::FilterType::Nearest);

    // Background colour: the sample's mean outside the lesions.
    let (mut sum, mut n) = ([0f64; 3], 0f64);
    for (p, t) in lesion.pixels().zip(truth.pixels()) {
        if t[0] == 0 {
            (0..3).for_each(|c| sum[c] += p[c] as f64);
            n += 1.0;
        }
    }
    let mut seed = 7u32;
    let mut data = Vec::with_capacity(w * h * 3);
    for _ in 0..w * h {
        seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
        let noise = (seed >> 24) as f64 / 255.0 * 12.0 - 6.0;
        data.extend((0..3).map(|c| (sum[c] / n + noise).clamp(0.0, 255.0) as u8));
    }
    let mut gt = vec![0u8; w * h];
    for y in 0..PATCH as usize {
        for x in 0..PATCH as usize {
            let at = (y0 + y) * w + x0 + x;
            data[at * 3..at * 3 + 3].copy_from_slice(&patch.get_pixel(x as u32, y as u32).0);
            gt[at] = patch_truth.get_pixel(x as u32, y as u32)[0];
        }
    }
    (Rgb { w, h, data }, gt)
}

fn tiled_options(mode: i32) -> SegOptions {
    SegOptions { tile_mode: mode, ..default_options() }
}

/// A run that asks for the mask only (the path hosts use most).
fn run_mask(s: &Session, img: &Rgb) -> (Vec<u8>, SegRunInfo) {
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut mask = vec![0u8; img.w * img.h];
    let out = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let mut info = SegRunInfo { struct_size: std::mem::size_of::<SegRunInfo>() as u32, ..Default::default() };
    let st = unsafe { seg_run_unet(s.0, &desc, &out, ptr::null_mut(), 0, &mut info, ptr::null_mut()) };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    (mask, info)
}

fn foreground(mask: &[u8]) -> usize {
    mask.iter().filter(|v| **v != 0).count()
}

#[test]
fn a_small_defect_is_found_only_by_tiling() {
    let (img, gt) = frame_with_small_defect();
    let defect = foreground(&gt);
    assert!(defect > 50, "the patch holds {defect} lesion pixels");

    let whole = create(&model("demo_unet.onnx"), None).unwrap();
    let (mask, info) = run_mask(&whole, &img);
    let found: usize = mask.iter().zip(&gt).filter(|(m, g)| **m != 0 && **g != 0).count();
    println!("whole image resized to 256x256: {} foreground pixels, {found} of {defect} defect pixels", foreground(&mask));
    assert_eq!(info.tiles, 0);
    assert!((found as f64) < 0.2 * defect as f64, "resizing the whole frame should lose the defect; found {found} of {defect}");

    // Fixed 256x256 model: one tile per run. 13 x 10 tiles with the default 64-pixel overlap.
    let tiled = create(&model("demo_unet.onnx"), Some(&tiled_options(SegTileMode::SEG_TILE_ON as i32))).unwrap();
    let (mask_tiled, info) = run_mask(&tiled, &img);
    let iou_tiled = iou(&mask_tiled, &gt);
    println!("tiled (256x256 tiles): {} tiles, IoU {iou_tiled:.3}, {} foreground pixels", info.tiles, foreground(&mask_tiled));
    assert_eq!(info.tiles, 130);
    assert_eq!((info.model_width, info.model_height), (256, 256));
    // The demo model: 0.95 (the model before the gray, colour and scale retraining: 0.949 on a 64x64 patch).
    assert!(iou_tiled > 0.9, "IoU {iou_tiled:.3}");

    // The same weights with dynamic batch and size axes: 4 tiles per run, the same answer.
    let options = SegOptions { tile_width: 256, tile_height: 256, tile_batch: 4, ..tiled_options(SegTileMode::SEG_TILE_AUTO as i32) };
    let batched = create(&model("test/unet_dynamic.onnx"), Some(&options)).unwrap();
    let (mask_batched, info) = run_mask(&batched, &img);
    let same = agreement(&mask_batched, &mask_tiled);
    println!(
        "batched tiles (dynamic model, 4 per run): {} tiles, IoU {:.3}, {:.5} of pixels equal to one-at-a-time",
        info.tiles,
        iou(&mask_batched, &gt),
        same
    );
    assert_eq!(info.tiles, 130);
    assert!(same > 0.9999, "batched and one-at-a-time tiles differ on {:.5} of pixels", 1.0 - same);
}

#[test]
fn one_tile_equals_the_untiled_run() {
    // An image exactly the model's size: tiling is one tile, no resize, no blending.
    let src = load_rgb(&sample("lesion_01.png"));
    let rgb =
        image::imageops::crop_imm(&image::RgbImage::from_raw(src.w as u32, src.h as u32, src.data).unwrap(), 10, 10, 256, 256).to_image();
    let img = Rgb { w: 256, h: 256, data: rgb.into_raw() };
    let plain = create(&model("demo_unet.onnx"), None).unwrap();
    let tiled = create(&model("demo_unet.onnx"), Some(&tiled_options(SegTileMode::SEG_TILE_ON as i32))).unwrap();
    let (a, _) = run_mask(&plain, &img);
    let (b, info) = run_mask(&tiled, &img);
    assert_eq!(info.tiles, 1);
    assert_eq!(a, b);
    // With the probability map too.
    let (pa, pb) = (run_rgb(&plain, &img), run_rgb(&tiled, &img));
    assert_eq!(pa.mask, pb.mask);
    assert!(pa.prob.iter().zip(&pb.prob).all(|(x, y)| (x - y).abs() < 1e-6));
}

#[test]
fn images_smaller_than_a_tile_are_padded_not_stretched() {
    // 200x120 with a fixed 256x256 model: one padded tile; the mask keeps the image's size.
    let src = load_rgb(&sample("lesion_03.png"));
    let rgb =
        image::imageops::crop_imm(&image::RgbImage::from_raw(src.w as u32, src.h as u32, src.data).unwrap(), 0, 0, 200, 120).to_image();
    let img = Rgb { w: 200, h: 120, data: rgb.into_raw() };
    let tiled = create(&model("demo_unet.onnx"), Some(&tiled_options(SegTileMode::SEG_TILE_ON as i32))).unwrap();
    let out = run_rgb(&tiled, &img);
    assert_eq!(out.info.tiles, 1);
    assert_eq!(out.mask.len(), 200 * 120);
    assert!(out.prob.iter().all(|p| (0.0..=1.0).contains(p)));
}

#[test]
fn tiling_options_are_checked() {
    let bad = |o: SegOptions| create(&model("demo_unet.onnx"), Some(&o)).err().map(|e| e.0);
    assert_eq!(bad(SegOptions { tile_mode: 7, ..default_options() }), Some(SegStatus::SEG_INVALID_ARGUMENT));
    assert_eq!(bad(SegOptions { tile_batch: 0, ..default_options() }), Some(SegStatus::SEG_INVALID_ARGUMENT));
    assert_eq!(bad(SegOptions { tile_overlap: -1, ..default_options() }), Some(SegStatus::SEG_INVALID_ARGUMENT));
    assert_eq!(bad(SegOptions { tile_width: 256, tile_height: -5, ..default_options() }), Some(SegStatus::SEG_INVALID_ARGUMENT));

    // An overlap of half the tile or more cannot tile: refused at the run, with the reason.
    let s = create(&model("demo_unet.onnx"), Some(&SegOptions { tile_overlap: 128, ..tiled_options(SegTileMode::SEG_TILE_ON as i32) }))
        .unwrap();
    let img = load_rgb(&sample("lesion_01.png"));
    let (st, msg) = run(&s, &image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24)).err().unwrap();
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("tile_overlap 128"), "{msg}");
}

/// The peak resident memory of this process since the last reset, and resets it (Linux: VmHWM,
/// reset by writing 5 to /proc/self/clear_refs).
fn peak_since_reset() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()?;
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    Some(kb * 1024)
}

/// `max_memory_bytes` covers ONNX Runtime's working memory: 64 tiles per run of the dynamic test
/// UNet take some 2 GB in its arena, so under a budget of 300 MiB the batches shrink to what fits
/// (the first run, one tile, measures the cost), and the call's resident growth stays under the
/// budget. A budget that cannot hold one tile is refused with the figures.
#[test]
fn tile_batches_fit_the_memory_budget_onnx_runtime_included() {
    const BUDGET: u64 = 300 << 20;
    let (w, h) = (3072usize, 3072usize);
    let mut seed = 3u32;
    let data: Vec<u8> = (0..w * h * 3)
        .map(|_| {
            seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
            (seed >> 24) as u8
        })
        .collect();
    let img = Rgb { w, h, data };
    let options = SegOptions {
        tile_width: 256,
        tile_height: 256,
        tile_batch: 64,
        max_memory_bytes: BUDGET,
        ..tiled_options(SegTileMode::SEG_TILE_ON as i32)
    };
    let s = create(&model("test/unet_dynamic.onnx"), Some(&options)).unwrap();
    if peak_since_reset().is_none() {
        println!("no peak resident figure on this system: the budget is not checked");
        return;
    }
    for call in ["first (measures a tile)", "second"] {
        let before = segrt::engine::memory::resident_bytes().unwrap();
        peak_since_reset();
        let (_, info) = run_mask(&s, &img);
        let peak = peak_since_reset().unwrap();
        let growth = peak.saturating_sub(before);
        println!(
            "{call} call: {} tiles, resident growth at peak {} MiB (budget {} MiB, tile_batch 64)",
            info.tiles,
            growth >> 20,
            BUDGET >> 20
        );
        assert!(info.tiles >= 64);
        assert!(growth <= BUDGET, "the {call} call grew the process by {} MiB, over the {} MiB budget", growth >> 20, BUDGET >> 20);
    }

    // 60 MiB: the score maps (36 MiB) and one tile (some 33 MiB in ONNX Runtime) do not fit.
    let tight = SegOptions { max_memory_bytes: 60 << 20, ..options };
    let s = create(&model("test/unet_dynamic.onnx"), Some(&tight)).unwrap();
    let desc = image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut mask = vec![7u8; w * h];
    let out = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let mut statuses = Vec::new();
    for _ in 0..2 {
        let st = unsafe { seg_run_unet(s.0, &desc, &out, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) };
        statuses.push((st, last_error()));
    }
    // The first call measures one tile and stops at the second batch; the next is refused up front.
    for (st, message) in &statuses {
        assert_eq!(*st, SegStatus::SEG_OUT_OF_MEMORY, "{message}");
        assert!(message.contains("max_memory_bytes budget of 60 MiB"), "{message}");
    }
    assert!(statuses[0].1.contains("one tile at 256x256 needs"), "{}", statuses[0].1);
    assert!(statuses[1].1.contains("ONNX Runtime's working memory for a tile (measured)"), "{}", statuses[1].1);
    assert!(mask.iter().all(|v| *v == 7), "a refused call wrote its mask");
}

/// `max_memory_bytes` covers the intensity stage's buffers: the float planes a 16-bit or float image
/// is mapped into and the percentile samples. Under a 32 MiB budget, a 4000x3000 8-bit RGB picture
/// runs; the same picture as float RGB, as 16-bit gray (min-max or percentiles) and a tiled
/// percentile run are refused with `SEG_OUT_OF_MEMORY` naming the part that does not fit, before they
/// allocate it; a 1000x750 16-bit picture with percentiles fits and runs. No call, refused or not,
/// grows the process by more than the budget.
#[test]
fn the_memory_budget_covers_the_intensity_stage() {
    const BUDGET: u64 = 32 << 20;
    if peak_since_reset().is_none() {
        println!("no peak resident figure on this system: the budget is not checked");
        return;
    }
    let noise = |n: usize| -> Vec<u16> {
        let mut seed = 11u32;
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
                (seed >> 16) as u16
            })
            .collect()
    };
    let (w, h) = (4000usize, 3000usize);
    let rgb8: Vec<u8> = noise(w * h * 3).iter().map(|v| (v >> 8) as u8).collect();
    let rgb96f: Vec<u8> = rgb8.iter().flat_map(|v| (*v as f32).to_le_bytes()).collect();
    let gray16: Vec<u8> = noise(w * h).iter().flat_map(|v| v.to_le_bytes()).collect();
    let (sw, sh) = (1000usize, 750usize);
    let small16: Vec<u8> = noise(sw * sh).iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut percentiles: SegIntensity = unsafe { std::mem::zeroed() };
    percentiles.struct_size = std::mem::size_of::<SegIntensity>() as u32;
    assert_eq!(unsafe { seg_intensity_default(&mut percentiles) }, SegStatus::SEG_OK);
    percentiles.range = SegIntensityRange::SEG_INTENSITY_PERCENTILES as i32;

    let whole = SegOptions { max_memory_bytes: BUDGET, ..default_options() };
    let tiled = SegOptions { max_memory_bytes: BUDGET, ..tiled_options(SegTileMode::SEG_TILE_ON as i32) };
    // 3000x2000 16-bit RGB for a 1-channel model under 64 MiB: one float plane (24 MB, with ONNX
    // Runtime's working memory some 45 MB) fits, the percentile samples of its three colours (72 MB) do not.
    let (cw, ch) = (3000usize, 2000usize);
    let whole64 = SegOptions { max_memory_bytes: 64 << 20, ..default_options() };
    let rgb48: Vec<u8> = noise(cw * ch * 3).iter().flat_map(|v| v.to_le_bytes()).collect();
    let (planes, samples) = (Some("the intensity stage's float planes"), Some("the percentile samples"));
    let (gray, rgb, float_rgb) = (SegPixelFormat::SEG_FORMAT_GRAY16, SegPixelFormat::SEG_FORMAT_RGB48, SegPixelFormat::SEG_FORMAT_RGB96F);
    type Case<'a> = (&'a str, &'a str, SegOptions, bool, &'a [u8], (usize, usize), SegPixelFormat, Option<&'a str>);
    let cases: [Case; 7] = [
        ("8-bit RGB", "demo_unet.onnx", whole, false, &rgb8, (w, h), SegPixelFormat::SEG_FORMAT_RGB24, None),
        ("float RGB", "demo_unet.onnx", whole, false, &rgb96f, (w, h), float_rgb, planes),
        ("16-bit gray, min-max", "demo_unet.onnx", whole, false, &gray16, (w, h), gray, planes),
        ("16-bit gray, percentiles", "demo_unet.onnx", whole, true, &gray16, (w, h), gray, planes),
        ("16-bit gray, percentiles, tiled", "demo_unet.onnx", tiled, true, &gray16, (w, h), gray, Some("the blended score maps")),
        ("3000x2000 16-bit RGB, percentiles, 1-channel model", "test/unet_gray.onnx", whole64, true, &rgb48, (cw, ch), rgb, samples),
        ("1000x750 16-bit gray, percentiles", "demo_unet.onnx", whole, true, &small16, (sw, sh), gray, None),
    ];
    let mut wrong = Vec::new();
    for (what, model_name, options, use_percentiles, pixels, (iw, ih), format, refused_for) in cases {
        let s = create(&model(model_name), Some(&options)).unwrap();
        if use_percentiles {
            assert_eq!(unsafe { seg_set_intensity(s.0, &percentiles) }, SegStatus::SEG_OK, "{}", last_error());
        }
        // A first small run: ONNX Runtime's one-time set-up is not the call's.
        let warm = vec![128u8; 64 * 64 * 3];
        run(&s, &image_desc(&warm, 64, 64, 0, SegPixelFormat::SEG_FORMAT_RGB24)).unwrap();
        let desc = image_desc(pixels, iw, ih, 0, format);
        let mut mask = vec![7u8; iw * ih];
        let out = SegMask { data: mask.as_mut_ptr(), width: iw as i32, height: ih as i32, stride: 0 };
        let before = segrt::engine::memory::resident_bytes().unwrap();
        peak_since_reset();
        let st = unsafe { seg_run_unet(s.0, &desc, &out, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) };
        let growth = peak_since_reset().unwrap().saturating_sub(before);
        let message = if st == SegStatus::SEG_OK { String::new() } else { last_error() };
        let budget = options.max_memory_bytes;
        println!("{what}: {st:?}, resident growth at peak {:.1} MiB (budget {} MiB) {message}", growth as f64 / 1048576.0, budget >> 20);
        let as_expected = match refused_for {
            None => st == SegStatus::SEG_OK,
            Some(part) => {
                st == SegStatus::SEG_OUT_OF_MEMORY
                    && message.contains(part)
                    && message.contains(&format!("max_memory_bytes budget of {} MiB", budget >> 20))
                    && mask.iter().all(|v| *v == 7)
            }
        };
        if !as_expected || growth > budget {
            wrong.push(what);
        }
    }
    assert!(wrong.is_empty(), "not refused as expected, or grown past the budget: {wrong:?}");
}
