//! Reference-based segmentation in the library: teach from an image and a mask, find in other
//! images (best match, presence, every instance), save and load, bad input. On the colour oracle
//! (`models/sam2/make_colour_oracle.py`: the embedding is each cell's mean colour) with the geometric
//! oracle decoder (a disc of radius 20 low-res pixels, 40 pixels here, at the first positive click):
//! finding is then predictable, in milliseconds: the click goes to the middle of the plateau of
//! equally red cells, and the oracle's disc covers the red disc. Accuracy on real weights is
//! tests/real/reference_real.py's.

mod common;

use common::{disc_mask, sam2_dir, scene, DISC_SCENE};
use segrt::error::ErrorKind;
use segrt::image::{ImageView, PixelFormat};
use segrt::sam2::reference::{FindMode, FindOptions, Reference};
use segrt::sam2::Sam2Segmenter;

const W: usize = DISC_SCENE;
const H: usize = DISC_SCENE;
const RED: [u8; 3] = [220, 30, 30];
const BLUE: [u8; 3] = [30, 40, 220];

fn oracle() -> Sam2Segmenter {
    Sam2Segmenter::from_files(
        &sam2_dir().join("sam2_colour_oracle_encoder.onnx"),
        &sam2_dir().join("sam2_oracle_decoder.onnx"),
        segrt::Options::default(),
    )
    .unwrap()
}

fn view(px: &[u8]) -> ImageView<'_> {
    ImageView::new(px, W, H, (W * 3) as isize, PixelFormat::Rgb24).unwrap()
}

fn iou(a: &[u8], b: &[u8]) -> f64 {
    let both = a.iter().zip(b).filter(|(x, y)| **x != 0 && **y != 0).count();
    let any = a.iter().zip(b).filter(|(x, y)| **x != 0 || **y != 0).count();
    both as f64 / any.max(1) as f64
}

fn taught(sam: &Sam2Segmenter) -> Reference {
    let teach = scene(&[((150, 150), RED), ((380, 380), BLUE)]);
    Reference::new(sam, &view(&teach), &disc_mask((150, 150)), 0).unwrap()
}

#[test]
fn the_best_match_is_found_elsewhere_and_absence_is_said() {
    let sam = oracle();
    let reference = taught(&sam);
    let image = scene(&[((340, 300), RED), ((120, 400), BLUE)]);
    let found = reference.find(&sam, &view(&image), &FindOptions::default()).unwrap();
    let best = &found.instances[0];
    assert!(best.present, "{best:?}");
    let (dx, dy) = (best.point.0 - 340.0, best.point.1 - 300.0);
    assert!(dx * dx + dy * dy < 40.0 * 40.0, "the click {:?} is not on the red disc", best.point);
    assert!(iou(&found.mask, &disc_mask((340, 300))) > 0.8, "IoU {}", iou(&found.mask, &disc_mask((340, 300))));
    assert_eq!(found.stats.decoder_runs, 2, "a click, then one refinement");
    // without the object: the best match is not it, and no mask is given
    let without = scene(&[((120, 400), BLUE)]);
    let found = reference.find(&sam, &view(&without), &FindOptions::default()).unwrap();
    assert!(!found.instances[0].present, "{:?}", found.instances[0]);
    assert!(found.mask.iter().all(|v| *v == 0));
}

#[test]
fn every_instance_is_found_once_with_a_label_each() {
    let sam = oracle();
    let reference = taught(&sam);
    let centres = [(100, 100), (300, 120), (200, 330), (420, 420)];
    let mut discs: Vec<_> = centres.iter().map(|c| (*c, RED)).collect();
    discs.push(((420, 200), BLUE));
    let image = scene(&discs);
    let options = FindOptions { mode: FindMode::All, ..FindOptions::default() };
    let found = reference.find(&sam, &view(&image), &options).unwrap();
    assert_eq!(found.instances.len(), centres.len(), "{:?}", found.instances);
    let labels = found.labels.as_ref().unwrap();
    for c in centres {
        let at = labels[c.1 * W + c.0];
        assert!(at > 0, "no instance at {c:?}");
        let own: Vec<u8> = labels.iter().map(|l| if *l == at { 255 } else { 0 }).collect();
        assert!(iou(&own, &disc_mask(c)) > 0.8, "instance at {c:?}: IoU {}", iou(&own, &disc_mask(c)));
    }
    assert_eq!(labels[200 * W + 420], 0, "the blue disc is not an instance");
}

#[test]
fn a_saved_reference_loads_and_finds_the_same() {
    let sam = oracle();
    let reference = taught(&sam);
    let dir = std::env::temp_dir().join(format!("segrt-reference-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("part.segref");
    reference.save(&path).unwrap();
    let loaded = Reference::load(&sam, &path).unwrap();
    let image = scene(&[((340, 300), RED), ((120, 400), BLUE)]);
    let a = reference.find(&sam, &view(&image), &FindOptions::default()).unwrap();
    let b = loaded.find(&sam, &view(&image), &FindOptions::default()).unwrap();
    assert_eq!(a.mask, b.mask);
    assert_eq!(a.instances, b.instances);
    // a damaged file is refused
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    assert_eq!(Reference::from_bytes(&sam, &bytes).err().unwrap().kind, ErrorKind::ModelInvalid);
    // a reference taught with another model is refused
    let other = Sam2Segmenter::from_files(
        &sam2_dir().join("sam2_oracle_encoder.onnx"),
        &sam2_dir().join("sam2_oracle_decoder.onnx"),
        segrt::Options::default(),
    )
    .unwrap();
    assert_eq!(Reference::load(&other, &path).err().unwrap().kind, ErrorKind::ModelUnsupported);
    assert_eq!(reference.find(&other, &view(&image), &FindOptions::default()).err().unwrap().kind, ErrorKind::ModelUnsupported);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_masks_are_refused_with_a_reason() {
    let sam = oracle();
    let image = scene(&[((150, 150), RED)]);
    let cases: [(Vec<u8>, &str); 3] =
        [(vec![0; W * H], "empty"), (vec![1; W * H], "whole image"), (vec![255; W * (H - 1)], "needs a mask of its size")];
    for (mask, why) in cases {
        let e = Reference::new(&sam, &view(&image), &mask, 0).err().unwrap();
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        assert!(e.message.contains(why), "{why}: {}", e.message);
    }
}

#[test]
fn finds_from_many_threads_agree_and_adding_an_example_keeps_them_working() {
    let sam = oracle();
    let reference = taught(&sam);
    let image = scene(&[((340, 300), RED), ((120, 400), BLUE)]);
    let alone = reference.find(&sam, &view(&image), &FindOptions::default()).unwrap();
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..4).map(|_| s.spawn(|| reference.find(&sam, &view(&image), &FindOptions::default()).unwrap())).collect();
        // meanwhile another example is added: finds use the reference as it was or as it is after
        let second = scene(&[((300, 200), RED)]);
        reference.add(&sam, &view(&second), &disc_mask((300, 200)), 0).unwrap();
        for r in runs {
            let got = r.join().unwrap();
            assert!(got.instances[0].present);
            assert!(iou(&got.mask, &alone.mask) > 0.9);
        }
    });
    assert_eq!(reference.examples(), 2);
}
