/* Windows-only checks of a C host against segrt.dll, run under Wine by tests/windows/run.sh.
 * Usage: test_paths DIR           DIR (ASCII) holds "模型 目录\demo_unet.onnx": a model under a folder named
 *                                 with Chinese characters and a space loads from its UTF-8 path and runs;
 *                                 a missing file there is SEG_MODEL_NOT_FOUND naming the folder.
 *        test_paths DIR --no-runtime   onnxruntime.dll is not beside segrt.dll: SEG_RUNTIME_NOT_FOUND,
 *                                 the message listing the paths tried.
 * A mingw program's argv is in the ANSI code page, not UTF-8, so the non-ASCII part is in this source
 * (UTF-8, as segrt's API takes paths). Prints "N passed, M failed"; exit 1 on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segrt.h"

static int passed = 0, failed = 0;
#define CHECK(cond, ...) do { if (cond) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

#define FOLDER "\xe6\xa8\xa1\xe5\x9e\x8b \xe7\x9b\xae\xe5\xbd\x95" /* "模型 目录" in UTF-8 */

int main(int argc, char **argv) {
    char model[1024], missing[1024], msg[4096];
    SegOptions opt;
    SegSession *s = NULL;
    SegStatus st;
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--no-runtime") != 0)) {
        fprintf(stderr, "usage: %s DIR [--no-runtime]\n", argv[0]);
        return 2;
    }
    snprintf(model, sizeof model, "%s\\" FOLDER "\\demo_unet.onnx", argv[1]);
    snprintf(missing, sizeof missing, "%s\\" FOLDER "\\no_such_model.onnx", argv[1]);
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    CHECK(seg_options_default(&opt) == SEG_OK, "seg_options_default");

    if (argc == 3) {
        st = seg_create(model, &opt, &s);
        seg_last_error(msg, sizeof msg);
        CHECK(st == SEG_RUNTIME_NOT_FOUND, "without onnxruntime.dll: %s, expected SEG_RUNTIME_NOT_FOUND: %s", seg_status_str(st), msg);
        CHECK(s == NULL, "no session on failure");
        CHECK(strstr(msg, "tried:") != NULL, "the message lists the paths tried: %s", msg);
        CHECK(strstr(msg, "\\onnxruntime.dll (beside the segrt library): no such file") != NULL,
              "the message names onnxruntime.dll beside segrt.dll and why it was not used: %s", msg);
        printf("%s\n", msg);
    } else {
        static unsigned char px[96 * 80 * 3], out[96 * 80];
        SegImage img;
        SegMask mask;
        size_t i;
        for (i = 0; i < sizeof px; i++) px[i] = (unsigned char)(i * 7);
        st = seg_create(model, &opt, &s);
        seg_last_error(msg, sizeof msg);
        CHECK(st == SEG_OK && s != NULL, "seg_create(%s): %s %s", model, seg_status_str(st), msg);
        if (s) {
            img.data = px; img.width = 96; img.height = 80; img.stride = 0; img.format = SEG_FORMAT_BGR24;
            img.plane1 = NULL; img.plane2 = NULL;
            mask.data = out; mask.width = 96; mask.height = 80; mask.stride = 0;
            st = seg_run_unet(s, &img, &mask, NULL, 0, NULL, NULL);
            seg_last_error(msg, sizeof msg);
            CHECK(st == SEG_OK, "seg_run_unet on the model under " FOLDER ": %s %s", seg_status_str(st), msg);
            seg_free(s);
        }
        s = NULL;
        st = seg_create(missing, &opt, &s);
        seg_last_error(msg, sizeof msg);
        CHECK(st == SEG_MODEL_NOT_FOUND, "missing model: %s, expected SEG_MODEL_NOT_FOUND", seg_status_str(st));
        CHECK(strstr(msg, FOLDER) != NULL, "the message names the UTF-8 folder: %s", msg);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
