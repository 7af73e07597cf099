/*
 * segrt: native segmentation runtime (UNet, SAM2) over ONNX Runtime.
 *
 * Conventions: every fallible function returns a SegStatus (SEG_OK = 0); outputs are written only on
 * success; seg_last_error() copies the message of the calling thread's last failure into a caller-owned
 * buffer. Handles are opaque: release sessions with seg_free() and tracks with seg_track_free(). Every
 * handle may be used from any number of threads at once. Strings are UTF-8. The caller owns every
 * buffer it passes in.
 *
 * Versioned structs (those starting with struct_size): set struct_size = sizeof the struct before every
 * call that reads or fills it, *_default() included: SegOptions o = { .struct_size = sizeof o }; seg_options_default(&o);
 * segrt reads and writes at most struct_size bytes. Arrays of records take the size of one record.
 * Check seg_abi_version() == SEG_ABI_VERSION at start-up.
 */

#ifndef SEGRT_H
#define SEGRT_H

/* FROZEN: include/segrt.h as ABI 1 was released. Never regenerate or edit this copy: tests/abi/v1_host.c
 * is a host built against it, and every later library must keep serving it. */

#include <stddef.h>
#include <stdint.h>

#define SEGRT_VERSION "0.1.0"
#define SEGRT_VERSION_MAJOR 0
#define SEGRT_VERSION_MINOR 1
#define SEGRT_VERSION_PATCH 0


// Version of the C ABI: 1 is the layout frozen for the first release. A release may add functions,
// fields appended to versioned structs, enum values and statuses; anything else (a signature, a
// field moved or removed, a meaning changed) takes a new ABI version.
#define SEG_ABI_VERSION 1

// Default limit on the pixels of one image (`SegOptions::max_pixels`): refuses absurd sizes
// before anything is allocated.
#define SEG_DEFAULT_MAX_PIXELS 100000000

// `seg_run_sam2_points` flag: feed the session's previous chosen low-res logits back as the mask
// input (refinement, as the reference predictor does). Ignored when the image changed or when the
// call passes its own `mask_input`.
#define SEG_SAM2_REFINE 1

// Default `SegTrackOptions::keep_frames`.
#define SEG_TRACK_DEFAULT_KEEP_FRAMES 8

// Status codes returned by every fallible C function.
//
// Values are explicit and never reused: a code that is retired stays reserved.
enum SegStatus
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // Success.
  SEG_OK = 0,
  // An argument has a value the function cannot accept (see the message).
  SEG_INVALID_ARGUMENT = 1,
  // A required pointer argument was NULL.
  SEG_NULL_POINTER = 2,
  // The session handle is NULL, already freed, or was never a handle.
  SEG_INVALID_HANDLE = 3,
  // A caller-owned output buffer is too small (the message says how big it must be).
  SEG_BUFFER_TOO_SMALL = 4,
  // The image is larger than the pixel limit (`SegOptions::max_pixels`) or its byte size overflows.
  SEG_IMAGE_TOO_LARGE = 5,
  // The pixel format value is unknown, or not allowed for this call.
  SEG_UNSUPPORTED_FORMAT = 6,
  // The session is of another kind (e.g. a SAM2 session given to `seg_run_unet`).
  SEG_WRONG_SESSION_KIND = 7,
  // Memory for the call could not be had: an allocation failed, or the call would need more than
  // `SegOptions::max_memory_bytes` (the message gives the size asked for). The session stays usable.
  SEG_OUT_OF_MEMORY = 8,
  // No ONNX Runtime library could be loaded; the message lists every path tried and why each failed.
  SEG_RUNTIME_NOT_FOUND = 10,
  // An ONNX Runtime library was loaded but could not be used (wrong version, environment creation
  // failed), or another library than the one already loaded was asked for.
  SEG_RUNTIME_INIT_FAILED = 11,
  // The model file does not exist, is not a regular file, or cannot be read.
  SEG_MODEL_NOT_FOUND = 20,
  // The model bytes are not a valid ONNX model (empty, truncated, corrupt, or larger than `max_model_bytes`).
  SEG_MODEL_INVALID = 21,
  // The model is valid ONNX but not a model segrt can run as asked (the message lists its inputs/outputs).
  SEG_MODEL_UNSUPPORTED = 22,
  // The requested execution provider could not be initialised (the message carries ONNX Runtime's reason).
  SEG_PROVIDER_UNAVAILABLE = 30,
  // ONNX Runtime failed while running the model.
  SEG_INFERENCE_FAILED = 40,
  // The call was cancelled through its `SegCallControl` (`seg_control_cancel`, or its progress
  // callback returned 0). Its outputs are untouched and the handle (a track too) is as before.
  SEG_CANCELLED = 50,
  // A panic inside segrt was caught at the boundary; the host process is unharmed.
  SEG_PANIC = 90,
  // An internal invariant failed; please report it with the message.
  SEG_INTERNAL = 91,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegStatus SegStatus;
#else
typedef int32_t SegStatus;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// Which execution provider runs the model.
enum SegProvider
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  SEG_PROVIDER_CPU = 0,
  // NVIDIA CUDA (needs the onnxruntime-gpu build and CUDA 13 + cuDNN 9 libraries).
  SEG_PROVIDER_CUDA = 1,
  // NVIDIA TensorRT (onnxruntime-gpu build plus the TensorRT libraries).
  SEG_PROVIDER_TENSORRT = 2,
  // DirectML on any DirectX 12 GPU (Windows; the onnxruntime-directml build).
  SEG_PROVIDER_DIRECTML = 3,
  // Intel OpenVINO (the onnxruntime-openvino build).
  SEG_PROVIDER_OPENVINO = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegProvider SegProvider;
#else
typedef int32_t SegProvider;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// How much a log message matters.
enum SegLogLevel
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // A call failed; the message is the same as `seg_last_error` gives.
  SEG_LOG_ERROR = 1,
  // Something works, but not as asked (e.g. a provider fell back to the CPU).
  SEG_LOG_WARN = 2,
  // Normal events worth a line in a log file (runtime loaded, session created).
  SEG_LOG_INFO = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegLogLevel SegLogLevel;
#else
typedef int32_t SegLogLevel;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// What a long call is doing when it reports progress (`SegProgressCallback`).
enum SegStage
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // A SAM2 image encoder run (0 at its start, 1 at its end).
  SEG_STAGE_ENCODE = 1,
  // SAM2 segment-everything's prompt batches.
  SEG_STAGE_PROMPTS = 2,
  // A tiled UNet's tiles.
  SEG_STAGE_TILES = 3,
  // A UNet run on the whole image.
  SEG_STAGE_RUN = 4,
  // A tracking call's model runs.
  SEG_STAGE_FRAMES = 5,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegStage SegStage;
#else
typedef int32_t SegStage;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// Pixel layouts a host can hand in.
enum SegPixelFormat
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // 8-bit gray, one byte per pixel.
  SEG_FORMAT_GRAY8 = 0,
  // 8-bit B,G,R (GDI+ `Format24bppRgb`, OpenCV `CV_8UC3`).
  SEG_FORMAT_BGR24 = 1,
  // 8-bit B,G,R,A (GDI+ `Format32bppArgb`/`Format32bppRgb`); alpha is ignored.
  SEG_FORMAT_BGRA32 = 2,
  // 8-bit R,G,B.
  SEG_FORMAT_RGB24 = 3,
  // 8-bit R,G,B,A; alpha is ignored.
  SEG_FORMAT_RGBA32 = 4,
  // Three separate 8-bit planes R, G, B (HALCON `get_image_pointer3`), each `stride` bytes per row.
  SEG_FORMAT_PLANAR_RGB8 = 5,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegPixelFormat SegPixelFormat;
#else
typedef int32_t SegPixelFormat;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// What happens when the requested execution provider cannot be initialised.
enum SegProviderPolicy
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // Session creation fails with ONNX Runtime's reason (`SEG_PROVIDER_UNAVAILABLE`).
  SEG_PROVIDER_REQUIRE = 0,
  // The session runs on the CPU; the reason is recorded in `seg_session_info`.
  SEG_PROVIDER_FALLBACK = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegProviderPolicy SegProviderPolicy;
#else
typedef int32_t SegProviderPolicy;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// Filter used to resize the image to the model's input size.
enum SegResizeFilter
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  SEG_RESIZE_NEAREST = 0,
  SEG_RESIZE_BILINEAR = 1,
  SEG_RESIZE_BICUBIC = 2,
  SEG_RESIZE_LANCZOS3 = 3,
  // Bilinear interpolation between the 2x2 nearest pixels, without antialiasing when shrinking:
  // what OpenCV's `cv2.resize(..., INTER_LINEAR)` does. For models trained on images resized that
  // way; several times cheaper than BILINEAR on large downscales. (The others filter like Pillow.)
  SEG_RESIZE_BILINEAR_NO_ANTIALIAS = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegResizeFilter SegResizeFilter;
#else
typedef int32_t SegResizeFilter;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// Channel order a 3-channel model expects.
enum SegChannelOrder
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  SEG_CHANNELS_RGB = 0,
  SEG_CHANNELS_BGR = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegChannelOrder SegChannelOrder;
#else
typedef int32_t SegChannelOrder;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// Whether a 1-channel output is turned into probabilities with a sigmoid.
enum SegSigmoid
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // Apply a sigmoid when the output holds values outside [0, 1] (logits).
  SEG_SIGMOID_AUTO = 0,
  SEG_SIGMOID_ON = 1,
  SEG_SIGMOID_OFF = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegSigmoid SegSigmoid;
#else
typedef int32_t SegSigmoid;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// How a 1-channel probability map becomes a binary mask.
enum SegThresholdMode
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // `probability > threshold`.
  SEG_THRESHOLD_FIXED = 0,
  // Otsu's threshold on the probability histogram of each image.
  SEG_THRESHOLD_OTSU = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegThresholdMode SegThresholdMode;
#else
typedef int32_t SegThresholdMode;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// Whether large images are segmented tile by tile at their own resolution.
enum SegTileMode
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // The whole image is resized to the model's input size: one run per image.
  SEG_TILE_OFF = 0,
  // Always tile: the image is cut into model-sized tiles at full resolution, no resizing.
  SEG_TILE_ON = 1,
  // Tile when the image is more than twice the tile's width or height.
  SEG_TILE_AUTO = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegTileMode SegTileMode;
#else
typedef int32_t SegTileMode;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// Whether and where ONNX Runtime's optimised model is cached, so later starts skip the optimiser
// (`SegOptions::cache_mode`). See the README's "Model cache" section.
enum SegCacheMode
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // No cache (the default, also for hosts built before the field existed).
  SEG_CACHE_OFF = 0,
  // A folder `segrt-cache` next to each model file (created if missing). Models given in memory
  // have no file: creating one with this mode fails with `SEG_INVALID_ARGUMENT`.
  SEG_CACHE_BESIDE_MODEL = 1,
  // The folder `SegOptions::cache_dir` (created if missing).
  SEG_CACHE_DIR = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum SegCacheMode SegCacheMode;
#else
typedef int32_t SegCacheMode;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// An opaque call control: cancellation and progress of the calls that can take long, given as their
// last parameter `control` (NULL: the call cannot be cancelled and reports no progress). Create with
// `seg_control_create`, release with `seg_control_free`.
typedef struct SegCallControl SegCallControl;

// An opaque session handle. Create with `seg_create*`, release with `seg_free`.
typedef struct SegSession SegSession;

// An opaque track handle (a SAM2 video being tracked). Create with `seg_track_create`, release
// with `seg_track_free`.
typedef struct SegTrack SegTrack;

// Progress of a call: `stage` a `SegStage` value, `fraction` done in [0, 1], `user_data` as given to
// `seg_control_set_progress`. Return non-zero to go on, 0 to cancel the call (as
// `seg_control_cancel`). Called on the thread running the call, between its steps; it may call
// `seg_control_cancel` itself, but must not unwind (throw) into segrt.
typedef int32_t (*SegProgressCallback)(int32_t stage, float fraction, void *user_data);

// Receives segrt's diagnostics: `level` is a `SegLogLevel` value, `message` a NUL-terminated UTF-8
// string valid only during the call, `user_data` the pointer given to `seg_set_log_callback`.
typedef void (*SegLogCallback)(int32_t level, const char *message, void *user_data);

// Session options. Declare the size, then take the defaults:
// `SegOptions o = { .struct_size = sizeof o }; seg_options_default(&o);` (see "Versioned structs" in the docs).
typedef struct SegOptions {
  // `sizeof(SegOptions)` as the caller was compiled with.
  uint32_t struct_size;
  // A `SegProvider` value (default CPU).
  int32_t provider;
  // GPU index for GPU providers (default 0).
  int32_t device_id;
  // A `SegProviderPolicy` value (default REQUIRE: fail rather than silently run on the CPU).
  int32_t provider_policy;
  // ONNX Runtime intra-op threads: 0 (default) = the process-wide ONNX Runtime thread pool shared
  // by every session (a thread per physical core); N = a pool of N threads of each session's own.
  // At most 4 x the machine's logical cores.
  int32_t intra_threads;
  // Model input width/height for models with dynamic axes; 0 = the image size rounded to `size_multiple`.
  int32_t input_width;
  int32_t input_height;
  // Dynamic axes are rounded to a multiple of this (default 32).
  int32_t size_multiple;
  // A `SegResizeFilter` value (default BILINEAR).
  int32_t resize_filter;
  // A `SegChannelOrder` value for 3-channel models (default RGB).
  int32_t channel_order;
  // Input normalisation: `(pixel * scale - mean[c]) / std[c]` (defaults 1/255, 0, 1).
  float scale;
  float mean[3];
  float std[3];
  // A `SegSigmoid` value (default AUTO).
  int32_t sigmoid;
  // A `SegThresholdMode` value (default FIXED).
  int32_t threshold_mode;
  // Threshold for FIXED mode, in [0, 1] (default 0.5).
  float threshold;
  // Remove foreground regions smaller than this many pixels (0 = off).
  uint32_t min_area;
  // Morphological closing with a k x k square (0 = off).
  uint32_t close_kernel;
  // Non-zero: fill holes inside foreground regions.
  uint32_t fill_holes;
  // Must be 0 (explicit padding: segrt never copies undefined bytes into a caller's struct).
  uint32_t reserved0;
  // Refuse images with more pixels than this (default 100 000 000).
  uint64_t max_pixels;
  // Absolute UTF-8 path of the ONNX Runtime library, or NULL for the default search.
  // Only read during `seg_create*`.
  const char *ort_path;
  // A `SegTileMode` value (default OFF: the whole image is resized to the model's input size).
  int32_t tile_mode;
  // Tile size in image pixels for models with dynamic height/width; 0 = `input_width/height`
  // when set, else 512. A model's fixed input size always wins.
  int32_t tile_width;
  int32_t tile_height;
  // Pixels shared by neighbouring tiles, where their scores are blended (default 64).
  int32_t tile_overlap;
  // Tiles per ONNX Runtime run when the model's batch axis is dynamic (default 4; 1..=64).
  int32_t tile_batch;
  // Most ONNX Runtime sessions the handle keeps for concurrent calls; calls beyond wait their
  // turn in order. 0 (default) = one per physical core. See `seg_session_info` "pool".
  int32_t max_sessions;
  // Model files and in-memory models larger than this are refused before they are read
  // (`SEG_MODEL_INVALID`); 0 = default 2 GiB (ONNX's protobuf limit).
  uint64_t max_model_bytes;
  // Memory budget of one call's own buffers (input tensors, score maps, tiles); a call that would
  // need more is refused with `SEG_OUT_OF_MEMORY` before anything is allocated. 0 = default 8 GiB.
  uint64_t max_memory_bytes;
  // UTF-8 name of the UNet output to read when the model has several, or NULL for the only
  // segmentation map (a float output with the input's spatial size). Only read during `seg_create*`.
  const char *output_name;
  // A `SegCacheMode` value (default OFF): cache ONNX Runtime's optimised model so later starts
  // skip its graph optimiser. Only read during `seg_create*`.
  int32_t cache_mode;
  // Must be 0 (explicit padding).
  uint32_t reserved1;
  // UTF-8 folder of the cache for `SEG_CACHE_DIR` (created if missing); must be NULL otherwise.
  // Only read during `seg_create*`.
  const char *cache_dir;
} SegOptions;

// A borrowed image. The pixels are only read, and only during the call.
typedef struct SegImage {
  // First byte of row 0 (the top row). For PLANAR_RGB8: the R plane.
  const uint8_t *data;
  int32_t width;
  int32_t height;
  // Bytes from the start of one row to the next; 0 = tightly packed. Negative for bottom-up
  // buffers (then `data` still points at the top row). For PLANAR_RGB8: the stride of each plane.
  int32_t stride;
  // A `SegPixelFormat` value.
  int32_t format;
  // PLANAR_RGB8 only: the G and B planes (NULL otherwise).
  const uint8_t *plane1;
  const uint8_t *plane2;
} SegImage;

// A click in original image pixels. `label`: 1 = foreground (include), 0 = background (exclude).
typedef struct SegPoint {
  float x;
  float y;
  int32_t label;
} SegPoint;

// A box in original image pixels: top-left (x1, y1), bottom-right (x2, y2).
typedef struct SegBox {
  float x1;
  float y1;
  float x2;
  float y2;
} SegBox;

// A caller-owned 8-bit output mask; it must have the input image's width and height.
typedef struct SegMask {
  uint8_t *data;
  int32_t width;
  int32_t height;
  // Bytes per row; 0 = `width`.
  int32_t stride;
} SegMask;

// Optional extra results of `seg_run_sam2_points`. Set `struct_size = sizeof(SegSam2Result)` and,
// to receive them, the optional buffers (caller-owned; NULL = not wanted).
typedef struct SegSam2Result {
  uint32_t struct_size;
  // Index of the chosen mask among the decoder's outputs (highest predicted IoU).
  int32_t chosen_index;
  // Masks the decoder returned (1, 3 or 4).
  int32_t num_masks;
  // Non-zero when the cached image embedding was reused (no encoder run).
  uint32_t encoder_reused;
  // Predicted IoU of each mask (first `num_masks` valid).
  float scores[4];
  // Pre-processing + encoder run (0 when the cached embedding was reused).
  double encoder_ms;
  double decoder_ms;
  double postprocess_ms;
  // In: optional buffer of `all_masks_len` bytes receiving every mask (0/255), one after another,
  // each width x height without padding. Needs `num_masks * width * height` bytes (at most 4x).
  uint8_t *all_masks;
  size_t all_masks_len;
  // In: optional buffer of `low_res_len` floats receiving the chosen low-res logits.
  float *low_res_logits;
  size_t low_res_len;
  // Out: size of the low-res logits.
  int32_t low_res_width;
  int32_t low_res_height;
} SegSam2Result;

// Options of `seg_sam2_everything`, with the defaults and meaning of SAM2's automatic mask
// generator (`SAM2AutomaticMaskGenerator`):
// `SegEverythingOptions o = { .struct_size = sizeof o }; seg_everything_options_default(&o);`.
typedef struct SegEverythingOptions {
  // `sizeof(SegEverythingOptions)` as the caller was compiled with.
  uint32_t struct_size;
  // Prompts along each side of the image: a grid of `points_per_side`² points (default 32; 1..=256).
  int32_t points_per_side;
  // Prompts per decoder run where the decoder takes a batch of prompts (default 64; 1..=4096).
  // The result does not depend on it.
  int32_t points_per_batch;
  // Keep masks whose predicted IoU is above this (default 0.8; 0 = no filter; within [0, 1]).
  float pred_iou_thresh;
  // Keep masks whose stability score is at least this (default 0.95; 0 = no filter; within [0, 1]).
  float stability_score_thresh;
  // The stability score compares the mask at `mask_threshold` +- this (default 1.0).
  float stability_score_offset;
  // Logit threshold of a mask pixel (default 0.0).
  float mask_threshold;
  // Box IoU above which the lower-scored of two masks is dropped (default 0.7; within [0, 1]).
  float box_nms_thresh;
  // 0 = off (default); else holes and specks of at most this many pixels at the decoder's mask
  // resolution (256x256 for released models) are removed first, as SAM2's generator does.
  int32_t min_mask_region_area;
  // Must be 0: crop layers are not supported.
  int32_t crop_n_layers;
} SegEverythingOptions;

// A caller-owned 16-bit label image: 0 = background, object k = k. It must have the image's size.
typedef struct SegLabelImage {
  uint16_t *data;
  int32_t width;
  int32_t height;
  // Values (not bytes) from one row to the next; 0 = `width`.
  int32_t stride;
} SegLabelImage;

// One object found by `seg_sam2_everything`.
typedef struct SegEverythingObject {
  // Its value in the label image: objects are numbered 1, 2, ... by predicted IoU, best first.
  uint32_t id;
  // Which of the decoder's multimask outputs the mask is (0..2).
  int32_t mask_index;
  // Box around the full mask, inclusive pixel indices; all 0 for an empty mask.
  int32_t x0;
  int32_t y0;
  int32_t x1;
  int32_t y1;
  // Pixels of the full mask (also those painted over by smaller objects in the label image).
  uint64_t area;
  float predicted_iou;
  float stability_score;
  // The prompt point that gave the mask, in image pixels.
  float point_x;
  float point_y;
} SegEverythingObject;

// What `seg_sam2_everything` counted and measured. Set `struct_size = sizeof(SegEverythingInfo)`.
typedef struct SegEverythingInfo {
  uint32_t struct_size;
  // 1 when the decoder ran many prompts per run (an export with a prompt batch axis).
  uint32_t batched;
  // Prompts per decoder run.
  uint32_t batch;
  uint32_t prompts;
  uint32_t decoder_runs;
  // Masks decoded, then those left after the predicted-IoU, the stability and the NMS filters.
  uint32_t masks_decoded;
  uint32_t after_iou;
  uint32_t after_stability;
  uint32_t after_nms;
  // Objects returned (`after_nms`, at most 65535) and those beyond 65535 left out (lowest IoU).
  uint32_t objects;
  uint32_t dropped;
  // 1 when the cached image embedding was used (no encoder run).
  uint32_t encoder_reused;
  // 1 when the result was the session's last one (same image and options): nothing ran.
  uint32_t cached;
  uint32_t reserved;
  double encoder_ms;
  double decoder_ms;
  double postprocess_ms;
} SegEverythingInfo;

// What one run measured. Set `struct_size = sizeof(SegRunInfo)`; segrt writes no more than that.
typedef struct SegRunInfo {
  uint32_t struct_size;
  // 1 for binary models (mask 0/255), else the number of classes (mask = class index).
  int32_t num_classes;
  // Size the model ran at.
  int32_t model_width;
  int32_t model_height;
  double preprocess_ms;
  double inference_ms;
  double postprocess_ms;
  // Threshold applied (Otsu's value in OTSU mode); NaN for multi-class models.
  float threshold;
  // Tiles the image was cut into (0: not tiled, the whole image was resized).
  uint32_t tiles;
  // Pixels of the mask that are not 0.
  uint64_t foreground_pixels;
} SegRunInfo;

// Options of `seg_track_create`: `SegTrackOptions o = { .struct_size = sizeof o }; seg_track_options_default(&o);`.
typedef struct SegTrackOptions {
  // `sizeof(SegTrackOptions)` as the caller was compiled with.
  uint32_t struct_size;
  // Frames the video has, when known (0 = unknown: streaming, the default). SAM2 scales the
  // distance of object pointers by `min(num_frames, 16) - 1`: give it for videos or volumes of
  // fewer than 16 frames to match the official predictor exactly.
  uint32_t num_frames;
  // The encoder outputs of this many most recent frames are kept (0 = every frame, as the official
  // predictor does: memory grows with the video). Default 8: memory stays bounded; prompts and
  // `seg_track_frame` reach only the frames still held.
  uint32_t keep_frames;
  uint32_t reserved;
} SegTrackOptions;

// What one track call did. Set `struct_size = sizeof(SegTrackInfo)`; segrt writes no more than that.
typedef struct SegTrackInfo {
  uint32_t struct_size;
  // Objects of the track (records filled).
  uint32_t objects;
  // The frame the call was about (0-based, in the order frames were added).
  int64_t frame;
  // Milliseconds spent in this call, per stage.
  double preprocess_ms;
  double image_encoder_ms;
  double memory_attention_ms;
  double mask_decoder_ms;
  double memory_encoder_ms;
  double postprocess_ms;
} SegTrackInfo;

// One object on one frame: `seg_track_add_prompt`, `seg_track_frame` and `seg_track_next` fill
// one record per object, in the order the objects were first prompted (the same order as the masks).
typedef struct SegTrackObject {
  // The id the caller gave the object when prompting it.
  int32_t object_id;
  // 1 when SAM2 sees the object on this frame (its object score is above 0); 0 when it is hidden
  // or gone (the mask is then empty).
  uint32_t present;
  // 0 when the object has no prediction on this frame (prompted on a later frame, tracking not
  // yet there): then `score` is 0 and the mask empty.
  uint32_t has_output;
  // SAM2's object score logit (present when > 0).
  float score;
  // Pixels of the mask.
  uint64_t area;
  // Box around the mask, inclusive pixel indices; all 0 for an empty mask.
  int32_t x0;
  int32_t y0;
  int32_t x1;
  int32_t y1;
} SegTrackObject;

// The state of a track (`seg_track_state`). Set `struct_size = sizeof(SegTrackState)`.
typedef struct SegTrackState {
  uint32_t struct_size;
  // Objects prompted so far.
  uint32_t objects;
  // Frames added so far.
  int64_t frames;
  // Frame size (0 before the first frame).
  int32_t width;
  int32_t height;
  // Frames whose encoder outputs are held, and per-frame object outputs held in the memory bank:
  // both stay bounded with `keep_frames`.
  uint32_t held_frames;
  uint32_t held_outputs;
  // The options the track was created with.
  uint32_t num_frames;
  uint32_t keep_frames;
  // 1 once a frame was tracked: new objects can no longer be added (reset the track for that).
  uint32_t tracking_started;
  uint32_t reserved;
} SegTrackState;

#define SegStatus_ALL { SEG_OK, SEG_INVALID_ARGUMENT, SEG_NULL_POINTER, SEG_INVALID_HANDLE, SEG_BUFFER_TOO_SMALL, SEG_IMAGE_TOO_LARGE, SEG_UNSUPPORTED_FORMAT, SEG_WRONG_SESSION_KIND, SEG_OUT_OF_MEMORY, SEG_RUNTIME_NOT_FOUND, SEG_RUNTIME_INIT_FAILED, SEG_MODEL_NOT_FOUND, SEG_MODEL_INVALID, SEG_MODEL_UNSUPPORTED, SEG_PROVIDER_UNAVAILABLE, SEG_INFERENCE_FAILED, SEG_CANCELLED, SEG_PANIC, SEG_INTERNAL, }

#define SegProvider_ALL { SEG_PROVIDER_CPU, SEG_PROVIDER_CUDA, SEG_PROVIDER_TENSORRT, SEG_PROVIDER_DIRECTML, SEG_PROVIDER_OPENVINO, }

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Creates a call control: pass it as the `control` of long calls to cancel them from another
// thread (`seg_control_cancel`) or to receive their progress (`seg_control_set_progress`). One
// control may serve several calls at once: cancelling stops them all. Release it with
// `seg_control_free`. Thread safety: every `seg_control_*` function may be called from any thread.
//
// # Safety
// `out_control` must be NULL or writable.
SegStatus seg_control_create(struct SegCallControl **out_control);

// Cancels every call running under `control`, and every later one until `seg_control_reset`: segrt's
// own loops stop at their next step and ONNX Runtime's runs in flight are terminated. A cancelled
// call returns `SEG_CANCELLED`, writes none of its outputs and leaves the session (and a track) as it
// was before the call. Returns at once; the calls return on their threads shortly after.
//
// # Safety
// Any value may be passed as `control`.
SegStatus seg_control_cancel(struct SegCallControl *control);

// Makes a cancelled control usable for new calls (e.g. when the user starts the next job).
//
// # Safety
// Any value may be passed as `control`.
SegStatus seg_control_reset(struct SegCallControl *control);

// Installs (or with a NULL `callback` removes) the progress callback of the calls run under
// `control`. `user_data` is passed back untouched.
//
// # Safety
// `callback` must be NULL or a function that stays callable while calls run under `control`.
SegStatus seg_control_set_progress(struct SegCallControl *control,
                                   SegProgressCallback callback,
                                   void *user_data);

// Releases a control. `seg_control_free(NULL)` is a no-op; calls running under it finish normally.
//
// # Safety
// Any value may be passed.
SegStatus seg_control_free(struct SegCallControl *control);

// The C ABI version this library implements (`SEG_ABI_VERSION` in the header it was built with).
// Wrappers check it before their first call.
//
// Thread safety: any thread, any time; needs no ONNX Runtime.
uint32_t seg_abi_version(void);

// Copies a one-line version text into `buf`, e.g.
// `segrt 0.1.0 (ABI 1); ONNX Runtime 1.31.1 loaded from /opt/app/libonnxruntime.so.1.31.1`.
//
// `buf` (caller-owned, may be NULL when `cap` is 0) receives at most `cap` bytes including the NUL.
// Returns the size needed including the NUL; call again with a bigger buffer if it exceeds `cap`.
// Does not load ONNX Runtime. Thread safety: any thread.
//
// # Safety
// `buf` must be NULL or point to `cap` writable bytes.
size_t seg_version(char *buf, size_t cap);

// Loads ONNX Runtime now, from `ort_path` (an absolute UTF-8 path) or, when NULL, from the default
// places in order: `SEGRT_ORT_PATH`, beside the segrt library, the build tree.
//
// Optional: `seg_create*` loads it on first use. Call it early to report a missing runtime at start-up.
// Returns `SEG_RUNTIME_NOT_FOUND` (message: every path tried and why it failed) or
// `SEG_RUNTIME_INIT_FAILED` (a file that is not ONNX Runtime 1.31). A failed call leaves nothing
// half-initialised: a later call with a correct path works. Once loaded, later calls return `SEG_OK`
// and keep the loaded library (a process can hold only one).
// Thread safety: any thread; concurrent calls are serialised.
//
// # Safety
// `ort_path` must be NULL or a NUL-terminated string.
SegStatus seg_runtime_init(const char *ort_path);

// The constant's name for a status code, e.g. "SEG_MODEL_NOT_FOUND"; "SEG_UNKNOWN_STATUS" for
// values segrt never returns. The string is static: never free it. Thread safety: any thread.
const char *seg_status_str(int32_t status);

// Copies the message of the last failed call on the calling thread into `buf` (caller-owned,
// at most `cap` bytes including the NUL; NULL with `cap` 0 just asks for the size).
// Returns the size needed including the NUL (1 when no call has failed on this thread).
// The message stays until the next failure on the same thread; successes do not clear it.
//
// # Safety
// `buf` must be NULL or point to `cap` writable bytes.
size_t seg_last_error(char *buf, size_t cap);

// Installs a process-wide diagnostics callback (NULL removes it): which ONNX Runtime was loaded,
// the execution provider each new session got, provider fallback reasons (`SEG_LOG_WARN`), and
// the message of every failed call (`SEG_LOG_ERROR`, the same text as `seg_last_error`).
//
// The callback runs synchronously on the thread making the segrt call, possibly several threads at
// once. It is never called from `seg_free`, so a host may free sessions from a finalizer or
// destructor safely. It must not unwind (throw) into segrt; it may call segrt functions.
// After `seg_set_log_callback(NULL, NULL)` returns, a message already being delivered on another
// thread may still finish. `user_data` is passed back untouched (segrt never reads it).
//
// # Safety
// `callback` must be NULL or a function that stays callable until it is replaced.
SegStatus seg_set_log_callback(SegLogCallback callback, void *user_data);

// Lists every execution provider segrt can use, as JSON: its `SegProvider` value, whether the
// loaded ONNX Runtime build includes it, and whether it actually initialises on this machine (a
// tiny session is created with it alone, with `error_on_failure`), with ONNX Runtime's reason when
// not (e.g. a missing `libcublasLt.so.13`). Needs no GPU tools or admin rights.
//
// `options` (may be NULL) supplies `device_id` and `ort_path`. Loads ONNX Runtime if needed. Output
// as for `seg_session_info`: the JSON is copied into `buf` (`cap` bytes); `*out_len` receives the size
// needed; a size query (`buf` NULL, `cap` 0) returns `SEG_OK`, a too-small buffer
// `SEG_BUFFER_TOO_SMALL`. Takes tens of milliseconds (a session per provider). Thread safety: any thread.
//
// # Safety
// `options` NULL or a valid `SegOptions`; `buf` NULL or `cap` writable bytes; `out_len` NULL or writable.
SegStatus seg_providers(const struct SegOptions *options,
                        char *buf,
                        size_t cap,
                        size_t *out_len);

// Creates a SAM2 session from an image-encoder and a prompt-decoder ONNX file (UTF-8 paths).
// The export convention (samexporter, sam2-onnx, osam/ryouchinsa, uint8 encoders, SAM1-style) is
// recognised from input/output names and types; an unrecognised pair gives `SEG_MODEL_UNSUPPORTED`
// with the inputs/outputs found. Ownership, failure and thread-safety rules as for `seg_create`.
//
// # Safety
// Paths must be NULL or NUL-terminated; `options` NULL or a valid `SegOptions`; `out_session` NULL or writable.
SegStatus seg_create_sam2(const char *encoder_path,
                          const char *decoder_path,
                          const struct SegOptions *options,
                          struct SegSession **out_session);

// Like `seg_create_sam2`, from model bytes in memory (copied; the caller keeps ownership).
//
// # Safety
// Each data pointer must point to its length in readable bytes.
SegStatus seg_create_sam2_from_memory(const uint8_t *encoder_data,
                                      size_t encoder_len,
                                      const uint8_t *decoder_data,
                                      size_t decoder_len,
                                      const struct SegOptions *options,
                                      struct SegSession **out_session);

// Encodes `image` now (e.g. on a background thread right after the user opens it) so later clicks
// only run the decoder. Does nothing when the same pixels are already cached. `out_encoder_ms`
// (optional) receives the time spent (pre-processing + encoder), 0 when the cache was used.
// Thread safety: any thread; the cached embedding belongs to the session and serves all threads.
//
// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
//
// # Safety
// `image` must describe readable pixels; `out_encoder_ms` NULL or writable.
SegStatus seg_sam2_set_image(struct SegSession *session,
                             const struct SegImage *image,
                             double *out_encoder_ms,
                             struct SegCallControl *control);

// Forgets the cached image embedding and the previous mask of a SAM2 session.
//
// # Safety
// Any value may be passed as `session`.
SegStatus seg_sam2_reset(struct SegSession *session);

// Segments the object at the clicked points (and/or inside the box) and writes its mask, 0/255 at
// the image's size, into `out_mask`.
//
// - `image`: the picture clicked on; the encoder runs only when its pixels differ from the cached
//   image. NULL uses the image given to `seg_sam2_set_image` (or the last call).
// - `points`/`n_points`: clicks in original image pixels, label 1 = include, 0 = exclude. May be
//   NULL/0 when `bbox` is given.
// - `bbox`: optional (NULL = none), in original image pixels.
// - `mask_input`/`mask_input_len`: optional (NULL/0 = none) low-res logits of an earlier call on the
//   same image (its `SegSam2Result.low_res_logits`, `low_res_width x low_res_height` floats) to
//   refine: the caller's own refinement state, so threads refining different objects on one
//   session never mix.
// - `flags`: 0 or `SEG_SAM2_REFINE` (without `mask_input`: feed the session's previous chosen
//   low-res logits back, a convenience for one interacting thread).
// - `out_score`: optional, the chosen mask's predicted IoU.
// - `out_result`: optional; see `SegSam2Result` (all masks, scores, low-res logits, timings).
//
// Outputs are written only on success. Thread safety: any number of threads at once.
//
// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
//
// # Safety
// All pointers must be NULL or valid for the sizes stated.
SegStatus seg_run_sam2_points(struct SegSession *session,
                              const struct SegImage *image,
                              const struct SegPoint *points,
                              size_t n_points,
                              const struct SegBox *bbox,
                              const float *mask_input,
                              size_t mask_input_len,
                              uint32_t flags,
                              const struct SegMask *out_mask,
                              float *out_score,
                              struct SegSam2Result *out_result,
                              struct SegCallControl *control);

// Fills `options` with the defaults of SAM2's automatic mask generator, as `seg_options_default`
// does: `SegEverythingOptions o = { .struct_size = sizeof o }; seg_everything_options_default(&o);`.
//
// # Safety
// `options` must be NULL or point to `options->struct_size` writable bytes.
SegStatus seg_everything_options_default(struct SegEverythingOptions *options);

// Segments everything: prompts a grid of points over the image and keeps the masks SAM2's
// automatic mask generator keeps (predicted-IoU and stability filters, box NMS), as a 16-bit
// label image and one record per object.
//
// - `image`: the picture; the encoder runs only when its pixels differ from the cached image
//   (clicks and everything share the cache). NULL uses the image set last.
// - `options`: NULL for the defaults (`seg_everything_options_default`).
// - `out_labels` (optional): image-sized, 0 = background, object k = k. Objects are painted largest
//   first, so a smaller object lying on a larger one stays visible; records keep the full masks.
//   At most 65535 objects are returned (the best by predicted IoU); `out_info->dropped` counts the rest.
// - `out_objects`/`object_size`/`objects_capacity` (optional): records, best predicted IoU first (id
//   order); `object_size` is `sizeof(SegEverythingObject)` as the caller was compiled with (segrt
//   writes that much of each record, at that stride).
// - `out_count` (optional): the number of objects.
// - `out_info` (optional): counts and times.
//
// Size query: the session keeps its last result (per image and options), so a call with
// `out_objects` NULL and capacity 0 that learns `*out_count`, followed by the same call with a
// buffer, decodes only once. A capacity below the count gives `SEG_BUFFER_TOO_SMALL` with
// `*out_count` set and nothing else written. Options, buffer sizes and the image are checked before
// anything runs; on failure the label image and records are not touched.
// Thread safety: any number of threads at once.
//
// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
//
// # Safety
// Every pointer must be NULL or valid for the sizes it states.
SegStatus seg_sam2_everything(struct SegSession *session,
                              const struct SegImage *image,
                              const struct SegEverythingOptions *options,
                              const struct SegLabelImage *out_labels,
                              struct SegEverythingObject *out_objects,
                              size_t object_size,
                              size_t objects_capacity,
                              size_t *out_count,
                              struct SegEverythingInfo *out_info,
                              struct SegCallControl *control);

// Fills `*options` with the defaults. Start every options struct here, its size declared first:
// `SegOptions o = { .struct_size = sizeof o }; seg_options_default(&o);`. Only the `struct_size` bytes the caller
// declared are written, and `struct_size` itself is kept. Returns `SEG_NULL_POINTER` when `options`
// is NULL and `SEG_INVALID_ARGUMENT` (nothing written) for a size segrt does not accept.
// Thread safety: any thread.
//
// # Safety
// `options` must be NULL or point to `options->struct_size` writable bytes.
SegStatus seg_options_default(struct SegOptions *options);

// Creates a UNet session from an ONNX model file (`model_path`: UTF-8, any language, e.g. Chinese
// folder names). `options` may be NULL for the defaults; it is only read during the call.
// Loads ONNX Runtime first if needed (see `seg_runtime_init`).
//
// On success `*out_session` receives a new handle, owned by the caller: release it with `seg_free`.
// On failure `*out_session` is left untouched. Statuses: `SEG_MODEL_NOT_FOUND`, `SEG_MODEL_INVALID`,
// `SEG_MODEL_UNSUPPORTED` (the message lists the model's inputs/outputs), `SEG_PROVIDER_UNAVAILABLE`,
// `SEG_RUNTIME_NOT_FOUND`, `SEG_INVALID_ARGUMENT` (bad option values), `SEG_NULL_POINTER`.
// Thread safety: any thread; the handle may then be used from any number of threads at once.
//
// # Safety
// `model_path` must be NULL or NUL-terminated; `options` NULL or a valid `SegOptions`;
// `out_session` NULL or writable.
SegStatus seg_create(const char *model_path,
                     const struct SegOptions *options,
                     struct SegSession **out_session);

// Like `seg_create`, from model bytes in memory. The bytes are copied; the caller keeps ownership
// of `model_data` and may free it when the call returns.
//
// # Safety
// `model_data` must point to `model_len` readable bytes; `options` NULL or a valid `SegOptions`;
// `out_session` NULL or writable.
SegStatus seg_create_from_memory(const uint8_t *model_data,
                                 size_t model_len,
                                 const struct SegOptions *options,
                                 struct SegSession **out_session);

// Releases a session. `seg_free(NULL)` is a no-op returning `SEG_OK`; a handle that was already
// freed or never created returns `SEG_INVALID_HANDLE` (never undefined behaviour).
// A call running on another thread at the same time finishes normally; the memory is released when
// it returns. Per-thread ONNX Runtime sessions of the handle are released with it.
//
// # Safety
// Any value may be passed.
SegStatus seg_free(struct SegSession *session);

// Runs a UNet session on one image and writes the mask at the image's size into `out_mask`.
//
// - `image`: borrowed pixels (read only, only during the call); see `SegImage` for formats and strides.
// - `out_mask`: caller-owned buffer of the image's width x height (0/255 for binary models, the class
//   index for multi-class models).
// - `out_probability`: optional (NULL = not wanted) caller-owned `float` buffer of `probability_len`
//   elements, at least width x height; receives the foreground probability (multi-class: of the chosen
//   class), row-major without padding.
// - `out_info`: optional; set its `struct_size` first. Receives timings, classes, the threshold used.
//
// Outputs are written only on success. Thread safety: any number of threads may run the same session at
// once: each call borrows one of the handle's ONNX Runtime sessions (up to `SegOptions.max_sessions`
// run at once; further calls wait their turn in arrival order).
//
// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
//
// # Safety
// All pointers must be NULL or valid for the sizes the descriptors state.
SegStatus seg_run_unet(struct SegSession *session,
                       const struct SegImage *image,
                       const struct SegMask *out_mask,
                       float *out_probability,
                       size_t probability_len,
                       struct SegRunInfo *out_info,
                       struct SegCallControl *control);

// Describes a session as JSON: the model's inputs and outputs (names, dtypes, shapes; -1 = dynamic),
// how segrt interprets them (layout, channels, classes), the execution provider requested and in use
// with any fallback reason, the threads sessions run on, the session pool ("pool": max_sessions,
// sessions, busy, created, waits, resident memory of the first and of an extra session; SAM2:
// "encoder_pool" and "decoder_pool"), and the ONNX Runtime version and path.
//
// The JSON (UTF-8, NUL-terminated) is copied into the caller-owned `buf` of `cap` bytes; `*out_len`
// (optional) receives the size needed including the NUL. A pure size query (`buf` NULL, `cap` 0,
// `out_len` set) returns `SEG_OK`; otherwise a `cap` that is too small gives `SEG_BUFFER_TOO_SMALL`
// (nothing is written then; call again with `*out_len` bytes).
//
// # Safety
// `buf` must be NULL or point to `cap` writable bytes; `out_len` NULL or writable.
SegStatus seg_session_info(struct SegSession *session,
                           char *buf,
                           size_t cap,
                           size_t *out_len);

// Creates a SAM2 video session from a folder holding `video_metadata.json` and the four ONNX
// modules it names (written by `models/sam2/export_sam2_video.py`; UTF-8 path). `options` as for
// `seg_create` (NULL = defaults). Make tracks from it with `seg_track_create`; release it with
// `seg_free` (tracks still open keep the model alive until they are freed).
//
// # Safety
// `models_dir` must be NULL or NUL-terminated; `options` NULL or a valid `SegOptions`;
// `out_session` NULL or writable.
SegStatus seg_create_sam2_video(const char *models_dir,
                                const struct SegOptions *options,
                                struct SegSession **out_session);

// Fills `*options` with the defaults, as `seg_options_default` does:
// `SegTrackOptions o = { .struct_size = sizeof o }; seg_track_options_default(&o);`.
//
// # Safety
// `options` must be NULL or point to `options->struct_size` writable bytes.
SegStatus seg_track_options_default(struct SegTrackOptions *options);

// Starts a new, empty track on a video session (`options` NULL = defaults). Release it with
// `seg_track_free`. Thread safety: any thread.
//
// # Safety
// `options` must be NULL or a valid `SegTrackOptions`; `out_track` NULL or writable.
SegStatus seg_track_create(struct SegSession *session,
                           const struct SegTrackOptions *options,
                           struct SegTrack **out_track);

// Releases a track. `seg_track_free(NULL)` is a no-op; a freed or made-up handle gives
// `SEG_INVALID_HANDLE`, a session handle `SEG_WRONG_SESSION_KIND` (it is not freed). A call running
// on the track in another thread finishes normally; the memory is released when it returns.
//
// # Safety
// Any value may be passed.
SegStatus seg_track_free(struct SegTrack *track);

// Forgets every frame, object and memory of the track: it is as new (same session and options).
// A call running on the track finishes first.
//
// # Safety
// Any value may be passed as `track`.
SegStatus seg_track_reset(struct SegTrack *track);

// Adds the next frame and encodes it (no tracking): the frame gets the next index (0, 1, ...),
// written to `*out_frame` (optional). Every frame must have the first frame's size. Use it to
// prompt on a frame before tracking, or to feed a volume first and track later with
// `seg_track_frame`. `out_info` optional (set its `struct_size`).
//
// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
//
// # Safety
// `frame` must describe readable pixels; `out_frame` NULL or writable; `out_info` NULL or valid.
SegStatus seg_track_add_frame(struct SegTrack *track,
                              const struct SegImage *frame,
                              int64_t *out_frame,
                              struct SegTrackInfo *out_info,
                              struct SegCallControl *control);

// Prompts one object on a frame already added (`frame`: its index; -1 = the last frame added, -2
// the one before, ...): clicks (`points`, label 1 = object, 0 = not the object) and/or a box, in
// the frame's pixels. The prompt replaces earlier clicks of this object on this frame. A new
// `object_id` starts a new object (allowed until the first frame is tracked). A prompt on a frame
// not yet tracked for this object makes it a conditioning frame; on a tracked frame it corrects
// the mask there and the correction is used as memory when tracking goes on.
//
// Writes every object of that frame (the prompted one with its new mask): see "Frame outputs" in
// `seg_track_frame`.
//
// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
//
// # Safety
// `points` must be NULL or `n_points` readable records; `bbox` NULL or valid; outputs as in
// `seg_track_frame`.
SegStatus seg_track_add_prompt(struct SegTrack *track,
                               int64_t frame,
                               int32_t object_id,
                               const struct SegPoint *points,
                               size_t n_points,
                               const struct SegBox *bbox,
                               struct SegTrackObject *out_objects,
                               size_t object_size,
                               const struct SegMask *out_masks,
                               size_t capacity,
                               size_t *out_count,
                               struct SegTrackInfo *out_info,
                               struct SegCallControl *control);

// Tracks frame `frame` (an index; -1 = the last frame added) for every object: clicks given
// since the last tracking are consolidated first, then each object without a prompt on that frame
// gets SAM2's memory-conditioned mask, remembered for the frames after. Frames are normally tracked
// in order, each once; tracking a frame again recomputes it from the memory as it is now.
//
// Frame outputs (also of `seg_track_add_prompt` and `seg_track_next`), one per object in the order
// objects were first prompted, all optional:
// - `out_objects`: `capacity` records (`SegTrackObject`) of `object_size` bytes each
//   (`sizeof(SegTrackObject)` as the caller was compiled with);
// - `out_masks`: `capacity` caller-owned masks of the frame's size, 0/255 each;
// - `out_count`: the number of objects.
//
// When either array is given and `capacity` is below the number of objects the call returns
// `SEG_BUFFER_TOO_SMALL` with `*out_count` set, before anything runs (the track is unchanged);
// `seg_track_state` tells the count beforehand. Masks of the wrong size are refused the same way.
// Outputs are written only on success.
//
// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
//
// # Safety
// Outputs must be NULL or valid for `capacity` elements; each mask must describe writable memory.
SegStatus seg_track_frame(struct SegTrack *track,
                          int64_t frame,
                          struct SegTrackObject *out_objects,
                          size_t object_size,
                          const struct SegMask *out_masks,
                          size_t capacity,
                          size_t *out_count,
                          struct SegTrackInfo *out_info,
                          struct SegCallControl *control);

// Streaming: adds the next frame and tracks it (`seg_track_add_frame` + `seg_track_frame` in one
// call, under one lock). Needs at least one object prompted. Outputs as for `seg_track_frame`;
// `out_info->frame` is the new frame's index. When the buffers are too small nothing is added.
//
// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
//
// # Safety
// As for `seg_track_add_frame` and `seg_track_frame`.
SegStatus seg_track_next(struct SegTrack *track,
                         const struct SegImage *frame,
                         struct SegTrackObject *out_objects,
                         size_t object_size,
                         const struct SegMask *out_masks,
                         size_t capacity,
                         size_t *out_count,
                         struct SegTrackInfo *out_info,
                         struct SegCallControl *control);

// Describes a track: objects, frames, frame size, what its memory holds (`held_frames`,
// `held_outputs` stay bounded with `keep_frames`). Set `out_state->struct_size` first.
//
// # Safety
// `out_state` must be NULL or valid for its `struct_size`.
SegStatus seg_track_state(struct SegTrack *track, struct SegTrackState *out_state);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* SEGRT_H */
