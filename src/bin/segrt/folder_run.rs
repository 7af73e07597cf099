//! One run of a folder command (`unet`, `sam2` on several images): which inputs it does (shard,
//! resume), what it writes besides masks (annotations), one log record per input, and the summary.
//! The commands keep their own segmentation; this holds what they share around it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

use crate::annotate::formats::Category;
use crate::annotate::objects::{Object, Shapes};
use crate::annotate::{AnnotateArgs, Annotator};
use crate::args::IntensityArgs;
use crate::batch::{Batch, BatchArgs};
use crate::CliResult;

/// The flags every image command (`unet`, `sam2`) takes around its own segmentation: the intensity
/// stage, annotation files, and folder runs (shard, resume).
#[derive(clap::Args, Clone, Default)]
pub struct ImageRunArgs {
    #[command(flatten)]
    pub intensity: IntensityArgs,
    #[command(flatten)]
    pub annotate: AnnotateArgs,
    #[command(flatten)]
    pub batch: BatchArgs,
}

/// What one input produced.
pub struct Done {
    /// Files written for it (masks, overlays); the annotation files are added here.
    pub outputs: Vec<PathBuf>,
    /// The image's size.
    pub size: (usize, usize),
    /// Its objects, when annotating.
    pub objects: Vec<Object>,
}

pub struct FolderRun {
    batch: Option<Batch>,
    pub annotator: Option<Annotator>,
    pub failures: usize,
    pub done: usize,
    pub skipped: usize,
}

impl FolderRun {
    /// Opens the log (resume: reads it) and the annotation files, and refuses, before any work,
    /// annotation files that exist for inputs this run will do. `inputs[i]` is image id i + 1.
    pub fn start(
        args: &ImageRunArgs,
        command: &'static str,
        out_dir: &Path,
        categories: Vec<Category>,
        inputs: &[PathBuf],
        names: &[String],
    ) -> CliResult<FolderRun> {
        let batch = if Batch::wanted(&args.batch) { Some(Batch::start(&args.batch, out_dir)?) } else { None };
        let mut annotator = Annotator::start(&args.annotate, command, out_dir, categories, batch.as_ref().and_then(|b| b.shard))?;
        let mut skipped = 0;
        for (path, name) in inputs.iter().zip(names) {
            let (in_shard, done) = match &batch {
                Some(b) => (b.in_shard(path), b.done.get(&crate::batch::key(path))),
                None => (true, None),
            };
            if !in_shard {
                continue;
            }
            match (done, &mut annotator) {
                (Some(record), Some(a)) => {
                    a.restore(&record["coco"]);
                    skipped += 1;
                }
                (Some(_), None) => skipped += 1,
                (None, Some(a)) => a.check_image(name, args.batch.resume)?,
                (None, None) => {}
            }
        }
        Ok(FolderRun { batch, annotator, failures: 0, done: 0, skipped })
    }

    /// Is this input this run's to do?
    pub fn todo(&self, path: &Path) -> bool {
        self.batch.as_ref().is_none_or(|b| b.todo(path))
    }

    /// Polygon settings when annotating.
    pub fn shapes(&self) -> Option<Shapes> {
        self.annotator.as_ref().map(|a| a.shapes)
    }

    /// Finishes input `index` (image id index + 1): writes its annotation files and its log record.
    /// A failed input is counted and recorded (a later --resume does it again); the error is returned
    /// for the command to report.
    pub fn finish_input(
        &mut self,
        index: usize,
        path: &Path,
        name: &str,
        started: Instant,
        outcome: CliResult<Done>,
    ) -> CliResult<Option<String>> {
        let (record, error) = match outcome.and_then(|mut done| {
            let coco = match &mut self.annotator {
                Some(a) => {
                    let (written, coco) = a.add(index as u64 + 1, path, name, done.size, &done.objects)?;
                    done.outputs.extend(written);
                    coco
                }
                None => Value::Null,
            };
            Ok((done, coco))
        }) {
            Ok((done, coco)) => {
                self.done += 1;
                let outputs: Vec<String> = done.outputs.iter().map(|p| p.display().to_string()).collect();
                (json!({"status": "ok", "ms": ms(started), "outputs": outputs, "objects": done.objects.len(), "coco": coco}), None)
            }
            Err(e) => {
                self.failures += 1;
                (json!({"status": "failed", "ms": ms(started), "error": e.to_string()}), Some(e.to_string()))
            }
        };
        if let Some(b) = &mut self.batch {
            b.record(path, record)?;
        }
        Ok(error)
    }

    /// Writes the COCO file; returns the lines to report.
    pub fn finish(self) -> CliResult<Vec<String>> {
        let mut lines = Vec::new();
        if let Some(b) = &self.batch {
            lines.push(format!(
                "{}{} done, {} failed, {} skipped as done before; log {}",
                b.shard.map(|s| format!("shard {}/{}: ", s.k, s.n)).unwrap_or_default(),
                self.done,
                self.failures,
                self.skipped,
                b.log_path.display()
            ));
        }
        if let Some(a) = self.annotator {
            lines.push(a.finish()?);
        }
        Ok(lines)
    }
}

fn ms(started: Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 1e4).round() / 10.0
}
