//! What the soak's threads do: a station's jobs in a fixed, weighted order (`--mix`), each job one or
//! more C-ABI calls, each call timed and recorded, until the budget (time or calls) is spent or the
//! run is stopped.
//!
//! Jobs: `unet` one image through the UNet; `sam2` an operator's image: the encoder
//! (`seg_sam2_set_image`), clicks refining one object (one point, then two, ...), a box, and many
//! boxes in one call (a detector's boxes, `seg_sam2_segment_prompts`); `track` a camera stream: the
//! next frames through a track (`seg_track_next`), a new track (first frame, two objects clicked)
//! every `--track-length` frames. Each thread stands for one camera or operator: it has its own SAM2
//! session and its own track; the UNet session and the video model are shared (their pools serve the
//! threads), as in a station's process.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use segrt::ffi::{SegBox, SegPoint};

use super::abi::{Rgb, Session, Track};
use super::stats::Recorder;
use crate::CliResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    Unet,
    Sam2,
    Track,
}

impl Job {
    const ALL: [(Job, &'static str); 3] = [(Job::Unet, "unet"), (Job::Sam2, "sam2"), (Job::Track, "track")];

    pub fn name(self) -> &'static str {
        Job::ALL.iter().find(|(j, _)| *j == self).map_or("?", |(_, n)| n)
    }

    /// The kinds of call a job makes, as the statistics name them.
    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            Job::Unet => &["unet"],
            Job::Sam2 => &["encode", "click", "box", "prompts"],
            Job::Track => &["track-start", "track-frame"],
        }
    }
}

/// The jobs' weights: `unet=4,sam2=1,track=1` makes 4 UNet jobs, 1 SAM2 job and 1 tracking job in
/// every 6, interleaved.
pub fn parse_mix(s: &str) -> CliResult<Vec<(Job, u32)>> {
    let mut mix = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weight) = part.split_once('=').unwrap_or((part, "1"));
        let job = Job::ALL
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name.trim()))
            .map(|(j, _)| *j)
            .ok_or_else(|| format!("--mix '{s}': unknown job '{name}' (expected unet, sam2, track, each with an optional =WEIGHT)"))?;
        let weight: u32 = weight.trim().parse().map_err(|_| format!("--mix '{s}': the weight of {name} must be a whole number"))?;
        if mix.iter().any(|(j, _)| *j == job) {
            return Err(format!("--mix '{s}': {name} is given twice").into());
        }
        mix.push((job, weight));
    }
    mix.retain(|(_, w)| *w > 0);
    if mix.is_empty() {
        return Err(format!("--mix '{s}': no job with a weight above 0").into());
    }
    Ok(mix)
}

/// The weighted order of jobs, spread out (`unet=2,track=1` gives unet, track, unet, not unet, unet,
/// track): job j's k-th turn falls at (k + 0.5) / weight of the cycle.
pub fn schedule(mix: &[(Job, u32)]) -> Vec<Job> {
    let mut turns: Vec<(f64, usize, Job)> = Vec::new();
    for (i, (job, w)) in mix.iter().enumerate() {
        turns.extend((0..*w).map(|k| ((k as f64 + 0.5) / *w as f64, i, *job)));
    }
    turns.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    turns.into_iter().map(|(_, _, j)| j).collect()
}

/// How much a run may do: until a deadline and/or a number of calls, or until stopped.
pub struct Budget {
    pub deadline: Option<Instant>,
    pub calls: Option<u64>,
    made: AtomicU64,
    /// Set by Ctrl+C, the first failure (`--stop-on-failure`), a full disk.
    pub stop: std::sync::Arc<AtomicBool>,
}

impl Budget {
    pub fn new(deadline: Option<Instant>, calls: Option<u64>, stop: std::sync::Arc<AtomicBool>) -> Self {
        Budget { deadline, calls, made: AtomicU64::new(0), stop }
    }

    /// Whether one more call may start (and counts it).
    pub fn take(&self) -> bool {
        if self.stopped() || self.deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        match self.calls {
            Some(limit) => self.made.fetch_add(1, Ordering::SeqCst) < limit,
            None => true,
        }
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// How a job is shaped.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub clicks: usize,
    pub prompts: usize,
    pub track_frames: usize,
    pub track_length: usize,
}

/// Everything the threads share.
pub struct Workload {
    pub schedule: Vec<Job>,
    pub images: Vec<Rgb>,
    pub frames: Vec<Rgb>,
    pub unet: Option<Session>,
    /// One SAM2 session per thread.
    pub sam2: Vec<Session>,
    pub video: Option<Session>,
    pub shape: Shape,
    next_image: AtomicUsize,
}

impl Workload {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        schedule: Vec<Job>,
        images: Vec<Rgb>,
        frames: Vec<Rgb>,
        unet: Option<Session>,
        sam2: Vec<Session>,
        video: Option<Session>,
        shape: Shape,
    ) -> Self {
        Workload { schedule, images, frames, unet, sam2, video, shape, next_image: AtomicUsize::new(0) }
    }

    /// The next image of the list, shared by the threads so that they cover different images.
    fn next_image(&self) -> &Rgb {
        &self.images[self.next_index()]
    }

    fn next_index(&self) -> usize {
        self.next_image.fetch_add(1, Ordering::Relaxed) % self.images.len()
    }
}

/// The image of a thread's next sam2 job: `next`, or the one after it when `next` is the image its
/// session encoded last. `seg_sam2_set_image` does nothing for the pixels it holds already, so the
/// same image twice would time a cache hit as an encode (half the "encodes" of a run on two photos
/// took 0.1 ms), where an operator's next image is a new one. With one image only, it repeats.
fn sam2_image(next: usize, last: Option<usize>, count: usize) -> usize {
    if last == Some(next) && count > 1 {
        (next + 1) % count
    } else {
        next
    }
}

/// Clicks that refine one object, in fractions of the picture: include, exclude, include, ...
const CLICKS: [(f32, f32, i32); 6] = [(0.5, 0.5, 1), (0.3, 0.3, 0), (0.58, 0.45, 1), (0.7, 0.7, 0), (0.45, 0.6, 1), (0.2, 0.8, 0)];
/// The tracked objects' clicks on a track's first frame.
const TRACK_CLICKS: [(f32, f32); 2] = [(0.5, 0.5), (0.25, 0.3)];

fn point(img: &Rgb, (fx, fy, label): (f32, f32, i32)) -> SegPoint {
    SegPoint { x: fx * img.width as f32, y: fy * img.height as f32, label }
}

/// `n` boxes tiling the picture (a detector's boxes), each inset in its cell.
fn grid_boxes(img: &Rgb, n: usize) -> Vec<SegBox> {
    let cols = (n as f64).sqrt().ceil().max(1.0) as usize;
    let rows = n.div_ceil(cols);
    let (cw, ch) = (img.width as f32 / cols as f32, img.height as f32 / rows as f32);
    (0..n)
        .map(|i| {
            let (x, y) = ((i % cols) as f32 * cw, (i / cols) as f32 * ch);
            SegBox { x1: x + 0.15 * cw, y1: y + 0.15 * ch, x2: x + 0.85 * cw, y2: y + 0.85 * ch }
        })
        .collect()
}

/// One thread's state: its masks, its track.
struct Worker<'a> {
    w: &'a Workload,
    rec: &'a Recorder,
    budget: &'a Budget,
    thread: usize,
    track: Option<Track>,
    frames_in_track: usize,
    next_frame: usize,
    /// The image this thread's SAM2 session encoded last.
    last_sam2_image: Option<usize>,
}

/// Runs thread `thread`'s share of the jobs until the budget is spent or the run is stopped.
pub fn run(thread: usize, w: &Workload, rec: &Recorder, budget: &Budget) {
    let mut worker = Worker { w, rec, budget, thread, track: None, frames_in_track: 0, next_frame: 0, last_sam2_image: None };
    // Threads start at different places of the cycle, so that they do not all run one job at once.
    let mut turn = thread * w.schedule.len().div_ceil(2).max(1);
    while !budget.stopped() {
        let ran = match w.schedule[turn % w.schedule.len()] {
            Job::Unet => worker.unet(),
            Job::Sam2 => worker.sam2(),
            Job::Track => worker.track(),
        };
        if !ran {
            break;
        }
        turn += 1;
    }
}

impl Worker<'_> {
    /// Whether another call may start.
    fn may_call(&self) -> bool {
        self.budget.take()
    }

    /// One image through the UNet. Returns false when the budget is spent.
    fn unet(&mut self) -> bool {
        let (Some(session), true) = (&self.w.unet, self.may_call()) else { return false };
        let img = self.w.next_image();
        let mut mask = img.mask_buffer();
        let _ = self.rec.time(self.rec.kind("unet"), || session.run_unet(img, &mut mask));
        true
    }

    /// One operator's image: encode, clicks, a box, many boxes.
    fn sam2(&mut self) -> bool {
        let Some(session) = self.w.sam2.get(self.thread) else { return false };
        let index = sam2_image(self.w.next_index(), self.last_sam2_image, self.w.images.len());
        self.last_sam2_image = Some(index);
        let img = &self.w.images[index];
        let mut mask = img.mask_buffer();
        if !self.may_call() {
            return false;
        }
        if self.rec.time(self.rec.kind("encode"), || session.set_image(img)).is_err() {
            return true;
        }
        let shape = self.w.shape;
        for k in 0..shape.clicks {
            if !self.may_call() {
                return false;
            }
            let points: Vec<SegPoint> = CLICKS.iter().cycle().take(k + 1).map(|c| point(img, *c)).collect();
            let _ = self.rec.time(self.rec.kind("click"), || session.click(img, &points, None, &mut mask));
        }
        if !self.may_call() {
            return false;
        }
        let middle = grid_boxes(img, 1)[0];
        let _ = self.rec.time(self.rec.kind("box"), || session.click(img, &[], Some(middle), &mut mask));
        if shape.prompts > 0 {
            if !self.may_call() {
                return false;
            }
            let boxes = grid_boxes(img, shape.prompts);
            let mut masks: Vec<Vec<u8>> = boxes.iter().map(|_| img.mask_buffer()).collect();
            let _ = self.rec.time(self.rec.kind("prompts"), || session.boxes(img, &boxes, &mut masks));
        }
        true
    }

    /// The next frames of this thread's stream; a new track every `track_length` frames (and after a
    /// failure, as a host would start over).
    fn track(&mut self) -> bool {
        let Some(video) = &self.w.video else { return false };
        let frames = &self.w.frames;
        let mut masks: Vec<Vec<u8>> = TRACK_CLICKS.iter().map(|_| frames[0].mask_buffer()).collect();
        for _ in 0..self.w.shape.track_frames {
            if !self.may_call() {
                return false;
            }
            let frame = &frames[self.next_frame % frames.len()];
            self.next_frame += 1;
            if self.track.is_none() || self.frames_in_track >= self.w.shape.track_length {
                self.track = None;
                self.frames_in_track = 0;
                let clicks: Vec<SegPoint> = TRACK_CLICKS.iter().map(|&(x, y)| point(frame, (x, y, 1))).collect();
                let started = self.rec.time(self.rec.kind("track-start"), || {
                    let track = Track::new(video)?;
                    track.start(frame, &clicks, &mut masks)?;
                    Ok(track)
                });
                self.track = started.ok();
            } else if let Some(track) = &self.track {
                if self.rec.time(self.rec.kind("track-frame"), || track.next(frame, &mut masks)).is_err() {
                    self.track = None;
                }
            }
            self.frames_in_track += 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sam2_job_encodes_another_image_than_its_last() {
        assert_eq!(sam2_image(2, Some(2), 6), 3);
        assert_eq!(sam2_image(5, Some(5), 6), 0);
        assert_eq!(sam2_image(1, Some(0), 2), 1);
        assert_eq!(sam2_image(0, None, 2), 0);
        // One image: it can only repeat.
        assert_eq!(sam2_image(0, Some(0), 1), 0);
    }

    #[test]
    fn the_mix_is_parsed_and_spread_out() {
        let mix = parse_mix("unet=2, track=1,sam2=0").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mix, vec![(Job::Unet, 2), (Job::Track, 1)]);
        assert_eq!(schedule(&mix), vec![Job::Unet, Job::Track, Job::Unet]);
        assert_eq!(schedule(&parse_mix("sam2").unwrap_or_else(|e| panic!("{e}"))), vec![Job::Sam2]);
        for bad in ["unet=x", "cats=1", "unet=0", "unet,unet"] {
            assert!(parse_mix(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_budget_counts_calls_across_threads() {
        let b = Budget::new(None, Some(10), Default::default());
        let taken = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4).map(|_| s.spawn(|| (0..100).filter(|_| b.take()).count())).collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum::<usize>()
        });
        assert_eq!(taken, 10);
        let stopped = Budget::new(None, None, Default::default());
        stopped.stop.store(true, Ordering::SeqCst);
        assert!(!stopped.take());
    }

    #[test]
    fn grid_boxes_stay_inside_the_picture() {
        let img = Rgb { pixels: vec![], width: 640, height: 480 };
        let boxes = grid_boxes(&img, 8);
        assert_eq!(boxes.len(), 8);
        assert!(boxes.iter().all(|b| b.x1 >= 0.0 && b.y1 >= 0.0 && b.x2 <= 640.0 && b.y2 <= 480.0 && b.x1 < b.x2 && b.y1 < b.y2));
    }
}
