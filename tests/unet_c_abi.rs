//! The UNet pipeline end to end through the C ABI, on the committed demo and test models.

mod common;

use std::path::Path;
use std::ptr;

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

#[test]
fn demo_model_reaches_iou_09_on_held_out_samples() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    for p in samples() {
        let img = load_rgb(&p);
        let out = run_rgb(&s, &img);
        let iou = iou(&out.mask, &gt_for(&p));
        println!("{}: IoU {iou:.4}", p.display());
        assert!(iou >= 0.9, "{}: IoU {iou:.4} < 0.9", p.display());
        assert!(out.mask.iter().all(|v| *v == 0 || *v == 255));
        assert_eq!(out.info.num_classes, 1);
        assert_eq!((out.info.model_width, out.info.model_height), (256, 256));
        assert!(out.info.inference_ms > 0.0);
        let fg = out.mask.iter().filter(|v| **v != 0).count() as u64;
        assert_eq!(out.info.foreground_pixels, fg);
        // probability map agrees with the mask
        assert!(out.mask.iter().zip(&out.prob).all(|(m, p)| (*m == 255) == (*p > 0.5)));
    }
}

#[test]
fn fp16_and_int8_variants_agree_with_fp32() {
    let fp32 = create(&model("demo_unet.onnx"), None).unwrap();
    for variant in ["demo_unet_fp16.onnx", "demo_unet_int8.onnx"] {
        let s = create(&model(variant), None).unwrap();
        for p in samples() {
            let img = load_rgb(&p);
            let a = run_rgb(&fp32, &img).mask;
            let b = run_rgb(&s, &img).mask;
            let agree = agreement(&a, &b);
            println!("{variant} {}: {:.4} % identical", p.display(), agree * 100.0);
            assert!(agree >= 0.99, "{variant} on {}: only {:.3} % identical", p.display(), agree * 100.0);
        }
    }
}

/// A layout's name, the three buffers it owns (planes, or one buffer) and the descriptor over them.
type Layout = (String, Vec<u8>, Vec<u8>, Vec<u8>, SegImage);

/// The same picture in every layout a host may hold it in.
fn all_layouts(img: &Rgb) -> Vec<Layout> {
    let (w, h) = (img.w, img.h);
    let px = |f: &dyn Fn(&[u8]) -> Vec<u8>| -> Vec<u8> { img.data.chunks(3).flat_map(f).collect() };
    let bgr = px(&|p| vec![p[2], p[1], p[0]]);
    let bgra = px(&|p| vec![p[2], p[1], p[0], 255]);
    let rgba = px(&|p| vec![p[0], p[1], p[2], 7]);
    // padded stride, as GDI+ rounds rows to 4 bytes (plus some)
    let stride = w * 3 + 13;
    let mut padded = vec![0xAAu8; stride * h];
    for y in 0..h {
        padded[y * stride..y * stride + w * 3].copy_from_slice(&bgr[y * w * 3..(y + 1) * w * 3]);
    }
    // bottom-up rows: row 0 at the highest address, negative stride
    let mut bottom_up = vec![0u8; w * 3 * h];
    for y in 0..h {
        bottom_up[(h - 1 - y) * w * 3..(h - y) * w * 3].copy_from_slice(&bgr[y * w * 3..(y + 1) * w * 3]);
    }
    let planes: Vec<Vec<u8>> = (0..3).map(|c| img.data.chunks(3).map(|p| p[c]).collect()).collect();
    let mut out = Vec::new();
    let mut push = |name: &str, buf: Vec<u8>, f: &dyn Fn(&[u8]) -> SegImage| {
        let d = f(&buf);
        out.push((name.to_string(), buf, Vec::new(), Vec::new(), d));
    };
    push("RGB24", img.data.clone(), &|b| image_desc(b, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24));
    push("BGR24", bgr.clone(), &|b| image_desc(b, w, h, 0, SegPixelFormat::SEG_FORMAT_BGR24));
    push("BGRA32", bgra, &|b| image_desc(b, w, h, 0, SegPixelFormat::SEG_FORMAT_BGRA32));
    push("RGBA32", rgba, &|b| image_desc(b, w, h, (w * 4) as i32, SegPixelFormat::SEG_FORMAT_RGBA32));
    push("BGR24 padded stride", padded, &|b| image_desc(b, w, h, stride as i32, SegPixelFormat::SEG_FORMAT_BGR24));
    push("BGR24 bottom-up", bottom_up, &|b| {
        let last_row_is_top = unsafe { b.as_ptr().add((h - 1) * w * 3) };
        SegImage { data: last_row_is_top, ..image_desc(b, w, h, -((w * 3) as i32), SegPixelFormat::SEG_FORMAT_BGR24) }
    });
    let (r, g, b) = (planes[0].clone(), planes[1].clone(), planes[2].clone());
    let d = SegImage { plane1: g.as_ptr(), plane2: b.as_ptr(), ..image_desc(&r, w, h, 0, SegPixelFormat::SEG_FORMAT_PLANAR_RGB8) };
    out.push(("PLANAR_RGB8".into(), r, g, b, d));
    out
}

#[test]
fn every_pixel_format_and_stride_gives_the_same_mask() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let img = load_rgb(&sample("lesion_04.png")); // 333 wide: rows are not 4-byte multiples
    let reference = run_rgb(&s, &img).mask;
    for (name, _buf, _g, _b, desc) in all_layouts(&img) {
        let out = run(&s, &desc).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(out.mask, reference, "{name} gives another mask");
    }
}

#[test]
fn gray_input_runs_on_colour_and_gray_models() {
    // lesion_01: the gray test model is only fine-tuned enough to exercise the 1-channel path
    // (models/README.md); it is weak on lesion_02 and lesion_04.
    let img = load_rgb(&sample("lesion_01.png"));
    let gray: Vec<u8> = img.data.chunks(3).map(|p| segrt::image::luminance(p[0], p[1], p[2])).collect();
    let gray_desc = image_desc(&gray, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_GRAY8);
    let gray_model = create(&model("test/unet_gray.onnx"), None).unwrap();
    let iou = iou(&run(&gray_model, &gray_desc).unwrap().mask, &gt_for(&sample("lesion_01.png")));
    println!("unet_gray on GRAY8: IoU {iou:.4}");
    assert!(iou >= 0.9, "unet_gray on GRAY8: IoU {iou:.4}");
    // the same model given the colour image converts it to gray itself
    assert_eq!(run_rgb(&gray_model, &img).mask, run(&gray_model, &gray_desc).unwrap().mask);
    // a colour model given a gray image sees it with R = G = B
    let colour_model = create(&model("demo_unet.onnx"), None).unwrap();
    let replicated = Rgb { w: img.w, h: img.h, data: gray.iter().flat_map(|v| [*v, *v, *v]).collect() };
    assert_eq!(run(&colour_model, &gray_desc).unwrap().mask, run_rgb(&colour_model, &replicated).mask);
}

#[test]
fn nhwc_dynamic_and_sigmoid_inside_models_match_the_reference_model() {
    let reference = create(&model("demo_unet.onnx"), None).unwrap();
    let nhwc = create(&model("test/unet_nhwc.onnx"), None).unwrap();
    let sigmoid = create(&model("test/unet_sigmoid.onnx"), None).unwrap();
    // a dynamic model fed at the reference model's size must give the reference mask
    let mut fixed = default_options();
    fixed.input_width = 256;
    fixed.input_height = 256;
    let dynamic_256 = create(&model("test/unet_dynamic.onnx"), Some(&fixed)).unwrap();
    let dynamic_native = create(&model("test/unet_dynamic.onnx"), None).unwrap();
    for p in samples() {
        let img = load_rgb(&p);
        let want = run_rgb(&reference, &img).mask;
        for (name, s) in [("NHWC", &nhwc), ("sigmoid inside", &sigmoid), ("dynamic at 256", &dynamic_256)] {
            let agree = agreement(&run_rgb(s, &img).mask, &want);
            assert!(agree >= 0.999, "{name} on {}: {:.4} % identical", p.display(), agree * 100.0);
        }
        let out = run_rgb(&dynamic_native, &img);
        let (mw, mh) = (out.info.model_width as usize, out.info.model_height as usize);
        assert_eq!((mw % 32, mh % 32), (0, 0), "dynamic size is rounded to multiples of 32");
        assert!((mw as i64 - img.w as i64).abs() <= 16 && (mh as i64 - img.h as i64).abs() <= 16);
        println!("dynamic at {mw}x{mh} on {}: IoU {:.4}", p.display(), iou(&out.mask, &gt_for(&p)));
    }
}

#[test]
fn multiclass_model_gives_class_indices() {
    let s = create(&model("test/unet_multiclass.onnx"), None).unwrap();
    for n in ["01", "02"] {
        let p = model(&format!("test/multiclass_{n}.png"));
        let img = load_rgb(&p);
        let labels = load_gray(&model(&format!("test/multiclass_{n}_labels.png")));
        let out = run_rgb(&s, &img);
        assert_eq!(out.info.num_classes, 3);
        assert!(out.info.threshold.is_nan());
        assert!(out.mask.iter().all(|v| *v < 3));
        for class in 1..3u8 {
            let a: Vec<u8> = out.mask.iter().map(|v| if *v == class { 255 } else { 0 }).collect();
            let b: Vec<u8> = labels.iter().map(|v| if *v == class { 255 } else { 0 }).collect();
            let iou = iou(&a, &b);
            println!("multiclass_{n} class {class}: IoU {iou:.4}");
            assert!(iou >= 0.75, "class {class} IoU {iou:.4}");
        }
    }
}

#[test]
fn clean_up_options_change_the_mask_as_documented() {
    let img = load_rgb(&sample("lesion_01.png"));
    let plain = run_rgb(&create(&model("demo_unet.onnx"), None).unwrap(), &img).mask;
    let mut o = default_options();
    o.min_area = u32::MAX; // every region is smaller than this
    let none = run_rgb(&create(&model("demo_unet.onnx"), Some(&o)).unwrap(), &img).mask;
    assert!(plain.iter().any(|v| *v != 0));
    assert!(none.iter().all(|v| *v == 0));

    let mut o = default_options();
    o.close_kernel = 9;
    o.fill_holes = 1;
    let closed = run_rgb(&create(&model("demo_unet.onnx"), Some(&o)).unwrap(), &img).mask;
    // closing and hole filling only ever add foreground
    assert!(plain.iter().zip(&closed).all(|(a, b)| *a == 0 || *b == 255));

    let mut o = default_options();
    o.threshold_mode = segrt::ffi::SegThresholdMode::SEG_THRESHOLD_OTSU as i32;
    let otsu = run_rgb(&create(&model("demo_unet.onnx"), Some(&o)).unwrap(), &img);
    assert!(otsu.info.threshold > 0.0 && otsu.info.threshold < 1.0);
    println!("otsu threshold {}", otsu.info.threshold);
    assert!(iou(&otsu.mask, &gt_for(&sample("lesion_01.png"))) > 0.8);
}

#[test]
fn several_threads_on_one_handle_give_identical_results() {
    let mut o = default_options();
    o.max_sessions = 4;
    let s = create(&model("demo_unet.onnx"), Some(&o)).unwrap();
    let images: Vec<Rgb> = samples().iter().take(3).map(|p| load_rgb(p)).collect();
    let expected: Vec<Vec<u8>> = images.iter().map(|i| run_rgb(&s, i).mask).collect();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let (s, images, expected) = (&s, &images, &expected);
            scope.spawn(move || {
                for k in 0..6 {
                    let i = (t + k) % images.len();
                    assert_eq!(run_rgb(s, &images[i]).mask, expected[i], "thread {t} run {k}");
                }
            });
        }
    });
    let info: serde_json::Value = serde_json::from_str(&session_info(&s)).unwrap();
    let pool = &info["pool"];
    let created = pool["created"].as_u64().unwrap();
    assert!((1..=4).contains(&created), "at most max_sessions: {info}");
    assert_eq!(pool["max_sessions"], 4, "{info}");
    println!("pool after 4 threads x 6 runs: {pool}");
    if created > 1 {
        assert!(pool["bytes_per_extra_session"].is_u64(), "measured when the second session was built: {info}");
    }
}

pub fn session_info(s: &Session) -> String {
    let mut needed = 0usize;
    let st = unsafe { seg_session_info(s.0, std::ptr::null_mut(), 0, &mut needed) };
    assert_eq!(st, SegStatus::SEG_OK, "a size query is not a failure");
    let mut small = vec![0 as std::ffi::c_char; needed - 1];
    assert_eq!(unsafe { seg_session_info(s.0, small.as_mut_ptr(), small.len(), &mut needed) }, SegStatus::SEG_BUFFER_TOO_SMALL);
    assert!(small.iter().all(|c| *c == 0), "nothing written when the buffer is too small");
    let mut buf = vec![0 as std::ffi::c_char; needed];
    assert_eq!(unsafe { seg_session_info(s.0, buf.as_mut_ptr(), needed, &mut needed) }, SegStatus::SEG_OK);
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

#[test]
fn session_info_describes_model_and_runtime() {
    let s = create(&model("test/unet_nhwc.onnx"), None).unwrap();
    let info = session_info(&s);
    let v: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(v["kind"], "unet");
    assert_eq!(v["interpretation"]["input_layout"], "NHWC");
    assert_eq!(v["interpretation"]["channels"], 3);
    assert_eq!(v["inputs"][0]["shape"], serde_json::json!([1, 256, 256, 3]));
    assert_eq!(v["provider"]["in_use"], "CPU");
    assert!(v["onnxruntime"]["version"].as_str().unwrap().starts_with("1.31"));
    let s = create(&model("test/unet_dynamic.onnx"), None).unwrap();
    let v: serde_json::Value = serde_json::from_str(&session_info(&s)).unwrap();
    assert_eq!(v["interpretation"]["height"], serde_json::Value::Null);
    assert_eq!(v["inputs"][0]["shape"][2], -1);
}

#[test]
fn model_from_memory_and_chinese_path() {
    let bytes = std::fs::read(model("demo_unet.onnx")).unwrap();
    let mut s = std::ptr::null_mut();
    let st = unsafe { seg_create_from_memory(bytes.as_ptr(), bytes.len(), std::ptr::null(), &mut s) };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    let mem = Session(s);
    drop(bytes); // segrt copied the bytes
    let dir = std::env::temp_dir().join(format!("segrt 测试 模型 {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("分割模型.onnx");
    std::fs::copy(model("demo_unet.onnx"), &path).unwrap();
    let from_file = create(&path, None).unwrap();
    let img = load_rgb(&sample("lesion_06.png"));
    assert_eq!(run_rgb(&mem, &img).mask, run_rgb(&from_file, &img).mask);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs two threads at once on `s` until the pool has built a second session (a call that finds
/// no idle session grows the pool), checking every mask against `expected`.
fn force_second_session(s: &Session, img: &Rgb, expected: &[u8]) -> serde_json::Value {
    for round in 0..200 {
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|scope| {
            for t in 0..2 {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    assert_eq!(run_rgb(s, img).mask, expected, "round {round}, thread {t}");
                });
            }
        });
        let info: serde_json::Value = serde_json::from_str(&session_info(s)).unwrap();
        if info["pool"]["created"] == 2 {
            return info["pool"].clone();
        }
    }
    panic!("two threads at once never made the pool build a second session");
}

/// The demo UNet with `max_sessions = 2`, one image, its single-session mask, and the pool's
/// figures once a second session was built.
fn demo_with_two_sessions() -> (Session, Rgb, Vec<u8>, serde_json::Value) {
    let mut o = default_options();
    o.max_sessions = 2;
    let s = create(&model("demo_unet.onnx"), Some(&o)).unwrap();
    let img = load_rgb(&sample("lesion_02.png"));
    let expected = run_rgb(&s, &img).mask;
    let pool = force_second_session(&s, &img, &expected);
    (s, img, expected, pool)
}

#[test]
fn extra_sessions_read_their_weights_from_one_shared_graph() {
    let (s, img, expected, pool) = demo_with_two_sessions();
    println!("pool: {pool}");
    let graph = pool["shared_graph_bytes"].as_u64().unwrap_or_else(|| panic!("a CPU pool that may grow shares one graph: {pool}"));
    let file = std::fs::metadata(model("demo_unet.onnx")).unwrap().len();
    assert!(graph > file / 2 && graph < file * 2, "the graph holds the weights once: {graph} bytes for a {file}-byte model");
    // Its weights (30 tensors in the demo UNet's optimised graph) must be shared values: that is
    // what makes the sessions share their pre-packed weights.
    let shared = pool["shared_initializers"].as_u64().unwrap_or(0);
    assert!(shared >= 20, "the graph's initializers are shared with every session: {pool}");
    // Both sessions, the first built from the model and the second from the graph, agree bit for bit.
    for _ in 0..4 {
        force_second_session(&s, &img, &expected);
    }
}

#[test]
fn a_pool_that_cannot_save_its_graph_still_grows_without_sharing() {
    // A temporary folder that does not exist: ONNX Runtime cannot write the graph there. (Each test
    // runs in a process of its own under nextest; nothing else here reads the temporary folder's
    // variables: TMPDIR on Linux, TMP and TEMP on Windows.)
    // Named per process: a folder left by another run (a test harness running tests in threads of one
    // process shares TMPDIR, and a test there may create it) must not decide this one.
    let missing = std::env::temp_dir().join(format!("segrt-no-such-folder-{}", std::process::id())).join("deeper");
    for var in ["TMPDIR", "TMP", "TEMP"] {
        // SAFETY: set before any thread of this test starts.
        unsafe { std::env::set_var(var, &missing) };
    }
    let (_, _, _, pool) = demo_with_two_sessions();
    assert!(pool["shared_graph_bytes"].is_null(), "nothing shared when the graph could not be saved: {pool}");
    assert!(!missing.exists());
}

#[test]
fn a_single_session_pool_saves_no_graph() {
    let mut o = default_options();
    o.max_sessions = 1;
    let s = create(&model("demo_unet.onnx"), Some(&o)).unwrap();
    let info: serde_json::Value = serde_json::from_str(&session_info(&s)).unwrap();
    assert!(info["pool"]["shared_graph_bytes"].is_null(), "{info}");
}

/// A model that keeps its weights in a side file (ONNX external data, `unet_external.onnx` +
/// `unet_external.onnx_data`, made by models/test/make_external_data_models.py) loads by its path from
/// any working directory, and gives the masks of the same model with its weights inside; locations
/// that are absolute or leave the model's folder, and a side file that is not a regular file, are
/// refused; in memory it loads with its side file given (`seg_create_from_memory_with_data`) and is
/// refused, naming the file, without it; the model cache keys on the side file's contents, and a pool
/// of two sessions sharing one graph runs it.
#[test]
fn models_with_external_data_load_from_any_folder_and_from_memory_with_their_files() {
    let dir = repo().join("models/test/external");
    let (w, h) = (64usize, 64usize);
    let mut seed = 5u32;
    let pixels: Vec<u8> = (0..w * h * 3)
        .map(|_| {
            seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
            (seed >> 24) as u8
        })
        .collect();
    let desc = image_desc(&pixels, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let expected = run(&create(&dir.join("unet_inline.onnx"), None).unwrap(), &desc).unwrap().mask;
    assert!(expected.contains(&255) && expected.contains(&0), "a mask with both classes");
    let problems = std::cell::RefCell::new(Vec::<String>::new());
    let check = |what: &str, got: Result<Session, (SegStatus, String)>| match got {
        Ok(s) => {
            let mask = run(&s, &desc).map(|r| r.mask);
            println!("{what}: SEG_OK, masks equal to the inline model's: {}", mask.as_ref() == Ok(&expected));
            if mask.as_ref() != Ok(&expected) {
                problems.borrow_mut().push(what.to_string());
            }
        }
        Err((st, message)) => {
            println!("{what}: {st:?} \"{message}\"");
            problems.borrow_mut().push(what.to_string());
        }
    };
    let external = dir.join("unet_external.onnx");
    check("by absolute path from the repository root", create(&external, None));
    let root = std::env::current_dir().unwrap();
    std::env::set_current_dir(&dir).unwrap();
    check("by absolute path from the model's folder", create(&external, None));
    check("by relative path from the model's folder", create(Path::new("unet_external.onnx"), None));
    std::env::set_current_dir(std::env::temp_dir()).unwrap();
    check("by absolute path from the temporary folder", create(&external, None));
    std::env::set_current_dir(&root).unwrap();

    // From memory: without the side file refused, naming it; with it, the same masks.
    let model_bytes = std::fs::read(&external).unwrap();
    let data = std::fs::read(dir.join("unet_external.onnx_data")).unwrap();
    let from_memory = |files: &[SegExternalFile]| -> Result<Session, (SegStatus, String)> {
        let mut s = ptr::null_mut();
        let st = unsafe {
            seg_create_from_memory_with_data(
                model_bytes.as_ptr(),
                model_bytes.len(),
                if files.is_empty() { ptr::null() } else { files.as_ptr() },
                std::mem::size_of::<SegExternalFile>(),
                files.len(),
                ptr::null(),
                &mut s,
            )
        };
        if st == SegStatus::SEG_OK {
            Ok(Session(s))
        } else {
            Err((st, last_error()))
        }
    };
    let location = cstr("unet_external.onnx_data");
    let file = SegExternalFile { location: location.as_ptr(), data: data.as_ptr(), len: data.len() };
    check("in memory with its side file", from_memory(&[file]));
    let mut s = ptr::null_mut();
    let st = unsafe { seg_create_from_memory(model_bytes.as_ptr(), model_bytes.len(), ptr::null(), &mut s) };
    println!("in memory without its side file: {st:?} \"{}\"", last_error());
    if st != SegStatus::SEG_MODEL_INVALID || !last_error().contains("side file 'unet_external.onnx_data'") {
        problems.borrow_mut().push("in memory without its side file".into());
    }
    let other = cstr("other.bin");
    let stray = SegExternalFile { location: other.as_ptr(), ..file };
    let e = from_memory(&[file, stray]).err().unwrap_or((SegStatus::SEG_OK, String::new()));
    println!("in memory with a file the model does not name: {e:?}");
    if e.0 != SegStatus::SEG_INVALID_ARGUMENT || !e.1.contains("'other.bin'") {
        problems.borrow_mut().push("a file the model does not name".into());
    }

    // Refused locations and a side file that is not a regular file.
    for (name, expect) in [("unet_escaping.onnx", "leaves the model's folder"), ("unet_absolute.onnx", "is absolute")] {
        let got = create(&dir.join(name), None).err().unwrap_or((SegStatus::SEG_OK, String::new()));
        println!("{name}: {got:?}");
        if got.0 != SegStatus::SEG_MODEL_INVALID || !got.1.contains(expect) {
            problems.borrow_mut().push(name.into());
        }
    }
    let tmp = std::env::temp_dir().join(format!("segrt-external-data-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("unet_external.onnx_data")).unwrap();
    std::fs::copy(&external, tmp.join("unet_external.onnx")).unwrap();
    let got = create(&tmp.join("unet_external.onnx"), None).err().unwrap_or((SegStatus::SEG_OK, String::new()));
    println!("a folder where the side file should be: {got:?}");
    if got.0 != SegStatus::SEG_MODEL_NOT_FOUND || !got.1.contains("it is a folder") {
        problems.borrow_mut().push("a folder as side file".into());
    }

    // The model cache: a miss then a hit; other side-file contents are another entry.
    let cache = tmp.join("cache");
    let cache_c = cstr(cache.to_str().unwrap());
    let mut cached = default_options();
    cached.cache_mode = SegCacheMode::SEG_CACHE_DIR as i32;
    cached.cache_dir = cache_c.as_ptr();
    for want in ["miss", "hit"] {
        let s = create(&external, Some(&cached)).unwrap();
        let status = common::session_info(s.0)["cache"]["status"].as_str().unwrap().to_string();
        println!("cached: {status} (expected {want})");
        if status != want {
            problems.borrow_mut().push(format!("cache {want}"));
        }
        check(&format!("through the cache ({want})"), Ok(s));
    }
    std::fs::remove_dir_all(tmp.join("unet_external.onnx_data")).unwrap();
    let other_weights: Vec<u8> = data.iter().rev().copied().collect();
    std::fs::write(tmp.join("unet_external.onnx_data"), &other_weights).unwrap();
    let s = create(&tmp.join("unet_external.onnx"), Some(&cached)).unwrap();
    let status = common::session_info(s.0)["cache"]["status"].as_str().unwrap().to_string();
    println!("cached, other side-file contents: {status}");
    if status != "miss" {
        problems.borrow_mut().push("the cache served other weights".into());
    }

    // Two sessions sharing one optimised graph, two calls at once.
    let pooled = SegOptions { max_sessions: 2, ..default_options() };
    let s = create(&external, Some(&pooled)).unwrap();
    let masks: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| run(&s, &image_desc(&pixels, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24)).unwrap().mask))
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    println!("pool of 2: shared_graph_bytes {}", common::session_info(s.0)["pool"]["shared_graph_bytes"]);
    if masks.iter().any(|m| *m != expected) {
        problems.borrow_mut().push("pool of 2".into());
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(problems.borrow().is_empty(), "{:?}", problems.borrow());
}
