using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// Options of <see cref="Sam2Segmenter.SegmentEverything"/> and <see cref="Sam2Annotator.SegmentEverything"/>, with the defaults and meaning of SAM2's
    /// automatic mask generator (SAM2AutomaticMaskGenerator).
    /// </summary>
    public sealed class EverythingOptions
    {
        /// <summary>Prompts along each side of the image: a grid of PointsPerSide² points (default 32; 1..256).</summary>
        public int PointsPerSide { get; set; } = 32;

        /// <summary>Prompts per decoder run where the decoder takes a batch of prompts (default 64); results do not depend on it.</summary>
        public int PointsPerBatch { get; set; } = 64;

        /// <summary>Keep masks whose predicted IoU is above this (default 0.8; 0 = no filter).</summary>
        public float PredIouThreshold { get; set; } = 0.8f;

        /// <summary>Keep masks whose stability score is at least this (default 0.95; 0 = no filter).</summary>
        public float StabilityScoreThreshold { get; set; } = 0.95f;

        /// <summary>The stability score compares the mask at MaskThreshold +- this (default 1.0).</summary>
        public float StabilityScoreOffset { get; set; } = 1.0f;

        /// <summary>Logit threshold of a mask pixel (default 0).</summary>
        public float MaskThreshold { get; set; }

        /// <summary>Box IoU above which the lower-scored of two masks is dropped (default 0.7).</summary>
        public float BoxNmsThreshold { get; set; } = 0.7f;

        /// <summary>0 = off; else holes and specks of at most this many pixels of the decoder's mask resolution are removed first.</summary>
        public int MinMaskRegionArea { get; set; }

        internal unsafe SegEverythingOptions ToNative()
        {
            var o = new SegEverythingOptions { struct_size = (uint)sizeof(SegEverythingOptions) };
            Interop.Check(NativeMethods.seg_everything_options_default(&o));
            o.points_per_side = PointsPerSide;
            o.points_per_batch = PointsPerBatch;
            o.pred_iou_thresh = PredIouThreshold;
            o.stability_score_thresh = StabilityScoreThreshold;
            o.stability_score_offset = StabilityScoreOffset;
            o.mask_threshold = MaskThreshold;
            o.box_nms_thresh = BoxNmsThreshold;
            o.min_mask_region_area = MinMaskRegionArea;
            return o;
        }
    }
}
