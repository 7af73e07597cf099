//! SAM2 in two pipelines, each in its own folder: the image predictor (`image`: clicks and boxes on
//! one image, segment-everything) and the video tracker (`video`: objects followed through frames or
//! slices).

pub mod image;
pub mod reference;
pub mod video;

pub use image::{
    everything, many, model_space, prompt, spec, validate_prompt, validate_prompts, BoxPrompt, DecoderLayout, EncoderInput,
    EverythingObject, EverythingOptions, EverythingResult, EverythingStats, Family, Feature, ManyRun, ManyStats, NumberType, Point, Prompt,
    Sam2Info, Sam2Output, Sam2Run, Sam2Segmenter, Sam2Spec, Sam2Stats, MAX_OBJECTS, MAX_POINTS, MAX_PROMPTS, PROFILE_MAX_BATCH,
    PROFILE_MAX_POINTS,
};
