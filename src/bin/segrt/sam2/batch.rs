//! `segrt sam2` over many images (several files, folders, or any of --shard/--resume/--log): the
//! same prompts on each image (clicks, boxes, or --everything), masks into the --out folder, and
//! the annotation files; and the annotation files of a single-image run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use image::{GrayImage, ImageBuffer, Luma};

use segrt::contours::MaskView;
use segrt::sam2::{Prompt, Sam2Segmenter};

use super::{click_prompt, everything_options, load_pair, prompt_batch, read_boxes, Sam2Args};
use crate::annotate::objects::{self, Object, Shapes};
use crate::annotate::{categories, Annotator};
use crate::batch::save_png;
use crate::files::{decode, display_rgb, list_images, make_overlay, output_names, Pixels};
use crate::folder_run::{Done, FolderRun};
use crate::{medical, CliResult};

/// A single-image run's annotations: beside its mask (in --out with several boxes), or in
/// --annotations-dir; None without --annotations.
fn one_annotator(args: &Sam2Args) -> CliResult<Option<Annotator>> {
    let dir = if args.boxes.is_some() || args.bbox.len() > 1 {
        args.out.as_path()
    } else {
        args.out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
    };
    let a = Annotator::start(&args.run_args.annotate, "sam2", dir, categories(&args.run_args.annotate, 1)?, None)?;
    if let Some(a) = &a {
        a.check_image(&crate::files::stem(&args.images[0]), false)?;
    }
    Ok(a)
}

/// Refuses, before the models load, annotation files a single-image run would overwrite.
pub fn check_one(args: &Sam2Args) -> CliResult {
    one_annotator(args).map(|_| ())
}

/// Writes the annotation files of a single-image run.
pub fn annotate_one(args: &Sam2Args, size: (usize, usize), make: impl FnOnce(Shapes) -> CliResult<Vec<Object>>) -> CliResult {
    let Some(mut a) = one_annotator(args)? else { return Ok(()) };
    let image = &args.images[0];
    let name = crate::files::stem(image);
    let found = make(a.shapes)?;
    a.add(1, image, &name, size, &found)?;
    note!("{}", a.finish()?);
    Ok(())
}

/// What each image gets.
enum Mode {
    Click(Prompt),
    Boxes(Vec<Prompt>),
    Everything(segrt::sam2::EverythingOptions),
}

pub fn sam2_batch(args: Sam2Args, ort: Option<PathBuf>) -> CliResult {
    if let Some(p) = args.images.iter().find(|p| medical::is_medical(p)) {
        return Err(format!(
            "{}: DICOM and NIfTI inputs are segmented one at a time (give one input, without --shard/--resume/--log)",
            p.display()
        )
        .into());
    }
    if args.json.is_some() || args.slice.is_some() {
        return Err("--json and --slice take one image: a batch records each image in its log (--log)".into());
    }
    let inputs = list_images(&args.images)?;
    if inputs.is_empty() {
        return Err("no image files found in the given inputs".into());
    }
    let names = output_names(&inputs)?;
    let mode = if args.everything {
        Mode::Everything(everything_options(&args)?)
    } else if args.boxes.is_some() || args.bbox.len() > 1 {
        Mode::Boxes(read_boxes(&args)?.into_iter().map(|b| Prompt { bbox: Some(b), ..Prompt::default() }).collect())
    } else {
        Mode::Click(click_prompt(&args)?)
    };
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create the --out folder {}: {e}", args.out.display()))?;
    if let Some(o) = &args.overlay {
        std::fs::create_dir_all(o).map_err(|e| format!("cannot create the --overlay folder {}: {e}", o.display()))?;
    }
    let mut run = FolderRun::start(&args.run_args, "sam2", &args.out, categories(&args.run_args.annotate, 1)?, &inputs, &names)?;
    let sam = load_pair(&args, ort, args.run_args.intensity.intensity()?, prompt_batch)?;
    for (i, (path, name)) in inputs.iter().zip(&names).enumerate() {
        if !run.todo(path) {
            continue;
        }
        let started = Instant::now();
        let shapes = run.shapes();
        let outcome = one_image(&sam, &args, &mode, path, name, shapes);
        match run.finish_input(i, path, name, started, outcome)? {
            Some(e) => note!("segrt: error: {}: {e}", path.display()),
            None => note!("{}: done in {:.0} ms", path.display(), started.elapsed().as_secs_f64() * 1e3),
        }
    }
    let failures = run.failures;
    for line in run.finish()? {
        note!("{line}");
    }
    if failures > 0 {
        return Err(format!("{failures} image(s) failed").into());
    }
    Ok(())
}

/// One image: the prompts, the masks written, the objects.
fn one_image(sam: &Sam2Segmenter, args: &Sam2Args, mode: &Mode, path: &Path, name: &str, shapes: Option<Shapes>) -> CliResult<Done> {
    let img = decode(path)?;
    let pixels = Pixels::of(&img);
    let (w, h) = (pixels.width, pixels.height);
    let view = pixels.view()?;
    let mut outputs = Vec::new();
    let mut found = Vec::new();
    let mut union = GrayImage::new(w as u32, h as u32);
    match mode {
        Mode::Click(prompt) => {
            let mut out = sam.predict(Some(&view), prompt, false).map_err(|e| e.to_string())?;
            if args.refine {
                let refined = Prompt { refine: true, ..prompt.clone() };
                out = sam.predict(Some(&view), &refined, false).map_err(|e| e.to_string())?;
            }
            let score = out.run.scores[out.run.chosen] as f64;
            union = GrayImage::from_raw(w as u32, h as u32, out.mask).ok_or("mask size mismatch")?;
            let p = args.out.join(format!("{name}_mask.png"));
            save_png(&union, &p)?;
            outputs.push(p);
            if let Some(s) = shapes {
                found.extend(objects::whole(&MaskView::new(union.as_raw(), w, h, 0)?, s, 1, Some(score), None)?);
            }
        }
        Mode::Boxes(prompts) => {
            let mut buffers: Vec<Vec<u8>> = prompts.iter().map(|_| vec![0u8; w * h]).collect();
            let mut masks = buffers.iter_mut().map(|b| segrt::MaskMut::new(b, w, h, 0)).collect::<Result<Vec<_>, _>>()?;
            let result = sam.predict_many(Some(&view), prompts, &mut masks).map_err(|e| e.to_string())?;
            drop(masks);
            for (k, (mask, score)) in buffers.into_iter().zip(&result.scores).enumerate() {
                for (u, m) in union.iter_mut().zip(&mask) {
                    *u |= *m;
                }
                if let Some(s) = shapes {
                    found.extend(objects::whole(&MaskView::new(&mask, w, h, 0)?, s, 1, Some(*score as f64), None)?);
                }
                let p = args.out.join(format!("{name}_box_{:04}.png", k + 1));
                save_png(&GrayImage::from_raw(w as u32, h as u32, mask).ok_or("mask size mismatch")?, &p)?;
                outputs.push(p);
            }
        }
        Mode::Everything(opts) => {
            let (result, _) = sam.everything(Some(&view), opts).map_err(|e| e.to_string())?;
            let mut labels = vec![0u16; w * h];
            result.paint(&mut labels, w);
            if let Some(s) = shapes {
                let scores: Vec<f64> = result.objects.iter().map(|o| o.predicted_iou as f64).collect();
                found = objects::per_label(&MaskView::new(&labels, w, h, 0)?, s, |l| scores.get(l as usize - 1).map(|v| (1, Some(*v))))?;
            }
            for (u, l) in union.iter_mut().zip(&labels) {
                *u = if *l == 0 { 0 } else { (*l % 250) as u8 + 1 };
            }
            let p = args.out.join(format!("{name}_labels.png"));
            let label_img: ImageBuffer<Luma<u16>, Vec<u16>> =
                ImageBuffer::from_raw(w as u32, h as u32, labels).ok_or("label size mismatch")?;
            save_png(&label_img, &p)?;
            outputs.push(p);
        }
    }
    if let Some(dir) = &args.overlay {
        let p = dir.join(format!("{name}_overlay.png"));
        save_png(&make_overlay(&display_rgb(&img), &union), &p)?;
        outputs.push(p);
    }
    Ok(Done { outputs, size: (w, h), objects: found })
}
