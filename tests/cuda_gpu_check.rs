//! The CUDA provider's GPU check (engine/providers/cuda: archs, driver) against the stub NVIDIA
//! driver (tests/gpu/stub_cuda), which reports a chosen GPU since no GPU is lent to the tests; and
//! the reading of a library's links that tells the loaded build's CUDA release (providers/build).

use segrt::engine::providers::build;
use segrt::engine::providers::cuda::archs as cuda_archs;
use segrt::engine::providers::cuda::driver::{read_gpu, DriverError};

use std::path::PathBuf;
use std::process::Command;

use cuda_archs::{ComputeCapability, Os};

/// The stub driver, built once per test process with the system's C compiler, in a folder of the
/// process's own (nextest runs each test in a process of its own, at the same time).
fn stub_driver() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("stub_cuda-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let lib = dir.join("libcuda.so.1");
            let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/gpu/stub_cuda/stub_cuda.c");
            let status = Command::new("cc").args(["-shared", "-fPIC", "-O1", "-o"]).arg(&lib).arg(source).status().expect("cc runs");
            assert!(status.success(), "building the stub driver failed");
            lib
        })
        .clone()
}

/// The environment the stub reads is the process's: the cases run one after another in one test.
fn with_gpu<T>(vars: &[(&str, &str)], f: impl FnOnce() -> T) -> T {
    const ALL: [&str; 5] = ["STUB_CUDA_GPU", "STUB_CUDA_CC", "STUB_CUDA_NAME", "STUB_CUDA_DRIVER", "STUB_CUDA_DEVICES"];
    for k in ALL {
        std::env::remove_var(k);
    }
    for (k, v) in vars {
        std::env::set_var(k, v);
    }
    f()
}

#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn the_driver_reports_the_stubbed_gpus_and_each_gets_the_decision_of_its_build() {
    let stub = stub_driver();
    let linux13 = cuda_archs::build_for("1.31.1", Os::Linux).unwrap();
    for (preset, name, cc, allowed_under_cuda13) in [
        ("gtx1050", "NVIDIA GeForce GTX 1050", (6, 1), false),
        ("v100", "Tesla V100-SXM2-16GB", (7, 0), false),
        ("t4", "Tesla T4", (7, 5), true),
        ("rtx3060", "NVIDIA GeForce RTX 3060", (8, 6), true),
    ] {
        let gpu = with_gpu(&[("STUB_CUDA_GPU", preset), ("STUB_CUDA_DRIVER", "13000")], || read_gpu(Some(&stub), 0)).unwrap();
        assert_eq!((gpu.name.as_str(), gpu.compute_capability, gpu.driver_cuda_version, gpu.device_count), (name, cc, 13000, 1));
        let verdict = cuda_archs::check(linux13, &gpu.name, ComputeCapability::new(cc.0, cc.1));
        assert_eq!(verdict.is_ok(), allowed_under_cuda13, "{preset}: {verdict:?}");
        if let Err(reason) = verdict {
            assert!(reason.contains(name) && reason.contains("onnxruntime-gpu 1.24.4"), "{reason}");
        }
    }
    // A compute capability given outright, a second device that is not there, no device at all.
    let gpu = with_gpu(&[("STUB_CUDA_CC", "12.0"), ("STUB_CUDA_NAME", "NVIDIA GeForce RTX 5090")], || read_gpu(Some(&stub), 0)).unwrap();
    assert_eq!(gpu.compute_capability, (12, 0));
    let missing = with_gpu(&[], || read_gpu(Some(&stub), 1)).unwrap_err();
    assert_eq!(missing, DriverError::NoSuchDevice { device: 1, count: 1 });
    let none = with_gpu(&[("STUB_CUDA_DEVICES", "0")], || read_gpu(Some(&stub), 0)).unwrap_err();
    assert_eq!(none, DriverError::Call { call: "cuInit", code: 100 });
    assert!(none.to_string().contains("sees no CUDA GPU"), "{none}");
}

#[test]
fn a_missing_driver_or_another_library_is_named_as_such() {
    let missing = read_gpu(Some(std::path::Path::new("/nonexistent/libcuda.so.1")), 0).unwrap_err();
    assert!(matches!(missing, DriverError::NoDriver(_)), "{missing:?}");
    assert!(missing.to_string().starts_with("no NVIDIA driver is installed"), "{missing}");
    // The C library is a library, but not the driver.
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        let libc = read_gpu(Some(std::path::Path::new("libc.so.6")), 0).unwrap_err();
        assert_eq!(libc, DriverError::NotADriver("no cuInit".into()));
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn an_elf_librarys_needed_entries_are_read() {
    let needs = build::linked_libraries(&stub_driver()).unwrap();
    assert!(needs.iter().any(|n| n.starts_with("libc.so")), "{needs:?}");
    let not_a_library = build::linked_libraries(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")));
    assert!(not_a_library.is_err());
}
