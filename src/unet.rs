//! The UNet pipeline: image -> tensor -> ONNX Runtime -> mask at the image's size.
//!
//! A `UnetSegmenter` keeps the model bytes and options; each calling thread lazily gets its own
//! ONNX Runtime session (`Session::run` needs `&mut self`), so any number of threads can share
//! one segmenter without locks on the hot path.

use std::path::Path;
use std::time::Instant;

use half::f16;
use half::slice::HalfFloatSliceExt;
use ort::session::Session;
use ort::value::TensorRef;
use serde::Serialize;

use crate::engine::{read_model_file, ProviderReport, ThreadSessions};
use crate::error::{Error, Result, SegStatus};
use crate::image::{check_size, ImageView};
use crate::model::{inputs_of, outputs_of, Element, TensorInfo, UnetSpec};
use crate::options::Options;
use crate::options::{SegResizeFilter, SegTileMode};
use crate::postprocess::{segment, ScoreMaps, Segmentation};
use crate::preprocess::{model_size, with_thread_preprocessor, Fit, TensorData};
use crate::resize::resize_f32;
use crate::runtime::RuntimeInfo;

/// What one run measured: milliseconds per stage and the size the model ran at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RunStats {
    pub preprocess_ms: f64,
    pub inference_ms: f64,
    pub postprocess_ms: f64,
    pub model_width: usize,
    pub model_height: usize,
    /// Tiles the image was cut into; 0 when the whole image was resized.
    pub tiles: usize,
}

/// A UNet segmentation model ready to run from any thread.
pub struct UnetSegmenter {
    options: Options,
    spec: UnetSpec,
    inputs: Vec<TensorInfo>,
    outputs: Vec<TensorInfo>,
    sessions: ThreadSessions,
}

/// What `seg_session_info` and `segrt info` report.
#[derive(Debug, Clone, Serialize)]
pub struct SessionInfo<'a> {
    pub kind: &'static str,
    pub inputs: &'a [TensorInfo],
    pub outputs: &'a [TensorInfo],
    pub interpretation: &'a UnetSpec,
    pub provider: &'a ProviderReport,
    pub intra_threads: String,
    /// Threads holding a session of this model now (a thread's session is released when it exits).
    pub threads_with_session: usize,
    /// Sessions created so far, including released ones.
    pub sessions_created: usize,
    /// Resident memory the first session added, including ONNX Runtime's one-time set-up.
    pub bytes_first_session: Option<u64>,
    /// Resident memory an extra calling thread's session added (null until a second thread ran).
    pub bytes_per_extra_thread: Option<u64>,
    pub model_bytes: usize,
    pub onnxruntime: RuntimeInfo,
}

impl UnetSegmenter {
    pub fn from_file(path: &Path, options: Options) -> Result<Self> {
        Self::from_memory(read_model_file(path)?, options)
    }

    /// Loads the model, checks it is a UNet segrt can run, and creates the calling thread's session.
    pub fn from_memory(model: Vec<u8>, options: Options) -> Result<Self> {
        options.validate()?;
        let sessions = ThreadSessions::new(model, &options)?;
        let (spec, inputs, outputs) = sessions.with(|s| Ok((UnetSpec::from_session(s)?, inputs_of(s), outputs_of(s))))?;
        Ok(UnetSegmenter { options, spec, inputs, outputs, sessions })
    }

    pub fn spec(&self) -> &UnetSpec {
        &self.spec
    }
    pub fn options(&self) -> &Options {
        &self.options
    }
    pub fn provider(&self) -> &ProviderReport {
        &self.sessions.provider
    }

    pub fn info(&self) -> SessionInfo<'_> {
        SessionInfo {
            kind: "unet",
            inputs: &self.inputs,
            outputs: &self.outputs,
            interpretation: &self.spec,
            provider: &self.sessions.provider,
            intra_threads: match self.options.intra_threads {
                0 => "ONNX Runtime default (one per physical core)".into(),
                n => n.to_string(),
            },
            threads_with_session: self.sessions.threads(),
            sessions_created: self.sessions.sessions_created(),
            bytes_first_session: self.sessions.session_bytes,
            bytes_per_extra_thread: self.sessions.extra_session_bytes(),
            model_bytes: self.sessions.model_len(),
            onnxruntime: RuntimeInfo::current(),
        }
    }

    /// Segments one image. The mask has the image's size.
    pub fn segment(&self, image: &ImageView<'_>, want_probability: bool) -> Result<(Segmentation, RunStats)> {
        check_size(image.width() as i64, image.height() as i64, self.options.max_pixels)?;
        let tile = self.tile_size();
        let tiled = match self.options.tile_mode {
            SegTileMode::SEG_TILE_OFF => false,
            SegTileMode::SEG_TILE_ON => true,
            SegTileMode::SEG_TILE_AUTO => image.width() > 2 * tile.0 || image.height() > 2 * tile.1,
        };
        if tiled {
            self.segment_tiled(image, tile, want_probability)
        } else {
            self.segment_whole(image, want_probability)
        }
    }

    /// The tile size: the model's fixed axes, else `tile_size`, else `input_size`, else 512x512.
    pub fn tile_size(&self) -> (usize, usize) {
        let (w, h) = self.options.tile_size.or(self.options.input_size).unwrap_or((512, 512));
        (self.spec.width.unwrap_or(w), self.spec.height.unwrap_or(h))
    }

    /// The whole image resized to the model's input: one run.
    fn segment_whole(&self, image: &ImageView<'_>, want_probability: bool) -> Result<(Segmentation, RunStats)> {
        let t0 = Instant::now();
        let size = model_size(&self.spec, (image.width(), image.height()), &self.options);
        check_size(size.0 as i64, size.1 as i64, self.options.max_pixels).map_err(|e| e.context("model input size"))?;
        let mut t1 = t0;
        let (shape, scores) = with_thread_preprocessor(|pre| {
            let tensor = pre.prepare(image, &self.spec, size, &self.options)?;
            t1 = Instant::now();
            self.run(self.spec.input_shape(size.0, size.1), tensor)
        })?;
        let t2 = Instant::now();
        let maps = ScoreMaps::from_output(&shape, &scores, self.spec.input_layout, size)?;
        let seg = segment(maps, (image.width(), image.height()), &self.options, want_probability)?;
        let t3 = Instant::now();
        let stats = RunStats {
            preprocess_ms: ms(t0, t1),
            inference_ms: ms(t1, t2),
            postprocess_ms: ms(t2, t3),
            model_width: size.0,
            model_height: size.1,
            tiles: 0,
        };
        Ok((seg, stats))
    }

    /// The image cut into model-sized tiles at full resolution (nothing resized), run in batches
    /// when the model's batch axis is dynamic; overlapping scores are blended with weights that
    /// fall off towards each tile's inner edges, so seams do not show.
    fn segment_tiled(&self, image: &ImageView<'_>, (tw, th): (usize, usize), want_probability: bool) -> Result<(Segmentation, RunStats)> {
        let (w, h) = (image.width(), image.height());
        check_size(tw as i64, th as i64, self.options.max_pixels).map_err(|e| e.context("tile size"))?;
        let overlap = self.options.tile_overlap;
        if 2 * overlap >= tw.min(th) {
            return Err(Error::invalid(format!("tile_overlap {overlap} must be less than half the tile ({tw}x{th})")));
        }
        let classes = self.spec.classes.unwrap_or(1);
        let score_bytes = (classes as u64) * (w as u64) * (h as u64) * 4;
        if score_bytes > MAX_TILED_SCORE_BYTES {
            return Err(Error::new(
                SegStatus::SEG_IMAGE_TOO_LARGE,
                format!(
                    "tiling a {w}x{h} image for a {classes}-class model needs {} MiB of score maps, more than {} MiB",
                    score_bytes >> 20,
                    MAX_TILED_SCORE_BYTES >> 20
                ),
            ));
        }
        let grid = TileGrid::new((w, h), (tw, th), overlap);
        let count = grid.xs.len() * grid.ys.len();
        if count > MAX_TILES {
            return Err(Error::invalid(format!(
                "{tw}x{th} tiles would cut the {w}x{h} image into {count} tiles (at most {MAX_TILES}): use larger tiles or a smaller overlap"
            )));
        }
        let batch = if self.spec.batch_dynamic { self.options.tile_batch } else { 1 };

        let mut blend = Blend::new(classes, (w, h), &grid);
        let (mut pre_ms, mut run_ms, mut post_ms) = (0.0, 0.0, 0.0);
        let tiles = grid.tiles();
        for chunk in tiles.chunks(batch) {
            let t0 = Instant::now();
            let mut t1 = t0;
            let (shape, scores) = with_thread_preprocessor(|pre| {
                pre.start_batch(&self.spec, (tw, th), chunk.len());
                for (i, tile) in chunk.iter().enumerate() {
                    let crop = image.crop(tile.x, tile.y, tile.w, tile.h)?;
                    pre.fill(i, &crop, &self.spec, (tw, th), &self.options, Fit::Pad)?;
                }
                t1 = Instant::now();
                self.run(self.spec.batch_input_shape(chunk.len(), tw, th), pre.tensor())
            })?;
            let t2 = Instant::now();
            let item = scores.len() / chunk.len().max(1);
            let one = [&[1i64][..], &shape[1..]].concat(); // each tile's output shape
            for (i, tile) in chunk.iter().enumerate() {
                let maps = ScoreMaps::from_output(&one, &scores[i * item..(i + 1) * item], self.spec.input_layout, (tw, th))?;
                blend.add(tile, maps)?;
            }
            pre_ms += ms(t0, t1);
            run_ms += ms(t1, t2);
            post_ms += ms(t2, Instant::now());
        }
        let t0 = Instant::now();
        let seg = segment(blend.finish(), (w, h), &self.options, want_probability)?;
        post_ms += ms(t0, Instant::now());
        let stats = RunStats {
            preprocess_ms: pre_ms,
            inference_ms: run_ms,
            postprocess_ms: post_ms,
            model_width: tw,
            model_height: th,
            tiles: tiles.len(),
        };
        Ok((seg, stats))
    }

    /// One ONNX Runtime run on this thread's session.
    fn run(&self, shape: [i64; 4], tensor: &TensorData) -> Result<(Vec<i64>, Vec<f32>)> {
        self.sessions.with(|session| {
            // Test builds only: a panic deep inside a run, while the thread's session is locked.
            #[cfg(feature = "fault-injection")]
            if std::env::var_os("SEGRT_INJECT_PANIC").is_some() {
                panic!("injected panic (fault-injection build, SEGRT_INJECT_PANIC is set)");
            }
            run_once(session, &self.spec, shape, tensor)
        })
    }
}

/// More tiles than this means tiles far too small for the image: refused rather than run for hours.
const MAX_TILES: usize = 100_000;

/// Score maps of a multi-class model on a huge image are refused above this (tiled mode keeps them all).
const MAX_TILED_SCORE_BYTES: u64 = 4 << 30;

fn ms(a: Instant, b: Instant) -> f64 {
    (b - a).as_secs_f64() * 1e3
}

/// One tile: the image region it covers (smaller than the tile only where the image is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tile {
    pub x: usize,
    pub y: usize,
    pub w: usize,
    pub h: usize,
}

/// Tile positions along both axes: the first at 0, the last flush with the far edge, spread evenly
/// so neighbours share at least `overlap` pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct TileGrid {
    pub xs: Vec<usize>,
    pub ys: Vec<usize>,
    pub tile: (usize, usize),
    pub image: (usize, usize),
    pub overlap: usize,
}

impl TileGrid {
    pub fn new(image: (usize, usize), tile: (usize, usize), overlap: usize) -> Self {
        fn starts(len: usize, tile: usize, overlap: usize) -> Vec<usize> {
            if len <= tile {
                return vec![0];
            }
            let step = tile - overlap;
            let n = (len - overlap).div_ceil(step);
            (0..n).map(|i| (i * (len - tile) + (n - 1) / 2) / (n - 1)).collect()
        }
        TileGrid { xs: starts(image.0, tile.0, overlap), ys: starts(image.1, tile.1, overlap), tile, image, overlap }
    }

    pub fn tiles(&self) -> Vec<Tile> {
        let (w, h) = (self.tile.0.min(self.image.0), self.tile.1.min(self.image.1));
        self.ys.iter().flat_map(|&y| self.xs.iter().map(move |&x| Tile { x, y, w, h })).collect()
    }

    /// Blend weights along one axis of a tile starting at `start` covering `len` pixels: 1 inside,
    /// falling linearly towards an edge that another tile overlaps; never 0.
    fn weights(&self, start: usize, len: usize, image_len: usize) -> Vec<f32> {
        let ramp = (self.overlap + 1) as f32;
        (0..len)
            .map(|i| {
                let from_start = if start == 0 { 1.0 } else { (i + 1) as f32 / ramp };
                let from_end = if start + len == image_len { 1.0 } else { (len - i) as f32 / ramp };
                from_start.min(from_end).min(1.0)
            })
            .collect()
    }
}

/// Weighted sums of tile scores over the whole image. The weights are separable and every tile
/// row meets every tile column, so the sum of weights is a product of two 1-D sums.
struct Blend<'a> {
    grid: &'a TileGrid,
    sum: ScoreMaps,
    weight_x: Vec<f32>,
    weight_y: Vec<f32>,
}

impl<'a> Blend<'a> {
    fn new(classes: usize, (w, h): (usize, usize), grid: &'a TileGrid) -> Self {
        let (mut weight_x, mut weight_y) = (vec![0f32; w], vec![0f32; h]);
        let (tw, th) = (grid.tile.0.min(w), grid.tile.1.min(h));
        for &x in &grid.xs {
            weight_x[x..x + tw].iter_mut().zip(grid.weights(x, tw, w)).for_each(|(s, v)| *s += v);
        }
        for &y in &grid.ys {
            weight_y[y..y + th].iter_mut().zip(grid.weights(y, th, h)).for_each(|(s, v)| *s += v);
        }
        Blend { grid, sum: ScoreMaps { classes, width: w, height: h, data: vec![0f32; classes * w * h] }, weight_x, weight_y }
    }

    /// Adds one tile's scores (at the tile's size; padding beyond the image is dropped).
    fn add(&mut self, tile: &Tile, maps: ScoreMaps) -> Result<()> {
        let (tw, th) = self.grid.tile;
        if maps.classes != self.sum.classes {
            return Err(Error::unsupported_model(format!("a tile gave {} classes, the model declares {}", maps.classes, self.sum.classes)));
        }
        // An output smaller than the input (a stride-2 head, say) is brought to the tile's size.
        let maps = if (maps.width, maps.height) == (tw, th) {
            maps
        } else {
            let plane = maps.width * maps.height;
            let data = (0..maps.classes)
                .map(|c| {
                    resize_f32(
                        &maps.data[c * plane..(c + 1) * plane],
                        (maps.width, maps.height),
                        (tw, th),
                        SegResizeFilter::SEG_RESIZE_BILINEAR,
                    )
                })
                .collect::<Result<Vec<_>>>()?
                .concat();
            ScoreMaps { classes: maps.classes, width: tw, height: th, data }
        };
        let (wx, wy) = (self.grid.weights(tile.x, tile.w, self.sum.width), self.grid.weights(tile.y, tile.h, self.sum.height));
        let (w, plane) = (self.sum.width, self.sum.width * self.sum.height);
        for c in 0..maps.classes {
            for (ty, wy) in wy.iter().enumerate() {
                let src = &maps.data[c * tw * th + ty * tw..][..tile.w];
                let dst = &mut self.sum.data[c * plane + (tile.y + ty) * w + tile.x..][..tile.w];
                for ((d, s), wx) in dst.iter_mut().zip(src).zip(&wx) {
                    *d += s * wx * wy;
                }
            }
        }
        Ok(())
    }

    /// The blended scores: weighted sums divided by the sum of weights.
    fn finish(mut self) -> ScoreMaps {
        let (w, h) = (self.sum.width, self.sum.height);
        for plane in self.sum.data.chunks_exact_mut(w * h) {
            for (row, wy) in plane.chunks_exact_mut(w).zip(&self.weight_y) {
                row.iter_mut().zip(&self.weight_x).for_each(|(v, wx)| *v /= wx * wy);
            }
        }
        self.sum
    }
}

/// One `session.run`; returns the output's shape and its values as f32.
fn run_once(session: &mut Session, spec: &UnetSpec, shape: [i64; 4], tensor: &TensorData) -> Result<(Vec<i64>, Vec<f32>)> {
    let shape = shape.to_vec();
    let input = match tensor {
        TensorData::F32(v) => TensorRef::from_array_view((shape, v.as_slice())).map(|t| t.into_dyn()),
        TensorData::F16(v) => TensorRef::from_array_view((shape, v.as_slice())).map(|t| t.into_dyn()),
    }
    .map_err(|e| Error::new(SegStatus::SEG_INTERNAL, format!("cannot wrap the input tensor: {e}")))?;
    let outputs = session
        .run(ort::inputs![spec.input_name.as_str() => input])
        .map_err(|e| Error::inference(format!("ONNX Runtime run failed: {}", e.message())))?;
    let value = &outputs[spec.output_name.as_str()];
    let bad = |e: ort::Error| Error::inference(format!("cannot read output '{}': {e}", spec.output_name));
    match spec.output_element {
        Element::F32 => {
            let (s, data) = value.try_extract_tensor::<f32>().map_err(bad)?;
            Ok((s.to_vec(), data.to_vec()))
        }
        Element::F16 => {
            let (s, data) = value.try_extract_tensor::<f16>().map_err(bad)?;
            let mut out = vec![0f32; data.len()];
            data.convert_to_f32_slice(&mut out);
            Ok((s.to_vec(), out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_image_with_at_least_the_overlap() {
        for (len, tile, overlap) in
            [(1000usize, 256usize, 64usize), (256, 256, 32), (257, 256, 0), (5000, 512, 64), (100, 256, 64), (700, 256, 100)]
        {
            let grid = TileGrid::new((len, 10), (tile, 10), overlap);
            let xs = &grid.xs;
            assert_eq!(xs[0], 0);
            assert_eq!(xs.last().unwrap() + tile.min(len), len, "{len} {tile} {overlap}: {xs:?}");
            for pair in xs.windows(2) {
                assert!(pair[1] > pair[0] && pair[0] + tile >= pair[1] + overlap, "{len} {tile} {overlap}: {xs:?}");
            }
        }
    }

    #[test]
    fn blending_equal_tiles_gives_the_same_scores() {
        // Every tile reports 0.25 everywhere: whatever the weights, the blend is 0.25 everywhere.
        let grid = TileGrid::new((300, 200), (64, 48), 16);
        let mut blend = Blend::new(1, (300, 200), &grid);
        for tile in grid.tiles() {
            blend.add(&tile, ScoreMaps { classes: 1, width: 64, height: 48, data: vec![0.25; 64 * 48] }).unwrap();
        }
        let out = blend.finish();
        assert!(out.data.iter().all(|v| (v - 0.25).abs() < 1e-6));
    }

    #[test]
    fn blending_puts_each_tile_pixel_where_it_belongs() {
        // Each tile reports the image x coordinate of its pixels: the blend must be x everywhere.
        let grid = TileGrid::new((130, 70), (40, 30), 8);
        let mut blend = Blend::new(1, (130, 70), &grid);
        for tile in grid.tiles() {
            let data = (0..40 * 30).map(|i| (tile.x + i % 40) as f32).collect();
            blend.add(&tile, ScoreMaps { classes: 1, width: 40, height: 30, data }).unwrap();
        }
        let out = blend.finish();
        for (i, v) in out.data.iter().enumerate() {
            assert!((v - (i % 130) as f32).abs() < 1e-3, "pixel {i}: {v}");
        }
    }
}
