//! The three annotation formats: COCO (one file per run: images, categories, annotations with RLE or
//! polygons), LabelMe (one JSON per image, polygons) and YOLO-seg (one text per image, normalised
//! polygons). COCO's RLE keeps holes; polygons cannot: the polygon formats carry outer outlines, one
//! polygon per part, and parts too small for a polygon (under 3 corners) are left to the RLE.

use std::path::Path;

use serde_json::{json, Value};

use segrt::contours::Point;

use super::objects::Object;

/// A category of objects.
#[derive(Clone, Debug, PartialEq)]
pub struct Category {
    pub id: u32,
    pub name: String,
}

/// The polygons worth writing: outer outlines of 3 corners or more.
fn polygons(object: &Object) -> impl Iterator<Item = &[Point]> {
    object.parts.iter().map(|p| p.outer.as_slice()).filter(|o| o.len() >= 3)
}

/// One COCO annotation, without its `id` and `image_id` (given when the file is put together).
pub fn coco_annotation(object: &Object, as_polygons: bool) -> Value {
    let segmentation = if as_polygons {
        Value::Array(polygons(object).map(|o| Value::Array(o.iter().flat_map(|p| [json!(p.x), json!(p.y)]).collect())).collect())
    } else {
        json!({"size": [object.rle.height, object.rle.width], "counts": object.rle.to_compressed()})
    };
    let mut a = json!({
        "category_id": object.category_id, "segmentation": segmentation, "area": object.area(),
        "bbox": object.bbox(), "iscrowd": 0,
    });
    if let Some(s) = object.score {
        a["score"] = json!(s);
    }
    if let Some(t) = object.track_id {
        a["track_id"] = json!(t);
    }
    a
}

/// A COCO file from its parts: images sorted by id, annotations numbered from 1 in image order (as
/// `segrt merge` numbers them, so that shards merged equal one run).
pub fn coco_document(command: &str, categories: &[Category], images: &[(Value, Vec<Value>)]) -> Value {
    let mut sorted: Vec<&(Value, Vec<Value>)> = images.iter().collect();
    sorted.sort_by_key(|(image, _)| image["id"].as_u64().unwrap_or(0));
    let mut annotations = Vec::new();
    for (image, anns) in &sorted {
        for a in anns {
            let mut a = a.clone();
            a["id"] = json!(annotations.len() + 1);
            a["image_id"] = image["id"].clone();
            annotations.push(a);
        }
    }
    json!({
        "info": {"description": format!("segrt {command}"), "version": env!("CARGO_PKG_VERSION")},
        "licenses": [],
        "categories": categories.iter().map(|c| json!({"id": c.id, "name": c.name, "supercategory": ""})).collect::<Vec<_>>(),
        "images": sorted.iter().map(|(image, _)| image.clone()).collect::<Vec<_>>(),
        "annotations": annotations,
    })
}

/// A LabelMe file: one polygon shape per part, the parts of one object sharing a `group_id`.
pub fn labelme(image_path: &str, width: usize, height: usize, objects: &[Object], categories: &[Category]) -> Value {
    let name = |id: u32| categories.iter().find(|c| c.id == id).map_or_else(|| id.to_string(), |c| c.name.clone());
    let mut shapes = Vec::new();
    for (k, object) in objects.iter().enumerate() {
        let group = object.track_id.map_or(k as i64 + 1, |t| t as i64);
        for outline in polygons(object) {
            shapes.push(json!({
                "label": name(object.category_id),
                "points": outline.iter().map(|p| json!([p.x as f64, p.y as f64])).collect::<Vec<_>>(),
                "group_id": group, "shape_type": "polygon", "flags": {},
                "description": object.score.map_or(String::new(), |s| format!("score {s:.4}")),
            }));
        }
    }
    json!({
        "version": "5.5.0", "flags": {}, "shapes": shapes, "imagePath": image_path, "imageData": null,
        "imageHeight": height, "imageWidth": width,
    })
}

/// A YOLO-seg file: one line per part, `class x1 y1 x2 y2 ...` with coordinates divided by the
/// image's width and height; the class is the category's index in `categories` (from 0).
pub fn yolo(width: usize, height: usize, objects: &[Object], categories: &[Category]) -> String {
    let mut text = String::new();
    for object in objects {
        let class = categories.iter().position(|c| c.id == object.category_id).unwrap_or(0);
        for outline in polygons(object) {
            text.push_str(&class.to_string());
            for p in outline {
                text.push_str(&format!(" {:.6} {:.6}", p.x as f64 / width as f64, p.y as f64 / height as f64));
            }
            text.push('\n');
        }
    }
    text
}

/// `path` relative to the folder `base` when both are relative to the same place, else absolute:
/// LabelMe finds its image from the JSON file's folder.
pub fn relative_to(path: &Path, base: &Path) -> String {
    let (Ok(p), Ok(b)) = (std::path::absolute(path), std::path::absolute(base)) else { return path.display().to_string() };
    let (pc, bc): (Vec<_>, Vec<_>) = (p.components().collect(), b.components().collect());
    let common = pc.iter().zip(&bc).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return p.display().to_string();
    }
    let mut parts: Vec<String> = vec!["..".to_string(); bc.len() - common];
    parts.extend(pc[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}
