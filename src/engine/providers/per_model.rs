//! What segrt holds for one model beside the user's `Options` (never inside them): the pipelines
//! derive it when they build a model's sessions, the session builder, the model cache and the pool
//! take it next to the options. Today TensorRT's shape profile and the model's side files.

use std::sync::Arc;

use crate::engine::external_data::ExternalData;
use crate::options::{Options, Provider, TrtProfiles};

use super::tensorrt::profile::{checked_everywhere, Derived, ShapeProfile};

/// What was derived for one model (the default: nothing).
#[derive(Debug, Clone, Default)]
pub struct PerModel {
    /// The model's TensorRT shape profile (see `tensorrt::profile`): given to TensorRT under
    /// `TrtProfiles::Auto`, and runs are checked against it.
    pub trt_profile: Derived,
    /// The model's side files (ONNX external data): given with a model in memory, or read beside
    /// its file (`external_data::resolve`); handed to every session and part of the cache key.
    pub external_data: Arc<ExternalData>,
}

impl PerModel {
    /// What a model whose shape profile `derive` gives needs under `options`: `derive` is called only
    /// where TensorRT runs the model with profiles on, or runs are checked everywhere (tests), since
    /// it reads the model's protobuf.
    pub fn derive(options: &Options, derive: impl FnOnce() -> Derived) -> PerModel {
        let where_used = options.provider == Provider::TensorRt || checked_everywhere();
        let trt_profile = if where_used && options.gpu.trt_profiles == TrtProfiles::Auto { derive() } else { Derived::Nothing };
        PerModel { trt_profile, external_data: Arc::default() }
    }

    /// The same with the side files given with the model in memory.
    pub fn with_side_files(self, external_data: Arc<ExternalData>) -> PerModel {
        PerModel { external_data, ..self }
    }

    /// The shape profile TensorRT is given for this model under `options`: TensorRT is the
    /// provider, profiles are on, and one was derived.
    pub fn trt_profile_given(&self, options: &Options) -> Option<&ShapeProfile> {
        let on = options.provider == Provider::TensorRt && options.gpu.trt_profiles == TrtProfiles::Auto;
        self.trt_profile.profile().map(|p| &**p).filter(|_| on)
    }

    /// The profile runs of this model are checked against under `options`: the one given to
    /// TensorRT, or under `tensorrt::profile::checked_everywhere` (tests) the one derived, whatever
    /// the provider.
    pub fn trt_profile_checked(&self, options: &Options) -> Option<Arc<ShapeProfile>> {
        let everywhere = checked_everywhere() && options.gpu.trt_profiles == TrtProfiles::Auto;
        let on = self.trt_profile_given(options).is_some() || everywhere;
        self.trt_profile.profile().cloned().filter(|_| on)
    }
}
