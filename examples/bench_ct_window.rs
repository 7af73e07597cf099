//! Pre-processing of a 512x512 CT slice through a window, against the 8-bit path: figures only (no
//! timed assertion; the goal is a ratio of at most 1.5).
//!
//!   cargo run --release --example bench_ct_window -- [--iters 200] [--size 1024]
//!
//! The same synthetic slice (a body disc at 40 HU, a spine at 700 HU, air at -1000 HU, a gradient)
//! is given as: 8-bit gray (its soft-tissue window applied beforehand, the 8-bit path), signed 16-bit
//! HU with `--window 40,400`, unsigned 16-bit stored values with the rescale 1,-1024 and the window
//! (a DICOM file's stored values), and 32-bit float HU with the window (what `segrt` hands over for a
//! DICOM or NIfTI slice). Each becomes a `size`x`size` 3-channel f32 NCHW tensor, as SAM's encoder takes.

use std::time::Instant;

use segrt::image::intensity::{mapping_for, window, Intensity};
use segrt::image::tensor::{Element, Layout, Preprocessor, TensorFormat};
use segrt::{ImageView, Options, PixelFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let iters: usize = value("--iters").and_then(|v| v.parse().ok()).unwrap_or(200);
    let size: usize = value("--size").and_then(|v| v.parse().ok()).unwrap_or(1024);
    let (w, h) = (512usize, 512usize);
    let hu: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32 - 256.0, (i / w) as f32 - 256.0);
            let r = (x * x + y * y).sqrt();
            let spine = ((x).powi(2) + (y - 120.0).powi(2)).sqrt() < 30.0;
            if spine {
                700.0
            } else if r < 220.0 {
                40.0 + x * 0.3
            } else {
                -1000.0
            }
        })
        .collect();
    let setting = Intensity { range: window(40.0, 400.0), ..Intensity::default() };
    let stored_setting = Intensity { slope: 1.0, intercept: -1024.0, ..setting };
    let gray8: Vec<u8> = hu.iter().map(|v| ((v + 160.0) / 400.0 * 255.0).clamp(0.0, 255.0).round() as u8).collect();
    let i16s: Vec<u8> = hu.iter().flat_map(|v| (*v as i16).to_le_bytes()).collect();
    let u16s: Vec<u8> = hu.iter().flat_map(|v| ((*v + 1024.0) as u16).to_le_bytes()).collect();
    let f32s: Vec<u8> = hu.iter().flat_map(|v| v.to_le_bytes()).collect();
    let spec = TensorFormat { channels: 3, layout: Layout::Nchw, element: Element::F32 };
    let options = Options::default();
    let cases: [(&str, &[u8], PixelFormat, Option<&Intensity>); 4] = [
        ("8-bit gray (window applied beforehand)", &gray8, PixelFormat::Gray8, None),
        ("signed 16-bit HU, --window 40,400", &i16s, PixelFormat::Gray16S, Some(&setting)),
        ("unsigned 16-bit stored, --rescale 1,-1024 --window 40,400", &u16s, PixelFormat::Gray16, Some(&stored_setting)),
        ("32-bit float HU, --window 40,400 (the CLI's DICOM/NIfTI slices)", &f32s, PixelFormat::Gray32F, Some(&setting)),
    ];
    let mut base = 0.0;
    for (k, (name, bytes, format, setting)) in cases.iter().enumerate() {
        let view = ImageView::new(bytes, w, h, 0, *format)?;
        let mut pre = Preprocessor::default();
        let mut times = Vec::new();
        for i in 0..iters + 5 {
            let t = Instant::now();
            // As a run does: the window is resolved for the image, then the tensor is filled.
            let mapping = mapping_for(*setting, &view)?;
            std::hint::black_box(pre.prepare(&view, &spec, (size, size), &options, mapping)?);
            if i >= 5 {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let median = times[times.len() / 2];
        if k == 0 {
            base = median;
        }
        println!(
            "{name}: {w}x{h} -> {size}x{size}x3 f32: median {median:.3} ms (min {:.3}), {:.2}x the 8-bit path",
            times[0],
            median / base
        );
    }
    // The CLI's own step before the library: stored words -> BitsStored, sign, rescale -> f32.
    let words: Vec<u16> = hu.iter().map(|v| ((*v + 1024.0) as u16) | 0xF000).collect();
    let mut times = Vec::new();
    for _ in 0..iters {
        let t = Instant::now();
        let v: Vec<f32> = words.iter().map(|w| ((*w & 0x0FFF) as f64 * 1.0 - 1024.0) as f32).collect();
        std::hint::black_box(v);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    println!("stored 12-bit words -> f32 HU (the CLI's DICOM decode step): median {:.3} ms", times[times.len() / 2]);
    Ok(())
}
