//! The `segrt` command-line tool on DICOM files, DICOM series and NIfTI volumes, end to end. The
//! inputs are written here, byte by byte, from the 8-bit samples: a slice windowed back to its
//! 8-bit values must give the 8-bit gray picture's mask.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn segrt(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_segrt")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("segrt-medical-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// What a test DICOM file holds beyond its pixels.
#[derive(Clone)]
struct Dcm {
    signed: bool,
    bits_stored: u16,
    slope: &'static str,
    intercept: &'static str,
    window: Option<(&'static str, &'static str)>,
    z: f64,
    instance: i32,
    transfer_syntax: &'static str,
    photometric: &'static str,
}

impl Default for Dcm {
    fn default() -> Self {
        Dcm {
            signed: false,
            bits_stored: 16,
            slope: "1",
            intercept: "0",
            window: None,
            z: 0.0,
            instance: 1,
            transfer_syntax: "1.2.840.10008.1.2.1",
            photometric: "MONOCHROME2",
        }
    }
}

/// One explicit-VR little-endian element (values padded to even length as the standard asks).
fn element(out: &mut Vec<u8>, group: u16, elem: u16, vr: &[u8; 2], value: &[u8]) {
    let mut v = value.to_vec();
    if v.len() % 2 == 1 {
        v.push(if vr == b"UI" || vr == b"OB" { 0 } else { b' ' });
    }
    out.extend_from_slice(&group.to_le_bytes());
    out.extend_from_slice(&elem.to_le_bytes());
    out.extend_from_slice(vr);
    if matches!(vr, b"OB" | b"OW" | b"UN" | b"SQ" | b"UT") {
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    } else {
        out.extend_from_slice(&(v.len() as u16).to_le_bytes());
    }
    out.extend_from_slice(&v);
}

/// A single-frame CT DICOM Part 10 file with these 16-bit pixel words.
fn write_dicom(path: &Path, w: usize, h: usize, words: &[u16], d: &Dcm) {
    let us = |v: u16| v.to_le_bytes().to_vec();
    let mut meta = Vec::new();
    element(&mut meta, 2, 1, b"OB", &[0, 1]);
    element(&mut meta, 2, 2, b"UI", b"1.2.840.10008.5.1.4.1.1.2");
    element(&mut meta, 2, 3, b"UI", format!("1.2.3.4.{}", d.instance).as_bytes());
    element(&mut meta, 2, 0x10, b"UI", d.transfer_syntax.as_bytes());
    element(&mut meta, 2, 0x12, b"UI", b"1.2.3.4.5");
    let mut f = vec![0u8; 128];
    f.extend_from_slice(b"DICM");
    element(&mut f, 2, 0, b"UL", &(meta.len() as u32).to_le_bytes());
    f.extend_from_slice(&meta);
    element(&mut f, 8, 0x16, b"UI", b"1.2.840.10008.5.1.4.1.1.2");
    element(&mut f, 8, 0x18, b"UI", format!("1.2.3.4.{}", d.instance).as_bytes());
    element(&mut f, 8, 0x60, b"CS", b"CT");
    element(&mut f, 0x20, 0x13, b"IS", d.instance.to_string().as_bytes());
    element(&mut f, 0x20, 0x32, b"DS", format!("-10\\-10\\{}", d.z).as_bytes());
    element(&mut f, 0x20, 0x37, b"DS", b"1\\0\\0\\0\\1\\0");
    element(&mut f, 0x28, 2, b"US", &us(1));
    element(&mut f, 0x28, 4, b"CS", d.photometric.as_bytes());
    element(&mut f, 0x28, 0x10, b"US", &us(h as u16));
    element(&mut f, 0x28, 0x11, b"US", &us(w as u16));
    element(&mut f, 0x28, 0x100, b"US", &us(16));
    element(&mut f, 0x28, 0x101, b"US", &us(d.bits_stored));
    element(&mut f, 0x28, 0x102, b"US", &us(d.bits_stored - 1));
    element(&mut f, 0x28, 0x103, b"US", &us(d.signed as u16));
    if let Some((c, wd)) = d.window {
        element(&mut f, 0x28, 0x1050, b"DS", c.as_bytes());
        element(&mut f, 0x28, 0x1051, b"DS", wd.as_bytes());
    }
    element(&mut f, 0x28, 0x1052, b"DS", d.intercept.as_bytes());
    element(&mut f, 0x28, 0x1053, b"DS", d.slope.as_bytes());
    let px: Vec<u8> = words.iter().flat_map(|v| v.to_le_bytes()).collect();
    element(&mut f, 0x7FE0, 0x10, b"OW", &px);
    std::fs::write(path, f).unwrap();
}

struct Gray {
    w: usize,
    h: usize,
    values: Vec<u8>,
}

fn gray(name: &str) -> Gray {
    let img = image::open(sample(name)).unwrap().to_luma8();
    Gray { w: img.width() as usize, h: img.height() as usize, values: img.into_raw() }
}

fn unet(out: &Path, args: &[&str]) -> (bool, String) {
    let mut all = vec!["unet", "--model", model("demo_unet.onnx").to_str().unwrap().to_string().leak(), "--out"];
    all.push(out.to_str().unwrap().to_string().leak());
    all.extend_from_slice(args);
    segrt(&all)
}

/// The mask of the sample as an 8-bit gray PNG: what a slice windowed back to these values gives.
fn reference_mask(dir: &Path, name: &str) -> Vec<u8> {
    reference_mask_of(dir, name.trim_end_matches(".png"), &gray(name))
}

fn reference_mask_of(dir: &Path, tag: &str, g: &Gray) -> Vec<u8> {
    let png = dir.join(format!("ref_{tag}.png"));
    image::GrayImage::from_raw(g.w as u32, g.h as u32, g.values.clone()).unwrap().save(&png).unwrap();
    let out = dir.join("ref-out");
    let (ok, err) = unet(&out, &[png.to_str().unwrap()]);
    assert!(ok, "{err}");
    mask(&out.join(format!("ref_{tag}_mask.png")))
}

/// Three same-size slices with different content: the sample, mirrored left-right, upside down.
fn three_slices() -> Vec<(&'static str, Gray)> {
    let g = gray("lesion_03.png");
    let (w, h) = (g.w, g.h);
    let at = |x: usize, y: usize| g.values[y * w + x];
    let mirrored = (0..w * h).map(|i| at(w - 1 - i % w, i / w)).collect();
    let flipped = (0..w * h).map(|i| at(i % w, h - 1 - i / w)).collect();
    vec![
        ("mirrored", Gray { w, h, values: mirrored }),
        ("flipped", Gray { w, h, values: flipped }),
        ("plain", Gray { w, h, values: g.values.clone() }),
    ]
}

fn mask(p: &Path) -> Vec<u8> {
    image::open(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).to_luma8().into_raw()
}

fn assert_same_mask(got: &[u8], want: &[u8], what: &str) {
    let a = agreement(got, want);
    assert!(a > 0.995, "{what}: {:.4} of the pixels agree with the 8-bit picture's mask", a);
    assert!(want.iter().any(|v| *v != 0), "{what}: the reference mask is empty");
}

#[test]
fn a_ct_slice_is_rescaled_to_hu_with_unused_high_bits_ignored_and_windowed_by_the_file() {
    let dir = tmp("ct");
    let g = gray("lesion_03.png");
    let want = reference_mask(&dir, "lesion_03.png");
    // Stored 128..2168 in 12 bits, garbage in the 4 unused high bits; HU = stored - 1024 = 8g - 896.
    let words: Vec<u16> = g.values.iter().map(|v| (*v as u16 * 8 + 128) | 0xA000).collect();
    let dcm = dir.join("ct.dcm");
    // The file's window -896..1144 (centre 124, width 2040) gives the 8-bit values back.
    let d = Dcm { bits_stored: 12, intercept: "-1024", window: Some(("124", "2040")), ..Dcm::default() };
    write_dicom(&dcm, g.w, g.h, &words, &d);
    let out = dir.join("out");
    let (ok, err) = unet(&out, &[dcm.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.contains("unsigned 12-bit stored in 16 bits, rescale v * 1 + -1024"), "{err}");
    assert!(err.contains("intensity: window -896..1144 (centre 124, width 2040)"), "{err}");
    assert!(err.contains("(window from the file: WindowCenter 124, WindowWidth 2040)"), "{err}");
    assert_same_mask(&mask(&out.join("ct_mask.png")), &want, "the file's window");
    // A window given in HU replaces the file's.
    let (ok, err) = unet(&out, &["--range", "-896,1144", dcm.to_str().unwrap()]);
    assert!(ok && !err.contains("from the file"), "{err}");
    assert_same_mask(&mask(&out.join("ct_mask.png")), &want, "--range in HU");
    // An image with the same stem would be written over: refused before anything is written.
    let png = dir.join("ct.png");
    image::GrayImage::from_raw(g.w as u32, g.h as u32, g.values.clone()).unwrap().save(&png).unwrap();
    let (ok, err) = unet(&dir.join("clash"), &[png.to_str().unwrap(), dcm.to_str().unwrap()]);
    assert!(!ok && err.contains("would both be written as ct_mask.png") && !dir.join("clash").exists(), "{err}");
    // --rescale would apply a second rescale: refused.
    let (ok, err) = unet(&out, &["--rescale", "1,-1024", dcm.to_str().unwrap()]);
    assert!(!ok && err.contains("carry their own rescale"), "{err}");
}

#[test]
fn signed_12_bit_data_is_sign_extended() {
    let dir = tmp("signed");
    let g = gray("lesion_06.png");
    let want = reference_mask(&dir, "lesion_06.png");
    // Values 8g - 1000 (-1000..1040) as 12-bit two's complement, garbage above.
    let words: Vec<u16> = g.values.iter().map(|v| ((*v as i16 * 8 - 1000) as u16 & 0x0FFF) | 0x5000).collect();
    let dcm = dir.join("signed.dcm");
    write_dicom(&dcm, g.w, g.h, &words, &Dcm { signed: true, bits_stored: 12, ..Dcm::default() });
    let out = dir.join("out");
    let (ok, err) = unet(&out, &["--window", "20,2040", dcm.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.contains("signed 12-bit"), "{err}");
    assert_same_mask(&mask(&out.join("signed_mask.png")), &want, "signed");
    // MONOCHROME1: the same values inverted in the file, the window mirrored: the same mask.
    let inverted: Vec<u16> = g.values.iter().map(|v| ((1000 - *v as i16 * 8) as u16 & 0x0FFF) | 0x5000).collect();
    let dcm = dir.join("mono1.dcm");
    write_dicom(&dcm, g.w, g.h, &inverted, &Dcm { signed: true, bits_stored: 12, photometric: "MONOCHROME1", ..Dcm::default() });
    let (ok, err) = unet(&out, &["--window", "20,2040", dcm.to_str().unwrap()]);
    assert!(ok && err.contains("MONOCHROME1 (inverted)"), "{err}");
    assert_same_mask(&mask(&out.join("mono1_mask.png")), &want, "MONOCHROME1");
}

#[test]
fn a_series_is_ordered_by_position_along_the_slice_normal() {
    let dir = tmp("series");
    let series = dir.join("series");
    std::fs::create_dir_all(&series).unwrap();
    // File names and instance numbers both disagree with the positions: z order is b, c, a.
    let files = [("a.dcm", 20.0, 1), ("b.dcm", -5.0, 2), ("c.dcm", 7.5, 3)];
    let mut want = Vec::new();
    for ((file, z, instance), (tag, g)) in files.into_iter().zip(three_slices()) {
        let words: Vec<u16> = g.values.iter().map(|v| *v as u16 * 8 + 128).collect();
        write_dicom(&series.join(file), g.w, g.h, &words, &Dcm { intercept: "-1024", z, instance, ..Dcm::default() });
        want.push((z, reference_mask_of(&dir, tag, &g)));
    }
    want.sort_by(|a, b| a.0.total_cmp(&b.0));
    let out = dir.join("out");
    let (ok, err) = unet(&out, &["--range", "-896,1144", series.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.contains("DICOM series of 3 slices") && err.contains("ordered by ImagePositionPatient along the slice normal"), "{err}");
    for (k, (_, m)) in want.iter().enumerate() {
        assert_same_mask(&mask(&out.join(format!("series_{k:03}_mask.png"))), m, &format!("slice {k}"));
    }
}

#[test]
fn bad_dicom_inputs_are_one_line_and_nothing_is_written() {
    let dir = tmp("bad");
    let g = gray("lesion_03.png");
    let words: Vec<u16> = g.values.iter().map(|v| *v as u16).collect();
    // A compressed transfer syntax (JPEG Baseline) segrt has no decoder for.
    let jpeg = dir.join("jpeg.dcm");
    write_dicom(&jpeg, g.w, g.h, &words, &Dcm { transfer_syntax: "1.2.840.10008.1.2.4.50", ..Dcm::default() });
    // A series with two sizes.
    let mixed = dir.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    write_dicom(&mixed.join("1.dcm"), g.w, g.h, &words, &Dcm::default());
    write_dicom(&mixed.join("2.dcm"), g.w / 2, g.h * 2, &words, &Dcm { z: 1.0, ..Dcm::default() });
    // Not DICOM at all.
    let text = dir.join("notes.dcm");
    std::fs::write(&text, "not a DICOM file, just words long enough to have 132 bytes ".repeat(4)).unwrap();
    let png = dir.join("fine.png");
    image::GrayImage::from_raw(g.w as u32, g.h as u32, g.values.clone()).unwrap().save(&png).unwrap();
    for (input, expect) in [
        (&jpeg, "transfer syntax 1.2.840.10008.1.2.4.50 (JPEG Baseline) is compressed or encapsulated"),
        (&mixed, "a series with mixed sizes"),
        (&text, "not a DICOM file (no 'DICM' marker"),
    ] {
        let out = dir.join("out");
        // With a good image beside it: the refusal comes before anything is written.
        let (ok, err) = unet(&out, &[png.to_str().unwrap(), input.to_str().unwrap()]);
        assert!(!ok, "{}: accepted", input.display());
        assert!(err.contains(expect), "{}: {err}", input.display());
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out.exists(), "{}: a refused run wrote {}", input.display(), out.display());
    }
}

/// A NIfTI-1 int16 volume (little-endian, gzip) of the given slices, scl_slope 8, scl_inter -896,
/// with a qform and an sform that a mask volume must keep.
fn write_nifti(path: &Path, w: usize, h: usize, slices: &[Vec<u8>]) -> Vec<u8> {
    let mut hdr = vec![0u8; 348];
    let put16 = |h: &mut Vec<u8>, o: usize, v: i16| h[o..o + 2].copy_from_slice(&v.to_le_bytes());
    let put32 = |h: &mut Vec<u8>, o: usize, v: f32| h[o..o + 4].copy_from_slice(&v.to_le_bytes());
    hdr[0..4].copy_from_slice(&348i32.to_le_bytes());
    for (i, d) in [3, w as i16, h as i16, slices.len() as i16, 1, 1, 1, 1].iter().enumerate() {
        put16(&mut hdr, 40 + 2 * i, *d);
    }
    put16(&mut hdr, 70, 4); // int16
    put16(&mut hdr, 72, 16);
    for (i, p) in [1.0, 0.7, 0.8, 2.5].iter().enumerate() {
        put32(&mut hdr, 76 + 4 * i, *p);
    }
    put32(&mut hdr, 108, 352.0);
    put32(&mut hdr, 112, 8.0);
    put32(&mut hdr, 116, -896.0);
    put16(&mut hdr, 252, 1); // qform_code
    put16(&mut hdr, 254, 2); // sform_code
    for (i, v) in [0.0, 0.0, 1.0, 0.0, -12.5, 30.0, 4.0].iter().enumerate() {
        put32(&mut hdr, 256 + 4 * i, *v); // quatern_b.. qoffset_z
    }
    for (i, v) in [-0.7, 0.0, 0.0, 90.0, 0.0, 0.8, 0.0, -120.0, 0.0, 0.0, 2.5, 15.0].iter().enumerate() {
        put32(&mut hdr, 280 + 4 * i, *v); // srow_x, srow_y, srow_z
    }
    hdr[344..348].copy_from_slice(b"n+1\0");
    let mut file = hdr.clone();
    file.extend_from_slice(&[0; 4]);
    for s in slices {
        file.extend(s.iter().flat_map(|v| (*v as i16).to_le_bytes()));
    }
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &file).unwrap();
    std::fs::write(path, enc.finish().unwrap()).unwrap();
    hdr
}

#[test]
fn a_nifti_volume_gives_slice_masks_and_a_mask_volume_with_its_geometry() {
    let dir = tmp("nifti");
    let slices = three_slices();
    let (w, h) = (slices[0].1.w, slices[0].1.h);
    let header = write_nifti(&dir.join("vol.nii.gz"), w, h, &slices.iter().map(|(_, g)| g.values.clone()).collect::<Vec<_>>());
    let out = dir.join("out");
    let (ok, err) = unet(&out, &["--range", "-896,1144", dir.join("vol.nii.gz").to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.contains(&format!("NIfTI volume {w}x{h}x3, datatype 4, scaling v * 8 + -896")), "{err}");
    let mut masks = Vec::new();
    for (k, (tag, g)) in slices.iter().enumerate() {
        let m = mask(&out.join(format!("vol_{k:03}_mask.png")));
        assert_same_mask(&m, &reference_mask_of(&dir, tag, g), tag);
        masks.extend(m);
    }
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(out.join("vol_mask.nii.gz")).unwrap()).read_to_end(&mut bytes).unwrap();
    // The same header (dimensions, voxel sizes, qform, sform) but for the voxel type and scaling.
    let changed = |o: usize| (70..74).contains(&o) || (108..120).contains(&o) || (124..132).contains(&o);
    for o in (0..348).filter(|o| !changed(*o)) {
        assert_eq!(bytes[o], header[o], "header byte {o} differs");
    }
    assert_eq!(i16::from_le_bytes([bytes[70], bytes[71]]), 2, "uint8 voxels");
    assert_eq!(f32::from_le_bytes(bytes[108..112].try_into().unwrap()), 352.0);
    assert_eq!(&bytes[352..], &masks[..], "the mask volume holds the slice masks");
}

#[test]
fn sam2_takes_a_dicom_slice_with_its_window() {
    let dir = tmp("sam2");
    let g = gray("lesion_03.png");
    let words: Vec<u16> = g.values.iter().map(|v| *v as u16 * 8 + 128).collect();
    let dcm = dir.join("ct.dcm");
    write_dicom(&dcm, g.w, g.h, &words, &Dcm { intercept: "-1024", window: Some(("124", "2040")), ..Dcm::default() });
    let sam = repo().join("models/sam2");
    let out = dir.join("mask.png");
    let (ok, err) = segrt(&[
        "sam2",
        "--encoder",
        sam.join("sam2_tiny_samexporter_encoder.onnx").to_str().unwrap(),
        "--decoder",
        sam.join("sam2_tiny_samexporter_decoder.onnx").to_str().unwrap(),
        "--point",
        "100,100",
        "--out",
        out.to_str().unwrap(),
        "--overlay",
        dir.join("overlay.png").to_str().unwrap(),
        dcm.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("window from the file: WindowCenter 124, WindowWidth 2040"), "{err}");
    assert!(err.contains("32-bit float gray") || err.contains("GRAY32F"), "{err}");
    assert!(out.exists() && dir.join("overlay.png").exists());
    // --slice is for volumes.
    let (ok, err) = segrt(&["sam2", "--encoder", "e.onnx", "--decoder", "d.onnx", "--slice", "1", "--out", "m.png", dcm.to_str().unwrap()]);
    assert!(!ok && err.contains("--slice 1:"), "{err}");
}

#[test]
fn track_follows_an_object_through_a_nifti_volume_and_writes_its_mask_volume() {
    let dir = tmp("track");
    // The reference clip's first frames, in gray, as the slices of a volume (the test modules follow
    // the object on frame 0 only in gray; the point is the volume's path, not the tracking).
    let frames = repo().join("models/sam2/video/reference/frames");
    let slices: Vec<Vec<u8>> = (0..4).map(|k| image::open(frames.join(format!("{k:05}.png"))).unwrap().to_luma8().into_raw()).collect();
    let header = write_nifti(&dir.join("clip.nii.gz"), 320, 240, &slices);
    let out = dir.join("out");
    let args = [
        "track",
        "--models",
        repo().join("models/sam2/video").to_str().unwrap().to_string().leak(),
        "--frames",
        dir.join("clip.nii.gz").to_str().unwrap().to_string().leak(),
        "--range",
        "-896,1144",
        "--point",
        "60,100",
        "--out",
        out.to_str().unwrap().to_string().leak(),
        "--threads",
        "2",
    ];
    let (ok, err) = segrt(&args);
    assert!(ok, "{err}");
    assert!(err.contains("NIfTI volume 320x240x4"), "{err}");
    let mut masks = Vec::new();
    for k in 0..4 {
        let m = mask(&out.join(format!("clip_{k:03}_obj1.png")));
        if k == 0 {
            assert!(m.iter().filter(|v| **v != 0).count() > 1000, "the clicked object is missing");
        }
        masks.extend(m);
    }
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(out.join("clip_obj1_mask.nii.gz")).unwrap()).read_to_end(&mut bytes).unwrap();
    assert_eq!(&bytes[40..56], &header[40..56], "dimensions");
    assert_eq!(&bytes[252..344], &header[252..344], "qform and sform");
    assert_eq!(&bytes[352..], &masks[..], "the mask volume holds the slice masks");
}
