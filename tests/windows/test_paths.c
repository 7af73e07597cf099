/* Windows-only checks of a C host against segrt.dll, run under Wine by tests/windows/run.sh, which lays
 * out DIR (an ASCII folder) first:
 *   DIR\模型 目录\demo_unet.onnx, onnxruntime.dll   a folder named with Chinese characters and a space
 *   DIR\<LONG_DIR>\demo_unet.onnx, onnxruntime.dll  a folder whose paths are longer than 260 characters
 *   DIR\onnxruntime.dll                              the official 1.31.1 DLL
 *   DIR\ort-other-version\onnxruntime.dll            ONNX Runtime 1.19.2 x64 (another version)
 *   DIR\ort-32-bit\onnxruntime.dll                   ONNX Runtime 1.19.2 x86 (a 32-bit DLL)
 * Usage: test_paths DIR MODE, one mode per process (a process loads ONNX Runtime once):
 *   paths              models and cache folders under the UTF-8 folder and under the long one (with and
 *                      without the \\?\ prefix): they load, run and cache; a missing file is named
 *   no-runtime         onnxruntime.dll is not beside segrt.dll: SEG_RUNTIME_NOT_FOUND listing the paths tried
 *   ort-utf8, ort-long SegOptions.ort_path in the UTF-8 folder / the long folder loads ONNX Runtime
 *   ort-other-version  SEG_RUNTIME_INIT_FAILED naming both versions, then the right DLL loads
 *   ort-32-bit         SEG_RUNTIME_INIT_FAILED saying the DLL is 32-bit, then the right DLL loads
 *   providers          CUDA, TensorRT, DirectML, OpenVINO with this CPU build: SEG_PROVIDER_UNAVAILABLE
 *                      under the REQUIRE policy; with FALLBACK the session runs on the CPU and says why;
 *                      TensorRT's cache folder under the UTF-8 and the long folder is created and handed
 *                      to ONNX Runtime as a path its narrow-string (code page) file calls open
 * A mingw program's argv is in the ANSI code page, not UTF-8, so the non-ASCII part is in this source
 * (UTF-8, as segrt's API takes paths). Prints "N passed, M failed"; exit 1 on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "segrt.h"

static int passed = 0, failed = 0;
#define CHECK(cond, ...) do { if (cond) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

#define FOLDER "\xe6\xa8\xa1\xe5\x9e\x8b \xe7\x9b\xae\xe5\xbd\x95" /* "模型 目录" in UTF-8 */
/* Five folders of 50 characters: with DIR in front, every path under it is over 260 characters
 * (tests/windows/run.sh makes the same folders). */
#define SEG50 "a_folder_name_of_fifty_characters_for_long_paths_x"
#define LONG_DIR SEG50 "\\" SEG50 "\\" SEG50 "\\" SEG50 "\\" SEG50

static const char *dir;
static char msg[8192], info[16384];

static SegOptions defaults(void) {
    SegOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    CHECK(seg_options_default(&opt) == SEG_OK, "seg_options_default");
    return opt;
}

/* Creates a session of `model` (relative to DIR unless it starts with \\?\), runs it on a small BGR
 * image, and returns seg_session_info's JSON in `info` ("" on failure). */
static SegStatus create_and_run(const char *model, const SegOptions *opt) {
    static unsigned char px[96 * 80 * 3], out[96 * 80];
    char path[2048];
    SegSession *s = NULL;
    SegImage img;
    SegMask mask;
    SegStatus st;
    size_t i, len = 0;
    info[0] = 0;
    if (strncmp(model, "\\\\?\\", 4) == 0) snprintf(path, sizeof path, "%s", model);
    else snprintf(path, sizeof path, "%s\\%s", dir, model);
    st = seg_create(path, opt, &s);
    seg_last_error(msg, sizeof msg);
    if (st != SEG_OK) {
        CHECK(s == NULL, "no session after a failed seg_create");
        return st;
    }
    for (i = 0; i < sizeof px; i++) px[i] = (unsigned char)(i * 7);
    img.data = px; img.width = 96; img.height = 80; img.stride = 0; img.format = SEG_FORMAT_BGR24;
    img.plane1 = NULL; img.plane2 = NULL;
    mask.data = out; mask.width = 96; mask.height = 80; mask.stride = 0;
    st = seg_run_unet(s, &img, &mask, NULL, 0, NULL, NULL);
    seg_last_error(msg, sizeof msg);
    CHECK(st == SEG_OK, "seg_run_unet(%s): %s %s", path, seg_status_str(st), msg);
    CHECK(seg_session_info(s, info, sizeof info, &len) == SEG_OK, "seg_session_info");
    seg_free(s);
    return st;
}

/* The model cache in `cache` (absolute): a first session writes it, a second one reads it. */
static void check_cache(const char *what, const char *cache) {
    SegOptions opt = defaults();
    const char *expect[2] = { "\"status\": \"miss\"", "\"status\": \"hit\"" };
    int i;
    opt.cache_mode = SEG_CACHE_DIR;
    opt.cache_dir = cache;
    for (i = 0; i < 2; i++) {
        SegStatus st = create_and_run("models\\demo_unet.onnx", &opt);
        CHECK(st == SEG_OK, "%s, session %d: %s %s", what, i + 1, seg_status_str(st), msg);
        CHECK(strstr(info, expect[i]) != NULL, "%s, session %d: cache %s expected in %s", what, i + 1, expect[i], info);
    }
}

static void paths(void) {
    SegOptions opt = defaults();
    char verbatim[2048], cache[2048];
    SegStatus st = create_and_run(FOLDER "\\demo_unet.onnx", &opt);
    CHECK(st == SEG_OK, "model under " FOLDER ": %s %s", seg_status_str(st), msg);
    st = create_and_run(FOLDER "\\no_such_model.onnx", &opt);
    CHECK(st == SEG_MODEL_NOT_FOUND, "missing model: %s, expected SEG_MODEL_NOT_FOUND", seg_status_str(st));
    CHECK(strstr(msg, FOLDER) != NULL, "the message names the UTF-8 folder: %s", msg);

    st = create_and_run(LONG_DIR "\\demo_unet.onnx", &opt);
    CHECK(st == SEG_OK, "model path over 260 characters: %s %s", seg_status_str(st), msg);
    snprintf(verbatim, sizeof verbatim, "\\\\?\\%s\\" LONG_DIR "\\demo_unet.onnx", dir);
    st = create_and_run(verbatim, &opt);
    CHECK(st == SEG_OK, "model path over 260 characters with \\\\?\\: %s %s", seg_status_str(st), msg);
    st = create_and_run(LONG_DIR "\\no_such_model.onnx", &opt);
    CHECK(st == SEG_MODEL_NOT_FOUND, "missing model under the long folder: %s", seg_status_str(st));

    snprintf(cache, sizeof cache, "%s\\" FOLDER "\\cache", dir);
    check_cache("cache folder under " FOLDER, cache);
    snprintf(cache, sizeof cache, "%s\\" LONG_DIR "\\cache", dir);
    check_cache("cache folder over 260 characters", cache);
    snprintf(cache, sizeof cache, "\\\\?\\%s\\" LONG_DIR "\\cache2", dir);
    check_cache("cache folder over 260 characters with \\\\?\\", cache);
}

/* ONNX Runtime from `rel` under DIR: loads when `want` is SEG_OK, else fails with `want` and a
 * message holding `says`; then the official DLL beside segrt.dll loads (nothing half-initialised). */
static void runtime_from(const char *rel, SegStatus want, const char *says) {
    SegOptions opt = defaults();
    char ort[2048];
    SegStatus st;
    snprintf(ort, sizeof ort, "%s\\%s", dir, rel);
    opt.ort_path = ort;
    st = create_and_run("models\\demo_unet.onnx", &opt);
    CHECK(st == want, "ort_path %s: %s, expected %s: %s", rel, seg_status_str(st), seg_status_str(want), msg);
    CHECK(strstr(st == SEG_OK ? info : msg, says) != NULL, "ort_path %s: '%s' expected in: %s", rel, says, st == SEG_OK ? info : msg);
    printf("ort_path %s: %s\n", rel, st == SEG_OK ? "loaded" : msg);
    if (want != SEG_OK) {
        snprintf(ort, sizeof ort, "%s\\onnxruntime.dll", dir);
        st = create_and_run("models\\demo_unet.onnx", &opt);
        CHECK(st == SEG_OK, "the official DLL after the refused one: %s %s", seg_status_str(st), msg);
    }
}

static void providers(void) {
    static const struct { SegProvider provider; const char *name; } wanted[] = {
        { SEG_PROVIDER_CUDA, "CUDA" }, { SEG_PROVIDER_TENSORRT, "TensorRT" },
        { SEG_PROVIDER_DIRECTML, "DirectML" }, { SEG_PROVIDER_OPENVINO, "OpenVINO" },
    };
    size_t i;
    for (i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        SegOptions opt = defaults();
        SegStatus st;
        opt.provider = wanted[i].provider;
        st = create_and_run("models\\demo_unet.onnx", &opt);
        CHECK(st == SEG_PROVIDER_UNAVAILABLE, "%s required: %s, expected SEG_PROVIDER_UNAVAILABLE", wanted[i].name, seg_status_str(st));
        CHECK(strstr(msg, wanted[i].name) != NULL, "%s required: the message names it: %s", wanted[i].name, msg);
        printf("%s required: %s\n", wanted[i].name, msg);
        opt.provider_policy = SEG_PROVIDER_FALLBACK;
        st = create_and_run("models\\demo_unet.onnx", &opt);
        CHECK(st == SEG_OK, "%s with fallback: %s %s", wanted[i].name, seg_status_str(st), msg);
        CHECK(strstr(info, "\"in_use\": \"CPU\"") != NULL && strstr(info, "\"fallback_reason\": \"") != NULL,
              "%s with fallback: the session says it runs on the CPU and why: %s", wanted[i].name, info);
    }
}

/* The Info line naming the TensorRT cache folder handed to ONNX Runtime, and the last log line. */
static char trt_cache[2048];
static void on_log(int32_t level, const char *message, void *user_data) {
    const char *start = strstr(message, "TensorRT engine and timing caches in '");
    (void)level; (void)user_data;
    if (start) {
        const char *end;
        start += strlen("TensorRT engine and timing caches in '");
        end = strchr(start, '\'');
        if (end && (size_t)(end - start) < sizeof trt_cache) { memcpy(trt_cache, start, (size_t)(end - start)); trt_cache[end - start] = 0; }
    }
}

/* ONNX Runtime's TensorRT provider opens its cache with std::ifstream(std::string): the system code
 * page, MAX_PATH. A cache folder under the UTF-8 folder or the long one must reach it as a path that
 * the ANSI file API (GetFileAttributesA) opens: its short name. With this CPU build TensorRT itself
 * is unavailable (FALLBACK: the CPU), but segrt creates the folder and names what it hands over. */
static void trt_cache_folders(void) {
    const char *where[2] = { FOLDER "\\trt cache", LONG_DIR "\\trt_cache" };
    int i;
    CHECK(seg_set_log_callback(on_log, NULL) == SEG_OK, "seg_set_log_callback");
    for (i = 0; i < 2; i++) {
        SegOptions opt = defaults();
        char folder[2048];
        SegStatus st;
        DWORD attributes;
        const char *c;
        snprintf(folder, sizeof folder, "%s\\%s", dir, where[i]);
        opt.provider = SEG_PROVIDER_TENSORRT;
        opt.provider_policy = SEG_PROVIDER_FALLBACK;
        opt.trt_cache_dir = folder;
        trt_cache[0] = 0;
        st = create_and_run("models\\demo_unet.onnx", &opt);
        CHECK(st == SEG_OK, "TensorRT cache under %s, fallback: %s %s", where[i], seg_status_str(st), msg);
        printf("TensorRT cache folder %s -> handed over as '%s'\n", where[i], trt_cache);
        CHECK(trt_cache[0] != 0, "the log names the TensorRT cache folder handed to ONNX Runtime");
        CHECK(strlen(trt_cache) <= 150, "the folder handed over is short: %s", trt_cache);
        for (c = trt_cache; *c && (unsigned char)*c < 128; c++) {}
        CHECK(*c == 0, "the folder handed over is ASCII: %s", trt_cache);
        attributes = GetFileAttributesA(trt_cache);
        CHECK(attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY),
              "the ANSI file API opens the folder handed over (%s), which segrt created", trt_cache);
    }
    CHECK(seg_set_log_callback(NULL, NULL) == SEG_OK, "seg_set_log_callback(NULL)");
}

int main(int argc, char **argv) {
    const char *mode = argc == 3 ? argv[2] : "";
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR paths|no-runtime|ort-utf8|ort-long|ort-other-version|ort-32-bit|providers\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    if (strcmp(mode, "paths") == 0) {
        paths();
    } else if (strcmp(mode, "no-runtime") == 0) {
        SegOptions opt = defaults();
        SegStatus st = create_and_run(FOLDER "\\demo_unet.onnx", &opt);
        CHECK(st == SEG_RUNTIME_NOT_FOUND, "without onnxruntime.dll: %s, expected SEG_RUNTIME_NOT_FOUND: %s", seg_status_str(st), msg);
        CHECK(strstr(msg, "tried:") != NULL, "the message lists the paths tried: %s", msg);
        CHECK(strstr(msg, "\\onnxruntime.dll (beside the segrt library): no such file") != NULL,
              "the message names onnxruntime.dll beside segrt.dll and why it was not used: %s", msg);
        printf("%s\n", msg);
    } else if (strcmp(mode, "ort-utf8") == 0) {
        runtime_from(FOLDER "\\onnxruntime.dll", SEG_OK, FOLDER "\\\\onnxruntime.dll");
    } else if (strcmp(mode, "ort-long") == 0) {
        runtime_from(LONG_DIR "\\onnxruntime.dll", SEG_OK, SEG50 "\\\\onnxruntime.dll");
    } else if (strcmp(mode, "ort-other-version") == 0) {
        runtime_from("ort-other-version\\onnxruntime.dll", SEG_RUNTIME_INIT_FAILED, "it is ONNX Runtime 1.19.2, segrt needs 1.24 to 1.31");
    } else if (strcmp(mode, "ort-32-bit") == 0) {
        runtime_from("ort-32-bit\\onnxruntime.dll", SEG_RUNTIME_INIT_FAILED, "it is a 32-bit x86 library and this process is 64-bit x64");
    } else if (strcmp(mode, "providers") == 0) {
        providers();
        trt_cache_folders();
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
