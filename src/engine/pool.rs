//! The sessions of one model, shared by every thread that calls its handle.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::ThreadId;

use ort::session::Session;

use crate::error::{Error, Result};
use crate::options::Options;

use super::memory::resident_bytes;
use super::providers::ProviderReport;
use super::session::build_session;

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
