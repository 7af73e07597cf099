//! A track's calls one at a time: the lock per track, refusing a call on a track from inside its own
//! call (a callback on the same thread would wait for itself), and putting a track back as it was
//! when its call is cancelled.

use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result};
use crate::sam2::video::Tracker;

use super::enums::SegStatus;
use super::handles::{SegCallControl, SegTrack};
use super::prologue;

thread_local! {
    /// The tracks this thread holds locked: a call on one of them from inside its own callback
    /// (`seg_track_propagate`'s frame callback, a progress or log callback) would wait for itself.
    static HELD: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A track locked by this thread; unlocked (and forgotten) on drop.
pub(super) struct Locked<'a> {
    guard: MutexGuard<'a, Tracker>,
    key: usize,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Tracker;
    fn deref(&self) -> &Tracker {
        &self.guard
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Tracker {
        &mut self.guard
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        HELD.with(|h| h.borrow_mut().retain(|k| *k != self.key));
    }
}

/// Refuses a call on a track this thread is already inside (it would never return).
pub(super) fn refuse_reentry(m: &Mutex<Tracker>) -> Result<usize> {
    let key = m as *const Mutex<Tracker> as usize;
    if HELD.with(|h| h.borrow().contains(&key)) {
        return Err(Error::invalid(
            "this track is running a call on this thread (called from its own frame, progress or log callback): \
             call it after seg_track_propagate returns",
        ));
    }
    Ok(key)
}

/// The prologue of a track export that runs no model (`prologue::on`): `call` gets the track locked
/// by this thread.
pub(super) fn on_track(track: *mut SegTrack, call: impl FnOnce(&mut Tracker) -> Result<()>) -> SegStatus {
    prologue::on(track, |t: &Mutex<Tracker>| {
        let mut tracker = lock(t)?;
        call(&mut tracker)
    })
}

/// The prologue of a track export that may run models (`prologue::on_controlled`): `control` covers
/// all of `call`, which gets the track locked by this thread.
pub(super) fn on_track_controlled(
    track: *mut SegTrack,
    control: *mut SegCallControl,
    call: impl FnOnce(&mut Tracker) -> Result<()>,
) -> SegStatus {
    prologue::on_controlled(track, control, |t: &Mutex<Tracker>| {
        let mut tracker = lock(t)?;
        call(&mut tracker)
    })
}

pub(super) fn lock(m: &Mutex<Tracker>) -> Result<Locked<'_>> {
    let key = refuse_reentry(m)?;
    let guard = m.lock().map_err(|_| {
        Error::new(
            ErrorKind::Internal,
            "an earlier call on this track failed inside segrt and may have left it inconsistent: call seg_track_reset",
        )
    })?;
    HELD.with(|h| h.borrow_mut().push(key));
    Ok(Locked { guard, key })
}

/// Runs `call` on the tracker; when the call is cancelled the track is put back as it was before
/// (a copy is kept only for calls under a control: the copy is cheap, its frames and outputs shared).
pub(super) fn as_before_if_cancelled<T>(tracker: &mut Tracker, call: impl FnOnce(&mut Tracker) -> Result<T>) -> Result<T> {
    let before = crate::control::is_active().then(|| tracker.clone());
    let result = call(tracker);
    if let (Err(e), Some(before)) = (&result, before) {
        if e.kind == ErrorKind::Cancelled {
            *tracker = before;
        }
    }
    result
}
