//! The CPU memory arena every session of the process shares (ONNX Runtime's environment allocator),
//! registered while a handle lives.
//!
//! ONNX Runtime gives every session an arena of its own, which keeps that session's peak: with a
//! pool, idle sessions would each hold a peak's worth of buffers. segrt registers one arena on the
//! environment and every session opts in with `session.use_env_allocators`, so a buffer freed by one
//! call serves the next call of any session or handle. The arena grows as ONNX Runtime's default
//! does (regions doubling in size, `kNextPowerOfTwo`): regions sized as requested fragment, since a
//! freed region serves only requests it can hold.
//!
//! A run may give the arena's unused blocks back after it, or once the process is idle
//! (`idle_release`; the pools' `ArenaPolicy`), and a host may ask for it (`seg_release_memory`). When the
//! last pool goes (every handle freed), the arena is unregistered, so it goes with the last session
//! that used it, and glibc is asked to return its free memory: freeing every handle gives the
//! process's memory back. The next handle registers a new one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use ort::memory::{AllocationDevice, AllocatorType, MemoryInfo, MemoryType};
use ort::session::{OutputSelector, RunOptions, Session};
use ort::value::Tensor;
use ort::AsPointer;

use crate::log::LogLevel;

struct State {
    /// Pools alive or being built.
    users: usize,
    registered: bool,
    /// Registration failed once: sessions keep arenas of their own (logged once).
    failed: bool,
    /// A session of a one-node model whose runs end by shrinking the arena (see `release_unused`);
    /// built when first needed, dropped with the arena.
    releaser: Option<Session>,
}

/// Releases done (`release_unused` runs that shrank the arena), for tests and reports.
static RELEASES: AtomicU64 = AtomicU64::new(0);

static STATE: Mutex<State> = Mutex::new(State { users: 0, registered: false, failed: false, releaser: None });

/// A pool's hold on the shared arena: registered while one exists. Take it before building the
/// pool's first session, and drop it after the pool's last session (declare it last).
pub struct ArenaUser(());

impl ArenaUser {
    /// Needs ONNX Runtime loaded (`runtime::init`).
    pub fn acquire() -> ArenaUser {
        let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
        state.users += 1;
        if !state.registered && !state.failed {
            match register() {
                Ok(()) => {
                    state.registered = true;
                    // Built now, while the arena is empty: what its session keeps in the arena
                    // lies in the arena's first small block, not in a large one freed later.
                    state.releaser = releaser().ok();
                }
                Err(reason) => {
                    state.failed = true;
                    crate::log::emit(LogLevel::Warn, &format!("each session keeps its own CPU memory arena: {reason}"));
                }
            }
        }
        ArenaUser(())
    }
}

impl Drop for ArenaUser {
    fn drop(&mut self) {
        let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
        state.users -= 1;
        if state.users == 0 {
            // Nothing left to release when idle; ended before a host may unload the library. Not
            // under the lock: the timer may be releasing, which takes it.
            drop(state);
            super::idle_release::stop();
            state = STATE.lock().unwrap_or_else(|p| p.into_inner());
        }
        if state.users == 0 && state.registered {
            // Sessions still alive elsewhere (none of segrt's) keep the arena until they go.
            state.releaser = None;
            match unregister() {
                Ok(()) => state.registered = false,
                Err(reason) => crate::log::emit(LogLevel::Warn, &format!("the shared CPU memory arena stays: {reason}")),
            }
            trim_malloc();
        }
    }
}

/// Gives the arena's blocks that no tensor uses back to the system, now: after a run whose outputs
/// have been read and dropped (a shrink at the end of the run itself would leave the blocks holding
/// its outputs: 120 MB of the SAM2.1 hiera-tiny encoder's). ONNX Runtime's C API reaches an arena's
/// shrink only from API level 25 (`OrtAllocator::Shrink`) or through a run option, and segrt calls
/// level 21: so a run of a one-node model (`providers::probe::pooling_model`) with
/// `memory.enable_memory_arena_shrinkage` does it, on the shared arena its session uses.
pub fn release_unused() {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    if !state.registered {
        return;
    }
    if state.releaser.is_none() {
        match releaser() {
            Ok(session) => state.releaser = Some(session),
            Err(reason) => {
                crate::log::emit(LogLevel::Warn, &format!("cannot release the CPU arena's unused blocks: {reason}"));
                return;
            }
        }
    }
    let Some(session) = state.releaser.as_mut() else { return };
    match shrink_with(session) {
        Ok(()) => {
            RELEASES.fetch_add(1, Ordering::SeqCst);
        }
        Err(reason) => crate::log::emit(LogLevel::Warn, &format!("cannot release the CPU arena's unused blocks: {reason}")),
    }
}

/// How many times the process gave the arena's unused blocks back (`release_unused` with an arena
/// registered), whether after a run, when idle or asked by the host.
pub fn releases() -> u64 {
    RELEASES.load(Ordering::SeqCst)
}

fn releaser() -> Result<Session, String> {
    let environment = environment()?;
    let builder = Session::builder(environment).map_err(|e| e.to_string())?;
    let mut builder = builder.with_env_allocators().map_err(|e| e.to_string())?;
    builder.commit_from_memory(&super::providers::probe::pooling_model()).map_err(|e| e.to_string())
}

/// One run of the releaser: its input and its pre-allocated output are segrt's memory and its one
/// node needs no scratch, so the run itself holds no block of the arena when it shrinks it (a tensor
/// of its own in a block would keep that block).
fn shrink_with(session: &mut Session) -> Result<(), String> {
    let text = |e: ort::Error| e.to_string();
    let input = Tensor::from_array(([1usize, 3, 32, 32], vec![0f32; 3 * 32 * 32])).map_err(text)?;
    let output = Tensor::from_array(([1usize, 3, 1, 1], vec![0f32; 3])).map_err(text)?;
    let mut options = RunOptions::new().map_err(text)?.with_outputs(OutputSelector::default().preallocate("pooled", output));
    options.set("memory.enable_memory_arena_shrinkage", "cpu:0").map_err(text)?;
    session.run_with_options(ort::inputs!["image" => input], &options).map(drop).map_err(text)
}

/// The memory info the arena is registered (and unregistered) under.
fn memory_info() -> Result<MemoryInfo<'static>, String> {
    MemoryInfo::new(AllocationDevice::CPU, 0, AllocatorType::Arena, MemoryType::Default).map_err(|e| e.to_string())
}

fn check(status: ort::sys::OrtStatusPtr) -> Result<(), String> {
    if status.0.is_null() {
        return Ok(());
    }
    let api = ort::api();
    // SAFETY: a non-null status from ONNX Runtime, read once and released here.
    let message = unsafe { std::ffi::CStr::from_ptr((api.GetErrorMessage)(status.0)).to_string_lossy().into_owned() };
    // SAFETY: as above: released once, after its message was copied.
    unsafe { (api.ReleaseStatus)(status.0) };
    Err(message)
}

fn environment() -> Result<&'static ort::environment::Environment, String> {
    crate::runtime::loaded().map(|rt| &rt.environment).ok_or_else(|| "ONNX Runtime is not loaded".to_string())
}

fn register() -> Result<(), String> {
    let api = ort::api();
    let environment = environment()?;
    let memory = memory_info()?;
    // ONNX Runtime's defaults (regions doubling in size) except where named.
    let keys = [c"arena_extend_strategy".as_ptr()];
    let values = [0usize]; // kNextPowerOfTwo
    let mut config = std::ptr::null_mut();
    // SAFETY: keys/values outlive the call; the config is released below, after registration copied it.
    check(unsafe { (api.CreateArenaCfgV2)(keys.as_ptr(), values.as_ptr(), keys.len(), &mut config) })?;
    // SAFETY: the environment and memory info are live; the config was created above.
    let registered = check(unsafe { (api.CreateAndRegisterAllocator)(environment.ptr().cast_mut(), memory.ptr(), config) });
    // SAFETY: created above, released once; registration keeps its own copy.
    unsafe { (api.ReleaseArenaCfg)(config) };
    registered
}

fn unregister() -> Result<(), String> {
    let api = ort::api();
    let environment = environment()?;
    let memory = memory_info()?;
    // SAFETY: the environment lives for the process; sessions built with the arena hold it alive.
    check(unsafe { (api.UnregisterAllocator)(environment.ptr().cast_mut(), memory.ptr()) })
}

/// Asks the C library to return the free memory of its heaps to the system (glibc keeps freed
/// blocks in each thread's heap until asked; other C libraries return large blocks on their own).
pub fn trim_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory no allocation uses.
    unsafe {
        libc::malloc_trim(0);
    }
}
