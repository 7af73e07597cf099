//! GPU memory for the soak, where it can be read: NVIDIA's management library (NVML: libnvidia-ml.so.1,
//! nvml.dll), which the NVIDIA driver installs, loaded at run time. It reports the memory in use on
//! the device, by every process (on a station the GPU normally serves segrt alone). ONNX Runtime
//! itself has no query of what its CUDA or TensorRT provider holds, and other GPUs (DirectML on AMD or
//! Intel, OpenVINO) have no such library here: their figure is "n/a", with the reason.

use libloading::{Library, Symbol};

/// nvmlMemory_t of nvml.h (bytes), unchanged since NVML's first release.
#[repr(C)]
#[derive(Default)]
struct NvmlMemory {
    total: u64,
    free: u64,
    used: u64,
}

type Init = unsafe extern "C" fn() -> i32;
type HandleByIndex = unsafe extern "C" fn(u32, *mut *mut std::ffi::c_void) -> i32;
type MemoryInfo = unsafe extern "C" fn(*mut std::ffi::c_void, *mut NvmlMemory) -> i32;

/// An open NVML device; `used_mib` reads it.
pub struct GpuMemory {
    device: *mut std::ffi::c_void,
    memory_info: MemoryInfo,
    // Keeps the functions above loaded.
    _library: Library,
}

// SAFETY: NVML's functions are thread-safe (nvml.h), and the device handle is a plain token.
unsafe impl Send for GpuMemory {}

#[cfg(windows)]
const LIBRARY: &str = "nvml.dll";
#[cfg(not(windows))]
const LIBRARY: &str = "libnvidia-ml.so.1";

impl GpuMemory {
    /// Opens GPU `device` through NVML, or says why its memory cannot be read.
    pub fn open(device: i32) -> Result<GpuMemory, String> {
        // SAFETY: NVML's library runs no code at load that depends on us; its functions are
        // declared with nvml.h's signatures.
        unsafe {
            let library = Library::new(LIBRARY).map_err(|_| format!("{LIBRARY} (NVIDIA's driver) is not installed"))?;
            let init: Symbol<Init> = library.get(b"nvmlInit_v2\0").map_err(|e| format!("{LIBRARY}: {e}"))?;
            let by_index: Symbol<HandleByIndex> = library.get(b"nvmlDeviceGetHandleByIndex_v2\0").map_err(|e| format!("{LIBRARY}: {e}"))?;
            let memory_info: MemoryInfo =
                *library.get::<MemoryInfo>(b"nvmlDeviceGetMemoryInfo\0").map_err(|e| format!("{LIBRARY}: {e}"))?;
            match init() {
                0 => {}
                code => return Err(format!("NVML did not start (nvmlInit error {code}: no NVIDIA GPU or driver)")),
            }
            let mut handle = std::ptr::null_mut();
            match by_index(device.max(0) as u32, &mut handle) {
                0 => {}
                code => return Err(format!("NVML has no GPU {device} (error {code})")),
            }
            Ok(GpuMemory { device: handle, memory_info, _library: library })
        }
    }

    /// Memory in use on the device now (all processes), MiB.
    pub fn used_mib(&self) -> Option<f64> {
        let mut m = NvmlMemory::default();
        // SAFETY: a device handle from this library, still loaded, and a writable struct.
        let code = unsafe { (self.memory_info)(self.device, &mut m) };
        (code == 0).then_some(m.used as f64 / (1024.0 * 1024.0))
    }
}
