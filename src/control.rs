//! Cancellation and progress of long calls.
//!
//! A [`CallControl`] is shared between the thread running a call and any thread that wants it to
//! stop. Cancelling sets a flag that segrt's own loops check between steps (tiles, prompt batches,
//! model runs) and terminates the ONNX Runtime runs in flight (their run options' terminate flag),
//! so a call returns within about one kernel's time. A progress callback, called on the calling
//! thread between steps, may ask to stop too.
//!
//! A call runs under one control: the entry point sets it for its thread with [`scope`], and the
//! pipelines reach it through [`checkpoint`], [`progress`] and [`run_options`] without taking it
//! as a parameter (their signatures stay those of a call that cannot be cancelled).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use ort::session::RunOptions;

use crate::error::{Error, ErrorKind, Result};

/// What a long call is doing when it reports progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// A SAM2 image encoder run (0 at its start, 1 at its end).
    Encode,
    /// SAM2 segment-everything's prompt batches (the fraction of batches done; 1 when all are).
    Prompts,
    /// A tiled UNet's tiles (the fraction of tiles done; 1 when all are).
    Tiles,
    /// A UNet run on the whole image (0 at its start, 1 at its end).
    Run,
    /// A tracking call's model runs (each: 0 at its start, 1 at its end).
    Frames,
    /// A propagation through a track's frames (the fraction of its frames done; 1 when all are).
    Propagation,
}

/// Called with the stage and the fraction done (0..=1); returns `false` to stop the call.
pub type ProgressFn = Arc<dyn Fn(Stage, f32) -> bool + Send + Sync>;

/// Cancellation and progress for calls, shareable between threads.
#[derive(Default)]
pub struct CallControl {
    cancelled: AtomicBool,
    /// The ONNX Runtime runs in flight under this control.
    runs: Mutex<Vec<Weak<ControlledRun>>>,
    progress: Mutex<Option<ProgressFn>>,
}

impl CallControl {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stops every call running under this control, and every later one until [`reset`](Self::reset).
    /// Any thread, any time.
    pub fn cancel(&self) {
        let runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        // Set under the lock: a run registered after this sees the flag (see `run_options`).
        self.cancelled.store(true, Ordering::SeqCst);
        for run in runs.iter().filter_map(Weak::upgrade) {
            run.terminate();
        }
    }

    /// Makes the control usable again after a cancellation.
    pub fn reset(&self) {
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        self.cancelled.store(false, Ordering::SeqCst);
        runs.retain(|r| r.strong_count() > 0);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Installs (or with `None` removes) the progress callback.
    pub fn set_progress(&self, progress: Option<ProgressFn>) {
        *self.progress.lock().unwrap_or_else(|p| p.into_inner()) = progress;
    }
}

/// One ONNX Runtime run under the call's controls: its run options, and whether a control
/// terminated it. A terminated run fails with ONNX Runtime's "terminate flag" error, which is the
/// call's cancellation whatever the control says by the time the run returns (it may have been
/// reset at once, as a host does before its next job).
pub struct ControlledRun {
    options: RunOptions,
    terminated: AtomicBool,
}

impl ControlledRun {
    pub fn options(&self) -> &RunOptions {
        &self.options
    }

    fn terminate(&self) {
        self.terminated.store(true, Ordering::SeqCst);
        // A failure here leaves that run to finish; segrt's own checks still stop the call.
        let _ = self.options.terminate();
    }

    /// True when a control terminated this run.
    pub fn was_terminated(&self) -> bool {
        self.terminated.load(Ordering::SeqCst)
    }
}

thread_local! {
    /// The controls the current call honours: the caller's, and any segrt adds (a newer image
    /// cancels an older image's encode). Empty: the call cannot be cancelled.
    static CURRENT: RefCell<Vec<Arc<CallControl>>> = const { RefCell::new(Vec::new()) };
}

/// Restores the thread's controls when a scope ends, even by a panic.
struct Restore(Vec<Arc<CallControl>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = std::mem::take(&mut self.0);
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

fn with_controls<R>(controls: Vec<Arc<CallControl>>, f: impl FnOnce() -> R) -> R {
    let previous = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), controls));
    let _restore = Restore(previous);
    f()
}

/// Runs the call `f` with `control` as the calling thread's control (none: `f` cannot be
/// cancelled), then restores the one before (a log callback may call segrt from inside a call). A
/// control already cancelled refuses the call before it starts, whatever it would have done
/// (served from a cache, say): "cancelled until reset" holds for every call given it.
pub fn scope<T>(control: Option<Arc<CallControl>>, f: impl FnOnce() -> Result<T>) -> Result<T> {
    with_controls(control.into_iter().collect(), || checkpoint().and_then(|()| f()))
}

/// Runs `f` under the current controls and `extra` too: cancelling either stops it.
pub fn also<R>(extra: Arc<CallControl>, f: impl FnOnce() -> R) -> R {
    let mut controls = CURRENT.with(|c| c.borrow().clone());
    controls.push(extra);
    with_controls(controls, f)
}

fn current() -> Vec<Arc<CallControl>> {
    CURRENT.with(|c| c.borrow().clone())
}

fn any_cancelled() -> bool {
    CURRENT.with(|c| c.borrow().iter().any(|c| c.is_cancelled()))
}

/// True when the current call runs under a control (it may be cancelled).
pub fn is_active() -> bool {
    CURRENT.with(|c| !c.borrow().is_empty())
}

/// The error of a cancelled call.
pub fn cancelled() -> Error {
    Error::new(ErrorKind::Cancelled, "the call was cancelled")
}

/// `Err(Cancelled)` when a control of the current call was cancelled.
pub fn checkpoint() -> Result<()> {
    if any_cancelled() {
        return Err(cancelled());
    }
    Ok(())
}

/// Reports progress to the current call's callback (on this thread); a callback returning `false`
/// cancels its control. Then the same check as [`checkpoint`].
pub fn progress(stage: Stage, fraction: f32) -> Result<()> {
    checkpoint()?;
    for control in current() {
        let callback = control.progress.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(callback) = callback {
            // A panic in a host's callback cannot unwind through C; the boundary's guard catches ours.
            if !callback(stage, fraction.clamp(0.0, 1.0)) {
                control.cancel();
            }
        }
    }
    checkpoint()
}

/// Run options for one ONNX Runtime run of the current call, registered with its controls so that
/// cancelling any of them terminates the run; `configure` sets what the run needs besides. `None`
/// when the call has no control: run without options. Keep the `Arc` until the run returns, and
/// give it to [`run_error`] if the run fails.
pub fn run_options(configure: impl FnOnce(&mut RunOptions) -> ort::Result<()>) -> Result<Option<Arc<ControlledRun>>> {
    let controls = current();
    if controls.is_empty() {
        return Ok(None);
    }
    let internal = |e: ort::Error| Error::internal(format!("cannot create run options: {e}"));
    let mut options = RunOptions::new().map_err(internal)?;
    configure(&mut options).map_err(internal)?;
    let run = Arc::new(ControlledRun { options, terminated: AtomicBool::new(false) });
    for control in controls {
        // Checked under the lock `cancel` takes: a control cancelled later terminates this run.
        let mut runs = control.runs.lock().unwrap_or_else(|p| p.into_inner());
        if control.is_cancelled() {
            return Err(cancelled());
        }
        runs.retain(|r| r.strong_count() > 0);
        runs.push(Arc::downgrade(&run));
    }
    Ok(Some(run))
}

/// The error of a failed ONNX Runtime run: `Cancelled` when a control terminated it (or a control
/// of the call is cancelled now), else the engine's message.
pub fn run_error(e: &ort::Error, what: &str, run: Option<&ControlledRun>) -> Error {
    if run.is_some_and(ControlledRun::was_terminated) || any_cancelled() {
        return cancelled();
    }
    crate::engine::run_error(e, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_control_stops_its_scope_only() {
        let control = Arc::new(CallControl::new());
        let ran = scope(Some(control.clone()), || {
            assert!(checkpoint().is_ok());
            control.cancel();
            assert_eq!(checkpoint().unwrap_err().kind, ErrorKind::Cancelled);
            // A nested call without a control (a log callback calling segrt) is not cancelled.
            scope(None, checkpoint).unwrap();
            assert!(checkpoint().is_err());
            Ok(())
        });
        assert!(ran.is_ok());
        assert!(checkpoint().is_ok(), "outside the scope nothing is cancelled");
        // A cancelled control refuses a call before it starts: its body never runs.
        let mut entered = false;
        let refused = scope(Some(control.clone()), || {
            entered = true;
            Ok(())
        });
        assert_eq!(refused.unwrap_err().kind, ErrorKind::Cancelled);
        assert!(!entered, "a call under a cancelled control ran");
        control.reset();
        scope(Some(control), checkpoint).unwrap();
    }

    #[test]
    fn a_terminated_run_is_a_cancellation_even_after_a_reset() {
        crate::runtime::init(None).expect("ONNX Runtime (scripts/setup.sh fetches it)");
        let control = Arc::new(CallControl::new());
        let e = ort::Error::new("Exiting due to terminate flag being set to true.");
        scope(Some(control.clone()), || {
            let run = run_options(|_| Ok(()))?.expect("a call under a control gets run options");
            assert_eq!(run_error(&e, "run", Some(&run)).kind, ErrorKind::InferenceFailed, "nothing was cancelled");
            control.cancel();
            control.reset();
            // The docs' sequence: cancel, then reset at once, before the terminated run returns.
            assert!(run.was_terminated());
            assert_eq!(run_error(&e, "run", Some(&run)).kind, ErrorKind::Cancelled);
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn an_added_control_stops_the_call_as_the_callers_does() {
        let caller = Arc::new(CallControl::new());
        let extra = Arc::new(CallControl::new());
        scope(Some(caller.clone()), || {
            also(extra.clone(), || {
                assert!(checkpoint().is_ok());
                extra.cancel();
                assert_eq!(checkpoint().unwrap_err().kind, ErrorKind::Cancelled);
            });
            assert!(checkpoint().is_ok(), "the extra control ends with its scope");
            Ok(())
        })
        .unwrap();
        scope(None, || {
            also(extra.clone(), || assert!(is_active() && checkpoint().is_err()));
            Ok(())
        })
        .unwrap();
        assert!(!is_active());
    }

    #[test]
    fn a_progress_callback_sees_the_stages_and_can_stop() {
        let control = Arc::new(CallControl::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        control.set_progress(Some(Arc::new(move |stage, f| {
            s.lock().unwrap().push((stage, f));
            f < 0.5
        })));
        scope(Some(control.clone()), || {
            assert!(progress(Stage::Tiles, 0.25).is_ok());
            assert_eq!(progress(Stage::Tiles, 0.75).unwrap_err().kind, ErrorKind::Cancelled);
            Ok(())
        })
        .unwrap();
        assert!(control.is_cancelled());
        assert_eq!(*seen.lock().unwrap(), vec![(Stage::Tiles, 0.25), (Stage::Tiles, 0.75)]);
    }
}
