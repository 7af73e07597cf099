//! The sessions of one model, shared by every thread that calls its handle: a bounded pool.
//!
//! A call borrows an idle session, runs, and gives it back; any thread may use any session, and a
//! session serves one call at a time (ONNX Runtime's `Run` is not safe to share for GPU providers,
//! and ort's `run` takes `&mut`). The pool grows on demand up to `max_sessions`; calls beyond wait
//! their turn in arrival order (a ticket each: no spinning, no starvation). Threads coming and going
//! cost nothing: sessions belong to the pool, not to threads. On the CPU, a pool that may grow saves
//! ONNX Runtime's optimised graph once (see `shared_graph`), and its sessions load that graph in
//! place, its initializers handed to each as shared values with one pre-packed weights container:
//! the weights and the forms ONNX Runtime pre-packs from them exist once per pool, and an extra
//! session adds its own state only. Unless a thread count is set, all sessions run on
//! the environment's one global thread pool. Each session carries
//! the caller's scratch `S` (a pipeline's reused buffers), so that memory too follows the sessions,
//! not the number of host threads: a waiting call holds nothing.

use std::cell::RefCell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use ort::session::Session;
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_128;

use crate::control;
use crate::error::{Error, Result};
use crate::log::LogLevel;
use crate::options::{ArenaPolicy, Options, Provider};

use super::arena::ArenaUser;
use super::cache::{CacheReport, ModelCache};
use super::cached_build::build_session_cached;
use super::memory::resident_bytes;
use super::pool_source::{Growth, ModelFile, Source};
use super::providers::tensorrt::profile::{self, ShapeProfile};
use super::providers::{PerModel, ProviderReport};
use super::run::ArenaRelease;
use super::run_cost::RunCosts;
use super::session::{build_pooled_session, build_session_for};
use super::shared_sessions::{build_session_sharing, build_shared_session, PooledSession};

/// The default cap on the CPU: one session per physical core (each runs on the shared thread pool,
/// so more concurrent runs than cores only queue inside ONNX Runtime).
pub fn default_max_sessions() -> usize {
    num_cpus::get_physical().max(1)
}

/// The default cap for `provider`: on a GPU one session per device, since each session holds its
/// own copy of the weights and its own memory arena on the GPU, and the GPU runs one model at a time
/// anyway (more sessions would multiply the memory, not the speed).
pub fn default_max_sessions_for(provider: Provider) -> usize {
    match provider {
        Provider::Cpu | Provider::OpenVino => default_max_sessions(),
        Provider::Cuda | Provider::TensorRt | Provider::DirectMl => 1,
    }
}

/// When a CPU pool that may grow saves the graph its further sessions share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphSharing {
    /// Creation saves it and loads the first session from it: every extra session is light;
    /// creation pays for serialising the graph (tens of milliseconds for a UNet, ~0.5-1 s for a
    /// 100 MB SAM2 encoder on 2 cores).
    AtCreation,
    /// The first session is built from the model (its own weights); the first extra session saves
    /// the graph and is loaded from it, pre-packing the weights every later session shares. For
    /// models whose extra sessions are rare and whose first start matters, like SAM2's encoder.
    AtFirstGrowth,
}

/// What `seg_session_info` reports about a pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolStats {
    /// The cap (`max_sessions`, resolved).
    pub max_sessions: usize,
    /// Sessions alive now (idle or busy).
    pub sessions: usize,
    /// Sessions serving a call now.
    pub busy: usize,
    /// Sessions built so far.
    pub created: usize,
    /// Calls that had to wait for a session.
    pub waits: u64,
    /// Resident memory the first session added (includes ONNX Runtime's one-time set-up).
    pub bytes_first_session: Option<u64>,
    /// Resident memory an extra session added (measured when the second one was built; null before).
    pub bytes_per_extra_session: Option<u64>,
    /// Bytes of the optimised graph more sessions read their weights from in place (null: extra
    /// sessions load the model themselves, e.g. on a GPU provider or with `max_sessions` 1).
    pub shared_graph_bytes: Option<u64>,
    /// Initializers of that graph handed to every session as shared values (the weights whose
    /// pre-packed forms all sessions share); null without a shared graph.
    pub shared_initializers: Option<u64>,
    /// Whether this model's runs give the shared CPU arena's unused blocks back, after each run or
    /// once the process goes idle (the handle's arena policy applied to them).
    pub releases_arena: bool,
    /// ONNX Runtime's working memory per batch item as the calls measured it (see `run_cost`), by
    /// input size ("256x256"; "prompt" for a SAM2 decoder's prompts): what `max_memory_bytes` sizes
    /// batches with.
    pub run_bytes_per_item: std::collections::BTreeMap<String, u64>,
}

/// How often a call waiting for a session looks at its controls.
const CANCEL_POLL: Duration = Duration::from_millis(5);

struct State<S> {
    idle: Vec<(PooledSession, S)>,
    /// Sessions alive, idle or busy (or being built).
    live: usize,
    busy: usize,
    created: usize,
    waits: u64,
    /// Tickets: a call takes `next` and goes when `serving` reaches it.
    next: u64,
    serving: u64,
    /// Tickets of calls that stopped waiting (cancelled): their turn is skipped.
    abandoned: Vec<u64>,
}

impl<S> State<S> {
    /// The next ticket's turn, past the tickets whose calls stopped waiting.
    fn next_turn(&mut self) {
        self.serving += 1;
        while let Some(i) = self.abandoned.iter().position(|t| *t == self.serving) {
            self.abandoned.swap_remove(i);
            self.serving += 1;
        }
    }

    /// A call with `ticket` stops waiting: its turn, now or later, goes to the next one.
    fn abandon(&mut self, ticket: u64) {
        if self.serving == ticket {
            self.next_turn();
        } else {
            self.abandoned.push(ticket);
        }
    }
}

/// What a model's runs are like, for `ArenaPolicy::Auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// Seconds long, with hundreds of megabytes of working buffers, once per image (image encoders,
    /// the video memory attention): under `Auto` they give the arena's unused blocks back once the
    /// process goes idle (faulting them in again after every run would cost 8–28 % of a batch's encodes).
    Heavy,
    /// Short and repeated (decoder clicks, UNet runs): under `Auto` they keep the blocks for the next.
    Light,
}

/// When runs of this kind give the arena's unused blocks back under `policy`.
fn release_arena(policy: ArenaPolicy, runs: Runs) -> ArenaRelease {
    match (policy, runs) {
        (ArenaPolicy::Auto, Runs::Heavy) => ArenaRelease::WhenIdle,
        (ArenaPolicy::Auto, Runs::Light) | (ArenaPolicy::Keep, _) => ArenaRelease::Never,
        (ArenaPolicy::Release, _) => ArenaRelease::AfterRun,
    }
}

pub struct SessionPool<S = ()> {
    /// Locked while a session is built from it (a shared graph replaces the model on the way).
    source: Mutex<Source>,
    /// Whether more sessions should share one graph's weights: CPU sessions of a pool that may grow
    /// (GPU providers keep their weights on the device), until saving a graph has failed once.
    share: AtomicBool,
    /// Set when the model can no longer be read for more sessions: the pool keeps those it has.
    stopped: AtomicBool,
    /// When runs give the arena's unused blocks back.
    release_arena: ArenaRelease,
    /// The shared graph's size and shared initializers once there is one (0 before).
    shared_graph_bytes: AtomicU64,
    shared_initializers: AtomicU64,
    /// Bytes of the original model.
    model_len: usize,
    options: Options,
    /// What segrt derived for the model, beside the options.
    per_model: PerModel,
    /// What the model cache did for the first session.
    pub cache: CacheReport,
    max: usize,
    state: Mutex<State<S>>,
    turn: Condvar,
    pub provider: ProviderReport,
    first_session_bytes: Option<u64>,
    extra_session_bytes: AtomicU64,
    /// ONNX Runtime's working memory per batch item, measured by the calls (see `run_cost`).
    costs: RunCosts,
    /// Dropped after every session above (fields drop in order): the last pool unregisters the arena.
    _arena: ArenaUser,
}

/// `extra_session_bytes` before a second session was built.
const UNMEASURED: u64 = u64::MAX;

thread_local! {
    /// Pools this thread is inside a call of: a nested call (from a log callback) on the same pool
    /// could wait for the session its own thread holds, so it is refused instead.
    static INSIDE: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Leaves the pool's "inside" mark of this thread when the call ends (also by unwinding).
struct Inside(usize);
impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|v| v.borrow_mut().retain(|p| *p != self.0));
    }
}

impl<S: Default> SessionPool<S> {
    /// Builds the first session on the calling thread, so errors surface at creation. `model_path`:
    /// the file the model was read from (`None`: given in memory), where `CacheMode::BesideModel`
    /// puts the cache.
    pub fn new(model: Vec<u8>, model_path: Option<&Path>, options: &Options, sharing: GraphSharing) -> Result<Self> {
        Self::for_model(model, model_path, options, PerModel::default(), sharing)
    }

    /// [`Self::new`] with what segrt derived for the model (`per_model`: TensorRT's shape profile),
    /// which every session of the pool is built with.
    pub fn for_model(
        model: Vec<u8>,
        model_path: Option<&Path>,
        options: &Options,
        per_model: PerModel,
        sharing: GraphSharing,
    ) -> Result<Self> {
        // Every ort call needs ONNX Runtime loaded first (ort panics otherwise).
        let runtime = crate::runtime::init(options.ort_path.as_deref())?;
        let side_files = super::external_data::resolve(&model, model_path, &per_model.external_data, options.max_model_bytes)?;
        let per_model = per_model.with_side_files(side_files);
        let arena = ArenaUser::acquire();
        let cache = options
            .cache
            .folder_for(model_path)?
            .map(|dir| ModelCache::new(dir, &model, &per_model.external_data, options, &runtime.version));
        let cache_for_growth = cache.clone();
        let max = if options.max_sessions == 0 { default_max_sessions_for(options.provider) } else { options.max_sessions };
        let file_hash = model_path.filter(|_| max > 1).map(|_| xxh3_128(&model));
        let mut share = max > 1 && options.provider == Provider::Cpu;
        let before = resident_bytes();
        let model_len = model.len();
        let (session, provider, cache, source) = match cache {
            // The first session also saves the graph more sessions will share, so that the original
            // can go at once. With a cache, the first extra session saves it.
            // The session that saved the graph goes at once: the first session is loaded from the
            // graph like every later one, so that all of them share the weights pre-packed from it.
            None if share && sharing == GraphSharing::AtCreation => match build_session_sharing(&model, false, options, &per_model)? {
                (saver, provider, Some(graph)) => {
                    drop(saver);
                    let session = build_shared_session(&graph, options, &per_model)?;
                    (session, provider, CacheReport::off(), Source::Shared(graph))
                }
                (session, provider, None) => {
                    share = false;
                    (session.into(), provider, CacheReport::off(), Source::Original(model))
                }
            },
            None => {
                let (session, provider) = build_session_for(&model, options, &per_model)?;
                (session.into(), provider, CacheReport::off(), Source::Original(model))
            }
            Some(cache) => {
                let built = build_session_cached(&model, options, &per_model, &cache)?;
                match built.optimised {
                    // The original is no longer needed: more sessions load the optimised model.
                    Some(optimised) => (built.session.into(), built.provider, built.cache, Source::Optimised(optimised)),
                    None => (built.session.into(), built.provider, built.cache, Source::Original(model)),
                }
            }
        };
        // What more sessions are built from; a model read from a file is not held for the life of
        // the handle (the SAM2.1 hiera-tiny encoder: 109 MB) but read again when the pool grows.
        let source = match (source, model_path.zip(file_hash)) {
            (Source::Shared(graph), _) => Source::Shared(graph),
            _ if max == 1 => Source::Nothing,
            (Source::Original(_) | Source::Optimised(_), Some((path, hash))) => {
                Source::File(ModelFile { path: path.to_path_buf(), hash, cache: cache_for_growth })
            }
            (other, _) => other,
        };
        let (shared_graph_bytes, shared_initializers) = match &source {
            Source::Shared(graph) => (graph.byte_len() as u64, graph.shared_initializers() as u64),
            _ => (0, 0),
        };
        // Building a session allocates and frees several times the model (its protobuf, the
        // optimiser's copies, the saved graph), which glibc keeps in its heaps unless asked: 149 MB
        // after creating a SAM2.1 hiera-tiny pair.
        super::arena::trim_malloc();
        let first_session_bytes = before.zip(resident_bytes()).map(|(b, a)| a.saturating_sub(b));
        // A provider that failed once is not tried again for every extra session (its failure can
        // come after minutes of work, e.g. weights uploaded until the GPU ran out of memory).
        let mut options = options.clone();
        if provider.fallback_reason.is_some() {
            options.provider = Provider::Cpu;
        }
        let state = State {
            idle: vec![(session, S::default())],
            live: 1,
            busy: 0,
            created: 1,
            waits: 0,
            next: 0,
            serving: 0,
            abandoned: Vec::new(),
        };
        Ok(SessionPool {
            source: Mutex::new(source),
            share: AtomicBool::new(share),
            stopped: AtomicBool::new(false),
            release_arena: release_arena(options.arena, Runs::Light),
            shared_graph_bytes: AtomicU64::new(shared_graph_bytes),
            shared_initializers: AtomicU64::new(shared_initializers),
            model_len,
            options,
            per_model,
            cache,
            max,
            state: Mutex::new(state),
            turn: Condvar::new(),
            provider,
            first_session_bytes,
            extra_session_bytes: AtomicU64::new(UNMEASURED),
            costs: RunCosts::default(),
            _arena: arena,
        })
    }

    /// The TensorRT shape profile this pool's runs are checked against (see `PerModel::trt_profile_checked`).
    pub fn trt_profile_checked(&self) -> Option<std::sync::Arc<ShapeProfile>> {
        self.per_model.trt_profile_checked(&self.options)
    }

    /// What this pool's runs are like (`Runs::Light` unless told), for `ArenaPolicy::Auto`.
    pub fn with_runs(mut self, runs: Runs) -> Self {
        self.release_arena = release_arena(self.options.arena, runs);
        self
    }

    fn state(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` with a session of this pool and its scratch: an idle one, a new one while under the
    /// cap, or the first one given back (in arrival order).
    pub fn with<T>(&self, f: impl FnOnce(&mut Session, &mut S) -> Result<T>) -> Result<T> {
        let me = self as *const Self as usize;
        if INSIDE.with(|v| v.borrow().contains(&me)) {
            return Err(Error::invalid("segrt was re-entered on the same thread while a run was in progress (e.g. from a callback)"));
        }
        INSIDE.with(|v| v.borrow_mut().push(me));
        let _inside = Inside(me);

        let (mut session, mut scratch) = self.take()?;
        // The session goes back to the pool however `f` ends (a panic is caught at the boundary).
        struct Return<'a, S: Default>(&'a SessionPool<S>, Option<(PooledSession, S)>);
        impl<S: Default> Drop for Return<'_, S> {
            fn drop(&mut self) {
                if let Some(s) = self.1.take() {
                    self.0.give_back(s);
                }
            }
        }
        let mut guard = Return(self, None);
        let _profile = profile::activate(self.trt_profile_checked());
        let out = f(&mut session.session, &mut scratch);
        guard.1 = Some((session, scratch));
        out
    }

    /// Waits for this call's turn, then hands out an idle session or builds a new one.
    fn take(&self) -> Result<(PooledSession, S)> {
        let mut state = self.state();
        let ticket = state.next;
        state.next += 1;
        let mut waited = false;
        loop {
            if state.serving == ticket {
                if let Some(slot) = state.idle.pop() {
                    state.next_turn();
                    state.busy += 1;
                    self.turn.notify_all();
                    return Ok(slot);
                }
                if state.live < self.max && !self.stopped.load(Ordering::Relaxed) {
                    state.next_turn();
                    state.busy += 1;
                    state.live += 1;
                    self.turn.notify_all();
                    drop(state);
                    return self.grow();
                }
            }
            if !waited {
                waited = true;
                state.waits += 1;
            }
            if !control::is_active() {
                state = self.turn.wait(state).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            // A call that can be cancelled looks at its controls while it waits for its turn.
            state = self.turn.wait_timeout(state, CANCEL_POLL).unwrap_or_else(|p| p.into_inner()).0;
            if let Err(cancelled) = control::checkpoint() {
                state.abandon(ticket);
                self.turn.notify_all();
                return Err(cancelled);
            }
        }
    }

    /// Builds one more session (its slot is already counted in `live` and `busy`).
    fn grow(&self) -> Result<(PooledSession, S)> {
        let before = resident_bytes();
        let built = self.build_more();
        if built.is_err() {
            let mut state = self.state();
            state.live -= 1;
            state.busy -= 1;
            self.turn.notify_all();
        }
        match built {
            Ok(session) => {
                if let (Some(b), Some(a)) = (before, resident_bytes()) {
                    // The first extra session's cost, measured once: later ones would only repeat it
                    // with other threads' allocations mixed in.
                    let _ =
                        self.extra_session_bytes.compare_exchange(UNMEASURED, a.saturating_sub(b), Ordering::Relaxed, Ordering::Relaxed);
                }
                self.state().created += 1;
                Ok((session, S::default()))
            }
            Err(Growth::Failed(e)) => Err(e),
            Err(Growth::Stopped(reason)) => {
                // This call waits for a session like any call beyond the cap (no more growth, so
                // `take` returns here at most once).
                if !self.stopped.swap(true, Ordering::Relaxed) {
                    let line = format!("this handle keeps the sessions it has ({}): {reason}", self.state().live);
                    crate::log::emit(LogLevel::Warn, &line);
                }
                self.take()
            }
        }
    }

    /// Builds a session from the pool's source: in place from the shared graph, or from the model,
    /// saving the graph for the next ones when the pool shares weights and has none yet.
    fn build_more(&self) -> std::result::Result<PooledSession, Growth> {
        let mut source = self.source.lock().unwrap_or_else(|p| p.into_inner());
        let loaded;
        let (model, optimised) = match &*source {
            Source::Shared(graph) => return build_shared_session(graph, &self.options, &self.per_model).map_err(Growth::Failed),
            Source::Nothing => return Err(Growth::Stopped("the pool was created for one session".into())),
            Source::Original(model) => (model.as_slice(), false),
            Source::Optimised(optimised) => (optimised.model(), true),
            Source::File(file) => {
                loaded = file.load(self.options.max_model_bytes).map_err(Growth::Stopped)?;
                loaded.model()
            }
        };
        if !self.share.load(Ordering::Relaxed) {
            return build_pooled_session(model, optimised, &self.options, &self.per_model).map(PooledSession::from).map_err(Growth::Failed);
        }
        let (saver, _, graph) = build_session_sharing(model, optimised, &self.options, &self.per_model).map_err(Growth::Failed)?;
        let Some(graph) = graph else {
            self.share.store(false, Ordering::Relaxed);
            return Ok(saver.into());
        };
        // Like at creation, the session that saved the graph goes: one loaded from the graph shares
        // its pre-packed weights with every later one. The model is no longer needed.
        drop(saver);
        let session = build_shared_session(&graph, &self.options, &self.per_model).map_err(Growth::Failed)?;
        self.shared_graph_bytes.store(graph.byte_len() as u64, Ordering::Relaxed);
        self.shared_initializers.store(graph.shared_initializers() as u64, Ordering::Relaxed);
        *source = Source::Shared(graph);
        Ok(session)
    }

    fn give_back(&self, slot: (PooledSession, S)) {
        let mut state = self.state();
        state.busy -= 1;
        state.idle.push(slot);
        self.turn.notify_all();
    }

    pub fn stats(&self) -> PoolStats {
        let state = self.state();
        PoolStats {
            max_sessions: self.max,
            sessions: state.live,
            busy: state.busy,
            created: state.created,
            waits: state.waits,
            bytes_first_session: self.first_session_bytes,
            bytes_per_extra_session: Some(self.extra_session_bytes.load(Ordering::Relaxed)).filter(|b| *b != UNMEASURED),
            shared_graph_bytes: Some(self.shared_graph_bytes.load(Ordering::Relaxed)).filter(|b| *b != 0),
            shared_initializers: Some(self.shared_initializers.load(Ordering::Relaxed))
                .filter(|_| self.shared_graph_bytes.load(Ordering::Relaxed) != 0),
            releases_arena: self.release_arena != ArenaRelease::Never,
            run_bytes_per_item: self.costs.measured(),
        }
    }

    /// What this model's runs cost in ONNX Runtime's memory per batch item, as measured.
    pub fn costs(&self) -> &RunCosts {
        &self.costs
    }

    /// Bytes of the original model.
    pub fn model_len(&self) -> usize {
        self.model_len
    }

    /// When this pool's runs give the shared arena's unused blocks back (pass to `engine::run`).
    pub fn releases_arena(&self) -> ArenaRelease {
        self.release_arena
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandoned_tickets_lose_their_turn() {
        let mut state =
            State::<()> { idle: Vec::new(), live: 1, busy: 1, created: 1, waits: 0, next: 4, serving: 0, abandoned: Vec::new() };
        // Tickets 1 and 2 stop waiting while 0 is served; 3 goes right after 0.
        state.abandon(2);
        state.abandon(1);
        state.next_turn();
        assert_eq!(state.serving, 3);
        assert!(state.abandoned.is_empty());
        // The ticket being served stops waiting itself: the next one goes.
        state.abandon(3);
        assert_eq!(state.serving, 4);
    }

    #[test]
    fn the_default_cap_is_at_least_one() {
        assert!(default_max_sessions() >= 1);
        assert_eq!(default_max_sessions_for(Provider::Cpu), default_max_sessions());
        for gpu in [Provider::Cuda, Provider::TensorRt, Provider::DirectMl] {
            assert_eq!(default_max_sessions_for(gpu), 1, "{gpu:?}: one session (one copy of the weights) per device");
        }
    }
}
