//! `SegOptions`' OpenVINO fields, read into the library's `OpenVinoOptions` (what they may hold is
//! checked there, in segrt's words, when a session is built on OpenVINO).

use crate::engine::providers::openvino::{Device, OpenVinoOptions};
use crate::error::{Error, Result};

use super::boundary::{utf8_path, utf8_str};
use super::enums::SegOvPrecision;
use super::options::SegOptions;

impl SegOptions {
    /// # Safety
    /// `ov_device` and `ov_cache_dir` must be NULL or NUL-terminated.
    pub(super) unsafe fn openvino(&self) -> Result<OpenVinoOptions> {
        let device = if self.ov_device.is_null() {
            Device::Cpu
        } else {
            // SAFETY: not NULL, so NUL-terminated (this function's contract).
            let text = unsafe { utf8_str(self.ov_device, "SegOptions.ov_device")? };
            Device::parse(&text).map_err(|why| Error::invalid(format!("SegOptions.ov_device: {why}")))?
        };
        let count = |v: i32, what: &str| -> Result<Option<usize>> {
            match usize::try_from(v) {
                Ok(0) => Ok(None),
                Ok(n) => Ok(Some(n)),
                Err(_) => Err(Error::invalid(format!("SegOptions.{what} is {v}: 0 (OpenVINO's default) or more"))),
            }
        };
        let streams = count(self.ov_streams, "ov_streams")?
            .map(|n| u8::try_from(n).map_err(|_| Error::invalid(format!("SegOptions.ov_streams is {n}: at most 255"))))
            .transpose()?;
        Ok(OpenVinoOptions {
            device,
            precision: SegOvPrecision::try_from(self.ov_precision).map_err(|e| e.context("SegOptions.ov_precision"))?.precision(),
            cache_dir: if self.ov_cache_dir.is_null() {
                None
            } else {
                // SAFETY: as for ov_device.
                Some(unsafe { utf8_path(self.ov_cache_dir, "SegOptions.ov_cache_dir")? })
            },
            threads: count(self.ov_threads, "ov_threads")?,
            streams,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::providers::openvino::Precision;
    use crate::ffi::options::{SEG_OPTIONS_SIZE_TRT_PROFILES, SEG_OPTIONS_SIZE_V1_0};

    use super::*;

    fn read(raw: &SegOptions) -> Result<OpenVinoOptions> {
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        unsafe { SegOptions::read(raw) }.map(|o| o.gpu.openvino)
    }

    #[test]
    fn openvino_fields_are_read_and_older_layouts_take_their_defaults() {
        let mut raw = SegOptions::defaults();
        assert_eq!(read(&raw).unwrap(), OpenVinoOptions::default());
        raw.ov_device = c"auto:gpu,cpu".as_ptr();
        raw.ov_precision = SegOvPrecision::SEG_OV_PRECISION_ACCURACY as i32;
        raw.ov_threads = 2;
        raw.ov_cache_dir = c"/var/cache/segrt-ov".as_ptr();
        raw.ov_streams = 1;
        let expected = OpenVinoOptions {
            device: Device::Auto(vec![Device::Gpu(None), Device::Cpu]),
            precision: Some(Precision::Accuracy),
            cache_dir: Some("/var/cache/segrt-ov".into()),
            threads: Some(2),
            streams: Some(1),
        };
        assert_eq!(read(&raw).unwrap(), expected);
        // A host built before the OpenVINO fields: they are not read (bytes beyond its size ignored).
        for size in [SEG_OPTIONS_SIZE_TRT_PROFILES, SEG_OPTIONS_SIZE_V1_0] {
            raw.struct_size = size as u32;
            assert_eq!(read(&raw).unwrap(), OpenVinoOptions::default(), "struct_size {size}");
        }
        raw.struct_size = size_of::<SegOptions>() as u32;
        raw.reserved4 = 1;
        assert!(read(&raw).unwrap_err().message.contains("SegOptions.reserved4 is not 0"));
    }

    #[test]
    fn bad_openvino_values_are_refused_naming_the_field() {
        let refused = |edit: &dyn Fn(&mut SegOptions)| {
            let mut raw = SegOptions::defaults();
            edit(&mut raw);
            read(&raw).unwrap_err().message
        };
        let e = refused(&|o| o.ov_device = c"TPU".as_ptr());
        assert!(e.contains("SegOptions.ov_device") && e.contains("'TPU'"), "{e}");
        assert!(refused(&|o| o.ov_device = c"".as_ptr()).contains("SegOptions.ov_device is empty"));
        let e = refused(&|o| o.ov_precision = 4);
        assert!(e.contains("SegOptions.ov_precision") && e.contains("SegOvPrecision value 4"), "{e}");
        assert!(refused(&|o| o.ov_threads = -1).contains("SegOptions.ov_threads is -1"));
        assert!(refused(&|o| o.ov_streams = 256).contains("SegOptions.ov_streams is 256"));
        assert!(refused(&|o| o.ov_cache_dir = c"".as_ptr()).contains("SegOptions.ov_cache_dir is empty"));
    }
}
