//! Medical inputs on the command line: DICOM files, DICOM series (a folder of slices) and NIfTI
//! volumes. They are read here, at the edge: the library takes pixels and numbers.
//!
//! Every slice becomes GRAY32F *modality values* (HU for CT), one slice at a time:
//! - DICOM: the stored value is taken from its BitsStored bits below HighBit (bits above are
//!   ignored, as PS3.5 8.1.1 says), sign-extended when PixelRepresentation is 1, then
//!   `value = stored * RescaleSlope + RescaleIntercept`. MONOCHROME1 (low values white) is negated,
//!   and a window is mirrored with it, so the model sees MONOCHROME2's picture.
//! - NIfTI: `value = stored * scl_slope + scl_inter` (no scaling when scl_slope is 0).
//!
//! A volume's stored bytes stay in memory as stored; only the slice being segmented has a float copy.

use std::io::Read;
use std::path::{Path, PathBuf};

use dicom_dictionary_std::tags;
use dicom_object::{DefaultDicomObject, OpenFileOptions};
use segrt::image::intensity::{Intensity, Range};

use crate::CliResult;

/// Little- and big-endian uncompressed transfer syntaxes: the ones segrt reads.
const NATIVE_SYNTAXES: [&str; 3] = ["1.2.840.10008.1.2", "1.2.840.10008.1.2.1", "1.2.840.10008.1.2.2"];

/// One slice's modality values, row by row.
pub struct Slice {
    pub values: Vec<f32>,
    pub width: usize,
    pub height: usize,
}

impl Slice {
    /// The slice as GRAY32F pixels for segrt.
    pub fn pixels(&self) -> crate::files::Pixels {
        crate::files::Pixels {
            bytes: self.values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            width: self.width,
            height: self.height,
            format: segrt::PixelFormat::Gray32F,
        }
    }

    /// The slice as 8-bit RGB for overlays: the window when one is set, else its own min-max.
    pub fn display_rgb(&self, range: Option<(f64, f64)>) -> image::RgbImage {
        let (lo, hi) = range.unwrap_or_else(|| {
            let (a, b) = self.values.iter().fold((f32::MAX, f32::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
            (a as f64, b as f64)
        });
        let span = (hi - lo).max(1e-6);
        let bytes = self
            .values
            .iter()
            .flat_map(|v| {
                let g = (((*v as f64 - lo) / span).clamp(0.0, 1.0) * 255.0).round() as u8;
                [g, g, g]
            })
            .collect();
        image::RgbImage::from_raw(self.width as u32, self.height as u32, bytes).unwrap_or_default()
    }
}

/// What a DICOM file's header says about its pixels (read without the pixel data).
#[derive(Clone, Debug)]
pub struct DicomHeader {
    path: PathBuf,
    rows: usize,
    cols: usize,
    bits_allocated: u32,
    bits_stored: u32,
    high_bit: u32,
    signed: bool,
    monochrome1: bool,
    slope: f64,
    intercept: f64,
    window: Option<(f64, f64)>,
    position: Option<[f64; 3]>,
    orientation: Option<[f64; 6]>,
    instance: Option<i64>,
}

fn dicom_error(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: not a DICOM file segrt can read ({e})", path.display())
}

fn open_dicom(path: &Path, with_pixels: bool) -> CliResult<DefaultDicomObject> {
    let opts = OpenFileOptions::new();
    let opts = if with_pixels { opts } else { opts.read_until(tags::PIXEL_DATA) };
    // A DICOM Part 10 file: 128-byte preamble, then "DICM".
    let mut magic = [0u8; 132];
    let ok = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic[128..] == b"DICM";
    if !ok {
        return Err(format!("{}: not a DICOM file (no 'DICM' marker after the 128-byte preamble)", path.display()).into());
    }
    let obj = opts.open_file(path).map_err(|e| dicom_error(path, e))?;
    let ts = obj.meta().transfer_syntax();
    if !NATIVE_SYNTAXES.contains(&ts) {
        let name = dicom_transfer_syntax_name(ts);
        return Err(format!(
            "{}: transfer syntax {ts}{name} is compressed or encapsulated, which segrt does not decode: \
             convert the file to an uncompressed syntax first (e.g. dcmdjpeg, gdcmconv --raw)",
            path.display()
        )
        .into());
    }
    Ok(obj)
}

fn dicom_transfer_syntax_name(uid: &str) -> &'static str {
    match uid {
        "1.2.840.10008.1.2.1.99" => " (Deflated Explicit VR Little Endian)",
        "1.2.840.10008.1.2.5" => " (RLE Lossless)",
        "1.2.840.10008.1.2.4.50" => " (JPEG Baseline)",
        "1.2.840.10008.1.2.4.57" | "1.2.840.10008.1.2.4.70" => " (JPEG Lossless)",
        "1.2.840.10008.1.2.4.80" | "1.2.840.10008.1.2.4.81" => " (JPEG-LS)",
        "1.2.840.10008.1.2.4.90" | "1.2.840.10008.1.2.4.91" => " (JPEG 2000)",
        _ => "",
    }
}

fn dicom_header(path: &Path) -> CliResult<DicomHeader> {
    let obj = open_dicom(path, false)?;
    let int = |tag, what: &str| -> CliResult<i64> {
        let e = obj.element(tag).map_err(|_| format!("{}: no {what} (not an image?)", path.display()))?;
        Ok(e.to_int::<i64>().map_err(|e| format!("{}: {what}: {e}", path.display()))?)
    };
    let opt_floats = |tag| -> Option<Vec<f64>> { obj.element_opt(tag).ok().flatten().and_then(|e| e.to_multi_float64().ok()) };
    let text = |tag| -> String {
        obj.element_opt(tag).ok().flatten().and_then(|e| e.to_str().ok().map(|s| s.trim().to_string())).unwrap_or_default()
    };
    let rows = int(tags::ROWS, "Rows")? as usize;
    let cols = int(tags::COLUMNS, "Columns")? as usize;
    let samples = obj.element_opt(tags::SAMPLES_PER_PIXEL).ok().flatten().and_then(|e| e.to_int::<i64>().ok()).unwrap_or(1);
    let frames = text(tags::NUMBER_OF_FRAMES).parse::<i64>().unwrap_or(1);
    let photometric = text(tags::PHOTOMETRIC_INTERPRETATION);
    if samples != 1 || !photometric.starts_with("MONOCHROME") {
        return Err(format!(
            "{}: {photometric} with {samples} samples per pixel: segrt reads grey (MONOCHROME1/2) DICOM images",
            path.display()
        )
        .into());
    }
    if frames != 1 {
        return Err(format!(
            "{}: {frames} frames in one file: segrt reads single-frame DICOM files (a series is a folder)",
            path.display()
        )
        .into());
    }
    let bits_allocated = int(tags::BITS_ALLOCATED, "BitsAllocated")? as u32;
    let bits_stored = obj.element_opt(tags::BITS_STORED).ok().flatten().and_then(|e| e.to_int::<u32>().ok()).unwrap_or(bits_allocated);
    let high_bit = obj.element_opt(tags::HIGH_BIT).ok().flatten().and_then(|e| e.to_int::<u32>().ok()).unwrap_or(bits_stored.max(1) - 1);
    if !matches!(bits_allocated, 8 | 16) || bits_stored == 0 || high_bit + 1 < bits_stored || high_bit >= bits_allocated {
        return Err(format!(
            "{}: BitsAllocated {bits_allocated}, BitsStored {bits_stored}, HighBit {high_bit}: segrt reads 8- and 16-bit pixels",
            path.display()
        )
        .into());
    }
    let first = |v: Option<Vec<f64>>| v.and_then(|v| v.first().copied());
    let window = match (first(opt_floats(tags::WINDOW_CENTER)), first(opt_floats(tags::WINDOW_WIDTH))) {
        (Some(c), Some(w)) if w > 0.0 && c.is_finite() && w.is_finite() => Some((c, w)),
        _ => None,
    };
    let slope = first(opt_floats(tags::RESCALE_SLOPE)).filter(|s| s.is_finite() && *s != 0.0).unwrap_or(1.0);
    let intercept = first(opt_floats(tags::RESCALE_INTERCEPT)).filter(|s| s.is_finite()).unwrap_or(0.0);
    Ok(DicomHeader {
        path: path.to_path_buf(),
        rows,
        cols,
        bits_allocated,
        bits_stored,
        high_bit,
        signed: int(tags::PIXEL_REPRESENTATION, "PixelRepresentation").unwrap_or(0) == 1,
        monochrome1: photometric == "MONOCHROME1",
        slope,
        intercept,
        window,
        position: opt_floats(tags::IMAGE_POSITION_PATIENT).filter(|v| v.len() == 3).map(|v| [v[0], v[1], v[2]]),
        orientation: opt_floats(tags::IMAGE_ORIENTATION_PATIENT).filter(|v| v.len() == 6).map(|v| [v[0], v[1], v[2], v[3], v[4], v[5]]),
        instance: text(tags::INSTANCE_NUMBER).parse().ok(),
    })
}

/// The stored value of one raw pixel word: the BitsStored bits ending at HighBit, sign-extended
/// when signed (PS3.5 8.1.1; whatever the bits above hold is ignored).
pub fn stored_value(raw: u16, bits_stored: u32, high_bit: u32, signed: bool) -> i32 {
    let shift = high_bit + 1 - bits_stored;
    let mask = if bits_stored >= 32 { u32::MAX } else { (1u32 << bits_stored) - 1 };
    let v = (raw as u32 >> shift) & mask;
    if signed && bits_stored > 0 && v & (1 << (bits_stored - 1)) != 0 {
        v as i32 - (1i32 << bits_stored)
    } else {
        v as i32
    }
}

fn dicom_slice(h: &DicomHeader) -> CliResult<Slice> {
    let obj = open_dicom(&h.path, true)?;
    let e = obj.element(tags::PIXEL_DATA).map_err(|_| format!("{}: no PixelData", h.path.display()))?;
    let n = h.rows * h.cols;
    let words: Vec<u16> = match e.value().primitive() {
        // Read as OW: 16-bit words already in this machine's order (big-endian files included).
        Some(dicom_core::PrimitiveValue::U16(v)) if h.bits_allocated == 16 => v.to_vec(),
        Some(p) => {
            let bytes = p.to_bytes();
            let big = obj.meta().transfer_syntax() == "1.2.840.10008.1.2.2";
            if h.bits_allocated == 8 {
                bytes.iter().map(|b| *b as u16).collect()
            } else {
                bytes
                    .chunks_exact(2)
                    .map(|c| if big { u16::from_be_bytes([c[0], c[1]]) } else { u16::from_le_bytes([c[0], c[1]]) })
                    .collect()
            }
        }
        None => return Err(format!("{}: PixelData is encapsulated (compressed)", h.path.display()).into()),
    };
    if words.len() < n {
        return Err(format!("{}: PixelData holds {} pixels, Rows x Columns is {n}", h.path.display(), words.len()).into());
    }
    let sign = if h.monochrome1 { -1.0 } else { 1.0 };
    let values = words[..n]
        .iter()
        .map(|w| (sign * (stored_value(*w, h.bits_stored, h.high_bit, h.signed) as f64 * h.slope + h.intercept)) as f32)
        .collect();
    Ok(Slice { values, width: h.cols, height: h.rows })
}

/// A NIfTI-1 volume: its header as stored (kept for the mask volume) and its voxels as stored.
pub struct Nifti {
    header: Vec<u8>,
    big_endian: bool,
    gz: bool,
    dims: [usize; 3],
    datatype: i16,
    slope: f64,
    intercept: f64,
    data: Vec<u8>,
}

pub fn is_nifti(p: &Path) -> bool {
    let name = p.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".nii") || name.ends_with(".nii.gz")
}

/// NIfTI datatype code -> bytes per voxel.
fn nifti_bytes(datatype: i16) -> Option<usize> {
    Some(match datatype {
        2 | 256 => 1,      // uint8, int8
        4 | 512 => 2,      // int16, uint16
        8 | 16 | 768 => 4, // int32, float32, uint32
        64 => 8,           // float64
        _ => return None,
    })
}

impl Nifti {
    pub fn open(path: &Path) -> CliResult<Nifti> {
        let err = |what: String| format!("{}: {what}", path.display());
        let raw = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
        let gz = raw.starts_with(&[0x1f, 0x8b]);
        let mut bytes = if gz {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut out).map_err(|e| err(format!("not a gzip stream: {e}")))?;
            out
        } else {
            raw
        };
        if bytes.len() < 352 {
            return Err(err("not a NIfTI-1 file (shorter than its 348-byte header)".into()).into());
        }
        let big_endian = match (
            i32::from_le_bytes(bytes[0..4].try_into().unwrap_or_default()),
            i32::from_be_bytes(bytes[0..4].try_into().unwrap_or_default()),
        ) {
            (348, _) => false,
            (_, 348) => true,
            (540, _) | (_, 540) => return Err(err("a NIfTI-2 file: segrt reads NIfTI-1".into()).into()),
            _ => return Err(err("not a NIfTI-1 file (sizeof_hdr is not 348)".into()).into()),
        };
        if &bytes[344..347] != b"n+1" {
            return Err(err("not a single-file NIfTI-1 volume (magic is not 'n+1')".into()).into());
        }
        let i16_at =
            |o: usize| if big_endian { i16::from_be_bytes([bytes[o], bytes[o + 1]]) } else { i16::from_le_bytes([bytes[o], bytes[o + 1]]) };
        let f32_at = |o: usize| {
            let b = [bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]];
            if big_endian {
                f32::from_be_bytes(b)
            } else {
                f32::from_le_bytes(b)
            }
        };
        let dim: Vec<i16> = (0..8).map(|i| i16_at(40 + 2 * i)).collect();
        let ndim = dim[0].clamp(0, 7) as usize;
        if ndim < 2 || (4..=ndim).any(|i| dim[i] > 1) || (1..=ndim.min(3)).any(|i| dim[i] < 1) {
            return Err(err(format!("dimensions {:?}: segrt reads 2-D and 3-D volumes", &dim[1..=ndim.max(1)])).into());
        }
        let dims = [dim[1] as usize, dim[2] as usize, if ndim >= 3 { dim[3] as usize } else { 1 }];
        let datatype = i16_at(70);
        let bpv = nifti_bytes(datatype).ok_or_else(|| err(format!("datatype {datatype}: segrt reads grey integer and float voxels")))?;
        let offset = f32_at(108).max(352.0) as usize;
        let len = dims.iter().product::<usize>() * bpv;
        if bytes.len() < offset + len {
            return Err(err(format!("{} bytes of voxels expected after offset {offset}, the file has {}", len, bytes.len())).into());
        }
        let (slope, intercept) = match (f32_at(112) as f64, f32_at(116) as f64) {
            (s, i) if s != 0.0 && s.is_finite() && i.is_finite() => (s, i),
            _ => (1.0, 0.0),
        };
        let header = bytes[..348].to_vec();
        // The voxels, as stored, in the buffer already read (one copy of the volume, not two).
        bytes.truncate(offset + len);
        bytes.drain(..offset);
        Ok(Nifti { header, big_endian, gz, dims, datatype, slope, intercept, data: bytes })
    }

    fn slice(&self, k: usize) -> Slice {
        let [nx, ny, _] = self.dims;
        let bpv = nifti_bytes(self.datatype).unwrap_or(1);
        let start = k * nx * ny * bpv;
        let be = self.big_endian;
        let values = self.data[start..start + nx * ny * bpv]
            .chunks_exact(bpv)
            .map(|c| {
                let v = match (self.datatype, be) {
                    (2, _) => c[0] as f64,
                    (256, _) => c[0] as i8 as f64,
                    (4, false) => i16::from_le_bytes([c[0], c[1]]) as f64,
                    (4, true) => i16::from_be_bytes([c[0], c[1]]) as f64,
                    (512, false) => u16::from_le_bytes([c[0], c[1]]) as f64,
                    (512, true) => u16::from_be_bytes([c[0], c[1]]) as f64,
                    (8, false) => i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
                    (8, true) => i32::from_be_bytes([c[0], c[1], c[2], c[3]]) as f64,
                    (768, false) => u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
                    (768, true) => u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as f64,
                    (16, false) => f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
                    (16, true) => f32::from_be_bytes([c[0], c[1], c[2], c[3]]) as f64,
                    (_, false) => f64::from_le_bytes(c.try_into().unwrap_or_default()),
                    (_, true) => f64::from_be_bytes(c.try_into().unwrap_or_default()),
                };
                (v * self.slope + self.intercept) as f32
            })
            .collect();
        Slice { values, width: nx, height: ny }
    }

    /// Writes `masks` (one byte per voxel, slice after slice) as a NIfTI-1 volume with this
    /// volume's header: the same dimensions, voxel sizes, qform and sform (the affine), byte order
    /// and compression; datatype uint8, no scaling, cal_min 0, cal_max 255.
    pub fn write_mask(&self, path: &Path, masks: &[u8]) -> CliResult {
        let mut h = self.header.clone();
        let be = self.big_endian;
        let put16 = |h: &mut Vec<u8>, o: usize, v: i16| h[o..o + 2].copy_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() });
        let put32 = |h: &mut Vec<u8>, o: usize, v: f32| h[o..o + 4].copy_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() });
        put16(&mut h, 70, 2); // datatype: uint8
        put16(&mut h, 72, 8); // bitpix
        put32(&mut h, 108, 352.0); // vox_offset
        put32(&mut h, 112, 1.0); // scl_slope
        put32(&mut h, 116, 0.0); // scl_inter
        put32(&mut h, 124, 255.0); // cal_max
        put32(&mut h, 128, 0.0); // cal_min
        h.extend_from_slice(&[0, 0, 0, 0]); // no extensions
        h.extend_from_slice(masks);
        let bytes = if self.gz {
            use std::io::Write;
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(&h).and_then(|_| enc.finish()).map_err(|e| format!("cannot compress {}: {e}", path.display()))?
        } else {
            h
        };
        std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(())
    }

    /// ".nii.gz" or ".nii", as read.
    pub fn extension(&self) -> &'static str {
        if self.gz {
            "nii.gz"
        } else {
            "nii"
        }
    }
}

/// A DICOM file, a DICOM series or a NIfTI volume, ready to give its slices one at a time.
pub enum Volume {
    Dicom { slices: Vec<DicomHeader>, order: &'static str },
    Nifti(Nifti),
}

impl Volume {
    /// Opens a DICOM file, a folder of DICOM files (one series) or a NIfTI file, reading only
    /// headers for DICOM; every refusal is one line and comes before anything is written.
    pub fn open(path: &Path) -> CliResult<Volume> {
        if is_nifti(path) {
            return Ok(Volume::Nifti(Nifti::open(path)?));
        }
        let files = if path.is_dir() { dicom_files(path)? } else { vec![path.to_path_buf()] };
        if files.is_empty() {
            return Err(format!("{}: no DICOM files in the folder", path.display()).into());
        }
        let mut slices = files.iter().map(|f| dicom_header(f)).collect::<CliResult<Vec<_>>>()?;
        let first = slices[0].clone();
        if let Some(other) = slices.iter().find(|s| (s.rows, s.cols) != (first.rows, first.cols)) {
            return Err(format!(
                "{}: a series with mixed sizes: {} is {}x{}, {} is {}x{}",
                path.display(),
                first.path.display(),
                first.cols,
                first.rows,
                other.path.display(),
                other.cols,
                other.rows
            )
            .into());
        }
        let order = order_slices(&mut slices);
        Ok(Volume::Dicom { slices, order })
    }

    pub fn slice_count(&self) -> usize {
        match self {
            Volume::Dicom { slices, .. } => slices.len(),
            Volume::Nifti(n) => n.dims[2],
        }
    }

    pub fn size(&self) -> (usize, usize) {
        match self {
            Volume::Dicom { slices, .. } => (slices[0].cols, slices[0].rows),
            Volume::Nifti(n) => (n.dims[0], n.dims[1]),
        }
    }

    /// Slice `k` (in the volume's order) as modality values.
    pub fn slice(&self, k: usize) -> CliResult<Slice> {
        match self {
            Volume::Dicom { slices, .. } => dicom_slice(&slices[k]),
            Volume::Nifti(n) => Ok(n.slice(k)),
        }
    }

    /// One line for the report: what was read and how the slices are ordered.
    pub fn describe(&self) -> String {
        let (w, h) = self.size();
        match self {
            Volume::Dicom { slices, .. } if slices.len() == 1 => {
                let s = &slices[0];
                format!(
                    "DICOM {w}x{h}, {} {}-bit stored in {} bits, rescale v * {} + {}{}",
                    if s.signed { "signed" } else { "unsigned" },
                    s.bits_stored,
                    s.bits_allocated,
                    s.slope,
                    s.intercept,
                    if s.monochrome1 { ", MONOCHROME1 (inverted)" } else { "" }
                )
            }
            Volume::Dicom { slices, order } => format!("DICOM series of {} slices {w}x{h}, ordered by {order}", slices.len()),
            Volume::Nifti(n) => {
                format!("NIfTI volume {w}x{h}x{}, datatype {}, scaling v * {} + {}", n.dims[2], n.datatype, n.slope, n.intercept)
            }
        }
    }

    /// The intensity stage for this volume: the flags' when given; else, for DICOM, the file's
    /// WindowCenter/WindowWidth when it has them (said in the returned note); else segrt's default.
    /// MONOCHROME1 slices are negated, so a window is mirrored to match.
    pub fn intensity(&self, flags: Option<Intensity>) -> (Option<Intensity>, Option<String>) {
        let Volume::Dicom { slices, .. } = self else { return (flags, None) };
        let (mut chosen, note) = match (flags, slices[0].window) {
            (Some(i), _) => (Some(i), None),
            (None, Some((c, w))) => (
                Some(Intensity { range: segrt::image::intensity::window(c, w), ..Intensity::default() }),
                Some(format!("window from the file: WindowCenter {c}, WindowWidth {w}")),
            ),
            (None, None) => (None, None),
        };
        if slices[0].monochrome1 {
            if let Some(i) = chosen.as_mut() {
                i.range = match i.range {
                    Range::Window { low, high } => Range::Window { low: -high, high: -low },
                    Range::Percentiles { low, high } => Range::Percentiles { low: 100.0 - high, high: 100.0 - low },
                    r => r,
                };
            }
        }
        (chosen, note)
    }

    /// The window of modality values an overlay shows (mirrored for MONOCHROME1 like the values).
    pub fn display_range(intensity: Option<&Intensity>) -> Option<(f64, f64)> {
        match intensity.map(|i| i.range) {
            Some(Range::Window { low, high }) => Some((low, high)),
            _ => None,
        }
    }

    /// Writes the mask volume beside the per-slice masks: NIfTI in -> NIfTI out with the input's
    /// header. DICOM series get per-slice masks only. Returns the file written, if any.
    pub fn write_mask_volume(&self, out: &Path, name: &str, masks: &[u8]) -> CliResult<Option<PathBuf>> {
        match self {
            Volume::Nifti(n) => {
                let path = out.join(format!("{name}_mask.{}", n.extension()));
                n.write_mask(&path, masks)?;
                Ok(Some(path))
            }
            Volume::Dicom { .. } => Ok(None),
        }
    }
}

/// Orders a series: by ImagePositionPatient projected on the slice normal (the cross product of
/// ImageOrientationPatient's row and column directions) when every slice has both, else by
/// InstanceNumber when every slice has one, else by file name. Returns what was used.
fn order_slices(slices: &mut [DicomHeader]) -> &'static str {
    if slices.len() < 2 {
        return "";
    }
    if slices.iter().all(|s| s.position.is_some() && s.orientation.is_some()) {
        let o = slices[0].orientation.unwrap_or_default();
        let n = [o[1] * o[5] - o[2] * o[4], o[2] * o[3] - o[0] * o[5], o[0] * o[4] - o[1] * o[3]];
        let key = |s: &DicomHeader| s.position.map_or(0.0, |p| p[0] * n[0] + p[1] * n[1] + p[2] * n[2]);
        slices.sort_by(|a, b| key(a).total_cmp(&key(b)));
        "ImagePositionPatient along the slice normal"
    } else if slices.iter().all(|s| s.instance.is_some()) {
        slices.sort_by_key(|s| s.instance);
        "InstanceNumber"
    } else {
        slices.sort_by(|a, b| a.path.cmp(&b.path));
        "file name"
    }
}

/// Whether a file is DICOM: a `.dcm`/`.dicom` name, or the 'DICM' marker after the preamble.
pub fn is_dicom(p: &Path) -> bool {
    if p.extension().and_then(|e| e.to_str()).is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "dcm" | "dicom")) {
        return true;
    }
    let mut magic = [0u8; 132];
    std::fs::File::open(p).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic[128..] == b"DICM"
}

/// The DICOM files of a folder (not its subfolders), sorted by name.
pub fn dicom_files(dir: &Path) -> CliResult<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && is_dicom(p))
        .collect();
    files.sort();
    Ok(files)
}

/// Whether a path names a medical input: a NIfTI file, a DICOM file, or a folder holding DICOM files.
pub fn is_medical(p: &Path) -> bool {
    if p.is_dir() {
        return dicom_files(p).is_ok_and(|f| !f.is_empty());
    }
    is_nifti(p) || (p.is_file() && is_dicom(p))
}

/// The output stem of a medical input: the file stem without `.nii`, or the folder's name.
pub fn stem(p: &Path) -> String {
    let s = crate::files::file_name(p);
    let lower = s.to_ascii_lowercase();
    for ext in [".nii.gz", ".nii", ".dcm", ".dicom"] {
        if lower.ends_with(ext) {
            return s[..s.len() - ext.len()].to_string();
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::stored_value;

    #[test]
    fn stored_values_ignore_unused_high_bits_and_extend_the_sign() {
        // 12 bits stored, garbage above: unsigned keeps the low 12 bits.
        assert_eq!(stored_value(0xF123, 12, 11, false), 0x123);
        // Signed 12-bit -1000 (0xC18), garbage in bits 12..15.
        assert_eq!(stored_value(0xAC18, 12, 11, true), -1000);
        assert_eq!(stored_value(0x07FF, 12, 11, true), 2047);
        // Full 16-bit two's complement.
        assert_eq!(stored_value(0xFC18, 16, 15, true), -1000);
        assert_eq!(stored_value(0xFC18, 16, 15, false), 0xFC18);
        // HighBit above BitsStored - 1: the stored bits end at HighBit.
        assert_eq!(stored_value(0x0FF0, 8, 11, false), 0xFF);
    }
}
