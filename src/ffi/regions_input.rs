//! What the region exports read: exactly one of a caller's 8-bit mask and 16-bit label image,
//! checked before a cell is read; and each thread's last result, so that a size query followed by
//! the real call computes once. (Kept out of the files the header generators read.)

use std::cell::RefCell;
use std::rc::Rc;

use xxhash_rust::xxh3::Xxh3;

use crate::contours::{self, Cell, MaskView, Region, RegionOptions};
use crate::error::{Error, Result};

use super::images::SegMask;
use super::sam2_types::SegLabelImage;

/// The cells a region export reads: exactly one of an 8-bit mask and a 16-bit label image.
pub(crate) enum Cells<'a> {
    U8(MaskView<'a, u8>),
    U16(MaskView<'a, u16>),
}

/// `height` rows of `stride` cells (0 = `width`), checked before a cell is read.
pub(crate) fn rows(width: i32, height: i32, stride: i32, cell_bytes: usize, what: &str) -> Result<(usize, usize, usize, usize)> {
    if width <= 0 || height <= 0 {
        return Err(Error::invalid(format!("{what} is {width}x{height}: both sides must be positive")));
    }
    let (w, h) = (width as usize, height as usize);
    // Before any slice of the caller's rows is made: a side over the limit is refused, not read.
    if w > contours::mask::MAX_SIDE || h > contours::mask::MAX_SIDE {
        return Err(Error::new(
            crate::error::ErrorKind::ImageTooLarge,
            format!("{what} is {w}x{h}: sides are limited to {}", contours::mask::MAX_SIDE),
        ));
    }
    if stride < 0 {
        return Err(Error::invalid(format!("{what} stride {stride} is negative: rows must run downwards")));
    }
    // The span of the rows by the boundary's one rule for caller buffers.
    let (stride, len) = super::images::rows(stride, (w, h), cell_bytes, what)?;
    Ok((w, h, stride, len))
}

/// # Safety
/// `mask` and `labels` must be NULL or readable descriptors of readable rows.
pub(crate) unsafe fn read_cells<'a>(mask: *const SegMask, labels: *const SegLabelImage) -> Result<Cells<'a>> {
    // SAFETY: NULL or readable descriptors (the contract).
    match unsafe { (mask.as_ref(), labels.as_ref()) } {
        (Some(_), Some(_)) => Err(Error::invalid("both mask and labels given: pass one, the other NULL")),
        (None, None) => Err(Error::null("mask and labels (pass one)")),
        (Some(m), None) => {
            let (w, h, stride, len) = rows(m.width, m.height, m.stride, 1, "the mask")?;
            if m.data.is_null() {
                return Err(Error::null("mask data"));
            }
            // SAFETY: `height` rows of `stride` bytes are readable (the contract); `len` ends at the
            // last row's `width` bytes and fits in isize.
            let data = unsafe { std::slice::from_raw_parts(m.data.cast_const(), len) };
            Ok(Cells::U8(MaskView::new(data, w, h, stride)?))
        }
        (None, Some(l)) => {
            let (w, h, stride, len) = rows(l.width, l.height, l.stride, 2, "the label image")?;
            if l.data.is_null() {
                return Err(Error::null("label image data"));
            }
            // SAFETY: as above, in 16-bit values.
            let data = unsafe { std::slice::from_raw_parts(l.data.cast_const(), len) };
            Ok(Cells::U16(MaskView::new(data, w, h, stride)?))
        }
    }
}

/// What the last region call on this thread found, for the call after a size query.
pub(crate) struct Found {
    key: u128,
    pub(crate) regions: Vec<Region>,
}

thread_local! {
    static LAST: RefCell<Option<Rc<Found>>> = const { RefCell::new(None) };
}

fn key_of<C: Cell>(view: &MaskView<C>, options: &RegionOptions, hull: bool) -> u128
where
    [C]: AsBytes,
{
    let mut h = Xxh3::new();
    h.update(format!("{}x{} {} {options:?} {hull}", view.width(), view.height(), std::mem::size_of::<C>()).as_bytes());
    for y in 0..view.height() {
        h.update(view.row(y).as_bytes());
    }
    h.digest128()
}

/// Cells as bytes, for the cache key.
pub(crate) trait AsBytes {
    fn as_bytes(&self) -> &[u8];
}
impl AsBytes for [u8] {
    fn as_bytes(&self) -> &[u8] {
        self
    }
}
impl AsBytes for [u16] {
    fn as_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}

pub(crate) fn found<C: Cell>(view: &MaskView<C>, options: &RegionOptions, hull: bool) -> Result<Rc<Found>>
where
    [C]: AsBytes,
{
    let key = key_of(view, options, hull);
    if let Some(last) = LAST.with(|l| l.borrow().clone()).filter(|f| f.key == key) {
        return Ok(last);
    }
    let f = Rc::new(Found { key, regions: contours::regions(view, options)? });
    LAST.with(|l| *l.borrow_mut() = Some(f.clone()));
    Ok(f)
}
