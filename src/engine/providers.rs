//! What a session asked for and got: the execution provider in use, and why it differs from the
//! one requested. (Which providers this machine offers is `probe`'s.)

use serde::Serialize;

/// Which provider a session asked for, which one it got, and why they differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderReport {
    pub requested: String,
    pub in_use: String,
    pub fallback_reason: Option<String>,
}
