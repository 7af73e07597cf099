/* A C host for SAM2 video tracking: the lifecycle of a track through the C ABI as a
 * caller meets it. Frames of another size mid-track, prompts on frames never fed, buffers too small
 * (sentinels untouched, the track unchanged), handles of the wrong kind, double frees, one track fed
 * from several threads, a reset and a free while other threads run on the track, the video session
 * freed under a live track, and a soak whose memory in use must stay bounded with keep_frames.
 * Frames are drawn here (a moving disc on a gradient, 320x240 BGR): no image library needed.
 * Run by tests/c/run.sh plain, under AddressSanitizer/UBSan and under valgrind.
 *
 * Usage: test_track REPO_DIR [--quick] [--soak N] [--soak-keep K]
 *   --quick      one call per thread, no reset race, no soak (for valgrind, where the video session
 *                takes a minute to load and a frame some 15 s)
 *   --soak N     frames of the soak (default 500; 0 = none; after --quick to add one). From N=500 on,
 *                the floor of malloc's heap in use over its last fifth of frames must stay within
 *                10 MB of the floor over its second fifth with the default keep_frames (measured:
 *                -0.0 to +1.2 MB; keep_frames = 0 grew +35.5 to +47.9 MB); a second track with
 *                keep_frames = 0 (every frame kept, as the official predictor) runs the same frames
 *                and its growth is printed for comparison, not asserted.
 *   --soak-keep K  keep_frames of the asserted soak (default 8): 0 shows the bound can fail. */
#define _POSIX_C_SOURCE 200809L
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _WIN32
#include <windows.h>
#include <psapi.h>
#endif

#include "segrt.h"

static int failures = 0, checks = 0;
static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
#define CHECK(cond, ...) do { \
    int ok_ = (cond) ? 1 : 0; \
    pthread_mutex_lock(&check_lock); checks++; \
    if (!ok_) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } \
    pthread_mutex_unlock(&check_lock); } while (0)

enum { W = 320, H = 240, MAXO = 4 };

static const char *last_error(void) {
    static _Thread_local char buf[2048];
    seg_last_error(buf, sizeof buf);
    return buf;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

#ifdef _WIN32
/* Windows (tests/windows/run.sh builds this with mingw-w64): the working set; no mallinfo2 either. */
static double rss_mb(void) {
    PROCESS_MEMORY_COUNTERS pmc;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc)) return -1.0;
    return (double)pmc.WorkingSetSize / (1024.0 * 1024.0);
}
#else
static double rss_mb(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1.0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}
#endif

/* Bytes malloc has handed out and not had back (all arenas, mmapped chunks included): unlike RSS, it
 * does not keep freed memory that malloc has not returned to the system, so a plateau of freed pages
 * does not read as growth. */
static double heap_mb(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(_WIN32)
    return rss_mb(); /* AddressSanitizer's allocator does not report to mallinfo2; Windows has none */
#else
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd) / (1024.0 * 1024.0);
#endif
}

/* Frame t of the synthetic clip: a gradient with a bright disc of radius 28 moving right and down. */
static void disc_centre(int t, int *cx, int *cy) {
    *cx = 60 + (t * 5) % 200;
    *cy = 100 + (t * 3) % 60;
}

static void make_frame(unsigned char *bgr, int w, int h, int t) {
    int x, y, cx, cy;
    disc_centre(t, &cx, &cy);
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            unsigned char *p = bgr + 3 * ((size_t)y * w + x);
            int dx = x - cx, dy = y - cy;
            if (dx * dx + dy * dy <= 28 * 28) {
                p[0] = 30; p[1] = 210; p[2] = 245;
            } else {
                p[0] = (unsigned char)(x * 255 / w); p[1] = (unsigned char)(y * 255 / h); p[2] = (unsigned char)((t * 2) & 0x7f);
            }
        }
}

static SegImage bgr_image(const unsigned char *px, int w, int h) {
    SegImage img;
    img.data = px; img.width = w; img.height = h; img.stride = 0; img.format = SEG_FORMAT_BGR24;
    img.plane1 = NULL; img.plane2 = NULL;
    return img;
}

/* A caller's outputs for up to MAXO objects of a W x H frame. */
typedef struct {
    SegTrackObject obj[MAXO];
    unsigned char *px[MAXO];
    SegMask m[MAXO];
    size_t count;
    SegTrackInfo info;
} Out;

static void out_init(Out *o) {
    int i;
    memset(o, 0, sizeof *o);
    for (i = 0; i < MAXO; i++) {
        o->px[i] = malloc((size_t)W * H);
        o->m[i].data = o->px[i]; o->m[i].width = W; o->m[i].height = H; o->m[i].stride = 0;
    }
}

static void out_free(Out *o) {
    int i;
    for (i = 0; i < MAXO; i++) free(o->px[i]);
}

/* Fills every output with sentinels, so that a failing call can be shown to have written nothing. */
static void out_poison(Out *o) {
    int i;
    for (i = 0; i < MAXO; i++) memset(o->px[i], 0xAB, (size_t)W * H);
    memset(o->obj, 0xCD, sizeof o->obj);
    o->count = 12345;
    memset(&o->info, 0xEE, sizeof o->info);
    o->info.struct_size = sizeof o->info;
}

static int out_untouched(const Out *o) {
    int i;
    size_t k;
    const unsigned char *b = (const unsigned char *)o->obj;
    const unsigned char *inf = (const unsigned char *)&o->info;
    for (i = 0; i < MAXO; i++)
        for (k = 0; k < (size_t)W * H; k++)
            if (o->px[i][k] != 0xAB) return 0;
    for (k = 0; k < sizeof o->obj; k++)
        if (b[k] != 0xCD) return 0;
    for (k = sizeof o->info.struct_size; k < sizeof o->info; k++)
        if (inf[k] != 0xEE) return 0;
    return 1;
}

/* The records describe their masks (area and box counted here, independently of segrt). */
static int records_match_masks(const Out *o) {
    size_t i;
    for (i = 0; i < o->count; i++) {
        unsigned long long area = 0;
        int x, y, x0 = W, y0 = H, x1 = -1, y1 = -1;
        for (y = 0; y < H; y++)
            for (x = 0; x < W; x++) {
                unsigned char v = o->px[i][(size_t)y * W + x];
                if (v != 0 && v != 255) return 0;
                if (v) {
                    area++;
                    if (x < x0) x0 = x;
                    if (x > x1) x1 = x;
                    if (y < y0) y0 = y;
                    if (y > y1) y1 = y;
                }
            }
        if (area == 0) { x0 = y0 = x1 = y1 = 0; }
        if (o->obj[i].area != area || o->obj[i].x0 != x0 || o->obj[i].y0 != y0 || o->obj[i].x1 != x1 || o->obj[i].y1 != y1) return 0;
    }
    return 1;
}

static SegTrackState state_of(SegTrack *t) {
    SegTrackState s;
    SegStatus st;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    st = seg_track_state(t, &s);
    CHECK(st == SEG_OK, "seg_track_state: %s %s", seg_status_str(st), last_error());
    return s;
}

static SegStatus next_frame(SegTrack *t, const unsigned char *bgr, Out *o) {
    SegImage img = bgr_image(bgr, W, H);
    o->info.struct_size = sizeof o->info;
    return seg_track_next(t, &img, o->obj, sizeof(SegTrackObject), o->m, MAXO, &o->count, &o->info, NULL);
}

static SegStatus add_frame(SegTrack *t, const unsigned char *bgr, int64_t *index) {
    SegImage img = bgr_image(bgr, W, H);
    return seg_track_add_frame(t, &img, index, NULL, NULL);
}

/* Clicks object `id` on frame `frame` at the disc of clip frame `t`. */
static SegStatus click(SegTrack *t, int64_t frame, int32_t id, int clip_t, Out *o, size_t capacity) {
    SegPoint p;
    int cx, cy;
    disc_centre(clip_t, &cx, &cy);
    p.x = (float)cx; p.y = (float)cy; p.label = 1;
    o->info.struct_size = sizeof o->info;
    return seg_track_add_prompt(t, frame, id, &p, 1, NULL, o->obj, sizeof(SegTrackObject), o->m, capacity, &o->count, &o->info, NULL);
}

static SegTrack *new_track(SegSession *video, uint32_t keep_frames) {
    SegTrackOptions opt = {.struct_size = sizeof opt};   /* the size first, then the defaults */
    SegTrack *t = NULL;
    SegStatus st;
    CHECK(seg_track_options_default(&opt) == SEG_OK && opt.struct_size == sizeof opt, "seg_track_options_default: %s", last_error());
    CHECK(opt.keep_frames == SEG_TRACK_DEFAULT_KEEP_FRAMES && opt.num_frames == 0, "defaults %u %u", opt.keep_frames, opt.num_frames);
    opt.keep_frames = keep_frames;
    st = seg_track_create(video, &opt, &t);
    CHECK(st == SEG_OK && t != NULL, "seg_track_create: %s %s", seg_status_str(st), last_error());
    return t;
}

/* A track with one frame (clip frame 0) and object 1 clicked on it. */
static SegTrack *seeded_track(SegSession *video, uint32_t keep_frames, unsigned char *bgr, Out *o) {
    SegTrack *t = new_track(video, keep_frames);
    SegStatus st;
    make_frame(bgr, W, H, 0);
    st = add_frame(t, bgr, NULL);
    CHECK(st == SEG_OK, "add_frame: %s", last_error());
    st = click(t, -1, 1, 0, o, MAXO);
    CHECK(st == SEG_OK && o->count == 1, "click: %s %s", seg_status_str(st), last_error());
    return t;
}

/* ---- 1. single-threaded lifecycle: each error a status, nothing written, the track unchanged ---- */
static void lifecycle(SegSession *video, int nexts) {
    unsigned char *bgr = malloc((size_t)W * H * 3), *small = malloc((size_t)160 * 120 * 3);
    Out o;
    SegTrack *t = new_track(video, SEG_TRACK_DEFAULT_KEEP_FRAMES);
    SegTrackState s, s2;
    SegImage img;
    SegStatus st;
    int64_t idx = -7;
    SegPoint p = {10.0f, 10.0f, 1};
    SegMask wrong;
    size_t count;
    int i;
    out_init(&o);

    s = state_of(t);
    CHECK(s.frames == 0 && s.objects == 0 && s.width == 0 && s.height == 0 && s.tracking_started == 0 && s.keep_frames == 8,
          "empty state: frames %lld objects %u %dx%d", (long long)s.frames, s.objects, s.width, s.height);
    make_frame(bgr, W, H, 0);
    out_poison(&o);
    CHECK(next_frame(t, bgr, &o) == SEG_INVALID_ARGUMENT && out_untouched(&o), "next before any object: %s", last_error());
    CHECK(state_of(t).frames == 0, "a refused next added a frame");
    out_poison(&o);
    CHECK(click(t, 0, 1, 0, &o, MAXO) == SEG_INVALID_ARGUMENT && out_untouched(&o), "prompt on an empty track");

    CHECK(add_frame(t, bgr, &idx) == SEG_OK && idx == 0, "add_frame 0: %s", last_error());
    s = state_of(t);
    CHECK(s.frames == 1 && s.width == W && s.height == H && s.held_frames == 1, "state after one frame");

    /* a frame of another size: refused, the track unchanged; so is a NULL frame */
    make_frame(small, 160, 120, 1);
    img = bgr_image(small, 160, 120);
    idx = -7;
    st = seg_track_add_frame(t, &img, &idx, NULL, NULL);
    CHECK(st == SEG_INVALID_ARGUMENT && idx == -7, "160x120 frame on a 320x240 track: %s", seg_status_str(st));
    CHECK(strstr(last_error(), "160x120") != NULL, "message names the size: %s", last_error());
    CHECK(state_of(t).frames == 1, "a refused frame was counted");
    CHECK(seg_track_add_frame(t, NULL, &idx, NULL, NULL) == SEG_NULL_POINTER, "NULL frame");

    /* prompts on frames never fed, or nothing to prompt with */
    out_poison(&o);
    CHECK(click(t, 99, 1, 0, &o, MAXO) == SEG_INVALID_ARGUMENT && out_untouched(&o), "prompt on frame 99: %s", last_error());
    CHECK(strstr(last_error(), "99") != NULL, "message names the frame: %s", last_error());
    CHECK(click(t, -2, 1, 0, &o, MAXO) == SEG_INVALID_ARGUMENT && out_untouched(&o), "prompt on frame -2 of 1");
    CHECK(seg_track_add_prompt(t, 0, 1, NULL, 0, NULL, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL, NULL) == SEG_INVALID_ARGUMENT &&
              out_untouched(&o),
          "prompt without points or box");
    CHECK(seg_track_add_prompt(t, 0, 1, NULL, 2, NULL, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL, NULL) == SEG_NULL_POINTER,
          "NULL points, n 2");
    p.label = 7;
    CHECK(seg_track_add_prompt(t, 0, 1, &p, 1, NULL, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL, NULL) == SEG_INVALID_ARGUMENT &&
              out_untouched(&o),
          "label 7");
    CHECK(seg_track_frame(t, 99, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL, NULL) == SEG_INVALID_ARGUMENT && out_untouched(&o),
          "track frame 99");
    CHECK(state_of(t).objects == 0, "a refused prompt created an object");

    /* buffers too small: SEG_BUFFER_TOO_SMALL before anything runs, only the count written */
    out_poison(&o);
    CHECK(click(t, 0, 1, 0, &o, 0) == SEG_BUFFER_TOO_SMALL, "capacity 0 for a new object");
    CHECK(o.count == 1, "count of the refused call: %zu", o.count);
    o.count = 12345;
    CHECK(out_untouched(&o), "a refused call wrote outputs");
    CHECK(state_of(t).objects == 0, "a refused prompt created an object");
    CHECK(click(t, 0, 1, 0, &o, MAXO) == SEG_OK && o.count == 1 && o.obj[0].object_id == 1 && o.info.frame == 0 && o.info.objects == 1,
          "click object 1: %s", last_error());
    CHECK(o.obj[0].has_output == 1 && records_match_masks(&o), "object 1's record on frame 0");
    CHECK(o.info.image_encoder_ms == 0.0 && o.info.mask_decoder_ms > 0.0, "a prompt runs the decoder, not the encoder");
    /* object 2: the call needs room for 2 records */
    out_poison(&o);
    CHECK(seg_track_add_prompt(t, 0, 2, &p, 0, NULL, o.obj, sizeof(SegTrackObject), o.m, 2, &o.count, NULL, NULL) == SEG_INVALID_ARGUMENT &&
              out_untouched(&o),
          "n 0 without box");
    p.label = 1;
    out_poison(&o);
    st = seg_track_add_prompt(t, 0, 2, &p, 1, NULL, o.obj, sizeof(SegTrackObject), o.m, 1, &o.count, NULL, NULL);
    CHECK(st == SEG_BUFFER_TOO_SMALL && o.count == 2, "capacity 1 for a second object: %s, count %zu", seg_status_str(st), o.count);
    o.count = 12345;
    CHECK(out_untouched(&o) && state_of(t).objects == 1, "refused second object changed something");
    {
        SegBox box = {200.0f, 20.0f, 300.0f, 90.0f};
        o.info.struct_size = sizeof o.info;
        st = seg_track_add_prompt(t, 0, 2, NULL, 0, &box, o.obj, sizeof(SegTrackObject), o.m, 2, &o.count, &o.info, NULL);
        CHECK(st == SEG_OK && o.count == 2 && o.obj[0].object_id == 1 && o.obj[1].object_id == 2 && records_match_masks(&o),
              "box on object 2: %s", last_error());
    }
    /* masks of the wrong size, an info struct too small: refused the same way */
    wrong = o.m[1];
    o.m[1].width = W - 1;
    out_poison(&o);
    CHECK(seg_track_frame(t, 0, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL, NULL) == SEG_INVALID_ARGUMENT, "mask 319 wide");
    o.count = 12345;
    CHECK(out_untouched(&o), "a refused mask size wrote outputs");
    o.m[1] = wrong;
    o.info.struct_size = 4;
    CHECK(seg_track_frame(t, 0, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, &o.info, NULL) == SEG_INVALID_ARGUMENT, "info struct_size 4");
    CHECK(state_of(t).tracking_started == 0, "a refused track_frame started tracking");

    /* the count alone, no arrays: always fine */
    count = 0;
    CHECK(seg_track_frame(t, 0, NULL, 0, NULL, 0, &count, NULL, NULL) == SEG_OK && count == 2, "count only: %s", last_error());
    CHECK(state_of(t).tracking_started == 1, "tracking started");
    /* a new object after tracking started (as SAM2's predictor allows); removed, then removed again */
    st = click(t, 0, 3, 0, &o, MAXO);
    CHECK(st == SEG_OK && o.count == 3 && o.obj[2].object_id == 3 && records_match_masks(&o), "a new object after tracking started: %s %s",
          seg_status_str(st), last_error());
    CHECK(seg_track_remove_object(t, 3) == SEG_OK && state_of(t).objects == 2, "remove object 3: %s", last_error());
    CHECK(seg_track_remove_object(t, 3) == SEG_INVALID_ARGUMENT && strstr(last_error(), "object 3") != NULL, "object 3 removed twice: %s",
          last_error());
    CHECK(seg_track_remove_object(NULL, 1) == SEG_INVALID_HANDLE, "remove_object on NULL");

    /* streaming: next with too small buffers adds nothing */
    for (i = 1; i <= nexts; i++) {
        make_frame(bgr, W, H, i);
        CHECK(next_frame(t, bgr, &o) == SEG_OK && o.count == 2 && o.info.frame == i && records_match_masks(&o), "next %d: %s", i, last_error());
        CHECK(o.info.image_encoder_ms > 0.0 && o.info.memory_attention_ms > 0.0, "next %d runs encoder and memory attention", i);
    }
    s = state_of(t);
    out_poison(&o);
    img = bgr_image(bgr, W, H);
    st = seg_track_next(t, &img, o.obj, sizeof(SegTrackObject), o.m, 1, &o.count, &o.info, NULL);
    CHECK(st == SEG_BUFFER_TOO_SMALL && o.count == 2, "next with capacity 1: %s count %zu", seg_status_str(st), o.count);
    o.count = 12345;
    CHECK(out_untouched(&o), "refused next wrote outputs");
    s2 = state_of(t);
    CHECK(memcmp(&s, &s2, sizeof s) == 0, "refused next changed the state (frames %lld -> %lld)", (long long)s.frames, (long long)s2.frames);
    img = bgr_image(small, 160, 120);
    out_poison(&o);
    st = seg_track_next(t, &img, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, &o.info, NULL);
    CHECK(st == SEG_INVALID_ARGUMENT && out_untouched(&o), "160x120 frame via next: %s", seg_status_str(st));
    s2 = state_of(t);
    CHECK(memcmp(&s, &s2, sizeof s) == 0, "refused frame changed the state");

    /* wrong kinds of handle: refused, nothing freed */
    CHECK(seg_free((SegSession *)t) == SEG_WRONG_SESSION_KIND, "seg_free on a track: %s", last_error());
    CHECK(seg_track_free((SegTrack *)video) == SEG_WRONG_SESSION_KIND, "seg_track_free on a session");
    CHECK(seg_run_unet(video, &img, o.m, NULL, 0, NULL, NULL) == SEG_WRONG_SESSION_KIND, "UNet run on a video session");
    CHECK(seg_track_create((SegSession *)t, NULL, NULL) != SEG_OK, "a track made from a track");
    make_frame(bgr, W, H, nexts + 1);
    CHECK(next_frame(t, bgr, &o) == SEG_OK && o.info.frame == nexts + 1, "track after seg_free(track): %s", last_error());
    CHECK(seg_track_frame(t, 1, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL, NULL) == SEG_OK && o.count == 2, "re-track frame 1: %s",
          last_error());
    /* records at the caller's stride: a record larger than this header's (a newer host's) gets the
     * known fields, its extra bytes and the records past the count stay as they were; a record size
     * below sizeof(SegTrackObject) is refused before anything runs */
    {
        union { SegTrackObject align; unsigned char rec[MAXO][sizeof(SegTrackObject) + 8]; } wide;
        size_t k, changed = 0;
        memset(&wide, 0xCD, sizeof wide);
        st = seg_track_frame(t, 1, &wide.align, sizeof wide.rec[0], o.m, MAXO, &o.count, NULL, NULL);
        CHECK(st == SEG_OK && o.count == 2, "records of sizeof + 8 bytes: %s %s", seg_status_str(st), last_error());
        for (i = 0; i < MAXO; i++) {
            memcpy(&o.obj[i], wide.rec[i], sizeof(SegTrackObject));
            for (k = i < 2 ? sizeof(SegTrackObject) : 0; k < sizeof wide.rec[0]; k++) changed += wide.rec[i][k] != 0xCD;
        }
        CHECK(changed == 0, "%zu bytes written past the records of a %zu-byte stride", changed, sizeof wide.rec[0]);
        CHECK(o.obj[0].object_id == 1 && o.obj[1].object_id == 2 && records_match_masks(&o), "records at a %zu-byte stride",
              sizeof wide.rec[0]);
        out_poison(&o);
        st = seg_track_frame(t, 1, o.obj, sizeof(SegTrackObject) - 4, o.m, MAXO, &o.count, NULL, NULL);
        CHECK(st == SEG_INVALID_ARGUMENT && out_untouched(&o), "object_size sizeof - 4: %s", seg_status_str(st));
        CHECK(strstr(last_error(), "SegTrackObject") != NULL, "message names the record: %s", last_error());
        st = seg_track_frame(t, 1, o.obj, 0, o.m, MAXO, &o.count, NULL, NULL);
        CHECK(st == SEG_INVALID_ARGUMENT && out_untouched(&o), "object_size 0: %s", seg_status_str(st));
    }

    /* reset: as new, same options; a different frame size is then fine */
    CHECK(seg_track_reset(t) == SEG_OK, "reset");
    s = state_of(t);
    CHECK(s.frames == 0 && s.objects == 0 && s.width == 0 && s.tracking_started == 0 && s.held_frames == 0 && s.keep_frames == 8, "state after reset");
    CHECK(seg_track_add_frame(t, &img, &idx, NULL, NULL) == SEG_OK && idx == 0 && state_of(t).width == 160, "160x120 after reset");

    CHECK(seg_track_free(t) == SEG_OK, "free");
    CHECK(seg_track_free(t) == SEG_INVALID_HANDLE, "double free");
    CHECK(seg_track_state(t, &s) == SEG_INVALID_HANDLE && next_frame(t, bgr, &o) == SEG_INVALID_HANDLE, "calls on a freed track");
    CHECK(seg_track_reset(t) == SEG_INVALID_HANDLE, "reset of a freed track");
    CHECK(seg_track_free(NULL) == SEG_OK && seg_track_reset(NULL) == SEG_INVALID_HANDLE, "NULL track");
    CHECK(seg_track_free((SegTrack *)((char *)t + 16)) == SEG_INVALID_HANDLE, "made-up handle");
    out_free(&o);
    free(bgr);
    free(small);
}

/* ---- 1b. a volume: a middle slice clicked, propagated both ways through seg_track_propagate ---- */
typedef struct {
    Out *out;
    const unsigned char *clicked; /* the mask the click gave on slice `clicked_frame` */
    int64_t clicked_frame;
    int64_t frames[64];
    int n, stop_after, bad_records, clicked_changed;
} Delivered;

static int32_t on_frame(int64_t frame, size_t count, void *user_data) {
    Delivered *d = user_data;
    d->out->count = count;
    if (count != 1 || !records_match_masks(d->out)) d->bad_records++;
    /* the clicked slice is a conditioning frame: it keeps the click's mask */
    if (d->clicked && frame == d->clicked_frame && (count < 1 || memcmp(d->out->px[0], d->clicked, (size_t)W * H) != 0)) d->clicked_changed++;
    if (d->n < 64) d->frames[d->n] = frame;
    d->n++;
    return d->n != d->stop_after;
}

static SegStatus propagate(SegTrack *t, const SegPropagation *request, Out *o, Delivered *d, SegCallControl *control) {
    const unsigned char *clicked = d->clicked;
    int64_t clicked_frame = d->clicked_frame;
    memset(d, 0, sizeof *d);
    d->out = o;
    d->clicked = clicked;
    d->clicked_frame = clicked_frame;
    d->stop_after = -1;
    o->info.struct_size = sizeof o->info;
    return seg_track_propagate(t, request, o->obj, sizeof(SegTrackObject), o->m, MAXO, &o->count, on_frame, d, &o->info, control);
}

static void volume_both_ways(SegSession *video, int slices) {
    unsigned char *bgr = malloc((size_t)W * H * 3), *clicked = malloc((size_t)W * H);
    SegTrackOptions opt = {.struct_size = sizeof opt};
    SegPropagation req = {.struct_size = sizeof req};
    SegTrack *t = NULL;
    SegTrackInfo info;
    SegStatus st;
    Delivered d;
    Out o;
    int i, mid = slices / 2, in_order = 1;

    out_init(&o);
    CHECK(seg_track_options_default(&opt) == SEG_OK && opt.volume == 0 && opt.corrections_as_conditioning == 0, "volume off by default");
    opt.volume = 1;
    opt.keep_frames = 2;
    opt.num_frames = (uint32_t)slices;
    CHECK(seg_track_create(video, &opt, &t) == SEG_OK, "volume track: %s", last_error());
    for (i = 0; i < slices; i++) {
        SegImage img = bgr_image(bgr, W, H);
        make_frame(bgr, W, H, i);
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        st = seg_track_add_frame(t, &img, NULL, &info, NULL);
        CHECK(st == SEG_OK && info.image_encoder_ms == 0.0, "slice %d added, not encoded: %s", i, last_error());
    }
    CHECK(state_of(t).volume == 1 && state_of(t).held_frames == 0, "volume state");
    st = click(t, mid, 1, mid, &o, MAXO);
    CHECK(st == SEG_OK && o.count == 1 && records_match_masks(&o), "click on slice %d: %s", mid, last_error());
    memcpy(clicked, o.px[0], (size_t)W * H);
    memset(&d, 0, sizeof d);
    d.clicked = clicked;
    d.clicked_frame = mid;

    /* a bad request: refused before anything runs, nothing written, no frame delivered */
    CHECK(seg_propagation_default(&req) == SEG_OK && req.direction == SEG_TRACK_FORWARD && req.use_start_frame == 0 && req.max_frames == -1,
          "seg_propagation_default");
    req.direction = 7;
    out_poison(&o);
    st = propagate(t, &req, &o, &d, NULL);
    o.count = 12345;
    CHECK(st == SEG_INVALID_ARGUMENT && d.n == 0 && out_untouched(&o), "direction 7: %s", seg_status_str(st));

    /* both ways from the middle slice: mid..last, then mid..0, every slice with the disc in its mask */
    req.direction = SEG_TRACK_BOTH_WAYS;
    req.use_start_frame = 1;
    req.start_frame = mid;
    st = propagate(t, &req, &o, &d, NULL);
    CHECK(st == SEG_OK && d.n == slices + 1, "both ways from slice %d: %s %s, %d frames", mid, seg_status_str(st), last_error(), d.n);
    for (i = 0; i < d.n && i < 64; i++) in_order &= d.frames[i] == (i < slices - mid ? mid + i : mid - (i - (slices - mid)));
    CHECK(in_order, "frames in order: the start slice to the last, then the start slice down to 0");
    CHECK(d.bad_records == 0 && d.clicked_changed == 0, "%d frames with bad records; the clicked slice changed %d times", d.bad_records,
          d.clicked_changed);
    CHECK(o.info.frame == 0 && o.info.memory_attention_ms > 0.0, "out_info: the last frame (%lld), summed times", (long long)o.info.frame);
    CHECK(state_of(t).held_frames <= 3, "held frames: 2 cached + the conditioning slice (%u)", state_of(t).held_frames);

    /* the frame callback stops after 2 frames: SEG_CANCELLED */
    req.direction = SEG_TRACK_REVERSE;
    req.start_frame = -1;
    memset(&d, 0, sizeof d);
    d.out = &o;
    d.stop_after = 2;
    st = seg_track_propagate(t, &req, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, on_frame, &d, NULL, NULL);
    CHECK(st == SEG_CANCELLED && d.n == 2 && d.frames[0] == slices - 1 && d.frames[1] == slices - 2, "stopped by the callback: %s, %d frames",
          seg_status_str(st), d.n);

    /* NULL request: forward from the prompted slice to the end */
    st = propagate(t, NULL, &o, &d, NULL);
    CHECK(st == SEG_OK && d.n == slices - mid && d.frames[0] == mid, "NULL request: %s, %d frames", seg_status_str(st), d.n);

    /* clear the prompts of the clicked slice: propagation then has no prompt to start from */
    o.info.struct_size = sizeof o.info;
    st = seg_track_clear_prompts(t, mid, 1, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, &o.info);
    CHECK(st == SEG_OK && o.count == 1 && records_match_masks(&o), "clear_prompts: %s", last_error());
    st = propagate(t, NULL, &o, &d, NULL);
    CHECK(st == SEG_INVALID_ARGUMENT && d.n == 0, "propagate without a prompt: %s", seg_status_str(st));
    CHECK(seg_track_clear_prompts(t, mid, 9, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL) == SEG_INVALID_ARGUMENT,
          "clear_prompts of an unknown object");
    CHECK(seg_track_free(t) == SEG_OK, "free the volume");
    out_free(&o);
    free(bgr);
    free(clicked);
}

/* ---- 2. threads ---- */
typedef struct {
    SegTrack *track;
    int calls;
    int64_t *frames; /* info.frame of each call */
    int status[8];   /* count per status: OK, INVALID_ARGUMENT, other */
} Worker;

static void *feed(void *arg) {
    Worker *w = arg;
    unsigned char *bgr = malloc((size_t)W * H * 3);
    Out o;
    int k;
    out_init(&o);
    for (k = 0; k < w->calls; k++) {
        SegStatus st;
        make_frame(bgr, W, H, k + 1);
        st = next_frame(w->track, bgr, &o);
        w->frames[k] = st == SEG_OK ? o.info.frame : -1;
        w->status[st == SEG_OK ? 0 : 2]++;
        if (st != SEG_OK) fprintf(stderr, "feed: %s %s\n", seg_status_str(st), last_error());
        if (st == SEG_OK && !records_match_masks(&o)) w->status[3]++;
    }
    out_free(&o);
    free(bgr);
    return NULL;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* 4 threads call seg_track_next on one track: every call succeeds, each gets its own frame index
 * (the calls are serialised: indices 1..4K, each once), and the records describe the masks. */
static void threads_feed(SegSession *video, int per_thread) {
    enum { T = 4 };
    pthread_t th[T];
    Worker w[T];
    int64_t *all = malloc(sizeof(int64_t) * T * per_thread);
    unsigned char *bgr = malloc((size_t)W * H * 3);
    Out o;
    SegTrack *t;
    int i, k, ok = 0, bad_records = 0, distinct = 1;
    double t0;
    out_init(&o);
    t = seeded_track(video, SEG_TRACK_DEFAULT_KEEP_FRAMES, bgr, &o);
    t0 = now_ms();
    for (i = 0; i < T; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].track = t; w[i].calls = per_thread; w[i].frames = all + i * per_thread;
        pthread_create(&th[i], NULL, feed, &w[i]);
    }
    for (i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].status[0];
        bad_records += w[i].status[3];
    }
    qsort(all, (size_t)T * per_thread, sizeof *all, cmp_i64);
    for (k = 0; k < T * per_thread; k++)
        if (all[k] != k + 1) distinct = 0;
    CHECK(ok == T * per_thread, "%d of %d calls OK", ok, T * per_thread);
    CHECK(distinct, "frame indices of the calls are not 1..%d each once", T * per_thread);
    CHECK(bad_records == 0, "%d records differ from their masks", bad_records);
    CHECK(state_of(t).frames == 1 + T * per_thread, "frames %lld, expected %d", (long long)state_of(t).frames, 1 + T * per_thread);
    printf("threads: %d threads x %d seg_track_next on one track: %d OK, frame indices 1..%d each once, %.0f ms\n", T, per_thread, ok,
           T * per_thread, now_ms() - t0);
    CHECK(seg_track_free(t) == SEG_OK, "free");
    out_free(&o);
    free(all);
    free(bgr);
}

/* Workers stream frames while another thread resets the track. After a reset the track has no
 * object, so a worker's next gets SEG_INVALID_ARGUMENT ("no object to track") and the worker
 * re-seeds it (add a frame, click on the last frame), which may itself meet a reset
 * (SEG_INVALID_ARGUMENT: no frame). No other status may come back. */
typedef struct {
    SegTrack *track;
    int calls;
    int ok, invalid, other, reseeds;
} ResetWorker;

static volatile int stop_resetting = 0;
static int ok_total = 0; /* OK calls of all workers (atomic) */

static void *feed_and_reseed(void *arg) {
    ResetWorker *w = arg;
    unsigned char *bgr = malloc((size_t)W * H * 3);
    Out o;
    int k;
    out_init(&o);
    make_frame(bgr, W, H, 0);
    for (k = 0; k < w->calls; k++) {
        SegStatus st = next_frame(w->track, bgr, &o);
        if (st == SEG_INVALID_ARGUMENT) {
            w->invalid++;
            w->reseeds++;
            st = add_frame(w->track, bgr, NULL);
            if (st != SEG_OK) w->other++;
            st = click(w->track, -1, 1, 0, &o, MAXO);
            if (st == SEG_INVALID_ARGUMENT) w->invalid++;
            else if (st != SEG_OK) w->other++;
        } else if (st == SEG_OK) {
            w->ok++;
            __atomic_add_fetch(&ok_total, 1, __ATOMIC_SEQ_CST);
        } else {
            w->other++;
            fprintf(stderr, "reset race: %s %s\n", seg_status_str(st), last_error());
        }
    }
    out_free(&o);
    free(bgr);
    return NULL;
}

/* Resets the track a few ms after each time a worker got a frame tracked since the last reset: the
 * reset lands while other workers' calls are running, and the workers make progress between resets
 * however slow a call is (valgrind). */
static void *resetter(void *arg) {
    SegTrack *t = arg;
    int *resets = malloc(sizeof *resets), seen = 0;
    *resets = 0;
    while (!stop_resetting) {
        if (__atomic_load_n(&ok_total, __ATOMIC_SEQ_CST) == seen) {
            sleep_ms(1);
            continue;
        }
        sleep_ms(5 + *resets % 3 * 10);
        seen = __atomic_load_n(&ok_total, __ATOMIC_SEQ_CST);
        if (seg_track_reset(t) == SEG_OK) (*resets)++;
    }
    return resets;
}

static void threads_reset(SegSession *video, int per_thread) {
    enum { T = 3 };
    pthread_t th[T], rt;
    ResetWorker w[T];
    unsigned char *bgr = malloc((size_t)W * H * 3);
    Out o;
    SegTrack *t;
    SegTrackState s;
    void *r;
    int i, resets, ok = 0, invalid = 0, other = 0, reseeds = 0;
    out_init(&o);
    t = seeded_track(video, SEG_TRACK_DEFAULT_KEEP_FRAMES, bgr, &o);
    stop_resetting = 0;
    ok_total = 0;
    pthread_create(&rt, NULL, resetter, t);
    for (i = 0; i < T; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].track = t; w[i].calls = per_thread;
        pthread_create(&th[i], NULL, feed_and_reseed, &w[i]);
    }
    for (i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].ok; invalid += w[i].invalid; other += w[i].other; reseeds += w[i].reseeds;
    }
    stop_resetting = 1;
    pthread_join(rt, &r);
    resets = *(int *)r;
    free(r);
    printf("reset race: %d threads x %d seg_track_next, %d resets from another thread: %d OK, %d SEG_INVALID_ARGUMENT "
           "(no object / no frame after a reset; %d re-seeds), %d other\n", T, per_thread, resets, ok, invalid, reseeds, other);
    CHECK(other == 0, "%d calls returned a status other than OK / SEG_INVALID_ARGUMENT", other);
    CHECK(resets > 0 && ok > 0, "the race did not happen: %d resets, %d OK", resets, ok);
    /* afterwards the track is consistent and usable */
    CHECK(seg_track_reset(t) == SEG_OK, "reset");
    s = state_of(t);
    CHECK(s.frames == 0 && s.objects == 0 && s.held_frames == 0 && s.held_outputs == 0 && s.tracking_started == 0, "state after the final reset");
    CHECK(add_frame(t, bgr, NULL) == SEG_OK && click(t, 0, 1, 0, &o, MAXO) == SEG_OK && next_frame(t, bgr, &o) == SEG_OK && o.info.frame == 1,
          "track after the race: %s", last_error());
    CHECK(seg_track_free(t) == SEG_OK, "free");
    out_free(&o);
    free(bgr);
}

/* One thread streams frames; the main thread frees the track while a call is inside. The call in
 * flight finishes with SEG_OK, every later call gets SEG_INVALID_HANDLE. */
typedef struct {
    SegTrack *track;
    volatile int in_call, calls_started;
    int statuses[64];
    int n;
} FreeWorker;

static void *feed_until_freed(void *arg) {
    FreeWorker *w = arg;
    unsigned char *bgr = malloc((size_t)W * H * 3);
    Out o;
    out_init(&o);
    while (w->n < 64) {
        SegStatus st;
        make_frame(bgr, W, H, w->n + 1);
        __atomic_store_n(&w->calls_started, w->n + 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&w->in_call, 1, __ATOMIC_SEQ_CST);
        st = next_frame(w->track, bgr, &o);
        __atomic_store_n(&w->in_call, 0, __ATOMIC_SEQ_CST);
        w->statuses[w->n++] = st;
        if (st != SEG_OK) break;
    }
    out_free(&o);
    free(bgr);
    return NULL;
}

static void threads_free(SegSession *video) {
    pthread_t th;
    FreeWorker w;
    unsigned char *bgr = malloc((size_t)W * H * 3);
    Out o;
    int i, in_flight = 0, call_at_free = 0, first_bad = -1, tries;
    SegStatus st;
    out_init(&o);
    memset(&w, 0, sizeof w);
    w.track = seeded_track(video, SEG_TRACK_DEFAULT_KEEP_FRAMES, bgr, &o);
    pthread_create(&th, NULL, feed_until_freed, &w);
    /* wait for the second call to be inside segrt (a call takes tens of ms; a few ms in is inside) */
    for (tries = 0; tries < 200000; tries++) {
        if (__atomic_load_n(&w.calls_started, __ATOMIC_SEQ_CST) >= 2 && __atomic_load_n(&w.in_call, __ATOMIC_SEQ_CST)) break;
        sleep_ms(1);
    }
    /* the call seen started here has been inside segrt for 3 ms when the free comes, unless it
     * finished meanwhile (then the check below is only about the order of the statuses) */
    call_at_free = __atomic_load_n(&w.calls_started, __ATOMIC_SEQ_CST);
    sleep_ms(3);
    st = seg_track_free(w.track);
    in_flight = __atomic_load_n(&w.in_call, __ATOMIC_SEQ_CST) && __atomic_load_n(&w.calls_started, __ATOMIC_SEQ_CST) == call_at_free;
    pthread_join(th, NULL);
    CHECK(st == SEG_OK, "free during a call: %s", seg_status_str(st));
    for (i = 0; i < w.n; i++)
        if (w.statuses[i] != SEG_OK) { first_bad = i; break; }
    CHECK(!in_flight || first_bad >= call_at_free, "call %d returned %s, the free came during call %d", first_bad + 1,
          first_bad >= 0 ? seg_status_str(w.statuses[first_bad]) : "-", call_at_free);
    CHECK(first_bad >= 0 && w.statuses[first_bad] == SEG_INVALID_HANDLE && first_bad == w.n - 1, "the call after the free: %s",
          first_bad >= 0 ? seg_status_str(w.statuses[first_bad]) : "none failed");
    printf("free during a call: freed while call %d was %s; calls 1..%d SEG_OK, call %d %s\n", call_at_free,
           in_flight ? "inside segrt" : "(not caught inside)", first_bad, first_bad + 1,
           first_bad >= 0 ? seg_status_str(w.statuses[first_bad]) : "-");
    CHECK(seg_track_free(w.track) == SEG_INVALID_HANDLE, "second free");
    out_free(&o);
    free(bgr);
}

/* ---- 3. the video session freed while a track lives: the track keeps the model (run last: it
 * frees the session) ---- */
static void session_freed_first(SegSession *video) {
    unsigned char *bgr = malloc((size_t)W * H * 3);
    Out o;
    SegTrack *t, *t2 = NULL;
    int i;
    out_init(&o);
    t = seeded_track(video, 2, bgr, &o);
    CHECK(seg_free(video) == SEG_OK, "free the session under a live track");
    CHECK(seg_free(video) == SEG_INVALID_HANDLE, "double free of the session");
    CHECK(seg_track_create(video, NULL, &t2) == SEG_INVALID_HANDLE && t2 == NULL, "a track from a freed session");
    for (i = 1; i <= 2; i++) {
        make_frame(bgr, W, H, i);
        CHECK(next_frame(t, bgr, &o) == SEG_OK && o.info.frame == i, "next %d after the session was freed: %s", i, last_error());
    }
    CHECK(state_of(t).held_frames <= 2, "held_frames %u with keep_frames 2", state_of(t).held_frames);
    CHECK(seg_track_free(t) == SEG_OK, "free the track last");
    printf("session freed first: the track ran 2 more frames, then freed\n");
    out_free(&o);
    free(bgr);
}

/* ---- 4. soak: memory over n frames through seg_track_next ---- */
/* The lowest value over frames [from, to): memory in use swings by ~12 MB from frame to frame as ONNX
 * Runtime's arena releases and takes back blocks; a leak raises the floor under the swings. */
static double window_floor(const double *mb, int from, int to) {
    double floor = mb[from];
    int i;
    for (i = from; i < to; i++)
        if (mb[i] < floor) floor = mb[i];
    return floor;
}

static double soak(SegSession *video, uint32_t keep, int n, double *growth) {
    unsigned char *bgr = malloc((size_t)W * H * 3);
    double *rss = calloc((size_t)n + 1, sizeof *rss), *heap = calloc((size_t)n + 1, sizeof *heap);
    Out o;
    SegTrack *t;
    SegTrackState s;
    double t0 = now_ms();
    uint32_t max_held = 0;
    int i, bad = 0;
    out_init(&o);
    t = seeded_track(video, keep, bgr, &o);
    printf("soak keep_frames=%u: RSS %.1f MB after the first frame\n", keep, rss_mb());
    for (i = 1; i <= n; i++) {
        make_frame(bgr, W, H, i);
        if (next_frame(t, bgr, &o) != SEG_OK || o.info.frame != i) {
            bad++;
            fprintf(stderr, "soak frame %d: %s\n", i, last_error());
        }
        s = state_of(t);
        if (s.held_frames > max_held) max_held = s.held_frames;
        rss[i] = rss_mb();
        heap[i] = heap_mb();
        if (i == 50 || i == 100 || i == 250 || i == n)
            printf("soak keep_frames=%u: frame %d RSS %.1f MB, heap in use %.1f MB, held_frames %u, held_outputs %u\n", keep, i, rss[i],
                   heap[i], s.held_frames, s.held_outputs);
    }
    /* growth: the floor of the heap in use over the last fifth of the frames against its floor over the
     * second fifth (frames 400..500 against 100..200 for 500 frames), after the warm-up. RSS is printed,
     * not checked: in CI its floor once settled 17 MB higher with keep_frames 8 (freed pages malloc kept). */
    const int early = n / 5, early_end = 2 * n / 5, late = 4 * n / 5;
    const double heap_early = n >= 100 ? window_floor(heap, early, early_end) : 0.0;
    const double heap_late = n >= 100 ? window_floor(heap, late, n + 1) : 0.0;
    *growth = heap_late - heap_early;
    CHECK(bad == 0, "%d soak frames failed", bad);
    if (keep) CHECK(max_held <= keep, "held_frames reached %u with keep_frames %u", max_held, keep);
    else CHECK(max_held == (uint32_t)n + 1, "keep_frames 0 held %u of %d frames", max_held, n + 1);
    if (keep && n > (int)keep + 1) {
        /* frames that left the window are out of reach, the last one is not */
        CHECK(seg_track_frame(t, 1, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL, NULL) == SEG_INVALID_ARGUMENT, "frame 1 no longer held");
        CHECK(strstr(last_error(), "no longer held") != NULL, "message: %s", last_error());
        CHECK(seg_track_frame(t, -1, o.obj, sizeof(SegTrackObject), o.m, MAXO, &o.count, NULL, NULL) == SEG_OK, "last frame: %s", last_error());
    }
    printf("soak keep_frames=%u: %d frames, %.1f ms per frame", keep, n, (now_ms() - t0) / n);
    if (n >= 100)
        printf(", lowest heap in use frames %d..%d %.1f MB, frames %d..%d %.1f MB: growth %+.1f MB (lowest RSS %+.1f MB)", early,
               early_end, heap_early, late, n, heap_late, *growth, window_floor(rss, late, n + 1) - window_floor(rss, early, early_end));
    printf("\n");
    CHECK(seg_track_free(t) == SEG_OK, "free");
    out_free(&o);
    free(rss);
    free(heap);
    free(bgr);
    return *growth;
}

int main(int argc, char **argv) {
    char dir[4096];
    SegSession *video = NULL, *other = NULL;
    SegStatus st;
    int quick = 0, soak_frames = 500, i;
    uint32_t soak_keep = SEG_TRACK_DEFAULT_KEEP_FRAMES;
    double t0 = now_ms(), bounded = 0.0, unbounded = 0.0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s REPO_DIR [--quick] [--soak N] [--soak-keep K]\n", argv[0]);
        return 2;
    }
    for (i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) { quick = 1; soak_frames = 0; }
        else if (strcmp(argv[i], "--soak") == 0 && i + 1 < argc) soak_frames = atoi(argv[++i]);
        else if (strcmp(argv[i], "--soak-keep") == 0 && i + 1 < argc) soak_keep = (uint32_t)atoi(argv[++i]);
        else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
    }
    snprintf(dir, sizeof dir, "%s/models/sam2/video", argv[1]);

    /* the video session: a missing folder and wrong calls are statuses */
    CHECK(seg_create_sam2_video("/no/such/folder", NULL, &other) == SEG_MODEL_NOT_FOUND && other == NULL, "missing folder");
    CHECK(strstr(last_error(), "/no/such/folder") != NULL, "message names the folder: %s", last_error());
    CHECK(seg_create_sam2_video(dir, NULL, NULL) == SEG_NULL_POINTER, "NULL out_session");
    CHECK(seg_track_options_default(NULL) == SEG_NULL_POINTER, "NULL options");
    st = seg_create_sam2_video(dir, NULL, &video);
    CHECK(st == SEG_OK, "seg_create_sam2_video: %s %s", seg_status_str(st), last_error());
    if (st != SEG_OK) return 1;
    printf("video session created in %.0f ms\n", now_ms() - t0);

    lifecycle(video, quick ? 1 : 3);
    volume_both_ways(video, quick ? 4 : 9);
    threads_feed(video, quick ? 1 : 10);
    if (!quick) threads_reset(video, 15);
    threads_free(video);
    if (soak_frames > 0) {
        soak(video, soak_keep, soak_frames, &bounded);
        /* the same soak without a window: the growth the bound must tell apart */
        if (soak_keep != 0 && soak_frames >= 100) soak(video, 0, soak_frames, &unbounded);
        if (soak_keep != 0 && soak_frames >= 100)
            printf("soak: growth of the lowest heap in use, frames %d..%d to %d..%d: keep_frames=%u %+.1f MB, keep_frames=0 %+.1f MB\n", soak_frames / 5,
                   2 * soak_frames / 5, 4 * soak_frames / 5, soak_frames, soak_keep, bounded,
                   unbounded);
        /* AddressSanitizer's quarantine holds freed memory: RSS moves by tens of MB either way there. */
#if !defined(__SANITIZE_ADDRESS__)
        if (soak_frames >= 500) CHECK(bounded < 10.0, "the lowest heap in use grew %.1f MB from frames %d..%d to %d..%d with keep_frames %u", bounded, soak_frames / 5,
                                         2 * soak_frames / 5, 4 * soak_frames / 5, soak_frames, soak_keep);
#endif
    }
    session_freed_first(video);
    printf("track C host: %d checks, %d failed, %.1f s\n", checks, failures, (now_ms() - t0) / 1e3);
    return failures ? 1 : 0;
}
