// Reference-based segmentation through the wrapper (Sam2Reference): taught from one image and its mask, a
// folder of images searched, saved and loaded, bad input. On the colour oracle encoder (the embedding is each
// cell's mean colour) and the geometric oracle decoder (a disc at the click), as tests/sam2_reference.rs.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using Segrt;

static partial class SegrtTests
{
    static void RunReferenceTests()
    {
        Test("reference: taught from one image, a folder searched (present, absent, every copy), saved and loaded", ReferenceTeachFindFolder);
        Test("reference: bad masks, a damaged file, another model, options, cancellation, Dispose", ReferenceBadInput);
        Test("reference: taught on a video model (the memory approach), found as the official predictor tracks, saved and loaded", ReferenceMemoryApproach);
        Test("tracking: a mask as the prompt (add_new_mask), the next frame as the official predictor tracks it", TrackMaskPrompt);
    }

    const int RefSize = 512;
    static readonly byte[] Red = { 220, 30, 30 };
    static readonly byte[] Blue = { 30, 40, 220 };

    static bool InDisc(int cx, int cy, int x, int y) { return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= 40 * 40; }

    /// <summary>A gray RGB image with discs of radius 40 (x, y, colour).</summary>
    static InputImage DiscScene(params Tuple<int, int, byte[]>[] discs)
    {
        var px = new byte[RefSize * RefSize * 3];
        for (int y = 0; y < RefSize; y++)
            for (int x = 0; x < RefSize; x++)
            {
                byte[] c = discs.Where(d => InDisc(d.Item1, d.Item2, x, y)).Select(d => d.Item3).FirstOrDefault() ?? new byte[] { 128, 128, 128 };
                Array.Copy(c, 0, px, (y * RefSize + x) * 3, 3);
            }
        return InputImage.FromPixels(px, RefSize, RefSize, 0, PixelLayout.Rgb24);
    }

    static byte[] DiscMask(int cx, int cy)
    {
        var m = new byte[RefSize * RefSize];
        for (int y = 0; y < RefSize; y++)
            for (int x = 0; x < RefSize; x++)
                if (InDisc(cx, cy, x, y)) m[y * RefSize + x] = 255;
        return m;
    }

    static Tuple<int, int, byte[]> D(int x, int y, byte[] c) { return Tuple.Create(x, y, c); }

    static double MaskIou(byte[] a, byte[] b)
    {
        long both = 0, any = 0;
        for (int i = 0; i < a.Length; i++)
        {
            if (a[i] != 0 && b[i] != 0) both++;
            if (a[i] != 0 || b[i] != 0) any++;
        }
        return any == 0 ? 0 : (double)both / any;
    }

    static Sam2Segmenter ColourOracle()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        return new Sam2Segmenter(Path.Combine(sam, "sam2_colour_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx"));
    }

    static void ReferenceTeachFindFolder()
    {
        string file = Path.Combine(Path.GetTempPath(), "segrt-cs-reference-" + Guid.NewGuid().ToString("N") + ".segrtref");
        using (var seg = ColourOracle())
        {
            var folder = new List<Tuple<string, InputImage>>
            {
                Tuple.Create("present", DiscScene(D(340, 300, Red), D(120, 400, Blue))),
                Tuple.Create("absent", DiscScene(D(120, 400, Blue))),
                Tuple.Create("two", DiscScene(D(100, 100, Red), D(380, 300, Red))),
            };
            var before = new List<FindResult>();
            using (var reference = Sam2Reference.Teach(seg, DiscScene(D(150, 150, Red), D(380, 380, Blue)), DiscMask(150, 150)))
            {
                foreach (var item in folder) before.Add(reference.Find(seg, item.Item2));
                Check(before[0].Present && before[0].Found.Count == 1 && before[0].Found[0].Present, "present in the first image");
                Check(MaskIou(before[0].Mask, DiscMask(340, 300)) > 0.8, "the red disc's mask: IoU " + MaskIou(before[0].Mask, DiscMask(340, 300)));
                Check(before[0].Refined && before[0].DecoderRuns == 2, "refined: a click, then one refinement");
                var b = before[0].Found[0].Bounds;
                Check(b.Left < 340 && b.Right > 340 && b.Top < 300 && b.Bottom > 300, "the box holds the disc");
                Check(!before[1].Present && before[1].Found.Count == 1 && before[1].Mask.All(v => v == 0), "absent: one record, not present, an empty mask");
                var all = reference.Find(seg, folder[2].Item2, new FindOptions { All = true });
                Check(all.Found.Count == 2 && all.Labels[100 * RefSize + 100] != 0 && all.Labels[300 * RefSize + 380] != 0
                    && all.Labels[100 * RefSize + 100] != all.Labels[300 * RefSize + 380], "every copy: two instances, a label each");
                reference.Save(file);
            }
            // a new reference from the file finds the same masks
            using (var loaded = Sam2Reference.Load(seg, file))
                for (int i = 0; i < folder.Count; i++)
                {
                    var again = loaded.Find(seg, folder[i].Item2);
                    Check(again.Mask.SequenceEqual(before[i].Mask) && again.Found[0].Score == before[i].Found[0].Score, folder[i].Item1 + ": the loaded reference finds the same");
                }
        }
        File.Delete(file);
    }

    static void ReferenceBadInput()
    {
        string dir = Path.Combine(Path.GetTempPath(), "segrt-cs-reference-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        using (var seg = ColourOracle())
        {
            var image = DiscScene(D(150, 150, Red));
            ThrowsSegrt(Status.InvalidArgument, () => Sam2Reference.Teach(seg, image, new byte[RefSize * RefSize]), "an empty mask");
            ThrowsSegrt(Status.InvalidArgument, () => Sam2Reference.Teach(seg, image, Enumerable.Repeat((byte)255, RefSize * RefSize).ToArray()), "a full mask");
            Throws<ArgumentException>(() => Sam2Reference.Teach(seg, image, new byte[10]), "a mask of another size");
            Throws<ArgumentNullException>(() => Sam2Reference.Teach((Sam2Segmenter)null, image, DiscMask(150, 150)), "no segmenter");
            Throws<ArgumentNullException>(() => Sam2Reference.Teach((Sam2VideoModel)null, image, DiscMask(150, 150)), "no video model");
            var cancelled = new CancellationTokenSource();
            cancelled.Cancel();
            Throws<OperationCanceledException>(() => Sam2Reference.Teach(seg, image, DiscMask(150, 150), cancelled.Token), "a cancelled token");
            var reference = Sam2Reference.Teach(seg, image, DiscMask(150, 150));
            Throws<ArgumentOutOfRangeException>(() => reference.Find(seg, image, new FindOptions { MaxInstances = 0 }), "MaxInstances 0");
            string good = Path.Combine(dir, "good.segrtref");
            reference.Save(good);
            var bytes = File.ReadAllBytes(good);
            bytes[bytes.Length / 2] ^= 1;
            string damaged = Path.Combine(dir, "damaged.segrtref");
            File.WriteAllBytes(damaged, bytes);
            ThrowsSegrt(Status.ModelInvalid, () => Sam2Reference.Load(seg, damaged), "a damaged file");
            ThrowsSegrt(Status.ModelNotFound, () => Sam2Reference.Load(seg, Path.Combine(dir, "missing.segrtref")), "a missing file");
            string sam = Path.Combine(Repo, "models", "sam2");
            using (var other = new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx")))
            {
                ThrowsSegrt(Status.ModelUnsupported, () => Sam2Reference.Load(other, good), "a file of another model");
                ThrowsSegrt(Status.ModelUnsupported, () => reference.Find(other, image), "a find on another model");
            }
            reference.Dispose();
            reference.Dispose();
            Check(reference.IsDisposed, "IsDisposed");
            Throws<ObjectDisposedException>(() => reference.Find(seg, image), "Find after Dispose");
        }
        Directory.Delete(dir, true);
    }

    /// <summary>A 0/255 mask PNG as Width x Height bytes (non-zero = the object).</summary>
    static byte[] MaskBytes(string path)
    {
        using (var b = Load(path))
        {
            var m = new byte[b.Width * b.Height];
            for (int y = 0; y < b.Height; y++)
                for (int x = 0; x < b.Width; x++)
                    if (b.GetPixel(x, y).R > 127) m[y * b.Width + x] = 255;
            return m;
        }
    }

    static void ReferenceMemoryApproach()
    {
        // models/sam2/video/reference/memory/: the official SAM2VideoPredictor on a two-frame video (frame 0 of the
        // clip prompted with the ellipse's mask, frame 7 as frame 1)
        string dir = Path.Combine(VideoDir, "reference", "memory");
        string file = Path.Combine(Path.GetTempPath(), "segrt-cs-memory-" + Guid.NewGuid().ToString("N") + ".segrtref");
        byte[] official = MaskBytes(Path.Combine(dir, "ellipse_0_to_7_mask.png"));
        using (var model = VideoModel())
        using (var taughtOn = Load(Path.Combine(ClipDir, "frames", "00000.png")))
        using (var next = Load(Path.Combine(ClipDir, "frames", "00007.png")))
        {
            FindResult first;
            var official05 = new FindOptions { Threshold = 0.5f };
            using (var reference = Sam2Reference.Teach(model, taughtOn, MaskBytes(Path.Combine(dir, "ellipse_0_to_7_ref0_mask.png"))))
            {
                first = reference.Find(model, next, official05);
                long same = first.Mask.Zip(official, (a, b) => (a != 0) == (b != 0) ? 1L : 0L).Sum();
                Check(same >= 0.995 * official.Length, "identical pixels with the official predictor: " + same + " of " + official.Length);
                Check(first.Present && first.Found.Count == 1 && !first.Refined && first.DecoderRuns == 1, "one tracking step, present");
                ThrowsSegrt(Status.InvalidArgument, () => reference.Find(model, next, new FindOptions { All = true }), "every instance on a video model");
                using (var seg = ColourOracle())
                    ThrowsSegrt(Status.ModelUnsupported, () => reference.Find(seg, next), "a SAM2 image segmenter");
                reference.Save(file);
            }
            using (var loaded = Sam2Reference.Load(model, file))
                Check(loaded.Find(model, next, official05).Mask.SequenceEqual(first.Mask), "the loaded reference finds the same mask");
            using (var seg = ColourOracle())
                ThrowsSegrt(Status.InvalidArgument, () => Sam2Reference.Load(seg, file), "a video model's reference on an image segmenter");
        }
        File.Delete(file);
    }

    static void TrackMaskPrompt()
    {
        string dir = Path.Combine(VideoDir, "reference", "memory");
        byte[] official = MaskBytes(Path.Combine(dir, "ellipse_0_to_7_mask.png"));
        using (var model = VideoModel())
        using (var t = model.CreateTracker(new TrackerOptions { NumFrames = 2 }))
        using (var f0 = Load(Path.Combine(ClipDir, "frames", "00000.png")))
        using (var f7 = Load(Path.Combine(ClipDir, "frames", "00007.png")))
        {
            t.AddFrame(f0);
            t.AddFrame(f7);
            Throws<ArgumentException>(() => t.AddMask(0, 1, new byte[10]), "a mask of another size");
            ThrowsSegrt(Status.InvalidArgument, () => t.AddMask(0, 1, new byte[official.Length]), "an empty mask");
            var prompted = t.AddMask(0, 1, MaskBytes(Path.Combine(dir, "ellipse_0_to_7_ref0_mask.png")));
            Check(prompted.Objects.Count == 1 && prompted.Objects[0].Score == 10f, "the mask as the output, score +10");
            var next = t.TrackFrame(1);
            long same = next.MaskOf(1).Zip(official, (a, b) => (a != 0) == (b != 0) ? 1L : 0L).Sum();
            Check(same >= 0.995 * official.Length, "frame 1: identical pixels with the official predictor: " + same + " of " + official.Length);
            Check(Math.Abs(next.Objects[0].Score - 0.0195f) < 1e-3f, "frame 1's object score " + next.Objects[0].Score);
        }
    }
}
