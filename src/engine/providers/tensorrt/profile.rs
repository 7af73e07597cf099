//! TensorRT shape profiles: for each model input with dynamic axes, the smallest, typical and
//! largest shape segrt will feed it. Given to ONNX Runtime's TensorRT provider when the session is
//! created, they let TensorRT build one engine then (cached with `trt_cache_dir`) instead of one at
//! the first run and again whenever a run's shape falls outside the shapes it has seen.
//!
//! A profile binds: TensorRT refuses a run whose shape lies outside it. So a profile is derived only
//! where segrt decides every dynamic axis itself (tile size and tile batch, the SAM2 input size,
//! prompt batches and points per prompt), runs are checked against it before ONNX Runtime sees them
//! (`check_run`), and a model with an axis segrt does not decide gets none (TensorRT then builds
//! engines as runs come, as without profiles).

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use crate::engine::io::TensorInfo;

/// The shapes one input is given: `min`, `opt` (what TensorRT tunes for) and `max`, axis by axis.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct InputShapes {
    pub name: String,
    pub min: Vec<i64>,
    pub opt: Vec<i64>,
    pub max: Vec<i64>,
}

/// One optimisation profile: the inputs with dynamic axes (fixed inputs need none).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ShapeProfile {
    pub inputs: Vec<InputShapes>,
}

/// What segrt derived for one model.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Derived {
    /// Nothing was derived (a model segrt does not derive profiles for, or profiles are not wanted).
    #[default]
    Nothing,
    /// Every input has a fixed shape: TensorRT needs no profile and builds at session creation.
    NoDynamicAxes,
    Profile(Arc<ShapeProfile>),
    /// Why a model with dynamic axes gets no profile.
    Undecided(String),
}

impl Derived {
    pub fn new(derived: Result<Option<ShapeProfile>, String>) -> Self {
        match derived {
            Ok(Some(profile)) => Derived::Profile(Arc::new(profile)),
            Ok(None) => Derived::NoDynamicAxes,
            Err(why) => Derived::Undecided(why),
        }
    }

    pub fn profile(&self) -> Option<&Arc<ShapeProfile>> {
        match self {
            Derived::Profile(p) => Some(p),
            _ => None,
        }
    }

    /// For the session info: the profile given, or why there is none.
    pub fn describe(&self) -> String {
        match self {
            Derived::Nothing => "none: segrt derives no profile for this model; TensorRT builds engines as runs come".into(),
            Derived::NoDynamicAxes => "none needed: every input has a fixed shape".into(),
            Derived::Profile(p) => p.describe(),
            Derived::Undecided(why) => format!("none: {why}; TensorRT builds engines as runs come"),
        }
    }
}

/// The `(min, opt, max)` of one dynamic axis.
pub type AxisRange = (i64, i64, i64);

fn dims(shape: &[i64]) -> String {
    shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

impl ShapeProfile {
    /// The profile of a model whose inputs are `declared`: `range(input, axis)` gives each dynamic
    /// axis its range. `Ok(None)`: no input has a dynamic axis (TensorRT needs no profile). `Err`
    /// says which axis segrt does not decide (then no profile may be given: TensorRT wants every
    /// dynamic input in it).
    pub fn derive(declared: &[TensorInfo], range: impl Fn(&TensorInfo, usize) -> Option<AxisRange>) -> Result<Option<Self>, String> {
        let mut inputs = Vec::new();
        for input in declared.iter().filter(|t| t.shape.iter().any(|d| *d < 0)) {
            // ONNX Runtime's option text separates inputs with ',' and a name from its shape with ':'.
            if input.name.contains([',', ':']) {
                return Err(format!("input '{}' has a ',' or ':' in its name, which TensorRT's profile options cannot carry", input.name));
            }
            let mut shapes = InputShapes { name: input.name.clone(), min: vec![], opt: vec![], max: vec![] };
            for (axis, &d) in input.shape.iter().enumerate() {
                let (min, opt, max) = if d >= 0 {
                    (d, d, d)
                } else {
                    range(input, axis)
                        .ok_or_else(|| format!("axis {axis} of input '{}' is dynamic and its size is not set by segrt", input.name))?
                };
                debug_assert!(0 <= min && min <= opt && opt <= max, "{}: {min} {opt} {max}", input.name);
                shapes.min.push(min);
                shapes.opt.push(opt);
                shapes.max.push(max);
            }
            inputs.push(shapes);
        }
        Ok((!inputs.is_empty()).then_some(ShapeProfile { inputs }))
    }

    /// ONNX Runtime's TensorRT provider options for this profile.
    pub fn provider_options(&self) -> Vec<(&'static str, String)> {
        let text = |pick: fn(&InputShapes) -> &Vec<i64>| {
            self.inputs.iter().map(|i| format!("{}:{}", i.name, dims(pick(i)))).collect::<Vec<_>>().join(",")
        };
        vec![
            ("trt_profile_min_shapes", text(|i| &i.min)),
            ("trt_profile_opt_shapes", text(|i| &i.opt)),
            ("trt_profile_max_shapes", text(|i| &i.max)),
        ]
    }

    /// The profile in a line, an input per entry with each axis as "min..max" where it varies:
    /// "point_coords 1..64x1..35x2, mask_input 1..64x1x256x256".
    pub fn describe(&self) -> String {
        let axis = |i: &InputShapes, a: usize| {
            if i.min[a] == i.max[a] {
                i.min[a].to_string()
            } else {
                format!("{}..{}", i.min[a], i.max[a])
            }
        };
        let input = |i: &InputShapes| format!("{} {}", i.name, (0..i.min.len()).map(|a| axis(i, a)).collect::<Vec<_>>().join("x"));
        self.inputs.iter().map(input).collect::<Vec<_>>().join(", ")
    }

    /// `Err` with the reason when a run's input `name` of `shape` lies outside the profile.
    pub fn admits(&self, name: &str, shape: &[i64]) -> Result<(), String> {
        let Some(i) = self.inputs.iter().find(|i| i.name == name) else { return Ok(()) };
        let inside = shape.len() == i.min.len() && (0..shape.len()).all(|a| i.min[a] <= shape[a] && shape[a] <= i.max[a]);
        if inside {
            Ok(())
        } else {
            Err(format!("input '{name}' of shape [{}] lies outside its TensorRT shape profile {}", dims(shape), self.describe()))
        }
    }
}

/// Whether segrt acts as if every derived profile were given to TensorRT, whatever the provider:
/// runs are checked against their profiles and prompt limits apply. Set by tests
/// (`SEGRT_CHECK_TRT_PROFILES=1`) to prove on the CPU that segrt never feeds a shape outside the
/// profiles it derives.
pub fn checked_everywhere() -> bool {
    static CHECK: OnceLock<bool> = OnceLock::new();
    *CHECK.get_or_init(|| std::env::var_os("SEGRT_CHECK_TRT_PROFILES").is_some_and(|v| v == "1"))
}

thread_local! {
    /// The profile of the session running on this thread, while a pool hands it out.
    static ACTIVE: RefCell<Option<Arc<ShapeProfile>>> = const { RefCell::new(None) };
}

/// Makes `profile` the one runs on this thread are checked against until the guard drops.
pub fn activate(profile: Option<Arc<ShapeProfile>>) -> impl Drop {
    struct Restore(Option<Arc<ShapeProfile>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ACTIVE.with(|a| *a.borrow_mut() = self.0.take());
        }
    }
    Restore(ACTIVE.with(|a| std::mem::replace(&mut *a.borrow_mut(), profile)))
}

/// Checks a run's named inputs against the active profile (none: nothing to check).
pub fn check_run<'a>(mut inputs: impl Iterator<Item = (&'a str, Vec<i64>)>) -> Result<(), String> {
    ACTIVE.with(|a| match &*a.borrow() {
        Some(profile) => inputs.try_for_each(|(name, shape)| profile.admits(name, &shape)),
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, shape: &[i64]) -> TensorInfo {
        TensorInfo::new(name, "f32", shape)
    }

    #[test]
    fn dynamic_axes_take_their_ranges_and_fixed_inputs_are_left_out() {
        let declared = [t("image", &[-1, 3, -1, -1]), t("scale", &[2])];
        let p = ShapeProfile::derive(&declared, |_, axis| Some(if axis == 0 { (1, 4, 4) } else { (512, 512, 512) })).unwrap().unwrap();
        assert_eq!(
            p.provider_options(),
            [
                ("trt_profile_min_shapes", "image:1x3x512x512".to_string()),
                ("trt_profile_opt_shapes", "image:4x3x512x512".to_string()),
                ("trt_profile_max_shapes", "image:4x3x512x512".to_string()),
            ]
        );
        assert_eq!(p.describe(), "image 1..4x3x512x512");
        assert!(p.admits("image", &[2, 3, 512, 512]).is_ok());
        assert!(p.admits("image", &[5, 3, 512, 512]).unwrap_err().contains("outside"));
        assert!(p.admits("image", &[1, 3, 512, 480]).is_err());
        assert!(p.admits("scale", &[2]).is_ok(), "inputs without dynamic axes are not checked");
    }

    #[test]
    fn an_axis_segrt_does_not_decide_means_no_profile() {
        let declared = [t("image", &[1, 3, -1, -1])];
        let err = ShapeProfile::derive(&declared, |_, axis| (axis == 2).then_some((64, 64, 64))).unwrap_err();
        assert!(err.contains("axis 3 of input 'image'"), "{err}");
        assert_eq!(ShapeProfile::derive(&[t("image", &[1, 3, 64, 64])], |_, _| None), Ok(None));
        assert!(ShapeProfile::derive(&[t("a:b", &[-1])], |_, _| Some((1, 1, 1))).is_err());
    }

    #[test]
    fn runs_are_checked_only_while_a_profile_is_active() {
        let p = ShapeProfile::derive(&[t("x", &[-1])], |_, _| Some((1, 2, 2))).unwrap().unwrap();
        let big = || [("x", vec![3])].into_iter();
        assert!(check_run(big()).is_ok());
        {
            let _active = activate(Some(Arc::new(p)));
            assert!(check_run(big()).is_err());
            assert!(check_run([("x", vec![2])].into_iter()).is_ok());
        }
        assert!(check_run(big()).is_ok());
    }
}
