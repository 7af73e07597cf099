// segrt .NET wrapper: UNet semantic segmentation.
using System;
using System.Drawing;
using System.Text.RegularExpressions;
using Segrt.Native;

namespace Segrt
{
    /// <summary>One UNet run: the mask at the image's own size, plus what segrt measured.</summary>
    public sealed class UnetResult
    {
        public int Width { get; internal set; }
        public int Height { get; internal set; }
        /// <summary>Row-major, Width x Height bytes: 0/255 for binary models, the class index for multi-class ones.</summary>
        public byte[] Mask { get; internal set; }
        /// <summary>Foreground (multi-class: chosen class) probability per pixel, when asked for; else null.</summary>
        public float[] Probability { get; internal set; }
        /// <summary>1 for binary models, else the number of classes.</summary>
        public int NumClasses { get; internal set; }
        /// <summary>The threshold applied (Otsu's value in Otsu mode); NaN for multi-class models.</summary>
        public float Threshold { get; internal set; }
        public int ModelWidth { get; internal set; }
        public int ModelHeight { get; internal set; }
        public double PreprocessMs { get; internal set; }
        public double InferenceMs { get; internal set; }
        public double PostprocessMs { get; internal set; }
        /// <summary>Wall time of the whole call as seen from .NET (stages + the P/Invoke boundary).</summary>
        public double TotalMs { get; internal set; }
        public long ForegroundPixels { get; internal set; }
        /// <summary>Tiles the image was cut into (0 when the whole image was resized).</summary>
        public int Tiles { get; internal set; }

        /// <summary>The mask as an 8bpp gray Bitmap (the caller disposes it).</summary>
        public Bitmap ToBitmap()
        {
            return MaskBitmap.FromMask(Mask, Width, Height);
        }
    }

    /// <summary>
    /// A UNet segmentation model. Thread-safe: any number of threads may call Segment on one instance
    /// at once (segrt gives each calling thread its own ONNX Runtime session). Dispose releases the
    /// native session; a call running on another thread finishes first.
    /// </summary>
    public sealed unsafe class UnetSegmenter : IDisposable
    {
        readonly SessionHandle _handle;

        /// <summary>Loads an ONNX UNet (any path, e.g. with Chinese folder names).</summary>
        public UnetSegmenter(string modelPath, SegmenterOptions options = null)
        {
            if (modelPath == null) throw new ArgumentNullException("modelPath");
            Interop.EnsureLoaded();
            options = options ?? new SegmenterOptions();
            fixed (byte* path = Interop.Utf8z(modelPath))
            fixed (byte* ort = Interop.Utf8z(options.OnnxRuntimePath))
            {
                SegOptions o = options.ToNative(ort);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create(path, &o, &session));
                _handle = new SessionHandle(session);
            }
        }

        UnetSegmenter(SessionHandle handle)
        {
            _handle = handle;
        }

        /// <summary>Loads a UNet from model bytes (e.g. an embedded resource); the bytes are copied.</summary>
        public static UnetSegmenter FromBytes(byte[] model, SegmenterOptions options = null)
        {
            if (model == null || model.Length == 0) throw new ArgumentException("model bytes are empty", "model");
            Interop.EnsureLoaded();
            options = options ?? new SegmenterOptions();
            fixed (byte* data = model)
            fixed (byte* ort = Interop.Utf8z(options.OnnxRuntimePath))
            {
                SegOptions o = options.ToNative(ort);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create_from_memory(data, (UIntPtr)model.Length, &o, &session));
                return new UnetSegmenter(new SessionHandle(session));
            }
        }

        /// <summary>Segments a Bitmap (24bpp, 32bpp and 8bpp gray are read in place; other formats are converted once).</summary>
        public UnetResult Segment(Bitmap image, bool withProbability = false)
        {
            using (var input = ImageInput.FromBitmap(image))
                return Run(input, withProbability);
        }

        /// <summary>
        /// Segments raw pixels. <paramref name="stride"/>: bytes per row (0 = packed); negative for a
        /// bottom-up buffer whose top row is the last one in the array.
        /// </summary>
        public UnetResult Segment(byte[] pixels, int width, int height, int stride, SegPixelFormat format, bool withProbability = false)
        {
            using (var input = ImageInput.FromBytes(pixels, width, height, stride, format))
                return Run(input, withProbability);
        }

        /// <summary>Segments unmanaged pixels; <paramref name="topRow"/> points at the first byte of the top row.</summary>
        public UnetResult Segment(IntPtr topRow, int width, int height, int stride, SegPixelFormat format, bool withProbability = false)
        {
            using (var input = ImageInput.FromPointer(topRow, width, height, stride, format))
                return Run(input, withProbability);
        }

        UnetResult Run(ImageInput input, bool withProbability)
        {
            var clock = System.Diagnostics.Stopwatch.StartNew();
            int w = input.Width, h = input.Height;
            var mask = new byte[(long)w * h];
            float[] probability = withProbability ? new float[(long)w * h] : null;
            SegRunInfo info = default(SegRunInfo);
            info.struct_size = (uint)sizeof(SegRunInfo);
            using (var lease = _handle.Acquire(this))
            fixed (byte* m = mask)
            fixed (float* p = probability)
            {
                SegImage desc = input.Desc;
                SegMask outMask = default(SegMask);
                outMask.data = m;
                outMask.width = w;
                outMask.height = h;
                Interop.Check(NativeMethods.seg_run_unet(lease.Session, &desc, &outMask, p,
                    (UIntPtr)(probability == null ? 0 : probability.Length), &info));
            }
            return new UnetResult
            {
                Width = w,
                Height = h,
                Mask = mask,
                Probability = probability,
                NumClasses = info.num_classes,
                Threshold = info.threshold,
                ModelWidth = info.model_width,
                ModelHeight = info.model_height,
                PreprocessMs = info.preprocess_ms,
                InferenceMs = info.inference_ms,
                PostprocessMs = info.postprocess_ms,
                TotalMs = clock.Elapsed.TotalMilliseconds,
                ForegroundPixels = (long)info.foreground_pixels,
                Tiles = (int)info.tiles,
            };
        }

        /// <summary>The model's inputs/outputs, how segrt reads them, the provider in use and why, as JSON.</summary>
        public string SessionInfoJson
        {
            get
            {
                using (var lease = _handle.Acquire(this))
                    return SessionInfo.Read(lease.Session);
            }
        }

        /// <summary>The execution provider actually running the model, e.g. "CPU" or "CUDA:0".</summary>
        public string ExecutionProvider
        {
            get { return SessionInfo.ProviderInUse(SessionInfoJson); }
        }

        public void Dispose()
        {
            _handle.Dispose();
        }
    }

    internal static unsafe class SessionInfo
    {
        internal static string Read(SegSession* session)
        {
            UIntPtr needed;
            Interop.Check(NativeMethods.seg_session_info(session, null, UIntPtr.Zero, &needed));
            var buf = new byte[(int)needed];
            fixed (byte* p = buf)
            {
                Interop.Check(NativeMethods.seg_session_info(session, p, (UIntPtr)buf.Length, &needed));
                return Interop.FromUtf8z(p);
            }
        }

        internal static string ProviderInUse(string json)
        {
            var m = Regex.Match(json, "\"in_use\"\\s*:\\s*\"([^\"]*)\"");
            return m.Success ? m.Groups[1].Value : "unknown";
        }
    }
}
