//! A reference as a file: a station teaches once and finds for months.
//!
//! Layout (little-endian): `SEGRTREF` magic, format version (u32), kind (u32: 1 = taught on an image
//! pair, 2 = taught on a video model: the memory approach), the model's identity (u128: a hash of its files), the payload's
//! length (u64), the payload, and an xxh3-128 checksum of everything before it. A damaged file, one
//! of a newer format, of another kind or made with another model is refused before anything is used.

use std::path::Path;

use xxhash_rust::xxh3::xxh3_128;

use crate::error::{Error, ErrorKind, Result};

use super::colour::HIST;
use super::teach::Example;
use super::MAX_EXAMPLES;

const MAGIC: &[u8; 8] = b"SEGRTREF";
pub const FORMAT_VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 4 + 16 + 8;
const CHECKSUM: usize = 16;

/// What a reference file holds (a reader of one kind refuses the other clearly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Image = 1,
    /// Conditioning frames of a video model (`memory`).
    Video = 2,
}

pub fn damaged(why: impl Into<String>) -> Error {
    Error::new(ErrorKind::ModelInvalid, format!("not a usable reference file: {}", why.into()))
}

/// Refuses a model other than the one a reference of `kind` was taught with (or its file made with).
pub fn check_identity(kind: Kind, taught_with: u128, identity: u128) -> Result<()> {
    if identity != taught_with {
        let model = match kind {
            Kind::Image => "model (encoder/decoder files)",
            Kind::Video => "video model (metadata or module files)",
        };
        return Err(Error::unsupported_model(format!("the reference was taught with another {model}: teach it again on this one")));
    }
    Ok(())
}

/// The file's bytes for a payload.
pub fn seal(kind: Kind, model_identity: u128, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len() + CHECKSUM);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(kind as u32).to_le_bytes());
    out.extend_from_slice(&model_identity.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = xxh3_128(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The payload of a file's bytes, once its magic, version, checksum, kind and model are right.
pub fn open(bytes: &[u8], kind: Kind, model_identity: u128) -> Result<&[u8]> {
    if bytes.len() < HEADER + CHECKSUM || &bytes[..8] != MAGIC {
        return Err(damaged("it does not start like one (SEGRTREF)"));
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        return Err(Error::new(
            ErrorKind::ModelUnsupported,
            format!("the reference file has format version {version}; this segrt reads version {FORMAT_VERSION}"),
        ));
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM);
    if xxh3_128(body).to_le_bytes() != sum {
        return Err(damaged("its checksum does not match (the file is damaged or was cut short)"));
    }
    let stored_kind = u32_at(12);
    if stored_kind != kind as u32 {
        let what = |k: u32| match k {
            1 => "an image pair",
            2 => "a video model (the memory approach)",
            _ => "an unknown kind",
        };
        return Err(Error::invalid(format!("the file is a reference taught on {}, not on {}", what(stored_kind), what(kind as u32))));
    }
    check_identity(kind, u128::from_le_bytes(bytes[16..32].try_into().expect("16 bytes")), model_identity)?;
    let len = u64::from_le_bytes(bytes[32..40].try_into().expect("8 bytes"));
    if len != (body.len() - HEADER) as u64 {
        return Err(damaged("its length field does not match its size"));
    }
    Ok(&body[HEADER..])
}

/// Writes `bytes` to `path` through a temporary file beside it: a failed save leaves no file.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("segrt-partial");
    let io = |e: std::io::Error, what: &str| Error::invalid(format!("cannot {what} '{}': {e}", path.display()));
    std::fs::write(&tmp, bytes).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e, "write the reference file")
    })?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e, "write the reference file")
    })
}

pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        let kind = if e.kind() == std::io::ErrorKind::NotFound { ErrorKind::ModelNotFound } else { ErrorKind::InvalidArgument };
        Error::new(kind, format!("cannot read the reference file '{}': {e}", path.display()))
    })
}

/// A little-endian writer and a bounds-checked reader for payloads.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f32s(&mut self, v: &[f32]) {
        v.iter().for_each(|x| self.f32(*x));
    }
}

pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len()).ok_or_else(|| damaged("its payload is cut short"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    pub fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    /// `n` floats, refused when the payload cannot hold them (before anything is allocated).
    pub fn f32s(&mut self, n: usize) -> Result<Vec<f32>> {
        let bytes = self.take(n.checked_mul(4).ok_or_else(|| damaged("a count overflows"))?)?;
        Ok(bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect())
    }
    pub fn finish(&self) -> Result<()> {
        if self.at != self.bytes.len() {
            return Err(damaged("its payload has bytes left over"));
        }
        Ok(())
    }
}

/// The payload of an image-pair reference: its examples.
pub fn examples_payload(examples: &[Example]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u32(examples.len() as u32);
    for e in examples {
        w.u32(e.channels as u32);
        w.u32(e.cells() as u32);
        w.f32(e.radius);
        w.f32(e.area_share);
        w.u64(e.setting);
        w.f32s(&e.cell_features);
        w.f32s(&e.mean);
        w.f32s(&e.colour_object);
        w.f32s(&e.colour_rest);
        w.u32(e.calibration.len() as u32);
        w.f32s(&e.calibration);
    }
    w.0
}

pub fn examples_from(payload: &[u8]) -> Result<Vec<Example>> {
    let mut r = Reader::new(payload);
    let n = r.u32()? as usize;
    if n == 0 || n > MAX_EXAMPLES {
        return Err(damaged(format!("it holds {n} examples")));
    }
    let mut examples = Vec::with_capacity(n);
    for _ in 0..n {
        let channels = r.u32()? as usize;
        let cells = r.u32()? as usize;
        if channels == 0 || channels > 65_536 || cells == 0 {
            return Err(damaged(format!("an example of {cells} cells x {channels} channels")));
        }
        let radius = r.f32()?;
        let area_share = r.f32()?;
        let setting = r.u64()?;
        let cell_features = r.f32s(cells.checked_mul(channels).ok_or_else(|| damaged("a count overflows"))?)?;
        let mean = r.f32s(channels)?;
        let colour_object = r.f32s(HIST)?;
        let colour_rest = r.f32s(HIST)?;
        let n = r.u32()? as usize;
        if n > 64 {
            return Err(damaged(format!("an example with {n} calibration values")));
        }
        let calibration = r.f32s(n)?;
        let e = Example { channels, cell_features, mean, radius, colour_object, colour_rest, area_share, setting, calibration };
        e.check()?;
        examples.push(e);
    }
    r.finish()?;
    Ok(examples)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Example {
        Example {
            channels: 2,
            cell_features: vec![1.0, 0.0, 0.0, 1.0],
            mean: vec![0.5, 0.5],
            radius: 1.5,
            colour_object: vec![1.0 / HIST as f32; HIST],
            colour_rest: vec![1.0 / HIST as f32; HIST],
            area_share: 0.25,
            setting: 7,
            calibration: vec![0.5, 0.9, 0.8, 0.7],
        }
    }

    #[test]
    fn a_sealed_file_opens_and_round_trips() {
        let bytes = seal(Kind::Image, 42, &examples_payload(&[example()]));
        let payload = open(&bytes, Kind::Image, 42).unwrap();
        assert_eq!(examples_from(payload).unwrap(), vec![example()]);
    }

    #[test]
    fn damaged_foreign_and_newer_files_are_refused() {
        let bytes = seal(Kind::Image, 42, &examples_payload(&[example()]));
        assert_eq!(open(&bytes, Kind::Image, 43).unwrap_err().kind, ErrorKind::ModelUnsupported);
        let mut other_kind = seal(Kind::Image, 42, &examples_payload(&[example()]));
        other_kind[12] = 2;
        let n = other_kind.len() - CHECKSUM;
        let sum = xxh3_128(&other_kind[..n]);
        other_kind[n..].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(open(&other_kind, Kind::Image, 42).unwrap_err().kind, ErrorKind::InvalidArgument);
        for at in [0, 20, 50, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            let e = open(&bad, Kind::Image, 42).unwrap_err();
            assert!(matches!(e.kind, ErrorKind::ModelInvalid | ErrorKind::ModelUnsupported), "byte {at}: {e:?}");
        }
        assert_eq!(open(&bytes[..bytes.len() - 3], Kind::Image, 42).unwrap_err().kind, ErrorKind::ModelInvalid);
        let mut newer = bytes.clone();
        newer[8] = 2;
        let e = open(&newer, Kind::Image, 42).unwrap_err();
        assert!(e.message.contains("format version 2"), "{}", e.message);
        // a payload claiming more cells than it holds is refused before allocating them
        let mut payload = examples_payload(&[example()]);
        payload[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(examples_from(&payload).unwrap_err().kind, ErrorKind::ModelInvalid);
    }
}
