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
//!
//! Which releases are accepted (1.24 to 1.31) and what an older one lacks: `release`. Which build
//! was loaded (CPU, CUDA 12/13, DirectML, OpenVINO): `engine::providers::build`.

pub mod release;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::error::{Error, ErrorKind, Result};

/// The environment variable that names the ONNX Runtime library file.
pub const ORT_PATH_ENV: &str = "SEGRT_ORT_PATH";

/// The ONNX Runtime release `scripts/fetch-ort.sh` fetches by default and the build tree looks for;
/// any release `release::judge` accepts (1.24 to 1.31) is loaded.
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
    /// The release `version` names, and so its C API level (`release.api_level()`).
    pub release: release::OrtRelease,
    /// Which build it is (CPU, CUDA 12/13, DirectML, OpenVINO), told at load.
    pub build: crate::engine::providers::build::Flavour,
    /// The execution providers the build was compiled with (`GetAvailableProviders`).
    pub providers: Vec<String>,
    /// What segrt does that this release is too old for, each with what happens instead.
    pub missing: Vec<release::Capability>,
    pub environment: ort::environment::Environment,
}

impl Runtime {
    /// Whether the loaded release is too old for `capability` (see `release::CAPABILITIES`).
    pub fn lacks(&self, capability: &release::Capability) -> bool {
        self.missing.contains(capability)
    }
}

/// The loaded library's version, path and build, as `seg_session_info` reports them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RuntimeInfo {
    pub version: String,
    pub path: String,
    /// "CPU", "CUDA 12", "CUDA 13", "DirectML", "OpenVINO".
    pub build: String,
    /// The C API level of the loaded release (its minor version), which segrt asked it for.
    pub api_level: u32,
    /// Features the loaded release is too old for: "name: what happens instead (needs ONNX Runtime x.y)".
    pub degraded: Vec<String>,
}

impl RuntimeInfo {
    pub fn current() -> Self {
        let rt = loaded();
        RuntimeInfo {
            version: rt.map(|r| r.version.clone()).unwrap_or_default(),
            path: rt.map(|r| r.path.display().to_string()).unwrap_or_default(),
            build: rt.map(|r| r.build.describe()).unwrap_or_default(),
            api_level: rt.map(|r| r.release.api_level()).unwrap_or_default(),
            degraded: rt.map(|r| r.missing.iter().map(release::Capability::describe).collect()).unwrap_or_default(),
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
                    &format!("ONNX Runtime {} ({} build) loaded from {} ({origin})", rt.version, rt.build.describe(), rt.path.display()),
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
            "could not load ONNX Runtime ({}); tried:\n  {}\n\
             Fix: put the ONNX Runtime library beside the segrt library, set {ORT_PATH_ENV} to its absolute path, \
             or pass its absolute path (CLI: --ort PATH; C: seg_runtime_init(path) or SegOptions.ort_path; \
             C#: SegmenterOptions.OnnxRuntimePath)",
            release::range(),
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
    let (version, release, missing) = probe_version(path).map_err(LoadFailure::NotUsable)?;
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
    let providers = crate::engine::providers::probe::available_providers();
    let build = crate::engine::providers::build::detect(path, &providers);
    Ok(Runtime { path: path.to_path_buf(), version, release, build, providers, missing, environment })
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
pub(crate) fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Opens the file, checks it is ONNX Runtime of a release segrt accepts and that it answers that
/// release's C API level, and returns the version it reports ("1.31.1"), the release and what the
/// release lacks.
fn probe_version(path: &Path) -> std::result::Result<(String, release::OrtRelease, Vec<release::Capability>), String> {
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
    let (release, missing) = match release::judge(&version) {
        release::Verdict::Accepted { release, missing } => (release, missing),
        release::Verdict::Refused(reason) => return Err(format!("{NOT_USABLE_MARK}: {reason}")),
    };
    // Ask for the loaded release's own API level: a library that reports a release number but
    // does not answer its level is not the release it claims.
    // SAFETY: as above; GetApi returns NULL for a level the library does not have.
    let api = unsafe { ((*get_base()).GetApi)(release.api_level()) };
    if api.is_null() {
        return Err(format!(
            "{NOT_USABLE_MARK}: it reports ONNX Runtime {version} but does not answer C API level {}",
            release.api_level()
        ));
    }
    Ok((version, release, missing))
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

/// Whether segrt loads ONNX Runtime `version` (1.24 to 1.31, any patch release; see `release`).
pub fn version_compatible(version: &str) -> bool {
    matches!(release::judge(version), release::Verdict::Accepted { .. })
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
