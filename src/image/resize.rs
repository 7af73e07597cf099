//! Image resizing through `fast_image_resize` (SIMD convolution, the same filters as Pillow).

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::alloc;
use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::options::ResizeFilter;

fn algorithm(filter: ResizeFilter) -> ResizeAlg {
    match filter {
        ResizeFilter::Nearest => ResizeAlg::Nearest,
        ResizeFilter::Bilinear => ResizeAlg::Convolution(FilterType::Bilinear),
        ResizeFilter::Bicubic => ResizeAlg::Convolution(FilterType::CatmullRom),
        ResizeFilter::Lanczos3 => ResizeAlg::Convolution(FilterType::Lanczos3),
        ResizeFilter::BilinearNoAntialias => ResizeAlg::Interpolation(FilterType::Bilinear),
    }
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::internal(format!("resize failed: {e}"))
}

/// `SEGRT_SCALAR_RESIZE=1` turns off the SIMD code paths: valgrind cannot execute some of the
/// AVX2 instructions they use (it stops with SIGILL). A diagnostics switch, not a tuning knob.
fn scalar_only() -> bool {
    static SCALAR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SCALAR.get_or_init(|| std::env::var_os("SEGRT_SCALAR_RESIZE").is_some_and(|v| v == "1"))
}

/// A resizer honouring `SEGRT_SCALAR_RESIZE`. It keeps scratch buffers: reuse one where calls repeat.
pub fn new_resizer() -> Resizer {
    let mut resizer = Resizer::new();
    if scalar_only() {
        // SAFETY: `None` (plain Rust code) is supported on every CPU.
        unsafe { resizer.set_cpu_extensions(fast_image_resize::CpuExtensions::None) };
    }
    resizer
}

fn run(src: ImageRef<'_>, dst: &mut Image<'_>, filter: ResizeFilter) -> Result<()> {
    let options = ResizeOptions::new().resize_alg(algorithm(filter));
    new_resizer().resize(&src, dst, &options).map_err(internal)
}

/// Resizes one plane of `image` (all channels of an interleaved image, one colour of a planar one)
/// to `(dw, dh)` into `dst` (resized to fit, reused across calls). Alpha is carried, not applied.
/// Packed top-down planes are read in place; padded or bottom-up rows are first gathered into
/// `packed` (reused too).
pub fn resize_plane_into(
    resizer: &mut Resizer,
    image: &ImageView<'_>,
    plane: usize,
    (dw, dh): (usize, usize),
    filter: ResizeFilter,
    packed: &mut Vec<u8>,
    dst: &mut Vec<u8>,
) -> Result<()> {
    let bytes_per_pixel = image.format().bytes_per_pixel();
    let pixel_type = match bytes_per_pixel {
        1 => PixelType::U8,
        3 => PixelType::U8x3,
        4 => PixelType::U8x4,
        n => return Err(internal(format!("{n} bytes per pixel"))),
    };
    let (w, h) = (image.width(), image.height());
    let src = match image.packed_plane(plane) {
        Some(bytes) => bytes,
        None => {
            packed.clear();
            alloc::resize(packed, w * h * bytes_per_pixel, 0, "the gathered image rows")?;
            for (y, dst) in packed.chunks_exact_mut(w * bytes_per_pixel).enumerate() {
                dst.copy_from_slice(image.row(plane, y));
            }
            packed.as_slice()
        }
    };
    let src = ImageRef::new(w as u32, h as u32, src, pixel_type).map_err(internal)?;
    alloc::resize(dst, dw * dh * bytes_per_pixel, 0, "the resized image")?;
    // The resizer's own scratch (one pass's output) is allocated infallibly: check it can be had.
    alloc::probe(dw.max(w) * dh.max(h) * bytes_per_pixel, "the resizer's scratch")?;
    let mut out = Image::from_slice_u8(dw as u32, dh as u32, dst, pixel_type).map_err(internal)?;
    let options = ResizeOptions::new().resize_alg(algorithm(filter)).use_alpha(false);
    resizer.resize(&src, &mut out, &options).map_err(internal)
}

/// Resizes packed 8-bit pixels with 1 or 3 channels. Returns the input unchanged when sizes match.
pub fn resize_u8(src: Vec<u8>, (w, h): (usize, usize), channels: usize, (dw, dh): (usize, usize), filter: ResizeFilter) -> Result<Vec<u8>> {
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
pub fn resize_f32(src: &[f32], (w, h): (usize, usize), (dw, dh): (usize, usize), filter: ResizeFilter) -> Result<Vec<f32>> {
    let mut out = crate::alloc::vec_of(dw * dh, 0f32, "a resized score map")?;
    resize_f32_into(src, (w, h), &mut out, (dw, dh), filter)?;
    Ok(out)
}

/// Resizes a single-channel float map into `dst` (`dw * dh` values, row-major).
pub fn resize_f32_into(src: &[f32], (w, h): (usize, usize), dst: &mut [f32], (dw, dh): (usize, usize), filter: ResizeFilter) -> Result<()> {
    let dst = &mut dst[..dw * dh];
    if (w, h) == (dw, dh) {
        dst.copy_from_slice(&src[..w * h]);
        return Ok(());
    }
    let src_ref = ImageRef::new(w as u32, h as u32, bytemuck::cast_slice(src), PixelType::F32).map_err(internal)?;
    let mut out = Image::from_slice_u8(dw as u32, dh as u32, bytemuck::cast_slice_mut(dst), PixelType::F32).map_err(internal)?;
    run(src_ref, &mut out, filter)
}

/// Pillow's fixed-point precision for 8-bit resampling (`PRECISION_BITS` in `Resample.c`).
const PIL_PRECISION_BITS: u32 = 32 - 8 - 2;

/// Pillow's bicubic kernel (a = -0.5), support 2.
fn pil_bicubic(x: f64) -> f64 {
    const A: f64 = -0.5;
    let x = x.abs();
    if x < 1.0 {
        ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        (((x - 5.0) * x + 8.0) * x - 4.0) * A
    } else {
        0.0
    }
}

/// `precompute_coeffs` + `normalize_coeffs_8bpc` of Pillow's `Resample.c` for one axis of `n` -> `m`
/// pixels: per output pixel, the first source pixel and the fixed-point weights.
fn pil_coefficients(n: usize, m: usize) -> Vec<(usize, Vec<i32>)> {
    let scale = n as f64 / m as f64;
    let filterscale = scale.max(1.0);
    let support = 2.0 * filterscale;
    (0..m)
        .map(|i| {
            let center = (i as f64 + 0.5) * scale;
            let ss = 1.0 / filterscale;
            // C casts truncate toward zero.
            let xmin = ((center - support + 0.5) as i64).max(0) as usize;
            let xmax = ((center + support + 0.5) as i64).min(n as i64) as usize;
            let w: Vec<f64> = (xmin..xmax).map(|x| pil_bicubic((x as f64 - center + 0.5) * ss)).collect();
            let total: f64 = w.iter().sum();
            let one = (1u32 << PIL_PRECISION_BITS) as f64;
            let k = w
                .iter()
                .map(|v| {
                    let v = if total != 0.0 { v / total } else { *v };
                    if v < 0.0 {
                        (-0.5 + v * one) as i32
                    } else {
                        (0.5 + v * one) as i32
                    }
                })
                .collect();
            (xmin, k)
        })
        .collect()
}

fn pil_clip8(v: i64) -> u8 {
    (v >> PIL_PRECISION_BITS).clamp(0, 255) as u8
}

/// Pillow's `Image.resize(size)` with its default filter (`BICUBIC`) on packed 8-bit pixels with
/// `channels` channels, bit-exact: the horizontal pass first (on the source rows the vertical pass
/// reads), rounded to 8 bits, then the vertical pass; an axis whose size does not change is not
/// resampled. SAM2's video predictor resizes frames this way (`_load_img_as_tensor`).
pub fn resize_pil_bicubic(src: &[u8], (w, h): (usize, usize), channels: usize, (dw, dh): (usize, usize)) -> Result<Vec<u8>> {
    if src.len() != w * h * channels || w == 0 || h == 0 || dw == 0 || dh == 0 {
        return Err(internal(format!("{}x{}x{channels} image in {} bytes to {dw}x{dh}", w, h, src.len())));
    }
    let vertical = pil_coefficients(h, dh);
    let (rows, first_row) = if dw != w {
        let first = vertical[0].0;
        let last = vertical.last().map_or(h, |(y0, k)| y0 + k.len());
        let horizontal = pil_coefficients(w, dw);
        let mut out = alloc::vec_of((last - first) * dw * channels, 0u8, "the resized rows")?;
        for (y, row_out) in (first..last).zip(out.chunks_exact_mut(dw * channels)) {
            let row = &src[y * w * channels..(y + 1) * w * channels];
            for ((x0, k), px) in horizontal.iter().zip(row_out.chunks_exact_mut(channels)) {
                for (c, o) in px.iter_mut().enumerate() {
                    let mut ss: i64 = 1 << (PIL_PRECISION_BITS - 1);
                    for (j, kj) in k.iter().enumerate() {
                        ss += row[(x0 + j) * channels + c] as i64 * *kj as i64;
                    }
                    *o = pil_clip8(ss);
                }
            }
        }
        (out, first)
    } else {
        (alloc::copy_of(src, "the resized rows")?, 0)
    };
    if dh == h {
        return Ok(rows);
    }
    let stride = dw * channels;
    let mut out = alloc::vec_of(dh * stride, 0u8, "the resized image")?;
    for ((y0, k), row_out) in vertical.iter().zip(out.chunks_exact_mut(stride)) {
        for (i, o) in row_out.iter_mut().enumerate() {
            let mut ss: i64 = 1 << (PIL_PRECISION_BITS - 1);
            for (j, kj) in k.iter().enumerate() {
                ss += rows[(y0 - first_row + j) * stride + i] as i64 * *kj as i64;
            }
            *o = pil_clip8(ss);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod pil_tests {
    use super::*;

    #[test]
    fn pil_bicubic_keeps_flat_images_and_unchanged_sizes() {
        let flat = vec![77u8; 10 * 7 * 3];
        assert_eq!(resize_pil_bicubic(&flat, (10, 7), 3, (4, 13)).unwrap(), vec![77u8; 4 * 13 * 3]);
        let ramp: Vec<u8> = (0..10 * 7).map(|i| (i * 3) as u8).collect();
        assert_eq!(resize_pil_bicubic(&ramp, (10, 7), 1, (10, 7)).unwrap(), ramp);
        assert!(resize_pil_bicubic(&ramp, (10, 7), 3, (4, 4)).is_err());
    }
}
