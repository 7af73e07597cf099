//! segrt's pre- and post-processing alone, no ONNX Runtime: a loop to profile and a per-stage figure.
//!
//!   cargo run --release --example profile_prepost -- [--size 256] [--iters 200] [--format bgr|bgra|gray|planar] [--no-antialias]
//!   perf record -e cpu-clock -g target/release/examples/profile_prepost --iters 500
//!
//! A 1920x1080 frame is turned into a `size`x`size` NCHW f32 tensor (the demo model's input), and a
//! fixed pseudo-random logit map of that size into a 1920x1080 mask, as `UnetSegmenter::segment` does.

use std::time::Instant;

use segrt::image::tensor::{prepare, Element, Fit, Layout, Normalisation, Preprocessor, TensorFormat};
use segrt::unet::postprocess::{scores_to_mask, ScoreMaps};
use segrt::{ImageView, MaskMut, Options, PixelFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let iters: usize = value("--iters").and_then(|v| v.parse().ok()).unwrap_or(200);
    let size: usize = value("--size").and_then(|v| v.parse().ok()).unwrap_or(256);
    let format = value("--format").unwrap_or_else(|| "bgr".into());
    let no_antialias = args.iter().any(|a| a == "--no-antialias");
    let (w, h) = (1920usize, 1080usize);

    // A smooth synthetic frame (gradients and a disc), not constant: resizers short-cut nothing.
    let bgr: Vec<u8> = (0..w * h)
        .flat_map(|i| {
            let (x, y) = (i % w, i / w);
            let d = ((x as f32 - 900.0).powi(2) + (y as f32 - 500.0).powi(2)).sqrt();
            [(x / 8) as u8, (y / 5) as u8, if d < 300.0 { 220 } else { 40 }]
        })
        .collect();
    let bgra: Vec<u8> = bgr.chunks(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect();
    let gray: Vec<u8> = bgr.chunks(3).map(|p| p[1]).collect();
    let planes: Vec<Vec<u8>> = (0..3).map(|c| bgr.chunks(3).map(|p| p[2 - c]).collect()).collect();
    let view = match format.as_str() {
        "bgr" => ImageView::new(&bgr, w, h, 0, PixelFormat::Bgr24)?,
        "bgra" => ImageView::new(&bgra, w, h, 0, PixelFormat::Bgra32)?,
        "gray" => ImageView::new(&gray, w, h, 0, PixelFormat::Gray8)?,
        "planar" => ImageView::planar(&planes[0], &planes[1], &planes[2], w, h, 0)?,
        other => return Err(format!("unknown --format {other}").into()),
    };

    let spec = TensorFormat { channels: 3, layout: Layout::Nchw, element: Element::F32 };
    let options = if no_antialias {
        Options { resize_filter: segrt::options::ResizeFilter::BilinearNoAntialias, ..Options::default() }
    } else {
        Options::default()
    };
    // Logits of a blob: about a third foreground, with a soft edge to upsample.
    let logits: Vec<f32> = (0..size * size)
        .map(|i| {
            let (x, y) = ((i % size) as f32 / size as f32, (i / size) as f32 / size as f32);
            8.0 * (0.3 - ((x - 0.45).powi(2) + (y - 0.5).powi(2)).sqrt())
        })
        .collect();
    let shape = [1i64, 1, size as i64, size as i64];

    let mut pre = Preprocessor::default();
    let (mut t_pre, mut t_post) = (Vec::new(), Vec::new());
    let mut foreground = 0u64;
    let mut mask = vec![0u8; w * h];
    for i in 0..iters + 5 {
        let t = Instant::now();
        let tensor = pre.prepare(&view, &spec, (size, size), &options, None)?;
        let a = t.elapsed().as_secs_f64() * 1e3;
        std::hint::black_box(tensor);
        // The pipeline owns the model's output: the copy stands for it and is not timed.
        let output = logits.clone();
        let t = Instant::now();
        let maps = ScoreMaps::from_output(&shape, output, Layout::Nchw, (size, size))?;
        foreground = scores_to_mask(maps, &mut MaskMut::new(&mut mask, w, h, 0)?, None, &options)?.foreground;
        let b = t.elapsed().as_secs_f64() * 1e3;
        if i >= 5 {
            t_pre.push(a);
            t_post.push(b);
        }
    }
    // The one-shot function gives the same tensor as the reusing preprocessor.
    let norm = Normalisation::from(&options);
    assert!(prepare(&view, &spec, (size, size), &norm, Fit::Resize)? == *pre.prepare(&view, &spec, (size, size), &options, None)?);
    println!(
        "{format} {w}x{h} -> {size}x{size} f32 NCHW: pre-processing {:.3} ms (min {:.3}); {size}x{size} logits -> {w}x{h} mask: post-processing {:.3} ms (min {:.3}); medians of {iters}; {foreground} foreground pixels",
        median(&mut t_pre),
        t_pre[0],
        median(&mut t_post),
        t_post[0]
    );
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
