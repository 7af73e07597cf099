/* segrt from HALCON/C: teach once, find it in every image (see segrt_halcon.h). A reference is taught
 * from a region on an image (the taught mask) and finds the object as regions. Written against the
 * HALCON/C names; compiled and tested here against halcon_standin.h (SEGRT_HALCON_STANDIN). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segrt_halcon_internal.h"

/* The region as segrt's mask: region_to_bin at the image's size (255 in the region, 0 elsewhere; the
 * part outside the image dropped), read through its pixel pointer while *bin lives. */
static Herror region_mask(Hobject region, Hlong width, Hlong height, Hobject *bin, SegMask *mask) {
    char type[MAX_STRING];
    Hlong pointer = 0, w = 0, h = 0;
    Herror err = region_to_bin(region, bin, 255, 0, width, height);
    if (err != H_MSG_TRUE) return err;
    err = get_image_pointer1(*bin, &pointer, type, &w, &h);
    if (err != H_MSG_TRUE) {
        clear_obj(*bin);
        *bin = NULL;
        return err;
    }
    mask->data = (uint8_t *)pointer;   /* segrt only reads a taught mask */
    mask->width = (int32_t)w;
    mask->height = (int32_t)h;
    mask->stride = 0;
    return H_MSG_TRUE;
}

Herror segrt_halcon_reference_add(SegReference *reference, Hobject image, Hobject region, SegSession *sam) {
    Hlong width = 0, height = 0;
    Hobject bin = NULL;
    SegImage img;
    SegMask mask;
    SegStatus st;
    Herror err = segrt_halcon_image_view(image, &img, &width, &height);
    if (err != H_MSG_TRUE) return err;
    err = region_mask(region, width, height, &bin, &mask);
    if (err != H_MSG_TRUE) return err;
    st = seg_reference_add(reference, sam, &img, &mask, NULL);
    clear_obj(bin);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}

Herror segrt_halcon_reference_teach(Hobject image, Hobject region, SegSession *sam, SegReference **out_reference) {
    SegReference *reference = NULL;
    SegStatus st;
    Herror err;
    if (!out_reference) return segrt_halcon_glue_error(SEG_NULL_POINTER, "out_reference is NULL");
    st = seg_reference_create(&reference);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    err = segrt_halcon_reference_add(reference, image, region, sam);
    if (err != H_MSG_TRUE) {
        seg_reference_free(reference);   /* keeps the error text: HSetErrText was called already */
        return err;
    }
    *out_reference = reference;
    return H_MSG_TRUE;
}

Herror segrt_halcon_reference_save(SegReference *reference, const char *path) {
    SegStatus st = seg_reference_save(reference, path);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}

Herror segrt_halcon_reference_load(SegSession *sam, const char *path, SegReference **out_reference) {
    SegStatus st = seg_reference_load(sam, path, out_reference);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}

/* Instance `label` of a label image as a region (a scratch byte mask, 255 where the label is). */
static Herror label_region(const uint16_t *labels, unsigned char *scratch, Hlong width, Hlong height, uint32_t label,
                           Hobject *region) {
    size_t i, n = (size_t)width * (size_t)height;
    for (i = 0; i < n; i++) scratch[i] = labels[i] == label ? 255 : 0;
    return segrt_halcon_mask_outputs(scratch, width, height, NULL, region);
}

Herror segrt_halcon_reference_find(SegReference *reference, Hobject image, SegSession *sam, Hlong all, double threshold,
                                   Hobject *regions, double *scores, Hlong *present, Hlong capacity, Hlong *n_found) {
    Hlong width = 0, height = 0, k, done = 0;
    SegImage img;
    SegFindOptions o;
    SegMask mask;
    SegLabelImage labels;
    SegFound *found = NULL;
    size_t count = 0, pixels;
    unsigned char *mask_buf = NULL;
    uint16_t *label_buf = NULL;
    SegStatus st;
    Herror err;
    if (!regions || !n_found) return segrt_halcon_glue_error(SEG_NULL_POINTER, "regions or n_found is NULL");
    if (all != 0 && all != 1) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "all must be 0 (the best match) or 1 (every instance)");
    if (capacity < 1 || capacity > 65535) return segrt_halcon_glue_error(SEG_INVALID_ARGUMENT, "capacity must be 1 .. 65535");
    err = segrt_halcon_image_view(image, &img, &width, &height);
    if (err != H_MSG_TRUE) return err;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    st = seg_find_options_default(&o);
    if (st != SEG_OK) return segrt_halcon_status_error(st);
    o.mode = all ? SEG_FIND_ALL : SEG_FIND_BEST;
    o.max_instances = (uint32_t)capacity;   /* the best `capacity` instances: the records always fit */
    if (threshold >= 0.0) o.threshold = (float)threshold;
    pixels = (size_t)width * (size_t)height;
    mask_buf = malloc(pixels);
    label_buf = all ? malloc(pixels * sizeof *label_buf) : NULL;
    found = calloc((size_t)capacity, sizeof *found);
    if (!mask_buf || (all && !label_buf) || !found) {
        free(mask_buf);
        free(label_buf);
        free(found);
        return segrt_halcon_glue_error(SEG_OUT_OF_MEMORY, "no memory for the outputs");
    }
    mask.data = mask_buf;
    mask.width = (int32_t)width;
    mask.height = (int32_t)height;
    mask.stride = 0;
    labels.data = label_buf;
    labels.width = (int32_t)width;
    labels.height = (int32_t)height;
    labels.stride = 0;
    st = seg_reference_find(reference, sam, &img, &o, &mask, all ? &labels : NULL, found, sizeof *found, (size_t)capacity, &count,
                            NULL, NULL);
    err = st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
    /* The regions: the best match's mask (empty when absent), or one per instance from the label image. */
    for (k = 0; err == H_MSG_TRUE && k < (Hlong)count; k++, done++)
        err = all ? label_region(label_buf, mask_buf, width, height, found[k].id, &regions[k])
                  : segrt_halcon_mask_outputs(mask_buf, width, height, NULL, &regions[k]);
    if (err != H_MSG_TRUE) {
        for (k = 0; k < done; k++) clear_obj(regions[k]);   /* all or none */
    } else {
        for (k = 0; k < (Hlong)count; k++) {
            if (scores) scores[k] = found[k].score;
            if (present) present[k] = found[k].present ? 1 : 0;
        }
        *n_found = (Hlong)count;
    }
    free(mask_buf);
    free(label_buf);
    free(found);
    return err;
}

Herror segrt_halcon_reference_close(SegReference *reference) {
    SegStatus st = seg_reference_free(reference);
    return st == SEG_OK ? H_MSG_TRUE : segrt_halcon_status_error(st);
}
