//! A component's holes: the pieces of the plane the component encloses. Found from the gaps between
//! the component's own runs (no pixel scan): gaps of neighbouring rows that touch are joined with the
//! connectivity dual to the component's (a hole of an 8-connected part is 4-connected and the other
//! way round), and a piece that reaches the outside (the rows above and below, left of a row's first
//! run, right of its last) is no hole. Other components inside a hole belong to the hole's area, as a
//! filled outline would draw them.

use super::runs::{touch, Run, UnionFind};
use super::Connectivity;

/// One hole: its gap runs (raster order) and area.
pub struct Hole {
    pub gaps: Vec<Run>,
    pub area: u64,
}

/// The holes of one component, given its runs in raster order, in raster order of their first pixel.
pub fn holes(runs: &[Run], connectivity: Connectivity) -> Vec<Hole> {
    let dual = match connectivity {
        Connectivity::Eight => Connectivity::Four,
        Connectivity::Four => Connectivity::Eight,
    };
    // Rows: the component's runs grouped by row (a connected component has runs on every row it spans).
    let mut rows: Vec<&[Run]> = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let mut j = i + 1;
        while j < runs.len() && runs[j].y == runs[i].y {
            j += 1;
        }
        rows.push(&runs[i..j]);
        i = j;
    }
    // The gaps of each row, between consecutive runs; the first and last rows' gaps reach the outside.
    let mut gaps: Vec<Run> = Vec::new();
    let mut gap_row: Vec<usize> = Vec::with_capacity(rows.len() + 1);
    for row in &rows {
        gap_row.push(gaps.len());
        for pair in row.windows(2) {
            gaps.push(Run { y: pair[0].y, x0: pair[0].x1, x1: pair[1].x0, label: 0 });
        }
    }
    gap_row.push(gaps.len());
    if gaps.is_empty() {
        return Vec::new();
    }
    // Node gaps.len() is the outside.
    let outside = gaps.len() as u32;
    let mut uf = UnionFind::new(gaps.len() + 1);
    let last = rows.len() - 1;
    for g in gap_row[0]..gap_row[1] {
        uf.union(g as u32, outside);
    }
    for g in gap_row[last]..gap_row[last + 1] {
        uf.union(g as u32, outside);
    }
    for r in 1..rows.len() {
        let (prev, cur) = (gap_row[r - 1]..gap_row[r], gap_row[r]..gap_row[r + 1]);
        // The outside of each row: left of its first run and right of its last.
        let outer = |row: &[Run]| (row[0].x0, row[row.len() - 1].x1);
        let (prev_lo, prev_hi) = outer(rows[r - 1]);
        let (cur_lo, cur_hi) = outer(rows[r]);
        for g in cur.clone() {
            if touches_outside(&gaps[g], prev_lo, prev_hi, dual) {
                uf.union(g as u32, outside);
            }
        }
        for g in prev.clone() {
            if touches_outside(&gaps[g], cur_lo, cur_hi, dual) {
                uf.union(g as u32, outside);
            }
        }
        super::runs::for_touching_pairs(prev, cur, |k| (gaps[k].x0, gaps[k].x1), dual, |a, b| uf.union(a as u32, b as u32));
    }
    // Each hole in raster order of its first gap (the smallest index is the root).
    let root_outside = uf.find(outside);
    let mut index = vec![u32::MAX; gaps.len()];
    let mut out: Vec<Hole> = Vec::new();
    for (g, gap) in gaps.iter().enumerate() {
        let root = uf.find(g as u32);
        if root == root_outside {
            continue;
        }
        if index[root as usize] == u32::MAX {
            index[root as usize] = out.len() as u32;
            out.push(Hole { gaps: Vec::new(), area: 0 });
        }
        let hole = &mut out[index[root as usize] as usize];
        hole.area += gap.pixels();
        hole.gaps.push(*gap);
    }
    out
}

/// Does a gap touch the outside of the neighbouring row, which is everything left of `lo` and from
/// `hi` on (that row's first run starts at `lo`, its last ends at `hi`)?
fn touches_outside(gap: &Run, lo: u32, hi: u32, connectivity: Connectivity) -> bool {
    // The outside spans as runs reaching one pixel beyond the gap on either side.
    let left = lo > 0 && touch(0, lo, gap.x0, gap.x1, connectivity);
    let right = touch(hi, u32::MAX, gap.x0, gap.x1, connectivity);
    left || right
}
