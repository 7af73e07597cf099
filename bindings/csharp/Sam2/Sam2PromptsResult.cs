using System.Collections.Generic;

namespace Segrt
{
    /// <summary>
    /// One mask per prompt of <see cref="Sam2Segmenter.SegmentPrompts"/>, in the prompts' order, with their scores and
    /// what the call counted.
    /// </summary>
    public sealed class Sam2PromptsResult
    {
        /// <summary>Width of the image and of every mask, in pixels.</summary>
        public int Width { get; internal set; }

        /// <summary>Height of the image and of every mask, in pixels.</summary>
        public int Height { get; internal set; }

        /// <summary>
        /// Masks[i] is prompt i's mask: row-major Width x Height bytes, 0 or 255, equal to what
        /// <see cref="Sam2Segmenter.Segment"/> gives for that prompt alone.
        /// </summary>
        public IReadOnlyList<byte[]> Masks { get; internal set; }

        /// <summary>Scores[i] is the predicted IoU of prompt i's mask.</summary>
        public IReadOnlyList<float> Scores { get; internal set; }

        /// <summary>Decoder runs: one per prompt for decoders without a prompt batch axis, fewer for batched ones.</summary>
        public int DecoderRuns { get; internal set; }

        /// <summary>Most prompts in one decoder run.</summary>
        public int Batch { get; internal set; }

        /// <summary>True when the decoder ran many prompts per run (an export with a prompt batch axis).</summary>
        public bool Batched { get; internal set; }

        /// <summary>True when the cached image embedding was used (no encoder run).</summary>
        public bool EncoderReused { get; internal set; }

        /// <summary>Pre-processing + encoder time in milliseconds (0 when the cached embedding was used).</summary>
        public double EncoderMs { get; internal set; }

        /// <summary>Decoder time in milliseconds, all runs together.</summary>
        public double DecoderMs { get; internal set; }

        /// <summary>Post-processing time (upscaling, threshold) in milliseconds, all masks together.</summary>
        public double PostprocessMs { get; internal set; }
    }
}
