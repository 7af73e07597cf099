//! What one more pool session costs, measured with nothing else running in the process (figures,
//! not assertions): threads hold sessions idle inside calls, so the next call makes the pool build
//! another one, and the process RSS is read around it.
//!
//!   cargo run --release --example bench_extra_session -- [--only at-creation|at-first-growth|unshared] MODEL [MODEL...]
//!
//! RSS deltas are process-wide: memory freed by one pool is reused by the next, so the cleanest
//! figures come from one model and one `--only` per process.
//!
//! For each model: pools with `max_sessions = 3` saving the shared graph at creation (the second and
//! third sessions read their weights from it) and at the first growth (the second session is a full
//! build that saves it), against a pool with `max_sessions = 1` (a session built from the model, as
//! every extra session was before sharing). Times are build times; RSS is VmRSS of this process.

use std::sync::mpsc;
use std::time::Instant;

use segrt::engine::{GraphSharing, SessionPool};
use segrt::Options;

fn rss_mb() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<f64>().ok()).unwrap_or(0.0) * 4096.0 / 1e6
}

fn main() {
    let mut models: Vec<String> = std::env::args().skip(1).collect();
    let only = match models.iter().position(|a| a == "--only") {
        Some(i) if i + 1 < models.len() => {
            let what = models.remove(i + 1);
            models.remove(i);
            Some(what)
        }
        _ => None,
    };
    let wanted = |what: &str| match only.as_deref() {
        Some(o) => o == what,
        None => true,
    };
    if models.is_empty() {
        eprintln!("usage: bench_extra_session MODEL [MODEL...]");
        std::process::exit(2);
    }
    for path in models {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let name = std::path::Path::new(&path).file_name().unwrap().to_string_lossy().into_owned();
        let file_mb = bytes.len() as f64 / 1e6;
        println!("{name} ({file_mb:.1} MB)");

        for (what, sharing) in [("at-creation", GraphSharing::AtCreation), ("at-first-growth", GraphSharing::AtFirstGrowth)] {
            if wanted(what) {
                three_sessions(&bytes, file_mb, sharing);
            }
        }
        if !wanted("unshared") {
            continue;
        }

        let single = Options { max_sessions: 1, ..Options::default() };
        let (before, t) = (rss_mb(), Instant::now());
        let unshared: SessionPool<()> = SessionPool::new(bytes.clone(), None, &single, GraphSharing::AtCreation).unwrap();
        let added = rss_mb() - before;
        println!(
            "   a session built from the model (max_sessions 1, no graph): +{added:.1} MB = {:.0} % of the model file, {:.0} ms",
            100.0 * added / file_mb,
            t.elapsed().as_secs_f64() * 1e3
        );
        drop(unshared);
    }
}

/// Builds a pool of three sessions (threads hold them idle inside calls) and prints what each added.
fn three_sessions(bytes: &[u8], file_mb: f64, sharing: GraphSharing) {
    let options = Options { max_sessions: 3, ..Options::default() };
    println!("   {sharing:?}:");
    let (before, t) = (rss_mb(), Instant::now());
    let pool: SessionPool<()> = SessionPool::new(bytes.to_vec(), None, &options, sharing).unwrap();
    println!("      session 1: +{:.1} MB RSS, {:.0} ms", rss_mb() - before, t.elapsed().as_secs_f64() * 1e3);
    std::thread::scope(|s| {
        let pool = &pool;
        let mut holds = Vec::new();
        for k in 1..=3 {
            let (hold_tx, hold_rx) = mpsc::channel::<()>();
            let (ready_tx, ready_rx) = mpsc::channel::<()>();
            let (before, t) = (rss_mb(), Instant::now());
            s.spawn(move || {
                pool.with(|_, _| {
                    ready_tx.send(()).unwrap();
                    let _ = hold_rx.recv();
                    Ok(())
                })
                .unwrap()
            });
            ready_rx.recv().unwrap();
            holds.push(hold_tx);
            if k > 1 {
                let added = rss_mb() - before;
                println!(
                    "      session {k}: +{added:.1} MB = {:.0} % of the model file, {:.0} ms",
                    100.0 * added / file_mb,
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
        }
    });
    println!("      shared graph: {:?} bytes", pool.stats().shared_graph_bytes);
}
