//! Image -> model input tensor, shared by both pipelines: colour conversion, resize, normalisation,
//! layout and element type, per the model's tensor format.
//!
//! The host's pixels are resized in their own layout (any channel order, alpha carried; packed
//! images in place, padded or bottom-up rows gathered first), then one pass of per-channel lookup
//! tables does channel order, scale, mean/std, layout and the element type together. A
//! `Preprocessor` keeps its buffers for reuse (each pooled session owns one); large ones are released
//! after the call. Pixels through the intensity stage (16-bit and float ones always) take the float
//! path of `mapped`; the 8-bit path's one-pass kernel is `lut`.

use fast_image_resize::Resizer;
use half::f16;
use ort::value::TensorRef;
use serde::Serialize;

use crate::alloc;
use crate::error::{Error, Result};
use crate::image::intensity::{mapping_for, Mapping};
use crate::image::resize::{new_resizer, resize_plane_into};
use crate::image::{ImageView, PixelFormat};

use lut::{normalise, Edges, Shape};

mod lut;
mod mapped;
use crate::options::{ChannelOrder, Options, ResizeFilter};

/// Where the channel axis of a 4-D image tensor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Layout {
    #[serde(rename = "NCHW")]
    Nchw,
    #[serde(rename = "NHWC")]
    Nhwc,
}

/// Element types segrt writes for image tensors (and reads from float outputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Element {
    #[serde(rename = "f32")]
    F32,
    #[serde(rename = "f16")]
    F16,
    /// Raw 0..255 pixels, for graphs that normalise themselves.
    #[serde(rename = "u8")]
    U8,
}

impl Element {
    /// The float element types (model outputs, UNet inputs) by the name a model's I/O declares
    /// (`TensorInfo::dtype`: "f32", "f16").
    pub fn float_named(dtype: &str) -> Option<Self> {
        match dtype {
            "f32" => Some(Element::F32),
            "f16" => Some(Element::F16),
            _ => None,
        }
    }
}

/// The tensor a model wants for one image: channels (1 = luminance, 3 = colour), layout, element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorFormat {
    pub channels: usize,
    pub layout: Layout,
    pub element: Element,
}

/// How pixel values become tensor values: the intensity stage `mapping` first (see
/// [`crate::image::intensity`]), then `(v * scale - mean[c]) / std[c]` in the model's channel
/// order, after resizing with `filter`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Normalisation {
    pub scale: f32,
    pub mean: [f32; 3],
    pub std: [f32; 3],
    pub channel_order: ChannelOrder,
    pub filter: ResizeFilter,
    /// The intensity stage resolved for the image (`intensity::mapping_for`). None: 8-bit pixels go
    /// the 8-bit path unchanged; wider ones are mapped by the default stage, resolved on the image
    /// given to `fill` (pipelines that cut an image into tiles resolve it on the whole image first).
    pub mapping: Option<Mapping>,
}

impl From<&Options> for Normalisation {
    fn from(o: &Options) -> Self {
        Normalisation { scale: o.scale, mean: o.mean, std: o.std, channel_order: o.channel_order, filter: o.resize_filter, mapping: None }
    }
}

impl Normalisation {
    /// RGB pixels, resized bilinearly, scaled by `scale` then `(v - mean[c]) / std[c]`; no stage set.
    pub fn rgb(scale: f32, mean: [f32; 3], std: [f32; 3]) -> Self {
        Normalisation { scale, mean, std, channel_order: ChannelOrder::Rgb, filter: ResizeFilter::Bilinear, mapping: None }
    }

    pub fn with_mapping(self, mapping: Option<Mapping>) -> Self {
        Normalisation { mapping, ..self }
    }
}

/// Tensor data in the element type the model wants.
#[derive(Debug, Clone, PartialEq)]
pub enum TensorData {
    F32(Vec<f32>),
    F16(Vec<f16>),
    U8(Vec<u8>),
}

impl Default for TensorData {
    fn default() -> Self {
        TensorData::F32(Vec::new())
    }
}

impl TensorData {
    /// The data as an ONNX Runtime input of `shape`, borrowed (no copy).
    pub fn input(&self, shape: Vec<i64>) -> Result<ort::value::DynValueRef<'_>> {
        match self {
            TensorData::F32(v) => TensorRef::from_array_view((shape, v.as_slice())).map(|t| t.into_dyn()),
            TensorData::F16(v) => TensorRef::from_array_view((shape, v.as_slice())).map(|t| t.into_dyn()),
            TensorData::U8(v) => TensorRef::from_array_view((shape, v.as_slice())).map(|t| t.into_dyn()),
        }
        .map_err(|e| Error::internal(format!("cannot wrap the input tensor: {e}")))
    }

    fn bytes(&self) -> usize {
        match self {
            TensorData::F32(v) => v.capacity() * 4,
            TensorData::F16(v) => v.capacity() * 2,
            TensorData::U8(v) => v.capacity(),
        }
    }
}

/// How an image whose size differs from the model's is brought to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Resize the whole image to the model's size (one image, one run).
    Resize,
    /// Keep pixels 1:1 (a tile); rows and columns beyond the image repeat its last row and column.
    Pad,
    /// Resize the image to `(width, height)` at the top-left of the model's input; the rest is 0
    /// (SAM1's long-side resize and padding).
    Place { width: usize, height: usize },
}

impl Fit {
    /// The size an image of `image` is resized to for a model input of `model`; `None` where its
    /// pixels are used as they are (a tile, or already that size).
    fn resize_to(self, (mw, mh): (usize, usize), image: (usize, usize)) -> Option<(usize, usize)> {
        match self {
            Fit::Resize => Some((mw, mh)),
            Fit::Place { width, height } => Some((width.min(mw), height.min(mh))),
            Fit::Pad => None,
        }
        .filter(|t| *t != image)
    }
}

/// Where one image goes: batch item `index` of a tensor of `format` at model size `size`, brought
/// to that size by `fit`.
#[derive(Clone, Copy)]
struct Slot<'f> {
    index: usize,
    format: &'f TensorFormat,
    size: (usize, usize),
    fit: Fit,
}

/// Reusable buffers for building input tensors: a resizer, resized pixels, the tensor itself.
pub struct Preprocessor {
    pub(super) resizer: Resizer,
    /// Luminance of a colour image, for 1-channel models (Pillow converts before it resizes).
    gray: Vec<u8>,
    /// Resized pixels: one buffer for interleaved and gray images, three for planar ones.
    resized: [Vec<u8>; 3],
    /// Rows of a padded or bottom-up image gathered for the resizer.
    packed: Vec<u8>,
    pub(super) tensor: TensorData,
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

/// Buffers above this are not kept for the next call: one huge frame must not pin hundreds of
/// megabytes on every thread that ever saw one.
const KEEP_BYTES: usize = 64 << 20;

impl Preprocessor {
    /// Drops buffers larger than [`KEEP_BYTES`], keeping the small ones for reuse: one huge frame
    /// must not pin hundreds of megabytes until the session goes.
    pub fn shrink(&mut self) {
        let big = |v: &Vec<u8>| v.capacity() > KEEP_BYTES;
        for v in [&mut self.gray, &mut self.packed].into_iter().chain(self.resized.iter_mut()) {
            if big(v) {
                *v = Vec::new();
            }
        }
        if self.tensor.bytes() > KEEP_BYTES {
            self.tensor = TensorData::default();
        }
    }
}

/// Builds the input tensor (batch 1) for `image` at model size `size`, in fresh buffers.
pub fn prepare(image: &ImageView<'_>, format: &TensorFormat, size: (usize, usize), norm: &Normalisation, fit: Fit) -> Result<TensorData> {
    let mut pre = Preprocessor::default();
    pre.start_batch(format, size, 1)?;
    pre.fill(0, image, format, size, norm, fit)?;
    Ok(std::mem::take(&mut pre.tensor))
}

impl Preprocessor {
    /// The input tensor (batch 1) for `image` resized to model size `size`.
    pub fn prepare(
        &mut self,
        image: &ImageView<'_>,
        format: &TensorFormat,
        size: (usize, usize),
        options: &Options,
        mapping: Option<Mapping>,
    ) -> Result<&TensorData> {
        self.start_batch(format, size, 1)?;
        self.fill(0, image, format, size, &Normalisation::from(options).with_mapping(mapping), Fit::Resize)?;
        Ok(&self.tensor)
    }

    /// Sizes the tensor for `batch` images of model size `(mw, mh)`; fill each with [`Self::fill`].
    pub fn start_batch(&mut self, format: &TensorFormat, (mw, mh): (usize, usize), batch: usize) -> Result<()> {
        let len = batch * mw * mh * format.channels;
        let what = "the input tensor";
        match (&mut self.tensor, format.element) {
            (TensorData::F32(v), Element::F32) => alloc::resize(v, len, 0.0, what),
            (TensorData::F16(v), Element::F16) => alloc::resize(v, len, f16::ZERO, what),
            (TensorData::U8(v), Element::U8) => alloc::resize(v, len, 0, what),
            (t, element) => {
                *t = match element {
                    Element::F32 => TensorData::F32(alloc::vec_of(len, 0.0, what)?),
                    Element::F16 => TensorData::F16(alloc::vec_of(len, f16::ZERO, what)?),
                    Element::U8 => TensorData::U8(alloc::vec_of(len, 0, what)?),
                };
                Ok(())
            }
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
        format: &TensorFormat,
        (mw, mh): (usize, usize),
        norm: &Normalisation,
        fit: Fit,
    ) -> Result<()> {
        let channels = format.channels;
        if channels != 1 && channels != 3 {
            return Err(Error::unsupported_model(format!("{channels} input channels")));
        }
        // No mapping resolved by the caller: the default stage's, decided in one place (`mapping_for`).
        let mapping = match norm.mapping {
            Some(m) => Some(m),
            None => mapping_for(None, image)?,
        };
        if let Some(mapping) = mapping {
            return self.fill_mapped(image, Slot { index, format, size: (mw, mh), fit }, norm, &mapping);
        }
        let Preprocessor { resizer, gray, resized, packed, tensor } = self;

        // 1-channel models see luminance; everything else is resized in the host's own layout.
        let source = if channels == 1 && image.format() != PixelFormat::Gray8 {
            image.to_gray8_into(gray)?;
            ImageView::new(gray, image.width(), image.height(), 0, PixelFormat::Gray8)?
        } else {
            *image
        };
        let planes = if source.format().is_planar() { 3 } else { 1 };
        let step = source.format().bytes_per_pixel();
        let target = fit.resize_to((mw, mh), (source.width(), source.height()));
        if let Some(size) = target {
            for (plane, buffer) in resized.iter_mut().enumerate().take(planes) {
                resize_plane_into(resizer, &source, plane, size, norm.filter, packed, buffer)?;
            }
        }
        let (src_w, src_h) = target.unwrap_or((source.width(), source.height()));
        let row = |plane: usize, y: usize| -> &[u8] {
            let y = y.min(src_h - 1);
            if target.is_some() {
                &resized[plane][y * src_w * step..(y + 1) * src_w * step]
            } else {
                source.row(plane, y)
            }
        };

        // Model channel c reads colour `colour(c)` (0 = R, 1 = G, 2 = B) at (plane, byte offset).
        let colour = |c: usize| match norm.channel_order {
            ChannelOrder::Bgr => 2 - c,
            ChannelOrder::Rgb => c,
        };
        let taps: Vec<(usize, usize)> = (0..channels).map(|c| source.format().colour_tap(colour(c))).collect();
        // One table per model channel folds scale, mean and std into a load.
        let luts: Vec<[f32; 256]> =
            (0..channels).map(|c| std::array::from_fn(|v| (v as f32 * norm.scale - norm.mean[c]) / norm.std[c])).collect();

        let item = mw * mh * channels;
        let edges = if matches!(fit, Fit::Place { .. }) { Edges::Zero } else { Edges::Repeat };
        let shape = Shape { width: mw, height: mh, src_width: src_w, src_height: src_h, step, layout: format.layout, edges };
        match tensor {
            TensorData::F32(v) => normalise(&mut v[index * item..(index + 1) * item], &luts, &taps, shape, row),
            TensorData::F16(v) => {
                let luts: Vec<[f16; 256]> = luts.iter().map(|l| l.map(f16::from_f32)).collect();
                normalise(&mut v[index * item..(index + 1) * item], &luts, &taps, shape, row)
            }
            TensorData::U8(v) => {
                let luts: Vec<[u8; 256]> = luts.iter().map(|l| l.map(|x| x.round().clamp(0.0, 255.0) as u8)).collect();
                normalise(&mut v[index * item..(index + 1) * item], &luts, &taps, shape, row)
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(channels: usize, layout: Layout, element: Element, _size: (usize, usize)) -> TensorFormat {
        TensorFormat { channels, layout, element }
    }

    /// The straightforward way: packed RGB (or gray) of the whole image, resized, then normalised.
    fn reference(image: &ImageView<'_>, spec: &TensorFormat, (mw, mh): (usize, usize), options: &Options) -> Vec<f32> {
        let c = spec.channels;
        let packed = if c == 1 { image.to_gray8() } else { image.to_rgb8() };
        let resized = crate::image::resize::resize_u8(packed, (image.width(), image.height()), c, (mw, mh), options.resize_filter).unwrap();
        let mut out = vec![0f32; mw * mh * c];
        for i in 0..mw * mh {
            for ch in 0..c {
                let colour = if c == 3 && options.channel_order == ChannelOrder::Bgr { 2 - ch } else { ch };
                let v = (resized[i * c + colour] as f32 * options.scale - options.mean[ch]) / options.std[ch];
                match spec.layout {
                    Layout::Nchw => out[ch * mw * mh + i] = v,
                    Layout::Nhwc => out[i * c + ch] = v,
                }
            }
        }
        out
    }

    /// Packed RGB test pixels of `(w, h)` (the mapped path's tests use them too).
    pub(in crate::image::tensor) fn test_image(w: usize, h: usize) -> Vec<u8> {
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
            ImageView::new(&rgb, w, h, 0, PixelFormat::Rgb24).unwrap(),
            ImageView::new(&bgr, w, h, 0, PixelFormat::Bgr24).unwrap(),
            ImageView::new(&rgba, w, h, 0, PixelFormat::Rgba32).unwrap(),
            ImageView::new(&bgra, w, h, 0, PixelFormat::Bgra32).unwrap(),
            ImageView::new(&gray, w, h, 0, PixelFormat::Gray8).unwrap(),
            ImageView::planar(&planes[0], &planes[1], &planes[2], w, h, 0).unwrap(),
        ];
        let mut options = Options { mean: [0.1, 0.2, 0.3], std: [0.5, 0.25, 2.0], ..Options::default() };
        let mut pre = Preprocessor::default();
        for view in &views {
            for (channels, layout, order, size) in [
                (3, Layout::Nchw, ChannelOrder::Rgb, (16, 12)),
                (3, Layout::Nhwc, ChannelOrder::Bgr, (16, 12)),
                (3, Layout::Nchw, ChannelOrder::Bgr, (w, h)),
                (1, Layout::Nchw, ChannelOrder::Rgb, (64, 40)),
                (1, Layout::Nhwc, ChannelOrder::Rgb, (w, h)),
            ] {
                options.channel_order = order;
                let spec = spec(channels, layout, Element::F32, size);
                let expected = reference(view, &spec, size, &options);
                let got = pre.prepare(view, &spec, size, &options, None).unwrap();
                assert_eq!(*got, TensorData::F32(expected), "{:?} {channels} ch {layout:?} {order:?} {size:?}", view.format());
            }
        }
    }

    #[test]
    fn f16_tensors_equal_converted_f32_ones() {
        let (w, h) = (20usize, 10usize);
        let rgb = test_image(w, h);
        let view = ImageView::new(&rgb, w, h, 0, PixelFormat::Rgb24).unwrap();
        let options = Options { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225], ..Options::default() };
        let TensorData::F32(f32s) =
            prepare(&view, &spec(3, Layout::Nchw, Element::F32, (8, 8)), (8, 8), &Normalisation::from(&options), Fit::Resize).unwrap()
        else {
            panic!()
        };
        let TensorData::F16(f16s) =
            prepare(&view, &spec(3, Layout::Nchw, Element::F16, (8, 8)), (8, 8), &Normalisation::from(&options), Fit::Resize).unwrap()
        else {
            panic!()
        };
        assert_eq!(f16s, f32s.iter().map(|v| f16::from_f32(*v)).collect::<Vec<_>>());
    }

    #[test]
    fn padded_tiles_repeat_the_last_row_and_column() {
        let (w, h) = (3usize, 2usize);
        let gray = [10u8, 20, 30, 40, 50, 60];
        let view = ImageView::new(&gray, w, h, 0, PixelFormat::Gray8).unwrap();
        let options = Options { scale: 1.0, ..Options::default() };
        for layout in [Layout::Nchw, Layout::Nhwc] {
            let spec = spec(1, layout, Element::F32, (5, 3));
            let mut pre = Preprocessor::default();
            pre.start_batch(&spec, (5, 3), 2).unwrap();
            pre.fill(1, &view, &spec, (5, 3), &Normalisation::from(&options), Fit::Pad).unwrap();
            let TensorData::F32(v) = pre.tensor() else { panic!() };
            assert_eq!(&v[..15], &[0.0; 15]);
            assert_eq!(&v[15..], &[10., 20., 30., 30., 30., 40., 50., 60., 60., 60., 40., 50., 60., 60., 60.]);
        }
    }

    #[test]
    fn placed_images_are_padded_with_zeros() {
        let gray = [10u8, 20, 30, 40];
        let view = ImageView::new(&gray, 2, 2, 0, PixelFormat::Gray8).unwrap();
        let norm = Normalisation::rgb(1.0, [5.0; 3], [1.0; 3]);
        let format = TensorFormat { channels: 1, layout: Layout::Nchw, element: Element::F32 };
        let TensorData::F32(v) = prepare(&view, &format, (3, 3), &norm, Fit::Place { width: 2, height: 2 }).unwrap() else { panic!() };
        assert_eq!(v, vec![5.0, 15.0, 0.0, 25.0, 35.0, 0.0, 0.0, 0.0, 0.0]);
        let format = TensorFormat { channels: 3, layout: Layout::Nchw, element: Element::U8 };
        let norm = Normalisation { scale: 1.0, mean: [0.0; 3], std: [1.0; 3], ..norm };
        let TensorData::U8(v) = prepare(&view, &format, (2, 3), &norm, Fit::Place { width: 2, height: 2 }).unwrap() else { panic!() };
        assert_eq!(&v[..6], &[10, 20, 30, 40, 0, 0]);
    }
}
