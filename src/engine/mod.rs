//! ONNX Runtime sessions: a model's bytes (`model_file`) and its side files (`external_data`),
//! building a session (`session`; through the cache of optimised models: `cache`, `cached_build`;
//! sharing one graph: `shared_graph`, `shared_sessions`), the bounded pool a handle keeps (`pool`;
//! what it grows from: `pool_source`), what the model declares (`io`, `declared_io`; its protobuf
//! read through `onnx_proto`), the execution providers (`providers`: options, libraries, failures,
//! probe, placement, TensorRT profiles), running one (`run`) and what it costs (`run_cost`), the CPU
//! arena every session shares (`arena`, given back when idle: `idle_release`) and memory figures (`memory`).

pub mod arena;
pub mod cache;
pub mod cached_build;
pub mod declared_io;
pub mod external_data;
pub mod idle_release;
pub mod io;
pub mod memory;
pub mod model_file;
mod onnx_proto;
pub mod pool;
mod pool_source;
pub mod providers;
pub mod run;
pub mod run_cost;
pub mod session;
pub mod shared_graph;
pub mod shared_sessions;

pub use cache::{CacheReport, CacheStatus};
pub use model_file::{read_model_bytes, read_model_file};
pub use pool::{GraphSharing, PoolStats, SessionPool};
pub use providers::tensorrt::profile as trt_profile;
pub use providers::{probe_providers, ProviderProbe, ProviderReport};
pub use run::{run, ArenaRelease};
pub use run_cost::{Batch, Budget, RunCosts};
pub use session::{build_session, run_error};
