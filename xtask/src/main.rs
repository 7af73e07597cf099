//! segrt's maintenance tasks (`cargo xtask ...`, an alias in `.cargo/config.toml`).
//!
//! `bindings` writes the generated files from the sources of the C boundary: `include/segrt.h`
//! (cbindgen, configured by `cbindgen.toml`), `bindings/csharp/NativeMethods.g.cs` (csbindgen) and
//! `bindings/csharp/AssemblyInfo.g.cs` (the crate's version). `bindings --check` writes them aside and
//! fails, naming each file, when a committed one differs: CI runs it, so a change to `src/ffi/` lands
//! with its header. Generating here and not in segrt's `build.rs` keeps every build of segrt from
//! compiling the generators and from rewriting files of the source tree.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The C boundary and its vocabulary: the generators read these files and nothing else. csbindgen
/// writes the functions, then the structs, in the order of this list (cbindgen follows the `mod`
/// declarations of `src/ffi/mod.rs`): a new file goes where its items belong in the C# declarations.
const FFI_FILES: &[&str] = &[
    "src/ffi/runtime.rs",
    "src/ffi/control.rs",
    "src/ffi/handles.rs",
    "src/ffi/session.rs",
    "src/ffi/external_data.rs",
    "src/ffi/sam2.rs",
    "src/ffi/video.rs",
    "src/ffi/track.rs",
    "src/ffi/options.rs",
    "src/ffi/images.rs",
    "src/ffi/intensity.rs",
    "src/ffi/intensity_types.rs",
    "src/ffi/sam2_types.rs",
    "src/ffi/track_types.rs",
    "src/ffi/regions.rs",
    "src/ffi/regions_types.rs",
    "src/ffi/objects.rs",
    "src/ffi/reference.rs",
    "src/ffi/reference_types.rs",
    "src/ffi/status.rs",
    "src/ffi/enums.rs",
    "src/ffi/mod.rs",
];

/// The generated files, relative to the repository root.
const HEADER: &str = "include/segrt.h";
const CSHARP: &str = "bindings/csharp/NativeMethods.g.cs";
const ASSEMBLY_INFO: &str = "bindings/csharp/AssemblyInfo.g.cs";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["bindings"] => write_bindings(Path::new(".")).map(|()| ExitCode::SUCCESS),
        ["bindings", "--check"] => check_bindings(),
        _ => {
            eprintln!("usage: cargo xtask bindings [--check]");
            return ExitCode::from(2);
        }
    };
    result.unwrap_or_else(|e| {
        eprintln!("xtask: {e}");
        ExitCode::FAILURE
    })
}

/// The repository root (the generators take paths relative to it, as in `cbindgen.toml`).
fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask/ lies in the repository").to_path_buf()
}

/// Writes the three generated files under `out` (the repository itself, or a folder to compare from).
fn write_bindings(out: &Path) -> Result<(), String> {
    std::env::set_current_dir(repository_root()).map_err(|e| format!("cannot enter the repository: {e}"))?;
    for f in [HEADER, CSHARP] {
        let folder = out.join(f);
        let folder = folder.parent().expect("a file in a folder");
        std::fs::create_dir_all(folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    }
    let version = crate_version()?;
    let mut parts = version.split('.').map(|p| p.split('-').next().unwrap_or("0").to_string());
    let mut next = || parts.next().ok_or_else(|| format!("Cargo.toml's version {version} is not MAJOR.MINOR.PATCH"));
    let (major, minor, patch) = (next()?, next()?, next()?);

    let mut config = cbindgen::Config::from_file("cbindgen.toml").map_err(|e| format!("cbindgen.toml: {e}"))?;
    config.after_includes = Some(format!(
        "\n#define SEGRT_VERSION \"{version}\"\n#define SEGRT_VERSION_MAJOR {major}\n#define SEGRT_VERSION_MINOR {minor}\n#define SEGRT_VERSION_PATCH {patch}\n"
    ));
    // cbindgen follows the `mod` declarations of src/ffi/mod.rs itself (naming every file would
    // declare each function twice); csbindgen reads the files one by one.
    let header =
        cbindgen::Builder::new().with_config(config).with_src("src/ffi/mod.rs").generate().map_err(|e| format!("cbindgen: {e}"))?;
    header.write_to_file(out.join(HEADER));

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
        // The ABI version the wrapper was generated with: its expected version comes from here, not a copy.
        .csharp_generate_const_filter(|name| name == "SEG_ABI_VERSION")
        .generate_csharp_file(out.join(CSHARP))
        .map_err(|e| format!("csbindgen: {e}"))?;

    // The wrapper's assembly version is the crate's (one version source; the NuGet package takes it
    // from Cargo.toml too).
    let assembly_info = format!(
        "// Generated by `cargo xtask bindings` from Cargo.toml's version. Do not edit.\n\
         [assembly: System.Reflection.AssemblyVersion(\"{major}.{minor}.{patch}.0\")]\n\
         [assembly: System.Reflection.AssemblyFileVersion(\"{major}.{minor}.{patch}.0\")]\n\
         [assembly: System.Reflection.AssemblyInformationalVersion(\"{version}\")]\n"
    );
    std::fs::write(out.join(ASSEMBLY_INFO), assembly_info).map_err(|e| format!("{ASSEMBLY_INFO}: {e}"))
}

/// Generates into `target/xtask/generated/` and compares with the committed files.
fn check_bindings() -> Result<ExitCode, String> {
    let root = repository_root();
    let fresh = root.join("target/xtask/generated");
    let _ = std::fs::remove_dir_all(&fresh);
    write_bindings(&fresh)?;
    let stale: Vec<&str> = [HEADER, CSHARP, ASSEMBLY_INFO]
        .into_iter()
        .filter(|f| std::fs::read(root.join(f)).ok() != std::fs::read(fresh.join(f)).ok())
        .collect();
    if stale.is_empty() {
        println!("{HEADER}, {CSHARP} and {ASSEMBLY_INFO} are up to date");
        return Ok(ExitCode::SUCCESS);
    }
    for f in &stale {
        eprintln!("{f} differs from what the sources generate (fresh copy: target/xtask/generated/{f})");
    }
    eprintln!("run `cargo xtask bindings` and commit the result");
    Ok(ExitCode::FAILURE)
}

/// `version` of `[package]` in segrt's Cargo.toml (the first `version = "..."` line: the package table
/// comes first).
fn crate_version() -> Result<String, String> {
    let manifest = std::fs::read_to_string("Cargo.toml").map_err(|e| format!("Cargo.toml: {e}"))?;
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \"").and_then(|v| v.strip_suffix('"')))
        .map(str::to_string)
        .ok_or_else(|| "Cargo.toml has no version line".to_string())
}
