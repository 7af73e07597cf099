/* segrt from C: segments one image with a UNet model and prints what it found.
 *
 *   segrt-example MODEL.onnx IMAGE.ppm [GROUND_TRUTH.pgm [OUT_MASK.pgm]]
 *
 * IMAGE is a binary PPM (P6, what `convert x.png x.ppm` or Pillow write); the optional ground truth is a
 * binary PGM (P5) and gives the IoU; OUT_MASK receives the mask (0/255) as a PGM. Exit status 0 on success.
 * Build: `make` in this folder (or the gcc line in the package README.txt). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segrt.h"

typedef struct { int w, h, channels; unsigned char *px; } Image;

/* Binary PPM (P6) or PGM (P5) with maxval 255; returns px == NULL on failure. */
static Image read_pnm(const char *path) {
    Image img = {0, 0, 0, NULL};
    char magic[3] = {0};
    int maxval = 0;
    size_t size;
    FILE *f = fopen(path, "rb");
    if (!f) return img;
    if (fscanf(f, "%2s %d %d %d", magic, &img.w, &img.h, &maxval) == 4 && maxval == 255 && img.w > 0 && img.h > 0 &&
        (strcmp(magic, "P6") == 0 || strcmp(magic, "P5") == 0)) {
        fgetc(f);   /* the single whitespace after the header */
        img.channels = magic[1] == '6' ? 3 : 1;
        size = (size_t)img.w * img.h * img.channels;
        img.px = malloc(size);
        if (img.px && fread(img.px, 1, size, f) != size) { free(img.px); img.px = NULL; }
    }
    fclose(f);
    return img;
}

static int fail(const char *what, SegStatus st) {
    char msg[4096];
    seg_last_error(msg, sizeof msg);
    fprintf(stderr, "segrt-example: %s: %s: %s\n", what, seg_status_str(st), msg);
    return 1;
}

int main(int argc, char **argv) {
    SegOptions opt = {.struct_size = sizeof opt};   /* declare the size first: segrt reads and writes only that much */
    SegSession *session = NULL;
    SegImage img;
    SegMask mask;
    SegRunInfo info;
    SegStatus st;
    Image rgb, gt;
    unsigned char *out;
    char version[1024];
    size_t n, i, inter = 0, uni = 0;

    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: %s MODEL.onnx IMAGE.ppm [GROUND_TRUTH.pgm [OUT_MASK.pgm]]\n", argv[0]);
        return 2;
    }
    if (seg_abi_version() != SEG_ABI_VERSION) {
        fprintf(stderr, "segrt-example: libsegrt has ABI %u, segrt.h says %d\n", seg_abi_version(), SEG_ABI_VERSION);
        return 1;
    }
    rgb = read_pnm(argv[2]);
    if (!rgb.px || rgb.channels != 3) { fprintf(stderr, "segrt-example: %s is not a binary PPM (P6)\n", argv[2]); return 1; }

    st = seg_options_default(&opt);   /* ONNX Runtime: found beside libsegrt.so, nothing to configure */
    if (st != SEG_OK) return fail("seg_options_default", st);
    st = seg_create(argv[1], &opt, &session);
    if (st != SEG_OK) return fail("seg_create", st);
    seg_version(version, sizeof version);
    printf("%s\n", version);

    n = (size_t)rgb.w * rgb.h;
    out = malloc(n);
    if (!out) return 1;
    memset(&img, 0, sizeof img);
    img.data = rgb.px; img.width = rgb.w; img.height = rgb.h; img.stride = 0; img.format = SEG_FORMAT_RGB24;
    mask.data = out; mask.width = rgb.w; mask.height = rgb.h; mask.stride = 0;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    st = seg_run_unet(session, &img, &mask, NULL, 0, &info, NULL);
    if (st != SEG_OK) return fail("seg_run_unet", st);
    printf("%s: %dx%d, model input %dx%d, foreground %.1f %% (%lu px), pre %.1f ms, inference %.1f ms, post %.1f ms\n",
           argv[2], rgb.w, rgb.h, info.model_width, info.model_height, 100.0 * (double)info.foreground_pixels / (double)n,
           (unsigned long)info.foreground_pixels, info.preprocess_ms, info.inference_ms, info.postprocess_ms);

    if (argc >= 4) {
        gt = read_pnm(argv[3]);
        if (!gt.px || gt.channels != 1 || gt.w != rgb.w || gt.h != rgb.h) {
            fprintf(stderr, "segrt-example: %s is not a binary PGM (P5) of the image's size\n", argv[3]);
            return 1;
        }
        for (i = 0; i < n; i++) {
            int a = out[i] > 127, b = gt.px[i] > 127;
            inter += a && b;
            uni += a || b;
        }
        printf("IoU with %s: %.4f\n", argv[3], uni ? (double)inter / (double)uni : 1.0);
        free(gt.px);
    }
    if (argc == 5) {
        FILE *f = fopen(argv[4], "wb");
        if (!f || fprintf(f, "P5\n%d %d\n255\n", rgb.w, rgb.h) < 0 || fwrite(out, 1, n, f) != n || fclose(f) != 0) {
            fprintf(stderr, "segrt-example: cannot write %s\n", argv[4]);
            return 1;
        }
        printf("mask written to %s\n", argv[4]);
    }
    free(out);
    free(rgb.px);
    st = seg_free(session);
    return st == SEG_OK ? 0 : fail("seg_free", st);
}
