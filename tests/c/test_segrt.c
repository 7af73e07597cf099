/* A C host against the committed header: the versioned-struct contract of SegOptions (struct_size set
 * by the caller, nothing written past it, a longer struct only with a zero tail), UNet on a sample
 * (checked against ground truth), planar input equal to interleaved BGR, a SAM2 click on a fixture
 * (and its refinement with the caller's mask input), and bad input answered with statuses.
 * Run by tests/c/run.sh plain, under AddressSanitizer/UBSan and under valgrind.
 * Usage: test_segrt REPO_DIR INPUT_DIR [--quick]  (INPUT_DIR holds the .ppm/.pgm files made by make_inputs.py)
 * --quick: the struct_size checks, one UNet run of a small model (models/test/unet_dynamic.onnx at 64x64),
 * the bad-input checks and the frees; no planar run, SAM2 part or run after the errors. For valgrind, where one demo-model
 * inference takes 2 to 3 minutes (run.sh --valgrind-quick). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segrt.h"

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

typedef struct { int w, h, channels; unsigned char *px; } Image;

/* Binary PPM (P6) or PGM (P5), maxval 255. */
static Image read_pnm(const char *path) {
    Image img = {0, 0, 0, NULL};
    FILE *f = fopen(path, "rb");
    char magic[3] = {0};
    int maxval = 0;
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    if (fscanf(f, "%2s %d %d %d", magic, &img.w, &img.h, &maxval) != 4 || maxval != 255) { fprintf(stderr, "bad pnm %s\n", path); exit(2); }
    fgetc(f);
    img.channels = strcmp(magic, "P6") == 0 ? 3 : 1;
    img.px = malloc((size_t)img.w * img.h * img.channels);
    if (fread(img.px, 1, (size_t)img.w * img.h * img.channels, f) != (size_t)img.w * img.h * img.channels) { fprintf(stderr, "short %s\n", path); exit(2); }
    fclose(f);
    return img;
}

static const char *last_error(void) {
    static char buf[4096];
    seg_last_error(buf, sizeof buf);
    return buf;
}

static double iou(const unsigned char *a, const unsigned char *b, size_t n) {
    size_t inter = 0, uni = 0, i;
    for (i = 0; i < n; i++) {
        int x = a[i] > 127, y = b[i] > 127;
        inter += x && y;
        uni += x || y;
    }
    return uni ? (double)inter / uni : 1.0;
}

/* The versioned-struct contract as a C host sees it: the caller declares struct_size before
 * seg_options_default; a missing or impossible size is refused with nothing written; only the
 * declared bytes are written; a struct longer than segrt knows is read only when its unknown tail is
 * all zero (a host built against a newer header). `model` is a small UNet that seg_create can load. */
static void versioned_options(const char *model) {
    /* A SegOptions followed by what a newer header could have appended. */
    union { SegOptions o; unsigned char bytes[sizeof(SegOptions) + 64]; } buf;
    const uint32_t bad_sizes[] = {0, 4, 6, (uint32_t)offsetof(SegOptions, cache_dir) + 4, (uint32_t)sizeof(SegOptions) - 1};
    SegOptions zero = {0}, o = {0};
    SegSession *s = NULL;
    SegStatus st;
    size_t i, k, changed;
    char want[64];

    /* (a) struct_size left 0 (the old `SegOptions o; seg_options_default(&o)` with a zeroed struct) */
    st = seg_options_default(&o);
    CHECK(st == SEG_INVALID_ARGUMENT, "struct_size 0: %s", seg_status_str(st));
    CHECK(memcmp(&o, &zero, sizeof o) == 0, "seg_options_default wrote into a SegOptions whose struct_size is 0");
    CHECK(strstr(last_error(), "struct_size") != NULL, "message names struct_size: %s", last_error());
    /* too small, or ending inside a field: refused, nothing written */
    for (i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        memset(buf.bytes, 0xAB, sizeof buf.bytes);
        buf.o.struct_size = bad_sizes[i];
        st = seg_options_default(&buf.o);
        CHECK(st == SEG_INVALID_ARGUMENT, "struct_size %u: %s", bad_sizes[i], seg_status_str(st));
        for (k = sizeof buf.o.struct_size, changed = 0; k < sizeof buf.bytes; k++) changed += buf.bytes[k] != 0xAB;
        CHECK(changed == 0 && buf.o.struct_size == bad_sizes[i], "struct_size %u refused but %zu bytes written", bad_sizes[i], changed);
    }

    /* (b) guard bytes: the defaults fill sizeof(SegOptions) bytes and not one more; struct_size is kept */
    memset(buf.bytes, 0xAB, sizeof buf.bytes);
    buf.o.struct_size = sizeof(SegOptions);
    st = seg_options_default(&buf.o);
    CHECK(st == SEG_OK, "seg_options_default: %s %s", seg_status_str(st), last_error());
    for (k = sizeof(SegOptions), changed = 0; k < sizeof buf.bytes; k++) changed += buf.bytes[k] != 0xAB;
    CHECK(changed == 0, "seg_options_default wrote %zu bytes past sizeof(SegOptions)", changed);
    CHECK(buf.o.struct_size == sizeof(SegOptions) && buf.o.size_multiple == 32 && buf.o.threshold == 0.5f &&
              buf.o.max_pixels == SEG_DEFAULT_MAX_PIXELS && buf.o.scale == 1.0f / 255.0f && buf.o.std[2] == 1.0f &&
              buf.o.ort_path == NULL && buf.o.cache_dir == NULL && buf.o.cache_mode == SEG_CACHE_OFF,
          "defaults: struct_size %u, size_multiple %d, threshold %g", buf.o.struct_size, buf.o.size_multiple, buf.o.threshold);

    /* (c) a newer host's struct: sizeof + 8 with a zero tail is accepted, the tail left alone */
    memset(buf.bytes, 0, sizeof buf.bytes);
    buf.o.struct_size = sizeof(SegOptions) + 8;
    st = seg_options_default(&buf.o);
    CHECK(st == SEG_OK && buf.o.struct_size == sizeof(SegOptions) + 8 && buf.o.size_multiple == 32,
          "struct_size sizeof+8, zero tail: %s %s", seg_status_str(st), last_error());
    for (k = sizeof(SegOptions), changed = 0; k < sizeof buf.bytes; k++) changed += buf.bytes[k] != 0;
    CHECK(changed == 0, "seg_options_default wrote %zu bytes into the unknown tail", changed);
    buf.o.input_width = 64;
    buf.o.input_height = 64;
    st = seg_create(model, &buf.o, &s);
    CHECK(st == SEG_OK && s != NULL, "seg_create with struct_size sizeof+8 and a zero tail: %s %s", seg_status_str(st), last_error());
    CHECK(seg_free(s) == SEG_OK, "free the session of the longer struct");
    /* ... and refused, naming the offset, when a byte of the tail is set */
    buf.bytes[sizeof(SegOptions) + 5] = 1;
    s = NULL;
    st = seg_create(model, &buf.o, &s);
    CHECK(st == SEG_INVALID_ARGUMENT && s == NULL, "seg_create with a non-zero tail byte: %s", seg_status_str(st));
    snprintf(want, sizeof want, "byte %zu is not zero", sizeof(SegOptions) + 5);
    CHECK(strstr(last_error(), want) != NULL, "message names the offset (\"%s\"): %s", want, last_error());
    memset(buf.bytes + sizeof buf.o.struct_size, 0x5A, sizeof(SegOptions) - sizeof buf.o.struct_size);
    st = seg_options_default(&buf.o);
    CHECK(st == SEG_INVALID_ARGUMENT, "seg_options_default with a non-zero tail byte: %s", seg_status_str(st));
    for (k = sizeof buf.o.struct_size, changed = 0; k < sizeof(SegOptions); k++) changed += buf.bytes[k] != 0x5A;
    CHECK(changed == 0, "seg_options_default refused a non-zero tail but wrote %zu bytes", changed);
}

int main(int argc, char **argv) {
    char path[4096], path2[4096];
    const char *repo, *inputs;
    SegSession *unet = NULL, *sam = NULL;
    SegOptions opt = {.struct_size = sizeof opt};   /* the size first, then the defaults */
    Image rgb, gt, sam_img;
    unsigned char *bgr, *planes, *mask, *mask2;
    size_t n, i;
    SegImage img;
    SegMask out;
    SegRunInfo info;
    SegStatus st;
    char version[512];
    int quick;

    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "--quick") == 0)) {
        fprintf(stderr, "usage: %s REPO_DIR INPUT_DIR [--quick]\n", argv[0]);
        return 2;
    }
    repo = argv[1];
    inputs = argv[2];
    quick = argc == 4;
    CHECK(seg_abi_version() == SEG_ABI_VERSION, "ABI %u != header %d", seg_abi_version(), SEG_ABI_VERSION);
    snprintf(path, sizeof path, "%s/models/test/unet_dynamic.onnx", repo);
    versioned_options(path);

    /* UNet on a sample, as BGR24 the way GDI+/OpenCV hold it */
    snprintf(path, sizeof path, "%s/lesion_01.ppm", inputs);
    rgb = read_pnm(path);
    snprintf(path, sizeof path, "%s/lesion_01_gt.pgm", inputs);
    gt = read_pnm(path);
    n = (size_t)rgb.w * rgb.h;
    bgr = malloc(n * 3);
    planes = malloc(n * 3);
    mask = malloc(n);
    mask2 = malloc(n);
    for (i = 0; i < n; i++) {
        bgr[3 * i] = rgb.px[3 * i + 2]; bgr[3 * i + 1] = rgb.px[3 * i + 1]; bgr[3 * i + 2] = rgb.px[3 * i];
        planes[i] = rgb.px[3 * i]; planes[n + i] = rgb.px[3 * i + 1]; planes[2 * n + i] = rgb.px[3 * i + 2];
    }
    st = seg_options_default(&opt);
    CHECK(st == SEG_OK && opt.struct_size == sizeof opt, "seg_options_default: %s %s", seg_status_str(st), last_error());
    snprintf(path, sizeof path, "%s/models/demo_unet.onnx", repo);
    if (quick) {
        /* The dynamic-axes test model run at 64x64: the whole pipeline for 1/16 of the demo model's
         * 256x256 inference (still IoU 0.93 on this sample). */
        snprintf(path, sizeof path, "%s/models/test/unet_dynamic.onnx", repo);
        opt.input_width = 64;
        opt.input_height = 64;
    }
    st = seg_create(path, &opt, &unet);
    CHECK(st == SEG_OK, "seg_create: %s %s", seg_status_str(st), last_error());
    if (st != SEG_OK) return 1;
    seg_version(version, sizeof version);
    printf("%s\n", version);

    img.data = bgr; img.width = rgb.w; img.height = rgb.h; img.stride = 0; img.format = SEG_FORMAT_BGR24;
    img.plane1 = NULL; img.plane2 = NULL;
    out.data = mask; out.width = rgb.w; out.height = rgb.h; out.stride = 0;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    st = seg_run_unet(unet, &img, &out, NULL, 0, &info, NULL);
    CHECK(st == SEG_OK, "seg_run_unet: %s %s", seg_status_str(st), last_error());
    printf("UNet BGR24: IoU %.4f, %d classes, model input %dx%d, pre %.1f ms, inference %.1f ms, post %.1f ms\n",
           iou(mask, gt.px, n), info.num_classes, info.model_width, info.model_height, info.preprocess_ms,
           info.inference_ms, info.postprocess_ms);
    CHECK(iou(mask, gt.px, n) >= 0.9, "IoU %.4f", iou(mask, gt.px, n));

    /* planar R, G, B planes (HALCON get_image_pointer3) give the same mask */
    img.data = planes; img.plane1 = planes + n; img.plane2 = planes + 2 * n; img.format = SEG_FORMAT_PLANAR_RGB8;
    out.data = mask2;
    if (!quick) {
        st = seg_run_unet(unet, &img, &out, NULL, 0, NULL, NULL);
        CHECK(st == SEG_OK && memcmp(mask, mask2, n) == 0, "planar differs from BGR24: %s", last_error());
    }

    /* bad input: each a status, nothing written, the session still usable */
    memset(mask2, 0x33, n);
    img.format = 42;
    CHECK(seg_run_unet(unet, &img, &out, NULL, 0, NULL, NULL) == SEG_UNSUPPORTED_FORMAT, "format 42");
    img.format = SEG_FORMAT_BGR24; img.data = bgr; img.plane1 = NULL; img.plane2 = NULL;
    img.stride = rgb.w * 3 - 1;
    CHECK(seg_run_unet(unet, &img, &out, NULL, 0, NULL, NULL) == SEG_INVALID_ARGUMENT, "short stride");
    img.stride = 0;
    img.data = NULL;
    CHECK(seg_run_unet(unet, &img, &out, NULL, 0, NULL, NULL) == SEG_NULL_POINTER, "NULL data");
    img.data = bgr;
    out.width = rgb.w - 1;
    CHECK(seg_run_unet(unet, &img, &out, NULL, 0, NULL, NULL) == SEG_INVALID_ARGUMENT, "mask size");
    out.width = rgb.w;
    info.struct_size = 0;   /* an output struct whose size the caller forgot */
    CHECK(seg_run_unet(unet, &img, &out, NULL, 0, &info, NULL) == SEG_INVALID_ARGUMENT, "SegRunInfo.struct_size 0");
    /* `control` is reserved in ABI 1: anything but NULL is refused */
    CHECK(seg_run_unet(unet, &img, &out, NULL, 0, NULL, (SegCallControl *)(void *)&info) == SEG_INVALID_ARGUMENT, "non-NULL control");
    for (i = 0; i < n; i++) CHECK(mask2[i] == 0x33, "mask written by a failing call");
    CHECK(seg_run_unet(NULL, &img, &out, NULL, 0, NULL, NULL) == SEG_INVALID_HANDLE, "NULL handle");
    CHECK(seg_create("/no/such/model.onnx", NULL, &sam) == SEG_MODEL_NOT_FOUND && sam == NULL, "missing model");
    CHECK(strstr(last_error(), "/no/such/model.onnx") != NULL, "message names the file: %s", last_error());
    if (!quick) CHECK(seg_run_unet(unet, &img, &out, NULL, 0, NULL, NULL) == SEG_OK, "session unusable after errors");

    /* SAM2: one click on a fixture, compared with the PyTorch reference mask (not in quick mode) */
    snprintf(path, sizeof path, "%s/models/sam2/sam2_tiny_samexporter_encoder.onnx", repo);
    snprintf(path2, sizeof path2, "%s/models/sam2/sam2_tiny_samexporter_decoder.onnx", repo);
    st = quick ? SEG_OK : seg_create_sam2(path, path2, NULL, &sam);
    CHECK(st == SEG_OK, "seg_create_sam2: %s", last_error());
    if (!quick && st == SEG_OK) {
        SegPoint click = {105.0f, 105.0f, 1};
        Image ref;
        unsigned char *sam_mask, *refined;
        float score = -1.0f;
        double enc_ms = -1.0;
        SegSam2Result res;
        static float low_res[256 * 256];   /* the largest low-res size of released SAM2 exports */
        size_t low_res_n;
        snprintf(path, sizeof path, "%s/img0.ppm", inputs);
        sam_img = read_pnm(path);
        snprintf(path, sizeof path, "%s/img0_point_mask.pgm", inputs);
        ref = read_pnm(path);
        sam_mask = malloc((size_t)sam_img.w * sam_img.h);
        refined = malloc((size_t)sam_img.w * sam_img.h);
        img.data = sam_img.px; img.width = sam_img.w; img.height = sam_img.h; img.stride = 0; img.format = SEG_FORMAT_RGB24;
        out.data = sam_mask; out.width = sam_img.w; out.height = sam_img.h; out.stride = 0;
        CHECK(seg_sam2_set_image(sam, &img, &enc_ms, NULL) == SEG_OK && enc_ms > 0.0, "set_image: %s", last_error());
        memset(&res, 0, sizeof res);
        res.struct_size = sizeof res;
        res.low_res_logits = low_res;
        res.low_res_len = 256 * 256;
        st = seg_run_sam2_points(sam, NULL, &click, 1, NULL, NULL, 0, 0, &out, &score, &res, NULL);
        CHECK(st == SEG_OK, "seg_run_sam2_points: %s", last_error());
        printf("SAM2 click: IoU with the PyTorch reference %.4f, predicted IoU %.3f, encoder %.1f ms\n",
               iou(sam_mask, ref.px, (size_t)sam_img.w * sam_img.h), score, enc_ms);
        CHECK(iou(sam_mask, ref.px, (size_t)sam_img.w * sam_img.h) > 0.99, "SAM2 mask differs from the reference");
        /* refinement with the caller's own state: the low-res logits passed back as mask_input refine
         * exactly as SEG_SAM2_REFINE does with the session's copy of them, and take precedence over it */
        low_res_n = (size_t)res.low_res_width * (size_t)res.low_res_height;
        CHECK(low_res_n > 0 && low_res_n <= 256 * 256, "low-res logits %dx%d", res.low_res_width, res.low_res_height);
        out.data = refined;
        st = seg_run_sam2_points(sam, NULL, &click, 1, NULL, NULL, 0, SEG_SAM2_REFINE, &out, &score, NULL, NULL);
        CHECK(st == SEG_OK, "SEG_SAM2_REFINE: %s %s", seg_status_str(st), last_error());
        out.data = sam_mask;
        st = seg_run_sam2_points(sam, NULL, &click, 1, NULL, low_res, low_res_n, 0, &out, &score, NULL, NULL);
        CHECK(st == SEG_OK && memcmp(sam_mask, refined, (size_t)sam_img.w * sam_img.h) == 0,
              "mask_input differs from SEG_SAM2_REFINE on the same logits: %s %s", seg_status_str(st), last_error());
        st = seg_run_sam2_points(sam, NULL, &click, 1, NULL, low_res, low_res_n, SEG_SAM2_REFINE, &out, &score, NULL, NULL);
        CHECK(st == SEG_OK && memcmp(sam_mask, refined, (size_t)sam_img.w * sam_img.h) == 0,
              "mask_input with SEG_SAM2_REFINE: the caller's logits must win: %s %s", seg_status_str(st), last_error());
        memset(sam_mask, 0x33, (size_t)sam_img.w * sam_img.h);
        st = seg_run_sam2_points(sam, NULL, &click, 1, NULL, low_res, low_res_n - 1, 0, &out, &score, NULL, NULL);
        CHECK(st == SEG_INVALID_ARGUMENT && sam_mask[0] == 0x33, "mask_input_len one short: %s", seg_status_str(st));
        CHECK(seg_run_sam2_points(sam, NULL, &click, 1, NULL, NULL, 4, 0, &out, &score, NULL, NULL) == SEG_NULL_POINTER,
              "mask_input NULL with a length");
        CHECK(seg_run_unet(sam, &img, &out, NULL, 0, NULL, NULL) == SEG_WRONG_SESSION_KIND, "wrong kind");
        CHECK(seg_free(sam) == SEG_OK, "free sam");
        free(sam_mask);
        free(refined);
        free(ref.px);
        free(sam_img.px);
    }

    CHECK(seg_free(unet) == SEG_OK, "free");
    CHECK(seg_free(unet) == SEG_INVALID_HANDLE, "double free must be detected");
    CHECK(seg_free(NULL) == SEG_OK, "free NULL");
    free(bgr); free(planes); free(mask); free(mask2); free(rgb.px); free(gt.px);
    printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
