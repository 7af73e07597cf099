//! Image -> model input tensor: colour conversion, resize, normalisation and layout, per the
//! model's metadata and the session options.

use half::f16;
use half::slice::HalfFloatSliceExt;

use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::model::{Element, Layout, UnetSpec};
use crate::options::{Options, SegChannelOrder};
use crate::resize::resize_u8;

/// Tensor data in the element type the model wants.
#[derive(Debug, Clone, PartialEq)]
pub enum TensorData {
    F32(Vec<f32>),
    F16(Vec<f16>),
}

/// The size (w, h) the model runs at for an image of `image` size.
///
/// Fixed axes come from the model. Dynamic axes use `options.input_size` when set, else the image
/// size rounded to the nearest multiple of `options.size_multiple` (at least one multiple).
pub fn model_size(spec: &UnetSpec, image: (usize, usize), options: &Options) -> (usize, usize) {
    let round = |v: usize| {
        let m = options.size_multiple.max(1);
        ((v + m / 2) / m).max(1) * m
    };
    let (fw, fh) = options.input_size.unwrap_or((round(image.0), round(image.1)));
    (spec.width.unwrap_or(fw), spec.height.unwrap_or(fh))
}

/// Builds the input tensor (batch 1) for `image` at model size `(mw, mh)`.
pub fn prepare(image: &ImageView<'_>, spec: &UnetSpec, (mw, mh): (usize, usize), options: &Options) -> Result<TensorData> {
    let channels = spec.channels;
    let pixels = match channels {
        1 => image.to_gray8(),
        3 => image.to_rgb8(),
        n => return Err(Error::unsupported_model(format!("{n} input channels"))),
    };
    let resized = resize_u8(pixels, (image.width(), image.height()), channels, (mw, mh), options.resize_filter)?;

    // One lookup table per model channel folds scale, mean, std (and the channel swap) into a load.
    let source_channel = |c: usize| match (channels, options.channel_order) {
        (3, SegChannelOrder::SEG_CHANNELS_BGR) => 2 - c,
        _ => c,
    };
    let luts: Vec<[f32; 256]> = (0..channels)
        .map(|c| std::array::from_fn(|v| (v as f32 * options.scale - options.mean[c]) / options.std[c]))
        .collect();

    let plane = mw * mh;
    let mut out = vec![0f32; plane * channels];
    match spec.input_layout {
        Layout::Nchw => {
            for c in 0..channels {
                let (lut, sc) = (&luts[c], source_channel(c));
                for (dst, px) in out[c * plane..(c + 1) * plane].iter_mut().zip(resized.chunks_exact(channels)) {
                    *dst = lut[px[sc] as usize];
                }
            }
        }
        Layout::Nhwc => {
            for (dst, px) in out.chunks_exact_mut(channels).zip(resized.chunks_exact(channels)) {
                for c in 0..channels {
                    dst[c] = luts[c][px[source_channel(c)] as usize];
                }
            }
        }
    }
    Ok(match spec.input_element {
        Element::F32 => TensorData::F32(out),
        Element::F16 => {
            let mut half = vec![f16::ZERO; out.len()];
            half.convert_from_f32_slice(&out);
            TensorData::F16(half)
        }
    })
}
