//! 16-bit, signed 16-bit and float pixels and the intensity stage through the C ABI: the same
//! picture stored as u16, i16 and f32 (at odd addresses, with padded rows) gives the mask the 8-bit
//! picture gives, in UNet (whole and tiled) and SAM2 clicks; changing the window between calls
//! re-encodes; bad pixels and settings are refused with nothing written.
mod common;

use std::ptr;

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

/// `SegIntensity i = { sizeof i }; seg_intensity_default(&i);`, as a C host writes it.
fn intensity_default() -> SegIntensity {
    // SAFETY: integers and floats only: all-zero is valid.
    let mut i: SegIntensity = unsafe { std::mem::zeroed() };
    i.struct_size = std::mem::size_of::<SegIntensity>() as u32;
    assert_eq!(unsafe { seg_intensity_default(&mut i) }, SegStatus::SEG_OK, "{}", last_error());
    i
}

/// A window `low..high` -> 0..255.
fn window(low: f64, high: f64) -> SegIntensity {
    SegIntensity { range: SegIntensityRange::SEG_INTENSITY_WINDOW as i32, low, high, ..intensity_default() }
}

fn set(s: &Session, i: Option<&SegIntensity>) -> SegStatus {
    unsafe { seg_set_intensity(s.0, i.map_or(ptr::null(), |i| i as *const _)) }
}

/// Pixels stored one byte past an aligned address, rows padded by `pad` bytes: `bytes` holds the
/// whole buffer, `offset` where the image starts.
struct Stored {
    bytes: Vec<u8>,
    offset: usize,
    stride: usize,
}

impl Stored {
    fn new(values: &[Vec<u8>], pad: usize) -> Stored {
        let stride = values[0].len() + pad;
        let mut bytes = vec![0xEEu8; 1 + stride * values.len()];
        for (y, row) in values.iter().enumerate() {
            bytes[1 + y * stride..1 + y * stride + row.len()].copy_from_slice(row);
        }
        Stored { bytes, offset: 1, stride }
    }
    fn desc(&self, w: usize, h: usize, format: SegPixelFormat) -> SegImage {
        let mut d = image_desc(&self.bytes[self.offset..], w, h, self.stride as i32, format);
        d.data = self.bytes[self.offset..].as_ptr();
        d
    }
}

/// Each 8-bit value `v` of `rgb` as the stored value of another format, row by row.
fn rows(img: &Rgb, encode: impl Fn(u8) -> Vec<u8>) -> Vec<Vec<u8>> {
    img.data.chunks(img.w * 3).map(|row| row.iter().flat_map(|v| encode(*v)).collect()).collect()
}

/// The formats and the window that maps their stored values back to the 8-bit ones exactly
/// (powers-of-two scales and integer offsets: exact in floats).
fn stores(img: &Rgb) -> Vec<(&'static str, Stored, SegPixelFormat, SegIntensity)> {
    vec![
        (
            "u16",
            Stored::new(&rows(img, |v| (v as u16 * 256 + 100).to_le_bytes().to_vec()), 6),
            SegPixelFormat::SEG_FORMAT_RGB48,
            window(100.0, 100.0 + 255.0 * 256.0),
        ),
        (
            "i16",
            Stored::new(&rows(img, |v| (v as i16 * 16 - 2000).to_le_bytes().to_vec()), 2),
            SegPixelFormat::SEG_FORMAT_RGB48S,
            window(-2000.0, -2000.0 + 255.0 * 16.0),
        ),
        (
            "f32",
            Stored::new(&rows(img, |v| (v as f32 / 256.0 - 0.5).to_le_bytes().to_vec()), 4),
            SegPixelFormat::SEG_FORMAT_RGB96F,
            window(-0.5, -0.5 + 255.0 / 256.0),
        ),
    ]
}

fn unet_mask(s: &Session, img: &SegImage) -> Vec<u8> {
    run(s, img).unwrap_or_else(|e| panic!("{e:?}")).mask
}

#[test]
fn unet_takes_u16_i16_and_f32_images_as_the_8bit_one() {
    let img = load_rgb(&sample("lesion_05.png"));
    let (w, h) = (img.w, img.h);
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let plain = unet_mask(&s, &image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24));
    // The 8-bit picture through the stage (a window that keeps every value): the reference.
    assert_eq!(set(&s, Some(&window(0.0, 255.0))), SegStatus::SEG_OK, "{}", last_error());
    let reference = unet_mask(&s, &image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24));
    // The float path resizes in float where the 8-bit path rounds to bytes: masks all but equal.
    assert!(agreement(&plain, &reference) > 0.99, "8-bit path vs float path: {}", agreement(&plain, &reference));
    for (name, stored, format, intensity) in stores(&img) {
        assert_eq!(set(&s, Some(&intensity)), SegStatus::SEG_OK, "{}", last_error());
        let mask = unet_mask(&s, &stored.desc(w, h, format));
        assert_eq!(mask, reference, "{name}: the same values after the stage give the same mask");
    }
    // Back to the default: 8-bit exactly as before the stage existed.
    assert_eq!(set(&s, None), SegStatus::SEG_OK);
    assert_eq!(unet_mask(&s, &image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24)), plain);
    let info = session_info(s.0);
    assert!(info["intensity"].as_str().unwrap().starts_with("default"), "{info}");
}

#[test]
fn per_image_ranges_are_taken_on_the_whole_image_when_tiled() {
    let img = load_rgb(&sample("lesion_05.png"));
    let (w, h) = (img.w, img.h);
    let gray: Vec<u8> = img.data.chunks(3).map(|p| p[1]).collect();
    let options = SegOptions { tile_mode: SegTileMode::SEG_TILE_ON as i32, tile_overlap: 16, ..default_options() };
    let s = create(&model("demo_unet.onnx"), Some(&options)).unwrap();
    // An 8-bit image with min-max set explicitly, and the same values as u16 (x 256 + 100) under the
    // default stage (per-image min-max): equal only if each tile is mapped by the whole image's range.
    let min_max = SegIntensity { range: SegIntensityRange::SEG_INTENSITY_MIN_MAX as i32, ..intensity_default() };
    assert_eq!(set(&s, Some(&min_max)), SegStatus::SEG_OK);
    let gray_desc = image_desc(&gray, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY8);
    let out8 = run(&s, &gray_desc).unwrap();
    assert!(out8.info.tiles > 1, "tiled: {} tiles", out8.info.tiles);
    assert_eq!(set(&s, None), SegStatus::SEG_OK);
    let wide: Vec<u8> = gray.iter().flat_map(|v| (*v as u16 * 256 + 100).to_le_bytes()).collect();
    let out16 = run(&s, &image_desc(&wide, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY16)).unwrap();
    assert_eq!(out16.mask, out8.mask);
    assert_eq!(out16.prob, out8.prob);
}

/// One click; the mask and whether the encoder ran.
fn click(s: &Session, img: Option<&SegImage>, w: usize, h: usize) -> Result<(Vec<u8>, bool), (SegStatus, String)> {
    let mut mask = vec![0xABu8; w * h];
    let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let point = SegPoint { x: w as f32 * 0.4, y: h as f32 * 0.5, label: 1 };
    // SAFETY: integers, floats and nullable pointers: all-zero is valid.
    let mut result: SegSam2Result = unsafe { std::mem::zeroed() };
    result.struct_size = std::mem::size_of::<SegSam2Result>() as u32;
    let mut score = 0f32;
    let st = unsafe {
        seg_run_sam2_points(
            s.0,
            img.map_or(ptr::null(), |i| i as *const _),
            &point,
            1,
            ptr::null(),
            ptr::null(),
            0,
            0,
            &m,
            &mut score,
            &mut result,
            ptr::null_mut(),
        )
    };
    match st {
        SegStatus::SEG_OK => Ok((mask, result.encoder_reused == 0)),
        st => {
            assert!(mask.iter().all(|v| *v == 0xAB), "mask written on failure");
            Err((st, last_error()))
        }
    }
}

fn sam2() -> Session {
    create_sam2("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx").unwrap()
}

#[test]
fn sam2_clicks_take_u16_i16_and_f32_images_as_the_8bit_one() {
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let (w, h) = (img.w, img.h);
    let s = sam2();
    let rgb = image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let (plain, _) = click(&s, Some(&rgb), w, h).unwrap();
    assert_eq!(set(&s, Some(&window(0.0, 255.0))), SegStatus::SEG_OK);
    let (reference, encoded) = click(&s, Some(&rgb), w, h).unwrap();
    assert!(encoded, "a new setting encodes the image again");
    assert!(agreement(&plain, &reference) > 0.98, "8-bit path vs float path: {}", agreement(&plain, &reference));
    for (name, stored, format, intensity) in stores(&img) {
        assert_eq!(set(&s, Some(&intensity)), SegStatus::SEG_OK);
        let (mask, _) = click(&s, Some(&stored.desc(w, h, format)), w, h).unwrap();
        assert_eq!(mask, reference, "{name}");
    }
    // Planar and gray variants of the 16-bit format read the same colours.
    let planes: Vec<Vec<u8>> = (0..3).map(|c| img.data.chunks(3).flat_map(|p| (p[c] as u16 * 256 + 100).to_le_bytes()).collect()).collect();
    let mut planar = image_desc(&planes[0], w, h, 0, SegPixelFormat::SEG_FORMAT_PLANAR_RGB16);
    (planar.plane1, planar.plane2) = (planes[1].as_ptr(), planes[2].as_ptr());
    assert_eq!(set(&s, Some(&window(100.0, 100.0 + 255.0 * 256.0))), SegStatus::SEG_OK);
    assert_eq!(click(&s, Some(&planar), w, h).unwrap().0, reference, "planar u16");
}

#[test]
fn a_new_window_on_one_sam2_session_is_never_served_the_old_encoding() {
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let (w, h) = (img.w, img.h);
    // A CT-like signed image: the 8-bit values as HU from -1024.
    let hu: Vec<u8> = img.data.chunks(3).flat_map(|p| (p[0] as i16 * 8 - 1024).to_le_bytes()).collect();
    let desc = image_desc(&hu, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY16S);
    let (narrow, wide) = (window(-1024.0, -500.0), window(-1024.0, 1016.0));
    let s = sam2();
    assert_eq!(set(&s, Some(&narrow)), SegStatus::SEG_OK);
    let (a, encoded) = click(&s, Some(&desc), w, h).unwrap();
    assert!(encoded);
    assert!(!click(&s, Some(&desc), w, h).unwrap().1, "same image, same setting: the cached encoding");
    assert_eq!(set(&s, Some(&wide)), SegStatus::SEG_OK);
    // The image set last was encoded under the old window: asking for it without pixels is refused.
    let (st, msg) = click(&s, None, w, h).unwrap_err();
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("intensity setting changed"), "{msg}");
    let (b, encoded) = click(&s, Some(&desc), w, h).unwrap();
    assert!(encoded, "the same pixels under a new window are encoded again");
    // What a fresh session gives under the new window, and under the old one.
    let fresh = sam2();
    assert_eq!(set(&fresh, Some(&wide)), SegStatus::SEG_OK);
    assert_eq!(b, click(&fresh, Some(&desc), w, h).unwrap().0);
    assert_eq!(set(&fresh, Some(&narrow)), SegStatus::SEG_OK);
    assert_eq!(a, click(&fresh, Some(&desc), w, h).unwrap().0);
    assert_ne!(a, b, "the two windows give different masks on this image");
    // Back to the old window: the image again, encoded again (the cache holds one image).
    assert_eq!(set(&s, Some(&narrow)), SegStatus::SEG_OK);
    assert_eq!(click(&s, Some(&desc), w, h).unwrap(), (a, true));
}

#[test]
fn bad_pixels_and_settings_are_refused_and_nothing_is_written() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let (w, h) = (8usize, 4usize);
    let run_status = |img: &SegImage| -> (SegStatus, String) {
        let mut mask = vec![0xABu8; w * h];
        let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
        let st = unsafe { seg_run_unet(s.0, img, &m, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) };
        if st != SegStatus::SEG_OK {
            assert!(mask.iter().all(|v| *v == 0xAB), "mask written on failure");
        }
        (st, last_error())
    };
    // NaN and Inf in float pixels.
    for bad in [f32::NAN, f32::INFINITY] {
        let mut px = vec![0.5f32; w * h];
        px[5] = bad;
        let bytes: Vec<u8> = px.iter().flat_map(|v| v.to_le_bytes()).collect();
        let (st, msg) = run_status(&image_desc(&bytes, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY32F));
        assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "{msg}");
        assert!(msg.contains("must be finite"), "{msg}");
    }
    // A stride that is not a whole number of 16-bit values.
    let px = vec![0u8; (2 * w + 1) * h];
    let (st, msg) = run_status(&image_desc(&px, w, h, (2 * w + 1) as i32, SegPixelFormat::SEG_FORMAT_GRAY16));
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "{msg}");
    assert!(msg.contains("not a multiple of 2 bytes"), "{msg}");
    // A value above the used bits.
    let mut values = vec![100u16; w * h];
    values[9] = 4096;
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(set(&s, Some(&SegIntensity { bits: 12, ..intensity_default() })), SegStatus::SEG_OK);
    let (st, msg) = run_status(&image_desc(&bytes, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY16));
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "{msg}");
    assert!(msg.contains("pixel (1, 1) is 4096") && msg.contains("12 used bits"), "{msg}");
    assert_eq!(set(&s, Some(&SegIntensity { bits: 13, ..intensity_default() })), SegStatus::SEG_OK);
    assert_eq!(run_status(&image_desc(&bytes, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY16)).0, SegStatus::SEG_OK);
    // Settings: a window of zero or negative width, bad percentiles, an unknown range, slope 0.
    for (bad, expect) in [
        (window(10.0, 10.0), "zero or negative width"),
        (window(10.0, 5.0), "zero or negative width"),
        (
            SegIntensity {
                range: SegIntensityRange::SEG_INTENSITY_PERCENTILES as i32,
                percentile_low: 90.0,
                percentile_high: 10.0,
                ..intensity_default()
            },
            "percentiles",
        ),
        (SegIntensity { range: 7, ..intensity_default() }, "SegIntensityRange value 7"),
        (SegIntensity { slope: 0.0, ..intensity_default() }, "slope is 0"),
        (SegIntensity { out_low: f64::NAN, ..intensity_default() }, "finite"),
    ] {
        assert_eq!(set(&s, Some(&bad)), SegStatus::SEG_INVALID_ARGUMENT, "{expect}");
        assert!(last_error().contains(expect), "{}", last_error());
    }
    // A refused setting changes nothing: the 13-bit setting is still in force.
    assert!(session_info(s.0)["intensity"].as_str().unwrap().contains("13 used bits"));
    // The centre/width helper.
    let mut i = intensity_default();
    assert_eq!(unsafe { seg_intensity_set_window(&mut i, 40.0, 400.0) }, SegStatus::SEG_OK);
    assert_eq!((i.range, i.low, i.high), (SegIntensityRange::SEG_INTENSITY_WINDOW as i32, -160.0, 240.0));
    assert_eq!(unsafe { seg_intensity_set_window(&mut i, 40.0, 0.0) }, SegStatus::SEG_INVALID_ARGUMENT);
    assert_eq!((i.low, i.high), (-160.0, 240.0), "nothing written on failure");
    assert_eq!(unsafe { seg_set_intensity(ptr::null_mut(), &i) }, SegStatus::SEG_INVALID_HANDLE);
}

/// Segment-everything's labels for `img` and whether the encoder was reused.
fn everything(s: &Session, img: Option<&SegImage>, w: usize, h: usize) -> (Vec<u16>, bool) {
    let mut labels = vec![0u16; w * h];
    let out = SegLabelImage { data: labels.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let mut options = SegEverythingOptions::defaults();
    options.points_per_side = 8;
    // No filters: the tiny fixture's random weights give low scores, and every mask counts here.
    (options.pred_iou_thresh, options.stability_score_thresh) = (0.0, 0.0);
    // SAFETY: integers and floats: all-zero is valid.
    let mut info: SegEverythingInfo = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<SegEverythingInfo>() as u32;
    let mut count = 0usize;
    let st = unsafe {
        seg_sam2_everything(
            s.0,
            img.map_or(ptr::null(), |i| i as *const _),
            &options,
            &out,
            ptr::null_mut(),
            0,
            0,
            &mut count,
            &mut info,
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    (labels, info.encoder_reused == 1)
}

#[test]
fn segment_everything_takes_wide_images_and_a_new_window_re_encodes() {
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let (w, h) = (img.w, img.h);
    let s = sam2();
    assert_eq!(set(&s, Some(&window(0.0, 255.0))), SegStatus::SEG_OK);
    let (reference, _) = everything(&s, Some(&image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24)), w, h);
    assert!(reference.iter().any(|v| *v != 0), "the 8-bit image has objects");
    let (_, stored, format, intensity) = stores(&img).remove(0);
    assert_eq!(set(&s, Some(&intensity)), SegStatus::SEG_OK);
    let desc = stored.desc(w, h, format);
    let (labels, reused) = everything(&s, Some(&desc), w, h);
    assert!(!reused);
    assert!(labels == reference, "u16 through its window: the 8-bit image's objects");
    // Another window on the same pixels: encoded again, not served from the cache.
    assert_eq!(set(&s, Some(&window(100.0, 100.0 + 128.0 * 256.0))), SegStatus::SEG_OK);
    let (_, reused) = everything(&s, Some(&desc), w, h);
    assert!(!reused, "a new window must not be served the old encoding");
}

/// One thread switches the window back and forth while others click with the image: every mask is
/// the mask of one of the two windows (a call maps and looks up the cache under one setting).
#[test]
fn the_window_may_change_from_another_thread_during_clicks() {
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let (w, h) = (img.w, img.h);
    let hu: Vec<u8> = img.data.chunks(3).flat_map(|p| (p[0] as i16 * 8 - 1024).to_le_bytes()).collect();
    let desc = image_desc(&hu, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY16S);
    let (narrow, wide) = (window(-1024.0, -500.0), window(-1024.0, 1016.0));
    let s = sam2();
    let expected: Vec<Vec<u8>> = [&narrow, &wide]
        .iter()
        .map(|i| {
            assert_eq!(set(&s, Some(i)), SegStatus::SEG_OK);
            click(&s, Some(&desc), w, h).unwrap().0
        })
        .collect();
    assert_ne!(expected[0], expected[1]);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for k in 0..200 {
                assert_eq!(set(&s, Some(if k % 2 == 0 { &narrow } else { &wide })), SegStatus::SEG_OK);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        for _ in 0..3 {
            scope.spawn(|| {
                let desc = image_desc(&hu, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY16S);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let (mask, _) = click(&s, Some(&desc), w, h).unwrap();
                    assert!(expected.contains(&mask), "a mask of neither window");
                }
            });
        }
    });
}

/// The intensity stage never makes NaN or Inf from finite pixels: a rescale that overflows (a float
/// image near ±FLT_MAX, a slope of 1e300) is refused by the run instead of feeding the model NaN, and
/// a window that cannot be used is refused by `seg_intensity_set_window` itself, not one call later.
#[test]
fn the_intensity_stage_refuses_what_would_overflow_and_bad_windows_at_once() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let (w, h) = (8usize, 4usize);
    let run_status = |img: &SegImage| -> (SegStatus, String) {
        let mut mask = vec![0xABu8; w * h];
        let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
        let st = unsafe { seg_run_unet(s.0, img, &m, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) };
        if st != SegStatus::SEG_OK {
            assert!(mask.iter().all(|v| *v == 0xAB), "mask written on failure");
        }
        (st, last_error())
    };
    let floats = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let near_max: Vec<f32> = (0..w * h).map(|i| if i % 2 == 0 { f32::MAX } else { -f32::MAX }).collect();
    let near_max = floats(&near_max);
    let gray16: Vec<u8> = (0..w * h).flat_map(|i| ((i * 2000) as u16).to_le_bytes()).collect();
    let mut refused = Vec::new();
    let percentiles = SegIntensityRange::SEG_INTENSITY_PERCENTILES as i32;
    let f32_image = SegPixelFormat::SEG_FORMAT_GRAY32F;
    for (what, setting, bytes, format) in [
        ("float pixels near ±FLT_MAX, slope 1e300, min-max", SegIntensity { slope: 1e300, ..intensity_default() }, &near_max, f32_image),
        (
            "float pixels near ±FLT_MAX, slope 2, no range",
            SegIntensity { slope: 2.0, range: SegIntensityRange::SEG_INTENSITY_NONE as i32, ..intensity_default() },
            &near_max,
            f32_image,
        ),
        // Each end fits a double, the width between them does not.
        ("float pixels near ±FLT_MAX, slope 5e269, min-max", SegIntensity { slope: 5e269, ..intensity_default() }, &near_max, f32_image),
        (
            "16-bit pixels, slope 1e305, percentiles",
            SegIntensity { slope: 1e305, range: percentiles, ..intensity_default() },
            &gray16,
            SegPixelFormat::SEG_FORMAT_GRAY16,
        ),
    ] {
        assert_eq!(set(&s, Some(&setting)), SegStatus::SEG_OK, "{what}: {}", last_error());
        let (st, msg) = run_status(&image_desc(bytes, w, h, 0, format));
        println!("{what}: {st:?} \"{msg}\"");
        if st == SegStatus::SEG_INVALID_ARGUMENT && (msg.contains("overflows") || msg.contains("wider than a float64")) {
            refused.push(what);
        }
    }
    // The same pixels under a rescale that fits run.
    assert_eq!(set(&s, Some(&intensity_default())), SegStatus::SEG_OK);
    assert_eq!(run_status(&image_desc(&near_max, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY32F)).0, SegStatus::SEG_OK, "{}", last_error());
    // Windows the helper cannot make: +Inf at the top, low == high after rounding.
    let mut windows = Vec::new();
    for (centre, width) in [(1.7e308, 1.7e308), (1e20, 1.0)] {
        let mut i = intensity_default();
        let st = unsafe { seg_intensity_set_window(&mut i, centre, width) };
        println!("seg_intensity_set_window({centre:e}, {width:e}): {st:?} \"{}\", low {:e} high {:e}", last_error(), i.low, i.high);
        windows.push((st, i.range, i.low, i.high));
    }
    let defaults = intensity_default();
    assert!(
        windows.iter().all(|w| *w == (SegStatus::SEG_INVALID_ARGUMENT, defaults.range, defaults.low, defaults.high)),
        "every unusable window refused at once, nothing written: {windows:?}"
    );
    assert_eq!(refused.len(), 4, "refused with an overflow message: {refused:?}");
}
