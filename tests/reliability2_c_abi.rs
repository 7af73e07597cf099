//! Reliability through the C ABI, second part: no allocation failure aborts the host, model files
//! are read with bounds, SAM2 refinement belongs to its caller, handles are hard to hit by accident,
//! per-thread scratch does not outlive its call, ONNX Runtime writes nothing to the host's stderr,
//! the log callback may call segrt, and a wrong `ort_path` after loading is reported.
//!
//! 17 tests, none disabled. Most were written before the guards they check and failed on the library
//! without them (such a test's comment says what the unguarded library did);
//! `oom_inside_onnx_runtime_...` guards what already worked. Statuses are compared as raw `i32` values
//! (`ST_*` below), the numbers of the C header, whatever module the status enum lives in.
//!
//! ## Tests in their own process
//!
//! Most cases change or measure process-wide state: an address-space limit, fd 2, the process-wide log
//! callback, the loaded ONNX Runtime, the handle registry (probing neighbours of a handle must not hit
//! another test's live session), the process RSS. `cargo test` runs the tests of a binary as threads of
//! one process, so each such test re-runs ITSELF in a child process: the test binary
//! (`std::env::current_exe()`) with `--exact <test name> --nocapture --test-threads=1` and the
//! environment variable `SEGRT_RELIABILITY2_CHILD=<test name>`. In the child the same test function
//! sees the variable and runs its body; in the parent it only starts the child (with `setrlimit(RLIMIT_AS)`
//! in `pre_exec` where a test needs an address-space limit, and a wall-clock limit after which the child
//! is killed), prints the child's output, and asserts on how it ended (exit code, signal). This works
//! the same under `cargo nextest run` (one process per test; CI, scripts/test.sh) and `cargo test`,
//! needs no C compiler, and no test is `#[ignore]`d.
//!
//! Address-space limit for the out-of-memory cases: 1.5 GiB (`SEGRT_OOM_ADDRESS_LIMIT`
//! overrides it, in bytes). Measured in the child (this machine: 2 cores, ONNX Runtime 1.31.1, debug
//! build; the child prints these lines): VmSize 80 MB for the test harness, 197 MB once ONNX Runtime is
//! loaded and the dynamic UNet session exists, 497 MB with the 9999x9999 BGR image allocated; so the
//! harness starts comfortably and the 1.2 GB input tensor cannot fit. The file cases (section 2 below)
//! run under 3 GiB so that a library that reads /dev/zero stops there instead of taking the machine's
//! memory.

mod common;

use std::ffi::{c_char, c_void, CStr};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use common::*;
use segrt::ffi::*;

// ---- raw status and format values (the C header's numbers) ----------------------------------------

const ST_OK: i32 = 0;
const ST_INVALID_ARGUMENT: i32 = 1;
const ST_INVALID_HANDLE: i32 = 3;
const ST_IMAGE_TOO_LARGE: i32 = 5;
/// `SEG_OUT_OF_MEMORY`.
const ST_OUT_OF_MEMORY: i32 = 8;
const ST_RUNTIME_INIT_FAILED: i32 = 11;
const ST_MODEL_NOT_FOUND: i32 = 20;
const ST_MODEL_INVALID: i32 = 21;

const FORMAT_BGR24: i32 = 1;
const FORMAT_RGB24: i32 = 3;

const LOG_ERROR: i32 = 1;

// ---- running a test body in a child process --------------------------------------------------------

const CHILD_ENV: &str = "SEGRT_RELIABILITY2_CHILD";

/// How a child run of one test ended.
struct ChildOutcome {
    name: String,
    status: Option<std::process::ExitStatus>,
    timed_out: bool,
    stdout: String,
    stderr: String,
}

impl ChildOutcome {
    fn describe(&self) -> String {
        let how = match (self.timed_out, &self.status) {
            (true, _) => "was killed after its time limit (hung)".to_string(),
            (false, Some(s)) if s.code().is_some() => format!("exited with code {}", s.code().unwrap()),
            (false, Some(s)) => match s.signal() {
                Some(6) => "was killed by signal 6 (SIGABRT: the process aborted)".to_string(),
                Some(9) => "was killed by signal 9 (SIGKILL)".to_string(),
                Some(11) => "was killed by signal 11 (SIGSEGV)".to_string(),
                Some(n) => format!("was killed by signal {n}"),
                None => format!("ended with {s:?}"),
            },
            (false, None) => "could not be waited for".to_string(),
        };
        format!("child process running `{}` {how}", self.name)
    }

    fn passed(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }

    /// The end of the child's stderr (where a failed assertion's message and an abort's
    /// "memory allocation of N bytes failed" are).
    fn stderr_tail(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        lines[lines.len().saturating_sub(25)..].join("\n")
    }

    fn assert_passed(&self) {
        assert!(self.passed(), "{}; its stderr ends with:\n{}", self.describe(), self.stderr_tail());
    }
}

/// In the parent: runs test `name` alone in a child process (limited to `address_limit` bytes of
/// address space when given, killed after `timeout`), echoes its output, and returns how it ended.
/// In the child (the environment variable names this test): returns `None`: run the body.
fn isolate(name: &str, address_limit: Option<u64>, timeout: Duration) -> Option<ChildOutcome> {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        return None;
    }
    let mut cmd = Command::new(std::env::current_exe().expect("current_exe"));
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(limit) = address_limit {
        // SAFETY: only async-signal-safe calls (setrlimit) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let r = libc::rlimit { rlim_cur: limit as libc::rlim_t, rlim_max: limit as libc::rlim_t };
                if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().expect("start the child test process");
    let pipe_reader = |mut p: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = p.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out = pipe_reader(Box::new(child.stdout.take().unwrap()));
    let err = pipe_reader(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + timeout;
    let (status, timed_out) = loop {
        if let Some(s) = child.try_wait().expect("wait for the child") {
            break (Some(s), false);
        }
        if Instant::now() > deadline {
            let _ = child.kill(); // our own child, by its id
            break (child.wait().ok(), true);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let outcome = ChildOutcome {
        name: name.to_string(),
        status,
        timed_out,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    };
    let limit = address_limit.map_or(String::new(), |l| format!(", address space limited to {:.2} GiB", l as f64 / (1u64 << 30) as f64));
    println!("---- child `{name}`{limit}: {}", outcome.describe());
    for line in outcome.stdout.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("running ") && !l.starts_with("test result")) {
        println!("  | {line}");
    }
    for line in outcome.stderr.lines() {
        println!("  ! {line}");
    }
    Some(outcome)
}

fn oom_address_limit() -> u64 {
    std::env::var("SEGRT_OOM_ADDRESS_LIMIT").ok().and_then(|v| v.parse().ok()).unwrap_or(1536 << 20)
}

// ---- small helpers ---------------------------------------------------------------------------------

/// (VmSize, VmPeak, VmRSS) of this process in bytes, from /proc/self/status.
fn vm() -> (u64, u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    (field("VmSize:"), field("VmPeak:"), field("VmRSS:"))
}

fn print_vm(when: &str) {
    let (size, peak, rss) = vm();
    println!("{when}: VmSize {:.0} MB, VmPeak {:.0} MB, VmRSS {:.0} MB", size as f64 / 1e6, peak as f64 / 1e6, rss as f64 / 1e6);
}

/// Resident bytes of this process (/proc/self/statm), after giving freed heap memory back to the
/// system (`malloc_trim(0)`): glibc keeps freed blocks below the mmap threshold in its heap, which
/// would look like memory segrt retained.
fn rss_after_trim() -> u64 {
    unsafe { libc::malloc_trim(0) };
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

/// Does `msg` state a size: a number of at least 7 digits (bytes, pixels; separators allowed) or a
/// number followed by a byte unit?
fn names_a_size(msg: &str) -> bool {
    let mut digits = 0;
    let mut longest = 0;
    for c in msg.chars() {
        if c.is_ascii_digit() {
            digits += 1;
            longest = longest.max(digits);
        } else if !(c == ',' || c == '_' || c == '\'' || c == '.' || c == ' ' && digits > 0) {
            digits = 0;
        }
    }
    let unit = ["bytes", " B", "KB", "MB", "GB", "KiB", "MiB", "GiB"].iter().any(|u| msg.contains(u));
    longest >= 7 || unit && msg.chars().any(|c| c.is_ascii_digit())
}

fn unet_options_one_thread() -> SegOptions {
    let mut o = default_options();
    o.intra_threads = 1;
    o
}

fn image(data: &[u8], w: usize, h: usize, stride: i32, format: i32) -> SegImage {
    SegImage { data: data.as_ptr(), width: w as i32, height: h as i32, stride, format, plane1: ptr::null(), plane2: ptr::null() }
}

/// `seg_run_unet` into a fresh mask; returns (raw status, last error when it failed).
fn run_status(session: *mut SegSession, img: &SegImage) -> (i32, String) {
    let (w, h) = (img.width as usize, img.height as usize);
    let mut mask = vec![0u8; w * h];
    let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let st = unsafe { seg_run_unet(session, img, &m, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) } as i32;
    (st, if st == ST_OK { String::new() } else { last_error() })
}

fn info_status(session: *mut SegSession) -> i32 {
    let mut n = 0usize;
    unsafe { seg_session_info(session, ptr::null_mut(), 0, &mut n) as i32 }
}

fn status_name(st: i32) -> String {
    unsafe { CStr::from_ptr(seg_status_str(st)) }.to_string_lossy().into_owned()
}

fn version_text() -> String {
    let mut buf = vec![0 as c_char; 1024];
    unsafe { seg_version(buf.as_mut_ptr(), buf.len()) };
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

fn tmp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("segrt-rel2-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sam2_pair() -> (PathBuf, PathBuf) {
    let dir = repo().join("models/sam2");
    (dir.join("sam2_tiny_sam2onnx_encoder.onnx"), dir.join("sam2_tiny_sam2onnx_decoder.onnx"))
}

// =====================================================================================================
// 1. An allocation failure never aborts the process.
// =====================================================================================================

/// The child's body for the two out-of-memory cases: one run that cannot fit in the address space.
fn run_one_that_cannot_fit(model_file: &str, options: &SegOptions, w: usize, h: usize) {
    print_vm("child start (test harness)");
    let s = create(&model(model_file), Some(options)).unwrap_or_else(|e| panic!("create {model_file}: {e:?}"));
    print_vm("ONNX Runtime loaded, session created");
    let pixels = vec![0x80u8; w * h * 3];
    print_vm(&format!("{w}x{h} BGR image allocated"));
    let img = image(&pixels, w, h, 0, FORMAT_BGR24);
    let (st, msg) = run_status(s.0, &img);
    println!("seg_run_unet({model_file}, {w}x{h} BGR) -> {st} {}: {msg}", status_name(st));
    print_vm("after the run");
    assert!(
        st == ST_OUT_OF_MEMORY || st == ST_IMAGE_TOO_LARGE,
        "expected SEG_OUT_OF_MEMORY (8) or SEG_IMAGE_TOO_LARGE (5), got {st} {}: {msg}",
        status_name(st)
    );
    assert!(names_a_size(&msg), "the message must name the size asked for: {msg}");
    // The process is still usable: a small run of the same session works (or is refused for the
    // same reason by a fixed-size model, with a status, not an abort).
    drop(pixels);
    let small = vec![0x40u8; 64 * 64 * 3];
    let (st2, msg2) = run_status(s.0, &image(&small, 64, 64, 0, FORMAT_BGR24));
    println!("then a 64x64 run -> {st2} {}: {msg2}", status_name(st2));
}

/// Unguarded, the child was killed by SIGABRT ("memory allocation of 1196163072 bytes failed", from
/// `Preprocessor::start_batch`).
#[test]
fn oom_dynamic_unet_9999x9999_bgr_returns_a_status_under_an_address_limit() {
    let name = "oom_dynamic_unet_9999x9999_bgr_returns_a_status_under_an_address_limit";
    if let Some(child) = isolate(name, Some(oom_address_limit()), Duration::from_secs(120)) {
        assert!(child.status.and_then(|s| s.signal()) != Some(libc::SIGABRT), "{}:\n{}", child.describe(), child.stderr_tail());
        child.assert_passed();
        return;
    }
    run_one_that_cannot_fit("test/unet_dynamic.onnx", &default_options(), 9999, 9999);
}

/// A fixed [1,3,20000,20000] model (models/test/unet_fixed_20000.onnx, 233 bytes) with max_pixels
/// raised to 500 000 000: its input tensor alone is 4.8 GB. Unguarded: SIGABRT.
#[test]
fn oom_fixed_20000_model_returns_a_status_under_an_address_limit() {
    let name = "oom_fixed_20000_model_returns_a_status_under_an_address_limit";
    if let Some(child) = isolate(name, Some(oom_address_limit()), Duration::from_secs(120)) {
        assert!(child.status.and_then(|s| s.signal()) != Some(libc::SIGABRT), "{}:\n{}", child.describe(), child.stderr_tail());
        child.assert_passed();
        return;
    }
    let mut o = default_options();
    o.max_pixels = 500_000_000;
    run_one_that_cannot_fit("test/unet_fixed_20000.onnx", &o, 64, 64);
}

/// ONNX Runtime's own allocation failure (a 17 GB intermediate tensor; segrt's buffers are small)
/// came back as a status even before segrt's own guards (then SEG_INFERENCE_FAILED, 40; now
/// SEG_OUT_OF_MEMORY): kept as a guard; the test asks for a failure whose message names the size.
#[test]
fn oom_inside_onnx_runtime_returns_a_status_under_an_address_limit() {
    let name = "oom_inside_onnx_runtime_returns_a_status_under_an_address_limit";
    if let Some(child) = isolate(name, Some(oom_address_limit()), Duration::from_secs(120)) {
        assert!(child.status.and_then(|s| s.signal()) != Some(libc::SIGABRT), "{}:\n{}", child.describe(), child.stderr_tail());
        child.assert_passed();
        return;
    }
    let mut o = default_options();
    o.intra_threads = 1;
    let s = create(&model("test/ort_huge_intermediate.onnx"), Some(&o)).unwrap_or_else(|e| panic!("{e:?}"));
    let (w, h) = (1024usize, 1024usize);
    let pixels = vec![0x80u8; w * h * 3];
    let (st, msg) = run_status(s.0, &image(&pixels, w, h, 0, FORMAT_BGR24));
    println!("seg_run_unet(ort_huge_intermediate.onnx, {w}x{h}) -> {st} {}: {msg}", status_name(st));
    assert_ne!(st, ST_OK, "a 17 GB intermediate tensor cannot have been allocated under the limit");
    assert!(names_a_size(&msg), "the message must name the size asked for: {msg}");
}

// The limits a host sets: SegOptions.max_memory_bytes (u64, 0 = default 8 GiB) and max_model_bytes
// (u64, 0 = default 2 GiB).
#[test]
fn memory_budget_refuses_a_run_before_allocating() {
    // No address limit is needed: the budget is checked before anything is allocated. The fixed
    // [1,3,20000,20000] model needs 4.8 GB for its input alone.
    let mut o = default_options();
    o.max_pixels = 500_000_000;
    o.max_memory_bytes = 256 << 20;
    let px = vec![0x80u8; 64 * 64 * 3];
    let (st, msg) = match create(&model("test/unet_fixed_20000.onnx"), Some(&o)) {
        Err((st, msg)) => (st as i32, msg), // refused when the session is created: as good
        Ok(s) => run_status(s.0, &image(&px, 64, 64, 0, FORMAT_BGR24)),
    };
    assert_eq!(st, ST_OUT_OF_MEMORY, "{msg}");
    assert!(names_a_size(&msg) && msg.contains("max_memory_bytes"), "names the size and the option: {msg}");

    // A dynamic model: a 4000x4000 image needs a 192 MB input tensor alone; a 64 MB budget refuses it,
    // the default budget runs it.
    o = default_options();
    o.max_memory_bytes = 64 << 20;
    let s = create(&model("test/unet_dynamic.onnx"), Some(&o)).unwrap();
    let big = vec![0x80u8; 4000 * 4000 * 3];
    let (st, msg) = run_status(s.0, &image(&big, 4000, 4000, 0, FORMAT_BGR24));
    assert_eq!(st, ST_OUT_OF_MEMORY, "{msg}");
    assert!(names_a_size(&msg), "{msg}");
    let small = vec![0x80u8; 256 * 256 * 3];
    assert_eq!(run_status(s.0, &image(&small, 256, 256, 0, FORMAT_BGR24)).0, ST_OK, "a run within the budget still works");
    // An absurd budget value is an invalid option, not an overflow.
    o.max_memory_bytes = u64::MAX;
    let r = create(&model("test/unet_dynamic.onnx"), Some(&o));
    assert!(r.is_ok() || r.as_ref().err().unwrap().0 as i32 == ST_INVALID_ARGUMENT);
}

#[test]
fn max_model_bytes_refuses_a_larger_model_before_reading_or_copying_it() {
    let demo = std::fs::read(model("demo_unet.onnx")).unwrap();
    let mut o = default_options();
    o.max_model_bytes = 1000;
    let refused = |st: i32| st == ST_MODEL_INVALID || st == ST_OUT_OF_MEMORY || st == ST_INVALID_ARGUMENT;
    let (st, msg) = create(&model("demo_unet.onnx"), Some(&o)).err().map(|(s, m)| (s as i32, m)).expect("a file over max_model_bytes");
    assert!(refused(st) && msg.contains(&demo.len().to_string()) && msg.contains("max_model_bytes"), "{st}: {msg}");
    let mut s: *mut SegSession = ptr::null_mut();
    let st = unsafe { seg_create_from_memory(demo.as_ptr(), demo.len(), &o, &mut s) } as i32;
    assert!(refused(st) && s.is_null(), "from memory: {st} {}", last_error());
    let (e, d) = sam2_pair();
    let (e, d) = (cstr(e.to_str().unwrap()), cstr(d.to_str().unwrap()));
    let st = unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &o, &mut s) } as i32;
    assert!(refused(st) && s.is_null(), "SAM2 pair: {st} {}", last_error());
    // The bound is what was asked: a model of exactly max_model_bytes loads.
    o.max_model_bytes = demo.len() as u64;
    assert!(create(&model("demo_unet.onnx"), Some(&o)).is_ok());
}

// =====================================================================================================
// 2. Model files are read with bounds.
// =====================================================================================================

/// Runs `f` on a thread; if it has not returned after `limit`, calls `unblock` (e.g. opens a FIFO's
/// write end), waits a little more, and reports the hang.
fn with_deadline<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
    unblock: impl FnOnce(),
) -> Result<(T, Duration), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(r);
    });
    match rx.recv_timeout(limit) {
        Ok(r) => Ok((r, start.elapsed())),
        Err(_) => {
            unblock();
            let late = rx.recv_timeout(Duration::from_secs(10)).is_ok();
            Err(format!(
                "had not returned after {limit:?} (it blocks); {}",
                if late {
                    "it returned once the test unblocked it"
                } else {
                    "it was still blocked 10 s after the test tried to unblock it"
                }
            ))
        }
    }
}

/// (raw status, message, handle written) of `seg_create(path)`.
fn create_raw(path: &Path) -> (i32, String, bool) {
    let p = cstr(path.to_str().unwrap());
    let mut s: *mut SegSession = ptr::null_mut();
    let st = unsafe { seg_create(p.as_ptr(), ptr::null(), &mut s) } as i32;
    let written = !s.is_null();
    if st == ST_OK {
        drop(Session(s));
    }
    (st, if st == ST_OK { String::new() } else { last_error() }, written)
}

fn create_sam2_raw(encoder: &Path, decoder: &Path) -> (i32, String, bool) {
    let (e, d) = (cstr(encoder.to_str().unwrap()), cstr(decoder.to_str().unwrap()));
    let mut s: *mut SegSession = ptr::null_mut();
    let st = unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), ptr::null(), &mut s) } as i32;
    let written = !s.is_null();
    if st == ST_OK {
        drop(Session(s));
    }
    (st, if st == ST_OK { String::new() } else { last_error() }, written)
}

fn assert_refused_as_not_a_regular_file(case: &str, outcome: Result<((i32, String, bool), Duration), String>) {
    let ((st, msg, written), took) = outcome.unwrap_or_else(|e| panic!("{case}: {e}"));
    println!("{case}: {st} {} after {:.2} s: {msg}", status_name(st), took.as_secs_f64());
    assert!(
        st == ST_MODEL_NOT_FOUND || st == ST_MODEL_INVALID,
        "{case}: expected SEG_MODEL_NOT_FOUND or SEG_MODEL_INVALID, got {st}: {msg}"
    );
    assert!(msg.to_lowercase().contains("regular file"), "{case}: the message must say the path is not a regular file: {msg}");
    assert!(!written, "{case}: out_session written on failure");
}

/// Address limit for the file cases: ample for ONNX Runtime, but reading /dev/zero until memory runs
/// out stops at it instead of taking the machine's memory (unguarded: 8.9 GB of RSS without a limit).
const FILE_CASE_ADDRESS_LIMIT: u64 = 3 << 30;

/// Unguarded (under the 3 GiB limit): status 20 after 2.1 s and a VmPeak of 2.3 GB, "cannot read model
/// file '/dev/zero': out of memory" (no word of "regular file"); without a limit it read until the
/// machine's memory was gone.
#[test]
fn model_path_dev_zero_is_refused_without_reading_it() {
    let name = "model_path_dev_zero_is_refused_without_reading_it";
    if let Some(child) = isolate(name, Some(FILE_CASE_ADDRESS_LIMIT), Duration::from_secs(90)) {
        return child.assert_passed();
    }
    let r = with_deadline(Duration::from_secs(10), || create_raw(Path::new("/dev/zero")), || {});
    print_vm("after seg_create(/dev/zero)");
    assert_refused_as_not_a_regular_file("seg_create(\"/dev/zero\")", r);
}

/// Unguarded: blocked in open() until a writer appeared (here: the test opens the write end after 10 s).
#[test]
fn model_path_fifo_is_refused_without_blocking() {
    let name = "model_path_fifo_is_refused_without_blocking";
    if let Some(child) = isolate(name, Some(FILE_CASE_ADDRESS_LIMIT), Duration::from_secs(90)) {
        return child.assert_passed();
    }
    let fifo = tmp_dir("fifo").join("model.onnx");
    let _ = std::fs::remove_file(&fifo);
    let c = cstr(fifo.to_str().unwrap());
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", fifo.display());
    let path = fifo.clone();
    let r = with_deadline(
        Duration::from_secs(10),
        move || create_raw(&path),
        || {
            // Unblock the reader stuck in open(): open the write end (non-blocking: fails if nobody reads) and close it.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_NONBLOCK) };
            if fd >= 0 {
                unsafe { libc::close(fd) };
            }
        },
    );
    let _ = std::fs::remove_file(&fifo);
    assert_refused_as_not_a_regular_file("seg_create(<a FIFO>)", r);
}

/// Unguarded: as for seg_create, under the limit: status 20 "encoder: cannot read model file
/// '/dev/zero': out of memory" (and the same for the decoder below).
#[test]
fn sam2_encoder_dev_zero_is_refused_without_reading_it() {
    let name = "sam2_encoder_dev_zero_is_refused_without_reading_it";
    if let Some(child) = isolate(name, Some(FILE_CASE_ADDRESS_LIMIT), Duration::from_secs(90)) {
        return child.assert_passed();
    }
    let (_, decoder) = sam2_pair();
    let r = with_deadline(Duration::from_secs(10), move || create_sam2_raw(Path::new("/dev/zero"), &decoder), || {});
    assert_refused_as_not_a_regular_file("seg_create_sam2(\"/dev/zero\", decoder)", r);
}

#[test]
fn sam2_decoder_dev_zero_is_refused_without_reading_it() {
    let name = "sam2_decoder_dev_zero_is_refused_without_reading_it";
    if let Some(child) = isolate(name, Some(FILE_CASE_ADDRESS_LIMIT), Duration::from_secs(90)) {
        return child.assert_passed();
    }
    let (encoder, _) = sam2_pair();
    let r = with_deadline(Duration::from_secs(10), move || create_sam2_raw(&encoder, Path::new("/dev/zero")), || {});
    assert_refused_as_not_a_regular_file("seg_create_sam2(encoder, \"/dev/zero\")", r);
}

/// A 3 GiB model "in memory" (an untouched read-only anonymous mapping: address space, no RAM; reading
/// it gives zeros) is over the default model size bound (2 GiB) and must be refused before it is
/// copied. The address limit (mapping + 1.5 GiB) keeps an unguarded copy from taking 3 GB of the
/// machine's memory. Unguarded: the copy's allocation failed and the child aborted ("memory allocation
/// of 3221225472 bytes failed").
#[test]
fn from_memory_with_an_absurd_length_is_refused_before_copying() {
    let name = "from_memory_with_an_absurd_length_is_refused_before_copying";
    const LEN: usize = 3 << 30;
    if let Some(child) = isolate(name, Some(LEN as u64 + oom_address_limit()), Duration::from_secs(120)) {
        return child.assert_passed();
    }
    let map =
        unsafe { libc::mmap(ptr::null_mut(), LEN, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0) };
    assert_ne!(map, libc::MAP_FAILED, "mmap of {LEN} bytes of address space");
    let data = map as *const u8;
    let small = std::fs::read(model("demo_unet.onnx")).unwrap();
    let refused = |st: i32| st == ST_MODEL_INVALID || st == ST_OUT_OF_MEMORY || st == ST_INVALID_ARGUMENT;

    let mut s: *mut SegSession = ptr::null_mut();
    let st = unsafe { seg_create_from_memory(data, LEN, ptr::null(), &mut s) } as i32;
    let msg = last_error();
    println!("seg_create_from_memory(<{LEN} bytes>) -> {st} {}: {msg}", status_name(st));
    print_vm("after seg_create_from_memory");
    assert!(refused(st), "expected SEG_MODEL_INVALID, SEG_OUT_OF_MEMORY or SEG_INVALID_ARGUMENT, got {st}: {msg}");
    assert!(names_a_size(&msg), "the message must name the length and the bound: {msg}");
    assert!(s.is_null());

    for (e, el, d, dl, which) in [(data, LEN, small.as_ptr(), small.len(), "encoder"), (small.as_ptr(), small.len(), data, LEN, "decoder")]
    {
        let st = unsafe { seg_create_sam2_from_memory(e, el, d, dl, ptr::null(), &mut s) } as i32;
        let msg = last_error();
        println!("seg_create_sam2_from_memory(<{which} of {LEN} bytes>) -> {st} {}: {msg}", status_name(st));
        assert!(refused(st), "{which}: expected a refusal, got {st}: {msg}");
        assert!(s.is_null());
    }
    unsafe { libc::munmap(map, LEN) };
}

// =====================================================================================================
// 3. SAM2 refinement belongs to its caller.
// =====================================================================================================

fn sam2_session() -> Session {
    let (e, d) = sam2_pair();
    let (e, d) = (cstr(e.to_str().unwrap()), cstr(d.to_str().unwrap()));
    let mut s = ptr::null_mut();
    let o = unet_options_one_thread();
    assert_eq!(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &o, &mut s) } as i32, ST_OK, "{}", last_error());
    Session(s)
}

fn empty_sam2_result() -> SegSam2Result {
    SegSam2Result {
        struct_size: std::mem::size_of::<SegSam2Result>() as u32,
        chosen_index: -1,
        num_masks: 0,
        encoder_reused: 0,
        scores: [0.0; 4],
        encoder_ms: 0.0,
        decoder_ms: 0.0,
        postprocess_ms: 0.0,
        all_masks: ptr::null_mut(),
        all_masks_len: 0,
        low_res_logits: ptr::null_mut(),
        low_res_len: 0,
        low_res_width: 0,
        low_res_height: 0,
    }
}

fn sam2_click(s: &Session, img: &Rgb, points: &[SegPoint], flags: u32) -> Vec<u8> {
    let desc = image(&img.data, img.w, img.h, 0, FORMAT_RGB24);
    let mut mask = vec![0u8; img.w * img.h];
    let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let mut result = empty_sam2_result();
    let st = unsafe {
        seg_run_sam2_points(
            s.0,
            &desc,
            points.as_ptr(),
            points.len(),
            ptr::null(),
            ptr::null(),
            0,
            flags,
            &m,
            ptr::null_mut(),
            &mut result,
            ptr::null_mut(),
        )
    };
    assert_eq!(st as i32, ST_OK, "{}", last_error());
    mask
}

fn pt(x: f32, y: f32) -> SegPoint {
    SegPoint { x, y, label: 1 }
}

/// Two objects on img0, each a first click then a refining second click.
fn two_objects() -> [(Vec<SegPoint>, Vec<SegPoint>); 2] {
    [(vec![pt(105.0, 105.0)], vec![pt(105.0, 105.0), pt(120.0, 90.0)]), (vec![pt(240.0, 140.0)], vec![pt(240.0, 140.0), pt(200.0, 150.0)])]
}

/// `SEG_SAM2_REFINE` stays the session's one-interaction convenience (the previous result of the
/// session, whichever thread made it: documented). Threads refining their own objects pass their own
/// previous low-res logits back as `mask_input`: that must give exactly the single-threaded results.
#[test]
fn sam2_mask_input_passed_back_by_each_caller_gives_single_thread_results() {
    fn click_with(s: &Session, img: &Rgb, points: &[SegPoint], mask_input: Option<&[f32]>) -> (Vec<u8>, Vec<f32>) {
        let desc = image(&img.data, img.w, img.h, 0, FORMAT_RGB24);
        let mut mask = vec![0u8; img.w * img.h];
        let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
        let mut low_res = vec![0f32; 256 * 256];
        let mut r = SegSam2Result { low_res_logits: low_res.as_mut_ptr(), low_res_len: low_res.len(), ..empty_sam2_result() };
        let (input, input_len) = mask_input.map_or((ptr::null(), 0), |m| (m.as_ptr(), m.len()));
        let st = unsafe {
            seg_run_sam2_points(
                s.0,
                &desc,
                points.as_ptr(),
                points.len(),
                ptr::null(),
                input,
                input_len,
                0,
                &m,
                ptr::null_mut(),
                &mut r,
                ptr::null_mut(),
            )
        };
        assert_eq!(st as i32, ST_OK, "{}", last_error());
        low_res.truncate((r.low_res_width * r.low_res_height) as usize);
        (mask, low_res)
    }
    let s = Arc::new(sam2_session());
    let img = Arc::new(load_rgb(&repo().join("models/sam2/reference/img0.png")));
    let objects = Arc::new(two_objects());
    // Single thread: the logits passed back give the same mask as SEG_SAM2_REFINE right after the first click.
    let expected: Arc<Vec<Vec<u8>>> = Arc::new(
        objects
            .iter()
            .map(|(first, second)| {
                let (_, logits) = click_with(&s, &img, first, None);
                let refined = sam2_click(&s, &img, second, SEG_SAM2_REFINE);
                let (passed_back, _) = click_with(&s, &img, second, Some(&logits));
                assert_eq!(passed_back, refined, "mask_input must act as SEG_SAM2_REFINE with the same logits");
                passed_back
            })
            .collect(),
    );
    let rounds = 10;
    let barrier = Arc::new(Barrier::new(2));
    let mismatches = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (s, img, objects, expected, barrier, mismatches) =
                (s.clone(), img.clone(), objects.clone(), expected.clone(), barrier.clone(), mismatches.clone());
            std::thread::spawn(move || {
                for _ in 0..rounds {
                    let mut logits = Vec::new();
                    for turn in 0..2 {
                        if turn == t {
                            logits = click_with(&s, &img, &objects[t].0, None).1;
                        }
                        barrier.wait();
                    }
                    // The REFINE flag is not set: mask_input alone asks for refinement.
                    if click_with(&s, &img, &objects[t].1, Some(&logits)).0 != expected[t] {
                        mismatches.fetch_add(1, Ordering::Relaxed);
                    }
                    barrier.wait();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a clicking thread panicked");
    }
    assert_eq!(mismatches.load(Ordering::Relaxed), 0);
    // A mask_input of the wrong length is refused before anything runs.
    let desc = image(&img.data, img.w, img.h, 0, FORMAT_RGB24);
    let mut mask = vec![0u8; img.w * img.h];
    let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let short = [0f32; 10];
    let mut r = empty_sam2_result();
    let st = unsafe {
        seg_run_sam2_points(
            s.0,
            &desc,
            objects[0].1.as_ptr(),
            2,
            ptr::null(),
            short.as_ptr(),
            short.len(),
            0,
            &m,
            ptr::null_mut(),
            &mut r,
            ptr::null_mut(),
        )
    } as i32;
    assert!(st == ST_INVALID_ARGUMENT || st == 4, "a 10-float mask_input: {st} {}", last_error());
}

// =====================================================================================================
// 4. Handles are hard to hit by accident.
// =====================================================================================================

/// With sequential ids (0x5e600000 + 16n), h+16 of a live handle was the next live session:
/// seg_session_info and seg_run_unet acted on it and seg_free freed it.
#[test]
fn neighbouring_and_recycled_handle_values_are_invalid() {
    let name = "neighbouring_and_recycled_handle_values_are_invalid";
    if let Some(child) = isolate(name, None, Duration::from_secs(300)) {
        return child.assert_passed();
    }
    let bytes = std::fs::read(model("demo_unet.onnx")).unwrap();
    let o = unet_options_one_thread();
    let new = || {
        let mut s = ptr::null_mut();
        assert_eq!(unsafe { seg_create_from_memory(bytes.as_ptr(), bytes.len(), &o, &mut s) } as i32, ST_OK, "{}", last_error());
        s
    };
    let img = load_rgb(&sample("lesion_06.png"));
    let desc = image(&img.data, img.w, img.h, 0, FORMAT_RGB24);

    // Recycled values: many create/free cycles next to sessions that stay alive.
    let mut live: Vec<usize> = (0..2).map(|_| new() as usize).collect();
    let mut freed: Vec<usize> = Vec::new();
    for _ in 0..200 {
        let h = new();
        freed.push(h as usize);
        assert_eq!(unsafe { seg_free(h) } as i32, ST_OK);
    }
    live.push(new() as usize);
    println!("live handles: {:x?}; {} handles created and freed, e.g. {:x?}", live, freed.len(), &freed[..4]);

    let mut violations: Vec<String> = Vec::new();
    let mut probes: Vec<(String, usize)> = Vec::new();
    for &h in &live {
        for k in [1usize, 8, 16, 32, 4096] {
            probes.push((format!("{h:#x}+{k}"), h.wrapping_add(k)));
            probes.push((format!("{h:#x}-{k}"), h.wrapping_sub(k)));
        }
        for bit in 0..12 {
            probes.push((format!("{h:#x}^{:#x}", 1usize << bit), h ^ (1 << bit)));
        }
    }
    for &f in &freed {
        probes.push((format!("freed {f:#x}"), f));
    }
    probes.retain(|(_, v)| *v != 0); // seg_free(NULL) is a documented no-op
    for (what, v) in &probes {
        if live.contains(v) {
            violations.push(format!("{what} is the live handle {v:#x}"));
        }
    }
    // Read-only probes first, for every value; frees last.
    for (what, v) in &probes {
        let st = info_status(*v as *mut SegSession);
        if st != ST_INVALID_HANDLE {
            violations.push(format!("seg_session_info({what} = {v:#x}) -> {st} {}", status_name(st)));
        }
        let (st, msg) = run_status(*v as *mut SegSession, &desc);
        if st != ST_INVALID_HANDLE {
            violations.push(format!("seg_run_unet({what} = {v:#x}) -> {st} {} {msg}", status_name(st)));
        }
    }
    for (what, v) in &probes {
        let st = unsafe { seg_free(*v as *mut SegSession) } as i32;
        if st != ST_INVALID_HANDLE {
            violations.push(format!("seg_free({what} = {v:#x}) -> {st} {}", status_name(st)));
        }
    }
    for &h in &live {
        let st = info_status(h as *mut SegSession);
        let (run, msg) = run_status(h as *mut SegSession, &desc);
        if st != ST_OK || run != ST_OK {
            violations.push(format!("live handle {h:#x} was hit by a probe: seg_session_info -> {st}, seg_run_unet -> {run} {msg}"));
        }
        unsafe { seg_free(h as *mut SegSession) };
    }
    println!("{} probe values x 3 calls: {} violations", probes.len(), violations.len());
    for v in violations.iter().take(30) {
        println!("  {v}");
    }
    assert!(violations.is_empty(), "{} violations, first: {}", violations.len(), violations[0]);
}

// =====================================================================================================
// 5. Per-thread scratch does not outlive its call.
// =====================================================================================================

/// Unguarded (RSS after malloc_trim, measured on the thread that made the call): +197.7 MB after the
/// call (8000 x 8000 x 3 = 192 MB of gathered rows of the bottom-up image), still +154.3 MB after
/// seg_free.
#[test]
fn large_bottom_up_frame_leaves_no_scratch_on_the_calling_thread() {
    let name = "large_bottom_up_frame_leaves_no_scratch_on_the_calling_thread";
    if let Some(child) = isolate(name, None, Duration::from_secs(300)) {
        return child.assert_passed();
    }
    const ALLOWED: u64 = 64 << 20;
    let s = create(&model("demo_unet.onnx"), None).unwrap();
    // Warm-up on this (the measuring) thread: ONNX Runtime's session, arenas, the small scratch.
    let small = load_rgb(&sample("lesion_06.png"));
    let bgr: Vec<u8> = small.data.chunks(3).flat_map(|p| [p[2], p[1], p[0]]).collect();
    let row = (small.w * 3) as i32;
    let warm = image(&bgr[(small.h - 1) * small.w * 3..], small.w, small.h, -row, FORMAT_BGR24);
    for _ in 0..3 {
        assert_eq!(run_status(s.0, &warm).0, ST_OK, "{}", last_error());
    }
    let before = rss_after_trim();

    let (w, h) = (8000usize, 8000usize);
    let mut frame = vec![0u8; w * h * 3];
    for (i, v) in frame.iter_mut().enumerate() {
        *v = (i % 251) as u8;
    }
    let big = image(&frame[(h - 1) * w * 3..], w, h, -((w * 3) as i32), FORMAT_BGR24);
    let (st, msg) = run_status(s.0, &big);
    assert_eq!(st, ST_OK, "8000x8000 bottom-up BGR: {msg}");
    drop(frame);
    let after_call = rss_after_trim();
    let raw = s.0;
    std::mem::forget(s);
    assert_eq!(unsafe { seg_free(raw) } as i32, ST_OK);
    let after_free = rss_after_trim();
    let mb = |v: u64| v as f64 / 1e6;
    println!(
        "RSS (after malloc_trim): {:.1} MB before, {:.1} MB after one 8000x8000 bottom-up run (+{:.1} MB), {:.1} MB after seg_free (+{:.1} MB); allowed +{:.1} MB",
        mb(before),
        mb(after_call),
        mb(after_call.saturating_sub(before)),
        mb(after_free),
        mb(after_free.saturating_sub(before)),
        mb(ALLOWED)
    );
    assert!(
        after_call.saturating_sub(before) < ALLOWED,
        "the calling thread kept {:.1} MB after the call",
        mb(after_call.saturating_sub(before))
    );
    assert!(after_free.saturating_sub(before) < ALLOWED, "{:.1} MB kept after seg_free", mb(after_free.saturating_sub(before)));
}

// =====================================================================================================
// 6. ONNX Runtime writes nothing to the host's stderr; its messages reach the log callback.
// =====================================================================================================

static LOG: Mutex<Vec<(i32, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn collect(level: i32, message: *const c_char, _user_data: *mut c_void) {
    let text = CStr::from_ptr(message).to_string_lossy().into_owned();
    LOG.lock().unwrap_or_else(|p| p.into_inner()).push((level, text));
}

/// Points fds 1 and 2 at files while `f` runs; returns what was written to each.
fn capture_stdout_stderr<T>(f: impl FnOnce() -> T) -> (T, Vec<u8>, Vec<u8>) {
    let dir = tmp_dir("fd");
    let (p1, p2) = (dir.join("stdout"), dir.join("stderr"));
    let (f1, f2) = (std::fs::File::create(&p1).unwrap(), std::fs::File::create(&p2).unwrap());
    use std::os::fd::AsRawFd;
    let (saved1, saved2) = unsafe { (libc::dup(1), libc::dup(2)) };
    assert!(saved1 >= 0 && saved2 >= 0);
    unsafe {
        libc::dup2(f1.as_raw_fd(), 1);
        libc::dup2(f2.as_raw_fd(), 2);
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    unsafe {
        libc::dup2(saved1, 1);
        libc::dup2(saved2, 2);
        libc::close(saved1);
        libc::close(saved2);
    }
    let r = r.unwrap_or_else(|p| std::panic::resume_unwind(p));
    (r, std::fs::read(&p1).unwrap(), std::fs::read(&p2).unwrap())
}

/// Unguarded, the run failed with SEG_INFERENCE_FAILED as it should, but ONNX Runtime also wrote a
/// coloured "[E:onnxruntime:...] Non-zero status code returned while running Reshape node ..." line
/// to fd 2.
#[test]
fn onnx_runtime_errors_reach_the_log_callback_not_stderr() {
    let name = "onnx_runtime_errors_reach_the_log_callback_not_stderr";
    if let Some(child) = isolate(name, None, Duration::from_secs(120)) {
        return child.assert_passed();
    }
    assert_eq!(unsafe { seg_set_log_callback(Some(collect), ptr::null_mut()) } as i32, ST_OK);
    let px = vec![0x80u8; 64 * 64 * 3];
    let ((created, run), out, err) = capture_stdout_stderr(|| {
        let s = create(&model("test/run_fails_reshape.onnx"), None);
        let run = s.as_ref().ok().map(|s| run_status(s.0, &image(&px, 64, 64, 0, FORMAT_BGR24)));
        (s.map(|_| ()), run)
    });
    let log = std::mem::take(&mut *LOG.lock().unwrap());
    println!("create: {created:?}; run: {run:?}");
    println!("log callback received {} messages:", log.len());
    for (level, m) in &log {
        println!("  [{level}] {m}");
    }
    println!("bytes written to fd 1: {}: {:?}", out.len(), String::from_utf8_lossy(&out));
    println!("bytes written to fd 2: {}: {:?}", err.len(), String::from_utf8_lossy(&err));
    created.expect("run_fails_reshape.onnx loads");
    let (st, msg) = run.unwrap();
    assert_ne!(st, ST_OK, "precondition: the Reshape must fail inside ONNX Runtime");
    assert!(msg.contains("Reshape"), "precondition: the run fails in ONNX Runtime's Reshape: {msg}");
    assert!(err.is_empty(), "segrt/ONNX Runtime wrote {} bytes to stderr: {:?}", err.len(), String::from_utf8_lossy(&err));
    assert!(out.is_empty(), "segrt/ONNX Runtime wrote {} bytes to stdout: {:?}", out.len(), String::from_utf8_lossy(&out));
    assert!(log.iter().any(|(l, m)| *l == LOG_ERROR && m.contains("Reshape")), "ONNX Runtime's message must reach the callback: {log:?}");
}

// =====================================================================================================
// 7. The log callback may call segrt.
// =====================================================================================================

thread_local! {
    static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
static INNER_STATUSES: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// A callback that makes a failing segrt call (once per message, not recursively).
unsafe extern "C" fn fail_inside(_level: i32, _message: *const c_char, _user_data: *mut c_void) {
    if IN_CALLBACK.with(|c| c.replace(true)) {
        return;
    }
    let st = info_status(ptr::null_mut()); // SEG_INVALID_HANDLE: "session handle is NULL"
    INNER_STATUSES.lock().unwrap_or_else(|p| p.into_inner()).push(st);
    IN_CALLBACK.with(|c| c.set(false));
}

/// Unguarded, the outer seg_last_error became the callback's "session handle is NULL", after a failed
/// call and after a successful one.
#[test]
fn a_failing_call_inside_the_log_callback_keeps_the_outer_last_error() {
    let name = "a_failing_call_inside_the_log_callback_keeps_the_outer_last_error";
    if let Some(child) = isolate(name, None, Duration::from_secs(120)) {
        return child.assert_passed();
    }
    // A first failure, with no callback: the thread's last error names first.onnx.
    let (st, _, _) = create_raw(Path::new("/no/such/first.onnx"));
    assert_eq!(st, ST_MODEL_NOT_FOUND);
    assert!(last_error().contains("first.onnx"));
    assert_eq!(unsafe { seg_set_log_callback(Some(fail_inside), ptr::null_mut()) } as i32, ST_OK);

    // A successful call whose "created" message runs the callback: successes do not change the last error.
    let (st, msg, _) = create_raw(&model("demo_unet.onnx"));
    assert_eq!(st, ST_OK, "{msg}");
    let after_success = last_error();
    // A failed call: its own message, not the callback's.
    let (st, after_failure, _) = create_raw(Path::new("/no/such/outer.onnx"));
    assert_eq!(st, ST_MODEL_NOT_FOUND);
    unsafe { seg_set_log_callback(None, ptr::null_mut()) };

    let inner = std::mem::take(&mut *INNER_STATUSES.lock().unwrap());
    println!("callback's own calls returned {inner:?}");
    println!("last error after a successful seg_create: {after_success:?}");
    println!("last error after seg_create(\"/no/such/outer.onnx\"): {after_failure:?}");
    assert!(inner.len() >= 2, "the callback must have run for both calls: {inner:?}");
    assert!(after_failure.contains("outer.onnx"), "the outer call's last error was replaced by: {after_failure}");
    assert!(after_success.contains("first.onnx"), "a successful call's callback replaced the last error by: {after_success}");
}

static FREED_IN_CALLBACK: Mutex<Vec<(usize, i32)>> = Mutex::new(Vec::new());
static SAW_CREATED: AtomicBool = AtomicBool::new(false);

/// A callback that frees every handle named in a "... session 0x... created" message.
unsafe extern "C" fn free_what_is_created(_level: i32, message: *const c_char, _user_data: *mut c_void) {
    let text = CStr::from_ptr(message).to_string_lossy();
    if !text.contains("created") {
        return;
    }
    let Some(at) = text.find("session 0x") else { return };
    let hex: String = text[at + "session 0x".len()..].chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    let Ok(id) = usize::from_str_radix(&hex, 16) else { return };
    SAW_CREATED.store(true, Ordering::SeqCst);
    let st = seg_free(id as *mut SegSession) as i32;
    FREED_IN_CALLBACK.lock().unwrap_or_else(|p| p.into_inner()).push((id, st));
}

/// Unguarded, the callback's seg_free succeeded, seg_create still returned SEG_OK with that handle,
/// and seg_session_info on it gave SEG_INVALID_HANDLE.
#[test]
fn a_handle_freed_by_the_log_callback_is_never_returned_as_ok() {
    let name = "a_handle_freed_by_the_log_callback_is_never_returned_as_ok";
    if let Some(child) = isolate(name, None, Duration::from_secs(120)) {
        return child.assert_passed();
    }
    assert_eq!(unsafe { seg_set_log_callback(Some(free_what_is_created), ptr::null_mut()) } as i32, ST_OK);
    let p = cstr(model("demo_unet.onnx").to_str().unwrap());
    let mut s: *mut SegSession = ptr::null_mut();
    let st = unsafe { seg_create(p.as_ptr(), ptr::null(), &mut s) } as i32;
    let msg = if st == ST_OK { String::new() } else { last_error() };
    unsafe { seg_set_log_callback(None, ptr::null_mut()) };
    let freed = std::mem::take(&mut *FREED_IN_CALLBACK.lock().unwrap());
    println!("seg_create -> {st} {} handle {:#x}; the callback's seg_free calls: {freed:x?} {msg}", status_name(st), s as usize);
    assert!(SAW_CREATED.load(Ordering::SeqCst), "no \"session 0x... created\" message reached the callback");
    if st == ST_OK {
        let info = info_status(s);
        assert_eq!(
            info,
            ST_OK,
            "seg_create returned SEG_OK with handle {:#x}, which is not live (the callback freed it): {}",
            s as usize,
            last_error()
        );
        assert_eq!(unsafe { seg_free(s) } as i32, ST_OK);
    } else {
        assert!(s.is_null(), "out_session written on failure");
    }
}

// =====================================================================================================
// 8. A wrong ort_path after ONNX Runtime is loaded is reported.
// =====================================================================================================

/// Unguarded, every wrong path returned SEG_OK (only a warning reached a log callback), and seg_create
/// with another ort_path succeeded.
#[test]
fn a_different_ort_path_after_loading_is_refused() {
    let name = "a_different_ort_path_after_loading_is_refused";
    if let Some(child) = isolate(name, None, Duration::from_secs(120)) {
        return child.assert_passed();
    }
    assert_eq!(unsafe { seg_runtime_init(ptr::null()) } as i32, ST_OK, "{}", last_error());
    let version = version_text();
    let loaded = version.split(" loaded from ").nth(1).unwrap_or_else(|| panic!("no path in {version}")).trim().to_string();
    println!("{version}");
    let mut problems = Vec::new();
    let refused = |st: i32| st == ST_RUNTIME_INIT_FAILED || st == ST_INVALID_ARGUMENT;
    for wrong in ["/nonexistent/libonnxruntime.so.1.31.1", "relative/path.so"] {
        let c = cstr(wrong);
        let st = unsafe { seg_runtime_init(c.as_ptr()) } as i32;
        let msg = if st == ST_OK { String::new() } else { last_error() };
        println!("seg_runtime_init({wrong:?}) after loading -> {st} {} {msg}", status_name(st));
        if !refused(st) {
            problems.push(format!("seg_runtime_init({wrong:?}) -> {st} {}", status_name(st)));
        }
    }
    let same = cstr(&loaded);
    let st = unsafe { seg_runtime_init(same.as_ptr()) } as i32;
    if st != ST_OK {
        problems.push(format!("seg_runtime_init(the loaded path {loaded}) -> {st}: {}", last_error()));
    }
    let st = unsafe { seg_runtime_init(ptr::null()) } as i32;
    if st != ST_OK {
        problems.push(format!("seg_runtime_init(NULL) -> {st}: {}", last_error()));
    }

    let other = "/nonexistent/other/libonnxruntime.so.1.31.1";
    let c = cstr(other);
    let mut o = default_options();
    o.ort_path = c.as_ptr();
    match create(&model("demo_unet.onnx"), Some(&o)) {
        Ok(_) => problems.push(format!("seg_create with ort_path {other} -> SEG_OK")),
        Err((st, msg)) => {
            println!("seg_create with ort_path {other} -> {} {msg}", st as i32);
            if !(msg.contains(other) && msg.contains(&loaded)) {
                problems.push(format!("seg_create with ort_path {other}: the message must name both paths: {msg}"));
            }
        }
    }
    // The same path as loaded stays accepted by seg_create.
    o.ort_path = same.as_ptr();
    if let Err(e) = create(&model("demo_unet.onnx"), Some(&o)) {
        problems.push(format!("seg_create with the loaded ort_path: {e:?}"));
    }
    for p in &problems {
        println!("  {p}");
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

// =====================================================================================================
// 9. The memory a session costs: reported as the pool figures of seg_session_info
//    (`bytes_first_session`, `bytes_per_extra_session`), which tests/unet_c_abi.rs checks.
// =====================================================================================================
