/* The contract at its edges, as a host meets them: record sizes no buffer can have, the docs'
 * cancel-then-reset sequence, a cancelled control given a call whose result is cached, and a call
 * re-entered from the progress callback of another on the same session, a call waiting for a pool's
 * session, progress that ends at 1.0. Each case is a status,
 * never a crash, and a refused call has no effect.
 *
 * Usage: test_edges REPO_DIR */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "segrt.h"

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

static const char *last_error(void) {
    static _Thread_local char buf[2048];
    seg_last_error(buf, sizeof buf);
    return buf;
}

/* An RGB picture with a few discs: something for the models to find. `seed` varies it. */
static unsigned char *picture(int w, int h, int seed) {
    unsigned char *px = malloc((size_t)w * h * 3);
    int x, y;
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            int dx = x % 64 - 32, dy = y % 64 - 32, in = dx * dx + dy * dy < (12 + seed) * (12 + seed);
            unsigned char *q = px + 3 * ((size_t)y * w + x);
            q[0] = (unsigned char)(in ? 210 : 40 + (x * 3 + y + seed * 17) % 50);
            q[1] = (unsigned char)(in ? 90 : 70 + (x + 2 * y) % 40);
            q[2] = (unsigned char)(in ? 60 + seed * 40 : 110);
        }
    return px;
}

static SegImage rgb_image(const unsigned char *px, int w, int h) {
    SegImage img;
    img.data = px; img.width = w; img.height = h; img.stride = 0; img.format = SEG_FORMAT_RGB24;
    img.plane1 = NULL; img.plane2 = NULL;
    return img;
}

static size_t changed_bytes(const void *p, unsigned char fill, size_t n) {
    const unsigned char *b = p;
    size_t i, k = 0;
    for (i = 0; i < n; i++) k += b[i] != fill;
    return k;
}

/* seg_sam2_everything with record sizes whose array would exceed the address space: refused with
 * SEG_INVALID_ARGUMENT, nothing written (an unchecked `object_size * capacity` wrote to a wild
 * address: SIGSEGV). The honest sizes around them still work. */
static void record_sizes(SegSession *sam, const SegImage *img) {
    enum { CAP = 192 };
    const size_t rec = sizeof(SegEverythingObject);
    const size_t half = (size_t)1 << (sizeof(size_t) * 8 - 2);   /* 2 of these exceed isize::MAX */
    const struct { size_t size, capacity; } bad[] = {
        {(size_t)1 << (sizeof(size_t) * 8 - 1), CAP},   /* the case that crashed: 1 << 63, 192 records */
        {SIZE_MAX, 2}, {half, 2}, {rec, SIZE_MAX / rec + 1}, {rec, SIZE_MAX}, {half / 4, CAP},
    };
    SegEverythingOptions o = {.struct_size = sizeof o};
    SegEverythingObject *objects = malloc(2 * CAP * rec);
    SegEverythingInfo info;
    size_t count, i, n;
    SegStatus st;

    CHECK(seg_everything_options_default(&o) == SEG_OK, "options: %s", last_error());
    o.points_per_side = 4;
    o.pred_iou_thresh = 0.0f;          /* keep every mask: several records to write */
    o.stability_score_thresh = 0.0f;
    o.box_nms_thresh = 1.0f;
    st = seg_sam2_everything(sam, img, &o, NULL, objects, rec, CAP, &count, NULL, NULL);
    CHECK(st == SEG_OK && count >= 2, "everything with honest sizes: %s %s, %zu objects", seg_status_str(st), last_error(), count);
    n = count;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(objects, 0x5A, 2 * CAP * rec);
        memset(&info, 0x5A, sizeof info);
        info.struct_size = sizeof info;
        count = 12345;
        st = seg_sam2_everything(sam, img, &o, NULL, objects, bad[i].size, bad[i].capacity, &count, &info, NULL);
        CHECK(st == SEG_INVALID_ARGUMENT, "object_size %zu x capacity %zu: %s (want SEG_INVALID_ARGUMENT)", bad[i].size,
              bad[i].capacity, seg_status_str(st));
        CHECK(strstr(last_error(), "address space") != NULL, "message: %s", last_error());
        CHECK(changed_bytes(objects, 0x5A, 2 * CAP * rec) == 0 && count == 12345 && info.objects == 0x5A5A5A5Au,
              "a refused call wrote outputs (object_size %zu)", bad[i].size);
    }
    /* a larger record (a newer header's) at its own stride, in an array that holds it */
    memset(objects, 0x5A, 2 * CAP * rec);
    st = seg_sam2_everything(sam, img, &o, NULL, objects, 2 * rec, CAP, &count, NULL, NULL);
    CHECK(st == SEG_OK && count == n, "records of twice the size: %s %s", seg_status_str(st), last_error());
    CHECK(st != SEG_OK || (changed_bytes((unsigned char *)objects + rec, 0x5A, rec) == 0 && objects[2].id == 2),
          "records of twice the size: written at the wrong stride");
    free(objects);
}

/* The docs' sequence: seg_control_cancel while a run is in flight, then seg_control_reset at once
 * (before the run returns). The call must answer SEG_CANCELLED (it answered SEG_INFERENCE_FAILED:
 * the failure was judged by asking the reset control after the terminated run returned). */
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int started, stop;
    SegCallControl *control;
    long delay_us;
} Canceller;

static int32_t signal_run_start(int32_t stage, float fraction, void *user_data) {
    Canceller *c = user_data;
    if (fraction == 0.0f && (stage == SEG_STAGE_RUN || stage == SEG_STAGE_ENCODE)) {
        pthread_mutex_lock(&c->mutex);
        c->started = 1;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->mutex);
    }
    return 1;
}

static void *cancel_then_reset(void *arg) {
    Canceller *c = arg;
    for (;;) {
        struct timespec t = {0, 0};
        pthread_mutex_lock(&c->mutex);
        while (!c->started && !c->stop) pthread_cond_wait(&c->cond, &c->mutex);
        if (c->stop) { pthread_mutex_unlock(&c->mutex); return NULL; }
        c->started = 0;
        pthread_mutex_unlock(&c->mutex);
        t.tv_nsec = c->delay_us * 1000;   /* into the run */
        nanosleep(&t, NULL);
        seg_control_cancel(c->control);
        seg_control_reset(c->control);
    }
}

static void cancel_reset(const char *repo) {
    enum { W = 512, H = 512, CALLS = 12 };
    char path[4096];
    unsigned char *px = picture(W, H, 0), *mask = malloc((size_t)W * H);
    SegImage img = rgb_image(px, W, H);
    SegMask out;
    SegSession *unet = NULL;
    Canceller c;
    pthread_t thread;
    int i, cancelled = 0, ok = 0;
    SegStatus st;

    snprintf(path, sizeof path, "%s/models/demo_unet.onnx", repo);
    st = seg_create(path, NULL, &unet);
    CHECK(st == SEG_OK, "seg_create: %s %s", seg_status_str(st), last_error());
    if (st != SEG_OK) { free(px); free(mask); return; }
    out.data = mask; out.width = W; out.height = H; out.stride = 0;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.mutex, NULL);
    pthread_cond_init(&c.cond, NULL);
    CHECK(seg_control_create(&c.control) == SEG_OK, "seg_control_create");
    CHECK(seg_control_set_progress(c.control, signal_run_start, &c) == SEG_OK, "set_progress");
    CHECK(pthread_create(&thread, NULL, cancel_then_reset, &c) == 0, "pthread_create");
    /* On a loaded machine the cancelling thread may wake after short runs ended: go on (up to 20
       times as many calls) until one was cancelled, so the case is always tried. */
    for (i = 0; i < CALLS || (cancelled == 0 && i < 20 * CALLS); i++) {
        c.delay_us = 200 + 300 * (i % 4);
        st = seg_run_unet(unet, &img, &out, NULL, 0, NULL, c.control);
        /* OK where the run ended before the cancel came; never a failure */
        CHECK(st == SEG_OK || st == SEG_CANCELLED, "call %d cancelled then reset: %s %s", i, seg_status_str(st), last_error());
        cancelled += st == SEG_CANCELLED;
        ok += st == SEG_OK;
    }
    pthread_mutex_lock(&c.mutex);
    c.stop = 1;
    pthread_cond_broadcast(&c.cond);
    pthread_mutex_unlock(&c.mutex);
    pthread_join(thread, NULL);
    printf("cancel then reset at once: %d of %d calls SEG_CANCELLED, %d finished first\n", cancelled, i, ok);
    CHECK(cancelled > 0, "no call was cancelled: the runs ended before the cancel (the case was not tried)");
    /* after it all the control runs a call to the end */
    CHECK(seg_control_set_progress(c.control, NULL, NULL) == SEG_OK, "remove progress");
    st = seg_run_unet(unet, &img, &out, NULL, 0, NULL, c.control);
    CHECK(st == SEG_OK, "a run under the reset control: %s %s", seg_status_str(st), last_error());
    seg_control_free(c.control);
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.mutex);
    seg_free(unet);
    free(px);
    free(mask);
}

/* A cancelled control cancels every call given it until reset, also one whose result is cached. */
static void cancel_cached(SegSession *sam, const SegImage *img) {
    SegCallControl *control = NULL;
    SegEverythingOptions o = {.struct_size = sizeof o};
    SegEverythingObject objects[64];
    SegEverythingInfo info;
    uint16_t *labels = malloc((size_t)img->width * img->height * 2);
    SegLabelImage l;
    double ms = -1.0;
    size_t count = 0;
    SegStatus st;

    CHECK(seg_everything_options_default(&o) == SEG_OK, "options");
    o.points_per_side = 4;
    l.data = labels; l.width = img->width; l.height = img->height; l.stride = 0;
    CHECK(seg_control_create(&control) == SEG_OK, "seg_control_create");
    CHECK(seg_sam2_set_image(sam, img, &ms, NULL) == SEG_OK, "set_image: %s", last_error());
    st = seg_sam2_everything(sam, NULL, &o, &l, objects, sizeof objects[0], 64, &count, NULL, NULL);
    CHECK(st == SEG_OK, "everything (now cached): %s %s", seg_status_str(st), last_error());

    CHECK(seg_control_cancel(control) == SEG_OK, "cancel");
    ms = -1.0;
    st = seg_sam2_set_image(sam, img, &ms, control);
    CHECK(st == SEG_CANCELLED && ms == -1.0, "set_image of the cached image under a cancelled control: %s", seg_status_str(st));
    memset(labels, 0x5A, (size_t)img->width * img->height * 2);
    memset(objects, 0x5A, sizeof objects);
    memset(&info, 0x5A, sizeof info);
    info.struct_size = sizeof info;
    count = 777;
    st = seg_sam2_everything(sam, NULL, &o, &l, objects, sizeof objects[0], 64, &count, &info, control);
    CHECK(st == SEG_CANCELLED, "cached everything under a cancelled control: %s", seg_status_str(st));
    CHECK(count == 777 && changed_bytes(objects, 0x5A, sizeof objects) == 0 &&
          changed_bytes(labels, 0x5A, (size_t)img->width * img->height * 2) == 0 && info.objects == 0x5A5A5A5Au,
          "a cancelled cached call wrote its outputs");
    CHECK(seg_control_reset(control) == SEG_OK, "reset");
    st = seg_sam2_everything(sam, NULL, &o, &l, objects, sizeof objects[0], 64, &count, &info, control);
    CHECK(st == SEG_OK && info.cached == 1, "after reset the cached result: %s %s", seg_status_str(st), last_error());
    seg_control_free(control);
    free(labels);
}

/* seg_sam2_set_image re-entered from the progress callback of another seg_sam2_set_image on the
 * same session: the nested call is refused, and has no effect (it cancelled the outer encode). */
typedef struct {
    SegSession *sam;
    const SegImage *other;
    SegStatus nested;
    int calls;
} Reentry;

static int32_t set_other_image(int32_t stage, float fraction, void *user_data) {
    Reentry *r = user_data;
    if (stage == SEG_STAGE_ENCODE && fraction == 0.0f && r->calls++ == 0) r->nested = seg_sam2_set_image(r->sam, r->other, NULL, NULL);
    return 1;
}

static void reentry(SegSession *sam, const SegImage *a, const SegImage *b) {
    SegCallControl *control = NULL;
    Reentry r;
    double ms;
    SegStatus st;
    int cached_b;

    CHECK(seg_control_create(&control) == SEG_OK, "seg_control_create");
    for (cached_b = 0; cached_b <= 1; cached_b++) {
        CHECK(seg_sam2_reset(sam) == SEG_OK, "reset");
        if (cached_b) CHECK(seg_sam2_set_image(sam, b, NULL, NULL) == SEG_OK, "set_image b: %s", last_error());
        memset(&r, 0, sizeof r);
        r.sam = sam;
        r.other = b;
        r.nested = SEG_OK;
        CHECK(seg_control_set_progress(control, set_other_image, &r) == SEG_OK, "set_progress");
        st = seg_sam2_set_image(sam, a, NULL, control);
        CHECK(r.calls > 0, "the progress callback was not called");
        CHECK(r.nested == SEG_INVALID_ARGUMENT, "nested set_image (%s cached): %s", cached_b ? "b" : "nothing",
              seg_status_str(r.nested));
        CHECK(st == SEG_OK, "the outer set_image after a refused nested one (%s cached): %s %s", cached_b ? "b" : "nothing",
              seg_status_str(st), last_error());
        /* the image set last is a: setting it again encodes nothing */
        ms = -1.0;
        st = seg_sam2_set_image(sam, a, &ms, NULL);
        CHECK(st == SEG_OK && ms == 0.0, "image a is not the cached one after the refused call: %s, %.1f ms", seg_status_str(st), ms);
    }
    seg_control_free(control);
}

/* Progress ends with a report of 1.0 for every stage that starts one. */
typedef struct {
    int32_t stage;
    float fraction;
    int calls;
} LastProgress;

static int32_t remember_progress(int32_t stage, float fraction, void *user_data) {
    LastProgress *p = user_data;
    p->stage = stage;
    p->fraction = fraction;
    p->calls++;
    return 1;
}

static void progress_ends(const char *repo, SegSession *sam, const SegImage *small) {
    enum { W = 512, H = 512 };
    char path[4096];
    unsigned char *px = picture(W, H, 2), *mask = malloc((size_t)W * H);
    SegImage img = rgb_image(px, W, H);
    SegMask out;
    SegOptions opt = {.struct_size = sizeof opt};
    SegEverythingOptions eo = {.struct_size = sizeof eo};
    SegSession *unet = NULL;
    SegCallControl *control = NULL;
    LastProgress p;
    size_t count;
    int tiled;
    SegStatus st;

    out.data = mask; out.width = W; out.height = H; out.stride = 0;
    CHECK(seg_control_create(&control) == SEG_OK, "seg_control_create");
    CHECK(seg_control_set_progress(control, remember_progress, &p) == SEG_OK, "set_progress");
    snprintf(path, sizeof path, "%s/models/demo_unet.onnx", repo);
    for (tiled = 0; tiled <= 1; tiled++) {
        CHECK(seg_options_default(&opt) == SEG_OK, "defaults");
        if (tiled) { opt.tile_mode = SEG_TILE_ON; opt.tile_width = 256; opt.tile_height = 256; }
        st = seg_create(path, &opt, &unet);
        CHECK(st == SEG_OK, "seg_create: %s", last_error());
        if (st != SEG_OK) continue;
        memset(&p, 0, sizeof p);
        st = seg_run_unet(unet, &img, &out, NULL, 0, NULL, control);
        CHECK(st == SEG_OK && p.stage == (tiled ? SEG_STAGE_TILES : SEG_STAGE_RUN) && p.fraction == 1.0f,
              "%s UNet: %s, last progress stage %d at %g after %d reports (want 1.0)", tiled ? "tiled" : "whole-image",
              seg_status_str(st), p.stage, p.fraction, p.calls);
        seg_free(unet);
    }
    CHECK(seg_everything_options_default(&eo) == SEG_OK, "options");
    eo.points_per_side = 4;
    eo.points_per_batch = 3;
    CHECK(seg_sam2_reset(sam) == SEG_OK, "reset");
    memset(&p, 0, sizeof p);
    st = seg_sam2_everything(sam, small, &eo, NULL, NULL, sizeof(SegEverythingObject), 0, &count, NULL, control);
    CHECK(st == SEG_OK && p.stage == SEG_STAGE_PROMPTS && p.fraction == 1.0f,
          "everything: %s, last progress stage %d at %g (want SEG_STAGE_PROMPTS at 1.0)", seg_status_str(st), p.stage, p.fraction);
    seg_control_free(control);
    free(px);
    free(mask);
}

/* A call waiting for the only session of a pool (max_sessions 1) wakes when its control is
 * cancelled, while the call ahead still holds the session (an encode, blocked in its progress
 * callback, which runs with the encoder session taken). */
typedef struct {
    SegSession *sam;
    const SegImage *img;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int holding, waiter_returned, timed_out;
    SegStatus status;
} Holder;

static int32_t hold_session(int32_t stage, float fraction, void *user_data) {
    Holder *h = user_data;
    struct timespec deadline;
    (void)stage; (void)fraction;
    pthread_mutex_lock(&h->mutex);
    if (!h->holding) {
        h->holding = 1;
        pthread_cond_broadcast(&h->cond);
        /* keep the session until the waiting call has returned (10 s at most) */
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 10;
        while (!h->waiter_returned && !h->timed_out)
            h->timed_out = pthread_cond_timedwait(&h->cond, &h->mutex, &deadline) != 0;
    }
    pthread_mutex_unlock(&h->mutex);
    return 1;
}

static void *encode_holding(void *arg) {
    Holder *h = arg;
    SegCallControl *control = NULL;
    seg_control_create(&control);
    seg_control_set_progress(control, hold_session, h);
    h->status = seg_sam2_set_image(h->sam, h->img, NULL, control);
    seg_control_free(control);
    return NULL;
}

static void *cancel_soon(void *arg) {
    struct timespec t = {0, 50 * 1000 * 1000};
    nanosleep(&t, NULL);
    seg_control_cancel(arg);
    return NULL;
}

static void pool_wait_cancel(const char *enc, const char *dec, const SegImage *a, const SegImage *b) {
    SegOptions opt = {.struct_size = sizeof opt};
    SegCallControl *control = NULL;
    unsigned char *m = malloc((size_t)b->width * b->height);
    SegMask out;
    SegPoint click = {40.0f, 30.0f, 1};
    float score = -7.0f;
    Holder h;
    pthread_t holder, canceller;
    SegStatus st;

    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.mutex, NULL);
    pthread_cond_init(&h.cond, NULL);
    CHECK(seg_options_default(&opt) == SEG_OK, "defaults");
    opt.max_sessions = 1;
    st = seg_create_sam2(enc, dec, &opt, &h.sam);
    CHECK(st == SEG_OK, "seg_create_sam2: %s", last_error());
    if (st != SEG_OK) return;
    h.img = a;
    out.data = m; out.width = b->width; out.height = b->height; out.stride = 0;
    memset(m, 0x5A, (size_t)b->width * b->height);
    CHECK(pthread_create(&holder, NULL, encode_holding, &h) == 0, "pthread_create");
    pthread_mutex_lock(&h.mutex);
    while (!h.holding) pthread_cond_wait(&h.cond, &h.mutex);
    pthread_mutex_unlock(&h.mutex);

    CHECK(seg_control_create(&control) == SEG_OK, "seg_control_create");
    CHECK(pthread_create(&canceller, NULL, cancel_soon, control) == 0, "pthread_create");
    /* a click on another image: it needs the encoder session the other call holds */
    st = seg_run_sam2_points(h.sam, b, &click, 1, NULL, NULL, 0, 0, &out, &score, NULL, control);
    pthread_mutex_lock(&h.mutex);
    h.waiter_returned = 1;
    pthread_cond_broadcast(&h.cond);
    CHECK(!h.timed_out, "the waiting call returned only after the session was given back (%s)", seg_status_str(st));
    pthread_mutex_unlock(&h.mutex);
    pthread_join(canceller, NULL);
    pthread_join(holder, NULL);
    CHECK(st == SEG_CANCELLED && score == -7.0f && changed_bytes(m, 0x5A, (size_t)b->width * b->height) == 0,
          "a call cancelled while waiting for a session: %s", seg_status_str(st));
    CHECK(h.status == SEG_OK, "the call holding the session: %s %s", seg_status_str(h.status), last_error());
    /* the queue goes on: the next call gets the session */
    CHECK(seg_control_reset(control) == SEG_OK, "reset");
    st = seg_run_sam2_points(h.sam, b, &click, 1, NULL, NULL, 0, 0, &out, &score, NULL, control);
    CHECK(st == SEG_OK, "a call after the cancelled waiter: %s %s", seg_status_str(st), last_error());
    seg_control_free(control);
    seg_free(h.sam);
    pthread_cond_destroy(&h.cond);
    pthread_mutex_destroy(&h.mutex);
    free(m);
}

int main(int argc, char **argv) {
    char enc[4096], dec[4096];
    SegSession *sam = NULL;
    unsigned char *pa, *pb;
    SegImage a, b;
    SegStatus st;

    if (argc != 2) {
        fprintf(stderr, "usage: %s REPO_DIR\n", argv[0]);
        return 2;
    }
    snprintf(enc, sizeof enc, "%s/models/sam2/sam2_tiny_samexporter_encoder.onnx", argv[1]);
    snprintf(dec, sizeof dec, "%s/models/sam2/sam2_tiny_samexporter_decoder.onnx", argv[1]);
    st = seg_create_sam2(enc, dec, NULL, &sam);
    CHECK(st == SEG_OK, "seg_create_sam2: %s %s", seg_status_str(st), last_error());
    if (st != SEG_OK) return 1;
    pa = picture(160, 120, 0);
    pb = picture(160, 120, 1);
    a = rgb_image(pa, 160, 120);
    b = rgb_image(pb, 160, 120);

    record_sizes(sam, &a);
    cancel_reset(argv[1]);
    cancel_cached(sam, &a);
    reentry(sam, &a, &b);
    progress_ends(argv[1], sam, &b);
    pool_wait_cancel(enc, dec, &a, &b);

    CHECK(seg_free(sam) == SEG_OK, "free");
    free(pa);
    free(pb);
    printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
