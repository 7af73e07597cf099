//! `SegStatus`: the status every fallible export returns, its values fixed (never reused), its
//! names, and the one status each library error kind becomes.

use crate::error::ErrorKind;

/// Status codes returned by every fallible C function.
///
/// Values are explicit and never reused: a code that is retired stays reserved.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegStatus {
    /// Success.
    SEG_OK = 0,
    /// An argument has a value the function cannot accept (see the message).
    SEG_INVALID_ARGUMENT = 1,
    /// A required pointer argument was NULL.
    SEG_NULL_POINTER = 2,
    /// The session handle is NULL, already freed, or was never a handle.
    SEG_INVALID_HANDLE = 3,
    /// A caller-owned output buffer is too small (the message says how big it must be).
    SEG_BUFFER_TOO_SMALL = 4,
    /// The image is larger than the pixel limit (`SegOptions::max_pixels`) or its byte size overflows.
    SEG_IMAGE_TOO_LARGE = 5,
    /// The pixel format value is unknown, or not allowed for this call.
    SEG_UNSUPPORTED_FORMAT = 6,
    /// The session is of another kind (e.g. a SAM2 session given to `seg_run_unet`).
    SEG_WRONG_SESSION_KIND = 7,
    /// Memory for the call could not be had: an allocation failed, or the call would need more than
    /// `SegOptions::max_memory_bytes` (the message gives the size asked for). The session stays usable.
    SEG_OUT_OF_MEMORY = 8,
    /// No ONNX Runtime library could be loaded; the message lists every path tried and why each failed.
    SEG_RUNTIME_NOT_FOUND = 10,
    /// An ONNX Runtime library was loaded but could not be used (wrong version, environment creation
    /// failed), or another library than the one already loaded was asked for.
    SEG_RUNTIME_INIT_FAILED = 11,
    /// The model file does not exist, is not a regular file, or cannot be read.
    SEG_MODEL_NOT_FOUND = 20,
    /// The model bytes are not a valid ONNX model (empty, truncated, corrupt, or larger than `max_model_bytes`).
    SEG_MODEL_INVALID = 21,
    /// The model is valid ONNX but not a model segrt can run as asked (the message lists its inputs/outputs).
    SEG_MODEL_UNSUPPORTED = 22,
    /// The requested execution provider could not be initialised (the message carries ONNX Runtime's reason).
    SEG_PROVIDER_UNAVAILABLE = 30,
    /// ONNX Runtime failed while running the model.
    SEG_INFERENCE_FAILED = 40,
    /// The call was cancelled through its `SegCallControl` (`seg_control_cancel`, or its progress
    /// callback returned 0). Its outputs are untouched and the handle (a track too) is as before.
    SEG_CANCELLED = 50,
    /// A panic inside segrt was caught at the boundary; the host process is unharmed.
    SEG_PANIC = 90,
    /// An internal invariant failed; please report it with the message.
    SEG_INTERNAL = 91,
}

impl SegStatus {
    pub const ALL: [SegStatus; 19] = [
        SegStatus::SEG_OK,
        SegStatus::SEG_INVALID_ARGUMENT,
        SegStatus::SEG_NULL_POINTER,
        SegStatus::SEG_INVALID_HANDLE,
        SegStatus::SEG_BUFFER_TOO_SMALL,
        SegStatus::SEG_IMAGE_TOO_LARGE,
        SegStatus::SEG_UNSUPPORTED_FORMAT,
        SegStatus::SEG_WRONG_SESSION_KIND,
        SegStatus::SEG_OUT_OF_MEMORY,
        SegStatus::SEG_RUNTIME_NOT_FOUND,
        SegStatus::SEG_RUNTIME_INIT_FAILED,
        SegStatus::SEG_MODEL_NOT_FOUND,
        SegStatus::SEG_MODEL_INVALID,
        SegStatus::SEG_MODEL_UNSUPPORTED,
        SegStatus::SEG_PROVIDER_UNAVAILABLE,
        SegStatus::SEG_INFERENCE_FAILED,
        SegStatus::SEG_CANCELLED,
        SegStatus::SEG_PANIC,
        SegStatus::SEG_INTERNAL,
    ];

    /// The constant's name, NUL-terminated so the C boundary can hand it out as a static string.
    pub fn name_nul(self) -> &'static str {
        match self {
            SegStatus::SEG_OK => "SEG_OK\0",
            SegStatus::SEG_INVALID_ARGUMENT => "SEG_INVALID_ARGUMENT\0",
            SegStatus::SEG_NULL_POINTER => "SEG_NULL_POINTER\0",
            SegStatus::SEG_INVALID_HANDLE => "SEG_INVALID_HANDLE\0",
            SegStatus::SEG_BUFFER_TOO_SMALL => "SEG_BUFFER_TOO_SMALL\0",
            SegStatus::SEG_IMAGE_TOO_LARGE => "SEG_IMAGE_TOO_LARGE\0",
            SegStatus::SEG_UNSUPPORTED_FORMAT => "SEG_UNSUPPORTED_FORMAT\0",
            SegStatus::SEG_WRONG_SESSION_KIND => "SEG_WRONG_SESSION_KIND\0",
            SegStatus::SEG_OUT_OF_MEMORY => "SEG_OUT_OF_MEMORY\0",
            SegStatus::SEG_RUNTIME_NOT_FOUND => "SEG_RUNTIME_NOT_FOUND\0",
            SegStatus::SEG_RUNTIME_INIT_FAILED => "SEG_RUNTIME_INIT_FAILED\0",
            SegStatus::SEG_MODEL_NOT_FOUND => "SEG_MODEL_NOT_FOUND\0",
            SegStatus::SEG_MODEL_INVALID => "SEG_MODEL_INVALID\0",
            SegStatus::SEG_MODEL_UNSUPPORTED => "SEG_MODEL_UNSUPPORTED\0",
            SegStatus::SEG_PROVIDER_UNAVAILABLE => "SEG_PROVIDER_UNAVAILABLE\0",
            SegStatus::SEG_INFERENCE_FAILED => "SEG_INFERENCE_FAILED\0",
            SegStatus::SEG_CANCELLED => "SEG_CANCELLED\0",
            SegStatus::SEG_PANIC => "SEG_PANIC\0",
            SegStatus::SEG_INTERNAL => "SEG_INTERNAL\0",
        }
    }

    pub fn name(self) -> &'static str {
        self.name_nul().trim_end_matches('\0')
    }

    pub fn from_code(code: i32) -> Option<SegStatus> {
        SegStatus::ALL.iter().copied().find(|s| *s as i32 == code)
    }
}

impl From<ErrorKind> for SegStatus {
    fn from(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::InvalidArgument | ErrorKind::NoImage => SegStatus::SEG_INVALID_ARGUMENT,
            ErrorKind::NullPointer => SegStatus::SEG_NULL_POINTER,
            ErrorKind::InvalidHandle => SegStatus::SEG_INVALID_HANDLE,
            ErrorKind::BufferTooSmall => SegStatus::SEG_BUFFER_TOO_SMALL,
            ErrorKind::ImageTooLarge => SegStatus::SEG_IMAGE_TOO_LARGE,
            ErrorKind::UnsupportedFormat => SegStatus::SEG_UNSUPPORTED_FORMAT,
            ErrorKind::WrongSessionKind => SegStatus::SEG_WRONG_SESSION_KIND,
            ErrorKind::OutOfMemory => SegStatus::SEG_OUT_OF_MEMORY,
            ErrorKind::RuntimeNotFound => SegStatus::SEG_RUNTIME_NOT_FOUND,
            ErrorKind::RuntimeInitFailed => SegStatus::SEG_RUNTIME_INIT_FAILED,
            ErrorKind::ModelNotFound => SegStatus::SEG_MODEL_NOT_FOUND,
            ErrorKind::ModelInvalid => SegStatus::SEG_MODEL_INVALID,
            ErrorKind::ModelUnsupported => SegStatus::SEG_MODEL_UNSUPPORTED,
            ErrorKind::ProviderUnavailable => SegStatus::SEG_PROVIDER_UNAVAILABLE,
            ErrorKind::InferenceFailed => SegStatus::SEG_INFERENCE_FAILED,
            ErrorKind::Cancelled => SegStatus::SEG_CANCELLED,
            ErrorKind::Internal => SegStatus::SEG_INTERNAL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_kind_has_its_own_status() {
        // NoImage is an invalid argument with a message of its own (below).
        let kinds: Vec<ErrorKind> = ErrorKind::ALL.into_iter().filter(|k| *k != ErrorKind::NoImage).collect();
        let statuses: std::collections::HashSet<SegStatus> = kinds.iter().map(|k| SegStatus::from(*k)).collect();
        assert_eq!(statuses.len(), kinds.len());
        assert!(!statuses.contains(&SegStatus::SEG_OK) && !statuses.contains(&SegStatus::SEG_PANIC));
    }

    #[test]
    fn no_image_is_an_invalid_argument() {
        assert_eq!(SegStatus::from(ErrorKind::NoImage), SegStatus::SEG_INVALID_ARGUMENT);
    }
}
