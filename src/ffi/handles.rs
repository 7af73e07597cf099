//! The handles: the opaque C types a host holds (`SegSession`, `SegTrack`, `SegCallControl`) and
//! the registry behind them. Handles are ids checked on every call, never addresses.
//!
//! A freed or made-up handle is detected (`SEG_INVALID_HANDLE`) instead of dereferenced, and a
//! call in flight keeps its `Arc`, so `seg_free` on another thread never pulls the session out from
//! under it. Ids are unguessable: each is a keyed hash of a counter (the key random per process),
//! never reused, so a stale copy, an off-by-one or a made-up value hits another live session only
//! with a chance of about (live handles) / 2^64.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::control::CallControl;
use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::sam2::reference::{MemoryReference, Reference};
use crate::sam2::video::{Tracker, VideoModel};
use crate::sam2::Sam2Segmenter;
use crate::unet::UnetSegmenter;

/// An opaque call control: cancellation and progress of the calls that can take long, given as their
/// last parameter `control` (NULL: the call cannot be cancelled and reports no progress). Create with
/// `seg_control_create`, release with `seg_control_free`.
pub struct SegCallControl {
    _private: [u8; 0],
}

/// An opaque session handle. Create with `seg_create*`, release with `seg_free`.
pub struct SegSession {
    _private: [u8; 0],
}

/// An opaque track handle (a SAM2 video being tracked). Create with `seg_track_create`, release
/// with `seg_track_free`.
pub struct SegTrack {
    _private: [u8; 0],
}

/// The C types of handles (they share one id space): what errors call them.
pub(crate) trait Opaque {
    /// "session", "track", "call control".
    const NOUN: &'static str;
    /// The out parameter of the exports that create one ("out_session").
    const OUT: &'static str;
}

impl Opaque for SegSession {
    const NOUN: &'static str = "session";
    const OUT: &'static str = "out_session";
}
impl Opaque for SegTrack {
    const NOUN: &'static str = "track";
    const OUT: &'static str = "out_track";
}
impl Opaque for SegCallControl {
    const NOUN: &'static str = "call control";
    const OUT: &'static str = "out_control";
}

/// What a reference handle holds: nothing until the first example, then the taught object.
pub(crate) type Slot = RwLock<Option<Arc<AnyReference>>>;

/// A reference of either approach: the session its first example was taught on decides (its calls
/// are in `reference.rs`).
pub(crate) enum AnyReference {
    /// On a SAM2 image session: the location prior and refinement (`sam2::reference`).
    Image(Reference),
    /// On a SAM2 video session: the memory approach (`MemoryReference`).
    Memory(MemoryReference),
}

/// What a handle refers to.
pub(crate) enum Handle {
    Unet(Box<UnetSegmenter>),
    Sam2(Box<Sam2Segmenter>),
    /// A SAM2 video model (`seg_create_sam2_video`); tracks made from it hold it too.
    Video(Arc<VideoModel>),
    /// A track (`seg_track_create`): one tracker, its calls one at a time.
    Track(Box<Mutex<Tracker>>),
    /// Cancellation and progress for calls (`seg_control_create`).
    Control(Arc<CallControl>),
    /// A taught object (`seg_reference_create`, `seg_reference_load`).
    Reference(Box<Slot>),
}

/// What an export may take a handle as (see `prologue::on`): one kind of object, or `Handle` (any).
pub(crate) trait Kind {
    /// What the export wanted, for the wrong-kind error: "a UNet session (seg_create)".
    const WANTED: &'static str;
    fn of(handle: &Handle) -> Option<&Self>;
}

/// `Kind` for the object behind one variant of `Handle`.
macro_rules! kind {
    ($ty:ty, $variant:ident, $wanted:literal) => {
        impl Kind for $ty {
            const WANTED: &'static str = $wanted;
            fn of(handle: &Handle) -> Option<&Self> {
                match handle {
                    Handle::$variant(object) => {
                        let object: &$ty = object;
                        Some(object)
                    }
                    _ => None,
                }
            }
        }
    };
}
kind!(UnetSegmenter, Unet, "a UNet session (seg_create)");
kind!(Sam2Segmenter, Sam2, "a SAM2 image session (seg_create_sam2)");
kind!(Arc<VideoModel>, Video, "a SAM2 video session (seg_create_sam2_video)");
kind!(Mutex<Tracker>, Track, "a track (seg_track_create)");
kind!(Arc<CallControl>, Control, "a call control (seg_control_create)");
kind!(Slot, Reference, "a reference (seg_reference_create)");

/// Any handle: the export matches on the kind itself.
impl Kind for Handle {
    const WANTED: &'static str = "a handle";
    fn of(handle: &Handle) -> Option<&Self> {
        Some(handle)
    }
}

impl Handle {
    /// This handle as `K`, or the wrong-kind error naming what was wanted.
    pub(crate) fn get<K: Kind>(&self) -> Result<&K> {
        K::of(self).ok_or_else(|| self.wrong_kind(K::WANTED))
    }

    fn kind(&self) -> &'static str {
        match self {
            Handle::Unet(_) => "UNet session",
            Handle::Sam2(_) => "SAM2 session",
            Handle::Video(_) => "SAM2 video session",
            Handle::Track(_) => "track",
            Handle::Control(_) => "call control",
            Handle::Reference(_) => "reference",
        }
    }

    pub(crate) fn wrong_kind(&self, wanted: &str) -> Error {
        let hint = match self {
            Handle::Unet(_) => "use seg_run_unet",
            Handle::Sam2(_) => "use seg_run_sam2_points",
            Handle::Video(_) => "create a track from it with seg_track_create",
            Handle::Track(_) => "use the seg_track_* functions; release it with seg_track_free",
            Handle::Control(_) => "pass it as the control of a long call; release it with seg_control_free",
            Handle::Reference(_) => "use the seg_reference_* functions; release it with seg_reference_free",
        };
        Error::new(ErrorKind::WrongSessionKind, format!("this is a {}, not {wanted}: {hint}", self.kind()))
    }
}

struct Registry {
    live: Mutex<HashMap<usize, Arc<Handle>>>,
    key: RandomState,
    counter: AtomicU64,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry { live: Mutex::default(), key: RandomState::new(), counter: AtomicU64::new(1) })
}

impl Registry {
    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Arc<Handle>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new id: never 0, never one in use, never one handed out before (the counter only grows).
    fn new_id(&self, live: &HashMap<usize, Arc<Handle>>) -> usize {
        loop {
            let n = self.counter.fetch_add(1, Ordering::Relaxed);
            let id = self.key.hash_one(n) as usize;
            if id != 0 && !live.contains_key(&id) {
                return id;
            }
        }
    }
}

/// Files a new session and returns its handle. The "created" message is sent before the handle is
/// live, so a log callback cannot free it before the host has it.
pub(crate) fn register<P: Opaque>(handle: Handle) -> *mut P {
    let r = registry();
    let id = r.new_id(&r.live());
    let provider = match &handle {
        Handle::Unet(u) => Some(u.provider()),
        Handle::Sam2(s) => Some(s.provider()),
        Handle::Video(v) => Some(v.provider()),
        Handle::Track(_) | Handle::Control(_) | Handle::Reference(_) => None,
    };
    // A call control is a flag and a callback, made per job: not worth a line in a host's log (ABI 1
    // has no debug level to send it at).
    if !matches!(handle, Handle::Control(_)) {
        let provider = provider.map(|p| format!("; execution provider in use: {}", p.in_use)).unwrap_or_default();
        crate::log::emit(LogLevel::Info, &format!("{} {id:#x} created{provider}", handle.kind()));
    }
    r.live().insert(id, Arc::new(handle));
    id as *mut P
}

/// The live handle `handle` names (any of the three C types: one id space; errors use its noun).
pub(crate) fn lookup<P: Opaque>(handle: *const P) -> Result<Arc<Handle>> {
    if handle.is_null() {
        return Err(Error::new(ErrorKind::InvalidHandle, format!("{} handle is NULL", P::NOUN)));
    }
    registry().live().get(&(handle as usize)).cloned().ok_or_else(|| {
        Error::new(ErrorKind::InvalidHandle, format!("{handle:p} is not a live segrt {} (already freed, or never created)", P::NOUN))
    })
}

/// Releases a handle of the kinds `accepts` allows; any other live handle is left alone (a track
/// passed to `seg_free`, a session to `seg_track_free`) and reported.
pub(crate) fn unregister<P: Opaque>(handle: *const P, accepts: fn(&Handle) -> bool, wanted: &str) -> Result<Arc<Handle>> {
    let mut live = registry().live();
    let id = handle as usize;
    match live.get(&id) {
        None => {
            Err(Error::new(ErrorKind::InvalidHandle, format!("{handle:p} is not a live segrt {} (double free, or never created)", P::NOUN)))
        }
        Some(h) if !accepts(h) => Err(h.wrong_kind(wanted)),
        Some(_) => Ok(live.remove(&id).expect("checked above")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_spread_unique_and_never_zero() {
        let r = registry();
        let empty = HashMap::new();
        let ids: Vec<usize> = (0..1000).map(|_| r.new_id(&empty)).collect();
        let unique: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        assert!(ids.iter().all(|id| *id != 0));
        // Neighbouring ids are far apart: no small step from one reaches another.
        let mut sorted = ids.clone();
        sorted.sort();
        let closest = sorted.windows(2).map(|p| p[1] - p[0]).min().unwrap();
        assert!(closest > 1 << 20, "two ids only {closest} apart");
    }
}
