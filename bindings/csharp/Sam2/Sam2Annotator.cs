using System;
using System.Collections.Generic;
using System.Drawing;
using System.Threading;

namespace Segrt
{
    /// <summary>
    /// SAM2's interactive use, as an annotation tool does it: <see cref="SetImage"/> encodes one picture (do it
    /// off the UI thread: it is the slow part); each <see cref="Click"/> or <see cref="Box"/> then runs only the
    /// decoder, with every point clicked since the last <see cref="ClearPrompts"/>. A prompt segrt refuses (e.g. a
    /// click outside the image) is not kept. Made by <see cref="Sam2Segmenter.CreateAnnotator"/>.
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
    /// Encoding ahead: SetImage records the new image (and clears the prompts) before its encoder runs, so a host
    /// shows the image, starts <c>Task.Run(() =&gt; annotator.SetImage(bitmap, cts.Token, progress))</c> at once, and
    /// a click made during the encode is accepted: it waits for the rest of that encode (it does not encode again)
    /// and segments the new image. A newer SetImage (or <see cref="ForgetImage"/>) cancels the older encode: that
    /// SetImage, and a click waiting for it, throw <see cref="OperationCanceledException"/>.
    /// </para>
    /// <para>
    /// Thread-safe: the state is kept under a lock, never held while segrt runs; clicks and boxes on one annotator
    /// run one after another. Several annotators may share one <see cref="Sam2Segmenter"/> (one per user or per
    /// view); they share its one cached embedding, so annotators on different pictures at once encode in turn (an
    /// encode started for one cancels another's encode in flight). There is nothing to dispose; once the segmenter
    /// is disposed, calls throw <see cref="ObjectDisposedException"/>.
    /// </para>
    /// <para>
    /// The methods are synchronous and block the calling thread; a caller who wants a background thread wraps them
    /// in <c>Task.Run</c>, passing its token and progress: cancellation then stops the native call in the middle.
    /// </para>
    /// </remarks>
    public sealed class Sam2Annotator
    {
        readonly Sam2Segmenter _segmenter;
        readonly object _gate = new object();        // the state below; never held while segrt runs
        readonly object _promptGate = new object();  // Click/Box one after another (the points accumulate in order)
        readonly List<Sam2Point> _points = new List<Sam2Point>();
        RectangleF? _box;
        int _imageWidth, _imageHeight;
        // The previous successful Click/Box's low-res logits (null after SetImage, ClearPrompts, ForgetImage)
        // and a second buffer the next call writes into (under _promptGate); swapped only when that call succeeded.
        float[] _lowRes, _lowResNext;
        // A packed copy of the image given to SetImage: every Click/Box passes it, so the native cache holding
        // another caller's image by then costs a re-encode, never a mask of the wrong picture.
        byte[] _imagePixels;
        PixelLayout _imageLayout;
        // Bumped by SetImage and ForgetImage (a prompt run on an image no longer set is not kept), and by
        // ClearPrompts (a prompt run across it is not kept: the clear comes after it).
        long _imageVersion, _promptsVersion;

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
        /// Sets the image: records a packed copy of it and clears the prompts and the previous mask at once (under the
        /// annotator's lock), then encodes it (skipped when the same pixels are already encoded). A
        /// <see cref="Click"/>, <see cref="Box"/> or <see cref="SegmentEverything"/> made on another thread while the
        /// encoder runs is accepted and waits for this encode (see the remarks of <see cref="Sam2Annotator"/>).
        /// </summary>
        /// <param name="image">The pixels (a Bitmap converts implicitly); read only at the start of the call (copied before the encoder runs).</param>
        /// <param name="cancellationToken">
        /// Cancels the encoder, also while it runs. A token cancelled before the call changes nothing; cancelled
        /// during the encode, the new image stays set (its prompts cleared) and the next click encodes it.
        /// </param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> reports; null for none.</param>
        /// <returns>The encoder time in ms (0 when the cached embedding was used, or another call was encoding the same pixels and this one waited).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled, or a newer image set on this annotator or its segmenter (or a reset) cancelled this encode.</exception>
        /// <exception cref="SegrtException">segrt refused the image or the encoder failed; the annotator then keeps its earlier image and prompts.</exception>
        public double SetImage(InputImage image, CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            _segmenter.ThrowIfDisposed();
            cancellationToken.ThrowIfCancellationRequested();
            byte[] copy;
            PixelLayout layout;
            int width, height;
            using (var pixels = image.Lock())
            {
                copy = pixels.CopyPacked();
                layout = (PixelLayout)pixels.Desc.format;
                width = pixels.Width;
                height = pixels.Height;
            }
            // Recorded before the encoder runs: a click from now on segments this image (waiting for its encode).
            byte[] oldPixels;
            PixelLayout oldLayout;
            int oldWidth, oldHeight;
            List<Sam2Point> oldPoints;
            RectangleF? oldBox;
            float[] oldLowRes;
            long version;
            lock (_gate)
            {
                oldPixels = _imagePixels;
                oldLayout = _imageLayout;
                oldWidth = _imageWidth;
                oldHeight = _imageHeight;
                oldPoints = new List<Sam2Point>(_points);
                oldBox = _box;
                oldLowRes = _lowRes;
                _imagePixels = copy;
                _imageLayout = layout;
                _imageWidth = width;
                _imageHeight = height;
                _points.Clear();
                _box = null;
                _lowRes = null;
                version = ++_imageVersion;
            }
            try
            {
                // The copy is what the clicks pass: the very pixels being encoded, so they wait for this encode.
                using (var pixels = InputImage.FromPixels(copy, width, height, 0, layout).Lock())
                    return _segmenter.Encode(pixels, cancellationToken, progress);
            }
            catch (SegrtException)
            {
                // A refused image is not kept (as a refused prompt), unless the annotator moved on meanwhile.
                lock (_gate)
                {
                    if (_imageVersion == version)
                    {
                        _imagePixels = oldPixels;
                        _imageLayout = oldLayout;
                        _imageWidth = oldWidth;
                        _imageHeight = oldHeight;
                        _points.Clear();
                        _points.AddRange(oldPoints);
                        _box = oldBox;
                        _lowRes = oldLowRes;
                        _imageVersion++;
                    }
                }
                throw;
            }
        }

        /// <summary>
        /// Adds a point (left click: foreground; right click: background) and segments with all points and
        /// the box. The point is kept only when segrt accepted it. Runs only the decoder when the image is encoded;
        /// during SetImage's encode it waits for that encode; when another caller's image replaced the segmenter's
        /// cached embedding, it encodes this image again.
        /// </summary>
        /// <param name="x">Column in image pixels.</param>
        /// <param name="y">Row in image pixels.</param>
        /// <param name="foreground">True for "this object", false for "not this".</param>
        /// <param name="maskBuffer">Null (a new mask is allocated), or at least width x height bytes receiving the mask (no mask allocation per click).</param>
        /// <param name="cancellationToken">Cancels the click, also while it waits for the encode or the decoder runs (the point is then not kept).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> reports when this click runs the encoder itself; null for none.</param>
        /// <returns>The object's mask at the image's size; its Mask is <paramref name="maskBuffer"/> when given.</returns>
        /// <exception cref="InvalidOperationException">No image has been set.</exception>
        /// <exception cref="ArgumentException"><paramref name="maskBuffer"/> is smaller than the image.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled, the encode the click waited for was cancelled by a newer image, or SetImage/ForgetImage replaced the image while the click ran (the point is not kept).</exception>
        /// <exception cref="SegrtException">segrt refused the point (e.g. outside the image, NaN) or a model failed.</exception>
        public Sam2Result Click(float x, float y, bool foreground = true, byte[] maskBuffer = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            var point = new Sam2Point(x, y, foreground);
            return RunPrompts(point, null, maskBuffer, cancellationToken, progress);
        }

        /// <summary>
        /// Sets the box (replacing any earlier one) and segments with it and the points. The box is kept
        /// only when segrt accepted it. Waits for SetImage's encode as <see cref="Click"/> does.
        /// </summary>
        /// <param name="x1">Left edge in image pixels.</param>
        /// <param name="y1">Top edge in image pixels.</param>
        /// <param name="x2">Right edge in image pixels.</param>
        /// <param name="y2">Bottom edge in image pixels.</param>
        /// <param name="cancellationToken">Cancels the call, also while it waits for the encode or the decoder runs (the box is then not kept).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Encode"/> reports when this call runs the encoder itself; null for none.</param>
        /// <returns>The object's mask at the image's size.</returns>
        /// <exception cref="InvalidOperationException">No image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled, the encode waited for was cancelled, or the image was replaced while the call ran (the box is not kept).</exception>
        /// <exception cref="SegrtException">segrt refused the box (e.g. x2 &lt; x1) or a model failed.</exception>
        public Sam2Result Box(float x1, float y1, float x2, float y2,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            return RunPrompts(null, RectangleF.FromLTRB(x1, y1, x2, y2), null, cancellationToken, progress);
        }

        /// <summary>Forgets the points, the box and the previous mask; the image stays (no re-encoding).</summary>
        public void ClearPrompts()
        {
            lock (_gate)
            {
                _points.Clear();
                _box = null;
                _lowRes = null;
                _promptsVersion++;
            }
        }

        /// <summary>
        /// Forgets the image, the prompts and the previous mask, and frees the segmenter's cached embedding
        /// (<see cref="Sam2Segmenter.ForgetImage"/>: an encode in flight is cancelled); the next SetImage encodes again.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegrtException">segrt failed to reset the session.</exception>
        public void ForgetImage()
        {
            _segmenter.ThrowIfDisposed();
            lock (_gate)
            {
                _points.Clear();
                _box = null;
                _lowRes = null;
                _imagePixels = null;
                _imageWidth = _imageHeight = 0;
                _imageVersion++;
            }
            _segmenter.ForgetImage();
        }

        /// <summary>
        /// Every object in the image given to SetImage, as SAM2's automatic mask generator finds them
        /// (<see cref="Sam2Segmenter.SegmentEverything"/> on that image). Uses the cached image embedding: no encoder
        /// run after SetImage or clicks on the same image; during SetImage's encode it waits for it.
        /// </summary>
        /// <param name="options">The options; null for the defaults.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs.</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Prompts"/> reports (and <see cref="ProgressStage.Encode"/> when the image must be encoded again); null for none.</param>
        /// <returns>The label image and the objects.</returns>
        /// <exception cref="InvalidOperationException">No image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled, the encode waited for was cancelled, or the image was replaced while the call ran.</exception>
        /// <exception cref="SegrtException">segrt refused an option (InvalidArgument, naming it) or a model failed.</exception>
        public EverythingResult SegmentEverything(EverythingOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            byte[] pixels;
            int w, h;
            PixelLayout layout;
            long version;
            lock (_gate)
            {
                RequireImage();
                pixels = _imagePixels;
                w = _imageWidth;
                h = _imageHeight;
                layout = _imageLayout;
                version = _imageVersion;
            }
            var result = _segmenter.SegmentEverything(InputImage.FromPixels(pixels, w, h, 0, layout), options, cancellationToken, progress);
            lock (_gate)
                if (_imageVersion != version) throw Replaced();
            return result;
        }

        void RequireImage()
        {
            if (_imageWidth == 0) throw new InvalidOperationException("call SetImage first: this annotator has no image");
        }

        static OperationCanceledException Replaced()
        {
            return new OperationCanceledException("the annotator's image was replaced (SetImage or ForgetImage) while the call ran");
        }

        /// <summary>
        /// A Click (<paramref name="point"/>) or Box (<paramref name="box"/>): segments with the state read under the
        /// lock, runs segrt outside it, and keeps the point or box and the new previous mask only on success, when
        /// the image and the prompts are still those it ran with.
        /// </summary>
        Sam2Result RunPrompts(Sam2Point? point, RectangleF? box, byte[] maskBuffer, CancellationToken cancellationToken, IProgress<SegrtProgress> progress)
        {
            _segmenter.ThrowIfDisposed();
            cancellationToken.ThrowIfCancellationRequested();
            lock (_promptGate)
            {
                byte[] pixels;
                int w, h;
                PixelLayout layout;
                List<Sam2Point> points;
                RectangleF? useBox;
                float[] previous;
                long imageVersion, promptsVersion;
                lock (_gate)
                {
                    RequireImage();
                    pixels = _imagePixels;
                    w = _imageWidth;
                    h = _imageHeight;
                    layout = _imageLayout;
                    points = new List<Sam2Point>(_points);
                    if (point.HasValue) points.Add(point.Value);
                    useBox = box ?? _box;
                    previous = RefineWithPreviousMask ? _lowRes : null;
                    imageVersion = _imageVersion;
                    promptsVersion = _promptsVersion;
                }
                Size lowResSize = _segmenter.LowResSize;
                int lowResLength = lowResSize.Width * lowResSize.Height;
                if (lowResLength > 0 && (_lowResNext == null || _lowResNext.Length != lowResLength || _lowResNext == previous)) _lowResNext = new float[lowResLength];
                Sam2Result result;
                using (var image = InputImage.FromPixels(pixels, w, h, 0, layout).Lock())
                    result = _segmenter.Run(image, points, useBox, previous, maskBuffer, lowResLength > 0 ? _lowResNext : null, cancellationToken, progress);
                float[] lowRes = lowResLength > 0 ? _lowResNext : null;
                lock (_gate)
                {
                    if (_imageVersion != imageVersion) throw Replaced();
                    if (_promptsVersion == promptsVersion)
                    {
                        // Only once segrt accepted it, and the prompts were not cleared meanwhile (the clear came after).
                        if (point.HasValue) _points.Add(point.Value);
                        if (box.HasValue) _box = box;
                        if (lowRes != null)
                        {
                            _lowResNext = _lowRes;
                            _lowRes = lowRes;
                        }
                    }
                }
                if (lowRes != null) result.LowResLogits = (float[])lowRes.Clone();
                return result;
            }
        }
    }
}
