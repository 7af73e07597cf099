//! `segrt track`: SAM2 video tracking through a folder (or glob) of frames, a DICOM series or a
//! NIfTI volume. Streamed (the default): each frame is decoded, added to the tracker
//! ([`Tracker::add_frame`]), prompted if it has prompts, tracked ([`Tracker::track_frame`]) and
//! written before the next one is read. `--both-ways`: the frames are a volume (kept as pixels,
//! encoded when needed), every prompt is given, then [`Tracker::propagate_with`] goes forward and
//! in reverse from the earliest prompted frame, and each frame's final masks are written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use image::GrayImage;
use indicatif::{ProgressBar, ProgressStyle};

use segrt::sam2::video::{FrameMasks, Propagation, PropagationDirection, Tracker, TrackerOptions, VideoModel};
use segrt::Options;

use crate::args::{count, parse_numbers, warn_fallbacks, ArenaArgs, IntensityArgs, SessionArgs};
use crate::files::{decode, display_rgb, file_name, list_images, make_overlay, output_names, Pixels, IMAGE_EXTENSIONS};
use crate::medical::{self, Volume};
use crate::{print_line, CliResult};

#[derive(clap::Args)]
pub struct TrackArgs {
    /// Folder holding video_metadata.json and the four SAM2 video modules it names
    #[arg(long, value_name = "DIR")]
    models: PathBuf,
    /// The frames: a folder (its image files, sorted by name) or a glob pattern whose wildcards
    /// (* ? [abc]) are in the file name only, e.g. 'clip/frame_*.png' (sorted by name). Every frame
    /// must have the first frame's size. Or a volume's slices: a DICOM series (a folder of .dcm
    /// files, in the series' order) or a NIfTI volume (.nii, .nii.gz; also gets one mask volume per
    /// object, <stem>_obj<N>_mask.nii[.gz], with its header)
    #[arg(long, value_name = "FOLDER_OR_GLOB")]
    frames: String,
    /// A click X,Y[,LABEL] on the first frame, in frame pixels; LABEL 1 = include (default), 0 =
    /// exclude. Repeatable; its object is given by --object (default 1)
    #[arg(long = "point", value_name = "X,Y[,LABEL]", allow_hyphen_values = true)]
    points: Vec<String>,
    /// The object id (0 or more) of each --point, in order; one --object applies to every --point
    #[arg(long = "object", value_name = "N", value_parser = clap::value_parser!(i32).range(0..))]
    objects: Vec<i32>,
    /// A click on any frame: FRAME:OBJ:X,Y[,LABEL] (FRAME counts from 0 in the sorted frames). It
    /// is given to the tracker before that frame is tracked (a conditioning frame, as a click
    /// before propagation in the official predictor). Streamed, an object first prompted on a later
    /// frame is tracked from there on; with --both-ways also on the frames before. Repeatable
    #[arg(long = "point-on", value_name = "FRAME:OBJ:X,Y[,LABEL]", allow_hyphen_values = true)]
    points_on: Vec<String>,
    /// A box prompt [FRAME:OBJ:]X1,Y1,X2,Y2 in frame pixels (default frame 0, object 1), alone or
    /// with the clicks of the same object and frame (the box comes first, as in the official
    /// predictor). Repeatable; one box per object and frame
    #[arg(long = "box", value_name = "[FRAME:OBJ:]X1,Y1,X2,Y2", allow_hyphen_values = true)]
    boxes: Vec<String>,
    /// Output folder for <frame-stem>_obj<N>.png (0/255, the frame's size) and, with --overlay,
    /// <frame-stem>_overlay.png
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Also write one overlay per frame, each object in its own colour
    #[arg(long)]
    overlay: bool,
    /// Print the per-frame results as JSON on standard output (instead of one line per frame)
    #[arg(long)]
    json: bool,
    /// Keep the encoder outputs of this many frames (at least 1; default: the model's memory
    /// window, num_maskmem): streamed, the most recent ones; with --both-ways, the most recently
    /// used ones (others are encoded again when needed). Memory stays bounded however long the video
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = count)]
    keep_frames: Option<usize>,
    /// Propagate forward and in reverse from the earliest prompted frame (the volume workflow: click
    /// a structure on a middle slice, get it on every slice). Every frame is read first (kept as
    /// 8-bit pixels); masks are written once propagation is done
    #[arg(long)]
    both_ways: bool,
    /// ONNX Runtime intra-op threads (0 = one per physical core)
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = count)]
    threads: usize,
    #[command(flatten)]
    arena: ArenaArgs,
    #[command(flatten)]
    session: SessionArgs,
    #[command(flatten)]
    intensity: IntensityArgs,
    #[command(flatten)]
    annotate: crate::annotate::AnnotateArgs,
}

/// The clicks of one object on one frame (the tracker takes them in one call).
struct Clicks {
    frame: usize,
    object: i32,
    points: Vec<[f32; 2]>,
    labels: Vec<i32>,
    bbox: Option<[f32; 4]>,
}

/// `X,Y[,LABEL]` (as `segrt sam2 --point`): a point and its label (0 or 1).
fn parse_point(s: &str, what: &str) -> CliResult<([f32; 2], i32)> {
    let v = parse_numbers(s, what, &[2, 3])?;
    let label = match v.get(2) {
        None => 1,
        Some(l) if *l == 0.0 || *l == 1.0 => *l as i32,
        Some(_) => return Err(format!("{what} '{s}': LABEL must be 1 (include) or 0 (exclude)").into()),
    };
    Ok(([v[0], v[1]], label))
}

/// Groups the clicks and boxes by (frame, object), sorted by frame then object id.
fn collect_clicks(args: &TrackArgs, num_frames: usize) -> CliResult<Vec<Clicks>> {
    if args.objects.len() > 1 && args.objects.len() != args.points.len() {
        return Err(format!(
            "{} --object for {} --point: give one --object for every --point, or one for all",
            args.objects.len(),
            args.points.len()
        )
        .into());
    }
    let mut all: Vec<(usize, i32, [f32; 2], i32)> = Vec::new();
    for (i, p) in args.points.iter().enumerate() {
        let (xy, label) = parse_point(p, "--point")?;
        let object = match args.objects.as_slice() {
            [] => 1,
            [one] => *one,
            many => many[i],
        };
        all.push((0, object, xy, label));
    }
    for p in &args.points_on {
        let bad = || format!("--point-on '{p}': expected FRAME:OBJ:X,Y[,LABEL], e.g. 5:1:130,112");
        let mut parts = p.splitn(3, ':');
        let (Some(frame), Some(object), Some(xy)) = (parts.next(), parts.next(), parts.next()) else { return Err(bad().into()) };
        let frame: usize = frame.trim().parse().map_err(|_| bad())?;
        let object: i32 = object.trim().parse().ok().filter(|o| *o >= 0).ok_or_else(bad)?;
        if frame >= num_frames {
            return Err(format!("--point-on '{p}': frame {frame} does not exist ({num_frames} frames, counted from 0)").into());
        }
        let (xy, label) = parse_point(xy, "--point-on")?;
        all.push((frame, object, xy, label));
    }
    let mut boxes: Vec<(usize, i32, [f32; 4])> = Vec::new();
    for b in &args.boxes {
        let bad = || format!("--box '{b}': expected [FRAME:OBJ:]X1,Y1,X2,Y2, e.g. 0:1:40,60,120,150");
        let parts: Vec<&str> = b.split(':').collect();
        let (frame, object, coords) = match parts.as_slice() {
            [c] => (0, 1, *c),
            [f, o, c] => {
                (f.trim().parse::<usize>().map_err(|_| bad())?, o.trim().parse::<i32>().ok().filter(|o| *o >= 0).ok_or_else(bad)?, *c)
            }
            _ => return Err(bad().into()),
        };
        if frame >= num_frames {
            return Err(format!("--box '{b}': frame {frame} does not exist ({num_frames} frames, counted from 0)").into());
        }
        let v = parse_numbers(coords, "--box", &[4])?;
        if v[2] < v[0] || v[3] < v[1] {
            return Err(format!("--box '{b}': X2 must not be left of X1, nor Y2 above Y1").into());
        }
        if boxes.iter().any(|(f, o, _)| (*f, *o) == (frame, object)) {
            return Err(format!("--box '{b}': object {object} already has a box on frame {frame}").into());
        }
        boxes.push((frame, object, [v[0], v[1], v[2], v[3]]));
    }
    if all.is_empty() && boxes.is_empty() {
        return Err("no prompts: give at least one --point or --box (or --point-on 0:OBJ:X,Y)".into());
    }
    let mut groups: Vec<Clicks> = Vec::new();
    for (frame, object, xy, label) in all {
        match groups.iter_mut().find(|g| g.frame == frame && g.object == object) {
            Some(g) => {
                g.points.push(xy);
                g.labels.push(label);
            }
            None => groups.push(Clicks { frame, object, points: vec![xy], labels: vec![label], bbox: None }),
        }
    }
    for (frame, object, bbox) in boxes {
        match groups.iter_mut().find(|g| g.frame == frame && g.object == object) {
            Some(g) => g.bbox = Some(bbox),
            None => groups.push(Clicks { frame, object, points: Vec::new(), labels: Vec::new(), bbox: Some(bbox) }),
        }
    }
    // Objects are prompted (and listed in outputs) in id order, whatever order the flags came in.
    groups.sort_by_key(|g| (g.frame, g.object));
    Ok(groups)
}

/// `*`, `?` and `[...]` (with `!` or `^` negation and `a-z` ranges) against a whole file name.
fn wildcard(pattern: &[char], name: &[char]) -> bool {
    match pattern.first() {
        None => name.is_empty(),
        Some('*') => (0..=name.len()).any(|i| wildcard(&pattern[1..], &name[i..])),
        Some('?') => !name.is_empty() && wildcard(&pattern[1..], &name[1..]),
        Some('[') => {
            let Some(end) = pattern.iter().skip(2).position(|c| *c == ']').map(|p| p + 2) else {
                return name.first() == Some(&'[') && wildcard(&pattern[1..], &name[1..]);
            };
            let Some(c) = name.first() else { return false };
            let mut set = &pattern[1..end];
            let negate = matches!(set.first(), Some('!' | '^'));
            if negate {
                set = &set[1..];
            }
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= (set[i]..=set[i + 2]).contains(c);
                    i += 3;
                } else {
                    hit |= set[i] == *c;
                    i += 1;
                }
            }
            hit != negate && wildcard(&pattern[end + 1..], &name[1..])
        }
        Some(p) => name.first() == Some(p) && wildcard(&pattern[1..], &name[1..]),
    }
}

/// The frame files: a folder's image files, or the files a glob matches, sorted by name.
fn list_frames(spec: &str) -> CliResult<Vec<PathBuf>> {
    let path = Path::new(spec);
    if path.is_dir() {
        let files = list_images(&[path.to_path_buf()])?;
        if files.is_empty() {
            return Err(format!(
                "--frames {spec}: no image files in this folder ({})",
                IMAGE_EXTENSIONS.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(" ")
            )
            .into());
        }
        return Ok(files);
    }
    let name = file_name(path);
    if !name.contains(['*', '?', '[']) {
        return Err(if path.is_file() {
            format!("--frames {spec}: a single file; give the folder of the frames or a glob pattern")
        } else {
            format!("--frames {spec}: no such folder")
        }
        .into());
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if parent.to_string_lossy().contains(['*', '?', '[']) {
        return Err(format!("--frames {spec}: wildcards are allowed in the file name only").into());
    }
    let pattern: Vec<char> = name.chars().collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(parent)
        .map_err(|e| format!("--frames {spec}: cannot list {}: {e}", parent.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && wildcard(&pattern, &file_name(p).chars().collect::<Vec<_>>()))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("--frames {spec}: no files match").into());
    }
    Ok(files)
}

/// One object's result on one frame.
#[derive(serde::Serialize)]
struct ObjectRecord {
    object_id: i32,
    present: bool,
    /// The object-score logit (absent when the object has no output on the frame).
    score: Option<f32>,
    mask: PathBuf,
    area: usize,
}

#[derive(serde::Serialize)]
struct FrameRecord {
    frame: usize,
    file: PathBuf,
    /// Milliseconds for add_frame (encoder) + clicks + track_frame.
    ms: f64,
    encode_ms: f64,
    track_ms: f64,
    objects: Vec<ObjectRecord>,
}

pub fn track(args: TrackArgs, ort: Option<PathBuf>) -> CliResult {
    // A DICOM series or NIfTI volume: its slices are the frames (headers read, refusals made, here).
    let frames_path = Path::new(&args.frames);
    let volume = if medical::is_medical(frames_path) { Some(Volume::open(frames_path)?) } else { None };
    if volume.is_some() && args.intensity.rescale.is_some() {
        return Err(
            "--rescale: DICOM and NIfTI inputs carry their own rescale (RescaleSlope/Intercept, scl_slope/scl_inter), which segrt applies"
                .into(),
        );
    }
    let files = match &volume {
        Some(v) => vec![frames_path.to_path_buf(); v.slice_count()],
        None => list_frames(&args.frames)?,
    };
    let clicks = collect_clicks(&args, files.len())?;
    if args.keep_frames == Some(0) {
        return Err("--keep-frames 0: keep at least 1 frame".into());
    }
    // Every frame's size from its header, before anything is computed or written.
    let size_of = |p: &Path| image::image_dimensions(p).map_err(|e| format!("cannot read image {}: {e}", p.display()));
    let first = match &volume {
        Some(v) => (v.size().0 as u32, v.size().1 as u32),
        None => size_of(&files[0])?,
    };
    for f in files[1..].iter().filter(|_| volume.is_none()) {
        let s = size_of(f)?;
        if s != first {
            return Err(format!(
                "{} is {}x{}, the first frame {} is {}x{}: every frame must have the first frame's size",
                f.display(),
                s.0,
                s.1,
                files[0].display(),
                first.0,
                first.1
            )
            .into());
        }
    }
    let names = match &volume {
        Some(_) => (0..files.len()).map(|k| format!("{}_{k:03}", medical::stem(frames_path))).collect(),
        None => output_names(&files)?,
    };
    let t = Instant::now();
    let mut options = Options { ort_path: ort, intra_threads: args.threads, arena: args.arena.policy(), ..Options::default() };
    args.session.apply(&mut options)?;
    let (intensity, from_file) = match &volume {
        Some(v) => v.intensity(args.intensity.intensity()?),
        None => (args.intensity.intensity()?, None),
    };
    let display = Volume::display_range(intensity.as_ref());
    let model = Arc::new(VideoModel::from_dir(&args.models, options).map_err(|e| format!("{}: {e}", args.models.display()))?);
    model.core().set_intensity(intensity).map_err(|e| e.to_string())?;
    if let Some(v) = &volume {
        note!("{}: {}", frames_path.display(), v.describe());
    }
    note!("intensity: {}{}", model.info().session.intensity, from_file.map(|f| format!(" ({f})")).unwrap_or_default());
    let info = model.info();
    note!("provider {}", info.session.provider.in_use_with("mask decoder and memory encoder", info.decoder_provider));
    warn_fallbacks(&[
        ("the image encoder and memory attention run", info.session.provider),
        ("the mask decoder and memory encoder run", info.decoder_provider),
    ]);
    let keep = args.keep_frames.unwrap_or(model.metadata().num_maskmem.max(1));
    // The official predictor scales object-pointer distances by the video's length: known here.
    let options = TrackerOptions { num_frames: Some(files.len()), keep_frames: Some(keep), volume: args.both_ways, ..Default::default() };
    let mut tracker = Tracker::new(model, options)?;
    let mut objects: Vec<i32> = clicks.iter().map(|c| c.object).collect();
    objects.sort();
    objects.dedup();
    note!(
        "video modules loaded in {:.1} ms; {} frames of {}x{}; objects {:?}; keeping {keep} frames{}",
        t.elapsed().as_secs_f64() * 1e3,
        files.len(),
        first.0,
        first.1,
        objects,
        if args.both_ways { " (a volume: propagating both ways)" } else { "" }
    );
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let bar = ProgressBar::new(files.len() as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let source = Frames { files: &files, names: &names, volume: volume.as_ref(), display };
    let annotator = crate::annotate::for_track(&args.annotate, &args.out, &names)?;
    let mut writer = Writer { args: &args, volume: volume.is_some(), mask_volumes: Vec::new(), records: Vec::new(), annotator };
    if args.both_ways {
        // Every slice in (no encoding yet), every prompt, then both ways from the earliest prompted slice.
        bar.set_message("reading");
        for (t, path) in files.iter().enumerate() {
            let (_, pixels) = source.read(t)?;
            let view = pixels.view().map_err(|e| format!("{}: {e}", path.display()))?;
            tracker.add_frame(&view).map_err(|e| format!("{}: {e}", path.display()))?;
            bar.inc(1);
        }
        let t1 = Instant::now();
        for c in &clicks {
            tracker
                .add_prompt(c.frame, c.object, &c.points, &c.labels, c.bbox)
                .map_err(|e| format!("{}: prompt on object {}: {e}", files[c.frame].display(), c.object))?;
        }
        let request = Propagation { direction: PropagationDirection::BothWays, ..Default::default() };
        let order = tracker.propagation_order(request)?;
        bar.set_length(order.len() as u64);
        bar.set_position(0);
        // The last result of each frame (both ways deliver the start frame twice).
        let mut results: BTreeMap<usize, (FrameMasks, f64)> = BTreeMap::new();
        let mut last = Instant::now();
        tracker.propagate_with(request, |_, fm| {
            results.insert(fm.frame, (fm.clone(), last.elapsed().as_secs_f64() * 1e3));
            last = Instant::now();
            bar.set_message(format!("frame {}", fm.frame));
            bar.inc(1);
            Ok(())
        })?;
        let propagate_ms = t1.elapsed().as_secs_f64() * 1e3;
        note!("propagated {} frames both ways from frame {} in {propagate_ms:.0} ms", order.len(), order[0].0);
        for (t, (fm, ms)) in &results {
            // Read again for its overlay rather than kept from the first read: a volume's display
            // images would otherwise all be held through the propagation.
            let (img, _) = source.read(*t)?;
            let record = writer.write(fm, &img, &files[*t], &names[*t], 0.0, *ms)?;
            if !args.json {
                let line = frame_line(&record, &names[*t]);
                bar.suspend(|| print_line(format_args!("{line}")))?;
            }
            writer.records.push(record);
        }
    } else {
        for (t, (path, name)) in files.iter().zip(&names).enumerate() {
            let (img, pixels) = source.read(t)?;
            let view = pixels.view().map_err(|e| format!("{}: {e}", path.display()))?;
            let t0 = Instant::now();
            let added = tracker.add_frame(&view).map_err(|e| format!("{}: {e}", path.display()))?;
            debug_assert_eq!(added, t);
            let encode_ms = t0.elapsed().as_secs_f64() * 1e3;
            let t1 = Instant::now();
            for c in clicks.iter().filter(|c| c.frame == t) {
                tracker
                    .add_prompt(t, c.object, &c.points, &c.labels, c.bbox)
                    .map_err(|e| format!("{}: prompt on object {}: {e}", path.display(), c.object))?;
            }
            if tracker.object_ids().is_empty() {
                // No object prompted yet: nothing to track on this frame.
                bar.inc(1);
                continue;
            }
            let fm = tracker.track_frame(t).map_err(|e| format!("{}: {e}", path.display()))?;
            let track_ms = t1.elapsed().as_secs_f64() * 1e3;
            let record = writer.write(&fm, &img, path, name, encode_ms, track_ms)?;
            bar.set_message(format!("{} {:.1} ms", file_name(path), record.ms));
            if !args.json {
                let line = frame_line(&record, name);
                bar.suspend(|| print_line(format_args!("{line}")))?;
            }
            writer.records.push(record);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    if let Some(a) = writer.annotator.take() {
        note!("{}", a.finish()?);
    }
    let records = writer.records;
    if let Some(v) = &volume {
        // One mask volume per object, with every slice (slices before an object's output are empty).
        let stem = medical::stem(frames_path);
        let slice = first.0 as usize * first.1 as usize;
        for id in &objects {
            let mut masks = vec![0u8; slice * files.len()];
            for (t, m) in writer.mask_volumes.iter().filter(|(_, o, _)| o == id).map(|(t, _, m)| (t, m)) {
                masks[t * slice..(t + 1) * slice].copy_from_slice(m);
            }
            if let Some(p) = v.write_mask_volume(&args.out, &format!("{stem}_obj{id}"), &masks)? {
                note!("object {id}: mask volume {}", p.display());
            }
        }
    }
    let n = records.len().max(1) as f64;
    let mean_ms = records.iter().map(|r| r.ms).sum::<f64>() / n;
    let present: Vec<usize> = records.iter().map(|r| r.objects.iter().filter(|o| o.present).count()).collect();
    let summary = format!(
        "tracked {} frames, {} objects: mean {:.1} ms/frame (encode {:.1} + track {:.1}); objects present per frame: {}; \
         masks in {}",
        records.len(),
        objects.len(),
        mean_ms,
        records.iter().map(|r| r.encode_ms).sum::<f64>() / n,
        records.iter().map(|r| r.track_ms).sum::<f64>() / n,
        present.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" "),
        args.out.display()
    );
    if args.json {
        let doc = serde_json::json!({
            "frames": records, "objects": objects, "width": first.0, "height": first.1, "keep_frames": keep,
            "mean_ms": mean_ms, "both_ways": args.both_ways,
        });
        say!("{}", serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?);
        note!("{summary}");
    } else {
        say!("{summary}");
    }
    Ok(())
}

/// Where the frames come from: image files, or a DICOM/NIfTI volume's slices.
struct Frames<'a> {
    files: &'a [PathBuf],
    names: &'a [String],
    volume: Option<&'a Volume>,
    display: Option<(f64, f64)>,
}

impl Frames<'_> {
    /// Frame `t`: its display image (for overlays) and its pixels for the tracker.
    fn read(&self, t: usize) -> CliResult<(image::RgbImage, Pixels)> {
        debug_assert_eq!(self.files.len(), self.names.len());
        Ok(match self.volume {
            Some(v) => {
                let slice = v.slice(t)?;
                (slice.display_rgb(self.display), slice.pixels())
            }
            None => {
                let decoded = decode(&self.files[t])?;
                (display_rgb(&decoded), Pixels::of(&decoded))
            }
        })
    }
}

/// Writes each frame's masks (and overlay), and keeps a volume's masks for its mask volumes.
struct Writer<'a> {
    args: &'a TrackArgs,
    volume: bool,
    /// (frame, object, mask) of a volume.
    mask_volumes: Vec<(usize, i32, Vec<u8>)>,
    records: Vec<FrameRecord>,
    annotator: Option<crate::annotate::Annotator>,
}

impl Writer<'_> {
    fn write(
        &mut self,
        fm: &FrameMasks,
        img: &image::RgbImage,
        path: &Path,
        name: &str,
        encode_ms: f64,
        track_ms: f64,
    ) -> CliResult<FrameRecord> {
        let (w, h) = (fm.width, fm.height);
        let mut labels = vec![0u8; w * h];
        let mut objs = Vec::with_capacity(fm.objects.len());
        for (k, ob) in fm.objects.iter().enumerate() {
            let mask_path = self.args.out.join(format!("{name}_obj{}.png", ob.object_id));
            let area = ob.mask.iter().filter(|v| **v > 0).count();
            if self.args.overlay {
                let label = (k + 1).min(254) as u8;
                for (l, m) in labels.iter_mut().zip(&ob.mask) {
                    if *m > 0 {
                        *l = label;
                    }
                }
            }
            if self.volume {
                self.mask_volumes.push((fm.frame, ob.object_id, ob.mask.clone()));
            }
            GrayImage::from_raw(w as u32, h as u32, ob.mask.clone())
                .ok_or("mask size mismatch")?
                .save(&mask_path)
                .map_err(|e| format!("cannot write {}: {e}", mask_path.display()))?;
            objs.push(ObjectRecord { object_id: ob.object_id, present: ob.present, score: ob.score, mask: mask_path, area });
        }
        if self.args.overlay {
            let out = self.args.out.join(format!("{name}_overlay.png"));
            let labels = GrayImage::from_raw(w as u32, h as u32, labels).ok_or("mask size mismatch")?;
            make_overlay(img, &labels).save(&out).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        }
        if let Some(a) = &mut self.annotator {
            crate::annotate::add_frame(a, fm, path, name)?;
        }
        Ok(FrameRecord { frame: fm.frame, file: path.to_path_buf(), ms: encode_ms + track_ms, encode_ms, track_ms, objects: objs })
    }
}

fn frame_line(r: &FrameRecord, name: &str) -> String {
    let objs: Vec<String> = r
        .objects
        .iter()
        .map(|o| {
            format!(
                "obj {} {} (score {}, {} px)",
                o.object_id,
                if o.present { "present" } else { "absent" },
                o.score.map_or("-".to_string(), |s| format!("{s:.3}")),
                o.area
            )
        })
        .collect();
    format!("frame {:>4} {:<16} {:>7.1} ms | {}", r.frame, name, r.ms, objs.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::wildcard;

    fn m(p: &str, n: &str) -> bool {
        wildcard(&p.chars().collect::<Vec<_>>(), &n.chars().collect::<Vec<_>>())
    }

    #[test]
    fn wildcards_match_whole_names() {
        assert!(m("*.png", "00001.png"));
        assert!(!m("*.png", "00001.png.bak"));
        assert!(m("0000?.png", "00007.png"));
        assert!(!m("0000?.png", "00010.png"));
        assert!(m("f[0-2]*", "f1x"));
        assert!(!m("f[!0-2]*", "f1x"));
        assert!(m("a[bc]", "ac"));
    }
}
