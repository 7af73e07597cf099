using System;
using System.Threading;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// A UNet segmentation model. Thread-safe: any number of threads may call Segment on one instance
    /// at once; they share its pool of ONNX Runtime sessions (<see cref="SegmenterOptions.MaxSessions"/>). See <see cref="Segmenter"/>
    /// for Dispose, session info and the provider in use.
    /// </summary>
    public sealed class UnetSegmenter : Segmenter
    {
        /// <summary>Loads an ONNX UNet from a file (any path, e.g. with Chinese folder names).</summary>
        /// <param name="modelPath">Path of the .onnx file.</param>
        /// <param name="options">Session options; null for segrt's defaults.</param>
        /// <exception cref="ArgumentNullException"><paramref name="modelPath"/> is null.</exception>
        /// <exception cref="ArgumentException">An option is out of range before reaching segrt (e.g. Mean without 3 values).</exception>
        /// <exception cref="SegrtException">segrt refused the model or the options, or ONNX Runtime could not be loaded.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        /// <exception cref="PlatformNotSupportedException">The process is 32-bit.</exception>
        public UnetSegmenter(string modelPath, SegmenterOptions options = null)
            : base(Create(modelPath, options), 0)
        {
        }

        UnetSegmenter(SessionHandle handle, long modelBytes) : base(handle, modelBytes)
        {
        }

        static unsafe SessionHandle Create(string modelPath, SegmenterOptions options)
        {
            if (modelPath == null) throw new ArgumentNullException(nameof(modelPath));
            Interop.EnsureLoaded();
            options = options ?? new SegmenterOptions();
            fixed (byte* path = Interop.Utf8z(modelPath))
            fixed (byte* ort = Interop.Utf8z(options.OnnxRuntimePath))
            fixed (byte* output = Interop.Utf8z(options.OutputName))
            fixed (byte* cacheDir = Interop.Utf8z(options.CacheDirectory))
            fixed (byte* trtCacheDir = Interop.Utf8z(options.TensorRtCacheDirectory))
            fixed (byte* ovDevice = Interop.Utf8z(options.OpenVinoDevice))
            fixed (byte* ovCacheDir = Interop.Utf8z(options.OpenVinoCacheDirectory))
            {
                SegOptions o = options.ToNative(ort, output, cacheDir, trtCacheDir, ovDevice, ovCacheDir);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create(path, &o, &session));
                return new SessionHandle(session);
            }
        }

        /// <summary>Loads a UNet from model bytes (e.g. an embedded resource); the bytes are copied.</summary>
        /// <param name="model">The .onnx file's bytes.</param>
        /// <param name="options">Session options; null for segrt's defaults.</param>
        /// <returns>The new segmenter (the caller disposes it).</returns>
        /// <exception cref="ArgumentException"><paramref name="model"/> is null or empty, or an option is out of range.</exception>
        /// <exception cref="SegrtException">segrt refused the model or the options, or ONNX Runtime could not be loaded.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static UnetSegmenter FromBytes(byte[] model, SegmenterOptions options = null)
        {
            if (model == null || model.Length == 0) throw new ArgumentException("model bytes are empty", nameof(model));
            Interop.EnsureLoaded();
            return new UnetSegmenter(CreateFromMemory(model, options ?? new SegmenterOptions()), model.Length);
        }

        static unsafe SessionHandle CreateFromMemory(byte[] model, SegmenterOptions options)
        {
            fixed (byte* data = model)
            fixed (byte* ort = Interop.Utf8z(options.OnnxRuntimePath))
            fixed (byte* output = Interop.Utf8z(options.OutputName))
            fixed (byte* cacheDir = Interop.Utf8z(options.CacheDirectory))
            fixed (byte* trtCacheDir = Interop.Utf8z(options.TensorRtCacheDirectory))
            fixed (byte* ovDevice = Interop.Utf8z(options.OpenVinoDevice))
            fixed (byte* ovCacheDir = Interop.Utf8z(options.OpenVinoCacheDirectory))
            {
                SegOptions o = options.ToNative(ort, output, cacheDir, trtCacheDir, ovDevice, ovCacheDir);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create_from_memory(data, (UIntPtr)model.Length, &o, &session));
                return new SessionHandle(session);
            }
        }

        /// <summary>Segments an image: the mask at the image's size, with the run's figures.</summary>
        /// <param name="image">The pixels (a Bitmap converts implicitly); read only during the call.</param>
        /// <param name="withProbability">Also return the per-pixel probability.</param>
        /// <param name="cancellationToken">Cancels the run, also while it runs (between tiles, or by terminating the model run).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Tiles"/> reports of a tiled run (<see cref="ProgressStage.Run"/> for one run); null for none.</param>
        /// <returns>The mask at the image's size, with timings.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled (the segmenter stays usable).</exception>
        /// <exception cref="SegrtException">segrt refused the image (e.g. over MaxPixels) or ONNX Runtime failed.</exception>
        public UnetResult Segment(InputImage image, bool withProbability = false,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            cancellationToken.ThrowIfCancellationRequested();
            using (var pixels = image.Lock())
                return Run(pixels, null, null, withProbability, cancellationToken, progress);
        }

        /// <summary>
        /// Segments an image into caller-owned buffers, so a video loop allocates no mask per frame.
        /// </summary>
        /// <param name="image">The pixels (a Bitmap converts implicitly); read only during the call.</param>
        /// <param name="maskBuffer">Receives the mask: at least width x height bytes, row-major.</param>
        /// <param name="probabilityBuffer">Null, or at least width x height floats receiving the probability.</param>
        /// <param name="cancellationToken">Cancels the run, also while it runs; the buffers are then left untouched.</param>
        /// <param name="progress">Receives progress reports (see <see cref="Segment(InputImage, bool, CancellationToken, IProgress{SegrtProgress})"/>); null for none.</param>
        /// <returns>The run's figures; its Mask and Probability are the buffers given.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> or <paramref name="maskBuffer"/> is null.</exception>
        /// <exception cref="ArgumentException">A buffer is smaller than width x height.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled (the segmenter stays usable).</exception>
        /// <exception cref="SegrtException">segrt refused the image or ONNX Runtime failed.</exception>
        public UnetResult Segment(InputImage image, byte[] maskBuffer, float[] probabilityBuffer = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            if (maskBuffer == null) throw new ArgumentNullException(nameof(maskBuffer));
            cancellationToken.ThrowIfCancellationRequested();
            using (var pixels = image.Lock())
                return Run(pixels, maskBuffer, probabilityBuffer, probabilityBuffer != null, cancellationToken, progress);
        }

        unsafe UnetResult Run(LockedImage input, byte[] maskBuffer, float[] probabilityBuffer, bool withProbability,
            CancellationToken cancellationToken, IProgress<SegrtProgress> progress)
        {
            var clock = System.Diagnostics.Stopwatch.StartNew();
            int w = input.Width, h = input.Height;
            long pixels = (long)w * h;
            if (maskBuffer != null && maskBuffer.LongLength < pixels)
                throw new ArgumentException("the mask buffer has " + maskBuffer.LongLength + " bytes but a " + w + "x" + h + " mask needs " + pixels, nameof(maskBuffer));
            if (probabilityBuffer != null && probabilityBuffer.LongLength < pixels)
                throw new ArgumentException("the probability buffer has " + probabilityBuffer.LongLength + " floats but a " + w + "x" + h + " image needs " + pixels, nameof(probabilityBuffer));
            var mask = maskBuffer ?? new byte[pixels];
            float[] probability = probabilityBuffer ?? (withProbability ? new float[pixels] : null);
            SegRunInfo info = default(SegRunInfo);
            info.struct_size = (uint)sizeof(SegRunInfo);
            using (var lease = Acquire())
            using (var control = CallControl.Begin(cancellationToken, progress))
            fixed (byte* m = mask)
            fixed (float* p = probability)
            {
                SegImage desc = input.Desc;
                SegMask outMask = default(SegMask);
                outMask.data = m;
                outMask.width = w;
                outMask.height = h;
                CallControl.Check(control, NativeMethods.seg_run_unet(lease.Session, &desc, &outMask, p,
                    (UIntPtr)(probability == null ? 0 : probability.Length), &info, CallControl.NativeOf(control)));
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
    }
}
