using System.Collections.Generic;

namespace Segrt
{
    /// <summary>What one <see cref="Sam2Tracker"/> propagation did: its frames (when collected), the last frame done and the call's summed times.</summary>
    public sealed class PropagationResult
    {
        /// <summary>Every frame in the order it was tracked (both ways: the start frame twice), one <see cref="TrackedFrame"/> each;
        /// empty when a per-frame delegate received them instead.</summary>
        public IList<TrackedFrame> Frames { get; internal set; }

        /// <summary>The number of frames tracked and delivered.</summary>
        public int FrameCount { get; internal set; }

        /// <summary>The last frame done (both ways: 0, unless a frame budget stopped the reverse pass earlier).</summary>
        public long LastFrame { get; internal set; }

        /// <summary>Image pre-processing time of the whole call in ms (frames of a volume are encoded when first needed).</summary>
        public double PreprocessMs { get; internal set; }

        /// <summary>Image encoder time of the whole call in ms.</summary>
        public double ImageEncoderMs { get; internal set; }

        /// <summary>Memory attention time of the whole call in ms.</summary>
        public double MemoryAttentionMs { get; internal set; }

        /// <summary>Mask decoder time of the whole call in ms.</summary>
        public double MaskDecoderMs { get; internal set; }

        /// <summary>Memory encoder time of the whole call in ms.</summary>
        public double MemoryEncoderMs { get; internal set; }

        /// <summary>Post-processing (upscaling, threshold) time of the whole call in ms.</summary>
        public double PostprocessMs { get; internal set; }

        /// <summary>The sum of the per-stage times in ms.</summary>
        public double TotalMs
        {
            get { return PreprocessMs + ImageEncoderMs + MemoryAttentionMs + MaskDecoderMs + MemoryEncoderMs + PostprocessMs; }
        }
    }
}
