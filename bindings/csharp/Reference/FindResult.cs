using System.Collections.Generic;

namespace Segrt
{
    /// <summary>What <c>Sam2Reference.Find</c> found in one image.</summary>
    public sealed class FindResult
    {
        /// <summary>Width of the image and of <see cref="Mask"/>.</summary>
        public int Width { get; internal set; }

        /// <summary>Height of the image and of <see cref="Mask"/>.</summary>
        public int Height { get; internal set; }

        /// <summary>Row-major Width x Height bytes, 255 = found: the best match when present (all 0 otherwise), or every instance.</summary>
        public byte[] Mask { get; internal set; }

        /// <summary>Every-instance finds: row-major labels, 0 = background, instance k = k (overlaps go to the better one); null for the best match.</summary>
        public ushort[] Labels { get; internal set; }

        /// <summary>The matches, best first: the best match (present or not), or every present instance.</summary>
        public IList<FoundObject> Found { get; internal set; }

        /// <summary>True when the best match is present (or at least one instance was found).</summary>
        public bool Present { get; internal set; }

        /// <summary>True when each match was decoded again with its own box and logits.</summary>
        public bool Refined { get; internal set; }

        /// <summary>Decoder runs of the call.</summary>
        public int DecoderRuns { get; internal set; }

        /// <summary>True when the cached image embedding was used (no encoder run).</summary>
        public bool EncoderReused { get; internal set; }

        /// <summary>Encoder time in milliseconds (0 when the cached embedding was used).</summary>
        public double EncoderMs { get; internal set; }

        /// <summary>Similarity maps and peak search (in segrt, on the embedding) in milliseconds.</summary>
        public double MapsMs { get; internal set; }

        /// <summary>Decoder time in milliseconds.</summary>
        public double DecoderMs { get; internal set; }

        /// <summary>Mask post-processing in milliseconds.</summary>
        public double PostprocessMs { get; internal set; }
    }
}
