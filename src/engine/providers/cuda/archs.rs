//! Which NVIDIA GPUs a CUDA build of ONNX Runtime has kernels for, and the decision made before a
//! CUDA session is created: a GPU the loaded build cannot run is refused with the build that can,
//! instead of ONNX Runtime's "no kernel image is available" at the first run (or a driver upgrade
//! that would not help).
//!
//! The tables are what `cuobjdump --list-elf` / `--list-ptx` (NVIDIA's cuobjdump 13.5 from PyPI) and
//! tests/gpu/fatbin_archs.py (the same count from the fatbin headers, which also reads DLLs) list for
//! `libonnxruntime_providers_cuda.so` / `onnxruntime_providers_cuda.dll` of the onnxruntime-gpu wheels.
//! How a kernel image runs on a GPU of compute capability M.m (NVIDIA's CUDA compatibility rules):
//! - SASS for sm_XY runs on X.m with m >= Y (same major);
//! - arch-specific SASS (sm_90a, sm_120a) runs on exactly X.Y;
//! - PTX for compute_XY is compiled by the driver for any M.m >= X.Y, at the first run (slow once,
//!   then cached), and only by a driver at least as new as the CUDA toolkit that wrote the PTX.

use std::fmt;

/// A GPU's compute capability, as the driver reports it (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    pub const fn new(major: u32, minor: u32) -> Self {
        ComputeCapability { major, minor }
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// One kind of kernel image in a build: `sm_XY` SASS (or `sm_XYa`), or `compute_XY` PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelImage {
    pub arch: ComputeCapability,
    /// `sm_XYa`: runs on exactly this compute capability.
    pub arch_specific: bool,
}

const fn sass(major: u32, minor: u32) -> KernelImage {
    KernelImage { arch: ComputeCapability::new(major, minor), arch_specific: false }
}
const fn sass_a(major: u32, minor: u32) -> KernelImage {
    KernelImage { arch: ComputeCapability::new(major, minor), arch_specific: true }
}
const fn ptx(major: u32, minor: u32) -> KernelImage {
    KernelImage { arch: ComputeCapability::new(major, minor), arch_specific: false }
}

impl fmt::Display for KernelImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}{}", self.arch.major, self.arch.minor, if self.arch_specific { "a" } else { "" })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    Windows,
}

/// The CUDA provider of one onnxruntime-gpu release on one OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaBuild {
    /// The onnxruntime-gpu release ("1.24.4").
    pub onnxruntime: &'static str,
    pub os: Os,
    /// The CUDA toolkit it was built with (build_and_package_info.py's cuda_version), as the driver
    /// reports versions: 1000 * major + 10 * minor.
    pub cuda: u32,
    /// SASS it carries.
    pub sass: &'static [KernelImage],
    /// PTX it carries for every kernel (a PTX present for a few kernels only is left out: most
    /// operators would still have no kernel).
    pub ptx: &'static [KernelImage],
    /// cuDNN releases that still run on the GPUs this build has kernels for: what the refusal names.
    pub cudnn_note: &'static str,
}

/// Every CUDA build segrt knows, newest first (cuobjdump 13.5 / tests/gpu/fatbin_archs.py, 200
/// kernel images per architecture in 1.24.4; 308 in 1.31.1, 217 of them for sm_75).
pub const CUDA_BUILDS: &[CudaBuild] = &[
    CudaBuild {
        onnxruntime: "1.31.1",
        os: Os::Linux,
        cuda: 13000,
        sass: &[sass(7, 5), sass(8, 0), sass(8, 6), sass(8, 9), sass_a(9, 0), sass_a(12, 0)],
        ptx: &[],
        cudnn_note: "cuDNN 9 for CUDA 13",
    },
    CudaBuild {
        onnxruntime: "1.31.1",
        os: Os::Windows,
        cuda: 13000,
        // Also compute_120 PTX, but for 38 kernels only.
        sass: &[sass(7, 5), sass(8, 0), sass(8, 6), sass(8, 9), sass_a(9, 0), sass_a(12, 0)],
        ptx: &[],
        cudnn_note: "cuDNN 9 for CUDA 13",
    },
    CudaBuild {
        onnxruntime: "1.24.4",
        os: Os::Linux,
        cuda: 12080,
        sass: &[sass(6, 0), sass(7, 0), sass(7, 5), sass(8, 0), sass(8, 6), sass_a(9, 0)],
        ptx: &[ptx(9, 0)],
        cudnn_note: "cuDNN 9.10 for CUDA 12 (later cuDNN releases have no kernels for Pascal and Volta)",
    },
    CudaBuild {
        onnxruntime: "1.24.4",
        os: Os::Windows,
        cuda: 12080,
        // No sm_60/sm_70/sm_80: a P100, V100 or A100 has no kernel in the Windows build.
        sass: &[sass(5, 2), sass(6, 1), sass(7, 5), sass(8, 6), sass(8, 9)],
        ptx: &[ptx(9, 0)],
        cudnn_note: "cuDNN 9.10 for CUDA 12 (later cuDNN releases have no kernels for Maxwell and Pascal)",
    },
];

/// How a build runs on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Compiled kernels for it.
    Native(KernelImage),
    /// Only PTX, which the driver compiles at the first run (minutes for the whole provider, once).
    CompiledByDriver(KernelImage),
    /// No kernel can run on it.
    None,
}

/// How `build` runs on a GPU of compute capability `cc`.
pub fn fit(build: &CudaBuild, cc: ComputeCapability) -> Fit {
    let native =
        build.sass.iter().filter(|k| if k.arch_specific { k.arch == cc } else { k.arch.major == cc.major && k.arch.minor <= cc.minor });
    if let Some(best) = native.max_by_key(|k| k.arch) {
        return Fit::Native(*best);
    }
    match build.ptx.iter().filter(|k| k.arch <= cc).max_by_key(|k| k.arch) {
        Some(p) => Fit::CompiledByDriver(*p),
        None => Fit::None,
    }
}

/// The builds known for `os` and what they have kernels for, in words ("6.0, 7.0, 7.5, ...").
fn architectures(build: &CudaBuild) -> String {
    let mut list: Vec<String> =
        build.sass.iter().map(|k| if k.arch_specific { format!("{} only", k.arch) } else { format!("{}+", k.arch) }).collect();
    list.extend(build.ptx.iter().map(|k| format!("{}+ through PTX", k.arch)));
    list.join(", ")
}

/// What a refusal tells to use instead.
fn alternatives(loaded: &CudaBuild, cc: ComputeCapability) -> Vec<String> {
    let mut out: Vec<String> = CUDA_BUILDS
        .iter()
        .filter(|b| b.os == loaded.os && b.onnxruntime != loaded.onnxruntime && fit(b, cc) != Fit::None)
        .map(|b| format!("the CUDA {} build, onnxruntime-gpu {} with {}", b.cuda / 1000, b.onnxruntime, b.cudnn_note))
        .collect();
    if loaded.os == Os::Windows {
        out.push("DirectML (onnxruntime-directml 1.24.4, any DirectX 12 GPU)".into());
    }
    out
}

/// The decision before a CUDA session is made: Ok with how the build runs there, or the reason for
/// SEG_PROVIDER_UNAVAILABLE naming what works. `gpu_name` is the driver's name of the device.
pub fn check(loaded: &CudaBuild, gpu_name: &str, cc: ComputeCapability) -> Result<Fit, String> {
    match fit(loaded, cc) {
        Fit::None => {
            let what = alternatives(loaded, cc);
            let instead = if what.is_empty() {
                "no CUDA build of ONNX Runtime segrt knows runs on it: use the CPU".to_string()
            } else {
                format!("use {}", what.join(", or "))
            };
            Err(format!(
                "the {gpu_name} (compute capability {cc}) cannot run ONNX Runtime {}'s CUDA provider, whose kernels are for {}: {instead}",
                loaded.onnxruntime,
                architectures(loaded)
            ))
        }
        fit => Ok(fit),
    }
}

/// The build table's entry for a loaded CUDA provider.
pub fn build_for(onnxruntime: &str, os: Os) -> Option<&'static CudaBuild> {
    CUDA_BUILDS.iter().find(|b| b.onnxruntime == onnxruntime && b.os == os)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GTX_1050: ComputeCapability = ComputeCapability::new(6, 1);
    const V100: ComputeCapability = ComputeCapability::new(7, 0);
    const T4: ComputeCapability = ComputeCapability::new(7, 5);
    const RTX_3060: ComputeCapability = ComputeCapability::new(8, 6);

    fn build(version: &str, os: Os) -> &'static CudaBuild {
        build_for(version, os).unwrap()
    }

    #[test]
    fn sass_runs_on_later_minors_of_its_major_and_arch_specific_sass_on_one_gpu() {
        let linux13 = build("1.31.1", Os::Linux);
        assert_eq!(fit(linux13, ComputeCapability::new(8, 7)), Fit::Native(sass(8, 6)), "Orin runs sm_86");
        assert_eq!(fit(linux13, ComputeCapability::new(9, 0)), Fit::Native(sass_a(9, 0)));
        assert_eq!(fit(linux13, ComputeCapability::new(12, 0)), Fit::Native(sass_a(12, 0)));
        assert_eq!(fit(linux13, ComputeCapability::new(12, 1)), Fit::None, "sm_120a is for 12.0 only, and no PTX");
        assert_eq!(fit(linux13, ComputeCapability::new(10, 0)), Fit::None, "no Blackwell datacenter kernels");
        let linux12 = build("1.24.4", Os::Linux);
        assert_eq!(fit(linux12, GTX_1050), Fit::Native(sass(6, 0)));
        assert_eq!(fit(linux12, ComputeCapability::new(12, 0)), Fit::CompiledByDriver(ptx(9, 0)));
        assert_eq!(fit(linux12, ComputeCapability::new(5, 2)), Fit::None);
    }

    #[test]
    fn the_four_stub_gpus_against_each_build() {
        use Fit::None as No;
        // (cc, Linux 1.31.1, Windows 1.31.1, Linux 1.24.4, Windows 1.24.4): Some(native arch) or None.
        let cases = [
            (GTX_1050, None, None, Some(sass(6, 0)), Some(sass(6, 1))),
            (V100, None, None, Some(sass(7, 0)), None),
            (T4, Some(sass(7, 5)), Some(sass(7, 5)), Some(sass(7, 5)), Some(sass(7, 5))),
            (RTX_3060, Some(sass(8, 6)), Some(sass(8, 6)), Some(sass(8, 6)), Some(sass(8, 6))),
        ];
        for (cc, l13, w13, l12, w12) in cases {
            for (b, want) in [
                (build("1.31.1", Os::Linux), l13),
                (build("1.31.1", Os::Windows), w13),
                (build("1.24.4", Os::Linux), l12),
                (build("1.24.4", Os::Windows), w12),
            ] {
                let got = fit(b, cc);
                match want {
                    Some(k) => assert_eq!(got, Fit::Native(k), "{cc} on {} {:?}", b.onnxruntime, b.os),
                    None => assert_eq!(got, No, "{cc} on {} {:?}", b.onnxruntime, b.os),
                }
            }
        }
    }

    #[test]
    fn a_gtx_1050_under_the_cuda_13_build_is_told_the_build_that_works() {
        let reason = check(build("1.31.1", Os::Windows), "NVIDIA GeForce GTX 1050", GTX_1050).unwrap_err();
        assert!(
            reason.starts_with("the NVIDIA GeForce GTX 1050 (compute capability 6.1) cannot run ONNX Runtime 1.31.1's CUDA provider"),
            "{reason}"
        );
        assert!(reason.contains("onnxruntime-gpu 1.24.4 with cuDNN 9.10"), "{reason}");
        assert!(reason.contains("DirectML (onnxruntime-directml 1.24.4"), "{reason}");
        assert!(!reason.contains("driver"), "a driver upgrade would not help: {reason}");
        let linux = check(build("1.31.1", Os::Linux), "NVIDIA GeForce GTX 1050", GTX_1050).unwrap_err();
        assert!(linux.contains("onnxruntime-gpu 1.24.4") && !linux.contains("DirectML"), "{linux}");
    }

    #[test]
    fn a_v100_on_windows_has_no_cuda_build_and_is_sent_to_directml() {
        let reason = check(build("1.24.4", Os::Windows), "Tesla V100-SXM2-16GB", V100).unwrap_err();
        assert!(reason.contains("use DirectML"), "{reason}");
        assert!(!reason.contains("onnxruntime-gpu"), "neither Windows CUDA build has sm_70: {reason}");
        let linux = check(build("1.31.1", Os::Linux), "Tesla V100-SXM2-16GB", V100).unwrap_err();
        assert!(linux.contains("onnxruntime-gpu 1.24.4"), "{linux}");
    }

    #[test]
    fn supported_gpus_pass() {
        assert_eq!(check(build("1.31.1", Os::Linux), "Tesla T4", T4), Ok(Fit::Native(sass(7, 5))));
        assert_eq!(check(build("1.31.1", Os::Windows), "NVIDIA GeForce RTX 3060", RTX_3060), Ok(Fit::Native(sass(8, 6))));
        assert_eq!(check(build("1.24.4", Os::Windows), "NVIDIA GeForce GTX 1050", GTX_1050), Ok(Fit::Native(sass(6, 1))));
    }
}
