// segrt .NET wrapper: session options (the C header's SegOptions) and the runtime-wide functions.
using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>Execution providers; <see cref="SegRuntime.ProbeProvidersJson"/> says which work on this PC.</summary>
    public enum ExecutionProvider { Cpu = 0, Cuda = 1, TensorRT = 2, DirectML = 3, OpenVino = 4 }

    /// <summary>What happens when the requested execution provider cannot start.</summary>
    public enum ProviderPolicy
    {
        /// <summary>Creating the segmenter fails with ONNX Runtime's reason (SegStatus.ProviderUnavailable).</summary>
        Require = 0,
        /// <summary>Run on the CPU; the reason is in SessionInfoJson and the Log event.</summary>
        Fallback = 1,
    }

    public enum ResizeFilter { Nearest = 0, Bilinear = 1, Bicubic = 2, Lanczos3 = 3, BilinearNoAntialias = 4 }
    public enum ChannelOrder { Rgb = 0, Bgr = 1 }
    public enum SigmoidMode { Auto = 0, On = 1, Off = 2 }
    public enum ThresholdMode { Fixed = 0, Otsu = 1 }

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
        public ExecutionProvider Provider { get; set; } = ExecutionProvider.Cpu;
        /// <summary>GPU index for GPU providers.</summary>
        public int DeviceId { get; set; }
        public ProviderPolicy ProviderPolicy { get; set; } = ProviderPolicy.Require;
        /// <summary>ONNX Runtime intra-op threads per calling thread; 0 = one per physical core.</summary>
        public int IntraThreads { get; set; }
        /// <summary>Model input size for models with dynamic axes; 0 = the image size rounded to SizeMultiple.</summary>
        public int InputWidth { get; set; }
        public int InputHeight { get; set; }
        public int SizeMultiple { get; set; } = 32;
        public ResizeFilter ResizeFilter { get; set; } = ResizeFilter.Bilinear;
        /// <summary>Channel order the model was trained with (3-channel models).</summary>
        public ChannelOrder ChannelOrder { get; set; } = ChannelOrder.Rgb;
        /// <summary>Normalisation: (pixel * Scale - Mean[c]) / Std[c].</summary>
        public float Scale { get; set; } = 1f / 255f;
        public float[] Mean { get; set; } = { 0f, 0f, 0f };
        public float[] Std { get; set; } = { 1f, 1f, 1f };
        public SigmoidMode Sigmoid { get; set; } = SigmoidMode.Auto;
        public ThresholdMode ThresholdMode { get; set; } = ThresholdMode.Fixed;
        /// <summary>Threshold in [0, 1] for ThresholdMode.Fixed.</summary>
        public float Threshold { get; set; } = 0.5f;
        /// <summary>Remove foreground regions smaller than this many pixels (0 = off).</summary>
        public int MinArea { get; set; }
        /// <summary>Morphological closing with a k x k square (0 = off).</summary>
        public int CloseKernel { get; set; }
        public bool FillHoles { get; set; }
        /// <summary>Images with more pixels are refused before anything is allocated.</summary>
        public long MaxPixels { get; set; } = 100000000;
        /// <summary>Tiled inference for large images (small defects survive; see TileMode).</summary>
        public TileMode TileMode { get; set; } = TileMode.Off;
        /// <summary>Tile size for models with dynamic input size; 0 = InputWidth/Height, else 512. Fixed-size models use their own.</summary>
        public int TileWidth { get; set; }
        public int TileHeight { get; set; }
        /// <summary>Pixels shared by neighbouring tiles, where their scores are blended.</summary>
        public int TileOverlap { get; set; } = 64;
        /// <summary>Tiles per run when the model's batch axis is dynamic (1..64).</summary>
        public int TileBatch { get; set; } = 4;
        /// <summary>Absolute path of onnxruntime.dll / libonnxruntime.so; null = beside segrt.</summary>
        public string OnnxRuntimePath { get; set; }

        /// <summary>Writes these options over seg_options_default's (range checks are segrt's).</summary>
        internal unsafe SegOptions ToNative(byte* ortPath)
        {
            if (Mean == null || Mean.Length != 3) throw new ArgumentException("Mean must have 3 values", "Mean");
            if (Std == null || Std.Length != 3) throw new ArgumentException("Std must have 3 values", "Std");
            if (MinArea < 0 || CloseKernel < 0 || MaxPixels <= 0)
                throw new ArgumentOutOfRangeException("MinArea/CloseKernel/MaxPixels", "MinArea and CloseKernel must not be negative, MaxPixels must be positive");
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
            return o;
        }
    }

    public enum LogLevel { Error = 1, Warn = 2, Info = 3 }

    public sealed class SegLogEventArgs : EventArgs
    {
        public LogLevel Level { get; private set; }
        public string Message { get; private set; }
        internal SegLogEventArgs(LogLevel level, string message) { Level = level; Message = message; }
    }

    /// <summary>Process-wide functions: versions, loading ONNX Runtime early, diagnostics.</summary>
    public static unsafe class SegRuntime
    {
        /// <summary>e.g. "segrt 0.1.0 (ABI 1); ONNX Runtime 1.31.1 loaded from C:\App\onnxruntime.dll".</summary>
        public static string Version
        {
            get
            {
                Interop.EnsureLoaded();
                int n = (int)NativeMethods.seg_version(null, UIntPtr.Zero);
                var buf = new byte[n];
                fixed (byte* p = buf)
                {
                    NativeMethods.seg_version(p, (UIntPtr)n);
                    return Interop.FromUtf8z(p);
                }
            }
        }

        /// <summary>
        /// Every execution provider as JSON: whether the loaded onnxruntime build includes it and whether
        /// it initialises on this machine (a tiny session per provider), with ONNX Runtime's reason.
        /// </summary>
        public static string ProbeProvidersJson(int deviceId = 0)
        {
            Interop.EnsureLoaded();
            var options = new SegmenterOptions { DeviceId = deviceId };
            SegOptions o = options.ToNative(null);
            UIntPtr needed;
            Interop.Check(NativeMethods.seg_providers(&o, null, UIntPtr.Zero, &needed));
            var buf = new byte[(int)needed];
            fixed (byte* p = buf)
            {
                Interop.Check(NativeMethods.seg_providers(&o, p, (UIntPtr)buf.Length, &needed));
                return Interop.FromUtf8z(p);
            }
        }

        public static int AbiVersion
        {
            get { Interop.EnsureLoaded(); return (int)NativeMethods.seg_abi_version(); }
        }

        /// <summary>
        /// Loads ONNX Runtime now (optional: creating a segmenter does it), so a missing or wrong
        /// onnxruntime library is reported at start-up. <paramref name="onnxRuntimePath"/>: absolute path,
        /// or null for the default search (beside segrt first).
        /// </summary>
        public static void Initialize(string onnxRuntimePath = null)
        {
            Interop.EnsureLoaded();
            fixed (byte* p = Interop.Utf8z(onnxRuntimePath))
                Interop.Check(NativeMethods.seg_runtime_init(p));
        }

        // One static delegate for the process lifetime: the native side keeps a pointer to its thunk,
        // so it must never be collected (FFI-NOTES: a collected thunk crashed Mono from a finalizer).
        static readonly NativeMethods.seg_set_log_callback_callback_delegate LogThunk = OnNativeLog;
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
                        Interop.Check(NativeMethods.seg_set_log_callback(LogThunk, null));
                    }
                }
            }
            remove
            {
                lock (LogGate)
                {
                    s_log -= value;
                    if (s_log == null)
                        Interop.Check(NativeMethods.seg_set_log_callback(null, null));
                }
            }
        }

        static void OnNativeLog(int level, byte* message, void* userData)
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
