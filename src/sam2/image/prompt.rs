//! What the user clicked, its checks, and its mapping into model space.
//!
//! SAM2 (stretched input): a click (x, y) maps to (x*S/W, y*S/H). SAM1 (long side to S, padded):
//! both axes scale by S/max(W, H). Box corners go first (labels 2, 3), then the points; SAM2 graphs
//! add the padding point themselves, SAM1 clients add it when there is no box.

use crate::error::{Error, Result};

use super::spec::Family;

/// A click in original image pixels. `label`: 1 = foreground, 0 = background.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f32,
    pub y: f32,
    pub label: i32,
}

/// A box in original image pixels, top-left and bottom-right corners.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxPrompt {
    pub x1: f32,
    pub y1: f32,
    pub x2: f32,
    pub y2: f32,
}

/// What the user clicked.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub points: Vec<Point>,
    pub bbox: Option<BoxPrompt>,
    /// Feed the session's previous chosen low-res logits back as `mask_input` (same image only):
    /// the one-interaction convenience. Threads refining their own objects pass `mask_input`.
    pub refine: bool,
    /// Low-res logits of an earlier prediction (its `low_res`) to refine, owned by the caller:
    /// takes precedence over `refine`.
    pub mask_input: Option<Vec<f32>>,
}

/// Most points accepted in one prompt.
pub const MAX_POINTS: usize = 1024;

/// Points and box must be finite and inside the image; labels 0 or 1; at least one point or a box.
pub fn validate_prompt(prompt: &Prompt, w: usize, h: usize) -> Result<()> {
    if prompt.points.is_empty() && prompt.bbox.is_none() {
        return Err(Error::invalid("no prompt: give at least one point or a box"));
    }
    if prompt.points.len() > MAX_POINTS {
        return Err(Error::invalid(format!("{} points: at most {MAX_POINTS} are accepted", prompt.points.len())));
    }
    let inside = |x: f32, y: f32, what: &str| -> Result<()> {
        if !(x.is_finite() && y.is_finite()) {
            return Err(Error::invalid(format!("{what} ({x}, {y}) is not a finite coordinate")));
        }
        if x < 0.0 || y < 0.0 || x > w as f32 || y > h as f32 {
            return Err(Error::invalid(format!("{what} ({x}, {y}) lies outside the {w}x{h} image")));
        }
        Ok(())
    };
    for (i, p) in prompt.points.iter().enumerate() {
        inside(p.x, p.y, &format!("point {i}"))?;
        if p.label != 0 && p.label != 1 {
            return Err(Error::invalid(format!("point {i} has label {}: use 1 (foreground) or 0 (background)", p.label)));
        }
    }
    if let Some(b) = prompt.bbox {
        inside(b.x1, b.y1, "box corner 1")?;
        inside(b.x2, b.y2, "box corner 2")?;
        if !(b.x2 > b.x1 && b.y2 > b.y1) {
            return Err(Error::invalid(format!("box ({}, {})-({}, {}) must have x2 > x1 and y2 > y1", b.x1, b.y1, b.x2, b.y2)));
        }
    }
    if let Some(m) = &prompt.mask_input {
        if m.iter().any(|v| !v.is_finite()) {
            return Err(Error::invalid("mask_input holds a value that is not finite"));
        }
    }
    Ok(())
}

/// Model-space coordinates (x, y pairs) and labels for an image of `(w, h)` and a model input of
/// `s` x `s`: box corners first (labels 2, 3), then the points.
pub fn model_space(prompt: &Prompt, family: Family, s: usize, (w, h): (usize, usize)) -> (Vec<f32>, Vec<f32>) {
    let (sx, sy) = match family {
        Family::Sam2 => (s as f32 / w as f32, s as f32 / h as f32),
        Family::Sam1 => {
            let (kx, ky) = sam1_scales(s, (w, h));
            (kx as f32, ky as f32)
        }
    };
    let mut coords = Vec::with_capacity(2 * prompt.points.len() + 6);
    let mut labels = Vec::with_capacity(prompt.points.len() + 3);
    if let Some(b) = prompt.bbox {
        coords.extend([b.x1 * sx, b.y1 * sy, b.x2 * sx, b.y2 * sy]);
        labels.extend([2.0, 3.0]);
    }
    for p in &prompt.points {
        coords.extend([p.x * sx, p.y * sy]);
        labels.push(p.label as f32);
    }
    // SAM1 clients add the padding point themselves when there is no box; SAM2 graphs add it.
    if family == Family::Sam1 && prompt.bbox.is_none() {
        coords.extend([0.0, 0.0]);
        labels.push(-1.0);
    }
    (coords, labels)
}

/// SAM1's per-axis scales from image pixels to the encoder's frame (`ResizeLongestSide.apply_coords`):
/// the long side becomes `s`, the short one `int(side * s / long + 0.5)` pixels (the image's part of the
/// padded square), and each axis scales by its new size over its old one.
pub fn sam1_scales(s: usize, (w, h): (usize, usize)) -> (f64, f64) {
    let k = s as f64 / w.max(h) as f64;
    let side = |v: usize| (v as f64 * k + 0.5).floor();
    (side(w) / w as f64, side(h) / h as f64)
}

/// A prompt in Hugging Face transformers' decoder layout, for an image of `(w, h)` and a model
/// input of `s` x `s`.
pub struct TransformersPrompt {
    /// `input_points` [1, 1, N, 2]: the clicks, then the (0, 0) padding point when there is no box.
    pub points: Vec<f32>,
    /// `input_labels` [1, 1, N]: 1 / 0, and -1 for the padding point.
    pub labels: Vec<f32>,
    /// `input_boxes` [1, B, 4] with B = 0 (no box) or 1: x1, y1, x2, y2.
    pub boxes: Vec<f32>,
}

/// transformers' rules (`Sam2Processor._normalize_coordinates`: x * S / W, y * S / H, boxes alike;
/// `Sam2PromptEncoder`: +0.5 in the graph, the (0, 0) / -1 padding point added only when
/// `input_boxes is None`, box tokens after the point tokens). The graph always has a box input, so
/// it never pads: a prompt without a box gets the padding point here, and "no box" is an empty
/// `[1, 0, 4]` box tensor; "no points" is `[1, 1, 0, 2]` (as transformers.js sends).
pub fn transformers_prompt(prompt: &Prompt, s: usize, (w, h): (usize, usize)) -> TransformersPrompt {
    let (sx, sy) = (s as f32 / w as f32, s as f32 / h as f32);
    let mut points: Vec<f32> = prompt.points.iter().flat_map(|p| [p.x * sx, p.y * sy]).collect();
    let mut labels: Vec<f32> = prompt.points.iter().map(|p| p.label as f32).collect();
    let boxes = match prompt.bbox {
        Some(b) => vec![b.x1 * sx, b.y1 * sy, b.x2 * sx, b.y2 * sy],
        None => {
            points.extend([0.0, 0.0]);
            labels.push(-1.0);
            Vec::new()
        }
    };
    TransformersPrompt { points, labels, boxes }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn click(x: f32, y: f32) -> Prompt {
        Prompt { points: vec![Point { x, y, label: 1 }], ..Prompt::default() }
    }

    #[test]
    fn sam2_stretches_each_axis_to_the_model() {
        // 1920x1080 into 1024x1024: x scales by 1024/1920, y by 1024/1080.
        let (coords, labels) = model_space(&click(960.0, 540.0), Family::Sam2, 1024, (1920, 1080));
        assert_eq!(coords, vec![512.0, 512.0]);
        assert_eq!(labels, vec![1.0]);
        let (coords, _) = model_space(&click(1920.0, 0.0), Family::Sam2, 1024, (1920, 1080));
        assert_eq!(coords, vec![1024.0, 0.0]);
    }

    #[test]
    fn sam1_scales_by_the_long_side_and_adds_the_padding_point() {
        let (coords, labels) = model_space(&click(960.0, 540.0), Family::Sam1, 1024, (1920, 1080));
        assert_eq!(coords, vec![512.0, 288.0, 0.0, 0.0]);
        assert_eq!(labels, vec![1.0, -1.0]);
        // with a box: corners first, no padding point
        let prompt = Prompt { bbox: Some(BoxPrompt { x1: 0.0, y1: 0.0, x2: 1920.0, y2: 1080.0 }), ..click(10.0, 10.0) };
        let (coords, labels) = model_space(&prompt, Family::Sam1, 1024, (1920, 1080));
        assert_eq!(labels, vec![2.0, 3.0, 1.0]);
        assert_eq!(&coords[..4], &[0.0, 0.0, 1024.0, 576.0]);
        // 451x300: the short side becomes int(300 * 1024 / 451 + 0.5) = 681, so y scales by 681/300
        // (not by 1024/451, which would put the click 0.15 model pixels lower at the bottom).
        let (kx, ky) = sam1_scales(1024, (451, 300));
        assert_eq!((kx, ky), (1024.0 / 451.0, 681.0 / 300.0));
    }

    #[test]
    fn transformers_prompts_pad_only_without_a_box() {
        let t = transformers_prompt(&click(960.0, 540.0), 1024, (1920, 1080));
        assert_eq!((t.points, t.labels, t.boxes.len()), (vec![512.0, 512.0, 0.0, 0.0], vec![1.0, -1.0], 0));
        let boxed = Prompt { bbox: Some(BoxPrompt { x1: 0.0, y1: 0.0, x2: 1920.0, y2: 1080.0 }), ..Prompt::default() };
        let t = transformers_prompt(&boxed, 1024, (1920, 1080));
        assert_eq!((t.points.len(), t.labels.len(), t.boxes), (0, 0, vec![0.0, 0.0, 1024.0, 1024.0]));
    }

    #[test]
    fn bad_prompts_are_refused_with_a_reason() {
        let cases = [
            (Prompt::default(), "no prompt"),
            (click(f32::NAN, 1.0), "not a finite"),
            (click(-1.0, 1.0), "outside"),
            (click(1.0, 101.0), "outside"),
            (Prompt { points: vec![Point { x: 1.0, y: 1.0, label: 2 }], ..Prompt::default() }, "label 2"),
            (Prompt { bbox: Some(BoxPrompt { x1: 5.0, y1: 5.0, x2: 4.0, y2: 9.0 }), ..Prompt::default() }, "x2 > x1"),
            (Prompt { mask_input: Some(vec![f32::INFINITY]), ..click(1.0, 1.0) }, "mask_input"),
        ];
        for (prompt, why) in cases {
            let e = validate_prompt(&prompt, 100, 100).unwrap_err();
            assert!(e.message.contains(why), "{why}: {}", e.message);
        }
        validate_prompt(&click(100.0, 100.0), 100, 100).unwrap();
    }
}
