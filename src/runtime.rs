//! Finding and loading ONNX Runtime, once per process, always by absolute path.
//!
//! Search order:
//! 1. the path the host gives (`seg_runtime_init(path)`, `SegOptions::ort_path`, `--ort`), else
//! 2. the `SEGRT_ORT_PATH` environment variable; a file named by 1 or 2 is the only one tried, so a
//!    wrong name is reported instead of silently replaced by another copy; with neither set:
//! 3. the ONNX Runtime file beside the segrt library itself, then
//! 4. the build tree's `.onnxruntime/` folder (filled by `scripts/fetch-ort.sh`), for development.
//!
//! Nothing is ever looked up through the loader's own search path or the current directory,
//! so an old `System32\onnxruntime.dll` can never be picked up by accident.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::error::{Error, ErrorKind, Result};

/// The environment variable that names the ONNX Runtime library file.
pub const ORT_PATH_ENV: &str = "SEGRT_ORT_PATH";

/// The ONNX Runtime release segrt is built and tested against.
pub const ORT_EXPECTED_VERSION: &str = env!("SEGRT_ORT_VERSION"); // from scripts/ort-version.txt (build.rs)

/// File names tried in a folder (beside segrt, build tree), most specific first.
#[cfg(windows)]
const LIBRARY_NAMES: &[&str] = &["onnxruntime.dll"];
#[cfg(target_os = "macos")]
const LIBRARY_NAMES: &[&str] = &["libonnxruntime.dylib", concat!("libonnxruntime.", env!("SEGRT_ORT_VERSION"), ".dylib")];
#[cfg(all(unix, not(target_os = "macos")))]
const LIBRARY_NAMES: &[&str] = &[concat!("libonnxruntime.so.", env!("SEGRT_ORT_VERSION")), "libonnxruntime.so.1", "libonnxruntime.so"];

/// What was loaded, for `seg_version` and `seg_session_info`.
#[derive(Debug, Clone)]
pub struct Runtime {
    pub path: PathBuf,
    pub version: String,
    pub environment: ort::environment::Environment,
}

/// The loaded library's version and path, as `seg_session_info` reports them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RuntimeInfo {
    pub version: String,
    pub path: String,
}

impl RuntimeInfo {
    pub fn current() -> Self {
        let rt = loaded();
        RuntimeInfo {
            version: rt.map(|r| r.version.clone()).unwrap_or_default(),
            path: rt.map(|r| r.path.display().to_string()).unwrap_or_default(),
        }
    }
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();
/// Serialises loading so two threads never race `dlopen` + environment creation.
static LOADING: Mutex<()> = Mutex::new(());

/// The loaded runtime, if any (never loads).
pub fn loaded() -> Option<&'static Runtime> {
    RUNTIME.get()
}

/// The loaded runtime, when `explicit` names it too (or nothing). A process holds one ONNX Runtime
/// for its whole life: another path asked for later is refused, not silently ignored, so a host
/// that means another library learns it is not the one in use.
fn already_loaded(rt: &'static Runtime, explicit: Option<&Path>) -> Result<&'static Runtime> {
    let Some(path) = explicit else { return Ok(rt) };
    if !path.is_absolute() {
        return Err(Error::invalid(format!(
            "ONNX Runtime path '{}' is relative; segrt only loads libraries by absolute path",
            path.display()
        )));
    }
    let same = |a: &Path, b: &Path| a == b || std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(b).ok()).is_some_and(|(a, b)| a == b);
    if same(path, &rt.path) {
        return Ok(rt);
    }
    Err(Error::new(
        ErrorKind::RuntimeInitFailed,
        format!(
            "ONNX Runtime is already loaded from {}; '{}' cannot be loaded as well (a process loads ONNX Runtime once): pass the same path, or none",
            rt.path.display(),
            path.display()
        ),
    ))
}

/// Loads ONNX Runtime if it is not loaded yet and returns it.
///
/// `explicit` is tried first when given; it must be an absolute path. When a runtime is already
/// loaded, it is returned if `explicit` is empty or names the same file (see `already_loaded`).
pub fn init(explicit: Option<&Path>) -> Result<&'static Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return already_loaded(rt, explicit);
    }
    let _guard = LOADING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = RUNTIME.get() {
        return already_loaded(rt, explicit);
    }
    if let Some(path) = explicit {
        if !path.is_absolute() {
            return Err(Error::invalid(format!(
                "ONNX Runtime path '{}' is relative; segrt only loads libraries by absolute path",
                path.display()
            )));
        }
    }

    let mut tried: Vec<String> = Vec::new();
    for (origin, path) in candidates(explicit) {
        // A relative path would resolve against the current directory: never load one.
        if !path.is_absolute() {
            tried.push(format!("{} ({origin}): ignored, not an absolute path", path.display()));
            continue;
        }
        if !path.is_file() {
            tried.push(format!("{} ({origin}): no such file", path.display()));
            continue;
        }
        match load(&path) {
            Ok(rt) => {
                let rt = RUNTIME.get_or_init(|| rt);
                crate::log::emit(
                    crate::log::LogLevel::Info,
                    &format!("ONNX Runtime {} loaded from {} ({origin})", rt.version, rt.path.display()),
                );
                return Ok(rt);
            }
            Err(LoadFailure::NotUsable(reason)) => tried.push(format!("{} ({origin}): {reason}", path.display())),
            Err(LoadFailure::Environment(e)) => return Err(e),
        }
    }
    // A file that exists but is of the wrong version or not ONNX Runtime is a different fix than a missing one.
    let status = if tried.iter().any(|t| t.contains(NOT_USABLE_MARK)) { ErrorKind::RuntimeInitFailed } else { ErrorKind::RuntimeNotFound };
    Err(Error::new(
        status,
        format!(
            "could not load ONNX Runtime {ORT_EXPECTED_VERSION}; tried:\n  {}\n\
             Fix: put the ONNX Runtime library beside the segrt library, set {ORT_PATH_ENV} to its absolute path, \
             or pass its absolute path (CLI: --ort PATH; C: seg_runtime_init(path) or SegOptions.ort_path; \
             C#: SegmenterOptions.OnnxRuntimePath)",
            if tried.is_empty() { "(no candidate paths)".to_string() } else { tried.join("\n  ") }
        ),
    ))
}

enum LoadFailure {
    /// This file could not be used; try the next candidate.
    NotUsable(String),
    /// The library loaded but the environment could not be created: stop here.
    Environment(Error),
}

/// Marks a candidate that exists but is not a usable ONNX Runtime (wrong version, not a library).
const NOT_USABLE_MARK: &str = "not usable";

fn load(path: &Path) -> std::result::Result<Runtime, LoadFailure> {
    // Read the version ourselves first: ort would accept any newer 1.x and its messages are terse.
    let version = probe_version(path).map_err(LoadFailure::NotUsable)?;
    if !version_compatible(&version) {
        return Err(LoadFailure::NotUsable(format!(
            "{NOT_USABLE_MARK}: it is ONNX Runtime {version}, segrt needs {ORT_EXPECTED_VERSION} (any patch release of it)"
        )));
    }
    let builder = ort::init_from(path).map_err(|e| LoadFailure::NotUsable(with_sources(&e)))?;
    // One global intra-op thread pool (ONNX Runtime's default size: a thread per physical core) for
    // every session of the process: several sessions never oversubscribe the cores. Its threads wait
    // without spinning, so between calls they leave the host's cores alone.
    let pool = ort::environment::GlobalThreadPoolOptions::default().with_spin_control(false).map_err(|e| {
        LoadFailure::Environment(Error::new(ErrorKind::RuntimeInitFailed, format!("cannot configure ONNX Runtime's thread pool: {e}")))
    })?;
    let environment =
        builder.with_name("segrt").with_logger(std::sync::Arc::new(forward_log)).with_global_thread_pool(pool).build().map_err(|e| {
            LoadFailure::Environment(Error::new(
                ErrorKind::RuntimeInitFailed,
                format!("ONNX Runtime loaded from '{}' but creating its environment failed: {e}", path.display()),
            ))
        })?;
    // Session traces (INFO) are not formatted at all; warnings and errors reach `forward_log`.
    environment.set_log_level(ort::logging::LogLevel::Warning);
    Ok(Runtime { path: path.to_path_buf(), version, environment })
}

/// ONNX Runtime's own log lines (warnings and errors) go to segrt's log sink, never to the host's
/// stderr, at the level they mean for a segrt host (`ort_log_level`); a warning repeated word for
/// word (a model's shape-inference notes come once per run) is passed on once. ONNX Runtime may log
/// from its own threads: the sink then runs there.
fn forward_log(level: ort::logging::LogLevel, category: &str, _id: &str, location: &str, message: &str) {
    let Some(level) = ort_log_level(level, message) else { return };
    if level != crate::log::LogLevel::Error && !first_time(message) {
        return;
    }
    crate::log::emit(level, &format!("ONNX Runtime [{category}] {location}: {message}"));
}

/// ONNX Runtime warnings that segrt's own design causes, or that describe the model file rather
/// than this call: nothing a host asked for is lost, so they are `Info`, not `Warn` ("works, but
/// not as asked").
const INFO_NOT_WARN: &[&str] = &[
    // The pool's shared optimised graph is written to a temporary file for sessions of this process
    // on this machine only, which is what the warning asks.
    "Serializing optimized model with Graph Optimization level greater than ORT_ENABLE_EXTENDED",
    // Shape inference disagreeing with the shapes the exporter wrote into the model.
    "Falling back to lenient merge",
];

/// The level of an ONNX Runtime message for segrt's log, `None` for session traces.
fn ort_log_level(level: ort::logging::LogLevel, message: &str) -> Option<crate::log::LogLevel> {
    use crate::log::LogLevel;
    use ort::logging::LogLevel as Ort;
    match level {
        Ort::Fatal | Ort::Error => Some(LogLevel::Error),
        Ort::Warning if INFO_NOT_WARN.iter().any(|m| message.contains(m)) => Some(LogLevel::Info),
        Ort::Warning => Some(LogLevel::Warn),
        Ort::Info | Ort::Verbose => None, // session traces: not for a host's log
    }
}

/// True the first time this process sees `message` (up to a bounded number of distinct messages;
/// past it every message is passed on).
fn first_time(message: &str) -> bool {
    const MAX_REMEMBERED: usize = 1024;
    static SEEN: std::sync::Mutex<Option<std::collections::HashSet<String>>> = std::sync::Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let seen = seen.get_or_insert_with(Default::default);
    if seen.contains(message) {
        return false;
    }
    if seen.len() < MAX_REMEMBERED {
        seen.insert(message.to_string());
    }
    true
}

/// The error and the chain of its sources: ort's and libloading's top-level messages are only
/// "failed to load" / "dlopen failed"; the loader's own reason (`dlerror()` / `GetLastError()` text:
/// "invalid ELF header", "%1 is not a valid Win32 application") is in `source()`.
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Opens the file, checks it is ONNX Runtime, and returns the version it reports, e.g. "1.31.1".
fn probe_version(path: &Path) -> std::result::Result<String, String> {
    // SAFETY: loading a library runs its initialisers; the caller chose this file as ONNX Runtime.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
        // The loader's reason for a library of another architecture ("%1 is not a valid Win32
        // application", "wrong ELF class") does not say which one it is: name it.
        let foreign = library_architecture(path).filter(|arch| *arch != PROCESS_ARCHITECTURE);
        match foreign {
            Some(arch) => format!(
                "{NOT_USABLE_MARK}: it is a {arch} library and this process is {PROCESS_ARCHITECTURE}: use the {PROCESS_ARCHITECTURE} \
                 ONNX Runtime{} (the loader said: {})",
                if cfg!(all(windows, target_arch = "x86_64")) { " (the win-x64 onnxruntime.dll)" } else { "" },
                with_sources(&e)
            ),
            None => format!("{NOT_USABLE_MARK}: cannot be loaded: {}", with_sources(&e)),
        }
    })?;
    type GetApiBase = unsafe extern "C" fn() -> *const ort::sys::OrtApiBase;
    // SAFETY: ONNX Runtime's OrtGetApiBase has this signature; `lib` outlives the symbol.
    let get_base: libloading::Symbol<GetApiBase> = unsafe { lib.get(b"OrtGetApiBase\0") }
        .map_err(|_| format!("{NOT_USABLE_MARK}: loads, but has no OrtGetApiBase: not an ONNX Runtime library"))?;
    // SAFETY: OrtGetApiBase and GetVersionString take no arguments and return static data.
    let version = unsafe {
        let base = get_base();
        if base.is_null() {
            return Err(format!("{NOT_USABLE_MARK}: OrtGetApiBase returned NULL"));
        }
        let s = ((*base).GetVersionString)();
        if s.is_null() {
            return Err(format!("{NOT_USABLE_MARK}: GetVersionString returned NULL"));
        }
        std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
    };
    Ok(version)
}

/// The architecture this process runs as, in the words of [`library_architecture`].
const PROCESS_ARCHITECTURE: &str = if cfg!(target_arch = "x86_64") {
    "64-bit x64"
} else if cfg!(target_arch = "aarch64") {
    "64-bit ARM64"
} else if cfg!(target_arch = "x86") {
    "32-bit x86"
} else {
    "another architecture"
};

/// The architecture a Windows DLL (PE) or ELF shared library was built for, from its header; None
/// when the file is neither or the header is cut. A 32-bit onnxruntime.dll beside a 64-bit host is
/// a common mistake on Windows, and the loader only says "not a valid Win32 application".
fn library_architecture(path: &Path) -> Option<&'static str> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path).ok()?.take(4096).read_to_end(&mut head).ok()?;
    architecture_of(&head)
}

fn architecture_of(head: &[u8]) -> Option<&'static str> {
    let u16_at = |at: usize| head.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    if head.starts_with(b"MZ") {
        let pe = u32::from_le_bytes(head.get(0x3c..0x40)?.try_into().ok()?) as usize;
        if head.get(pe..pe + 4)? != b"PE\0\0" {
            return None;
        }
        return match u16_at(pe + 4)? {
            0x014c => Some("32-bit x86"),
            0x8664 => Some("64-bit x64"),
            0xaa64 => Some("64-bit ARM64"),
            _ => Some("non-x86 Windows"),
        };
    }
    if head.starts_with(b"\x7fELF") && head.get(5) == Some(&1) {
        let class_64 = head.get(4) == Some(&2);
        return match (class_64, u16_at(18)?) {
            (false, 3) => Some("32-bit x86"),
            (true, 62) => Some("64-bit x64"),
            (true, 183) => Some("64-bit ARM64"),
            _ => Some("non-x86 ELF"),
        };
    }
    None
}

/// segrt is built and tested against one ONNX Runtime release (`ORT_EXPECTED_VERSION`; ort's API level
/// is 21, see Cargo.toml); any patch release of that major.minor works.
pub fn version_compatible(version: &str) -> bool {
    let major_minor = |v: &str| v.split('.').take(2).map(str::to_string).collect::<Vec<_>>();
    major_minor(version) == major_minor(ORT_EXPECTED_VERSION)
}

/// Every candidate path in search order, each with where it came from.
pub fn candidates(explicit: Option<&Path>) -> Vec<(&'static str, PathBuf)> {
    if let Some(p) = explicit {
        return vec![("given by the host", p.to_path_buf())];
    }
    if let Some(v) = std::env::var_os(ORT_PATH_ENV).filter(|v| !v.is_empty()) {
        return vec![("from SEGRT_ORT_PATH", PathBuf::from(v))];
    }
    let mut out = Vec::new();
    if let Some(dir) = own_library_dir() {
        for name in LIBRARY_NAMES {
            out.push(("beside the segrt library", dir.join(name)));
        }
    }
    let dev = Path::new(env!("CARGO_MANIFEST_DIR")).join(".onnxruntime");
    for name in LIBRARY_NAMES {
        out.push(("build tree", dev.join(name)));
    }
    out
}

/// The folder holding the module (libsegrt.so / segrt.dll, or the executable it is linked into).
pub fn own_library_dir() -> Option<PathBuf> {
    own_module_path().and_then(|p| p.parent().map(Path::to_path_buf))
}

#[cfg(unix)]
fn own_module_path() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: Dl_info is plain C data (pointers and integers): all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // Any function of this crate resolves to the module that contains it.
    let addr = own_module_path as *const libc::c_void;
    // SAFETY: dladdr only reads the address and fills `info`, which lives across the call.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr succeeded and dli_fname is not NULL: a NUL-terminated path owned by the loader.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
    std::fs::canonicalize(&path).ok().or(Some(path))
}

#[cfg(windows)]
fn own_module_path() -> Option<PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    type Hmodule = *mut std::ffi::c_void;
    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleExW(flags: u32, name: *const u16, module: *mut Hmodule) -> i32;
        fn GetModuleFileNameW(module: Hmodule, name: *mut u16, size: u32) -> u32;
    }
    const FROM_ADDRESS: u32 = 0x4;
    const UNCHANGED_REFCOUNT: u32 = 0x2;
    let mut module: Hmodule = std::ptr::null_mut();
    let addr = own_module_path as *const u16;
    // SAFETY: with FROM_ADDRESS the name is an address inside this module; `module` is written only.
    if unsafe { GetModuleHandleExW(FROM_ADDRESS | UNCHANGED_REFCOUNT, addr, &mut module) } == 0 {
        return None;
    }
    let mut buf = vec![0u16; 32768];
    // SAFETY: `buf` holds the `buf.len()` u16 the call may write.
    let n = unsafe { GetModuleFileNameW(module, buf.as_mut_ptr(), buf.len() as u32) } as usize;
    if n == 0 || n >= buf.len() {
        return None;
    }
    Some(PathBuf::from(std::ffi::OsString::from_wide(&buf[..n])))
}

/// The loaded environment, loading ONNX Runtime first (from `explicit`, or the default places).
pub fn environment(explicit: Option<&Path>) -> Result<&'static ort::environment::Environment> {
    init(explicit).map(|rt| &rt.environment)
}

/// A vendor library segrt loads by absolute path from ONNX Runtime's folder before registering a
/// provider, and whether the provider works without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuLibrary {
    pub name: &'static str,
    /// ONNX Runtime's own preload list treats it as optional (cuFFT, NVRTC: some operators only).
    pub optional: bool,
}

const fn lib(name: &'static str) -> GpuLibrary {
    GpuLibrary { name, optional: false }
}
const fn optional(name: &'static str) -> GpuLibrary {
    GpuLibrary { name, optional: true }
}

/// The CUDA 13 and cuDNN 9 libraries of onnxruntime-gpu 1.31's CUDA provider: every file of ONNX
/// Runtime's own `preload_dlls` list (onnxruntime/__init__.py, `_get_nvidia_dll_paths` for CUDA 13),
/// dependencies first (the CUDA runtime, then cuBLASLt before cuBLAS, as ONNX Runtime orders them).
/// tests/gpu checks this list against ONNX Runtime's and the provider libraries' NEEDED entries.
#[cfg(not(windows))]
pub const CUDA_LIBRARIES: &[GpuLibrary] = &[
    lib("libcudart.so.13"),
    lib("libcublasLt.so.13"),
    lib("libcublas.so.13"),
    optional("libnvrtc.so.13"),
    lib("libcurand.so.10"),
    optional("libcufft.so.12"),
    // On Linux cuDNN loads its sub-libraries itself, from its own folder (ONNX Runtime does not
    // preload them either).
    lib("libcudnn.so.9"),
];
/// On Windows cuDNN 9 loads its sub-DLLs by name at its first use, which a host's PATH may resolve
/// to another copy or not at all: ONNX Runtime's list preloads every one of them. cuRAND is optional
/// here: neither ONNX Runtime's Windows list nor the import table of its CUDA provider DLL names it.
#[cfg(windows)]
pub const CUDA_LIBRARIES: &[GpuLibrary] = &[
    lib("cudart64_13.dll"),
    lib("cublasLt64_13.dll"),
    lib("cublas64_13.dll"),
    optional("curand64_10.dll"),
    optional("cufft64_12.dll"),
    lib("cudnn_graph64_9.dll"),
    lib("cudnn_engines_runtime_compiled64_9.dll"),
    lib("cudnn_engines_precompiled64_9.dll"),
    lib("cudnn_heuristic64_9.dll"),
    lib("cudnn_ops64_9.dll"),
    lib("cudnn_adv64_9.dll"),
    lib("cudnn64_9.dll"),
    lib("cudnn_engines_tensor_ir64_9.dll"),
];
/// TensorRT 10, which the TensorRT provider of onnxruntime-gpu 1.31 links: nvinfer and nvonnxparser
/// (its NEEDED entries / import table); it opens the plugin library itself.
#[cfg(not(windows))]
pub const TENSORRT_LIBRARIES: &[GpuLibrary] = &[lib("libnvinfer.so.10"), optional("libnvinfer_plugin.so.10"), lib("libnvonnxparser.so.10")];
#[cfg(windows)]
pub const TENSORRT_LIBRARIES: &[GpuLibrary] = &[lib("nvinfer_10.dll"), optional("nvinfer_plugin_10.dll"), lib("nvonnxparser_10.dll")];
/// onnxruntime.dll of the DirectML build delay-loads DirectML.dll by name: without this preload a
/// host whose exe folder lacks it gets System32's older copy.
#[cfg(windows)]
pub const DIRECTML_LIBRARIES: &[GpuLibrary] = &[lib("DirectML.dll")];
#[cfg(not(windows))]
pub const DIRECTML_LIBRARIES: &[GpuLibrary] = &[];

/// The libraries segrt preloads for `provider`, in loading order (TensorRT runs behind CUDA: both lists).
pub fn provider_libraries(provider: crate::options::Provider) -> Vec<GpuLibrary> {
    use crate::options::Provider;
    match provider {
        Provider::Cuda => CUDA_LIBRARIES.to_vec(),
        Provider::TensorRt => CUDA_LIBRARIES.iter().chain(TENSORRT_LIBRARIES).copied().collect(),
        Provider::DirectMl => DIRECTML_LIBRARIES.to_vec(),
        Provider::Cpu | Provider::OpenVino => Vec::new(),
    }
}

/// ONNX Runtime's folder, once it is loaded.
fn runtime_folder() -> Option<PathBuf> {
    loaded().and_then(|rt| rt.path.parent().map(Path::to_path_buf))
}

/// The libraries `provider` needs that are not beside ONNX Runtime (optional ones left out): what an
/// error names when ONNX Runtime's own does not say which file is missing (Windows' "error 126").
pub fn missing_gpu_libraries(provider: crate::options::Provider) -> Vec<String> {
    let Some(dir) = runtime_folder() else { return Vec::new() };
    provider_libraries(provider).iter().filter(|l| !l.optional && !dir.join(l.name).is_file()).map(|l| l.name.to_string()).collect()
}

/// Loads the vendor libraries `provider` needs that are beside ONNX Runtime, by absolute path,
/// before the provider is registered: the provider library then finds them already loaded instead
/// of searching LD_LIBRARY_PATH / PATH (which a locked-down PC may not let you set) or System32.
/// On Windows each is loaded with its own folder searched for its dependencies. Returns every file
/// loaded so far; missing ones are left to the system search, and the provider's error names them.
pub fn preload_gpu_libraries(provider: crate::options::Provider) -> Vec<PathBuf> {
    static DONE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|p| p.into_inner());
    let Some(dir) = runtime_folder() else { return Vec::new() };
    for library in provider_libraries(provider) {
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
            Err(e) => crate::log::emit(crate::log::LogLevel::Warn, &format!("could not preload {}: {}", path.display(), with_sources(&e))),
        }
    }
    done.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::LogLevel;
    use ort::logging::LogLevel as Ort;

    #[test]
    fn a_library_header_names_its_architecture() {
        let mut pe = vec![0u8; 0x90];
        pe[..2].copy_from_slice(b"MZ");
        pe[0x3c..0x40].copy_from_slice(&0x80u32.to_le_bytes());
        pe[0x80..0x84].copy_from_slice(b"PE\0\0");
        for (machine, arch) in [(0x014cu16, "32-bit x86"), (0x8664, "64-bit x64"), (0xaa64, "64-bit ARM64")] {
            pe[0x84..0x86].copy_from_slice(&machine.to_le_bytes());
            assert_eq!(architecture_of(&pe), Some(arch));
        }
        assert_eq!(architecture_of(&pe[..0x84]), None, "a cut header is not guessed");
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[5] = 1;
        (elf[4], elf[18]) = (1, 3);
        assert_eq!(architecture_of(&elf), Some("32-bit x86"));
        (elf[4], elf[18]) = (2, 62);
        assert_eq!(architecture_of(&elf), Some("64-bit x64"));
        assert_eq!(architecture_of(b"not a library"), None);
    }

    #[test]
    fn onnx_runtime_messages_get_the_level_they_mean_for_a_host() {
        let shape = "Error merging shape info for output. 'x' source:{4} target:{5}. Falling back to lenient merge.";
        let saved = "Serializing optimized model with Graph Optimization level greater than ORT_ENABLE_EXTENDED and the \
                     NchwcTransformer enabled. The generated model may contain hardware specific optimizations";
        assert_eq!(ort_log_level(Ort::Warning, shape), Some(LogLevel::Info));
        assert_eq!(ort_log_level(Ort::Warning, saved), Some(LogLevel::Info));
        assert_eq!(ort_log_level(Ort::Warning, "CUDA is not available, falling back"), Some(LogLevel::Warn));
        assert_eq!(ort_log_level(Ort::Error, shape), Some(LogLevel::Error));
        assert_eq!(ort_log_level(Ort::Verbose, "trace"), None);
    }

    #[test]
    fn a_repeated_message_is_passed_on_once() {
        let message = "a message only this test sends";
        assert!(first_time(message));
        assert!(!first_time(message));
        assert!(first_time("another message only this test sends"));
    }
}
