//! The on-disk cache of ONNX Runtime's optimised models: a later start loads the graph ONNX
//! Runtime's optimiser produced the first time instead of optimising the model again.
//!
//! The optimised graph is kept in ONNX format, not ONNX Runtime's ORT format: measured here (ONNX
//! Runtime 1.31.1, CPU), the real-size SAM2 hiera-tiny encoder loaded from either in about the same
//! time with the optimiser off (optimised ONNX 235 ms, ORT format 239 ms with
//! `session.use_ort_model_bytes_directly`, 435 ms without; the original model 1657 ms), but a first
//! start that writes the ORT format took 4.0 s, against 2.1 s writing ONNX (1.66 s writing nothing).
//!
//! One file per key, `<key>.segrt-cache`: the optimised model as ONNX Runtime wrote it, followed by
//! a trailer (JSON header: key, ONNX Runtime and segrt versions, format, model length and checksum;
//! the header's length; an end marker). A trailer, not a header: the trailer is appended to the file
//! ONNX Runtime wrote, which is then renamed into place, instead of copying hundreds of megabytes. The key is a
//! 128-bit xxh3 hash of the model bytes and of everything that shapes the optimised graph: segrt's
//! and ONNX Runtime's versions, the execution provider asked for (with its device), the
//! optimisation level and the CPU's instruction-set extensions (ONNX Runtime's layout transforms
//! are specific to them). Intra-op threads, pools and pre- and post-processing do not change the
//! graph and are not in the key.
//!
//! Nothing in a file is trusted before it is checked: the magic, every header field against what
//! this process expects, the payload's length and its checksum. A file that fails any check, or
//! that ONNX Runtime then refuses, is deleted and rebuilt from the original model, with a log line.
//! Files are written to a temporary name in the same folder and renamed into place, so a reader
//! never sees half a file, and a failed write only costs the cache, never the session.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_128, Xxh3};

use super::external_data::ExternalData;
use crate::options::Options;

/// The last bytes of every cache file.
const MAGIC: &[u8; 8] = b"SEGRTOC2";
/// Bumped when what goes into the key or the file layout changes.
const KEY_SCHEME: &str = "segrt-ort-cache-1";
/// The format the payload is in (ONNX Runtime's `session.save_model_format`).
pub const PAYLOAD_FORMAT: &str = "ONNX";
/// The file name extension of cache files.
pub const EXTENSION: &str = "segrt-cache";
/// The optimisation level the cached graph was made with (segrt builds with ONNX Runtime's default, all).
const OPTIMISATION_LEVEL: &str = "all";
/// A header larger than this is not one of ours.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// What the cache did for a session build, as `seg_session_info` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheStatus {
    /// No cache was asked for.
    Off,
    /// The optimised model was loaded from the cache.
    Hit,
    /// No cache file yet: the model was optimised and the result written.
    Miss,
    /// A cache file was found but was stale, corrupt or refused: it was deleted, the model optimised
    /// again and the file rewritten.
    Rebuilt,
    /// The cache could not be written (e.g. a read-only folder): the session runs without it.
    Unwritable,
    /// The cache was not used: the provider compiles (parts of) the graph, which ONNX Runtime cannot
    /// save, or the requested provider fell back to the CPU.
    Bypassed,
}

impl CacheStatus {
    /// The name `seg_session_info` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheStatus::Off => "off",
            CacheStatus::Hit => "hit",
            CacheStatus::Miss => "miss",
            CacheStatus::Rebuilt => "rebuilt",
            CacheStatus::Unwritable => "unwritable",
            CacheStatus::Bypassed => "bypassed",
        }
    }
}

/// The cache's part of `seg_session_info`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheReport {
    pub status: CacheStatus,
    /// The cache file (null when off).
    pub file: Option<String>,
    /// Why the cache was not used or had to be rebuilt (null when all went well).
    pub note: Option<String>,
}

impl CacheReport {
    pub fn off() -> Self {
        CacheReport { status: CacheStatus::Off, file: None, note: None }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    key: String,
    onnxruntime: String,
    segrt: String,
    format: String,
    payload_bytes: u64,
    payload_xxh3_128: String,
}

/// A cache file's bytes that passed every check; the optimised model is `bytes[..len]`.
#[derive(Debug)]
pub struct Optimised {
    bytes: Vec<u8>,
    len: usize,
}

impl Optimised {
    pub fn model(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// What a cache file holds for this key.
#[derive(Debug)]
pub enum Lookup {
    /// No file.
    Missing,
    /// A file that passed every check: its optimised model.
    Valid(Optimised),
    /// A file that must not be used, and why.
    Invalid(String),
}

/// The cache entry of one model under one set of settings.
#[derive(Debug, Clone)]
pub struct ModelCache {
    dir: PathBuf,
    key: String,
    ort_version: String,
    file: PathBuf,
}

/// Distinguishes the temporary files of one process's concurrent writers.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl ModelCache {
    /// The entry for `model` built with `options` by ONNX Runtime `ort_version`, in `dir`.
    pub fn new(dir: PathBuf, model: &[u8], side_files: &ExternalData, options: &Options, ort_version: &str) -> Self {
        let key = key_of(model, side_files, options, ort_version);
        let file = dir.join(format!("{key}.{EXTENSION}"));
        ModelCache { dir, key, ort_version: ort_version.to_string(), file }
    }

    pub fn file(&self) -> &Path {
        &self.file
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// Reads and checks the cache file. A payload longer than `max_bytes` is refused before it is read.
    pub fn lookup(&self, max_bytes: u64) -> Lookup {
        let meta = match std::fs::metadata(&self.file) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Missing,
            Err(e) => return Lookup::Invalid(format!("cannot read it: {e}")),
        };
        if !meta.is_file() {
            return Lookup::Invalid("it is not a regular file".into());
        }
        let bound = max_bytes.saturating_add(MAX_HEADER_BYTES as u64 + 12);
        if meta.len() > bound {
            return Lookup::Invalid(format!("it has {} bytes, more than the model limit (max_model_bytes) allows", meta.len()));
        }
        let mut bytes = Vec::new();
        if bytes.try_reserve_exact(meta.len() as usize + 1).is_err() {
            return Lookup::Invalid(format!("no memory to read its {} bytes", meta.len()));
        }
        if let Err(e) = std::fs::File::open(&self.file).and_then(|f| f.take(bound + 1).read_to_end(&mut bytes)) {
            return Lookup::Invalid(format!("cannot read it: {e}"));
        }
        match self.check(bytes) {
            Ok(payload) => Lookup::Valid(payload),
            Err(reason) => Lookup::Invalid(reason),
        }
    }

    /// Checks a cache file's bytes against this entry.
    fn check(&self, bytes: Vec<u8>) -> std::result::Result<Optimised, String> {
        let n = bytes.len();
        if n < MAGIC.len() + 4 || &bytes[n - MAGIC.len()..] != MAGIC {
            return Err("it is truncated or not a segrt model cache file (it does not end with the end marker)".into());
        }
        let header_len = u32::from_le_bytes(bytes[n - 12..n - 8].try_into().expect("4 bytes")) as usize;
        if header_len > MAX_HEADER_BYTES || 12 + header_len > n {
            return Err(format!("its header is truncated or too long ({header_len} bytes announced, {n} in the file)"));
        }
        let header: Header =
            serde_json::from_slice(&bytes[n - 12 - header_len..n - 12]).map_err(|e| format!("its header is unreadable: {e}"))?;
        if header.onnxruntime != self.ort_version {
            return Err(format!("it was made by ONNX Runtime {}, this is ONNX Runtime {}", header.onnxruntime, self.ort_version));
        }
        if header.segrt != env!("CARGO_PKG_VERSION") {
            return Err(format!("it was made by segrt {}, this is segrt {}", header.segrt, env!("CARGO_PKG_VERSION")));
        }
        if header.format != PAYLOAD_FORMAT {
            return Err(format!("it holds format '{}', not {PAYLOAD_FORMAT}", header.format));
        }
        if header.key != self.key {
            return Err(format!("it was made for another model or other settings (key {}, expected {})", header.key, self.key));
        }
        let payload_len = n - 12 - header_len;
        if payload_len as u64 != header.payload_bytes {
            return Err(format!(
                "it is truncated or padded: the model part has {payload_len} bytes, the header says {}",
                header.payload_bytes
            ));
        }
        let optimised = Optimised { bytes, len: payload_len };
        if hex128(xxh3_128(optimised.model())) != header.payload_xxh3_128 {
            return Err("its content does not match its checksum (the file is corrupt)".into());
        }
        Ok(optimised)
    }

    /// Deletes the cache file (a stale or corrupt one). Failing to is not an error: the next writer
    /// replaces it.
    pub fn discard(&self) {
        let _ = std::fs::remove_file(&self.file);
    }

    /// A new temporary file in the cache folder (created if missing) for ONNX Runtime to write the
    /// optimised model to. Creating it first proves the folder is writable.
    pub fn temp_path(&self) -> std::result::Result<PathBuf, String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("cannot create the cache folder '{}': {e}", self.dir.display()))?;
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        // ONNX Runtime also infers the format from the extension.
        let path = self.dir.join(format!(".{}.{}.{n}.tmp.onnx", self.key, std::process::id()));
        std::fs::File::create(&path).map_err(|e| format!("cannot write in the cache folder '{}': {e}", self.dir.display()))?;
        Ok(path)
    }

    /// Appends the trailer to the optimised model ONNX Runtime wrote at `ort_output` and renames it
    /// into place. `ort_output` is gone afterwards in every case.
    pub fn store(&self, ort_output: &Path) -> std::result::Result<(), String> {
        let result = self.store_inner(ort_output);
        let _ = std::fs::remove_file(ort_output);
        result
    }

    fn store_inner(&self, ort_output: &Path) -> std::result::Result<(), String> {
        let unreadable = |e: std::io::Error| format!("cannot read the optimised model ONNX Runtime wrote: {e}");
        let mut file = std::fs::File::open(ort_output).map_err(unreadable)?;
        let (mut hasher, mut len, mut chunk) = (Xxh3::new(), 0u64, vec![0u8; 1 << 20]);
        loop {
            let n = file.read(&mut chunk).map_err(unreadable)?;
            if n == 0 {
                break;
            }
            hasher.update(&chunk[..n]);
            len += n as u64;
        }
        if len == 0 {
            return Err("ONNX Runtime wrote no optimised model".into());
        }
        let trailer = self.trailer(len, hasher.digest128());
        // No fsync: a file torn by a crash fails its checks on the next start and is rebuilt, and
        // syncing hundreds of megabytes would slow every first start down.
        let written = std::fs::OpenOptions::new().append(true).open(ort_output).and_then(|mut f| f.write_all(&trailer));
        written.and_then(|_| std::fs::rename(ort_output, &self.file)).map_err(|e| format!("cannot write '{}': {e}", self.file.display()))
    }

    /// What follows the optimised model in a cache file: header, its length, end marker.
    fn trailer(&self, payload_len: u64, payload_hash: u128) -> Vec<u8> {
        let header = Header {
            key: self.key.clone(),
            onnxruntime: self.ort_version.clone(),
            segrt: env!("CARGO_PKG_VERSION").to_string(),
            format: PAYLOAD_FORMAT.to_string(),
            payload_bytes: payload_len,
            payload_xxh3_128: hex128(payload_hash),
        };
        let mut bytes = serde_json::to_vec(&header).expect("a plain struct serialises");
        bytes.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        bytes.extend_from_slice(MAGIC);
        bytes
    }

    /// A whole cache file's bytes for `payload`.
    #[cfg(test)]
    fn file_bytes(&self, payload: &[u8]) -> Vec<u8> {
        let mut bytes = payload.to_vec();
        bytes.extend_from_slice(&self.trailer(payload.len() as u64, xxh3_128(payload)));
        bytes
    }
}

fn hex128(v: u128) -> String {
    format!("{v:032x}")
}

/// The key of `model` (with its `side_files`) under `options` with ONNX Runtime `ort_version`:
/// everything that shapes the optimised graph, hashed with the model bytes.
pub fn key_of(model: &[u8], side_files: &ExternalData, options: &Options, ort_version: &str) -> String {
    let mut h = Xxh3::new();
    let settings = format!(
        "{KEY_SCHEME}\nsegrt {}\nonnxruntime {ort_version}\nformat {PAYLOAD_FORMAT}\nprovider {}\noptimisation {OPTIMISATION_LEVEL}\ntarget {}-{}\ncpu {}\nmodel {}\n",
        env!("CARGO_PKG_VERSION"),
        options.provider.display_name(options.device_id),
        std::env::consts::ARCH,
        std::env::consts::OS,
        cpu_features(),
        model.len(),
    );
    h.update(settings.as_bytes());
    side_files.hash_into(&mut h);
    h.update(model);
    hex128(h.digest128())
}

/// The instruction-set extensions ONNX Runtime's CPU kernels and layout transforms choose between.
pub fn cpu_features() -> String {
    #[allow(unused_mut)]
    let mut found: Vec<&str> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! detect {
            ($($f:tt),*) => { $(if std::arch::is_x86_feature_detected!($f) { found.push($f); })* };
        }
        detect!("sse4.1", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512vnni");
    }
    #[cfg(target_arch = "aarch64")]
    {
        macro_rules! detect {
            ($($f:tt),*) => { $(if std::arch::is_aarch64_feature_detected!($f) { found.push($f); })* };
        }
        detect!("neon", "dotprod", "fp16", "i8mm", "sve");
    }
    found.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Provider;

    fn entry(dir: &Path, model: &[u8], version: &str) -> ModelCache {
        ModelCache::new(dir.to_path_buf(), model, &ExternalData::none(), &Options::default(), version)
    }

    #[test]
    fn the_key_changes_with_the_model_the_runtime_and_the_provider_only() {
        let o = Options::default();
        let k = key_of(b"model", &ExternalData::none(), &o, "1.31.1");
        assert_eq!(k, key_of(b"model", &ExternalData::none(), &o, "1.31.1"));
        assert_eq!(k.len(), 32);
        assert_ne!(k, key_of(b"modem", &ExternalData::none(), &o, "1.31.1"));
        assert_ne!(k, key_of(b"model", &ExternalData::none(), &o, "1.31.2"));
        assert_ne!(k, key_of(b"model", &ExternalData::none(), &Options { provider: Provider::Cuda, ..Options::default() }, "1.31.1"));
        // Threads and post-processing do not shape the graph.
        assert_eq!(
            k,
            key_of(
                b"model",
                &ExternalData::none(),
                &Options { intra_threads: 3, threshold: 0.2, max_sessions: 2, ..Options::default() },
                "1.31.1"
            )
        );
    }

    #[test]
    fn a_stored_file_is_read_back_and_every_kind_of_damage_is_refused() {
        let dir = std::env::temp_dir().join(format!("segrt-cache-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let model = b"the original model".to_vec();
        let cache = entry(&dir, &model, "1.31.1");
        assert!(matches!(cache.lookup(1 << 20), Lookup::Missing));

        let out = cache.temp_path().unwrap();
        std::fs::write(&out, b"optimised graph bytes").unwrap();
        cache.store(&out).unwrap();
        assert!(!out.exists(), "the temporary file is removed");
        match cache.lookup(1 << 20) {
            Lookup::Valid(p) => assert_eq!(p.model(), b"optimised graph bytes"),
            other => panic!("{other:?}"),
        }
        let good = std::fs::read(cache.file()).unwrap();
        let invalid = |bytes: &[u8], c: &ModelCache| -> String {
            std::fs::write(c.file(), bytes).unwrap();
            match c.lookup(1 << 20) {
                Lookup::Invalid(reason) => reason,
                other => panic!("{other:?}"),
            }
        };
        assert!(invalid(&good[..good.len() - 3], &cache).contains("truncated"));
        assert!(invalid(&good[..20], &cache).contains("truncated"));
        let mut longer = good.clone();
        longer.splice(0..0, *b"extra");
        assert!(invalid(&longer, &cache).contains("padded"));
        let mut flipped = good.clone();
        flipped[0] ^= 1; // in the model part
        assert!(invalid(&flipped, &cache).contains("checksum"));
        assert!(invalid(b"garbage that is long enough", &cache).contains("end marker"));
        // Another ONNX Runtime's file under this name.
        let other_runtime = entry(&dir, &model, "1.30.0");
        let theirs = other_runtime.file_bytes(b"optimised graph bytes");
        assert!(invalid(&theirs, &cache).contains("ONNX Runtime 1.30.0"));
        // Another model's file under this name.
        let other_model = entry(&dir, b"another model", "1.31.1");
        assert!(invalid(&other_model.file_bytes(b"x"), &cache).contains("another model"));
        // Larger than the model limit: refused before reading.
        std::fs::write(cache.file(), vec![0u8; 100_000]).unwrap();
        assert!(matches!(cache.lookup(1), Lookup::Invalid(r) if r.contains("max_model_bytes")));
        cache.discard();
        assert!(matches!(cache.lookup(1 << 20), Lookup::Missing));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
