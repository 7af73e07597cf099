//! Outlines and region figures of one large mask, timed (figures, not assertions). Run by
//! `benches/outlines_cv2.py`, which makes the mask, times OpenCV on it in the same run and prints
//! both; alone:
//!
//!   cargo run --release --example bench_outlines -- MASK.raw WIDTH HEIGHT [RUNS]
//!
//! MASK.raw: WIDTH x HEIGHT bytes, 0 = background. Prints one JSON line: the median and fastest of
//! RUNS (default 7) for the regions with pixel-exact outlines and every figure; with outlines
//! simplified at 1 pixel; without outlines (area, boxes, moments, holes only); and the COCO RLE of
//! the mask; plus the counts found.

use std::time::Instant;

use segrt::contours::{label_rles, regions, MaskKind, MaskView, RegionOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: bench_outlines MASK.raw WIDTH HEIGHT [RUNS]");
        std::process::exit(2);
    }
    let data = std::fs::read(&args[1]).unwrap_or_else(|e| panic!("{}: {e}", args[1]));
    let (w, h): (usize, usize) = (args[2].parse().expect("WIDTH"), args[3].parse().expect("HEIGHT"));
    let runs: usize = args.get(4).map_or(7, |r| r.parse().expect("RUNS"));
    let mask = MaskView::new(&data, w, h, 0).expect("mask size");
    let time = |f: &dyn Fn() -> usize| {
        let mut ms = Vec::new();
        let mut n = 0;
        for _ in 0..runs {
            let t = Instant::now();
            n = f();
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        ms.sort_by(f64::total_cmp);
        (ms[ms.len() / 2], ms[0], n)
    };
    let exact = RegionOptions::default();
    let (full_med, full_min, count) = time(&|| regions(&mask, &exact).expect("regions").len());
    let found = regions(&mask, &exact).expect("regions");
    let holes: usize = found.iter().map(|r| r.holes.len()).sum();
    let points: usize = found.iter().map(|r| r.outer.len() + r.holes.iter().map(Vec::len).sum::<usize>()).sum();
    let simple = RegionOptions { tolerance: 1.0, ..RegionOptions::default() };
    let (simple_med, simple_min, _) = time(&|| regions(&mask, &simple).expect("regions").len());
    let figures = RegionOptions { outlines: false, ..RegionOptions::default() };
    let (fig_med, fig_min, _) = time(&|| regions(&mask, &figures).expect("regions").len());
    let (rle_med, rle_min, _) = time(&|| label_rles(&mask, MaskKind::Binary).expect("rle").len());
    println!(
        "{{\"width\": {w}, \"height\": {h}, \"runs\": {runs}, \"regions\": {count}, \"holes\": {holes}, \"outline_points\": {points}, \
         \"regions_ms\": {full_med:.2}, \"regions_min_ms\": {full_min:.2}, \"simplified_ms\": {simple_med:.2}, \"simplified_min_ms\": {simple_min:.2}, \
         \"figures_only_ms\": {fig_med:.2}, \"figures_only_min_ms\": {fig_min:.2}, \"rle_ms\": {rle_med:.2}, \"rle_min_ms\": {rle_min:.2}}}"
    );
}
