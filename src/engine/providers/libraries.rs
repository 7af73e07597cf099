//! Vendor libraries (CUDA, cuDNN, TensorRT, DirectML) that segrt loads by absolute path from ONNX
//! Runtime's folder before a provider is registered, so that the provider finds them loaded instead
//! of searching PATH / LD_LIBRARY_PATH or System32. Each provider's list is in its own module
//! (`cuda::CUDA_LIBRARIES`, `tensorrt::TENSORRT_LIBRARIES`, `directml::DIRECTML_LIBRARIES`; a
//! provider's whole list: `providers::vendor_libraries`); this module loads a list and names what is
//! missing of it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::runtime;

/// A vendor library segrt loads by absolute path from ONNX Runtime's folder before registering a
/// provider, and whether the provider works without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuLibrary {
    pub name: &'static str,
    /// ONNX Runtime's own preload list treats it as optional (cuFFT, NVRTC: some operators only).
    pub optional: bool,
}

pub(crate) const fn lib(name: &'static str) -> GpuLibrary {
    GpuLibrary { name, optional: false }
}
pub(crate) const fn optional(name: &'static str) -> GpuLibrary {
    GpuLibrary { name, optional: true }
}

/// ONNX Runtime's folder, once it is loaded.
fn runtime_folder() -> Option<PathBuf> {
    runtime::loaded().and_then(|rt| rt.path.parent().map(Path::to_path_buf))
}

/// The `libraries` a provider needs that are not beside ONNX Runtime (optional ones left out): what
/// an error names when ONNX Runtime's own does not say which file is missing (Windows' "error 126").
pub fn missing(libraries: &[GpuLibrary]) -> Vec<String> {
    let Some(dir) = runtime_folder() else { return Vec::new() };
    libraries.iter().filter(|l| !l.optional && !dir.join(l.name).is_file()).map(|l| l.name.to_string()).collect()
}

/// Loads the vendor `libraries` a provider needs that are beside ONNX Runtime, by absolute path,
/// before the provider is registered: the provider library then finds them already loaded instead
/// of searching LD_LIBRARY_PATH / PATH (which a locked-down PC may not let you set) or System32.
/// On Windows each is loaded with its own folder searched for its dependencies. Returns every file
/// loaded so far; missing ones are left to the system search, and the provider's error names them.
pub fn preload(libraries: &[GpuLibrary]) -> Vec<PathBuf> {
    static DONE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|p| p.into_inner());
    let Some(dir) = runtime_folder() else { return Vec::new() };
    for library in libraries {
        let path = dir.join(library.name);
        if done.contains(&path) || !path.is_file() {
            continue;
        }
        // SAFETY: these are the vendor's libraries the provider would load itself; they stay loaded
        // for the life of the process, as the provider expects.
        #[cfg(unix)]
        let lib =
            unsafe { libloading::os::unix::Library::open(Some(&path), libc::RTLD_NOW | libc::RTLD_GLOBAL) }.map(libloading::Library::from);
        // SAFETY: as above.
        #[cfg(windows)]
        let lib = unsafe {
            use libloading::os::windows::{Library, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR};
            Library::load_with_flags(&path, LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)
        }
        .map(libloading::Library::from);
        match lib {
            Ok(lib) => {
                std::mem::forget(lib);
                crate::log::emit(crate::log::LogLevel::Info, &format!("preloaded {}", path.display()));
                done.push(path);
            }
            Err(e) => crate::log::emit(
                crate::log::LogLevel::Warn,
                &format!("could not preload {}: {}", path.display(), runtime::with_sources(&e)),
            ),
        }
    }
    done.clone()
}
