//! The float path of the input tensor: pixels through the intensity stage (16-bit, signed and float
//! pixels always; 8-bit ones when a stage is set), read as floats, mapped, resized in float, then
//! normalised.

use half::f16;

use crate::alloc;
use crate::error::Result;
use crate::image::intensity::Mapping;
use crate::image::resize::resize_f32_into;
use crate::image::ImageView;
use crate::options::ChannelOrder;

use super::{Fit, Layout, Normalisation, Preprocessor, Slot, TensorData};

impl Preprocessor {
    /// [`Self::fill`] through the intensity stage: each colour read as floats (any sample type and
    /// alignment), mapped, converted to luminance for 1-channel models (ITU-R 601-2 weights, in
    /// float), resized in float with the same filter, then `(v * scale - mean) / std`.
    pub(super) fn fill_mapped(&mut self, image: &ImageView<'_>, slot: Slot<'_>, norm: &Normalisation, mapping: &Mapping) -> Result<()> {
        let Slot { index, format, size: (mw, mh), fit } = slot;
        let channels = format.channels;
        let (w, h) = (image.width(), image.height());
        let source_colours = image.format().colours();
        // A gray image gives every model colour the same values: one plane, mapped and resized once.
        let colours = if channels == 1 || source_colours == 1 { 1 } else { 3 };
        let what = "the mapped image";
        let mut planes: Vec<Vec<f32>> = (0..colours).map(|_| alloc::vec_of(w * h, 0f32, what)).collect::<Result<_>>()?;
        let mut row = Vec::new();
        for y in 0..h {
            if colours == 1 && source_colours == 3 {
                const WEIGHTS: [f32; 3] = [0.299, 0.587, 0.114];
                let dst = &mut planes[0][y * w..(y + 1) * w];
                dst.fill(0.0);
                for (c, weight) in WEIGHTS.iter().enumerate() {
                    image.colour_row_into(c, y, &mut row);
                    dst.iter_mut().zip(&row).for_each(|(d, v)| *d += weight * mapping.apply(*v));
                }
            } else {
                for (c, plane) in planes.iter_mut().enumerate() {
                    image.colour_row_into(c, y, &mut row);
                    plane[y * w..(y + 1) * w].iter_mut().zip(&row).for_each(|(d, v)| *d = mapping.apply(*v));
                }
            }
        }
        let target = fit.resize_to((mw, mh), (w, h));
        let (src_w, src_h) = target.unwrap_or((w, h));
        if let Some(size) = target {
            for plane in planes.iter_mut() {
                let mut out = alloc::vec_of(size.0 * size.1, 0f32, "the resized mapped image")?;
                resize_f32_into(plane, (w, h), &mut out, size, norm.filter)?;
                *plane = out;
            }
        }
        let colour = |c: usize| match (colours, norm.channel_order) {
            (1, _) => 0,
            (_, ChannelOrder::Bgr) => 2 - c,
            (_, ChannelOrder::Rgb) => c,
        };
        let zero_edges = matches!(fit, Fit::Place { .. });
        let base = index * mw * mh * channels;
        // One model row at a time, written with one match on the element type (not one per value).
        let mut values = vec![0f32; mw];
        for c in 0..channels {
            let plane = &planes[colour(c)];
            for y in 0..mh {
                // Channel `c` of row `y`; 0 where zero padding lies (0 in every element type), the
                // last row and column repeated otherwise.
                if zero_edges && y >= src_h {
                    values.fill(0.0);
                } else {
                    let src = &plane[y.min(src_h - 1) * src_w..][..src_w];
                    let inside = mw.min(src_w);
                    let (mean, std) = (norm.mean[c], norm.std[c]);
                    values[..inside].iter_mut().zip(src).for_each(|(d, v)| *d = (v * norm.scale - mean) / std);
                    let edge = if zero_edges { 0.0 } else { (src[src_w - 1] * norm.scale - mean) / std };
                    values[inside..].fill(edge);
                }
                let (start, step) = match format.layout {
                    Layout::Nchw => (base + c * mw * mh + y * mw, 1),
                    Layout::Nhwc => (base + y * mw * channels + c, channels),
                };
                match &mut self.tensor {
                    TensorData::F32(t) => t[start..].iter_mut().step_by(step).zip(&values).for_each(|(d, v)| *d = *v),
                    TensorData::F16(t) => t[start..].iter_mut().step_by(step).zip(&values).for_each(|(d, v)| *d = f16::from_f32(*v)),
                    TensorData::U8(t) => {
                        t[start..].iter_mut().step_by(step).zip(&values).for_each(|(d, v)| *d = v.round().clamp(0.0, 255.0) as u8)
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::test_image;
    use super::super::{prepare, Element, TensorFormat};
    use super::*;
    use crate::image::PixelFormat;
    use crate::options::Options;

    #[test]
    fn the_mapped_path_equals_the_8bit_path_where_no_resize_rounds() {
        use crate::image::intensity::{Intensity, Range};
        // 16-bit values that the window maps back to the 8-bit ones exactly; no resize (Pad, and Place
        // at the image's size), so both paths compute the same floats, edges and layouts included.
        let (w, h) = (5usize, 3usize);
        let rgb = test_image(w, h);
        let wide: Vec<u8> = rgb.iter().flat_map(|v| (*v as u16 * 256).to_le_bytes()).collect();
        let narrow = ImageView::new(&rgb, w, h, 0, PixelFormat::Rgb24).unwrap();
        let view = ImageView::new(&wide, w, h, 0, PixelFormat::Rgb48).unwrap();
        let stage = Intensity { range: Range::Window { low: 0.0, high: 255.0 * 256.0 }, ..Intensity::default() };
        let options = Options { mean: [0.1, 0.2, 0.3], std: [0.5, 0.25, 2.0], ..Options::default() };
        let norm = Normalisation::from(&options);
        let mapped = norm.with_mapping(Some(stage.resolve(&view).unwrap()));
        for element in [Element::F32, Element::F16, Element::U8] {
            for layout in [Layout::Nchw, Layout::Nhwc] {
                for (channels, fit) in [(3, Fit::Pad), (3, Fit::Place { width: w, height: h }), (1, Fit::Pad)] {
                    let format = TensorFormat { channels, layout, element };
                    let norm =
                        if element == Element::U8 { Normalisation { scale: 1.0, mean: [0.0; 3], std: [1.0; 3], ..norm } } else { norm };
                    let mapped = Normalisation { mapping: mapped.mapping, ..norm };
                    let want = prepare(&narrow, &format, (7, 4), &norm, fit).unwrap();
                    let got = prepare(&view, &format, (7, 4), &mapped, fit).unwrap();
                    if channels == 3 {
                        assert_eq!(got, want, "{element:?} {layout:?} {fit:?}");
                    } else {
                        // Luminance: Pillow's fixed-point rounding against float weights.
                        let (TensorData::F32(g), TensorData::F32(e)) = (&got, &want) else { continue };
                        assert!(g.iter().zip(e).all(|(a, b)| (a - b).abs() <= 1.0 / 255.0 / 0.5 + 1e-5), "{layout:?}");
                    }
                }
            }
        }
        // No setting: a 16-bit image gets per-image min-max to 0..255, never its high byte.
        let low: Vec<u8> = [100u16, 200, 300, 400].iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = ImageView::new(&low, 4, 1, 0, PixelFormat::Gray16).unwrap();
        let format = TensorFormat { channels: 1, layout: Layout::Nchw, element: Element::U8 };
        let raw = Normalisation { scale: 1.0, mean: [0.0; 3], std: [1.0; 3], ..norm };
        assert_eq!(prepare(&view, &format, (4, 1), &raw, Fit::Pad).unwrap(), TensorData::U8(vec![0, 85, 170, 255]));
    }
}
