/* Runs the demo UNet (models/demo_unet.onnx: image [1,3,256,256] -> logits [1,1,256,256]) through a
 * Windows onnxruntime.dll twice, on the CPU provider and on DirectML, and prints what happened at
 * each step: whether the build offers DirectML, whether DirectML registers, creates a session and
 * runs, and how far its logits are from the CPU's. Written against ONNX Runtime's C API table by slot
 * number (the table only grows at its end; slots as in ort-sys 2.0.0-rc.15), so it needs no header
 * and no segrt: it tells what the DirectML build does under Wine, whatever segrt accepts.
 *
 *   x86_64-w64-mingw32-gcc -O1 -o dml_probe.exe tests/windows/dml_probe.c
 *   wine dml_probe.exe Z:\path\to\onnxruntime.dll Z:\path\to\demo_unet.onnx
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

typedef void *Status;
typedef Status (*CreateEnvFn)(int level, const char *id, void **env);
typedef Status (*CreateSessionOptionsFn)(void **options);
typedef Status (*OptionsFn)(void *options);
typedef Status (*SetExecutionModeFn)(void *options, int mode);
typedef Status (*CreateSessionFn)(void *env, const wchar_t *path, void *options, void **session);
typedef Status (*CreateCpuMemoryInfoFn)(int type, int mem, void **info);
typedef Status (*CreateTensorFn)(void *info, void *data, size_t bytes, const int64_t *shape, size_t rank, int type, void **value);
typedef Status (*RunFn)(void *session, void *run_options, const char *const *in_names, void *const *inputs, size_t n_in,
                        const char *const *out_names, size_t n_out, void **outputs);
typedef Status (*GetTensorDataFn)(void *value, void **data);
typedef const char *(*GetErrorMessageFn)(Status);
typedef Status (*GetAvailableProvidersFn)(char ***list, int *n);
typedef Status (*GetExecutionProviderApiFn)(const char *name, uint32_t version, const void **api);
typedef Status (*AppendDmlFn)(void *options, int device_id);
typedef Status (*AddConfigFn)(void *options, const char *key, const char *value);
typedef struct { const void *(*GetApi)(uint32_t); const char *(*GetVersionString)(void); } ApiBase;

static void *const *api;
#define FN(type, slot) ((type)api[slot])

static int ok(Status s, const char *what) {
    if (!s) return 1;
    printf("  %s failed: %s\n", what, FN(GetErrorMessageFn, 2)(s));
    return 0;
}

/* Builds a session (with DirectML when `dml`), runs the model on `input`, copies the logits. */
static int run(void *env, const wchar_t *model, int dml, float *input, float *logits) {
    void *options = NULL, *session = NULL, *info = NULL, *in = NULL, *out = NULL;
    if (!ok(FN(CreateSessionOptionsFn, 10)(&options), "CreateSessionOptions")) return 0;
    if (dml) {
        /* What ONNX Runtime's DirectML docs ask: no memory pattern, sequential execution. */
        ok(FN(OptionsFn, 17)(options), "DisableMemPattern");
        ok(FN(SetExecutionModeFn, 13)(options, 0), "SetSessionExecutionMode");
        /* DML_PROBE_NO_FUSION=1: DirectML runs operator by operator instead of one fused graph. */
        if (getenv("DML_PROBE_NO_FUSION"))
            ok(FN(AddConfigFn, 130)(options, "ep.dml.disable_graph_fusion", "1"), "ep.dml.disable_graph_fusion");
        const void *dml_api = NULL;
        if (!ok(FN(GetExecutionProviderApiFn, 195)("DML", 21, &dml_api), "GetExecutionProviderApi(DML)")) return 0;
        AppendDmlFn append = *(AppendDmlFn const *)dml_api;
        if (!ok(append(options, 0), "SessionOptionsAppendExecutionProvider_DML(device 0)")) return 0;
        printf("  DirectML registered for device 0\n");
    }
    if (!ok(FN(CreateSessionFn, 7)(env, model, options, &session), "CreateSession")) return 0;
    printf("  session created\n");
    if (!ok(FN(CreateCpuMemoryInfoFn, 69)(1, 0, &info), "CreateCpuMemoryInfo")) return 0;
    int64_t shape[4] = {1, 3, 256, 256};
    if (!ok(FN(CreateTensorFn, 49)(info, input, sizeof(float) * 3 * 256 * 256, shape, 4, 1, &in), "CreateTensor")) return 0;
    const char *in_names[] = {"image"}, *out_names[] = {"logits"};
    if (!ok(FN(RunFn, 9)(session, NULL, in_names, &in, 1, out_names, 1, &out), "Run")) return 0;
    float *data = NULL;
    if (!ok(FN(GetTensorDataFn, 51)(out, (void **)&data), "GetTensorMutableData")) return 0;
    memcpy(logits, data, sizeof(float) * 256 * 256);
    printf("  ran: logits[0] = %g\n", logits[0]);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: dml_probe ONNXRUNTIME.DLL MODEL.ONNX\n"); return 2; }
    HMODULE ort = LoadLibraryExA(argv[1], NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!ort) { printf("LoadLibrary(%s) failed: error %lu\n", argv[1], GetLastError()); return 1; }
    const ApiBase *(*get_base)(void) = (const ApiBase *(*)(void))(void *)GetProcAddress(ort, "OrtGetApiBase");
    const ApiBase *base = get_base();
    printf("ONNX Runtime %s\n", base->GetVersionString());
    api = (void *const *)base->GetApi(21);
    if (!api) { printf("GetApi(21) returned NULL\n"); return 1; }
    char **list; int n;
    if (ok(FN(GetAvailableProvidersFn, 125)(&list, &n), "GetAvailableProviders")) {
        printf("providers:");
        for (int i = 0; i < n; i++) printf(" %s", list[i]);
        printf("\n");
    }
    void *env = NULL;
    if (!ok(FN(CreateEnvFn, 3)(3 /* error */, "dml_probe", &env), "CreateEnv")) return 1;
    wchar_t model[1024];
    MultiByteToWideChar(CP_UTF8, 0, argv[2], -1, model, 1024);
    float *input = malloc(sizeof(float) * 3 * 256 * 256), *cpu = malloc(sizeof(float) * 256 * 256), *gpu = malloc(sizeof(float) * 256 * 256);
    for (int i = 0; i < 3 * 256 * 256; i++) input[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    printf("CPU provider:\n");
    int cpu_ok = run(env, model, 0, input, cpu);
    printf("DirectML provider:\n");
    int dml_ok = run(env, model, 1, input, gpu);
    if (cpu_ok && dml_ok) {
        double worst = 0;
        for (int i = 0; i < 256 * 256; i++) worst = fmax(worst, fabs((double)cpu[i] - gpu[i]));
        printf("DirectML vs CPU: largest logit difference %g\n", worst);
    }
    printf("result: cpu=%s directml=%s\n", cpu_ok ? "ran" : "failed", dml_ok ? "ran" : "failed");
    return cpu_ok ? 0 : 1;
}
