//! Image -> model input tensor: colour conversion, resize, normalisation and layout, per the
//! model's metadata and the session options.
//!
//! The host's pixels are resized in their own layout (any channel order, alpha carried; packed
//! images in place, padded or bottom-up rows gathered first), then one pass of per-channel lookup
//! tables does channel order, scale, mean/std, layout and the element type together. The buffers are kept per thread and reused across calls.

use std::cell::RefCell;

use fast_image_resize::Resizer;
use half::f16;

use crate::error::{Error, Result};
use crate::image::{ImageView, SegPixelFormat};
use crate::model::{Element, Layout, UnetSpec};
use crate::options::{Options, SegChannelOrder};
use crate::resize::{new_resizer, resize_plane_into};

/// Tensor data in the element type the model wants.
#[derive(Debug, Clone, PartialEq)]
pub enum TensorData {
    F32(Vec<f32>),
    F16(Vec<f16>),
}

impl Default for TensorData {
    fn default() -> Self {
        TensorData::F32(Vec::new())
    }
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

/// How an image whose size differs from the model's is brought to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Resize the whole image (one image, one run).
    Resize,
    /// Keep pixels 1:1 (a tile); rows and columns beyond the image repeat its last row and column.
    Pad,
}

/// Reusable buffers for building input tensors: a resizer, resized pixels, the tensor itself.
pub struct Preprocessor {
    resizer: Resizer,
    /// Luminance of a colour image, for 1-channel models (Pillow converts before it resizes).
    gray: Vec<u8>,
    /// Resized pixels: one buffer for interleaved and gray images, three for planar ones.
    resized: [Vec<u8>; 3],
    /// Rows of a padded or bottom-up image gathered for the resizer.
    packed: Vec<u8>,
    tensor: TensorData,
}

impl Default for Preprocessor {
    fn default() -> Self {
        Preprocessor {
            resizer: new_resizer(),
            gray: Vec::new(),
            resized: Default::default(),
            packed: Vec::new(),
            tensor: TensorData::default(),
        }
    }
}

thread_local! {
    static THREAD_PREPROCESSOR: RefCell<Preprocessor> = RefCell::new(Preprocessor::default());
}

/// Runs `f` with this thread's preprocessor, so repeated calls reuse its buffers. A nested call on
/// the same thread (a host calling segrt from a log callback) gets a fresh one instead.
pub fn with_thread_preprocessor<R>(f: impl FnOnce(&mut Preprocessor) -> R) -> R {
    THREAD_PREPROCESSOR.with(|cell| match cell.try_borrow_mut() {
        Ok(mut pre) => f(&mut pre),
        Err(_) => f(&mut Preprocessor::default()),
    })
}

/// Builds the input tensor (batch 1) for `image` at model size `(mw, mh)`, in fresh buffers.
pub fn prepare(image: &ImageView<'_>, spec: &UnetSpec, size: (usize, usize), options: &Options) -> Result<TensorData> {
    let mut pre = Preprocessor::default();
    pre.prepare(image, spec, size, options)?;
    Ok(std::mem::take(&mut pre.tensor))
}

impl Preprocessor {
    /// The input tensor (batch 1) for `image` resized to model size `size`.
    pub fn prepare(&mut self, image: &ImageView<'_>, spec: &UnetSpec, size: (usize, usize), options: &Options) -> Result<&TensorData> {
        self.start_batch(spec, size, 1);
        self.fill(0, image, spec, size, options, Fit::Resize)?;
        Ok(&self.tensor)
    }

    /// Sizes the tensor for `batch` images of model size `(mw, mh)`; fill each with [`Self::fill`].
    pub fn start_batch(&mut self, spec: &UnetSpec, (mw, mh): (usize, usize), batch: usize) {
        let len = batch * mw * mh * spec.channels;
        match (&mut self.tensor, spec.input_element) {
            (TensorData::F32(v), Element::F32) => v.resize(len, 0.0),
            (TensorData::F16(v), Element::F16) => v.resize(len, f16::ZERO),
            (t, Element::F32) => *t = TensorData::F32(vec![0.0; len]),
            (t, Element::F16) => *t = TensorData::F16(vec![f16::ZERO; len]),
        }
    }

    pub fn tensor(&self) -> &TensorData {
        &self.tensor
    }

    /// Writes `image` as batch item `index` of the tensor sized by [`Self::start_batch`].
    pub fn fill(
        &mut self,
        index: usize,
        image: &ImageView<'_>,
        spec: &UnetSpec,
        (mw, mh): (usize, usize),
        options: &Options,
        fit: Fit,
    ) -> Result<()> {
        let Preprocessor { resizer, gray, resized, packed, tensor } = self;
        let channels = spec.channels;
        if channels != 1 && channels != 3 {
            return Err(Error::unsupported_model(format!("{channels} input channels")));
        }

        // 1-channel models see luminance; everything else is resized in the host's own layout.
        let source = if channels == 1 && image.format() != SegPixelFormat::SEG_FORMAT_GRAY8 {
            image.to_gray8_into(gray);
            ImageView::new(gray, image.width(), image.height(), 0, SegPixelFormat::SEG_FORMAT_GRAY8)?
        } else {
            *image
        };
        let planes = if source.format().is_planar() { 3 } else { 1 };
        let step = source.format().bytes_per_pixel();
        let resize = fit == Fit::Resize && (source.width(), source.height()) != (mw, mh);
        if resize {
            for (plane, buffer) in resized.iter_mut().enumerate().take(planes) {
                resize_plane_into(resizer, &source, plane, (mw, mh), options.resize_filter, packed, buffer)?;
            }
        }
        let (src_w, src_h) = if resize { (mw, mh) } else { (source.width(), source.height()) };
        let row = |plane: usize, y: usize| -> &[u8] {
            let y = y.min(src_h - 1);
            if resize {
                &resized[plane][y * mw * step..(y + 1) * mw * step]
            } else {
                source.row(plane, y)
            }
        };

        // Model channel c reads colour `colour(c)` (0 = R, 1 = G, 2 = B) at (plane, byte offset).
        let colour = |c: usize| match options.channel_order {
            SegChannelOrder::SEG_CHANNELS_BGR => 2 - c,
            SegChannelOrder::SEG_CHANNELS_RGB => c,
        };
        let taps: Vec<(usize, usize)> = (0..channels)
            .map(|c| match source.format() {
                SegPixelFormat::SEG_FORMAT_GRAY8 => (0, 0),
                SegPixelFormat::SEG_FORMAT_RGB24 | SegPixelFormat::SEG_FORMAT_RGBA32 => (0, colour(c)),
                SegPixelFormat::SEG_FORMAT_BGR24 | SegPixelFormat::SEG_FORMAT_BGRA32 => (0, 2 - colour(c)),
                SegPixelFormat::SEG_FORMAT_PLANAR_RGB8 => (colour(c), 0),
            })
            .collect();
        // One table per model channel folds scale, mean and std into a load.
        let luts: Vec<[f32; 256]> =
            (0..channels).map(|c| std::array::from_fn(|v| (v as f32 * options.scale - options.mean[c]) / options.std[c])).collect();

        let item = mw * mh * channels;
        let shape = Shape { width: mw, height: mh, src_width: src_w, step, layout: spec.input_layout };
        match tensor {
            TensorData::F32(v) => normalise(&mut v[index * item..(index + 1) * item], &luts, &taps, shape, row),
            TensorData::F16(v) => {
                let luts: Vec<[f16; 256]> = luts.iter().map(|l| l.map(f16::from_f32)).collect();
                normalise(&mut v[index * item..(index + 1) * item], &luts, &taps, shape, row)
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
struct Shape {
    width: usize,
    height: usize,
    /// Pixels per source row; columns beyond it repeat the last one.
    src_width: usize,
    /// Bytes per source pixel in a plane.
    step: usize,
    layout: Layout,
}

/// `out[c, y, x]` (or `[y, x, c]`) = `luts[c][row(plane_c, y)[x * step + offset_c]]`.
fn normalise<'a, T: Copy>(out: &mut [T], luts: &[[T; 256]], taps: &[(usize, usize)], s: Shape, row: impl Fn(usize, usize) -> &'a [u8]) {
    let (w, channels) = (s.width, taps.len());
    let plane = w * s.height;
    let copied = s.src_width.min(w);
    for y in 0..s.height {
        for (c, (&(source_plane, offset), lut)) in taps.iter().zip(luts).enumerate() {
            let src = row(source_plane, y)[offset..].iter().step_by(s.step).take(copied);
            match s.layout {
                Layout::Nchw => {
                    let dst = &mut out[c * plane + y * w..c * plane + (y + 1) * w];
                    dst.iter_mut().zip(src).for_each(|(d, v)| *d = lut[*v as usize]);
                    let last = dst[copied - 1];
                    dst[copied..].fill(last);
                }
                Layout::Nhwc => {
                    let dst = &mut out[y * w * channels..(y + 1) * w * channels];
                    dst[c..].iter_mut().step_by(channels).zip(src).for_each(|(d, v)| *d = lut[*v as usize]);
                    if copied < w {
                        let last = dst[(copied - 1) * channels + c];
                        dst[copied * channels + c..].iter_mut().step_by(channels).for_each(|d| *d = last);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(channels: usize, layout: Layout, element: Element, (w, h): (usize, usize)) -> UnetSpec {
        UnetSpec {
            input_name: "x".into(),
            input_layout: layout,
            input_element: element,
            channels,
            height: Some(h),
            width: Some(w),
            batch_dynamic: false,
            output_name: "y".into(),
            output_element: Element::F32,
            classes: Some(1),
        }
    }

    /// The straightforward way: packed RGB (or gray) of the whole image, resized, then normalised.
    fn reference(image: &ImageView<'_>, spec: &UnetSpec, (mw, mh): (usize, usize), options: &Options) -> Vec<f32> {
        let c = spec.channels;
        let packed = if c == 1 { image.to_gray8() } else { image.to_rgb8() };
        let resized = crate::resize::resize_u8(packed, (image.width(), image.height()), c, (mw, mh), options.resize_filter).unwrap();
        let mut out = vec![0f32; mw * mh * c];
        for i in 0..mw * mh {
            for ch in 0..c {
                let colour = if c == 3 && options.channel_order == SegChannelOrder::SEG_CHANNELS_BGR { 2 - ch } else { ch };
                let v = (resized[i * c + colour] as f32 * options.scale - options.mean[ch]) / options.std[ch];
                match spec.input_layout {
                    Layout::Nchw => out[ch * mw * mh + i] = v,
                    Layout::Nhwc => out[i * c + ch] = v,
                }
            }
        }
        out
    }

    fn test_image(w: usize, h: usize) -> Vec<u8> {
        (0..w * h * 3).map(|i| ((i * 7919) % 251) as u8).collect()
    }

    #[test]
    fn every_format_layout_and_order_matches_the_reference() {
        let (w, h) = (37usize, 23usize);
        let rgb = test_image(w, h);
        let bgr: Vec<u8> = rgb.chunks(3).flat_map(|p| [p[2], p[1], p[0]]).collect();
        let rgba: Vec<u8> = rgb.chunks(3).flat_map(|p| [p[0], p[1], p[2], 9]).collect();
        let bgra: Vec<u8> = rgb.chunks(3).flat_map(|p| [p[2], p[1], p[0], 200]).collect();
        let gray: Vec<u8> = rgb.chunks(3).map(|p| p[1]).collect();
        let planes: Vec<Vec<u8>> = (0..3).map(|c| rgb.chunks(3).map(|p| p[c]).collect()).collect();
        let views = [
            ImageView::new(&rgb, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24).unwrap(),
            ImageView::new(&bgr, w, h, 0, SegPixelFormat::SEG_FORMAT_BGR24).unwrap(),
            ImageView::new(&rgba, w, h, 0, SegPixelFormat::SEG_FORMAT_RGBA32).unwrap(),
            ImageView::new(&bgra, w, h, 0, SegPixelFormat::SEG_FORMAT_BGRA32).unwrap(),
            ImageView::new(&gray, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY8).unwrap(),
            ImageView::planar(&planes[0], &planes[1], &planes[2], w, h, 0).unwrap(),
        ];
        let mut options = Options { mean: [0.1, 0.2, 0.3], std: [0.5, 0.25, 2.0], ..Options::default() };
        let mut pre = Preprocessor::default();
        for view in &views {
            for (channels, layout, order, size) in [
                (3, Layout::Nchw, SegChannelOrder::SEG_CHANNELS_RGB, (16, 12)),
                (3, Layout::Nhwc, SegChannelOrder::SEG_CHANNELS_BGR, (16, 12)),
                (3, Layout::Nchw, SegChannelOrder::SEG_CHANNELS_BGR, (w, h)),
                (1, Layout::Nchw, SegChannelOrder::SEG_CHANNELS_RGB, (64, 40)),
                (1, Layout::Nhwc, SegChannelOrder::SEG_CHANNELS_RGB, (w, h)),
            ] {
                options.channel_order = order;
                let spec = spec(channels, layout, Element::F32, size);
                let expected = reference(view, &spec, size, &options);
                let got = pre.prepare(view, &spec, size, &options).unwrap();
                assert_eq!(*got, TensorData::F32(expected), "{:?} {channels} ch {layout:?} {order:?} {size:?}", view.format());
            }
        }
    }

    #[test]
    fn f16_tensors_equal_converted_f32_ones() {
        let (w, h) = (20usize, 10usize);
        let rgb = test_image(w, h);
        let view = ImageView::new(&rgb, w, h, 0, SegPixelFormat::SEG_FORMAT_RGB24).unwrap();
        let options = Options { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225], ..Options::default() };
        let TensorData::F32(f32s) = prepare(&view, &spec(3, Layout::Nchw, Element::F32, (8, 8)), (8, 8), &options).unwrap() else {
            panic!()
        };
        let TensorData::F16(f16s) = prepare(&view, &spec(3, Layout::Nchw, Element::F16, (8, 8)), (8, 8), &options).unwrap() else {
            panic!()
        };
        assert_eq!(f16s, f32s.iter().map(|v| f16::from_f32(*v)).collect::<Vec<_>>());
    }

    #[test]
    fn padded_tiles_repeat_the_last_row_and_column() {
        let (w, h) = (3usize, 2usize);
        let gray = [10u8, 20, 30, 40, 50, 60];
        let view = ImageView::new(&gray, w, h, 0, SegPixelFormat::SEG_FORMAT_GRAY8).unwrap();
        let options = Options { scale: 1.0, ..Options::default() };
        for layout in [Layout::Nchw, Layout::Nhwc] {
            let spec = spec(1, layout, Element::F32, (5, 3));
            let mut pre = Preprocessor::default();
            pre.start_batch(&spec, (5, 3), 2);
            pre.fill(1, &view, &spec, (5, 3), &options, Fit::Pad).unwrap();
            let TensorData::F32(v) = pre.tensor() else { panic!() };
            assert_eq!(&v[..15], &[0.0; 15]);
            assert_eq!(&v[15..], &[10., 20., 30., 30., 30., 40., 50., 60., 60., 60., 40., 50., 60., 60., 60.]);
        }
    }
}
