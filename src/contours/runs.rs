//! Connected components as row runs: every row cut into runs of one label, runs of neighbouring rows
//! joined by a union-find, components numbered in raster order of their first pixel. Work and memory
//! follow the number of runs, not of pixels, after one pass over the cells.

use super::mask::{Cell, MaskKind, MaskView};
use super::Connectivity;

/// Pixels `x0..x1` of row `y`, all of one label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub y: u32,
    pub x0: u32,
    pub x1: u32,
    pub label: u32,
}

impl Run {
    pub fn pixels(&self) -> u64 {
        (self.x1 - self.x0) as u64
    }
}

/// Do two runs of neighbouring rows touch? Ends are exclusive; 8-connectivity also joins runs that
/// meet at a corner.
#[inline]
pub fn touch(a0: u32, a1: u32, b0: u32, b1: u32, connectivity: Connectivity) -> bool {
    match connectivity {
        Connectivity::Eight => a0 <= b1 && b0 <= a1,
        Connectivity::Four => a0 < b1 && b0 < a1,
    }
}

/// The runs of a mask, row after row, and where each row's runs start in `runs`.
pub struct Runs {
    pub runs: Vec<Run>,
    /// `row_start[y]..row_start[y + 1]` are row y's runs.
    pub row_start: Vec<usize>,
}

/// Cuts every row into runs: of non-zero cells (binary), or of equal non-zero values (labels).
pub fn find_runs<C: Cell>(mask: &MaskView<C>, kind: MaskKind) -> Runs {
    let mut runs = Vec::new();
    let mut row_start = Vec::with_capacity(mask.height() + 1);
    for y in 0..mask.height() {
        row_start.push(runs.len());
        row_runs(mask.row(y), y as u32, kind, &mut runs);
    }
    row_start.push(runs.len());
    Runs { runs, row_start }
}

fn row_runs<C: Cell>(row: &[C], y: u32, kind: MaskKind, out: &mut Vec<Run>) {
    let n = row.len();
    let mut x = C::skip_zeros(row, 0);
    while x < n {
        let start = x;
        let value = row[x];
        match kind {
            MaskKind::Binary => x = C::skip_nonzeros(row, x),
            MaskKind::Labels => {
                while x < n && row[x] == value {
                    x += 1;
                }
            }
        }
        let label = if kind == MaskKind::Binary { 1 } else { value.value() };
        out.push(Run { y, x0: start as u32, x1: x as u32, label });
        if x < n && row[x] == C::default() {
            x = C::skip_zeros(row, x);
        }
    }
}

/// A union-find over indices with path halving; the smaller index becomes the root, so a
/// component's root is its first run in raster order.
pub struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    pub fn new(n: usize) -> Self {
        UnionFind { parent: (0..n as u32).collect() }
    }
    pub fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let grand = self.parent[self.parent[i as usize] as usize];
            self.parent[i as usize] = grand;
            i = grand;
        }
        i
    }
    pub fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[hi as usize] = lo;
        }
    }
}

/// Calls `join(i, j)` for every run `i` of the previous row and `j` of the current row that touch
/// (labels not compared). Both rows are sorted by `x0` and their runs do not overlap.
pub fn for_touching_pairs(
    prev: std::ops::Range<usize>,
    cur: std::ops::Range<usize>,
    span: impl Fn(usize) -> (u32, u32),
    connectivity: Connectivity,
    mut join: impl FnMut(usize, usize),
) {
    let mut first = prev.start;
    for j in cur {
        let (c0, c1) = span(j);
        // Runs of the previous row ending before this one (corner included) touch no later run either.
        while first < prev.end && !reaches(span(first).1, c0, connectivity) {
            first += 1;
        }
        let mut i = first;
        while i < prev.end {
            let (p0, p1) = span(i);
            if !touch(p0, p1, c0, c1, connectivity) {
                break;
            }
            join(i, j);
            i += 1;
        }
    }
}

/// Does a run ending at `end` (exclusive) reach a run of the next row starting at `start`?
#[inline]
fn reaches(end: u32, start: u32, connectivity: Connectivity) -> bool {
    match connectivity {
        Connectivity::Eight => end >= start,
        Connectivity::Four => end > start,
    }
}

/// The components: `members[order[k]..]`-style grouping of run indices, each component's runs in
/// raster order, components in raster order of their first pixel.
pub struct Components {
    /// Run indices grouped by component.
    pub members: Vec<u32>,
    /// `start[c]..start[c + 1]` index `members` for component c.
    pub start: Vec<usize>,
}

impl Components {
    pub fn count(&self) -> usize {
        self.start.len() - 1
    }
    pub fn runs<'r>(&'r self, c: usize, all: &'r [Run]) -> impl Iterator<Item = &'r Run> + 'r {
        self.members[self.start[c]..self.start[c + 1]].iter().map(move |i| &all[*i as usize])
    }
}

/// Joins touching runs of equal label into components.
pub fn components(runs: &Runs, connectivity: Connectivity) -> Components {
    let all = &runs.runs;
    let mut uf = UnionFind::new(all.len());
    for y in 1..runs.row_start.len().saturating_sub(1) {
        let prev = runs.row_start[y - 1]..runs.row_start[y];
        let cur = runs.row_start[y]..runs.row_start[y + 1];
        for_touching_pairs(
            prev,
            cur,
            |i| (all[i].x0, all[i].x1),
            connectivity,
            |i, j| {
                if all[i].label == all[j].label {
                    uf.union(i as u32, j as u32);
                }
            },
        );
    }
    // Number components by their first run (their root, the smallest index), then group the runs
    // with a counting sort, which keeps each component's runs in raster order.
    let mut id = vec![u32::MAX; all.len()];
    let mut count = 0u32;
    let mut comp_of = Vec::with_capacity(all.len());
    for i in 0..all.len() as u32 {
        let root = uf.find(i);
        if id[root as usize] == u32::MAX {
            id[root as usize] = count;
            count += 1;
        }
        comp_of.push(id[root as usize]);
    }
    let mut start = vec![0usize; count as usize + 1];
    for c in &comp_of {
        start[*c as usize + 1] += 1;
    }
    for c in 0..count as usize {
        start[c + 1] += start[c];
    }
    let mut fill = start.clone();
    let mut members = vec![0u32; all.len()];
    for (i, c) in comp_of.iter().enumerate() {
        members[fill[*c as usize]] = i as u32;
        fill[*c as usize] += 1;
    }
    Components { members, start }
}
