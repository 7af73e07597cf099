//! Whether a decoder in transformers' layout takes the empty `[1,0,4]` box tensor segrt sends for
//! clicks without a box. A decoder traced plainly (`Sam2Model.forward` under PyTorch's non-dynamo
//! exporter with a box in its dummy, the objects axis fixed at 1) bakes the box branch: fed no box,
//! it still appends three box tokens, read from the empty buffer, and its masks are undefined (NaN,
//! or values that change from run to run). segrt finds out at load with a check run and refuses
//! prompts without a box on such a decoder, saying why.

use ort::session::Session;
use ort::value::Tensor;

use crate::engine::{self, io::f32_output, io::TensorInfo};
use crate::error::{Error, Result};

use super::spec::{NumberType, Sam2Spec};

/// Runs the decoder twice on a click without a box (zero image features, the click in the middle
/// and the padding point, `input_boxes` [1,0,4]): a graph that handles "no box" gives the same finite
/// masks both times.
pub(super) fn takes_zero_boxes(session: &mut Session, spec: &Sam2Spec, decoder_inputs: &[TensorInfo]) -> Result<bool> {
    let Some(boxes_name) = spec.layout.input_boxes() else { return Ok(true) };
    let wrap = |e: ort::Error| Error::internal(format!("cannot build a decoder input for the check run: {e}"));
    let s = spec.image_size as f32;
    let mut once = || -> Result<Vec<f32>> {
        let mut inputs: Vec<(String, ort::session::SessionInputValue<'static>)> = Vec::new();
        for (_, name) in &spec.decoder_features {
            let info =
                decoder_inputs.iter().find(|i| &i.name == name).ok_or_else(|| Error::internal(format!("no decoder input '{name}'")))?;
            let shape: Vec<usize> = info.shape.iter().map(|d| if *d > 0 { *d as usize } else { 1 }).collect();
            let len = shape.iter().product();
            inputs.push((name.clone(), Tensor::from_array((shape, vec![0f32; len])).map_err(wrap)?.into()));
        }
        inputs.push((
            spec.point_coords.clone(),
            Tensor::from_array(([1usize, 1, 2, 2], vec![s / 2.0, s / 2.0, 0.0, 0.0])).map_err(wrap)?.into(),
        ));
        let labels = match spec.label_type {
            NumberType::F32 => Tensor::from_array(([1usize, 1, 2], vec![1f32, -1.0])).map_err(wrap)?.into(),
            NumberType::I64 => Tensor::from_array(([1usize, 1, 2], vec![1i64, -1])).map_err(wrap)?.into(),
            NumberType::I32 => Tensor::from_array(([1usize, 1, 2], vec![1i32, -1])).map_err(wrap)?.into(),
        };
        inputs.push((spec.point_labels.clone(), labels));
        inputs.push((boxes_name.to_string(), Tensor::from_array(([1usize, 0, 4], Vec::<f32>::new())).map_err(wrap)?.into()));
        engine::run(session, inputs, engine::ArenaRelease::Never, "SAM2 decoder check run", |outputs| {
            Ok(f32_output(outputs, &spec.masks_output, "SAM2 decoder")?.1)
        })
    };
    let (a, b) = (once()?, once()?);
    Ok(!a.is_empty() && a.iter().all(|v| v.is_finite()) && a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()))
}

/// The refusal of a prompt without a box on a decoder that cannot take one.
pub(super) fn refusal(convention: &str) -> Error {
    Error::unsupported_model(format!(
        "this '{convention}' decoder cannot take a prompt without a box: it was traced with a box input of fixed length, \
         so for the empty box tensor it appends three box tokens read from an empty buffer and its masks are undefined \
         (found by a check run at load). Give a box with the clicks, or re-export the decoder so that zero boxes work \
         (models/sam2/export_transformers.py's decoder wrapper)"
    ))
}
