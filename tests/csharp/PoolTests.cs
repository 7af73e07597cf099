// Tests of the wrapper over segrt's session pool and per-caller SAM2 refinement: pool figures under
// 8 threads with MaxSessions = 2, the memory declared as the pool grows, the new options (MaxMemoryBytes,
// MaxModelBytes, OutputName), a non-segmentation model refused, and refinement that never mixes callers.
using System;
using System.Collections.Generic;
using System.Drawing;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

static partial class SegrtTests
{
    static void RunPoolTests()
    {
        Test("8 threads on one UnetSegmenter with MaxSessions = 2: pool figures, memory declared, single-thread masks", UnetPoolUnderThreads);
        Test("MaxMemoryBytes: a call needing more is refused with OutOfMemory; MaxModelBytes refuses a larger model", MemoryBudgets);
        Test("a SAM2 encoder given to UnetSegmenter is refused (ModelUnsupported); OutputName picks an output", NotASegmentationModel);
        Test("SAM2 refinement per caller: two threads' click+refine sequences and a stateful Click give the single-thread results", Sam2RefinementPerCaller);
    }

    static void UnetPoolUnderThreads()
    {
        long modelBytes = new FileInfo(Model("demo_unet.onnx")).Length;
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { MaxSessions = 2 }))
        {
            var names = new[] { "lesion_04", "lesion_06", "lesion_02", "lesion_01" };
            var images = names.Select(n => Load(Model("samples/" + n + ".png"))).ToArray();
            var inputs = images.Select(b => PackedBytes(b, 3)).ToArray();
            var sizes = images.Select(b => b.Size).ToArray();
            var expected = images.Select(b => unet.Segment(b).Mask).ToArray();
            foreach (var b in images) b.Dispose();
            var before = unet.SessionInfo.Pool;
            Check(before.MaxSessions == 2 && before.Created == 1 && before.Sessions == 1 && before.Waits == 0, "one session after single-thread calls");
            long declaredBefore = unet.MemoryBytes;

            const int threads = 8, perThread = 4;
            int runs = 0, mismatches = 0;
            Exception failure = null;
            var start = new ManualResetEvent(false);
            var workers = Enumerable.Range(0, threads).Select(t => new Thread(() =>
            {
                try
                {
                    start.WaitOne();
                    for (int i = 0; i < perThread; i++)
                    {
                        int k = (t + i) % inputs.Length;
                        var r = unet.Segment(InputImage.FromPixels(inputs[k], sizes[k].Width, sizes[k].Height, 0, PixelLayout.Bgr24));
                        Interlocked.Increment(ref runs);
                        if (!Same(r.Mask, expected[k])) Interlocked.Increment(ref mismatches);
                    }
                }
                catch (Exception e)
                {
                    failure = e;
                }
            })).ToList();
            workers.ForEach(w => w.Start());
            start.Set();
            workers.ForEach(w => w.Join());
            if (failure != null) throw failure;

            var info = unet.SessionInfo;
            var pool = info.Pool;
            long declared = unet.MemoryBytes;
            Console.WriteLine(string.Format("      {0} runs on {1} threads, {2} mismatches; pool: max {3}, sessions {4}, created {5}, busy {6}, waits {7}; " +
                "first session {8:F1} MB, each extra {9}; declared to the GC {10:F1} MB before, {11:F1} MB after ({12} re-reads)",
                runs, threads, mismatches, pool.MaxSessions, pool.Sessions, pool.Created, pool.Busy, pool.Waits,
                (pool.BytesFirstSession ?? 0) / 1048576.0, pool.BytesPerExtraSession.HasValue ? (pool.BytesPerExtraSession.Value / 1048576.0).ToString("F1") + " MB" : "not measured",
                declaredBefore / 1048576.0, declared / 1048576.0, unet.Handle.MemoryRefreshes));
            Check(runs == threads * perThread && mismatches == 0, "every thread's mask equals the single-thread mask");
            Check(pool.MaxSessions == 2 && pool.Created <= 2 && pool.Sessions <= 2 && pool.Busy == 0, "the pool stays within MaxSessions");
            Check(pool.Waits > 0, "8 threads on 2 sessions had to wait (" + pool.Waits + ")");
            Check(pool.Created == 2 && pool.Sessions == 2, "8 threads at once made the pool grow to its cap");
            Check(pool.SharedGraphBytes > modelBytes / 2 && pool.SharedGraphBytes < modelBytes * 2,
                "the second session read its weights from the shared graph (" + pool.SharedGraphBytes + " bytes, model " + modelBytes + ")");
            Check(pool.SharedInitializers > 0, "the sessions share the graph's weights as shared initializers (" + pool.SharedInitializers + ")");
            Check(unet.Handle.MemoryRefreshes >= 1, "the declaration was re-read after calls overlapped");
            Check(declared == Math.Max(info.NativeBytes, modelBytes), "the declaration follows the pool: " + declared + " declared, pool figures give " + Math.Max(info.NativeBytes, modelBytes));
            if (pool.BytesPerExtraSession.HasValue)
                Check(info.NativeBytes == Math.Max((pool.BytesFirstSession ?? 0) + pool.BytesPerExtraSession.Value, info.ModelBytes ?? 0),
                    "NativeBytes = first + one extra session, at least the model (resident-memory deltas can read 0 when freed memory is reused)");
        }

        // One thread never overlaps itself: no re-read at all.
        using (var single = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { MaxSessions = 2 }))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            for (int i = 0; i < 3; i++) single.Segment(bmp);
            Check(single.Handle.MemoryRefreshes == 0 && single.SessionInfo.Pool.Created == 1, "a single thread: one session, no re-read");
        }
    }

    static void MemoryBudgets()
    {
        const int w = 2000, h = 2000;
        var big = new byte[w * h * 3];
        for (int i = 0; i < big.Length; i++) big[i] = (byte)(i * 7 % 251);
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { MaxMemoryBytes = 1 << 20 }))
        {
            var e = ThrowsSegrt(Status.OutOfMemory, () => unet.Segment(InputImage.FromPixels(big, w, h, 0, PixelLayout.Bgr24)), "a 2000x2000 image with a 1 MiB budget");
            Console.WriteLine("      1 MiB budget, 2000x2000: OutOfMemory \"" + e.NativeMessage + "\"");
            ThrowsSegrt(Status.OutOfMemory, () => unet.Segment(InputImage.FromPixels(big, w, h, 0, PixelLayout.Bgr24), withProbability: true), "again, with probability");
            Check(unet.SessionInfo.Pool.Busy == 0, "the refused calls gave their sessions back");
        }
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
            Check(unet.Segment(InputImage.FromPixels(big, w, h, 0, PixelLayout.Bgr24)).Mask.Length == w * h, "the same image with the default budget runs");

        long modelBytes = new FileInfo(Model("demo_unet.onnx")).Length;
        var tooBig = ThrowsSegrt(Status.ModelInvalid, () => new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { MaxModelBytes = modelBytes - 1 }),
            "a model one byte over MaxModelBytes");
        ThrowsSegrt(Status.ModelInvalid, () => UnetSegmenter.FromBytes(File.ReadAllBytes(Model("demo_unet.onnx")), new SegmenterOptions { MaxModelBytes = 1000 }),
            "model bytes over MaxModelBytes");
        using (new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { MaxModelBytes = modelBytes })) { }
        Console.WriteLine("      MaxModelBytes = size - 1: ModelInvalid \"" + tooBig.NativeMessage + "\"");
    }

    static void NotASegmentationModel()
    {
        string encoder = Path.Combine(Repo, "models", "sam2", "sam2_tiny_samexporter_encoder.onnx");
        var e = ThrowsSegrt(Status.ModelUnsupported, () => new UnetSegmenter(encoder), "a SAM2 encoder as a UNet");
        Check(e.NativeMessage.Contains("high_res_feats_0") || e.NativeMessage.Contains("image_embed"), "the message lists the outputs found: " + e.NativeMessage);
        ThrowsSegrt(Status.ModelUnsupported, () => UnetSegmenter.FromBytes(File.ReadAllBytes(encoder)), "a SAM2 encoder's bytes as a UNet");
        Console.WriteLine("      SAM2 encoder as a UNet: ModelUnsupported \"" + e.NativeMessage + "\"");

        // OutputName reaches segrt: the real output name gives the default's mask, an unknown one is refused.
        using (var named = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { OutputName = "logits" }))
        using (var bmp = Load(Model("samples/lesion_04.png")))
            Check(Same(named.Segment(bmp).Mask, s_reference.Mask), "OutputName = the model's output: same mask");
        var unknown = Throws<SegrtException>(() => new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { OutputName = "no_such_output" }), "an unknown OutputName");
        Check(unknown.NativeMessage.Contains("no_such_output"), "the message names the output asked for: " + unknown.NativeMessage);
        Console.WriteLine("      OutputName \"no_such_output\": " + unknown.Status + " \"" + unknown.NativeMessage + "\"");
    }

    /// <summary>One caller's refinement sequence on img0: each step adds a prompt and refines the step before.</summary>
    sealed class Sequence
    {
        internal Sam2Point[][] Points;
        internal RectangleF?[] Boxes;
    }

    static Sam2Result[] RunSequence(Sam2Segmenter seg, byte[] bgr, int w, int h, Sequence s, bool refine)
    {
        var results = new Sam2Result[s.Points.Length];
        float[] previous = null;
        for (int i = 0; i < results.Length; i++)
        {
            results[i] = seg.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), s.Points[i], s.Boxes[i], refine ? previous : null, null);
            previous = results[i].LowResLogits;
        }
        return results;
    }

    static bool SameResult(Sam2Result a, Sam2Result b)
    {
        return Same(a.Mask, b.Mask) && a.LowResLogits.SequenceEqual(b.LowResLogits) && a.Score == b.Score;
    }

    /// <summary>Sequence A as the wrapper ran clicks before: the cached image and the SEG_SAM2_REFINE flag (the session's last result).</summary>
    static unsafe Sam2Result[] OldStyleClicks(Sam2Segmenter seg, Sequence s, int w, int h, Action between = null)
    {
        var results = new Sam2Result[s.Points.Length];
        for (int i = 0; i < results.Length; i++)
        {
            if (i > 0 && between != null) between();
            var native = s.Points[i].Select(p => new Segrt.Native.SegPoint { x = p.X, y = p.Y, label = p.Foreground ? 1 : 0 }).ToArray();
            var mask = new byte[w * h];
            var low = new float[seg.LowResSize.Width * seg.LowResSize.Height];
            float score = 0;
            var extra = default(Segrt.Native.SegSam2Result);
            extra.struct_size = (uint)sizeof(Segrt.Native.SegSam2Result);
            using (var lease = seg.Acquire())
            fixed (byte* m = mask)
            fixed (float* l = low)
            fixed (Segrt.Native.SegPoint* p = native)
            {
                extra.low_res_logits = l;
                extra.low_res_len = (UIntPtr)low.Length;
                var outMask = new Segrt.Native.SegMask { data = m, width = w, height = h };
                Segrt.Interop.Check(Segrt.Native.NativeMethods.seg_run_sam2_points(lease.Session, null, p, (UIntPtr)native.Length, null,
                    null, UIntPtr.Zero, i > 0 ? 1u : 0u, &outMask, &score, &extra, null));
            }
            results[i] = new Sam2Result { Mask = mask, LowResLogits = low, Score = score };
        }
        return results;
    }

    static void Sam2RefinementPerCaller()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx"),
            new SegmenterOptions { MaxSessions = 2 }))
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
        {
            int w = img.Width, h = img.Height;
            byte[] bgr = PackedBytes(img, 3);
            var a = new Sequence
            {
                Points = new[]
                {
                    new[] { new Sam2Point(105, 105, true) },
                    new[] { new Sam2Point(105, 105, true), new Sam2Point(130, 110, true) },
                    new[] { new Sam2Point(105, 105, true), new Sam2Point(130, 110, true), new Sam2Point(240, 140, false) },
                },
                Boxes = new RectangleF?[] { null, null, null },
            };
            var boxB = RectangleF.FromLTRB(185, 75, 295, 205);
            var b = new Sequence
            {
                Points = new[] { new Sam2Point[0], new[] { new Sam2Point(240, 140, true) }, new[] { new Sam2Point(240, 140, true), new Sam2Point(200, 100, false) } },
                Boxes = new RectangleF?[] { boxB, boxB, boxB },
            };

            // Single-threaded references, and proof that refinement changes the answer (so mixing would show).
            var refA = RunSequence(seg, bgr, w, h, a, true);
            var refB = RunSequence(seg, bgr, w, h, b, true);
            var plainA = RunSequence(seg, bgr, w, h, a, false);
            Size low = seg.LowResSize;
            Check(refA[0].LowResLogits.Length == low.Width * low.Height && refA[0].LowResWidth == low.Width && refA[0].LowResHeight == low.Height, "low-res logits of LowResSize");
            Check(SameResult(refA[0], plainA[0]), "the first step has nothing to refine");
            Check(!refA[1].LowResLogits.SequenceEqual(plainA[1].LowResLogits), "the previous mask changes the decoder's answer");
            Check(!refA[1].LowResLogits.SequenceEqual(refB[1].LowResLogits), "the two sequences differ");
            Throws<ArgumentException>(() => seg.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), a.Points[0], null, new float[7], null), "previousLowRes of the wrong size");
            // The other image kinds carry the same state: Bitmap, IntPtr, and on a background thread.
            Check(SameResult(seg.Segment(img, a.Points[1], null, refA[0].LowResLogits), refA[1]), "Segment(Bitmap, ..., previousLowRes)");
            Check(SameResult(Task.Run(() => seg.Segment(img, a.Points[1], null, refA[0].LowResLogits)).Result, refA[1]), "Task.Run(Segment(..., previousLowRes))");
            var pin = System.Runtime.InteropServices.GCHandle.Alloc(bgr, System.Runtime.InteropServices.GCHandleType.Pinned);
            try
            {
                Check(SameResult(seg.Segment(InputImage.FromPixels(pin.AddrOfPinnedObject(), w, h, 0, PixelLayout.Bgr24), a.Points[1], null, refA[0].LowResLogits, null), refA[1]),
                    "Segment(IntPtr, ..., previousLowRes)");
            }
            finally
            {
                pin.Free();
            }

            // The annotator's Click refines with its own previous mask: the same as sequence A.
            var annotator = seg.CreateAnnotator();
            annotator.SetImage(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24));
            annotator.RefineWithPreviousMask = true;
            Func<Sam2Result[]> clicks = () =>
            {
                annotator.ClearPrompts();
                return new[] { annotator.Click(105, 105), annotator.Click(130, 110), annotator.Click(240, 140, false) };
            };
            var stateful = clicks();
            Check(Enumerable.Range(0, 3).All(i => SameResult(stateful[i], refA[i])), "Click + RefineWithPreviousMask == stateless sequence A");

            // Another caller's call between two clicks: the native session's last result (SEG_SAM2_REFINE, what the
            // wrapper used before) is then that caller's, while the segmenter's own previous mask is not touched.
            Action other = () => seg.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), b.Points[1], boxB, null, null);
            var old = OldStyleClicks(seg, a, w, h, other);
            Check(SameResult(OldStyleClicks(seg, a, w, h)[1], refA[1]) && !SameResult(old[1], refA[1]) && !SameResult(old[2], refA[2]),
                "the session-wide flag mixes callers (the bug this fixes, reproduced)");
            annotator.ClearPrompts();
            annotator.Click(105, 105);
            other();
            var second = annotator.Click(130, 110);
            other();
            var third = annotator.Click(240, 140, false);
            Check(SameResult(second, refA[1]) && SameResult(third, refA[2]), "Click refines its own previous mask whatever other callers ran in between");
            Console.WriteLine("      another caller's call between two clicks: SEG_SAM2_REFINE (before) gives other masks at steps 2 and 3; RefineWithPreviousMask (now) the single-caller ones");

            // Three callers at once on one segmenter: two stateless sequences and the stateful annotator.
            const int rounds = 12;
            int mismatchA = 0, mismatchB = 0, mismatchClicks = 0, runs = 0;
            Exception failure = null;
            var go = new ManualResetEvent(false);
            var threads = new List<Thread>();
            Func<Func<Sam2Result[]>, Sam2Result[], int[], Thread> worker = (run, expected, counter) => new Thread(() =>
            {
                try
                {
                    go.WaitOne();
                    for (int r = 0; r < rounds; r++)
                    {
                        var got = run();
                        Interlocked.Add(ref runs, got.Length);
                        for (int i = 0; i < got.Length; i++)
                            if (!SameResult(got[i], expected[i])) Interlocked.Increment(ref counter[0]);
                    }
                }
                catch (Exception e)
                {
                    failure = e;
                }
            });
            var ca = new int[1];
            var cb = new int[1];
            var cc = new int[1];
            threads.Add(worker(() => RunSequence(seg, bgr, w, h, a, true), refA, ca));
            threads.Add(worker(() => RunSequence(seg, bgr, w, h, b, true), refB, cb));
            threads.Add(worker(clicks, refA, cc));
            threads.ForEach(t => t.Start());
            go.Set();
            threads.ForEach(t => t.Join());
            if (failure != null) throw failure;
            mismatchA = ca[0]; mismatchB = cb[0]; mismatchClicks = cc[0];
            var info = seg.SessionInfo;
            Console.WriteLine(string.Format("      {0} decoder runs on 3 threads: mismatches with the single-thread results: sequence A {1}, sequence B {2}, " +
                "stateful clicks {3}; decoder pool: created {4}, waits {5}", runs, mismatchA, mismatchB, mismatchClicks, info.DecoderPool.Created, info.DecoderPool.Waits));
            Check(runs == 3 * 3 * rounds && mismatchA == 0 && mismatchB == 0 && mismatchClicks == 0, "no caller's refinement mixed with another's");
            Check(info.DecoderPool.Created <= 2, "decoder pool within MaxSessions");

            // The state is cleared with the prompts and by SetImage: the next first click is unrefined.
            annotator.ClearPrompts();
            Check(SameResult(annotator.Click(105, 105), refA[0]), "after ClearPrompts the first click has nothing to refine");
            annotator.Click(130, 110);
            annotator.SetImage(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24));
            Check(SameResult(annotator.Click(105, 105), refA[0]) && annotator.Points.Count == 1, "after SetImage likewise");
            // Another caller segments another picture of the same size: the stateful click still segments its own
            // image (it passes its copy; the cache now holds the other one, so the encoder runs again).
            var mirrored = new byte[bgr.Length];
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    Buffer.BlockCopy(bgr, (y * w + x) * 3, mirrored, (y * w + (w - 1 - x)) * 3, 3);
            annotator.ClearPrompts();
            var otherImage = seg.Segment(InputImage.FromPixels(mirrored, w, h, 0, PixelLayout.Bgr24), new[] { new Sam2Point(50, 50, true) });
            Check(!otherImage.EncoderReused, "the other picture was encoded (it replaced the cached embedding)");
            var own = annotator.Click(105, 105);
            Check(SameResult(own, refA[0]) && !own.EncoderReused, "a click after another caller's picture segments this segmenter's image");
            Check(annotator.Click(130, 110).EncoderReused, "and the next click uses the cache again");
            annotator.ClearPrompts();
            annotator.Click(105, 105);
            // A refused click keeps the previous mask: the next click refines the last accepted result.
            Throws<SegrtException>(() => annotator.Click(-50, 10), "a click outside the image");
            Check(SameResult(annotator.Click(130, 110), refA[1]), "a refused click leaves the previous mask as it was");
        }
    }
}
