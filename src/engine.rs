//! Creating ONNX Runtime sessions: threads, execution provider with an explicit fallback policy,
//! and the errors ONNX Runtime gives translated into segrt statuses.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::ThreadId;

use ort::ep;
use ort::session::Session;
use serde::Serialize;

use crate::error::{Error, Result, SegStatus};
use crate::options::{Options, SegProvider, SegProviderPolicy};
use crate::runtime;

/// Which provider a session asked for, which one it got, and why they differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderReport {
    pub requested: String,
    pub in_use: String,
    pub fallback_reason: Option<String>,
}

fn provider_name(p: SegProvider, device_id: i32) -> String {
    match p {
        SegProvider::SEG_PROVIDER_CPU => "CPU".into(),
        SegProvider::SEG_PROVIDER_CUDA => format!("CUDA:{device_id}"),
        SegProvider::SEG_PROVIDER_TENSORRT => format!("TensorRT:{device_id}"),
        SegProvider::SEG_PROVIDER_DIRECTML => format!("DirectML:{device_id}"),
        SegProvider::SEG_PROVIDER_OPENVINO => "OpenVINO".into(),
    }
}

/// What `seg_providers` / `segrt providers` report for one execution provider.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderProbe {
    pub name: String,
    /// The `SegProvider` value to put in `SegOptions::provider`.
    pub value: i32,
    pub onnxruntime_name: &'static str,
    /// The loaded ONNX Runtime build includes it (`GetAvailableProviders`).
    pub in_this_build: bool,
    /// A tiny session with it (and nothing else) was created on this machine.
    pub initialises: bool,
    /// Why it did not initialise: ONNX Runtime's own words (e.g. a missing libcublasLt.so.13).
    pub reason: Option<String>,
}

/// The execution providers the loaded ONNX Runtime build includes (its `GetAvailableProviders`).
pub fn available_providers() -> Vec<String> {
    let api = ort::api();
    let (mut list, mut n): (*mut *mut std::ffi::c_char, std::ffi::c_int) = (std::ptr::null_mut(), 0);
    // SAFETY: the C API fills a list it owns; it is read, then released with its own function.
    unsafe {
        let status = (api.GetAvailableProviders)(&mut list, &mut n);
        if !status.0.is_null() {
            (api.ReleaseStatus)(status.0);
            return Vec::new();
        }
        let names = (0..n.max(0) as usize).map(|i| std::ffi::CStr::from_ptr(*list.add(i)).to_string_lossy().into_owned()).collect();
        let status = (api.ReleaseAvailableProviders)(list, n);
        if !status.0.is_null() {
            (api.ReleaseStatus)(status.0);
        }
        names
    }
}

/// A valid one-op model (a pooling "classifier"): enough to make every provider initialise.
const PROBE_MODEL: &[u8] = include_bytes!("../models/test/not_segmentation.onnx");

/// Tries each execution provider on this machine by creating a tiny session with it.
pub fn probe_providers(options: &Options) -> Result<Vec<ProviderProbe>> {
    runtime::environment(options.ort_path.as_deref())?;
    let available = available_providers();
    Ok(SegProvider::ALL
        .iter()
        .map(|&p| {
            let probe_options =
                Options { provider: p, provider_policy: SegProviderPolicy::SEG_PROVIDER_REQUIRE, intra_threads: 1, ..options.clone() };
            let outcome = build_session(PROBE_MODEL, &probe_options);
            ProviderProbe {
                name: provider_name(p, options.device_id),
                value: p as i32,
                onnxruntime_name: p.ort_name(),
                in_this_build: available.iter().any(|a| a == p.ort_name()),
                initialises: outcome.is_ok(),
                reason: outcome.err().map(|e| e.message),
            }
        })
        .collect())
}

/// Reads a model file; any failure (missing, a folder, no permission) is `SEG_MODEL_NOT_FOUND`.
pub fn read_model_file(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::new(SegStatus::SEG_MODEL_NOT_FOUND, format!("cannot read model file '{}': {e}", path.display())))
}

/// Builds a session from model bytes on the calling thread.
pub fn build_session(model: &[u8], options: &Options) -> Result<(Session, ProviderReport)> {
    if model.is_empty() {
        return Err(Error::new(SegStatus::SEG_MODEL_INVALID, "the model is empty (0 bytes)"));
    }
    let env = runtime::environment(options.ort_path.as_deref())?;
    let ort_err = |e: ort::Error<ort::session::builder::SessionBuilder>| Error::new(SegStatus::SEG_INTERNAL, e.to_string());
    let mut builder = Session::builder(env).map_err(|e| Error::new(SegStatus::SEG_INTERNAL, e.to_string()))?;
    if options.intra_threads > 0 {
        builder = builder.with_intra_threads(options.intra_threads).map_err(ort_err)?;
    }

    let requested = provider_name(options.provider, options.device_id);
    let mut report = ProviderReport { requested: requested.clone(), in_use: requested.clone(), fallback_reason: None };
    let dispatch = match options.provider {
        SegProvider::SEG_PROVIDER_CPU => None,
        // error_on_failure: ort's default is to log and silently run on the CPU.
        SegProvider::SEG_PROVIDER_CUDA => Some(ep::CUDA::default().with_device_id(options.device_id).build().error_on_failure()),
        SegProvider::SEG_PROVIDER_TENSORRT => Some(ep::TensorRT::default().with_device_id(options.device_id).build().error_on_failure()),
        SegProvider::SEG_PROVIDER_DIRECTML => Some(ep::DirectML::default().with_device_id(options.device_id).build().error_on_failure()),
        SegProvider::SEG_PROVIDER_OPENVINO => Some(ep::OpenVINO::default().build().error_on_failure()),
    };
    if let Some(dispatch) = dispatch {
        if matches!(options.provider, SegProvider::SEG_PROVIDER_CUDA | SegProvider::SEG_PROVIDER_TENSORRT) {
            runtime::preload_gpu_libraries();
        }
        builder = match builder.with_execution_providers([dispatch]) {
            Ok(b) => b,
            Err(e) => {
                let reason = format!("{requested} could not be initialised: {}", e.message());
                if options.provider_policy == SegProviderPolicy::SEG_PROVIDER_REQUIRE {
                    return Err(Error::new(SegStatus::SEG_PROVIDER_UNAVAILABLE, reason + " (policy: require)"));
                }
                crate::log::emit(crate::log::SegLogLevel::SEG_LOG_WARN, &format!("{reason}; running on the CPU (policy: fallback)"));
                report.in_use = "CPU".into();
                report.fallback_reason = Some(reason);
                e.recover()
            }
        };
    }

    let session = builder
        .commit_from_memory(model)
        .map_err(|e| Error::new(SegStatus::SEG_MODEL_INVALID, format!("ONNX Runtime cannot load the model: {}", e.message())))?;
    Ok((session, report))
}

/// Resident memory of this process in bytes (Linux), for reporting per-session cost.
pub fn resident_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(pages * page.max(1) as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// One model, one ONNX Runtime session per calling thread, created on first use and released when
/// that thread exits.
///
/// ONNX Runtime's `Run` needs exclusive access to a session; giving each thread its own lets any
/// number of host threads share a handle without contending on the hot path. A host thread pool
/// that retires and creates threads therefore never makes the set grow: an exiting thread's
/// thread-local exit hook drops its sessions of every model still alive.
pub struct ThreadSessions {
    pool: Arc<Pool>,
    /// Resident memory the first session added (includes ONNX Runtime's one-time set-up).
    pub session_bytes: Option<u64>,
    pub provider: ProviderReport,
}

struct Pool {
    model: Vec<u8>,
    options: Options,
    /// Sessions by the thread that owns them. The map is locked only to look a session up or add
    /// or remove one; each session's own mutex is only ever taken by its owning thread.
    live: Mutex<HashMap<ThreadId, Arc<Mutex<Session>>>>,
    created: AtomicUsize,
    /// Resident memory the latest extra thread's session added (0 until a second thread runs).
    extra_session_bytes: AtomicU64,
}

/// Per thread: the pools this thread has a session in, so they can be told when it exits.
struct ExitHook {
    thread: ThreadId,
    pools: RefCell<Vec<Weak<Pool>>>,
}

impl Drop for ExitHook {
    fn drop(&mut self) {
        for pool in self.pools.borrow().iter().filter_map(Weak::upgrade) {
            let session = pool.live.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.thread);
            drop(session); // released outside the map lock
        }
    }
}

thread_local! {
    static EXIT_HOOK: ExitHook = ExitHook { thread: std::thread::current().id(), pools: RefCell::new(Vec::new()) };
}

impl ThreadSessions {
    /// Builds the first session on the calling thread, so errors surface at creation.
    pub fn new(model: Vec<u8>, options: &Options) -> Result<Self> {
        let before = resident_bytes();
        let (session, provider) = build_session(&model, options)?;
        let session_bytes = match (before, resident_bytes()) {
            (Some(b), Some(a)) => Some(a.saturating_sub(b)),
            _ => None,
        };
        let pool = Arc::new(Pool {
            model,
            options: options.clone(),
            live: Mutex::new(HashMap::new()),
            created: AtomicUsize::new(0),
            extra_session_bytes: AtomicU64::new(0),
        });
        pool.adopt(Arc::new(Mutex::new(session)));
        Ok(ThreadSessions { pool, session_bytes, provider })
    }

    /// Runs `f` with the calling thread's session.
    pub fn with<T>(&self, f: impl FnOnce(&mut Session) -> Result<T>) -> Result<T> {
        let me = std::thread::current().id();
        let existing = self.pool.live.lock().unwrap_or_else(|p| p.into_inner()).get(&me).cloned();
        let session = match existing {
            Some(s) => s,
            None => {
                let before = resident_bytes();
                let (session, _) = build_session(&self.pool.model, &self.pool.options)?;
                if let (Some(b), Some(a)) = (before, resident_bytes()) {
                    self.pool.extra_session_bytes.store(a.saturating_sub(b), Ordering::Relaxed);
                }
                let session = Arc::new(Mutex::new(session));
                self.pool.adopt(session.clone());
                session
            }
        };
        let mut guard = match session.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                return Err(Error::invalid("segrt was re-entered on the same thread while a run was in progress (e.g. from a callback)"))
            }
        };
        f(&mut guard)
    }

    /// Resident memory an extra calling thread's session added, once one has run (approximate:
    /// other threads may allocate at the same time).
    pub fn extra_session_bytes(&self) -> Option<u64> {
        Some(self.pool.extra_session_bytes.load(Ordering::Relaxed)).filter(|b| *b > 0)
    }

    /// Number of threads that hold a session of this model now.
    pub fn threads(&self) -> usize {
        self.pool.live.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Sessions created so far, including those released when their thread exited.
    pub fn sessions_created(&self) -> usize {
        self.pool.created.load(Ordering::Relaxed)
    }

    pub fn model_len(&self) -> usize {
        self.pool.model.len()
    }
}

impl Pool {
    /// Files `session` as the calling thread's and asks the thread to release it on exit.
    fn adopt(self: &Arc<Self>, session: Arc<Mutex<Session>>) {
        let me = std::thread::current().id();
        self.live.lock().unwrap_or_else(|p| p.into_inner()).insert(me, session);
        self.created.fetch_add(1, Ordering::Relaxed);
        // During thread teardown the hook may already be gone; the session then lives until the model is freed.
        let _ = EXIT_HOOK.try_with(|hook| {
            let mut pools = hook.pools.borrow_mut();
            pools.retain(|w| w.strong_count() > 0);
            pools.push(Arc::downgrade(self));
        });
    }
}
