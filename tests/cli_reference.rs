//! `segrt find` end to end: taught from one image and its mask, a folder searched; the reference
//! saved by one process and loaded by another finds the same masks. On the colour oracle encoder and
//! the geometric oracle decoder (tests/sam2_reference.rs says why they make finding predictable).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

const W: u32 = 512;
const H: u32 = 512;
const RED: [u8; 3] = [220, 30, 30];
const BLUE: [u8; 3] = [30, 40, 220];

fn segrt(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_segrt")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn inside((cx, cy): (u32, u32), x: u32, y: u32) -> bool {
    (x as f32 - cx as f32).powi(2) + (y as f32 - cy as f32).powi(2) <= 40f32.powi(2)
}

fn scene(path: &Path, discs: &[((u32, u32), [u8; 3])]) {
    image::RgbImage::from_fn(W, H, |x, y| image::Rgb(discs.iter().find(|(c, _)| inside(*c, x, y)).map_or([128; 3], |(_, colour)| *colour)))
        .save(path)
        .unwrap();
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The records of found.json without the timings (which differ from run to run).
fn records(dir: &Path) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_slice(&read(&dir.join("found.json"))).unwrap();
    doc["images"].as_array().unwrap().iter().map(|i| serde_json::json!([i["image"], i["found"]])).collect()
}

#[test]
fn taught_from_one_image_a_folder_is_searched_and_a_saved_reference_finds_the_same_in_a_new_process() {
    let dir = std::env::temp_dir().join(format!("segrt-cli-find-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let folder = dir.join("images");
    std::fs::create_dir_all(&folder).unwrap();
    let (teach, mask) = (dir.join("teach.png"), dir.join("teach_mask.png"));
    scene(&teach, &[((150, 150), RED), ((380, 380), BLUE)]);
    image::GrayImage::from_fn(W, H, |x, y| image::Luma([if inside((150, 150), x, y) { 255 } else { 0 }])).save(&mask).unwrap();
    scene(&folder.join("a_present.png"), &[((340, 300), RED), ((120, 400), BLUE)]);
    scene(&folder.join("b_absent.png"), &[((120, 400), BLUE)]);
    scene(&folder.join("c_two.png"), &[((100, 100), RED), ((380, 300), RED)]);
    let sam2 = repo().join("models/sam2");
    let (enc, dec) = (sam2.join("sam2_colour_oracle_encoder.onnx"), sam2.join("sam2_oracle_decoder.onnx"));
    let models = ["find", "--encoder", enc.to_str().unwrap(), "--decoder", dec.to_str().unwrap()];
    let reference = dir.join("part.segrtref");
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let run = |extra: &[String]| {
        let args: Vec<&str> = models.iter().copied().chain(extra.iter().map(String::as_str)).collect();
        segrt(&args)
    };

    // process 1: teach, save, search the folder
    let first = dir.join("first");
    let (ok, out, err) = run(&[
        "--teach".into(),
        s(&teach),
        "--mask".into(),
        s(&mask),
        "--save".into(),
        s(&reference),
        "--out".into(),
        s(&first),
        "--overlay".into(),
        s(&folder),
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("a_present: present") && lines[1].starts_with("b_absent: absent"), "{out}");
    let found = image::open(first.join("a_present_mask.png")).unwrap().to_luma8();
    let hit = found.enumerate_pixels().filter(|(x, y, v)| v.0[0] != 0 && inside((340, 300), *x, *y)).count();
    let miss = found.enumerate_pixels().filter(|(x, y, v)| v.0[0] != 0 && !inside((340, 300), *x, *y)).count();
    assert!(hit > 4000 && miss < 1000, "the red disc: {hit} pixels found, {miss} outside it");
    assert!(image::open(first.join("b_absent_mask.png")).unwrap().to_luma8().iter().all(|v| *v == 0));
    assert!(first.join("a_present_overlay.png").is_file());

    // process 2: the saved reference, loaded afresh, gives the same masks and records
    let second = dir.join("second");
    let (ok, out2, err) = run(&["--reference".into(), s(&reference), "--out".into(), s(&second), s(&folder)]);
    assert!(ok, "{err}");
    assert_eq!(out2, out);
    for name in ["a_present", "b_absent", "c_two"] {
        assert!(read(&first.join(format!("{name}_mask.png"))) == read(&second.join(format!("{name}_mask.png"))), "{name}");
    }
    assert_eq!(records(&first), records(&second));

    // process 3: every instance, from the saved reference
    let all = dir.join("all");
    let (ok, out, err) = run(&["--reference".into(), s(&reference), "--all".into(), "--out".into(), s(&all), s(&folder)]);
    assert!(ok, "{err}");
    assert!(out.contains("c_two: 2 found"), "{out}");
    let labels = image::open(all.join("c_two_labels.png")).unwrap().to_luma16();
    let (a, b) = (labels.get_pixel(100, 100).0[0], labels.get_pixel(380, 300).0[0]);
    assert!(a > 0 && b > 0 && a != b, "labels {a} and {b}");

    // a damaged reference file is refused with the reason
    let mut bytes = read(&reference);
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&reference, bytes).unwrap();
    let (ok, _, err) = run(&["--reference".into(), s(&reference), "--out".into(), s(&dir.join("bad")), s(&folder)]);
    assert!(!ok && err.contains("checksum"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
