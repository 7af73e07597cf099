/* A C host against the committed header: the versioned-struct contract of SegOptions (struct_size set
 * by the caller, nothing written past it, a longer struct only with a zero tail), UNet on a sample
 * (checked against ground truth), planar input equal to interleaved BGR, a SAM2 click on a fixture
 * (and its refinement with the caller's mask input), call controls (a pre-cancelled call writes
 * nothing, a reset control runs as no control; outside --quick a tiled run stopped by its progress
 * callback and one cancelled from another thread), and bad input answered with statuses.
 * Run by tests/c/run.sh plain, under AddressSanitizer/UBSan and under valgrind.
 * Usage: test_segrt REPO_DIR INPUT_DIR [--quick]  (INPUT_DIR holds the .ppm/.pgm files made by make_inputs.py)
 * --quick: the struct_size checks, one UNet run of a small model (models/test/unet_dynamic.onnx at 64x64),
 * the bad-input checks and the frees; no planar run, SAM2 part or run after the errors. For valgrind, where one demo-model
 * inference takes 2 to 3 minutes (run.sh --valgrind-quick). */
#include <pthread.h>
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

/* A control cancelled before the call: SEG_CANCELLED, the mask and the info struct untouched; after
 * seg_control_reset the same call succeeds with the mask of a call without control (`want`, the
 * mask `img` gave with NULL control). `img`/`out` describe the run; `out` is overwritten. */
static void cancel_before(SegSession *unet, const SegImage *img, SegMask out, const unsigned char *want) {
    const size_t n = (size_t)out.width * out.height;
    SegCallControl *control = NULL;
    SegRunInfo info, before;
    SegStatus st;
    size_t i, changed;

    st = seg_control_create(&control);
    CHECK(st == SEG_OK && control != NULL, "seg_control_create: %s %s", seg_status_str(st), last_error());
    if (st != SEG_OK) return;
    CHECK(seg_control_cancel(control) == SEG_OK, "seg_control_cancel: %s", last_error());
    memset(out.data, 0x5A, n);
    memset(&info, 0xA5, sizeof info);
    info.struct_size = sizeof info;
    before = info;
    st = seg_run_unet(unet, img, &out, NULL, 0, &info, control);
    CHECK(st == SEG_CANCELLED, "pre-cancelled control: %s %s", seg_status_str(st), last_error());
    for (i = 0, changed = 0; i < n; i++) changed += out.data[i] != 0x5A;
    CHECK(changed == 0, "a cancelled call wrote %zu mask bytes", changed);
    CHECK(memcmp(&info, &before, sizeof info) == 0, "a cancelled call wrote into its SegRunInfo");
    /* still cancelled until reset: a second call is refused the same way */
    st = seg_run_unet(unet, img, &out, NULL, 0, NULL, control);
    CHECK(st == SEG_CANCELLED && out.data[0] == 0x5A, "second call on a cancelled control: %s", seg_status_str(st));

    CHECK(seg_control_reset(control) == SEG_OK, "seg_control_reset: %s", last_error());
    st = seg_run_unet(unet, img, &out, NULL, 0, &info, control);
    CHECK(st == SEG_OK, "run after seg_control_reset: %s %s", seg_status_str(st), last_error());
    CHECK(st != SEG_OK || memcmp(out.data, want, n) == 0, "the mask under a reset control differs from the one without control");
    CHECK(st != SEG_OK || (info.num_classes >= 1 && info.model_width > 0), "info not filled after reset: %d classes", info.num_classes);

    CHECK(seg_control_free(control) == SEG_OK, "seg_control_free");
    CHECK(seg_control_free(control) == SEG_INVALID_HANDLE, "double seg_control_free must be detected");
    CHECK(seg_control_free(NULL) == SEG_OK, "seg_control_free(NULL)");
    CHECK(seg_control_cancel(NULL) == SEG_INVALID_HANDLE && seg_control_reset(control) == SEG_INVALID_HANDLE,
          "cancel/reset of NULL or a freed control");
}

/* What the progress callbacks below see and do. */
typedef struct {
    int calls;
    int first_stage;
    float last_fraction;
    int stop_at_first;              /* return 0 on the first call */
    /* cross-thread: one call waits here until the other thread has cancelled */
    int wait_for_cancel;            /* at the first call past fraction 0, i.e. with tiles done and more to come */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int started, cancelled;
    SegCallControl *control;
    SegStatus cancel_status;
} Progress;

static int32_t on_progress(int32_t stage, float fraction, void *user_data) {
    Progress *p = user_data;
    p->calls++;
    if (p->calls == 1) p->first_stage = stage;
    p->last_fraction = fraction;
    if (p->stop_at_first) return 0;
    if (p->wait_for_cancel && !p->started && fraction > 0.0f) {
        pthread_mutex_lock(&p->mutex);
        p->started = 1;
        pthread_cond_broadcast(&p->cond);
        while (!p->cancelled) pthread_cond_wait(&p->cond, &p->mutex);
        pthread_mutex_unlock(&p->mutex);
    }
    return 1;   /* go on: only the other thread's seg_control_cancel stops the call */
}

static void *cancel_thread(void *arg) {
    Progress *p = arg;
    pthread_mutex_lock(&p->mutex);
    while (!p->started) pthread_cond_wait(&p->cond, &p->mutex);
    pthread_mutex_unlock(&p->mutex);
    p->cancel_status = seg_control_cancel(p->control);   /* while the run is in flight on the main thread */
    pthread_mutex_lock(&p->mutex);
    p->cancelled = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mutex);
    return NULL;
}

/* A tiled UNet run (SEG_TILE_ON, 256x256 tiles) on a synthetic 2048x2048 image: stopped by a progress
 * callback returning 0 on its first call, and cancelled from another thread while it runs; both answer
 * SEG_CANCELLED with the mask untouched, and the control and session are usable afterwards. */
static void cancel_tiled(const char *repo) {
    enum { W = 2048, H = 2048 };
    char path[4096];
    SegOptions opt = {.struct_size = sizeof opt};
    SegSession *s = NULL;
    SegCallControl *control = NULL;
    unsigned char *px = malloc((size_t)W * H * 3), *mask = malloc((size_t)W * H);
    SegImage img;
    SegMask out;
    SegRunInfo info;
    Progress p;
    pthread_t thread;
    SegStatus st;
    size_t i, changed;
    int x, y;

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            /* discs on a textured background: something for the UNet to see in every tile */
            int dx = x % 256 - 128, dy = y % 256 - 128, in = dx * dx + dy * dy < 60 * 60;
            unsigned char *q = px + 3 * ((size_t)y * W + x);
            q[0] = (unsigned char)(in ? 200 : 60 + (x ^ y) % 40);
            q[1] = (unsigned char)(in ? 80 : 90 + (x + y) % 30);
            q[2] = (unsigned char)(in ? 90 : 70);
        }
    img.data = px; img.width = W; img.height = H; img.stride = 0; img.format = SEG_FORMAT_BGR24;
    img.plane1 = NULL; img.plane2 = NULL;
    out.data = mask; out.width = W; out.height = H; out.stride = 0;

    CHECK(seg_options_default(&opt) == SEG_OK, "defaults: %s", last_error());
    opt.tile_mode = SEG_TILE_ON;
    opt.tile_width = 256;
    opt.tile_height = 256;
    snprintf(path, sizeof path, "%s/models/demo_unet.onnx", repo);
    st = seg_create(path, &opt, &s);
    CHECK(st == SEG_OK, "seg_create (tiled): %s %s", seg_status_str(st), last_error());
    st = st == SEG_OK ? seg_control_create(&control) : st;
    CHECK(st == SEG_OK, "seg_control_create: %s", last_error());
    if (st != SEG_OK) { seg_free(s); free(px); free(mask); return; }

    /* (a) a progress callback returning 0 at its first call stops the run */
    memset(&p, 0, sizeof p);
    p.stop_at_first = 1;
    CHECK(seg_control_set_progress(control, on_progress, &p) == SEG_OK, "seg_control_set_progress: %s", last_error());
    memset(mask, 0x5A, (size_t)W * H);
    st = seg_run_unet(s, &img, &out, NULL, 0, NULL, control);
    CHECK(st == SEG_CANCELLED, "progress callback returning 0: %s %s", seg_status_str(st), last_error());
    CHECK(p.calls == 1, "the callback was called %d times after returning 0", p.calls);
    CHECK(p.first_stage == SEG_STAGE_TILES, "first progress stage %d, want SEG_STAGE_TILES", p.first_stage);
    for (i = 0, changed = 0; i < (size_t)W * H; i++) changed += mask[i] != 0x5A;
    CHECK(changed == 0, "a call stopped by its progress callback wrote %zu mask bytes", changed);
    /* the callback's 0 cancels the control: the next call is refused until reset */
    st = seg_run_unet(s, &img, &out, NULL, 0, NULL, control);
    CHECK(st == SEG_CANCELLED && mask[0] == 0x5A, "control after a callback returned 0: %s", seg_status_str(st));
    CHECK(seg_control_reset(control) == SEG_OK, "reset: %s", last_error());

    /* (b) seg_control_cancel from another thread while the run is in flight (after its first tiles) */
    memset(&p, 0, sizeof p);
    p.wait_for_cancel = 1;
    p.control = control;
    p.cancel_status = SEG_INTERNAL;
    pthread_mutex_init(&p.mutex, NULL);
    pthread_cond_init(&p.cond, NULL);
    CHECK(seg_control_set_progress(control, on_progress, &p) == SEG_OK, "seg_control_set_progress: %s", last_error());
    CHECK(pthread_create(&thread, NULL, cancel_thread, &p) == 0, "pthread_create");
    memset(mask, 0x5A, (size_t)W * H);
    memset(&info, 0xA5, sizeof info);
    info.struct_size = sizeof info;
    st = seg_run_unet(s, &img, &out, NULL, 0, &info, control);
    pthread_join(thread, NULL);
    CHECK(st == SEG_CANCELLED, "cancelled from another thread: %s %s", seg_status_str(st), last_error());
    CHECK(p.cancel_status == SEG_OK, "seg_control_cancel on the other thread: %s", seg_status_str(p.cancel_status));
    CHECK(p.started && p.first_stage == SEG_STAGE_TILES && p.last_fraction < 1.0f,
          "stopped mid-run: stage %d, last fraction %g after %d calls", p.first_stage, p.last_fraction, p.calls);
    for (i = 0, changed = 0; i < (size_t)W * H; i++) changed += mask[i] != 0x5A;
    CHECK(changed == 0, "a call cancelled from another thread wrote %zu mask bytes", changed);
    CHECK(info.num_classes == (int32_t)0xA5A5A5A5, "a call cancelled from another thread wrote into its SegRunInfo");
    printf("tiled UNet %dx%d: stopped by its progress callback; cancelled from another thread after %d progress calls (fraction %.3f)\n",
           W, H, p.calls, p.last_fraction);
    pthread_cond_destroy(&p.cond);
    pthread_mutex_destroy(&p.mutex);

    /* (c) the session and the control, reset, run a smaller tiled image to the end */
    CHECK(seg_control_reset(control) == SEG_OK, "reset: %s", last_error());
    CHECK(seg_control_set_progress(control, NULL, NULL) == SEG_OK, "remove the progress callback");
    img.width = 512; img.height = 512; img.stride = W * 3;
    out.width = 512; out.height = 512; out.stride = W;
    info.struct_size = sizeof info;
    st = seg_run_unet(s, &img, &out, NULL, 0, &info, control);
    CHECK(st == SEG_OK && info.tiles > 1, "tiled run after the cancellations: %s %s, %u tiles", seg_status_str(st), last_error(), info.tiles);

    CHECK(seg_control_free(control) == SEG_OK, "seg_control_free");
    CHECK(seg_free(s) == SEG_OK, "free the tiled session");
    free(px);
    free(mask);
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

    /* call controls: a pre-cancelled call, then the same call after seg_control_reset */
    out.data = mask2;
    cancel_before(unet, &img, out, mask);
    out.data = mask;
    if (!quick) cancel_tiled(repo);

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
    /* a `control` that is not a live call control is refused (a session handle is one of the wrong kind) */
    CHECK(seg_run_unet(unet, &img, &out, NULL, 0, NULL, (SegCallControl *)(void *)&info) == SEG_INVALID_HANDLE, "bogus control");
    CHECK(seg_run_unet(unet, &img, &out, NULL, 0, NULL, (SegCallControl *)(void *)unet) != SEG_OK, "a session as control");
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
