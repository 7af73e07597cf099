/* segrt from HALCON/C: segment a HALCON byte, uint2, int2 or real image with a UNet and get the mask back as a HALCON image
 * and region. See README.md in this folder for the call sequence and what was (not) tested.
 *
 * Every function returns H_MSG_TRUE on success. A segrt failure returns SEGRT_H_ERR(status), a code
 * above 10000 as HALCON asks of user-defined errors, after handing segrt's message (seg_last_error) to
 * HSetErrText, so the next get_error_text(code, msg) gives it; seg_last_error() on the same thread
 * gives it too. Errors of HALCON operators called by the glue are returned unchanged. */
#ifndef SEGRT_HALCON_H
#define SEGRT_HALCON_H

#ifdef SEGRT_HALCON_STANDIN
#include "halcon_standin.h"   /* the tests on a machine without HALCON */
#else
#include "HalconC.h"          /* HALCON/C; HSetErrText is declared in HError.h (Extension Package Interface) */
#endif
#include "segrt.h"

/* HALCON leaves codes above 10000 to extensions; segrt's status values are below 100. */
#ifndef SEGRT_H_ERR_BASE
#define SEGRT_H_ERR_BASE 10100
#endif
#define SEGRT_H_ERR(status) ((Herror)(SEGRT_H_ERR_BASE + (status)))

/* Checks the ABI, loads ONNX Runtime (beside libsegrt, see docs/src/guide/finding-onnx-runtime.md) and opens a UNet model
 * (UTF-8 path). Release the session with segrt_halcon_close. */
Herror segrt_halcon_open(const char *model_path, SegSession **out_session);

/* Segments `image` (a "byte", "uint2", "int2" or "real" image with 1 channel, gray, or 3 channels, R G B
 * as HALCON keeps them; the planes go to segrt as they are). uint2, int2 and real values reach the model
 * through the session's intensity stage (segrt_halcon_set_intensity; default: each image's min-max).
 * Outputs (each may be NULL, not both; written only on success; the caller clears them with clear_obj):
 *   mask_image: a "byte" image of the same size, 255 = foreground (multi-class models: the class index);
 *   region:     the foreground (every pixel that is not 0), as threshold(mask, region, 1, 255) gives it.
 * The whole image matrix is segmented; a reduced domain is ignored. Any thread (HALCON/C rules apply). */
Herror segrt_halcon_segment(Hobject image, SegSession *session, Hobject *mask_image, Hobject *region);

/* Releases the session (NULL is fine). */
Herror segrt_halcon_close(SegSession *session);

/* The intensity stage of any session of the glue (UNet, SAM or the video session of a track): how the
 * values of uint2, int2 and real images (and, once set, byte images) reach the model, for every later
 * call; NULL = segrt's default (byte images unchanged, others by each image's min-max to 0..255). See
 * SegIntensity in segrt.h. A bad setting fails with SEGRT_H_ERR(SEG_INVALID_ARGUMENT), the one in force
 * kept. Any thread. */
Herror segrt_halcon_set_intensity(SegSession *session, const SegIntensity *intensity);

/* The same with a window given as centre and width (DICOM WindowCenter/WindowWidth, in pixel values) and
 * the used bits of uint2/int2 images (HALCON records them with the image, e.g. 12; 0 = all 16): values
 * above the used bits are refused, not masked. Output 0..255, no rescale. */
Herror segrt_halcon_set_window(SegSession *session, double centre, double width, Hlong used_bits);

/* ---- Interactive SAM on one image (a SAM2 or SAM1-style encoder + decoder pair, see
 * docs/src/pipelines/sam2.md). Coordinates are HALCON's (Row, Column) = segrt's (y, x). ---- */

/* Opens an image-encoder + prompt-decoder pair (UTF-8 paths). Release with segrt_halcon_sam_close. */
Herror segrt_halcon_sam_open(const char *encoder_path, const char *decoder_path, SegSession **out_session);

/* Optional: encodes `image` (byte, uint2, int2 or real, 1 or 3 channels, as for segrt_halcon_segment) now, e.g. when the
 * user opens it, so that the clicks on it only run the decoder. */
Herror segrt_halcon_sam_set_image(Hobject image, SegSession *session);

/* Segments the object at one click and/or inside one box on `image` (the encoder runs only when its
 * pixels differ from the image encoded last).
 *   row, column: the click, inside the image; label 1 = the object, 0 = not the object, -1 = no click;
 *   box: NULL, or {Row1, Column1, Row2, Column2} (rectangle1 order, image pixels);
 *   mask_image, region: as for segrt_halcon_segment (mask 255 = the object; each may be NULL, not both;
 *   written only on success). */
Herror segrt_halcon_sam_segment(Hobject image, SegSession *session, double row, double column, Hlong label,
                                const double *box, Hobject *mask_image, Hobject *region);

/* Many objects in one call (seg_sam2_segment_prompts): one region per box, e.g. a detector's boxes.
 *   boxes: n_boxes x {Row1, Column1, Row2, Column2} (rectangle1 order, image pixels), 1 to 4096 boxes;
 *   regions: an array of n_boxes Hobject receiving box k's region in regions[k] (concat_obj them for an
 *   object tuple); written only on success, all or none; the caller clears each with clear_obj.
 * The encoder runs once (only when the pixels differ from the image encoded last), the decoder once for
 * all boxes where the decoder export has a prompt batch axis; each region equals segrt_halcon_sam_segment's
 * for that box alone. */
Herror segrt_halcon_sam_segment_boxes(Hobject image, SegSession *session, const double *boxes, Hlong n_boxes, Hobject *regions);

/* Releases the session (NULL is fine). */
Herror segrt_halcon_sam_close(SegSession *session);

/* ---- SAM2 tracking through video frames or the slices of a volume (see
 * docs/src/pipelines/sam2-tracking.md). Frames are byte, uint2, int2 or real images of 1 or 3 channels,
 * all of one size, added in order (set a fixed window on the video session for uint2/int2/real frames:
 * segrt_halcon_set_window(video, ...); min-max would stretch each frame on its own). Coordinates are HALCON's (Row, Column) = segrt's (y, x). ---- */

/* Loads the video modules in `models_dir` (UTF-8) and starts a track on them (default options: the
 * last 8 frames held). Release both with segrt_halcon_track_close. */
Herror segrt_halcon_track_open(const char *models_dir, SegSession **out_video, SegTrack **out_track);

/* Adds the next frame (or slice); *frame (optional) receives its index 0, 1, ... */
Herror segrt_halcon_track_add(Hobject image, SegTrack *track, Hlong *frame);

/* Prompts object `object_id` on frame `frame` (-1 = the last frame added) with one click (label 1 =
 * the object, 0 = not the object); `region` (optional) receives the object's region on that frame. */
Herror segrt_halcon_track_click(SegTrack *track, Hlong frame, Hlong object_id, double row, double column, Hlong label,
                                Hobject *region);

/* Tracks frame `frame` (-1 = the last added; frames in order, from the first prompted one) and gives
 * the region of object `object_id` there (empty when the object is hidden) and, optionally, whether
 * SAM2 sees it (`present`: 1 or 0). */
Herror segrt_halcon_track_frame(SegTrack *track, Hlong frame, Hlong object_id, Hobject *region, Hlong *present);

/* Releases the track and the video session (either may be NULL). */
Herror segrt_halcon_track_close(SegSession *video, SegTrack *track);

/* ---- Volumes: click a structure on one slice, propagate it up and down the volume, correct a slice,
 * propagate again (see docs/src/pipelines/sam2-tracking.md, "The volume workflow"). A volume's slices
 * are kept (8-bit RGB after the intensity stage) and encoded when first needed, so every slice stays
 * reachable both ways. Clicks and corrections: segrt_halcon_track_click on any slice. Release with
 * segrt_halcon_track_close. ---- */

/* Loads the video modules in `models_dir` (UTF-8) and starts an empty volume track for `n_slices`
 * slices (0 = not known yet); the `keep_slices` most recently used slice encodings are cached (0 =
 * segrt's default, 8). A click on a slice already propagated makes it a conditioning slice
 * (SegTrackOptions.corrections_as_conditioning), so propagating again keeps the correction there. For uint2/int2/real slices set a fixed window on *out_video before adding them. */
Herror segrt_halcon_volume_open(const char *models_dir, Hlong n_slices, Hlong keep_slices, SegSession **out_video, SegTrack **out_track);

/* Adds `n_slices` slices in order (slices[k], e.g. each object of a HALCON image tuple picked with
 * select_obj; images as for segrt_halcon_track_add, all of one size). Stops at the first slice refused
 * (the ones before it stay added). */
Herror segrt_halcon_volume_add(const Hobject *slices, Hlong n_slices, SegTrack *track);

/* Propagates every object through the volume from slice `start_slice` (an index; -1 = the last slice)
 * in `direction` (SEG_TRACK_FORWARD, SEG_TRACK_REVERSE or SEG_TRACK_BOTH_WAYS: up to the last slice,
 * then from the start slice down to 0), and gives object `object_id`'s region on every slice reached:
 *   regions: an array of n_regions Hobject (n_regions = the slices added), regions[k] = slice k's region
 *            (empty where the object is hidden); concat_obj them for an object tuple;
 *   present: NULL, or n_regions Hlong: 1 = the object is seen on slice k, 0 = hidden, -1 = slice k was
 *            not reached (regions[k] is then not written).
 * Written only on success, all or none; the caller clears each region written with clear_obj. Every
 * object is tracked (call again with the start slice's index and another object id, or use
 * seg_track_propagate directly, for several objects' regions from one pass). */
Herror segrt_halcon_volume_propagate(SegTrack *track, Hlong start_slice, Hlong direction, Hlong object_id, Hobject *regions,
                                     Hlong *present, Hlong n_regions);

/* ---- Outlines as XLD contours (beside the regions above): a mask's regions traced by segrt
 * (seg_mask_regions: OpenCV's findContours chains), each outline a closed polygon contour as
 * gen_contour_polygon_xld makes it, its first point repeated at the end. Points are pixel centres in
 * (Row, Column), as gen_contour_region_xld(Region, Contour, 'border') gives them. ---- */
/* The outlines of `mask_image` (a "byte" image, e.g. segrt_halcon_segment's or segrt_halcon_sam_segment's
 * mask_image; every pixel that is not 0 is foreground, 8-connected):
 *   tolerance:  0 = every border pixel; > 0 = simplified, no border pixel farther than this (pixels);
 *   contours:   an array of `capacity` Hobject receiving one contour per outline: each region's outer
 *               outline, then its holes (concat_obj them for a contour tuple);
 *   is_hole:    NULL, or `capacity` Hlong receiving 1 for a hole's outline, 0 for an outer one;
 *   n_contours: receives the number of outlines (also when `capacity` is too small, as a size query
 *               with capacity 0).
 * A capacity below the number is SEGRT_H_ERR(SEG_BUFFER_TOO_SMALL) with *n_contours set and nothing else
 * written; a negative or NaN tolerance SEGRT_H_ERR(SEG_INVALID_ARGUMENT). Written only on success; the
 * caller clears each contour with clear_obj. */
Herror segrt_halcon_contours(Hobject mask_image, double tolerance, Hobject *contours, Hlong *is_hole, Hlong capacity,
                             Hlong *n_contours);

/* ---- Teach once, find it in every image (see docs/src/pipelines/sam2-reference.md) on a SAM session from
 * segrt_halcon_sam_open: a reference is taught from a region on an image (the taught mask) and finds the
 * same object or part in new images without a click, as regions. A reference holds embeddings, not
 * images; any thread may find with it at once. ---- */

/* Teaches a new reference from `image` (as for segrt_halcon_segment) and the object's `region` on it (the
 * part outside the image is dropped), encoded on `sam`. An empty region or one covering the whole image
 * fails with SEGRT_H_ERR(SEG_INVALID_ARGUMENT). Release the reference with segrt_halcon_reference_close. */
Herror segrt_halcon_reference_teach(Hobject image, Hobject region, SegSession *sam, SegReference **out_reference);

/* Teaches one more example (another view, another copy); later finds use all of them. A session of
 * another model fails with SEGRT_H_ERR(SEG_MODEL_UNSUPPORTED); on a failure the reference is as before. */
Herror segrt_halcon_reference_add(SegReference *reference, Hobject image, Hobject region, SegSession *sam);

/* Saves the reference to `path` (UTF-8), written whole or not at all: a station teaches once. */
Herror segrt_halcon_reference_save(SegReference *reference, const char *path);

/* Loads a reference saved by segrt_halcon_reference_save, for `sam`'s model: a missing file fails with
 * SEGRT_H_ERR(SEG_MODEL_NOT_FOUND), a damaged one SEG_MODEL_INVALID, one of another model SEG_MODEL_UNSUPPORTED. */
Herror segrt_halcon_reference_load(SegSession *sam, const char *path, SegReference **out_reference);

/* Finds the taught object in `image` on `sam` (the encoder runs only when the pixels differ from the
 * image encoded last).
 *   all:       0 = the best match: one region (empty when the object is absent), *n_found = 1;
 *              1 = every instance whose score reaches the threshold, best first, at most `capacity`;
 *   threshold: the presence threshold 0..1; negative = segrt's default (0.6);
 *   regions:   an array of `capacity` Hobject receiving one region per match (concat_obj them for a tuple);
 *   scores:    NULL, or `capacity` doubles receiving each match's score (0..1);
 *   present:   NULL, or `capacity` Hlong receiving 1 when the match reaches the threshold (always 1 for all = 1);
 *   capacity:  1 .. 65535; n_found receives the number of regions written.
 * Written only on success, all or none; the caller clears each region with clear_obj. */
Herror segrt_halcon_reference_find(SegReference *reference, Hobject image, SegSession *sam, Hlong all, double threshold,
                                   Hobject *regions, double *scores, Hlong *present, Hlong capacity, Hlong *n_found);

/* Releases the reference (NULL is fine). */
Herror segrt_halcon_reference_close(SegReference *reference);

#endif /* SEGRT_HALCON_H */
