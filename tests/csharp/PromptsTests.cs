// Many objects in one call through the wrapper (Sam2Segmenter.SegmentPrompts -> seg_sam2_segment_prompts): each
// mask equals Segment's for that prompt alone, in fewer decoder runs on the decoder with a prompt batch axis;
// bad prompts are refused; cancellation from the progress reporter leaves nothing half done.
using System;
using System.Collections.Generic;
using System.Drawing;
using System.IO;
using System.Linq;
using System.Threading;
using Segrt;

static partial class SegrtTests
{
    static void RunPromptsTests()
    {
        Test("prompts: SegmentPrompts equals Segment per prompt, one decoder run per point count when batched, one per prompt when not", SegmentPromptsEqualsSegment);
        Test("prompts: bad prompts are refused (wrapper and native), a cancelled call throws OperationCanceledException", SegmentPromptsRefusals);
    }

    static List<Sam2Prompt> StationPrompts()
    {
        return new List<Sam2Prompt>
        {
            Sam2Prompt.FromBox(RectangleF.FromLTRB(10, 10, 120, 110)),
            Sam2Prompt.FromPoint(105, 105),
            Sam2Prompt.FromBox(RectangleF.FromLTRB(150, 20, 300, 200)),
            new Sam2Prompt(new[] { new Sam2Point(200, 120, true) }, RectangleF.FromLTRB(150, 60, 260, 180)),
            Sam2Prompt.FromBox(RectangleF.FromLTRB(40, 130, 160, 230)),
            new Sam2Prompt(new[] { new Sam2Point(60, 60, true), new Sam2Point(5, 5, false) }),
        };
    }

    static void SegmentPromptsEqualsSegment()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        var prompts = StationPrompts();
        foreach (var decoder in new[] { "sam2_tiny_sam2onnx_batched_decoder.onnx", "sam2_tiny_sam2onnx_decoder.onnx" })
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_sam2onnx_encoder.onnx"), Path.Combine(sam, decoder)))
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
        {
            var progress = new SyncProgress();
            var many = seg.SegmentPrompts(img, prompts, CancellationToken.None, progress);
            Check(many.Masks.Count == prompts.Count && many.Scores.Count == prompts.Count && many.Width == 320 && many.Height == 240, decoder + ": one mask per prompt");
            bool batched = decoder.Contains("batched");
            // prompts of 1, 2 and 3 model points (a box is 2)
            Check(many.DecoderRuns == (batched ? 3 : prompts.Count) && many.Batched == batched, decoder + ": " + many.DecoderRuns + " decoder runs");
            var fractions = progress.Reports.Where(r => r.Stage == ProgressStage.Prompts).Select(r => r.Fraction).ToList();
            Check(fractions.Count == many.DecoderRuns + 1 && fractions.Last() == 1.0, decoder + ": progress per decoder run, ending at 1");
            for (int i = 0; i < prompts.Count; i++)
            {
                var one = seg.Segment(null, prompts[i].Points.ToList(), prompts[i].Box);
                Check(Same(one.Mask, many.Masks[i]) && one.Score == many.Scores[i], decoder + ": prompt " + i + " equals Segment");
                Check(one.Mask.Any(v => v == 255), decoder + ": prompt " + i + " is not empty");
            }
            // on the image set last: the cached embedding serves
            var again = seg.SegmentPrompts(null, prompts);
            Check(again.EncoderReused && again.Masks.Zip(many.Masks, Same).All(x => x), decoder + ": image null gives the same masks");
            Console.WriteLine(string.Format("      {0}: {1} prompts in {2} decoder runs (batch {3}), decoder {4:F1} ms", decoder, prompts.Count, many.DecoderRuns, many.Batch, many.DecoderMs));
        }
    }

    static void SegmentPromptsRefusals()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_sam2onnx_encoder.onnx"), Path.Combine(sam, "sam2_tiny_sam2onnx_batched_decoder.onnx")))
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
        {
            Throws<ArgumentNullException>(() => seg.SegmentPrompts(img, null), "null prompts");
            Throws<ArgumentException>(() => seg.SegmentPrompts(img, new Sam2Prompt[0]), "no prompts");
            Throws<ArgumentException>(() => seg.SegmentPrompts(img, new[] { new Sam2Prompt(null) }), "a prompt with neither point nor box");
            Throws<ArgumentNullException>(() => seg.SegmentPrompts(img, new Sam2Prompt[] { null }), "a null prompt");
            Throws<ArgumentException>(() => seg.SegmentPrompts(img, Enumerable.Repeat(Sam2Prompt.FromPoint(1, 1), 4097).ToList()), "4097 prompts");
            var e = ThrowsSegrt(Status.InvalidArgument, () => seg.SegmentPrompts(img, new[] { Sam2Prompt.FromPoint(1, 1), Sam2Prompt.FromBox(RectangleF.FromLTRB(100, 10, 50, 90)) }), "x2 < x1");
            Check(e.NativeMessage.Contains("prompt 1"), "the message names the prompt: " + e.NativeMessage);
            ThrowsSegrt(Status.InvalidArgument, () => seg.SegmentPrompts(img, new[] { Sam2Prompt.FromPoint(float.NaN, 1) }), "NaN");
            ThrowsSegrt(Status.InvalidArgument, () => seg.SegmentPrompts(img, new[] { Sam2Prompt.FromPoint(400, 1) }), "outside the image");
            using (var cts = new CancellationTokenSource())
            {
                // cancelled from the progress reporter at the first decoder run
                var progress = new SyncProgress(r => { if (r.Stage == ProgressStage.Prompts) cts.Cancel(); });
                Throws<OperationCanceledException>(() => seg.SegmentPrompts(img, StationPrompts(), cts.Token, progress), "cancelled at the first decoder run");
            }
            var after = seg.SegmentPrompts(img, StationPrompts());
            Check(after.Masks.Count == 6, "usable after a cancelled call");
        }
    }
}
