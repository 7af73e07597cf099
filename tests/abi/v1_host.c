/* A host built against the FROZEN ABI 1 header (tests/abi/v1/segrt.h, never regenerated), run
 * against the current library: every later release must serve it unchanged.
 *
 * It touches every versioned struct and every array of records through the calls that read or fill
 * them, each placed in a buffer whose bytes after the struct are guard bytes: segrt itself is not
 * instrumented by AddressSanitizer or valgrind, so the guards are what catches a write past the
 * caller's struct. For each struct:
 *   - struct_size = sizeof (the smallest accepted size: ABI 1 has one layout per struct): works, the
 *     guards and struct_size are untouched;
 *   - struct_size = sizeof + 16 with a zero tail (a newer host): works, the tail stays zero;
 *   - the same with one non-zero byte in the tail: SEG_INVALID_ARGUMENT naming its offset, nothing
 *     written;
 *   - struct_size 0 and sizeof - 4 (a size that cuts a field): SEG_INVALID_ARGUMENT, nothing written.
 * Records (SegEverythingObject, SegTrackObject) are asked for with a record size 8 bytes larger than
 * the frozen one: segrt must write at that stride and leave the 8 bytes after each record alone.
 *
 * Usage: v1_host REPO_ROOT [--quick]   (--quick, for valgrind, where ONNX Runtime runs ~100x slower:
 * the *_default functions and the struct_size checks of seg_create only, no model is run)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "v1/segrt.h"

static int failures = 0;
#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) {                                                           \
            failures++;                                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, " [%s]\n", last_error());                            \
        }                                                                        \
    } while (0)

static const char *last_error(void) {
    static char buf[2048];
    seg_last_error(buf, sizeof buf);
    return buf;
}

/* ------------------------------------------------------------------------------------------------ */
/* Guarded structs: a struct of `size` bytes declared, followed by guard bytes.                      */

#define GUARD 0xA5
#define TAIL 16   /* what a newer header might have appended */
#define SLACK 64  /* guard bytes after everything */

typedef struct {
    unsigned char *bytes; /* the struct starts here (8-byte aligned) */
    size_t known;         /* sizeof the struct in the frozen header */
    size_t declared;      /* struct_size written into it */
    size_t total;
} Guarded;

/* A struct of the frozen layout (`known` bytes) declaring `declared` bytes: zero up to `declared`
 * (up to `known` at least), then guard bytes. `tail_byte` >= 0 puts that value at offset known + 5. */
static Guarded guarded(size_t known, size_t declared, int tail_byte) {
    Guarded g;
    g.known = known;
    g.declared = declared;
    g.total = known + TAIL + SLACK;
    g.bytes = malloc(g.total);
    memset(g.bytes, GUARD, g.total);
    memset(g.bytes, 0, declared > known ? declared : known);
    uint32_t size = (uint32_t)declared;
    memcpy(g.bytes, &size, sizeof size);
    if (tail_byte >= 0) g.bytes[known + 5] = (unsigned char)tail_byte;
    return g;
}

/* Bytes from `from` on are as `guarded` left them (zero in the declared tail, guards after). */
static int untouched_from(const Guarded *g, size_t from) {
    for (size_t i = from; i < g->total; i++) {
        unsigned char expected = i < g->declared ? 0 : GUARD;
        if (i == g->known + 5 && g->declared > g->known && g->bytes[i] != 0) continue; /* the set tail byte */
        if (g->bytes[i] != expected) {
            fprintf(stderr, "  byte %zu is 0x%02x, expected 0x%02x\n", i, g->bytes[i], expected);
            return 0;
        }
    }
    return 1;
}

static uint32_t declared_size(const Guarded *g) {
    uint32_t size;
    memcpy(&size, g->bytes, sizeof size);
    return size;
}

/* The contract for one struct and one call: `call` reads or fills the struct at `p`. After an
 * accepted call only the struct's known bytes may have changed, never struct_size; after a refused
 * call nothing has. `prepare` (may be NULL) fills a valid struct of the known layout first (e.g. the
 * defaults, for calls that read options). */
typedef SegStatus (*StructCall)(void *p, void *ctx);
typedef void (*Prepare)(void *p);

static void check_contract(const char *name, size_t known, StructCall call, Prepare prepare, void *ctx) {
    struct {
        const char *what;
        size_t declared;
        int tail_byte;
        int accepted;
    } cases[] = {
        {"sizeof", known, -1, 1},
        {"sizeof + 16, zero tail", known + TAIL, -1, 1},
        {"sizeof + 16, non-zero tail", known + TAIL, 0x7F, 0},
        {"0", 0, -1, 0},
        {"sizeof - 4 (cuts a field)", known - 4, -1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        Guarded g = guarded(known, cases[c].declared, cases[c].tail_byte);
        if (prepare) {
            prepare(g.bytes);
            uint32_t size = (uint32_t)cases[c].declared;
            memcpy(g.bytes, &size, sizeof size);
        }
        unsigned char *before = malloc(g.total);
        memcpy(before, g.bytes, g.total);
        SegStatus st = call(g.bytes, ctx);
        if (cases[c].accepted) {
            CHECK(st == SEG_OK, "%s, struct_size %s: status %d", name, cases[c].what, (int)st);
            CHECK(declared_size(&g) == cases[c].declared, "%s, struct_size %s: struct_size was rewritten to %u", name,
                  cases[c].what, declared_size(&g));
            CHECK(untouched_from(&g, known), "%s, struct_size %s: bytes after the struct were written", name, cases[c].what);
        } else {
            CHECK(st == SEG_INVALID_ARGUMENT, "%s, struct_size %s: status %d, expected SEG_INVALID_ARGUMENT", name,
                  cases[c].what, (int)st);
            CHECK(memcmp(before, g.bytes, g.total) == 0, "%s, struct_size %s: a refused call wrote", name, cases[c].what);
            if (cases[c].tail_byte >= 0) {
                char offset[64];
                snprintf(offset, sizeof offset, "byte %zu is not zero", known + 5);
                CHECK(strstr(last_error(), offset) != NULL, "%s: the message does not name the offset (%s)", name, offset);
            } else {
                CHECK(strstr(last_error(), "struct_size") != NULL, "%s, struct_size %s: the message does not name struct_size",
                      name, cases[c].what);
            }
        }
        free(before);
        free(g.bytes);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Inputs                                                                                            */

static char model_path[4096];
static const char *repo;

static const char *path(const char *relative) {
    snprintf(model_path, sizeof model_path, "%s/%s", repo, relative);
    return model_path;
}

enum { W = 96, H = 64 };
static unsigned char pixels[W * H * 3];
static SegImage image;

static void make_image(void) {
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int inside = (x - 48) * (x - 48) + (y - 32) * (y - 32) < 400;
            for (int c = 0; c < 3; c++) pixels[(y * W + x) * 3 + c] = (unsigned char)(inside ? 220 - 30 * c : 20 + x);
        }
    image.data = pixels;
    image.width = W;
    image.height = H;
    image.stride = 0;
    image.format = SEG_FORMAT_RGB24;
    image.plane1 = NULL;
    image.plane2 = NULL;
}

/* ------------------------------------------------------------------------------------------------ */
/* The calls                                                                                         */

static SegStatus options_default(void *p, void *ctx) {
    (void)ctx;
    return seg_options_default(p);
}
static void prepare_options(void *p) {
    SegOptions o = {.struct_size = sizeof o};
    seg_options_default(&o);
    memcpy(p, &o, sizeof o);
}
static SegStatus create_unet(void *p, void *ctx) {
    (void)ctx;
    SegSession *s = NULL;
    SegStatus st = seg_create(path("models/demo_unet.onnx"), p, &s);
    seg_free(s);
    return st;
}

static SegStatus run_unet(void *p, void *ctx) {
    unsigned char mask[W * H];
    SegMask m = {mask, W, H, 0};
    return seg_run_unet(ctx, &image, &m, NULL, 0, p, NULL);
}

static SegStatus sam2_points(void *p, void *ctx) {
    unsigned char mask[W * H];
    SegMask m = {mask, W, H, 0};
    SegPoint click = {48.0f, 32.0f, 1};
    return seg_run_sam2_points(ctx, &image, &click, 1, NULL, NULL, 0, 0, &m, NULL, p, NULL);
}

static SegStatus everything_options_default(void *p, void *ctx) {
    (void)ctx;
    return seg_everything_options_default(p);
}
static void prepare_everything_options(void *p) {
    SegEverythingOptions o = {.struct_size = sizeof o};
    seg_everything_options_default(&o);
    o.points_per_side = 4;
    o.stability_score_thresh = 0.5f;
    memcpy(p, &o, sizeof o);
}
static SegStatus everything_with_options(void *p, void *ctx) {
    size_t count = 0;
    return seg_sam2_everything(ctx, &image, p, NULL, NULL, sizeof(SegEverythingObject), 0, &count, NULL, NULL);
}
static SegStatus everything_info(void *p, void *ctx) {
    SegEverythingOptions o = {.struct_size = sizeof o};
    prepare_everything_options(&o);
    size_t count = 0;
    return seg_sam2_everything(ctx, &image, &o, NULL, NULL, sizeof(SegEverythingObject), 0, &count, p, NULL);
}

static SegStatus track_options_default(void *p, void *ctx) {
    (void)ctx;
    return seg_track_options_default(p);
}
static void prepare_track_options(void *p) {
    SegTrackOptions o = {.struct_size = sizeof o};
    seg_track_options_default(&o);
    memcpy(p, &o, sizeof o);
}
static SegStatus track_create(void *p, void *ctx) {
    SegTrack *t = NULL;
    SegStatus st = seg_track_create(ctx, p, &t);
    seg_track_free(t);
    return st;
}
static SegStatus track_add_frame(void *p, void *ctx) {
    int64_t frame = -1;
    return seg_track_add_frame(ctx, &image, &frame, p, NULL);
}
static SegStatus track_state(void *p, void *ctx) {
    return seg_track_state(ctx, p);
}

/* Records at a stride 8 bytes larger than the frozen record: the 8 bytes after each stay guards. */
static int records_at_stride(const unsigned char *buf, size_t n, size_t record, size_t stride) {
    for (size_t i = 0; i < n; i++)
        for (size_t b = record; b < stride; b++)
            if (buf[i * stride + b] != GUARD) return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s REPO_ROOT [--quick]\n", argv[0]);
        return 2;
    }
    repo = argv[1];
    int quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
    make_image();

    CHECK(seg_abi_version() == SEG_ABI_VERSION, "the library implements ABI %u, this host was built for %u", seg_abi_version(),
          (unsigned)SEG_ABI_VERSION);

    /* SegOptions: filled by seg_options_default, read by seg_create and seg_providers. */
    check_contract("SegOptions / seg_options_default", sizeof(SegOptions), options_default, NULL, NULL);
    check_contract("SegOptions / seg_create", sizeof(SegOptions), create_unet, prepare_options, NULL);
    if (quick) {
        check_contract("SegEverythingOptions / seg_everything_options_default", sizeof(SegEverythingOptions),
                       everything_options_default, NULL, NULL);
        check_contract("SegTrackOptions / seg_track_options_default", sizeof(SegTrackOptions), track_options_default, NULL, NULL);
        printf("%s: %d failure(s) (quick)\n", failures ? "FAILED" : "ok", failures);
        return failures ? 1 : 0;
    }
    {
        SegOptions o = {.struct_size = sizeof o};
        CHECK(seg_options_default(&o) == SEG_OK && o.struct_size == sizeof o && o.size_multiple == 32 && o.scale > 0,
              "seg_options_default fills the defaults");
        SegOptions zero;
        memset(&zero, 0, sizeof zero);
        CHECK(seg_options_default(&zero) == SEG_INVALID_ARGUMENT && zero.size_multiple == 0, "struct_size 0 is refused");
    }

    /* SegRunInfo: filled by seg_run_unet. */
    SegSession *unet = NULL;
    {
        SegOptions o = {.struct_size = sizeof o};
        seg_options_default(&o);
        CHECK(seg_create(path("models/demo_unet.onnx"), &o, &unet) == SEG_OK, "seg_create");
    }
    check_contract("SegRunInfo / seg_run_unet", sizeof(SegRunInfo), run_unet, NULL, unet);
    {
        SegRunInfo info = {.struct_size = sizeof info};
        CHECK(run_unet(&info, unet) == SEG_OK && info.model_width > 0 && info.num_classes == 1, "SegRunInfo is filled");
    }
    seg_free(unet);

    /* SAM2: SegSam2Result, SegEverythingOptions, SegEverythingInfo, SegEverythingObject records. */
    SegSession *sam = NULL;
    {
        char encoder[4096];
        snprintf(encoder, sizeof encoder, "%s/models/sam2/sam2_oracle_encoder.onnx", repo);
        CHECK(seg_create_sam2(encoder, path("models/sam2/sam2_oracle_decoder.onnx"), NULL, &sam) == SEG_OK, "seg_create_sam2");
    }
    check_contract("SegSam2Result / seg_run_sam2_points", sizeof(SegSam2Result), sam2_points, NULL, sam);
    {
        SegSam2Result r = {.struct_size = sizeof r};
        CHECK(sam2_points(&r, sam) == SEG_OK && r.num_masks >= 1 && r.low_res_width > 0, "SegSam2Result is filled");
        /* The low-res logits passed back as the call's mask input. */
        size_t n = (size_t)r.low_res_width * (size_t)r.low_res_height;
        float *logits = calloc(n, sizeof *logits);
        SegSam2Result again = {.struct_size = sizeof again};
        again.low_res_logits = logits;
        again.low_res_len = n;
        CHECK(sam2_points(&again, sam) == SEG_OK, "low-res logits out");
        unsigned char mask[W * H];
        SegMask m = {mask, W, H, 0};
        SegPoint click = {48.0f, 32.0f, 1};
        CHECK(seg_run_sam2_points(sam, &image, &click, 1, NULL, logits, n, 0, &m, NULL, NULL, NULL) == SEG_OK, "mask_input in");
        CHECK(seg_run_sam2_points(sam, &image, &click, 1, NULL, logits, n - 1, 0, &m, NULL, NULL, NULL) == SEG_INVALID_ARGUMENT,
              "a mask_input of the wrong length is refused");
        free(logits);
    }
    check_contract("SegEverythingOptions / seg_everything_options_default", sizeof(SegEverythingOptions),
                   everything_options_default, NULL, NULL);
    check_contract("SegEverythingOptions / seg_sam2_everything", sizeof(SegEverythingOptions), everything_with_options,
                   prepare_everything_options, sam);
    check_contract("SegEverythingInfo / seg_sam2_everything", sizeof(SegEverythingInfo), everything_info, NULL, sam);
    {
        SegEverythingOptions o = {.struct_size = sizeof o};
        prepare_everything_options(&o);
        size_t count = 0;
        CHECK(seg_sam2_everything(sam, &image, &o, NULL, NULL, sizeof(SegEverythingObject), 0, &count, NULL, NULL) == SEG_OK && count > 0,
              "segment-everything finds objects (%zu)", count);
        size_t stride = sizeof(SegEverythingObject) + 8;
        unsigned char *records = malloc(count * stride + SLACK);
        memset(records, GUARD, count * stride + SLACK);
        size_t again = 0;
        CHECK(seg_sam2_everything(sam, &image, &o, NULL, (SegEverythingObject *)records, stride, count, &again, NULL, NULL) == SEG_OK,
              "records at a larger stride");
        CHECK(again == count && records_at_stride(records, count, sizeof(SegEverythingObject), stride),
              "SegEverythingObject records were written past their size");
        SegEverythingObject second;
        memcpy(&second, records + (count > 1 ? stride : 0), sizeof second);
        CHECK(second.id == (count > 1 ? 2u : 1u), "the records are at the caller's stride (id %u)", second.id);
        CHECK(seg_sam2_everything(sam, &image, &o, NULL, (SegEverythingObject *)records, sizeof(SegEverythingObject) - 4, count,
                                  &again, NULL, NULL) == SEG_INVALID_ARGUMENT,
              "a record size below the frozen record is refused");
        free(records);
    }
    seg_free(sam);

    {
        /* SegTrackOptions, SegTrackInfo, SegTrackState, SegTrackObject records. */
        SegSession *model = NULL;
        CHECK(seg_create_sam2_video(path("models/sam2/video"), NULL, &model) == SEG_OK, "seg_create_sam2_video");
        check_contract("SegTrackOptions / seg_track_options_default", sizeof(SegTrackOptions), track_options_default, NULL, NULL);
        check_contract("SegTrackOptions / seg_track_create", sizeof(SegTrackOptions), track_create, prepare_track_options, model);
        SegTrack *track = NULL;
        CHECK(seg_track_create(model, NULL, &track) == SEG_OK, "seg_track_create");
        check_contract("SegTrackInfo / seg_track_add_frame", sizeof(SegTrackInfo), track_add_frame, NULL, track);
        check_contract("SegTrackState / seg_track_state", sizeof(SegTrackState), track_state, NULL, track);
        SegPoint click = {48.0f, 32.0f, 1};
        size_t stride = sizeof(SegTrackObject) + 8;
        unsigned char records[2 * (sizeof(SegTrackObject) + 8)];
        memset(records, GUARD, sizeof records);
        size_t count = 0;
        CHECK(seg_track_add_prompt(track, -1, 7, &click, 1, NULL, (SegTrackObject *)records, stride, NULL, 1, &count, NULL, NULL) == SEG_OK,
              "seg_track_add_prompt");
        CHECK(count == 1 && records_at_stride(records, 1, sizeof(SegTrackObject), stride) &&
                  records[stride] == GUARD,
              "SegTrackObject records were written past their size");
        SegTrackObject first;
        memcpy(&first, records, sizeof first);
        CHECK(first.object_id == 7, "the record names the object (%d)", first.object_id);
        memset(records, GUARD, sizeof records);
        CHECK(seg_track_next(track, &image, (SegTrackObject *)records, stride, NULL, 1, &count, NULL, NULL) == SEG_OK, "seg_track_next");
        CHECK(records_at_stride(records, 1, sizeof(SegTrackObject), stride), "seg_track_next wrote past the record size");
        CHECK(seg_track_frame(track, -1, (SegTrackObject *)records, sizeof(SegTrackObject) - 4, NULL, 1, &count, NULL, NULL) ==
                  SEG_INVALID_ARGUMENT,
              "a record size below the frozen record is refused");
        seg_track_free(track);
        seg_free(model);
    }

    printf("%s: %d failure(s)\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
