//! One error type for the whole library: what went wrong (`kind`) and a message for a person.
//! The C boundary turns the kind into a status code and hands the message to `seg_last_error`.

use std::fmt;

/// What kind of failure an [`Error`] is; each maps to one status of the C ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An argument or option has a value that cannot work (see the message).
    InvalidArgument,
    /// A SAM2 call on "the image set last" when none is set: an invalid argument, of its own kind so
    /// that the C boundary can name its own calls in the message.
    NoImage,
    /// A required pointer was NULL (C boundary only).
    NullPointer,
    /// A session handle is not live (C boundary only).
    InvalidHandle,
    /// A caller-owned output buffer is too small.
    BufferTooSmall,
    /// The image is larger than the pixel limit, or its byte size overflows.
    ImageTooLarge,
    /// An unknown pixel format, or one not allowed here.
    UnsupportedFormat,
    /// A session of another kind (a SAM2 session asked for a UNet run).
    WrongSessionKind,
    /// An allocation failed, or a call would need more memory than its budget.
    OutOfMemory,
    /// No ONNX Runtime library could be loaded.
    RuntimeNotFound,
    /// ONNX Runtime was found but cannot be used.
    RuntimeInitFailed,
    /// The model file is missing, not a regular file, or unreadable.
    ModelNotFound,
    /// The model bytes are not a valid ONNX model.
    ModelInvalid,
    /// A valid ONNX model that segrt cannot run as asked.
    ModelUnsupported,
    /// The execution provider asked for cannot start.
    ProviderUnavailable,
    /// ONNX Runtime failed while running the model.
    InferenceFailed,
    /// The call was cancelled through its control (or its progress callback asked to stop).
    Cancelled,
    /// An internal invariant failed.
    Internal,
}

impl ErrorKind {
    /// Every kind, for the tests that map each one.
    #[cfg(test)]
    #[rustfmt::skip]
    pub(crate) const ALL: [ErrorKind; 18] = [
        ErrorKind::InvalidArgument, ErrorKind::NoImage, ErrorKind::NullPointer, ErrorKind::InvalidHandle, ErrorKind::BufferTooSmall,
        ErrorKind::ImageTooLarge, ErrorKind::UnsupportedFormat, ErrorKind::WrongSessionKind, ErrorKind::OutOfMemory,
        ErrorKind::RuntimeNotFound, ErrorKind::RuntimeInitFailed, ErrorKind::ModelNotFound, ErrorKind::ModelInvalid,
        ErrorKind::ModelUnsupported, ErrorKind::ProviderUnavailable, ErrorKind::InferenceFailed, ErrorKind::Cancelled, ErrorKind::Internal,
    ];

    /// A few words for messages, e.g. "model not found".
    pub fn describe(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument | ErrorKind::NoImage => "invalid argument",
            ErrorKind::NullPointer => "null pointer",
            ErrorKind::InvalidHandle => "invalid handle",
            ErrorKind::BufferTooSmall => "buffer too small",
            ErrorKind::ImageTooLarge => "image too large",
            ErrorKind::UnsupportedFormat => "unsupported format",
            ErrorKind::WrongSessionKind => "wrong session kind",
            ErrorKind::OutOfMemory => "out of memory",
            ErrorKind::RuntimeNotFound => "ONNX Runtime not found",
            ErrorKind::RuntimeInitFailed => "ONNX Runtime unusable",
            ErrorKind::ModelNotFound => "model not found",
            ErrorKind::ModelInvalid => "invalid model",
            ErrorKind::ModelUnsupported => "unsupported model",
            ErrorKind::ProviderUnavailable => "execution provider unavailable",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::InferenceFailed => "inference failed",
            ErrorKind::Internal => "internal error",
        }
    }
}

/// A failure: its kind plus a message for a human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }
    pub fn null(what: &str) -> Self {
        Error::new(ErrorKind::NullPointer, format!("{what} is NULL"))
    }
    pub fn unsupported_model(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::ModelUnsupported, message)
    }
    pub fn inference(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InferenceFailed, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Internal, message)
    }
    /// Adds context in front of the message, keeping the kind.
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.kind.describe())
    }
}

impl std::error::Error for Error {}
