//! Generates the C header (cbindgen) and the C# P/Invoke declarations (csbindgen) from the sources.
//! Both outputs are committed; CI rebuilds and fails if they changed.

use std::path::Path;

/// The C boundary and its vocabulary: the generators read these files and nothing else, so a change
/// in the library's core never regenerates the header or the C# bindings.
const FFI_FILES: &[&str] = &[
    "src/ffi/runtime.rs",
    "src/ffi/session.rs",
    "src/ffi/sam2.rs",
    "src/ffi/track.rs",
    "src/ffi/types.rs",
    "src/ffi/enums.rs",
    "src/ffi/mod.rs",
];

fn main() {
    for f in FFI_FILES.iter().chain(&["cbindgen.toml", "build.rs", "scripts/ort-version.txt"]) {
        println!("cargo:rerun-if-changed={f}");
    }
    // The ONNX Runtime release segrt is built and tested against: written once, in scripts/ort-version.txt.
    let ort_version = std::fs::read_to_string("scripts/ort-version.txt").expect("scripts/ort-version.txt");
    println!("cargo:rustc-env=SEGRT_ORT_VERSION={}", ort_version.trim());
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let version = std::env::var("CARGO_PKG_VERSION").unwrap();
    let mut parts = version.split('.').map(|p| p.split('-').next().unwrap_or("0").to_string());
    let (major, minor, patch) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());

    let mut config = cbindgen::Config::from_file(Path::new(&crate_dir).join("cbindgen.toml")).expect("cbindgen.toml");
    config.after_includes = Some(format!(
        "\n#define SEGRT_VERSION \"{version}\"\n#define SEGRT_VERSION_MAJOR {major}\n#define SEGRT_VERSION_MINOR {minor}\n#define SEGRT_VERSION_PATCH {patch}\n"
    ));
    // cbindgen follows the `mod` declarations of src/ffi/mod.rs itself (naming every file would
    // declare each function twice); csbindgen reads the files one by one.
    match cbindgen::Builder::new().with_config(config).with_src(Path::new(&crate_dir).join("src/ffi/mod.rs")).generate() {
        Ok(bindings) => {
            bindings.write_to_file(Path::new(&crate_dir).join("include/segrt.h"));
        }
        Err(e) => panic!("cbindgen failed: {e}"),
    }

    let mut cs = csbindgen::Builder::default();
    for f in FFI_FILES {
        cs = cs.input_extern_file(f);
    }
    cs.csharp_dll_name("segrt")
        .csharp_namespace("Segrt.Native")
        .csharp_class_name("NativeMethods")
        .csharp_class_accessibility("internal")
        .csharp_use_function_pointer(false)
        .csharp_use_nint_types(false)
        .csharp_generate_const_filter(|_| false)
        .generate_csharp_file(Path::new(&crate_dir).join("bindings/csharp/NativeMethods.g.cs"))
        .expect("csbindgen failed");
}
