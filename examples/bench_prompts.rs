//! Many objects in one call against one call per object (figures, not assertions), through the C ABI
//! as a host calls it:
//!
//!   cargo run --release --example bench_prompts -- [--sam2 DIR] [--encoder FILE] [--decoder FILE]... [--runs 7]
//!
//! On a 1920x1080 picture (encoded once beforehand: both sides use the cached embedding), for 1, 4, 16
//! and 64 boxes: one `seg_sam2_segment_prompts` call against the same number of `seg_run_sam2_points`
//! calls, the median of `--runs` repetitions of each (alternating), the ratio, the decoder runs the
//! batched call made, and its decoder and upsampling times (each mask is upsampled from the decoder's
//! low-res logits to 1920x1080 and thresholded, the same work as a single call's). Defaults: the tiny fixtures in models/sam2 (the sam2-onnx encoder with its
//! batched and its one-prompt decoder); `--sam2 DIR` takes `DIR/encoder.onnx` and
//! `DIR/decoder*.onnx` instead (e.g. a real-size export).

use std::ffi::CString;
use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

use segrt::ffi::*;

fn last_error() -> String {
    let mut buf = vec![0u8; 4096];
    unsafe { seg_last_error(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn check(st: SegStatus, what: &str) -> Result<(), String> {
    if st == SegStatus::SEG_OK {
        Ok(())
    } else {
        Err(format!("{what}: {st:?}: {}", last_error()))
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `n` boxes spread over a `w` x `h` picture, each about a tenth of it, none alike.
fn boxes(n: usize, w: usize, h: usize) -> Vec<SegBox> {
    (0..n)
        .map(|i| {
            let (gx, gy) = (i % 8, (i / 8) % 8);
            let x1 = (gx as f32 + 0.1) * w as f32 / 8.0;
            let y1 = (gy as f32 + 0.1) * h as f32 / 8.0;
            let grow = 1.0 + (i % 5) as f32 * 0.3;
            SegBox { x1, y1, x2: (x1 + grow * w as f32 / 10.0).min(w as f32), y2: (y1 + grow * h as f32 / 10.0).min(h as f32) }
        })
        .collect()
}

fn main() -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/sam2");
    let mut encoder = root.join("sam2_tiny_sam2onnx_encoder.onnx");
    let mut decoders: Vec<PathBuf> = Vec::new();
    let mut runs = 7usize;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--sam2" => {
                let dir = PathBuf::from(&value);
                encoder = dir.join("encoder.onnx");
                let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .map_err(|e| format!("{value}: {e}"))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("decoder")))
                    .collect();
                found.sort();
                decoders.extend(found);
            }
            "--encoder" => encoder = value.into(),
            "--decoder" => decoders.push(value.into()),
            "--runs" => runs = value.parse::<usize>().map_err(|_| format!("--runs: '{value}' is not a whole number"))?.max(1),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if decoders.is_empty() {
        decoders = vec![root.join("sam2_tiny_sam2onnx_batched_decoder.onnx"), root.join("sam2_tiny_sam2onnx_decoder.onnx")];
    }
    let (w, h) = (1920usize, 1080usize);
    let pixels: Vec<u8> = (0..w * h * 3).map(|i| ((i / 3 % w) * 7 / 8 + (i / 3 / w) / 3 + (i % 3) * 40) as u8).collect();
    let img = SegImage {
        data: pixels.as_ptr(),
        width: w as i32,
        height: h as i32,
        stride: 0,
        format: SegPixelFormat::SEG_FORMAT_RGB24 as i32,
        plane1: ptr::null(),
        plane2: ptr::null(),
    };
    println!("{w}x{h} picture, encoded once; median of {runs} runs; one batched call vs N single calls");
    for decoder in &decoders {
        let (e, d) =
            (CString::new(encoder.to_string_lossy().as_bytes()).unwrap(), CString::new(decoder.to_string_lossy().as_bytes()).unwrap());
        let mut s = ptr::null_mut();
        check(unsafe { seg_create_sam2(e.as_ptr(), d.as_ptr(), ptr::null(), &mut s) }, "seg_create_sam2")?;
        check(unsafe { seg_sam2_set_image(s, &img, ptr::null_mut(), ptr::null_mut()) }, "seg_sam2_set_image")?;
        println!("\n{}:", decoder.file_name().unwrap().to_string_lossy());
        println!(
            "{:>6} {:>12} {:>12} {:>7} {:>13} {:>17} {:>14}",
            "boxes", "batched ms", "singles ms", "ratio", "decoder runs", "batched: decoder", "upsample ms"
        );
        for n in [1usize, 4, 16, 64] {
            let bxs = boxes(n, w, h);
            let prompts: Vec<SegSam2Prompt> =
                bxs.iter().map(|b| SegSam2Prompt { points: ptr::null(), n_points: 0, bbox: *b, has_box: 1, reserved: 0 }).collect();
            let mut bufs: Vec<Vec<u8>> = (0..n).map(|_| vec![0u8; w * h]).collect();
            let masks: Vec<SegMask> =
                bufs.iter_mut().map(|m| SegMask { data: m.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 }).collect();
            let (mut dec, mut post) = (Vec::new(), Vec::new());
            let mut info = SegSam2PromptsInfo { struct_size: std::mem::size_of::<SegSam2PromptsInfo>() as u32, ..Default::default() };
            let (mut batched, mut singles) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                let t = Instant::now();
                check(
                    unsafe {
                        seg_sam2_segment_prompts(
                            s,
                            ptr::null(),
                            prompts.as_ptr(),
                            std::mem::size_of::<SegSam2Prompt>(),
                            n,
                            masks.as_ptr(),
                            ptr::null_mut(),
                            &mut info,
                            ptr::null_mut(),
                        )
                    },
                    "seg_sam2_segment_prompts",
                )?;
                batched.push(t.elapsed().as_secs_f64() * 1e3);
                dec.push(info.decoder_ms);
                post.push(info.postprocess_ms);
                let t = Instant::now();
                for (b, m) in bxs.iter().zip(&masks) {
                    check(
                        unsafe {
                            seg_run_sam2_points(
                                s,
                                ptr::null(),
                                ptr::null(),
                                0,
                                b,
                                ptr::null(),
                                0,
                                0,
                                m,
                                ptr::null_mut(),
                                ptr::null_mut(),
                                ptr::null_mut(),
                            )
                        },
                        "seg_run_sam2_points",
                    )?;
                }
                singles.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let (b, si) = (median(batched), median(singles));
            println!(
                "{n:>6} {b:>12.2} {si:>12.2} {:>6.2}x {:>13} {:>14.2} ms {:>14.2}",
                si / b,
                info.decoder_runs,
                median(dec),
                median(post)
            );
        }
        unsafe { seg_free(s) };
    }
    Ok(())
}
