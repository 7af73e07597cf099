/* A stand-in for NVIDIA's driver library (libcuda.so.1 / nvcuda.dll) that reports one GPU chosen by
 * environment variables, for testing what segrt decides from a GPU's compute capability on machines
 * without one. It answers the driver API calls that read a device's identity; everything that would
 * need a real GPU (contexts, memory, cuGetProcAddress, through which the CUDA runtime library looks up
 * every other driver entry point) fails with CUDA_ERROR_NOT_SUPPORTED / NOT_FOUND, so ONNX Runtime's
 * CUDA provider gets no further than with no GPU: a clean error, never a crash.
 *
 *   STUB_CUDA_GPU      a preset: gtx1050 (6.1), v100 (7.0), t4 (7.5), rtx3060 (8.6), rtx4090 (8.9),
 *                      h100 (9.0), rtx5090 (12.0); default rtx3060
 *   STUB_CUDA_CC       "MAJOR.MINOR": overrides the preset's compute capability
 *   STUB_CUDA_NAME     overrides the preset's name
 *   STUB_CUDA_DRIVER   the version cuDriverGetVersion reports (1000*major + 10*minor); default 13000
 *   STUB_CUDA_DEVICES  how many devices (all the same GPU); default 1; 0 = cuInit says no device
 *   STUB_CUDA_LOG      a file to append each call's name to (tests see what was asked)
 *
 * Build: cc -shared -fPIC -O1 -o libcuda.so.1 stub_cuda.c   (tests/gpu/stub_cuda/build.sh)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#define CUDAAPI __stdcall
#else
#define EXPORT __attribute__((visibility("default")))
#define CUDAAPI
#endif

typedef int CUresult;
typedef int CUdevice;
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_SUPPORTED = 801,
};
enum {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

struct preset {
    const char *key, *name;
    int major, minor, sms;
    unsigned long long memory;
};
static const struct preset PRESETS[] = {
    {"gtx1050", "NVIDIA GeForce GTX 1050", 6, 1, 5, 2ull << 30},
    {"v100", "Tesla V100-SXM2-16GB", 7, 0, 80, 16ull << 30},
    {"t4", "Tesla T4", 7, 5, 40, 15ull << 30},
    {"rtx3060", "NVIDIA GeForce RTX 3060", 8, 6, 28, 12ull << 30},
    {"rtx4090", "NVIDIA GeForce RTX 4090", 8, 9, 128, 24ull << 30},
    {"h100", "NVIDIA H100 80GB HBM3", 9, 0, 132, 80ull << 30},
    {"rtx5090", "NVIDIA GeForce RTX 5090", 12, 0, 170, 32ull << 30},
};

static int initialised;

static void note(const char *call) {
    const char *log = getenv("STUB_CUDA_LOG");
    if (!log || !*log) return;
    FILE *f = fopen(log, "a");
    if (!f) return;
    fprintf(f, "%s\n", call);
    fclose(f);
}

static const struct preset *gpu(void) {
    const char *key = getenv("STUB_CUDA_GPU");
    for (size_t i = 0; key && i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        if (strcmp(key, PRESETS[i].key) == 0) return &PRESETS[i];
    return &PRESETS[3];
}

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static int device_count(void) { return env_int("STUB_CUDA_DEVICES", 1); }

static void capability(int *major, int *minor) {
    const char *cc = getenv("STUB_CUDA_CC");
    *major = gpu()->major;
    *minor = gpu()->minor;
    if (cc && *cc && sscanf(cc, "%d.%d", major, minor) != 2) *major = *minor = 0;
}

static CUresult check_device(CUdevice dev) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    return dev >= 0 && dev < device_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult CUDAAPI cuInit(unsigned int flags) {
    note("cuInit");
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (device_count() <= 0) return CUDA_ERROR_NO_DEVICE;
    initialised = 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDriverGetVersion(int *version) {
    note("cuDriverGetVersion");
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = env_int("STUB_CUDA_DRIVER", 13000);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count) {
    note("cuDeviceGetCount");
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    *count = device_count();
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
    note("cuDeviceGet");
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(ordinal);
    if (r == CUDA_SUCCESS) *device = ordinal;
    return r;
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *value, int attribute, CUdevice dev) {
    note("cuDeviceGetAttribute");
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(dev);
    if (r != CUDA_SUCCESS) return r;
    int major, minor;
    capability(&major, &minor);
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = major; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = minor; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = gpu()->sms; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
    note("cuDeviceGetName");
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(dev);
    if (r != CUDA_SUCCESS) return r;
    const char *n = getenv("STUB_CUDA_NAME");
    snprintf(name, (size_t)len, "%s", n && *n ? n : gpu()->name);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
    note("cuDeviceTotalMem_v2");
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(dev);
    if (r == CUDA_SUCCESS) *bytes = (size_t)gpu()->memory;
    return r;
}

/* The CUDA runtime (libcudart) finds every driver function through these: none is offered, so it
 * stops with its own "driver" error instead of calling into a GPU that is not there. */
EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **fn, int version, unsigned long long flags) {
    (void)version, (void)flags;
    note("cuGetProcAddress");
    if (fn) *fn = NULL;
    (void)symbol;
    return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **fn, int version, unsigned long long flags, int *status) {
    note("cuGetProcAddress_v2");
    if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    return cuGetProcAddress(symbol, fn, version, flags);
}

EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **text) {
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
    case CUDA_SUCCESS: *text = "no error"; break;
    case CUDA_ERROR_NO_DEVICE: *text = "no CUDA-capable device is detected"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *text = "operation not supported (segrt's stub driver has no GPU)"; break;
    default: *text = "error reported by segrt's stub driver"; break;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxCreate_v2(void **ctx, unsigned int flags, CUdevice dev) {
    (void)flags, (void)dev;
    note("cuCtxCreate_v2");
    if (ctx) *ctx = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* onnxruntime-gpu 1.31's Linux CUDA provider links this one driver function directly (NEEDED
 * libcuda.so.1): without it the provider library does not load at all. */
EXPORT CUresult CUDAAPI cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address, const void *dims,
                                               const void *strides, const void *box, const void *element_strides,
                                               int interleave, int swizzle, int promotion, int fill) {
    (void)map, (void)type, (void)rank, (void)address, (void)dims, (void)strides, (void)box, (void)element_strides;
    (void)interleave, (void)swizzle, (void)promotion, (void)fill;
    note("cuTensorMapEncodeTiled");
    return CUDA_ERROR_NOT_SUPPORTED;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(void **ctx, CUdevice dev) {
    (void)dev;
    note("cuDevicePrimaryCtxRetain");
    if (ctx) *ctx = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
