//! Giving the shared CPU arena's unused blocks back when the process goes idle, not between
//! back-to-back runs (`ArenaPolicy::Auto` for the image encoders and the video memory attention).
//!
//! Releasing right after every encode costs the next encode its working memory again (hundreds of
//! megabytes mapped and faulted in: 8–28 % of a MobileSAM-class encode measured against plain ONNX
//! Runtime); never releasing keeps an idle annotation tool at its peak. So a heavy run marks the arena
//! dirty and (re)arms one process-wide timer; a heavy run before it fires postpones it, so a batch
//! encodes at the kept speed; it never fires while any run is in flight; when it fires, the arena's
//! unused blocks and glibc's free heaps go back (`arena::release_unused`, `arena::trim_malloc`).
//! The timer is a small thread parked on a condition variable, started on first use and stopped with
//! the last pool (before a host may unload the library).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::arena;

/// How long the process stays without a heavy run before the arena is released (2 s: longer than
/// the gap between a batch's images, shorter than a user's look at a result).
pub const DEFAULT_IDLE_DELAY: Duration = Duration::from_secs(2);

static IDLE_DELAY_MS: AtomicU64 = AtomicU64::new(DEFAULT_IDLE_DELAY.as_millis() as u64);
/// Runs of any session in progress, process-wide.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

struct Timer {
    /// When the dirty arena is to be released; None: nothing to release.
    deadline: Option<Instant>,
    /// The running timer thread's generation; `stop` moves it on, which ends that thread.
    generation: u64,
    thread: Option<JoinHandle<()>>,
}

static TIMER: Mutex<Timer> = Mutex::new(Timer { deadline: None, generation: 0, thread: None });
static WAKE: Condvar = Condvar::new();

fn timer() -> MutexGuard<'static, Timer> {
    TIMER.lock().unwrap_or_else(|p| p.into_inner())
}

/// The idle time before a release (default `DEFAULT_IDLE_DELAY`); for tests and benchmarks that
/// need it shorter or longer. Applies from the next heavy run.
pub fn set_idle_delay(delay: Duration) {
    IDLE_DELAY_MS.store(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
}

fn idle_delay() -> Duration {
    Duration::from_millis(IDLE_DELAY_MS.load(Ordering::Relaxed))
}

/// A run in progress, counted while it lives (the timer waits for none).
pub struct RunInFlight(());

impl RunInFlight {
    pub fn begin() -> RunInFlight {
        IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        RunInFlight(())
    }
}

impl Drop for RunInFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// After a heavy run: the arena holds its working memory; release it once the process has had no
/// heavy run for the idle delay.
pub fn arm() {
    let mut t = timer();
    t.deadline = Some(Instant::now() + idle_delay());
    if t.thread.is_none() {
        let generation = t.generation;
        match std::thread::Builder::new().name("segrt-idle-release".into()).spawn(move || wait_and_release(generation)) {
            Ok(handle) => t.thread = Some(handle),
            // No thread: the arena is released at once rather than held.
            Err(_) => {
                t.deadline = None;
                drop(t);
                release();
                return;
            }
        }
    }
    WAKE.notify_all();
}

/// Releases the arena's unused blocks now (the host's `seg_release_memory`, or the timer firing);
/// a pending timer has nothing left to do.
pub fn release_now() {
    timer().deadline = None;
    release();
}

fn release() {
    arena::release_unused();
    arena::trim_malloc();
}

/// Ends the timer thread (the last pool went: nothing is left to release), waiting for it.
/// Call with no lock of `arena` held: the thread may be releasing.
pub fn stop() {
    let thread = {
        let mut t = timer();
        t.deadline = None;
        t.generation += 1;
        t.thread.take()
    };
    WAKE.notify_all();
    if let Some(thread) = thread {
        // A panic in the thread was already caught and reported there.
        let _ = thread.join();
    }
}

fn wait_and_release(generation: u64) {
    let mut t = timer();
    loop {
        if t.generation != generation {
            return;
        }
        let Some(deadline) = t.deadline else {
            t = WAKE.wait(t).unwrap_or_else(|p| p.into_inner());
            continue;
        };
        let now = Instant::now();
        if now < deadline {
            t = WAKE.wait_timeout(t, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
            continue;
        }
        if IN_FLIGHT.load(Ordering::SeqCst) > 0 {
            // Never under a run: it may want the blocks; look again after another idle delay.
            t.deadline = Some(now + idle_delay());
            continue;
        }
        // Cleared under the lock: a heavy run arming from now on is a new deadline, not lost.
        t.deadline = None;
        drop(t);
        // A panic here must not end the timer (nor unwind out of the thread silently).
        if std::panic::catch_unwind(release).is_err() {
            crate::log::emit(crate::log::LogLevel::Warn, "releasing the CPU arena when idle failed (panic)");
        }
        t = timer();
    }
}
