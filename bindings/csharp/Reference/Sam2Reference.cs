using System;
using System.Collections.Generic;
using System.Drawing;
using System.Threading;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// A taught object ("teach once, find it in every image"): made from an image and the object's mask on a
    /// <see cref="Sam2Segmenter"/>, it finds the same object or part in new images without a click: the best match
    /// with a presence decision, or every instance (<see cref="FindOptions.All"/>). It holds embeddings, not images;
    /// <see cref="Save"/> writes it to a file that <c>Load</c> reads in another process (a station teaches once
    /// and runs for months). It is used with segmenters of the model it was taught with; another model is refused.
    /// Taught on a <see cref="Sam2VideoModel"/> instead, it uses SAM2's memory (the memory approach: each example a
    /// conditioning frame prompted with its mask, each find one tracking step against them) and is used with video
    /// models of the same files.
    /// Thread-safe: any number of threads may find at once (on the same or different segmenters); an <c>Add</c>
    /// meanwhile takes effect for the finds that start after it.
    /// </summary>
    public sealed class Sam2Reference : IDisposable
    {
        readonly ReferenceHandle _handle;

        Sam2Reference(ReferenceHandle handle)
        {
            _handle = handle;
        }

        /// <summary>Teaches a new reference from <paramref name="image"/> and the object's <paramref name="mask"/> on it.</summary>
        /// <param name="segmenter">The SAM2 pair to teach on (its cached image becomes this one).</param>
        /// <param name="image">The pixels (a Bitmap converts implicitly).</param>
        /// <param name="mask">Row-major Width x Height bytes, non-zero = the object (e.g. a <see cref="Sam2Result.Mask"/>).</param>
        /// <param name="cancellationToken">Cancels the call, also while the encoder or the decoder runs.</param>
        /// <param name="progress">Receives the encoder's progress; null for none.</param>
        /// <returns>The reference (the caller disposes it).</returns>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="ArgumentException">The mask does not hold Width x Height bytes.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the mask (empty, the whole image) or the image.</exception>
        public static Sam2Reference Teach(Sam2Segmenter segmenter, InputImage image, byte[] mask,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            return TeachOn(segmenter, image, mask, cancellationToken, progress);
        }

        /// <summary>
        /// Teaches a new reference on a SAM2 video model: the memory approach. The image and its mask become a
        /// conditioning frame of the video modules (prompted with the mask, as the official video predictor's
        /// add_new_mask); each <see cref="Find(Sam2VideoModel, InputImage, FindOptions, CancellationToken, IProgress{SegrtProgress})"/>
        /// tracks the new image against the examples' memory alone, never adding it. The best match only
        /// (<see cref="FindOptions.All"/> is refused), no refinement; the score is the sigmoid of the object score
        /// (the official predictor's decision is 0.5). It finds the same object or part again, not a category.
        /// </summary>
        /// <param name="model">The video model to teach on.</param>
        /// <param name="image">The pixels (a Bitmap converts implicitly).</param>
        /// <param name="mask">Row-major Width x Height bytes, non-zero = the object.</param>
        /// <param name="cancellationToken">Cancels the call.</param>
        /// <param name="progress">Receives the modules' progress; null for none.</param>
        /// <returns>The reference (the caller disposes it); it is used with video models of the same files only.</returns>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="ArgumentException">The mask does not hold Width x Height bytes.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the mask (empty, the whole image) or the image.</exception>
        public static Sam2Reference Teach(Sam2VideoModel model, InputImage image, byte[] mask,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            return TeachOn(model, image, mask, cancellationToken, progress);
        }

        static unsafe Sam2Reference TeachOn(Segmenter segmenter, InputImage image, byte[] mask,
            CancellationToken cancellationToken, IProgress<SegrtProgress> progress)
        {
            if (segmenter == null) throw new ArgumentNullException(nameof(segmenter));
            Interop.EnsureLoaded();
            SegReference* native = null;
            Interop.Check(NativeMethods.seg_reference_create(&native));
            var reference = new Sam2Reference(new ReferenceHandle(native));
            try
            {
                reference.AddOn(segmenter, image, mask, cancellationToken, progress);
            }
            catch
            {
                reference.Dispose();
                throw;
            }
            return reference;
        }

        /// <summary>Loads a reference saved with <see cref="Save"/>, for use with <paramref name="segmenter"/>'s model.</summary>
        /// <param name="segmenter">A segmenter of the model the reference was taught with.</param>
        /// <param name="path">The file.</param>
        /// <returns>The reference (the caller disposes it).</returns>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="SegrtException">The file is missing (ModelNotFound), damaged (ModelInvalid), or of another model or a newer format (ModelUnsupported).</exception>
        public static Sam2Reference Load(Sam2Segmenter segmenter, string path)
        {
            return LoadOn(segmenter, path);
        }

        /// <summary>Loads a reference taught on a video model (<see cref="Teach(Sam2VideoModel, InputImage, byte[], CancellationToken, IProgress{SegrtProgress})"/>) and saved with <see cref="Save"/>.</summary>
        /// <param name="model">A video model of the files the reference was taught with.</param>
        /// <param name="path">The file.</param>
        /// <returns>The reference (the caller disposes it).</returns>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="SegrtException">The file is missing (ModelNotFound), damaged (ModelInvalid), of another model or a newer format (ModelUnsupported), or taught on a SAM2 image pair (InvalidArgument).</exception>
        public static Sam2Reference Load(Sam2VideoModel model, string path)
        {
            return LoadOn(model, path);
        }

        static unsafe Sam2Reference LoadOn(Segmenter segmenter, string path)
        {
            if (segmenter == null) throw new ArgumentNullException(nameof(segmenter));
            if (path == null) throw new ArgumentNullException(nameof(path));
            SegReference* native = null;
            using (var lease = segmenter.Acquire())
            fixed (byte* p = Interop.Utf8z(path))
                Interop.Check(NativeMethods.seg_reference_load(lease.Session, p, &native));
            return new Sam2Reference(new ReferenceHandle(native));
        }

        /// <summary>Teaches one more example (another view, another copy); later finds use all of them.</summary>
        /// <param name="segmenter">A segmenter of the model the reference was taught with.</param>
        /// <param name="image">The pixels (a Bitmap converts implicitly).</param>
        /// <param name="mask">Row-major Width x Height bytes, non-zero = the object.</param>
        /// <param name="cancellationToken">Cancels the call; the reference stays as it was.</param>
        /// <param name="progress">Receives the encoder's progress; null for none.</param>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="ArgumentException">The mask does not hold Width x Height bytes.</exception>
        /// <exception cref="ObjectDisposedException">The reference has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the mask, the image, or a segmenter of another model.</exception>
        public void Add(Sam2Segmenter segmenter, InputImage image, byte[] mask,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            AddOn(segmenter, image, mask, cancellationToken, progress);
        }

        /// <summary>Teaches a reference taught on a video model one more example: one more conditioning frame.</summary>
        /// <param name="model">A video model of the files the reference was taught with.</param>
        /// <param name="image">The pixels (a Bitmap converts implicitly).</param>
        /// <param name="mask">Row-major Width x Height bytes, non-zero = the object.</param>
        /// <param name="cancellationToken">Cancels the call; the reference stays as it was.</param>
        /// <param name="progress">Receives the modules' progress; null for none.</param>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="ArgumentException">The mask does not hold Width x Height bytes.</exception>
        /// <exception cref="ObjectDisposedException">The reference has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the mask, the image, another model, or a reference taught on a SAM2 image pair (ModelUnsupported).</exception>
        public void Add(Sam2VideoModel model, InputImage image, byte[] mask,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            AddOn(model, image, mask, cancellationToken, progress);
        }

        unsafe void AddOn(Segmenter segmenter, InputImage image, byte[] mask,
            CancellationToken cancellationToken, IProgress<SegrtProgress> progress)
        {
            if (segmenter == null) throw new ArgumentNullException(nameof(segmenter));
            if (image == null) throw new ArgumentNullException(nameof(image));
            if (mask == null) throw new ArgumentNullException(nameof(mask));
            using (var pixels = image.Lock())
            {
                if (mask.LongLength != (long)pixels.Width * pixels.Height)
                    throw new ArgumentException("the mask holds " + mask.LongLength + " bytes; the image is " + pixels.Width + "x" + pixels.Height, nameof(mask));
                using (var lease = _handle.Acquire(this))
                using (var session = segmenter.Acquire())
                using (var control = CallControl.Begin(cancellationToken, progress))
                fixed (byte* m = mask)
                {
                    SegImage desc = pixels.Desc;
                    var md = new SegMask { data = m, width = pixels.Width, height = pixels.Height, stride = 0 };
                    CallControl.Check(control, NativeMethods.seg_reference_add(lease.Reference, session.Session, &desc, &md, CallControl.NativeOf(control)));
                }
            }
        }

        /// <summary>Saves the reference to <paramref name="path"/> (written whole or not at all).</summary>
        /// <param name="path">The file to write.</param>
        /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The reference has been disposed.</exception>
        /// <exception cref="SegrtException">The file could not be written.</exception>
        public unsafe void Save(string path)
        {
            if (path == null) throw new ArgumentNullException(nameof(path));
            using (var lease = _handle.Acquire(this))
            fixed (byte* p = Interop.Utf8z(path))
                Interop.Check(NativeMethods.seg_reference_save(lease.Reference, p));
        }

        /// <summary>Finds the taught object in <paramref name="image"/> (the encoder runs only when the pixels differ from the segmenter's cached image).</summary>
        /// <param name="segmenter">A segmenter of the model the reference was taught with.</param>
        /// <param name="image">The pixels (a Bitmap converts implicitly), read only during the call.</param>
        /// <param name="options">Null for the defaults (the best match, threshold 0.6, refined).</param>
        /// <param name="cancellationToken">Cancels the call, also while the encoder or the decoder runs.</param>
        /// <param name="progress">Receives the encoder's progress; null for none.</param>
        /// <returns>The mask (and with <see cref="FindOptions.All"/> the label image) and one record per match.</returns>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
        /// <exception cref="ObjectDisposedException">The reference or the segmenter has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">A segmenter of another model, or segrt refused the image.</exception>
        public FindResult Find(Sam2Segmenter segmenter, InputImage image, FindOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            return FindOn(segmenter, image, options, cancellationToken, progress);
        }

        /// <summary>Finds the object taught on a video model in <paramref name="image"/>: the image is tracked as the frame after the examples, against their memory alone (it never joins it).</summary>
        /// <param name="model">A video model of the files the reference was taught with.</param>
        /// <param name="image">The pixels (a Bitmap converts implicitly), read only during the call.</param>
        /// <param name="options">Null for the defaults (threshold 0.6 on the object score's sigmoid; 0.5 is the official predictor's decision). <see cref="FindOptions.All"/> is refused.</param>
        /// <param name="cancellationToken">Cancels the call.</param>
        /// <param name="progress">Receives the modules' progress; null for none.</param>
        /// <returns>The mask and one record (<see cref="FindResult.Refined"/> is false).</returns>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="ObjectDisposedException">The reference or the model has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">Another model, every instance asked for, a reference taught on a SAM2 image pair, or segrt refused the image.</exception>
        public FindResult Find(Sam2VideoModel model, InputImage image, FindOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            return FindOn(model, image, options, cancellationToken, progress);
        }

        unsafe FindResult FindOn(Segmenter segmenter, InputImage image, FindOptions options,
            CancellationToken cancellationToken, IProgress<SegrtProgress> progress)
        {
            if (segmenter == null) throw new ArgumentNullException(nameof(segmenter));
            if (image == null) throw new ArgumentNullException(nameof(image));
            options = options ?? new FindOptions();
            SegFindOptions o = options.ToNative();
            using (var pixels = image.Lock())
            {
                int w = pixels.Width, h = pixels.Height;
                var result = new FindResult { Width = w, Height = h, Mask = new byte[(long)w * h], Labels = options.All ? new ushort[(long)w * h] : null };
                int capacity = options.All ? options.MaxInstances : 1;
                var records = new SegFound[capacity];
                var info = new SegFindInfo { struct_size = (uint)sizeof(SegFindInfo) };
                UIntPtr count;
                using (var lease = _handle.Acquire(this))
                using (var session = segmenter.Acquire())
                using (var control = CallControl.Begin(cancellationToken, progress))
                fixed (byte* m = result.Mask)
                fixed (ushort* l = result.Labels)
                fixed (SegFound* r = records)
                {
                    SegImage desc = pixels.Desc;
                    var md = new SegMask { data = m, width = w, height = h, stride = 0 };
                    var ld = new SegLabelImage { data = l, width = w, height = h, stride = 0 };
                    CallControl.Check(control, NativeMethods.seg_reference_find(lease.Reference, session.Session, &desc, &o, &md, options.All ? &ld : null,
                        r, (UIntPtr)sizeof(SegFound), (UIntPtr)capacity, &count, &info, CallControl.NativeOf(control)));
                }
                var found = new List<FoundObject>((int)count);
                for (int i = 0; i < (int)count; i++)
                {
                    SegFound f = records[i];
                    found.Add(new FoundObject
                    {
                        Id = (int)f.id,
                        Present = f.present != 0,
                        Score = f.score,
                        PredictedIou = f.predicted_iou,
                        Bounds = f.area == 0 ? Rectangle.Empty : Rectangle.FromLTRB(f.x0, f.y0, f.x1 + 1, f.y1 + 1),
                        Area = (long)f.area,
                        Point = new PointF(f.point_x, f.point_y),
                        Similarity = f.similarity,
                        Colour = f.colour,
                    });
                }
                result.Found = found;
                result.Present = found.Exists(f => f.Present);
                result.Refined = info.refinement == 0; // SEG_REFINEMENT_DONE
                result.DecoderRuns = (int)info.decoder_runs;
                result.EncoderReused = info.encoder_reused != 0;
                result.EncoderMs = info.encoder_ms;
                result.MapsMs = info.maps_ms;
                result.DecoderMs = info.decoder_ms;
                result.PostprocessMs = info.postprocess_ms;
                return result;
            }
        }

        /// <summary>True once <see cref="Dispose"/> has been called.</summary>
        public bool IsDisposed
        {
            get { return _handle.IsClosing; }
        }

        /// <summary>Releases the reference: later calls throw <see cref="ObjectDisposedException"/>; a running call finishes first. Calling it again does nothing.</summary>
        public void Dispose()
        {
            _handle.BeginClose();
        }
    }
}
