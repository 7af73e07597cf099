// SAM2 video tracking through the wrapper (Sam2VideoModel, Sam2Tracker): the official predictor's masks on
// the reference clip, streaming (sync and async), Dispose rules, bad frames, threads and tasks.
using System;
using System.Collections.Generic;
using System.Drawing;
using System.IO;
using System.Linq;
using System.Runtime.Serialization;
using System.Runtime.Serialization.Json;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

static partial class SegrtTests
{
    static void RunTrackTests()
    {
        Test("tracking: TrackerOptions defaults are seg_track_options_default's; bad options refused", TrackerOptionsDefaults);
        Test("tracking: the official predictor's masks and flags on the reference clip (clicks, 14 frames, correction)", TrackOfficialPredictor);
        Test("tracking: Next, NextAsync and the byte[] overload stream the same masks; cancellation before the call adds nothing", TrackStreaming);
        Test("tracking: ToOverlay blends exactly the mask pixels", TrackOverlay);
        Test("tracking: Dispose rules; a tracker outlives its disposed model", TrackDisposeRules);
        Test("tracking: bad frames and prompts are SegExceptions with the native status", TrackBadInputs);
        Test("tracking: an object added between the state read and the call is answered by a retry with segrt's count", TrackBufferRetry);
        Test("tracking: several threads calling Next on one tracker all complete, each frame once", TrackThreadsOnOneTracker);
        Test("tracking: trackers from one model on several tasks give the single-thread masks", TrackTasksOnOneModel);
        Test("tracking: a volume clicked on a middle slice, propagated both ways (collected and per frame), corrected, propagated again", TrackVolumeBothWays);
        Test("tracking: stopping a propagation (token, the delegate's exception, a frame budget), progress, RemoveObject, ClearPrompts", TrackVolumeStopAndEdit);
    }

    // ---- the reference clip ----

    [DataContract]
    sealed class ClipIndex
    {
        [DataMember(Name = "frames")] public string[] Frames;
        [DataMember(Name = "events")] public ClipEvent[] Events;
        [DataMember(Name = "propagation")] public ClipFrame[] Propagation;
    }

    [DataContract]
    sealed class ClipEvent
    {
        [DataMember(Name = "frame")] public long Frame;
        [DataMember(Name = "obj_id")] public int ObjId;
        [DataMember(Name = "points")] public double[][] Points;
        [DataMember(Name = "labels")] public int[] Labels;
        [DataMember(Name = "masks")] public string[] Masks;
        [DataMember(Name = "object_present")] public bool ObjectPresent;
    }

    [DataContract]
    sealed class ClipFrame
    {
        [DataMember(Name = "frame")] public long Frame;
        [DataMember(Name = "objects")] public ClipObject[] Objects;
    }

    [DataContract]
    sealed class ClipObject
    {
        [DataMember(Name = "obj_id")] public int ObjId;
        [DataMember(Name = "object_present")] public bool ObjectPresent;
        [DataMember(Name = "mask")] public string Mask;
        [DataMember(Name = "mask_area")] public long MaskArea;
    }

    static string VideoDir { get { return Path.Combine(Repo, "models", "sam2", "video"); } }
    static string ClipDir { get { return Path.Combine(VideoDir, "reference"); } }

    static ClipIndex s_clip;

    static ClipIndex Clip()
    {
        if (s_clip == null)
            using (var s = new MemoryStream(Encoding.UTF8.GetBytes(File.ReadAllText(Path.Combine(ClipDir, "index.json")))))
                s_clip = (ClipIndex)new DataContractJsonSerializer(typeof(ClipIndex)).ReadObject(s);
        return s_clip;
    }

    /// <summary>The clip's frames as 24bpp Bitmaps (the caller disposes them).</summary>
    static Bitmap[] ClipFrames()
    {
        return Clip().Frames.Select(f => Load(Path.Combine(ClipDir, f))).ToArray();
    }

    static Sam2VideoModel VideoModel()
    {
        return new Sam2VideoModel(VideoDir, new SegmenterOptions { IntraThreads = 2 });
    }

    static Sam2Point[] PointsOf(ClipEvent e)
    {
        return e.Points.Select((p, i) => new Sam2Point((float)p[0], (float)p[1], e.Labels[i] == 1)).ToArray();
    }

    static double IdenticalPct(byte[] mask, byte[] reference)
    {
        Check(mask.Length == reference.Length, "mask sizes");
        long same = 0;
        for (int i = 0; i < mask.Length; i++) if ((mask[i] != 0) == (reference[i] != 0)) same++;
        return 100.0 * same / mask.Length;
    }

    /// <summary>Every record describes its mask (area and box computed here), and masks are 0/255.</summary>
    static void CheckRecords(TrackedFrame f, string what)
    {
        Check(f.Objects.Count == f.Masks.Count, what + ": one mask per record");
        for (int k = 0; k < f.Objects.Count; k++)
        {
            byte[] m = f.Masks[k];
            Check(m.Length == f.Width * f.Height, what + ": mask size");
            long area = 0;
            int x0 = int.MaxValue, y0 = int.MaxValue, x1 = -1, y1 = -1;
            for (int i = 0; i < m.Length; i++)
            {
                Check(m[i] == 0 || m[i] == 255, what + ": mask values are 0/255");
                if (m[i] == 0) continue;
                area++;
                int x = i % f.Width, y = i / f.Width;
                x0 = Math.Min(x0, x); y0 = Math.Min(y0, y); x1 = Math.Max(x1, x); y1 = Math.Max(y1, y);
            }
            var o = f.Objects[k];
            var bounds = area > 0 ? Rectangle.FromLTRB(x0, y0, x1 + 1, y1 + 1) : Rectangle.Empty;
            Check(o.Area == area && o.Bounds == bounds, what + ": object " + o.ObjectId + " record " + o.Area + " " + o.Bounds + " vs mask " + area + " " + bounds);
            Check(o.Present || area == 0, what + ": object " + o.ObjectId + " is absent but its mask has " + area + " pixels");
        }
    }

    static void SameFrames(TrackedFrame a, TrackedFrame b, string what)
    {
        Check(a.Frame == b.Frame && a.Objects.Count == b.Objects.Count, what + ": frame " + a.Frame + "/" + b.Frame + ", objects");
        for (int k = 0; k < a.Objects.Count; k++)
        {
            Check(a.Objects[k].Equals(b.Objects[k]), what + ": record of object " + k);
            Check(Same(a.Masks[k], b.Masks[k]), what + ": mask of object " + k);
        }
    }

    // ---- tests ----

    static unsafe void TrackerOptionsDefaults()
    {
        var n = new Segrt.Native.SegTrackOptions { struct_size = (uint)sizeof(Segrt.Native.SegTrackOptions) };
        Check(Segrt.Native.NativeMethods.seg_track_options_default(&n) == Segrt.Native.SegStatus.SEG_OK, "native defaults");
        Check(n.struct_size == (uint)sizeof(Segrt.Native.SegTrackOptions), "struct_size kept");
        var zeroed = default(Segrt.Native.SegTrackOptions);
        Check(Segrt.Native.NativeMethods.seg_track_options_default(&zeroed) == Segrt.Native.SegStatus.SEG_INVALID_ARGUMENT
            && zeroed.num_frames == 0 && zeroed.keep_frames == 0, "a struct without its size is refused, nothing written");
        var o = new TrackerOptions();
        Check(o.NumFrames == (int)n.num_frames && o.KeepFrames == (int)n.keep_frames, "defaults " + o.NumFrames + "/" + o.KeepFrames + " vs native " + n.num_frames + "/" + n.keep_frames);
        using (var model = VideoModel())
        {
            Throws<ArgumentOutOfRangeException>(() => model.CreateTracker(new TrackerOptions { KeepFrames = -1 }), "negative KeepFrames");
            using (var t = model.CreateTracker(new TrackerOptions { NumFrames = 14, KeepFrames = 3 }))
            {
                var s = t.State;
                Check(s.NumFrames == 14 && s.KeepFrames == 3 && s.Frames == 0 && s.Objects == 0 && s.Width == 0 && !s.TrackingStarted, "options reach segrt, empty track");
            }
            using (var t = model.CreateTracker())
                Check(t.State.KeepFrames == n.keep_frames, "null options are segrt's defaults");
            Check(model.SessionInfo.RawJson.Length > 0, "session info of a video model");
        }
    }

    static void TrackOfficialPredictor()
    {
        var clip = Clip();
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var t = model.CreateTracker(new TrackerOptions { NumFrames = frames.Length, KeepFrames = 0 }))
            {
                for (int i = 0; i < frames.Length; i++)
                    Check(t.AddFrame(frames[i]) == i, "frame index " + i);
                double worst = 100;
                Action<TrackedFrame, string[], bool[], string> compare = (f, masks, flags, what) =>
                {
                    CheckRecords(f, what);
                    Check(f.Masks.Count == masks.Length, what + ": " + f.Masks.Count + " masks, reference " + masks.Length);
                    for (int k = 0; k < masks.Length; k++)
                    {
                        double p = IdenticalPct(f.Masks[k], LoadMask(Path.Combine(ClipDir, masks[k])));
                        worst = Math.Min(worst, p);
                        Check(p >= 99.5, what + ", object " + k + ": " + p.ToString("F3") + " % identical pixels");
                    }
                    var got = f.Objects.Select(o => o.Present).ToArray();
                    Check(got.SequenceEqual(flags), what + ": present flags " + string.Join(",", got) + " vs " + string.Join(",", flags));
                };
                for (int n = 0; n < 3; n++)
                {
                    var e = clip.Events[n];
                    var f = t.AddPoints(e.Frame, e.ObjId, PointsOf(e));
                    Check(f.Frame == e.Frame && f.Objects.Count == (n == 0 ? 1 : 2), "click " + n + ": frame and objects");
                    Check(f.ObjectOf(e.ObjId).Value.Present == e.ObjectPresent, "click " + n + ": clicked object present");
                    compare(f, e.Masks, f.Objects.Select(o => o.Present).ToArray(), "click " + n);
                }
                foreach (var rec in clip.Propagation)
                {
                    var f = t.TrackFrame(rec.Frame);
                    Check(f.Frame == rec.Frame && f.Objects.Select(o => o.ObjectId).SequenceEqual(rec.Objects.Select(o => o.ObjId)), "frame " + rec.Frame + ": index and object ids");
                    Check(f.Objects.All(o => o.HasOutput), "frame " + rec.Frame + ": every object has an output");
                    compare(f, rec.Objects.Select(o => o.Mask).ToArray(), rec.Objects.Select(o => o.ObjectPresent).ToArray(), "frame " + rec.Frame);
                    Check(f.ImageEncoderMs == 0 && f.TotalMs >= 0, "frame " + rec.Frame + ": no encoder run (frames were encoded when added)");
                    bool prompted = clip.Events.Take(3).Any(e => e.Frame == rec.Frame);
                    Check(prompted || (f.MemoryAttentionMs > 0 && f.MaskDecoderMs > 0), "frame " + rec.Frame + ": memory attention and decoder ran");
                }
                var c = clip.Events[3];
                var corr = t.AddPoints(c.Frame, c.ObjId, PointsOf(c));
                Check(corr.ObjectOf(2).Value.Present && c.ObjectPresent, "correction: object 2 present");
                compare(corr, c.Masks, corr.Objects.Select(o => o.Present).ToArray(), "correction");
                Console.WriteLine("      worst mask: " + worst.ToString("F3") + " % identical pixels to the official predictor");
                var s = t.State;
                Check(s.Objects == 2 && s.Frames == 14 && s.Width == 320 && s.Height == 240 && s.TrackingStarted, "state after the clip");
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    /// <summary>Frame 0 added and object 1 clicked at (60, 100): the start of every streaming test.</summary>
    static TrackedFrame StartStream(Sam2Tracker t, Bitmap first)
    {
        Check(t.AddFrame(first) == 0, "first frame index");
        return t.AddPoints(-1, 1, new Sam2Point(60, 100, true));
    }

    static void TrackStreaming()
    {
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var sync = model.CreateTracker(new TrackerOptions { KeepFrames = 2 }))
            using (var mixed = model.CreateTracker(new TrackerOptions { KeepFrames = 2 }))
            {
                var a0 = StartStream(sync, frames[0]);
                var b0 = StartStream(mixed, frames[0]);
                SameFrames(a0, b0, "prompt");
                Check(a0.Objects.Count == 1 && a0.Objects[0].ObjectId == 1 && a0.Objects[0].Area > 0, "the click gives a mask");
                // Nothing prompted on a tracker: Next says why.
                using (var empty = model.CreateTracker())
                    ThrowsSegrt(Status.InvalidArgument, () => empty.Next(frames[0]), "Next before any prompt");
                // A cancelled token: the call never starts, no frame is added.
                using (var cts = new CancellationTokenSource())
                {
                    cts.Cancel();
                    var task = Task.Run(() => mixed.Next(frames[1], cts.Token), cts.Token);
                    try { task.Wait(); } catch (AggregateException) { }
                    Check(task.IsCanceled, "a cancelled Next on the caller's Task.Run is Canceled, status " + task.Status);
                    Check(mixed.State.Frames == 1, "a cancelled Next added no frame");
                }
                for (int i = 1; i < frames.Length; i++)
                {
                    var a = sync.Next(frames[i]);
                    TrackedFrame b;
                    if (i % 3 == 0) b = Task.Run(() => mixed.Next(frames[i])).Result;
                    else if (i % 3 == 1) b = mixed.Next(InputImage.FromPixels(PackedBytes(frames[i], 3), 320, 240, 0, PixelLayout.Bgr24));
                    else b = Task.Run(() => mixed.Next(InputImage.FromPixels(PackedBytes(frames[i], 3), 320, 240, 0, PixelLayout.Bgr24))).Result;
                    Check(a.Frame == i, "Next gives frame " + i + ", got " + a.Frame);
                    CheckRecords(a, "frame " + i);
                    SameFrames(a, b, "frame " + i);
                    Check(a.ImageEncoderMs > 0 && a.MaskDecoderMs > 0 && a.MemoryAttentionMs > 0 && a.MemoryEncoderMs > 0 && a.TotalMs >= a.ImageEncoderMs,
                        "frame " + i + ": per-stage times");
                    if (i == frames.Length - 1)
                        Console.WriteLine(string.Format("      last frame: encoder {0:F1} ms, attention {1:F1} ms, decoder {2:F1} ms, memory encoder {3:F1} ms, total {4:F1} ms",
                            a.ImageEncoderMs, a.MemoryAttentionMs, a.MaskDecoderMs, a.MemoryEncoderMs, a.TotalMs));
                }
                var s = mixed.State;
                Check(s.Objects == 1 && s.Frames == 14 && s.HeldFrames == 2 && s.KeepFrames == 2 && s.TrackingStarted, "state: 14 frames, 2 held");
                ThrowsSegrt(Status.InvalidArgument, () => mixed.TrackFrame(3), "a frame no longer held");
                // Reset: as new; the same stream again gives the same masks.
                mixed.Reset();
                s = mixed.State;
                Check(s.Frames == 0 && s.Objects == 0 && !s.TrackingStarted && s.Width == 0, "Reset empties the track");
                SameFrames(a0, StartStream(mixed, frames[0]), "prompt after Reset");
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    static void TrackOverlay()
    {
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var t = model.CreateTracker())
            {
                var f = StartStream(t, frames[0]);
                using (var overlay = f.ToOverlay(frames[0]))
                {
                    var before = PackedBytes(frames[0], 3);
                    var after = PackedBytes(overlay, 3);
                    byte[] mask = f.MaskOf(1);
                    long changedInside = 0, changedOutside = 0;
                    for (int i = 0; i < mask.Length; i++)
                    {
                        bool changed = before[3 * i] != after[3 * i] || before[3 * i + 1] != after[3 * i + 1] || before[3 * i + 2] != after[3 * i + 2];
                        if (mask[i] != 0) { if (changed) changedInside++; }
                        else if (changed) changedOutside++;
                    }
                    Check(changedOutside == 0, changedOutside + " pixels outside the mask changed");
                    Check(changedInside > 0.9 * f.Objects[0].Area, changedInside + " of " + f.Objects[0].Area + " mask pixels coloured");
                }
                Check(f.MaskOf(99) == null && f.ObjectOf(99) == null, "no such object");
                using (var small = new Bitmap(10, 10))
                    Throws<ArgumentException>(() => f.ToOverlay(small), "overlay on another size");
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    static void TrackDisposeRules()
    {
        var frames = ClipFrames();
        try
        {
            var model = VideoModel();
            var t = model.CreateTracker();
            StartStream(t, frames[0]);
            var other = model.CreateTracker();
            other.Dispose();
            Check(other.IsDisposed, "IsDisposed");
            other.Dispose(); // twice: nothing
            Throws<ObjectDisposedException>(() => other.Next(frames[1]), "Next after Dispose");
            Throws<ObjectDisposedException>(() => other.AddFrame(frames[1]), "AddFrame after Dispose");
            Throws<ObjectDisposedException>(() => other.AddPoints(0, 1, new Sam2Point(1, 1, true)), "AddPoints after Dispose");
            Throws<ObjectDisposedException>(() => other.TrackFrame(0), "TrackFrame after Dispose");
            Throws<ObjectDisposedException>(() => { var s = other.State; }, "State after Dispose");
            Throws<ObjectDisposedException>(() => other.Reset(), "Reset after Dispose");
            var task = Task.Run(() => other.Next(frames[1]));
            try { task.Wait(); } catch (AggregateException) { }
            Check(task.IsFaulted && task.Exception.InnerException is ObjectDisposedException, "Next on a background thread after Dispose faults with ObjectDisposedException");

            // The model disposed while a tracker lives: the tracker keeps it and goes on.
            model.Dispose();
            Check(model.IsDisposed, "model disposed");
            Throws<ObjectDisposedException>(() => model.CreateTracker(), "CreateTracker after the model's Dispose");
            for (int i = 1; i < 4; i++)
            {
                var f = t.Next(frames[i]);
                Check(f.Frame == i && f.Objects.Count == 1 && f.Objects[0].HasOutput, "frame " + i + " tracked after the model's Dispose");
            }
            Check(t.State.Frames == 4, "4 frames");
            t.Dispose();
            Throws<ObjectDisposedException>(() => t.Next(frames[4]), "Next after Dispose");

            // Undisposed trackers (and their model) are freed by finalizers without a crash.
            for (int i = 0; i < 3; i++)
            {
                var m = VideoModel();
                var tr = m.CreateTracker();
                tr.AddFrame(frames[0]);
                m.Dispose();
            }
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    static void TrackBadInputs()
    {
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var t = model.CreateTracker())
            {
                ThrowsSegrt(Status.InvalidArgument, () => t.TrackFrame(0), "TrackFrame before any frame");
                Throws<ArgumentNullException>(() => t.AddFrame((Bitmap)null), "null Bitmap");
                Throws<ArgumentException>(() => t.AddPrompt(0, 1, null, null), "a prompt with neither points nor box");
                Throws<ArgumentException>(() => t.AddPoints(0, 1), "AddPoints with no point");
                StartStream(t, frames[0]);
                using (var small = new Bitmap(160, 120, System.Drawing.Imaging.PixelFormat.Format24bppRgb))
                {
                    var e = ThrowsSegrt(Status.InvalidArgument, () => t.AddFrame(small), "AddFrame of another size");
                    Check(e.NativeMessage.Contains("160") && e.NativeMessage.Contains("320"), "the message names both sizes: " + e.NativeMessage);
                    ThrowsSegrt(Status.InvalidArgument, () => t.Next(small), "Next with a frame of another size");
                }
                Check(t.State.Frames == 1, "refused frames were not added");
                var ex = Throws<SegrtException>(() => t.AddPoints(5, 1, new Sam2Point(10, 10, true)), "a prompt on a frame never added");
                Check(ex.Status == Status.InvalidArgument, "frame never added: " + ex.Status + " " + ex.NativeMessage);
                Throws<SegrtException>(() => t.AddPoints(0, 1, new Sam2Point(float.NaN, 10, true)), "a NaN click");
                var f = t.Next(frames[1]);
                Check(f.Frame == 1, "a good frame after the refused ones");
                // A new object after tracking started is allowed (as in SAM2's predictor); it has no output before its frame.
                var added = t.AddPoints(1, 2, new Sam2Point(250, 50, true));
                Check(added.Objects.Count == 2 && added.Objects[1].ObjectId == 2 && added.Objects[1].HasOutput, "a new object after tracking started");
                Check(t.State.Objects == 2, "the new object is in the track");
                t.RemoveObject(2);
                ThrowsSegrt(Status.InvalidArgument, () => t.RemoveObject(2), "an object removed already");
                Check(t.State.Objects == 1, "object 2 removed");
            }
            ThrowsSegrt(Status.ModelNotFound, () => new Sam2VideoModel(Path.Combine(Repo, "no-such-video-dir")), "a missing model folder");
            Throws<ArgumentNullException>(() => new Sam2VideoModel(null), "null folder");
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    static void TrackBufferRetry()
    {
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var t = model.CreateTracker())
            {
                StartStream(t, frames[0]);
                int fired = 0;
                // The outer call sizes its buffers for 1 object + the new one; the hook adds another object first
                // (a nested call, which runs the hook too), so segrt answers BufferTooSmall with 3 and the wrapper retries.
                t.AfterStateHook = () => { if (fired++ == 0) t.AddPoints(0, 2, new Sam2Point(250, 50, true)); };
                var f = t.AddPoints(0, 3, new Sam2Point(160, 200, true));
                t.AfterStateHook = null;
                Check(fired == 2, "the hook ran for the outer and the nested call: " + fired);
                Check(f.Objects.Select(o => o.ObjectId).SequenceEqual(new[] { 1, 2, 3 }), "three objects: " + string.Join(",", f.Objects.Select(o => o.ObjectId)));
                CheckRecords(f, "after the retry");
                Check(t.State.Objects == 3, "3 objects in the track");
                // The same records and masks as asking again now (the frame is not tracked yet: TrackFrame(0) consolidates it).
                var again = t.TrackFrame(0);
                for (int k = 0; k < 3; k++)
                    Check(Same(again.Masks[k], f.Masks[k]), "object " + f.Objects[k].ObjectId + ": the retried call's mask is the track's");
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    static void TrackThreadsOnOneTracker()
    {
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var t = model.CreateTracker(new TrackerOptions { KeepFrames = 4 }))
            {
                StartStream(t, frames[0]);
                const int threads = 4, perThread = 3;
                var got = new List<long>();
                var errors = new List<Exception>();
                var pixels = frames.Select(b => PackedBytes(b, 3)).ToArray();
                var workers = Enumerable.Range(0, threads).Select(k => new Thread(() =>
                {
                    try
                    {
                        for (int j = 0; j < perThread; j++)
                        {
                            var f = t.Next(InputImage.FromPixels(pixels[1 + k * perThread + j], 320, 240, 0, PixelLayout.Bgr24));
                            CheckRecords(f, "thread " + k);
                            lock (got) got.Add(f.Frame);
                        }
                    }
                    catch (Exception e)
                    {
                        lock (errors) errors.Add(e);
                    }
                })).ToList();
                workers.ForEach(w => w.Start());
                workers.ForEach(w => w.Join());
                Check(errors.Count == 0, "errors: " + string.Join(" | ", errors.Select(e => e.Message)));
                got.Sort();
                Check(got.SequenceEqual(Enumerable.Range(1, threads * perThread).Select(i => (long)i)), "each frame index once: " + string.Join(",", got));
                var s = t.State;
                Check(s.Frames == 1 + threads * perThread && s.HeldFrames == 4, "frames counted: " + s.Frames + ", held " + s.HeldFrames);
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    static void TrackTasksOnOneModel()
    {
        var frames = ClipFrames();
        try
        {
            var pixels = frames.Select(b => PackedBytes(b, 3)).ToArray();
            using (var model = VideoModel())
            {
                Func<List<TrackedFrame>> run = () =>
                {
                    using (var t = model.CreateTracker(new TrackerOptions { KeepFrames = 2 }))
                    {
                        var list = new List<TrackedFrame>();
                        t.AddFrame(InputImage.FromPixels(pixels[0], 320, 240, 0, PixelLayout.Bgr24));
                        list.Add(t.AddPoints(0, 1, new Sam2Point(60, 100, true)));
                        list.Add(t.AddBox(0, 7, new RectangleF(200, 20, 100, 70)));
                        for (int i = 1; i < 6; i++) list.Add(t.Next(InputImage.FromPixels(pixels[i], 320, 240, 0, PixelLayout.Bgr24)));
                        return list;
                    }
                };
                var single = run();
                var boxed = single[1].ObjectOf(7);
                Check(single[1].Objects.Count == 2 && boxed.HasValue && boxed.Value.HasOutput, "the box adds object 7: " + string.Join(", ", single[1].Objects.Select(o => o.ObjectId + " area " + o.Area + " present " + o.Present)));
                var tasks = Enumerable.Range(0, 3).Select(_ => Task.Run(run)).ToArray();
                Task.WaitAll(tasks);
                foreach (var task in tasks)
                    for (int i = 0; i < single.Count; i++)
                        SameFrames(single[i], task.Result[i], "task result " + i);
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    // ---- volumes: the clip's 14 frames as the slices of a volume ----

    /// <summary>The middle slice of the volume tests and its clicks (the clip's correction of object 1 there).</summary>
    const long MidSlice = 5;
    static readonly Sam2Point[] MidClicks = { new Sam2Point(130, 112, true), new Sam2Point(220, 95, false) };

    /// <summary>A volume tracker (2 encodings cached) with every frame of the clip added, none encoded.</summary>
    static Sam2Tracker VolumeOf(Sam2VideoModel model, Bitmap[] frames, bool correctionsAsConditioning = false)
    {
        var t = model.CreateTracker(new TrackerOptions { NumFrames = frames.Length, KeepFrames = 2, Volume = true, CorrectionsAsConditioning = correctionsAsConditioning });
        var s = t.State;
        Check(s.Volume && s.CorrectionsAsConditioning == correctionsAsConditioning, "the volume options reach segrt");
        foreach (var f in frames) t.AddFrame(f);
        Check(t.State.HeldFrames == 0, "a volume's slices are encoded when first needed");
        return t;
    }

    static long[] BothWaysOrder(long start, long count)
    {
        var order = new List<long>();
        for (long i = start; i < count; i++) order.Add(i);
        for (long i = start; i >= 0; i--) order.Add(i);
        return order.ToArray();
    }

    static void TrackVolumeBothWays()
    {
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var collected = VolumeOf(model, frames))
            using (var streamed = VolumeOf(model, frames))
            {
                Check(!new TrackerOptions().Volume && !new TrackerOptions().CorrectionsAsConditioning, "volume and corrections off by default");
                var clicked = collected.AddPoints(MidSlice, 1, MidClicks);
                SameFrames(clicked, streamed.AddPoints(MidSlice, 1, MidClicks), "the click on the middle slice");
                Check(clicked.Objects[0].Present && clicked.Objects[0].Area > 0, "the click gives a mask");

                var all = collected.Propagate(PropagationDirection.BothWays, MidSlice);
                var order = BothWaysOrder(MidSlice, frames.Length);
                Check(all.Frames.Select(f => f.Frame).SequenceEqual(order) && all.FrameCount == order.Length,
                    "both ways: the middle slice to the last, then down to 0: " + string.Join(",", all.Frames.Select(f => f.Frame)));
                Check(all.LastFrame == 0 && all.MemoryAttentionMs > 0 && all.ImageEncoderMs > 0 && all.TotalMs >= all.ImageEncoderMs, "summed times, last frame 0");
                foreach (var f in all.Frames)
                {
                    CheckRecords(f, "slice " + f.Frame);
                    Check(f.Objects.Count == 1 && f.Objects[0].HasOutput && f.Width == 320 && f.Height == 240, "slice " + f.Frame + ": one object with an output");
                }
                Check(all.Frames.Where(f => f.Frame == MidSlice).All(f => Same(f.Masks[0], clicked.Masks[0])), "the clicked slice keeps its mask");
                Console.WriteLine("      slices (area, - = hidden): " + string.Join(" ", all.Frames.Select(f => f.Frame + ":" + (f.Objects[0].Present ? f.Objects[0].Area.ToString() : "-"))));

                // The per-frame delegate gets the same frames, each with its own masks, on the calling thread.
                var got = new List<TrackedFrame>();
                int thread = Thread.CurrentThread.ManagedThreadId;
                var r = streamed.Propagate(PropagationDirection.BothWays, MidSlice, -1, f =>
                {
                    Check(Thread.CurrentThread.ManagedThreadId == thread, "the delegate runs on the calling thread");
                    got.Add(f);
                    // A collection inside the native call: the callback's thunk and the pinned buffers must survive it.
                    if (got.Count == 2) { GC.Collect(); GC.WaitForPendingFinalizers(); }
                });
                Check(r.FrameCount == order.Length && r.Frames.Count == 0 && got.Count == order.Length, "the delegate got every frame");
                for (int i = 0; i < got.Count; i++) SameFrames(got[i], all.Frames[i], "per frame vs collected, #" + i);
                Check(!ReferenceEquals(got[0].Masks[0], got[1].Masks[0]), "each frame has its own mask arrays");

                // Correct a slice (a background click where the mask grew), propagate again from there both ways.
                var slice = all.Frames.First(f => f.Frame != MidSlice && f.Objects[0].Area > 0);
                var b = slice.Objects[0].Bounds;
                var fix = collected.AddPoints(slice.Frame, 1, MidClicks[0], new Sam2Point(b.Left + 0.5f, b.Top + b.Height / 2f, false));
                CheckRecords(fix, "the corrected slice");
                var again = collected.Propagate(PropagationDirection.BothWays, slice.Frame);
                Check(again.Frames.Select(f => f.Frame).SequenceEqual(BothWaysOrder(slice.Frame, frames.Length)), "propagated again from the corrected slice");
                foreach (var f in again.Frames) CheckRecords(f, "again, slice " + f.Frame);
                Check(again.Frames.Where(f => f.Frame == MidSlice).All(f => Same(f.Masks[0], clicked.Masks[0])), "the clicked slice still keeps its mask");
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    static void TrackVolumeStopAndEdit()
    {
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var t = VolumeOf(model, frames, correctionsAsConditioning: true))
            {
                ThrowsSegrt(Status.InvalidArgument, () => t.Propagate(), "nothing prompted to propagate from");
                Throws<ArgumentException>(() => t.Propagate((PropagationDirection)7), "a direction out of range");
                Throws<ArgumentNullException>(() => t.Propagate(PropagationDirection.Forward, null, -1, null), "a null delegate");
                t.AddPoints(MidSlice, 1, MidClicks);

                // The token cancelled from inside the delegate: OperationCanceledException after that frame.
                var seen = new List<long>();
                using (var cts = new CancellationTokenSource())
                {
                    Throws<OperationCanceledException>(() => t.Propagate(PropagationDirection.Forward, null, -1, f =>
                    {
                        seen.Add(f.Frame);
                        if (seen.Count == 2) cts.Cancel();
                    }, cts.Token), "cancelled by the token");
                }
                Check(seen.SequenceEqual(new[] { MidSlice, MidSlice + 1 }), "two frames before the stop: " + string.Join(",", seen));
                // An exception of the delegate comes back as itself; a token cancelled before the call runs nothing.
                var e = Throws<InvalidOperationException>(() => t.Propagate(PropagationDirection.Reverse, -1, -1, f => { throw new InvalidOperationException("mine"); }),
                    "the delegate's exception");
                Check(e.Message == "mine", "the delegate's own exception");
                // The delegate calling its own tracker would wait for the propagation running it: refused, not a deadlock.
                var inner = Throws<InvalidOperationException>(() => t.Propagate(PropagationDirection.Forward, null, 1, f => { var s = t.State; }),
                    "the tracker called from its own delegate");
                Check(inner.Message.Contains("its own tracker") && t.State.Objects == 1, "refused with the reason; the tracker works after it: " + inner.Message);
                using (var cts = new CancellationTokenSource())
                {
                    cts.Cancel();
                    int calls = 0;
                    Throws<OperationCanceledException>(() => t.Propagate(PropagationDirection.Forward, null, -1, f => calls++, cts.Token), "a cancelled token");
                    Check(calls == 0, "nothing delivered");
                }

                // A frame budget and progress: both ways from the last slice, 2 frames: forward has only the start.
                var progress = new SyncProgress();
                var r = t.Propagate(PropagationDirection.BothWays, -1, 2, default(CancellationToken), progress);
                long last = frames.Length - 1;
                Check(r.Frames.Select(f => f.Frame).SequenceEqual(new[] { last, last, last - 1, last - 2 }), "a budget of 2: " + string.Join(",", r.Frames.Select(f => f.Frame)));
                var stages = progress.Reports.Where(p => p.Stage == ProgressStage.Propagation).ToList();
                Check(stages.Count > 0 && stages.Last().Fraction == 1.0, "Propagation progress ends at 1");
                Check(progress.Reports.Any(p => p.Stage == ProgressStage.Frames), "Frames progress per model run");

                // A second object on another slice after tracking started, then removed; prompts cleared.
                var two = t.AddPoints(last, 2, new Sam2Point(250, 50, true));
                Check(two.Objects.Select(o => o.ObjectId).SequenceEqual(new[] { 1, 2 }), "a second object after tracking started");
                var both = t.Propagate(PropagationDirection.Reverse, last, 3);
                Check(both.Frames.All(f => f.Objects.Count == 2), "two objects per frame");
                t.RemoveObject(2);
                ThrowsSegrt(Status.InvalidArgument, () => t.RemoveObject(2), "removed twice");
                Check(t.State.Objects == 1, "one object left");
                var cleared = t.ClearPrompts(MidSlice, 1);
                Check(cleared.Frame == MidSlice && cleared.Objects.Count == 1, "ClearPrompts returns the slice's objects");
                CheckRecords(cleared, "after ClearPrompts");
                ThrowsSegrt(Status.InvalidArgument, () => t.ClearPrompts(MidSlice, 9), "ClearPrompts of an unknown object");
                ThrowsSegrt(Status.InvalidArgument, () => t.Propagate(), "no prompt left to start from");
                Check(!t.IsDisposed, "still usable");
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }
}
