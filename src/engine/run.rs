//! Running a session: under the call's controls (cancellation) and the pool's arena policy.

use ort::session::{Session, SessionInputs, SessionOutputs};
use ort::value::ValueType;

use super::trt_profile;
use crate::control;
use crate::error::{Error, Result};

/// Runs `session` on `inputs` and hands its outputs to `read` (they borrow the run's options, so they
/// do not outlive this call). Under a call control the run can be terminated from another thread.
/// With `release_arena`, once the outputs are read and dropped, the shared arena's blocks no tensor
/// uses go back to the system (`arena::release_unused`), whether the run succeeded or not.
/// `what` names the run in errors ("SAM2 encoder run").
pub fn run<'i, 'v: 'i, const N: usize, T>(
    session: &mut Session,
    inputs: impl Into<SessionInputs<'i, 'v, N>>,
    release_arena: bool,
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
    let result = control::run_options(|_| Ok(())).and_then(|controlled| {
        let outputs = match &controlled {
            Some(run) => session.run_with_options(inputs, run.options()),
            None => session.run(inputs),
        }
        .map_err(|e| control::run_error(&e, what, controlled.as_deref()))?;
        read(&outputs)
    });
    if release_arena {
        super::arena::release_unused();
    }
    result
}
