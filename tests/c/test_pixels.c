/* A C host with 16-bit, signed 16-bit and float pixels (SEG_FORMAT_GRAY16 .. SEG_FORMAT_PLANAR_RGB32F)
 * and the intensity stage (SegIntensity, seg_set_intensity): each wide copy of a sample, under the window
 * that maps its stored values back to the 8-bit ones (powers-of-two scales, integer offsets: exact in
 * floats), gives the 8-bit image's mask in UNet and in a SAM2 click; bad input (a stride that is not a
 * multiple of the value size, a NaN pixel, a value above the used bits, a zero-width window) is answered
 * with SEG_INVALID_ARGUMENT and nothing is written. Run by tests/c/run.sh plain and under ASan + UBSan.
 * Usage: test_pixels REPO_DIR INPUT_DIR   (INPUT_DIR: make_inputs.py's .ppm files) */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segrt.h"

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

typedef struct { int w, h; unsigned char *px; } Rgb;

static Rgb read_ppm(const char *path) {
    Rgb img = {0, 0, NULL};
    FILE *f = fopen(path, "rb");
    char magic[3] = {0};
    int maxval = 0;
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    if (fscanf(f, "%2s %d %d %d", magic, &img.w, &img.h, &maxval) != 4 || strcmp(magic, "P6") != 0 || maxval != 255) { fprintf(stderr, "bad ppm %s\n", path); exit(2); }
    fgetc(f);
    img.px = malloc((size_t)img.w * img.h * 3);
    if (fread(img.px, 1, (size_t)img.w * img.h * 3, f) != (size_t)img.w * img.h * 3) { fprintf(stderr, "short %s\n", path); exit(2); }
    fclose(f);
    return img;
}

static const char *last_error(void) {
    static char buf[4096];
    seg_last_error(buf, sizeof buf);
    return buf;
}

/* Little-endian stores, byte by byte (segrt reads them so, at any address). */
static void put_u16(unsigned char *p, unsigned v) { p[0] = (unsigned char)(v & 0xff); p[1] = (unsigned char)(v >> 8); }
static void put_f32(unsigned char *p, float v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    p[0] = (unsigned char)bits; p[1] = (unsigned char)(bits >> 8); p[2] = (unsigned char)(bits >> 16); p[3] = (unsigned char)(bits >> 24);
}

static SegIntensity window(double low, double high) {
    SegIntensity i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    if (seg_intensity_default(&i) != SEG_OK) { fprintf(stderr, "seg_intensity_default: %s\n", last_error()); exit(2); }
    i.range = SEG_INTENSITY_WINDOW;
    i.low = low;
    i.high = high;
    return i;
}

static SegImage desc(const unsigned char *data, int w, int h, int stride, SegPixelFormat format) {
    SegImage d;
    memset(&d, 0, sizeof d);
    d.data = data;
    d.width = w;
    d.height = h;
    d.stride = stride;
    d.format = (int32_t)format;
    return d;
}

/* The wide copies of an 8-bit R,G,B image: (a) u16 R,G,B, rows padded by 6 bytes and starting at an odd
 * address: v*256 + 100; (b) i16 three planes: v*16 - 2000; (c) f32 R,G,B, bottom-up: v/256 - 0.5;
 * (d) u16 gray (the G channel) with 12 used bits: v*16. */
typedef struct {
    unsigned char *u16_buf, *i16_planes, *f32_buf, *gray12;
    SegImage u16, i16, f32, g12;
    SegIntensity u16_window, i16_window, f32_window, g12_window;
} Wide;

static Wide make_wide(const Rgb *img) {
    Wide o;
    int w = img->w, h = img->h, x, y, c;
    size_t n = (size_t)w * h;
    int u16_stride = w * 6 + 6, f32_row = w * 12;
    o.u16_buf = malloc((size_t)u16_stride * h + 1);
    o.i16_planes = malloc(n * 6);
    o.f32_buf = malloc((size_t)f32_row * h);
    o.gray12 = malloc(n * 2);
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            for (c = 0; c < 3; c++) {
                unsigned v = img->px[((size_t)y * w + x) * 3 + c];
                put_u16(o.u16_buf + 1 + (size_t)y * u16_stride + x * 6 + c * 2, v * 256 + 100);
                put_u16(o.i16_planes + ((size_t)c * n + (size_t)y * w + x) * 2, (unsigned)(uint16_t)(int16_t)((int)v * 16 - 2000));
                put_f32(o.f32_buf + (size_t)(h - 1 - y) * f32_row + x * 12 + c * 4, (float)v / 256.0f - 0.5f);
            }
            put_u16(o.gray12 + ((size_t)y * w + x) * 2, img->px[((size_t)y * w + x) * 3 + 1] * 16u);
        }
    o.u16 = desc(o.u16_buf + 1, w, h, u16_stride, SEG_FORMAT_RGB48);
    o.i16 = desc(o.i16_planes, w, h, 0, SEG_FORMAT_PLANAR_RGB16S);
    o.i16.plane1 = o.i16_planes + n * 2;
    o.i16.plane2 = o.i16_planes + n * 4;
    o.f32 = desc(o.f32_buf + (size_t)(h - 1) * f32_row, w, h, -f32_row, SEG_FORMAT_RGB96F);
    o.g12 = desc(o.gray12, w, h, 0, SEG_FORMAT_GRAY16);
    o.u16_window = window(100.0, 100.0 + 255.0 * 256.0);
    o.i16_window = window(-2000.0, -2000.0 + 255.0 * 16.0);
    o.f32_window = window(-0.5, -0.5 + 255.0 / 256.0);
    o.g12_window = window(0.0, 255.0 * 16.0);
    o.g12_window.bits = 12;
    return o;
}

static void free_wide(Wide *o) {
    free(o->u16_buf);
    free(o->i16_planes);
    free(o->f32_buf);
    free(o->gray12);
}

static SegStatus unet(SegSession *s, const SegImage *img, unsigned char *mask) {
    SegMask out = {mask, img->width, img->height, 0};
    return seg_run_unet(s, img, &out, NULL, 0, NULL, NULL);
}

static void test_unet(const char *repo, const char *inputs) {
    char path[4096];
    SegSession *s = NULL;
    SegIntensity keep = window(0.0, 255.0), bad;
    Rgb img;
    Wide wide;
    unsigned char *ref, *mask, *gray8, *gray_ref;
    size_t n, i, area = 0;
    SegImage g8;
    float *nan_px;
    SegStatus st;

    snprintf(path, sizeof path, "%s/lesion_01.ppm", inputs);
    img = read_ppm(path);
    n = (size_t)img.w * img.h;
    wide = make_wide(&img);
    ref = malloc(n);
    mask = malloc(n);
    gray8 = malloc(n);
    gray_ref = malloc(n);
    snprintf(path, sizeof path, "%s/models/demo_unet.onnx", repo);
    st = seg_create(path, NULL, &s);
    CHECK(st == SEG_OK, "seg_create: %s", last_error());
    if (st != SEG_OK) exit(1);

    /* The 8-bit image through the stage, a window that keeps every value: the reference. */
    CHECK(seg_set_intensity(s, &keep) == SEG_OK, "window 0..255: %s", last_error());
    SegImage eight = desc(img.px, img.w, img.h, 0, SEG_FORMAT_RGB24);
    CHECK(unet(s, &eight, ref) == SEG_OK, "8-bit: %s", last_error());
    for (i = 0; i < n; i++) area += ref[i] != 0;
    CHECK(area > 100, "the reference finds the lesion (%zu px)", area);

    CHECK(seg_set_intensity(s, &wide.u16_window) == SEG_OK, "%s", last_error());
    CHECK(unet(s, &wide.u16, mask) == SEG_OK && memcmp(mask, ref, n) == 0, "u16 RGB48 (odd address, padded rows): %s", last_error());
    CHECK(seg_set_intensity(s, &wide.i16_window) == SEG_OK, "%s", last_error());
    CHECK(unet(s, &wide.i16, mask) == SEG_OK && memcmp(mask, ref, n) == 0, "i16 planar: %s", last_error());
    CHECK(seg_set_intensity(s, &wide.f32_window) == SEG_OK, "%s", last_error());
    CHECK(unet(s, &wide.f32, mask) == SEG_OK && memcmp(mask, ref, n) == 0, "f32 RGB96F bottom-up: %s", last_error());

    for (i = 0; i < n; i++) gray8[i] = img.px[i * 3 + 1];
    g8 = desc(gray8, img.w, img.h, 0, SEG_FORMAT_GRAY8);
    CHECK(seg_set_intensity(s, &keep) == SEG_OK && unet(s, &g8, gray_ref) == SEG_OK, "8-bit gray: %s", last_error());
    CHECK(seg_set_intensity(s, &wide.g12_window) == SEG_OK, "%s", last_error());
    CHECK(unet(s, &wide.g12, mask) == SEG_OK && memcmp(mask, gray_ref, n) == 0, "u16 gray, 12 used bits: %s", last_error());

    /* Bad pixels: status, nothing written. */
    memset(mask, 77, n);
    {
        SegImage odd = wide.u16;
        odd.stride += 1; /* not a multiple of 2 */
        st = unet(s, &odd, mask);
        CHECK(st == SEG_INVALID_ARGUMENT, "odd stride: %s", seg_status_str(st));
        printf("expected error: %s\n", last_error());
        odd = wide.f32;
        odd.stride += 2; /* not a multiple of 4 */
        st = unet(s, &odd, mask);
        CHECK(st == SEG_INVALID_ARGUMENT, "float stride +2: %s", seg_status_str(st));
    }
    nan_px = calloc(n, sizeof(float));
    nan_px[3 * img.w + 5] = NAN;
    {
        SegImage f = desc((const unsigned char *)nan_px, img.w, img.h, 0, SEG_FORMAT_GRAY32F);
        st = unet(s, &f, mask);
        CHECK(st == SEG_INVALID_ARGUMENT, "NaN pixel: %s", seg_status_str(st));
        printf("expected error: %s\n", last_error());
        nan_px[3 * img.w + 5] = INFINITY;
        st = unet(s, &f, mask);
        CHECK(st == SEG_INVALID_ARGUMENT, "infinite pixel: %s", seg_status_str(st));
    }
    CHECK(seg_set_intensity(s, &wide.g12_window) == SEG_OK, "%s", last_error());
    put_u16(wide.gray12 + 20, 4096); /* above 12 bits */
    st = unet(s, &wide.g12, mask);
    CHECK(st == SEG_INVALID_ARGUMENT, "a value above the used bits: %s", seg_status_str(st));
    printf("expected error: %s\n", last_error());
    for (i = 0; i < n; i++) CHECK(mask[i] == 77, "nothing written after a refused image (pixel %zu)", i);

    /* Bad settings: refused, the one in force kept. */
    CHECK(seg_set_intensity(s, &keep) == SEG_OK, "%s", last_error());
    bad = window(10.0, 10.0);
    st = seg_set_intensity(s, &bad);
    CHECK(st == SEG_INVALID_ARGUMENT, "zero-width window: %s", seg_status_str(st));
    printf("expected error: %s\n", last_error());
    bad = window(0.0, 1.0);
    st = seg_intensity_set_window(&bad, 40.0, 0.0);
    CHECK(st == SEG_INVALID_ARGUMENT && bad.low == 0.0 && bad.high == 1.0, "seg_intensity_set_window width 0: %s, nothing written", seg_status_str(st));
    st = seg_intensity_set_window(&bad, 40.0, 400.0);
    CHECK(st == SEG_OK && bad.range == SEG_INTENSITY_WINDOW && bad.low == -160.0 && bad.high == 240.0, "seg_intensity_set_window 40/400");
    bad = window(0.0, 255.0);
    bad.slope = 0.0;
    CHECK(seg_set_intensity(s, &bad) == SEG_INVALID_ARGUMENT, "slope 0");
    bad = window(0.0, 255.0);
    bad.bits = 17;
    CHECK(seg_set_intensity(s, &bad) == SEG_INVALID_ARGUMENT, "17 used bits");
    bad = window(0.0, 255.0);
    bad.range = 9;
    CHECK(seg_set_intensity(s, &bad) == SEG_INVALID_ARGUMENT, "an unknown range");
    bad = window(0.0, 255.0);
    bad.struct_size = 0;
    CHECK(seg_set_intensity(s, &bad) == SEG_INVALID_ARGUMENT, "no struct_size");
    CHECK(unet(s, &g8, mask) == SEG_OK && memcmp(mask, gray_ref, n) == 0, "the refused settings left 0..255 in force: %s", last_error());
    CHECK(seg_set_intensity(NULL, &keep) == SEG_INVALID_HANDLE, "NULL session");
    CHECK(seg_set_intensity(s, NULL) == SEG_OK, "NULL: back to the default");
    printf("UNet: u16 (odd address, padded), i16 planes, f32 bottom-up and 12-bit gray give the 8-bit masks (%zu px); bad input refused\n", area);

    free(nan_px);
    free(ref);
    free(mask);
    free(gray8);
    free(gray_ref);
    free_wide(&wide);
    free(img.px);
    seg_free(s);
}

static void test_sam2(const char *repo, const char *inputs) {
    char path[4096], path2[4096];
    SegSession *s = NULL;
    SegIntensity keep = window(0.0, 255.0);
    SegPoint click = {105.0f, 105.0f, 1};
    Rgb img;
    Wide wide;
    unsigned char *ref, *mask;
    size_t n;
    float score = 0.0f;
    SegStatus st;
    SegMask out;
    SegImage eight;

    snprintf(path, sizeof path, "%s/img0.ppm", inputs);
    img = read_ppm(path);
    n = (size_t)img.w * img.h;
    wide = make_wide(&img);
    ref = malloc(n);
    mask = malloc(n);
    snprintf(path, sizeof path, "%s/models/sam2/sam2_tiny_samexporter_encoder.onnx", repo);
    snprintf(path2, sizeof path2, "%s/models/sam2/sam2_tiny_samexporter_decoder.onnx", repo);
    st = seg_create_sam2(path, path2, NULL, &s);
    CHECK(st == SEG_OK, "seg_create_sam2: %s", last_error());
    if (st != SEG_OK) exit(1);
    out.data = ref;
    out.width = img.w;
    out.height = img.h;
    out.stride = 0;
    eight = desc(img.px, img.w, img.h, 0, SEG_FORMAT_RGB24);
    CHECK(seg_set_intensity(s, &keep) == SEG_OK, "%s", last_error());
    st = seg_run_sam2_points(s, &eight, &click, 1, NULL, NULL, 0, 0, &out, &score, NULL, NULL);
    CHECK(st == SEG_OK, "8-bit click: %s", last_error());
    out.data = mask;
    {
        const SegImage *imgs[3] = {&wide.u16, &wide.i16, &wide.f32};
        const SegIntensity *windows[3] = {&wide.u16_window, &wide.i16_window, &wide.f32_window};
        const char *names[3] = {"u16", "i16 planes", "f32 bottom-up"};
        int k;
        for (k = 0; k < 3; k++) {
            CHECK(seg_set_intensity(s, windows[k]) == SEG_OK, "%s", last_error());
            st = seg_run_sam2_points(s, imgs[k], &click, 1, NULL, NULL, 0, 0, &out, &score, NULL, NULL);
            CHECK(st == SEG_OK && memcmp(mask, ref, n) == 0, "%s click: %s %s", names[k], seg_status_str(st), last_error());
        }
    }
    /* The image set last was encoded under the f32 window: a new window and no pixels is refused. */
    CHECK(seg_set_intensity(s, &keep) == SEG_OK, "%s", last_error());
    memset(mask, 77, n);
    st = seg_run_sam2_points(s, NULL, &click, 1, NULL, NULL, 0, 0, &out, &score, NULL, NULL);
    CHECK(st == SEG_INVALID_ARGUMENT && mask[0] == 77 && mask[n - 1] == 77, "NULL image under a new window: %s", seg_status_str(st));
    printf("SAM2: a click on u16, i16 planes and f32 bottom-up gives the 8-bit click's mask; a new window re-encodes\n");
    free(ref);
    free(mask);
    free_wide(&wide);
    free(img.px);
    seg_free(s);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_pixels REPO_DIR INPUT_DIR\n");
        return 2;
    }
    if (seg_abi_version() != SEG_ABI_VERSION) return 2;
    test_unet(argv[1], argv[2]);
    test_sam2(argv[1], argv[2]);
    printf("wide pixels C host: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
