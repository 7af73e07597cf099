// segrt .NET wrapper: SAM2 "segment everything" (a grid of prompts, as SAM2's automatic mask generator).
using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;
using System.Threading;
using System.Threading.Tasks;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// Options of <see cref="Sam2Segmenter.SegmentEverything"/>, with the defaults and meaning of SAM2's
    /// automatic mask generator (SAM2AutomaticMaskGenerator).
    /// </summary>
    public sealed class EverythingOptions
    {
        /// <summary>Prompts along each side of the image: a grid of PointsPerSide² points (default 32; 1..256).</summary>
        public int PointsPerSide { get; set; } = 32;

        /// <summary>Prompts per decoder run where the decoder takes a batch of prompts (default 64); results do not depend on it.</summary>
        public int PointsPerBatch { get; set; } = 64;

        /// <summary>Keep masks whose predicted IoU is above this (default 0.8; 0 = no filter).</summary>
        public float PredIouThreshold { get; set; } = 0.8f;

        /// <summary>Keep masks whose stability score is at least this (default 0.95; 0 = no filter).</summary>
        public float StabilityScoreThreshold { get; set; } = 0.95f;

        /// <summary>The stability score compares the mask at MaskThreshold +- this (default 1.0).</summary>
        public float StabilityScoreOffset { get; set; } = 1.0f;

        /// <summary>Logit threshold of a mask pixel (default 0).</summary>
        public float MaskThreshold { get; set; }

        /// <summary>Box IoU above which the lower-scored of two masks is dropped (default 0.7).</summary>
        public float BoxNmsThreshold { get; set; } = 0.7f;

        /// <summary>0 = off; else holes and specks of at most this many pixels of the decoder's mask resolution are removed first.</summary>
        public int MinMaskRegionArea { get; set; }

        internal unsafe SegEverythingOptions ToNative()
        {
            SegEverythingOptions o;
            Interop.Check(NativeMethods.seg_everything_options_default(&o));
            o.points_per_side = PointsPerSide;
            o.points_per_batch = PointsPerBatch;
            o.pred_iou_thresh = PredIouThreshold;
            o.stability_score_thresh = StabilityScoreThreshold;
            o.stability_score_offset = StabilityScoreOffset;
            o.mask_threshold = MaskThreshold;
            o.box_nms_thresh = BoxNmsThreshold;
            o.min_mask_region_area = MinMaskRegionArea;
            return o;
        }
    }

    /// <summary>One object found by <see cref="Sam2Segmenter.SegmentEverything"/>.</summary>
    public struct EverythingObject
    {
        /// <summary>Its value in <see cref="EverythingResult.Labels"/>: 1, 2, ... by predicted IoU, best first.</summary>
        public int Id;

        /// <summary>Box around the full mask (inclusive pixel indices as Left/Top and Right-1/Bottom-1: a Rectangle).</summary>
        public Rectangle Bounds;

        /// <summary>Pixels of the full mask (also those painted over by smaller objects in the label image).</summary>
        public long Area;

        /// <summary>The decoder's predicted IoU of the mask.</summary>
        public float PredictedIou;

        /// <summary>The mask's stability score.</summary>
        public float StabilityScore;

        /// <summary>The prompt point that gave the mask, in image pixels.</summary>
        public PointF Point;
    }

    /// <summary>Every object of an image: a label image and one record per object.</summary>
    public sealed class EverythingResult
    {
        /// <summary>Width of the image and of <see cref="Labels"/>.</summary>
        public int Width { get; internal set; }

        /// <summary>Height of the image and of <see cref="Labels"/>.</summary>
        public int Height { get; internal set; }

        /// <summary>
        /// Row-major Width x Height labels: 0 = background, object k = k. Larger objects are painted first, so a
        /// smaller object lying on a larger one stays visible. At most 65535 objects (the best by predicted IoU).
        /// </summary>
        public ushort[] Labels { get; internal set; }

        /// <summary>The objects, best predicted IoU first (Objects[k - 1].Id == k).</summary>
        public IList<EverythingObject> Objects { get; internal set; }

        /// <summary>Prompts decoded (PointsPerSide²).</summary>
        public int Prompts { get; internal set; }

        /// <summary>Decoder runs: Prompts for decoders without a prompt batch axis, fewer for batched ones.</summary>
        public int DecoderRuns { get; internal set; }

        /// <summary>True when the cached image embedding was used (no encoder run).</summary>
        public bool EncoderReused { get; internal set; }

        /// <summary>Encoder time in milliseconds (0 when the cached embedding was used).</summary>
        public double EncoderMs { get; internal set; }

        /// <summary>Decoder time in milliseconds, all prompts together.</summary>
        public double DecoderMs { get; internal set; }

        /// <summary>Filters, NMS and masks in milliseconds.</summary>
        public double PostprocessMs { get; internal set; }

        /// <summary>The image with each object in its own colour (the caller disposes it).</summary>
        /// <param name="image">The picture segmented (same size).</param>
        /// <returns>A new 24bpp Bitmap.</returns>
        public Bitmap ToOverlay(Bitmap image)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            if (image.Width != Width || image.Height != Height) throw new ArgumentException("the image is not the segmented one's size", nameof(image));
            var bmp = new Bitmap(Width, Height, PixelFormat.Format24bppRgb);
            using (var g = Graphics.FromImage(bmp))
                g.DrawImage(image, 0, 0, Width, Height);
            var data = bmp.LockBits(new Rectangle(0, 0, Width, Height), ImageLockMode.ReadWrite, PixelFormat.Format24bppRgb);
            try
            {
                var row = new byte[data.Stride];
                for (int y = 0; y < Height; y++)
                {
                    IntPtr p = data.Scan0 + y * data.Stride;
                    System.Runtime.InteropServices.Marshal.Copy(p, row, 0, data.Stride);
                    for (int x = 0; x < Width; x++)
                    {
                        int l = Labels[y * Width + x];
                        if (l == 0) continue;
                        Color c = ColorOf(l);
                        row[3 * x] = (byte)((row[3 * x] + c.B) / 2);
                        row[3 * x + 1] = (byte)((row[3 * x + 1] + c.G) / 2);
                        row[3 * x + 2] = (byte)((row[3 * x + 2] + c.R) / 2);
                    }
                    System.Runtime.InteropServices.Marshal.Copy(row, 0, p, data.Stride);
                }
            }
            finally
            {
                bmp.UnlockBits(data);
            }
            return bmp;
        }

        /// <summary>The colour <see cref="ToOverlay"/> gives object <paramref name="id"/> (hues a golden-ratio step apart).</summary>
        /// <param name="id">An object id.</param>
        /// <returns>A saturated colour.</returns>
        public static Color ColorOf(int id)
        {
            double hue = (id * 0.618034) % 1.0 * 6.0;
            double x = 1.0 - Math.Abs(hue % 2.0 - 1.0);
            double r, g, b;
            switch ((int)hue)
            {
                case 0: r = 1; g = x; b = 0; break;
                case 1: r = x; g = 1; b = 0; break;
                case 2: r = 0; g = 1; b = x; break;
                case 3: r = 0; g = x; b = 1; break;
                case 4: r = x; g = 0; b = 1; break;
                default: r = 1; g = 0; b = x; break;
            }
            return Color.FromArgb((int)(r * 255), (int)(g * 255), (int)(b * 255));
        }
    }

    public sealed partial class Sam2Segmenter
    {
        /// <summary>
        /// Every object in the image given to SetImage, as SAM2's automatic mask generator finds them (a grid of
        /// prompts, predicted-IoU and stability filters, box NMS). Uses the cached image embedding: no encoder run
        /// after SetImage or clicks on the same image.
        /// </summary>
        /// <param name="options">The options; null for the defaults.</param>
        /// <returns>The label image and the objects.</returns>
        /// <exception cref="InvalidOperationException">No image has been set.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        /// <exception cref="SegException">segrt refused an option (InvalidArgument, naming it) or the decoder failed.</exception>
        public unsafe EverythingResult SegmentEverything(EverythingOptions options = null)
        {
            SegEverythingOptions o = (options ?? new EverythingOptions()).ToNative();
            byte[] pixels;
            int w, h;
            SegPixelFormat format;
            lock (_gate)
            {
                RequireImage();
                pixels = _imagePixels;
                w = _imageWidth;
                h = _imageHeight;
                format = _imageFormat;
            }
            var result = new EverythingResult { Width = w, Height = h, Labels = new ushort[(long)w * h] };
            using (var image = ImageInput.FromBytes(pixels, w, h, 0, format))
            using (var lease = Acquire())
            {
                SegImage desc = image.Desc;
                UIntPtr n;
                // the size query runs everything; the call with buffers is served by the session's last result
                var first = new SegEverythingInfo { struct_size = (uint)sizeof(SegEverythingInfo) };
                Interop.Check(NativeMethods.seg_sam2_everything(lease.Session, &desc, &o, null, null, UIntPtr.Zero, &n, &first));
                var records = new SegEverythingObject[Math.Max((int)n, 1)];
                var info = new SegEverythingInfo { struct_size = (uint)sizeof(SegEverythingInfo) };
                fixed (ushort* labels = result.Labels)
                fixed (SegEverythingObject* recs = records)
                {
                    var l = new SegLabelImage { data = labels, width = w, height = h, stride = 0 };
                    Interop.Check(NativeMethods.seg_sam2_everything(lease.Session, &desc, &o, &l, recs, n, &n, &info));
                }
                var objects = new List<EverythingObject>((int)n);
                for (int i = 0; i < (int)n; i++)
                {
                    var r = records[i];
                    objects.Add(new EverythingObject
                    {
                        Id = (int)r.id,
                        Bounds = Rectangle.FromLTRB(r.x0, r.y0, r.x1 + 1, r.y1 + 1),
                        Area = (long)r.area,
                        PredictedIou = r.predicted_iou,
                        StabilityScore = r.stability_score,
                        Point = new PointF(r.point_x, r.point_y),
                    });
                }
                result.Objects = objects;
                result.Prompts = (int)first.prompts;
                result.DecoderRuns = (int)first.decoder_runs;
                result.EncoderReused = first.encoder_reused != 0;
                result.EncoderMs = first.encoder_ms;
                result.DecoderMs = first.decoder_ms;
                result.PostprocessMs = first.postprocess_ms;
            }
            return result;
        }

        /// <summary><see cref="SegmentEverything"/> on a thread-pool thread.</summary>
        /// <param name="options">The options; null for the defaults.</param>
        /// <param name="cancellationToken">Cancels the call if it has not started yet.</param>
        /// <returns>A task giving the label image and the objects.</returns>
        public Task<EverythingResult> SegmentEverythingAsync(EverythingOptions options = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Task.Run(() =>
            {
                cancellationToken.ThrowIfCancellationRequested();
                return SegmentEverything(options);
            }, cancellationToken);
        }
    }
}
