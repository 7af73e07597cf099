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
