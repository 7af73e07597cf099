//! Encoding ahead through the C ABI: a host calls `seg_sam2_set_image` on a worker thread as soon as
//! it shows an image. A click on "the image set last" (image NULL) arriving during that encode
//! waits for it and segments the new image, not the previous one; a newer image cancels the older
//! encode (its call returns `SEG_CANCELLED`); `seg_sam2_reset` cancels it too; a waiting click can
//! be cancelled by its own control without stopping the encode.
//!
//! The encode is held in flight deterministically: its progress callback (called on the encoding
//! thread at the encoder's start) blocks until the test lets it go.

mod common;

use std::ffi::c_void;
use std::ptr;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use common::*;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

/// Holds an encode at its start: tells the test it is there, then waits to be let go.
struct Gate {
    arrived: Mutex<Sender<()>>,
    go: Mutex<Receiver<()>>,
}
unsafe extern "C" fn hold(stage: i32, fraction: f32, user_data: *mut c_void) -> i32 {
    let gate = unsafe { &*(user_data as *const Gate) };
    if stage == SegStage::SEG_STAGE_ENCODE as i32 && fraction == 0.0 {
        gate.arrived.lock().unwrap().send(()).unwrap();
        // A test that fails drops its sender, which lets the encode go (instead of hanging).
        let _ = gate.go.lock().unwrap().recv();
    }
    1
}

/// A control whose encode stops at its start until `go` is sent; `arrived` says it got there.
fn gated_control() -> (Control, Box<Gate>, Receiver<()>, Sender<()>) {
    let (arrived_tx, arrived_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel();
    let gate = Box::new(Gate { arrived: Mutex::new(arrived_tx), go: Mutex::new(go_rx) });
    let control = Control::new();
    let st = unsafe { seg_control_set_progress(control.0, Some(hold), &*gate as *const Gate as *mut c_void) };
    assert_eq!(st, SegStatus::SEG_OK);
    (control, gate, arrived_rx, go_tx)
}

/// Two encoder sessions, so a second encode is not queued behind the held one.
fn session() -> Session {
    let (e, d) = (
        cstr(sam2_dir().join("sam2_tiny_samexporter_encoder.onnx").to_str().unwrap()),
        cstr(sam2_dir().join("sam2_tiny_samexporter_decoder.onnx").to_str().unwrap()),
    );
    let mut o = default_options();
    o.max_sessions = 2;
    let mut s = ptr::null_mut();
    assert_eq!(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), &o, &mut s) }, SegStatus::SEG_OK, "{}", last_error());
    Session(s)
}

fn set_image(s: &Session, img: &Rgb, control: *mut SegCallControl) -> (SegStatus, String) {
    let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut ms = -1.0;
    let st = unsafe { seg_sam2_set_image(s.0, &desc, &mut ms, control) };
    (st, if st == SegStatus::SEG_OK { String::new() } else { last_error() })
}

/// A click at the centre of the image set last (image NULL) of `size`.
fn click_last(s: &Session, (w, h): (usize, usize), control: *mut SegCallControl) -> (SegStatus, Vec<u8>, String) {
    let mut mask = vec![0x33u8; w * h];
    let m = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let p = SegPoint { x: w as f32 / 2.0, y: h as f32 / 2.0, label: 1 };
    let st = unsafe {
        seg_run_sam2_points(s.0, ptr::null(), &p, 1, ptr::null(), ptr::null(), 0, 0, &m, ptr::null_mut(), ptr::null_mut(), control)
    };
    (st, mask, if st == SegStatus::SEG_OK { String::new() } else { last_error() })
}

/// A reference picture and its mirror image: two pictures of one size (a mask buffer fits either).
fn pictures() -> (Rgb, Rgb) {
    let a = load_rgb(&sam2_dir().join("reference/img0.png"));
    let mut data = a.data.clone();
    for row in data.chunks_exact_mut(a.w * 3) {
        let pixels: Vec<[u8; 3]> = row.chunks_exact(3).rev().map(|p| [p[0], p[1], p[2]]).collect();
        row.copy_from_slice(pixels.as_flattened());
    }
    let b = Rgb { data, w: a.w, h: a.h };
    (a, b)
}

/// What a click on `img` gives on a session that encoded only `img`.
fn expected_click(img: &Rgb) -> Vec<u8> {
    let s = session();
    assert_eq!(set_image(&s, img, ptr::null_mut()).0, SegStatus::SEG_OK);
    let (st, mask, e) = click_last(&s, (img.w, img.h), ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{e}");
    mask
}

#[test]
fn a_click_during_the_encode_waits_for_it_and_segments_the_new_image() {
    let (old, new) = pictures();
    let (want_old, want_new) = (expected_click(&old), expected_click(&new));
    assert_ne!(want_old, want_new, "the two pictures must give different masks for the test to mean anything");
    let s = session();
    assert_eq!(set_image(&s, &old, ptr::null_mut()).0, SegStatus::SEG_OK);
    let (control, _gate, arrived, go) = gated_control();
    thread::scope(|scope| {
        let go = go; // dropped if an assertion fails here, releasing the held encode
        let encode = scope.spawn(|| set_image(&s, &new, control.ptr()));
        arrived.recv().unwrap();
        // The encode of `new` is in flight: a click on the image set last must wait for it.
        let click = scope.spawn(|| click_last(&s, (new.w, new.h), ptr::null_mut()));
        thread::sleep(Duration::from_millis(200));
        assert!(!click.is_finished(), "the click did not wait for the encode of the image set last");
        go.send(()).unwrap();
        assert_eq!(encode.join().unwrap().0, SegStatus::SEG_OK);
        let (st, mask, e) = click.join().unwrap();
        assert_eq!(st, SegStatus::SEG_OK, "{e}");
        assert!(mask == want_new, "the waiting click did not segment the new image");
    });
}

#[test]
fn a_newer_image_cancels_the_older_encode() {
    let (old, new) = pictures();
    let want_new = expected_click(&new);
    let s = session();
    let (control, _gate, arrived, go) = gated_control();
    thread::scope(|scope| {
        let go = go; // dropped if an assertion fails here, releasing the held encode
        let encode_old = scope.spawn(|| set_image(&s, &old, control.ptr()));
        arrived.recv().unwrap();
        assert_eq!(set_image(&s, &new, ptr::null_mut()).0, SegStatus::SEG_OK);
        go.send(()).unwrap();
        let (st, message) = encode_old.join().unwrap();
        assert_eq!(st, SegStatus::SEG_CANCELLED, "the older encode was not cancelled: {message}");
        assert!(message.contains("newer image"), "{message}");
    });
    let (st, mask, e) = click_last(&s, (new.w, new.h), ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{e}");
    assert!(mask == want_new, "the image set last is not the newer one");
}

#[test]
fn reset_cancels_the_encode_in_flight() {
    let (img, _) = pictures();
    let s = session();
    let (control, _gate, arrived, go) = gated_control();
    thread::scope(|scope| {
        let go = go; // dropped if an assertion fails here, releasing the held encode
        let encode = scope.spawn(|| set_image(&s, &img, control.ptr()));
        arrived.recv().unwrap();
        assert_eq!(unsafe { seg_sam2_reset(s.0) }, SegStatus::SEG_OK);
        go.send(()).unwrap();
        assert_eq!(encode.join().unwrap().0, SegStatus::SEG_CANCELLED);
    });
    let (st, _, e) = click_last(&s, (img.w, img.h), ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT, "a reset session still had an image: {e}");
}

#[test]
fn a_waiting_click_can_be_cancelled_without_stopping_the_encode() {
    let (img, _) = pictures();
    let want = expected_click(&img);
    let s = session();
    let (control, _gate, arrived, go) = gated_control();
    let click_control = Control::new();
    thread::scope(|scope| {
        let go = go; // dropped if an assertion fails here, releasing the held encode
        let encode = scope.spawn(|| set_image(&s, &img, control.ptr()));
        arrived.recv().unwrap();
        let click = scope.spawn(|| click_last(&s, (img.w, img.h), click_control.ptr()));
        thread::sleep(Duration::from_millis(100));
        assert_eq!(unsafe { seg_control_cancel(click_control.ptr()) }, SegStatus::SEG_OK);
        let (st, mask, _) = click.join().unwrap();
        assert_eq!(st, SegStatus::SEG_CANCELLED, "the waiting click ignored its control");
        assert!(mask.iter().all(|v| *v == 0x33), "a cancelled click wrote its mask");
        go.send(()).unwrap();
        assert_eq!(encode.join().unwrap().0, SegStatus::SEG_OK, "{}", last_error());
    });
    let (st, mask, e) = click_last(&s, (img.w, img.h), ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{e}");
    assert!(mask == want);
}

#[test]
fn setting_the_cached_image_again_cancels_an_encode_of_another() {
    let (old, new) = pictures();
    let want_old = expected_click(&old);
    let s = session();
    assert_eq!(set_image(&s, &old, ptr::null_mut()).0, SegStatus::SEG_OK);
    let (control, _gate, arrived, go) = gated_control();
    thread::scope(|scope| {
        let go = go; // dropped if an assertion fails here, releasing the held encode
        let encode_new = scope.spawn(|| set_image(&s, &new, control.ptr()));
        arrived.recv().unwrap();
        // The host goes back to the first picture (cached): it is the image set last again.
        assert_eq!(set_image(&s, &old, ptr::null_mut()).0, SegStatus::SEG_OK);
        go.send(()).unwrap();
        assert_eq!(encode_new.join().unwrap().0, SegStatus::SEG_CANCELLED, "the encode of the picture left behind went on");
    });
    let (st, mask, e) = click_last(&s, (old.w, old.h), ptr::null_mut());
    assert_eq!(st, SegStatus::SEG_OK, "{e}");
    assert!(mask == want_old, "the image set last is not the one set last");
}

/// A click that carries its image is never cancelled by another thread: when the encode it waited
/// for is cancelled (a newer image was set), it encodes its image itself.
#[test]
fn a_click_carrying_its_image_outlives_the_cancelled_encode_it_waited_for() {
    let (old, new) = pictures();
    let want_new = expected_click(&new);
    let s = session();
    let (control, _gate, arrived, go) = gated_control();
    let click_with_image = |s: &Session, img: &Rgb| {
        let desc = image_desc(&img.data, img.w, img.h, 0, SegPixelFormat::SEG_FORMAT_RGB24);
        let mut mask = vec![0x33u8; img.w * img.h];
        let m = SegMask { data: mask.as_mut_ptr(), width: img.w as i32, height: img.h as i32, stride: 0 };
        let p = SegPoint { x: img.w as f32 / 2.0, y: img.h as f32 / 2.0, label: 1 };
        let st = unsafe {
            seg_run_sam2_points(s.0, &desc, &p, 1, ptr::null(), ptr::null(), 0, 0, &m, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
        };
        (st, mask, if st == SegStatus::SEG_OK { String::new() } else { last_error() })
    };
    thread::scope(|scope| {
        let go = go; // dropped if an assertion fails here, releasing the held encode
        let encode_new = scope.spawn(|| set_image(&s, &new, control.ptr()));
        arrived.recv().unwrap();
        let click = scope.spawn(|| click_with_image(&s, &new));
        thread::sleep(Duration::from_millis(200));
        assert!(!click.is_finished(), "the click did not wait for the encode of its pixels");
        assert_eq!(set_image(&s, &old, ptr::null_mut()).0, SegStatus::SEG_OK);
        go.send(()).unwrap();
        assert_eq!(encode_new.join().unwrap().0, SegStatus::SEG_CANCELLED);
        let (st, mask, e) = click.join().unwrap();
        assert_eq!(st, SegStatus::SEG_OK, "a click carrying its image was cancelled by another thread: {e}");
        assert!(mask == want_new);
    });
}
