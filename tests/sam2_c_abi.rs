//! SAM2 through the C ABI on the tiny fixtures of four export conventions, against PyTorch
//! reference outputs (models/sam2/reference), plus the geometric oracle for coordinate mapping.

mod common;

use std::collections::HashMap;
use std::ptr;

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

struct Click {
    mask: Vec<u8>,
    score: f32,
    result: SegSam2Result,
    all: Vec<u8>,
    low_res: Vec<f32>,
}

fn click(
    s: &Session,
    img: Option<&SegImage>,
    w: usize,
    h: usize,
    points: &[SegPoint],
    bbox: Option<SegBox>,
    flags: u32,
) -> Result<Click, (SegStatus, String)> {
    let mut mask = vec![0u8; w * h];
    let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let mut all = vec![0u8; 4 * w * h];
    let mut low_res = vec![0f32; 1 << 16];
    let mut result = SegSam2Result {
        struct_size: std::mem::size_of::<SegSam2Result>() as u32,
        chosen_index: -1,
        num_masks: 0,
        encoder_reused: 0,
        scores: [0.0; 4],
        encoder_ms: 0.0,
        decoder_ms: 0.0,
        postprocess_ms: 0.0,
        all_masks: all.as_mut_ptr(),
        all_masks_len: all.len(),
        low_res_logits: low_res.as_mut_ptr(),
        low_res_len: low_res.len(),
        low_res_width: 0,
        low_res_height: 0,
    };
    let mut score = f32::NAN;
    let st = unsafe {
        seg_run_sam2_points(
            s.0,
            img.map_or(ptr::null(), |i| i as *const _),
            if points.is_empty() { ptr::null() } else { points.as_ptr() },
            points.len(),
            bbox.as_ref().map_or(ptr::null(), |b| b as *const _),
            ptr::null(),
            0,
            flags,
            &m,
            &mut score,
            &mut result,
            ptr::null_mut(),
        )
    };
    if st != SegStatus::SEG_OK {
        return Err((st, last_error()));
    }
    all.truncate(result.num_masks as usize * w * h);
    low_res.truncate((result.low_res_width * result.low_res_height) as usize);
    Ok(Click { mask, score, result, all, low_res })
}

fn read_f32(name: &str) -> Vec<f32> {
    let bytes = std::fs::read(sam2_dir().join("reference").join(name)).unwrap();
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

#[test]
fn every_convention_matches_the_pytorch_reference() {
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sam2_dir().join("reference/index.json")).unwrap()).unwrap();
    let mut sessions: HashMap<String, Session> = HashMap::new();
    let mut images: HashMap<String, Rgb> = HashMap::new();
    let mut failures = Vec::new();
    // "refine" follows "point" on the same session and image, as a user's second click would.
    let order = ["point", "refine", "point_neg", "box", "box_point"];
    let mut entries: Vec<&serde_json::Value> = index["entries"].as_array().unwrap().iter().collect();
    entries.sort_by_key(|e| {
        (
            e["convention"].as_str().unwrap().to_string(),
            e["image"].as_str().unwrap().to_string(),
            order.iter().position(|p| *p == e["prompt"]).unwrap(),
        )
    });
    for e in entries {
        let conv = e["convention"].as_str().unwrap();
        let name = format!("{conv} {} {}", e["image"].as_str().unwrap(), e["prompt"].as_str().unwrap());
        let s = sessions
            .entry(conv.to_string())
            .or_insert_with(|| create_sam2(e["encoder"].as_str().unwrap(), e["decoder"].as_str().unwrap()).unwrap());
        let file = index["images"][e["image"].as_str().unwrap()]["file"].as_str().unwrap();
        let img = images.entry(file.to_string()).or_insert_with(|| load_rgb(&sam2_dir().join("reference").join(file)));
        let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
        // the user's points (box corners are passed as a box, not as points)
        let labels: Vec<i64> = e["labels"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
        let pts: Vec<SegPoint> = e["points"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&labels)
            .filter(|(_, l)| **l == 0 || **l == 1)
            .map(|(p, l)| SegPoint { x: p[0].as_f64().unwrap() as f32, y: p[1].as_f64().unwrap() as f32, label: *l as i32 })
            .collect();
        let bbox = e["box"].as_array().map(|b| SegBox {
            x1: b[0].as_f64().unwrap() as f32,
            y1: b[1].as_f64().unwrap() as f32,
            x2: b[2].as_f64().unwrap() as f32,
            y2: b[3].as_f64().unwrap() as f32,
        });
        let refine = e["prompt"] == "refine";
        let out = click(s, Some(&desc), img.w, img.h, &pts, bbox, if refine { SEG_SAM2_REFINE } else { 0 })
            .unwrap_or_else(|err| panic!("{name}: {err:?}"));

        let ref_iou: Vec<f32> = e["iou_predictions"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        let k = ref_iou.len();
        assert_eq!(out.result.num_masks as usize, k, "{name}");
        let iou_diff = ref_iou.iter().zip(&out.result.scores).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        // with 4 masks, mask 0 is the single-mask token: segrt chooses among the 3 multimask outputs
        let first = if k == 4 { 1 } else { 0 };
        let want_chosen = (first..k).max_by(|a, b| out.result.scores[*a].total_cmp(&out.result.scores[*b])).unwrap();
        assert_eq!(out.result.chosen_index as usize, want_chosen, "{name}");
        assert_eq!(out.score, out.result.scores[want_chosen]);
        let ref_chosen = e["chosen_index"].as_u64().unwrap() as usize;
        let ref_mask = load_gray(&sam2_dir().join("reference").join(e["mask_png"].as_str().unwrap()));
        let ours = &out.all[ref_chosen * img.w * img.h..(ref_chosen + 1) * img.w * img.h];
        let agree = agreement(ours, &ref_mask);
        // osam's refinement feeds back another mask than the reference's (see above): only the
        // other prompts are compared for it
        let comparable = !(conv == "osam" && refine);
        let mut line = format!("{name:<34} IoU pred max diff {iou_diff:.4}  mask {:.3} % identical", agree * 100.0);
        if comparable && conv != "osam" {
            let lr = &e["low_res_logits"];
            let all = read_f32(lr["file"].as_str().unwrap());
            let plane = 64 * 64;
            let want = &all[ref_chosen * plane..(ref_chosen + 1) * plane];
            if ref_chosen == out.result.chosen_index as usize {
                let diffs: Vec<f32> = want.iter().zip(&out.low_res).map(|(a, b)| (a - b).abs()).collect();
                let max = diffs.iter().fold(0f32, |a, b| a.max(*b));
                let mean = diffs.iter().sum::<f32>() / diffs.len() as f32;
                line += &format!("  low-res logits diff max {max:.3} mean {mean:.4}");
                // A decoder that only returns full-size logits has no low-res output: segrt recovers
                // them by sampling at the low-res pixel centres, exact only up to interpolation error.
                let (max_ok, mean_ok) = if conv.ends_with("origsize") { (2.5, 0.3) } else { (0.05, 0.01) };
                if max > max_ok || mean > mean_ok {
                    failures.push(format!("{name}: low-res logits differ by max {max}, mean {mean}"));
                }
            }
        }
        println!("{line}");
        // refinement through recovered low-res logits (full-size-only decoders) is approximate
        let mask_goal = if refine && conv.ends_with("origsize") { 0.99 } else { 0.995 };
        if comparable && (iou_diff > 0.02 || agree < mask_goal) {
            failures.push(line);
        }
        if ref_chosen == want_chosen {
            assert_eq!(out.mask, ours, "{name}: the chosen mask is among all_masks");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn oracle_click_lands_on_the_mask_centroid_for_any_aspect_ratio() {
    let s = create_sam2("sam2_oracle_encoder.onnx", "sam2_oracle_decoder.onnx").unwrap();
    for (w, h) in [(1920usize, 1080usize), (1080, 1920), (333, 777), (4000, 300)] {
        let gray = vec![90u8; w * h];
        let img = image_desc(&gray, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY8);
        for (fx, fy) in [(0.5f32, 0.5f32), (0.37, 0.61), (0.8, 0.2)] {
            let (x, y) = (fx * w as f32, fy * h as f32);
            let out = click(&s, Some(&img), w, h, &[SegPoint { x: 5.0, y: 5.0, label: 0 }, SegPoint { x, y, label: 1 }], None, 0).unwrap();
            let (mut sx, mut sy, mut n) = (0f64, 0f64, 0f64);
            for (i, v) in out.mask.iter().enumerate() {
                if *v == 255 {
                    sx += (i % w) as f64 + 0.5; // pixel centres
                    sy += (i / w) as f64 + 0.5;
                    n += 1.0;
                }
            }
            assert!(n > 0.0, "{w}x{h}: empty mask");
            let (cx, cy) = (sx / n, sy / n);
            let err = ((cx - x as f64).powi(2) + (cy - y as f64).powi(2)).sqrt();
            println!("{w}x{h} click ({x:.1},{y:.1}) centroid ({cx:.2},{cy:.2}) error {err:.3} px, mask {}", out.result.chosen_index);
            assert!(err <= 1.0, "{w}x{h}: centroid {err:.3} px from the click");
            assert_eq!(out.result.chosen_index, 1, "the oracle's highest IoU is mask 1");
        }
    }
}

#[test]
fn encoder_runs_once_per_image_and_the_cache_serves_other_threads() {
    let s = create_sam2("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx").unwrap();
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut ms = -1.0;
    assert_eq!(unsafe { seg_sam2_set_image(s.0, &desc, &mut ms, ptr::null_mut()) }, SegStatus::SEG_OK);
    assert!(ms > 0.0);
    assert_eq!(unsafe { seg_sam2_set_image(s.0, &desc, &mut ms, ptr::null_mut()) }, SegStatus::SEG_OK);
    assert_eq!(ms, 0.0, "same pixels: no second encoder run");
    let p = [SegPoint { x: 105.0, y: 105.0, label: 1 }];
    let first = click(&s, Some(&desc), img.w, img.h, &p, None, 0).unwrap();
    assert_eq!(first.result.encoder_reused, 1);
    assert_eq!(first.result.encoder_ms, 0.0);
    // NULL image: the cached one, from another thread
    std::thread::scope(|sc| {
        sc.spawn(|| {
            let again = click(&s, None, img.w, img.h, &p, None, 0).unwrap();
            assert_eq!(again.mask, first.mask);
        });
    });
    // the same picture in another layout is another key, but gives the same mask
    let bgr: Vec<u8> = img.data.chunks(3).flat_map(|c| [c[2], c[1], c[0]]).collect();
    let desc_bgr = image_desc(&bgr, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_BGR24);
    let b = click(&s, Some(&desc_bgr), img.w, img.h, &p, None, 0).unwrap();
    assert_eq!(b.result.encoder_reused, 0);
    assert_eq!(b.mask, first.mask);
    assert_eq!(unsafe { seg_sam2_reset(s.0) }, SegStatus::SEG_OK);
    let err = click(&s, None, img.w, img.h, &p, None, 0).err().unwrap();
    assert_eq!(err.0, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(err.1.contains("seg_sam2_set_image"), "{}", err.1);
}

#[test]
fn bad_prompts_and_wrong_session_kinds() {
    let s = create_sam2("sam2_tiny_sam2onnx_encoder.onnx", "sam2_tiny_sam2onnx_decoder.onnx").unwrap();
    let img = load_rgb(&sam2_dir().join("reference/img1.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let (w, h) = (img.w, img.h);
    let p = |x: f32, y: f32, label: i32| SegPoint { x, y, label };
    // (case, points, box, flags, what the message must say)
    type Case<'a> = (&'a str, Vec<SegPoint>, Option<SegBox>, u32, &'a str);
    let cases: Vec<Case> = vec![
        ("0 points and no box", vec![], None, 0, "at least one point"),
        ("NaN coordinate", vec![p(f32::NAN, 3.0, 1)], None, 0, "not a finite"),
        ("infinite coordinate", vec![p(3.0, f32::INFINITY, 1)], None, 0, "not a finite"),
        ("point outside the image", vec![p(w as f32 + 5.0, 3.0, 1)], None, 0, "outside"),
        ("negative coordinate", vec![p(-1.0, 3.0, 1)], None, 0, "outside"),
        ("label 2", vec![p(3.0, 3.0, 2)], None, 0, "label 2"),
        ("box with x2 < x1", vec![], Some(SegBox { x1: 50.0, y1: 10.0, x2: 20.0, y2: 40.0 }), 0, "x2 > x1"),
        ("unknown flag", vec![p(3.0, 3.0, 1)], None, 8, "unknown flags"),
    ];
    for (name, pts, bbox, flags, msg) in cases {
        let err = click(&s, Some(&desc), w, h, &pts, bbox, flags).err().unwrap_or_else(|| panic!("{name} was accepted"));
        println!("{name:<26} {:<22} {}", err.0.name(), err.1);
        assert_eq!(err.0, SegStatus::SEG_INVALID_ARGUMENT, "{name}");
        assert!(err.1.contains(msg), "{name}: {}", err.1);
    }
    // a UNet session given to a SAM2 call, and the reverse
    let unet = create(&model("demo_unet.onnx"), None).unwrap();
    let err = click(&unet, Some(&desc), w, h, &[p(3.0, 3.0, 1)], None, 0).err().unwrap();
    assert_eq!(err.0, SegStatus::SEG_WRONG_SESSION_KIND);
    let err = run(&s, &desc).err().unwrap();
    assert_eq!(err.0, SegStatus::SEG_WRONG_SESSION_KIND);
    // a UNet model given as a SAM2 pair
    let e = cstr(model("demo_unet.onnx").to_str().unwrap());
    let mut out = ptr::null_mut();
    let st = unsafe { seg_create_sam2(e.as_ptr(), e.as_ptr(), ptr::null(), &mut out) };
    assert_eq!(st, SegStatus::SEG_MODEL_UNSUPPORTED);
    let msg = last_error();
    assert!(msg.contains("image f32[1,3,256,256]") && msg.contains("point_coords"), "{msg}");
    // a SAM2 encoder given as a UNet
    let err = create(&sam2_dir().join("sam2_tiny_samexporter_decoder.onnx"), None).err().unwrap();
    assert_eq!(err.0, SegStatus::SEG_MODEL_UNSUPPORTED, "{}", err.1);
}

#[test]
fn session_info_names_the_convention() {
    for (enc, dec, conv) in [
        ("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx", "samexporter"),
        ("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_origsize_decoder.onnx", "samexporter+orig_im_size"),
        ("sam2_tiny_sam2onnx_encoder.onnx", "sam2_tiny_sam2onnx_decoder.onnx", "sam2-onnx"),
        ("sam2_tiny_osam_encoder.onnx", "sam2_tiny_osam_decoder.onnx", "osam"),
    ] {
        let s = create_sam2(enc, dec).unwrap();
        let v = session_info(s.0);
        assert_eq!(v["kind"], "sam2");
        assert_eq!(v["convention"], conv, "{enc} + {dec}");
        assert_eq!(v["interpretation"]["image_size"], 256);
    }
}

/// Foreground IoU of two 0/255 masks (1 when both are empty).
fn mask_iou(a: &[u8], b: &[u8]) -> f64 {
    let (mut inter, mut union) = (0u64, 0u64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (*x != 0, *y != 0);
        inter += (x && y) as u64;
        union += (x || y) as u64;
    }
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

/// Hugging Face transformers' layout (the onnx-community exports): a click, two clicks with a
/// negative one, a box and a box with a click on two images, against masks and scores made by
/// transformers' own processor + model (models/sam2/export_transformers.py), for the pair in `dir`.
fn matches_transformers(dir: &str, convention: &str, low_res: usize) {
    matches_transformers_in(dir, "reference", convention, low_res, 0.995);
}

/// [`matches_transformers`] on the references in `dir/reference` (their images named by the index),
/// every mask at least `min_iou` alike.
fn matches_transformers_in(dir: &str, reference: &str, convention: &str, low_res: usize, min_iou: f64) {
    let s = create_sam2(&format!("{dir}/vision_encoder.onnx"), &format!("{dir}/prompt_encoder_mask_decoder.onnx")).unwrap();
    let v = session_info(s.0);
    assert_eq!(v["convention"], convention);
    assert_eq!(v["interpretation"]["mask_input_size"], serde_json::json!([low_res, low_res]));
    let dir = sam2_dir().join(dir).join(reference);
    let index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut worst = 1f64;
    for e in index["entries"].as_array().unwrap() {
        let name = format!("{} {}", e["image"].as_str().unwrap(), e["prompt"].as_str().unwrap());
        let img = load_rgb(&dir.join(index["images"][e["image"].as_str().unwrap()]["file"].as_str().unwrap()));
        let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
        let pts: Vec<SegPoint> = e["points"]
            .as_array()
            .unwrap()
            .iter()
            .zip(e["labels"].as_array().unwrap())
            .map(|(p, l)| SegPoint {
                x: p[0].as_f64().unwrap() as f32,
                y: p[1].as_f64().unwrap() as f32,
                label: l.as_i64().unwrap() as i32,
            })
            .collect();
        let bbox = e["box"].as_array().map(|b| {
            let v = |i: usize| b[i].as_f64().unwrap() as f32;
            SegBox { x1: v(0), y1: v(1), x2: v(2), y2: v(3) }
        });
        let out = click(&s, Some(&desc), img.w, img.h, &pts, bbox, 0).unwrap_or_else(|err| panic!("{name}: {err:?}"));
        assert_eq!((out.result.low_res_width as usize, out.result.low_res_height as usize), (low_res, low_res));
        let ref_iou: Vec<f32> = e["iou_scores"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        assert_eq!(out.result.num_masks as usize, ref_iou.len(), "{name}");
        let iou_diff = ref_iou.iter().zip(&out.result.scores).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        let ref_chosen = e["chosen_index"].as_u64().unwrap() as usize;
        let mut line =
            format!("{name:<16} chosen {} (ref {ref_chosen})  IoU pred max diff {iou_diff:.5}  mask IoU", out.result.chosen_index);
        let mut ious = Vec::new();
        for (k, png) in e["mask_pngs"].as_array().unwrap().iter().enumerate() {
            let want = load_gray(&dir.join(png.as_str().unwrap()));
            let ours = &out.all[k * img.w * img.h..(k + 1) * img.w * img.h];
            let iou = mask_iou(ours, &want);
            line += &format!(" {iou:.5}");
            ious.push(iou);
            worst = worst.min(iou);
        }
        println!("{line}");
        if out.result.chosen_index as usize != ref_chosen || iou_diff > 1e-3 || ious.iter().any(|v| *v < min_iou) {
            failures.push(line);
        }
        assert_eq!(&out.mask[..], &out.all[ref_chosen * img.w * img.h..(ref_chosen + 1) * img.w * img.h], "{name}: the chosen mask");
    }
    println!("{convention}: worst mask IoU against transformers: {worst:.5}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// SAM2.1-shaped (Hiera, stride 16, ImageNet normalisation): S = 256, 64x64 low-res.
#[test]
fn the_transformers_layout_matches_transformers() {
    matches_transformers("transformers", "transformers", 64);
}

/// The SAM3 tracker's graphs (ViT, stride 14, mean/std 0.5): S = 252, an 18x18 embedding, 72x72
/// low-res, all read from the graphs.
#[test]
fn the_sam3_tracker_layout_matches_transformers() {
    matches_transformers("transformers_sam3_tracker", "transformers-sam3-tracker", 72);
}

/// The transformers decoder has no mask input: refinement is refused (SEG_MODEL_UNSUPPORTED, the
/// message says why), nothing is written, and a plain click still works afterwards.
#[test]
fn the_transformers_layout_refuses_refinement() {
    let s = create_sam2("transformers/vision_encoder.onnx", "transformers/prompt_encoder_mask_decoder.onnx").unwrap();
    let v = session_info(s.0);
    assert_eq!(v["convention"], "transformers");
    assert_eq!(v["interpretation"]["image_size"], 256);
    assert_eq!(v["interpretation"]["mask_input_size"], serde_json::json!([64, 64]));
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let p = [SegPoint { x: 105.0, y: 105.0, label: 1 }];
    let first = click(&s, Some(&desc), img.w, img.h, &p, None, 0).unwrap();
    let err = click(&s, Some(&desc), img.w, img.h, &p, None, SEG_SAM2_REFINE).err().unwrap();
    println!("{:?}: {}", err.0, err.1);
    assert_eq!(err.0, SegStatus::SEG_MODEL_UNSUPPORTED);
    assert!(err.1.contains("refinement") && err.1.contains("mask input"), "{}", err.1);
    let mut mask = vec![0u8; img.w * img.h];
    let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let st = unsafe {
        seg_run_sam2_points(
            s.0,
            &desc,
            p.as_ptr(),
            1,
            ptr::null(),
            first.low_res.as_ptr(),
            first.low_res.len(),
            0,
            &m,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_MODEL_UNSUPPORTED);
    assert!(mask.iter().all(|v| *v == 0), "nothing written on refusal");
    assert_eq!(click(&s, None, img.w, img.h, &p, None, 0).unwrap().mask, first.mask);
}

/// EdgeTAM's graphs (timm RepViT trunk, stride 16, SAM2's processor): read as SAM2's.
#[test]
fn the_edgetam_layout_matches_transformers() {
    matches_transformers("transformers_edgetam", "transformers", 64);
}

/// `decoder_provider` gives the prompt decoder a provider of its own: the policy applies to it as to
/// the encoder, and the session info reports each one's provider. The CPU build of ONNX Runtime has
/// no CUDA: a decoder asked to run there is refused (REQUIRE) or runs on the CPU with the reason
/// (FALLBACK) while the encoder stays where `provider` says, and clicks give the same masks.
#[test]
fn the_decoder_runs_on_a_provider_of_its_own() {
    let (enc, dec) = ("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx");
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let p = [SegPoint { x: 105.0, y: 105.0, label: 1 }];
    let plain = create_sam2(enc, dec).unwrap();
    let expected = click(&plain, Some(&desc), img.w, img.h, &p, None, 0).unwrap().mask;
    let info = session_info(plain.0);
    assert_eq!(info["decoder_provider"]["requested"], "CPU", "{info}");

    let mut o = default_options();
    o.decoder_provider = SegDecoderProvider::SEG_DECODER_PROVIDER_CUDA as i32;
    let err = create_sam2_with(enc, dec, Some(&o)).err().expect("no CUDA in the CPU build");
    println!("decoder on CUDA, require: {} {}", err.0.name(), err.1);
    assert_eq!(err.0, SegStatus::SEG_PROVIDER_UNAVAILABLE);
    assert!(err.1.starts_with("decoder: CUDA:0 could not be initialised"), "{}", err.1);

    o.provider_policy = SegProviderPolicy::SEG_PROVIDER_FALLBACK as i32;
    let s = create_sam2_with(enc, dec, Some(&o)).unwrap();
    let info = session_info(s.0);
    println!("decoder on CUDA, fallback: encoder {} / decoder {}", info["provider"], info["decoder_provider"]);
    assert_eq!((&info["provider"]["requested"], &info["provider"]["in_use"]), (&"CPU".into(), &"CPU".into()), "{info}");
    assert!(info["provider"]["fallback_reason"].is_null(), "{info}");
    assert_eq!((&info["decoder_provider"]["requested"], &info["decoder_provider"]["in_use"]), (&"CUDA:0".into(), &"CPU".into()), "{info}");
    assert!(info["decoder_provider"]["fallback_reason"].as_str().unwrap().contains("CUDA"), "{info}");
    assert_eq!(click(&s, Some(&desc), img.w, img.h, &p, None, 0).unwrap().mask, expected);

    o.decoder_provider = 6;
    let err = create_sam2_with(enc, dec, Some(&o)).err().expect("an unknown value");
    assert_eq!(err.0, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(err.1.contains("SegOptions.decoder_provider") && err.1.contains('6'), "{}", err.1);
}

/// Pictures smaller than the decoder's 64x64 low-res grid (48x36, 30x45): their masks are the
/// low-res logits shrunk as transformers' `post_process_masks` and the official predictor shrink
/// them (`F.interpolate(bilinear, align_corners=False)`, no antialiasing), against transformers'
/// own pipeline (`export_transformers.py --small-pictures`).
#[test]
fn masks_of_pictures_smaller_than_the_low_res_grid_match_transformers() {
    matches_transformers_in("transformers", "reference/small", "transformers", 64, 0.995);
}

/// A transformers-layout decoder traced plainly (`Sam2Model.forward` under PyTorch's non-dynamo
/// exporter, opset 18, the objects axis fixed at 1: `export_transformers.py --traced-plainly`) cannot
/// take the empty `[1,0,4]` box tensor of a click without a box: its masks are then undefined. segrt
/// finds that out at load (a check run) and refuses clicks without a box with
/// `SEG_MODEL_UNSUPPORTED`, saying why and what works; a box (with or without clicks) still works.
/// The project's own export takes zero boxes and keeps taking clicks alone.
#[test]
fn a_decoder_that_cannot_take_zero_boxes_refuses_clicks_without_a_box() {
    let img = load_rgb(&sam2_dir().join("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let bbox = SegBox { x1: 185.0, y1: 75.0, x2: 295.0, y2: 205.0 };
    let clicks = [SegPoint { x: 105.0, y: 105.0, label: 1 }];
    let plain = create_sam2("transformers/vision_encoder.onnx", "transformers_plain/prompt_encoder_mask_decoder.onnx").unwrap();
    let info = session_info(plain.0);
    println!("plainly traced: convention {}, takes_zero_boxes {}", info["convention"], info["interpretation"]["takes_zero_boxes"]);
    let refused = click(&plain, Some(&desc), img.w, img.h, &clicks, None, 0).err().unwrap_or((SegStatus::SEG_OK, String::new()));
    println!("plainly traced, a click without a box: {refused:?}");
    let with_box = click(&plain, Some(&desc), img.w, img.h, &clicks, Some(bbox), 0);
    println!("plainly traced, a click with a box: {:?}", with_box.as_ref().map(|o| o.result.num_masks).map_err(|e| e.clone()));
    let own = create_sam2("transformers/vision_encoder.onnx", "transformers/prompt_encoder_mask_decoder.onnx").unwrap();
    assert_eq!(session_info(own.0)["interpretation"]["takes_zero_boxes"], true);
    assert!(click(&own, Some(&desc), img.w, img.h, &clicks, None, 0).is_ok(), "the project's export takes clicks alone");
    assert_eq!(refused.0, SegStatus::SEG_MODEL_UNSUPPORTED, "{}", refused.1);
    assert!(refused.1.contains("cannot take a prompt without a box") && refused.1.contains("Give a box"), "{}", refused.1);
    assert!(with_box.is_ok(), "a box works on it");
}
