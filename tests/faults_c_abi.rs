//! Faults through the C ABI, as a table: each case gets a specific status and a message that says
//! what is wrong, the process survives, and a correct call afterwards works. (A missing, foreign or
//! wrong-version ONNX Runtime is in runtime_loading.rs: a process loads ONNX Runtime only once.)
//!
//! With `--features fault-injection` it also forces a panic inside a run: `SEG_PANIC`, not an abort.

mod common;

use std::ffi::CString;
use std::ptr;

use common::*;
#[cfg(feature = "fault-injection")]
use segrt::ffi::SegPixelFormat;
use segrt::ffi::SegStatus;
use segrt::ffi::*;
use segrt::ffi::{SegProvider, SegProviderPolicy};

struct Outcome {
    case: &'static str,
    expected: SegStatus,
    got: SegStatus,
    message: String,
    must_mention: &'static str,
}

fn create_unet_status(path: &std::path::Path, options: Option<&SegOptions>) -> (SegStatus, String) {
    match create(path, options) {
        Ok(_) => (SegStatus::SEG_OK, String::new()),
        Err(e) => e,
    }
}

fn create_sam2_status(encoder: &std::path::Path, decoder: &std::path::Path) -> (SegStatus, String) {
    let (e, d) = (cstr(encoder.to_str().unwrap()), cstr(decoder.to_str().unwrap()));
    let mut s = ptr::null_mut();
    let st = unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), ptr::null(), &mut s) };
    if st == SegStatus::SEG_OK {
        drop(Session(s));
        (st, String::new())
    } else {
        assert!(s.is_null(), "out_session written on failure");
        (st, last_error())
    }
}

fn create_from_bytes_status(bytes: &[u8]) -> (SegStatus, String) {
    let mut s = ptr::null_mut();
    let st = unsafe { seg_create_from_memory(bytes.as_ptr(), bytes.len(), ptr::null(), &mut s) };
    if st == SegStatus::SEG_OK {
        drop(Session(s));
        (st, String::new())
    } else {
        (st, last_error())
    }
}

#[test]
fn fault_table() {
    let dir = std::env::temp_dir().join(format!("segrt-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let demo = std::fs::read(model("demo_unet.onnx")).unwrap();
    let empty = dir.join("empty.onnx");
    std::fs::write(&empty, b"").unwrap();
    let truncated = dir.join("truncated.onnx");
    std::fs::write(&truncated, &demo[..demo.len() / 2]).unwrap();
    let garbage = dir.join("garbage.onnx");
    std::fs::write(&garbage, (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect::<Vec<_>>()).unwrap();
    let sam = repo().join("models/sam2");
    let (encoder, decoder) = (sam.join("sam2_tiny_samexporter_encoder.onnx"), sam.join("sam2_tiny_samexporter_decoder.onnx"));

    let mut table: Vec<Outcome> = Vec::new();
    let mut row = |case, expected, (got, message): (SegStatus, String), must_mention| {
        table.push(Outcome { case, expected, got, message, must_mention })
    };

    row("model file missing", SegStatus::SEG_MODEL_NOT_FOUND, create_unet_status(&dir.join("missing.onnx"), None), "missing.onnx");
    row("model path is a folder", SegStatus::SEG_MODEL_NOT_FOUND, create_unet_status(&dir, None), "cannot read model file");
    row("model file empty", SegStatus::SEG_MODEL_INVALID, create_unet_status(&empty, None), "empty");
    row("model file truncated", SegStatus::SEG_MODEL_INVALID, create_unet_status(&truncated, None), "cannot load the model");
    row("model file of garbage bytes", SegStatus::SEG_MODEL_INVALID, create_unet_status(&garbage, None), "cannot load the model");
    row("model bytes: garbage", SegStatus::SEG_MODEL_INVALID, create_from_bytes_status(&[0xde, 0xad, 0xbe, 0xef]), "cannot load the model");
    row(
        "valid ONNX that is not a segmentation model",
        SegStatus::SEG_MODEL_UNSUPPORTED,
        create_unet_status(&model("test/not_segmentation.onnx"), None),
        "class_scores",
    );
    row("SAM2 decoder given as a UNet", SegStatus::SEG_MODEL_UNSUPPORTED, create_unet_status(&decoder, None), "point_coords");
    // Its one image input and float feature maps once made it load as a 32-class "UNet".
    row(
        "SAM2 encoder given as a UNet",
        SegStatus::SEG_MODEL_UNSUPPORTED,
        create_unet_status(&encoder, None),
        "no float output of rank 3 or 4 has the input's height and width",
    );
    row(
        "UNet given as a SAM2 pair",
        SegStatus::SEG_MODEL_UNSUPPORTED,
        create_sam2_status(&model("demo_unet.onnx"), &model("demo_unet.onnx")),
        "encoder",
    );
    row("SAM2 encoder and decoder swapped", SegStatus::SEG_MODEL_UNSUPPORTED, create_sam2_status(&decoder, &encoder), "");
    row("SAM2 decoder missing", SegStatus::SEG_MODEL_NOT_FOUND, create_sam2_status(&encoder, &dir.join("nope.onnx")), "nope.onnx");
    let mut o = default_options();
    o.provider = SegProvider::SEG_PROVIDER_CUDA as i32;
    row(
        "CUDA requested, policy require",
        SegStatus::SEG_PROVIDER_UNAVAILABLE,
        create_unet_status(&model("demo_unet.onnx"), Some(&o)),
        "CUDA:0 could not be initialised",
    );
    for (p, name) in [
        (SegProvider::SEG_PROVIDER_TENSORRT, "TensorRT:0"),
        (SegProvider::SEG_PROVIDER_DIRECTML, "DirectML:0"),
        (SegProvider::SEG_PROVIDER_OPENVINO, "OpenVINO"),
    ] {
        o.provider = p as i32;
        let case: &'static str = Box::leak(format!("{name} requested, policy require").into_boxed_str());
        let mention: &'static str = Box::leak(format!("{name} could not be initialised").into_boxed_str());
        row(case, SegStatus::SEG_PROVIDER_UNAVAILABLE, create_unet_status(&model("demo_unet.onnx"), Some(&o)), mention);
    }
    o.provider = 99;
    row("unknown provider value", SegStatus::SEG_INVALID_ARGUMENT, create_unet_status(&model("demo_unet.onnx"), Some(&o)), "99");
    o.provider = SegProvider::SEG_PROVIDER_CUDA as i32;
    o.provider_policy = SegProviderPolicy::SEG_PROVIDER_FALLBACK as i32;
    row("CUDA requested, policy fallback (runs on CPU)", SegStatus::SEG_OK, create_unet_status(&model("demo_unet.onnx"), Some(&o)), "");
    let bad_path = CString::new("/no/such/dir/libonnxruntime.so.1.31.1").unwrap();
    let mut o = default_options();
    o.ort_path = bad_path.as_ptr();
    // Once ONNX Runtime is loaded a process keeps it: a later different ort_path is refused, naming both.
    row(
        "another ort_path after ONNX Runtime is loaded",
        SegStatus::SEG_RUNTIME_INIT_FAILED,
        create_unet_status(&model("demo_unet.onnx"), Some(&o)),
        "already loaded from",
    );

    println!("{:<48} {:<28} {:<28} message", "case", "expected", "got");
    for r in &table {
        println!("{:<48} {:<28} {:<28} {}", r.case, r.expected.name(), r.got.name(), r.message.lines().next().unwrap_or(""));
    }
    for r in &table {
        assert_eq!(r.got, r.expected, "{}: {}", r.case, r.message);
        assert!(r.message.contains(r.must_mention), "{}: message should mention '{}': {}", r.case, r.must_mention, r.message);
    }

    // The process survived all of that, and a correct call works.
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let img = load_rgb(&sample("lesion_06.png"));
    assert!(run_rgb(&s, &img).mask.contains(&255));
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(feature = "fault-injection")]
#[test]
fn a_panic_inside_a_run_is_seg_panic_and_the_session_still_works() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let img = load_rgb(&sample("lesion_06.png"));
    let good = run_rgb(&s, &img).mask;
    std::env::set_var("SEGRT_INJECT_PANIC", "1");
    let err = run(&s, &image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24)).err().expect("the injected panic");
    std::env::remove_var("SEGRT_INJECT_PANIC");
    println!("forced panic: {} / {}", err.0.name(), err.1);
    assert_eq!(err.0, SegStatus::SEG_PANIC);
    assert!(err.1.contains("injected panic") && err.1.contains("host process is unharmed"), "{}", err.1);
    // The thread's session was locked when the panic unwound through it: it must still be usable.
    assert_eq!(run_rgb(&s, &img).mask, good);
}

#[test]
fn providers_probe_reports_build_support_and_initialisation() {
    let mut n = 0usize;
    assert_eq!(unsafe { seg_providers(ptr::null(), ptr::null_mut(), 0, &mut n) }, SegStatus::SEG_OK, "{}", last_error());
    let mut buf = vec![0 as std::ffi::c_char; n];
    assert_eq!(unsafe { seg_providers(ptr::null(), buf.as_mut_ptr(), n, &mut n) }, SegStatus::SEG_OK);
    let json = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    println!("{json}");
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 5);
    let cpu = &list[0];
    assert_eq!(
        (cpu["name"].as_str(), cpu["value"].as_i64(), cpu["in_this_build"].as_bool(), cpu["initialises"].as_bool()),
        (Some("CPU"), Some(0), Some(true), Some(true))
    );
    // The PyPI onnxruntime wheel is CPU-only: every GPU provider says so, with ONNX Runtime's reason.
    for p in &list[1..] {
        assert_eq!(p["in_this_build"], false, "{p}");
        assert_eq!(p["initialises"], false, "{p}");
        assert!(p["reason"].as_str().unwrap().contains("could not be initialised"), "{p}");
    }
    assert_eq!(list[1]["onnxruntime_name"], "CUDAExecutionProvider");
}

/// A GPU that registers but fails while ONNX Runtime creates the session (out of memory while the
/// weights are uploaded, a TensorRT engine that cannot be built, a cuDNN library that cannot be
/// loaded): a provider failure, not a bad model. Require: `SEG_PROVIDER_UNAVAILABLE` with the
/// reason in plain words and ONNX Runtime's text; fallback: a CPU session that runs, the reason in
/// the session info. The fault-injection build makes CUDA "register" and fail at session creation.
#[cfg(feature = "fault-injection")]
#[test]
fn a_provider_failing_while_the_session_is_created_is_unavailable_or_falls_back() {
    let ort_text = "/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:129 std::conditional_t<THRW, void, \
                    onnxruntime::common::Status> onnxruntime::CudaCall(...) CUDA failure 2: out of memory ; GPU=0 ; \
                    expr=cudaMalloc((void**)&p, size);";
    std::env::set_var("SEGRT_INJECT_PROVIDER_FAULT", ort_text);
    let mut o = default_options();
    o.provider = SegProvider::SEG_PROVIDER_CUDA as i32;
    let (status, message) = create_unet_status(&model("demo_unet.onnx"), Some(&o));
    println!("require: {} / {message}", status.name());
    assert_eq!(status, SegStatus::SEG_PROVIDER_UNAVAILABLE, "{message}");
    assert!(
        message.starts_with(
            "CUDA:0 could not be initialised (ONNX Runtime failed while creating the session on it): the GPU ran out of memory"
        ),
        "{message}"
    );
    assert!(message.contains("CUDA failure 2: out of memory") && message.ends_with("(policy: require)"), "{message}");

    o.provider_policy = SegProviderPolicy::SEG_PROVIDER_FALLBACK as i32;
    o.max_sessions = 2;
    let s = create(&model("demo_unet.onnx"), Some(&o)).expect("fallback gives a CPU session");
    let info = session_info(s.0);
    println!("fallback: {}", info["provider"]);
    assert_eq!(info["provider"]["requested"], "CUDA:0");
    assert_eq!(info["provider"]["in_use"], "CPU");
    assert!(info["provider"]["fallback_reason"].as_str().unwrap().contains("the GPU ran out of memory"), "{info}");
    let img = load_rgb(&sample("lesion_06.png"));
    assert!(run_rgb(&s, &img).mask.contains(&255));

    // SAM2: the encoder's and the decoder's sessions fall back alike.
    let mut s2 = ptr::null_mut();
    let (e, d) = (sam2_dir().join("sam2_tiny_samexporter_encoder.onnx"), sam2_dir().join("sam2_tiny_samexporter_decoder.onnx"));
    let (e, d) = (cstr(e.to_str().unwrap()), cstr(d.to_str().unwrap()));
    let st = unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &o, &mut s2) };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    let s2 = Session(s2);
    let info = session_info(s2.0);
    println!("SAM2 fallback: {info}");
    assert!(info.to_string().contains("the GPU ran out of memory"), "{info}");
    std::env::remove_var("SEGRT_INJECT_PROVIDER_FAULT");
}

/// Where the nodes ran: ONNX Runtime's own record of which provider it assigned each node, in the
/// session info. On the CPU every node is the CPU's: 45 for the demo UNet (what Python's
/// `InferenceSession.get_provider_graph_assignment_info()` lists for the same model: the graph as it
/// is partitioned, before the CPU's own fusions), in a one-session pool and a pool sharing its graph.
#[test]
fn session_info_counts_the_nodes_each_provider_was_assigned() {
    for max_sessions in [1, 2] {
        let mut o = default_options();
        o.max_sessions = max_sessions;
        let s = create(&model("demo_unet.onnx"), Some(&o)).unwrap();
        let provider = &session_info(s.0)["provider"];
        println!("max_sessions {max_sessions}: {provider}");
        assert_eq!(provider["in_use"], "CPU");
        let nodes = provider["nodes"].as_array().unwrap();
        assert_eq!(
            (nodes.len(), &nodes[0]["provider"], &nodes[0]["nodes"]),
            (1, &serde_json::json!("CPUExecutionProvider"), &serde_json::json!(45))
        );
        let by_operator: u64 = nodes[0]["operators"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(by_operator, 45, "{provider}");
        assert_eq!(nodes[0]["operators"]["Conv"], 18, "{provider}");
    }
    let s = create_sam2("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx").unwrap();
    let info = session_info(s.0);
    let nodes = info["provider"]["nodes"].as_array().unwrap();
    assert!(nodes.len() == 1 && nodes[0]["nodes"].as_u64().unwrap() > 0, "{info}");
}

/// A provider that leaves nodes to the CPU: "partly" in `in_use`, and with `require_all_nodes`
/// refused (REQUIRE) or replaced by the CPU (FALLBACK). The fault-injection build has CUDA
/// "register" and take none of the nodes.
#[cfg(feature = "fault-injection")]
#[test]
fn nodes_left_to_the_cpu_are_reported_and_can_be_refused() {
    std::env::set_var("SEGRT_INJECT_PROVIDER_FAULT", "no-nodes");
    let mut o = default_options();
    o.provider = SegProvider::SEG_PROVIDER_CUDA as i32;
    let s = create(&model("demo_unet.onnx"), Some(&o)).unwrap();
    let provider = session_info(s.0)["provider"].clone();
    println!("partly: {provider}");
    assert_eq!(provider["in_use"], "CUDA:0 (partly: 45 of 45 nodes on the CPU)");
    assert_eq!(provider["fallback_reason"], serde_json::Value::Null);

    o.require_all_nodes = 1;
    let (status, message) = create_unet_status(&model("demo_unet.onnx"), Some(&o));
    println!("require_all_nodes, require: {} / {message}", status.name());
    assert_eq!(status, SegStatus::SEG_PROVIDER_UNAVAILABLE, "{message}");
    assert!(
        message.contains("placed 45 of its 45 nodes on the CPU (Conv 18, Relu 15,") && message.contains("require_all_nodes"),
        "{message}"
    );

    o.provider_policy = SegProviderPolicy::SEG_PROVIDER_FALLBACK as i32;
    let s = create(&model("demo_unet.onnx"), Some(&o)).unwrap();
    let provider = session_info(s.0)["provider"].clone();
    println!("require_all_nodes, fallback: {provider}");
    assert_eq!(provider["in_use"], "CPU");
    assert!(provider["fallback_reason"].as_str().unwrap().contains("require_all_nodes"), "{provider}");
    std::env::remove_var("SEGRT_INJECT_PROVIDER_FAULT");
}
