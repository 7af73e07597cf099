//! The masks regions are found in: 8- or 16-bit cells with a stride, read either as one foreground
//! (every non-zero cell) or as a label image (each non-zero value a set of regions of its own).

use crate::error::{Error, ErrorKind, Result};

/// How the cells of a mask are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaskKind {
    /// Every non-zero cell is foreground (a 0/255 or 0/1 mask): regions carry label 1.
    #[default]
    Binary,
    /// Each non-zero value is a label of its own (classes of a multi-class UNet, objects of
    /// segment-everything): regions carry their value as label; 0 is background.
    Labels,
}

/// A cell type masks come in: `u8` (masks, class maps) and `u16` (segment-everything's labels).
pub trait Cell: Copy + Eq + Default + Send + Sync + 'static {
    fn value(self) -> u32;
    /// The first index from `x` on whose cell is not 0 (or `row.len()`).
    fn skip_zeros(row: &[Self], x: usize) -> usize {
        row[x..].iter().position(|c| *c != Self::default()).map_or(row.len(), |p| x + p)
    }
    /// The first index from `x` on whose cell is 0 (or `row.len()`).
    fn skip_nonzeros(row: &[Self], x: usize) -> usize {
        row[x..].iter().position(|c| *c == Self::default()).map_or(row.len(), |p| x + p)
    }
}

/// Eight cells at once: background is most of a mask, and long runs are most of an object.
const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

#[inline]
fn word(row: &[u8], x: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&row[x..x + 8]);
    u64::from_le_bytes(b)
}

impl Cell for u8 {
    #[inline]
    fn value(self) -> u32 {
        self as u32
    }
    fn skip_zeros(row: &[u8], mut x: usize) -> usize {
        while x + 8 <= row.len() && word(row, x) == 0 {
            x += 8;
        }
        row[x..].iter().position(|c| *c != 0).map_or(row.len(), |p| x + p)
    }
    fn skip_nonzeros(row: &[u8], mut x: usize) -> usize {
        // A word holds a zero byte exactly when (v - 0x01..) & !v & 0x80.. is not 0.
        while x + 8 <= row.len() && {
            let v = word(row, x);
            v.wrapping_sub(LOW) & !v & HIGH == 0
        } {
            x += 8;
        }
        row[x..].iter().position(|c| *c == 0).map_or(row.len(), |p| x + p)
    }
}
impl Cell for u16 {
    #[inline]
    fn value(self) -> u32 {
        self as u32
    }
}

/// A borrowed mask or label image: `height` rows of `width` cells, `stride` cells apart.
#[derive(Debug, Clone, Copy)]
pub struct MaskView<'a, C: Cell> {
    data: &'a [C],
    width: usize,
    height: usize,
    stride: usize,
}

/// The largest side segrt's region functions take: coordinates, moments and RLE counts stay exact in
/// their integer types (and in a C `int32_t`) well beyond it.
pub const MAX_SIDE: usize = 1 << 20;

impl<'a, C: Cell> MaskView<'a, C> {
    /// `data` must hold `stride * (height - 1) + width` cells; `stride` 0 means `width`. Sizes are
    /// checked before a cell is read: a zero or oversized side, a stride below the width or a buffer
    /// too short for the rows is an error naming the sizes.
    pub fn new(data: &'a [C], width: usize, height: usize, stride: usize) -> Result<Self> {
        let stride = if stride == 0 { width } else { stride };
        if width == 0 || height == 0 {
            return Err(Error::invalid(format!("mask {width}x{height}: both sides must be positive")));
        }
        if width > MAX_SIDE || height > MAX_SIDE {
            return Err(Error::new(ErrorKind::ImageTooLarge, format!("mask {width}x{height}: sides are limited to {MAX_SIDE}")));
        }
        if stride < width {
            return Err(Error::invalid(format!("mask {width}x{height} with stride {stride}: the stride must be at least the width")));
        }
        let needed = stride.checked_mul(height - 1).and_then(|v| v.checked_add(width));
        if needed.is_none_or(|n| data.len() < n) {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                format!(
                    "mask buffer holds {} cells, {width}x{height} with stride {stride} needs {}",
                    data.len(),
                    needed.unwrap_or(usize::MAX)
                ),
            ));
        }
        Ok(MaskView { data, width, height, stride })
    }

    pub fn width(&self) -> usize {
        self.width
    }
    pub fn height(&self) -> usize {
        self.height
    }
    /// Row `y`, `width` cells.
    #[inline]
    pub fn row(&self, y: usize) -> &'a [C] {
        &self.data[y * self.stride..y * self.stride + self.width]
    }
    /// The cells, row after row `stride` apart.
    pub fn cells(&self) -> &'a [C] {
        self.data
    }
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// The cell at (x, y), or 0 outside the mask.
    #[inline]
    pub fn get(&self, x: i64, y: i64) -> u32 {
        // One comparison per axis: a negative coordinate wraps to a huge one.
        if x as u64 >= self.width as u64 || y as u64 >= self.height as u64 {
            return 0;
        }
        self.data[y as usize * self.stride + x as usize].value()
    }
}
