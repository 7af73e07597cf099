//! Image files on the command line: which files a folder holds, decoding, output names that never
//! overwrite each other, overlays.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use image::{DynamicImage, GrayImage, RgbImage};

use crate::{absolute, CliResult};

/// Image files segrt reads (by extension when a folder is given): PNG, JPEG, BMP, TIFF and PNM.
pub const IMAGE_EXTENSIONS: [&str; 11] = ["png", "jpg", "jpeg", "bmp", "tif", "tiff", "pgm", "ppm", "pbm", "pam", "pnm"];

pub fn decode(path: &Path) -> CliResult<DynamicImage> {
    Ok(image::open(path).map_err(|e| format!("cannot read image {}: {e}", path.display()))?)
}

/// The output name of each input, unique within the run so that no output of the run overwrites
/// another: the file stem (`a.png` -> `a`), or, for inputs that share a stem (`l05.jpg`, `l05.bmp`),
/// stem and extension (`l05_jpg`, `l05_bmp`). Names are compared ignoring case, as Windows and macOS
/// file systems do. Inputs that would still share a name (the same file name in two folders) are
/// refused, naming both, before anything is written.
pub fn output_names(inputs: &[PathBuf]) -> CliResult<Vec<String>> {
    let key = |s: &str| s.to_lowercase();
    let mut stems: HashMap<String, usize> = HashMap::new();
    for p in inputs {
        *stems.entry(key(&stem(p))).or_default() += 1;
    }
    let names: Vec<String> = inputs
        .iter()
        .map(|p| {
            let s = stem(p);
            match p.extension() {
                Some(ext) if stems[&key(&s)] > 1 => format!("{s}_{}", ext.to_string_lossy()),
                _ => s,
            }
        })
        .collect();
    let mut seen: HashMap<String, &Path> = HashMap::new();
    for (name, path) in names.iter().zip(inputs) {
        if let Some(first) = seen.insert(key(name), path) {
            // The same file name in two folders: name the plain output, as the user would expect it.
            let name = if key(&file_name(first)) == key(&file_name(path)) { stem(path) } else { name.clone() };
            return Err(format!(
                "{} and {} would both be written as {name}_mask.png: segment them in separate runs (each with its own --out) \
                 or rename one",
                first.display(),
                path.display()
            )
            .into());
        }
    }
    Ok(names)
}

pub fn same_file_name(a: &Path, b: &Path) -> bool {
    match (absolute(a), absolute(b)) {
        (Ok(a), Ok(b)) => a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase(),
        _ => a == b,
    }
}

/// Tints mask pixels: red for 255 (binary), a palette colour per class index otherwise.
pub fn make_overlay(rgb: &RgbImage, mask: &GrayImage) -> RgbImage {
    const PALETTE: [[u8; 3]; 6] = [[255, 0, 0], [0, 200, 0], [0, 90, 255], [255, 200, 0], [200, 0, 255], [0, 220, 220]];
    let mut out = rgb.clone();
    for (px, m) in out.pixels_mut().zip(mask.pixels()) {
        let m = m.0[0];
        if m != 0 {
            let c = if m == 255 { PALETTE[0] } else { PALETTE[(m as usize - 1) % PALETTE.len()] };
            for (p, c) in px.0.iter_mut().zip(c) {
                *p = ((*p as u16 + c as u16) / 2) as u8;
            }
        }
    }
    out
}

/// The image files named or found (by extension, not recursively) in the given folders, in order;
/// a file reached twice (`dir` and `dir/a.png`) is taken once.
pub fn list_images(inputs: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| format!("cannot list {}: {e}", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .filter(|p| {
                    p.extension().and_then(|e| e.to_str()).is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
                })
                .collect();
            files.sort();
            out.extend(files);
        } else if input.is_file() {
            out.push(input.clone());
        } else {
            return Err(format!("{} does not exist", input.display()).into());
        }
    }
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
    Ok(out)
}

pub fn stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}
pub fn file_name(p: &Path) -> String {
    p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Creates the folders the output files go into (as `unet --out` and `track --out` create theirs).
pub fn create_parent_folders<'a>(files: impl IntoIterator<Item = &'a PathBuf>) -> CliResult {
    for file in files {
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
    }
    Ok(())
}

/// A decoded image's pixels as segrt takes them, never narrowed: 8-bit gray and colour as GRAY8 and
/// RGB24, 16-bit ones (PNG, TIFF) as GRAY16 and RGB48, float ones as RGB96F (alpha dropped).
pub struct Pixels {
    pub bytes: Vec<u8>,
    pub width: usize,
    pub height: usize,
    pub format: segrt::PixelFormat,
}

impl Pixels {
    pub fn of(img: &DynamicImage) -> Pixels {
        use segrt::PixelFormat;
        let le16 = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let (bytes, format) = match img {
            DynamicImage::ImageLuma8(g) => (g.as_raw().clone(), PixelFormat::Gray8),
            DynamicImage::ImageLuma16(g) => (le16(g.as_raw()), PixelFormat::Gray16),
            DynamicImage::ImageLumaA16(_) => (le16(img.to_luma16().as_raw()), PixelFormat::Gray16),
            DynamicImage::ImageRgb16(_) | DynamicImage::ImageRgba16(_) => (le16(img.to_rgb16().as_raw()), PixelFormat::Rgb48),
            DynamicImage::ImageRgb32F(_) | DynamicImage::ImageRgba32F(_) => {
                (img.to_rgb32f().as_raw().iter().flat_map(|x| x.to_le_bytes()).collect(), PixelFormat::Rgb96F)
            }
            _ => (img.to_rgb8().into_raw(), PixelFormat::Rgb24),
        };
        Pixels { bytes, width: img.width() as usize, height: img.height() as usize, format }
    }

    pub fn view(&self) -> CliResult<segrt::ImageView<'_>> {
        Ok(segrt::ImageView::new(&self.bytes, self.width, self.height, 0, self.format).map_err(|e| e.to_string())?)
    }

    /// "16-bit gray" etc., for the report.
    pub fn describe(&self) -> &'static str {
        self.format.name()
    }
}

/// The image as 8-bit RGB for overlays: 8-bit images as they are, wider ones stretched from their
/// own minimum..maximum (never cut to their high byte).
pub fn display_rgb(img: &DynamicImage) -> RgbImage {
    match img {
        DynamicImage::ImageLuma16(_) | DynamicImage::ImageLumaA16(_) | DynamicImage::ImageRgb16(_) | DynamicImage::ImageRgba16(_) => {
            let rgb = img.to_rgb16();
            let (lo, hi) = rgb.as_raw().iter().fold((u16::MAX, 0u16), |(a, b), v| (a.min(*v), b.max(*v)));
            let span = (hi.saturating_sub(lo)).max(1) as f32;
            let bytes = rgb.as_raw().iter().map(|v| ((v - lo) as f32 / span * 255.0).round() as u8).collect();
            RgbImage::from_raw(img.width(), img.height(), bytes).unwrap_or_else(|| img.to_rgb8())
        }
        _ => img.to_rgb8(),
    }
}
