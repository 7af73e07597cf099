//! What the NVIDIA driver says about a GPU, read through the driver library itself (`libcuda.so.1`,
//! `nvcuda.dll`), before any CUDA library or ONNX Runtime's CUDA provider is loaded: the name, the
//! compute capability and the CUDA version the driver supports. Six calls of the driver API, all
//! there since CUDA 2 or so: `cuInit`, `cuDriverGetVersion`, `cuDeviceGetCount`, `cuDeviceGet`,
//! `cuDeviceGetAttribute` (75/76: compute capability major/minor), `cuDeviceGetName`.
//!
//! The driver is installed system-wide by NVIDIA's installer, so it is the one library found by
//! name through the system's search (as the CUDA runtime finds it); a test names a stub by path.

use std::ffi::{c_char, c_int, c_uint};
use std::path::Path;

/// The driver library's file name.
#[cfg(windows)]
pub const DRIVER_LIBRARY: &str = "nvcuda.dll";
#[cfg(not(windows))]
pub const DRIVER_LIBRARY: &str = "libcuda.so.1";

const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
const CUDA_ERROR_NO_DEVICE: c_int = 100;
const CUDA_ERROR_INVALID_DEVICE: c_int = 101;

/// One GPU as the driver describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverGpu {
    pub name: String,
    /// (major, minor)
    pub compute_capability: (u32, u32),
    /// The CUDA version the driver supports, 1000 * major + 10 * minor (12080 = CUDA 12.8).
    pub driver_cuda_version: u32,
    /// How many CUDA devices the driver sees.
    pub device_count: u32,
}

type CuInit = unsafe extern "system" fn(c_uint) -> c_int;
type CuDriverGetVersion = unsafe extern "system" fn(*mut c_int) -> c_int;
type CuDeviceGetCount = unsafe extern "system" fn(*mut c_int) -> c_int;
type CuDeviceGet = unsafe extern "system" fn(*mut c_int, c_int) -> c_int;
type CuDeviceGetAttribute = unsafe extern "system" fn(*mut c_int, c_int, c_int) -> c_int;
type CuDeviceGetName = unsafe extern "system" fn(*mut c_char, c_int, c_int) -> c_int;

/// Why the GPU could not be read, in words for the session info.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverError {
    /// The driver library is not installed (or not loadable): the loader's words.
    NoDriver(String),
    /// It loaded but lacks a function: not NVIDIA's driver.
    NotADriver(String),
    /// cuInit or a device call failed with this CUDA error code (100: no device).
    Call { call: &'static str, code: i32 },
    /// The device number is beyond the devices the driver sees.
    NoSuchDevice { device: i32, count: u32 },
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriverError::NoDriver(why) => write!(f, "no NVIDIA driver is installed ({DRIVER_LIBRARY}: {why})"),
            DriverError::NotADriver(why) => write!(f, "{DRIVER_LIBRARY} is not NVIDIA's driver library ({why})"),
            DriverError::Call { call, code: CUDA_ERROR_NO_DEVICE } => {
                write!(f, "the NVIDIA driver sees no CUDA GPU ({call}: CUDA error 100)")
            }
            DriverError::Call { call, code } => write!(f, "the NVIDIA driver failed ({call}: CUDA error {code})"),
            DriverError::NoSuchDevice { device, count } => write!(f, "there is no CUDA device {device}: the driver sees {count}"),
        }
    }
}

/// Reads GPU `device` through the driver library at `library` (None: the system's `DRIVER_LIBRARY`).
/// The library stays loaded: the CUDA runtime loads the same driver again later, and unloading a
/// driver library that has been initialised is not supported by NVIDIA.
pub fn read_gpu(library: Option<&Path>, device: i32) -> Result<DriverGpu, DriverError> {
    // SAFETY: loading the driver runs its initialisers; it is the library CUDA itself would load.
    let lib = unsafe {
        match library {
            Some(path) => libloading::Library::new(path),
            None => libloading::Library::new(DRIVER_LIBRARY),
        }
    }
    .map_err(|e| DriverError::NoDriver(sources(&e)))?;
    let lib = Box::leak(Box::new(lib));
    // SAFETY: the driver API's signatures (cuda.h), looked up by their exported names.
    let (init, version, count, get, attribute, name) = unsafe {
        let sym = |n: &'static [u8]| -> Result<*const (), DriverError> {
            lib.get::<*const ()>(n)
                .map(|s| *s)
                .map_err(|_| DriverError::NotADriver(format!("no {}", String::from_utf8_lossy(&n[..n.len() - 1]))))
        };
        (
            std::mem::transmute::<*const (), CuInit>(sym(b"cuInit\0")?),
            std::mem::transmute::<*const (), CuDriverGetVersion>(sym(b"cuDriverGetVersion\0")?),
            std::mem::transmute::<*const (), CuDeviceGetCount>(sym(b"cuDeviceGetCount\0")?),
            std::mem::transmute::<*const (), CuDeviceGet>(sym(b"cuDeviceGet\0")?),
            std::mem::transmute::<*const (), CuDeviceGetAttribute>(sym(b"cuDeviceGetAttribute\0")?),
            std::mem::transmute::<*const (), CuDeviceGetName>(sym(b"cuDeviceGetName\0")?),
        )
    };
    let call = |call: &'static str, code: c_int| if code == 0 { Ok(()) } else { Err(DriverError::Call { call, code }) };
    let mut driver_cuda_version = 0;
    // SAFETY: each call writes only through the pointers given, to locals that outlive it.
    unsafe {
        call("cuDriverGetVersion", version(&mut driver_cuda_version))?;
        call("cuInit", init(0))?;
        let mut n = 0;
        call("cuDeviceGetCount", count(&mut n))?;
        let device_count = n.max(0) as u32;
        if device < 0 || device as u32 >= device_count {
            return Err(DriverError::NoSuchDevice { device, count: device_count });
        }
        let mut handle = 0;
        match get(&mut handle, device) {
            0 => {}
            CUDA_ERROR_INVALID_DEVICE => return Err(DriverError::NoSuchDevice { device, count: device_count }),
            code => return Err(DriverError::Call { call: "cuDeviceGet", code }),
        }
        let (mut major, mut minor) = (0, 0);
        call("cuDeviceGetAttribute", attribute(&mut major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle))?;
        call("cuDeviceGetAttribute", attribute(&mut minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle))?;
        let mut buf = [0 as c_char; 256];
        call("cuDeviceGetName", name(buf.as_mut_ptr(), buf.len() as c_int, handle))?;
        let name = std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        Ok(DriverGpu {
            name,
            compute_capability: (major.max(0) as u32, minor.max(0) as u32),
            driver_cuda_version: driver_cuda_version.max(0) as u32,
            device_count,
        })
    }
}

/// The error and its sources: libloading's own message is only "failed to load".
fn sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
