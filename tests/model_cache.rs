//! The model cache (`SegOptions.cache_mode`/`cache_dir`) through the C ABI: a cached start gives the
//! same masks as an uncached one and says so in `seg_session_info`; every kind of damaged cache file
//! is detected, logged through `seg_set_log_callback`, deleted and rebuilt; a folder that cannot be
//! written never fails the create; bad options are refused with a message. The log callback is
//! process-wide: each test only looks at lines naming its own folder.

mod common;

use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::Mutex;

use common::*;
use segrt::ffi::*;

static SEEN: Mutex<Vec<(i32, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn collect(level: i32, message: *const c_char, _user_data: *mut c_void) {
    SEEN.lock().unwrap().push((level, CStr::from_ptr(message).to_string_lossy().into_owned()));
}

fn listen() {
    assert_eq!(unsafe { seg_set_log_callback(Some(collect), ptr::null_mut()) }, SegStatus::SEG_OK);
}

/// Log lines naming `needle` (a test's own folder), taken out of the shared list.
fn lines_about(needle: &str) -> Vec<(i32, String)> {
    let mut seen = SEEN.lock().unwrap();
    let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut *seen).into_iter().partition(|(_, m)| m.contains(needle));
    *seen = rest;
    mine
}

/// A fresh, empty folder for one test.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("segrt-model-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Options with the cache in `dir` (the CString must outlive the options).
fn cached_options(dir: &CStr) -> SegOptions {
    let mut o = default_options();
    o.cache_mode = SegCacheMode::SEG_CACHE_DIR as i32;
    o.cache_dir = dir.as_ptr();
    o
}

fn cache_status(s: &Session) -> String {
    session_info(s.0)["cache"]["status"].as_str().unwrap().to_string()
}

/// The cache files (not temporary ones) in `dir`.
fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let temporary: Vec<_> = files.iter().filter(|p| p.file_name().unwrap().to_string_lossy().starts_with('.')).collect();
    assert!(temporary.is_empty(), "temporary files left behind: {temporary:?}");
    files
}

/// Mask and probability of the demo model on one sample.
fn segment(s: &Session) -> (Vec<u8>, Vec<f32>) {
    let img = load_rgb(&sample("lesion_01.png"));
    let out = run_rgb(s, &img);
    (out.mask, out.prob)
}

#[test]
fn a_cached_start_gives_the_same_masks_and_reports_a_hit() {
    listen();
    let dir = fresh_dir("hit");
    let c = cstr(dir.to_str().unwrap());
    let reference = segment(&create(&model("demo_unet.onnx"), None).unwrap());

    let first = create(&model("demo_unet.onnx"), Some(&cached_options(&c))).unwrap();
    assert_eq!(cache_status(&first), "miss");
    let files = cache_files(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].extension().is_some_and(|e| e == "segrt-cache"), "{files:?}");
    assert_eq!(session_info(first.0)["cache"]["file"].as_str().unwrap(), files[0].to_str().unwrap());
    assert_eq!(segment(&first), reference, "the session that wrote the cache");
    drop(first);

    let second = create(&model("demo_unet.onnx"), Some(&cached_options(&c))).unwrap();
    assert_eq!(cache_status(&second), "hit");
    assert_eq!(segment(&second), reference, "the session loaded from the cache");
    let lines = lines_about(dir.to_str().unwrap());
    assert!(lines.iter().any(|(l, m)| *l == SegLogLevel::SEG_LOG_INFO as i32 && m.contains("model cache miss")), "{lines:?}");
    assert!(lines.iter().any(|(l, m)| *l == SegLogLevel::SEG_LOG_INFO as i32 && m.contains("model cache hit")), "{lines:?}");

    // Another model gets its own file; the first one's stays valid.
    let other = create(&model("demo_unet_fp16.onnx"), Some(&cached_options(&c))).unwrap();
    assert_eq!(cache_status(&other), "miss");
    assert_eq!(cache_files(&dir).len(), 2);
    assert_eq!(cache_status(&create(&model("demo_unet.onnx"), Some(&cached_options(&c))).unwrap()), "hit");
    // Without the cache option nothing is read or written.
    assert_eq!(cache_status(&create(&model("demo_unet.onnx"), None).unwrap()), "off");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where a cache file's JSON header is: before its length (4 bytes) and the end marker (8 bytes).
fn header_range(bytes: &[u8]) -> std::ops::Range<usize> {
    let n = bytes.len();
    let len = u32::from_le_bytes(bytes[n - 12..n - 8].try_into().unwrap()) as usize;
    n - 12 - len..n - 12
}

/// Replaces the text `from` by `to` (same length) in the file's header.
fn edit_header(file: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    let mut bytes = std::fs::read(file).unwrap();
    let header = header_range(&bytes);
    let text = String::from_utf8(bytes[header.clone()].to_vec()).unwrap();
    assert!(text.contains(from), "{text}");
    bytes[header].copy_from_slice(text.replacen(from, to, 1).as_bytes());
    std::fs::write(file, bytes).unwrap();
}

/// A file with this entry's own header (right key, versions, checksum) around a payload ONNX Runtime refuses.
fn well_formed_but_not_a_model(file: &Path) {
    let bytes = std::fs::read(file).unwrap();
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[header_range(&bytes)]).unwrap();
    let payload = b"this is not an ONNX model at all".to_vec();
    header["payload_bytes"] = payload.len().into();
    header["payload_xxh3_128"] = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&payload)).into();
    let header = serde_json::to_vec(&header).unwrap();
    let mut out = payload;
    out.extend_from_slice(&header);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&bytes[bytes.len() - 8..]);
    std::fs::write(file, out).unwrap();
}

#[test]
fn damaged_cache_files_are_detected_logged_and_rebuilt() {
    listen();
    let dir = fresh_dir("damage");
    let c = cstr(dir.to_str().unwrap());
    let reference = segment(&create(&model("demo_unet.onnx"), None).unwrap());
    // Another model's cache file, to copy over this one's.
    let other_dir = fresh_dir("damage-other");
    let oc = cstr(other_dir.to_str().unwrap());
    drop(create(&model("demo_unet_fp16.onnx"), Some(&cached_options(&oc))).unwrap());
    let others_file = cache_files(&other_dir).remove(0);

    drop(create(&model("demo_unet.onnx"), Some(&cached_options(&c))).unwrap());
    let file = cache_files(&dir).remove(0);
    let good = std::fs::read(&file).unwrap();
    let ort_version =
        session_info(create(&model("demo_unet.onnx"), None).unwrap().0)["onnxruntime"]["version"].as_str().unwrap().to_string();
    let older = format!("0.{}", &ort_version[2..]); // same length, another version

    type Damage = Box<dyn Fn(&Path)>;
    let g = good.clone();
    let cases: Vec<(&str, Damage, &str)> = vec![
        ("truncated", Box::new(move |f: &Path| std::fs::write(f, &g[..g.len() / 2]).unwrap()), "truncated"),
        (
            "a flipped byte in the model part",
            Box::new({
                let g = good.clone();
                move |f: &Path| {
                    let mut b = g.clone();
                    let i = b.len() - b.len() / 3;
                    b[i] ^= 0x40;
                    std::fs::write(f, b).unwrap()
                }
            }),
            "checksum",
        ),
        ("another model's file", Box::new(move |f: &Path| std::fs::copy(&others_file, f).map(drop).unwrap()), "another model"),
        (
            "another ONNX Runtime version in the header",
            Box::new({
                let (v, o) = (ort_version.clone(), older.clone());
                move |f: &Path| edit_header(f, &format!("\"onnxruntime\":\"{v}\""), &format!("\"onnxruntime\":\"{o}\""))
            }),
            "made by ONNX Runtime",
        ),
        ("not a cache file at all", Box::new(|f: &Path| std::fs::write(f, b"PK\x03\x04 some zip").unwrap()), "end marker"),
        ("empty", Box::new(|f: &Path| std::fs::write(f, b"").unwrap()), "end marker"),
        ("a well-formed file ONNX Runtime refuses", Box::new(well_formed_but_not_a_model), "ONNX Runtime cannot load it"),
    ];
    for (what, damage, reason) in cases {
        std::fs::write(&file, &good).unwrap();
        damage(&file);
        assert_ne!(std::fs::read(&file).unwrap(), good, "{what}: the damage changed nothing");
        let s = create(&model("demo_unet.onnx"), Some(&cached_options(&c))).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        let i = session_info(s.0);
        assert_eq!(i["cache"]["status"], "rebuilt", "{what}: {i}");
        assert!(i["cache"]["note"].as_str().unwrap().contains(reason), "{what}: {}", i["cache"]["note"]);
        let lines = lines_about(file.to_str().unwrap());
        let warned = lines.iter().any(|(l, m)| *l == SegLogLevel::SEG_LOG_WARN as i32 && m.contains("not usable") && m.contains(reason));
        assert!(warned, "{what}: no warning naming '{reason}' in {lines:?}");
        assert_eq!(segment(&s), reference, "{what}: masks after the rebuild");
        // The rebuilt file is valid again.
        assert_eq!(cache_status(&create(&model("demo_unet.onnx"), Some(&cached_options(&c))).unwrap()), "hit", "{what}");
        assert_eq!(cache_files(&dir).len(), 1, "{what}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other_dir);
}

#[test]
fn a_cache_folder_that_cannot_be_written_only_costs_the_cache() {
    listen();
    let base = fresh_dir("unwritable");
    let reference = segment(&create(&model("demo_unet.onnx"), None).unwrap());

    // A folder that cannot be created: its parent is a file.
    std::fs::write(base.join("a-file"), b"x").unwrap();
    let below_a_file = base.join("a-file").join("cache");
    let c = cstr(below_a_file.to_str().unwrap());
    let s = create(&model("demo_unet.onnx"), Some(&cached_options(&c))).expect("create succeeds without the cache");
    assert_eq!(cache_status(&s), "unwritable");
    assert_eq!(segment(&s), reference);
    let lines = lines_about(below_a_file.to_str().unwrap());
    assert!(lines.iter().any(|(l, m)| *l == SegLogLevel::SEG_LOG_WARN as i32 && m.contains("not written")), "{lines:?}");

    // A read-only folder (root may write anyway: then that case cannot be made here).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let read_only = base.join("read-only");
        std::fs::create_dir_all(&read_only).unwrap();
        std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::File::create(read_only.join("probe")).is_ok() {
            eprintln!("running as a user who may write to a read-only folder (root): that case is not checked");
        } else {
            let c = cstr(read_only.to_str().unwrap());
            let s = create(&model("demo_unet.onnx"), Some(&cached_options(&c))).expect("create succeeds without the cache");
            assert_eq!(cache_status(&s), "unwritable");
            assert_eq!(segment(&s), reference);
        }
        std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn the_beside_model_folder_is_next_to_the_model() {
    let dir = fresh_dir("beside");
    let copy = dir.join("модель.onnx");
    std::fs::copy(model("demo_unet.onnx"), &copy).unwrap();
    let mut o = default_options();
    o.cache_mode = SegCacheMode::SEG_CACHE_BESIDE_MODEL as i32;
    assert_eq!(cache_status(&create(&copy, Some(&o)).unwrap()), "miss");
    assert_eq!(cache_files(&dir.join("segrt-cache")).len(), 1);
    assert_eq!(cache_status(&create(&copy, Some(&o)).unwrap()), "hit");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_cache_options_are_refused_with_a_message() {
    let bytes = std::fs::read(model("demo_unet.onnx")).unwrap();
    let from_memory = |o: &SegOptions| {
        let mut s: *mut SegSession = ptr::null_mut();
        let st = unsafe { seg_create_from_memory(bytes.as_ptr(), bytes.len(), o, &mut s) };
        unsafe { seg_free(s) };
        (st, last_error())
    };
    let mut o = default_options();
    o.cache_mode = 7;
    let (st, msg) = create(&model("demo_unet.onnx"), Some(&o)).err().unwrap();
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("cache_mode") && msg.contains('7'), "{msg}");

    o.cache_mode = SegCacheMode::SEG_CACHE_DIR as i32;
    let (st, msg) = create(&model("demo_unet.onnx"), Some(&o)).err().unwrap();
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("cache_dir is NULL"), "{msg}");

    let mut o = default_options();
    o.cache_mode = SegCacheMode::SEG_CACHE_BESIDE_MODEL as i32;
    let (st, msg) = from_memory(&o);
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("BESIDE_MODEL") && msg.contains("memory"), "{msg}");

    // From memory with a cache folder works (no file name needed: the key is the content).
    let dir = fresh_dir("memory");
    let c = cstr(dir.to_str().unwrap());
    let (st, msg) = from_memory(&cached_options(&c));
    assert_eq!(st, SegStatus::SEG_OK, "{msg}");
    assert_eq!(cache_files(&dir).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

fn sam2_model(name: &str) -> PathBuf {
    repo().join("models/sam2").join(name)
}

fn create_sam2(o: Option<&SegOptions>) -> Session {
    let e = cstr(sam2_model("sam2_tiny_samexporter_encoder.onnx").to_str().unwrap());
    let d = cstr(sam2_model("sam2_tiny_samexporter_decoder.onnx").to_str().unwrap());
    let mut s: *mut SegSession = ptr::null_mut();
    let st = unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), o.map_or(ptr::null(), |o| o as *const _), &mut s) };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    Session(s)
}

fn click(s: &Session) -> Vec<u8> {
    let img = load_rgb(&sam2_model("reference/img0.png"));
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut mask = vec![0u8; img.w * img.h];
    let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
    let point = SegPoint { x: 105.0, y: 105.0, label: 1 };
    let st = unsafe {
        seg_run_sam2_points(s.0, &desc, &point, 1, ptr::null(), ptr::null(), 0, 0, &m, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
    };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    mask
}

#[test]
fn sam2_caches_its_encoder_and_decoder_each_on_its_own() {
    let dir = fresh_dir("sam2");
    let c = cstr(dir.to_str().unwrap());
    let reference = click(&create_sam2(None));
    let statuses = |s: &Session| {
        let i = session_info(s.0);
        (i["encoder_cache"]["status"].as_str().unwrap().to_string(), i["decoder_cache"]["status"].as_str().unwrap().to_string())
    };
    let first = create_sam2(Some(&cached_options(&c)));
    assert_eq!(statuses(&first), ("miss".into(), "miss".into()));
    assert_eq!(click(&first), reference);
    assert_eq!(cache_files(&dir).len(), 2);
    let second = create_sam2(Some(&cached_options(&c)));
    assert_eq!(statuses(&second), ("hit".into(), "hit".into()));
    assert_eq!(click(&second), reference);

    // Damage only the decoder's file: the encoder's still serves.
    let decoder_file = PathBuf::from(session_info(second.0)["decoder_cache"]["file"].as_str().unwrap());
    let bytes = std::fs::read(&decoder_file).unwrap();
    std::fs::write(&decoder_file, &bytes[..bytes.len() - 1]).unwrap();
    let third = create_sam2(Some(&cached_options(&c)));
    assert_eq!(statuses(&third), ("hit".into(), "rebuilt".into()));
    assert_eq!(click(&third), reference);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn more_sessions_of_a_pool_load_the_cached_model_too() {
    use segrt::engine::{GraphSharing, SessionPool};
    use segrt::options::CacheMode;
    let dir = fresh_dir("pool");
    let bytes = std::fs::read(model("demo_unet.onnx")).unwrap();
    let options = segrt::Options { cache: CacheMode::Dir(dir.clone()), max_sessions: 2, ..segrt::Options::default() };
    drop(SessionPool::<()>::new(bytes.clone(), None, &options, GraphSharing::AtCreation).unwrap());
    let pool = SessionPool::<()>::new(bytes.clone(), None, &options, GraphSharing::AtCreation).unwrap();
    assert_eq!(pool.cache.status, segrt::engine::CacheStatus::Hit);

    // Two calls at once: the second finds the first session busy and builds another (from the
    // cached optimised model); both give what an uncached session gives.
    let plain = SessionPool::<()>::new(bytes, None, &segrt::Options::default(), GraphSharing::AtCreation).unwrap();
    let expected = plain.with(|s, _| Ok(unet_outputs(s))).unwrap();
    let results = two_calls_at_once(&pool);
    assert_eq!(pool.stats().created, 2);
    for r in results {
        assert_eq!(r, expected);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
