using System.Drawing;

namespace Segrt
{
    /// <summary>
    /// The prompted object's mask at the image's size, with the decoder's scores and timings
    /// (<see cref="Sam2Segmenter.Segment"/>, <see cref="Sam2Annotator.Click"/>, <see cref="Sam2Annotator.Box"/>).
    /// </summary>
    public sealed class Sam2Result
    {
        /// <summary>Width of the image and of the mask, in pixels.</summary>
        public int Width { get; internal set; }

        /// <summary>Height of the image and of the mask, in pixels.</summary>
        public int Height { get; internal set; }

        /// <summary>
        /// Row-major Width x Height bytes, 0 or 255. When a mask buffer was given (<c>maskBuffer</c>), this is that buffer.
        /// </summary>
        public byte[] Mask { get; internal set; }

        /// <summary>Predicted IoU of the chosen mask.</summary>
        public float Score { get; internal set; }

        /// <summary>Predicted IoU of every mask the decoder returned.</summary>
        public float[] Scores { get; internal set; }

        /// <summary>Index of the chosen mask in <see cref="Scores"/>.</summary>
        public int ChosenIndex { get; internal set; }

        /// <summary>True when the cached image embedding was used (no encoder run).</summary>
        public bool EncoderReused { get; internal set; }

        /// <summary>Pre-processing + encoder time in milliseconds (0 when the cached embedding was used).</summary>
        public double EncoderMs { get; internal set; }

        /// <summary>Decoder time in milliseconds.</summary>
        public double DecoderMs { get; internal set; }

        /// <summary>Post-processing time (upscaling, threshold) in milliseconds.</summary>
        public double PostprocessMs { get; internal set; }

        /// <summary>Pixels of the mask that are not 0.</summary>
        public long ForegroundPixels { get; internal set; }

        /// <summary>
        /// The chosen mask's low-resolution logits (<see cref="LowResWidth"/> x <see cref="LowResHeight"/> floats,
        /// row-major): pass them as <c>previousLowRes</c> to the next <see cref="Sam2Segmenter.Segment"/> call on the same image to
        /// refine this mask (SAM2's iterative refinement). A copy: changing it changes nothing in the segmenter.
        /// Null only when segrt did not report the decoder's low-res size.
        /// </summary>
        public float[] LowResLogits { get; internal set; }

        /// <summary>Width of <see cref="LowResLogits"/> (the decoder's mask_input width, e.g. 256).</summary>
        public int LowResWidth { get; internal set; }

        /// <summary>Height of <see cref="LowResLogits"/>.</summary>
        public int LowResHeight { get; internal set; }

        /// <summary>The mask as an 8bpp gray Bitmap (the caller disposes it).</summary>
        /// <returns>A new 8bpp indexed Bitmap with a gray palette.</returns>
        public Bitmap ToBitmap()
        {
            return MaskBitmap.FromMask(Mask, Width, Height);
        }
    }
}
