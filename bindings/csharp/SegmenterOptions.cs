// segrt .NET wrapper: session options (the C header's SegOptions) and the runtime-wide functions.
using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// Execution providers (the C header's SegProvider, mirrored by hand and checked by a test);
    /// <see cref="SegRuntime.ProbeProvidersJson"/> says which work on this PC.
    /// </summary>
    public enum ExecutionProvider
    {
        /// <summary>ONNX Runtime's CPU provider (always available).</summary>
        Cpu = 0,
        /// <summary>NVIDIA CUDA (needs the GPU build of ONNX Runtime and CUDA/cuDNN).</summary>
        Cuda = 1,
        /// <summary>NVIDIA TensorRT.</summary>
        TensorRT = 2,
        /// <summary>DirectML (Windows, any DirectX 12 GPU).</summary>
        DirectML = 3,
        /// <summary>Intel OpenVINO.</summary>
        OpenVino = 4,
    }

    /// <summary>
    /// Whether and where ONNX Runtime's optimised model is cached so later starts skip its graph optimiser
    /// (the C header's SegCacheMode, mirrored by hand and checked by a test).
    /// </summary>
    public enum CacheMode
    {
        /// <summary>No cache (the default).</summary>
        Off = 0,
        /// <summary>A folder "segrt-cache" next to each model file; models loaded from bytes are refused (SegStatus.InvalidArgument).</summary>
        BesideModel = 1,
        /// <summary>The folder <see cref="SegmenterOptions.CacheDirectory"/> (created if missing).</summary>
        Dir = 2,
    }

    /// <summary>What happens when the requested execution provider cannot start.</summary>
    public enum ProviderPolicy
    {
        /// <summary>Creating the segmenter fails with ONNX Runtime's reason (SegStatus.ProviderUnavailable).</summary>
        Require = 0,
        /// <summary>Run on the CPU; the reason is in <see cref="Segmenter.FallbackReason"/> and the Log event.</summary>
        Fallback = 1,
    }

    /// <summary>How images are resized to the model's input size.</summary>
    public enum ResizeFilter
    {
        /// <summary>Nearest neighbour.</summary>
        Nearest = 0,
        /// <summary>Bilinear, antialiased when shrinking (the default).</summary>
        Bilinear = 1,
        /// <summary>Bicubic.</summary>
        Bicubic = 2,
        /// <summary>Lanczos with 3 lobes.</summary>
        Lanczos3 = 3,
        /// <summary>Bilinear without antialiasing (as OpenCV's INTER_LINEAR and most training pipelines).</summary>
        BilinearNoAntialias = 4,
    }

    /// <summary>Channel order a 3-channel model was trained with.</summary>
    public enum ChannelOrder
    {
        /// <summary>Red, green, blue (PIL, torchvision).</summary>
        Rgb = 0,
        /// <summary>Blue, green, red (OpenCV).</summary>
        Bgr = 1,
    }

    /// <summary>Whether segrt applies a sigmoid to the model's output.</summary>
    public enum SigmoidMode
    {
        /// <summary>Only when the output looks like logits (values outside [0, 1]).</summary>
        Auto = 0,
        /// <summary>Always.</summary>
        On = 1,
        /// <summary>Never (the model outputs probabilities).</summary>
        Off = 2,
    }

    /// <summary>How a binary model's probability becomes the 0/255 mask.</summary>
    public enum ThresholdMode
    {
        /// <summary><see cref="SegmenterOptions.Threshold"/>.</summary>
        Fixed = 0,
        /// <summary>Otsu's threshold of each image's probabilities.</summary>
        Otsu = 1,
    }

    /// <summary>Whether large images are segmented tile by tile at full resolution.</summary>
    public enum TileMode
    {
        /// <summary>The whole image is resized to the model's input: one run.</summary>
        Off = 0,
        /// <summary>Always cut the image into model-sized tiles (no resizing); scores are blended where tiles overlap.</summary>
        On = 1,
        /// <summary>Tile when the image is more than twice the tile's width or height.</summary>
        Auto = 2,
    }

    /// <summary>
    /// Options for creating a segmenter. The defaults are segrt's own (seg_options_default); set only
    /// what your model needs. Read only while the segmenter is created.
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

        /// <summary>Tiled inference for large images (small defects survive; see TileMode).</summary>
        public TileMode TileMode { get; set; } = TileMode.Off;

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
        /// (SegStatus.ModelInvalid); 0 (default) = 2 GiB, ONNX's own limit.
        /// </summary>
        public long MaxModelBytes { get; set; }

        /// <summary>
        /// Memory budget for one call's own buffers (input tensors, score maps, tiles): a call that would need
        /// more is refused with SegStatus.OutOfMemory before anything is allocated. 0 (default) = 8 GiB.
        /// </summary>
        public long MaxMemoryBytes { get; set; }

        /// <summary>
        /// UNet: the name of the model output to read, for models with several outputs; null (default) = the
        /// one float output with the input's spatial size. A model with no such output (e.g. a SAM2 encoder)
        /// is refused with SegStatus.ModelUnsupported, listing its outputs, unless this names one.
        /// </summary>
        public string OutputName { get; set; }

        /// <summary>
        /// Caches ONNX Runtime's optimised model so that later starts of the same model (same ONNX Runtime,
        /// provider and CPU) load it instead of optimising again; a stale or damaged cache file is detected,
        /// deleted and rebuilt (Log event), and a folder that cannot be written only costs the cache. Off by default.
        /// </summary>
        public CacheMode CacheMode { get; set; }

        /// <summary>The cache folder for <see cref="Segrt.CacheMode.Dir"/> (created if missing); must be null otherwise.</summary>
        public string CacheDirectory { get; set; }

        /// <summary>Writes these options over seg_options_default's (range checks are segrt's).</summary>
        /// <param name="ortPath">NUL-terminated UTF-8 <see cref="OnnxRuntimePath"/> (pinned by the caller for the call), or null.</param>
        /// <param name="outputName">NUL-terminated UTF-8 <see cref="OutputName"/> (pinned by the caller for the call), or null.</param>
        /// <param name="cacheDir">NUL-terminated UTF-8 <see cref="CacheDirectory"/> (pinned by the caller for the call), or null.</param>
        internal unsafe SegOptions ToNative(byte* ortPath, byte* outputName, byte* cacheDir)
        {
            if (MaxSessions < 0 || MaxModelBytes < 0 || MaxMemoryBytes < 0)
                throw new ArgumentOutOfRangeException(nameof(MaxSessions) + "/" + nameof(MaxModelBytes) + "/" + nameof(MaxMemoryBytes), "MaxSessions, MaxModelBytes and MaxMemoryBytes must not be negative (0 = segrt's default)");
            if (Mean == null || Mean.Length != 3) throw new ArgumentException("Mean must have 3 values", nameof(Mean));
            if (Std == null || Std.Length != 3) throw new ArgumentException("Std must have 3 values", nameof(Std));
            if (MinArea < 0 || CloseKernel < 0 || MaxPixels <= 0)
                throw new ArgumentOutOfRangeException(nameof(MinArea) + "/" + nameof(CloseKernel) + "/" + nameof(MaxPixels), "MinArea and CloseKernel must not be negative, MaxPixels must be positive");
            SegOptions o;
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
            return o;
        }
    }

    /// <summary>Severity of a <see cref="SegRuntime.Log"/> message (the C header's SegLogLevel).</summary>
    public enum LogLevel
    {
        /// <summary>A call failed (the same text as the SegException's NativeMessage).</summary>
        Error = 1,
        /// <summary>Something works differently than asked, e.g. a provider fallback.</summary>
        Warn = 2,
        /// <summary>Information: the ONNX Runtime loaded, the provider each session got.</summary>
        Info = 3,
    }

    /// <summary>One diagnostics message from segrt.</summary>
    public sealed class SegLogEventArgs : EventArgs
    {
        /// <summary>The message's severity.</summary>
        public LogLevel Level { get; private set; }

        /// <summary>segrt's text.</summary>
        public string Message { get; private set; }
        internal SegLogEventArgs(LogLevel level, string message) { Level = level; Message = message; }
    }

    /// <summary>Process-wide functions: versions, loading ONNX Runtime early, diagnostics.</summary>
    public static class SegRuntime
    {
        /// <summary>e.g. "segrt 0.1.0 (ABI 1); ONNX Runtime 1.31.1 loaded from C:\App\onnxruntime.dll".</summary>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static string Version
        {
            get
            {
                Interop.EnsureLoaded();
                unsafe
                {
                    int n = (int)NativeMethods.seg_version(null, UIntPtr.Zero);
                    var buf = new byte[n];
                    fixed (byte* p = buf)
                    {
                        NativeMethods.seg_version(p, (UIntPtr)n);
                        return Interop.FromUtf8z(p);
                    }
                }
            }
        }

        /// <summary>
        /// Every execution provider as JSON: whether the loaded onnxruntime build includes it and whether
        /// it initialises on this machine (a tiny session per provider), with ONNX Runtime's reason.
        /// </summary>
        /// <param name="deviceId">GPU index to probe GPU providers on.</param>
        /// <returns>segrt's JSON text.</returns>
        /// <exception cref="SegException">ONNX Runtime could not be loaded.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static string ProbeProvidersJson(int deviceId = 0)
        {
            Interop.EnsureLoaded();
            var options = new SegmenterOptions { DeviceId = deviceId };
            unsafe
            {
                SegOptions o = options.ToNative(null, null, null);
                UIntPtr needed;
                Interop.Check(NativeMethods.seg_providers(&o, null, UIntPtr.Zero, &needed));
                var buf = new byte[(int)needed];
                fixed (byte* p = buf)
                {
                    Interop.Check(NativeMethods.seg_providers(&o, p, (UIntPtr)buf.Length, &needed));
                    return Interop.FromUtf8z(p);
                }
            }
        }

        /// <summary>The C ABI version the loaded native library implements (this wrapper checks it on first use).</summary>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static int AbiVersion
        {
            get { Interop.EnsureLoaded(); return (int)NativeMethods.seg_abi_version(); }
        }

        /// <summary>
        /// Loads ONNX Runtime now (optional: creating a segmenter does it), so a missing or wrong
        /// onnxruntime library is reported at start-up. <paramref name="onnxRuntimePath"/>: absolute path,
        /// or null for the default search (beside segrt first).
        /// </summary>
        /// <param name="onnxRuntimePath">Absolute path of the ONNX Runtime library, or null.</param>
        /// <exception cref="SegException">RuntimeNotFound (every path tried) or RuntimeInitFailed; InvalidArgument for a relative path.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static void Initialize(string onnxRuntimePath = null)
        {
            Interop.EnsureLoaded();
            unsafe
            {
                fixed (byte* p = Interop.Utf8z(onnxRuntimePath))
                    Interop.Check(NativeMethods.seg_runtime_init(p));
            }
        }

        // One static delegate for the process lifetime: the native side keeps a pointer to its thunk,
        // so it must never be collected (FFI-NOTES: a collected thunk crashed Mono from a finalizer).
        static readonly unsafe NativeMethods.seg_set_log_callback_callback_delegate LogThunk = OnNativeLog;
        static readonly object LogGate = new object();
        static EventHandler<SegLogEventArgs> s_log;

        /// <summary>
        /// segrt's diagnostics: the ONNX Runtime it loaded, the execution provider each segmenter got,
        /// provider fallback reasons (Warn) and every failed call (Error). Raised synchronously on the
        /// thread making the segrt call (WinForms handlers must BeginInvoke to the UI thread). Exceptions
        /// thrown by handlers are swallowed: they must not unwind into native code.
        /// </summary>
        public static event EventHandler<SegLogEventArgs> Log
        {
            add
            {
                lock (LogGate)
                {
                    bool first = s_log == null;
                    s_log += value;
                    if (first)
                    {
                        Interop.EnsureLoaded();
                        unsafe { Interop.Check(NativeMethods.seg_set_log_callback(LogThunk, null)); }
                    }
                }
            }
            remove
            {
                lock (LogGate)
                {
                    s_log -= value;
                    if (s_log == null)
                        unsafe { Interop.Check(NativeMethods.seg_set_log_callback(null, null)); }
                }
            }
        }

        static unsafe void OnNativeLog(int level, byte* message, void* userData)
        {
            try
            {
                var handlers = s_log;
                if (handlers != null) handlers(null, new SegLogEventArgs((LogLevel)level, Interop.FromUtf8z(message)));
            }
            catch (Exception)
            {
                // A handler's exception must not cross into segrt's native frames.
            }
        }
    }
}
