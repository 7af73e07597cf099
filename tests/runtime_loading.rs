//! Finding ONNX Runtime: missing, not a library, relative path, then a correct path still works.
//! One test in its own binary, because a process can load ONNX Runtime only once.

mod common;

use std::ptr;

use common::*;
use segrt::ffi::SegStatus;
use segrt::ffi::*;

#[test]
fn missing_or_wrong_runtime_is_reported_and_a_later_correct_path_works() {
    let version = || {
        let mut buf = vec![0 as std::ffi::c_char; 512];
        unsafe { seg_version(buf.as_mut_ptr(), buf.len()) };
        unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
    };
    assert!(version().contains("not loaded yet"), "{}", version());

    let missing = cstr("/no/such/dir/libonnxruntime.so.1.31.1");
    assert_eq!(unsafe { seg_runtime_init(missing.as_ptr()) }, SegStatus::SEG_RUNTIME_NOT_FOUND);
    let msg = last_error();
    assert!(msg.contains("/no/such/dir/libonnxruntime.so.1.31.1") && msg.contains("no such file"), "{msg}");

    // a session asking for a missing runtime fails the same way, with nothing half-initialised
    let mut o = default_options();
    o.ort_path = missing.as_ptr();
    let err = create(&model("demo_unet.onnx"), Some(&o)).err().unwrap();
    assert_eq!(err.0, SegStatus::SEG_RUNTIME_NOT_FOUND, "{}", err.1);

    let not_a_library = cstr(model("make_models.py").to_str().unwrap());
    assert_eq!(unsafe { seg_runtime_init(not_a_library.as_ptr()) }, SegStatus::SEG_RUNTIME_INIT_FAILED);
    let msg = last_error();
    assert!(msg.contains("make_models.py") && msg.contains("cannot be loaded"), "{msg}");

    let relative = cstr("libonnxruntime.so.1.31.1");
    assert_eq!(unsafe { seg_runtime_init(relative.as_ptr()) }, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(last_error().contains("absolute path"));

    // a library that is not ONNX Runtime at all (libc exports no OrtGetApiBase)
    if let Some(libc_path) =
        ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"].iter().find(|p| std::path::Path::new(p).exists())
    {
        let p = cstr(libc_path);
        assert_eq!(unsafe { seg_runtime_init(p.as_ptr()) }, SegStatus::SEG_RUNTIME_INIT_FAILED);
        assert!(last_error().contains("not an ONNX Runtime library"), "{}", last_error());
    }

    // a library that says it is ONNX Runtime, of another version
    let fake = fake_old_runtime();
    let p = cstr(fake.to_str().unwrap());
    assert_eq!(unsafe { seg_runtime_init(p.as_ptr()) }, SegStatus::SEG_RUNTIME_INIT_FAILED);
    assert!(last_error().contains("it is ONNX Runtime 1.16.3, segrt needs 1.24 to 1.31"), "{}", last_error());

    assert!(version().contains("not loaded yet"));
    let good = repo().join(format!(".onnxruntime/libonnxruntime.so.{}", segrt::runtime::ORT_EXPECTED_VERSION));
    let good = cstr(good.to_str().unwrap());
    assert_eq!(unsafe { seg_runtime_init(good.as_ptr()) }, SegStatus::SEG_OK, "{}", last_error());
    assert!(version().contains(&format!("ONNX Runtime {} loaded from", segrt::runtime::ORT_EXPECTED_VERSION)), "{}", version());
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    let img = load_rgb(&sample("lesion_06.png"));
    assert!(run_rgb(&s, &img).mask.contains(&255));
    // once loaded, a second init is a no-op
    assert_eq!(unsafe { seg_runtime_init(ptr::null()) }, SegStatus::SEG_OK);
}

/// Builds a shared library exporting `OrtGetApiBase` that reports version 1.16.3 (with gcc).
fn fake_old_runtime() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("segrt-fake-ort-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("fake_ort.c");
    std::fs::write(
        &src,
        "typedef struct { const void *(*GetApi)(unsigned); const char *(*GetVersionString)(void); } OrtApiBase;\n\
         static const void *get_api(unsigned v) { (void)v; return 0; }\n\
         static const char *version(void) { return \"1.16.3\"; }\n\
         static const OrtApiBase base = { get_api, version };\n\
         const OrtApiBase *OrtGetApiBase(void) { return &base; }\n",
    )
    .unwrap();
    let lib = dir.join("libonnxruntime.so.1.16.3");
    let status = std::process::Command::new("gcc").args(["-shared", "-fPIC", "-o"]).arg(&lib).arg(&src).status().expect("gcc");
    assert!(status.success());
    lib
}
