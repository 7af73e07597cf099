//! The 8-bit path's kernel: one pass of per-channel lookup tables writes channel order, scale,
//! mean/std, layout and the element type together.

use super::Layout;

/// What fills the tensor beyond the (resized) image.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Edges {
    /// The last row and column repeat (tiles: no artificial border for the model to see).
    Repeat,
    /// Zero (SAM1 pads after normalising).
    Zero,
}

#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub(super) width: usize,
    pub(super) height: usize,
    /// Pixels per source row and source rows; beyond them `edges` applies.
    pub(super) src_width: usize,
    pub(super) src_height: usize,
    /// Bytes per source pixel in a plane.
    pub(super) step: usize,
    pub(super) layout: Layout,
    pub(super) edges: Edges,
}

/// `out[c, y, x]` (or `[y, x, c]`) = `luts[c][row(plane_c, y)[x * step + offset_c]]`.
pub(super) fn normalise<'a, T: Copy + Default>(
    out: &mut [T],
    luts: &[[T; 256]],
    taps: &[(usize, usize)],
    s: Shape,
    row: impl Fn(usize, usize) -> &'a [u8],
) {
    let (w, channels) = (s.width, taps.len());
    let plane = w * s.height;
    let copied = s.src_width.min(w);
    for y in 0..s.height {
        let blank = s.edges == Edges::Zero && y >= s.src_height;
        for (c, (&(source_plane, offset), lut)) in taps.iter().zip(luts).enumerate() {
            let src = row(source_plane, y)[offset..].iter().step_by(s.step).take(if blank { 0 } else { copied });
            let filled = if blank { 0 } else { copied };
            match s.layout {
                Layout::Nchw => {
                    let dst = &mut out[c * plane + y * w..c * plane + (y + 1) * w];
                    dst.iter_mut().zip(src).for_each(|(d, v)| *d = lut[*v as usize]);
                    let pad = if s.edges == Edges::Zero || filled == 0 { T::default() } else { dst[filled - 1] };
                    dst[filled..].fill(pad);
                }
                Layout::Nhwc => {
                    let dst = &mut out[y * w * channels..(y + 1) * w * channels];
                    dst[c..].iter_mut().step_by(channels).zip(src).for_each(|(d, v)| *d = lut[*v as usize]);
                    if filled < w {
                        let pad = if s.edges == Edges::Zero || filled == 0 { T::default() } else { dst[(filled - 1) * channels + c] };
                        dst[filled * channels + c..].iter_mut().step_by(channels).for_each(|d| *d = pad);
                    }
                }
            }
        }
    }
}
