// Regression tests of four failure modes an earlier wrapper had: calls racing Dispose, rejected SAM2 prompts
// kept, SegrtException losing its fields when serialized, native memory not declared to the GC. Each failed on
// that wrapper and passes now; each prints its counts.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Drawing;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Runtime.Serialization.Formatters.Binary;
using System.Text.RegularExpressions;
using System.Threading;
using Segrt;

static partial class SegrtTests
{
    static void RunBugTests()
    {
        Test("UNet: no call that starts after Dispose runs; the session is freed when the last one returns", () => DisposeRace(false));
        Test("SAM2: no call that starts after Dispose runs; the session is freed when the last one returns", () => DisposeRace(true));
        Test("a rejected SAM2 click or box leaves the prompts as they were", RejectedPromptsAreNotKept);
        Test("SegrtException keeps Status and NativeMessage through BinaryFormatter", SegrtExceptionSerializes);
        Test("the GC is told the native memory of each session, and untold when it is freed", MemoryPressureFollowsSessions);
    }

    /// <summary>The native session pointer inside a segmenter (whatever field holds its SafeHandle).</summary>
    static IntPtr RawSession(object segmenter)
    {
        for (var t = segmenter.GetType(); t != null; t = t.BaseType)
            foreach (var f in t.GetFields(BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public | BindingFlags.DeclaredOnly))
                if (typeof(SafeHandle).IsAssignableFrom(f.FieldType))
                    return ((SafeHandle)f.GetValue(segmenter)).DangerousGetHandle();
        throw new Exception("no SafeHandle field in " + segmenter.GetType());
    }

    /// <summary>Whether segrt still knows this pointer as a live session (seg_session_info's answer).</summary>
    static unsafe bool NativeSessionLive(IntPtr raw)
    {
        UIntPtr needed;
        var status = Segrt.Native.NativeMethods.seg_session_info((Segrt.Native.SegSession*)raw, null, UIntPtr.Zero, &needed);
        if (status != Segrt.Native.SegStatus.SEG_OK && status != Segrt.Native.SegStatus.SEG_INVALID_HANDLE)
            throw new Exception("seg_session_info: " + status);
        return status == Segrt.Native.SegStatus.SEG_OK;
    }

    static void DisposeRace(bool sam2)
    {
        const int threads = 8;
        string sam = Path.Combine(Repo, "models", "sam2");
        IDisposable segmenter = sam2
            ? (IDisposable)new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx"))
            : new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { IntraThreads = 1 });
        IntPtr raw = RawSession(segmenter);
        Check(NativeSessionLive(raw), "the session is live before Dispose");
        const int w = 96, h = 64;
        var pixels = new byte[w * h * 3];
        new Random(19).NextBytes(pixels);
        var points = new[] { new Sam2Point(40, 30, true) };

        int disposeReturned = 0;
        long beforeOk = 0, afterOk = 0, afterRefused = 0, beforeRefused = 0, finishedAfter = 0;
        Exception failure = null;
        var warm = new CountdownEvent(threads); // each thread has its own ONNX Runtime session and has run twice
        var workers = Enumerable.Range(0, threads).Select(t => new Thread(() =>
        {
            // SAM2 through a Bitmap, one per thread: GDI+ bitmaps cannot be locked by two threads at once.
            var bitmap = new Bitmap(w, h, System.Drawing.Imaging.PixelFormat.Format24bppRgb);
            int mine = 0;
            var stopAt = long.MaxValue;
            var clock = Stopwatch.StartNew();
            while (clock.ElapsedMilliseconds < stopAt)
            {
                bool after = Volatile.Read(ref disposeReturned) != 0;
                if (after && stopAt == long.MaxValue) stopAt = clock.ElapsedMilliseconds + 500; // a wrapper that never refuses stops here too
                try
                {
                    if (sam2) ((Sam2Segmenter)segmenter).Segment(bitmap, points);
                    else ((UnetSegmenter)segmenter).Segment(InputImage.FromPixels(pixels, w, h, 0, PixelLayout.Bgr24));
                    if (after) Interlocked.Increment(ref afterOk); else Interlocked.Increment(ref beforeOk);
                    if (!after && Volatile.Read(ref disposeReturned) != 0) Interlocked.Increment(ref finishedAfter); // was inside: finished normally
                    if (++mine == 2) warm.Signal();
                }
                catch (ObjectDisposedException)
                {
                    if (after) Interlocked.Increment(ref afterRefused); else Interlocked.Increment(ref beforeRefused);
                    if (after) return; // this thread's loop is over
                }
                catch (Exception e)
                {
                    failure = e;
                    if (mine < 2) warm.Signal();
                    return;
                }
            }
        })).ToList();
        workers.ForEach(t => t.Start());
        Check(warm.Wait(TimeSpan.FromMinutes(3)), "every thread ran twice");
        Thread.Sleep(200); // every thread is inside the loop, calls overlapping
        segmenter.Dispose();
        Volatile.Write(ref disposeReturned, 1);
        var joinClock = Stopwatch.StartNew();
        workers.ForEach(t => t.Join());
        double loopsStoppedMs = joinClock.Elapsed.TotalMilliseconds;
        if (failure != null) throw failure;

        // The native session must be gone within 1 s after the last loop stopped.
        var freeClock = Stopwatch.StartNew();
        bool live = NativeSessionLive(raw);
        while (live && freeClock.ElapsedMilliseconds < 1000)
        {
            Thread.Sleep(5);
            live = NativeSessionLive(raw);
        }
        Console.WriteLine(string.Format(
            "      {0} threads: {1} calls started before Dispose returned ({7} of them still running then, finished normally; {2} refused while it ran); " +
            "started after it returned: {3} ran, {4} refused; loops stopped {5:F0} ms after Dispose; native session {6}",
            threads, beforeOk, beforeRefused, afterOk, afterRefused, loopsStoppedMs,
            live ? "STILL LIVE 1 s later" : "freed " + freeClock.Elapsed.TotalMilliseconds.ToString("F0") + " ms after the loops stopped", finishedAfter));
        Check(beforeOk > threads, "the threads ran calls before Dispose (" + beforeOk + ")");
        Check(afterOk == 0, afterOk + " calls started after Dispose returned and ran");
        Check(afterRefused == threads, "each thread's first call after Dispose was refused (" + afterRefused + ")");
        Check(!live, "the native session was freed within 1 s after the loops stopped");
    }

    static void RejectedPromptsAreNotKept()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
        {
            var clicks = seg.CreateAnnotator();
            clicks.SetImage(img);
            var rejected = Throws<SegrtException>(() => clicks.Click(5000, 5000), "a click outside the 320x240 image");
            int pointsAfterRejectedClick = clicks.Points.Count;
            int laterClicksOk = 0, laterClicksFailed = 0;
            for (int i = 0; i < 3; i++)
            {
                try { clicks.Click(105, 105); laterClicksOk++; }
                catch (SegrtException) { laterClicksFailed++; }
            }
            Console.WriteLine(string.Format("      rejected click ({0}): points after it {1}; 3 valid clicks later: {2} ran, {3} failed; points now {4}",
                rejected.Status, pointsAfterRejectedClick, laterClicksOk, laterClicksFailed, clicks.Points.Count));
            Check(pointsAfterRejectedClick == 0, "the rejected click was not kept");
            Check(laterClicksOk == 3 && clicks.Points.Count == 3, "valid clicks after a rejected one work and accumulate");

            clicks.SetImage(img); // clears the prompts
            var boxError = Throws<SegrtException>(() => clicks.Box(200, 10, 100, 50), "a box with x2 < x1");
            bool boxKept = clicks.CurrentBox.HasValue;
            bool clickOk = true;
            try { clicks.Click(105, 105); } catch (SegrtException) { clickOk = false; }
            Console.WriteLine(string.Format("      rejected box ({0}): kept {1}; a valid click after it ran: {2}", boxError.Status, boxKept, clickOk));
            Check(!boxKept, "the rejected box was not kept");
            Check(clickOk, "a valid click after a rejected box works");
            var box = clicks.Box(185, 75, 295, 205);
            Check(clicks.CurrentBox.HasValue && clicks.CurrentBox.Value.Right == 295, "an accepted box is kept");
            Check(box.ForegroundPixels > 0, "box result");
        }
    }

    static void SegrtExceptionSerializes()
    {
        var original = Throws<SegrtException>(() => new UnetSegmenter("/no/such/model.onnx"), "missing model");
        var formatter = new BinaryFormatter();
        SegrtException copy;
        using (var stream = new MemoryStream())
        {
            formatter.Serialize(stream, original);
            stream.Position = 0;
            copy = (SegrtException)formatter.Deserialize(stream);
        }
        Console.WriteLine(string.Format("      before: {0} \"{1}\"; after the round trip: {2} \"{3}\"",
            original.Status, original.NativeMessage, copy.Status, copy.NativeMessage));
        Check(copy.Status == Status.ModelNotFound && copy.Status == original.Status, "Status survives: " + copy.Status);
        Check(copy.NativeMessage == original.NativeMessage, "NativeMessage survives");
        Check(copy.Message == original.Message, "Message survives");
    }

    static long JsonLong(string json, string key)
    {
        var m = Regex.Match(json, "\"" + key + "\"\\s*:\\s*(\\d+)");
        return m.Success ? long.Parse(m.Groups[1].Value) : 0;
    }

    static string InfoJson(object segmenter)
    {
        return (string)segmenter.GetType().GetProperty("SessionInfoJson").GetValue(segmenter, null);
    }

    /// <summary>Creates segmenters and drops them (in a frame of its own, so no local keeps one alive).</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static List<IntPtr> CreateUndisposed(int count, out long reportedBytes)
    {
        var raws = new List<IntPtr>();
        reportedBytes = 0;
        for (int i = 0; i < count; i++)
        {
            var unet = new UnetSegmenter(Model("demo_unet.onnx"));
            reportedBytes += UnetReportedBytes(InfoJson(unet));
            raws.Add(RawSession(unet));
        }
        return raws;
    }

    /// <summary>What the wrapper should declare for a UNet: the measured memory, at least the model's size.</summary>
    static long UnetReportedBytes(string json)
    {
        return Math.Max(JsonLong(json, "bytes_first_session"), JsonLong(json, "model_bytes"));
    }

    static void MemoryPressureFollowsSessions()
    {
        // The wrapper's running total of what it declared with GC.AddMemoryPressure (Mono accepts the calls
        // but does not act on them, so the declaration itself is what can be checked here).
        var type = typeof(UnetSegmenter).Assembly.GetType("Segrt.MemoryPressure");
        Check(type != null, "the wrapper declares no memory pressure (no Segrt.MemoryPressure)");
        var outstandingProperty = type.GetProperty("Outstanding", BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public);
        Func<long> outstanding = () => (long)outstandingProperty.GetValue(null, null);
        for (int i = 0; i < 3; i++) { GC.Collect(); GC.WaitForPendingFinalizers(); }
        long baseline = outstanding();

        long unetBytes;
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        {
            unetBytes = UnetReportedBytes(InfoJson(unet));
            Check(unetBytes > 0, "segrt reports the session's memory");
            Check(outstanding() - baseline == unetBytes, "declared " + (outstanding() - baseline) + " bytes for a UNet reporting " + unetBytes);
        }
        Check(outstanding() == baseline, "Dispose takes the declaration back");

        string sam = Path.Combine(Repo, "models", "sam2");
        long samBytes;
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        {
            long files = new FileInfo(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx")).Length + new FileInfo(Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")).Length;
            samBytes = Math.Max(JsonLong(InfoJson(seg), "bytes_first_sessions"), files); // at least the model files
            Check(samBytes > 0 && outstanding() - baseline == samBytes, "declared " + (outstanding() - baseline) + " bytes for SAM2 reporting " + samBytes);
        }
        Check(outstanding() == baseline, "Dispose takes the SAM2 declaration back");

        // 20 undisposed segmenters: declared while alive, taken back by the finalizers.
        long sum;
        var raws = CreateUndisposed(20, out sum);
        long declared = outstanding() - baseline;
        // Mono scans stacks conservatively: a stale register may keep one object alive for a collection or two.
        int stillLive = raws.Count;
        for (int i = 0; i < 10 && (stillLive > 0 || outstanding() != baseline); i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            stillLive = raws.Count(NativeSessionLive);
        }
        Console.WriteLine(string.Format("      UNet session {0:F1} MB, SAM2 pair {1:F1} MB; 20 undisposed UNets declared {2:F1} MB (reported {3:F1} MB); " +
            "after the finalizers: {4:F1} MB declared, {5} sessions live",
            unetBytes / 1048576.0, samBytes / 1048576.0, declared / 1048576.0, sum / 1048576.0, (outstanding() - baseline) / 1048576.0, stillLive));
        Check(declared == sum, "20 sessions declared what they report");
        Check(stillLive == 0 && outstanding() == baseline, "finalizers free the sessions and take the declarations back");
    }
}
