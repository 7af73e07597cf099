//! Folder commands as array jobs: a deterministic shard of the inputs (`--shard K/N`, the same on
//! every machine: by a hash of each input's file name), one JSON-lines record per input (status,
//! times, outputs, and its annotations), and a resume that skips the inputs a record says are done
//! and whose outputs are all there. Every output is written to a temporary name and renamed, and the
//! record comes after the renames: a killed run leaves whole files and a log of what is whole.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::files::file_name;
use crate::CliResult;

#[derive(clap::Args, Clone, Default)]
pub struct BatchArgs {
    /// Process only shard K of N (1 <= K <= N): the inputs whose file name hashes to K, the same on
    /// every machine (a Slurm array task's or Kubernetes Job index's share of a folder)
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Skip the inputs the log records as done whose outputs are all there (after a killed or failed
    /// run); the others, failed ones included, are done again
    #[arg(long)]
    pub resume: bool,
    /// The JSON-lines log, one record per input [default: segrt-log.jsonl in the output folder, with
    /// .shard-K-of-N before .jsonl for a shard]
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

/// Shard K of N (K from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: u64,
    pub n: u64,
}

impl Shard {
    pub fn parse(s: &str) -> CliResult<Shard> {
        let bad = || format!("--shard '{s}': expected K/N with 1 <= K <= N, e.g. 3/8");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u64, u64) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if k == 0 || n == 0 || k > n {
            return Err(bad().into());
        }
        Ok(Shard { k, n })
    }
    /// Does this shard take the input? By its file name (not its folder), so that machines mounting
    /// the archive at different places agree.
    pub fn takes(&self, input: &Path) -> bool {
        xxhash_rust::xxh3::xxh3_64(file_name(input).as_bytes()) % self.n == self.k - 1
    }
    /// `.shard-K-of-N`, for file names.
    pub fn suffix(&self) -> String {
        format!(".shard-{}-of-{}", self.k, self.n)
    }
}

/// A batch run's state: which inputs to do, the log, the records of earlier runs.
pub struct Batch {
    pub shard: Option<Shard>,
    pub log_path: PathBuf,
    /// Records of earlier runs that are done (status ok, outputs present), by input.
    pub done: HashMap<String, Value>,
    log: Option<std::fs::File>,
}

impl Batch {
    /// Whether any batch flag was given (otherwise the command runs as before, without a log).
    pub fn wanted(args: &BatchArgs) -> bool {
        args.shard.is_some() || args.resume || args.log.is_some()
    }

    /// Opens the log in `out_dir` (or `--log`): a new one, or with `--resume` the existing one, read.
    pub fn start(args: &BatchArgs, out_dir: &Path) -> CliResult<Batch> {
        let shard = args.shard.as_deref().map(Shard::parse).transpose()?;
        let log_path =
            args.log.clone().unwrap_or_else(|| out_dir.join(format!("segrt-log{}.jsonl", shard.map(|s| s.suffix()).unwrap_or_default())));
        let mut done = HashMap::new();
        if log_path.exists() {
            if !args.resume {
                return Err(format!(
                    "{} exists: add --resume to continue that run (its finished inputs are skipped), or remove it",
                    log_path.display()
                )
                .into());
            }
            let text = std::fs::read_to_string(&log_path).map_err(|e| format!("cannot read {}: {e}", log_path.display()))?;
            // A run killed while writing leaves a partial last line: it is skipped, its input redone.
            for record in text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
                let Some(input) = record["input"].as_str().map(str::to_string) else { continue };
                let outputs_there =
                    record["outputs"].as_array().is_some_and(|o| o.iter().all(|p| p.as_str().is_some_and(|p| Path::new(p).is_file())));
                if record["status"] == "ok" && outputs_there {
                    done.insert(input, record);
                } else {
                    done.remove(&input);
                }
            }
        }
        if let Some(dir) = log_path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("cannot open the log {}: {e}", log_path.display()))?;
        Ok(Batch { shard, log_path, done, log: Some(log) })
    }

    /// Is input `path` this run's to do (in the shard, and not done before)?
    pub fn todo(&self, path: &Path) -> bool {
        self.shard.is_none_or(|s| s.takes(path)) && !self.done.contains_key(&key(path))
    }

    /// Is input `path` in this run's shard at all?
    pub fn in_shard(&self, path: &Path) -> bool {
        self.shard.is_none_or(|s| s.takes(path))
    }

    /// Appends one input's record: one line, written at once and flushed.
    pub fn record(&mut self, path: &Path, mut record: Value) -> CliResult {
        record["input"] = json!(key(path));
        if let Some(s) = self.shard {
            record["shard"] = json!(format!("{}/{}", s.k, s.n));
        }
        let mut line = serde_json::to_string(&record).map_err(|e| e.to_string())?;
        line.push('\n');
        if let Some(log) = &mut self.log {
            log.write_all(line.as_bytes())
                .and_then(|()| log.flush())
                .map_err(|e| format!("cannot write the log {}: {e}", self.log_path.display()))?;
        }
        Ok(())
    }
}

/// How an input is named in the log: its path as given.
pub fn key(path: &Path) -> String {
    path.display().to_string()
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so that the
/// file is either absent or whole (a killed run leaves at most a `.partial` file behind).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> CliResult {
    let tmp = path.with_file_name(format!(".{}.{}.partial", file_name(path), std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display()).into()
    })
}

/// Encodes an image as PNG and writes it with [`write_atomically`].
pub fn save_png<P: image::PixelWithColorType>(img: &image::ImageBuffer<P, Vec<P::Subpixel>>, path: &Path) -> CliResult
where
    [P::Subpixel]: image::EncodableLayout,
{
    let mut bytes = std::io::Cursor::new(Vec::new());
    img.write_to(&mut bytes, image::ImageFormat::Png).map_err(|e| format!("cannot encode {}: {e}", path.display()))?;
    write_atomically(path, bytes.get_ref())
}
