//! How segrt reads a UNet-style model: input layout, channels, element types, fixed or dynamic
//! axes, and which output is the segmentation map. Read from the model's metadata; nothing is
//! assumed from position alone.

use ort::session::Session;
use serde::Serialize;

use crate::engine::io::{describe, inputs_of, outputs_of, TensorInfo};
use crate::engine::providers::tensorrt::profile::ShapeProfile;
use crate::error::{Error, Result};
use crate::image::tensor::{Element, Layout, TensorFormat};
use crate::options::{Options, TileMode};

/// How segrt interprets a UNet-style model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnetSpec {
    pub input_name: String,
    pub input_layout: Layout,
    pub input_element: Element,
    /// 1 (gray) or 3 (colour).
    pub channels: usize,
    /// Fixed input height/width, `None` when the axis is dynamic.
    pub height: Option<usize>,
    pub width: Option<usize>,
    /// The batch axis is dynamic: several tiles can run in one call.
    pub batch_dynamic: bool,
    pub output_name: String,
    pub output_element: Element,
    /// Output classes when the model declares them; 1 = binary probability/logit map.
    pub classes: Option<usize>,
    /// Why `output_name` is the output read: named by the caller, or the first segmentation map.
    pub output_choice: String,
}

/// Whether an output shape's spatial axes ([1,H,W], [1,K,H,W] or [1,H,W,K]) can be the input's
/// `(h, w)`: equal, or dynamic on either side.
fn spatial_matches(shape: &[i64], (h, w): (i64, i64)) -> bool {
    let fits = |a: i64, b: i64| a < 0 || b < 0 || a == b;
    let pair = |i: usize| fits(shape[i], h) && fits(shape[i + 1], w);
    match shape.len() {
        3 => pair(1),
        4 => pair(2) || pair(1),
        _ => false,
    }
}

fn dim(d: i64) -> Option<usize> {
    (d > 0).then_some(d as usize)
}

impl UnetSpec {
    /// Reads the model's metadata, or explains why it is not a UNet segrt can run.
    pub fn from_session(session: &Session, output_name: Option<&str>) -> Result<Self> {
        let (inputs, outputs) = (inputs_of(session), outputs_of(session));
        Self::from_io(&inputs, &outputs, output_name).map_err(|why| {
            Error::unsupported_model(format!(
                "{why}; expected one image input [1,C,H,W] or [1,H,W,C] (C = 1 or 3, float32/float16) and a float \
                 output [1,K,H,W], [1,H,W,K] or [1,H,W]; the model has inputs: {}; outputs: {}",
                describe(&inputs),
                describe(&outputs)
            ))
        })
    }

    /// The spec from the model's declared inputs and outputs; `Err` says what does not fit.
    pub fn from_io(inputs: &[TensorInfo], outputs: &[TensorInfo], output_name: Option<&str>) -> std::result::Result<Self, String> {
        let [input] = inputs else { return Err(format!("the model has {} inputs, a UNet has one", inputs.len())) };
        let float = |t: &TensorInfo| Element::float_named(&t.dtype);
        let input_element = float(input).ok_or_else(|| format!("input element type {} is not float32/float16", input.dtype))?;
        let shape = &input.shape;
        if shape.len() != 4 {
            return Err(format!("the input has rank {}, not 4", shape.len()));
        }
        if shape[0] > 1 {
            return Err(format!("the input batch size is fixed at {}", shape[0]));
        }
        let is_channels = |d: i64| d == 1 || d == 3;
        // The channel axis is axis 1 when that is 1 or 3 (NCHW), else axis 3 (NHWC).
        let (input_layout, channels, h, w) = if is_channels(shape[1]) {
            (Layout::Nchw, shape[1] as usize, shape[2], shape[3])
        } else if is_channels(shape[3]) {
            (Layout::Nhwc, shape[3] as usize, shape[1], shape[2])
        } else {
            return Err("cannot find a channel axis of size 1 or 3 in the input".into());
        };

        // The segmentation map: the float output of rank 3 or 4 whose spatial size is the input's
        // (equal, or dynamic where either is dynamic), or the one the options name. Anything else
        // (a SAM2 encoder's features, a classifier's scores) is not a UNet's output.
        let float_map = |t: &&TensorInfo| float(t).is_some() && (t.shape.len() == 3 || t.shape.len() == 4);
        let (output, output_choice) = match output_name {
            Some(name) => {
                let named = outputs.iter().find(|t| t.name == name).ok_or_else(|| {
                    let names: Vec<&str> = outputs.iter().map(|t| t.name.as_str()).collect();
                    format!("the model has no output named '{name}' (its outputs: {})", names.join(", "))
                })?;
                let named = Some(named).filter(float_map).ok_or_else(|| format!("output '{name}' is not a float map of rank 3 or 4"))?;
                (named, format!("'{name}': named by the caller (output_name)"))
            }
            None => {
                let maps: Vec<&TensorInfo> = outputs.iter().filter(float_map).filter(|t| spatial_matches(&t.shape, (h, w))).collect();
                let first = *maps.first().ok_or(
                    "no float output of rank 3 or 4 has the input's height and width (a segmentation map does); \
                     name the output to use in the output_name option if the model really is one",
                )?;
                let why = match maps.len() {
                    1 if outputs.len() == 1 => format!("'{}': the model's only output", first.name),
                    1 => format!("'{}': the only float output with the input's height and width", first.name),
                    n => format!(
                        "'{}': the first of {n} float outputs with the input's height and width ({}); name another in output_name",
                        first.name,
                        maps.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                };
                (first, why)
            }
        };
        let classes = match (output.shape.len(), input_layout) {
            (3, _) => Some(1),
            (_, Layout::Nchw) => dim(output.shape[1]),
            (_, Layout::Nhwc) => dim(output.shape[3]),
        };
        Ok(UnetSpec {
            input_name: input.name.clone(),
            input_layout,
            input_element,
            channels,
            height: dim(h),
            width: dim(w),
            batch_dynamic: shape[0] < 0,
            output_name: output.name.clone(),
            output_element: float(output).expect("filtered above"),
            classes,
            output_choice,
        })
    }

    /// The input tensor shape for a model-space size `(w, h)`, batch 1.
    pub fn input_shape(&self, w: usize, h: usize) -> [i64; 4] {
        self.batch_input_shape(1, w, h)
    }

    /// The input tensor shape for `batch` images of model-space size `(w, h)`.
    pub fn batch_input_shape(&self, batch: usize, w: usize, h: usize) -> [i64; 4] {
        let (n, c, h, w) = (batch as i64, self.channels as i64, h as i64, w as i64);
        match self.input_layout {
            Layout::Nchw => [n, c, h, w],
            Layout::Nhwc => [n, h, w, c],
        }
    }

    /// The input tensor this model wants for one image.
    pub fn tensor_format(&self) -> TensorFormat {
        TensorFormat { channels: self.channels, layout: self.input_layout, element: self.input_element }
    }

    /// The size (w, h) the model runs at for an image of `image` size.
    ///
    /// Fixed axes come from the model. Dynamic axes use `options.input_size` when set, else the image
    /// size rounded to the nearest multiple of `options.size_multiple` (at least one multiple).
    pub fn model_size(&self, image: (usize, usize), options: &Options) -> (usize, usize) {
        let round = |v: usize| {
            let m = options.size_multiple.max(1);
            ((v + m / 2) / m).max(1) * m
        };
        let (fw, fh) = options.input_size.unwrap_or((round(image.0), round(image.1)));
        (self.width.unwrap_or(fw), self.height.unwrap_or(fh))
    }

    /// The tile size: the model's fixed axes, else `tile_size`, else `input_size`, else 512x512.
    pub fn tile_size(&self, options: &Options) -> (usize, usize) {
        let (w, h) = options.tile_size.or(options.input_size).unwrap_or((512, 512));
        (self.width.unwrap_or(w), self.height.unwrap_or(h))
    }

    /// The TensorRT shape profile of the model's input (`declared`: its inputs): the shapes segrt
    /// feeds it under `options`. Whole images run one at a time at `model_size`, tiles at `tile_size`
    /// in batches of up to `tile_batch`; under `TileMode::Auto` a whole image is at most twice the
    /// tile each way, so its size is bounded even where it follows the image. `Err` when a dynamic
    /// height or width follows images of any size (tiles off, no input size).
    pub fn trt_profile(&self, declared: &[TensorInfo], options: &Options) -> std::result::Result<Option<ShapeProfile>, String> {
        let fixed = (self.width.is_some() && self.height.is_some()) || options.input_size.is_some();
        let tile = self.tile_size(options);
        let tile_batch = if self.batch_dynamic { options.tile_batch.max(1) } else { 1 };
        // The smallest and largest whole-image sizes (model_size is monotonic in the image size).
        let whole = if fixed {
            let s = self.model_size((1, 1), options);
            Some((s, s))
        } else if options.tile_mode == TileMode::Auto {
            Some((self.model_size((1, 1), options), self.model_size((2 * tile.0, 2 * tile.1), options)))
        } else {
            None
        };
        // (smallest size, largest size, most images per run) of each kind of run the tile mode allows,
        // and the run TensorRT tunes for.
        let tiles = (tile, tile, tile_batch);
        let (runs, opt) = match (options.tile_mode, whole) {
            (TileMode::On, _) => (vec![tiles], (tile, tile_batch)),
            (TileMode::Off, Some((small, large))) => (vec![(small, large, 1)], (large, 1)),
            (TileMode::Auto, Some((small, large))) => (vec![(small, large, 1), tiles], if fixed { (large, 1) } else { (tile, 1) }),
            _ => {
                return Err("the model's height and width are dynamic and whole images run at their own size \
                            (set input_width/input_height, or tile_mode ON or AUTO)"
                    .into())
            }
        };
        let min = |f: fn(&(usize, usize)) -> usize| runs.iter().map(|(small, _, _)| f(small)).min().unwrap_or(0);
        let max = |f: fn(&(usize, usize)) -> usize| runs.iter().map(|(_, large, _)| f(large)).max().unwrap_or(0);
        let max_batch = runs.iter().map(|(_, _, b)| *b).max().unwrap_or(1);
        let shapes = [
            self.batch_input_shape(1, min(|s| s.0), min(|s| s.1)),
            self.batch_input_shape(opt.1, opt.0 .0, opt.0 .1),
            self.batch_input_shape(max_batch, max(|s| s.0), max(|s| s.1)),
        ];
        let input: Vec<TensorInfo> = declared.iter().filter(|t| t.name == self.input_name).cloned().collect();
        ShapeProfile::derive(&input, |_, axis| Some((shapes[0][axis], shapes[1][axis], shapes[2][axis])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_classes_and_the_output_are_read_from_the_io() {
        let spec =
            UnetSpec::from_io(&[TensorInfo::new("x", "f32", &[1, 3, 256, 256])], &[TensorInfo::new("y", "f32", &[1, 1, 256, 256])], None)
                .unwrap();
        assert_eq!((spec.input_layout, spec.channels, spec.classes, spec.width), (Layout::Nchw, 3, Some(1), Some(256)));
        let spec =
            UnetSpec::from_io(&[TensorInfo::new("x", "f16", &[-1, -1, -1, 1])], &[TensorInfo::new("y", "f16", &[-1, -1, -1, 4])], None)
                .unwrap();
        assert_eq!((spec.input_layout, spec.channels, spec.classes, spec.batch_dynamic), (Layout::Nhwc, 1, Some(4), true));
        // A second output of the input's size is found past a smaller first one; a name picks any.
        let outputs = [TensorInfo::new("aux", "f32", &[1, 8, 64, 64]), TensorInfo::new("mask", "f32", &[1, 2, 256, 256])];
        assert_eq!(UnetSpec::from_io(&[TensorInfo::new("x", "f32", &[1, 3, 256, 256])], &outputs, None).unwrap().output_name, "mask");
        assert_eq!(UnetSpec::from_io(&[TensorInfo::new("x", "f32", &[1, 3, 256, 256])], &outputs, Some("aux")).unwrap().output_name, "aux");
        let e = UnetSpec::from_io(&[TensorInfo::new("x", "f32", &[1, 3, 256, 256])], &outputs, Some("nope")).unwrap_err();
        assert!(e.contains("no output named 'nope' (its outputs: aux, mask)"), "{e}");
        let e = UnetSpec::from_io(&[TensorInfo::new("x", "u8", &[1, 3, 256, 256])], &outputs, None).unwrap_err();
        assert!(e.contains("not float32/float16"), "{e}");
    }

    #[test]
    fn the_choice_of_output_says_why() {
        let x = [TensorInfo::new("x", "f32", &[1, 3, 320, 320])];
        let one = UnetSpec::from_io(&x, &[TensorInfo::new("y", "f32", &[1, 1, 320, 320])], None).unwrap();
        assert_eq!(one.output_choice, "'y': the model's only output");
        // U^2-Net-P: seven maps of the input's size, the fused one first.
        let seven: Vec<TensorInfo> = (1959..=1965).map(|n| TensorInfo::new(&n.to_string(), "f32", &[1, 1, 320, 320])).collect();
        let spec = UnetSpec::from_io(&x, &seven, None).unwrap();
        assert_eq!(spec.output_name, "1959");
        assert!(
            spec.output_choice.starts_with("'1959': the first of 7") && spec.output_choice.contains("1960, "),
            "{}",
            spec.output_choice
        );
        let spec = UnetSpec::from_io(&x, &seven, Some("1962")).unwrap();
        assert_eq!((spec.output_name.as_str(), spec.output_choice.as_str()), ("1962", "'1962': named by the caller (output_name)"));
        let mixed = [TensorInfo::new("features", "f32", &[1, 8, 80, 80]), TensorInfo::new("mask", "f32", &[1, 1, 320, 320])];
        let spec = UnetSpec::from_io(&x, &mixed, None).unwrap();
        assert_eq!(spec.output_choice, "'mask': the only float output with the input's height and width");
    }

    #[test]
    fn only_outputs_of_the_inputs_size_are_segmentation_maps() {
        assert!(spatial_matches(&[1, 1, 256, 256], (256, 256)));
        assert!(spatial_matches(&[1, 256, 256, 3], (256, 256)));
        assert!(spatial_matches(&[1, 256, 256], (256, 256)));
        assert!(spatial_matches(&[-1, 2, -1, -1], (-1, -1)));
        assert!(spatial_matches(&[1, 1, -1, -1], (512, 512)));
        // a SAM2 encoder's features: a quarter of the input
        assert!(!spatial_matches(&[1, 32, 64, 64], (256, 256)));
        assert!(!spatial_matches(&[1, 10], (256, 256)));
    }
}
