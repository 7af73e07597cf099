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

use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::sam2::Sam2Segmenter;
use crate::unet::UnetSegmenter;

use super::types::SegSession;

/// What a handle refers to.
pub(crate) enum Handle {
    Unet(Box<UnetSegmenter>),
    Sam2(Box<Sam2Segmenter>),
}

impl Handle {
    pub(crate) fn unet(&self) -> Result<&UnetSegmenter> {
        match self {
            Handle::Unet(u) => Ok(u),
            Handle::Sam2(_) => Err(Error::new(ErrorKind::WrongSessionKind, "this is a SAM2 session; use seg_run_sam2_points")),
        }
    }
    pub(crate) fn sam2(&self) -> Result<&Sam2Segmenter> {
        match self {
            Handle::Sam2(s) => Ok(s),
            Handle::Unet(_) => Err(Error::new(ErrorKind::WrongSessionKind, "this is a UNet session; use seg_run_unet")),
        }
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
    let (kind, provider) = match &handle {
        Handle::Unet(u) => ("UNet", u.provider().in_use.clone()),
        Handle::Sam2(s) => ("SAM2", s.provider().in_use.clone()),
    };
    crate::log::emit(LogLevel::Info, &format!("{kind} session {id:#x} created; execution provider in use: {provider}"));
    r.live().insert(id, Arc::new(handle));
    id as *mut SegSession
}

pub(crate) fn lookup(session: *const SegSession) -> Result<Arc<Handle>> {
    if session.is_null() {
        return Err(Error::new(ErrorKind::InvalidHandle, "session handle is NULL"));
    }
    registry().live().get(&(session as usize)).cloned().ok_or_else(|| {
        Error::new(ErrorKind::InvalidHandle, format!("{session:p} is not a live segrt session (already freed, or never created)"))
    })
}

pub(crate) fn unregister(session: *const SegSession) -> Result<Arc<Handle>> {
    registry().live().remove(&(session as usize)).ok_or_else(|| {
        Error::new(ErrorKind::InvalidHandle, format!("{session:p} is not a live segrt session (double free, or never created)"))
    })
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
