//! Cosine similarity between a few unit vectors (the taught object's mean embedding, its part
//! prototypes) and every cell of an embedding, cosine k-means for the part prototypes, and peak
//! search with suppression. Embeddings are channel-major (`channels x cells`), as encoders give them.

/// Unit length (a zero vector stays zero).
pub fn unit(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Each cell's feature length.
pub fn cell_norms(data: &[f32], channels: usize, cells: usize) -> Vec<f32> {
    let mut sq = vec![0f32; cells];
    for plane in data.chunks_exact(cells).take(channels) {
        sq.iter_mut().zip(plane).for_each(|(s, v)| *s += v * v);
    }
    sq.iter().map(|s| s.sqrt().max(1e-6)).collect()
}

/// The cosine similarity of each of `vectors` (unit, `channels` long) with every cell: one map per
/// vector. One pass over the embedding, planes outermost (contiguous reads).
pub fn similarity_maps(data: &[f32], channels: usize, cells: usize, norms: &[f32], vectors: &[&[f32]]) -> Vec<Vec<f32>> {
    let mut maps = vec![vec![0f32; cells]; vectors.len()];
    for (c, plane) in data.chunks_exact(cells).take(channels).enumerate() {
        for (map, v) in maps.iter_mut().zip(vectors) {
            let w = v[c];
            map.iter_mut().zip(plane).for_each(|(m, x)| *m += w * x);
        }
    }
    for map in &mut maps {
        map.iter_mut().zip(norms).for_each(|(m, n)| *m /= n);
    }
    maps
}

/// The mean of the raw features over `cells` (indices), as one vector.
pub fn mean_feature(data: &[f32], channels: usize, total: usize, cells: &[usize]) -> Vec<f32> {
    let mut v = vec![0f32; channels];
    if cells.is_empty() {
        return v;
    }
    for (c, plane) in data.chunks_exact(total).take(channels).enumerate() {
        v[c] = cells.iter().map(|&i| plane[i]).sum::<f32>() / cells.len() as f32;
    }
    v
}

/// The unit feature of each of `cells`, row per cell.
pub fn unit_rows(data: &[f32], channels: usize, total: usize, norms: &[f32], cells: &[usize]) -> Vec<Vec<f32>> {
    cells.iter().map(|&i| (0..channels).map(|c| data[c * total + i] / norms[i]).collect()).collect()
}

/// Cosine k-means of unit `rows` into at most `k` unit centres, each with the share of rows it took.
/// Deterministic: the first centre is the row closest to the mean, each next one the row farthest
/// from the centres so far; then 20 rounds of assignment and means.
pub fn kmeans(rows: &[Vec<f32>], k: usize) -> Vec<(Vec<f32>, f32)> {
    let n = rows.len();
    if n == 0 || k == 0 {
        return Vec::new();
    }
    let d = rows[0].len();
    let mut mean = vec![0f32; d];
    rows.iter().for_each(|r| mean.iter_mut().zip(r).for_each(|(m, x)| *m += x));
    let first = (0..n).max_by(|a, b| dot(&rows[*a], &mean).total_cmp(&dot(&rows[*b], &mean))).unwrap_or(0);
    let mut centres = vec![rows[first].clone()];
    let mut best: Vec<f32> = rows.iter().map(|r| dot(r, &centres[0])).collect();
    while centres.len() < k.min(n) {
        let far = (0..n).min_by(|a, b| best[*a].total_cmp(&best[*b])).unwrap_or(0);
        centres.push(rows[far].clone());
        let c = centres.last().expect("just pushed");
        best.iter_mut().zip(rows).for_each(|(b, r)| *b = b.max(dot(r, c)));
    }
    let assign = |centres: &[Vec<f32>]| -> Vec<usize> {
        rows.iter().map(|r| (0..centres.len()).max_by(|a, b| dot(r, &centres[*a]).total_cmp(&dot(r, &centres[*b]))).unwrap_or(0)).collect()
    };
    for _ in 0..20 {
        let a = assign(&centres);
        for (j, centre) in centres.iter_mut().enumerate() {
            let mut sum = vec![0f32; d];
            let mut any = false;
            for (r, _) in rows.iter().zip(&a).filter(|(_, aj)| **aj == j) {
                sum.iter_mut().zip(r).for_each(|(s, x)| *s += x);
                any = true;
            }
            if any {
                unit(&mut sum);
                *centre = sum;
            }
        }
    }
    let a = assign(&centres);
    centres.into_iter().enumerate().map(|(j, c)| (c, a.iter().filter(|x| **x == j).count() as f32 / n as f32)).collect()
}

/// Values this close (relative) to a peak's tie with it.
const TIE: f32 = 1e-4;

/// The cells tied with cell `p` (4-connected to it, within [`TIE`] of its value) and, of them, the
/// one nearest their centroid: a click at the middle of a plateau (a flat-coloured object) rather
/// than at its first cell.
pub fn plateau(map: &[f32], cols: usize, valid: impl Fn(usize) -> bool, p: usize) -> (usize, Vec<usize>) {
    let v = map[p];
    // Both ways: a cell below its higher neighbour must not climb into that neighbour's peak.
    let tied = |i: usize| valid(i) && (map[i] - v).abs() <= TIE * v.abs().max(1.0);
    let (mut members, mut stack, mut seen) = (Vec::new(), vec![p], std::collections::HashSet::from([p]));
    while let Some(i) = stack.pop() {
        members.push(i);
        let (r, c) = (i / cols, i % cols);
        let near =
            [(r > 0).then(|| i - cols), (i + cols < map.len()).then(|| i + cols), (c > 0).then(|| i - 1), (c + 1 < cols).then(|| i + 1)];
        for n in near.into_iter().flatten() {
            if tied(n) && seen.insert(n) {
                stack.push(n);
            }
        }
    }
    let n = members.len() as f32;
    let (cr, cc) = members.iter().fold((0f32, 0f32), |(a, b), i| (a + (i / cols) as f32 / n, b + (i % cols) as f32 / n));
    let d = |i: &usize| ((i / cols) as f32 - cr).powi(2) + ((i % cols) as f32 - cc).powi(2);
    let centre = members.iter().copied().min_by(|a, b| d(a).total_cmp(&d(b)).then(a.cmp(b))).unwrap_or(p);
    (centre, members)
}

/// Local maxima of `map` over the cells `valid` allows, best first: a cell is kept when its value
/// is at least `floor` and no kept cell lies within `radius` cells (segment-everything's
/// suppression, on the grid), as the middle of its plateau (see [`plateau`]); at most `limit`.
pub fn peaks(map: &[f32], cols: usize, valid: impl Fn(usize) -> bool, radius: f32, floor: f32, limit: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..map.len()).filter(|i| valid(*i) && map[*i] >= floor).collect();
    order.sort_by(|a, b| map[*b].total_cmp(&map[*a]).then(a.cmp(b)));
    let mut kept: Vec<usize> = Vec::new();
    let mut taken = std::collections::HashSet::new();
    let r2 = radius * radius;
    for i in order {
        if kept.len() >= limit {
            break;
        }
        let (ri, ci) = ((i / cols) as f32, (i % cols) as f32);
        let near = taken.contains(&i)
            || kept.iter().any(|k| {
                let (rk, ck) = ((k / cols) as f32, (k % cols) as f32);
                (ri - rk).powi(2) + (ci - ck).powi(2) <= r2
            });
        if !near {
            let (centre, members) = plateau(map, cols, &valid, i);
            taken.extend(members);
            kept.push(centre);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_are_cosines_per_cell() {
        // 2 channels x 3 cells: cell 0 = (1, 0), cell 1 = (0, 2), cell 2 = (3, 3)
        let data = [1.0, 0.0, 3.0, 0.0, 2.0, 3.0];
        let norms = cell_norms(&data, 2, 3);
        let maps = similarity_maps(&data, 2, 3, &norms, &[&[1.0, 0.0]]);
        let want = [1.0, 0.0, std::f32::consts::FRAC_1_SQRT_2];
        for (got, want) in maps[0].iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{got} {want}");
        }
        assert_eq!(mean_feature(&data, 2, 3, &[0, 2]), vec![2.0, 1.5]);
    }

    #[test]
    fn kmeans_separates_two_directions() {
        let rows: Vec<Vec<f32>> = [[1.0, 0.0], [0.99, 0.14], [0.0, 1.0], [0.14, 0.99], [0.1, 0.995]]
            .iter()
            .map(|r| {
                let mut v = r.to_vec();
                unit(&mut v);
                v
            })
            .collect();
        let c = kmeans(&rows, 2);
        assert_eq!(c.len(), 2);
        let shares: Vec<f32> = c.iter().map(|x| x.1).collect();
        assert!(shares.contains(&0.4) && shares.contains(&0.6), "{shares:?}");
        // deterministic
        assert_eq!(kmeans(&rows, 2), c);
    }

    #[test]
    fn peaks_are_suppressed_within_the_radius() {
        // a 1 x 8 map: peaks at 1 and 6, a shoulder at 2
        let map = [0.1, 0.9, 0.8, 0.2, 0.3, 0.4, 0.7, 0.1];
        assert_eq!(peaks(&map, 8, |_| true, 1.5, 0.0, 10), vec![1, 6, 4]);
        assert_eq!(peaks(&map, 8, |_| true, 1.5, 0.5, 10), vec![1, 6]);
        assert_eq!(peaks(&map, 8, |i| i != 1, 1.5, 0.5, 10), vec![2, 6]);
        assert_eq!(peaks(&map, 8, |_| true, 1.5, 0.0, 1), vec![1]);
    }

    #[test]
    fn a_plateau_is_clicked_in_its_middle() {
        // 1 x 7: a plateau over cells 1..=5
        let map = [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.2];
        let (centre, members) = plateau(&map, 7, |_| true, 1);
        assert_eq!((centre, members.len()), (3, 5));
        // one peak for the whole plateau; the cells below the floor are no peaks
        assert_eq!(peaks(&map, 7, |_| true, 1.0, 0.5, 10), vec![3]);
    }
}
