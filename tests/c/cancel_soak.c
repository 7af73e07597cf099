/* Cancellation soak: N long calls, each cancelled from another thread at a random moment (before,
 * during or after the work), spread over the five kinds of long call: a tiled UNet run, a SAM2
 * encode, a SAM2 click that encodes, segment-everything and a tracking step. Checks, for every call:
 * it returns SEG_OK with the reference output, or SEG_CANCELLED with its outputs untouched; a track
 * whose step was cancelled is as before the call. Every 50 calls and at the end, each kind runs
 * uncancelled and must give the reference output bit for bit. Prints the cancel-to-return times
 * (figures, not checks) and, in a plain build, the heap in use before and after the soak.
 *
 *   cancel_soak <repo> [--cancels N] [--seed S]
 *
 * Run plain, under AddressSanitizer and under valgrind (tests/c/run.sh); it exits non-zero on the
 * first wrong result. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#define HEAP_FIGURES 1
#endif

#include "segrt.h"

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

enum { UNET, ENCODE, CLICK, EVERYTHING, TRACK, KINDS };
static const char *KIND_NAME[KINDS] = {"tiled UNet", "SAM2 encode", "SAM2 click+encode", "everything 4x4", "track step"};

#define UW 384
#define UH 384
#define SW 320
#define SH 240
#define MAXO 64
#define UNTOUCHED 0x33

static const char *last_error(void) {
    static char buf[1024];
    seg_last_error(buf, sizeof buf);
    return buf;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* xorshift: the same seed gives the same soak. */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A picture with a few shapes on a gradient; `shift` moves them (frames of a clip). */
static void picture(unsigned char *bgr, int w, int h, int shift) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = bgr + 3 * (y * w + x);
            int dx = x - (w / 3 + shift), dy = y - h / 2, ex = x - 2 * w / 3, ey = y - h / 3;
            int in_disc = dx * dx + dy * dy < (h / 6) * (h / 6);
            int in_square = ex > -h / 8 && ex < h / 8 && ey > -h / 8 && ey < h / 8;
            p[0] = (unsigned char)(in_disc ? 220 : in_square ? 40 : 60 + (x * 80) / w);
            p[1] = (unsigned char)(in_disc ? 60 : in_square ? 200 : 70 + (y * 60) / h);
            p[2] = (unsigned char)(in_disc ? 50 : in_square ? 210 : 90);
        }
}

static SegImage bgr_image(const unsigned char *bgr, int w, int h) {
    SegImage img;
    memset(&img, 0, sizeof img);
    img.data = bgr;
    img.width = w;
    img.height = h;
    img.stride = 0;
    img.format = SEG_FORMAT_BGR24;
    return img;
}

/* Everything one kind of call needs, and its outputs. */
typedef struct {
    SegSession *unet, *sam2, *oracle, *video;
    SegTrack *track;
    unsigned char *unet_pixels, *frames[2];
    unsigned char *mask;      /* UW*UH bytes (the largest mask) */
    uint16_t *labels;         /* SW*SH */
    SegEverythingObject objects[MAXO];
    SegTrackObject track_objects[MAXO];
    size_t count;
    double encoder_ms;
    int next_frame;
} Calls;

/* Runs one call of `kind` under `control`; the outputs land in `c`. */
static SegStatus call(Calls *c, int kind, SegCallControl *control) {
    SegImage img;
    switch (kind) {
    case UNET: {
        SegMask m = {c->mask, UW, UH, 0};
        img = bgr_image(c->unet_pixels, UW, UH);
        return seg_run_unet(c->unet, &img, &m, NULL, 0, NULL, control);
    }
    case ENCODE:
        seg_sam2_reset(c->sam2); /* the encoder must run */
        img = bgr_image(c->frames[0], SW, SH);
        return seg_sam2_set_image(c->sam2, &img, &c->encoder_ms, control);
    case CLICK: {
        SegMask m = {c->mask, SW, SH, 0};
        SegPoint p = {SW / 3.0f, SH / 2.0f, 1};
        seg_sam2_reset(c->sam2);
        img = bgr_image(c->frames[1], SW, SH);
        return seg_run_sam2_points(c->sam2, &img, &p, 1, NULL, NULL, 0, 0, &m, NULL, NULL, control);
    }
    case EVERYTHING: {
        SegEverythingOptions o = {.struct_size = sizeof o};
        SegLabelImage l = {c->labels, SW, SH, 0};
        SegEverythingInfo info = {.struct_size = sizeof info};
        CHECK(seg_everything_options_default(&o) == SEG_OK, "defaults: %s", last_error());
        o.points_per_side = 4;
        seg_sam2_reset(c->oracle); /* no cached result: the prompts run */
        img = bgr_image(c->frames[0], SW, SH);
        return seg_sam2_everything(c->oracle, &img, &o, &l, c->objects, sizeof(SegEverythingObject), MAXO, &c->count, &info,
                                   control);
    }
    default: {
        SegTrackInfo info = {.struct_size = sizeof info};
        SegMask m = {c->mask, SW, SH, 0}; /* the track has one object */
        img = bgr_image(c->frames[c->next_frame & 1], SW, SH);
        return seg_track_next(c->track, &img, c->track_objects, sizeof(SegTrackObject), &m, 1, &c->count, &info, control);
    }
    }
}

/* The bytes a call of `kind` writes (to compare with the reference and to see untouched). */
static size_t output_bytes(int kind) {
    return kind == UNET ? (size_t)UW * UH : kind == EVERYTHING ? (size_t)SW * SH * 2 : kind == ENCODE ? sizeof(double) : (size_t)SW * SH;
}
static const void *output_of(Calls *c, int kind) {
    return kind == EVERYTHING ? (const void *)c->labels : kind == ENCODE ? (const void *)&c->encoder_ms : (const void *)c->mask;
}
static void poison(Calls *c) {
    memset(c->mask, UNTOUCHED, (size_t)UW * UH);
    memset(c->labels, UNTOUCHED, (size_t)SW * SH * 2);
    memset(&c->encoder_ms, UNTOUCHED, sizeof c->encoder_ms);
    c->count = 12345;
}
static int untouched(Calls *c, int kind) {
    const unsigned char *p = output_of(c, kind);
    for (size_t i = 0; i < output_bytes(kind); i++)
        if (p[i] != UNTOUCHED) return 0;
    return kind == ENCODE || c->count == 12345 || kind == UNET || kind == CLICK;
}

static SegTrackState state_of(SegTrack *t) {
    SegTrackState s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    CHECK(seg_track_state(t, &s) == SEG_OK, "seg_track_state: %s", last_error());
    return s;
}

/* A canceller thread: sleeps `delay_us`, then cancels and notes when. */
typedef struct {
    SegCallControl *control;
    long delay_us;
    double cancelled_at;
} Canceller;
static void *cancel_later(void *arg) {
    Canceller *k = arg;
    struct timespec d = {k->delay_us / 1000000, (k->delay_us % 1000000) * 1000};
    nanosleep(&d, NULL);
    k->cancelled_at = now_ms();
    CHECK(seg_control_cancel(k->control) == SEG_OK, "seg_control_cancel");
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *repo = argc > 1 ? argv[1] : ".";
    int cancels = 1000;
    char path[4096], path2[4096];
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--cancels") && i + 1 < argc) cancels = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) rng_state = strtoull(argv[++i], NULL, 10) | 1;
    }
    CHECK(cancels > 0, "--cancels N with N > 0");

    Calls c;
    memset(&c, 0, sizeof c);
    SegOptions o = {.struct_size = sizeof o};
    CHECK(seg_options_default(&o) == SEG_OK, "seg_options_default: %s", last_error());
    o.max_sessions = 1;
    o.intra_threads = 1;
    SegOptions tiled = o;
    tiled.tile_mode = SEG_TILE_ON;
    tiled.tile_width = 128;
    tiled.tile_height = 128;
    tiled.tile_batch = 1;
    snprintf(path, sizeof path, "%s/models/demo_unet.onnx", repo);
    CHECK(seg_create(path, &tiled, &c.unet) == SEG_OK, "UNet: %s", last_error());
    snprintf(path, sizeof path, "%s/models/sam2/sam2_tiny_samexporter_encoder.onnx", repo);
    snprintf(path2, sizeof path2, "%s/models/sam2/sam2_tiny_samexporter_decoder.onnx", repo);
    CHECK(seg_create_sam2(path, path2, &o, &c.sam2) == SEG_OK, "SAM2: %s", last_error());
    snprintf(path, sizeof path, "%s/models/sam2/sam2_oracle_encoder.onnx", repo);
    snprintf(path2, sizeof path2, "%s/models/sam2/sam2_oracle_decoder.onnx", repo);
    CHECK(seg_create_sam2(path, path2, &o, &c.oracle) == SEG_OK, "oracle SAM2: %s", last_error());
    snprintf(path, sizeof path, "%s/models/sam2/video", repo);
    CHECK(seg_create_sam2_video(path, &o, &c.video) == SEG_OK, "SAM2 video: %s", last_error());

    c.unet_pixels = malloc((size_t)UW * UH * 3);
    c.frames[0] = malloc((size_t)SW * SH * 3);
    c.frames[1] = malloc((size_t)SW * SH * 3);
    c.mask = malloc((size_t)UW * UH);
    c.labels = malloc((size_t)SW * SH * 2);
    CHECK(c.unet_pixels && c.frames[0] && c.frames[1] && c.mask && c.labels, "out of memory");
    picture(c.unet_pixels, UW, UH, 0);
    picture(c.frames[0], SW, SH, 0);
    picture(c.frames[1], SW, SH, 6);

    /* A track on a two-frame clip; every step adds a frame, alternating the two. */
    SegTrackOptions topt = {.struct_size = sizeof topt};
    CHECK(seg_track_options_default(&topt) == SEG_OK, "track defaults: %s", last_error());
    topt.keep_frames = 2;
    CHECK(seg_track_create(c.video, &topt, &c.track) == SEG_OK, "seg_track_create: %s", last_error());
    {
        SegImage img = bgr_image(c.frames[0], SW, SH);
        int64_t index = -1;
        SegPoint p = {SW / 3.0f, SH / 2.0f, 1};
        SegTrackInfo info = {.struct_size = sizeof info};
        CHECK(seg_track_add_frame(c.track, &img, &index, NULL, NULL) == SEG_OK, "add_frame: %s", last_error());
        SegMask m = {c.mask, SW, SH, 0};
        CHECK(seg_track_add_prompt(c.track, 0, 1, &p, 1, NULL, c.track_objects, sizeof(SegTrackObject), &m, 1, &c.count, &info, NULL) ==
                  SEG_OK,
              "add_prompt: %s", last_error());
    }

    /* References: each kind uncancelled, its output and its time. A track step's output depends on
     * the track's history: for it, the check is that a cancelled step leaves the track's state as it was. */
    unsigned char *reference[KINDS];
    double took[KINDS];
    for (int k = 0; k < KINDS; k++) {
        if (k == TRACK) continue;
        poison(&c);
        double t0 = now_ms();
        CHECK(call(&c, k, NULL) == SEG_OK, "%s: %s", KIND_NAME[k], last_error());
        took[k] = now_ms() - t0;
        reference[k] = malloc(output_bytes(k));
        memcpy(reference[k], output_of(&c, k), output_bytes(k));
    }
    {
        double t0 = now_ms();
        CHECK(call(&c, TRACK, NULL) == SEG_OK, "track: %s", last_error());
        took[TRACK] = now_ms() - t0;
        c.next_frame++;
    }
    /* The encode's output is its time: compared for "untouched" only. */
    SegCallControl *control = NULL;
    CHECK(seg_control_create(&control) == SEG_OK, "seg_control_create");

    double *latency[KINDS];
    int n_cancelled[KINDS] = {0}, n_ok[KINDS] = {0}, n_lat[KINDS] = {0};
    for (int k = 0; k < KINDS; k++) latency[k] = malloc(sizeof(double) * (size_t)cancels);
#ifdef HEAP_FIGURES
    size_t heap_before = 0;
#endif
    double start = now_ms();
    for (int i = 0; i < cancels; i++) {
        int kind = i % KINDS;
        SegTrackState before;
        if (kind == TRACK) before = state_of(c.track);
        poison(&c);
        Canceller k = {control, (long)(rng() % (uint64_t)(took[kind] * 1300.0 + 1)), 0};
        pthread_t th;
        CHECK(pthread_create(&th, NULL, cancel_later, &k) == 0, "pthread_create");
        SegStatus st = call(&c, kind, control);
        double returned = now_ms();
        pthread_join(th, NULL);
        if (st == SEG_CANCELLED) {
            n_cancelled[kind]++;
            CHECK(untouched(&c, kind), "%s: a cancelled call wrote its outputs (call %d)", KIND_NAME[kind], i);
            if (returned >= k.cancelled_at) latency[kind][n_lat[kind]++] = returned - k.cancelled_at;
            if (kind == TRACK) {
                SegTrackState after = state_of(c.track);
                CHECK(!memcmp(&before, &after, sizeof before), "a cancelled track step changed the track (call %d)", i);
            }
        } else {
            CHECK(st == SEG_OK, "%s: %s (call %d)", KIND_NAME[kind], last_error(), i);
            n_ok[kind]++;
            if (kind == TRACK) c.next_frame++;
            else if (kind != ENCODE)
                CHECK(!memcmp(output_of(&c, kind), reference[kind], output_bytes(kind)), "%s: a completed call differs from the reference (call %d)",
                      KIND_NAME[kind], i);
        }
        CHECK(seg_control_reset(control) == SEG_OK, "seg_control_reset");
        if ((i + 1) % 50 == 0 || i + 1 == cancels) {
            /* Uncancelled, every session still gives the reference bit for bit. */
            for (int r = 0; r < KINDS; r++) {
                if (r == ENCODE || r == TRACK) {
                    CHECK(call(&c, r, NULL) == SEG_OK, "%s after cancels: %s", KIND_NAME[r], last_error());
                    if (r == TRACK) c.next_frame++;
                    continue;
                }
                poison(&c);
                CHECK(call(&c, r, NULL) == SEG_OK, "%s after cancels: %s", KIND_NAME[r], last_error());
                CHECK(!memcmp(output_of(&c, r), reference[r], output_bytes(r)), "%s: not bit-identical after %d cancels", KIND_NAME[r], i + 1);
            }
#ifdef HEAP_FIGURES
            if (i + 1 == 50) heap_before = mallinfo2().uordblks;
#endif
        }
    }
    double total = now_ms() - start;

    int all_cancelled = 0;
    printf("cancel soak: %d calls in %.1f s, each cancelled at a random moment within 1.3x its uncancelled time\n", cancels, total / 1e3);
    printf("  %-18s %9s %9s %9s %11s %11s %11s\n", "call", "alone ms", "cancelled", "finished", "p50 ms", "p95 ms", "max ms");
    for (int k = 0; k < KINDS; k++) {
        all_cancelled += n_cancelled[k];
        qsort(latency[k], (size_t)n_lat[k], sizeof(double), cmp_double);
        double p50 = n_lat[k] ? latency[k][n_lat[k] / 2] : 0, p95 = n_lat[k] ? latency[k][(n_lat[k] * 95) / 100] : 0,
               mx = n_lat[k] ? latency[k][n_lat[k] - 1] : 0;
        printf("  %-18s %9.1f %9d %9d %11.1f %11.1f %11.1f\n", KIND_NAME[k], took[k], n_cancelled[k], n_ok[k], p50, p95, mx);
    }
    printf("  (cancel-to-return times of the calls cancelled after they started; figures, not checks)\n");
    CHECK(all_cancelled > 0, "no call was cancelled: the soak tested nothing");
#ifdef HEAP_FIGURES
    printf("  heap in use after 50 calls %.1f MB, after %d: %.1f MB\n", heap_before / 1e6, cancels, mallinfo2().uordblks / 1e6);
#endif

    seg_control_free(control);
    seg_track_free(c.track);
    seg_free(c.unet);
    seg_free(c.sam2);
    seg_free(c.oracle);
    seg_free(c.video);
    for (int k = 0; k < KINDS; k++) {
        if (k != TRACK) free(reference[k]);
        free(latency[k]);
    }
    free(c.unet_pixels);
    free(c.frames[0]);
    free(c.frames[1]);
    free(c.mask);
    free(c.labels);
    printf("cancel soak: every cancelled call left its outputs untouched, every finished one matched, sessions bit-identical after\n");
    return 0;
}
