// Encoding ahead through the wrapper: an image's encode started on one thread (SetImage) is "the image set last" from
// its start, so a click made meanwhile on another thread waits for it and segments that image; a newer image cancels
// the older encode. The encode is held in the middle by its own progress reporter (segrt reports Encode 0 just before
// the encoder runs), so "during the encode" is a fact, not a timing guess.
using System;
using System.Drawing;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

static partial class SegrtTests
{
    static void RunEncodeAheadTests()
    {
        Test("encode ahead: a click during Sam2Segmenter.SetImage (image null) waits for that encode and segments the new image", SegmenterClickDuringEncode);
        Test("encode ahead: a Sam2Annotator click during SetImage on another thread gives the mask of the new image", AnnotatorClickDuringEncode);
        Test("encode ahead: a second SetImage while the first encodes makes the first throw OperationCanceledException", SecondImageCancelsFirst);
    }

    /// <summary>
    /// Holds the encode at its first report until <see cref="Release"/> (with a timeout, so a broken wrapper fails
    /// the test rather than hanging it); <see cref="Started"/> is set once the encode is held.
    /// </summary>
    sealed class HeldEncode : IProgress<SegrtProgress>, IDisposable
    {
        public readonly ManualResetEventSlim Started = new ManualResetEventSlim();
        readonly ManualResetEventSlim _release = new ManualResetEventSlim();
        int _reports;
        public void Report(SegrtProgress value)
        {
            if (Interlocked.Increment(ref _reports) != 1) return;
            Started.Set();
            _release.Wait(30000);
        }
        public void Release() { _release.Set(); }
        public void Dispose() { Release(); }
    }

    static string Sam2Model(string part)
    {
        return Path.Combine(Repo, "models", "sam2", "sam2_tiny_samexporter_" + part + ".onnx");
    }

    /// <summary>img0 (A) and its mirror image (B): the object under (105, 105) differs.</summary>
    static void TwoPictures(out InputImage a, out InputImage b, out Size size)
    {
        using (var img = Load(Path.Combine(Repo, "models", "sam2", "reference", "img0.png")))
        {
            int w = img.Width, h = img.Height;
            byte[] bgr = PackedBytes(img, 3);
            var mirrored = new byte[bgr.Length];
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    Buffer.BlockCopy(bgr, (y * w + x) * 3, mirrored, (y * w + (w - 1 - x)) * 3, 3);
            a = InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24);
            b = InputImage.FromPixels(mirrored, w, h, 0, PixelLayout.Bgr24);
            size = new Size(w, h);
        }
    }

    /// <summary>The mask a segmenter that encoded only <paramref name="image"/> gives for a click at (105, 105).</summary>
    static Sam2Result ReferenceClick(InputImage image)
    {
        using (var fresh = new Sam2Segmenter(Sam2Model("encoder"), Sam2Model("decoder")))
            return fresh.Segment(image, new[] { new Sam2Point(105, 105, true) });
    }

    static void SegmenterClickDuringEncode()
    {
        InputImage a, b;
        Size size;
        TwoPictures(out a, out b, out size);
        var refA = ReferenceClick(a);
        var refB = ReferenceClick(b);
        Check(IoU(refA.Mask, refB.Mask) < 0.9, "the two pictures give different masks at the click (IoU " + IoU(refA.Mask, refB.Mask).ToString("F3") + ")");
        using (var seg = new Sam2Segmenter(Sam2Model("encoder"), Sam2Model("decoder")))
        {
            Throws<InvalidOperationException>(() => seg.Segment(null, new[] { new Sam2Point(105, 105, true) }), "Segment(null) before any image");
            seg.SetImage(a);
            Check(Same(seg.Segment(null, new[] { new Sam2Point(105, 105, true) }).Mask, refA.Mask), "Segment(null) after SetImage(A) segments A");
            using (var held = new HeldEncode())
            {
                var encode = Task.Run(() => seg.SetImage(b, default(CancellationToken), held));
                Check(held.Started.Wait(30000), "the encode of B started");
                var click = Task.Run(() => seg.Segment(null, new[] { new Sam2Point(105, 105, true) }));
                Check(!click.Wait(300), "the click waits while B's encode is held");
                held.Release();
                double ms = encode.Result;
                var r = click.Result;
                Check(ms > 0, "SetImage ran the encoder: " + ms);
                Check(r.EncoderReused, "the click waited for B's encode instead of running its own");
                Check(Same(r.Mask, refB.Mask), "the click during the encode gives B's mask (IoU with B's " + IoU(r.Mask, refB.Mask).ToString("F4") +
                    ", with A's " + IoU(r.Mask, refA.Mask).ToString("F4") + ")");
            }
            // A Segment with an image keeps the image set last in step too.
            seg.Segment(a, new[] { new Sam2Point(105, 105, true) });
            Check(Same(seg.Segment(null, new[] { new Sam2Point(105, 105, true) }).Mask, refA.Mask), "Segment(null) after a Segment(A, ...) segments A");
            seg.ForgetImage();
            Throws<InvalidOperationException>(() => seg.Segment(null, new[] { new Sam2Point(105, 105, true) }), "Segment(null) after ForgetImage");
        }
    }

    static void AnnotatorClickDuringEncode()
    {
        InputImage a, b;
        Size size;
        TwoPictures(out a, out b, out size);
        var refB = ReferenceClick(b);
        var refA = ReferenceClick(a);
        using (var seg = new Sam2Segmenter(Sam2Model("encoder"), Sam2Model("decoder")))
        {
            var clicks = seg.CreateAnnotator();
            clicks.SetImage(a);
            Check(Same(clicks.Click(105, 105).Mask, refA.Mask), "the annotator on A");
            using (var held = new HeldEncode())
            {
                var encode = Task.Run(() => clicks.SetImage(b, default(CancellationToken), held));
                Check(held.Started.Wait(30000), "the encode of B started");
                Check(clicks.Points.Count == 0, "SetImage cleared the prompts before its encoder ran");
                var click = Task.Run(() => clicks.Click(105, 105));
                Check(!click.Wait(300), "the click waits while B's encode is held (the annotator's lock is not held during the encode)");
                held.Release();
                encode.Wait();
                var r = click.Result;
                Check(r.EncoderReused, "the click waited for B's encode instead of running its own");
                Check(Same(r.Mask, refB.Mask), "the click during SetImage(B) gives B's mask (IoU with B's " + IoU(r.Mask, refB.Mask).ToString("F4") +
                    ", with A's " + IoU(r.Mask, refA.Mask).ToString("F4") + ")");
                Check(clicks.Points.Count == 1, "the click is kept: " + clicks.Points.Count + " points");
            }
            // Cancelled mid-encode through its token: the new image stays set, and the next click encodes it.
            clicks.SetImage(a);
            using (var cts = new CancellationTokenSource())
            {
                var stop = new SyncProgress(p => cts.Cancel());
                Throws<OperationCanceledException>(() => clicks.SetImage(b, cts.Token, stop), "SetImage(B) cancelled from its progress");
                Check(stop.Count == 1, "cancelled at its first report");
            }
            var again = clicks.Click(105, 105);
            Check(!again.EncoderReused && Same(again.Mask, refB.Mask), "after a cancelled encode the annotator's image is B: the click encodes it");
        }
    }

    static void SecondImageCancelsFirst()
    {
        InputImage a, b;
        Size size;
        TwoPictures(out a, out b, out size);
        var refB = ReferenceClick(b);
        // Two encoder sessions: the second image's encode runs (and reports) while the first is held.
        var options = new SegmenterOptions { MaxSessions = 2 };
        using (var seg = new Sam2Segmenter(Sam2Model("encoder"), Sam2Model("decoder"), options))
        {
            using (var first = new HeldEncode())
            using (var second = new HeldEncode())
            {
                var encodeA = Task.Run(() => seg.SetImage(a, default(CancellationToken), first));
                Check(first.Started.Wait(30000), "the encode of A started");
                var encodeB = Task.Run(() => seg.SetImage(b, default(CancellationToken), second));
                Check(second.Started.Wait(30000), "the encode of B started while A's is held");
                first.Release();
                var e = Throws<AggregateException>(() => encodeA.Wait(), "the first SetImage");
                Check(e.InnerException is OperationCanceledException, "A's SetImage throws OperationCanceledException, got " +
                    e.InnerException.GetType().Name + ": " + e.InnerException.Message);
                Console.WriteLine("      the first SetImage: " + e.InnerException.Message);
                second.Release();
                Check(encodeB.Result > 0, "B's SetImage ran the encoder");
                Check(Same(seg.Segment(null, new[] { new Sam2Point(105, 105, true) }).Mask, refB.Mask), "the image set last is B");
            }
            // The same on one annotator: its second SetImage cancels the first, and a click waiting for the first
            // encode is cancelled with it (not kept); the annotator then holds B.
            var clicks = seg.CreateAnnotator();
            seg.ForgetImage();
            using (var first = new HeldEncode())
            using (var second = new HeldEncode())
            {
                var encodeA = Task.Run(() => clicks.SetImage(a, default(CancellationToken), first));
                Check(first.Started.Wait(30000), "the annotator's encode of A started");
                var waiting = Task.Run(() => clicks.Click(105, 105));
                Check(!waiting.Wait(300), "the click on A waits for A's encode");
                var encodeB = Task.Run(() => clicks.SetImage(b, default(CancellationToken), second));
                Check(second.Started.Wait(30000), "the encode of B started");
                first.Release();
                var e = Throws<AggregateException>(() => encodeA.Wait(), "the annotator's first SetImage");
                Check(e.InnerException is OperationCanceledException, "A's SetImage throws OperationCanceledException, got " +
                    e.InnerException.GetType().Name + ": " + e.InnerException.Message);
                var c = Throws<AggregateException>(() => waiting.Wait(), "the click waiting for A's encode");
                Check(c.InnerException is OperationCanceledException, "the waiting click throws OperationCanceledException, got " +
                    c.InnerException.GetType().Name + ": " + c.InnerException.Message);
                Check(clicks.Points.Count == 0, "the cancelled click is not kept");
                second.Release();
                Check(encodeB.Result > 0, "B's SetImage ran the encoder");
                var r = clicks.Click(105, 105);
                Check(r.EncoderReused && Same(r.Mask, refB.Mask), "the annotator segments B, from B's encode");
            }
        }
    }
}
