// segrt .NET wrapper: SAM2 interactive segmentation (encode an image once, each click runs the decoder).
using System;
using System.Collections.Generic;
using System.Drawing;
using Segrt.Native;

namespace Segrt
{
    /// <summary>A click in image pixels; Foreground false means "not this" (a background point).</summary>
    public struct Sam2Point
    {
        public float X;
        public float Y;
        public bool Foreground;

        public Sam2Point(float x, float y, bool foreground)
        {
            X = x;
            Y = y;
            Foreground = foreground;
        }
    }

    /// <summary>The clicked object's mask at the image's size, with the decoder's scores and timings.</summary>
    public sealed class Sam2Result
    {
        public int Width { get; internal set; }
        public int Height { get; internal set; }
        /// <summary>Row-major Width x Height bytes, 0 or 255.</summary>
        public byte[] Mask { get; internal set; }
        /// <summary>Predicted IoU of the chosen mask.</summary>
        public float Score { get; internal set; }
        /// <summary>Predicted IoU of every mask the decoder returned.</summary>
        public float[] Scores { get; internal set; }
        public int ChosenIndex { get; internal set; }
        /// <summary>True when the cached image embedding was used (no encoder run).</summary>
        public bool EncoderReused { get; internal set; }
        public double EncoderMs { get; internal set; }
        public double DecoderMs { get; internal set; }
        public double PostprocessMs { get; internal set; }
        public long ForegroundPixels { get; internal set; }

        public Bitmap ToBitmap()
        {
            return MaskBitmap.FromMask(Mask, Width, Height);
        }
    }

    /// <summary>
    /// A SAM2 encoder + decoder pair. SetImage encodes a picture once (do it off the UI thread: it is
    /// the slow part); Click/Box then run only the decoder, with every point clicked since the last
    /// Reset. Thread-safe: the native session serves any number of threads; the clicked points are
    /// kept under a lock. Threads working on different images should call Segment(image, ...), which
    /// passes the image with the prompts.
    /// </summary>
    public sealed unsafe class Sam2Segmenter : IDisposable
    {
        const uint RefineFlag = 1; // SEG_SAM2_REFINE

        readonly SessionHandle _handle;
        readonly object _gate = new object();
        readonly List<Sam2Point> _points = new List<Sam2Point>();
        RectangleF? _box;
        int _imageWidth, _imageHeight;

        public Sam2Segmenter(string encoderPath, string decoderPath, SegmenterOptions options = null)
        {
            if (encoderPath == null) throw new ArgumentNullException("encoderPath");
            if (decoderPath == null) throw new ArgumentNullException("decoderPath");
            Interop.EnsureLoaded();
            options = options ?? new SegmenterOptions();
            fixed (byte* enc = Interop.Utf8z(encoderPath))
            fixed (byte* dec = Interop.Utf8z(decoderPath))
            fixed (byte* ort = Interop.Utf8z(options.OnnxRuntimePath))
            {
                SegOptions o = options.ToNative(ort);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create_sam2(enc, dec, &o, &session));
                _handle = new SessionHandle(session);
            }
        }

        /// <summary>
        /// When true, each click after the first also feeds the previous click's low-resolution mask to
        /// the decoder (SAM2's iterative refinement). Off by default: every click uses all points.
        /// </summary>
        public bool RefineWithPreviousMask { get; set; }

        /// <summary>Size of the image given to SetImage (0 before).</summary>
        public Size ImageSize
        {
            get { lock (_gate) return new Size(_imageWidth, _imageHeight); }
        }

        /// <summary>The points clicked since the last Reset.</summary>
        public IList<Sam2Point> Points
        {
            get { lock (_gate) return _points.ToArray(); }
        }

        public RectangleF? CurrentBox
        {
            get { lock (_gate) return _box; }
        }

        /// <summary>Encodes the image (skipped when the same pixels are already encoded) and clears the prompts. Returns the encoder time in ms (0 when cached).</summary>
        public double SetImage(Bitmap image)
        {
            using (var input = ImageInput.FromBitmap(image))
                return SetImage(input);
        }

        public double SetImage(byte[] pixels, int width, int height, int stride, SegPixelFormat format)
        {
            using (var input = ImageInput.FromBytes(pixels, width, height, stride, format))
                return SetImage(input);
        }

        double SetImage(ImageInput input)
        {
            double ms = 0;
            using (var lease = _handle.Acquire(this))
            {
                SegImage desc = input.Desc;
                Interop.Check(NativeMethods.seg_sam2_set_image(lease.Session, &desc, &ms));
            }
            lock (_gate)
            {
                _imageWidth = input.Width;
                _imageHeight = input.Height;
                _points.Clear();
                _box = null;
            }
            return ms;
        }

        /// <summary>Adds a point (left click: foreground; right click: background) and segments with all points and the box.</summary>
        public Sam2Result Click(float x, float y, bool foreground = true)
        {
            lock (_gate)
            {
                RequireImage();
                _points.Add(new Sam2Point(x, y, foreground));
                return RunPrompts();
            }
        }

        /// <summary>Sets the box (replacing any earlier one) and segments with it and the points.</summary>
        public Sam2Result Box(float x1, float y1, float x2, float y2)
        {
            lock (_gate)
            {
                RequireImage();
                _box = RectangleF.FromLTRB(x1, y1, x2, y2);
                return RunPrompts();
            }
        }

        /// <summary>Forgets the points and the box; the encoded image stays (no re-encoding).</summary>
        public void Reset()
        {
            lock (_gate)
            {
                _points.Clear();
                _box = null;
            }
        }

        /// <summary>Forgets the encoded image too (frees its embedding); the next SetImage encodes again.</summary>
        public void ClearImage()
        {
            using (var lease = _handle.Acquire(this))
                Interop.Check(NativeMethods.seg_sam2_reset(lease.Session));
            lock (_gate)
            {
                _points.Clear();
                _box = null;
                _imageWidth = _imageHeight = 0;
            }
        }

        /// <summary>
        /// Stateless: segments <paramref name="image"/> with these prompts (the encoder runs only when the
        /// pixels differ from the cached image). Safe for threads working on different images.
        /// </summary>
        public Sam2Result Segment(Bitmap image, IList<Sam2Point> points, RectangleF? box = null)
        {
            using (var input = ImageInput.FromBitmap(image))
                return Run(input, points, box, 0);
        }

        void RequireImage()
        {
            if (_imageWidth == 0) throw new InvalidOperationException("call SetImage before Click or Box");
        }

        Sam2Result RunPrompts()
        {
            uint flags = RefineWithPreviousMask && _points.Count + (_box.HasValue ? 1 : 0) > 1 ? RefineFlag : 0;
            return Run(null, _points, _box, flags);
        }

        Sam2Result Run(ImageInput input, IList<Sam2Point> points, RectangleF? box, uint flags)
        {
            int n = points == null ? 0 : points.Count;
            if (n == 0 && !box.HasValue) throw new ArgumentException("give at least one point or a box", "points");
            int w = input != null ? input.Width : _imageWidth;
            int h = input != null ? input.Height : _imageHeight;
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
            var mask = new byte[(long)w * h];
            float score = 0;
            SegSam2Result extra = default(SegSam2Result);
            extra.struct_size = (uint)sizeof(SegSam2Result);
            using (var lease = _handle.Acquire(this))
            fixed (byte* m = mask)
            fixed (SegPoint* p = native)
            {
                SegImage desc = input != null ? input.Desc : default(SegImage);
                SegMask outMask = default(SegMask);
                outMask.data = m;
                outMask.width = w;
                outMask.height = h;
                Interop.Check(NativeMethods.seg_run_sam2_points(lease.Session, input != null ? &desc : null,
                    n > 0 ? p : null, (UIntPtr)n, box.HasValue ? &nativeBox : null, flags, &outMask, &score, &extra));
            }
            var scores = new float[Math.Max(0, Math.Min(extra.num_masks, 4))];
            for (int i = 0; i < scores.Length; i++) scores[i] = extra.scores[i];
            long foreground = 0;
            foreach (byte b in mask) if (b != 0) foreground++;
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
            };
        }

        public string SessionInfoJson
        {
            get
            {
                using (var lease = _handle.Acquire(this))
                    return SessionInfo.Read(lease.Session);
            }
        }

        public string ExecutionProvider
        {
            get { return SessionInfo.ProviderInUse(SessionInfoJson); }
        }

        public void Dispose()
        {
            _handle.Dispose();
        }
    }
}
