//! Image resizing through `fast_image_resize` (SIMD convolution, the same filters as Pillow).

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::error::{Error, Result, SegStatus};
use crate::options::SegResizeFilter;

fn algorithm(filter: SegResizeFilter) -> ResizeAlg {
    match filter {
        SegResizeFilter::SEG_RESIZE_NEAREST => ResizeAlg::Nearest,
        SegResizeFilter::SEG_RESIZE_BILINEAR => ResizeAlg::Convolution(FilterType::Bilinear),
        SegResizeFilter::SEG_RESIZE_BICUBIC => ResizeAlg::Convolution(FilterType::CatmullRom),
        SegResizeFilter::SEG_RESIZE_LANCZOS3 => ResizeAlg::Convolution(FilterType::Lanczos3),
    }
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::new(SegStatus::SEG_INTERNAL, format!("resize failed: {e}"))
}

/// `SEGRT_SCALAR_RESIZE=1` turns off the SIMD code paths: valgrind cannot execute some of the
/// AVX2 instructions they use (it stops with SIGILL). A diagnostics switch, not a tuning knob.
fn scalar_only() -> bool {
    static SCALAR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SCALAR.get_or_init(|| std::env::var_os("SEGRT_SCALAR_RESIZE").is_some_and(|v| v == "1"))
}

fn run(src: ImageRef<'_>, dst: &mut Image<'_>, filter: SegResizeFilter) -> Result<()> {
    let options = ResizeOptions::new().resize_alg(algorithm(filter));
    let mut resizer = Resizer::new();
    if scalar_only() {
        // SAFETY: `None` (plain Rust code) is supported on every CPU.
        unsafe { resizer.set_cpu_extensions(fast_image_resize::CpuExtensions::None) };
    }
    resizer.resize(&src, dst, &options).map_err(internal)
}

/// Resizes packed 8-bit pixels with 1 or 3 channels. Returns the input unchanged when sizes match.
pub fn resize_u8(src: Vec<u8>, (w, h): (usize, usize), channels: usize, (dw, dh): (usize, usize), filter: SegResizeFilter) -> Result<Vec<u8>> {
    if (w, h) == (dw, dh) {
        return Ok(src);
    }
    let pixel_type = match channels {
        1 => PixelType::U8,
        3 => PixelType::U8x3,
        4 => PixelType::U8x4,
        n => return Err(internal(format!("{n} channels"))),
    };
    let src_ref = ImageRef::new(w as u32, h as u32, &src, pixel_type).map_err(internal)?;
    let mut dst = Image::new(dw as u32, dh as u32, pixel_type);
    run(src_ref, &mut dst, filter)?;
    Ok(dst.into_vec())
}

/// Resizes a single-channel float map (probabilities, logits).
pub fn resize_f32(src: &[f32], (w, h): (usize, usize), (dw, dh): (usize, usize), filter: SegResizeFilter) -> Result<Vec<f32>> {
    if (w, h) == (dw, dh) {
        return Ok(src.to_vec());
    }
    let src_ref = ImageRef::new(w as u32, h as u32, bytemuck::cast_slice(src), PixelType::F32).map_err(internal)?;
    let mut out = vec![0f32; dw * dh];
    let mut dst = Image::from_slice_u8(dw as u32, dh as u32, bytemuck::cast_slice_mut(&mut out), PixelType::F32).map_err(internal)?;
    run(src_ref, &mut dst, filter)?;
    Ok(out)
}
