// Cancellation and progress through the wrapper: CancellationToken and IProgress<SegrtProgress> on the long calls
// (a SegCallControl per call): cancelled from another thread mid-run, from the progress reporter, or before the
// call; the segmenter or tracker stays usable and gives what an uninterrupted one gives.
using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Drawing2D;
using System.Drawing.Imaging;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

static partial class SegrtTests
{
    static void RunCancelTests()
    {
        Test("cancel: a tiled UNet run cancelled from another thread mid-run; the segmenter then gives the same mask", CancelTiledUnetFromAnotherThread);
        Test("cancel: progress of a tiled run (Tiles, increasing), an untiled run (Run) and SegmentEverything (Encode, Prompts)", ProgressReports);
        Test("cancel: an already-cancelled token throws before any native call", CancelBeforeTheCall);
        Test("cancel: a progress reporter that throws stops the call with its exception; buffers untouched", ProgressReporterThrows);
        Test("cancel: tracking calls cancelled from their progress leave the tracker as an uninterrupted one", CancelTracking);
        Test("cancel: Status.Cancelled is SEG_CANCELLED; ProgressStage mirrors SegStage", CancelledStatusValue);
        Test("cancel: the docs' sequence on one native control (cancel mid-run, then reset at once) answers SEG_CANCELLED, never a failure", CancelThenResetOnOneControl);
    }

    /// <summary>Reports on the calling thread (Progress&lt;T&gt; would post to the thread pool).</summary>
    sealed class SyncProgress : IProgress<SegrtProgress>
    {
        readonly Action<SegrtProgress> _report;
        public readonly List<SegrtProgress> Reports = new List<SegrtProgress>();
        public SyncProgress(Action<SegrtProgress> report = null) { _report = report; }
        public void Report(SegrtProgress value)
        {
            lock (Reports) Reports.Add(value);
            if (_report != null) _report(value);
        }
        public int Count { get { lock (Reports) return Reports.Count; } }
    }

    /// <summary>
    /// lesion_01 drawn n x n times at 256x256: n = 6 is a 1536x1536 image, 64 tiles of 256 with the 64-pixel overlap;
    /// n = 3 is 768x768, 16 tiles.
    /// </summary>
    static Bitmap LargeLesionMosaic(int n = 6)
    {
        var big = new Bitmap(256 * n, 256 * n, PixelFormat.Format24bppRgb);
        using (var lesion = Load(Model("samples/lesion_01.png")))
        using (var g = Graphics.FromImage(big))
        {
            g.InterpolationMode = InterpolationMode.Bilinear;
            for (int y = 0; y < n; y++)
                for (int x = 0; x < n; x++)
                    g.DrawImage(lesion, new Rectangle(x * 256, y * 256, 256, 256));
        }
        return big;
    }

    static SegmenterOptions TiledOptions()
    {
        return new SegmenterOptions { TileMode = TilingMode.On, TileWidth = 256, TileHeight = 256, TileBatch = 1 };
    }

    static void CancelTiledUnetFromAnotherThread()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), TiledOptions()))
        using (var big = LargeLesionMosaic())
        {
            var clock = System.Diagnostics.Stopwatch.StartNew();
            var reference = unet.Segment(big);
            Console.WriteLine(string.Format("      uninterrupted: {0} tiles, {1:F0} ms", reference.Tiles, clock.Elapsed.TotalMilliseconds));
            Check(reference.Tiles == 64 && reference.ForegroundPixels > 0, "64 tiles, a lesion found: " + reference.Tiles);

            using (var cts = new CancellationTokenSource())
            using (var started = new ManualResetEventSlim())
            {
                var progress = new SyncProgress(p => { if (p.Fraction > 0) started.Set(); });
                int runThread = -1;
                var task = Task.Run(() =>
                {
                    runThread = Thread.CurrentThread.ManagedThreadId;
                    return unet.Segment(big, false, cts.Token, progress);
                });
                Check(started.Wait(60000), "the run reported progress");
                cts.Cancel(); // from this thread, while the run goes on on the pool thread
                Check(runThread != Thread.CurrentThread.ManagedThreadId, "cancelled from another thread");
                var e = Throws<AggregateException>(() => task.Wait(), "the cancelled run");
                var oce = e.InnerException as OperationCanceledException;
                Check(oce != null, "an OperationCanceledException, got " + e.InnerException.GetType().Name + ": " + e.InnerException.Message);
                Check(oce.CancellationToken == cts.Token, "the exception carries the caller's token");
                int reports = progress.Count;
                Console.WriteLine(string.Format("      cancelled after {0} of {1} tile reports", reports, reference.Tiles));
                Check(reports >= 2 && reports < reference.Tiles, "stopped in the middle of the run: " + reports + " reports of " + reference.Tiles);
            }

            // The same segmenter, after the cancellation: the same mask; then cancelled from the progress reporter.
            var again = unet.Segment(big);
            Check(again.Tiles == reference.Tiles && Same(again.Mask, reference.Mask), "the mask after a cancelled run is the uninterrupted one");

            // The caller's Task.Run passes the token down: cancelled mid-run, the task is Canceled.
            using (var cts = new CancellationTokenSource())
            {
                var progress = new SyncProgress(p => { if (p.Fraction >= 0.25) cts.Cancel(); });
                var task = Task.Run(() => unet.Segment(big, false, cts.Token, progress), cts.Token);
                try { task.Wait(); } catch (AggregateException) { }
                Check(task.IsCanceled, "Task.Run(Segment) cancelled mid-run is Canceled, status " + task.Status);
                Check(progress.Count > 1 && progress.Count < reference.Tiles, "Task.Run(Segment) stopped mid-run: " + progress.Count + " reports");
            }
        }
    }

    static void ProgressReports()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), TiledOptions()))
        using (var big = LargeLesionMosaic(3))
        {
            var progress = new SyncProgress();
            var r = unet.Segment(big, false, default(CancellationToken), progress);
            var reports = progress.Reports;
            Check(reports.Count == r.Tiles + 1 && r.Tiles == 16, "one report per tile (batch 1), then 1.0: " + reports.Count + " for " + r.Tiles + " tiles");
            Check(reports.All(p => p.Stage == ProgressStage.Tiles), "every report is ProgressStage.Tiles: " + string.Join(", ", reports.Select(p => p.Stage).Distinct()));
            Check(reports[0].Fraction == 0, "the first report is 0, got " + reports[0].Fraction);
            for (int i = 1; i < reports.Count; i++)
                Check(reports[i].Fraction > reports[i - 1].Fraction, "fractions increase: " + reports[i - 1] + " then " + reports[i]);
            for (int i = 0; i < reports.Count; i++)
                Check(Math.Abs(reports[i].Fraction - (double)i / r.Tiles) < 1e-5, "report " + i + " is " + i + "/" + r.Tiles + ": " + reports[i].Fraction);
            Check(reports[reports.Count - 1].Fraction == 1, "the last report is 1: " + reports[reports.Count - 1]);
            Check(reports[1].ToString() == "Tiles 6%", "ToString: " + reports[1]);
        }
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_01.png")))
        {
            var progress = new SyncProgress();
            var r = unet.Segment(bmp, false, default(CancellationToken), progress);
            Check(r.Tiles <= 1 && progress.Count == 2 && progress.Reports.All(p => p.Stage == ProgressStage.Run) &&
                progress.Reports[0].Fraction == 0 && progress.Reports[1].Fraction == 1, "an untiled run reports Run at 0 and 1: " +
                string.Join(", ", progress.Reports));
            // no reporter and no token: no control, the same mask
            Check(Same(unet.Segment(bmp).Mask, r.Mask), "the same mask without a reporter");
        }
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx")))
        using (var img = new Bitmap(1024, 1024, PixelFormat.Format24bppRgb))
        {
            var o = new EverythingOptions { PointsPerSide = 8, StabilityScoreThreshold = 0.8f, PointsPerBatch = 16 };
            var progress = new SyncProgress();
            var r = seg.SegmentEverything(img, o, default(CancellationToken), progress);
            var stages = progress.Reports.Select(p => p.Stage).ToArray();
            Console.WriteLine("      SegmentEverything: " + progress.Count + " reports: " + string.Join(", ", progress.Reports.Take(4)) + ", ...");
            Check(stages.Length >= 3 && stages[0] == ProgressStage.Encode && stages.Last() == ProgressStage.Prompts, "Encode first, then Prompts");
            var prompts = progress.Reports.Where(p => p.Stage == ProgressStage.Prompts).Select(p => p.Fraction).ToArray();
            Check(prompts.Length >= 2 && prompts.Length <= r.Prompts + 1 && prompts[0] == 0 && prompts.Last() == 1,
                "Prompts reports from 0, one per decoder run, ending at 1: " + prompts.Length);
            for (int i = 1; i < prompts.Length; i++) Check(prompts[i] > prompts[i - 1], "Prompts fractions increase");
            Check(r.Prompts == 64, "64 prompts");
            // The annotator's SetImage reports the encoder (the cache was reset: it runs).
            var clicks = seg.CreateAnnotator();
            clicks.ForgetImage();
            var enc = new SyncProgress();
            clicks.SetImage(img, default(CancellationToken), enc);
            Check(enc.Count >= 1 && enc.Reports.All(p => p.Stage == ProgressStage.Encode), "SetImage reports Encode: " + string.Join(", ", enc.Reports));
        }
    }

    static void CancelBeforeTheCall()
    {
        using (var cts = new CancellationTokenSource())
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { MaxPixels = 100 }))
        using (var bmp = Load(Model("samples/lesion_01.png")))
        {
            cts.Cancel();
            int reports = 0;
            var progress = new SyncProgress(p => reports++);
            // segrt would refuse this image (over MaxPixels): the cancellation comes first, nothing native runs.
            var e = Throws<OperationCanceledException>(() => unet.Segment(bmp, false, cts.Token, progress), "Segment with a cancelled token");
            Check(e.CancellationToken == cts.Token, "the exception carries the token");
            Throws<OperationCanceledException>(() => unet.Segment(bmp, new byte[640 * 480], null, cts.Token), "Segment into a buffer with a cancelled token");
            ThrowsSegrt(Status.ImageTooLarge, () => unet.Segment(bmp), "without the token segrt refuses the image (the check above can fail)");
            var task = Task.Run(() => unet.Segment(bmp, false, cts.Token), cts.Token);
            try { task.Wait(); } catch (AggregateException) { }
            Check(task.IsCanceled, "Task.Run(Segment) with a cancelled token is Canceled, status " + task.Status);
            Check(reports == 0, "no progress reported");
        }
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var cts = new CancellationTokenSource())
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx")))
        using (var img = new Bitmap(1024, 1024, PixelFormat.Format24bppRgb))
        {
            cts.Cancel();
            var bad = new EverythingOptions { PointsPerSide = 0 }; // refused by segrt if it were called
            Throws<OperationCanceledException>(() => seg.SegmentEverything(img, bad, cts.Token), "SegmentEverything with a cancelled token");
            Throws<OperationCanceledException>(() => seg.Segment(img, new[] { new Sam2Point(-5, -5, true) }, null, null, null, cts.Token), "Segment with a cancelled token");
            var clicks = seg.CreateAnnotator();
            Throws<OperationCanceledException>(() => clicks.SetImage(img, cts.Token), "SetImage with a cancelled token");
            Throws<InvalidOperationException>(() => clicks.Click(1, 1), "the cancelled SetImage set no image");
        }
        var frames = ClipFrames();
        try
        {
            using (var cts = new CancellationTokenSource())
            using (var model = VideoModel())
            using (var t = model.CreateTracker())
            {
                cts.Cancel();
                Throws<OperationCanceledException>(() => t.AddFrame(frames[0], cts.Token), "AddFrame with a cancelled token");
                Check(t.State.Frames == 0, "no frame added");
                Check(t.AddFrame(frames[0]) == 0, "then a frame is added");
                Throws<OperationCanceledException>(() => t.AddPrompt(-1, 1, new[] { new Sam2Point(60, 100, true) }, null, cts.Token), "AddPrompt with a cancelled token");
                Check(t.State.Objects == 0, "no object added");
                Throws<OperationCanceledException>(() => t.Next(frames[1], cts.Token), "Next with a cancelled token (segrt would refuse it: no object)");
                Throws<OperationCanceledException>(() => t.TrackFrame(0, cts.Token), "TrackFrame with a cancelled token");
            }
        }
        finally
        {
            foreach (var f in frames) f.Dispose();
        }
    }

    static void ProgressReporterThrows()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), TiledOptions()))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            var reference = unet.Segment(bmp);
            var buffer = Enumerable.Repeat((byte)7, bmp.Width * bmp.Height).ToArray();
            var boom = new SyncProgress(p => { if (p.Fraction > 0) throw new InvalidTimeZoneException("from the reporter"); });
            var e = Throws<InvalidTimeZoneException>(() => unet.Segment(bmp, buffer, null, default(CancellationToken), boom), "a throwing reporter");
            Check(e.Message == "from the reporter", "the reporter's own exception");
            Check(boom.Count == 2, "the call stopped at the report that threw: " + boom.Count);
            Check(buffer.All(b => b == 7), "a cancelled call writes no mask");
            // cancelled from the reporter through the token: OperationCanceledException, buffer untouched
            using (var cts = new CancellationTokenSource())
            {
                var stop = new SyncProgress(p => { if (p.Fraction > 0) cts.Cancel(); });
                Throws<OperationCanceledException>(() => unet.Segment(bmp, buffer, null, cts.Token, stop), "cancelled from the reporter");
                Check(stop.Count == 2 && buffer.All(b => b == 7), "stopped at once, no mask written");
            }
            Check(Same(unet.Segment(bmp, buffer).Mask, reference.Mask), "then the segmenter gives the same mask into the buffer");
        }
    }

    static void CancelTracking()
    {
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var plain = model.CreateTracker(new TrackerOptions { KeepFrames = 3 }))
            using (var cancelled = model.CreateTracker(new TrackerOptions { KeepFrames = 3 }))
            {
                // AddFrame cancelled from its progress: no frame added
                using (var cts = new CancellationTokenSource())
                {
                    var p = new SyncProgress(r => cts.Cancel());
                    Throws<OperationCanceledException>(() => cancelled.AddFrame(frames[0], cts.Token, p), "AddFrame cancelled from its progress");
                    Check(p.Count == 1 && p.Reports[0].Stage == ProgressStage.Frames, "one Frames report before the cancellation: " + string.Join(", ", p.Reports));
                    Check(cancelled.State.Frames == 0, "the cancelled AddFrame added no frame");
                }
                SameFrames(StartStream(plain, frames[0]), StartStream(cancelled, frames[0]), "prompt");
                for (int i = 1; i < 6; i++)
                {
                    var state = cancelled.State;
                    using (var cts = new CancellationTokenSource())
                    {
                        // Next cancelled at its 1st, 2nd, 3rd... model run (encoder, attention, decoder, memory encoder)
                        int at = (i - 1) % 4 + 1;
                        var p = new SyncProgress(r => { if (r.Stage != ProgressStage.Frames) throw new Exception("stage " + r.Stage); });
                        var stopper = new SyncProgress(r => { p.Report(r); if (p.Count == at) cts.Cancel(); });
                        if (i % 2 == 0)
                        {
                            var frame = frames[i];
                            var task = Task.Run(() => cancelled.Next(frame, cts.Token, stopper), cts.Token);
                            try { task.Wait(); } catch (AggregateException) { }
                            Check(task.IsCanceled, "frame " + i + ": Task.Run(Next) cancelled from its progress is Canceled, status " + task.Status +
                                (task.Exception != null ? " " + task.Exception.InnerException.Message : ""));
                        }
                        else
                            Throws<OperationCanceledException>(() => cancelled.Next(frames[i], cts.Token, stopper), "frame " + i + ": Next cancelled at model run " + at);
                        Check(p.Count == at, "frame " + i + ": stopped at report " + at + ", got " + p.Count);
                    }
                    var after = cancelled.State;
                    Check(after.Frames == state.Frames && after.HeldFrames == state.HeldFrames && after.HeldOutputs == state.HeldOutputs,
                        "frame " + i + ": the cancelled call left the tracker as before (" + after.Frames + " frames)");
                    var a = plain.Next(frames[i]);
                    var b = cancelled.Next(frames[i], CancellationToken.None, new SyncProgress());
                    SameFrames(a, b, "frame " + i + " after a cancelled call");
                }
                // A correction cancelled through its token, then made: the same as the uninterrupted tracker's.
                using (var cts = new CancellationTokenSource())
                {
                    var stop = new SyncProgress(r => cts.Cancel());
                    Throws<OperationCanceledException>(() => cancelled.AddPrompt(-1, 1, new[] { new Sam2Point(70, 110, true) }, null, cts.Token, stop), "a cancelled correction");
                    Throws<OperationCanceledException>(() => cancelled.TrackFrame(-1, cts.Token), "TrackFrame with the cancelled token");
                }
                SameFrames(plain.AddPoints(-1, 1, new Sam2Point(70, 110, true)), cancelled.AddPoints(-1, 1, new Sam2Point(70, 110, true)), "the correction");
                for (int i = 6; i < 9; i++)
                    SameFrames(plain.Next(frames[i]), cancelled.Next(frames[i]), "frame " + i + " after the correction");
            }
        }
        finally
        {
            foreach (var f in frames) f.Dispose();
        }
    }

    static void CancelledStatusValue()
    {
        Check((int)Status.Cancelled == 50 && (int)Segrt.Native.SegStatus.SEG_CANCELLED == 50, "Status.Cancelled = 50");
        // ProgressStage mirrors the header's SegStage (names and values)
        string header = File.ReadAllText(Path.Combine(Repo, "include", "segrt.h"));
        SameMembers(typeof(ProgressStage), HeaderEnum(header, "SegStage", "SEG_STAGE_"), "segrt.h SegStage");
        var e = new SegrtException(Status.Cancelled, "cancelled");
        Check(e.Message.StartsWith("SEG_CANCELLED:"), "named SEG_CANCELLED: " + e.Message);
    }

    /// <summary>
    /// A host that keeps one native control for its jobs (c-abi.md's sequence): seg_control_cancel from another thread
    /// while seg_run_unet runs, then seg_control_reset at once, before the run returns. The call answers SEG_CANCELLED,
    /// or SEG_OK where it ended before the cancel came; never SEG_INFERENCE_FAILED.
    /// </summary>
    static unsafe void CancelThenResetOnOneControl()
    {
        const int w = 512, h = 512, calls = 12;
        var pixels = new byte[w * h];
        for (int i = 0; i < pixels.Length; i++) pixels[i] = (byte)((i * 7 + i / w * 3) % 251);
        var mask = new byte[w * h];
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        {
            var session = (Segrt.Native.SegSession*)RawSession(unet);
            Segrt.Native.SegCallControl* control = null;
            Check(Segrt.Native.NativeMethods.seg_control_create(&control) == Segrt.Native.SegStatus.SEG_OK, "seg_control_create");
            var nativeControl = (IntPtr)control;
            int cancelled = 0, finished = 0;
            fixed (byte* px = pixels)
            fixed (byte* m = mask)
            {
                var img = new Segrt.Native.SegImage { data = px, width = w, height = h, stride = 0, format = 0 };
                var outMask = new Segrt.Native.SegMask { data = m, width = w, height = h, stride = 0 };
                for (int i = 0; i < calls; i++)
                {
                    int delayMs = 1 + i % 4;
                    var canceller = new Thread(() =>
                    {
                        Thread.Sleep(delayMs);
                        var c = (Segrt.Native.SegCallControl*)nativeControl;
                        Segrt.Native.NativeMethods.seg_control_cancel(c);
                        Segrt.Native.NativeMethods.seg_control_reset(c);
                    });
                    canceller.Start();
                    var status = Segrt.Native.NativeMethods.seg_run_unet(session, &img, &outMask, null, UIntPtr.Zero, null, control);
                    canceller.Join();
                    Check(status == Segrt.Native.SegStatus.SEG_OK || status == Segrt.Native.SegStatus.SEG_CANCELLED,
                        "call " + i + " cancelled then reset: " + status);
                    if (status == Segrt.Native.SegStatus.SEG_CANCELLED) cancelled++;
                    if (status == Segrt.Native.SegStatus.SEG_OK) finished++;
                }
            }
            Segrt.Native.NativeMethods.seg_control_free(control);
            Console.WriteLine("    cancel then reset at once: {0} of {1} calls SEG_CANCELLED, {2} finished first", cancelled, calls, finished);
            Check(cancelled > 0, "no call was cancelled: every run ended before the cancel (the case was not tried)");
        }
    }
}
