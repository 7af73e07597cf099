//! The `segrt` command-line tool end to end.

mod common;

use std::process::Command;

use common::*;

fn segrt(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_segrt")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("segrt-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn unet_writes_masks_and_overlays_for_a_folder() {
    let out = tmp("unet");
    let (ok, _, err) = segrt(&[
        "unet",
        "--model",
        model("demo_unet.onnx").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--overlay",
        "--min-area",
        "20",
        sample("lesion_03.png").to_str().unwrap(),
        sample("lesion_06.png").to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    for stem in ["lesion_03", "lesion_06"] {
        let mask = image::open(out.join(format!("{stem}_mask.png"))).unwrap();
        assert!(matches!(mask, image::DynamicImage::ImageLuma8(_)), "mask is single-channel 8-bit");
        let iou = iou(mask.to_luma8().as_raw(), &gt_for(&sample(&format!("{stem}.png"))));
        assert!(iou > 0.9, "{stem}: IoU {iou}");
        assert!(out.join(format!("{stem}_overlay.png")).exists());
    }
}

#[test]
fn multiclass_masks_hold_class_indices() {
    let out = tmp("multi");
    let (ok, _, err) = segrt(&[
        "unet",
        "--model",
        model("test/unet_multiclass.onnx").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        model("test/multiclass_01.png").to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let mask = image::open(out.join("multiclass_01_mask.png")).unwrap().to_luma8();
    let values: std::collections::BTreeSet<u8> = mask.pixels().map(|p| p.0[0]).collect();
    assert_eq!(values, [0u8, 1, 2].into_iter().collect());
}

#[test]
fn sam2_click_writes_a_mask_for_every_convention() {
    let out = tmp("sam2");
    let dir = repo().join("models/sam2");
    let reference = load_gray(&dir.join("reference/img0_point_mask.png"));
    for (enc, dec) in [
        ("samexporter_encoder", "samexporter_decoder"),
        ("samexporter_encoder", "samexporter_origsize_decoder"),
        ("sam2onnx_encoder", "sam2onnx_decoder"),
        ("osam_encoder", "osam_decoder"),
    ] {
        let mask_path = out.join(format!("{dec}.png"));
        let (ok, _, err) = segrt(&[
            "sam2",
            "--encoder",
            dir.join(format!("sam2_tiny_{enc}.onnx")).to_str().unwrap(),
            "--decoder",
            dir.join(format!("sam2_tiny_{dec}.onnx")).to_str().unwrap(),
            dir.join("reference/img0.png").to_str().unwrap(),
            "--point",
            "105,105",
            "--out",
            mask_path.to_str().unwrap(),
        ]);
        assert!(ok, "{dec}: {err}");
        let ours = image::open(&mask_path).unwrap().to_luma8();
        assert_eq!((ours.width(), ours.height()), (320, 240));
        // osam returns 4 masks and segrt chooses among the 3 multimask ones; the reference PNG is
        // the samexporter choice, so only the other conventions are compared pixel by pixel
        if !dec.starts_with("osam") {
            assert!(agreement(ours.as_raw(), &reference) > 0.995, "{dec}");
        }
    }
}

#[test]
fn sam2_boxes_write_one_mask_per_box_equal_to_single_box_runs() {
    let out = tmp("sam2-boxes");
    let dir = repo().join("models/sam2");
    let boxes = out.join("boxes.txt");
    std::fs::write(&boxes, "# detector output\n10,10,120,110\n\n150,20,300,200\n").unwrap();
    for decoder in ["sam2onnx_batched_decoder", "sam2onnx_decoder"] {
        let (enc, dec) = (dir.join("sam2_tiny_sam2onnx_encoder.onnx"), dir.join(format!("sam2_tiny_{decoder}.onnx")));
        let img = dir.join("reference/img0.png");
        let many = out.join(decoder);
        let overlay = out.join(format!("{decoder}_overlay.png"));
        let base = ["sam2", "--encoder", enc.to_str().unwrap(), "--decoder", dec.to_str().unwrap(), img.to_str().unwrap()];
        let args: Vec<&str> = base
            .iter()
            .copied()
            .chain(["--box", "40,130,160,230", "--boxes", boxes.to_str().unwrap(), "--out", many.to_str().unwrap()])
            .chain(["--overlay", overlay.to_str().unwrap()])
            .collect();
        let (ok, _, err) = segrt(&args);
        assert!(ok, "{decoder}: {err}");
        assert!(
            err.contains("3 boxes") && err.contains(if decoder.contains("batched") { "1 decoder runs" } else { "3 decoder runs" }),
            "{err}"
        );
        // --box first, then the file's boxes in order; each equal to a single --box run
        for (i, b) in ["40,130,160,230", "10,10,120,110", "150,20,300,200"].iter().enumerate() {
            let single = out.join(format!("{decoder}_single_{i}.png"));
            let args: Vec<&str> = base.iter().copied().chain(["--box", b, "--out", single.to_str().unwrap()]).collect();
            let (ok, _, err) = segrt(&args);
            assert!(ok, "{err}");
            let want = image::open(&single).unwrap().to_luma8();
            let got = image::open(many.join(format!("box_{:04}.png", i + 1))).unwrap().to_luma8();
            assert!(got == want, "{decoder}: box {} differs from a single --box run", i + 1);
        }
        assert!(!many.join("box_0004.png").exists());
    }
    // a bad line is named by file and line
    std::fs::write(&boxes, "10,10,120,110\n10,10,120\n").unwrap();
    let (ok, _, err) = segrt(&[
        "sam2",
        "--encoder",
        dir.join("sam2_tiny_sam2onnx_encoder.onnx").to_str().unwrap(),
        "--decoder",
        dir.join("sam2_tiny_sam2onnx_batched_decoder.onnx").to_str().unwrap(),
        dir.join("reference/img0.png").to_str().unwrap(),
        "--boxes",
        boxes.to_str().unwrap(),
        "--out",
        out.join("bad").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(err.contains("line 2") && err.contains("4 comma-separated numbers"), "{err}");
}

#[test]
fn info_describes_unet_and_sam2_pairs() {
    let (ok, json, err) = segrt(&["info", model("test/unet_nhwc.onnx").to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["interpretation"]["input_layout"], "NHWC");
    let dir = repo().join("models/sam2");
    let (ok, json, err) = segrt(&[
        "info",
        dir.join("sam2_tiny_osam_encoder.onnx").to_str().unwrap(),
        dir.join("sam2_tiny_osam_decoder.onnx").to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["convention"], "osam");
    assert_eq!(v["interpretation"]["encoder_input"], "RawU8");
}

#[test]
fn user_mistakes_give_one_line_and_a_non_zero_exit() {
    let cases: Vec<Vec<String>> = vec![
        vec!["unet".into(), "--model".into(), "/nope/m.onnx".into(), sample("lesion_06.png").display().to_string()],
        vec![
            "unet".into(),
            "--model".into(),
            model("demo_unet.onnx").display().to_string(),
            "--threshold".into(),
            "high".into(),
            sample("lesion_06.png").display().to_string(),
        ],
        vec!["unet".into(), "--model".into(), model("demo_unet.onnx").display().to_string(), "/nope/image.png".into()],
        vec![
            "unet".into(),
            "--model".into(),
            model("demo_unet.onnx").display().to_string(),
            "--provider".into(),
            "cuda".into(),
            sample("lesion_06.png").display().to_string(),
        ],
        vec!["info".into(), model("samples/lesion_01.png").display().to_string()],
        vec!["demo".into(), "--ort".into(), "/nope/libonnxruntime.so".into()],
    ];
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, err) = segrt(&args);
        assert!(!ok, "{args:?} succeeded");
        let first = err.lines().next().unwrap_or("");
        assert!(first.starts_with("segrt: error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("stack backtrace"), "{args:?}: {err}");
        println!("{args:?} -> {first}");
    }
}

/// Runs segrt and returns (exit code, stdout, stderr).
fn segrt_code(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_segrt")).args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A stdout whose reader has already gone: the write end of a pipe whose read end is closed, so
/// the child's first write fails with EPIPE, deterministically (no race with the reader).
#[cfg(unix)]
fn closed_pipe() -> std::process::Stdio {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { libc::close(fds[0]) };
    std::process::Stdio::from(unsafe { std::os::fd::OwnedFd::from_raw_fd(fds[1]) })
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_program_quietly() {
    let out = tmp("pipe");
    let demo_out = out.join("demo");
    let cases: Vec<Vec<&str>> = vec![
        vec!["demo", "--out", demo_out.to_str().unwrap()],
        vec!["providers"],
        vec!["providers", "--json"],
        vec!["info", "models/test/unet_nhwc.onnx"],
    ];
    for args in cases {
        let child = Command::new(env!("CARGO_BIN_EXE_segrt"))
            .current_dir(repo())
            .args(&args)
            .env("RUST_BACKTRACE", "1")
            .stdout(closed_pipe())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let result = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} printed on stderr: {err}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_one_error_line() {
    let result = Command::new(env!("CARGO_BIN_EXE_segrt"))
        .arg("providers")
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("segrt: error: cannot write to standard output: "), "{err}");
}

#[test]
fn inputs_sharing_a_stem_get_distinct_outputs() {
    let dir = tmp("clash");
    let (input, out) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&input).unwrap();
    // three different images under one stem, in three formats
    let a = image::open(sample("lesion_03.png")).unwrap();
    let b = image::open(sample("lesion_06.png")).unwrap();
    a.save(input.join("l05.png")).unwrap();
    b.save(input.join("l05.bmp")).unwrap();
    a.fliph().to_rgb8().save(input.join("l05.tif")).unwrap();
    std::fs::copy(sample("lesion_06.png"), input.join("lesion_06.png")).unwrap();
    let (ok, _, err) = segrt(&[
        "unet",
        "--model",
        model("demo_unet.onnx").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
        // the same file again, through another path: segmented once
        input.join("lesion_06.png").to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("4 of 4 images segmented"), "{err}");
    let mut written: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, ["l05_bmp_mask.png", "l05_png_mask.png", "l05_tif_mask.png", "lesion_06_mask.png"]);
    // each output belongs to its own input
    let mask = |name: &str| image::open(out.join(name)).unwrap().to_luma8();
    let gt_a = image::open(sample("lesion_03_gt.png")).unwrap().to_luma8();
    let gt_b = image::open(sample("lesion_06_gt.png")).unwrap().to_luma8();
    let gt_a_flipped = image::imageops::flip_horizontal(&gt_a);
    for (name, gt) in [("l05_png_mask.png", &gt_a), ("l05_bmp_mask.png", &gt_b), ("l05_tif_mask.png", &gt_a_flipped)] {
        let v = iou(mask(name).as_raw(), gt.as_raw());
        assert!(v > 0.9, "{name}: IoU {v}");
    }
}

#[test]
fn inputs_that_would_still_share_an_output_are_refused_before_anything_is_written() {
    let dir = tmp("clash2");
    let out = dir.join("out");
    for sub in ["a", "b"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::copy(sample("lesion_06.png"), dir.join(sub).join("x.png")).unwrap();
    }
    let (code, _, err) = segrt_code(&[
        "unet",
        "--model",
        model("demo_unet.onnx").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        dir.join("a").to_str().unwrap(),
        dir.join("b").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("segrt: error: ") && err.contains("a/x.png") && err.contains("b/x.png") && err.contains("x_mask.png"), "{err}");
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn argument_errors_are_one_line_and_help_keeps_its_usage() {
    let demo = model("demo_unet.onnx").display().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["unet", "--model", &demo, "--bogus", "x.png"],
        vec!["unet", "--model"],
        vec!["unet", "--model", &demo],
        vec!["frobnicate"],
        vec!["sam2", "--encoder", "e.onnx", "img.png"],
        vec!["unet", "--model", &demo, "--tile-batch", "many", "x.png"],
    ];
    for args in cases {
        let (code, out, err) = segrt_code(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("segrt: error: ") && err.contains("--help"), "{args:?}: {err}");
        assert!(!err.contains("Usage:"), "{args:?}: {err}");
        println!("{args:?} -> {}", err.trim_end());
    }
    let (code, out, _) = segrt_code(&["unet", "--help"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("Usage: segrt unet") && out.contains("--min-area"), "{out}");
    let (code, out, _) = segrt_code(&["--version"]);
    assert_eq!((code, out.trim()), (Some(0), concat!("segrt ", env!("CARGO_PKG_VERSION"))));
}

#[test]
fn negative_looking_values_reach_the_real_validation() {
    let demo = model("demo_unet.onnx").display().to_string();
    let img = sample("lesion_06.png").display().to_string();
    let cases: Vec<(Vec<&str>, &[&str])> = vec![
        (vec!["unet", "--model", &demo, "--threshold", "-0.1", &img], &["--threshold -0.1", "[0, 1]"]),
        (vec!["unet", "--model", &demo, "--threshold", "1.5", &img], &["--threshold 1.5", "[0, 1]"]),
        (vec!["unet", "--model", &demo, "--min-area", "-5", &img], &["'-5'", "--min-area", "whole number"]),
        (vec!["unet", "--model", &demo, "--close", "-3", &img], &["'-3'", "--close", "whole number"]),
        (vec!["unet", "--model", &demo, "--threads", "-2", &img], &["'-2'", "--threads", "whole number"]),
        (vec!["sam2", "--encoder", "e.onnx", "--decoder", "d.onnx", "--box", "-1,-1", "--out", "m.png", &img], &["--box '-1,-1'", "4"]),
    ];
    for (args, expect) in cases {
        let (code, _, err) = segrt_code(&args);
        assert!(matches!(code, Some(1 | 2)), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("segrt: error: "), "{args:?}: {err}");
        for e in expect {
            assert!(err.contains(e), "{args:?}: expected {e:?} in {err}");
        }
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
        println!("{args:?} -> {}", err.trim_end());
    }
}

#[test]
fn an_ort_path_that_is_not_a_library_gives_the_loaders_reason_and_the_cli_flag() {
    let not_a_library = model("make_models.py");
    let (ok, _, err) = segrt(&["demo", "--out", tmp("ort").to_str().unwrap(), "--ort", not_a_library.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.starts_with("segrt: error: "), "{err}");
    assert!(err.contains(not_a_library.to_str().unwrap()) && err.contains("--ort PATH"), "{err}");
    // the loader's own reason follows libloading's bare "dlopen failed"
    #[cfg(target_os = "linux")]
    assert!(err.contains("dlopen failed: ") && err.contains("invalid ELF header"), "{err}");
}

/// Needs the bound on intra_threads in Options::validate (4 x the logical cores).
#[test]
fn too_many_threads_are_refused_with_one_line() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (4 * cores + 1).max(999).to_string();
    let (code, _, err) = segrt_code(&[
        "unet",
        "--model",
        model("demo_unet.onnx").to_str().unwrap(),
        "--out",
        tmp("threads").to_str().unwrap(),
        "--threads",
        &threads,
        sample("lesion_06.png").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("segrt: error: ") && err.contains(&threads), "{err}");
}

#[test]
fn help_names_the_image_formats_and_describes_every_sam2_argument() {
    let (ok, out, _) = segrt(&["unet", "--help"]);
    assert!(ok);
    assert!(out.contains("PNG, JPEG, BMP, TIFF, PNM"), "{out}");
    let (ok, out, _) = segrt(&["sam2", "--help"]);
    assert!(ok);
    for arg in ["--encoder <ENCODER>", "--decoder <DECODER>", "--out <OUT>", "<IMAGES>..."] {
        let line = out.lines().find(|l| l.trim_start().starts_with(arg)).unwrap_or_else(|| panic!("{arg} missing: {out}"));
        assert!(line.trim_start().len() > arg.len() + 5, "{arg} has no description: {line}");
    }
}

#[test]
fn bench_reports_stages_ratio_and_throughput_for_unet_and_sam2() {
    let out = tmp("bench");
    let json = out.join("bench.json");
    let (ok, stdout, err) = segrt(&[
        "bench",
        "--model",
        model("demo_unet.onnx").to_str().unwrap(),
        "--image",
        sample("lesion_06.png").to_str().unwrap(),
        "--threads",
        "1,2",
        "--runs",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(
        stdout.contains("session build") && stdout.contains("bare ONNX Runtime run") && stdout.contains("2 calling thread(s)"),
        "{stdout}"
    );
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(report["call_vs_bare_run"].as_f64().unwrap() > 0.0, "{report}");
    assert_eq!(report["throughput"].as_array().unwrap().len(), 2);
    assert!(report["pool"]["created"].as_u64().unwrap() <= 2, "{report}");
    assert_eq!(report["provider_in_use"], "CPU");

    let dir = repo().join("models/sam2");
    let (ok, stdout, err) = segrt(&[
        "bench",
        "--encoder",
        dir.join("sam2_tiny_samexporter_encoder.onnx").to_str().unwrap(),
        "--decoder",
        dir.join("sam2_tiny_samexporter_decoder.onnx").to_str().unwrap(),
        "--image",
        sample("lesion_06.png").to_str().unwrap(),
        "--threads",
        "1",
        "--runs",
        "2",
    ]);
    assert!(ok, "{err}");
    assert!(stdout.contains("\"click\"") && stdout.contains("encoder"), "{stdout}");

    // Bad values: one line, non-zero exit.
    let (ok, _, err) = segrt(&["bench", "--model", model("demo_unet.onnx").to_str().unwrap(), "--threads", "0,x"]);
    assert!(!ok && err.contains("--threads") && err.lines().count() == 1, "{err}");
}

#[test]
fn cache_flags_reach_the_model_cache() {
    let out = tmp("cache");
    let cache = out.join("cache dir");
    let (model_path, image) = (model("demo_unet.onnx"), sample("lesion_03.png"));
    let unet = |extra: &[&str]| {
        let mut args = vec!["unet", "--model", model_path.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.push(image.to_str().unwrap());
        let (ok, _, err) = segrt(&args);
        assert!(ok, "{err}");
        err
    };
    assert!(unet(&[]).contains("model cache off"));
    assert!(unet(&["--cache-dir", cache.to_str().unwrap()]).contains("model cache miss"));
    assert!(unet(&["--cache-dir", cache.to_str().unwrap()]).contains("model cache hit"));
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
    // --cache: a segrt-cache folder next to the model.
    let copy = out.join("m.onnx");
    std::fs::copy(model("demo_unet.onnx"), &copy).unwrap();
    let (ok, _, err) = segrt(&[
        "unet",
        "--model",
        copy.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--cache",
        sample("lesion_03.png").to_str().unwrap(),
    ]);
    assert!(ok && err.contains("model cache miss"), "{err}");
    assert!(out.join("segrt-cache").is_dir());
    let (ok, _, err) =
        segrt(&["unet", "--model", copy.to_str().unwrap(), "--cache", "--cache-dir", "x", sample("lesion_03.png").to_str().unwrap()]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn sam2_everything_writes_labels_overlay_and_json() {
    let out = tmp("everything");
    let dir = repo().join("models/sam2");
    let (labels, overlay, json) = (out.join("labels.png"), out.join("overlay.png"), out.join("objects.json"));
    let (ok, _, err) = segrt(&[
        "sam2",
        "--everything",
        dir.join("reference/img1.png").to_str().unwrap(),
        "--encoder",
        dir.join("sam2_tiny_sam2onnx_encoder.onnx").to_str().unwrap(),
        "--decoder",
        dir.join("sam2_tiny_sam2onnx_batched_decoder.onnx").to_str().unwrap(),
        "--points-per-side",
        "8",
        "--pred-iou-thresh",
        "0.2",
        "--stability-score-thresh",
        "0.05",
        "--box-nms-thresh",
        "1.0",
        "--out",
        labels.to_str().unwrap(),
        "--overlay",
        overlay.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    // The handle's first decoder run is one prompt, measuring its memory cost; then the other 63 in one.
    assert!(err.contains("prompt batch yes") && err.contains("64 prompts in 2 decoder runs"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let objects = doc["objects"].as_array().unwrap();
    assert!(!objects.is_empty());
    // the label image is 16-bit, the image's size, and holds exactly the ids of the records
    let img = image::open(&labels).unwrap().to_luma16();
    assert_eq!((img.width(), img.height()), (200, 300));
    let mut seen: Vec<u16> = img.as_raw().iter().copied().filter(|v| *v != 0).collect();
    seen.sort_unstable();
    seen.dedup();
    assert!(seen.iter().all(|v| (*v as usize) <= objects.len()), "{seen:?}");
    assert_eq!(objects[0]["id"], 1);
    let ov = image::open(&overlay).unwrap().to_rgb8();
    assert_eq!((ov.width(), ov.height()), (200, 300));
    // bad values give a one-line error and exit code 1
    let (ok, _, err) = segrt(&[
        "sam2",
        "--everything",
        dir.join("reference/img1.png").to_str().unwrap(),
        "--encoder",
        dir.join("sam2_tiny_sam2onnx_encoder.onnx").to_str().unwrap(),
        "--decoder",
        dir.join("sam2_tiny_sam2onnx_decoder.onnx").to_str().unwrap(),
        "--points-per-side",
        "0",
        "--out",
        labels.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("points_per_side is 0"), "{err}");
}

/// The SAM2 video reference clip (models/sam2/video/reference/, recorded by the official
/// `SAM2VideoPredictor`) and its index.json.
fn video_ref() -> (std::path::PathBuf, serde_json::Value) {
    let dir = repo().join("models/sam2/video/reference");
    let idx = serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    (dir, idx)
}

/// `--point X,Y,L` for every point of a reference click event, and `--object` its object.
fn event_points(e: &serde_json::Value) -> Vec<String> {
    let obj = e["obj_id"].as_i64().unwrap();
    e["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(e["labels"].as_array().unwrap())
        .flat_map(|(p, l)| {
            let point = format!("{},{},{}", p[0].as_f64().unwrap(), p[1].as_f64().unwrap(), l.as_i64().unwrap());
            ["--point".to_string(), point, "--object".to_string(), obj.to_string()]
        })
        .collect()
}

/// `--point-on FRAME:OBJ:X,Y,L` for every point of a reference click event.
fn event_points_on(e: &serde_json::Value) -> Vec<String> {
    let (frame, obj) = (e["frame"].as_u64().unwrap(), e["obj_id"].as_i64().unwrap());
    e["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(e["labels"].as_array().unwrap())
        .flat_map(|(p, l)| {
            [
                "--point-on".to_string(),
                format!("{frame}:{obj}:{},{},{}", p[0].as_f64().unwrap(), p[1].as_f64().unwrap(), l.as_i64().unwrap()),
            ]
        })
        .collect()
}

/// Runs `segrt track --json` on the reference frames (`frames`: a folder or glob) with `clicks`;
/// returns the parsed per-frame records.
fn track_reference(frames: &str, clicks: &[String], out: &std::path::Path) -> Vec<serde_json::Value> {
    let models = repo().join("models/sam2/video");
    let mut args: Vec<String> = vec!["track".into(), "--models".into(), models.display().to_string(), "--frames".into(), frames.into()];
    args.extend(clicks.iter().cloned());
    args.extend(["--out".into(), out.display().to_string(), "--overlay".into(), "--json".into(), "--threads".into(), "2".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, stdout, err) = segrt(&args);
    assert!(ok, "{err}");
    eprintln!("{}", err.lines().last().unwrap_or(""));
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    doc["frames"].as_array().unwrap().clone()
}

/// Identical pixels (%) of a written mask and a reference mask (both 0/255).
fn identical_pct(mask: &std::path::Path, reference: &std::path::Path) -> f64 {
    let (a, b) = (load_gray(mask), load_gray(reference));
    assert_eq!(a.len(), b.len(), "{} has another size than {}", mask.display(), reference.display());
    a.iter().zip(&b).filter(|(x, y)| (**x > 127) == (**y > 127)).count() as f64 * 100.0 / a.len() as f64
}

/// Compares frame `frame`, object `obj` of a run with the official predictor's propagation record:
/// the mask (every pixel), the present flag and the score. Returns the identical pixels (%).
fn compare_with_reference(dir: &std::path::Path, idx: &serde_json::Value, got: &[serde_json::Value], frame: usize, obj: i64) -> f64 {
    let rec = idx["propagation"][frame]["objects"].as_array().unwrap().iter().find(|o| o["obj_id"] == obj).unwrap();
    let ob = got[frame]["objects"].as_array().unwrap().iter().find(|o| o["object_id"] == obj).unwrap();
    let mask = std::path::PathBuf::from(ob["mask"].as_str().unwrap());
    assert_eq!(mask.file_name().unwrap().to_str().unwrap(), format!("{:05}_obj{obj}.png", frame));
    let same = identical_pct(&mask, &dir.join(rec["mask"].as_str().unwrap()));
    eprintln!(
        "frame {frame:2} obj {obj}: identical px {same:.3}%, score {} vs reference {}, present {} vs {}",
        ob["score"], rec["object_score_logit"], ob["present"], rec["object_present"]
    );
    same
}

fn assert_matches(dir: &std::path::Path, idx: &serde_json::Value, got: &[serde_json::Value], frame: usize, obj: i64) {
    let same = compare_with_reference(dir, idx, got, frame, obj);
    assert_eq!(same, 100.0, "frame {frame} obj {obj}: {same:.3}% identical pixels");
    let rec = idx["propagation"][frame]["objects"].as_array().unwrap().iter().find(|o| o["obj_id"] == obj).unwrap();
    let ob = got[frame]["objects"].as_array().unwrap().iter().find(|o| o["object_id"] == obj).unwrap();
    assert_eq!(ob["present"], rec["object_present"], "frame {frame} obj {obj}: present flag");
    let (s, r) = (ob["score"].as_f64().unwrap(), rec["object_score_logit"].as_f64().unwrap());
    assert!((s - r).abs() < 1e-3, "frame {frame} obj {obj}: score {s} vs reference {r}");
}

/// `segrt track` with the reference's frame-0 clicks only (objects 1 and 2). The official run also
/// clicked object 1 on frame 5 before propagating (its frames 1-4 attend to that future
/// conditioning frame, which a stream cannot), so object 1 is compared on frame 0 only; object 2
/// has no other click before propagation: all 14 frames must match. Object 1 on frame 5, which the
/// reference clicked and this run did not, must differ (the comparison sees a difference).
#[test]
fn track_with_frame_0_clicks_matches_the_official_predictor() {
    let (dir, idx) = video_ref();
    let events = idx["events"].as_array().unwrap();
    assert_eq!((events[0]["frame"].as_u64(), events[1]["frame"].as_u64()), (Some(0), Some(0)));
    let clicks: Vec<String> = events[..2].iter().flat_map(event_points).collect();
    let out = tmp("track0");
    let got = track_reference(dir.join("frames").to_str().unwrap(), &clicks, &out);
    assert_eq!(got.len(), 14);
    assert_matches(&dir, &idx, &got, 0, 1);
    for t in 0..14 {
        assert_matches(&dir, &idx, &got, t, 2);
        assert!(out.join(format!("{t:05}_overlay.png")).exists(), "overlay of frame {t}");
        assert!(got[t]["ms"].as_f64().unwrap() > 0.0);
    }
    let unclicked = compare_with_reference(&dir, &idx, &got, 5, 1);
    assert!(unclicked < 99.0, "object 1 on frame 5 without the reference's click: {unclicked:.3}% identical");
}

/// The reference's frame-5 correction of object 1 replayed with --point-on (given when frame 5
/// arrives, before it is tracked: a conditioning frame, as in the official run), frames given as a
/// glob, with --keep-frames 1: object 1 on frames 0 and 5 and object 2 on every frame match the
/// official predictor.
#[test]
fn track_replays_later_clicks_with_point_on_and_takes_a_glob() {
    let (dir, idx) = video_ref();
    let events = idx["events"].as_array().unwrap();
    assert_eq!((events[2]["frame"].as_u64(), events[2]["obj_id"].as_i64()), (Some(5), Some(1)));
    assert_eq!(events[2]["storage"], "cond_frame_outputs");
    let mut clicks: Vec<String> = events[..2].iter().flat_map(event_points).collect();
    clicks.extend(event_points_on(&events[2]));
    // Clicks reach each frame on arrival: one held frame is enough, and must not change a mask.
    clicks.extend(["--keep-frames".to_string(), "1".to_string()]);
    let out = tmp("track5");
    let got = track_reference(dir.join("frames/000*.png").to_str().unwrap(), &clicks, &out);
    assert_eq!(got.len(), 14);
    for t in [0, 5] {
        assert_matches(&dir, &idx, &got, t, 1);
    }
    for t in 0..14 {
        assert_matches(&dir, &idx, &got, t, 2);
    }
}

/// `--box` (with and without clicks, on frame 0 and on a later frame) gives, frame by frame, the
/// masks of the tracker given the same prompts directly.
#[test]
fn track_box_prompts_reach_the_tracker() {
    use segrt::sam2::video::{Tracker, TrackerOptions, VideoModel};
    let (dir, _) = video_ref();
    let prompts: Vec<String> =
        ["--box", "200,20,300,90", "--box", "0:2:30,60,120,170", "--point-on", "0:2:60,100,1", "--box", "6:2:100,90,230,200"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let out = tmp("track-box");
    let got = track_reference(dir.join("frames").to_str().unwrap(), &prompts, &out);
    let options = segrt::Options { intra_threads: 2, ..segrt::Options::default() };
    let model = std::sync::Arc::new(VideoModel::from_dir(&repo().join("models/sam2/video"), options).unwrap());
    let mut tracker = Tracker::new(model, TrackerOptions { num_frames: Some(14), keep_frames: Some(7), ..Default::default() }).unwrap();
    for (t, rec) in got.iter().enumerate() {
        let rgb = load_rgb(&dir.join(format!("frames/{t:05}.png")));
        tracker.add_frame(&segrt::ImageView::new(&rgb.data, rgb.w, rgb.h, 0, segrt::PixelFormat::Rgb24).unwrap()).unwrap();
        if t == 0 {
            tracker.add_prompt(0, 1, &[], &[], Some([200.0, 20.0, 300.0, 90.0])).unwrap();
            tracker.add_prompt(0, 2, &[[60.0, 100.0]], &[1], Some([30.0, 60.0, 120.0, 170.0])).unwrap();
        }
        if t == 6 {
            tracker.add_prompt(6, 2, &[], &[], Some([100.0, 90.0, 230.0, 200.0])).unwrap();
        }
        let fm = tracker.track_frame(t).unwrap();
        let objects = rec["objects"].as_array().unwrap();
        assert_eq!(objects.len(), 2);
        for (o, want) in objects.iter().zip(&fm.objects) {
            assert_eq!(o["object_id"].as_i64().unwrap(), want.object_id as i64);
            let mask = load_gray(std::path::Path::new(o["mask"].as_str().unwrap()));
            assert!(mask == want.mask, "frame {t} object {}: the CLI's mask differs from the tracker's", want.object_id);
        }
    }
}

/// `segrt track --both-ways` with a click on the middle frame only gives, on every frame, the masks
/// of the official predictor propagating forward and then in reverse from that frame
/// (models/sam2/video/reference/volume/both: its first two propagations); streamed, an object first
/// clicked on a later frame starts there.
#[test]
fn track_both_ways_from_a_middle_frame_matches_the_official_predictor() {
    let (dir, _) = video_ref();
    let vdir = dir.join("volume/both");
    let idx: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(vdir.join("index.json")).unwrap()).unwrap();
    let events = idx["events"].as_array().unwrap();
    let click = &events[0];
    assert_eq!((click["op"].as_str(), click["frame"].as_u64()), (Some("prompt"), Some(7)));
    let p = &click["points"][0];
    let point = format!("7:1:{},{},1", p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
    let out = tmp("track-both");
    let args = ["--point-on".to_string(), point.clone(), "--both-ways".into(), "--keep-frames".into(), "2".into()];
    let got = track_reference(dir.join("frames").to_str().unwrap(), &args, &out);
    assert_eq!(got.iter().map(|r| r["frame"].as_u64().unwrap()).collect::<Vec<_>>(), (0..14).collect::<Vec<_>>());
    // The final mask of each frame: frames after 7 from the forward pass, 7 and before from the reverse one.
    let mut worst = 100.0f64;
    for prop in [&events[1], &events[2]] {
        for rec in prop["frames"].as_array().unwrap() {
            let t = rec["frame"].as_u64().unwrap() as usize;
            // The forward pass gives frames 8.., the reverse one 7 and before.
            if (t > 7) == prop["reverse"].as_bool().unwrap() {
                continue;
            }
            let ob = &got[t]["objects"][0];
            let same = identical_pct(std::path::Path::new(ob["mask"].as_str().unwrap()), &vdir.join(rec["masks"][0].as_str().unwrap()));
            let (s, r) = (ob["score"].as_f64().unwrap(), rec["object_score_logits"][0].as_f64().unwrap());
            assert!((s - r).abs() < 1e-3, "frame {t}: score {s} vs reference {r}");
            worst = worst.min(same);
        }
    }
    println!("--both-ways from frame 7: masks >= {worst:.3} % identical to the official predictor's");
    assert!(worst >= 99.5, "{worst:.3} %");
    // Streamed, the same click starts object 1 on frame 7: frames before it have no result.
    let out = tmp("track-later");
    let got = track_reference(dir.join("frames").to_str().unwrap(), &["--point-on".to_string(), point], &out);
    assert_eq!(got.iter().map(|r| r["frame"].as_u64().unwrap()).collect::<Vec<_>>(), (7..14).collect::<Vec<_>>());
}

#[test]
fn track_user_mistakes_give_one_line() {
    let (dir, _) = video_ref();
    let models = repo().join("models/sam2/video").display().to_string();
    let frames = dir.join("frames");
    // A frame of another size, among copies of two reference frames.
    let odd = tmp("track-odd");
    std::fs::copy(frames.join("00000.png"), odd.join("a.png")).unwrap();
    std::fs::copy(frames.join("00001.png"), odd.join("b.png")).unwrap();
    image::RgbImage::new(32, 24).save(odd.join("c.png")).unwrap();
    let empty = tmp("track-empty");
    std::fs::write(empty.join("notes.txt"), "not a frame").unwrap();
    let out = tmp("track-err");
    let f = frames.display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![odd.display().to_string(), "--point".into(), "10,10".into()], "c.png is 32x24"),
        (vec![empty.display().to_string(), "--point".into(), "10,10".into()], "no image files"),
        (vec![empty.join("*.png").display().to_string(), "--point".into(), "10,10".into()], "no files match"),
        (vec![f.clone(), "--point".into(), "10;10".into()], "--point '10;10'"),
        (vec![f.clone(), "--point".into(), "1,2,3,4".into()], "expected 2 or 3"),
        (vec![f.clone(), "--point".into(), "1,2,5".into()], "LABEL must be 1"),
        (vec![f.clone(), "--point".into(), "1,2".into(), "--point-on".into(), "5:1".into()], "expected FRAME:OBJ:X,Y"),
        (vec![f.clone(), "--point".into(), "1,2".into(), "--point-on".into(), "99:1:3,4".into()], "frame 99 does not exist"),
        (vec![f.clone()], "no prompts"),
        (vec![f.clone(), "--box".into(), "1,2,3".into()], "expected 4"),
        (vec![f.clone(), "--box".into(), "50,50,10,60".into()], "X2 must not be left of X1"),
        (vec![f.clone(), "--box".into(), "99:1:1,2,3,4".into()], "frame 99 does not exist"),
        (vec![f.clone(), "--box".into(), "0:x:1,2,3,4".into()], "expected [FRAME:OBJ:]X1,Y1,X2,Y2"),
        (vec![f.clone(), "--box".into(), "1,2,30,40".into(), "--box".into(), "0:1:5,6,70,80".into()], "already has a box on frame 0"),
    ];
    for (rest, expected) in cases {
        let mut args: Vec<String> =
            vec!["track".into(), "--models".into(), models.clone(), "--out".into(), out.display().to_string(), "--frames".into()];
        args.extend(rest);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, err) = segrt(&args);
        assert!(!ok, "{args:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("segrt: error: ") && err.contains(expected), "{args:?}: expected '{expected}' in {err}");
        println!("{expected} -> {}", err.trim());
    }
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "a refused run wrote outputs");
}

/// A 16-bit colour PNG whose values lie in 128..2168, as CT stored values do (their high byte
/// alone holds 0..8: a picture cut to it is all but black).
fn ct_like_png(dir: &std::path::Path) -> (std::path::PathBuf, Vec<u8>) {
    let p = sample("lesion_03.png");
    let img = load_rgb(&p);
    let wide: Vec<u16> = img.data.iter().map(|v| *v as u16 * 8 + 128).collect();
    let path = dir.join("ct_like.png");
    image::ImageBuffer::<image::Rgb<u16>, _>::from_raw(img.w as u32, img.h as u32, wide).unwrap().save(&path).unwrap();
    (path, gt_for(&p))
}

#[test]
fn sixteen_bit_files_keep_their_contrast_and_take_the_intensity_flags() {
    let dir = tmp("ct");
    let (png, truth) = ct_like_png(&dir);
    let unet = |flags: &[&str]| -> (Vec<u8>, String) {
        let out = dir.join("out");
        let mut args = vec!["unet", "--model", model("demo_unet.onnx").to_str().unwrap().to_string().leak(), "--out"];
        args.push(out.to_str().unwrap().to_string().leak());
        args.extend_from_slice(flags);
        args.push(png.to_str().unwrap().to_string().leak());
        let (ok, _, err) = segrt(&args);
        assert!(ok, "{err}");
        (image::open(out.join("ct_like_mask.png")).unwrap().to_luma8().into_raw(), err)
    };
    // No flags: per-image min-max -> 0..255 keeps the picture.
    let (mask, report) = unet(&[]);
    assert!(report.contains("intensity: default"), "{report}");
    assert!(iou(&mask, &truth) > 0.9, "default stage: IoU {}", iou(&mask, &truth));
    // The DICOM way: rescale to "HU" (v - 1024), then the window that gives the 8-bit values back.
    let (mask, report) = unet(&["--rescale", "1,-1024", "--range", "-896,1144"]);
    assert!(report.contains("intensity: v * 1 + -1024, window -896..1144"), "{report}");
    assert!(iou(&mask, &truth) > 0.9, "rescale + window: IoU {}", iou(&mask, &truth));
    // A preset and the used bits reach the report; a value above them is an error naming the pixel.
    let (_, report) = unet(&["--window", "soft-tissue", "--bits", "12"]);
    assert!(report.contains("12 used bits, window -160..240 (centre 40, width 400)"), "{report}");
    let out = dir.join("out");
    let (ok, _, err) = segrt(&[
        "unet",
        "--model",
        model("demo_unet.onnx").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--bits",
        "10",
        png.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(err.contains("outside the 10 used bits"), "{err}");
    // Flag mistakes are one line.
    for (flags, expect) in [
        (&["--window", "40,0"][..], "zero or negative width"),
        (&["--window", "liver"][..], "presets soft-tissue, lung, bone, brain"),
        (&["--percentiles", "99,1"][..], "percentiles 99..1"),
        (&["--window", "40,400", "--range", "0,1"][..], "cannot be used with"),
    ] {
        let mut args = vec!["unet", "--model", "m.onnx"];
        args.extend_from_slice(flags);
        args.push("a.png");
        let (ok, _, err) = segrt(&args);
        assert!(!ok && err.contains(expect), "{flags:?}: {err}");
    }
}

#[test]
fn sam2_reads_a_16_bit_file_as_16_bits() {
    let dir = tmp("ct-sam2");
    let (png, _) = ct_like_png(&dir);
    let sam = repo().join("models/sam2");
    let mask = dir.join("mask.png");
    let (ok, _, err) = segrt(&[
        "sam2",
        "--encoder",
        sam.join("sam2_tiny_samexporter_encoder.onnx").to_str().unwrap(),
        "--decoder",
        sam.join("sam2_tiny_samexporter_decoder.onnx").to_str().unwrap(),
        "--window",
        "1148,2040",
        "--point",
        "100,100",
        "--out",
        mask.to_str().unwrap(),
        png.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("RGB48; intensity: window 128..2168"), "{err}");
    assert!(mask.exists());
}
