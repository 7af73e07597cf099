//! The CLI as a batch annotator: `--annotations coco,labelme,yolo-seg` on `sam2`, `track` and
//! `unet` writes the objects of every mask as COCO (one file for the run), LabelMe (one JSON per
//! image) and YOLO-seg (one text per image, and classes.txt). Existing files are not overwritten
//! unless `--overwrite` says so (or `--resume` redoes the input they belong to).

pub mod formats;
pub mod objects;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::batch::{write_atomically, Shard};
use crate::CliResult;
use formats::Category;
use objects::{Object, Shapes};

#[derive(clap::Args, Clone, Default)]
pub struct AnnotateArgs {
    /// Also write annotation files: coco, labelme, yolo-seg (comma-separated or repeated)
    #[arg(long, value_name = "FORMATS", value_delimiter = ',', value_parser = ["coco", "labelme", "yolo-seg"])]
    pub annotations: Vec<String>,
    /// Folder for the annotation files [default: the output folder (sam2 with one image: --out's folder)]
    #[arg(long, value_name = "DIR")]
    pub annotations_dir: Option<PathBuf>,
    /// Category names, one per line: unet class 1 (a binary model's foreground), 2, ... in order;
    /// sam2 and track objects take the first [default: "object", or "class_K"]
    #[arg(long, value_name = "FILE")]
    pub classes: Option<PathBuf>,
    /// Polygon simplification: no outline pixel farther than this from its polygon (pixels, as
    /// OpenCV's approxPolyDP epsilon; 0 = every border pixel)
    #[arg(long, default_value_t = 1.0, value_name = "PX", allow_negative_numbers = true)]
    pub polygon_tolerance: f64,
    /// Parts of fewer pixels get no polygon (COCO's RLE keeps every pixel)
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub min_part_area: u64,
    /// COCO segmentations as polygons (outer outlines; holes are lost) instead of RLE
    #[arg(long)]
    pub coco_polygons: bool,
    /// Replace annotation files that exist
    #[arg(long)]
    pub overwrite: bool,
}

/// Writes the annotation files of a run.
pub struct Annotator {
    command: &'static str,
    coco: bool,
    labelme: bool,
    yolo: bool,
    dir: PathBuf,
    pub categories: Vec<Category>,
    pub shapes: Shapes,
    coco_polygons: bool,
    overwrite: bool,
    coco_path: PathBuf,
    /// (image, annotations) for the COCO file.
    images: Vec<(Value, Vec<Value>)>,
}

/// The category names of `--classes` (one per non-empty line), if given.
fn class_names(args: &AnnotateArgs) -> CliResult<Option<Vec<String>>> {
    let Some(path) = &args.classes else { return Ok(None) };
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read --classes {}: {e}", path.display()))?;
    let names: Vec<String> = text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect();
    if names.is_empty() {
        return Err(format!("--classes {}: no names in it (one per line)", path.display()).into());
    }
    Ok(Some(names))
}

/// Categories 1..=count, named from `--classes` (which must name them all) or `class_K` (one
/// category: "object").
pub fn categories(args: &AnnotateArgs, count: usize) -> CliResult<Vec<Category>> {
    let names = class_names(args)?;
    if let Some(n) = &names {
        if n.len() < count {
            return Err(format!("--classes: {} name(s) for {count} classes", n.len()).into());
        }
    }
    Ok((1..=count)
        .map(|k| Category {
            id: k as u32,
            name: match &names {
                Some(n) => n[k - 1].clone(),
                None if count == 1 => "object".to_string(),
                None => format!("class_{k}"),
            },
        })
        .collect())
}

impl Annotator {
    /// None without `--annotations`. `default_dir` is where files go without `--annotations-dir`.
    pub fn start(
        args: &AnnotateArgs,
        command: &'static str,
        default_dir: &Path,
        categories: Vec<Category>,
        shard: Option<Shard>,
    ) -> CliResult<Option<Annotator>> {
        if args.annotations.is_empty() {
            return Ok(None);
        }
        if !args.polygon_tolerance.is_finite() || args.polygon_tolerance < 0.0 {
            return Err(format!("--polygon-tolerance {}: a number of pixels >= 0", args.polygon_tolerance).into());
        }
        let dir = args.annotations_dir.clone().unwrap_or_else(|| default_dir.to_path_buf());
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let has = |f: &str| args.annotations.iter().any(|a| a == f);
        let coco_path = dir.join(format!("coco{}.json", shard.map(|s| s.suffix()).unwrap_or_default()));
        let a = Annotator {
            command,
            coco: has("coco"),
            labelme: has("labelme"),
            yolo: has("yolo-seg"),
            dir,
            categories,
            shapes: Shapes { tolerance: args.polygon_tolerance, min_part_area: args.min_part_area },
            coco_polygons: args.coco_polygons,
            overwrite: args.overwrite,
            coco_path,
            images: Vec::new(),
        };
        if a.coco {
            a.refuse_existing(&a.coco_path, false)?;
        }
        Ok(Some(a))
    }

    fn refuse_existing(&self, path: &Path, redo: bool) -> CliResult {
        if path.exists() && !self.overwrite && !redo {
            return Err(
                format!("{} exists: segrt does not overwrite annotation files; remove it or add --overwrite", path.display()).into()
            );
        }
        Ok(())
    }

    /// The per-image files input `name` would get (LabelMe JSON, YOLO text).
    pub fn image_files(&self, name: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if self.labelme {
            out.push(self.dir.join(format!("{name}.json")));
        }
        if self.yolo {
            out.push(self.dir.join(format!("{name}.txt")));
        }
        out
    }

    /// Refuses, before any work, per-image files that exist and would be overwritten (`redo`: the
    /// input is being done again after a killed run, its files may be replaced).
    pub fn check_image(&self, name: &str, redo: bool) -> CliResult {
        for f in self.image_files(name) {
            self.refuse_existing(&f, redo)?;
        }
        Ok(())
    }

    /// Writes one image's LabelMe and YOLO files and keeps its COCO entries. Returns the files
    /// written and the image's COCO part (for the batch log).
    pub fn add(&mut self, id: u64, image: &Path, name: &str, size: (usize, usize), objects: &[Object]) -> CliResult<(Vec<PathBuf>, Value)> {
        let (w, h) = size;
        let mut written = Vec::new();
        if self.labelme {
            let path = self.dir.join(format!("{name}.json"));
            let doc = formats::labelme(&formats::relative_to(image, &self.dir), w, h, objects, &self.categories);
            write_atomically(&path, serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?.as_bytes())?;
            written.push(path);
        }
        if self.yolo {
            let path = self.dir.join(format!("{name}.txt"));
            write_atomically(&path, formats::yolo(w, h, objects, &self.categories).as_bytes())?;
            written.push(path);
        }
        let entry = json!({"id": id, "file_name": crate::files::file_name(image), "width": w, "height": h});
        let anns: Vec<Value> = objects.iter().map(|o| formats::coco_annotation(o, self.coco_polygons)).collect();
        let part = json!({"image": entry, "annotations": anns});
        self.images.push((entry, anns));
        Ok((written, part))
    }

    /// An image done by an earlier run (from its log record): into the COCO file as it was.
    pub fn restore(&mut self, part: &Value) {
        if let (Some(image), Some(anns)) = (part.get("image"), part.get("annotations").and_then(Value::as_array)) {
            self.images.push((image.clone(), anns.clone()));
        }
    }

    /// Writes the COCO file and YOLO's classes.txt; returns a line saying what was written.
    pub fn finish(self) -> CliResult<String> {
        let mut what = Vec::new();
        if self.coco {
            let doc = formats::coco_document(self.command, &self.categories, &self.images);
            let n = doc["annotations"].as_array().map_or(0, Vec::len);
            write_atomically(&self.coco_path, serde_json::to_string(&doc).map_err(|e| e.to_string())?.as_bytes())?;
            what.push(format!("COCO {} ({} images, {n} annotations)", self.coco_path.display(), self.images.len()));
        }
        if self.labelme {
            what.push(format!("LabelMe JSON per image in {}", self.dir.display()));
        }
        if self.yolo {
            let names: String = self.categories.iter().map(|c| format!("{}\n", c.name)).collect();
            write_atomically(&self.dir.join("classes.txt"), names.as_bytes())?;
            what.push(format!("YOLO-seg text per image and classes.txt in {}", self.dir.display()));
        }
        Ok(format!("annotations: {}", what.join("; ")))
    }
}

/// The annotator of a `track` run, its frames' files checked before tracking starts.
pub fn for_track(args: &AnnotateArgs, out: &Path, names: &[String]) -> CliResult<Option<Annotator>> {
    let a = Annotator::start(args, "track", out, categories(args, 1)?, None)?;
    if let Some(a) = &a {
        for n in names {
            a.check_image(n, false)?;
        }
    }
    Ok(a)
}

/// One tracked frame: an annotation per object present on it (COCO's `track_id`, LabelMe's
/// `group_id` = the object id; score = the sigmoid of the object-score logit).
pub fn add_frame(a: &mut Annotator, fm: &segrt::sam2::video::FrameMasks, path: &Path, name: &str) -> CliResult {
    let mut found = Vec::new();
    for ob in fm.objects.iter().filter(|o| o.present) {
        let score = ob.score.map(|s| 1.0 / (1.0 + (-(s as f64)).exp()));
        let mask = segrt::contours::MaskView::new(&ob.mask, fm.width, fm.height, 0)?;
        found.extend(objects::whole(&mask, a.shapes, 1, score, Some(ob.object_id))?);
    }
    a.add(fm.frame as u64 + 1, path, name, (fm.width, fm.height), &found)?;
    Ok(())
}
