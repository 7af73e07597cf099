//! Many prompts in one call (`seg_sam2_segment_prompts`) through the C ABI, on the tiny fixtures: the
//! masks and scores equal single `seg_run_sam2_points` calls pixel for pixel, on a decoder with a
//! prompt batch axis and on transformers' objects axis (fewer decoder runs) and on fixed-batch
//! decoders (one run per prompt); chunks
//! follow the `max_memory_bytes` budget; bad input is refused before anything runs and nothing is
//! written; a cancelled call writes nothing and progress ends at 1.0.

mod common;

use std::ffi::c_void;
use std::ptr;

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

const BATCHED: (&str, &str) = ("sam2_tiny_sam2onnx_encoder.onnx", "sam2_tiny_sam2onnx_batched_decoder.onnx");
/// transformers' layout: prompts batch over its objects axis (a box input of its own).
const OBJECTS: (&str, &str) = ("transformers/vision_encoder.onnx", "transformers/prompt_encoder_mask_decoder.onnx");
const FIXED: [(&str, &str); 3] = [
    ("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx"),
    ("sam2_tiny_sam2onnx_encoder.onnx", "sam2_tiny_sam2onnx_decoder.onnx"),
    ("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_origsize_decoder.onnx"),
];

/// A prompt as a test writes it: its points and optional box.
#[derive(Clone)]
struct P {
    points: Vec<SegPoint>,
    bbox: Option<SegBox>,
}

fn pt(x: f32, y: f32, label: i32) -> SegPoint {
    SegPoint { x, y, label }
}
fn bx(x1: f32, y1: f32, x2: f32, y2: f32) -> SegBox {
    SegBox { x1, y1, x2, y2 }
}

/// Boxes of a detector, single clicks, a box with a click and a two-click prompt on the 320x240
/// fixture image, mixed so that prompts of 1, 2 and 3 model points interleave.
fn station_prompts() -> Vec<P> {
    let b = |x1, y1, x2, y2| P { points: vec![], bbox: Some(bx(x1, y1, x2, y2)) };
    let c = |x, y| P { points: vec![pt(x, y, 1)], bbox: None };
    vec![
        b(10.0, 10.0, 120.0, 110.0),
        c(105.0, 105.0),
        b(150.0, 20.0, 300.0, 200.0),
        P { points: vec![pt(200.0, 120.0, 1)], bbox: Some(bx(150.0, 60.0, 260.0, 180.0)) },
        b(0.0, 0.0, 320.0, 240.0),
        c(250.0, 60.0),
        P { points: vec![pt(60.0, 60.0, 1), pt(5.0, 5.0, 0)], bbox: None },
        b(40.0, 130.0, 160.0, 230.0),
        c(30.0, 200.0),
        b(100.5, 50.25, 180.75, 150.5),
        P { points: vec![pt(80.0, 180.0, 1)], bbox: Some(bx(20.0, 120.0, 170.0, 235.0)) },
        b(200.0, 150.0, 310.0, 235.0),
    ]
}

fn records(prompts: &[P]) -> Vec<SegSam2Prompt> {
    prompts
        .iter()
        .map(|p| SegSam2Prompt {
            points: if p.points.is_empty() { ptr::null() } else { p.points.as_ptr() },
            n_points: p.points.len(),
            bbox: p.bbox.unwrap_or(bx(0.0, 0.0, 0.0, 0.0)),
            has_box: p.bbox.is_some() as u32,
            reserved: 0,
        })
        .collect()
}

fn info() -> SegSam2PromptsInfo {
    SegSam2PromptsInfo { struct_size: std::mem::size_of::<SegSam2PromptsInfo>() as u32, ..Default::default() }
}

/// The outputs of a many-prompts call (masks pre-filled with 0x33, scores with -1).
struct Many {
    status: SegStatus,
    message: String,
    masks: Vec<Vec<u8>>,
    scores: Vec<f32>,
    info: SegSam2PromptsInfo,
}

fn many(s: &Session, img: Option<&SegImage>, (w, h): (usize, usize), recs: &[SegSam2Prompt], control: *mut SegCallControl) -> Many {
    let mut masks: Vec<Vec<u8>> = recs.iter().map(|_| vec![0x33u8; w * h]).collect();
    let descs: Vec<SegMask> =
        masks.iter_mut().map(|m| SegMask { data: m.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 }).collect();
    let mut scores = vec![-1f32; recs.len()];
    let mut inf = info();
    let status = unsafe {
        seg_sam2_segment_prompts(
            s.0,
            img.map_or(ptr::null(), |i| i as *const _),
            recs.as_ptr(),
            std::mem::size_of::<SegSam2Prompt>(),
            recs.len(),
            descs.as_ptr(),
            scores.as_mut_ptr(),
            &mut inf,
            control,
        )
    };
    let message = if status == SegStatus::SEG_OK { String::new() } else { last_error() };
    Many { status, message, masks, scores, info: inf }
}

/// One `seg_run_sam2_points` call per prompt: each mask and score.
fn singles(s: &Session, img: &SegImage, (w, h): (usize, usize), prompts: &[P]) -> Vec<(Vec<u8>, f32)> {
    prompts
        .iter()
        .map(|p| {
            let mut mask = vec![0u8; w * h];
            let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
            let mut score = f32::NAN;
            let st = unsafe {
                seg_run_sam2_points(
                    s.0,
                    img,
                    if p.points.is_empty() { ptr::null() } else { p.points.as_ptr() },
                    p.points.len(),
                    p.bbox.as_ref().map_or(ptr::null(), |b| b as *const _),
                    ptr::null(),
                    0,
                    0,
                    &m,
                    &mut score,
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            };
            assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
            (mask, score)
        })
        .collect()
}

fn assert_equal_to_singles(name: &str, out: &Many, want: &[(Vec<u8>, f32)]) {
    assert_eq!(out.status, SegStatus::SEG_OK, "{name}: {}", out.message);
    for (i, ((mask, score), (m, sc))) in want.iter().zip(out.masks.iter().zip(&out.scores)).enumerate() {
        let differ = mask.iter().zip(m).filter(|(a, b)| a != b).count();
        assert_eq!(differ, 0, "{name}: prompt {i}: {differ} pixels differ from the single call");
        assert!(mask.contains(&255), "{name}: prompt {i}: an empty mask proves little");
        assert!((score - sc).abs() <= 1e-5, "{name}: prompt {i}: score {sc} vs the single call's {score}");
    }
}

fn fixture() -> Rgb {
    load_rgb(&sam2_dir().join("reference/img0.png"))
}

#[test]
fn many_prompts_equal_single_calls_in_fewer_decoder_runs_where_the_decoder_batches() {
    let img = fixture();
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let prompts = station_prompts();
    let recs = records(&prompts);
    for (encoder, decoder) in [BATCHED, OBJECTS].into_iter().chain(FIXED) {
        let s = create_sam2(encoder, decoder).unwrap();
        let want = singles(&s, &desc, (img.w, img.h), &prompts);
        // the image is given: the embedding of the single calls is reused
        let out = many(&s, Some(&desc), (img.w, img.h), &recs, ptr::null_mut());
        assert_equal_to_singles(decoder, &out, &want);
        let i = out.info;
        println!("{decoder}: {} prompts in {} decoder runs (batch {}), decoder {:.1} ms", i.prompts, i.decoder_runs, i.batch, i.decoder_ms);
        assert_eq!(i.prompts, 12);
        assert_eq!(i.encoder_reused, 1, "{decoder}: the image was encoded by the single calls");
        if decoder == BATCHED.1 {
            // prompts of 1, 2 and 3 model points: one run each
            assert_eq!((i.decoder_runs, i.batch, i.batched), (3, 7, 1), "{decoder}");
        } else if decoder == OBJECTS.1 {
            // boxes, clicks (+ the padding point), a box with a click, two clicks: one run each
            assert_eq!((i.decoder_runs, i.batch, i.batched), (4, 6, 1), "{decoder}");
        } else {
            assert_eq!((i.decoder_runs, i.batch, i.batched), (12, 1, 0), "{decoder}");
        }
        // NULL = the image set last, on a fresh session: the encoder runs once, same masks.
        let fresh = create_sam2(encoder, decoder).unwrap();
        assert_eq!(unsafe { seg_sam2_set_image(fresh.0, &desc, ptr::null_mut(), ptr::null_mut()) }, SegStatus::SEG_OK);
        let out = many(&fresh, None, (img.w, img.h), &recs, ptr::null_mut());
        assert_equal_to_singles(decoder, &out, &want);
    }
}

#[test]
fn chunks_follow_the_memory_budget_and_give_the_same_masks() {
    let img = fixture();
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let prompts: Vec<P> = station_prompts().into_iter().filter(|p| p.points.is_empty()).collect(); // 6 boxes
    let recs = records(&prompts);
    let s = create_sam2(BATCHED.0, BATCHED.1).unwrap();
    let want = singles(&s, &desc, (img.w, img.h), &prompts);
    // 64x64 low-res logits: a prompt costs 147456 bytes in a run, 16384 kept; 6 kept + 2 per run fit
    let mut o = default_options();
    o.max_memory_bytes = 6 * 16384 + 2 * 147456 + 1000;
    let (e, d) = (cstr(sam2_dir().join(BATCHED.0).to_str().unwrap()), cstr(sam2_dir().join(BATCHED.1).to_str().unwrap()));
    let mut raw = ptr::null_mut();
    assert_eq!(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &o, &mut raw) }, SegStatus::SEG_OK, "{}", last_error());
    let small = Session(raw);
    let out = many(&small, Some(&desc), (img.w, img.h), &recs, ptr::null_mut());
    assert_equal_to_singles("budget", &out, &want);
    assert_eq!((out.info.decoder_runs, out.info.batch), (3, 2));
    // a budget that holds the kept masks but not one run: refused before anything runs
    o.max_memory_bytes = 6 * 16384 + 1000;
    let mut raw = ptr::null_mut();
    assert_eq!(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &o, &mut raw) }, SegStatus::SEG_OK, "{}", last_error());
    let tiny = Session(raw);
    let out = many(&tiny, Some(&desc), (img.w, img.h), &recs, ptr::null_mut());
    assert_eq!(out.status, SegStatus::SEG_OUT_OF_MEMORY, "{}", out.message);
    assert!(out.message.contains("max_memory_bytes"), "{}", out.message);
    assert!(out.masks.iter().all(|m| m.iter().all(|v| *v == 0x33)));
}

#[test]
fn bad_input_is_refused_before_anything_runs_and_nothing_is_written() {
    let img = fixture();
    let (w, h) = (img.w, img.h);
    let desc = image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let s = create_sam2(BATCHED.0, BATCHED.1).unwrap();
    let base = station_prompts();
    let good = records(&base[..3]);
    let with = |i: usize, f: &dyn Fn(&mut SegSam2Prompt)| {
        let mut r = good.clone();
        f(&mut r[i]);
        r
    };
    let nan = [pt(f32::NAN, 10.0, 1)];
    let inf = [pt(10.0, f32::INFINITY, 1)];
    let label2 = [pt(1.0, 1.0, 2)];
    let invalid = SegStatus::SEG_INVALID_ARGUMENT;
    let cases: Vec<(&str, Vec<SegSam2Prompt>, &str)> = vec![
        ("no point and no box", with(1, &|p| p.n_points = 0), "prompt 1: no prompt"),
        ("x0 > x1", with(0, &|p| p.bbox = bx(100.0, 10.0, 50.0, 90.0)), "prompt 0: box"),
        ("NaN", with(1, &|p| p.points = nan.as_ptr()), "prompt 1: point 0 (NaN"),
        ("Inf", with(1, &|p| p.points = inf.as_ptr()), "not a finite"),
        ("NaN box", with(0, &|p| p.bbox.y2 = f32::NAN), "not a finite"),
        ("outside", with(0, &|p| p.bbox.x2 = 321.0), "outside"),
        ("has_box 2", with(1, &|p| p.has_box = 2), "has_box must be 0 or 1"),
        ("reserved", with(0, &|p| p.reserved = 1), "reserved 0"),
        ("label 2", with(1, &|p| p.points = label2.as_ptr()), "label 2"),
        ("too many points", with(1, &|p| p.n_points = 2000), "at most 1024"),
    ];
    let mut cases: Vec<(&str, Vec<SegSam2Prompt>, &str, SegStatus)> = cases.into_iter().map(|(n, r, w)| (n, r, w, invalid)).collect();
    cases.push(("NULL points", with(1, &|p| p.points = ptr::null()), "prompt 1: points", SegStatus::SEG_NULL_POINTER));
    for (name, recs, why, status) in &cases {
        let out = many(&s, Some(&desc), (w, h), recs, ptr::null_mut());
        assert_eq!(out.status, *status, "{name}: {}", out.message);
        assert!(out.message.contains(why), "{name}: {}", out.message);
        assert!(out.masks.iter().all(|m| m.iter().all(|v| *v == 0x33)), "{name}: a mask was written");
        assert!(out.scores.iter().all(|v| *v == -1.0), "{name}: a score was written");
        assert_eq!(out.info.decoder_runs, 0, "{name}: info written");
    }

    // The arguments of the call itself.
    let mut masks: Vec<Vec<u8>> = (0..3).map(|_| vec![0x33u8; w * h]).collect();
    let descs: Vec<SegMask> =
        masks.iter_mut().map(|m| SegMask { data: m.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 }).collect();
    let mut scores = [-1f32; 3];
    let scores_ptr = scores.as_mut_ptr();
    let mut inf_out = info();
    let size = std::mem::size_of::<SegSam2Prompt>();
    let call = |prompts: *const SegSam2Prompt, prompt_size: usize, n: usize, out: *const SegMask, inf: *mut SegSam2PromptsInfo| {
        let st = unsafe { seg_sam2_segment_prompts(s.0, &desc, prompts, prompt_size, n, out, scores_ptr, inf, ptr::null_mut()) };
        (st, last_error())
    };
    let mut wrong_size: Vec<Vec<u8>> = (0..3).map(|_| vec![0x33u8; 100 * 100]).collect();
    let wrong: Vec<SegMask> = wrong_size.iter_mut().map(|m| SegMask { data: m.as_mut_ptr(), width: 100, height: 100, stride: 0 }).collect();
    let mut bad_info = info();
    bad_info.struct_size = 3;
    let calls: Vec<(&str, (SegStatus, String), SegStatus, &str)> = vec![
        ("0 prompts", call(good.as_ptr(), size, 0, descs.as_ptr(), &mut inf_out), SegStatus::SEG_INVALID_ARGUMENT, "n_prompts is 0"),
        ("4097 prompts", call(good.as_ptr(), size, 4097, descs.as_ptr(), &mut inf_out), SegStatus::SEG_INVALID_ARGUMENT, "at most 4096"),
        ("NULL prompts", call(ptr::null(), size, 3, descs.as_ptr(), &mut inf_out), SegStatus::SEG_NULL_POINTER, "prompts"),
        ("NULL masks", call(good.as_ptr(), size, 3, ptr::null(), &mut inf_out), SegStatus::SEG_NULL_POINTER, "out_masks"),
        (
            "masks of another size",
            call(good.as_ptr(), size, 3, wrong.as_ptr(), &mut inf_out),
            SegStatus::SEG_INVALID_ARGUMENT,
            "mask 0 is 100x100",
        ),
        (
            "prompt_size too small",
            call(good.as_ptr(), size - 1, 3, descs.as_ptr(), &mut inf_out),
            SegStatus::SEG_INVALID_ARGUMENT,
            "sizeof(SegSam2Prompt)",
        ),
        (
            "prompt_size x n",
            call(good.as_ptr(), usize::MAX / 2, 3, descs.as_ptr(), &mut inf_out),
            SegStatus::SEG_INVALID_ARGUMENT,
            "address space",
        ),
        (
            "n beyond the address space",
            call(good.as_ptr(), size, usize::MAX / size + 1, descs.as_ptr(), &mut inf_out),
            SegStatus::SEG_INVALID_ARGUMENT,
            "address space",
        ),
        (
            "info struct_size",
            call(good.as_ptr(), size, 3, descs.as_ptr(), &mut bad_info),
            SegStatus::SEG_INVALID_ARGUMENT,
            "SegSam2PromptsInfo.struct_size",
        ),
    ];
    for (name, (st, msg), want, why) in calls {
        assert_eq!(st, want, "{name}: {msg}");
        assert!(msg.contains(why), "{name}: {msg}");
    }
    assert!(masks.iter().chain(&wrong_size).all(|m| m.iter().all(|v| *v == 0x33)), "a mask was written");
    assert!(scores.iter().all(|v| *v == -1.0) && inf_out.decoder_runs == 0);

    // A newer host's longer record: accepted when the bytes beyond this library's are zero.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Newer {
        prompt: SegSam2Prompt,
        future: u64,
    }
    let mut newer: Vec<Newer> = good.iter().map(|p| Newer { prompt: *p, future: 0 }).collect();
    let nsize = std::mem::size_of::<Newer>();
    let st = unsafe {
        seg_sam2_segment_prompts(
            s.0,
            &desc,
            newer.as_ptr().cast(),
            nsize,
            3,
            descs.as_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    newer[2].future = 7;
    let st = unsafe {
        seg_sam2_segment_prompts(
            s.0,
            &desc,
            newer.as_ptr().cast(),
            nsize,
            3,
            descs.as_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(last_error().contains("SegSam2Prompt record 2"), "{}", last_error());

    // No image given and none set.
    let fresh = create_sam2(BATCHED.0, BATCHED.1).unwrap();
    let out = many(&fresh, None, (w, h), &good, ptr::null_mut());
    assert_eq!(out.status, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(out.message.contains("no image"), "{}", out.message);
}

/// A progress callback that records (stage, fraction) and stops the call at its `stop_at`-th report.
struct Recorder {
    seen: std::sync::Mutex<Vec<(i32, f32)>>,
    stop_at: usize,
}
unsafe extern "C" fn record(stage: i32, fraction: f32, user_data: *mut c_void) -> i32 {
    let r = unsafe { &*(user_data as *const Recorder) };
    let mut seen = r.seen.lock().unwrap();
    seen.push((stage, fraction));
    (seen.len() < r.stop_at) as i32
}

#[test]
fn a_cancelled_call_writes_nothing_and_progress_ends_at_one() {
    let img = fixture();
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let prompts = station_prompts();
    let recs = records(&prompts);
    let prompts_stage = SegStage::SEG_STAGE_PROMPTS as i32;
    for (encoder, decoder) in [BATCHED, FIXED[0]] {
        let s = create_sam2(encoder, decoder).unwrap();
        assert_eq!(unsafe { seg_sam2_set_image(s.0, &desc, ptr::null_mut(), ptr::null_mut()) }, SegStatus::SEG_OK);
        // stopped at the second decoder run: nothing written, not even the masks decoded before
        let control = Control::new();
        let recorder = Recorder { seen: Default::default(), stop_at: 2 };
        unsafe { seg_control_set_progress(control.0, Some(record), &recorder as *const Recorder as *mut c_void) };
        let out = many(&s, None, (img.w, img.h), &recs, control.0);
        assert_eq!(out.status, SegStatus::SEG_CANCELLED, "{decoder}: {}", out.message);
        assert!(out.masks.iter().all(|m| m.iter().all(|v| *v == 0x33)), "{decoder}: a cancelled call wrote a mask");
        assert!(out.scores.iter().all(|v| *v == -1.0) && out.info.decoder_runs == 0, "{decoder}: a cancelled call wrote outputs");
        // a full call: increasing fractions from 0, one report per decoder run, ending at 1.0
        let control = Control::new();
        let recorder = Recorder { seen: Default::default(), stop_at: usize::MAX };
        unsafe { seg_control_set_progress(control.0, Some(record), &recorder as *const Recorder as *mut c_void) };
        let out = many(&s, None, (img.w, img.h), &recs, control.0);
        assert_eq!(out.status, SegStatus::SEG_OK, "{decoder}: {}", out.message);
        let fractions: Vec<f32> = recorder.seen.lock().unwrap().iter().filter(|(s, _)| *s == prompts_stage).map(|(_, f)| *f).collect();
        assert_eq!(fractions.len(), out.info.decoder_runs as usize + 1, "{decoder}: {fractions:?}");
        assert!(fractions[0] == 0.0 && *fractions.last().unwrap() == 1.0, "{decoder}: {fractions:?}");
        assert!(fractions.windows(2).all(|w| w[0] < w[1]), "{decoder}: {fractions:?}");
        // the control left cancelled: the next call under it is cancelled at once
        unsafe { seg_control_cancel(control.0) };
        let out = many(&s, None, (img.w, img.h), &recs, control.0);
        assert_eq!(out.status, SegStatus::SEG_CANCELLED);
        assert!(out.masks.iter().all(|m| m.iter().all(|v| *v == 0x33)));
    }
}

/// Every prompt record size and count at its extremes: an array no address space holds (or a record too
/// small) is refused with nothing written, never multiplied into a wild address; an array a buffer
/// holds is read at the caller's stride (a longer record's unknown bytes zero), within the 1..=4096 limit.
#[test]
fn prompt_record_sizes_at_their_extremes_are_refused_or_honoured() {
    let img = fixture();
    let (w, h) = (img.w, img.h);
    let desc = image_desc(&img.data, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let s = create_sam2(BATCHED.0, BATCHED.1).unwrap();
    let record = std::mem::size_of::<SegSam2Prompt>();
    const BUFFER: usize = 1 << 16;
    let mut masks: Vec<Vec<u8>> = (0..192).map(|_| vec![0x33u8; w * h]).collect();
    let descs: Vec<SegMask> =
        masks.iter_mut().map(|m| SegMask { data: m.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 }).collect();
    let (mut refused, mut read) = (0, 0);
    for (size, count) in extreme_record_sizes(record) {
        let Some(accepted) = record_array_expectation(record, size, count, BUFFER) else { continue };
        // `count` box prompts at a stride of `size`, the bytes beyond each record zero
        let mut buffer = vec![0u8; BUFFER + 8];
        let base = buffer.as_mut_ptr().align_offset(8); // record 0 aligned, as a host's array is
        if accepted && count <= descs.len() {
            for k in 0..count {
                let p = SegSam2Prompt {
                    points: ptr::null(),
                    n_points: 0,
                    bbox: bx(10.0 + k as f32 % 50.0, 10.0, 200.0, 150.0),
                    has_box: 1,
                    reserved: 0,
                };
                unsafe { ptr::write_unaligned(buffer.as_mut_ptr().add(base + k * size).cast::<SegSam2Prompt>(), p) };
            }
        }
        let mut inf = info();
        let st = unsafe {
            seg_sam2_segment_prompts(
                s.0,
                &desc,
                buffer.as_ptr().add(base).cast(),
                size,
                count,
                descs.as_ptr(),
                ptr::null_mut(),
                &mut inf,
                ptr::null_mut(),
            )
        };
        let what = format!("prompt_size {size} x n_prompts {count}");
        if !accepted || count == 0 || count > 4096 {
            assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "{what}: {}", last_error());
            let e = last_error();
            assert!(e.contains("SegSam2Prompt") || e.contains("n_prompts is 0") || e.contains("at most 4096"), "{what}: {e}");
            assert_eq!(inf.decoder_runs, 0, "{what}: a refused call wrote its info");
            refused += 1;
        } else if count <= descs.len() {
            assert_eq!(st, SegStatus::SEG_OK, "{what}: {}", last_error());
            assert_eq!(inf.prompts as usize, count, "{what}");
            read += 1;
        }
    }
    println!("prompt record sizes at their extremes: {refused} pairs refused, {read} read");
    assert!(refused > 40 && read > 2, "{refused} refused, {read} read");
}
