//! ONNX Runtime sessions: building one (`session`), the cache of optimised models (`cache`), the bounded pool a handle keeps (`pool`), what the
//! model declares (`io`), the provider a session got (`providers`), what this machine offers (`probe`), running one (`run`), the
//! CPU arena every session shares (`arena`) and memory figures (`memory`).

pub mod arena;
pub mod cache;
pub mod declared_io;
pub mod external_data;
pub mod io;
pub mod memory;
pub mod narrow_path;
pub mod placement;
pub mod pool;
pub mod probe;
pub mod provider_errors;
pub mod providers;
pub mod run;
pub mod run_cost;
pub mod session;
pub mod shared_graph;
pub mod trt_profile;

pub use cache::{CacheReport, CacheStatus};
pub use pool::{GraphSharing, PoolStats, SessionPool};
pub use probe::{probe_providers, ProviderProbe};
pub use providers::ProviderReport;
pub use run::run;
pub use run_cost::{Batch, Budget, RunCosts};
pub use session::{build_session, read_model_bytes, read_model_file, run_error};
