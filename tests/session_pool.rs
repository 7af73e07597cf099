//! A pool of a model read from a file does not hold the file's bytes for the life of the handle:
//! it reads the file again when it grows, and only while the file is what its first session was
//! built from. A changed file stops the growth; calls then wait for a session instead of failing.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{model, two_calls_at_once, unet_outputs};
use segrt::engine::{GraphSharing, SessionPool};

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("segrt-pool-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A pool of the demo UNet read from `file`, as the SAM2 encoder's is (no graph saved at creation:
/// its first extra session is built from the model).
fn pool_of(file: &Path) -> SessionPool {
    let options = segrt::Options { max_sessions: 2, ..segrt::Options::default() };
    let bytes = segrt::engine::read_model_file(file, options.max_model_bytes).unwrap();
    SessionPool::new(bytes, Some(file), &options, GraphSharing::AtFirstGrowth).unwrap()
}

#[test]
fn a_pool_grows_from_its_file_read_again() {
    let dir = fresh_dir("grows");
    let file = dir.join("unet.onnx");
    std::fs::copy(model("demo_unet.onnx"), &file).unwrap();
    let pool = pool_of(&file);
    let expected = pool.with(|s, _| Ok(unet_outputs(s))).unwrap();
    // The second call builds another session from the file.
    let results = two_calls_at_once(&pool);
    assert_eq!(pool.stats().created, 2);
    assert!(pool.stats().shared_graph_bytes.is_some(), "the second session saved the graph later ones share");
    for r in results {
        assert_eq!(r, expected);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_changed_model_file_stops_the_growth_and_the_call_waits_instead() {
    let dir = fresh_dir("changed");
    let file = dir.join("unet.onnx");
    std::fs::copy(model("demo_unet.onnx"), &file).unwrap();
    let pool = pool_of(&file);
    let expected = pool.with(|s, _| Ok(unet_outputs(s))).unwrap();
    // Another model under the same name (same size or not, its bytes differ).
    std::fs::copy(model("test/unet_sigmoid.onnx"), &file).unwrap();
    let results: Vec<Vec<f32>> = std::thread::scope(|scope| {
        let holder = scope.spawn(|| {
            pool.with(|s, _| {
                std::thread::sleep(Duration::from_millis(300)); // the other call arrives meanwhile
                Ok(unet_outputs(s))
            })
            .unwrap()
        });
        std::thread::sleep(Duration::from_millis(100));
        let waiter = scope.spawn(|| pool.with(|s, _| Ok(unet_outputs(s))).unwrap());
        vec![holder.join().unwrap(), waiter.join().unwrap()]
    });
    let stats = pool.stats();
    assert_eq!(stats.created, 1, "no session was built from the changed file");
    assert!(stats.waits >= 1, "the second call waited for the first session");
    for r in results {
        assert_eq!(r, expected, "both calls ran the model the pool was created with");
    }
    // Later calls beyond the one session wait too, without trying the file again.
    std::fs::copy(model("demo_unet.onnx"), &file).unwrap();
    assert_eq!(pool.with(|s, _| Ok(unet_outputs(s))).unwrap(), expected);
    assert_eq!(pool.stats().created, 1);
    let _ = std::fs::remove_dir_all(&dir);
}
