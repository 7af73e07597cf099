using System;
using System.Collections.Generic;
using System.Drawing;
using System.Threading;
using System.Threading.Tasks;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// SAM2's interactive use, as an annotation tool does it: <see cref="SetImage"/> encodes one picture (do it
    /// off the UI thread: it is the slow part); each <see cref="Click(float, float, bool)"/> or <see cref="Box"/>
    /// then runs only the decoder, with every point clicked since the last <see cref="ClearPrompts"/>. A prompt
    /// segrt refuses (e.g. a click outside the image) is not kept. Made by <see cref="Sam2Segmenter.CreateAnnotator"/>.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The state is this object's own: the image (a packed copy, width x height x bytes per pixel, made by SetImage),
    /// the points and the box, and, for <see cref="RefineWithPreviousMask"/>, the previous mask. Every click passes
    /// the image and the previous mask to segrt, so nothing depends on what the segmenter last did for another
    /// caller: when another caller's call on another picture replaced the segmenter's cached embedding, the next click
    /// encodes again (<see cref="Sam2Result.EncoderReused"/> false) instead of segmenting the other picture.
    /// </para>
    /// <para>
    /// Thread-safe: the state is kept under a lock, so calls on one annotator run one after another. Several
    /// annotators may share one <see cref="Sam2Segmenter"/> (one per user or per view). There is nothing to dispose;
    /// once the segmenter is disposed, calls throw <see cref="ObjectDisposedException"/>.
    /// </para>
    /// </remarks>
    public sealed class Sam2Annotator
    {
        readonly Sam2Segmenter _segmenter;
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
        PixelLayout _imageLayout;

        internal Sam2Annotator(Sam2Segmenter segmenter)
        {
            _segmenter = segmenter;
        }

        /// <summary>The encoder + decoder pair this annotator runs on.</summary>
        public Sam2Segmenter Segmenter
        {
            get { return _segmenter; }
        }

        /// <summary>
        /// When true, each Click or Box after the first also feeds this annotator's previous result (its
        /// low-resolution logits, kept with the points and cleared with them) to the decoder: SAM2's iterative
        /// refinement. Off by default: every click uses all points. The previous mask is this object's own,
        /// never the native session's last result, so other callers' calls on the segmenter do not change what a
        /// click refines.
        /// </summary>
        public bool RefineWithPreviousMask { get; set; }

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

        /// <summary>
        /// Encodes the image (skipped when the same pixels are already encoded), keeps a packed copy of it for the
        /// clicks, and clears the prompts and the previous mask.
        /// </summary>
        /// <param name="image">The pixels (a Bitmap converts implicitly); read only during the call.</param>
        /// <param name="cancellationToken">Cancels the encoder, also while it runs; the annotator then keeps its earlier image and prompts.</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> reports; null for none.</param>
        /// <returns>The encoder time in ms (0 when the cached embedding was used).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the image or the encoder failed.</exception>
        public double SetImage(InputImage image, CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            cancellationToken.ThrowIfCancellationRequested();
            double ms;
            byte[] copy;
            PixelLayout layout;
            int width, height;
            using (var pixels = image.Lock())
            {
                ms = _segmenter.Encode(pixels, cancellationToken, progress);
                copy = pixels.CopyPacked();
                layout = (PixelLayout)pixels.Desc.format;
                width = pixels.Width;
                height = pixels.Height;
            }
            lock (_gate)
            {
                _imagePixels = copy;
                _imageLayout = layout;
                _imageWidth = width;
                _imageHeight = height;
                _points.Clear();
                _box = null;
                _lowRes = null;
            }
            return ms;
        }

        /// <summary>
        /// <see cref="SetImage"/> on a thread-pool thread (the encoder is the slow part). Do not touch the pixels
        /// until the task completes.
        /// </summary>
        /// <param name="image">The pixels.</param>
        /// <param name="cancellationToken">Cancels the call, before or while the encoder runs.</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> reports; null for none.</param>
        /// <returns>A task giving the encoder time in ms; cancelled when the token fired before or during the encoder.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        public Task<double> SetImageAsync(InputImage image, CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            return Task.Run(() => SetImage(image, cancellationToken, progress), cancellationToken);
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
        /// <exception cref="SegrtException">segrt refused the point (e.g. outside the image, NaN) or the decoder failed.</exception>
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
        /// <exception cref="SegrtException">segrt refused the point or the decoder failed.</exception>
        public Sam2Result Click(float x, float y, bool foreground, byte[] maskBuffer)
        {
            return Click(x, y, foreground, maskBuffer, default(CancellationToken));
        }

        Sam2Result Click(float x, float y, bool foreground, byte[] maskBuffer, CancellationToken cancellationToken)
        {
            lock (_gate)
            {
                RequireImage();
                cancellationToken.ThrowIfCancellationRequested();
                var points = new List<Sam2Point>(_points) { new Sam2Point(x, y, foreground) };
                var result = RunPrompts(points, _box, maskBuffer, cancellationToken);
                _points.Add(new Sam2Point(x, y, foreground)); // only once segrt accepted it
                return result;
            }
        }

        /// <summary><see cref="Click(float, float, bool)"/> on a thread-pool thread.</summary>
        /// <param name="x">Column in image pixels.</param>
        /// <param name="y">Row in image pixels.</param>
        /// <param name="foreground">True for "this object", false for "not this".</param>
        /// <param name="cancellationToken">Cancels the click, before or while the decoder runs (the point is then not kept).</param>
        /// <returns>A task giving the mask; cancelled when the token fired before or during the decoder.</returns>
        public Task<Sam2Result> ClickAsync(float x, float y, bool foreground = true, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Task.Run(() => Click(x, y, foreground, null, cancellationToken), cancellationToken);
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
        /// <exception cref="SegrtException">segrt refused the box (e.g. x2 &lt; x1) or the decoder failed.</exception>
        public Sam2Result Box(float x1, float y1, float x2, float y2)
        {
            lock (_gate)
            {
                RequireImage();
                var box = RectangleF.FromLTRB(x1, y1, x2, y2);
                var result = RunPrompts(_points, box, null, default(CancellationToken));
                _box = box; // only once segrt accepted it
                return result;
            }
        }

        /// <summary>Forgets the points, the box and the previous mask; the image stays (no re-encoding).</summary>
        public void ClearPrompts()
        {
            lock (_gate)
            {
                _points.Clear();
                _box = null;
                _lowRes = null;
            }
        }

        /// <summary>
        /// Forgets the image, the prompts and the previous mask, and frees the segmenter's cached embedding
        /// (segrt's <c>seg_sam2_reset</c>); the next SetImage encodes again.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegrtException">segrt failed to reset the session.</exception>
        public void ForgetImage()
        {
            using (var lease = _segmenter.Acquire())
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

        /// <summary>
        /// Every object in the image given to SetImage, as SAM2's automatic mask generator finds them
        /// (<see cref="Sam2Segmenter.SegmentEverything"/> on that image). Uses the cached image embedding: no encoder
        /// run after SetImage or clicks on the same image.
        /// </summary>
        /// <param name="options">The options; null for the defaults.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs.</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Prompts"/> reports (and <see cref="ProgressStage.Encode"/> when the image must be encoded again); null for none.</param>
        /// <returns>The label image and the objects.</returns>
        /// <exception cref="InvalidOperationException">No image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused an option (InvalidArgument, naming it) or the decoder failed.</exception>
        public EverythingResult SegmentEverything(EverythingOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            byte[] pixels;
            int w, h;
            PixelLayout layout;
            lock (_gate)
            {
                RequireImage();
                pixels = _imagePixels;
                w = _imageWidth;
                h = _imageHeight;
                layout = _imageLayout;
            }
            return _segmenter.SegmentEverything(InputImage.FromPixels(pixels, w, h, 0, layout), options, cancellationToken, progress);
        }

        /// <summary><see cref="SegmentEverything"/> on a thread-pool thread.</summary>
        /// <param name="options">The options; null for the defaults.</param>
        /// <param name="cancellationToken">Cancels the call, before it starts or while it runs.</param>
        /// <param name="progress">Receives progress reports; null for none.</param>
        /// <returns>A task giving the label image and the objects.</returns>
        public Task<EverythingResult> SegmentEverythingAsync(EverythingOptions options = null, CancellationToken cancellationToken = default(CancellationToken),
            IProgress<SegrtProgress> progress = null)
        {
            return Task.Run(() => SegmentEverything(options, cancellationToken, progress), cancellationToken);
        }

        void RequireImage()
        {
            if (_imageWidth == 0) throw new InvalidOperationException("call SetImage first: this annotator has no image");
        }

        /// <summary>A Click/Box (the caller holds _gate): refines with this object's previous mask when asked, and keeps the new one only on success.</summary>
        Sam2Result RunPrompts(IList<Sam2Point> points, RectangleF? box, byte[] maskBuffer, CancellationToken cancellationToken)
        {
            Size lowResSize = _segmenter.LowResSize;
            int lowResLength = lowResSize.Width * lowResSize.Height;
            if (lowResLength > 0 && (_lowResNext == null || _lowResNext.Length != lowResLength)) _lowResNext = new float[lowResLength];
            Sam2Result result;
            using (var image = InputImage.FromPixels(_imagePixels, _imageWidth, _imageHeight, 0, _imageLayout).Lock())
                result = _segmenter.Run(image, points, box, RefineWithPreviousMask ? _lowRes : null, maskBuffer, lowResLength > 0 ? _lowResNext : null, cancellationToken);
            if (lowResLength > 0)
            {
                var previous = _lowRes;
                _lowRes = _lowResNext;
                _lowResNext = previous;
                result.LowResLogits = (float[])_lowRes.Clone();
            }
            return result;
        }
    }
}
