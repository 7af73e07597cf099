//! Diagnostics for the host: one process-wide sink that receives what segrt wants a person to see
//! (the ONNX Runtime it loaded, the provider a session got and why it fell back, failed calls,
//! ONNX Runtime's own warnings and errors).
//!
//! Messages are emitted synchronously on the thread making the call, never from a release path,
//! so a host never sees a callback while it tears a session down.

use std::sync::{Arc, RwLock};

/// How much a message matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// A call failed.
    Error,
    /// Something works, but not as asked (e.g. a provider fell back to the CPU).
    Warn,
    /// Normal events worth a line in a log file (runtime loaded, session created).
    Info,
}

type Sink = Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

fn sink() -> &'static RwLock<Option<Sink>> {
    static SINK: RwLock<Option<Sink>> = RwLock::new(None);
    &SINK
}

/// Installs (or with `None` removes) the sink. A message being delivered on another thread
/// finishes with the sink it started with.
pub fn set_sink(new: Option<Sink>) {
    *sink().write().unwrap_or_else(|p| p.into_inner()) = new;
}

/// Sends a message to the sink, if any. The lock is not held while the sink runs, so a sink
/// may call back into segrt (even to replace itself).
pub fn emit(level: LogLevel, message: &str) {
    let current = sink().read().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(sink) = current {
        sink(level, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn emit_reaches_the_sink_until_it_is_removed() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        set_sink(Some(Arc::new(move |level, msg: &str| s.lock().unwrap().push((level, msg.to_string())))));
        emit(LogLevel::Warn, "fell back");
        set_sink(None);
        emit(LogLevel::Info, "nobody listens");
        let seen = seen.lock().unwrap();
        assert!(seen.contains(&(LogLevel::Warn, "fell back".to_string())));
        assert!(!seen.iter().any(|(_, m)| m == "nobody listens"));
    }
}
