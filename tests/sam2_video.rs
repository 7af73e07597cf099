//! SAM2 video tracker (src/sam2/video/) against the official `SAM2VideoPredictor`'s outputs recorded
//! by models/sam2/video_reference.py in models/sam2/video/reference/: the reference's events are
//! replayed in order and every check compares low-res logits, masks at the video's 320x240,
//! object-present flags and object scores. Two scenarios: clicks (`reference/`: 3 clicks, propagation
//! over 14 frames with 2 objects, 1 correction) and boxes (`reference/box/`: a box + 2 clicks and a
//! box alone on frame 0, propagation over 10 frames, a box and a box + click as corrections).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use segrt::image::resize::{resize_pil_bicubic, resize_u8};
use segrt::options::ResizeFilter;
use segrt::sam2::video::{FrameMasks, Tracker, TrackerOptions, VideoModel};
use segrt::{ErrorKind, ImageView, Options, PixelFormat};
use serde_json::Value;

/// Max |low-res logit difference| allowed against the official predictor. The Python tracker on the
/// same modules sees 4.3e-6; the smallest rule ablation (bf16 storage) moves logits by 2.3e-5.
const LOGIT_TOL: f32 = 1e-5;
/// Max |object score logit difference| (as video_ort_tracker.py's SCORE_TOL): the flags say little
/// where an object is absent (logits -1024 everywhere in both). The Python tracker sees 4.6e-5.
const SCORE_TOL: f32 = 1e-3;

fn video_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/sam2/video")
}

fn ref_dir() -> PathBuf {
    video_dir().join("reference")
}

/// A recorded interaction; paths in its index.json are relative to its folder.
#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Clicks,
    Boxes,
}

impl Scenario {
    fn dir(self) -> PathBuf {
        match self {
            Scenario::Clicks => ref_dir(),
            Scenario::Boxes => ref_dir().join("box"),
        }
    }
}

fn model() -> Arc<VideoModel> {
    static MODEL: OnceLock<Arc<VideoModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let options = Options { intra_threads: 2, ..Options::default() };
            Arc::new(VideoModel::from_dir(&video_dir(), options).expect("video modules"))
        })
        .clone()
}

fn index_of(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap()
}

fn index() -> Value {
    index_of(&ref_dir())
}

fn rgb_in(dir: &Path, name: &str) -> (Vec<u8>, usize, usize) {
    let img = image::open(dir.join(name)).unwrap().to_rgb8();
    let (w, h) = (img.width() as usize, img.height() as usize);
    (img.into_raw(), w, h)
}

fn rgb(name: &str) -> (Vec<u8>, usize, usize) {
    rgb_in(&ref_dir(), name)
}

fn mask_png(dir: &Path, name: &str) -> Vec<bool> {
    image::open(dir.join(name)).unwrap().to_luma8().into_raw().iter().map(|v| *v > 127).collect()
}

fn logits_bin(dir: &Path, e: &Value) -> Vec<f32> {
    let bytes = std::fs::read(dir.join(e["file"].as_str().unwrap())).unwrap();
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

#[derive(Debug)]
struct Check {
    what: String,
    max_dlogit: f32,
    /// Identical pixels (%) of the worst mask in the check.
    identical: f64,
    flags_equal: bool,
    /// |object score difference| (infinite where the object has no score).
    dscore: f32,
}

fn score_diff(score: Option<f32>, reference: &Value) -> f32 {
    score.map_or(f32::INFINITY, |s| (s - reference.as_f64().unwrap() as f32).abs())
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn identical(mask: &[u8], reference: &[bool]) -> f64 {
    assert_eq!(mask.len(), reference.len());
    let same = mask.iter().zip(reference).filter(|(m, r)| (**m > 0) == **r).count();
    same as f64 * 100.0 / mask.len() as f64
}

/// A prompt event's check: the prompted object's logits, flag and score, every object's mask.
fn event_check(dir: &Path, e: &Value, fm: &FrameMasks) -> Check {
    let id = e["obj_id"].as_i64().unwrap() as i32;
    let ob = fm.objects.iter().find(|o| o.object_id == id).unwrap();
    let masks: Vec<&str> = e["masks"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let ids: Vec<i32> = e["video_res_obj_ids"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap() as i32).collect();
    assert_eq!(fm.objects.iter().map(|o| o.object_id).collect::<Vec<_>>(), ids);
    let identical = fm.objects.iter().zip(&masks).map(|(o, m)| identical(&o.mask, &mask_png(dir, m))).fold(100.0, f64::min);
    Check {
        what: format!("{} frame {} obj {id}", e["kind"].as_str().unwrap_or("click"), e["frame"]),
        max_dlogit: max_diff(&ob.low_res, &logits_bin(dir, &e["low_res_logits"])),
        identical,
        flags_equal: ob.present == e["object_present"].as_bool().unwrap(),
        dscore: score_diff(ob.score, &e["object_score_logit"]),
    }
}

/// The event's box (x1, y1, x2, y2), if any.
fn event_box(e: &Value) -> Option<[f32; 4]> {
    e["box"].as_array().map(|b| {
        assert_eq!(b.len(), 4);
        std::array::from_fn(|i| b[i].as_f64().unwrap() as f32)
    })
}

/// `add_prompt` with the event's clicks and box (`bbox` maps the box first: a test hook).
fn prompt(tracker: &mut Tracker, e: &Value, bbox: impl Fn([f32; 4]) -> [f32; 4]) -> FrameMasks {
    let points: Vec<[f32; 2]> =
        e["points"].as_array().unwrap().iter().map(|p| [p[0].as_f64().unwrap() as f32, p[1].as_f64().unwrap() as f32]).collect();
    let labels: Vec<i32> = e["labels"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap() as i32).collect();
    let frame = e["frame"].as_u64().unwrap() as usize;
    let id = e["obj_id"].as_i64().unwrap() as i32;
    tracker.add_prompt(frame, id, &points, &labels, event_box(e).map(bbox)).unwrap()
}

#[derive(Clone, Copy, PartialEq)]
enum Frames {
    /// The committed PIL-resized 256x256 frames (isolates the tracker from the resize).
    Resized,
    /// The original 320x240 frames through the tracker's own resize.
    Original,
}

/// Replays the clicks reference's events; returns one check per event and per (frame, object).
fn replay(frames: Frames, configure: impl FnOnce(&mut Tracker)) -> Vec<Check> {
    replay_scenario(Scenario::Clicks, frames, |b| b, configure)
}

/// Replays a reference's events; returns one check per event and per (frame, object).
/// `bbox` maps each event's box before it is given to the tracker (identity for parity).
fn replay_scenario(scenario: Scenario, frames: Frames, bbox: fn([f32; 4]) -> [f32; 4], configure: impl FnOnce(&mut Tracker)) -> Vec<Check> {
    let dir = scenario.dir();
    let idx = index_of(&dir);
    let n = idx["num_frames"].as_u64().unwrap() as usize;
    let (vw, vh) = (idx["video_width"].as_u64().unwrap() as usize, idx["video_height"].as_u64().unwrap() as usize);
    let mut tracker = Tracker::new(model(), TrackerOptions { num_frames: Some(n), keep_frames: None, ..Default::default() }).unwrap();
    configure(&mut tracker);
    let key = if frames == Frames::Resized { "frames_resized" } else { "frames" };
    for (t, name) in idx[key].as_array().unwrap().iter().enumerate() {
        let (data, w, h) = rgb_in(&dir, name.as_str().unwrap());
        let view = ImageView::new(&data, w, h, 0, PixelFormat::Rgb24).unwrap();
        let got = match frames {
            Frames::Resized => tracker.add_resized_frame(&view, (vw, vh)).unwrap(),
            Frames::Original => tracker.add_frame(&view).unwrap(),
        };
        assert_eq!(got, t);
    }
    let events = idx["events"].as_array().unwrap();
    // The clicks reference predates the key: 3 events before propagation there.
    let before = idx["events_before_propagation"].as_u64().unwrap_or(3) as usize;
    let mut checks = Vec::new();
    for e in &events[..before] {
        let fm = prompt(&mut tracker, e, bbox);
        checks.push(event_check(&dir, e, &fm));
    }
    let results = tracker.propagate().unwrap();
    let records = idx["propagation"].as_array().unwrap();
    assert_eq!(results.len(), records.len());
    assert_eq!(results.len(), n);
    for (fm, rec) in results.iter().zip(records) {
        assert_eq!(fm.frame as u64, rec["frame"].as_u64().unwrap());
        assert_eq!((fm.width, fm.height), (vw, vh));
        let reference = logits_bin(&dir, &rec["low_res_logits"]);
        let l = fm.objects[0].low_res.len();
        for (k, (ob, r)) in fm.objects.iter().zip(rec["objects"].as_array().unwrap()).enumerate() {
            assert_eq!(ob.object_id as i64, r["obj_id"].as_i64().unwrap());
            checks.push(Check {
                what: format!("frame {:2} obj {}", fm.frame, ob.object_id),
                max_dlogit: max_diff(&ob.low_res, &reference[k * l..(k + 1) * l]),
                identical: identical(&ob.mask, &mask_png(&dir, r["mask"].as_str().unwrap())),
                flags_equal: ob.present == r["object_present"].as_bool().unwrap(),
                dscore: score_diff(ob.score, &r["object_score_logit"]),
            });
        }
    }
    for e in &events[before..] {
        let fm = prompt(&mut tracker, e, bbox);
        checks.push(event_check(&dir, e, &fm));
    }
    checks
}

struct Summary {
    checks: usize,
    worst_identical: f64,
    worst_dlogit: f32,
    flags_equal: bool,
    worst_dscore: f32,
}

fn summarise(label: &str, checks: &[Check]) -> Summary {
    for c in checks {
        eprintln!(
            "  {label} {:26} max|dlogit| {:.2e}  identical px {:.3}%  flags equal {}  |dscore| {:.1e}",
            c.what, c.max_dlogit, c.identical, c.flags_equal, c.dscore
        );
    }
    let s = Summary {
        checks: checks.len(),
        worst_identical: checks.iter().map(|c| c.identical).fold(100.0, f64::min),
        worst_dlogit: checks.iter().map(|c| c.max_dlogit).fold(0.0, f32::max),
        flags_equal: checks.iter().all(|c| c.flags_equal),
        // NaN-safe: an infinite (missing) score must win.
        worst_dscore: checks.iter().map(|c| c.dscore).fold(0.0, |a, d| if d.is_nan() || d > a { d } else { a }),
    };
    eprintln!(
        "{label}: {} checks, worst identical pixels {:.3}%, worst max|dlogit| {:.2e}, flags all equal: {}, worst |dscore| {:.2e}",
        s.checks, s.worst_identical, s.worst_dlogit, s.flags_equal, s.worst_dscore
    );
    s
}

/// The assertions of every parity test.
fn assert_parity(s: &Summary) {
    assert!(s.worst_identical >= 99.5, "worst identical pixels {:.3}%", s.worst_identical);
    assert!(s.flags_equal, "object-present flags differ");
    assert!(s.worst_dlogit <= LOGIT_TOL, "worst max|dlogit| {:.2e} > {LOGIT_TOL:.0e}", s.worst_dlogit);
    assert!(s.worst_dscore <= SCORE_TOL, "worst |dscore| {:.2e} > {SCORE_TOL:.0e}", s.worst_dscore);
}

#[test]
fn resized_frames_match_the_official_predictor() {
    let s = summarise("resized", &replay(Frames::Resized, |_| {}));
    assert_eq!(s.checks, 32);
    assert_parity(&s);
}

/// The original 320x240 frames through the tracker's own resize (`resize_pil_bicubic`, Pillow's
/// algorithm re-done): it must give PIL's resized frames byte for byte, and then the same results.
/// Also reports how far `fast_image_resize`'s CatmullRom (the crate's general bicubic) is from PIL.
#[test]
fn original_frames_through_our_resize() {
    let idx = index();
    let (mut ours_diff, mut fir_diff, mut fir_max, mut total) = (0usize, 0usize, 0u8, 0usize);
    for (orig, resized) in idx["frames"].as_array().unwrap().iter().zip(idx["frames_resized"].as_array().unwrap()) {
        let (data, w, h) = rgb(orig.as_str().unwrap());
        let (pil, pw, ph) = rgb(resized.as_str().unwrap());
        assert_eq!((pw, ph), (256, 256));
        let ours = resize_pil_bicubic(&data, (w, h), 3, (256, 256)).unwrap();
        let fir = resize_u8(data.clone(), (w, h), 3, (256, 256), ResizeFilter::Bicubic).unwrap();
        for ((a, b), p) in ours.iter().zip(&fir).zip(&pil) {
            ours_diff += (a != p) as usize;
            fir_diff += (b != p) as usize;
            fir_max = fir_max.max(b.abs_diff(*p));
            total += 1;
        }
    }
    eprintln!(
        "resize vs PIL over {total} channel values: resize_pil_bicubic {ours_diff} differ; fast_image_resize CatmullRom \
         {fir_diff} differ ({:.3}%), by at most {fir_max}",
        fir_diff as f64 * 100.0 / total as f64
    );
    assert_eq!(ours_diff, 0, "resize_pil_bicubic differs from PIL");
    let s = summarise("original", &replay(Frames::Original, |_| {}));
    assert_eq!(s.checks, 32);
    assert_parity(&s);
}

/// The parity test can fail: dropping the object pointers or the bfloat16 rounding of the memory
/// moves the logits beyond the tolerance.
#[test]
fn broken_memory_rules_break_parity() {
    let s = summarise("no pointers", &replay(Frames::Resized, |t| t.ablate_pointers = true));
    assert!(s.worst_dlogit > LOGIT_TOL, "dropping the object pointers went unnoticed: {:.2e}", s.worst_dlogit);
    let s = summarise("float32 memory", &replay(Frames::Resized, |t| t.ablate_bf16 = true));
    assert!(s.worst_dlogit > LOGIT_TOL, "float32 memory went unnoticed: {:.2e}", s.worst_dlogit);
}

/// Box prompts: `add_prompt` gives the box to the decoder as two points labelled 2 and 3 before
/// the clicks, as `add_new_points_or_box` does. Box + 2 clicks and a box alone on frame 0, propagation
/// over 10 frames (object-pointer distances scaled by 9), a box and a box + click as corrections on
/// tracked frames; on the committed PIL-resized frames and on the original ones through our resize.
#[test]
fn box_prompts_match_the_official_predictor() {
    for (label, frames) in [("box resized", Frames::Resized), ("box original", Frames::Original)] {
        let s = summarise(label, &replay_scenario(Scenario::Boxes, frames, |b| b, |_| {}));
        assert_eq!(s.checks, 24);
        assert_parity(&s);
    }
}

/// The box parity test can fail: the same boxes with the left edge 2 pixels further left.
#[test]
fn a_moved_box_breaks_box_parity() {
    let s = summarise("box moved", &replay_scenario(Scenario::Boxes, Frames::Resized, |b| [b[0] - 2.0, b[1], b[2], b[3]], |_| {}));
    assert!(s.worst_dlogit > LOGIT_TOL, "a moved box went unnoticed: {:.2e}", s.worst_dlogit);
}

/// The error of a prompt that must be refused (a short panic message if it was accepted: the masks'
/// Debug output would run to megabytes).
fn refused(r: segrt::Result<FrameMasks>, what: &str) -> segrt::Error {
    match r {
        Ok(fm) => panic!("{what} was accepted ({} objects on frame {})", fm.objects.len(), fm.frame),
        Err(e) => e,
    }
}

#[test]
fn box_prompts_are_validated() {
    let mut t = Tracker::new(model(), TrackerOptions::default()).unwrap();
    let a = gray(64, 48, 100);
    t.add_frame(&ImageView::new(&a, 64, 48, 0, PixelFormat::Gray8).unwrap()).unwrap();
    let bad = [
        [f32::NAN, 0.0, 10.0, 10.0],
        [0.0, f32::INFINITY, 10.0, 10.0],
        [0.0, 0.0, f32::NEG_INFINITY, 10.0],
        [0.0, 0.0, 10.0, f32::NAN],
        [20.0, 0.0, 10.0, 10.0], // x2 < x1
        [0.0, 20.0, 10.0, 10.0], // y2 < y1
    ];
    for b in bad {
        for (points, labels) in [(&[][..], &[][..]), (&[[5.0, 5.0]][..], &[1][..])] {
            let e = refused(t.add_prompt(0, 1, points, labels, Some(b)), &format!("box {b:?}"));
            assert_eq!(e.kind, ErrorKind::InvalidArgument, "{b:?}: {e}");
            assert!(e.message.contains("box"), "{b:?}: {e}");
        }
    }
    // An empty prompt (no box, no click) is refused; so are corner labels given as clicks and a box
    // with clicks that do not match their labels.
    let e = refused(t.add_prompt(0, 1, &[], &[], None), "an empty prompt");
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    for l in [2, 3] {
        assert_eq!(refused(t.add_prompt(0, 1, &[[5.0, 5.0]], &[l], None), &format!("label {l}")).kind, ErrorKind::InvalidArgument);
    }
    let e = refused(t.add_prompt(0, 1, &[[5.0, 5.0]], &[], Some([1.0, 1.0, 30.0, 30.0])), "a click without label");
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    // Refused prompts leave no object behind.
    assert!(t.object_ids().is_empty());
    // A box alone is a prompt: the object gets a mask of the frame's size and can be tracked; so is a
    // box with clicks (for a second object). A zero-width box is refused, as on an image.
    let fm = t.add_prompt(0, 1, &[], &[], Some([10.0, 8.0, 40.0, 30.0])).unwrap();
    assert_eq!(fm.objects.len(), 1);
    assert_eq!(fm.objects[0].object_id, 1);
    assert_eq!(fm.objects[0].mask.len(), 64 * 48);
    assert!(fm.objects[0].score.is_some());
    let fm = t.add_prompt(0, 2, &[[20.0, 20.0], [50.0, 40.0]], &[1, 0], Some([10.0, 8.0, 40.0, 30.0])).unwrap();
    assert_eq!(fm.objects.iter().map(|o| o.object_id).collect::<Vec<_>>(), vec![1, 2]);
    // The same box with and without clicks gives other logits (the clicks are used with the box).
    assert!(fm.objects[0].low_res != fm.objects[1].low_res, "the clicks beside the box changed nothing");
    let e = refused(t.add_prompt(0, 3, &[], &[], Some([30.0, 10.0, 30.0, 40.0])), "a zero-width box");
    assert!(e.message.contains("must have x2 > x1 and y2 > y1"), "{e}");
    let tracked = t.track_frame(0).unwrap();
    assert_eq!(tracked.objects.len(), 2);
}

fn gray(w: usize, h: usize, v: u8) -> Vec<u8> {
    vec![v; w * h]
}

#[test]
fn errors_are_values() {
    let mut t = Tracker::new(model(), TrackerOptions::default()).unwrap();
    let a = gray(64, 48, 100);
    let f0 = t.add_frame(&ImageView::new(&a, 64, 48, 0, PixelFormat::Gray8).unwrap()).unwrap();
    assert_eq!(f0, 0);
    // A frame of another size mid-track.
    let b = gray(48, 64, 100);
    let e = t.add_frame(&ImageView::new(&b, 48, 64, 0, PixelFormat::Gray8).unwrap()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert!(e.message.contains("48x64") && e.message.contains("64x48"), "{e}");
    assert_eq!(t.num_frames(), 1);
    // A prompt on a frame never added.
    let e = t.add_points(3, 1, &[[10.0, 10.0]], &[1]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert!(e.message.contains("frame 3 was never added"), "{e}");
    // Bad points and labels.
    assert_eq!(t.add_points(0, 1, &[], &[]).unwrap_err().kind, ErrorKind::InvalidArgument);
    assert_eq!(t.add_points(0, 1, &[[f32::NAN, 1.0]], &[1]).unwrap_err().kind, ErrorKind::InvalidArgument);
    assert_eq!(t.add_points(0, 1, &[[1.0, 1.0]], &[7]).unwrap_err().kind, ErrorKind::InvalidArgument);
    // Tracking without any object.
    assert!(t.track_frame(0).unwrap_err().message.contains("no object"));
    // A resized frame of the wrong size.
    let e = t.add_resized_frame(&ImageView::new(&a, 64, 48, 0, PixelFormat::Gray8).unwrap(), (64, 48)).unwrap_err();
    assert!(e.message.contains("256x256"), "{e}");
    // A new object once tracking has started.
    let fm = t.add_points(0, 1, &[[20.0, 20.0]], &[1]).unwrap();
    assert_eq!(fm.objects.len(), 1);
    assert_eq!(fm.objects[0].mask.len(), 64 * 48);
    t.track_frame(0).unwrap();
    // Accepted once tracking has started, as the official predictor does.
    let fm = t.add_points(0, 2, &[[20.0, 20.0]], &[1]).unwrap();
    assert_eq!(fm.objects.iter().map(|o| o.object_id).collect::<Vec<_>>(), [1, 2]);
    // Tracking a frame never added.
    assert!(t.track_frame(5).unwrap_err().message.contains("never added"));
}

/// Streaming with `keep_frames`: old frames' features and memories go, prompting them is an error,
/// and tracking goes on with the same results as the unbounded tracker. The clip is played twice
/// (28 frames) so that memories leave the window (16 frames back: the object-pointer reach).
#[test]
fn streaming_keeps_memory_bounded() {
    let idx = index();
    let clip: Vec<_> = idx["frames"].as_array().unwrap().iter().map(|f| rgb(f.as_str().unwrap())).collect();
    let frames: Vec<_> = clip.iter().chain(&clip).collect();
    let run = |keep: Option<usize>| {
        let mut t = Tracker::new(model(), TrackerOptions { num_frames: None, keep_frames: keep, ..Default::default() }).unwrap();
        let mut out = Vec::new();
        for (i, (data, w, h)) in frames.iter().enumerate() {
            let f = t.add_frame(&ImageView::new(data, *w, *h, 0, PixelFormat::Rgb24).unwrap()).unwrap();
            if i == 0 {
                t.add_points(0, 1, &[[60.0, 100.0]], &[1]).unwrap();
                t.add_points(0, 2, &[[250.0, 50.0]], &[1]).unwrap();
            }
            out.push(t.track_frame(f).unwrap());
            if let Some(k) = keep {
                assert!(t.held_frames().len() <= k);
            }
        }
        (t, out)
    };
    let (mut bounded, a) = run(Some(2));
    let (full, b) = run(None);
    assert_eq!(a, b, "keep_frames changed the results");
    assert_eq!(bounded.held_frames(), vec![26, 27]);
    // 2 objects: the conditioning frame 0, and tracked frames 11..=27 (26 - 15 onwards).
    assert_eq!(bounded.held_outputs(), 2 * (1 + 17));
    assert_eq!(full.held_outputs(), 2 * 28);
    let e = bounded.add_points(3, 1, &[[10.0, 10.0]], &[1]).unwrap_err();
    assert!(e.message.contains("no longer held"), "{e}");
}
