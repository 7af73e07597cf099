//! How long ONNX Runtime takes to build a session from the original model and from its optimised
//! graph saved in ORT format and in ONNX format (the choice `engine::cache` makes), medians of N.
//!
//! `cargo run --release --example cache_formats -- MODEL.onnx [N]`

use std::time::Instant;

use ort::session::builder::GraphOptimizationLevel as Level;
use ort::session::Session;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: cache_formats MODEL.onnx [RUNS]")?;
    let runs: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5).max(1);
    let env = segrt::runtime::environment(None)?;
    let model = std::fs::read(&path)?;
    let dir = std::env::temp_dir().join(format!("segrt-cache-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut saved = Vec::new();
    for format in ["ORT", "ONNX"] {
        let file = dir.join(format!("optimised.{}", format.to_lowercase()));
        let mut builder =
            Session::builder(env)?.with_optimized_model_path(&file)?.with_config_entry("session.save_model_format", format)?;
        let t = Instant::now();
        drop(builder.commit_from_memory(&model)?);
        println!("optimise and save as {format}: {:.1} ms, {} bytes", t.elapsed().as_secs_f64() * 1e3, std::fs::metadata(&file)?.len());
        saved.push(std::fs::read(&file)?);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let cases: [(&str, &[u8], Level, bool); 6] = [
        ("original, optimiser on (all)", &model, Level::All, false),
        ("original, optimiser off", &model, Level::Disable, false),
        ("ORT format, optimiser off", &saved[0], Level::Disable, false),
        ("ORT format, off, bytes directly", &saved[0], Level::Disable, true),
        ("ORT format, optimiser on", &saved[0], Level::All, false),
        ("optimised ONNX, optimiser off", &saved[1], Level::Disable, false),
    ];
    let mut times = vec![Vec::new(); cases.len()];
    // Cases alternate within each round, so all see the same machine.
    for _ in 0..runs {
        for (i, (_, bytes, level, direct)) in cases.iter().enumerate() {
            let mut builder = Session::builder(env)?.with_optimization_level(*level)?;
            if *direct {
                builder = builder.with_config_entry("session.use_ort_model_bytes_directly", "1")?;
            }
            let t = Instant::now();
            drop(builder.commit_from_memory(bytes)?);
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    for ((name, ..), mut v) in cases.iter().zip(times) {
        v.sort_by(|a, b| a.total_cmp(b));
        println!("{name:<34} median {:>8.1} ms over {runs}", v[v.len() / 2]);
    }
    Ok(())
}
