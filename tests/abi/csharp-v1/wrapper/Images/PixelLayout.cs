namespace Segrt
{
    /// <summary>
    /// Pixel layouts segrt reads directly (the C header's SegPixelFormat, mirrored by hand; a test checks
    /// every name and value against the header). Used with <see cref="InputImage.FromPixels(byte[], int, int, int, PixelLayout)"/>.
    /// </summary>
    public enum PixelLayout
    {
        /// <summary>8-bit gray.</summary>
        Gray8 = 0,
        /// <summary>B,G,R bytes: GDI+ Format24bppRgb, OpenCV CV_8UC3.</summary>
        Bgr24 = 1,
        /// <summary>B,G,R,A bytes: GDI+ Format32bppArgb/Rgb/PArgb, WPF Bgra32/Pbgra32 (alpha ignored).</summary>
        Bgra32 = 2,
        /// <summary>R,G,B bytes (e.g. WPF Rgb24).</summary>
        Rgb24 = 3,
        /// <summary>R,G,B,A bytes (alpha ignored).</summary>
        Rgba32 = 4,
        /// <summary>
        /// Three 8-bit planes, R then G then B (HALCON's byte images). In one buffer: the planes one after
        /// another, each <c>height</c> rows of <c>stride</c> bytes (stride 0 = width); stride must not be negative.
        /// Three separate planes: <see cref="InputImage.FromPlanes"/>.
        /// </summary>
        PlanarRgb8 = 5,
    }
}
