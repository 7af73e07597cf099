using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// Options for creating a segmenter (<see cref="UnetSegmenter"/>, <see cref="Sam2Segmenter"/>,
    /// <see cref="Sam2VideoModel"/>; the C header's SegOptions). The defaults are segrt's own
    /// (seg_options_default); set only what your model needs. Read only while the segmenter is created.
    /// </summary>
    public sealed class SegmenterOptions
    {
        /// <summary>The execution provider to run on (default CPU).</summary>
        public ExecutionProvider Provider { get; set; } = ExecutionProvider.Cpu;

        /// <summary>GPU index for GPU providers.</summary>
        public int DeviceId { get; set; }

        /// <summary>What happens when <see cref="Provider"/> cannot start (default: fail).</summary>
        public ProviderPolicy ProviderPolicy { get; set; } = ProviderPolicy.Require;

        /// <summary>
        /// ONNX Runtime intra-op threads per session; 0 (default) = every session runs on ONNX Runtime's one
        /// process-wide thread pool (one thread per physical core), so more sessions do not oversubscribe the cores.
        /// </summary>
        public int IntraThreads { get; set; }

        /// <summary>Model input width for models with dynamic axes; 0 = the image width rounded to SizeMultiple.</summary>
        public int InputWidth { get; set; }

        /// <summary>Model input height for models with dynamic axes; 0 = the image height rounded to SizeMultiple.</summary>
        public int InputHeight { get; set; }

        /// <summary>Dynamic axes are rounded to a multiple of this (default 32).</summary>
        public int SizeMultiple { get; set; } = 32;

        /// <summary>How images are resized to the model's input (default bilinear).</summary>
        public ResizeFilter ResizeFilter { get; set; } = ResizeFilter.Bilinear;

        /// <summary>Channel order the model was trained with (3-channel models).</summary>
        public ChannelOrder ChannelOrder { get; set; } = ChannelOrder.Rgb;

        /// <summary>Normalisation: (pixel * Scale - Mean[c]) / Std[c]; default 1/255.</summary>
        public float Scale { get; set; } = 1f / 255f;

        /// <summary>Per-channel mean of the normalisation (3 values, default 0).</summary>
        public float[] Mean { get; set; } = { 0f, 0f, 0f };

        /// <summary>Per-channel standard deviation of the normalisation (3 values, default 1).</summary>
        public float[] Std { get; set; } = { 1f, 1f, 1f };

        /// <summary>Whether a sigmoid is applied to the output (default: when it looks like logits).</summary>
        public SigmoidMode Sigmoid { get; set; } = SigmoidMode.Auto;

        /// <summary>How the mask is thresholded (default: <see cref="Threshold"/>).</summary>
        public ThresholdMode ThresholdMode { get; set; } = ThresholdMode.Fixed;

        /// <summary>Threshold in [0, 1] for ThresholdMode.Fixed.</summary>
        public float Threshold { get; set; } = 0.5f;

        /// <summary>Remove foreground regions smaller than this many pixels (0 = off).</summary>
        public int MinArea { get; set; }

        /// <summary>Morphological closing with a k x k square (0 = off).</summary>
        public int CloseKernel { get; set; }

        /// <summary>Fill holes inside foreground regions.</summary>
        public bool FillHoles { get; set; }

        /// <summary>Images with more pixels are refused before anything is allocated.</summary>
        public long MaxPixels { get; set; } = 100000000;

        /// <summary>Tiled inference for large images (small defects survive; see <see cref="TilingMode"/>).</summary>
        public TilingMode TileMode { get; set; } = TilingMode.Off;

        /// <summary>Tile width for models with dynamic input size; 0 = InputWidth, else 512. Fixed-size models use their own.</summary>
        public int TileWidth { get; set; }

        /// <summary>Tile height for models with dynamic input size; 0 = InputHeight, else 512. Fixed-size models use their own.</summary>
        public int TileHeight { get; set; }

        /// <summary>Pixels shared by neighbouring tiles, where their scores are blended.</summary>
        public int TileOverlap { get; set; } = 64;

        /// <summary>Tiles per run when the model's batch axis is dynamic (1..64).</summary>
        public int TileBatch { get; set; } = 4;

        /// <summary>Absolute path of onnxruntime.dll / libonnxruntime.so; null = beside segrt.</summary>
        public string OnnxRuntimePath { get; set; }

        /// <summary>
        /// The most ONNX Runtime sessions the segmenter keeps for calls running at once (for SAM2: encoder
        /// sessions and, separately, decoder sessions). The pool starts with one and builds another only when
        /// a call finds every session busy; calls beyond the cap wait their turn, in order. 0 (default) = one
        /// per physical core. On the CPU, when the cap is above 1 the first session also saves the optimised graph
        /// (<see cref="PoolInfo.SharedGraphBytes"/>) and further sessions read their weights from it, so each costs
        /// <see cref="PoolInfo.BytesPerExtraSession"/> (its own state, not another copy of the model or of its
        /// pre-packed weights); 1 keeps memory lowest, skips saving the graph (the fastest first start) and serialises the calls.
        /// </summary>
        public int MaxSessions { get; set; }

        /// <summary>
        /// Model files (and model bytes) larger than this are refused before they are read
        /// (Status.ModelInvalid); 0 (default) = 2 GiB, ONNX's own limit.
        /// </summary>
        public long MaxModelBytes { get; set; }

        /// <summary>
        /// Memory budget for one call's own buffers (input tensors, score maps, tiles): a call that would need
        /// more is refused with Status.OutOfMemory before anything is allocated. 0 (default) = 8 GiB.
        /// </summary>
        public long MaxMemoryBytes { get; set; }

        /// <summary>
        /// UNet: the name of the model output to read, for models with several outputs; null (default) = the
        /// one float output with the input's spatial size. A model with no such output (e.g. a SAM2 encoder)
        /// is refused with Status.ModelUnsupported, listing its outputs, unless this names one.
        /// </summary>
        public string OutputName { get; set; }

        /// <summary>
        /// Caches ONNX Runtime's optimised model so that later starts of the same model (same ONNX Runtime,
        /// provider and CPU) load it instead of optimising again; a stale or damaged cache file is detected,
        /// deleted and rebuilt (Log event), and a folder that cannot be written only costs the cache. Off by default.
        /// </summary>
        public ModelCacheMode CacheMode { get; set; }

        /// <summary>The cache folder for <see cref="ModelCacheMode.Dir"/> (created if missing); must be null otherwise.</summary>
        public string CacheDirectory { get; set; }

        /// <summary>
        /// Whether runs give ONNX Runtime's working buffers back to the system or keep them for the next run
        /// (default <see cref="ArenaPolicy.Auto"/>: the image encoders give theirs back once the process is idle,
        /// clicks and UNet runs keep theirs). Disposing the last segmenter of the process, or
        /// <see cref="SegrtLibrary.ReleaseMemory"/>, gives everything back whatever the policy.
        /// </summary>
        public ArenaPolicy Arena { get; set; }

        /// <summary>
        /// Most bytes the CUDA provider's memory arena may hold on the GPU (also the CUDA provider behind TensorRT;
        /// TensorRT's own engines are not counted); 0 (default) = no limit. A model that does not fit is Status.ProviderUnavailable, or the CPU under
        /// <see cref="Segrt.ProviderPolicy.Fallback"/>.
        /// </summary>
        public long GpuMemoryLimit { get; set; }

        /// <summary>How cuDNN chooses each convolution's algorithm on CUDA (default <see cref="ConvSearch.Auto"/>: heuristics).</summary>
        public ConvSearch ConvSearch { get; set; }

        /// <summary>
        /// Refuse a session where ONNX Runtime placed nodes of the model on the CPU although a GPU provider was
        /// requested (Status.ProviderUnavailable; under <see cref="Segrt.ProviderPolicy.Fallback"/> the whole model
        /// runs on the CPU). Off by default: such a session runs, and <see cref="ProviderReport.InUse"/> says "partly".
        /// </summary>
        public bool RequireAllNodes { get; set; }

        /// <summary>
        /// Folder (created if missing) for TensorRT's engine and timing caches: engines are built at the first
        /// start and loaded at later ones. Null (default): TensorRT builds its engines at every start.
        /// </summary>
        public string TensorRtCacheDirectory { get; set; }

        /// <summary>Let TensorRT build FP16 engines (faster on tensor cores; results differ slightly).</summary>
        public bool TensorRtFp16 { get; set; }

        /// <summary>
        /// Give TensorRT shape profiles derived from the model's dynamic axes and the sizes segrt feeds them
        /// (true, the default), so it builds its engines when the segmenter is created; false: engines are
        /// built at the first runs and again for each new shape. Under a SAM2 decoder's profile a prompt has at
        /// most 32 points. <see cref="ProviderReport.TensorRtProfile"/> reports each model's profile.
        /// </summary>
        public bool TensorRtShapeProfiles { get; set; } = true;

        /// <summary>
        /// Where a SAM2 prompt decoder (and a tracker's mask decoder and memory encoder) runs; null (default): on
        /// <see cref="Provider"/>. E.g. the encoder on TensorRT and the decoder, whose prompt count varies, on CUDA;
        /// or the decoder on the CPU to keep its sessions off a GPU shared with another program. <see cref="DeviceId"/>,
        /// the policy and the GPU options apply to it too; <see cref="SessionInfo.DecoderProvider"/> reports it.
        /// </summary>
        public ExecutionProvider? DecoderProvider { get; set; }

        /// <summary>
        /// Where OpenVINO runs the model (<see cref="ExecutionProvider.OpenVino"/>): "CPU", "GPU", "GPU.1", "NPU", "AUTO"
        /// or "AUTO:GPU,CPU" (OpenVINO picks, in that order of preference); null (default) = "CPU". A device OpenVINO
        /// does not find is Status.ProviderUnavailable, or the CPU provider under <see cref="Segrt.ProviderPolicy.Fallback"/>.
        /// </summary>
        public string OpenVinoDevice { get; set; }

        /// <summary>OpenVINO's precision hint (default: the device's own; the CPU takes Fp32 and Accuracy only).</summary>
        public OpenVinoPrecision OpenVinoPrecision { get; set; }

        /// <summary>
        /// Absolute folder where OpenVINO keeps the models it compiled, so that a second start of the program skips
        /// compiling them; null (default): compiled at every start.
        /// </summary>
        public string OpenVinoCacheDirectory { get; set; }

        /// <summary>OpenVINO's own inference threads; 0 (default) = OpenVINO's choice (a thread per core).</summary>
        public int OpenVinoThreads { get; set; }

        /// <summary>OpenVINO's parallel inference streams (1..255; 1: one image at a time, the least latency); 0 (default) = OpenVINO's.</summary>
        public int OpenVinoStreams { get; set; }

        /// <summary>Writes these options over seg_options_default's (range checks are segrt's).</summary>
        /// <param name="ortPath">NUL-terminated UTF-8 <see cref="OnnxRuntimePath"/> (pinned by the caller for the call), or null.</param>
        /// <param name="outputName">NUL-terminated UTF-8 <see cref="OutputName"/> (pinned by the caller for the call), or null.</param>
        /// <param name="cacheDir">NUL-terminated UTF-8 <see cref="CacheDirectory"/> (pinned by the caller for the call), or null.</param>
        internal unsafe SegOptions ToNative(byte* ortPath, byte* outputName, byte* cacheDir)
        {
            return ToNative(ortPath, outputName, cacheDir, null);
        }

        /// <summary>Writes these options over seg_options_default's (range checks are segrt's).</summary>
        /// <param name="ortPath">NUL-terminated UTF-8 <see cref="OnnxRuntimePath"/> (pinned by the caller for the call), or null.</param>
        /// <param name="outputName">NUL-terminated UTF-8 <see cref="OutputName"/> (pinned by the caller for the call), or null.</param>
        /// <param name="cacheDir">NUL-terminated UTF-8 <see cref="CacheDirectory"/> (pinned by the caller for the call), or null.</param>
        /// <param name="trtCacheDir">NUL-terminated UTF-8 <see cref="TensorRtCacheDirectory"/> (pinned by the caller for the call), or null.</param>
        internal unsafe SegOptions ToNative(byte* ortPath, byte* outputName, byte* cacheDir, byte* trtCacheDir)
        {
            return ToNative(ortPath, outputName, cacheDir, trtCacheDir, null, null);
        }

        /// <summary>Writes these options over seg_options_default's (range checks are segrt's).</summary>
        /// <param name="ortPath">NUL-terminated UTF-8 <see cref="OnnxRuntimePath"/> (pinned by the caller for the call), or null.</param>
        /// <param name="outputName">NUL-terminated UTF-8 <see cref="OutputName"/> (pinned by the caller for the call), or null.</param>
        /// <param name="cacheDir">NUL-terminated UTF-8 <see cref="CacheDirectory"/> (pinned by the caller for the call), or null.</param>
        /// <param name="trtCacheDir">NUL-terminated UTF-8 <see cref="TensorRtCacheDirectory"/> (pinned by the caller for the call), or null.</param>
        /// <param name="ovDevice">NUL-terminated UTF-8 <see cref="OpenVinoDevice"/> (pinned by the caller for the call), or null.</param>
        /// <param name="ovCacheDir">NUL-terminated UTF-8 <see cref="OpenVinoCacheDirectory"/> (pinned by the caller for the call), or null.</param>
        internal unsafe SegOptions ToNative(byte* ortPath, byte* outputName, byte* cacheDir, byte* trtCacheDir, byte* ovDevice, byte* ovCacheDir)
        {
            if (OpenVinoThreads < 0 || OpenVinoStreams < 0)
                throw new ArgumentOutOfRangeException(nameof(OpenVinoThreads) + "/" + nameof(OpenVinoStreams), "OpenVinoThreads and OpenVinoStreams must not be negative (0 = OpenVINO's default)");
            if (GpuMemoryLimit < 0) throw new ArgumentOutOfRangeException(nameof(GpuMemoryLimit), "GpuMemoryLimit must not be negative (0 = no limit)");
            if (MaxSessions < 0 || MaxModelBytes < 0 || MaxMemoryBytes < 0)
                throw new ArgumentOutOfRangeException(nameof(MaxSessions) + "/" + nameof(MaxModelBytes) + "/" + nameof(MaxMemoryBytes), "MaxSessions, MaxModelBytes and MaxMemoryBytes must not be negative (0 = segrt's default)");
            if (Mean == null || Mean.Length != 3) throw new ArgumentException("Mean must have 3 values", nameof(Mean));
            if (Std == null || Std.Length != 3) throw new ArgumentException("Std must have 3 values", nameof(Std));
            if (MinArea < 0 || CloseKernel < 0 || MaxPixels <= 0)
                throw new ArgumentOutOfRangeException(nameof(MinArea) + "/" + nameof(CloseKernel) + "/" + nameof(MaxPixels), "MinArea and CloseKernel must not be negative, MaxPixels must be positive");
            // ABI 1: the size is declared first; segrt fills only that many bytes and refuses a struct without it.
            var o = new SegOptions { struct_size = (uint)sizeof(SegOptions) };
            Interop.Check(NativeMethods.seg_options_default(&o));
            o.provider = (int)Provider;
            o.device_id = DeviceId;
            o.provider_policy = (int)ProviderPolicy;
            o.intra_threads = IntraThreads;
            o.input_width = InputWidth;
            o.input_height = InputHeight;
            o.size_multiple = SizeMultiple;
            o.resize_filter = (int)ResizeFilter;
            o.channel_order = (int)ChannelOrder;
            o.scale = Scale;
            for (int i = 0; i < 3; i++)
            {
                o.mean[i] = Mean[i];
                o.std[i] = Std[i];
            }
            o.sigmoid = (int)Sigmoid;
            o.threshold_mode = (int)ThresholdMode;
            o.threshold = Threshold;
            o.min_area = (uint)MinArea;
            o.close_kernel = (uint)CloseKernel;
            o.fill_holes = FillHoles ? 1u : 0u;
            o.max_pixels = (ulong)MaxPixels;
            o.tile_mode = (int)TileMode;
            o.tile_width = TileWidth;
            o.tile_height = TileHeight;
            o.tile_overlap = TileOverlap;
            o.tile_batch = TileBatch;
            o.ort_path = ortPath;
            o.max_sessions = MaxSessions;
            o.max_model_bytes = (ulong)MaxModelBytes;
            o.max_memory_bytes = (ulong)MaxMemoryBytes;
            o.output_name = outputName;
            o.cache_mode = (int)CacheMode;
            o.cache_dir = cacheDir;
            o.arena = (uint)Arena;
            o.gpu_mem_limit = (ulong)GpuMemoryLimit;
            o.conv_search = (int)ConvSearch;
            o.require_all_nodes = RequireAllNodes ? 1u : 0u;
            o.trt_cache_dir = trtCacheDir;
            o.trt_fp16 = TensorRtFp16 ? 1u : 0u;
            // SegDecoderProvider: 0 = as provider, else a SegProvider value plus one.
            o.decoder_provider = DecoderProvider.HasValue ? (int)DecoderProvider.Value + 1 : 0;
            // SegTrtProfiles: 0 = AUTO, 1 = OFF.
            o.trt_profiles = TensorRtShapeProfiles ? 0 : 1;
            o.ov_device = ovDevice;
            o.ov_precision = (int)OpenVinoPrecision;
            o.ov_cache_dir = ovCacheDir;
            o.ov_threads = OpenVinoThreads;
            o.ov_streams = OpenVinoStreams;
            return o;
        }
    }
}
