/* segrt from HALCON/C: the glue (see segrt_halcon.h). Written against the HALCON/C names; compiled and
 * tested here against halcon_standin.h (SEGRT_HALCON_STANDIN), never against a real HALCON. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segrt_halcon_internal.h"

/* Hands segrt's message for the calling thread's last failure to HALCON and returns the matching code. */
Herror segrt_halcon_status_error(SegStatus status) {
    char msg[MAX_STRING];   /* HALCON/C strings are at most MAX_STRING bytes; seg_last_error truncates */
    seg_last_error(msg, sizeof msg);
    HSetErrText(msg);
    return SEGRT_H_ERR(status);
}

/* A failure found by the glue itself (no segrt call made): same code range, our own text. */
Herror segrt_halcon_glue_error(SegStatus status, const char *text) {
    char msg[MAX_STRING];
    snprintf(msg, sizeof msg, "segrt_halcon: %.900s (%s)", text, seg_status_str(status));
    HSetErrText(msg);
    return SEGRT_H_ERR(status);
}

Herror segrt_halcon_open(const char *model_path, SegSession **out_session) {
    SegOptions opt = {.struct_size = sizeof opt};   /* segrt reads and writes only the size declared */
    SegStatus st;
    if (!out_session) return segrt_halcon_glue_error(SEG_NULL_POINTER, "out_session is NULL");
    /* A libsegrt built with another ABI than this header must not be called further. */
    if (seg_abi_version() != SEG_ABI_VERSION)
        return segrt_halcon_glue_error(SEG_RUNTIME_INIT_FAILED, "libsegrt ABI differs from segrt.h: rebuild the glue");
    st = seg_options_default(&opt);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    st = seg_create(model_path, &opt, out_session);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}

/* HALCON pixel types segrt reads, with their size and the segrt formats for 1 and 3 channels. */
static const struct {
    const char *type;
    int size;
    int32_t gray, planar;
} pixel_types[] = {
    {"byte", 1, SEG_FORMAT_GRAY8, SEG_FORMAT_PLANAR_RGB8},
    {"uint2", 2, SEG_FORMAT_GRAY16, SEG_FORMAT_PLANAR_RGB16},
    {"int2", 2, SEG_FORMAT_GRAY16S, SEG_FORMAT_PLANAR_RGB16S},
    {"real", 4, SEG_FORMAT_GRAY32F, SEG_FORMAT_PLANAR_RGB32F},
};

/* 1. Pixel pointers of a byte, uint2, int2 or real image of 1 or 3 channels. HALCON keeps one plane per
 *    channel with rows tightly packed (row stride = width * pixel size), so the planes go to segrt as they
 *    are: no interleaving copy, no conversion (segrt's intensity stage maps uint2/int2/real values). */
Herror segrt_halcon_image_view(Hobject image, SegImage *img, Hlong *out_width, Hlong *out_height) {
    char type[MAX_STRING], msg[MAX_STRING];
    Hlong channels = 0, width = 0, height = 0, red = 0, green = 0, blue = 0;
    size_t t, n_types = sizeof pixel_types / sizeof pixel_types[0];
    Herror err = count_channels(image, &channels);
    if (err != H_MSG_TRUE) return err;
    memset(img, 0, sizeof *img);
    if (channels == 3) {
        err = get_image_pointer3(image, &red, &green, &blue, type, &width, &height);
        if (err != H_MSG_TRUE) return err;
        img->data = (const uint8_t *)red;
        img->plane1 = (const uint8_t *)green;
        img->plane2 = (const uint8_t *)blue;
    } else if (channels == 1) {
        err = get_image_pointer1(image, &red, type, &width, &height);
        if (err != H_MSG_TRUE) return err;
        img->data = (const uint8_t *)red;
    } else {
        snprintf(msg, sizeof msg, "the image has %ld channels; segrt takes 1 (gray) or 3 (R, G, B)", (long)channels);
        return segrt_halcon_glue_error(SEG_UNSUPPORTED_FORMAT, msg);
    }
    for (t = 0; t < n_types; t++)
        if (strcmp(type, pixel_types[t].type) == 0) break;
    if (t == n_types) {
        snprintf(msg, sizeof msg,
                 "the image type is '%.32s'; segrt takes 'byte', 'uint2', 'int2' or 'real' (convert_image_type first)", type);
        return segrt_halcon_glue_error(SEG_UNSUPPORTED_FORMAT, msg);
    }
    img->format = channels == 3 ? pixel_types[t].planar : pixel_types[t].gray;
    if (width <= 0 || height <= 0 || width > INT32_MAX / pixel_types[t].size || height > INT32_MAX)
        return segrt_halcon_glue_error(SEG_IMAGE_TOO_LARGE, "the image size does not fit segrt's 32-bit width/height/stride");
    img->width = (int32_t)width;
    img->height = (int32_t)height;
    img->stride = (int32_t)width * pixel_types[t].size;   /* plane stride in bytes: HALCON rows have no padding */
    *out_width = width;
    *out_height = height;
    return H_MSG_TRUE;
}

Herror segrt_halcon_set_intensity(SegSession *session, const SegIntensity *intensity) {
    SegStatus st = seg_set_intensity(session, intensity);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}

Herror segrt_halcon_set_window(SegSession *session, double centre, double width, Hlong used_bits) {
    SegIntensity i;
    SegStatus st;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    if (used_bits < 0 || used_bits > 16) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "used_bits must be 0 (all) .. 16");
    st = seg_intensity_default(&i);
    if (st == SEG_OK) st = seg_intensity_set_window(&i, centre, width);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    i.bits = (uint32_t)used_bits;
    return segrt_halcon_set_intensity(session, &i);
}

/* 3. The mask as a HALCON byte image (gen_image1 copies the pixels, so the caller frees its buffer
 *    after), and the foreground as a region; each output only when asked for. */
Herror segrt_halcon_mask_outputs(const unsigned char *buf, Hlong width, Hlong height, Hobject *mask_image, Hobject *region) {
    Hobject mask_obj = NULL;
    Herror err = gen_image1(&mask_obj, "byte", width, height, (Hlong)buf);
    if (err != H_MSG_TRUE) return err;
    if (region) {
        err = threshold(mask_obj, region, 1.0, 255.0);
        if (err != H_MSG_TRUE) {
            clear_obj(mask_obj);
            return err;
        }
    }
    if (mask_image)
        *mask_image = mask_obj;
    else
        clear_obj(mask_obj);
    return H_MSG_TRUE;
}

Herror segrt_halcon_segment(Hobject image, SegSession *session, Hobject *mask_image, Hobject *region) {
    Hlong width = 0, height = 0;
    SegImage img;
    SegMask mask;
    SegStatus st;
    unsigned char *buf;
    Herror err;

    if (!mask_image && !region) return segrt_halcon_glue_error(SEG_NULL_POINTER, "mask_image and region are both NULL");
    err = segrt_halcon_image_view(image, &img, &width, &height);
    if (err != H_MSG_TRUE) return err;

    /* 2. segrt checks the rest (pixel limit, handle, model) and writes the mask only on success. */
    buf = malloc((size_t)width * (size_t)height);
    if (!buf) return segrt_halcon_glue_error(SEG_IMAGE_TOO_LARGE, "no memory for the mask");
    mask.data = buf;
    mask.width = img.width;
    mask.height = img.height;
    mask.stride = 0;
    st = seg_run_unet(session, &img, &mask, NULL, 0, NULL, NULL);
    if (st != SEG_OK) {
        free(buf);
        return segrt_halcon_status_error(st);
    }

    /* 3. */
    err = segrt_halcon_mask_outputs(buf, width, height, mask_image, region);
    free(buf);
    return err;
}

Herror segrt_halcon_close(SegSession *session) {
    SegStatus st = seg_free(session);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}

/* ---- interactive SAM on one image ---- */

Herror segrt_halcon_sam_open(const char *encoder_path, const char *decoder_path, SegSession **out_session) {
    SegStatus st;
    if (!out_session) return segrt_halcon_glue_error(SEG_NULL_POINTER, "out_session is NULL");
    if (seg_abi_version() != SEG_ABI_VERSION)
        return segrt_halcon_glue_error(SEG_RUNTIME_INIT_FAILED, "libsegrt ABI differs from segrt.h: rebuild the glue");
    st = seg_create_sam2(encoder_path, decoder_path, NULL, out_session);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}

Herror segrt_halcon_sam_set_image(Hobject image, SegSession *session) {
    Hlong width = 0, height = 0;
    SegImage img;
    SegStatus st;
    Herror err = segrt_halcon_image_view(image, &img, &width, &height);
    if (err != H_MSG_TRUE) return err;
    st = seg_sam2_set_image(session, &img, NULL, NULL);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}

Herror segrt_halcon_sam_segment(Hobject image, SegSession *session, double row, double column, Hlong label,
                                const double *box, Hobject *mask_image, Hobject *region) {
    Hlong width = 0, height = 0;
    SegImage img;
    SegMask mask;
    SegPoint click;
    SegBox bbox;
    SegStatus st;
    unsigned char *buf;
    char msg[MAX_STRING];
    Herror err;

    if (!mask_image && !region) return segrt_halcon_glue_error(SEG_NULL_POINTER, "mask_image and region are both NULL");
    if (label != -1 && label != 0 && label != 1)
        return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "label must be 1 (the object), 0 (not the object) or -1 (no click)");
    if (label == -1 && !box) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "no click (label -1) and no box: nothing to segment");
    err = segrt_halcon_image_view(image, &img, &width, &height);
    if (err != H_MSG_TRUE) return err;
    /* A click off the image is a slip of the user (or of Row/Column order), not a prompt: refuse it. */
    if (label != -1 && !(row >= 0.0 && row < (double)height && column >= 0.0 && column < (double)width)) {
        snprintf(msg, sizeof msg, "click (row %.1f, column %.1f) is outside the %ldx%ld image", row, column, (long)width, (long)height);
        return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, msg);
    }
    click.x = (float)column;
    click.y = (float)row;
    click.label = (int32_t)label;
    if (box) {   /* HALCON's rectangle1 order: Row1, Column1, Row2, Column2 */
        bbox.x1 = (float)box[1];
        bbox.y1 = (float)box[0];
        bbox.x2 = (float)box[3];
        bbox.y2 = (float)box[2];
    }
    buf = malloc((size_t)width * (size_t)height);
    if (!buf) return segrt_halcon_glue_error(SEG_OUT_OF_MEMORY, "no memory for the mask");
    mask.data = buf;
    mask.width = img.width;
    mask.height = img.height;
    mask.stride = 0;
    /* The image is passed again: segrt reuses the embedding of segrt_halcon_sam_set_image when the
     * pixels are the same, and encodes them otherwise. */
    st = seg_run_sam2_points(session, &img, label != -1 ? &click : NULL, label != -1 ? 1u : 0u, box ? &bbox : NULL,
                             NULL, 0, 0, &mask, NULL, NULL, NULL);
    if (st != SEG_OK) {
        free(buf);
        return segrt_halcon_status_error(st);
    }
    err = segrt_halcon_mask_outputs(buf, width, height, mask_image, region);
    free(buf);
    return err;
}

Herror segrt_halcon_sam_segment_boxes(Hobject image, SegSession *session, const double *boxes, Hlong n_boxes, Hobject *regions) {
    Hlong width = 0, height = 0, k, made = 0;
    SegImage img;
    SegSam2Prompt *prompts;
    SegMask *masks;
    Hobject *made_regions;
    unsigned char *bufs;
    size_t pixels;
    SegStatus st;
    Herror err;

    if (!boxes || !regions) return segrt_halcon_glue_error(SEG_NULL_POINTER, boxes ? "regions is NULL" : "boxes is NULL");
    if (n_boxes < 1 || n_boxes > 4096) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "n_boxes must be within 1..4096");
    err = segrt_halcon_image_view(image, &img, &width, &height);
    if (err != H_MSG_TRUE) return err;
    pixels = (size_t)width * (size_t)height;
    prompts = calloc((size_t)n_boxes, sizeof *prompts);
    masks = calloc((size_t)n_boxes, sizeof *masks);
    made_regions = calloc((size_t)n_boxes, sizeof *made_regions);
    bufs = pixels <= SIZE_MAX / (size_t)n_boxes ? malloc(pixels * (size_t)n_boxes) : NULL;
    if (!prompts || !masks || !made_regions || !bufs) {
        free(prompts); free(masks); free(made_regions); free(bufs);
        return segrt_halcon_glue_error(SEG_OUT_OF_MEMORY, "no memory for the masks");
    }
    for (k = 0; k < n_boxes; k++) {   /* HALCON's rectangle1 order: Row1, Column1, Row2, Column2 */
        const double *b = boxes + 4 * k;
        prompts[k].bbox.x1 = (float)b[1];
        prompts[k].bbox.y1 = (float)b[0];
        prompts[k].bbox.x2 = (float)b[3];
        prompts[k].bbox.y2 = (float)b[2];
        prompts[k].has_box = 1;
        masks[k].data = bufs + (size_t)k * pixels;
        masks[k].width = img.width;
        masks[k].height = img.height;
        masks[k].stride = 0;
    }
    /* segrt checks every box before anything runs and writes the masks only on success. */
    st = seg_sam2_segment_prompts(session, &img, prompts, sizeof *prompts, (size_t)n_boxes, masks, NULL, NULL, NULL);
    if (st != SEG_OK) err = segrt_halcon_status_error(st);
    /* The regions go to a list of our own first, to the caller only when all exist. */
    for (k = 0; err == H_MSG_TRUE && k < n_boxes; k++) {
        err = segrt_halcon_mask_outputs(bufs + (size_t)k * pixels, width, height, NULL, &made_regions[k]);
        if (err == H_MSG_TRUE) made++;
    }
    if (err == H_MSG_TRUE)
        memcpy(regions, made_regions, (size_t)n_boxes * sizeof *regions);
    else
        for (k = 0; k < made; k++) clear_obj(made_regions[k]);
    free(prompts); free(masks); free(made_regions); free(bufs);
    return err;
}

Herror segrt_halcon_sam_close(SegSession *session) {
    return segrt_halcon_close(session);
}

/* ---- tracking ---- */

Herror segrt_halcon_track_open(const char *models_dir, SegSession **out_video, SegTrack **out_track) {
    SegSession *video = NULL;
    SegStatus st;
    if (!out_video || !out_track) return segrt_halcon_glue_error(SEG_NULL_POINTER, "out_video or out_track is NULL");
    if (seg_abi_version() != SEG_ABI_VERSION)
        return segrt_halcon_glue_error(SEG_RUNTIME_INIT_FAILED, "libsegrt ABI differs from segrt.h: rebuild the glue");
    st = seg_create_sam2_video(models_dir, NULL, &video);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    st = seg_track_create(video, NULL, out_track);
    if (st != SEG_OK) {
        Herror err = segrt_halcon_status_error(st);
        seg_free(video);
        return err;
    }
    *out_video = video;
    return H_MSG_TRUE;
}

Herror segrt_halcon_track_add(Hobject image, SegTrack *track, Hlong *frame) {
    Hlong width = 0, height = 0;
    int64_t index = 0;
    SegImage img;
    SegStatus st;
    Herror err = segrt_halcon_image_view(image, &img, &width, &height);
    if (err != H_MSG_TRUE) return err;
    st = seg_track_add_frame(track, &img, &index, NULL, NULL);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    if (frame) *frame = (Hlong)index;
    return H_MSG_TRUE;
}

/* Runs one frame-output call (a prompt when `click` is set, else tracking) and turns object
 * `object_id`'s mask into a region. */
static Herror track_call(SegTrack *track, Hlong frame, Hlong object_id, const SegPoint *click, Hobject *region, Hlong *present) {
    SegTrackState state;
    SegTrackObject *records = NULL;
    SegMask *masks = NULL;
    unsigned char *pixels = NULL;
    size_t n = 0, count = 0, k, size;
    Hobject mask_obj = NULL;
    SegStatus st;
    Herror err = H_MSG_TRUE;
    char msg[MAX_STRING];

    memset(&state, 0, sizeof state);
    state.struct_size = sizeof state;
    st = seg_track_state(track, &state);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    /* One record and mask per object; a prompt may add one object. */
    n = state.objects + (click ? 1u : 0u);
    if (n == 0) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "no object to track: click an object first");
    if (state.width <= 0 || state.height <= 0) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "no frame added yet");
    size = (size_t)state.width * (size_t)state.height;
    records = calloc(n, sizeof *records);
    masks = calloc(n, sizeof *masks);
    pixels = malloc(n * size);
    if (!records || !masks || !pixels) {
        free(records); free(masks); free(pixels);
        return segrt_halcon_glue_error(SEG_OUT_OF_MEMORY, "no memory for the masks");
    }
    for (k = 0; k < n; k++) {
        masks[k].data = pixels + k * size;
        masks[k].width = state.width;
        masks[k].height = state.height;
        masks[k].stride = 0;
    }
    if (click)
        st = seg_track_add_prompt(track, (int64_t)frame, (int32_t)object_id, click, 1, NULL, records, sizeof *records, masks, n,
                                  &count, NULL, NULL);
    else
        st = seg_track_frame(track, (int64_t)frame, records, sizeof *records, masks, n, &count, NULL, NULL);
    if (st != SEG_OK) {
        err = segrt_halcon_status_error(st);
        goto done;
    }
    for (k = 0; k < count && records[k].object_id != (int32_t)object_id; k++) {}
    if (k == count) {
        snprintf(msg, sizeof msg, "object %ld is not tracked on this track", (long)object_id);
        err = segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, msg);
        goto done;
    }
    if (present) *present = records[k].present ? 1 : 0;
    if (region) {
        /* gen_image1 copies the pixels; the region is the mask's foreground. */
        err = gen_image1(&mask_obj, "byte", state.width, state.height, (Hlong)masks[k].data);
        if (err == H_MSG_TRUE) err = threshold(mask_obj, region, 1.0, 255.0);
        if (mask_obj) clear_obj(mask_obj);
    }
done:
    free(records); free(masks); free(pixels);
    return err;
}

Herror segrt_halcon_track_click(SegTrack *track, Hlong frame, Hlong object_id, double row, double column, Hlong label,
                                Hobject *region) {
    SegPoint click;
    click.x = (float)column;
    click.y = (float)row;
    click.label = (int32_t)label;
    return track_call(track, frame, object_id, &click, region, NULL);
}

Herror segrt_halcon_track_frame(SegTrack *track, Hlong frame, Hlong object_id, Hobject *region, Hlong *present) {
    return track_call(track, frame, object_id, NULL, region, present);
}

Herror segrt_halcon_track_close(SegSession *video, SegTrack *track) {
    SegStatus a = seg_track_free(track), b = seg_free(video);
    if (a != SEG_OK) return segrt_halcon_status_error(a);
    return b == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(b);
}

/* ---- volumes ---- */

Herror segrt_halcon_volume_open(const char *models_dir, Hlong n_slices, Hlong keep_slices, SegSession **out_video, SegTrack **out_track) {
    SegTrackOptions opt = {.struct_size = sizeof opt};
    SegSession *video = NULL;
    SegStatus st;
    if (!out_video || !out_track) return segrt_halcon_glue_error(SEG_NULL_POINTER, "out_video or out_track is NULL");
    if (n_slices < 0 || n_slices > UINT32_MAX || keep_slices < 0 || keep_slices > UINT32_MAX)
        return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "n_slices and keep_slices must be 0 or more");
    if (seg_abi_version() != SEG_ABI_VERSION)
        return segrt_halcon_glue_error(SEG_RUNTIME_INIT_FAILED, "libsegrt ABI differs from segrt.h: rebuild the glue");
    st = seg_track_options_default(&opt);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    opt.volume = 1;
    opt.corrections_as_conditioning = 1;   /* a corrected slice keeps its correction when propagating again */
    opt.num_frames = (uint32_t)n_slices;
    if (keep_slices > 0) opt.keep_frames = (uint32_t)keep_slices;
    st = seg_create_sam2_video(models_dir, NULL, &video);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    st = seg_track_create(video, &opt, out_track);
    if (st != SEG_OK) {
        Herror err = segrt_halcon_status_error(st);
        seg_free(video);
        return err;
    }
    *out_video = video;
    return H_MSG_TRUE;
}

Herror segrt_halcon_volume_add(const Hobject *slices, Hlong n_slices, SegTrack *track) {
    Hlong k;
    if (!slices) return segrt_halcon_glue_error(SEG_NULL_POINTER, "slices is NULL");
    if (n_slices < 1) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "n_slices must be 1 or more");
    for (k = 0; k < n_slices; k++) {
        Herror err = segrt_halcon_track_add(slices[k], track, NULL);
        if (err != H_MSG_TRUE) return err;
    }
    return H_MSG_TRUE;
}

/* What seg_track_propagate hands on_slice: the buffers it writes each slice to, and the regions made. */
typedef struct {
    const SegTrackObject *records;
    const unsigned char *pixels;   /* n_objects masks of width x height */
    size_t n_objects, size;
    Hlong width, height, n_regions, object_id;
    Hobject *made;                 /* n_regions regions (NULL: slice not reached) */
    Hlong *present;                /* n_regions flags */
    Herror err;                    /* a HALCON operator's error or the glue's, which stopped the pass */
} VolumeDelivery;

/* Called after each slice (on the thread of segrt_halcon_volume_propagate): turns the object's mask into
 * the slice's region (both ways, the start slice comes twice: the later one is kept). Returns 0 to stop. */
static int32_t on_slice(int64_t frame, size_t count, void *user_data) {
    VolumeDelivery *d = user_data;
    size_t k;
    char msg[MAX_STRING];
    if (frame < 0 || frame >= d->n_regions) {
        snprintf(msg, sizeof msg, "slice %lld is past the %ld regions given", (long long)frame, (long)d->n_regions);
        d->err = segrt_halcon_glue_error(SEG_BUFFER_TOO_SMALL, msg);
        return 0;
    }
    for (k = 0; k < count && k < d->n_objects && d->records[k].object_id != (int32_t)d->object_id; k++) {}
    if (k == count || k == d->n_objects) {
        snprintf(msg, sizeof msg, "object %ld is not tracked on this volume", (long)d->object_id);
        d->err = segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, msg);
        return 0;
    }
    if (d->made[frame]) {
        clear_obj(d->made[frame]);
        d->made[frame] = NULL;
    }
    d->err = segrt_halcon_mask_outputs(d->pixels + k * d->size, d->width, d->height, NULL, &d->made[frame]);
    if (d->err != H_MSG_TRUE) {
        d->made[frame] = NULL;
        return 0;
    }
    d->present[frame] = d->records[k].present ? 1 : 0;
    return 1;
}

Herror segrt_halcon_volume_propagate(SegTrack *track, Hlong start_slice, Hlong direction, Hlong object_id, Hobject *regions,
                                     Hlong *present, Hlong n_regions) {
    SegPropagation req = {.struct_size = sizeof req};
    SegTrackState state;
    SegTrackObject *records = NULL;
    SegMask *masks = NULL;
    unsigned char *pixels = NULL;
    Hobject *made = NULL;
    Hlong *flags = NULL, k;
    VolumeDelivery d;
    size_t n, count = 0, i;
    SegStatus st;
    Herror err = H_MSG_TRUE;
    char msg[MAX_STRING];

    if (!regions) return segrt_halcon_glue_error(SEG_NULL_POINTER, "regions is NULL");
    if (direction != SEG_TRACK_FORWARD && direction != SEG_TRACK_REVERSE && direction != SEG_TRACK_BOTH_WAYS)
        return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "direction must be SEG_TRACK_FORWARD (0), SEG_TRACK_REVERSE (1) or SEG_TRACK_BOTH_WAYS (2)");
    memset(&state, 0, sizeof state);
    state.struct_size = sizeof state;
    st = seg_track_state(track, &state);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    if (n_regions != (Hlong)state.frames) {
        snprintf(msg, sizeof msg, "n_regions is %ld; the volume has %lld slices", (long)n_regions, (long long)state.frames);
        return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, msg);
    }
    n = state.objects;
    if (n == 0) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "no object to propagate: click an object first");
    d.size = (size_t)state.width * (size_t)state.height;
    records = calloc(n, sizeof *records);
    masks = calloc(n, sizeof *masks);
    pixels = malloc(n * d.size);
    made = calloc((size_t)n_regions, sizeof *made);
    flags = malloc((size_t)n_regions * sizeof *flags);
    if (!records || !masks || !pixels || !made || !flags) {
        free(records); free(masks); free(pixels); free(made); free(flags);
        return segrt_halcon_glue_error(SEG_OUT_OF_MEMORY, "no memory for the masks");
    }
    for (i = 0; i < n; i++) {
        masks[i].data = pixels + i * d.size;
        masks[i].width = state.width;
        masks[i].height = state.height;
        masks[i].stride = 0;
    }
    for (k = 0; k < n_regions; k++) flags[k] = -1;
    d.records = records;
    d.pixels = pixels;
    d.n_objects = n;
    d.width = state.width;
    d.height = state.height;
    d.n_regions = n_regions;
    d.object_id = object_id;
    d.made = made;
    d.present = flags;
    d.err = H_MSG_TRUE;
    st = seg_propagation_default(&req);
    if (st != SEG_OK) {
        err = segrt_halcon_status_error(st);
    } else {
        req.direction = (int32_t)direction;
        req.use_start_frame = 1;
        req.start_frame = (int64_t)start_slice;
        st = seg_track_propagate(track, &req, records, sizeof *records, masks, n, &count, on_slice, &d, NULL, NULL);
        if (d.err != H_MSG_TRUE)
            err = d.err;   /* the glue stopped the pass: its own error, not SEG_CANCELLED */
        else if (st != SEG_OK)
            err = segrt_halcon_status_error(st);
    }
    /* The regions go to the caller only when every slice reached has one. */
    if (err == H_MSG_TRUE) {
        for (k = 0; k < n_regions; k++) {
            if (made[k]) regions[k] = made[k];
            if (present) present[k] = flags[k];
        }
    } else {
        for (k = 0; k < n_regions; k++)
            if (made[k]) clear_obj(made[k]);
    }
    free(records); free(masks); free(pixels); free(made); free(flags);
    return err;
}

/* Outlines of a byte mask image as XLD contours (see segrt_halcon.h). */
Herror segrt_halcon_contours(Hobject mask_image, double tolerance, Hobject *contours, Hlong *is_hole, Hlong capacity,
                             Hlong *n_contours) {
    char type[MAX_STRING];
    Hlong pointer = 0, width = 0, height = 0, k;
    SegRegionOptions opt = {.struct_size = sizeof opt};
    SegRing *rings = NULL;
    SegContourPoint *points = NULL;
    Hobject *made = NULL;
    size_t n_rings = 0, n_points = 0, i;
    SegStatus st;
    Herror err = get_image_pointer1(mask_image, &pointer, type, &width, &height);
    if (err != H_MSG_TRUE) return err;
    if (strcmp(type, "byte") != 0) return segrt_halcon_glue_error(SEG_UNSUPPORTED_FORMAT, "the mask image must be a \"byte\" image");
    if (!n_contours || (capacity > 0 && !contours) || capacity < 0)
        return segrt_halcon_glue_error(SEG_NULL_POINTER, "n_contours is NULL, or contours is NULL with a capacity");
    if ((st = seg_region_options_default(&opt)) != SEG_OK) return segrt_halcon_status_error(st);
    opt.tolerance = tolerance;
    {
        SegMask mask = {(uint8_t *)pointer, (int32_t)width, (int32_t)height, 0};
        st = seg_mask_regions(&mask, NULL, &opt, NULL, 0, 0, NULL, NULL, sizeof(SegRing), 0, &n_rings, NULL, 0, &n_points);
        if (st != SEG_OK) return segrt_halcon_status_error(st);
        if ((Hlong)n_rings > capacity) {
            *n_contours = (Hlong)n_rings;
            return segrt_halcon_glue_error(SEG_BUFFER_TOO_SMALL, "more outlines than the contours array holds (*n_contours says how many)");
        }
        rings = malloc((n_rings ? n_rings : 1) * sizeof *rings);
        points = malloc((n_points ? n_points : 1) * sizeof *points);
        made = calloc(n_rings ? n_rings : 1, sizeof *made);
        if (!rings || !points || !made) {
            free(rings);
            free(points);
            free(made);
            return segrt_halcon_glue_error(SEG_OUT_OF_MEMORY, "no memory for the outlines");
        }
        /* The same call with arrays: segrt kept this thread's result, so it is not traced twice. */
        st = seg_mask_regions(&mask, NULL, &opt, NULL, 0, 0, NULL, rings, sizeof(SegRing), n_rings, NULL, points, n_points, NULL);
    }
    if (st != SEG_OK) err = segrt_halcon_status_error(st);
    for (i = 0; err == H_MSG_TRUE && i < n_rings; i++) {
        Htuple rows, cols;
        Hlong n = (Hlong)rings[i].point_count;
        create_tuple(&rows, n + 1);
        create_tuple(&cols, n + 1);
        for (k = 0; k <= n; k++) {   /* closed: the first point again at the end */
            const SegContourPoint *p = &points[rings[i].first_point + (size_t)(k % n)];
            set_d(rows, (double)p->y, k);
            set_d(cols, (double)p->x, k);
        }
        err = T_gen_contour_polygon_xld(&made[i], rows, cols);
        destroy_tuple(rows);
        destroy_tuple(cols);
    }
    if (err == H_MSG_TRUE) {
        for (i = 0; i < n_rings; i++) {
            contours[i] = made[i];
            if (is_hole) is_hole[i] = rings[i].kind == SEG_RING_HOLE;
        }
        *n_contours = (Hlong)n_rings;
    } else {
        for (i = 0; i < n_rings; i++) clear_obj(made[i]);
    }
    free(rings);
    free(points);
    free(made);
    return err;
}
