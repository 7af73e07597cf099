//! Reference-based segmentation through the C ABI: teach (`seg_reference_add`), find the best match
//! and every instance, save and load, and the bad input a host can give (nothing written on an
//! error). On the colour oracle encoder and the geometric oracle decoder, as tests/sam2_reference.rs.

mod common;

use std::ptr;

use common::*;
use segrt::ffi::*;

const W: usize = DISC_SCENE;
const H: usize = DISC_SCENE;
const RED: [u8; 3] = [220, 30, 30];
const BLUE: [u8; 3] = [30, 40, 220];

fn oracle() -> Session {
    create_sam2("sam2_colour_oracle_encoder.onnx", "sam2_oracle_decoder.onnx").unwrap()
}

fn rgb(px: &[u8]) -> SegImage {
    image_desc(px, W, H, 0, SegPixelFormat::SEG_FORMAT_RGB24)
}

fn mask_desc(m: &mut [u8], w: usize, h: usize) -> SegMask {
    SegMask { data: m.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 }
}

struct Reference(*mut SegReference);
impl Drop for Reference {
    fn drop(&mut self) {
        assert_eq!(unsafe { seg_reference_free(self.0) }, SegStatus::SEG_OK);
    }
}

fn new_reference() -> Reference {
    let mut r = ptr::null_mut();
    assert_eq!(unsafe { seg_reference_create(&mut r) }, SegStatus::SEG_OK, "{}", last_error());
    Reference(r)
}

fn teach(r: &Reference, s: &Session, image: &[u8], mask: &mut [u8]) -> SegStatus {
    let img = rgb(image);
    let m = mask_desc(mask, W, H);
    unsafe { seg_reference_add(r.0, s.0, &img, &m, ptr::null_mut()) }
}

fn taught(s: &Session) -> Reference {
    let r = new_reference();
    let st = teach(&r, s, &scene(&[((150, 150), RED), ((380, 380), BLUE)]), &mut disc_mask((150, 150)));
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    r
}

fn options(mode: SegFindMode) -> SegFindOptions {
    let mut o = SegFindOptions { struct_size: std::mem::size_of::<SegFindOptions>() as u32, ..SegFindOptions::defaults() };
    o.threshold = f32::NAN; // overwritten by the defaults below, as a C host's zeroed struct would be
    assert_eq!(unsafe { seg_find_options_default(&mut o) }, SegStatus::SEG_OK);
    o.mode = mode as i32;
    o
}

#[derive(Debug)]
struct Found {
    mask: Vec<u8>,
    labels: Vec<u16>,
    records: Vec<SegFound>,
    count: usize,
    info: SegFindInfo,
}

fn find(r: &Reference, s: &Session, image: &[u8], o: &SegFindOptions, capacity: usize) -> Result<Found, (SegStatus, String, Box<Found>)> {
    let mut f = Found {
        mask: vec![7; W * H],
        labels: vec![7; W * H],
        records: vec![SegFound::default(); capacity],
        count: 999,
        info: SegFindInfo { struct_size: std::mem::size_of::<SegFindInfo>() as u32, ..Default::default() },
    };
    let img = rgb(image);
    let m = mask_desc(&mut f.mask, W, H);
    let l = SegLabelImage { data: f.labels.as_mut_ptr(), width: W as i32, height: H as i32, stride: 0 };
    let all = o.mode == SegFindMode::SEG_FIND_ALL as i32;
    let st = unsafe {
        seg_reference_find(
            r.0,
            s.0,
            &img,
            o,
            &m,
            if all { &l } else { ptr::null() },
            f.records.as_mut_ptr(),
            std::mem::size_of::<SegFound>(),
            capacity,
            &mut f.count,
            &mut f.info,
            ptr::null_mut(),
        )
    };
    if st == SegStatus::SEG_OK {
        Ok(f)
    } else {
        Err((st, last_error(), Box::new(f)))
    }
}

fn iou(a: &[u8], b: &[u8]) -> f64 {
    let both = a.iter().zip(b).filter(|(x, y)| **x != 0 && **y != 0).count();
    let any = a.iter().zip(b).filter(|(x, y)| **x != 0 || **y != 0).count();
    both as f64 / any.max(1) as f64
}

#[test]
fn taught_once_the_object_is_found_present_or_absent_and_every_copy_gets_a_label() {
    let s = oracle();
    let r = taught(&s);
    let best = options(SegFindMode::SEG_FIND_BEST);
    let f = find(&r, &s, &scene(&[((340, 300), RED), ((120, 400), BLUE)]), &best, 4).unwrap();
    assert_eq!((f.count, f.info.found), (1, 1));
    let rec = f.records[0];
    assert_eq!((rec.id, rec.present), (1, 1), "{rec:?}");
    assert!(iou(&f.mask, &disc_mask((340, 300))) > 0.8, "IoU {}", iou(&f.mask, &disc_mask((340, 300))));
    assert!(rec.x0 < 340 && rec.x1 > 340 && rec.y0 < 300 && rec.y1 > 300, "{rec:?}");
    assert_eq!(f.info.refinement, SegRefinement::SEG_REFINEMENT_DONE as i32);
    assert_eq!(f.info.decoder_runs, 2);
    // without the object: one record, not present, an all-0 mask
    let f = find(&r, &s, &scene(&[((120, 400), BLUE)]), &best, 4).unwrap();
    assert_eq!((f.count, f.records[0].present), (1, 0));
    assert!(f.mask.iter().all(|v| *v == 0));

    let centres = [(100, 100), (300, 120), (200, 330), (420, 420)];
    let mut discs: Vec<_> = centres.iter().map(|c| (*c, RED)).collect();
    discs.push(((420, 200), BLUE));
    let f = find(&r, &s, &scene(&discs), &options(SegFindMode::SEG_FIND_ALL), 16).unwrap();
    assert_eq!(f.count, 4, "{:?}", &f.records[..f.count]);
    for c in centres {
        let at = f.labels[c.1 * W + c.0];
        assert!(at > 0, "no instance at {c:?}");
        let rec = f.records[at as usize - 1];
        assert_eq!((rec.id, rec.present), (at as u32, 1));
    }
    assert_eq!(f.labels[200 * W + 420], 0, "the blue disc is not an instance");
}

#[test]
fn a_saved_reference_loads_and_finds_the_same_masks() {
    let s = oracle();
    let r = taught(&s);
    let dir = std::env::temp_dir().join(format!("segrt-reference-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("part.segrtref");
    let c_path = cstr(path.to_str().unwrap());
    assert_eq!(unsafe { seg_reference_save(r.0, c_path.as_ptr()) }, SegStatus::SEG_OK, "{}", last_error());
    let mut loaded = ptr::null_mut();
    assert_eq!(unsafe { seg_reference_load(s.0, c_path.as_ptr(), &mut loaded) }, SegStatus::SEG_OK, "{}", last_error());
    let loaded = Reference(loaded);
    let image = scene(&[((340, 300), RED), ((200, 100), RED), ((120, 400), BLUE)]);
    for mode in [SegFindMode::SEG_FIND_BEST, SegFindMode::SEG_FIND_ALL] {
        let a = find(&r, &s, &image, &options(mode), 8).unwrap();
        let b = find(&loaded, &s, &image, &options(mode), 8).unwrap();
        assert_eq!(a.mask, b.mask, "{mode:?}");
        assert_eq!(a.labels, b.labels, "{mode:?}");
        assert_eq!(a.records, b.records, "{mode:?}");
    }

    // a damaged file, a missing one, one of another model: a status, and *out_reference not written
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    let damaged = dir.join("damaged.segrtref");
    std::fs::write(&damaged, &bytes).unwrap();
    let other = create_sam2("sam2_oracle_encoder.onnx", "sam2_oracle_decoder.onnx").unwrap();
    let missing = dir.join("missing.segrtref");
    for (session, file, want) in [
        (&s, &damaged, SegStatus::SEG_MODEL_INVALID),
        (&s, &missing, SegStatus::SEG_MODEL_NOT_FOUND),
        (&other, &path, SegStatus::SEG_MODEL_UNSUPPORTED),
    ] {
        let mut out = 0x1234usize as *mut SegReference;
        let c = cstr(file.to_str().unwrap());
        assert_eq!(unsafe { seg_reference_load(session.0, c.as_ptr(), &mut out) }, want, "{}: {}", file.display(), last_error());
        assert_eq!(out as usize, 0x1234, "out_reference written on failure");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_gets_a_status_and_nothing_is_written() {
    let s = oracle();
    let image = scene(&[((340, 300), RED)]);
    let best = options(SegFindMode::SEG_FIND_BEST);
    let untouched = |f: &Found| f.mask.iter().all(|v| *v == 7) && f.count == 999 && f.records.iter().all(|r| r.id == 0);

    // a find before any example
    let empty = new_reference();
    let (st, msg, f) = find(&empty, &s, &image, &best, 4).err().unwrap();
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("no example yet"), "{msg}");
    assert!(untouched(&f));
    let c = cstr(std::env::temp_dir().join("segrt-never-written.segrtref").to_str().unwrap());
    assert_eq!(unsafe { seg_reference_save(empty.0, c.as_ptr()) }, SegStatus::SEG_INVALID_ARGUMENT);

    // empty, full and wrongly sized masks leave the reference without an example
    let teach_img = scene(&[((150, 150), RED)]);
    for mut mask in [vec![0u8; W * H], vec![255u8; W * H]] {
        assert_eq!(teach(&empty, &s, &teach_img, &mut mask), SegStatus::SEG_INVALID_ARGUMENT);
    }
    let mut small = vec![255u8; (W / 2) * H];
    let m = mask_desc(&mut small, W / 2, H);
    let img = rgb(&teach_img);
    assert_eq!(unsafe { seg_reference_add(empty.0, s.0, &img, &m, ptr::null_mut()) }, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(last_error().contains("the image's size"), "{}", last_error());
    assert_eq!(find(&empty, &s, &image, &best, 4).err().unwrap().0, SegStatus::SEG_INVALID_ARGUMENT);

    // options: reserved fields, an unknown mode, a flag that is not 0/1, a struct from the future
    let r = taught(&s);
    let mut bad = vec![];
    let mut o = best;
    o.reserved[1] = 1;
    bad.push((o, "reserved"));
    let mut o = best;
    o.mode = 7;
    bad.push((o, "SegFindMode"));
    let mut o = best;
    o.refine = 2;
    bad.push((o, "refine"));
    let mut o = best;
    o.threshold = f32::INFINITY;
    bad.push((o, "threshold"));
    for (o, why) in bad {
        let (st, msg, f) = find(&r, &s, &image, &o, 4).err().unwrap();
        assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "{why}");
        assert!(msg.contains(why), "{why}: {msg}");
        assert!(untouched(&f), "{why}: output written");
    }

    // too few records: the count says how many, nothing else is written
    let mut discs: Vec<_> = [(100, 100), (300, 120), (200, 330)].iter().map(|c| (*c, RED)).collect();
    discs.push(((420, 420), BLUE));
    let (st, _, f) = find(&r, &s, &scene(&discs), &options(SegFindMode::SEG_FIND_ALL), 2).err().unwrap();
    assert_eq!(st, SegStatus::SEG_BUFFER_TOO_SMALL);
    assert_eq!(f.count, 3);
    assert!(f.mask.iter().all(|v| *v == 7) && f.labels.iter().all(|v| *v == 7) && f.records.iter().all(|r| r.id == 0));

    // handles of the wrong kind: a session as the reference, a reference freed twice
    let as_reference = Reference(s.0.cast());
    let (st, _, _) = find(&as_reference, &s, &image, &best, 4).err().unwrap();
    assert_eq!(st, SegStatus::SEG_WRONG_SESSION_KIND);
    assert_eq!(unsafe { seg_reference_free(s.0.cast()) }, SegStatus::SEG_WRONG_SESSION_KIND);
    std::mem::forget(as_reference);
    let gone = new_reference();
    assert_eq!(unsafe { seg_reference_free(gone.0) }, SegStatus::SEG_OK);
    assert_eq!(unsafe { seg_reference_free(gone.0) }, SegStatus::SEG_INVALID_HANDLE);
    std::mem::forget(gone);
    assert_eq!(unsafe { seg_free(r.0.cast()) }, SegStatus::SEG_WRONG_SESSION_KIND, "seg_free refuses a reference");
}

/// A reference taught on a SAM2 video session uses the memory approach: taught, found, saved and
/// loaded through the same exports, on the official predictor's recorded case (a two-frame video:
/// models/sam2/video/reference/memory/); a session of the other kind is refused with nothing written.
#[test]
fn a_reference_taught_on_a_video_session_finds_with_the_memory_approach() {
    let dir = repo().join("models/sam2/video/reference/memory");
    let index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    let case = index["cases"].as_array().unwrap().iter().find(|c| c["name"] == "ellipse_0_to_7").unwrap().clone();
    let png = |name: &serde_json::Value| image::open(dir.join(name.as_str().unwrap())).unwrap();
    let reference_frame = png(&case["references"][0]["frame"]).to_rgb8();
    let (w, h) = (reference_frame.width() as usize, reference_frame.height() as usize);
    let mut reference_mask = png(&case["references"][0]["mask"]).to_luma8().into_raw();
    let new_frame = png(&case["new_frame"]).to_rgb8().into_raw();
    let official = png(&case["mask"]).to_luma8().into_raw();

    let video_dir = cstr(repo().join("models/sam2/video").to_str().unwrap());
    let mut v = ptr::null_mut();
    assert_eq!(unsafe { seg_create_sam2_video(video_dir.as_ptr(), ptr::null(), &mut v) }, SegStatus::SEG_OK, "{}", last_error());
    let video = Session(v);
    let r = new_reference();
    let img = image_desc(reference_frame.as_raw(), w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let m = mask_desc(&mut reference_mask, w, h);
    assert_eq!(unsafe { seg_reference_add(r.0, video.0, &img, &m, ptr::null_mut()) }, SegStatus::SEG_OK, "{}", last_error());

    let run = |r: &Reference, s: &Session, o: &SegFindOptions| {
        let mut out = vec![7u8; w * h];
        let mut record = SegFound::default();
        let (mut n, mut info) = (999usize, SegFindInfo { struct_size: std::mem::size_of::<SegFindInfo>() as u32, ..Default::default() });
        let img = image_desc(&new_frame, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
        let m = mask_desc(&mut out, w, h);
        let st = unsafe {
            seg_reference_find(
                r.0,
                s.0,
                &img,
                o,
                &m,
                ptr::null(),
                &mut record,
                std::mem::size_of::<SegFound>(),
                1,
                &mut n,
                &mut info,
                ptr::null_mut(),
            )
        };
        (st, out, record, n, info)
    };
    let mut o = options(SegFindMode::SEG_FIND_BEST);
    o.threshold = 0.5; // the official predictor's decision: object score logit > 0
    let (st, found, record, n, info) = run(&r, &video, &o);
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    assert_eq!((n, record.present, info.decoder_runs), (1, 1, 1));
    assert_eq!(info.refinement, SegRefinement::SEG_REFINEMENT_NOT_SUPPORTED as i32);
    let same = found.iter().zip(&official).filter(|(a, b)| (**a != 0) == (**b != 0)).count() as f64 / (w * h) as f64;
    assert!(same >= 0.995, "{same}");
    assert_eq!(record.area as usize, found.iter().filter(|v| **v != 0).count());

    // every instance is the image approach's: refused, nothing written
    let (st, out, _, n, _) = run(&r, &video, &options(SegFindMode::SEG_FIND_ALL));
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(out.iter().all(|v| *v == 7) && n == 999);
    // an image session cannot use it
    let sam = oracle();
    let (st, out, _, _, _) = run(&r, &sam, &o);
    assert_eq!(st, SegStatus::SEG_MODEL_UNSUPPORTED, "{}", last_error());
    assert!(out.iter().all(|v| *v == 7));

    // saved, loaded on the video session, it finds the same mask; an image session refuses the file
    let file = std::env::temp_dir().join(format!("segrt-memory-reference-{}.segrtref", std::process::id()));
    let path = cstr(file.to_str().unwrap());
    assert_eq!(unsafe { seg_reference_save(r.0, path.as_ptr()) }, SegStatus::SEG_OK, "{}", last_error());
    let mut loaded = ptr::null_mut();
    assert_eq!(unsafe { seg_reference_load(video.0, path.as_ptr(), &mut loaded) }, SegStatus::SEG_OK, "{}", last_error());
    let loaded = Reference(loaded);
    assert_eq!(run(&loaded, &video, &o).1, found);
    let mut wrong = ptr::null_mut();
    assert_eq!(unsafe { seg_reference_load(sam.0, path.as_ptr(), &mut wrong) }, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(wrong.is_null());
    assert!(last_error().contains("video model"), "{}", last_error());
    let _ = std::fs::remove_file(&file);
}
