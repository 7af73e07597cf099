//! Bad input through the C ABI: each case gets a specific status and a message naming the problem,
//! nothing is written on failure, and the process carries on.

mod common;

use std::ptr;

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

struct Case {
    name: &'static str,
    status: SegStatus,
    message: &'static str,
}

#[test]
fn bad_input_table() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let (w, h) = (64usize, 48usize);
    let pixels = vec![128u8; w * h * 4];
    let good = image_desc(&pixels, w, h, 0, SegPixelFormat::SEG_FORMAT_BGR24);
    let mut mask = vec![0x33u8; w * h];
    let good_mask = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let run_with = |session: *mut SegSession, img: *const SegImage, m: *const SegMask| unsafe {
        seg_run_unet(session, img, m, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut())
    };
    let bad_session = 0x1234usize as *mut SegSession;
    let mut results: Vec<(Case, SegStatus, String)> = Vec::new();
    let mut check = |case: Case, got: SegStatus| {
        let msg = if got == SegStatus::SEG_OK { String::new() } else { last_error() };
        results.push((case, got, msg));
    };

    check(
        Case { name: "NULL handle", status: SegStatus::SEG_INVALID_HANDLE, message: "NULL" },
        run_with(ptr::null_mut(), &good, &good_mask),
    );
    check(
        Case { name: "made-up handle", status: SegStatus::SEG_INVALID_HANDLE, message: "not a live segrt session" },
        run_with(bad_session, &good, &good_mask),
    );
    check(
        Case { name: "NULL image", status: SegStatus::SEG_NULL_POINTER, message: "image is NULL" },
        run_with(s.0, ptr::null(), &good_mask),
    );
    check(Case { name: "NULL mask", status: SegStatus::SEG_NULL_POINTER, message: "out_mask is NULL" }, run_with(s.0, &good, ptr::null()));
    let img = SegImage { data: ptr::null(), ..good };
    check(
        Case { name: "NULL pixel data", status: SegStatus::SEG_NULL_POINTER, message: "image data is NULL" },
        run_with(s.0, &img, &good_mask),
    );
    let m = SegMask { data: ptr::null_mut(), ..good_mask };
    check(Case { name: "NULL mask data", status: SegStatus::SEG_NULL_POINTER, message: "mask data is NULL" }, run_with(s.0, &good, &m));
    let img = SegImage { stride: (w * 3 - 1) as i32, ..good };
    check(
        Case { name: "stride smaller than a row", status: SegStatus::SEG_INVALID_ARGUMENT, message: "smaller than one row" },
        run_with(s.0, &img, &good_mask),
    );
    let img = SegImage { width: 0, ..good };
    check(
        Case { name: "zero width", status: SegStatus::SEG_INVALID_ARGUMENT, message: "must be positive" },
        run_with(s.0, &img, &good_mask),
    );
    let img = SegImage { height: -5, ..good };
    check(
        Case { name: "negative height", status: SegStatus::SEG_INVALID_ARGUMENT, message: "must be positive" },
        run_with(s.0, &img, &good_mask),
    );
    let img = SegImage { width: 100_000, height: 100_000, ..good };
    check(
        Case { name: "absurd size (refused before allocating)", status: SegStatus::SEG_IMAGE_TOO_LARGE, message: "more than the limit" },
        run_with(s.0, &img, &good_mask),
    );
    let img = SegImage { width: 2_000_000_000, height: 1, stride: i32::MAX, ..good };
    check(
        Case { name: "2-gigapixel row (refused by the pixel limit first)", status: SegStatus::SEG_IMAGE_TOO_LARGE, message: "limit" },
        run_with(s.0, &img, &good_mask),
    );
    let img = SegImage { format: 42, ..good };
    check(
        Case { name: "unknown pixel format", status: SegStatus::SEG_UNSUPPORTED_FORMAT, message: "unknown pixel format 42" },
        run_with(s.0, &img, &good_mask),
    );
    let img = SegImage { format: SegPixelFormat::SEG_FORMAT_PLANAR_RGB8 as i32, ..good };
    check(
        Case { name: "planar without G/B planes", status: SegStatus::SEG_NULL_POINTER, message: "plane1" },
        run_with(s.0, &img, &good_mask),
    );
    let m = SegMask { width: (w - 1) as i32, ..good_mask };
    check(
        Case { name: "mask of the wrong size", status: SegStatus::SEG_INVALID_ARGUMENT, message: "must have the image's size" },
        run_with(s.0, &good, &m),
    );
    let m = SegMask { stride: (w - 1) as i32, ..good_mask };
    check(
        Case { name: "mask stride smaller than width", status: SegStatus::SEG_INVALID_ARGUMENT, message: "smaller than its width" },
        run_with(s.0, &good, &m),
    );
    let mut prob = vec![0f32; 10];
    let st = unsafe { seg_run_unet(s.0, &good, &good_mask, prob.as_mut_ptr(), prob.len(), ptr::null_mut(), ptr::null_mut()) };
    check(
        Case { name: "probability buffer too small", status: SegStatus::SEG_BUFFER_TOO_SMALL, message: "probability buffer holds 10" },
        st,
    );
    let mut info = SegRunInfo { struct_size: 4, ..Default::default() };
    let st = unsafe { seg_run_unet(s.0, &good, &good_mask, ptr::null_mut(), 0, &mut info, ptr::null_mut()) };
    check(Case { name: "SegRunInfo.struct_size not set", status: SegStatus::SEG_INVALID_ARGUMENT, message: "struct_size" }, st);
    // A control that is not a live one is refused before anything runs (segrt never dereferences it).
    let control = std::ptr::NonNull::<SegCallControl>::dangling().as_ptr();
    let st = unsafe { seg_run_unet(s.0, &good, &good_mask, ptr::null_mut(), 0, ptr::null_mut(), control) };
    check(Case { name: "a made-up call control", status: SegStatus::SEG_INVALID_HANDLE, message: "not a live segrt call control" }, st);

    // session creation
    let mut out: *mut SegSession = ptr::null_mut();
    let missing = cstr("/definitely/not/here/model.onnx");
    check(
        Case { name: "missing model file", status: SegStatus::SEG_MODEL_NOT_FOUND, message: "/definitely/not/here/model.onnx" },
        unsafe { seg_create(missing.as_ptr(), ptr::null(), &mut out) },
    );
    check(Case { name: "NULL model path", status: SegStatus::SEG_NULL_POINTER, message: "model_path is NULL" }, unsafe {
        seg_create(ptr::null(), ptr::null(), &mut out)
    });
    let path = cstr(model("demo_unet.onnx").to_str().unwrap());
    check(Case { name: "NULL out_session", status: SegStatus::SEG_NULL_POINTER, message: "out_session is NULL" }, unsafe {
        seg_create(path.as_ptr(), ptr::null(), ptr::null_mut())
    });
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    check(Case { name: "garbage model bytes", status: SegStatus::SEG_MODEL_INVALID, message: "cannot load the model" }, unsafe {
        seg_create_from_memory(garbage.as_ptr(), garbage.len(), ptr::null(), &mut out)
    });
    let model_bytes = std::fs::read(model("demo_unet.onnx")).unwrap();
    let truncated = &model_bytes[..model_bytes.len() / 2];
    check(Case { name: "truncated model", status: SegStatus::SEG_MODEL_INVALID, message: "cannot load the model" }, unsafe {
        seg_create_from_memory(truncated.as_ptr(), truncated.len(), ptr::null(), &mut out)
    });
    check(Case { name: "empty model", status: SegStatus::SEG_MODEL_INVALID, message: "empty" }, unsafe {
        seg_create_from_memory(model_bytes.as_ptr(), 0, ptr::null(), &mut out)
    });
    let mut o = default_options();
    o.resize_filter = 99;
    check(Case { name: "unknown option value", status: SegStatus::SEG_INVALID_ARGUMENT, message: "SegResizeFilter value 99" }, unsafe {
        seg_create(path.as_ptr(), &o, &mut out)
    });
    let mut o = default_options();
    o.threshold = f32::NAN;
    check(Case { name: "NaN threshold", status: SegStatus::SEG_INVALID_ARGUMENT, message: "threshold" }, unsafe {
        seg_create(path.as_ptr(), &o, &mut out)
    });
    let mut o = default_options();
    o.struct_size = 8;
    check(
        Case { name: "options struct_size too small", status: SegStatus::SEG_INVALID_ARGUMENT, message: "SegOptions.struct_size is 8" },
        unsafe { seg_create(path.as_ptr(), &o, &mut out) },
    );
    let mut o = default_options();
    o.provider = segrt::ffi::SegProvider::SEG_PROVIDER_CUDA as i32;
    check(
        Case {
            name: "CUDA on a CPU-only ONNX Runtime (policy require)",
            status: SegStatus::SEG_PROVIDER_UNAVAILABLE,
            message: "CUDA:0 could not be initialised",
        },
        unsafe { seg_create(path.as_ptr(), &o, &mut out) },
    );
    assert!(out.is_null(), "out_session written by a failing call");

    // freeing
    check(Case { name: "free of a made-up handle", status: SegStatus::SEG_INVALID_HANDLE, message: "not a live segrt session" }, unsafe {
        seg_free(bad_session)
    });
    let extra = create(&model("demo_unet.onnx"), None).unwrap();
    let raw = extra.0;
    std::mem::forget(extra);
    assert_eq!(unsafe { seg_free(raw) }, SegStatus::SEG_OK);
    check(Case { name: "double free", status: SegStatus::SEG_INVALID_HANDLE, message: "double free" }, unsafe { seg_free(raw) });
    assert_eq!(unsafe { seg_free(ptr::null_mut()) }, SegStatus::SEG_OK, "seg_free(NULL) is a no-op");

    let mut failures = Vec::new();
    println!("{:<50} {:<26} message", "case", "status");
    for (case, got, msg) in &results {
        println!("{:<50} {:<26} {}", case.name, got.name(), msg.lines().next().unwrap_or(""));
        if *got != case.status || !msg.contains(case.message) {
            failures.push(format!(
                "{}: expected {} containing '{}', got {} '{}'",
                case.name,
                case.status.name(),
                case.message,
                got.name(),
                msg
            ));
        }
    }
    assert!(results.len() >= 25);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(mask.iter().all(|v| *v == 0x33), "the mask was written by a failing call");

    // and the session still works
    assert!(run(&s, &good).is_ok());
}

#[test]
fn last_error_and_status_strings() {
    let mut out = ptr::null_mut();
    let missing = cstr("/nope.onnx");
    assert_eq!(unsafe { seg_create(missing.as_ptr(), ptr::null(), &mut out) }, SegStatus::SEG_MODEL_NOT_FOUND);
    let full = last_error();
    // a too-small buffer gets a truncated, NUL-terminated prefix and the needed size
    let mut small = [0x55 as std::ffi::c_char; 8];
    let needed = unsafe { seg_last_error(small.as_mut_ptr(), small.len()) };
    assert_eq!(needed, full.len() + 1);
    let got = unsafe { std::ffi::CStr::from_ptr(small.as_ptr()) }.to_str().unwrap();
    assert_eq!(got, &full[..7]);
    // the message is per thread
    std::thread::spawn(|| assert_eq!(last_error(), "")).join().unwrap();

    let name = |c: i32| unsafe { std::ffi::CStr::from_ptr(seg_status_str(c)) }.to_str().unwrap().to_string();
    assert_eq!(name(0), "SEG_OK");
    assert_eq!(name(20), "SEG_MODEL_NOT_FOUND");
    assert_eq!(name(-1), "SEG_UNKNOWN_STATUS");
    assert_eq!(name(12345), "SEG_UNKNOWN_STATUS");
    for s in SegStatus::ALL {
        assert_eq!(name(s as i32), s.name());
    }
    assert_eq!(seg_abi_version(), segrt::ffi::SEG_ABI_VERSION);
    assert_eq!(unsafe { seg_options_default(ptr::null_mut()) }, SegStatus::SEG_NULL_POINTER);
}

#[test]
fn a_model_that_is_not_a_unet_is_refused_with_its_io_listed() {
    // The multi-class test image is a PNG, not ONNX: invalid. A valid ONNX that is not a UNet:
    // a SAM2-like two-input graph is made on the fly with the smallest possible ONNX protobuf.
    let bytes = tiny_two_input_onnx();
    let mut out = ptr::null_mut();
    let st = unsafe { seg_create_from_memory(bytes.as_ptr(), bytes.len(), ptr::null(), &mut out) };
    let msg = last_error();
    assert_eq!(st, SegStatus::SEG_MODEL_UNSUPPORTED, "{msg}");
    assert!(msg.contains("2 inputs") && msg.contains("a f32") && msg.contains("b f32"), "{msg}");
}

/// An ONNX model `y = Add(a, b)` over float[1], encoded by hand (protobuf wire format).
fn tiny_two_input_onnx() -> Vec<u8> {
    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
    }
    fn field_bytes(field: u32, data: &[u8], out: &mut Vec<u8>) {
        varint(((field << 3) | 2) as u64, out);
        varint(data.len() as u64, out);
        out.extend_from_slice(data);
    }
    fn field_varint(field: u32, v: u64, out: &mut Vec<u8>) {
        varint((field << 3) as u64, out);
        varint(v, out);
    }
    // ValueInfoProto { name=1, type=2 { tensor_type=1 { elem_type=1 (FLOAT), shape=2 { dim=1 { dim_value=1 } } } } }
    fn value_info(name: &str) -> Vec<u8> {
        let mut dim = Vec::new();
        field_varint(1, 1, &mut dim);
        let mut shape = Vec::new();
        field_bytes(1, &dim, &mut shape);
        let mut tensor = Vec::new();
        field_varint(1, 1, &mut tensor);
        field_bytes(2, &shape, &mut tensor);
        let mut ty = Vec::new();
        field_bytes(1, &tensor, &mut ty);
        let mut vi = Vec::new();
        field_bytes(1, name.as_bytes(), &mut vi);
        field_bytes(2, &ty, &mut vi);
        vi
    }
    // NodeProto { input=1, input=1, output=2, op_type=4 }
    let mut node = Vec::new();
    field_bytes(1, b"a", &mut node);
    field_bytes(1, b"b", &mut node);
    field_bytes(2, b"y", &mut node);
    field_bytes(4, b"Add", &mut node);
    // GraphProto { node=1, name=2, input=11, output=12 }
    let mut graph = Vec::new();
    field_bytes(1, &node, &mut graph);
    field_bytes(2, b"g", &mut graph);
    field_bytes(11, &value_info("a"), &mut graph);
    field_bytes(11, &value_info("b"), &mut graph);
    field_bytes(12, &value_info("y"), &mut graph);
    // OperatorSetIdProto { version=2 }
    let mut opset = Vec::new();
    field_varint(2, 17, &mut opset);
    // ModelProto { ir_version=1, graph=7, opset_import=8 }
    let mut model = Vec::new();
    field_varint(1, 8, &mut model);
    field_bytes(7, &graph, &mut model);
    field_bytes(8, &opset, &mut model);
    model
}

/// Descriptors that claim more memory than any process has (GRAY16 INT32_MAX x INT32_MAX; GRAY32F
/// 2 x 2^30 rows with a stride of 0x7ffffffc) are refused by the default `max_pixels` before a byte is
/// read, as every real picture fits it: no library can prove a caller's memory readable, so the
/// default limit is what turns such a lie into a status (a host that raises it vouches for its
/// descriptors). Both point at 16 real bytes.
#[test]
fn descriptors_claiming_more_memory_than_exists_are_refused_by_the_default_pixel_limit() {
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let bytes = [0u8; 16];
    let mut mask = [0u8; 16];
    let m = SegMask { data: mask.as_mut_ptr(), width: 4, height: 4, stride: 0 };
    for (what, width, height, stride, format) in [
        ("GRAY16 INT32_MAX x INT32_MAX", i32::MAX, i32::MAX, 0, SegPixelFormat::SEG_FORMAT_GRAY16),
        ("GRAY32F 2 x 2^30, stride 0x7ffffffc", 2, 1 << 30, 0x7fff_fffc, SegPixelFormat::SEG_FORMAT_GRAY32F),
    ] {
        let img = SegImage { data: bytes.as_ptr(), width, height, stride, format: format as i32, plane1: ptr::null(), plane2: ptr::null() };
        let st = unsafe { seg_run_unet(s.0, &img, &m, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) };
        println!("{what}: {st:?} \"{}\"", last_error());
        assert_eq!(st, SegStatus::SEG_IMAGE_TOO_LARGE, "{what}");
        assert!(last_error().contains("max_pixels"), "{}", last_error());
    }
}
