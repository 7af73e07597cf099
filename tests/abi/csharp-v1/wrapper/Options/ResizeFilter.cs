namespace Segrt
{
    /// <summary>How images are resized to the model's input size.</summary>
    public enum ResizeFilter
    {
        /// <summary>Nearest neighbour.</summary>
        Nearest = 0,
        /// <summary>Bilinear, antialiased when shrinking (the default).</summary>
        Bilinear = 1,
        /// <summary>Bicubic.</summary>
        Bicubic = 2,
        /// <summary>Lanczos with 3 lobes.</summary>
        Lanczos3 = 3,
        /// <summary>Bilinear without antialiasing (as OpenCV's INTER_LINEAR and most training pipelines).</summary>
        BilinearNoAntialias = 4,
    }
}
