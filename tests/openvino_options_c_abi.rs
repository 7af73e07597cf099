//! OpenVINO's options through the C ABI (`SegOptions.ov_*`): the defaults, values reaching the
//! provider's options (a precision the CPU cannot take is refused in segrt's words before any provider
//! loads, the same precision on the GPU is accepted), bad values refused naming the field, and a host
//! built before the fields (its `struct_size` ends at `trt_profiles`) getting OpenVINO's defaults.
//! This machine's ONNX Runtime has no OpenVINO: the accepted cases run on the CPU under FALLBACK.

mod common;

use common::*;
use segrt::ffi::*;

fn on_openvino() -> SegOptions {
    let mut o = default_options();
    o.provider = SegProvider::SEG_PROVIDER_OPENVINO as i32;
    o.provider_policy = SegProviderPolicy::SEG_PROVIDER_FALLBACK as i32;
    o
}

fn unet(options: &SegOptions) -> Result<Session, (SegStatus, String)> {
    create(&model("demo_unet.onnx"), Some(options))
}

#[test]
fn the_defaults_are_openvinos_own() {
    let o = default_options();
    assert!(o.ov_device.is_null() && o.ov_cache_dir.is_null());
    assert_eq!((o.ov_precision, o.ov_threads, o.ov_streams, o.reserved4), (SegOvPrecision::SEG_OV_PRECISION_DEFAULT as i32, 0, 0, 0));
}

#[test]
fn the_device_and_precision_reach_the_openvino_provider() {
    // FP16 on OpenVINO's CPU (the default device): refused before ONNX Runtime sees it, even under FALLBACK.
    let mut o = on_openvino();
    o.ov_precision = SegOvPrecision::SEG_OV_PRECISION_FP16 as i32;
    let (status, message) = unet(&o).err().expect("FP16 on the CPU is refused");
    assert_eq!(status, SegStatus::SEG_INVALID_ARGUMENT, "{message}");
    assert!(message.contains("not FP16"), "{message}");
    // The same precision on the GPU is OpenVINO's own: accepted (no OpenVINO here: the CPU runs it).
    let gpu = c"GPU";
    o.ov_device = gpu.as_ptr();
    let s = unet(&o).unwrap_or_else(|e| panic!("{e:?}"));
    let info = session_info(s.0);
    assert_eq!(info["provider"]["requested"], "OpenVINO", "{info}");
    assert_eq!(info["provider"]["in_use"], "CPU", "{info}");
    // A relative model cache folder is refused; the other values are passed on.
    let relative = c"ov-cache";
    let mut o = on_openvino();
    o.ov_cache_dir = relative.as_ptr();
    let (status, message) = unet(&o).err().expect("a relative cache folder is refused");
    assert_eq!(status, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(message.contains("ov-cache") && message.contains("absolute"), "{message}");
    let absolute = std::env::temp_dir().join("segrt-ov-cache-test");
    let absolute = cstr(absolute.to_str().unwrap());
    (o.ov_cache_dir, o.ov_threads, o.ov_streams) = (absolute.as_ptr(), 2, 1);
    o.ov_precision = SegOvPrecision::SEG_OV_PRECISION_ACCURACY as i32;
    unet(&o).unwrap_or_else(|e| panic!("{e:?}"));
}

#[test]
fn bad_values_are_refused_naming_the_field() {
    type Edit = fn(&mut SegOptions);
    let cases: [(&str, Edit); 5] = [
        ("SegOptions.ov_device", |o| o.ov_device = c"TPU".as_ptr()),
        ("SegOptions.ov_precision", |o| o.ov_precision = 7),
        ("SegOptions.ov_threads", |o| o.ov_threads = -2),
        ("SegOptions.ov_streams", |o| o.ov_streams = 1000),
        ("SegOptions.reserved4", |o| o.reserved4 = 1),
    ];
    for (field, edit) in cases {
        let mut o = default_options();
        edit(&mut o);
        let (status, message) = unet(&o).err().unwrap_or_else(|| panic!("{field}: accepted"));
        assert_eq!(status, SegStatus::SEG_INVALID_ARGUMENT, "{field}: {message}");
        assert!(message.contains(field), "{field}: {message}");
    }
}

#[test]
fn a_host_built_before_the_openvino_fields_gets_openvinos_defaults() {
    // Its struct ends at trt_profiles' padding: what lies beyond is not read, even if it is not zero
    // in this larger struct (an older host's memory there is not its struct).
    let mut o = on_openvino();
    o.struct_size = std::mem::offset_of!(SegOptions, ov_device) as u32;
    o.ov_precision = SegOvPrecision::SEG_OV_PRECISION_FP16 as i32; // refused if it were read
    let mut default_size = default_options();
    default_size.struct_size = o.struct_size;
    assert_eq!(unsafe { seg_options_default(&mut default_size) }, SegStatus::SEG_OK, "{}", last_error());
    unet(&o).unwrap_or_else(|e| panic!("an older layout is accepted and its OpenVINO options are the defaults: {e:?}"));
}
