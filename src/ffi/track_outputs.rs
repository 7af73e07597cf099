//! What the frame-producing track exports write: every object of a frame into the caller's records
//! and masks (checked before anything runs), the count and the call's figures.

use crate::error::{Error, ErrorKind, Result};
use crate::image::MaskMut;
use crate::sam2::video::{FrameMasks, ModuleTimes, Tracker};

use super::boundary::caller_slice;
use super::images::SegMask;
use super::track_lock::as_before_if_cancelled;
use super::track_types::{SegTrackInfo, SegTrackObject};
use super::versioned::{out_size, record_array, write_records, write_versioned};

/// # Safety
/// `info` must be NULL or valid for `size` bytes.
pub(super) unsafe fn write_info(info: *mut SegTrackInfo, size: usize, frame: usize, objects: usize, t: &ModuleTimes) {
    let record = SegTrackInfo {
        struct_size: 0, // the caller's is kept
        objects: objects as u32,
        frame: frame as i64,
        preprocess_ms: t.preprocess_ms,
        image_encoder_ms: t.image_encoder_ms,
        memory_attention_ms: t.memory_attention_ms,
        mask_decoder_ms: t.mask_decoder_ms,
        memory_encoder_ms: t.memory_encoder_ms,
        postprocess_ms: t.postprocess_ms,
    };
    // SAFETY: forwarded from the caller.
    unsafe { write_versioned(&record, info, size) };
}

/// The caller's buffers for every object of one frame.
pub(super) struct FrameOutputs {
    pub(super) objects: *mut SegTrackObject,
    pub(super) object_size: usize,
    pub(super) masks: *const SegMask,
    pub(super) capacity: usize,
    pub(super) count: *mut usize,
    pub(super) info: *mut SegTrackInfo,
}

impl FrameOutputs {
    /// Checks every buffer for `n` objects on frames of `size` before anything runs; returns the
    /// masks to fill and the info size.
    ///
    /// # Safety
    /// The pointers must be valid as `seg_track_frame` states.
    pub(super) unsafe fn check<'a>(&self, n: usize, size: Option<(usize, usize)>) -> Result<(Vec<MaskMut<'a>>, usize)> {
        // SAFETY: NULL or a valid `SegTrackInfo` (the contract).
        let info_size = unsafe { out_size(self.info)? };
        if !self.objects.is_null() {
            record_array::<SegTrackObject>(self.object_size, self.capacity, "SegTrackObject")?;
        }
        let wants_records = !self.objects.is_null() || !self.masks.is_null();
        if wants_records && self.capacity < n {
            if !self.count.is_null() {
                // SAFETY: not NULL, so writable (the contract).
                unsafe { self.count.write(n) };
            }
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                format!("the output arrays hold {} objects, the track has {n} (the count is in *out_count)", self.capacity),
            ));
        }
        let mut masks = Vec::new();
        if !self.masks.is_null() {
            // SAFETY: `capacity` >= n masks are readable (checked above and the contract).
            for (i, m) in unsafe { caller_slice(self.masks, n, "out_masks")? }.iter().enumerate() {
                // SAFETY: each mask describes writable rows (the contract).
                let mask = unsafe { m.target() }.map_err(|e| e.context(format!("out_masks[{i}]")))?;
                if let Some((w, h)) = size {
                    if (mask.width(), mask.height()) != (w, h) {
                        return Err(Error::invalid(format!(
                            "out_masks[{i}] is {}x{} but the frames are {w}x{h}: every mask must have the frame's size",
                            mask.width(),
                            mask.height()
                        )));
                    }
                }
                masks.push(mask);
            }
        }
        Ok((masks, info_size))
    }

    /// Checks the buffers for `n` objects on frames of `size`, runs `call` (one frame's outputs) and
    /// writes them with the time `call` took.
    ///
    /// # Safety
    /// As for `check`.
    pub(super) unsafe fn run(
        &self,
        tracker: &mut Tracker,
        n: usize,
        size: Option<(usize, usize)>,
        call: impl FnOnce(&mut Tracker) -> Result<FrameMasks>,
    ) -> Result<()> {
        // SAFETY: forwarded from the caller.
        let (masks, info_size) = unsafe { self.check(n, size)? };
        let before = tracker.timings();
        let fm = as_before_if_cancelled(tracker, call)?;
        let mut masks = masks;
        // SAFETY: forwarded from the caller; the buffers were checked for the frame's objects.
        unsafe { self.write(&fm, &mut masks, info_size, &tracker.timings().since(&before)) }
    }

    /// Writes the frame's records, masks, count and info.
    ///
    /// # Safety
    /// As for `check`.
    pub(super) unsafe fn write(&self, fm: &FrameMasks, masks: &mut [MaskMut<'_>], info_size: usize, times: &ModuleTimes) -> Result<()> {
        let n = fm.objects.len();
        if (!self.objects.is_null() && self.capacity < n) || (!self.masks.is_null() && masks.len() != n) {
            return Err(Error::internal(format!("{n} objects on the frame, buffers checked for {}", masks.len())));
        }
        for (o, mask) in fm.objects.iter().zip(masks.iter_mut()) {
            for (y, row) in o.mask.chunks_exact(fm.width).enumerate() {
                mask.row_mut(y).copy_from_slice(row);
            }
        }
        if !self.objects.is_null() {
            let records: Vec<SegTrackObject> =
                fm.objects.iter().map(|o| record(o.object_id, o.score, o.present, &o.mask, fm.width)).collect();
            // SAFETY: `capacity` >= n records of `object_size` bytes (checked above and the contract).
            unsafe { write_records(self.objects, self.object_size, &records) };
        }
        if !self.count.is_null() {
            // SAFETY: not NULL, so writable (the contract).
            unsafe { self.count.write(n) };
        }
        // SAFETY: `info_size` bytes of `info`, checked by `out_size`.
        unsafe { write_info(self.info, info_size, fm.frame, n, times) };
        Ok(())
    }
}

/// An object's record: score, presence, area and box of its mask (`width` pixels per row).
fn record(object_id: i32, score: Option<f32>, present: bool, mask: &[u8], width: usize) -> SegTrackObject {
    let mut r = SegTrackObject { object_id, present: present as u32, has_output: score.is_some() as u32, ..Default::default() };
    r.score = score.unwrap_or(0.0);
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for (y, row) in mask.chunks_exact(width.max(1)).enumerate() {
        let Some(first) = row.iter().position(|v| *v != 0) else { continue };
        let last = row.iter().rposition(|v| *v != 0).unwrap_or(first);
        r.area += row[first..=last].iter().filter(|v| **v != 0).count() as u64;
        (x0, x1) = (x0.min(first), x1.max(last));
        (y0, y1) = (y0.min(y), y);
    }
    if r.area > 0 {
        (r.x0, r.y0, r.x1, r.y1) = (x0 as i32, y0 as i32, x1 as i32, y1 as i32);
    }
    r
}
