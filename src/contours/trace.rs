//! Border following (Suzuki and Abe, 1985, the method of OpenCV's `findContours`): the outline of a
//! component as the closed chain of its border pixels, in the same order and from the same first
//! pixel as `findContours` gives them, so that its polygons can be compared point for point.

use super::mask::{Cell, MaskView};
use super::Point;

/// Neighbour directions in chain-code order: 0 is +x, and each step turns 45 degrees
/// counter-clockwise as seen on screen (y pointing down).
const DX: [i32; 8] = [1, 1, 0, -1, -1, -1, 0, 1];
const DY: [i32; 8] = [0, -1, -1, -1, 0, 1, 1, 1];

/// The direction leading to the left neighbour: an outer border starts at a component's first pixel,
/// whose left neighbour is outside it.
pub const FROM_LEFT: usize = 4;
/// The direction leading to the right neighbour: a hole's border starts at the component pixel left
/// of the hole's first pixel.
pub const FROM_RIGHT: usize = 0;

/// Follows the border through `start`, whose neighbour in direction `outside_dir` is not in the
/// component, appending its pixels to `out`. A pixel belongs to the component when `matches(cell)`
/// (it is asked only about pixels next to the border). With `eight` the chain moves to any of the 8
/// neighbours, else only to the 4 sharing a side.
pub fn follow<C: Cell>(
    mask: &MaskView<C>,
    matches: impl Fn(C) -> bool,
    start: Point,
    outside_dir: usize,
    eight: bool,
    out: &mut Vec<Point>,
) {
    let (w, h, stride) = (mask.width() as i64, mask.height() as i64, mask.stride() as i64);
    let cells = mask.cells();
    let offset: [i64; 8] = std::array::from_fn(|d| DY[d] as i64 * stride + DX[d] as i64);
    // Away from the image's edge every neighbour is a cell: index it directly.
    let inside = |p: Point, d: usize| -> bool {
        let (x, y) = (p.x as i64, p.y as i64);
        if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
            matches(cells[(y * stride + x + offset[d]) as usize])
        } else {
            let (nx, ny) = (x + DX[d] as i64, y + DY[d] as i64);
            (nx as u64) < w as u64 && (ny as u64) < h as u64 && matches(cells[(ny * stride + nx) as usize])
        }
    };
    let step = if eight { 1 } else { 2 };
    let turns = 8 / step;
    let at = |p: Point, d: usize| Point { x: p.x + DX[d], y: p.y + DY[d] };
    // The last pixel of the chain: the first component pixel met turning clockwise from outside.
    let mut last_dir = None;
    for k in 0..turns {
        let d = (outside_dir + 8 - k * step) % 8;
        if inside(start, d) {
            last_dir = Some(d);
            break;
        }
    }
    let Some(last_dir) = last_dir else {
        // A single pixel: its outline is the pixel.
        out.push(start);
        return;
    };
    let last = at(start, last_dir);
    let (mut cur, mut back) = (start, last_dir);
    loop {
        out.push(cur);
        // The next pixel: the first component pixel turning counter-clockwise from where the
        // chain came from (that pixel itself at the latest).
        let mut next_dir = back;
        for k in 1..=turns {
            let d = (back + k * step) & 7;
            if inside(cur, d) {
                next_dir = d;
                break;
            }
        }
        let next = at(cur, next_dir);
        if next == start && cur == last {
            return;
        }
        back = (next_dir + 4) & 7;
        cur = next;
    }
}
