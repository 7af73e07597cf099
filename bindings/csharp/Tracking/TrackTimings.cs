using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// The per-stage times of a tracking call in ms, as segrt measured them: one frame's (<see cref="TrackedFrame"/>) or a
    /// whole propagation's (<see cref="PropagationResult"/>).
    /// </summary>
    public abstract class TrackTimings
    {
        internal TrackTimings()
        {
        }

        /// <summary>Image pre-processing time in ms (0 when no frame was encoded; frames of a volume are encoded when first needed).</summary>
        public double PreprocessMs { get; internal set; }

        /// <summary>Image encoder time in ms (0 when no frame was encoded).</summary>
        public double ImageEncoderMs { get; internal set; }

        /// <summary>Memory attention time in ms.</summary>
        public double MemoryAttentionMs { get; internal set; }

        /// <summary>Mask decoder time in ms.</summary>
        public double MaskDecoderMs { get; internal set; }

        /// <summary>Memory encoder time in ms.</summary>
        public double MemoryEncoderMs { get; internal set; }

        /// <summary>Post-processing (upscaling, threshold) time in ms.</summary>
        public double PostprocessMs { get; internal set; }

        /// <summary>The sum of the per-stage times in ms.</summary>
        public double TotalMs
        {
            get { return PreprocessMs + ImageEncoderMs + MemoryAttentionMs + MaskDecoderMs + MemoryEncoderMs + PostprocessMs; }
        }

        /// <summary>Takes the times of a call's <see cref="SegTrackInfo"/>.</summary>
        internal void SetTimes(SegTrackInfo info)
        {
            PreprocessMs = info.preprocess_ms;
            ImageEncoderMs = info.image_encoder_ms;
            MemoryAttentionMs = info.memory_attention_ms;
            MaskDecoderMs = info.mask_decoder_ms;
            MemoryEncoderMs = info.memory_encoder_ms;
            PostprocessMs = info.postprocess_ms;
        }
    }
}
