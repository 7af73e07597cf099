using System;
using System.Collections.Generic;
using System.Drawing;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// A SAM2 image encoder + prompt decoder pair, stateless: each call passes the image and its prompts, and
    /// nothing of one call is kept for the next but the native cache of the last image encoded (the encoder
    /// runs again only when the pixels differ from it). For interactive use, clicks that accumulate on one image
    /// with the previous mask refined, make a <see cref="Sam2Annotator"/> with <see cref="CreateAnnotator"/>.
    /// Thread-safe: any number of threads may call it at once; they share a pool of encoder and of decoder
    /// sessions (<see cref="SegmenterOptions.MaxSessions"/>). Threads refining their own objects keep their own
    /// previous result and pass its <see cref="Sam2Result.LowResLogits"/> as <c>previousLowRes</c>, so callers
    /// never mix. See <see cref="Segmenter"/> for Dispose, session info and the provider in use.
    /// </summary>
    /// <remarks>
    /// <para>
    /// Encoding ahead: the encoder is the slow part (seconds on a CPU), so a host starts it as soon as it shows an
    /// image, on a thread of its own, and segments on the same image with <c>image</c> null (or the same pixels)
    /// when the user clicks. A click made during the encode waits only for the rest of it; opening the next image
    /// cancels the older encode (its <see cref="SetImage"/> throws <see cref="OperationCanceledException"/>):
    /// </para>
    /// <code>
    /// pictureBox.Image = bitmap;                                   // show the image at once
    /// encodeCts?.Cancel();                                         // optional: a newer SetImage cancels it anyway
    /// encodeCts = new CancellationTokenSource();
    /// var encoding = Task.Run(() =&gt; segmenter.SetImage(bitmap, encodeCts.Token, progress));
    /// // ... later, on a click (also during the encode: it waits for it, it does not encode again):
    /// Sam2Result r = await Task.Run(() =&gt; segmenter.Segment(null, new[] { new Sam2Point(x, y, true) }));
    /// </code>
    /// <para>
    /// The pixels given to <see cref="SetImage"/> must stay unchanged until it returns. The methods here are
    /// synchronous and block the calling thread; a caller who wants a background thread wraps them in
    /// <c>Task.Run</c>, passing its token and progress: cancellation then stops the native call in the middle.
    /// </para>
    /// </remarks>
    public sealed class Sam2Segmenter : Segmenter
    {
        // What segrt calls "the image set last", as far as this wrapper saw it, for the size of the outputs of a
        // call with image null: the size of the image whose encode finished last, and of the one whose SetImage is
        // encoding now (its id, to tell a finished SetImage whether it is still the latest).
        readonly object _imageGate = new object();
        Size _encodedSize;
        Size? _encodingSize;
        long _encodingId;

        /// <summary>Loads a SAM2 image encoder and prompt decoder from .onnx files (any paths).</summary>
        /// <param name="encoderPath">The image encoder's .onnx file.</param>
        /// <param name="decoderPath">The prompt decoder's .onnx file.</param>
        /// <param name="options">Session options; null for segrt's defaults.</param>
        /// <exception cref="ArgumentNullException"><paramref name="encoderPath"/> or <paramref name="decoderPath"/> is null.</exception>
        /// <exception cref="ArgumentException">An option is out of range before reaching segrt.</exception>
        /// <exception cref="SegrtException">segrt refused the pair (e.g. ModelUnsupported, with the inputs/outputs found) or the options.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public Sam2Segmenter(string encoderPath, string decoderPath, SegmenterOptions options = null)
            : base(Create(encoderPath, decoderPath, options), FileBytes(encoderPath) + FileBytes(decoderPath))
        {
        }

        Sam2Segmenter(SessionHandle handle, long modelBytes) : base(handle, modelBytes)
        {
        }

        /// <summary>Loads a SAM2 encoder and decoder from model bytes (e.g. embedded resources); the bytes are copied.</summary>
        /// <param name="encoder">The image encoder's .onnx bytes.</param>
        /// <param name="decoder">The prompt decoder's .onnx bytes.</param>
        /// <param name="options">Session options; null for segrt's defaults.</param>
        /// <returns>The new segmenter (the caller disposes it).</returns>
        /// <exception cref="ArgumentException"><paramref name="encoder"/> or <paramref name="decoder"/> is null or empty, or an option is out of range.</exception>
        /// <exception cref="SegrtException">segrt refused the pair or the options, or ONNX Runtime could not be loaded.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static Sam2Segmenter FromBytes(byte[] encoder, byte[] decoder, SegmenterOptions options = null)
        {
            if (encoder == null || encoder.Length == 0) throw new ArgumentException("encoder bytes are empty", nameof(encoder));
            if (decoder == null || decoder.Length == 0) throw new ArgumentException("decoder bytes are empty", nameof(decoder));
            Interop.EnsureLoaded();
            return new Sam2Segmenter(CreateFromMemory(encoder, decoder, options ?? new SegmenterOptions()), (long)encoder.Length + decoder.Length);
        }

        static unsafe SessionHandle CreateFromMemory(byte[] encoder, byte[] decoder, SegmenterOptions options)
        {
            fixed (byte* enc = encoder)
            fixed (byte* dec = decoder)
            fixed (byte* ort = Interop.Utf8z(options.OnnxRuntimePath))
            fixed (byte* output = Interop.Utf8z(options.OutputName))
            fixed (byte* cacheDir = Interop.Utf8z(options.CacheDirectory))
            fixed (byte* trtCacheDir = Interop.Utf8z(options.TensorRtCacheDirectory))
            fixed (byte* ovDevice = Interop.Utf8z(options.OpenVinoDevice))
            fixed (byte* ovCacheDir = Interop.Utf8z(options.OpenVinoCacheDirectory))
            {
                SegOptions o = options.ToNative(ort, output, cacheDir, trtCacheDir, ovDevice, ovCacheDir);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create_sam2_from_memory(enc, (UIntPtr)encoder.Length, dec, (UIntPtr)decoder.Length, &o, &session));
                return new SessionHandle(session);
            }
        }

        static long FileBytes(string path)
        {
            try
            {
                return new System.IO.FileInfo(path).Length;
            }
            catch (Exception)
            {
                return 0; // segrt read it; only the memory hint is at stake
            }
        }

        static unsafe SessionHandle Create(string encoderPath, string decoderPath, SegmenterOptions options)
        {
            if (encoderPath == null) throw new ArgumentNullException(nameof(encoderPath));
            if (decoderPath == null) throw new ArgumentNullException(nameof(decoderPath));
            Interop.EnsureLoaded();
            options = options ?? new SegmenterOptions();
            fixed (byte* enc = Interop.Utf8z(encoderPath))
            fixed (byte* dec = Interop.Utf8z(decoderPath))
            fixed (byte* ort = Interop.Utf8z(options.OnnxRuntimePath))
            fixed (byte* output = Interop.Utf8z(options.OutputName))
            fixed (byte* cacheDir = Interop.Utf8z(options.CacheDirectory))
            fixed (byte* trtCacheDir = Interop.Utf8z(options.TensorRtCacheDirectory))
            fixed (byte* ovDevice = Interop.Utf8z(options.OpenVinoDevice))
            fixed (byte* ovCacheDir = Interop.Utf8z(options.OpenVinoCacheDirectory))
            {
                SegOptions o = options.ToNative(ort, output, cacheDir, trtCacheDir, ovDevice, ovCacheDir);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create_sam2(enc, dec, &o, &session));
                return new SessionHandle(session);
            }
        }

        /// <summary>
        /// Size of the decoder's low-resolution logits (<see cref="Sam2Result.LowResLogits"/>, and what a
        /// <c>previousLowRes</c> argument must hold: Width x Height floats); empty when segrt did not report it.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public Size LowResSize
        {
            get
            {
                ThrowIfDisposed();
                return FirstInfo.LowResSize ?? Size.Empty;
            }
        }

        /// <summary>
        /// A new, empty <see cref="Sam2Annotator"/> on this pair: the stateful click API (one image, the points and
        /// box clicked on it, the previous mask). Each annotator keeps its own state; any number may share one segmenter.
        /// </summary>
        /// <returns>The annotator (nothing to dispose: it holds managed state only, and this segmenter's handle).</returns>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public Sam2Annotator CreateAnnotator()
        {
            ThrowIfDisposed();
            return new Sam2Annotator(this);
        }

        /// <summary>
        /// Encodes <paramref name="image"/> now, so that later calls on it (<see cref="Segment"/> with
        /// <c>image</c> null or the same pixels, clicks of an annotator on it) run only the decoder. Does nothing
        /// when the same pixels are already encoded. From the moment this call starts, its image is "the image set
        /// last" of this segmenter: a <see cref="Segment"/> or <see cref="SegmentEverything"/> on it made meanwhile
        /// on another thread waits for this encode instead of running its own, and a newer SetImage (or
        /// <see cref="ForgetImage"/>) cancels this one. Call it on a thread of your own (see the remarks of
        /// <see cref="Sam2Segmenter"/>): it blocks for the whole encode.
        /// </summary>
        /// <param name="image">The pixels (a Bitmap converts implicitly); read during the call: keep them unchanged until it returns.</param>
        /// <param name="cancellationToken">Cancels the encode, also while it runs; the image encoded before stays cached (and is the image set last again).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> reports; null for none.</param>
        /// <returns>The time spent encoding (pre-processing + encoder) in ms; 0 when no encoder ran in this call (the pixels were cached, or another call was encoding them and this one waited).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled, or a newer image was set on this segmenter (or it was reset) before this encode finished; the segmenter stays usable.</exception>
        /// <exception cref="SegrtException">segrt refused the image (e.g. over MaxPixels) or the encoder failed.</exception>
        public double SetImage(InputImage image, CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            cancellationToken.ThrowIfCancellationRequested();
            using (var pixels = image.Lock())
                return Encode(pixels, cancellationToken, progress);
        }

        /// <summary>
        /// Forgets the cached image embedding and cancels an encode in flight (its <see cref="SetImage"/> throws
        /// <see cref="OperationCanceledException"/>); the next call with an image encodes it again.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegrtException">segrt failed to reset the session.</exception>
        public unsafe void ForgetImage()
        {
            using (var lease = Acquire())
            {
                lock (_imageGate)
                {
                    _encodedSize = Size.Empty;
                    _encodingSize = null;
                    _encodingId++;
                }
                Interop.Check(NativeMethods.seg_sam2_reset(lease.Session));
            }
        }

        /// <summary>
        /// Segments the object that the prompts point at in <paramref name="image"/> (the encoder runs only when the
        /// pixels differ from the cached image) or, with <paramref name="image"/> null, in the image set last with
        /// <see cref="SetImage"/> (waiting for its encode when it is still running), and, when given, refines the
        /// caller's previous result on the same image: its <see cref="Sam2Result.LowResLogits"/>, which each caller
        /// keeps for itself.
        /// </summary>
        /// <param name="image">
        /// The pixels (a Bitmap converts implicitly), read only during the call; or null for the image set last on
        /// this segmenter (by SetImage, or by the last call that encoded an image: with several callers on one
        /// segmenter, pass the image).
        /// </param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <param name="previousLowRes">Null (no refinement), or the <see cref="Sam2Result.LowResLogits"/> of an earlier call on the same image.</param>
        /// <param name="maskBuffer">Null, or at least width x height bytes receiving the mask.</param>
        /// <param name="cancellationToken">Cancels the call, also while the encoder or the decoder runs, or while it waits for another call's encode.</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> reports when the encoder runs in this call; null for none.</param>
        /// <returns>The object's mask at the image's size (<paramref name="maskBuffer"/> when given), with its own <see cref="Sam2Result.LowResLogits"/> for the next step.</returns>
        /// <exception cref="ArgumentException">Neither a point nor a box is given, a mask buffer too small, or <paramref name="previousLowRes"/> does not have <see cref="LowResSize"/> floats.</exception>
        /// <exception cref="InvalidOperationException"><paramref name="image"/> is null and no image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled, or the encode this call waited for was cancelled by a newer image (the segmenter stays usable).</exception>
        /// <exception cref="SegrtException">segrt refused a prompt or the image, or a model failed.</exception>
        public Sam2Result Segment(InputImage image, IList<Sam2Point> points, RectangleF? box = null, float[] previousLowRes = null, byte[] maskBuffer = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (image == null) return Run(null, points, box, previousLowRes, maskBuffer, null, cancellationToken, progress);
            using (var pixels = image.Lock())
                return Run(pixels, points, box, previousLowRes, maskBuffer, null, cancellationToken, progress);
        }

        /// <summary>
        /// Many objects in one call (e.g. the boxes a detector found): one mask per prompt, each equal to what
        /// <see cref="Segment"/> gives for that prompt alone. The encoder runs once (only when the pixels differ from
        /// the cached image); the decoder runs once for all prompts with the same number of points where the decoder
        /// export has a prompt batch axis (a box counts as two points), in chunks bounded by
        /// <see cref="SegmenterOptions"/>' memory budget, and prompt by prompt where it has not.
        /// </summary>
        /// <param name="image">The pixels (a Bitmap converts implicitly), read only during the call; or null for the image set last (see <see cref="Segment"/>).</param>
        /// <param name="prompts">1 to 4096 prompts, each with at least one point or a box.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs (between decoder runs, or by terminating a model run).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> reports when the encoder runs, then <see cref="ProgressStage.Prompts"/> (the fraction of decoder runs done, ending at 1); null for none.</param>
        /// <returns>The masks and scores in the prompts' order, and the decoder runs made.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="prompts"/> or one of its elements is null.</exception>
        /// <exception cref="ArgumentException">No prompts, more than 4096, or a prompt with neither a point nor a box.</exception>
        /// <exception cref="InvalidOperationException"><paramref name="image"/> is null and no image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled, or the encode this call waited for was cancelled by a newer image (the segmenter stays usable).</exception>
        /// <exception cref="SegrtException">segrt refused a prompt (InvalidArgument, naming it: a box with x2 &lt;= x1, a point outside the image, ...) or the image, or a model failed.</exception>
        public Sam2PromptsResult SegmentPrompts(InputImage image, IReadOnlyList<Sam2Prompt> prompts,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (prompts == null) throw new ArgumentNullException(nameof(prompts));
            if (prompts.Count == 0) throw new ArgumentException("give at least one prompt", nameof(prompts));
            if (prompts.Count > MaxPrompts) throw new ArgumentException(prompts.Count + " prompts: at most " + MaxPrompts + " are segmented in one call", nameof(prompts));
            for (int i = 0; i < prompts.Count; i++)
            {
                if (prompts[i] == null) throw new ArgumentNullException(nameof(prompts), "prompt " + i + " is null");
                if (prompts[i].Points.Count == 0 && !prompts[i].Box.HasValue) throw new ArgumentException("prompt " + i + ": give at least one point or a box", nameof(prompts));
            }
            cancellationToken.ThrowIfCancellationRequested();
            if (image == null) return RunPrompts(null, prompts, cancellationToken, progress);
            using (var pixels = image.Lock())
                return RunPrompts(pixels, prompts, cancellationToken, progress);
        }

        /// <summary>The most prompts <see cref="SegmentPrompts"/> takes in one call.</summary>
        public const int MaxPrompts = 4096;

        /// <summary>
        /// Every object in <paramref name="image"/>, as SAM2's automatic mask generator finds them (a grid of
        /// prompts, predicted-IoU and stability filters, box NMS). The encoder runs only when the pixels differ
        /// from the cached image.
        /// </summary>
        /// <param name="image">The pixels (a Bitmap converts implicitly), read only during the call; or null for the image set last (see <see cref="Segment"/>).</param>
        /// <param name="options">The options; null for the defaults.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs (between chunks of prompts, or by terminating a model run).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> then <see cref="ProgressStage.Prompts"/> reports; null for none.</param>
        /// <returns>The label image and the objects.</returns>
        /// <exception cref="InvalidOperationException"><paramref name="image"/> is null and no image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled, or the encode this call waited for was cancelled by a newer image (the segmenter stays usable).</exception>
        /// <exception cref="SegrtException">segrt refused an option (InvalidArgument, naming it) or a model failed.</exception>
        public EverythingResult SegmentEverything(InputImage image, EverythingOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            SegEverythingOptions o = (options ?? new EverythingOptions()).ToNative();
            cancellationToken.ThrowIfCancellationRequested();
            if (image == null) return Everything(null, o, cancellationToken, progress);
            using (var pixels = image.Lock())
                return Everything(pixels, o, cancellationToken, progress);
        }

        /// <summary>
        /// Encodes the image (seg_sam2_set_image: skipped when the pixels are cached); returns the encoder time in ms.
        /// Its size is the image set last from now on, until a newer one, a reset, or its failure.
        /// </summary>
        internal unsafe double Encode(LockedImage input, CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            double ms = 0;
            using (var lease = Acquire())
            using (var control = CallControl.Begin(cancellationToken, progress))
            {
                var size = new Size(input.Width, input.Height);
                long id;
                lock (_imageGate)
                {
                    id = ++_encodingId;
                    _encodingSize = size;
                }
                SegImage desc = input.Desc;
                SegStatus status = NativeMethods.seg_sam2_set_image(lease.Session, &desc, &ms, CallControl.NativeOf(control));
                lock (_imageGate)
                {
                    if (_encodingId == id)
                    {
                        // Still the latest: segrt installed it (or, failing, kept the image encoded before).
                        if (status == SegStatus.SEG_OK) _encodedSize = size;
                        _encodingSize = null;
                    }
                }
                CallControl.Check(control, status);
            }
            return ms;
        }

        /// <summary>A call with an image ran the encoder on it: segrt installed that image as the cached one.</summary>
        void NoteEncoded(Size size)
        {
            lock (_imageGate)
            {
                if (!_encodingSize.HasValue) _encodedSize = size;
            }
        }

        /// <summary>The size of the image set last (being encoded, or the one encoded last), for a call with image null.</summary>
        Size ImageSetLastSize()
        {
            Size size;
            lock (_imageGate)
                size = _encodingSize ?? _encodedSize;
            if (size.IsEmpty) throw new InvalidOperationException("no image: call SetImage first, or pass the image");
            return size;
        }

        /// <summary>
        /// One seg_run_sam2_points call. The previous mask always travels as the call's mask_input argument (never
        /// SEG_SAM2_REFINE, which is the native session's last result, shared by every caller). With
        /// <paramref name="lowResOut"/> the low-res logits are written there and the result's LowResLogits is left
        /// null for the caller to set.
        /// </summary>
        internal unsafe Sam2Result Run(LockedImage input, IList<Sam2Point> points, RectangleF? box, float[] previousLowRes, byte[] maskBuffer, float[] lowResOut = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            int n = points == null ? 0 : points.Count;
            if (n == 0 && !box.HasValue) throw new ArgumentException("give at least one point or a box", nameof(points));
            Size lowResSize = LowResSize;
            int lowResLength = lowResSize.Width * lowResSize.Height;
            if (previousLowRes != null && previousLowRes.Length != lowResLength)
                throw new ArgumentException("previousLowRes has " + previousLowRes.Length + " floats but this decoder's low-res logits are " +
                    lowResSize.Width + "x" + lowResSize.Height + " = " + lowResLength + ": pass a Sam2Result.LowResLogits of this segmenter", nameof(previousLowRes));
            bool ownsLowRes = lowResOut == null;
            if (lowResOut == null && lowResLength > 0) lowResOut = new float[lowResLength];
            Size size = input != null ? new Size(input.Width, input.Height) : ImageSetLastSize();
            int w = size.Width, h = size.Height;
            long pixels = (long)w * h;
            if (maskBuffer != null && maskBuffer.LongLength < pixels)
                throw new ArgumentException("the mask buffer has " + maskBuffer.LongLength + " bytes but a " + w + "x" + h + " mask needs " + pixels, nameof(maskBuffer));
            SegPoint[] native = NativePrompts.Points(points);
            SegBox nativeBox = NativePrompts.Box(box);
            var mask = maskBuffer ?? new byte[pixels];
            float score = 0;
            SegSam2Result extra = default(SegSam2Result);
            extra.struct_size = (uint)sizeof(SegSam2Result);
            using (var lease = Acquire())
            using (var control = CallControl.Begin(cancellationToken, progress))
            fixed (byte* m = mask)
            fixed (SegPoint* p = native)
            fixed (float* lowResIn = previousLowRes)
            fixed (float* lowRes = lowResOut)
            {
                extra.low_res_logits = lowRes;
                extra.low_res_len = (UIntPtr)(lowResOut != null ? lowResOut.Length : 0);
                SegImage desc = input != null ? input.Desc : default(SegImage);
                SegMask outMask = default(SegMask);
                outMask.data = m;
                outMask.width = w;
                outMask.height = h;
                CallControl.Check(control, NativeMethods.seg_run_sam2_points(lease.Session, input != null ? &desc : null,
                    n > 0 ? p : null, (UIntPtr)n, box.HasValue ? &nativeBox : null,
                    lowResIn, (UIntPtr)(previousLowRes != null ? previousLowRes.Length : 0), 0, &outMask, &score, &extra, CallControl.NativeOf(control)));
            }
            if (input != null && extra.encoder_reused == 0) NoteEncoded(size);
            var scores = new float[Math.Max(0, Math.Min(extra.num_masks, 4))];
            for (int i = 0; i < scores.Length; i++) scores[i] = extra.scores[i];
            long foreground = 0;
            for (long i = 0; i < pixels; i++) if (mask[i] != 0) foreground++;
            return new Sam2Result
            {
                Width = w,
                Height = h,
                Mask = mask,
                Score = score,
                Scores = scores,
                ChosenIndex = extra.chosen_index,
                EncoderReused = extra.encoder_reused != 0,
                EncoderMs = extra.encoder_ms,
                DecoderMs = extra.decoder_ms,
                PostprocessMs = extra.postprocess_ms,
                ForegroundPixels = foreground,
                LowResLogits = ownsLowRes ? lowResOut : null,
                LowResWidth = lowResOut != null ? extra.low_res_width : 0,
                LowResHeight = lowResOut != null ? extra.low_res_height : 0,
            };
        }

        /// <summary>
        /// seg_sam2_segment_prompts (image null: the image set last): every mask and points array pinned for the call.
        /// </summary>
        unsafe Sam2PromptsResult RunPrompts(LockedImage input, IReadOnlyList<Sam2Prompt> prompts, CancellationToken cancellationToken, IProgress<SegrtProgress> progress)
        {
            Size size = input != null ? new Size(input.Width, input.Height) : ImageSetLastSize();
            int w = size.Width, h = size.Height, n = prompts.Count;
            var masks = new byte[n][];
            var pins = new List<GCHandle>(2 * n);
            var records = new SegSam2Prompt[n];
            var descs = new SegMask[n];
            var scores = new float[n];
            var info = new SegSam2PromptsInfo { struct_size = (uint)sizeof(SegSam2PromptsInfo) };
            try
            {
                for (int i = 0; i < n; i++)
                {
                    masks[i] = new byte[(long)w * h];
                    var mask = GCHandle.Alloc(masks[i], GCHandleType.Pinned);
                    pins.Add(mask);
                    descs[i] = new SegMask { data = (byte*)mask.AddrOfPinnedObject(), width = w, height = h, stride = 0 };
                    int count = prompts[i].Points.Count;
                    if (count > 0)
                    {
                        var points = GCHandle.Alloc(NativePrompts.Points(new List<Sam2Point>(prompts[i].Points)), GCHandleType.Pinned);
                        pins.Add(points);
                        records[i].points = (SegPoint*)points.AddrOfPinnedObject();
                    }
                    records[i].n_points = (UIntPtr)count;
                    records[i].bbox = NativePrompts.Box(prompts[i].Box);
                    records[i].has_box = prompts[i].Box.HasValue ? 1u : 0u;
                }
                using (var lease = Acquire())
                using (var control = CallControl.Begin(cancellationToken, progress))
                fixed (SegSam2Prompt* p = records)
                fixed (SegMask* m = descs)
                fixed (float* s = scores)
                {
                    SegImage desc = input != null ? input.Desc : default(SegImage);
                    CallControl.Check(control, NativeMethods.seg_sam2_segment_prompts(lease.Session, input != null ? &desc : null, p,
                        (UIntPtr)sizeof(SegSam2Prompt), (UIntPtr)n, m, s, &info, CallControl.NativeOf(control)));
                }
            }
            finally
            {
                foreach (var pin in pins) pin.Free();
            }
            if (input != null && info.encoder_reused == 0) NoteEncoded(size);
            return new Sam2PromptsResult
            {
                Width = w,
                Height = h,
                Masks = masks,
                Scores = scores,
                DecoderRuns = (int)info.decoder_runs,
                Batch = (int)info.batch,
                Batched = info.batched != 0,
                EncoderReused = info.encoder_reused != 0,
                EncoderMs = info.encoder_ms,
                DecoderMs = info.decoder_ms,
                PostprocessMs = info.postprocess_ms,
            };
        }

        /// <summary>
        /// seg_sam2_everything (image null: the image set last): the size query runs everything; the call with
        /// buffers is served by the native session's last result.
        /// </summary>
        unsafe EverythingResult Everything(LockedImage image, SegEverythingOptions o, CancellationToken cancellationToken, IProgress<SegrtProgress> progress)
        {
            Size size = image != null ? new Size(image.Width, image.Height) : ImageSetLastSize();
            int w = size.Width, h = size.Height;
            var result = new EverythingResult { Width = w, Height = h, Labels = new ushort[(long)w * h] };
            using (var lease = Acquire())
            using (var control = CallControl.Begin(cancellationToken, progress))
            {
                SegImage d = image != null ? image.Desc : default(SegImage);
                SegImage* desc = image != null ? &d : null;
                UIntPtr n;
                var first = new SegEverythingInfo { struct_size = (uint)sizeof(SegEverythingInfo) };
                CallControl.Check(control, NativeMethods.seg_sam2_everything(lease.Session, desc, &o, null, null, (UIntPtr)sizeof(SegEverythingObject), UIntPtr.Zero, &n, &first, CallControl.NativeOf(control)));
                var records = new SegEverythingObject[Math.Max((int)n, 1)];
                var info = new SegEverythingInfo { struct_size = (uint)sizeof(SegEverythingInfo) };
                fixed (ushort* labels = result.Labels)
                fixed (SegEverythingObject* recs = records)
                {
                    var l = new SegLabelImage { data = labels, width = w, height = h, stride = 0 };
                    CallControl.Check(control, NativeMethods.seg_sam2_everything(lease.Session, desc, &o, &l, recs, (UIntPtr)sizeof(SegEverythingObject), n, &n, &info, CallControl.NativeOf(control)));
                }
                var objects = new List<EverythingObject>((int)n);
                for (int i = 0; i < (int)n; i++)
                {
                    var r = records[i];
                    objects.Add(new EverythingObject((int)r.id, Rectangle.FromLTRB(r.x0, r.y0, r.x1 + 1, r.y1 + 1), (long)r.area,
                        r.predicted_iou, r.stability_score, new PointF(r.point_x, r.point_y)));
                }
                result.Objects = objects;
                result.Prompts = (int)first.prompts;
                result.DecoderRuns = (int)first.decoder_runs;
                result.EncoderReused = first.encoder_reused != 0;
                if (image != null && !result.EncoderReused) NoteEncoded(size);
                result.EncoderMs = first.encoder_ms;
                result.DecoderMs = first.decoder_ms;
                result.PostprocessMs = first.postprocess_ms;
            }
            return result;
        }
    }
}
