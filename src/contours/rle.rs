//! COCO's run-length encoding of a mask (pycocotools' `mask.encode`/`decode`): counts of alternating
//! background and foreground pixels in column-major order (down the first column, then the next),
//! starting with background; and its compressed string form (`_toString`/`_frString`): each count,
//! from the third on as the difference to the count two before, in 5-bit groups with a continuation
//! bit, each group plus 48 as one ASCII character.

use crate::error::{Error, Result};

use super::mask::{Cell, MaskKind, MaskView};
use super::runs::Run;

/// A COCO RLE: the mask's size and its counts (column-major, background first).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rle {
    pub width: u32,
    pub height: u32,
    pub counts: Vec<u32>,
}

impl Rle {
    /// The foreground pixels (pycocotools' `area`).
    pub fn area(&self) -> u64 {
        self.counts.iter().skip(1).step_by(2).map(|c| *c as u64).sum()
    }

    /// The foreground's bounding box `[x, y, width, height]` (pycocotools' `toBbox`), zeros when empty.
    pub fn bbox(&self) -> [u32; 4] {
        let h = self.height as u64;
        if h == 0 {
            return [0; 4];
        }
        let (mut x0, mut y0, mut x1, mut y1) = (u64::MAX, u64::MAX, 0u64, 0u64);
        let mut at = 0u64;
        for (i, c) in self.counts.iter().enumerate() {
            let c = *c as u64;
            if i % 2 == 1 && c > 0 {
                let (first, last) = (at, at + c - 1);
                let (fx, fy, lx, ly) = (first / h, first % h, last / h, last % h);
                x0 = x0.min(fx);
                x1 = x1.max(lx);
                // A run crossing a column's end covers every row between.
                if lx > fx {
                    y0 = 0;
                    y1 = h - 1;
                } else {
                    y0 = y0.min(fy);
                    y1 = y1.max(ly);
                }
            }
            at += c;
        }
        if x0 == u64::MAX {
            return [0; 4];
        }
        [x0 as u32, y0 as u32, (x1 - x0 + 1) as u32, (y1 - y0 + 1) as u32]
    }

    /// Writes the mask into `out` (`height` rows of `width` bytes, `stride` apart; 0 means `width`):
    /// `value` for foreground, 0 for background. The counts must add up to width x height.
    pub fn decode_into(&self, out: &mut [u8], stride: usize, value: u8) -> Result<()> {
        let (w, h) = (self.width as usize, self.height as usize);
        let stride = if stride == 0 { w } else { stride };
        let total: u64 = self.counts.iter().map(|c| *c as u64).sum();
        if total != (w as u64) * (h as u64) {
            return Err(Error::invalid(format!("RLE counts add up to {total} pixels, a {w}x{h} mask has {}", w as u64 * h as u64)));
        }
        if w == 0 || h == 0 {
            return Ok(());
        }
        if stride < w || out.len() < stride * (h - 1) + w {
            return Err(Error::new(
                crate::ErrorKind::BufferTooSmall,
                format!("{} bytes cannot hold a {w}x{h} mask with stride {stride}", out.len()),
            ));
        }
        let mut at = 0usize;
        for (i, c) in self.counts.iter().enumerate() {
            let v = if i % 2 == 1 { value } else { 0 };
            for k in at..at + *c as usize {
                out[(k % h) * stride + k / h] = v;
            }
            at += *c as usize;
        }
        Ok(())
    }

    /// The compressed string form (pycocotools' `_toString`).
    pub fn to_compressed(&self) -> String {
        let mut s = String::new();
        for (i, c) in self.counts.iter().enumerate() {
            let mut x = *c as i64;
            if i > 2 {
                x -= self.counts[i - 2] as i64;
            }
            loop {
                let mut group = (x & 0x1f) as u8;
                x >>= 5;
                let more = if group & 0x10 != 0 { x != -1 } else { x != 0 };
                if more {
                    group |= 0x20;
                }
                s.push((group + 48) as char);
                if !more {
                    break;
                }
            }
        }
        s
    }

    /// Reads the compressed string form (pycocotools' `_frString`) of a `width` x `height` mask.
    pub fn from_compressed(text: &str, width: u32, height: u32) -> Result<Rle> {
        let bytes = text.as_bytes();
        let mut counts: Vec<u32> = Vec::new();
        let mut p = 0;
        while p < bytes.len() {
            let (mut x, mut k) = (0i64, 0u32);
            loop {
                let b = bytes.get(p).copied().ok_or_else(|| Error::invalid("RLE string ends inside a count"))?;
                if !(48..48 + 64).contains(&b) || k > 60 {
                    return Err(Error::invalid(format!("RLE string: character {:?} at {p} is not a count digit", b as char)));
                }
                let c = (b - 48) as i64;
                x |= (c & 0x1f) << (5 * k);
                p += 1;
                k += 1;
                if c & 0x20 == 0 {
                    if c & 0x10 != 0 {
                        x |= -1i64 << (5 * k);
                    }
                    break;
                }
            }
            if counts.len() > 2 {
                x += counts[counts.len() - 2] as i64;
            }
            counts.push(u32::try_from(x).map_err(|_| Error::invalid(format!("RLE string: count {x} is out of range")))?);
        }
        let rle = Rle { width, height, counts };
        let total: u64 = rle.counts.iter().map(|c| *c as u64).sum();
        if total != width as u64 * height as u64 {
            return Err(Error::invalid(format!(
                "RLE counts add up to {total} pixels, a {width}x{height} mask has {}",
                width as u64 * height as u64
            )));
        }
        Ok(rle)
    }
}

/// COCO's counts are 32-bit: masks of more than 2^32 - 1 pixels have no RLE.
pub fn check_size(width: usize, height: usize) -> Result<()> {
    if width as u64 * height as u64 > u32::MAX as u64 {
        return Err(Error::new(
            crate::ErrorKind::ImageTooLarge,
            format!("a {width}x{height} mask has more pixels than COCO's 32-bit RLE counts hold"),
        ));
    }
    Ok(())
}

/// The RLE of the pixels selected by `select(cell)` in a mask (pycocotools' `encode` of the mask
/// `select(cell) ? 1 : 0`), one column-major pass.
pub fn encode<C: Cell>(mask: &MaskView<C>, select: impl Fn(u32) -> bool) -> Result<Rle> {
    let (w, h) = (mask.width(), mask.height());
    check_size(w, h)?;
    let mut counts = Vec::new();
    let (mut current, mut run) = (false, 0u32);
    for x in 0..w {
        for y in 0..h {
            let on = select(mask.row(y)[x].value());
            if on != current {
                counts.push(run);
                run = 0;
                current = on;
            }
            run += 1;
        }
    }
    counts.push(run);
    Ok(Rle { width: w as u32, height: h as u32, counts })
}

/// The RLE of a mask's foreground: non-zero cells (binary) or cells equal to `label`.
pub fn encode_mask<C: Cell>(mask: &MaskView<C>, kind: MaskKind, label: u32) -> Result<Rle> {
    match kind {
        MaskKind::Binary => encode(mask, |v| v != 0),
        MaskKind::Labels => encode(mask, |v| v == label),
    }
}

/// The RLE of a set of row runs (a region, or all regions of one label) in a `width` x `height`
/// image, without a bitmap: the column-major count boundaries are where a pixel differs from the one
/// above it (the columns where two neighbouring rows' runs differ) and where a column's first pixel
/// differs from the previous column's last. Work follows the runs and outline length, not the area.
pub fn encode_runs<'r>(runs: impl Iterator<Item = &'r Run>, width: u32, height: u32) -> Result<Rle> {
    check_size(width as usize, height as usize)?;
    let mut rows: Vec<Run> = runs.copied().collect();
    rows.sort_unstable_by_key(|r| (r.y, r.x0));
    let (w, h) = (width as usize, height as usize);
    // Changes inside columns, as (column, row) in row order: columns where row y differs from y - 1.
    let mut changes: Vec<(u32, u32)> = Vec::new();
    let mut first_row = vec![false; w];
    let mut last_row = vec![false; w];
    let mut prev: &[Run] = &[];
    let mut prev_y = u32::MAX;
    let mut i = 0;
    while i <= rows.len() {
        // The next row holding runs, or the row after the last (to close the runs of the last).
        let y = rows.get(i).map_or(u32::MAX, |r| r.y);
        let mut j = i;
        while j < rows.len() && rows[j].y == y {
            j += 1;
        }
        let cur = &rows[i..j];
        if prev_y != u32::MAX {
            // Rows between prev_y + 1 and y - 1 are empty: prev's columns change at prev_y + 1 and
            // cur's at y; consecutive rows change where they differ.
            if y == prev_y + 1 {
                symmetric_difference(prev, cur, |x0, x1| changes.extend((x0..x1).map(|x| (x, y))));
            } else {
                if prev_y + 1 < height {
                    for r in prev {
                        changes.extend((r.x0..r.x1).map(|x| (x, prev_y + 1)));
                    }
                }
                if y < height {
                    for r in cur {
                        changes.extend((r.x0..r.x1).map(|x| (x, y)));
                    }
                }
            }
        } else if y < height {
            for r in cur {
                if y > 0 {
                    changes.extend((r.x0..r.x1).map(|x| (x, y)));
                }
            }
        }
        for r in cur {
            if y == 0 {
                first_row[r.x0 as usize..r.x1 as usize].fill(true);
            }
            if y + 1 == height {
                last_row[r.x0 as usize..r.x1 as usize].fill(true);
            }
        }
        if j == rows.len() && i == rows.len() {
            break;
        }
        prev = cur;
        prev_y = y;
        i = j;
    }
    // Column-major order: a stable counting sort by column keeps each column's rows in order.
    let mut start = vec![0usize; w + 1];
    for (x, _) in &changes {
        start[*x as usize + 1] += 1;
    }
    for x in 0..w {
        start[x + 1] += start[x];
    }
    let mut sorted = vec![0u32; changes.len()];
    let mut fill = start.clone();
    for (x, y) in &changes {
        sorted[fill[*x as usize]] = *y;
        fill[*x as usize] += 1;
    }
    let mut counts = Vec::new();
    let mut last = 0u64;
    let mut on_before = false;
    let mut mark = |at: u64, counts: &mut Vec<u32>| {
        counts.push((at - last) as u32);
        last = at;
    };
    for x in 0..w {
        let base = x as u64 * h as u64;
        if first_row[x] != on_before {
            mark(base, &mut counts);
        }
        for y in &sorted[start[x]..start[x + 1]] {
            mark(base + *y as u64, &mut counts);
        }
        on_before = last_row[x];
    }
    let total = w as u64 * h as u64;
    if last < total || counts.is_empty() {
        counts.push((total - last) as u32);
    }
    Ok(Rle { width, height, counts })
}

/// Calls `emit(x0, x1)` for each span of columns covered by exactly one of two rows' sorted runs.
fn symmetric_difference(a: &[Run], b: &[Run], mut emit: impl FnMut(u32, u32)) {
    // Boundaries of both rows in order; coverage flips at each; odd coverage parity = difference.
    let mut edges: Vec<u32> = Vec::with_capacity(2 * (a.len() + b.len()));
    let (mut i, mut j) = (0, 0);
    let ea = a.iter().flat_map(|r| [r.x0, r.x1]);
    let eb = b.iter().flat_map(|r| [r.x0, r.x1]);
    let (va, vb): (Vec<u32>, Vec<u32>) = (ea.collect(), eb.collect());
    while i < va.len() || j < vb.len() {
        if j == vb.len() || (i < va.len() && va[i] <= vb[j]) {
            edges.push(va[i]);
            i += 1;
        } else {
            edges.push(vb[j]);
            j += 1;
        }
    }
    for pair in edges.chunks(2) {
        if pair[0] < pair[1] {
            emit(pair[0], pair[1]);
        }
    }
}
