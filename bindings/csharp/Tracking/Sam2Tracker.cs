using System;
using System.Collections.Generic;
using System.Drawing;
using System.Runtime.ExceptionServices;
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
    /// each further frame. A volume (<see cref="TrackerOptions.Volume"/>): <c>AddFrame</c> every slice, click a middle
    /// slice, <c>Propagate(PropagationDirection.BothWays)</c>, correct a slice, propagate again. Every frame must have
    /// the first frame's size.
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

        /// <summary>The tracker whose Propagate delegate is running on this thread (null when none).</summary>
        [ThreadStatic] static Sam2Tracker t_propagating;

        internal Sam2Tracker(TrackHandle handle)
        {
            _handle = handle;
        }

        /// <summary>
        /// A reference on the track for one call. Refused inside this tracker's own Propagate delegate: segrt holds the
        /// track's lock while the delegate runs, so the call would wait for the propagation, which waits for the delegate.
        /// </summary>
        /// <exception cref="InvalidOperationException">Called from this tracker's Propagate delegate.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        TrackHandle.Lease Enter()
        {
            if (ReferenceEquals(t_propagating, this))
                throw new InvalidOperationException("a Propagate delegate must not call its own tracker (the call would wait for the propagation running it); keep what it needs from the TrackedFrame");
            return _handle.Acquire(this);
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
                using (var lease = Enter())
                {
                    SegTrackState s = default(SegTrackState);
                    s.struct_size = (uint)sizeof(SegTrackState);
                    Interop.Check(NativeMethods.seg_track_state(lease.Track, &s));
                    return new TrackerState((int)s.objects, s.frames, s.width, s.height, (int)s.held_frames, (int)s.held_outputs,
                        (int)s.num_frames, (int)s.keep_frames, s.tracking_started != 0, s.volume != 0, s.corrections_as_conditioning != 0);
                }
            }
        }

        /// <summary>Forgets every frame, object and memory: the tracker is as new (same model and options). A running call finishes first.</summary>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        public unsafe void Reset()
        {
            using (var lease = Enter())
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
            using (var lease = Enter())
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
        /// starts a new object, on any frame, also after tracking started (it has no mask on the frames before it was tracked there). On a frame not yet tracked for the
        /// object it becomes a conditioning frame; on a tracked frame it corrects the mask there.
        /// </summary>
        /// <param name="frame">The frame's index; -1 = the last frame added, -2 the one before, ...</param>
        /// <param name="objectId">The object's id (any int, chosen by the caller).</param>
        /// <param name="points">The clicks, in frame pixels.</param>
        /// <returns>Every object on that frame (the prompted one with its new mask).</returns>
        /// <remarks>To cancel it or follow its progress, call <see cref="AddPrompt"/> (the same call, with a token and a reporter).</remarks>
        /// <exception cref="ArgumentException">No point given.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="SegrtException">segrt refused the prompt (e.g. a frame never added or no longer held, a click outside the frame).</exception>
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
        /// Prompts object <paramref name="objectId"/> with its mask on a frame already added, as the official predictor's
        /// add_new_mask: the mask becomes the object's output on that frame as it is (its object score +10), replacing
        /// earlier prompts of the object there; a frame not tracked yet becomes a conditioning frame.
        /// </summary>
        /// <param name="frame">The frame's index; -1 = the last frame added.</param>
        /// <param name="objectId">The object's id.</param>
        /// <param name="mask">Row-major bytes of the frame's size (<see cref="TrackerState.Width"/> x <see cref="TrackerState.Height"/>), non-zero = the object.</param>
        /// <param name="cancellationToken">Cancels the call, also while it runs (the prompt is then not kept and the tracker is as before).</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Frames"/> reports; null for none.</param>
        /// <returns>Every object on that frame.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="mask"/> is null.</exception>
        /// <exception cref="ArgumentException">The mask does not hold the frame's Width x Height bytes.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the mask (empty; a video model exported without mask_downsample).</exception>
        public unsafe TrackedFrame AddMask(long frame, int objectId, byte[] mask,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (mask == null) throw new ArgumentNullException(nameof(mask));
            TrackerState state = State;
            if (mask.LongLength != (long)state.Width * state.Height)
                throw new ArgumentException("the mask holds " + mask.LongLength + " bytes; the frames are " + state.Width + "x" + state.Height, nameof(mask));
            int w = state.Width, h = state.Height;
            // A new object adds one record: room for it from the start.
            return RunOutputs(1, 0, 0, cancellationToken, progress, (lease, objects, masks, capacity, count, info, control) =>
            {
                fixed (byte* m = mask)
                {
                    var md = new SegMask { data = m, width = w, height = h, stride = 0 };
                    return NativeMethods.seg_track_add_mask(lease.Track, frame, objectId, &md, objects, (UIntPtr)sizeof(SegTrackObject),
                        masks, capacity, count, info, control);
                }
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

        // ---- volumes: propagation, removing objects, clearing prompts ----

        /// <summary>
        /// Propagates every object through the track's frames (SAM2's <c>propagate_in_video</c>) and collects every frame:
        /// from <paramref name="startFrame"/> (null: the earliest frame an object was prompted on) forward, in reverse or
        /// both ways, each frame tracked for every object (conditioning frames keep their masks; frames tracked before are
        /// tracked again). Prompts given since the last tracking are used first. The volume workflow: click a structure on
        /// a middle slice, <see cref="PropagationDirection.BothWays"/>, correct a slice with <see cref="AddPoints"/>, propagate
        /// again. Every frame of the request must still be held: make the tracker a volume
        /// (<see cref="TrackerOptions.Volume"/>) to go back over all of them.
        /// </summary>
        /// <param name="direction">Which way to go from the start frame.</param>
        /// <param name="startFrame">The frame to start from (an index; -1 = the last frame); null = the earliest prompted frame.</param>
        /// <param name="maxFrames">Frames to track past the start in each direction; -1 = to the end.</param>
        /// <param name="cancellationToken">Stops the call between frames or inside one; the frames tracked before stay tracked.</param>
        /// <param name="progress">Receives <see cref="ProgressStage.Propagation"/> (the share of the request's frames done) and
        /// <see cref="ProgressStage.Frames"/> reports; null for none.</param>
        /// <returns>Every frame in the order tracked (<see cref="PropagationResult.Frames"/>: both ways, the start frame twice) and the summed times.</returns>
        /// <exception cref="ArgumentException"><paramref name="direction"/> is not a <see cref="PropagationDirection"/>.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the request (e.g. InvalidArgument: no prompt to start from, a frame no
        /// longer held, a start frame never added) or a model failed.</exception>
        public PropagationResult Propagate(PropagationDirection direction = PropagationDirection.Forward, long? startFrame = null, long maxFrames = -1,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            var frames = new List<TrackedFrame>();
            PropagationResult r = RunPropagation(direction, startFrame, maxFrames, frames.Add, cancellationToken, progress);
            r.Frames = frames.AsReadOnly();
            return r;
        }

        /// <summary>
        /// Propagates every object through the track's frames as the other overload does, handing each frame to
        /// <paramref name="onFrame"/> as soon as it is tracked (on the calling thread, inside the native call) instead of
        /// collecting them: a long volume then needs the memory of one frame at a time, and a viewer can show slices as
        /// they come. <paramref name="onFrame"/> must not call this tracker (<see cref="InvalidOperationException"/>: segrt
        /// holds the track while it runs). To stop, cancel the token (from <paramref name="onFrame"/> too); an exception thrown by
        /// <paramref name="onFrame"/> stops the call and is rethrown as it was. Either way the frames delivered stay tracked.
        /// </summary>
        /// <param name="direction">Which way to go from the start frame.</param>
        /// <param name="startFrame">The frame to start from (an index; -1 = the last frame); null = the earliest prompted frame.</param>
        /// <param name="maxFrames">Frames to track past the start in each direction; -1 = to the end.</param>
        /// <param name="onFrame">Receives each frame (its own copy of the masks; per-frame times are 0, the result sums them).
        /// WinForms: marshal to the UI thread with <c>BeginInvoke</c> (the call usually runs on a worker thread).</param>
        /// <param name="cancellationToken">Stops the call between frames or inside one.</param>
        /// <param name="progress">As for the other overload; null for none.</param>
        /// <returns>The frames delivered, the last frame and the summed times (<see cref="PropagationResult.Frames"/> is empty).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="onFrame"/> is null.</exception>
        /// <exception cref="ArgumentException"><paramref name="direction"/> is not a <see cref="PropagationDirection"/>.</exception>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="SegrtException">segrt refused the request or a model failed.</exception>
        public PropagationResult Propagate(PropagationDirection direction, long? startFrame, long maxFrames, Action<TrackedFrame> onFrame,
            CancellationToken cancellationToken = default(CancellationToken), IProgress<SegrtProgress> progress = null)
        {
            if (onFrame == null) throw new ArgumentNullException(nameof(onFrame));
            PropagationResult r = RunPropagation(direction, startFrame, maxFrames, onFrame, cancellationToken, progress);
            r.Frames = Array.AsReadOnly(new TrackedFrame[0]);
            return r;
        }

        /// <summary>
        /// Removes object <paramref name="objectId"/> from the track (SAM2's <c>remove_object</c>): its prompts, masks and
        /// memory; the other objects are unchanged.
        /// </summary>
        /// <param name="objectId">An id given when prompting.</param>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="SegrtException">InvalidArgument: no such object (e.g. removed already); the track is unchanged.</exception>
        public unsafe void RemoveObject(int objectId)
        {
            using (var lease = Enter())
                Interop.Check(NativeMethods.seg_track_remove_object(lease.Track, objectId));
        }

        /// <summary>
        /// Clears object <paramref name="objectId"/>'s prompts on frame <paramref name="frame"/> (SAM2's
        /// <c>clear_all_prompts_in_frame</c>): a frame it was clicked on becomes a tracked frame again, and later prompts
        /// there start afresh.
        /// </summary>
        /// <param name="frame">The frame's index; -1 = the last frame.</param>
        /// <param name="objectId">An id given when prompting.</param>
        /// <returns>Every object on that frame.</returns>
        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        /// <exception cref="SegrtException">InvalidArgument: no such object or frame.</exception>
        public unsafe TrackedFrame ClearPrompts(long frame, int objectId)
        {
            return RunOutputs(0, 0, 0, default(CancellationToken), null, (lease, objects, masks, capacity, count, info, control) =>
                NativeMethods.seg_track_clear_prompts(lease.Track, frame, objectId, objects, (UIntPtr)sizeof(SegTrackObject), masks, capacity, count, info));
        }

        // Kept alive for the process: native code holds a pointer to its thunk while propagations run.
        static readonly unsafe NativeMethods.seg_track_propagate_on_frame_delegate s_onFrame = OnFrame;

        /// <summary>The buffers of one propagation and where its frames go; reached from <see cref="OnFrame"/> through a GCHandle.</summary>
        sealed class Delivery
        {
            internal Sam2Tracker Tracker;
            internal Action<TrackedFrame> Sink;
            internal CancellationToken Token;
            internal SegTrackObject[] Objects;
            internal byte[][] Masks;
            internal int Width, Height, Delivered;
            internal Exception Error;
        }

        /// <summary>Called by segrt after each frame, on the thread running the propagation; must never let an exception unwind into native code.</summary>
        static unsafe int OnFrame(long frame, UIntPtr count, void* userData)
        {
            try
            {
                var d = GCHandle.FromIntPtr((IntPtr)userData).Target as Delivery;
                if (d == null) return 0;
                try
                {
                    int n = Math.Min((int)count, d.Objects.Length);
                    var masks = new byte[n][];
                    for (int i = 0; i < n; i++) masks[i] = d.Masks.Length > i && d.Masks[i] != null ? (byte[])d.Masks[i].Clone() : new byte[(long)d.Width * d.Height];
                    var info = default(SegTrackInfo);
                    info.frame = frame;
                    d.Delivered++;
                    Sam2Tracker outer = t_propagating;
                    t_propagating = d.Tracker;
                    try
                    {
                        d.Sink(Frame(d.Objects, masks, n, d.Width, d.Height, info));
                    }
                    finally
                    {
                        t_propagating = outer;
                    }
                    return d.Token.IsCancellationRequested ? 0 : 1;
                }
                catch (Exception e)
                {
                    d.Error = e;
                    return 0;
                }
            }
            catch
            {
                return 0;
            }
        }

        unsafe PropagationResult RunPropagation(PropagationDirection direction, long? startFrame, long maxFrames, Action<TrackedFrame> sink,
            CancellationToken cancellationToken, IProgress<SegrtProgress> progress)
        {
            if (direction != PropagationDirection.Forward && direction != PropagationDirection.Reverse && direction != PropagationDirection.BothWays)
                throw new ArgumentException("not a PropagationDirection: " + (int)direction, nameof(direction));
            cancellationToken.ThrowIfCancellationRequested();
            var request = new SegPropagation { struct_size = (uint)sizeof(SegPropagation) };
            Interop.Check(NativeMethods.seg_propagation_default(&request));
            request.direction = (int)direction;
            request.use_start_frame = startFrame.HasValue ? 1u : 0u;
            request.start_frame = startFrame.GetValueOrDefault();
            request.max_frames = maxFrames;
            using (var lease = Enter())
            using (var control = CallControl.Begin(cancellationToken, progress))
            {
                SegTrackState s = default(SegTrackState);
                s.struct_size = (uint)sizeof(SegTrackState);
                Interop.Check(NativeMethods.seg_track_state(lease.Track, &s));
                int capacity = (int)s.objects;
                for (int attempt = 0; ; attempt++)
                {
                    bool withMasks = s.width > 0 && s.height > 0;
                    var d = new Delivery
                    {
                        Tracker = this,
                        Sink = sink,
                        Token = cancellationToken,
                        Objects = new SegTrackObject[Math.Max(capacity, 1)],
                        Masks = new byte[capacity][],
                        Width = s.width,
                        Height = s.height,
                    };
                    var pins = new GCHandle[capacity];
                    var masks = new SegMask[Math.Max(capacity, 1)];
                    GCHandle self = GCHandle.Alloc(d);
                    try
                    {
                        for (int i = 0; i < capacity && withMasks; i++)
                        {
                            d.Masks[i] = new byte[(long)s.width * s.height];
                            pins[i] = GCHandle.Alloc(d.Masks[i], GCHandleType.Pinned);
                            masks[i].data = (byte*)pins[i].AddrOfPinnedObject();
                            masks[i].width = s.width;
                            masks[i].height = s.height;
                        }
                        UIntPtr count = UIntPtr.Zero;
                        SegTrackInfo info = default(SegTrackInfo);
                        info.struct_size = (uint)sizeof(SegTrackInfo);
                        SegPropagation req = request;
                        SegStatus st;
                        fixed (SegTrackObject* o = d.Objects)
                        fixed (SegMask* m = masks)
                            st = NativeMethods.seg_track_propagate(lease.Track, &req, o, (UIntPtr)sizeof(SegTrackObject), withMasks ? m : null, (UIntPtr)capacity,
                                &count, s_onFrame, (void*)GCHandle.ToIntPtr(self), &info, CallControl.NativeOf(control));
                        // An object added by another thread between the state read and the call: segrt answers with the count first.
                        if (st == SegStatus.SEG_BUFFER_TOO_SMALL && attempt < 8 && (int)count > capacity && d.Delivered == 0)
                        {
                            capacity = (int)count;
                            continue;
                        }
                        if (d.Error != null) ExceptionDispatchInfo.Capture(d.Error).Throw();
                        CallControl.Check(control, st);
                        var result = new PropagationResult { FrameCount = d.Delivered, LastFrame = info.frame };
                        result.SetTimes(info);
                        return result;
                    }
                    finally
                    {
                        self.Free();
                        for (int i = 0; i < pins.Length; i++)
                            if (pins[i].IsAllocated) pins[i].Free();
                    }
                }
            }
        }

        /// <summary>A TrackedFrame of the first <paramref name="n"/> records and the given masks.</summary>
        static TrackedFrame Frame(SegTrackObject[] objects, byte[][] masks, int n, int w, int h, SegTrackInfo info)
        {
            var records = new TrackedObject[n];
            for (int i = 0; i < n; i++)
            {
                SegTrackObject r = objects[i];
                records[i] = new TrackedObject(r.object_id, r.present != 0, r.has_output != 0, r.score, (long)r.area,
                    r.area > 0 ? Rectangle.FromLTRB(r.x0, r.y0, r.x1 + 1, r.y1 + 1) : Rectangle.Empty);
            }
            var frame = new TrackedFrame { Frame = info.frame, Width = w, Height = h, Objects = Array.AsReadOnly(records), Masks = Array.AsReadOnly(masks) };
            frame.SetTimes(info);
            return frame;
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
            using (var lease = Enter())
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
                        var result = new byte[n][];
                        for (int i = 0; i < n; i++) result[i] = maskData[i] ?? new byte[(long)w * h];
                        return Frame(objects, result, n, w, h, info);
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
