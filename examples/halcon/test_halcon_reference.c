/* Runs the HALCON glue's reference calls (segrt_halcon_reference.c) against the stand-in and checks them,
 * on the colour oracle encoder and the geometric oracle decoder (as tests/reference_c_abi.rs: red discs
 * are the taught object, a blue disc a distractor), on R, G, B HALCON images:
 *   - taught from a region, the best match's region is bit-identical to the plain C API's mask on the same
 *     pixels as interleaved RGB, present, with its score; without the object one empty region, not present;
 *   - every instance: one region per red disc (each around its disc's centre, none at the blue one), the
 *     scores of the C API's records; a capacity of 2 gives the best two;
 *   - saved and loaded, the reference finds the same region;
 *   - an empty region, a capacity of 0, a missing file, a closed reference fail with a code > 10000 and
 *     segrt's or the glue's message, outputs untouched.
 * Usage: test_halcon_reference REPO_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segrt_halcon.h"

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

#define W 512
#define H 512

typedef struct { int x, y; const unsigned char *colour; } Disc;
static const unsigned char RED[3] = {220, 30, 30}, BLUE[3] = {30, 40, 220};

static int in_disc(int x, int y, int cx, int cy) { return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= 40 * 40; }

/* The scene as three HALCON planes and as interleaved RGB (`rgb`, W*H*3 bytes) for the plain C API. */
static Hobject scene(const Disc *discs, int n, unsigned char *rgb) {
    static unsigned char planes[3][W * H];
    Hobject image = NULL;
    int x, y, k, c;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            const unsigned char *px = NULL;
            for (k = 0; k < n; k++)
                if (in_disc(x, y, discs[k].x, discs[k].y)) px = discs[k].colour;
            for (c = 0; c < 3; c++) {
                planes[c][y * W + x] = px ? px[c] : 128;
                rgb[(y * W + x) * 3 + c] = planes[c][y * W + x];
            }
        }
    if (gen_image3(&image, "byte", W, H, (Hlong)planes[0], (Hlong)planes[1], (Hlong)planes[2]) != H_MSG_TRUE) exit(2);
    return image;
}

/* A disc's region (threshold of a byte mask image), or the empty region with r = 0. */
static Hobject disc_region(int cx, int cy, int r) {
    static unsigned char m[W * H];
    Hobject image = NULL, region = NULL;
    int x, y;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) m[y * W + x] = r > 0 && in_disc(x, y, cx, cy) ? 255 : 0;
    if (gen_image1(&image, "byte", W, H, (Hlong)m) != H_MSG_TRUE || threshold(image, &region, 1, 255) != H_MSG_TRUE) exit(2);
    clear_obj(image);
    return region;
}

/* A region's pixels (region_to_bin) equal a 0/255 mask. */
static int region_equals(Hobject region, const unsigned char *mask) {
    Hobject bin = NULL;
    Hlong p = 0, w = 0, h = 0;
    char type[MAX_STRING];
    int same;
    if (region_to_bin(region, &bin, 255, 0, W, H) != H_MSG_TRUE || get_image_pointer1(bin, &p, type, &w, &h) != H_MSG_TRUE) return 0;
    same = memcmp((const unsigned char *)p, mask, (size_t)W * H) == 0;
    clear_obj(bin);
    return same;
}

static Hlong area_of(Hobject region, double *row, double *col) {
    Hlong area = -1;
    double r, c;
    area_center(region, &area, row ? row : &r, col ? col : &c);
    return area;
}

/* The plain C API's best match on interleaved RGB (mask and record). */
static SegStatus c_api_find(SegReference *ref, SegSession *sam, const unsigned char *rgb, int32_t mode, unsigned char *mask,
                            SegFound *found, size_t capacity, size_t *count) {
    SegImage img = {rgb, W, H, 0, SEG_FORMAT_RGB24, NULL, NULL};
    SegMask m = {mask, W, H, 0};
    SegFindOptions o = {.struct_size = sizeof o};
    seg_find_options_default(&o);
    o.mode = mode;
    return seg_reference_find(ref, sam, &img, &o, &m, NULL, found, sizeof *found, capacity, count, NULL, NULL);
}

static void expect_error(Herror err, SegStatus want, const char *what) {
    char msg[MAX_STRING];
    get_error_text((Hlong)err, msg);
    CHECK(err == SEGRT_H_ERR(want), "%s: code %u, wanted %u", what, err, (unsigned)SEGRT_H_ERR(want));
    CHECK(strstr(msg, "No error message") == NULL, "%s: no message", what);
    printf("expected error (%s): %u %s\n", what, err, msg);
}

int main(int argc, char **argv) {
    static unsigned char rgb[W * H * 3], c_mask[W * H];
    char enc[4096], dec[4096], other_enc[4096];
    SegSession *sam = NULL, *other = NULL;
    SegReference *ref = NULL, *loaded = NULL, *untouched = (SegReference *)0x1234;
    Hobject image, region, regions[8], sentinel = (Hobject)0x5678;
    double scores[8], row, col;
    Hlong present[8], n = -1, k, area;
    SegFound found[8];
    size_t count = 0;
    const Disc teach_discs[] = {{150, 150, RED}, {380, 380, BLUE}};
    const Disc moved[] = {{340, 300, RED}, {120, 400, BLUE}};
    const Disc without[] = {{120, 400, BLUE}};
    const Disc many[] = {{100, 100, RED}, {300, 120, RED}, {200, 330, RED}, {420, 420, RED}, {420, 200, BLUE}};
    const char *path = "target/halcon-example/part.segrtref";
    Herror err;
    if (argc != 2) return 2;
    snprintf(enc, sizeof enc, "%s/models/sam2/sam2_colour_oracle_encoder.onnx", argv[1]);
    snprintf(dec, sizeof dec, "%s/models/sam2/sam2_oracle_decoder.onnx", argv[1]);
    snprintf(other_enc, sizeof other_enc, "%s/models/sam2/sam2_oracle_encoder.onnx", argv[1]);
    CHECK(segrt_halcon_sam_open(enc, dec, &sam) == H_MSG_TRUE, "open the oracle pair");
    CHECK(segrt_halcon_sam_open(other_enc, dec, &other) == H_MSG_TRUE, "open another model");
    if (failures) return 1;

    /* teach from a region */
    image = scene(teach_discs, 2, rgb);
    region = disc_region(150, 150, 40);
    CHECK(segrt_halcon_reference_teach(image, region, sam, &ref) == H_MSG_TRUE, "teach");
    clear_obj(region);
    clear_obj(image);
    if (failures) return 1;

    /* the best match: the plain C API's mask, present, its score */
    image = scene(moved, 2, rgb);
    err = segrt_halcon_reference_find(ref, image, sam, 0, -1.0, regions, scores, present, 8, &n);
    CHECK(err == H_MSG_TRUE && n == 1 && present[0] == 1, "best match: err %u, n %ld", err, (long)n);
    CHECK(c_api_find(ref, sam, rgb, SEG_FIND_BEST, c_mask, found, 1, &count) == SEG_OK && found[0].present, "C API best");
    if (err == H_MSG_TRUE) {
        area = area_of(regions[0], &row, &col);
        CHECK(region_equals(regions[0], c_mask), "the best match's region differs from the C API's mask");
        CHECK(fabs(scores[0] - found[0].score) < 1e-6, "score %f, C API %f", scores[0], (double)found[0].score);
        CHECK(fabs(row - 300) < 5 && fabs(col - 340) < 5 && area > 4000, "region at (%.1f, %.1f), area %ld", row, col, (long)area);
        printf("best match: area %ld at (%.1f, %.1f), score %.3f, as the C API\n", (long)area, row, col, scores[0]);
        clear_obj(regions[0]);
    }
    clear_obj(image);

    /* without the object: one empty region, not present */
    image = scene(without, 1, rgb);
    err = segrt_halcon_reference_find(ref, image, sam, 0, -1.0, regions, scores, present, 8, &n);
    CHECK(err == H_MSG_TRUE && n == 1 && present[0] == 0, "absent: err %u, n %ld", err, (long)n);
    if (err == H_MSG_TRUE) {
        CHECK(area_of(regions[0], NULL, NULL) == 0, "absent: the region is not empty");
        clear_obj(regions[0]);
    }
    clear_obj(image);

    /* every instance: a region per red disc, the C API's scores; capacity 2: the best two */
    image = scene(many, 5, rgb);
    err = segrt_halcon_reference_find(ref, image, sam, 1, -1.0, regions, scores, present, 8, &n);
    CHECK(err == H_MSG_TRUE && n == 4, "every instance: err %u, n %ld", err, (long)n);
    CHECK(c_api_find(ref, sam, rgb, SEG_FIND_ALL, c_mask, found, 8, &count) == SEG_OK && count == 4, "C API every instance");
    for (k = 0; err == H_MSG_TRUE && k < n; k++) {
        int near = 0, d;
        area_of(regions[k], &row, &col);
        for (d = 0; d < 4; d++) near += fabs(row - many[d].y) < 5 && fabs(col - many[d].x) < 5;
        CHECK(near == 1 && present[k] == 1, "instance %ld at (%.1f, %.1f) is on no red disc", (long)k, row, col);
        CHECK(fabs(scores[k] - found[k].score) < 1e-6, "instance %ld: score %f, C API %f", (long)k, scores[k], (double)found[k].score);
        clear_obj(regions[k]);
    }
    printf("every instance: %ld regions\n", (long)n);
    err = segrt_halcon_reference_find(ref, image, sam, 1, -1.0, regions, scores, NULL, 2, &n);
    CHECK(err == H_MSG_TRUE && n == 2 && fabs(scores[0] - found[0].score) < 1e-6 && fabs(scores[1] - found[1].score) < 1e-6,
          "capacity 2: err %u, n %ld", err, (long)n);
    for (k = 0; err == H_MSG_TRUE && k < n; k++) clear_obj(regions[k]);
    clear_obj(image);

    /* saved and loaded: the same best region */
    CHECK(segrt_halcon_reference_save(ref, path) == H_MSG_TRUE, "save");
    CHECK(segrt_halcon_reference_load(sam, path, &loaded) == H_MSG_TRUE, "load");
    image = scene(moved, 2, rgb);
    c_api_find(ref, sam, rgb, SEG_FIND_BEST, c_mask, found, 1, &count);
    err = segrt_halcon_reference_find(loaded, image, sam, 0, -1.0, regions, NULL, NULL, 1, &n);
    CHECK(err == H_MSG_TRUE && n == 1 && region_equals(regions[0], c_mask), "the loaded reference finds another region");
    if (err == H_MSG_TRUE) clear_obj(regions[0]);

    /* bad input: a code > 10000 with a message, outputs untouched */
    region = disc_region(0, 0, 0);
    expect_error(segrt_halcon_reference_teach(image, region, sam, &untouched), SEG_INVALID_ARGUMENT, "an empty region");
    CHECK(untouched == (SegReference *)0x1234, "out_reference written on failure");
    clear_obj(region);
    region = disc_region(150, 150, 40);
    expect_error(segrt_halcon_reference_add(loaded, image, region, other), SEG_MODEL_UNSUPPORTED, "another model");
    clear_obj(region);
    regions[0] = sentinel;
    n = -7;
    expect_error(segrt_halcon_reference_find(ref, image, sam, 0, -1.0, regions, NULL, NULL, 0, &n), SEG_INVALID_ARGUMENT, "capacity 0");
    expect_error(segrt_halcon_reference_find(ref, image, other, 0, -1.0, regions, NULL, NULL, 1, &n), SEG_MODEL_UNSUPPORTED,
                 "find on another model");
    CHECK(regions[0] == sentinel && n == -7, "outputs written on failure");
    expect_error(segrt_halcon_reference_load(sam, "target/halcon-example/missing.segrtref", &untouched), SEG_MODEL_NOT_FOUND, "a missing file");
    CHECK(untouched == (SegReference *)0x1234, "out_reference written on failure");
    clear_obj(image);

    CHECK(segrt_halcon_reference_close(loaded) == H_MSG_TRUE && segrt_halcon_reference_close(NULL) == H_MSG_TRUE, "close");
    CHECK(segrt_halcon_reference_close(ref) == H_MSG_TRUE, "close");
    expect_error(segrt_halcon_reference_close(ref), SEG_INVALID_HANDLE, "closed twice");
    CHECK(segrt_halcon_sam_close(sam) == H_MSG_TRUE && segrt_halcon_sam_close(other) == H_MSG_TRUE, "close the sessions");
    remove(path);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
