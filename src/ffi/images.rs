//! `SegImage` and `SegMask`: the host's pixels in and the caller's mask buffer out, as every run
//! takes them, checked before a byte is touched.

use crate::error::{Error, Result};
use crate::image::{check_size, check_stride, plane_span, ImageView, MaskMut, PixelFormat};

/// A borrowed image. The pixels are only read, and only during the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegImage {
    /// First byte of row 0 (the top row). For the planar formats: the R plane. 16-bit and float
    /// values are little-endian and may lie at any address (no alignment is assumed).
    pub data: *const u8,
    pub width: i32,
    pub height: i32,
    /// Bytes from the start of one row to the next; 0 = tightly packed. Negative for bottom-up
    /// buffers (then `data` still points at the top row). For the planar formats: the stride of each
    /// plane. For 16-bit and float formats a multiple of the value size (2 or 4 bytes).
    pub stride: i32,
    /// A `SegPixelFormat` value.
    pub format: i32,
    /// Planar formats only: the G and B planes (NULL otherwise).
    pub plane1: *const u8,
    pub plane2: *const u8,
}

/// A caller-owned 8-bit output mask; it must have the input image's width and height.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegMask {
    pub data: *mut u8,
    pub width: i32,
    pub height: i32,
    /// Bytes per row; 0 = `width`.
    pub stride: i32,
}

impl SegImage {
    /// Validates the descriptor (sizes, limit, stride, format, pointers) before any pixel is read.
    ///
    /// # Safety
    /// The pointers must cover the rows the descriptor describes, for the lifetime `'a`.
    pub(crate) unsafe fn view<'a>(&self, max_pixels: u64) -> Result<ImageView<'a>> {
        let (w, h) = check_size(self.width as i64, self.height as i64, max_pixels)?;
        let format = PixelFormat::try_from(self.format)?;
        let stride = if self.stride == 0 { (w * format.bytes_per_pixel()) as isize } else { self.stride as isize };
        check_stride(stride, format)?;
        let (lowest, span) = plane_span(w, h, format.bytes_per_pixel(), stride)?;
        let plane = |p: *const u8, what: &str| -> Result<&'a [u8]> {
            if p.is_null() {
                return Err(Error::null(what));
            }
            // SAFETY: the plane covers its rows (the contract); `plane_span` gives the lowest byte
            // they touch (rows may run upwards) and how many bytes they span.
            Ok(unsafe { std::slice::from_raw_parts(p.offset(lowest), span) })
        };
        if format.is_planar() {
            ImageView::planes(
                [
                    plane(self.data, "image data (R plane)")?,
                    plane(self.plane1, "image plane1 (G plane)")?,
                    plane(self.plane2, "image plane2 (B plane)")?,
                ],
                w,
                h,
                stride,
                format,
            )
        } else {
            ImageView::new(plane(self.data, "image data")?, w, h, stride, format)
        }
    }
}

/// An optional image argument (NULL: none, e.g. "the image set last") as a view, checked.
///
/// # Safety
/// `image` must be NULL or describe readable pixels for `'a`.
pub(crate) unsafe fn optional_view<'a>(image: *const SegImage, max_pixels: u64) -> Result<Option<ImageView<'a>>> {
    // SAFETY: NULL or a valid descriptor of readable pixels (the contract).
    unsafe { image.as_ref().map(|i| i.view(max_pixels)).transpose() }
}

/// The stride (in values, 0 = `w`) and the length in values of `h` rows of `w` values of
/// `value_bytes` each, as a caller's output buffer describes them: the stride at least `w`, the span
/// within the address space. `what` names the buffer in errors.
pub(crate) fn rows(stride: i32, (w, h): (usize, usize), value_bytes: usize, what: &str) -> Result<(usize, usize)> {
    let stride_values = if stride == 0 { w } else { usize::try_from(stride).unwrap_or(0) };
    if stride_values < w {
        return Err(Error::invalid(format!("{what} stride {stride} is smaller than its width {w}")));
    }
    let len = stride_values
        .checked_mul(h - 1)
        .and_then(|v| v.checked_add(w))
        .filter(|v| v.checked_mul(value_bytes).is_some_and(|b| b <= isize::MAX as usize))
        .ok_or_else(|| Error::invalid(format!("{what} stride x height overflows the address space")))?;
    Ok((stride_values, len))
}

impl SegMask {
    /// The caller's mask buffer as described (its size is checked against the image by the pipeline).
    ///
    /// # Safety
    /// `data` must point to `height` rows of `stride` writable bytes.
    pub(crate) unsafe fn target<'a>(&self) -> Result<MaskMut<'a>> {
        if self.data.is_null() {
            return Err(Error::null("mask data"));
        }
        let (w, h) = check_size(self.width as i64, self.height as i64, u64::MAX).map_err(|e| e.context("mask"))?;
        let (stride, len) = rows(self.stride, (w, h), 1, "mask")?;
        // SAFETY: `height` rows of `stride` bytes are writable (the contract); `len` ends at the last
        // row's `width` bytes and fits in isize.
        MaskMut::new(unsafe { std::slice::from_raw_parts_mut(self.data, len) }, w, h, stride)
    }
}
