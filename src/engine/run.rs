//! Running a session: under the call's controls (cancellation) and the pool's arena policy.

use ort::session::{Session, SessionInputs, SessionOutputs};
use ort::value::ValueType;

use super::idle_release;
use super::providers::tensorrt::profile as trt_profile;
use crate::control;
use crate::error::{Error, Result};

/// When a pool's runs give the shared arena's unused blocks back (its `ArenaPolicy` applied to what
/// its runs are like).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArenaRelease {
    /// Kept for the next run, until the last handle goes.
    Never,
    /// Once the process has had no such run for a while (`idle_release`): back-to-back runs keep them.
    WhenIdle,
    /// Right after each run.
    AfterRun,
}

/// Runs `session` on `inputs` and hands its outputs to `read` (they borrow the run's options, so they
/// do not outlive this call). Under a call control the run can be terminated from another thread.
/// Once the outputs are read and dropped, whether the run succeeded or not, `release` applies: the
/// shared arena's blocks no tensor uses go back to the system now (`arena::release_unused`) or when
/// the process goes idle. The run counts as in flight meanwhile (the idle release waits for none).
/// `what` names the run in errors ("SAM2 encoder run").
pub fn run<'i, 'v: 'i, const N: usize, T>(
    session: &mut Session,
    inputs: impl Into<SessionInputs<'i, 'v, N>>,
    release: ArenaRelease,
    what: &str,
    read: impl FnOnce(&SessionOutputs<'_>) -> Result<T>,
) -> Result<T> {
    let inputs = inputs.into();
    if let SessionInputs::ValueMap(named) = &inputs {
        let shapes = named.iter().filter_map(|(name, value)| match value.dtype() {
            ValueType::Tensor { shape, .. } => Some((name.as_ref(), shape.to_vec())),
            _ => None,
        });
        // A shape outside the TensorRT profile would fail in TensorRT with its own words; segrt's
        // are clearer, and under tests this proves segrt feeds only what its profiles admit.
        trt_profile::check_run(shapes).map_err(|why| Error::internal(format!("{what}: {why}")))?;
    }
    let in_flight = idle_release::RunInFlight::begin();
    let result = control::run_options(|_| Ok(())).and_then(|controlled| {
        let outputs = match &controlled {
            Some(run) => session.run_with_options(inputs, run.options()),
            None => session.run(inputs),
        }
        .map_err(|e| control::run_error(&e, what, controlled.as_deref()))?;
        read(&outputs)
    });
    drop(in_flight);
    match release {
        ArenaRelease::Never => {}
        ArenaRelease::WhenIdle => idle_release::arm(),
        ArenaRelease::AfterRun => super::arena::release_unused(),
    }
    result
}
