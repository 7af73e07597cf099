//! The encoder's side of a pair: its one image input and the role of each feature it outputs, by
//! name, else by shape.

use crate::engine::io::TensorInfo;

use super::{feature_role, EncoderInput, Feature};

/// What the encoder declares: one rank-4 image input and its features by role.
pub(super) struct EncoderSide {
    pub(super) input_name: String,
    pub(super) input: EncoderInput,
    pub(super) image_size: usize,
    pub(super) outputs: Vec<(Feature, String)>,
    pub(super) decisions: Vec<String>,
}

/// The role a feature map of `shape` plays in a model of input size `s`, by its spatial size:
/// the embedding is S/16, the high-res features S/4 and S/8.
fn role_by_shape(shape: &[i64], s: usize) -> Option<Feature> {
    let [_, _, h, w] = shape else { return None };
    let side = (*h == *w && *h > 0).then_some(*h as usize)?;
    [(16, Feature::Embed), (4, Feature::HighRes0), (8, Feature::HighRes1)].into_iter().find(|(f, _)| side * f == s).map(|(_, r)| r)
}

impl EncoderSide {
    pub(super) fn read(inputs: &[TensorInfo], outputs: &[TensorInfo]) -> std::result::Result<Self, String> {
        let [image] = inputs else { return Err(format!("the encoder has {} inputs, not 1", inputs.len())) };
        if image.shape.len() != 4 || image.shape[1] != 3 {
            return Err("the encoder input is not [1,3,S,S]".into());
        }
        let input = match image.dtype.as_str() {
            "f32" => EncoderInput::NormalizedF32,
            "u8" => EncoderInput::RawU8,
            other => return Err(format!("encoder input type {other} is neither float32 nor uint8")),
        };
        let image_size = if image.shape[2] > 0 { image.shape[2] as usize } else { 1024 };
        let names: Vec<&str> = outputs.iter().map(|t| t.name.as_str()).collect();
        let mut named: Vec<(Feature, String)> = names.iter().filter_map(|n| feature_role(n, &names).map(|r| (r, n.to_string()))).collect();
        // Exports that name their outputs plainly (MobileSAM-class `output`): the role from the shape,
        // for a role no name claimed.
        let mut decisions = Vec::new();
        for t in outputs {
            let unnamed = !named.iter().any(|(_, n)| *n == t.name);
            let role = role_by_shape(&t.shape, image_size).filter(|r| unnamed && !named.iter().any(|(taken, _)| taken == r));
            if let Some(role) = role {
                decisions.push(format!(
                    "encoder output '{}' {:?} is the {} by its shape (1/{} of the {image_size}-pixel input)",
                    t.name,
                    t.shape,
                    match role {
                        Feature::Embed => "image embedding",
                        Feature::HighRes0 => "first high-res feature",
                        Feature::HighRes1 => "second high-res feature",
                    },
                    match role {
                        Feature::Embed => 16,
                        Feature::HighRes0 => 4,
                        Feature::HighRes1 => 8,
                    }
                ));
                named.push((role, t.name.clone()));
            }
        }
        Ok(EncoderSide { input_name: image.name.clone(), input, image_size, outputs: named, decisions })
    }
}
