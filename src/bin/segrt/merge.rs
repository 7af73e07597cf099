//! `segrt merge`: the COCO files of a run's shards joined into one, equal to what one run over all
//! the inputs writes: image ids are the inputs' places in the whole (sorted) input list in every
//! shard, so images keep their ids; annotations are numbered again from 1 in image order.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::annotate::formats::{coco_document, Category};
use crate::batch::write_atomically;
use crate::CliResult;

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The merged COCO file to write
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Replace --out if it exists
    #[arg(long)]
    overwrite: bool,
    /// The shards' COCO files (coco.shard-K-of-N.json), in any order
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

pub fn merge(args: MergeArgs) -> CliResult {
    if args.out.exists() && !args.overwrite {
        return Err(format!("{} exists: segrt does not overwrite it; remove it or add --overwrite", args.out.display()).into());
    }
    let mut categories: Option<(Value, PathBuf)> = None;
    let mut description: Option<String> = None;
    let mut images: BTreeMap<u64, (Value, Vec<Value>)> = BTreeMap::new();
    for path in &args.inputs {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
        let bad = |what: &str| format!("{}: not a COCO file segrt wrote ({what})", path.display());
        match &categories {
            None => categories = Some((doc["categories"].clone(), path.clone())),
            Some((c, first)) if *c != doc["categories"] => {
                return Err(
                    format!("{} and {} have different categories: shards of one run share them", first.display(), path.display()).into()
                )
            }
            Some(_) => {}
        }
        description = description.or_else(|| doc["info"]["description"].as_str().map(str::to_string));
        let mut by_image: BTreeMap<u64, Vec<Value>> = BTreeMap::new();
        for a in doc["annotations"].as_array().ok_or_else(|| bad("no annotations list"))? {
            let id = a["image_id"].as_u64().ok_or_else(|| bad("an annotation without image_id"))?;
            let mut a = a.clone();
            if let Some(o) = a.as_object_mut() {
                o.remove("id");
                o.remove("image_id");
            }
            by_image.entry(id).or_default().push(a);
        }
        for image in doc["images"].as_array().ok_or_else(|| bad("no images list"))? {
            let id = image["id"].as_u64().ok_or_else(|| bad("an image without id"))?;
            let anns = by_image.remove(&id).unwrap_or_default();
            if let Some((other, _)) = images.get(&id) {
                if *other != *image {
                    return Err(format!(
                        "image id {id} is {} in one file and {} in {}: not shards of one run",
                        other,
                        image,
                        path.display()
                    )
                    .into());
                }
                // The same image in two files (a shard merged twice): keep one copy.
                continue;
            }
            images.insert(id, (image.clone(), anns));
        }
    }
    let categories: Vec<Category> = categories
        .map(|(c, _)| c)
        .and_then(|c| c.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|c| Category { id: c["id"].as_u64().unwrap_or(0) as u32, name: c["name"].as_str().unwrap_or("").to_string() })
        .collect();
    let command = description.as_deref().and_then(|d| d.strip_prefix("segrt ")).unwrap_or("merge").to_string();
    let parts: Vec<(Value, Vec<Value>)> = images.into_values().collect();
    let doc = coco_document(&command, &categories, &parts);
    write_atomically(&args.out, serde_json::to_string(&doc).map_err(|e| e.to_string())?.as_bytes())?;
    note!(
        "merged {} files: {} images, {} annotations -> {}",
        args.inputs.len(),
        parts.len(),
        doc["annotations"].as_array().map_or(0, Vec::len),
        args.out.display()
    );
    Ok(())
}
