using System;
using System.Collections.Generic;
using System.Drawing;
using System.Runtime.InteropServices;
using System.Threading;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// One video being tracked with SAM2: feed frames in order (<see cref="AddFrame"/>, or
    /// <see cref="Next"/> to add and track in one call), prompt objects with clicks or a box on a frame
    /// already added, then track frame after frame; every call returns every object's mask on that frame.
    /// Typical streaming use: <c>AddFrame(first)</c>, <c>AddPoints(0, 1, click)</c>, then <c>Next(frame)</c> for
    /// each further frame. Every frame must have the first frame's size.
    /// Thread-safe: segrt serialises the calls on one tracker (a lock per track), so calls from several threads
    /// run one after another in the order they take the lock; separate trackers run at once.
    /// <see cref="Dispose"/> refuses every call that starts after it with <see cref="ObjectDisposedException"/>;
    /// a call already running finishes normally, and the track is freed when it returns.
    /// </summary>
    public sealed class Sam2Tracker : IDisposable
    {
        readonly TrackHandle _handle;

        /// <summary>Test hook: runs after a frame-output call read the track's state and before its first native call.</summary>
        internal Action AfterStateHook;

        internal Sam2Tracker(TrackHandle handle)
        {
            _handle = handle;
        }

        /// <summary>True once <see cref="Dispose"/> has been called (a call started before it may still be finishing).</summary>
        public bool IsDisposed
        {
            get { return _handle.IsClosing; }
        }

        /// <summary>Releases the track: later calls throw <see cref="ObjectDisposedException"/>; a running call finishes first. Calling it again does nothing.</summary>
        public void Dispose()
        {
            _handle.BeginClose();
        }

        /// <summary>What the track holds now: objects, frames, frame size, memory held, options.</summary>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        public unsafe TrackerState State
        {
            get
            {
                using (var lease = _handle.Acquire(this))
                {
                    SegTrackState s = default(SegTrackState);
                    s.struct_size = (uint)sizeof(SegTrackState);
                    Interop.Check(NativeMethods.seg_track_state(lease.Track, &s));
                    return new TrackerState((int)s.objects, s.frames, s.width, s.height, (int)s.held_frames, (int)s.held_outputs,
                        (int)s.num_frames, (int)s.keep_frames, s.tracking_started != 0);
                }
            }
        }

        /// <summary>Forgets every frame, object and memory: the tracker is as new (same model and options). A running call finishes first.</summary>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        public unsafe void Reset()
        {
            using (var lease = _handle.Acquire(this))
                Interop.Check(NativeMethods.seg_track_reset(lease.Track));
        }

        // ---- frames ----

        /// <summary>Adds the next frame and encodes it (no tracking).</summary>
        /// <param name="image">The frame (a Bitmap converts implicitly); read only during the call.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs; the frame is then not added and the tracker is as before.</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Frames"/> reports as the video models run; null for none.</param>
        /// <returns>The frame's index (0, 1, ...).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the frame (e.g. InvalidArgument: not the first frame's size) or the encoder failed.</exception>
        public unsafe long AddFrame(InputImage image, CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            cancellationToken.ThrowIfCancellationRequested();
            using (var input = image.Lock())
            using (var lease = _handle.Acquire(this))
            using (var control = CallControl.Begin(cancellationToken, progress))
            {
                SegImage desc = input.Desc;
                long index = -1;
                CallControl.Check(control, NativeMethods.seg_track_add_frame(lease.Track, &desc, &index, null, CallControl.NativeOf(control)));
                return index;
            }
        }

        /// <summary>
        /// Streaming: adds the next frame and tracks it (one native call, under the track's lock). Needs at least
        /// one object prompted.
        /// </summary>
        /// <param name="image">The frame (a Bitmap converts implicitly); read only during the call.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs; the frame is then not added and the tracker is as before.</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Frames"/> reports as the video models run; null for none.</param>
        /// <returns>Every object's mask on the new frame.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the call (e.g. InvalidArgument: no object prompted yet, or not the first frame's size) or a model failed.</exception>
        public unsafe TrackedFrame Next(InputImage image, CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            cancellationToken.ThrowIfCancellationRequested();
            using (var input = image.Lock())
            {
                SegImage desc = input.Desc;
                // Masks have the track's frame size; before the first frame, the image's. A frame of another size is
                // then refused by segrt as such (InvalidArgument), not as a mask mismatch.
                return RunOutputs(0, input.Width, input.Height, cancellationToken, progress, (lease, objects, masks, capacity, count, info, control) =>
                {
                    SegImage d = desc;
                    return NativeMethods.seg_track_next(lease.Track, &d, objects, (UIntPtr)sizeof(SegTrackObject), masks, capacity, count, info, control);
                });
            }
        }

        // ---- prompts and tracking ----

        /// <summary>
        /// Prompts object <paramref name="objectId"/> with clicks on a frame already added: label foreground =
        /// "this object", background = "not this". Replaces the object's earlier clicks on that frame. A new id
        /// starts a new object (allowed until the first frame is tracked). On a frame not yet tracked for the
        /// object it becomes a conditioning frame; on a tracked frame it corrects the mask there.
        /// </summary>
        /// <param name="frame">The frame's index; -1 = the last frame added, -2 the one before, ...</param>
        /// <param name="objectId">The object's id (any int, chosen by the caller).</param>
        /// <param name="points">The clicks, in frame pixels.</param>
        /// <returns>Every object on that frame (the prompted one with its new mask).</returns>
        /// <remarks>To cancel it or follow its progress, call <see cref="AddPrompt"/> (the same call, with a token and a reporter).</remarks>
        /// <exception cref="ArgumentException">No point given.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="SegrtException">segrt refused the prompt (e.g. a frame never added or no longer held, a new object after tracking started, a click outside the frame).</exception>
        public TrackedFrame AddPoints(long frame, int objectId, params Sam2Point[] points)
        {
            if (points == null || points.Length == 0) throw new ArgumentException("give at least one point", nameof(points));
            return AddPrompt(frame, objectId, points, null);
        }

        /// <summary>Prompts object <paramref name="objectId"/> with a box on a frame already added (see <see cref="AddPoints"/>).</summary>
        /// <param name="frame">The frame's index; -1 = the last frame added.</param>
        /// <param name="objectId">The object's id.</param>
        /// <param name="box">The box in frame pixels.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs (the tracker is then as before).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Frames"/> reports; null for none.</param>
        /// <returns>Every object on that frame.</returns>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the prompt.</exception>
        public TrackedFrame AddBox(long frame, int objectId, RectangleF box, CancellationToken cancellationToken = default(CancellationToken),
            IProgress<SegrtProgress> progress = null)
        {
            return AddPrompt(frame, objectId, null, box, cancellationToken, progress);
        }

        /// <summary>Prompts object <paramref name="objectId"/> with clicks and/or a box on a frame already added (see <see cref="AddPoints"/>).</summary>
        /// <param name="frame">The frame's index; -1 = the last frame added.</param>
        /// <param name="objectId">The object's id.</param>
        /// <param name="points">The clicks in frame pixels; null or empty for none.</param>
        /// <param name="box">The box in frame pixels; null for none.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs (the prompt is then not kept and the tracker is as before).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Frames"/> reports; null for none.</param>
        /// <returns>Every object on that frame.</returns>
        /// <exception cref="ArgumentException">Neither points nor a box given.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the prompt.</exception>
        public unsafe TrackedFrame AddPrompt(long frame, int objectId, IList<Sam2Point> points, RectangleF? box,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            int n = points != null ? points.Count : 0;
            if (n == 0 && !box.HasValue) throw new ArgumentException("give points, a box or both", nameof(points));
            SegPoint[] native = NativePrompts.Points(points);
            SegBox nativeBox = NativePrompts.Box(box);
            bool hasBox = box.HasValue;
            // A new object adds one record: room for it from the start.
            return RunOutputs(1, 0, 0, cancellationToken, progress, (lease, objects, masks, capacity, count, info, control) =>
            {
                SegBox b = nativeBox;
                fixed (SegPoint* p = native)
                    return NativeMethods.seg_track_add_prompt(lease.Track, frame, objectId, n > 0 ? p : null, (UIntPtr)n,
                        hasBox ? &b : null, objects, (UIntPtr)sizeof(SegTrackObject), masks, capacity, count, info, control);
            });
        }

        /// <summary>
        /// Tracks frame <paramref name="frame"/> for every object: each object without a prompt there gets SAM2's
        /// memory-conditioned mask, remembered for the frames after. Frames are normally tracked in order, each once.
        /// </summary>
        /// <param name="frame">The frame's index; -1 = the last frame added.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs (the frame then stays untracked and the tracker is as before).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Frames"/> reports as the video models run; null for none.</param>
        /// <returns>Every object's mask on that frame.</returns>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the call (e.g. a frame never added or no longer held, no object) or a model failed.</exception>
        public unsafe TrackedFrame TrackFrame(long frame, CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            return RunOutputs(0, 0, 0, cancellationToken, progress, (lease, objects, masks, capacity, count, info, control) =>
                NativeMethods.seg_track_frame(lease.Track, frame, objects, (UIntPtr)sizeof(SegTrackObject), masks, capacity, count, info, control));
        }

        internal unsafe delegate SegStatus OutputCall(TrackHandle.Lease lease, SegTrackObject* objects, SegMask* masks, UIntPtr capacity, UIntPtr* count, SegTrackInfo* info,
            SegCallControl* control);

        /// <summary>
        /// Runs a call that writes every object of a frame: buffers for the objects the track has now
        /// (+<paramref name="extra"/>) at its frame size (or <paramref name="width"/> x <paramref name="height"/>
        /// before the first frame); when another thread's prompt added an object in between, segrt answers
        /// BufferTooSmall with the count before running anything, and the call is made again with that many.
        /// </summary>
        unsafe TrackedFrame RunOutputs(int extra, int width, int height, CancellationToken cancellationToken, IProgress<SegrtProgress> progress, OutputCall call)
        {
            cancellationToken.ThrowIfCancellationRequested();
            using (var lease = _handle.Acquire(this))
            using (var control = CallControl.Begin(cancellationToken, progress))
            {
                SegTrackState s = default(SegTrackState);
                s.struct_size = (uint)sizeof(SegTrackState);
                Interop.Check(NativeMethods.seg_track_state(lease.Track, &s));
                int w = s.width > 0 ? s.width : width;
                int h = s.height > 0 ? s.height : height;
                int capacity = (int)s.objects + extra;
                var hook = AfterStateHook;
                if (hook != null) hook();
                for (int attempt = 0; ; attempt++)
                {
                    // No frame yet (w = 0): segrt refuses the call itself; give no masks so that it says why.
                    bool withMasks = w > 0 && h > 0;
                    var maskData = new byte[capacity][];
                    var pins = new GCHandle[capacity];
                    var masks = new SegMask[Math.Max(capacity, 1)];
                    var objects = new SegTrackObject[Math.Max(capacity, 1)];
                    try
                    {
                        for (int i = 0; i < capacity && withMasks; i++)
                        {
                            maskData[i] = new byte[(long)w * h];
                            pins[i] = GCHandle.Alloc(maskData[i], GCHandleType.Pinned);
                            masks[i].data = (byte*)pins[i].AddrOfPinnedObject();
                            masks[i].width = w;
                            masks[i].height = h;
                        }
                        UIntPtr count = UIntPtr.Zero;
                        SegTrackInfo info = default(SegTrackInfo);
                        info.struct_size = (uint)sizeof(SegTrackInfo);
                        SegStatus st;
                        fixed (SegTrackObject* o = objects)
                        fixed (SegMask* m = masks)
                            st = call(lease, o, withMasks ? m : null, (UIntPtr)capacity, &count, &info, CallControl.NativeOf(control));
                        if (st == SegStatus.SEG_BUFFER_TOO_SMALL && attempt < 8 && (int)count > capacity)
                        {
                            capacity = (int)count;
                            continue;
                        }
                        CallControl.Check(control, st);
                        int n = (int)count;
                        var records = new TrackedObject[n];
                        var result = new byte[n][];
                        for (int i = 0; i < n; i++)
                        {
                            SegTrackObject r = objects[i];
                            records[i] = new TrackedObject(r.object_id, r.present != 0, r.has_output != 0, r.score, (long)r.area,
                                r.area > 0 ? Rectangle.FromLTRB(r.x0, r.y0, r.x1 + 1, r.y1 + 1) : Rectangle.Empty);
                            result[i] = maskData[i] ?? new byte[(long)w * h];
                        }
                        return new TrackedFrame
                        {
                            Frame = info.frame,
                            Width = w,
                            Height = h,
                            Objects = Array.AsReadOnly(records),
                            Masks = Array.AsReadOnly(result),
                            PreprocessMs = info.preprocess_ms,
                            ImageEncoderMs = info.image_encoder_ms,
                            MemoryAttentionMs = info.memory_attention_ms,
                            MaskDecoderMs = info.mask_decoder_ms,
                            MemoryEncoderMs = info.memory_encoder_ms,
                            PostprocessMs = info.postprocess_ms,
                        };
                    }
                    finally
                    {
                        for (int i = 0; i < capacity && i < pins.Length; i++)
                            if (pins[i].IsAllocated) pins[i].Free();
                    }
                }
            }
        }
    }
}
