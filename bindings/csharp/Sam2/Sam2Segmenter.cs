// segrt .NET wrapper: SAM2 interactive segmentation (encode an image once, each click runs the decoder).
using System;
using System.Collections.Generic;
using System.Drawing;
using System.Threading;
using System.Threading.Tasks;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// A SAM2 encoder + decoder pair. SetImage encodes a picture once (do it off the UI thread: it is
    /// the slow part); Click/Box then run only the decoder, with every point clicked since the last
    /// <see cref="ClearPrompts"/>. A prompt segrt refuses (e.g. a click outside the image) is not kept.
    /// Thread-safe: the native session serves any number of threads (a pool of encoder and of decoder
    /// sessions, <see cref="SegmenterOptions.MaxSessions"/>); the clicked points, the box and the previous
    /// mask (for <see cref="RefineWithPreviousMask"/>) are this object's, kept under a lock. Threads working
    /// on their own objects or images should call the stateless Segment(image, points, box, previousLowRes),
    /// which passes the image, the prompts and the caller's own previous mask: nothing is shared between
    /// callers but the cached image embedding. Click and Box pass the image given to SetImage too (this object
    /// keeps a packed copy of it: width x height x bytes per pixel), so when another caller's Segment on another
    /// image replaced the cached embedding, the next click encodes again (EncoderReused false) instead of
    /// segmenting the other picture. See <see cref="Segmenter"/> for Dispose, session info and the
    /// provider in use.
    /// </summary>
    public sealed partial class Sam2Segmenter : Segmenter
    {
        readonly object _gate = new object();
        readonly List<Sam2Point> _points = new List<Sam2Point>();
        RectangleF? _box;
        int _imageWidth, _imageHeight;
        // The previous successful Click/Box's low-res logits (null after SetImage, ClearPrompts, ForgetImage)
        // and a second buffer the next call writes into; swapped only when that call succeeded.
        float[] _lowRes, _lowResNext;
        // A packed copy of the image given to SetImage: every Click/Box passes it, so the native cache holding
        // another caller's image by then costs a re-encode, never a mask of the wrong picture.
        byte[] _imagePixels;
        SegPixelFormat _imageFormat;

        /// <summary>Test hook: runs between the encoder and the decoder of <see cref="SegmentAsync(Bitmap, IList{Sam2Point}, RectangleF?, CancellationToken)"/>.</summary>
        internal Action AfterEncoderHook;

        /// <summary>Loads a SAM2 image encoder and prompt decoder from .onnx files (any paths).</summary>
        /// <param name="encoderPath">The image encoder's .onnx file.</param>
        /// <param name="decoderPath">The prompt decoder's .onnx file.</param>
        /// <param name="options">Session options; null for segrt's defaults.</param>
        /// <exception cref="ArgumentNullException"><paramref name="encoderPath"/> or <paramref name="decoderPath"/> is null.</exception>
        /// <exception cref="ArgumentException">An option is out of range before reaching segrt.</exception>
        /// <exception cref="SegException">segrt refused the pair (e.g. ModelUnsupported, with the inputs/outputs found) or the options.</exception>
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
        /// <exception cref="SegException">segrt refused the pair or the options, or ONNX Runtime could not be loaded.</exception>
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
            {
                SegOptions o = options.ToNative(ort, output, cacheDir);
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
            {
                SegOptions o = options.ToNative(ort, output, cacheDir);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create_sam2(enc, dec, &o, &session));
                return new SessionHandle(session);
            }
        }

        /// <summary>
        /// When true, each Click or Box after the first also feeds this segmenter's previous result (its
        /// low-resolution logits, kept with the points and cleared with them) to the decoder: SAM2's iterative
        /// refinement. Off by default: every click uses all points. The previous mask is this object's own,
        /// never the native session's last result, so stateless Segment calls from other threads do not
        /// change what a click refines.
        /// </summary>
        public bool RefineWithPreviousMask { get; set; }

        /// <summary>
        /// Size of the decoder's low-resolution logits (<see cref="Sam2Result.LowResLogits"/>, and what a
        /// <c>previousLowRes</c> argument must hold: Width x Height floats); empty when segrt did not report it.
        /// </summary>
        public Size LowResSize
        {
            get { return FirstInfo.LowResSize ?? Size.Empty; }
        }

        /// <summary>Size of the image given to SetImage (0 x 0 before, and after <see cref="ForgetImage"/>).</summary>
        public Size ImageSize
        {
            get { lock (_gate) return new Size(_imageWidth, _imageHeight); }
        }

        /// <summary>The points accepted since the last SetImage or <see cref="ClearPrompts"/> (a copy).</summary>
        public IList<Sam2Point> Points
        {
            get { lock (_gate) return _points.ToArray(); }
        }

        /// <summary>The box accepted since the last SetImage or <see cref="ClearPrompts"/>; null when none.</summary>
        public RectangleF? CurrentBox
        {
            get { lock (_gate) return _box; }
        }

        /// <summary>Encodes the image (skipped when the same pixels are already encoded) and clears the prompts.</summary>
        /// <param name="image">The picture; locked with LockBits for the call.</param>
        /// <returns>The encoder time in ms (0 when the cached embedding was used).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused the image or the encoder failed.</exception>
        public double SetImage(Bitmap image)
        {
            using (var input = ImageInput.FromBitmap(image))
                return SetImage(input);
        }

        /// <summary>Encodes raw pixels (skipped when already encoded) and clears the prompts.</summary>
        /// <param name="pixels">Rows of pixels; only read during the call.</param>
        /// <param name="width">Image width in pixels.</param>
        /// <param name="height">Image height in pixels.</param>
        /// <param name="stride">Bytes per row (0 = packed); negative for a bottom-up buffer whose top row is the last one in the array.</param>
        /// <param name="format">The pixel layout.</param>
        /// <returns>The encoder time in ms (0 when the cached embedding was used).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="pixels"/> is null.</exception>
        /// <exception cref="ArgumentException">The geometry does not fit the buffer.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive, or the format is unknown.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused the image or the encoder failed.</exception>
        public double SetImage(byte[] pixels, int width, int height, int stride, SegPixelFormat format)
        {
            using (var input = ImageInput.FromBytes(pixels, width, height, stride, format))
                return SetImage(input);
        }

        /// <summary>Encodes unmanaged pixels (skipped when already encoded) and clears the prompts.</summary>
        /// <param name="topRow">The first byte of the top row; only read during the call.</param>
        /// <param name="width">Image width in pixels.</param>
        /// <param name="height">Image height in pixels.</param>
        /// <param name="stride">Bytes from one row to the next (0 = packed); negative for bottom-up memory.</param>
        /// <param name="format">The pixel layout.</param>
        /// <returns>The encoder time in ms (0 when the cached embedding was used).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="topRow"/> is zero.</exception>
        /// <exception cref="ArgumentException">The stride is smaller than a row.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive, or the format is unknown.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused the image or the encoder failed.</exception>
        public double SetImage(IntPtr topRow, int width, int height, int stride, SegPixelFormat format)
        {
            using (var input = ImageInput.FromPointer(topRow, width, height, stride, format))
                return SetImage(input);
        }

        /// <summary>
        /// <see cref="SetImage(Bitmap)"/> on a thread-pool thread (the encoder is the slow part). Do not touch
        /// the Bitmap until the task completes.
        /// </summary>
        /// <param name="image">The picture.</param>
        /// <param name="cancellationToken">Cancels the call if the encoder has not started yet.</param>
        /// <returns>A task giving the encoder time in ms; cancelled when the token fired before the encoder started.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        public Task<double> SetImageAsync(Bitmap image, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            return Task.Run(() =>
            {
                cancellationToken.ThrowIfCancellationRequested();
                return SetImage(image);
            }, cancellationToken);
        }

        /// <summary><see cref="SetImage(byte[], int, int, int, SegPixelFormat)"/> on a thread-pool thread.</summary>
        /// <param name="pixels">Rows of pixels; not to be changed until the task completes.</param>
        /// <param name="width">Image width in pixels.</param>
        /// <param name="height">Image height in pixels.</param>
        /// <param name="stride">Bytes per row (0 = packed); negative for a bottom-up buffer.</param>
        /// <param name="format">The pixel layout.</param>
        /// <param name="cancellationToken">Cancels the call if the encoder has not started yet.</param>
        /// <returns>A task giving the encoder time in ms.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="pixels"/> is null.</exception>
        public Task<double> SetImageAsync(byte[] pixels, int width, int height, int stride, SegPixelFormat format,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            if (pixels == null) throw new ArgumentNullException(nameof(pixels));
            return Task.Run(() =>
            {
                cancellationToken.ThrowIfCancellationRequested();
                return SetImage(pixels, width, height, stride, format);
            }, cancellationToken);
        }

        unsafe double SetImage(ImageInput input)
        {
            double ms = 0;
            using (var lease = Acquire())
            {
                SegImage desc = input.Desc;
                Interop.Check(NativeMethods.seg_sam2_set_image(lease.Session, &desc, &ms));
            }
            byte[] copy = input.CopyPacked();
            lock (_gate)
            {
                _imagePixels = copy;
                _imageFormat = (SegPixelFormat)input.Desc.format;
                _imageWidth = input.Width;
                _imageHeight = input.Height;
                _points.Clear();
                _box = null;
                _lowRes = null;
            }
            return ms;
        }

        /// <summary>
        /// Adds a point (left click: foreground; right click: background) and segments with all points and
        /// the box. The point is kept only when segrt accepted it.
        /// </summary>
        /// <param name="x">Column in image pixels.</param>
        /// <param name="y">Row in image pixels.</param>
        /// <param name="foreground">True for "this object", false for "not this".</param>
        /// <returns>The object's mask at the image's size.</returns>
        /// <exception cref="InvalidOperationException">No image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused the point (e.g. outside the image, NaN) or the decoder failed.</exception>
        public Sam2Result Click(float x, float y, bool foreground = true)
        {
            return Click(x, y, foreground, null);
        }

        /// <summary>
        /// <see cref="Click(float, float, bool)"/> writing the mask into a caller-owned buffer (no mask
        /// allocation per click).
        /// </summary>
        /// <param name="x">Column in image pixels.</param>
        /// <param name="y">Row in image pixels.</param>
        /// <param name="foreground">True for "this object", false for "not this".</param>
        /// <param name="maskBuffer">Receives the mask: at least width x height bytes; null allocates one.</param>
        /// <returns>The result; its Mask is <paramref name="maskBuffer"/> when given.</returns>
        /// <exception cref="InvalidOperationException">No image has been set.</exception>
        /// <exception cref="ArgumentException"><paramref name="maskBuffer"/> is smaller than the image.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused the point or the decoder failed.</exception>
        public Sam2Result Click(float x, float y, bool foreground, byte[] maskBuffer)
        {
            lock (_gate)
            {
                RequireImage();
                var points = new List<Sam2Point>(_points) { new Sam2Point(x, y, foreground) };
                var result = RunPrompts(points, _box, maskBuffer);
                _points.Add(new Sam2Point(x, y, foreground)); // only once segrt accepted it
                return result;
            }
        }

        /// <summary><see cref="Click(float, float, bool)"/> on a thread-pool thread.</summary>
        /// <param name="x">Column in image pixels.</param>
        /// <param name="y">Row in image pixels.</param>
        /// <param name="foreground">True for "this object", false for "not this".</param>
        /// <param name="cancellationToken">Cancels the click if the decoder has not started yet (the point is then not kept).</param>
        /// <returns>A task giving the mask; cancelled when the token fired before the decoder started.</returns>
        public Task<Sam2Result> ClickAsync(float x, float y, bool foreground = true, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Task.Run(() =>
            {
                cancellationToken.ThrowIfCancellationRequested();
                return Click(x, y, foreground);
            }, cancellationToken);
        }

        /// <summary>
        /// Sets the box (replacing any earlier one) and segments with it and the points. The box is kept
        /// only when segrt accepted it.
        /// </summary>
        /// <param name="x1">Left edge in image pixels.</param>
        /// <param name="y1">Top edge in image pixels.</param>
        /// <param name="x2">Right edge in image pixels.</param>
        /// <param name="y2">Bottom edge in image pixels.</param>
        /// <returns>The object's mask at the image's size.</returns>
        /// <exception cref="InvalidOperationException">No image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused the box (e.g. x2 &lt; x1) or the decoder failed.</exception>
        public Sam2Result Box(float x1, float y1, float x2, float y2)
        {
            lock (_gate)
            {
                RequireImage();
                var box = RectangleF.FromLTRB(x1, y1, x2, y2);
                var result = RunPrompts(_points, box, null);
                _box = box; // only once segrt accepted it
                return result;
            }
        }

        /// <summary>Forgets the points, the box and the previous mask; the encoded image stays (no re-encoding).</summary>
        public void ClearPrompts()
        {
            lock (_gate)
            {
                _points.Clear();
                _box = null;
                _lowRes = null;
            }
        }

        /// <summary>Old name of <see cref="ClearPrompts"/> (it never reset the native session).</summary>
        [Obsolete("Use ClearPrompts: this clears the points and the box only; ForgetImage is what resets the native session.")]
        public void Reset()
        {
            ClearPrompts();
        }

        /// <summary>
        /// Forgets the encoded image too (segrt's <c>seg_sam2_reset</c>: frees the embedding and the previous
        /// mask) and the prompts; the next SetImage encodes again.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt failed to reset the session.</exception>
        public void ForgetImage()
        {
            using (var lease = Acquire())
                unsafe
                {
                    Interop.Check(NativeMethods.seg_sam2_reset(lease.Session));
                }
            lock (_gate)
            {
                _points.Clear();
                _box = null;
                _lowRes = null;
                _imagePixels = null;
                _imageWidth = _imageHeight = 0;
            }
        }

        /// <summary>Old name of <see cref="ForgetImage"/>.</summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt failed to reset the session.</exception>
        [Obsolete("Use ForgetImage.")]
        public void ClearImage()
        {
            ForgetImage();
        }

        /// <summary>
        /// Stateless: segments <paramref name="image"/> with these prompts (the encoder runs only when the
        /// pixels differ from the cached image). Safe for threads working on different images.
        /// </summary>
        /// <param name="image">The picture; locked with LockBits for the call.</param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <returns>The object's mask at the image's size.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ArgumentException">Neither a point nor a box is given.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused a prompt or the image, or a model failed.</exception>
        public Sam2Result Segment(Bitmap image, IList<Sam2Point> points, RectangleF? box = null)
        {
            using (var input = ImageInput.FromBitmap(image))
                return Run(input, points, box, null, null);
        }

        /// <summary>
        /// Stateless refinement: segments <paramref name="image"/> with these prompts and, when given, the
        /// low-res logits of the caller's previous result on the same image (its <see cref="Sam2Result.LowResLogits"/>).
        /// Each caller keeps its own previous result, so threads refining different objects on one segmenter
        /// never mix.
        /// </summary>
        /// <param name="image">The picture; locked with LockBits for the call.</param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <param name="previousLowRes">Null (no refinement), or the <see cref="Sam2Result.LowResLogits"/> of an earlier call on the same image.</param>
        /// <returns>The object's mask at the image's size, with its own <see cref="Sam2Result.LowResLogits"/> for the next step.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ArgumentException">Neither a point nor a box is given, or <paramref name="previousLowRes"/> does not have <see cref="LowResSize"/> floats.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused a prompt or the image, or a model failed.</exception>
        public Sam2Result Segment(Bitmap image, IList<Sam2Point> points, RectangleF? box, float[] previousLowRes)
        {
            using (var input = ImageInput.FromBitmap(image))
                return Run(input, points, box, previousLowRes, null);
        }

        /// <summary>Stateless: segments raw pixels with these prompts (see <see cref="Segment(Bitmap, IList{Sam2Point}, RectangleF?)"/>).</summary>
        /// <param name="pixels">Rows of pixels; only read during the call.</param>
        /// <param name="width">Image width in pixels.</param>
        /// <param name="height">Image height in pixels.</param>
        /// <param name="stride">Bytes per row (0 = packed); negative for a bottom-up buffer.</param>
        /// <param name="format">The pixel layout.</param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <param name="maskBuffer">Null, or at least width x height bytes receiving the mask.</param>
        /// <returns>The object's mask; <paramref name="maskBuffer"/> when given.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="pixels"/> is null.</exception>
        /// <exception cref="ArgumentException">No prompt, geometry not fitting the buffer, or a mask buffer too small.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive, or the format is unknown.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused a prompt or the image, or a model failed.</exception>
        public Sam2Result Segment(byte[] pixels, int width, int height, int stride, SegPixelFormat format,
            IList<Sam2Point> points, RectangleF? box = null, byte[] maskBuffer = null)
        {
            using (var input = ImageInput.FromBytes(pixels, width, height, stride, format))
                return Run(input, points, box, null, maskBuffer);
        }

        /// <summary>Stateless refinement on raw pixels (see <see cref="Segment(Bitmap, IList{Sam2Point}, RectangleF?, float[])"/>).</summary>
        /// <param name="pixels">Rows of pixels; only read during the call.</param>
        /// <param name="width">Image width in pixels.</param>
        /// <param name="height">Image height in pixels.</param>
        /// <param name="stride">Bytes per row (0 = packed); negative for a bottom-up buffer.</param>
        /// <param name="format">The pixel layout.</param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <param name="previousLowRes">Null (no refinement), or the <see cref="Sam2Result.LowResLogits"/> of an earlier call on the same image.</param>
        /// <param name="maskBuffer">Null, or at least width x height bytes receiving the mask.</param>
        /// <returns>The object's mask (<paramref name="maskBuffer"/> when given) and its low-res logits.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="pixels"/> is null.</exception>
        /// <exception cref="ArgumentException">No prompt, geometry not fitting the buffer, a mask buffer too small, or <paramref name="previousLowRes"/> of the wrong size.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive, or the format is unknown.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused a prompt or the image, or a model failed.</exception>
        public Sam2Result Segment(byte[] pixels, int width, int height, int stride, SegPixelFormat format,
            IList<Sam2Point> points, RectangleF? box, float[] previousLowRes, byte[] maskBuffer)
        {
            using (var input = ImageInput.FromBytes(pixels, width, height, stride, format))
                return Run(input, points, box, previousLowRes, maskBuffer);
        }

        /// <summary>Stateless: segments unmanaged pixels with these prompts (see <see cref="Segment(Bitmap, IList{Sam2Point}, RectangleF?)"/>).</summary>
        /// <param name="topRow">The first byte of the top row; only read during the call.</param>
        /// <param name="width">Image width in pixels.</param>
        /// <param name="height">Image height in pixels.</param>
        /// <param name="stride">Bytes from one row to the next (0 = packed); negative for bottom-up memory.</param>
        /// <param name="format">The pixel layout.</param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <param name="maskBuffer">Null, or at least width x height bytes receiving the mask.</param>
        /// <returns>The object's mask; <paramref name="maskBuffer"/> when given.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="topRow"/> is zero.</exception>
        /// <exception cref="ArgumentException">No prompt, a stride smaller than a row, or a mask buffer too small.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive, or the format is unknown.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused a prompt or the image, or a model failed.</exception>
        public Sam2Result Segment(IntPtr topRow, int width, int height, int stride, SegPixelFormat format,
            IList<Sam2Point> points, RectangleF? box = null, byte[] maskBuffer = null)
        {
            using (var input = ImageInput.FromPointer(topRow, width, height, stride, format))
                return Run(input, points, box, null, maskBuffer);
        }

        /// <summary>Stateless refinement on unmanaged pixels (see <see cref="Segment(Bitmap, IList{Sam2Point}, RectangleF?, float[])"/>).</summary>
        /// <param name="topRow">The first byte of the top row; only read during the call.</param>
        /// <param name="width">Image width in pixels.</param>
        /// <param name="height">Image height in pixels.</param>
        /// <param name="stride">Bytes from one row to the next (0 = packed); negative for bottom-up memory.</param>
        /// <param name="format">The pixel layout.</param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <param name="previousLowRes">Null (no refinement), or the <see cref="Sam2Result.LowResLogits"/> of an earlier call on the same image.</param>
        /// <param name="maskBuffer">Null, or at least width x height bytes receiving the mask.</param>
        /// <returns>The object's mask (<paramref name="maskBuffer"/> when given) and its low-res logits.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="topRow"/> is zero.</exception>
        /// <exception cref="ArgumentException">No prompt, a stride smaller than a row, a mask buffer too small, or <paramref name="previousLowRes"/> of the wrong size.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive, or the format is unknown.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused a prompt or the image, or a model failed.</exception>
        public Sam2Result Segment(IntPtr topRow, int width, int height, int stride, SegPixelFormat format,
            IList<Sam2Point> points, RectangleF? box, float[] previousLowRes, byte[] maskBuffer)
        {
            using (var input = ImageInput.FromPointer(topRow, width, height, stride, format))
                return Run(input, points, box, previousLowRes, maskBuffer);
        }

        /// <summary>
        /// <see cref="Segment(Bitmap, IList{Sam2Point}, RectangleF?)"/> on a thread-pool thread, in two steps:
        /// the encoder (skipped when the pixels are cached), then the decoder. Cancelling before the first
        /// step, or between the two, cancels the task; the session stays usable (an embedding computed
        /// before the cancellation stays cached). Do not touch the Bitmap until the task completes.
        /// </summary>
        /// <param name="image">The picture.</param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <param name="cancellationToken">Cancels before the encoder or between the encoder and the decoder.</param>
        /// <returns>A task giving the mask.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        public Task<Sam2Result> SegmentAsync(Bitmap image, IList<Sam2Point> points, RectangleF? box = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            return SegmentAsync(image, points, box, null, cancellationToken);
        }

        /// <summary>
        /// <see cref="Segment(Bitmap, IList{Sam2Point}, RectangleF?, float[])"/> (stateless refinement) on a
        /// thread-pool thread, cancellable as <see cref="SegmentAsync(Bitmap, IList{Sam2Point}, RectangleF?, CancellationToken)"/>.
        /// </summary>
        /// <param name="image">The picture.</param>
        /// <param name="points">Clicks in image pixels; may be empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        /// <param name="previousLowRes">Null, or the <see cref="Sam2Result.LowResLogits"/> of an earlier call on the same image (copied now).</param>
        /// <param name="cancellationToken">Cancels before the encoder or between the encoder and the decoder.</param>
        /// <returns>A task giving the mask and its low-res logits.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        public Task<Sam2Result> SegmentAsync(Bitmap image, IList<Sam2Point> points, RectangleF? box, float[] previousLowRes,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            var prompts = points == null ? new Sam2Point[0] : new List<Sam2Point>(points).ToArray();
            var previous = previousLowRes == null ? null : (float[])previousLowRes.Clone();
            return Task.Run(() =>
            {
                cancellationToken.ThrowIfCancellationRequested();
                using (var input = ImageInput.FromBitmap(image))
                {
                    Encode(input);
                    var hook = AfterEncoderHook;
                    if (hook != null) hook();
                    cancellationToken.ThrowIfCancellationRequested();
                    return Run(input, prompts, box, previous, null);
                }
            }, cancellationToken);
        }

        unsafe void Encode(ImageInput input)
        {
            double ms = 0;
            using (var lease = Acquire())
            {
                SegImage desc = input.Desc;
                Interop.Check(NativeMethods.seg_sam2_set_image(lease.Session, &desc, &ms));
            }
        }

        void RequireImage()
        {
            if (_imageWidth == 0) throw new InvalidOperationException("call SetImage before Click or Box");
        }

        /// <summary>A stateful Click/Box (the caller holds _gate): refines with this object's previous mask when asked, and keeps the new one only on success.</summary>
        Sam2Result RunPrompts(IList<Sam2Point> points, RectangleF? box, byte[] maskBuffer)
        {
            int lowResLength = LowResSize.Width * LowResSize.Height;
            if (lowResLength > 0 && (_lowResNext == null || _lowResNext.Length != lowResLength)) _lowResNext = new float[lowResLength];
            Sam2Result result;
            using (var image = ImageInput.FromBytes(_imagePixels, _imageWidth, _imageHeight, 0, _imageFormat))
                result = Run(image, points, box, RefineWithPreviousMask ? _lowRes : null, maskBuffer, lowResLength > 0 ? _lowResNext : null);
            if (lowResLength > 0)
            {
                var previous = _lowRes;
                _lowRes = _lowResNext;
                _lowResNext = previous;
                result.LowResLogits = (float[])_lowRes.Clone();
            }
            return result;
        }

        /// <summary>One seg_run_sam2_points call. The previous mask always travels as the call's own mask_input (never SEG_SAM2_REFINE, which is the native session's last result, shared by every caller).</summary>
        unsafe Sam2Result Run(ImageInput input, IList<Sam2Point> points, RectangleF? box, float[] previousLowRes, byte[] maskBuffer, float[] lowResOut = null)
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
            int w = input != null ? input.Width : _imageWidth;
            int h = input != null ? input.Height : _imageHeight;
            long pixels = (long)w * h;
            if (maskBuffer != null && maskBuffer.LongLength < pixels)
                throw new ArgumentException("the mask buffer has " + maskBuffer.LongLength + " bytes but a " + w + "x" + h + " mask needs " + pixels, nameof(maskBuffer));
            var native = new SegPoint[Math.Max(n, 1)];
            for (int i = 0; i < n; i++)
            {
                native[i].x = points[i].X;
                native[i].y = points[i].Y;
                native[i].label = points[i].Foreground ? 1 : 0;
            }
            SegBox nativeBox = default(SegBox);
            if (box.HasValue)
            {
                nativeBox.x1 = box.Value.Left;
                nativeBox.y1 = box.Value.Top;
                nativeBox.x2 = box.Value.Right;
                nativeBox.y2 = box.Value.Bottom;
            }
            var mask = maskBuffer ?? new byte[pixels];
            float score = 0;
            SegSam2Result extra = default(SegSam2Result);
            extra.struct_size = (uint)sizeof(SegSam2Result);
            using (var lease = Acquire())
            fixed (byte* m = mask)
            fixed (SegPoint* p = native)
            fixed (float* lowResIn = previousLowRes)
            fixed (float* lowRes = lowResOut)
            {
                extra.mask_input = lowResIn;
                extra.mask_input_len = (UIntPtr)(previousLowRes != null ? previousLowRes.Length : 0);
                extra.low_res_logits = lowRes;
                extra.low_res_len = (UIntPtr)(lowResOut != null ? lowResOut.Length : 0);
                SegImage desc = input != null ? input.Desc : default(SegImage);
                SegMask outMask = default(SegMask);
                outMask.data = m;
                outMask.width = w;
                outMask.height = h;
                Interop.Check(NativeMethods.seg_run_sam2_points(lease.Session, input != null ? &desc : null,
                    n > 0 ? p : null, (UIntPtr)n, box.HasValue ? &nativeBox : null, 0, &outMask, &score, &extra));
            }
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
                LowResLogits = ownsLowRes ? lowResOut : null, // a stateful call's copy is set by RunPrompts
                LowResWidth = lowResOut != null ? extra.low_res_width : 0,
                LowResHeight = lowResOut != null ? extra.low_res_height : 0,
            };
        }
    }
}
