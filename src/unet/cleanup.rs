//! Clean-up of binary masks, in the caller's buffer: closing, hole filling, small-region removal.

use crate::image::MaskMut;
use crate::options::Options;

/// Closing, then hole filling, then small-region removal, as the options ask. Returns whether the
/// mask was changed (its foreground must then be counted again).
pub fn clean_binary(mask: &mut MaskMut<'_>, options: &Options) -> bool {
    if options.close_kernel > 1 {
        close(mask, options.close_kernel);
    }
    if options.fill_holes {
        fill_holes(mask);
    }
    if options.min_area > 0 {
        remove_small_regions(mask, options.min_area);
    }
    options.close_kernel > 1 || options.fill_holes || options.min_area > 0
}

/// Sliding-window max (dilate) or min (erode) of width `k` along rows then columns, via run counts.
fn square_filter(mask: &mut MaskMut<'_>, k: usize, dilate: bool) {
    let (w, h) = (mask.width(), mask.height());
    let (before, after) = (k / 2, k - 1 - k / 2);
    // Outside the image counts as background for dilation and foreground for erosion,
    // so closing never eats into regions touching the border.
    let hit = |v: u8| (v != 0) == dilate;
    let line = |get: &dyn Fn(usize) -> u8, n: usize, prefix: &mut Vec<usize>, out: &mut Vec<u8>| {
        out.clear();
        // prefix[i] = number of hits in [0, i)
        prefix.clear();
        prefix.push(0usize);
        for i in 0..n {
            prefix.push(prefix[i] + hit(get(i)) as usize);
        }
        for i in 0..n {
            let lo = i.saturating_sub(before);
            let hi = (i + after + 1).min(n);
            let any = prefix[hi] - prefix[lo] > 0;
            out.push(if any == dilate { 255 } else { 0 });
        }
    };
    let (mut prefix, mut buf, mut copy) = (Vec::new(), Vec::new(), Vec::new());
    for y in 0..h {
        copy.clear();
        copy.extend_from_slice(mask.row(y));
        line(&|x| copy[x], w, &mut prefix, &mut buf);
        mask.row_mut(y).copy_from_slice(&buf);
    }
    for x in 0..w {
        copy.clear();
        copy.extend((0..h).map(|y| mask.row(y)[x]));
        line(&|y| copy[y], h, &mut prefix, &mut buf);
        for (y, v) in buf.iter().enumerate() {
            mask.row_mut(y)[x] = *v;
        }
    }
}

/// Morphological closing with a `k x k` square: fills gaps and dents narrower than `k`.
pub fn close(mask: &mut MaskMut<'_>, k: usize) {
    square_filter(mask, k, true);
    square_filter(mask, k, false);
}

/// Sets to 255 every background pixel that is not 4-connected to the image border.
pub fn fill_holes(mask: &mut MaskMut<'_>) {
    let (w, h) = (mask.width(), mask.height());
    let mut outside = vec![false; w * h];
    let mut stack: Vec<usize> = Vec::new();
    let seed = |i: usize, stack: &mut Vec<usize>, outside: &mut Vec<bool>, mask: &MaskMut<'_>| {
        if mask.at(i) == 0 && !outside[i] {
            outside[i] = true;
            stack.push(i);
        }
    };
    for x in 0..w {
        seed(x, &mut stack, &mut outside, mask);
        seed((h - 1) * w + x, &mut stack, &mut outside, mask);
    }
    for y in 0..h {
        seed(y * w, &mut stack, &mut outside, mask);
        seed(y * w + w - 1, &mut stack, &mut outside, mask);
    }
    while let Some(i) = stack.pop() {
        let (x, y) = (i % w, i / w);
        if x > 0 {
            seed(i - 1, &mut stack, &mut outside, mask);
        }
        if x + 1 < w {
            seed(i + 1, &mut stack, &mut outside, mask);
        }
        if y > 0 {
            seed(i - w, &mut stack, &mut outside, mask);
        }
        if y + 1 < h {
            seed(i + w, &mut stack, &mut outside, mask);
        }
    }
    for (i, o) in outside.iter().enumerate() {
        if !o && mask.at(i) == 0 {
            mask.set(i, 255);
        }
    }
}

/// Sets to 0 every 8-connected region of equal non-zero value with fewer than `min_area` pixels.
pub fn remove_small_regions(mask: &mut MaskMut<'_>, min_area: usize) {
    let (w, h) = (mask.width(), mask.height());
    let mut seen = vec![false; w * h];
    let mut region = Vec::new();
    let mut stack = Vec::new();
    for start in 0..w * h {
        if seen[start] || mask.at(start) == 0 {
            continue;
        }
        let label = mask.at(start);
        region.clear();
        seen[start] = true;
        stack.push(start);
        while let Some(i) = stack.pop() {
            region.push(i);
            let (x, y) = ((i % w) as isize, (i / w) as isize);
            for (dx, dy) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
                    continue;
                }
                let j = ny as usize * w + nx as usize;
                if !seen[j] && mask.at(j) == label {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if region.len() < min_area {
            region.iter().for_each(|i| mask.set(*i, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on the grid as a mask whose rows are padded (so stride handling is tested too),
    /// and returns the packed result.
    fn apply(rows: &[&str], f: impl Fn(&mut MaskMut<'_>)) -> Vec<u8> {
        let (packed, w, h) = grid(rows);
        let stride = w + 3;
        let mut buf = vec![9u8; stride * h];
        for y in 0..h {
            buf[y * stride..y * stride + w].copy_from_slice(&packed[y * w..(y + 1) * w]);
        }
        f(&mut MaskMut::new(&mut buf, w, h, stride).unwrap());
        assert!((0..h).all(|y| buf[y * stride + w..(y + 1) * stride] == [9, 9, 9]), "padding was written");
        (0..h).flat_map(|y| buf[y * stride..y * stride + w].to_vec()).collect()
    }

    fn grid(rows: &[&str]) -> (Vec<u8>, usize, usize) {
        let w = rows[0].len();
        (rows.concat().bytes().map(|b| if b == b'#' { 255 } else { 0 }).collect(), w, rows.len())
    }

    #[test]
    fn fill_holes_fills_only_enclosed_background() {
        let m = apply(&["#####.", "#...#.", "#####.", "......"], fill_holes);
        assert_eq!(m, grid(&["#####.", "#####.", "#####.", "......"]).0);
    }

    #[test]
    fn small_regions_go_large_stay() {
        let m = apply(&["#....", ".....", "..###", "..###"], |m| remove_small_regions(m, 2));
        assert_eq!(m, grid(&[".....", ".....", "..###", "..###"]).0);
    }

    #[test]
    fn closing_bridges_a_one_pixel_gap() {
        let m = apply(&["......", "......", "##.###", "##.###", "......", "......"], |m| close(m, 3));
        assert_eq!(m, grid(&["......", "......", "######", "######", "......", "......"]).0);
    }
}
