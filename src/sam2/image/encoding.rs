//! An image encode in flight, which other calls on the same segmenter can wait for.
//!
//! A host encodes an image as soon as it is shown (on a worker thread); a click that arrives
//! meanwhile waits for that encode instead of running a second one or using the previous image,
//! and a newer image cancels the older encode (it is no longer wanted).

use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

use crate::control::{self, CallControl};
use crate::error::{Error, ErrorKind, Result};

/// How often a waiting call looks at its own control.
const CANCEL_POLL: Duration = Duration::from_millis(5);

pub(super) struct Encoding<T> {
    /// The image's content hash and (width, height).
    pub key: u64,
    pub size: (usize, usize),
    /// Cancelled when a newer image is set, or the segmenter is reset.
    pub superseded: Arc<CallControl>,
    /// The thread running the encoder: a call from it (a progress or log callback) must not wait.
    thread: ThreadId,
    result: Mutex<Option<Result<T>>>,
    done: Condvar,
}

impl<T: Clone> Encoding<T> {
    /// An encode of the image `key` of `size` starting on this thread.
    pub fn start(key: u64, size: (usize, usize)) -> Arc<Self> {
        Arc::new(Encoding {
            key,
            size,
            superseded: Arc::new(CallControl::new()),
            thread: thread::current().id(),
            result: Mutex::new(None),
            done: Condvar::new(),
        })
    }

    /// True on the thread running the encoder (a call from its progress or log callback).
    pub fn runs_on_this_thread(&self) -> bool {
        thread::current().id() == self.thread
    }

    /// Publishes the encode's result to every waiting call.
    pub fn finish(&self, result: Result<T>) {
        *self.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
        self.done.notify_all();
    }

    /// Waits for the encode's result; the caller's own control still cancels the wait (not the
    /// encode, which goes on for the call that started it).
    pub fn wait(&self) -> Result<T> {
        if self.runs_on_this_thread() {
            return Err(Error::invalid(
                "called from inside this handle's own image encode (a progress or log callback): it would wait for itself",
            ));
        }
        let mut slot = self.result.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &*slot {
                Some(Ok(value)) => return Ok(value.clone()),
                Some(Err(e)) if e.kind == ErrorKind::Cancelled => {
                    return Err(Error::new(
                        ErrorKind::Cancelled,
                        "the encode of the image this call needs was cancelled (or a newer image replaced it)",
                    ))
                }
                Some(Err(e)) => return Err(e.clone()),
                None => {}
            }
            control::checkpoint()?;
            slot = self.done.wait_timeout(slot, CANCEL_POLL).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_get_the_result_and_may_stop_waiting() {
        let encoding = Encoding::<u32>::start(7, (4, 3));
        let waiter = {
            let e = encoding.clone();
            thread::spawn(move || e.wait())
        };
        // A waiter whose own control is cancelled stops waiting; the encode is not affected.
        let control = Arc::new(CallControl::new());
        control.cancel();
        let e = encoding.clone();
        let stopped = thread::spawn(move || control::scope(Some(control), || e.wait())).join().unwrap();
        assert_eq!(stopped.unwrap_err().kind, ErrorKind::Cancelled);
        encoding.finish(Ok(42));
        assert_eq!(waiter.join().unwrap().unwrap(), 42);
        // The encoding thread itself is refused rather than left waiting for itself.
        assert_eq!(encoding.wait().unwrap_err().kind, ErrorKind::InvalidArgument);
    }

    #[test]
    fn a_cancelled_encode_is_reported_to_its_waiters_as_such() {
        let encoding = Encoding::<u32>::start(7, (4, 3));
        encoding.finish(Err(control::cancelled()));
        let e = encoding.clone();
        let got = thread::spawn(move || e.wait()).join().unwrap().unwrap_err();
        assert_eq!(got.kind, ErrorKind::Cancelled);
        assert!(got.message.contains("newer image"), "{}", got.message);
    }
}
