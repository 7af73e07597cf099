//! Host images and the operations both pipelines share: borrowed images with any stride and pixel
//! layout (this file), the intensity stage of 16-bit, signed and float pixels (`intensity`),
//! resizing (`resize`), image -> normalised tensor (`tensor`), bilinear upsampling of score maps
//! straight into a mask (`upsample`), and the bilinear taps and spans every upsampler uses
//! (`bilinear`).

pub mod bilinear;
pub mod intensity;
pub mod resize;
pub mod tensor;
pub mod upsample;

use crate::error::{Error, ErrorKind, Result};

/// Pixel layouts a host can hand in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    /// 8-bit gray, one byte per pixel.
    Gray8,
    /// 8-bit B,G,R (GDI+ `Format24bppRgb`, OpenCV `CV_8UC3`).
    Bgr24,
    /// 8-bit B,G,R,A; alpha is carried, not applied.
    Bgra32,
    /// 8-bit R,G,B.
    Rgb24,
    /// 8-bit R,G,B,A; alpha is carried, not applied.
    Rgba32,
    /// Three separate 8-bit planes R, G, B (HALCON `get_image_pointer3`), each with the same stride.
    PlanarRgb8,
    /// Unsigned 16-bit gray, little-endian (camera Mono10/12/16 unpacked, HALCON `uint2`).
    Gray16,
    /// Unsigned 16-bit R,G,B, little-endian.
    Rgb48,
    /// Three unsigned 16-bit planes R, G, B.
    PlanarRgb16,
    /// Signed 16-bit gray (two's complement), little-endian (CT in HU, HALCON `int2`).
    Gray16S,
    /// Signed 16-bit R,G,B, little-endian.
    Rgb48S,
    /// Three signed 16-bit planes R, G, B.
    PlanarRgb16S,
    /// 32-bit float gray, little-endian (HALCON `real`).
    Gray32F,
    /// 32-bit float R,G,B, little-endian.
    Rgb96F,
    /// Three 32-bit float planes R, G, B.
    PlanarRgb32F,
}

/// The type of one stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample {
    U8,
    U16,
    I16,
    F32,
}

impl Sample {
    pub fn bytes(self) -> usize {
        match self {
            Sample::U8 => 1,
            Sample::U16 | Sample::I16 => 2,
            Sample::F32 => 4,
        }
    }
}

impl PixelFormat {
    /// Bytes per pixel in one plane (interleaved formats: all channels).
    pub fn bytes_per_pixel(self) -> usize {
        self.sample().bytes() * self.values_per_pixel()
    }
    /// Stored values per pixel in one plane.
    fn values_per_pixel(self) -> usize {
        use PixelFormat::*;
        match self {
            Gray8 | PlanarRgb8 | Gray16 | PlanarRgb16 | Gray16S | PlanarRgb16S | Gray32F | PlanarRgb32F => 1,
            Bgr24 | Rgb24 | Rgb48 | Rgb48S | Rgb96F => 3,
            Bgra32 | Rgba32 => 4,
        }
    }
    /// The type of each stored value.
    pub fn sample(self) -> Sample {
        use PixelFormat::*;
        match self {
            Gray8 | Bgr24 | Bgra32 | Rgb24 | Rgba32 | PlanarRgb8 => Sample::U8,
            Gray16 | Rgb48 | PlanarRgb16 => Sample::U16,
            Gray16S | Rgb48S | PlanarRgb16S => Sample::I16,
            Gray32F | Rgb96F | PlanarRgb32F => Sample::F32,
        }
    }
    /// Colours: 1 for gray, 3 for colour (alpha is not a colour).
    pub fn colours(self) -> usize {
        use PixelFormat::*;
        match self {
            Gray8 | Gray16 | Gray16S | Gray32F => 1,
            _ => 3,
        }
    }
    /// Where colour `c` (0 = R, 1 = G, 2 = B; gray: every colour is the gray value) is found:
    /// `(plane, value index within the pixel)`.
    pub fn colour_tap(self, c: usize) -> (usize, usize) {
        use PixelFormat::*;
        match self {
            Gray8 | Gray16 | Gray16S | Gray32F => (0, 0),
            Rgb24 | Rgba32 | Rgb48 | Rgb48S | Rgb96F => (0, c),
            Bgr24 | Bgra32 => (0, 2 - c),
            PlanarRgb8 | PlanarRgb16 | PlanarRgb16S | PlanarRgb32F => (c, 0),
        }
    }
    pub fn is_planar(self) -> bool {
        matches!(self, PixelFormat::PlanarRgb8 | PixelFormat::PlanarRgb16 | PixelFormat::PlanarRgb16S | PixelFormat::PlanarRgb32F)
    }
    pub fn name(self) -> &'static str {
        match self {
            PixelFormat::Gray8 => "GRAY8",
            PixelFormat::Bgr24 => "BGR24",
            PixelFormat::Bgra32 => "BGRA32",
            PixelFormat::Rgb24 => "RGB24",
            PixelFormat::Rgba32 => "RGBA32",
            PixelFormat::PlanarRgb8 => "PLANAR_RGB8",
            PixelFormat::Gray16 => "GRAY16",
            PixelFormat::Rgb48 => "RGB48",
            PixelFormat::PlanarRgb16 => "PLANAR_RGB16",
            PixelFormat::Gray16S => "GRAY16S",
            PixelFormat::Rgb48S => "RGB48S",
            PixelFormat::PlanarRgb16S => "PLANAR_RGB16S",
            PixelFormat::Gray32F => "GRAY32F",
            PixelFormat::Rgb96F => "RGB96F",
            PixelFormat::PlanarRgb32F => "PLANAR_RGB32F",
        }
    }
}

/// The memory layout of one plane: where row 0 starts in the slice and the signed distance between rows.
#[derive(Debug, Clone, Copy)]
struct PlaneLayout {
    first_row: usize,
    stride: isize,
}

/// A validated, borrowed image. Rows may be padded (stride > row bytes) or run bottom-up (stride < 0).
#[derive(Debug, Clone, Copy)]
pub struct ImageView<'a> {
    width: usize,
    height: usize,
    format: PixelFormat,
    planes: [&'a [u8]; 3],
    layout: PlaneLayout,
}

/// The byte span one plane covers: `(offset of the lowest byte relative to row 0, total length)`.
pub fn plane_span(width: usize, height: usize, bytes_per_pixel: usize, stride: isize) -> Result<(isize, usize)> {
    let row_bytes = width.checked_mul(bytes_per_pixel).ok_or_else(|| Error::new(ErrorKind::ImageTooLarge, "row size overflows"))?;
    if stride.unsigned_abs() < row_bytes {
        return Err(Error::invalid(format!(
            "stride {stride} is smaller than one row ({width} px x {bytes_per_pixel} bytes = {row_bytes} bytes)"
        )));
    }
    let rows_span = (height - 1)
        .checked_mul(stride.unsigned_abs())
        .and_then(|v| v.checked_add(row_bytes))
        .filter(|v| *v <= isize::MAX as usize)
        .ok_or_else(|| Error::new(ErrorKind::ImageTooLarge, "stride x height overflows the address space"))?;
    let lowest = if stride < 0 { stride * (height as isize - 1) } else { 0 };
    Ok((lowest, rows_span))
}

/// Refuses a stride that is not a whole number of stored values (16-bit and float formats), so
/// every row starts on a value.
pub fn check_stride(stride: isize, format: PixelFormat) -> Result<()> {
    let size = format.sample().bytes();
    if stride % size as isize != 0 {
        return Err(Error::invalid(format!(
            "stride {stride} is not a multiple of {size} bytes, the size of one {} value: a row must start on a value",
            format.name()
        )));
    }
    Ok(())
}

/// Checks width/height against the pixel limit.
pub fn check_size(width: i64, height: i64, max_pixels: u64) -> Result<(usize, usize)> {
    if width <= 0 || height <= 0 {
        return Err(Error::invalid(format!("image size {width}x{height}: width and height must be positive")));
    }
    let pixels = (width as u64).saturating_mul(height as u64);
    if pixels > max_pixels {
        return Err(Error::new(
            ErrorKind::ImageTooLarge,
            format!("image {width}x{height} has {pixels} pixels, more than the limit of {max_pixels} (the max_pixels option)"),
        ));
    }
    Ok((width as usize, height as usize))
}

impl<'a> ImageView<'a> {
    /// An interleaved (or single-plane gray) image in a slice. `stride` is in bytes; 0 means tightly packed.
    /// The slice must start at the lowest-addressed byte of the image (for bottom-up images: the last row).
    pub fn new(data: &'a [u8], width: usize, height: usize, stride: isize, format: PixelFormat) -> Result<Self> {
        if format.is_planar() {
            return Err(Error::new(ErrorKind::UnsupportedFormat, format!("{} needs three planes: use ImageView::planes", format.name())));
        }
        Self::from_planes([data, data, data], width, height, stride, format)
    }

    /// Three 8-bit planes R, G, B with the same size and stride.
    pub fn planar(r: &'a [u8], g: &'a [u8], b: &'a [u8], width: usize, height: usize, stride: isize) -> Result<Self> {
        Self::from_planes([r, g, b], width, height, stride, PixelFormat::PlanarRgb8)
    }

    /// Three planes R, G, B of a planar `format` with the same size and stride (in bytes).
    pub fn planes(planes: [&'a [u8]; 3], width: usize, height: usize, stride: isize, format: PixelFormat) -> Result<Self> {
        if !format.is_planar() {
            return Err(Error::new(ErrorKind::UnsupportedFormat, format!("{} is not a planar format", format.name())));
        }
        Self::from_planes(planes, width, height, stride, format)
    }

    fn from_planes(planes: [&'a [u8]; 3], width: usize, height: usize, stride: isize, format: PixelFormat) -> Result<Self> {
        check_size(width as i64, height as i64, u64::MAX)?;
        let bpp = format.bytes_per_pixel();
        let stride = if stride == 0 { (width * bpp) as isize } else { stride };
        check_stride(stride, format)?;
        let (lowest, span) = plane_span(width, height, bpp, stride)?;
        for p in &planes {
            if p.len() < span {
                return Err(Error::new(
                    ErrorKind::BufferTooSmall,
                    format!(
                        "image buffer holds {} bytes, a {width}x{height} {} image with stride {stride} needs {span}",
                        p.len(),
                        format.name()
                    ),
                ));
            }
        }
        Ok(ImageView { width, height, format, planes, layout: PlaneLayout { first_row: (-lowest) as usize, stride } })
    }

    pub fn width(&self) -> usize {
        self.width
    }
    pub fn height(&self) -> usize {
        self.height
    }
    pub fn format(&self) -> PixelFormat {
        self.format
    }

    /// Row `y` of `plane` (0 for interleaved and gray images; 0, 1, 2 = R, G, B for planar ones),
    /// exactly `width` pixels long.
    pub fn row(&self, plane: usize, y: usize) -> &'a [u8] {
        let start = (self.layout.first_row as isize + y as isize * self.layout.stride) as usize;
        let len = self.width * self.format.bytes_per_pixel(); // per plane
        &self.planes[plane][start..start + len]
    }

    /// Colour `c` (0 = R, 1 = G, 2 = B; gray images: the gray value) of row `y` as floats, `width`
    /// values into `out`. Values are read little-endian from bytes: any alignment works.
    pub fn colour_row_into(&self, c: usize, y: usize, out: &mut Vec<f32>) {
        let (plane, index) = self.format.colour_tap(c);
        let sample = self.format.sample();
        let (size, step) = (sample.bytes(), self.format.bytes_per_pixel());
        let row = self.row(plane, y);
        out.clear();
        let values = row.chunks_exact(step).map(|px| &px[index * size..(index + 1) * size]);
        match sample {
            Sample::U8 => out.extend(values.map(|b| b[0] as f32)),
            Sample::U16 => out.extend(values.map(|b| u16::from_le_bytes([b[0], b[1]]) as f32)),
            Sample::I16 => out.extend(values.map(|b| i16::from_le_bytes([b[0], b[1]]) as f32)),
            Sample::F32 => out.extend(values.map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        }
    }

    /// The whole plane as one slice when its rows are packed top-down (no padding, positive stride).
    pub fn packed_plane(&self, plane: usize) -> Option<&'a [u8]> {
        let row_bytes = self.width * self.format.bytes_per_pixel();
        (self.layout.stride == row_bytes as isize)
            .then(|| &self.planes[plane][self.layout.first_row..self.layout.first_row + row_bytes * self.height])
    }

    /// The `w` x `h` region whose top-left pixel is `(x, y)`; it borrows the same pixels.
    pub fn crop(&self, x: usize, y: usize, w: usize, h: usize) -> Result<Self> {
        if w == 0 || h == 0 || x.checked_add(w).is_none_or(|r| r > self.width) || y.checked_add(h).is_none_or(|b| b > self.height) {
            return Err(Error::invalid(format!("region {w}x{h} at ({x}, {y}) is not inside the {}x{} image", self.width, self.height)));
        }
        let bpp = self.format.bytes_per_pixel();
        let first_row = self.layout.first_row as isize + y as isize * self.layout.stride + (x * bpp) as isize;
        Ok(ImageView { width: w, height: h, layout: PlaneLayout { first_row: first_row as usize, ..self.layout }, ..*self })
    }

    /// A fast hash of the pixels (not the row padding) plus size and format: the key under which
    /// an image's encoder output is cached.
    pub fn content_hash(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&(self.width as u64).to_le_bytes());
        h.update(&(self.height as u64).to_le_bytes());
        h.update(&(self.format as i32).to_le_bytes());
        let planes = if self.format.is_planar() { 3 } else { 1 };
        for plane in 0..planes {
            for y in 0..self.height {
                h.update(self.row(plane, y));
            }
        }
        h.digest()
    }

    /// Packed R,G,B bytes, `width * height * 3`, allocated fallibly. Gray is replicated to all
    /// three channels, alpha dropped.
    pub fn try_to_rgb8(&self) -> crate::Result<Vec<u8>> {
        self.check_8bit()?;
        let mut out = crate::alloc::vec_of(self.width * self.height * 3, 0u8, "packed RGB pixels")?;
        for (y, dst) in out.chunks_exact_mut(self.width * 3).enumerate() {
            let px = dst.chunks_exact_mut(3);
            match self.format {
                PixelFormat::Gray8 => px.zip(self.row(0, y)).for_each(|(d, &v)| d.copy_from_slice(&[v, v, v])),
                PixelFormat::Rgb24 => dst.copy_from_slice(self.row(0, y)),
                PixelFormat::Bgr24 => px.zip(self.row(0, y).chunks_exact(3)).for_each(|(d, s)| d.copy_from_slice(&[s[2], s[1], s[0]])),
                PixelFormat::Rgba32 => px.zip(self.row(0, y).chunks_exact(4)).for_each(|(d, s)| d.copy_from_slice(&s[..3])),
                PixelFormat::Bgra32 => px.zip(self.row(0, y).chunks_exact(4)).for_each(|(d, s)| d.copy_from_slice(&[s[2], s[1], s[0]])),
                PixelFormat::PlanarRgb8 => {
                    let (r, g, b) = (self.row(0, y), self.row(1, y), self.row(2, y));
                    px.enumerate().for_each(|(x, d)| d.copy_from_slice(&[r[x], g[x], b[x]]))
                }
                _ => unreachable!("checked: 8-bit formats only"),
            }
        }
        Ok(out)
    }

    /// [`Self::try_to_rgb8`] for tests: the straightforward reference the pipelines' in-layout
    /// processing is tested against.
    #[cfg(test)]
    pub fn to_rgb8(&self) -> Vec<u8> {
        self.try_to_rgb8().unwrap()
    }

    /// Packed 8-bit luminance, `width * height`: ITU-R 601-2 (`L = (299 R + 587 G + 114 B) / 1000`),
    /// the same rounding as Pillow's `convert("L")`. Gray input is copied as is.
    #[cfg(test)]
    pub fn to_gray8(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.to_gray8_into(&mut out).unwrap();
        out
    }

    /// Luminance (see [`luminance`]) into a reused buffer.
    pub fn to_gray8_into(&self, out: &mut Vec<u8>) -> Result<()> {
        self.check_8bit()?;
        out.clear();
        out.try_reserve_exact(self.width * self.height)
            .map_err(|_| crate::alloc::out_of_memory((self.width * self.height) as u64, "the luminance image"))?;
        for y in 0..self.height {
            let row = self.row(0, y);
            match self.format {
                PixelFormat::Gray8 => out.extend_from_slice(row),
                PixelFormat::Rgb24 => out.extend(row.chunks_exact(3).map(|p| luminance(p[0], p[1], p[2]))),
                PixelFormat::Bgr24 => out.extend(row.chunks_exact(3).map(|p| luminance(p[2], p[1], p[0]))),
                PixelFormat::Rgba32 => out.extend(row.chunks_exact(4).map(|p| luminance(p[0], p[1], p[2]))),
                PixelFormat::Bgra32 => out.extend(row.chunks_exact(4).map(|p| luminance(p[2], p[1], p[0]))),
                PixelFormat::PlanarRgb8 => {
                    let (g, b) = (self.row(1, y), self.row(2, y));
                    out.extend(row.iter().zip(g).zip(b).map(|((r, g), b)| luminance(*r, *g, *b)))
                }
                _ => unreachable!("checked: 8-bit formats only"),
            }
        }
        Ok(())
    }

    /// The 8-bit conversions take 8-bit formats only: wider ones go through the intensity stage.
    fn check_8bit(&self) -> Result<()> {
        if self.format.sample() != Sample::U8 {
            return Err(Error::internal(format!("{} pixels reached an 8-bit conversion without the intensity stage", self.format.name())));
        }
        Ok(())
    }
}

/// A caller-owned 8-bit mask: `height` rows of `width` bytes, `stride` bytes apart. Pipelines
/// write their masks straight into it (no intermediate full-size copy).
#[derive(Debug)]
pub struct MaskMut<'a> {
    data: &'a mut [u8],
    width: usize,
    height: usize,
    stride: usize,
}

impl<'a> MaskMut<'a> {
    /// `data` must hold `stride * (height - 1) + width` bytes; `stride` 0 means `width`.
    pub fn new(data: &'a mut [u8], width: usize, height: usize, stride: usize) -> Result<Self> {
        let stride = if stride == 0 { width } else { stride };
        if width == 0 || height == 0 || stride < width {
            return Err(Error::invalid(format!("mask {width}x{height} with stride {stride}: sizes must be positive and stride >= width")));
        }
        let needed = stride.checked_mul(height - 1).and_then(|v| v.checked_add(width));
        if needed.is_none_or(|n| data.len() < n) {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                format!("mask buffer holds {} bytes, {width}x{height} with stride {stride} needs more", data.len()),
            ));
        }
        Ok(MaskMut { data, width, height, stride })
    }

    pub fn width(&self) -> usize {
        self.width
    }
    pub fn height(&self) -> usize {
        self.height
    }
    pub fn row(&self, y: usize) -> &[u8] {
        &self.data[y * self.stride..y * self.stride + self.width]
    }
    pub fn row_mut(&mut self, y: usize) -> &mut [u8] {
        &mut self.data[y * self.stride..y * self.stride + self.width]
    }
    /// The pixel at row-major index `i` (`y * width + x`).
    pub fn at(&self, i: usize) -> u8 {
        self.data[(i / self.width) * self.stride + i % self.width]
    }
    pub fn set(&mut self, i: usize, v: u8) {
        self.data[(i / self.width) * self.stride + i % self.width] = v;
    }
    /// Copies a packed `width * height` mask in.
    pub fn copy_from(&mut self, packed: &[u8]) {
        for y in 0..self.height {
            let w = self.width;
            self.row_mut(y).copy_from_slice(&packed[y * w..(y + 1) * w]);
        }
    }
    /// Pixels that are not 0.
    pub fn count_foreground(&self) -> u64 {
        (0..self.height).map(|y| self.row(y).iter().filter(|v| **v != 0).count() as u64).sum()
    }
}

/// Pillow's `L` conversion: fixed-point 601-2 weights scaled by 2^16, rounded.
#[inline]
pub fn luminance(r: u8, g: u8, b: u8) -> u8 {
    ((r as u32 * 19595 + g as u32 * 38470 + b as u32 * 7471 + 0x8000) >> 16) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_convert_to_the_same_rgb() {
        let (w, h) = (3usize, 2usize);
        let rgb: Vec<u8> = (0..(w * h * 3) as u8).map(|v| v.wrapping_mul(37)).collect();
        let bgr: Vec<u8> = rgb.chunks(3).flat_map(|p| [p[2], p[1], p[0]]).collect();
        let bgra: Vec<u8> = rgb.chunks(3).flat_map(|p| [p[2], p[1], p[0], 255]).collect();
        let planes: Vec<Vec<u8>> = (0..3).map(|c| rgb.chunks(3).map(|p| p[c]).collect()).collect();
        let a = ImageView::new(&rgb, w, h, 0, PixelFormat::Rgb24).unwrap().to_rgb8();
        let b = ImageView::new(&bgr, w, h, 0, PixelFormat::Bgr24).unwrap().to_rgb8();
        let c = ImageView::new(&bgra, w, h, 0, PixelFormat::Bgra32).unwrap().to_rgb8();
        let d = ImageView::planar(&planes[0], &planes[1], &planes[2], w, h, 0).unwrap().to_rgb8();
        assert_eq!(a, rgb);
        assert_eq!(b, rgb);
        assert_eq!(c, rgb);
        assert_eq!(d, rgb);
    }

    #[test]
    fn padded_and_bottom_up_strides() {
        let (w, h) = (2usize, 3usize);
        // rows 0,1,2 stored bottom-up with 2 bytes of padding each
        let rows: [[u8; 2]; 3] = [[1, 2], [3, 4], [5, 6]];
        let mut buf = Vec::new();
        for r in rows.iter().rev() {
            buf.extend_from_slice(r);
            buf.extend_from_slice(&[0xEE, 0xEE]);
        }
        let v = ImageView::new(&buf[..buf.len() - 2], w, h, -4, PixelFormat::Gray8).unwrap();
        assert_eq!(v.to_gray8(), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn crops_read_the_same_pixels() {
        let (w, h) = (5usize, 4usize);
        let rgb: Vec<u8> = (0..(w * h * 3) as u8).collect();
        // bottom-up with padding: rows stored last-first, 2 bytes of padding each
        let stride = w * 3 + 2;
        let mut buf = vec![0xEEu8; stride * h];
        for y in 0..h {
            let at = (h - 1 - y) * stride;
            buf[at..at + w * 3].copy_from_slice(&rgb[y * w * 3..(y + 1) * w * 3]);
        }
        let view = ImageView::new(&buf, w, h, -(stride as isize), PixelFormat::Rgb24).unwrap();
        let crop = view.crop(1, 2, 3, 2).unwrap();
        let expected: Vec<u8> = (2..4).flat_map(|y| rgb[(y * w + 1) * 3..(y * w + 4) * 3].to_vec()).collect();
        assert_eq!(crop.to_rgb8(), expected);
        assert!(view.crop(3, 0, 3, 1).is_err());
        assert!(view.crop(0, 0, 0, 1).is_err());
    }

    #[test]
    fn rejects_bad_layouts() {
        let buf = [0u8; 10];
        let e = ImageView::new(&buf, 4, 2, 3, PixelFormat::Gray8).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        let e = ImageView::new(&buf, 4, 3, 0, PixelFormat::Gray8).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BufferTooSmall);
        let e = check_size(100_000, 100_000, crate::options::DEFAULT_MAX_PIXELS).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ImageTooLarge);
        assert!(PixelFormat::try_from(42).is_err());
    }

    #[test]
    fn luminance_matches_pillow() {
        // Pillow: Image.new("RGB",(1,1),(200,100,50)).convert("L").getpixel((0,0)) == 124
        assert_eq!(luminance(200, 100, 50), 124);
        assert_eq!(luminance(255, 255, 255), 255);
    }
}
