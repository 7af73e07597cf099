using System;
using System.Drawing;
using System.Drawing.Imaging;

namespace Segrt
{
    /// <summary>
    /// The pixels a segrt call reads: a GDI+ <see cref="Bitmap"/>, a byte[] of rows, unmanaged memory (an OpenCV
    /// Mat's data, <c>BitmapData.Scan0</c>, a camera SDK's frame buffer) or three unmanaged planes (HALCON's
    /// <c>GetImagePointer3</c>). Every method of the wrapper that reads an image takes one; a Bitmap converts
    /// to one implicitly, so <c>unet.Segment(bitmap)</c> works as written.
    /// </summary>
    /// <remarks>
    /// <para>
    /// An InputImage borrows: it copies no pixels and owns nothing, so there is nothing to dispose. The factory
    /// methods check the geometry (a stride smaller than a row, a byte[] too small for the rows described)
    /// and throw <see cref="ArgumentException"/> before anything reaches segrt.
    /// </para>
    /// <para>
    /// For each call that reads it, the wrapper makes the pixels readable and releases them before the call
    /// returns: a Bitmap is locked with <c>LockBits(ReadOnly)</c> over its whole area (its own Stride, never
    /// GetPixel) and unlocked; a byte[] is pinned and unpinned; unmanaged memory is read as it is. 24 bpp, 32 bpp
    /// and 8 bpp indexed bitmaps with a gray palette are read in place; a bitmap of any other format (16/48/64 bpp,
    /// 1/4 bpp, a colour palette) is drawn once per call into a 24 bpp copy that the call reads and disposes.
    /// segrt reads the pixels only during the call and keeps no pointer to them. The one place pixels are copied
    /// and kept is <see cref="Sam2Annotator.SetImage"/>: the annotator keeps a packed copy (width x height x
    /// bytes per pixel) for its later clicks.
    /// </para>
    /// <para>
    /// The caller keeps the pixels alive and unchanged while a call reads them (a call run on another thread with
    /// <c>Task.Run</c>: until the task completes). GDI+ lets a Bitmap be locked once at a time, so a Bitmap must not be read by two calls
    /// at once, nor drawn on while a call reads it; byte[] and unmanaged images may be read by any number of calls
    /// at once. The object itself is immutable.
    /// </para>
    /// </remarks>
    public sealed class InputImage
    {
        internal readonly Bitmap SourceBitmap;
        internal readonly byte[] SourcePixels;
        internal readonly IntPtr Data, Plane1, Plane2;
        internal readonly int Stride;

        InputImage(Bitmap bitmap)
        {
            SourceBitmap = bitmap;
            Width = bitmap.Width;
            Height = bitmap.Height;
            Layout = LockedImage.LayoutOf(bitmap);
        }

        InputImage(byte[] pixels, IntPtr data, IntPtr plane1, IntPtr plane2, int width, int height, int stride, PixelLayout layout)
        {
            SourcePixels = pixels;
            Data = data;
            Plane1 = plane1;
            Plane2 = plane2;
            Width = width;
            Height = height;
            Stride = stride;
            Layout = layout;
        }

        /// <summary>Width in pixels.</summary>
        public int Width { get; }

        /// <summary>Height in pixels.</summary>
        public int Height { get; }

        /// <summary>
        /// How segrt reads the pixels. For a Bitmap: <see cref="PixelLayout.Bgr24"/> for 24 bpp and for the formats
        /// converted to 24 bpp, <see cref="PixelLayout.Bgra32"/> for 32 bpp, <see cref="PixelLayout.Gray8"/> for
        /// 8 bpp with a gray palette (as the bitmap was when this object was made).
        /// </summary>
        public PixelLayout Layout { get; }

        /// <summary>A GDI+ bitmap, locked with LockBits for each call that reads it (see the remarks on <see cref="InputImage"/>).</summary>
        /// <param name="bitmap">The picture; not copied.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="bitmap"/> is null.</exception>
        public static InputImage FromBitmap(Bitmap bitmap)
        {
            if (bitmap == null) throw new ArgumentNullException(nameof(bitmap));
            return new InputImage(bitmap);
        }

        /// <summary>The same as <see cref="FromBitmap"/>; null stays null (the method given it then throws <see cref="ArgumentNullException"/>).</summary>
        /// <param name="bitmap">The picture; not copied.</param>
        public static implicit operator InputImage(Bitmap bitmap)
        {
            return bitmap == null ? null : new InputImage(bitmap);
        }

        /// <summary>
        /// Rows of pixels in a byte array, pinned for each call that reads them. A negative stride means a bottom-up
        /// buffer: the top row is the LAST row in the array (as in a BMP file), and segrt walks it backwards.
        /// </summary>
        /// <param name="pixels">The rows; not copied.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="stride">Bytes from one row to the next (0 = packed rows); negative for a bottom-up buffer.</param>
        /// <param name="layout">The pixel layout.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="pixels"/> is null.</exception>
        /// <exception cref="ArgumentException">The stride is smaller than a row, or the array holds fewer bytes than the rows described.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive, or the layout is unknown.</exception>
        public static InputImage FromPixels(byte[] pixels, int width, int height, int stride, PixelLayout layout)
        {
            if (pixels == null) throw new ArgumentNullException(nameof(pixels));
            CheckGeometry(pixels.LongLength, width, height, stride, layout);
            return new InputImage(pixels, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, width, height, stride, layout);
        }

        /// <summary>
        /// Rows of pixels in unmanaged memory (e.g. an OpenCV Mat's data, or <c>BitmapData.Scan0</c> with its Stride),
        /// read in place: the memory must stay valid while a call reads it.
        /// </summary>
        /// <param name="topRow">The first byte of the top row (for <see cref="PixelLayout.PlanarRgb8"/>: of the R plane, the G and B planes following it).</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="stride">Bytes from one row to the next (0 = packed rows); negative for bottom-up memory.</param>
        /// <param name="layout">The pixel layout.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="topRow"/> is zero.</exception>
        /// <exception cref="ArgumentException">The stride is smaller than a row.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive, or the layout is unknown.</exception>
        public static InputImage FromPixels(IntPtr topRow, int width, int height, int stride, PixelLayout layout)
        {
            if (topRow == IntPtr.Zero) throw new ArgumentNullException(nameof(topRow));
            CheckGeometry(-1, width, height, stride, layout);
            return new InputImage(null, topRow, IntPtr.Zero, IntPtr.Zero, width, height, stride, layout);
        }

        /// <summary>
        /// Three separate 8-bit planes in unmanaged memory, R, G and B, each <paramref name="height"/> rows of
        /// <paramref name="stride"/> bytes (HALCON's <c>GetImagePointer3</c> gives such pointers); read in place
        /// as <see cref="PixelLayout.PlanarRgb8"/>.
        /// </summary>
        /// <param name="red">The first byte of the R plane's top row.</param>
        /// <param name="green">The first byte of the G plane's top row.</param>
        /// <param name="blue">The first byte of the B plane's top row.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="stride">Bytes from one row to the next in each plane (0 = <paramref name="width"/>); not negative.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException">A plane pointer is zero.</exception>
        /// <exception cref="ArgumentException">The stride is smaller than a row, or negative.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive.</exception>
        public static InputImage FromPlanes(IntPtr red, IntPtr green, IntPtr blue, int width, int height, int stride)
        {
            if (red == IntPtr.Zero) throw new ArgumentNullException(nameof(red));
            if (green == IntPtr.Zero) throw new ArgumentNullException(nameof(green));
            if (blue == IntPtr.Zero) throw new ArgumentNullException(nameof(blue));
            CheckGeometry(-1, width, height, stride, PixelLayout.PlanarRgb8);
            return new InputImage(null, red, green, blue, width, height, stride, PixelLayout.PlanarRgb8);
        }

        /// <summary>Makes the pixels readable for one native call; the caller disposes the lock when the call returned.</summary>
        internal LockedImage Lock()
        {
            return new LockedImage(this);
        }

        internal static int BytesPerPixel(PixelLayout layout)
        {
            switch (layout)
            {
                case PixelLayout.Gray8:
                case PixelLayout.PlanarRgb8: return 1; // per plane
                case PixelLayout.Bgr24:
                case PixelLayout.Rgb24: return 3;
                case PixelLayout.Bgra32:
                case PixelLayout.Rgba32: return 4;
                default: throw new ArgumentOutOfRangeException("layout", layout, "unknown pixel layout");
            }
        }

        /// <summary>Checks a caller's buffer geometry (<paramref name="available"/> -1: unmanaged memory, size unknown).</summary>
        static void CheckGeometry(long available, int width, int height, int stride, PixelLayout layout)
        {
            if (width <= 0 || height <= 0) throw new ArgumentOutOfRangeException("width/height", width + "x" + height + " must be positive");
            long row = (long)width * BytesPerPixel(layout);
            long absStride = stride == 0 ? row : Math.Abs((long)stride);
            if (absStride < row) throw new ArgumentException("stride " + stride + " is smaller than a row of " + row + " bytes", "stride");
            if (layout == PixelLayout.PlanarRgb8 && stride < 0)
                throw new ArgumentException("PlanarRgb8 planes must be top-down (stride " + stride + " is negative)", "stride");
            long rows = layout == PixelLayout.PlanarRgb8 ? 3L * height : height;
            long needed = (rows - 1) * absStride + row;
            if (available >= 0 && available < needed)
                throw new ArgumentException("the buffer has " + available + " bytes but " + width + "x" + height + " " + layout + " with stride " + stride + " needs " + needed, "pixels");
        }
    }
}
