//! One error type for the whole library. Its `status` is what the C ABI returns,
//! its `message` is what `seg_last_error` hands to the host.

use std::fmt;

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
    /// No ONNX Runtime library could be loaded; the message lists every path tried and why each failed.
    SEG_RUNTIME_NOT_FOUND = 10,
    /// An ONNX Runtime library was loaded but could not be used (wrong version, environment creation failed).
    SEG_RUNTIME_INIT_FAILED = 11,
    /// The model file does not exist or cannot be read.
    SEG_MODEL_NOT_FOUND = 20,
    /// The model bytes are not a valid ONNX model (empty, truncated, corrupt).
    SEG_MODEL_INVALID = 21,
    /// The model is valid ONNX but not a model segrt can run as asked (the message lists its inputs/outputs).
    SEG_MODEL_UNSUPPORTED = 22,
    /// The requested execution provider could not be initialised (the message carries ONNX Runtime's reason).
    SEG_PROVIDER_UNAVAILABLE = 30,
    /// ONNX Runtime failed while running the model.
    SEG_INFERENCE_FAILED = 40,
    /// A panic inside segrt was caught at the boundary; the host process is unharmed.
    SEG_PANIC = 90,
    /// An internal invariant failed; please report it with the message.
    SEG_INTERNAL = 91,
}

impl SegStatus {
    pub const ALL: [SegStatus; 17] = [
        SegStatus::SEG_OK,
        SegStatus::SEG_INVALID_ARGUMENT,
        SegStatus::SEG_NULL_POINTER,
        SegStatus::SEG_INVALID_HANDLE,
        SegStatus::SEG_BUFFER_TOO_SMALL,
        SegStatus::SEG_IMAGE_TOO_LARGE,
        SegStatus::SEG_UNSUPPORTED_FORMAT,
        SegStatus::SEG_WRONG_SESSION_KIND,
        SegStatus::SEG_RUNTIME_NOT_FOUND,
        SegStatus::SEG_RUNTIME_INIT_FAILED,
        SegStatus::SEG_MODEL_NOT_FOUND,
        SegStatus::SEG_MODEL_INVALID,
        SegStatus::SEG_MODEL_UNSUPPORTED,
        SegStatus::SEG_PROVIDER_UNAVAILABLE,
        SegStatus::SEG_INFERENCE_FAILED,
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
            SegStatus::SEG_RUNTIME_NOT_FOUND => "SEG_RUNTIME_NOT_FOUND\0",
            SegStatus::SEG_RUNTIME_INIT_FAILED => "SEG_RUNTIME_INIT_FAILED\0",
            SegStatus::SEG_MODEL_NOT_FOUND => "SEG_MODEL_NOT_FOUND\0",
            SegStatus::SEG_MODEL_INVALID => "SEG_MODEL_INVALID\0",
            SegStatus::SEG_MODEL_UNSUPPORTED => "SEG_MODEL_UNSUPPORTED\0",
            SegStatus::SEG_PROVIDER_UNAVAILABLE => "SEG_PROVIDER_UNAVAILABLE\0",
            SegStatus::SEG_INFERENCE_FAILED => "SEG_INFERENCE_FAILED\0",
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

/// A failure: the status the C ABI returns plus a message for a human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: SegStatus,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(status: SegStatus, message: impl Into<String>) -> Self {
        Error { status, message: message.into() }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(SegStatus::SEG_INVALID_ARGUMENT, message)
    }
    pub fn null(what: &str) -> Self {
        Error::new(SegStatus::SEG_NULL_POINTER, format!("{what} is NULL"))
    }
    pub fn unsupported_model(message: impl Into<String>) -> Self {
        Error::new(SegStatus::SEG_MODEL_UNSUPPORTED, message)
    }
    pub fn inference(message: impl Into<String>) -> Self {
        Error::new(SegStatus::SEG_INFERENCE_FAILED, message)
    }
    /// Adds context in front of the message, keeping the status.
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status.name())
    }
}

impl std::error::Error for Error {}
