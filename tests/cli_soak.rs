//! `segrt soak` end to end: the files it writes, its leak verdict on this build ("no growth") and on a
//! build that leaks a few KB per C-ABI call ("grows", with the fault-injection feature: the `faults`
//! stage), Ctrl+C and a disk that fills up.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("segrt-soak-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tiny SAM2 pair's clicks: a hundred calls a second or more, so a leak per call adds up quickly.
fn sam2_clicks(out: &Path, calls: &str) -> Vec<String> {
    let sam = sam2_dir();
    [
        "soak",
        "--encoder",
        sam.join("sam2_tiny_samexporter_encoder.onnx").to_str().unwrap(),
        "--decoder",
        sam.join("sam2_tiny_samexporter_decoder.onnx").to_str().unwrap(),
        "--mix",
        "sam2",
        "--clicks",
        "20",
        "--prompts",
        "0",
        "--calls",
        calls,
        "--interval",
        "0.25",
        // The library's warm-up (its arenas, the allocator) ends within the first few hundred calls.
        "--warmup",
        "30",
        // A run of seconds sees the allocator step up by a few hundred KB now and then (intervals up to
        // 0.7 MiB per 1000 calls seen here): the limit lies between that and the injected leak (3.9).
        "--max-growth",
        "1.5",
        "--out",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .into()
}

fn soak(args: &[String], leak_bytes: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_segrt"));
    cmd.args(args);
    match leak_bytes {
        Some(n) => cmd.env("SEGRT_INJECT_LEAK_BYTES", n),
        None => cmd.env_remove("SEGRT_INJECT_LEAK_BYTES"),
    };
    cmd.output().unwrap()
}

fn report(out: &Path) -> String {
    std::fs::read_to_string(out.join("report.md")).unwrap()
}

fn verdict(report: &str) -> &str {
    report.lines().find_map(|l| l.strip_prefix("**Leak verdict:** ")).unwrap_or_else(|| panic!("no verdict in:\n{report}"))
}

/// This build, 10000 clicks of one operator: flat memory, so "no growth", exit 0, and every file
/// written. (At 5000 calls, 9 s, a loaded CI machine once left the trend's interval across the limit:
/// "not decided". Twice the calls give twice the span and the samples, so about a third of the width.)
#[test]
fn the_real_build_is_judged_no_growth_and_writes_csv_plots_and_report() {
    let out = tmp("no-growth");
    let run = soak(&sam2_clicks(&out, "10000"), None);
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    assert!(run.status.success(), "{stdout}\n{stderr}");
    let report = report(&out);
    println!("{}", verdict(&report));
    assert!(verdict(&report).starts_with("no growth"), "{report}\n{stderr}");
    assert!(report.contains("| avg per call | p99 per call | peak memory | peak GPU memory | calls | failures | uptime |"), "{report}");
    assert!(report.contains("| 10000 | 0 | 100.00 % of"), "{report}");
    assert!(report.contains("GPU memory: n/a: the models run on the CPU"), "{report}");
    assert!(stdout.contains("segrt soak: held after"), "{stdout}");
    // No images given: the bundled samples stand in, and both the run and its report say so.
    assert!(stderr.contains("soak: no images given: the bundled samples in "), "{stderr}");
    assert!(report.contains("- images: 6 bundled samples (no images given) ("), "{report}");

    // One CSV row per interval, each with the process's figures and the interval's calls.
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let header = &rows[0];
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    assert!(rows.len() > 10, "{csv}");
    let last = rows.last().unwrap();
    assert_eq!(last[col("calls_total")], "10000");
    assert_eq!(rows[1..].iter().map(|r| r[col("calls")].parse::<u64>().unwrap()).sum::<u64>(), 10000);
    for name in ["resident_mib", "private_mib", "peak_mib", "threads", "handles", "click_p99_ms"] {
        assert!(last[col(name)].parse::<f64>().unwrap() > 0.0, "{name}: {last:?}");
    }
    assert_eq!(std::fs::read_to_string(out.join("failures.csv")).unwrap().lines().count(), 1, "only the header");
    for png in ["memory.png", "latency.png"] {
        let img = image::open(out.join(png)).unwrap_or_else(|e| panic!("{png}: {e}"));
        assert_eq!((img.width(), img.height()), (960, 480));
        assert!(report.contains(&format!("]({png})")), "{report}");
    }
}

/// The test build that leaks 4 KB per C-ABI call: "grows" by about 4 MiB per 1000 calls, exit 1.
#[cfg(feature = "fault-injection")]
#[test]
fn a_build_leaking_4_kb_per_call_is_judged_grows() {
    let out = tmp("leak");
    let run = soak(&sam2_clicks(&out, "5000"), Some("4096"));
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    assert_eq!(run.status.code(), Some(1), "{stdout}\n{stderr}");
    let report = report(&out);
    let verdict = verdict(&report);
    println!("{verdict}");
    assert!(verdict.starts_with("grows "), "{report}");
    // 4096 bytes per call are 3.9 MiB per 1000 calls; the heap's free room takes some at first (the
    // leaked blocks fill holes other calls left), the allocator's own steps add some: 1.9 to 4.9 seen
    // on a loaded machine. "Grows" already puts the whole interval above the limit (1.5); the upper
    // bound catches a figure in the wrong unit.
    let slope: f64 = verdict["grows ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!((1.5..7.0).contains(&slope), "{verdict}");
    assert!(report.contains("**Did not hold**"), "{report}");
    assert!(stderr.contains("segrt: error: the run did not hold: memory grows"), "{stderr}");
}

/// Ctrl+C stops the run; the report is written all the same and says so.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_run_and_the_report_is_still_written() {
    let out = tmp("ctrl-c");
    let mut args = sam2_clicks(&out, "100000000");
    args.extend(["--minutes", "10"].map(String::from));
    let child = Command::new(env!("CARGO_BIN_EXE_segrt"))
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Until the first interval is on the disk (the sessions are built, calls are running).
    let csv = out.join("intervals.csv");
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&csv).map_or(0, |c| c.lines().count()) < 3 {
        assert!(start.elapsed().as_secs() < 120, "no interval written in 2 minutes");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // SAFETY: a signal to our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let run = child.wait_with_output().unwrap();
    let stderr = text(&run.stderr);
    assert!(stderr.contains("Ctrl+C: finishing the calls in flight"), "{stderr}");
    assert!(report(&out).contains("(stopped with Ctrl+C; planned: 10 min 00 s or 100000000 calls)"), "{}", report(&out));
    // Too short for a memory verdict, and no call failed: no limit exceeded, exit 0.
    assert!(run.status.success(), "{}\n{stderr}", text(&run.stdout));
}

/// A disk that fills up (a file-size limit here: the same write error) stops sampling with one clear
/// message and a non-zero exit, not a crash; the rows written before stay.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_stops_sampling_with_a_clear_message() {
    let out = tmp("disk-full");
    let args = sam2_clicks(&out, "100000000");
    // 4 blocks of 512 bytes per file; SIGXFSZ ignored, so writes past it fail with EFBIG as on a full disk.
    let script = "trap '' XFSZ; ulimit -f 4; exec \"$0\" \"$@\"";
    let run =
        Command::new("bash").arg("-c").arg(script).arg(env!("CARGO_BIN_EXE_segrt")).args(&args).arg("--minutes").arg("5").output().unwrap();
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let csv = out.join("intervals.csv");
    assert!(stderr.contains(&format!("segrt: error: cannot write {}: File too large", csv.display())), "{stderr}");
    assert!(stderr.contains("sampling stopped there, and with it the run (the disk may be full)"), "{stderr}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.lines().count() >= 3, "the intervals before stay: {rows}");
}

#[test]
fn mistakes_are_one_line_each() {
    let unet = model("demo_unet.onnx");
    let unet = unet.to_str().unwrap();
    let empty = tmp("empty-folder");
    let empty_text = format!("no image files in {} (PNG, JPEG, BMP, TIFF, ...): the unet and sam2 jobs need some", empty.display());
    for (args, says) in [
        // An image folder left empty (photos not fetched) is refused, never replaced by the samples.
        (vec!["soak", "--unet", unet, "--calls", "5", empty.to_str().unwrap()], empty_text.as_str()),
        (vec!["soak", "--unet", unet], "give how long to run: --hours H, --minutes M or --calls N"),
        (vec!["soak", "--minutes", "1"], "give the models to run"),
        (vec!["soak", "--unet", unet, "--minutes", "1", "--mix", "unet=1,track=1"], "--mix has the track job: give --video"),
        (vec!["soak", "--unet", unet, "--calls", "5", "--mix", "unet=1,cats=2"], "unknown job 'cats'"),
        (vec!["soak", "--unet", unet, "--calls", "5", "--threads", "0"], "--threads: from 1 to 256"),
    ] {
        let run = Command::new(env!("CARGO_BIN_EXE_segrt")).args(&args).output().unwrap();
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says) && stderr.lines().count() == 1, "{args:?}: {stderr}");
    }
}
