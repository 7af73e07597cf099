//! The OpenVINO provider options a station needs, checked before ONNX Runtime sees them, and turned
//! into the key/value pairs of ONNX Runtime's OpenVINO provider (onnxruntime-openvino 1.24.1, whose
//! provider library knows these keys: device_type, precision, num_of_threads, cache_dir, num_streams,
//! load_config, model_priority, enable_qdq_optimizer, disable_dynamic_shapes, enable_opencl_throttling,
//! reshape_input, layout, context, enable_causallm, device_id, device_luid). `ort`'s `ep::OpenVINO`
//! sets the first five with `with_device_type`, `with_precision`, `with_num_threads`, `with_cache_dir`
//! and `with_num_streams`.
//!
//! What 1.24.1 did with them on this machine's CPU (no Intel GPU or NPU): "CPU", "AUTO", "MULTI:CPU"
//! run; "GPU", "NPU", "AUTO:GPU,CPU", "HETERO:GPU,CPU" fail with "[OpenVINO] Device GPU is not
//! available"; precision FP16 or BF16 on the CPU fails with "Unsupported inference precision is
//! selected. CPU only ..." (the CPU takes FP32 and ACCURACY); an unknown key is refused; "CPU_FP32"
//! still works with a deprecation warning; cache_dir gets one .blob per compiled model.

use std::path::PathBuf;

/// Where OpenVINO runs the model.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    /// An Intel GPU; `Some(n)` picks "GPU.n" when there are several (integrated is GPU.0).
    Gpu(Option<u32>),
    Npu,
    /// OpenVINO picks (AUTO), optionally among the listed devices in order of preference.
    Auto(Vec<Device>),
}

impl Device {
    /// The `device_type` value.
    pub fn device_type(&self) -> String {
        match self {
            Device::Cpu => "CPU".into(),
            Device::Gpu(None) => "GPU".into(),
            Device::Gpu(Some(n)) => format!("GPU.{n}"),
            Device::Npu => "NPU".into(),
            Device::Auto(list) if list.is_empty() => "AUTO".into(),
            Device::Auto(list) => format!("AUTO:{}", list.iter().map(Device::device_type).collect::<Vec<_>>().join(",")),
        }
    }

    /// Parses what a host or the CLI writes: "CPU", "GPU", "GPU.1", "NPU", "AUTO", "AUTO:GPU,CPU"
    /// (case-insensitive).
    pub fn parse(text: &str) -> Result<Device, String> {
        let t = text.trim().to_ascii_uppercase();
        if let Some(list) = t.strip_prefix("AUTO:") {
            let devices = list.split(',').map(Device::parse).collect::<Result<Vec<_>, _>>()?;
            if devices.iter().any(|d| matches!(d, Device::Auto(_))) {
                return Err(format!("OpenVINO device '{text}': AUTO cannot list AUTO"));
            }
            return Ok(Device::Auto(devices));
        }
        match t.as_str() {
            "CPU" => Ok(Device::Cpu),
            "GPU" => Ok(Device::Gpu(None)),
            "NPU" => Ok(Device::Npu),
            "AUTO" => Ok(Device::Auto(Vec::new())),
            _ => match t.strip_prefix("GPU.").map(str::parse::<u32>) {
                Some(Ok(n)) => Ok(Device::Gpu(Some(n))),
                _ => Err(format!("OpenVINO device '{text}' is not one of CPU, GPU, GPU.<n>, NPU, AUTO, AUTO:<devices>")),
            },
        }
    }
}

/// The inference precision hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    Fp32,
    Fp16,
    /// The model's own precision, no lowering (what a parity check wants).
    Accuracy,
}

impl Precision {
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "FP32",
            Precision::Fp16 => "FP16",
            Precision::Accuracy => "ACCURACY",
        }
    }
}

/// What segrt passes to the OpenVINO provider.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpenVinoOptions {
    pub device: Device,
    /// None: the device's default (FP32 on the CPU; FP16 on GPUs and NPUs).
    pub precision: Option<Precision>,
    /// Compiled models are kept here and reused by the next session of the same model, device and
    /// OpenVINO release: a station's second start skips OpenVINO's compilation.
    pub cache_dir: Option<PathBuf>,
    /// OpenVINO's own inference threads (its default: the cores).
    pub threads: Option<usize>,
    /// Parallel inference streams; 1 for one image at a time (the least latency).
    pub streams: Option<u8>,
}

impl Default for OpenVinoOptions {
    fn default() -> Self {
        OpenVinoOptions { device: Device::Cpu, precision: None, cache_dir: None, threads: None, streams: None }
    }
}

impl OpenVinoOptions {
    /// The provider's key/value pairs, or the reason they would be refused, in segrt's words rather
    /// than OpenVINO's (which come only after the provider library and OpenVINO have loaded).
    pub fn provider_options(&self) -> Result<Vec<(&'static str, String)>, String> {
        if self.device == Device::Cpu && self.precision == Some(Precision::Fp16) {
            return Err("OpenVINO runs FP32 or ACCURACY on the CPU, not FP16: leave the precision unset, or pick the GPU or NPU".into());
        }
        if self.threads == Some(0) {
            return Err("OpenVINO threads must be at least 1 (leave it unset for OpenVINO's default)".into());
        }
        if self.streams == Some(0) {
            return Err("OpenVINO streams must be at least 1".into());
        }
        let mut out = vec![("device_type", self.device.device_type())];
        if let Some(p) = self.precision {
            out.push(("precision", p.as_str().into()));
        }
        if let Some(dir) = &self.cache_dir {
            if !dir.is_absolute() {
                return Err(format!("the OpenVINO cache folder '{}' must be an absolute path", dir.display()));
            }
            out.push(("cache_dir", dir.display().to_string()));
        }
        if let Some(n) = self.threads {
            out.push(("num_of_threads", n.to_string()));
        }
        if let Some(n) = self.streams {
            out.push(("num_streams", n.to_string()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_and_print_as_openvino_names_them() {
        for (text, device, name) in [
            ("cpu", Device::Cpu, "CPU"),
            ("GPU", Device::Gpu(None), "GPU"),
            ("gpu.1", Device::Gpu(Some(1)), "GPU.1"),
            ("NPU", Device::Npu, "NPU"),
            ("AUTO", Device::Auto(vec![]), "AUTO"),
            ("auto:gpu,cpu", Device::Auto(vec![Device::Gpu(None), Device::Cpu]), "AUTO:GPU,CPU"),
        ] {
            assert_eq!(Device::parse(text), Ok(device.clone()), "{text}");
            assert_eq!(device.device_type(), name);
        }
        for bad in ["", "TPU", "GPU.x", "AUTO:AUTO", "CPU_FP32"] {
            assert!(Device::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn options_become_the_providers_keys_and_bad_ones_are_refused_in_plain_words() {
        let opts = OpenVinoOptions {
            device: Device::Auto(vec![Device::Npu, Device::Cpu]),
            precision: Some(Precision::Accuracy),
            cache_dir: Some(PathBuf::from(if cfg!(windows) { r"C:\cache" } else { "/var/cache/segrt" })),
            threads: Some(2),
            streams: Some(1),
        };
        let pairs = opts.provider_options().unwrap();
        let keys: Vec<_> = pairs.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["device_type", "precision", "cache_dir", "num_of_threads", "num_streams"]);
        assert_eq!(pairs[0].1, "AUTO:NPU,CPU");
        assert_eq!(pairs[1].1, "ACCURACY");
        assert_eq!(OpenVinoOptions::default().provider_options().unwrap(), vec![("device_type", "CPU".to_string())]);
        let fp16_cpu = OpenVinoOptions { precision: Some(Precision::Fp16), ..Default::default() };
        assert!(fp16_cpu.provider_options().unwrap_err().contains("not FP16"));
        let relative = OpenVinoOptions { cache_dir: Some("cache".into()), ..Default::default() };
        assert!(relative.provider_options().unwrap_err().contains("absolute"));
        assert!(OpenVinoOptions { threads: Some(0), ..Default::default() }.provider_options().is_err());
        let gpu_fp16 = OpenVinoOptions { device: Device::Gpu(None), precision: Some(Precision::Fp16), ..Default::default() };
        assert!(gpu_fp16.provider_options().is_ok(), "FP16 is the GPU's own precision");
    }
}
