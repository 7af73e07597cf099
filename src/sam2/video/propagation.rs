//! Propagation (`propagate_in_video`): which frames a request visits and in which direction, the
//! consolidation of pending prompts before tracking starts (`propagate_in_video_preflight`), and
//! each frame tracked for every object.

use crate::control::{self, Stage};
use crate::error::{Error, Result};

use super::memory::Direction;
use super::tracker::{FrameMasks, Tracker};

/// Which way [`Tracker::propagate_with`] goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PropagationDirection {
    #[default]
    Forward,
    Reverse,
    /// Forward from the start frame, then in reverse from it (two `propagate_in_video` calls; the start
    /// frame is delivered by both).
    BothWays,
}

/// A propagation request: `propagate_in_video(start_frame_idx, max_frame_num_to_track, reverse)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Propagation {
    /// The frame to start from (`None`: the earliest conditioning frame of any object, as the predictor).
    pub start_frame: Option<usize>,
    pub direction: PropagationDirection,
    /// Frames to track past the start in each direction (`None`: to the end of the track).
    pub max_frames: Option<usize>,
}

impl Tracker {
    /// `propagate_in_video` (forward, from the earliest conditioning frame to the last frame added);
    /// returns each frame's masks. See [`Tracker::propagate_with`].
    pub fn propagate(&mut self) -> Result<Vec<FrameMasks>> {
        let mut frames = Vec::new();
        self.propagate_with(Propagation::default(), |_, fm| {
            frames.push(fm.clone());
            Ok(())
        })?;
        Ok(frames)
    }

    /// The frames `request` visits, in order, with their direction (checked before anything runs:
    /// the start inside the track, every frame reachable).
    pub fn propagation_order(&self, request: Propagation) -> Result<Vec<(usize, Direction)>> {
        if self.objects.is_empty() {
            return Err(Error::invalid("no object to track: add points first"));
        }
        let n = self.frames.added;
        let start = match request.start_frame {
            Some(t) if t >= n => {
                return Err(Error::invalid(format!("start frame {t}: the track has {n} frames (0 to {})", n.saturating_sub(1))))
            }
            Some(t) => t,
            // The earliest conditioning frame of any object, its pending prompts included (the
            // predictor consolidates them into conditioning frames first, then takes the minimum).
            None => self
                .objects
                .iter()
                .flat_map(|(_, o)| o.cond.keys().chain(o.temp_cond.keys()))
                .min()
                .copied()
                .ok_or_else(|| Error::invalid("no conditioning frame: prompt an object on a frame it was not tracked on"))?,
        };
        let max = request.max_frames.unwrap_or(n);
        let forward = (start..=start.saturating_add(max).min(n - 1)).map(|t| (t, Direction::Forward));
        // Reverse from frame 0 tracks nothing, as the predictor.
        let reverse = (start.saturating_sub(max)..=start).rev().filter(|_| start > 0).map(|t| (t, Direction::Reverse));
        let order: Vec<(usize, Direction)> = match request.direction {
            PropagationDirection::Forward => forward.collect(),
            PropagationDirection::Reverse => reverse.collect(),
            PropagationDirection::BothWays => forward.chain(reverse).collect(),
        };
        for (t, _) in &order {
            self.check_reachable(*t)?;
        }
        Ok(order)
    }

    /// `propagate_in_video(start_frame_idx, max_frame_num_to_track, reverse)` (both ways: forward,
    /// then in reverse from the same start): consolidates pending prompts, then tracks each frame
    /// of the request for every object (re-tracking frames tracked before, as the predictor does;
    /// conditioning frames keep their output) and hands each frame's masks to `on_frame`, which may
    /// stop the propagation by returning an error. On an error (a failed run, a cancelled control,
    /// `on_frame`'s) the frames handed over stay tracked and the frame in progress is as before.
    /// Progress: [`Stage::Propagation`], the fraction of the request's frames done.
    pub fn propagate_with(&mut self, request: Propagation, mut on_frame: impl FnMut(&Tracker, &FrameMasks) -> Result<()>) -> Result<()> {
        let order = self.propagation_order(request)?;
        control::progress(Stage::Propagation, 0.0)?;
        self.preflight()?;
        for (i, (t, direction)) in order.iter().enumerate() {
            // A copy is cheap (frames and outputs are shared): it puts back a frame that failed halfway.
            let before = self.clone();
            let fm = match self.track_frame_in(*t, *direction) {
                Ok(fm) => fm,
                Err(e) => {
                    *self = before;
                    return Err(e);
                }
            };
            on_frame(self, &fm)?;
            drop(fm);
            // Each frame leaves long-lived outputs above its freed temporaries (the encoder's
            // tensors, the masks): glibc keeps those holes resident unless asked, and over hundreds
            // of slices they outgrow what the track holds.
            crate::engine::arena::trim_malloc();
            control::progress(Stage::Propagation, (i + 1) as f32 / order.len() as f32)?;
        }
        Ok(())
    }

    /// Tracks one frame forward (consolidating pending clicks first): every object without a
    /// conditioning output on it gets a memory-conditioned prediction, stored (with its memory) as a
    /// non-conditioning output. Streaming use: `add_frame` then `track_frame` on its index.
    pub fn track_frame(&mut self, frame: usize) -> Result<FrameMasks> {
        self.check_reachable(frame)?;
        self.preflight()?;
        self.track_frame_in(frame, Direction::Forward)
    }

    /// One frame of `propagate_in_video` in `direction` (pending prompts already consolidated).
    fn track_frame_in(&mut self, frame: usize, direction: Direction) -> Result<FrameMasks> {
        let feats = self.features(frame)?;
        self.tracking_started = true;
        for k in 0..self.objects.len() {
            if !self.objects[k].1.cond.contains_key(&frame) {
                let out = self.track_step(frame, &feats, false, None, k, direction, true, None)?;
                self.objects[k].1.non_cond.insert(frame, out);
            }
            self.objects[k].1.tracked.insert(frame, direction);
        }
        Ok(self.frame_masks(frame, None))
    }

    /// `propagate_in_video_preflight`: clicked outputs get their memory (binarised mask) and move
    /// to the consolidated outputs; a conditioning frame's non-conditioning output is dropped.
    pub(super) fn preflight(&mut self) -> Result<()> {
        if self.objects.is_empty() {
            return Err(Error::invalid("no object to track: add points first"));
        }
        for k in 0..self.objects.len() {
            for cond in [false, true] {
                let temp = std::mem::take(if cond { &mut self.objects[k].1.temp_cond } else { &mut self.objects[k].1.temp_non_cond });
                for (t, mut out) in temp {
                    if out.maskmem.is_none() {
                        let feats = self.features(t)?;
                        out.maskmem = Some(self.encode_memory(&feats, &out.pred_masks, out.score, true)?);
                    }
                    let o = &mut self.objects[k].1;
                    if cond {
                        o.cond.insert(t, out)
                    } else {
                        o.non_cond.insert(t, out)
                    };
                }
            }
            let o = &mut self.objects[k].1;
            let cond: Vec<usize> = o.cond.keys().copied().collect();
            for t in cond {
                o.non_cond.remove(&t);
            }
            if o.cond.is_empty() {
                return Err(Error::invalid(format!(
                    "object {} has no conditioning frame: click it on a frame it was not tracked on",
                    self.objects[k].0
                )));
            }
        }
        self.release_old();
        Ok(())
    }
}
