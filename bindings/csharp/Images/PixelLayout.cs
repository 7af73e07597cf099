using System;

namespace Segrt
{
    /// <summary>
    /// Pixel layouts segrt reads directly (the C header's SegPixelFormat, mirrored by hand; a test checks
    /// every name and value against the header). Used with <see cref="InputImage.FromPixels(byte[], int, int, int, PixelLayout)"/>
    /// and its overloads for ushort[], short[] and float[] pixels. Strides are always in bytes; the stride of a
    /// 16-bit or float layout must be a multiple of its value size (2 or 4 bytes).
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
        /// Three separate planes: <see cref="InputImage.FromPlanes(IntPtr, IntPtr, IntPtr, int, int, int)"/>.
        /// </summary>
        PlanarRgb8 = 5,
        /// <summary>
        /// Unsigned 16-bit gray, little-endian (camera Mono10/Mono12/Mono16 unpacked into 16-bit words, HALCON
        /// <c>uint2</c>, 16-bit PNG/TIFF): <see cref="InputImage.FromPixels(ushort[], int, int, int, PixelLayout)"/>.
        /// Values reach the model through the segmenter's <see cref="Segmenter.Intensity"/>.
        /// </summary>
        Gray16 = 6,
        /// <summary>Unsigned 16-bit R,G,B, little-endian.</summary>
        Rgb48 = 7,
        /// <summary>Three unsigned 16-bit planes R, G, B (HALCON <c>uint2</c> with three channels); laid out as <see cref="PlanarRgb8"/>.</summary>
        PlanarRgb16 = 8,
        /// <summary>
        /// Signed 16-bit gray, two's complement, little-endian (CT slices, HALCON <c>int2</c>):
        /// <see cref="InputImage.FromPixels(short[], int, int, int, PixelLayout)"/>.
        /// </summary>
        Gray16S = 9,
        /// <summary>Signed 16-bit R,G,B, little-endian.</summary>
        Rgb48S = 10,
        /// <summary>Three signed 16-bit planes R, G, B (HALCON <c>int2</c> with three channels); laid out as <see cref="PlanarRgb8"/>.</summary>
        PlanarRgb16S = 11,
        /// <summary>
        /// 32-bit float gray, little-endian (HALCON <c>real</c>, HU after a modality rescale): NaN and infinity are
        /// refused. <see cref="InputImage.FromPixels(float[], int, int, int, PixelLayout)"/>.
        /// </summary>
        Gray32F = 12,
        /// <summary>32-bit float R,G,B, little-endian.</summary>
        Rgb96F = 13,
        /// <summary>Three 32-bit float planes R, G, B (HALCON <c>real</c> with three channels); laid out as <see cref="PlanarRgb8"/>.</summary>
        PlanarRgb32F = 14,
    }
}
