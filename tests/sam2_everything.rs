//! SAM2 segment-everything through the C ABI: the geometric oracle (a disc at each click) on a 4x4
//! grid, parity with SAM2's official automatic mask generator (models/sam2/reference/everything.json,
//! made by models/sam2/everything_reference.py), the session cache, and bad input.

mod common;

use std::ptr;

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

fn options() -> SegEverythingOptions {
    let mut o = SegEverythingOptions {
        struct_size: std::mem::size_of::<SegEverythingOptions>() as u32,
        points_per_side: 0,
        points_per_batch: 0,
        pred_iou_thresh: 0.0,
        stability_score_thresh: 0.0,
        stability_score_offset: 0.0,
        mask_threshold: 0.0,
        box_nms_thresh: 0.0,
        min_mask_region_area: 0,
        crop_n_layers: 0,
    };
    assert_eq!(unsafe { seg_everything_options_default(&mut o) }, SegStatus::SEG_OK);
    o
}

fn info() -> SegEverythingInfo {
    SegEverythingInfo { struct_size: std::mem::size_of::<SegEverythingInfo>() as u32, ..Default::default() }
}

struct Everything {
    labels: Vec<u16>,
    objects: Vec<SegEverythingObject>,
    info: SegEverythingInfo,
}

/// The size query, then the call with buffers of that size.
fn everything(
    s: &Session,
    img: Option<&SegImage>,
    w: usize,
    h: usize,
    o: &SegEverythingOptions,
) -> Result<Everything, (SegStatus, String)> {
    let image = img.map_or(ptr::null(), |i| i as *const _);
    let mut n = usize::MAX;
    let mut first = info();
    let st = unsafe {
        seg_sam2_everything(
            s.0,
            image,
            o,
            ptr::null(),
            ptr::null_mut(),
            std::mem::size_of::<SegEverythingObject>(),
            0,
            &mut n,
            &mut first,
            ptr::null_mut(),
        )
    };
    if st != SegStatus::SEG_OK {
        return Err((st, last_error()));
    }
    let mut labels = vec![0xBEEFu16; w * h];
    let l = SegLabelImage { data: labels.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let mut objects = vec![SegEverythingObject::default(); n];
    let mut info = info();
    let mut n2 = 0usize;
    let st = unsafe {
        seg_sam2_everything(
            s.0,
            image,
            o,
            &l,
            objects.as_mut_ptr(),
            std::mem::size_of::<SegEverythingObject>(),
            n,
            &mut n2,
            &mut info,
            ptr::null_mut(),
        )
    };
    if st != SegStatus::SEG_OK {
        return Err((st, last_error()));
    }
    assert_eq!(n2, n);
    assert_eq!(info.cached, 1, "the second call of a size query must not decode again");
    assert_eq!((info.objects, info.after_nms, info.prompts), (first.objects, first.after_nms, first.prompts));
    Ok(Everything { labels, objects, info: first })
}

/// The oracle decoder draws, around the click, discs of radius 10, 20 and 30 low-res pixels
/// (40/80/120 px on a 1024x1024 image) with predicted IoUs 0.5, 0.9, 0.7; stability scores are
/// ((r-1)/(r+1))^2: 0.669, 0.819, 0.876.
#[test]
fn oracle_grid_gives_the_discs_that_survive_nms_at_the_grid_points() {
    let s = create_sam2("sam2_oracle_encoder.onnx", "sam2_oracle_decoder.onnx").unwrap();
    let (w, h) = (1024usize, 1024usize);
    let gray = vec![90u8; w * h];
    let img = image_desc(&gray, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY8);
    let centres: Vec<(f64, f64)> = (0..16).map(|i| (128.0 + 256.0 * (i % 4) as f64, 128.0 + 256.0 * (i / 4) as f64)).collect();
    // (case, pred_iou, stability, nms, the radii (image px) kept in id order)
    let cases: [(&str, f32, f32, f32, &[f64]); 3] = [
        ("defaults but stability 0.8: only the r=20 disc passes", 0.8, 0.8, 0.7, &[80.0]),
        ("every disc passes; NMS 0.3 drops r=30 (box IoU 0.44 with r=20), keeps r=10 (0.25)", 0.4, 0.6, 0.3, &[80.0, 40.0]),
        ("every disc passes; NMS 0.5 keeps all three", 0.4, 0.6, 0.5, &[80.0, 120.0, 40.0]),
    ];
    for (name, iou_t, stab_t, nms_t, radii) in cases {
        let mut o = options();
        o.points_per_side = 4;
        o.pred_iou_thresh = iou_t;
        o.stability_score_thresh = stab_t;
        o.box_nms_thresh = nms_t;
        let out = everything(&s, Some(&img), w, h, &o).unwrap();
        println!("{name}: {} objects, decoder {:.1} ms in {} runs", out.objects.len(), out.info.decoder_ms, out.info.decoder_runs);
        assert_eq!(out.objects.len(), 16 * radii.len(), "{name}");
        assert_eq!(out.info.prompts, 16);
        for (k, o) in out.objects.iter().enumerate() {
            let (r, (cx, cy)) = (radii[k / 16], centres[k % 16]);
            assert_eq!(o.id as usize, k + 1);
            assert_eq!((o.point_x as f64, o.point_y as f64), (cx, cy), "{name}: object {k} comes from grid point {}", k % 16);
            // the box is the disc's: centre within a pixel, width 2r within 2 px
            let (bx, by) = ((o.x0 + o.x1) as f64 / 2.0 + 0.5, (o.y0 + o.y1) as f64 / 2.0 + 0.5);
            assert!((bx - cx).abs() <= 1.0 && (by - cy).abs() <= 1.0, "{name}: object {k} centred at ({bx}, {by}), not ({cx}, {cy})");
            assert!(((o.x1 - o.x0 + 1) as f64 - 2.0 * r).abs() <= 2.0, "{name}: object {k} box width {}", o.x1 - o.x0 + 1);
            let disc = std::f64::consts::PI * r * r;
            assert!((o.area as f64 - disc).abs() / disc < 0.02, "{name}: object {k} area {} vs {disc:.0}", o.area);
            let rl = r / 4.0;
            let want_stability = ((rl - 1.0) / (rl + 1.0)).powi(2);
            assert!((o.stability_score as f64 - want_stability).abs() < 0.01, "{name}: stability {}", o.stability_score);
        }
        // the label image: the smallest kept disc on top at each centre, a larger one around it
        for (i, (cx, cy)) in centres.iter().enumerate() {
            let at = |dx: f64| out.labels[*cy as usize * w + (*cx + dx) as usize];
            let smallest = radii.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
            assert_eq!(at(0.0) as usize, smallest * 16 + i + 1, "{name}: centre of {i}");
            if radii.len() > 1 {
                assert_eq!(at(60.0) as usize, i + 1, "{name}: the r=80 disc around {i}");
            }
        }
        let background = out.labels.iter().filter(|v| **v == 0).count();
        let largest = radii.iter().copied().fold(0.0, f64::max);
        let covered = 16.0 * std::f64::consts::PI * largest * largest;
        assert!(((w * h - background) as f64 - covered).abs() / covered < 0.02, "{name}: labelled pixels");
        assert!(out.labels.iter().all(|v| *v as usize <= out.objects.len()));
    }
}

#[derive(Debug)]
struct RefObject {
    bbox: [i64; 4],
    area: u64,
    iou: f32,
    stability: f32,
    point: [f32; 2],
    mask: Vec<u8>,
}

fn mask_iou(a: &[u8], b: &[u8]) -> f64 {
    let (mut i, mut u) = (0u64, 0u64);
    for (x, y) in a.iter().zip(b) {
        i += (*x != 0 && *y != 0) as u64;
        u += (*x != 0 || *y != 0) as u64;
    }
    if u == 0 {
        1.0
    } else {
        i as f64 / u as f64
    }
}

/// segrt against `SAM2AutomaticMaskGenerator` (PyTorch) on the same tiny model, same settings:
/// the object count within 2 %, every reference object matched by one of segrt's with mask IoU
/// >= 0.95 and predicted IoU and stability score within 1e-3.
#[test]
fn everything_matches_the_official_automatic_mask_generator() {
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sam2_dir().join("reference/everything.json")).unwrap()).unwrap();
    let st = &index["settings"];
    let opts = segrt::sam2::EverythingOptions {
        points_per_side: st["points_per_side"].as_u64().unwrap() as usize,
        points_per_batch: st["points_per_batch"].as_u64().unwrap() as usize,
        pred_iou_thresh: st["pred_iou_thresh"].as_f64().unwrap() as f32,
        stability_score_thresh: st["stability_score_thresh"].as_f64().unwrap() as f32,
        stability_score_offset: st["stability_score_offset"].as_f64().unwrap() as f32,
        mask_threshold: st["mask_threshold"].as_f64().unwrap() as f32,
        box_nms_thresh: st["box_nms_thresh"].as_f64().unwrap() as f32,
        min_mask_region_area: st["min_mask_region_area"].as_u64().unwrap() as usize,
        crop_n_layers: st["crop_n_layers"].as_u64().unwrap() as usize,
    };
    let mut failures = Vec::new();
    // the one-prompt decoder, the same decoder exported with a prompt batch axis, and a decoder that
    // upsamples to the image size in the graph (samexporter's clamped low-res output is not comparable:
    // the reference upsamples unclamped logits)
    let encoder = index["encoder"].as_str().unwrap();
    for (encoder, decoder) in [
        (encoder, index["decoder"].as_str().unwrap()),
        (encoder, "sam2_tiny_sam2onnx_batched_decoder.onnx"),
        ("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_origsize_decoder.onnx"),
    ] {
        let sam = segrt::sam2::Sam2Segmenter::from_files(&sam2_dir().join(encoder), &sam2_dir().join(decoder), segrt::Options::default())
            .unwrap();
        assert_eq!(sam.batched_prompts(), decoder.contains("batched"), "{decoder}: prompt batch axis detected");
        println!("{decoder}:");
        for im in index["images"].as_array().unwrap() {
            let file = im["file"].as_str().unwrap();
            let img = load_rgb(&sam2_dir().join("reference").join(file));
            let (w, h) = (img.w, img.h);
            let stack = load_gray(&sam2_dir().join("reference").join(im["masks_png"].as_str().unwrap()));
            let refs: Vec<RefObject> = im["objects"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let f = |v: &serde_json::Value| v.as_f64().unwrap();
                    let b: Vec<i64> = o["bbox_xywh"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
                    RefObject {
                        bbox: [b[0], b[1], b[0] + b[2], b[1] + b[3]],
                        area: o["area"].as_u64().unwrap(),
                        iou: f(&o["predicted_iou"]) as f32,
                        stability: f(&o["stability_score"]) as f32,
                        point: [f(&o["point"][0]) as f32, f(&o["point"][1]) as f32],
                        mask: stack[k * w * h..(k + 1) * w * h].iter().map(|v| (*v != 0) as u8).collect(),
                    }
                })
                .collect();
            assert!(refs.len() >= 10, "{file}: the reference must have at least 10 objects");
            let view = segrt::ImageView::new(&img.data, w, h, (3 * w) as isize, segrt::PixelFormat::Rgb24).unwrap();
            let (result, _) = sam.everything(Some(&view), &opts).unwrap();
            let ours: Vec<Vec<u8>> = result.objects.iter().map(|o| o.mask(w, h)).collect();
            let n = result.objects.len();
            println!(
                "  {file}: reference {} objects, segrt {n} ({} prompts, {} decoder runs, decoder {:.0} ms, post {:.0} ms)",
                refs.len(),
                result.stats.prompts,
                result.stats.decoder_runs,
                result.stats.decoder_ms,
                result.stats.postprocess_ms
            );
            if (n as f64 - refs.len() as f64).abs() > 0.02 * refs.len() as f64 {
                failures.push(format!("{file}: {n} objects, the reference has {}", refs.len()));
            }
            let (mut worst_iou, mut worst_score, mut worst_stab) = (1.0f64, 0f32, 0f32);
            for (k, r) in refs.iter().enumerate() {
                // the best match among segrt's objects from the same prompt point
                let best = result
                    .objects
                    .iter()
                    .zip(&ours)
                    .filter(|(o, _)| o.point == r.point)
                    .map(|(o, m)| (mask_iou(m, &r.mask), o))
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                let Some((m_iou, o)) = best else {
                    failures.push(format!("{file}: reference object {k} (point {:?}) has no segrt object from that point", r.point));
                    continue;
                };
                worst_iou = worst_iou.min(m_iou);
                let (ds, dst) = ((o.predicted_iou - r.iou).abs(), (o.stability_score - r.stability).abs());
                worst_score = worst_score.max(ds);
                worst_stab = worst_stab.max(dst);
                if m_iou < 0.95 || ds > 1e-3 || dst > 1e-3 {
                    failures.push(format!(
                        "{file}: reference object {k}: mask IoU {m_iou:.4}, predicted IoU {} vs {}, stability {} vs {}",
                        o.predicted_iou, r.iou, o.stability_score, r.stability
                    ));
                }
                // areas differ by no more than the pixels the masks disagree on
                if (o.area as f64 - r.area as f64).abs() > (1.0 - m_iou) * o.area.max(r.area) as f64 + 0.5 {
                    failures.push(format!("{file}: reference object {k}: area {} vs {}", o.area, r.area));
                }
                let b = o.bbox.map(|v| v as i64);
                if m_iou == 1.0 && b != r.bbox {
                    failures.push(format!("{file}: reference object {k}: box {b:?} vs {:?}", r.bbox));
                }
            }
            println!("  worst: mask IoU {worst_iou:.5}, predicted IoU diff {worst_score:.2e}, stability diff {worst_stab:.2e}");
            let p = result.stats.prompts;
            // A batched decoder's first run on a session is one prompt, measuring its memory cost.
            let want_runs: &[usize] = if sam.batched_prompts() {
                &[p.div_ceil(opts.points_per_batch), 1 + (p - 1).div_ceil(opts.points_per_batch)]
            } else {
                &[p]
            };
            assert!(want_runs.contains(&result.stats.decoder_runs), "{decoder}: {} runs, want {want_runs:?}", result.stats.decoder_runs);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_last_result_is_cached_and_the_embedding_is_shared_with_clicks() {
    let s = create_sam2("sam2_tiny_sam2onnx_encoder.onnx", "sam2_tiny_sam2onnx_decoder.onnx").unwrap();
    let img = load_rgb(&sam2_dir().join("reference/img1.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut o = options();
    o.points_per_side = 4;
    o.pred_iou_thresh = 0.0;
    o.stability_score_thresh = 0.0;
    let mut inf = info();
    let mut n = 0usize;
    let call = |o: &SegEverythingOptions, image: *const SegImage, inf: &mut SegEverythingInfo, n: &mut usize| unsafe {
        seg_sam2_everything(
            s.0,
            image,
            o,
            ptr::null(),
            ptr::null_mut(),
            std::mem::size_of::<SegEverythingObject>(),
            0,
            n,
            inf,
            ptr::null_mut(),
        )
    };
    assert_eq!(call(&o, &desc, &mut inf, &mut n), SegStatus::SEG_OK);
    assert_eq!((inf.cached, inf.encoder_reused), (0, 0), "first call: the encoder runs");
    assert!(inf.encoder_ms > 0.0 && inf.decoder_runs == 16 && inf.prompts == 16);
    assert_eq!(inf.masks_decoded, 48);
    assert!(n > 0);
    assert_eq!(call(&o, &desc, &mut inf, &mut n), SegStatus::SEG_OK);
    assert_eq!((inf.cached, inf.decoder_ms), (1, 0.0), "same image and options: the last result");
    // a click on the same image reuses the embedding, and everything after it too
    let mut mask = vec![0u8; img.w * img.h];
    let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let p = [SegPoint { x: 60.0, y: 100.0, label: 1 }];
    let st = unsafe {
        seg_run_sam2_points(
            s.0,
            &desc,
            p.as_ptr(),
            1,
            ptr::null(),
            ptr::null(),
            0,
            0,
            &m,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_OK);
    o.box_nms_thresh = 0.5;
    assert_eq!(call(&o, ptr::null(), &mut inf, &mut n), SegStatus::SEG_OK);
    assert_eq!((inf.cached, inf.encoder_reused, inf.encoder_ms), (0, 1, 0.0), "other options: decoded again, not encoded");
    // one prompt per run on a decoder without a prompt batch axis
    assert_eq!((inf.batched, inf.batch), (0, 1));
}

#[test]
fn bad_input_gives_clear_statuses_and_writes_nothing() {
    let s = create_sam2("sam2_tiny_sam2onnx_encoder.onnx", "sam2_tiny_sam2onnx_decoder.onnx").unwrap();
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let (w, h) = (img.w, img.h);
    let desc = image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    // no image given and none cached
    let mut labels = vec![0xBEEFu16; w * h];
    let mut objects = vec![SegEverythingObject { id: 777, ..Default::default() }; 4];
    let mut n = usize::MAX;
    let l = SegLabelImage { data: labels.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let st = unsafe {
        seg_sam2_everything(
            s.0,
            ptr::null(),
            ptr::null(),
            &l,
            objects.as_mut_ptr(),
            std::mem::size_of::<SegEverythingObject>(),
            4,
            &mut n,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(last_error().contains("seg_sam2_set_image"), "{}", last_error());

    let d = options();
    type Case = (&'static str, SegEverythingOptions, i32, usize, bool, SegStatus, &'static str);
    let small = SegLabelImage { data: labels.as_mut_ptr(), width: w as i32 - 1, height: h as i32, stride: 0 };
    let narrow = SegLabelImage { data: labels.as_mut_ptr(), width: w as i32, height: h as i32, stride: w as i32 - 1 };
    let cases: Vec<Case> = vec![
        (
            "0 points per side",
            SegEverythingOptions { points_per_side: 0, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "points_per_side",
        ),
        (
            "negative points per side",
            SegEverythingOptions { points_per_side: -3, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "points_per_side",
        ),
        (
            "absurd points per side",
            SegEverythingOptions { points_per_side: 1 << 20, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "points_per_side",
        ),
        (
            "0 points per batch",
            SegEverythingOptions { points_per_batch: 0, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "points_per_batch",
        ),
        (
            "NaN IoU threshold",
            SegEverythingOptions { pred_iou_thresh: f32::NAN, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "pred_iou_thresh",
        ),
        (
            "NaN stability threshold",
            SegEverythingOptions { stability_score_thresh: f32::NAN, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "stability_score_thresh",
        ),
        (
            "stability threshold 1.5",
            SegEverythingOptions { stability_score_thresh: 1.5, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "stability_score_thresh",
        ),
        (
            "infinite offset",
            SegEverythingOptions { stability_score_offset: f32::INFINITY, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "stability_score_offset",
        ),
        (
            "NaN mask threshold",
            SegEverythingOptions { mask_threshold: f32::NAN, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "mask_threshold",
        ),
        (
            "NMS threshold -1",
            SegEverythingOptions { box_nms_thresh: -1.0, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "box_nms_thresh",
        ),
        (
            "negative min area",
            SegEverythingOptions { min_mask_region_area: -1, ..d },
            0,
            4,
            true,
            SegStatus::SEG_INVALID_ARGUMENT,
            "min_mask_region_area",
        ),
        ("crop layers", SegEverythingOptions { crop_n_layers: 1, ..d }, 0, 4, true, SegStatus::SEG_INVALID_ARGUMENT, "crop_n_layers"),
        ("struct_size 4", SegEverythingOptions { struct_size: 4, ..d }, 0, 4, true, SegStatus::SEG_INVALID_ARGUMENT, "struct_size"),
        ("label image narrower than the image", d, 1, 4, true, SegStatus::SEG_INVALID_ARGUMENT, "label image"),
        ("label stride below its width", d, 2, 4, true, SegStatus::SEG_INVALID_ARGUMENT, "stride"),
        ("records NULL with a capacity", d, 0, 4, false, SegStatus::SEG_NULL_POINTER, "out_objects"),
    ];
    for (name, o, label_kind, cap, with_objects, want, msg) in cases {
        let l = [&l, &small, &narrow][label_kind as usize];
        let objs = if with_objects { objects.as_mut_ptr() } else { ptr::null_mut() };
        let st = unsafe {
            seg_sam2_everything(
                s.0,
                &desc,
                &o,
                l,
                objs,
                std::mem::size_of::<SegEverythingObject>(),
                cap,
                &mut n,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        println!("{name:<38} {:<22} {}", st.name(), last_error());
        assert_eq!(st, want, "{name}");
        assert!(last_error().contains(msg), "{name}: {}", last_error());
        assert_eq!(n, usize::MAX, "{name}: the count is not written before the objects are known");
    }
    // too few records: the count comes back, nothing else is written
    let mut o = d;
    o.pred_iou_thresh = 0.0;
    o.stability_score_thresh = 0.0;
    o.box_nms_thresh = 1.0;
    o.points_per_side = 4;
    let st = unsafe {
        seg_sam2_everything(
            s.0,
            &desc,
            &o,
            &l,
            objects.as_mut_ptr(),
            std::mem::size_of::<SegEverythingObject>(),
            4,
            &mut n,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_BUFFER_TOO_SMALL, "{}", last_error());
    assert_eq!(n, 48, "16 prompts x 3 masks, no filter");
    assert!(last_error().contains("48 objects"), "{}", last_error());
    assert!(labels.iter().all(|v| *v == 0xBEEF), "the label image is untouched on failure");
    assert!(objects.iter().all(|o| o.id == 777), "the records are untouched on failure");
    // a bad info struct_size
    let mut bad_info = SegEverythingInfo { struct_size: 8, ..Default::default() };
    let st = unsafe {
        seg_sam2_everything(
            s.0,
            &desc,
            &o,
            &l,
            ptr::null_mut(),
            std::mem::size_of::<SegEverythingObject>(),
            0,
            &mut n,
            &mut bad_info,
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(labels.iter().all(|v| *v == 0xBEEF));
    // a UNet session
    let unet = create(&model("demo_unet.onnx"), None).unwrap();
    let st = unsafe {
        seg_sam2_everything(
            unet.0,
            &desc,
            &o,
            &l,
            ptr::null_mut(),
            std::mem::size_of::<SegEverythingObject>(),
            0,
            &mut n,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_WRONG_SESSION_KIND);
    // NULL and freed handles
    let st = unsafe {
        seg_sam2_everything(
            ptr::null_mut(),
            &desc,
            &o,
            &l,
            ptr::null_mut(),
            std::mem::size_of::<SegEverythingObject>(),
            0,
            &mut n,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_INVALID_HANDLE);
    assert!(labels.iter().all(|v| *v == 0xBEEF));
    // the same call with room: OK, everything written
    let mut objects = vec![SegEverythingObject::default(); 48];
    let st = unsafe {
        seg_sam2_everything(
            s.0,
            &desc,
            &o,
            &l,
            objects.as_mut_ptr(),
            std::mem::size_of::<SegEverythingObject>(),
            48,
            &mut n,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_OK);
    assert!(labels.iter().all(|v| *v <= 48));
    assert_eq!(objects.iter().map(|o| o.id).collect::<Vec<_>>(), (1..=48).collect::<Vec<_>>());
}

/// Every record size and capacity at its extremes: an array no address space holds (or a record too
/// small) is refused with nothing written, never multiplied into a wild address; an array a buffer
/// holds is written at the caller's stride.
#[test]
fn record_sizes_at_their_extremes_are_refused_or_honoured() {
    let s = create_sam2("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx").unwrap();
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let o =
        SegEverythingOptions { points_per_side: 4, pred_iou_thresh: 0.0, stability_score_thresh: 0.0, box_nms_thresh: 1.0, ..options() };
    let record = std::mem::size_of::<SegEverythingObject>();
    let n = everything(&s, Some(&desc), img.w, img.h, &o).unwrap().objects.len();
    assert!(n >= 2, "{n} objects: the case needs several records");
    const BUFFER: usize = 1 << 16;
    let (mut refused, mut written) = (0, 0);
    for (size, capacity) in extreme_record_sizes(record) {
        let Some(accepted) = record_array_expectation(record, size, capacity, BUFFER) else { continue };
        let mut buffer = vec![0x5Au8; BUFFER];
        let mut count = 777usize;
        let st = unsafe {
            seg_sam2_everything(
                s.0,
                ptr::null(),
                &o,
                ptr::null(),
                buffer.as_mut_ptr().cast(),
                size,
                capacity,
                &mut count,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        let what = format!("object_size {size} x capacity {capacity}");
        if !accepted {
            assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "{what}: {}", last_error());
            assert!(count == 777 && buffer.iter().all(|b| *b == 0x5A), "{what}: a refused call wrote");
            refused += 1;
        } else if capacity < n {
            assert_eq!((st, count), (SegStatus::SEG_BUFFER_TOO_SMALL, n), "{what}: {}", last_error());
            assert!(buffer.iter().all(|b| *b == 0x5A), "{what}: a call refused for its capacity wrote records");
        } else {
            assert_eq!((st, count), (SegStatus::SEG_OK, n), "{what}: {}", last_error());
            for k in 0..n {
                let id = u32::from_ne_bytes(buffer[k * size..k * size + 4].try_into().unwrap());
                assert_eq!(id, k as u32 + 1, "{what}: record {k} not at the caller's stride");
                assert!(buffer[k * size + record..(k + 1) * size].iter().all(|b| *b == 0x5A), "{what}: wrote past a record");
            }
            written += 1;
        }
    }
    println!("record sizes at their extremes: {refused} pairs refused, {written} written");
    assert!(refused > 40 && written > 2);
}

/// Segment-everything's prompt batches fit `max_memory_bytes`: the first run measures one prompt's
/// cost in ONNX Runtime (reported by `seg_session_info`), later runs hold what the budget has room
/// for, and the objects are the same as with the whole batch; a budget that cannot hold one prompt is
/// refused with the figures.
#[test]
fn prompt_batches_fit_the_memory_budget() {
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let o = SegEverythingOptions { points_per_side: 8, points_per_batch: 64, ..options() };
    let with_budget = |bytes: u64| {
        let (e, d) = (
            cstr(sam2_dir().join("sam2_tiny_sam2onnx_encoder.onnx").to_str().unwrap()),
            cstr(sam2_dir().join("sam2_tiny_sam2onnx_batched_decoder.onnx").to_str().unwrap()),
        );
        let opts = SegOptions { max_memory_bytes: bytes, ..default_options() };
        let mut s = ptr::null_mut();
        assert_eq!(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &opts, &mut s) }, SegStatus::SEG_OK, "{}", last_error());
        Session(s)
    };
    let s = with_budget(0);
    let whole = everything(&s, Some(&desc), img.w, img.h, &o).unwrap();
    assert_eq!(whole.info.decoder_runs, 2, "the default budget holds the 63 prompts after the measuring one in one run");
    let info = session_info(s.0);
    let measured = info["decoder_pool"]["run_bytes_per_item"]["prompt"].as_u64().expect("the measured cost of a prompt");
    // segrt's own buffers per prompt: 4 low-res masks and a mask input of the decoder's grid.
    let grid = info["interpretation"]["mask_input_size"].as_array().map_or(64 * 64, |a| a.iter().map(|v| v.as_u64().unwrap()).product());
    let per_prompt = measured + 5 * grid * 4;
    // A budget for 5 prompts per run: 1 measuring run, then 63 prompts in runs of 5.
    let budget = 5 * per_prompt + per_prompt / 2;
    let s2 = with_budget(budget);
    let small = everything(&s2, Some(&desc), img.w, img.h, &o).unwrap();
    // Each handle measures anew (resident growth: other work blurs it), so the runs follow its figure.
    let measured2 = session_info(s2.0)["decoder_pool"]["run_bytes_per_item"]["prompt"].as_u64().unwrap();
    let per_run = (budget / (measured2 + 5 * grid * 4)).min(64);
    println!(
        "64 prompts: one prompt costs {measured} (then {measured2}) bytes in ONNX Runtime (measured) + {} of segrt's; \
         {} decoder runs of up to {per_run} prompts under a {budget}-byte budget",
        5 * grid * 4,
        small.info.decoder_runs
    );
    assert_eq!(small.labels, whole.labels, "the objects depend on the budget");
    assert_eq!(small.objects.len(), whole.objects.len());
    assert!(per_run < 63, "the budget must hold fewer prompts than the call has");
    assert_eq!(small.info.decoder_runs as u64, 1 + 63u64.div_ceil(per_run));
    // A budget below one prompt's own buffers: the run after the measuring one is refused.
    let (st, message) = everything(&with_budget(5 * grid * 4 / 2), Some(&desc), img.w, img.h, &o).map(|_| ()).unwrap_err();
    assert_eq!(st, SegStatus::SEG_OUT_OF_MEMORY, "{message}");
    assert!(message.contains("one prompt needs") && message.contains("max_memory_bytes budget of"), "{message}");
}

/// Hugging Face transformers' layout (models/sam2/transformers): the whole grid in one decoder run
/// (objects axis) or one point per run give the same result, and every object's predicted IoU is
/// that of a click at its grid point (the click path is checked against transformers itself in
/// tests/sam2_c_abi.rs).
#[test]
fn the_transformers_layout_segments_everything_as_its_clicks() {
    let s = create_sam2("transformers/vision_encoder.onnx", "transformers/prompt_encoder_mask_decoder.onnx").unwrap();
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let o =
        SegEverythingOptions { points_per_side: 4, pred_iou_thresh: 0.0, stability_score_thresh: 0.0, box_nms_thresh: 1.0, ..options() };
    let batched = everything(&s, Some(&desc), img.w, img.h, &SegEverythingOptions { points_per_batch: 64, ..o }).unwrap();
    let single = everything(&s, Some(&desc), img.w, img.h, &SegEverythingOptions { points_per_batch: 1, ..o }).unwrap();
    println!(
        "{} objects, {} decoder runs batched, {} one by one",
        batched.objects.len(),
        batched.info.decoder_runs,
        single.info.decoder_runs
    );
    // The handle's first decoder run is one prompt, measuring its memory cost; then the other 15 in one.
    assert_eq!((batched.info.batched, batched.info.decoder_runs, single.info.decoder_runs), (1, 2, 16));
    assert_eq!(batched.objects.len(), 48);
    assert_eq!(batched.labels, single.labels);
    for (a, b) in batched.objects.iter().zip(&single.objects) {
        assert_eq!((a.mask_index, a.area, a.x0, a.y1), (b.mask_index, b.area, b.x0, b.y1));
        assert!((a.predicted_iou - b.predicted_iou).abs() < 1e-5);
    }
    for obj in &batched.objects {
        let (x, y) = (obj.point_x, obj.point_y);
        let mut mask = vec![0u8; img.w * img.h];
        let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
        let mut r = SegSam2Result {
            struct_size: std::mem::size_of::<SegSam2Result>() as u32,
            chosen_index: -1,
            num_masks: 0,
            encoder_reused: 0,
            scores: [0.0; 4],
            encoder_ms: 0.0,
            decoder_ms: 0.0,
            postprocess_ms: 0.0,
            all_masks: ptr::null_mut(),
            all_masks_len: 0,
            low_res_logits: ptr::null_mut(),
            low_res_len: 0,
            low_res_width: 0,
            low_res_height: 0,
        };
        let p = [SegPoint { x, y, label: 1 }];
        let st = unsafe {
            seg_run_sam2_points(
                s.0,
                ptr::null(),
                p.as_ptr(),
                1,
                ptr::null(),
                ptr::null(),
                0,
                0,
                &m,
                ptr::null_mut(),
                &mut r,
                ptr::null_mut(),
            )
        };
        assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
        let want = r.scores[obj.mask_index as usize];
        assert!(
            (obj.predicted_iou - want).abs() < 1e-5,
            "object at ({x}, {y}) mask {}: {} vs click {want}",
            obj.mask_index,
            obj.predicted_iou
        );
    }
}
