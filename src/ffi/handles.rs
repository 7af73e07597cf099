//! The handle registry: handles are ids checked on every call, never addresses.
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
use std::sync::{Arc, Mutex, OnceLock};

use crate::control::CallControl;
use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::sam2::video::{Tracker, VideoModel};
use crate::sam2::Sam2Segmenter;
use crate::unet::UnetSegmenter;

use super::control::SegCallControl;
use super::session::SegSession;
use super::track_types::SegTrack;

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
}

impl Handle {
    pub(crate) fn unet(&self) -> Result<&UnetSegmenter> {
        match self {
            Handle::Unet(u) => Ok(u),
            _ => Err(self.wrong_kind("a UNet session (seg_create)")),
        }
    }
    pub(crate) fn sam2(&self) -> Result<&Sam2Segmenter> {
        match self {
            Handle::Sam2(s) => Ok(s),
            _ => Err(self.wrong_kind("a SAM2 image session (seg_create_sam2)")),
        }
    }
    pub(crate) fn video(&self) -> Result<&Arc<VideoModel>> {
        match self {
            Handle::Video(v) => Ok(v),
            _ => Err(self.wrong_kind("a SAM2 video session (seg_create_sam2_video)")),
        }
    }
    pub(crate) fn track(&self) -> Result<&Mutex<Tracker>> {
        match self {
            Handle::Track(t) => Ok(t),
            _ => Err(self.wrong_kind("a track (seg_track_create)")),
        }
    }

    pub(crate) fn control(&self) -> Result<&Arc<CallControl>> {
        match self {
            Handle::Control(c) => Ok(c),
            _ => Err(self.wrong_kind("a call control (seg_control_create)")),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Handle::Unet(_) => "UNet session",
            Handle::Sam2(_) => "SAM2 session",
            Handle::Video(_) => "SAM2 video session",
            Handle::Track(_) => "track",
            Handle::Control(_) => "call control",
        }
    }

    pub(crate) fn wrong_kind(&self, wanted: &str) -> Error {
        let hint = match self {
            Handle::Unet(_) => "use seg_run_unet",
            Handle::Sam2(_) => "use seg_run_sam2_points",
            Handle::Video(_) => "create a track from it with seg_track_create",
            Handle::Track(_) => "use the seg_track_* functions; release it with seg_track_free",
            Handle::Control(_) => "pass it as the control of a long call; release it with seg_control_free",
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
pub(crate) fn register(handle: Handle) -> *mut SegSession {
    let r = registry();
    let id = r.new_id(&r.live());
    let provider = match &handle {
        Handle::Unet(u) => Some(u.provider()),
        Handle::Sam2(s) => Some(s.provider()),
        Handle::Video(v) => Some(v.provider()),
        Handle::Track(_) | Handle::Control(_) => None,
    };
    // A call control is a flag and a callback, made per job: not worth a line in a host's log (ABI 1
    // has no debug level to send it at).
    if !matches!(handle, Handle::Control(_)) {
        let provider = provider.map(|p| format!("; execution provider in use: {}", p.in_use)).unwrap_or_default();
        crate::log::emit(LogLevel::Info, &format!("{} {id:#x} created{provider}", handle.kind()));
    }
    r.live().insert(id, Arc::new(handle));
    id as *mut SegSession
}

pub(crate) fn lookup(session: *const SegSession) -> Result<Arc<Handle>> {
    lookup_named(session, "session")
}

/// A track's handle (tracks and sessions share one id space; errors say "track").
pub(crate) fn lookup_track(track: *const SegTrack) -> Result<Arc<Handle>> {
    lookup_named(track.cast(), "track")
}

fn lookup_named(handle: *const SegSession, noun: &str) -> Result<Arc<Handle>> {
    if handle.is_null() {
        return Err(Error::new(ErrorKind::InvalidHandle, format!("{noun} handle is NULL")));
    }
    registry().live().get(&(handle as usize)).cloned().ok_or_else(|| {
        Error::new(ErrorKind::InvalidHandle, format!("{handle:p} is not a live segrt {noun} (already freed, or never created)"))
    })
}

/// Releases a handle of the kinds `accepts` allows; any other live handle is left alone (a track
/// passed to `seg_free`, a session to `seg_track_free`) and reported.
pub(crate) fn unregister(session: *const SegSession, accepts: fn(&Handle) -> bool, noun: &str, wanted: &str) -> Result<Arc<Handle>> {
    let mut live = registry().live();
    let id = session as usize;
    match live.get(&id) {
        None => {
            Err(Error::new(ErrorKind::InvalidHandle, format!("{session:p} is not a live segrt {noun} (double free, or never created)")))
        }
        Some(h) if !accepts(h) => Err(h.wrong_kind(wanted)),
        Some(_) => Ok(live.remove(&id).expect("checked above")),
    }
}

/// A call control's handle (controls share the id space too).
pub(crate) fn lookup_control(control: *const SegCallControl) -> Result<Arc<Handle>> {
    lookup_named(control.cast(), "call control")
}

/// A track handle as the registry sees it (tracks and sessions share one id space).
pub(crate) fn track_id(track: *const SegTrack) -> *const SegSession {
    track.cast()
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
