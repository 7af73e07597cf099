//! Which ONNX Runtime releases segrt accepts, and what each one lacks.
//!
//! segrt compiles `ort` at C API level 21 (Cargo.toml), so every call ort makes exists in ONNX
//! Runtime 1.21 and later; ONNX Runtime's C API level is its minor version, and its function table
//! only ever grows at its end. segrt itself reads the node placement through level-24 slots
//! (`Session_GetEpGraphAssignmentInfo`, engine/providers/placement.rs): 1.24 is the floor. The newest release
//! tested is the ceiling; a newer 1.x is refused until it has been run through the parity tests, so a
//! station never runs on a release nobody tried.
//!
//! Every provider path has a build in the range: CPU 1.24.4 … 1.31.1, OpenVINO 1.24.1 (its last),
//! DirectML 1.24.4 (its last), CUDA 12 1.24.4 (the last with Pascal/Volta kernels), CUDA 13 1.31.1.

use std::fmt;

/// An ONNX Runtime release number as `GetVersionString` reports it ("1.24.4").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OrtRelease {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl OrtRelease {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        OrtRelease { major, minor, patch }
    }

    /// "1.24.4", "1.24" (patch 0), or a version with a pre-release or build suffix ("1.25.0-dev",
    /// "1.24.1+openvino"): the numbers before the suffix. None for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let core = text.trim().split(['-', '+', ' ']).next()?;
        let mut parts = core.split('.');
        let number = |p: Option<&str>| p.filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).and_then(|s| s.parse().ok());
        let major = number(parts.next())?;
        let minor = number(parts.next())?;
        let patch = match parts.next() {
            None => 0,
            p => number(p)?,
        };
        parts.next().is_none().then_some(OrtRelease { major, minor, patch })
    }

    /// ONNX Runtime's C API level for this release (`ORT_API_VERSION` of its header): the minor version.
    pub fn api_level(self) -> u32 {
        self.minor
    }
}

impl fmt::Display for OrtRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The oldest release segrt loads: its node-placement report reads level-24 functions.
pub const OLDEST: OrtRelease = OrtRelease::new(1, 24, 0);
/// The newest release series tested (any patch release of it is accepted).
pub const NEWEST: OrtRelease = OrtRelease::new(1, 31, 0);

/// Something segrt does that needs a newer release than the floor; on an older one it degrades
/// with the reason in the session info instead of failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    pub name: &'static str,
    pub since: OrtRelease,
    /// What happens without it, for the session info.
    pub without: &'static str,
}

impl Capability {
    /// "name: what happens instead (needs ONNX Runtime x.y)", for the session info.
    pub fn describe(&self) -> String {
        format!("{}: {} (needs ONNX Runtime {}.{})", self.name, self.without, self.since.major, self.since.minor)
    }
}

/// ONNX Runtime's ConstantFolding optimizer as 1.28 fixed it. From 1.24.1 to 1.27 it folds a Reshape,
/// Squeeze or Flatten of a weight into a constant that points into the weight's buffer, which the same
/// pass then frees (microsoft/onnxruntime#29788, fixed by #29789): the model's outputs are NaN or wrong
/// in some sessions and right in others. Seen here in every SAM2 hiera image encoder (the tracker's
/// went wrong in about half of the processes on 1.24.4, never with the optimizer off).
pub const SOUND_CONSTANT_FOLDING: Capability = Capability {
    name: "constant folding",
    since: OrtRelease::new(1, 28, 0),
    without: "ONNX Runtime's ConstantFolding optimizer is off in every session, since this release's can leave a \
              folded weight pointing at freed memory (NaN or wrong masks); constants a graph computes are computed \
              at every run, and OpenVINO cannot compile SAM2's hiera image encoders",
};

/// Every capability with a minimum above the floor. Kept as a table so a feature that needs, say,
/// 1.27 degrades on 1.24 instead of raising the floor; the session info lists what the loaded
/// release lacks.
pub const CAPABILITIES: &[Capability] = &[
    Capability {
        name: "node placement report",
        since: OrtRelease::new(1, 24, 0),
        without: "where ONNX Runtime placed the nodes is not reported",
    },
    SOUND_CONSTANT_FOLDING,
];

/// Whether segrt loads `version`, and what it then lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Accepted { release: OrtRelease, missing: Vec<Capability> },
    Refused(String),
}

/// The decision for the library that reported `version`.
pub fn judge(version: &str) -> Verdict {
    let Some(release) = OrtRelease::parse(version) else {
        return Verdict::Refused(format!("it reports version '{version}', which is not an ONNX Runtime release number"));
    };
    let range = range();
    if release.major != OLDEST.major || release < OLDEST {
        return Verdict::Refused(format!(
            "it is ONNX Runtime {release}, segrt needs {range} (the oldest has the functions segrt's node-placement report calls)"
        ));
    }
    if (release.major, release.minor) > (NEWEST.major, NEWEST.minor) {
        return Verdict::Refused(format!("it is ONNX Runtime {release}, newer than segrt was tested with; segrt needs {range}"));
    }
    Verdict::Accepted { release, missing: CAPABILITIES.iter().filter(|c| release < c.since).copied().collect() }
}

/// The releases segrt loads, in words: "1.24 to 1.31".
pub fn range() -> String {
    format!("{}.{} to {}.{}", OLDEST.major, OLDEST.minor, NEWEST.major, NEWEST.minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_numbers_parse_as_onnx_runtime_writes_them() {
        assert_eq!(OrtRelease::parse("1.24.4"), Some(OrtRelease::new(1, 24, 4)));
        assert_eq!(OrtRelease::parse("1.31.1\n"), Some(OrtRelease::new(1, 31, 1)));
        assert_eq!(OrtRelease::parse("1.24"), Some(OrtRelease::new(1, 24, 0)));
        assert_eq!(OrtRelease::parse("1.25.0-dev"), Some(OrtRelease::new(1, 25, 0)));
        for bad in ["", "1", "1.x.2", "1.24.4.1", "v1.24.4", "1..4", "1.24.-1"] {
            assert_eq!(OrtRelease::parse(bad), None, "{bad:?}");
        }
        assert_eq!(OrtRelease::new(1, 24, 4).api_level(), 24);
        assert!(OrtRelease::new(1, 9, 0) < OrtRelease::new(1, 24, 0), "numeric, not text order");
    }

    #[test]
    fn one_24_to_one_31_are_accepted_and_nothing_else() {
        for ok in ["1.24.0", "1.24.1", "1.24.4", "1.27.2", "1.31.1", "1.31.9"] {
            assert!(matches!(judge(ok), Verdict::Accepted { .. }), "{ok}: {:?}", judge(ok));
        }
        for (bad, says) in [
            ("1.23.2", "segrt needs 1.24 to 1.31"),
            ("1.9.0", "segrt needs 1.24 to 1.31"),
            ("2.24.0", "segrt needs 1.24 to 1.31"),
            ("1.32.0", "newer than segrt was tested with"),
            ("banana", "not an ONNX Runtime release number"),
        ] {
            match judge(bad) {
                Verdict::Refused(reason) => assert!(reason.contains(says), "{bad}: {reason}"),
                other => panic!("{bad} accepted: {other:?}"),
            }
        }
    }

    #[test]
    fn releases_before_1_28_lack_sound_constant_folding_and_nothing_else() {
        for old in ["1.24.1", "1.24.4", "1.27.0"] {
            let Verdict::Accepted { missing, .. } = judge(old) else { panic!("{old} refused") };
            assert_eq!(missing, vec![SOUND_CONSTANT_FOLDING], "{old}");
        }
        for new in ["1.28.0", "1.31.1"] {
            assert_eq!(judge(new), Verdict::Accepted { release: OrtRelease::parse(new).unwrap(), missing: vec![] });
        }
        assert!(SOUND_CONSTANT_FOLDING.describe().contains("(needs ONNX Runtime 1.28)"));
        assert!(CAPABILITIES.iter().all(|c| c.since >= OLDEST), "a capability below the floor is no capability");
    }
}
