using System.Drawing;

namespace Segrt
{
    /// <summary>One UNet run: the mask at the image's own size, plus what segrt measured.</summary>
    public sealed class UnetResult
    {
        /// <summary>Width of the image and of the mask, in pixels.</summary>
        public int Width { get; internal set; }

        /// <summary>Height of the image and of the mask, in pixels.</summary>
        public int Height { get; internal set; }

        /// <summary>
        /// Row-major, Width x Height bytes: 0/255 for binary models, the class index for multi-class ones.
        /// With <see cref="UnetSegmenter.Segment(InputImage, byte[], float[], System.Threading.CancellationToken, System.IProgress{SegrtProgress})"/> this is the caller's buffer (its first Width x Height bytes).
        /// </summary>
        public byte[] Mask { get; internal set; }

        /// <summary>
        /// Foreground (multi-class: chosen class) probability per pixel, row-major, when asked for; else null.
        /// With <see cref="UnetSegmenter.Segment(InputImage, byte[], float[], System.Threading.CancellationToken, System.IProgress{SegrtProgress})"/> this is the caller's buffer.
        /// </summary>
        public float[] Probability { get; internal set; }

        /// <summary>1 for binary models, else the number of classes.</summary>
        public int NumClasses { get; internal set; }

        /// <summary>The threshold applied (Otsu's value in Otsu mode); NaN for multi-class models.</summary>
        public float Threshold { get; internal set; }

        /// <summary>Width the model ran at (of one tile when tiled).</summary>
        public int ModelWidth { get; internal set; }

        /// <summary>Height the model ran at (of one tile when tiled).</summary>
        public int ModelHeight { get; internal set; }

        /// <summary>Pre-processing time (reading, resizing, normalising the pixels), in milliseconds.</summary>
        public double PreprocessMs { get; internal set; }

        /// <summary>ONNX Runtime's run time, in milliseconds.</summary>
        public double InferenceMs { get; internal set; }

        /// <summary>Post-processing time (resizing back, threshold, clean-up), in milliseconds.</summary>
        public double PostprocessMs { get; internal set; }

        /// <summary>Wall time of the whole call as seen from .NET (stages + the P/Invoke boundary).</summary>
        public double TotalMs { get; internal set; }

        /// <summary>Pixels of the mask that are not 0.</summary>
        public long ForegroundPixels { get; internal set; }

        /// <summary>Tiles the image was cut into (0 when the whole image was resized).</summary>
        public int Tiles { get; internal set; }

        /// <summary>The mask as an 8bpp gray Bitmap (the caller disposes it).</summary>
        /// <returns>A new 8bpp indexed Bitmap with a gray palette.</returns>
        public Bitmap ToBitmap()
        {
            return MaskBitmap.FromMask(Mask, Width, Height);
        }
    }
}
