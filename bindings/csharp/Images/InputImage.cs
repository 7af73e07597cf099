using System;
using System.Drawing;
using System.Drawing.Imaging;

namespace Segrt
{
    /// <summary>
    /// The pixels a segrt call reads: a GDI+ <see cref="Bitmap"/>, a byte[] of rows (or ushort[], short[], float[] for
    /// 16-bit, signed 16-bit and float pixels), unmanaged memory (an OpenCV
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
    /// GetPixel) and unlocked; an array is pinned and unpinned; unmanaged memory is read as it is. 24 bpp, 32 bpp
    /// and 8 bpp indexed bitmaps with a gray palette are read in place; a bitmap of any other format (16/48/64 bpp,
    /// 1/4 bpp, a colour palette) is drawn once per call into a 24 bpp copy that the call reads and disposes.
    /// segrt reads the pixels only during the call and keeps no pointer to them. The one place pixels are copied
    /// and kept is <see cref="Sam2Annotator.SetImage"/>: the annotator keeps a packed copy (width x height x
    /// bytes per pixel) for its later clicks.
    /// </para>
    /// <para>
    /// The caller keeps the pixels alive and unchanged while a call reads them (a call run on another thread with
    /// <c>Task.Run</c>: until the task completes). GDI+ lets a Bitmap be locked once at a time, so a Bitmap must not be read by two calls
    /// at once, nor drawn on while a call reads it; byte[] arrays and unmanaged images may be read by any number of calls
    /// at once. The object itself is immutable.
    /// </para>
    /// </remarks>
    public sealed class InputImage
    {
        internal readonly Bitmap SourceBitmap;
        internal readonly Array SourcePixels; // byte[], ushort[], short[] or float[]
        internal readonly IntPtr Data, Plane1, Plane2;
        internal readonly int Stride;

        InputImage(Bitmap bitmap)
        {
            SourceBitmap = bitmap;
            Width = bitmap.Width;
            Height = bitmap.Height;
            Layout = LockedImage.LayoutOf(bitmap);
        }

        InputImage(Array pixels, IntPtr data, IntPtr plane1, IntPtr plane2, int width, int height, int stride, PixelLayout layout)
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
        /// Unsigned 16-bit pixels (camera Mono10/Mono12/Mono16 words, HALCON <c>uint2</c>, 16-bit PNG/TIFF) in a ushort
        /// array, pinned for each call that reads them; no value is copied or converted here. How the values reach the
        /// model is the segmenter's <see cref="Segmenter.Intensity"/> (default: the image's own min-max to 0..255; for a
        /// camera that uses 12 of the 16 bits, <see cref="IntensityOptions.WithUsedBits"/>).
        /// </summary>
        /// <param name="pixels">The rows; not copied.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="stride">BYTES from one row to the next (0 = packed rows), a multiple of 2; negative for a bottom-up buffer (top row last).</param>
        /// <param name="layout"><see cref="PixelLayout.Gray16"/>, <see cref="PixelLayout.Rgb48"/> or <see cref="PixelLayout.PlanarRgb16"/>.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="pixels"/> is null.</exception>
        /// <exception cref="ArgumentException">The layout is not an unsigned 16-bit one, the stride is not a multiple of 2 or smaller than a row, or the array is too small for the rows described.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive.</exception>
        public static InputImage FromPixels(ushort[] pixels, int width, int height, int stride, PixelLayout layout = PixelLayout.Gray16)
        {
            return FromValues(pixels, width, height, stride, layout, PixelLayout.Gray16, PixelLayout.Rgb48, PixelLayout.PlanarRgb16);
        }

        /// <summary>
        /// Signed 16-bit pixels (CT slices in HU or stored values, HALCON <c>int2</c>) in a short array, pinned for each
        /// call that reads them. How the values reach the model is the segmenter's <see cref="Segmenter.Intensity"/>
        /// (for CT: <see cref="IntensityOptions.Window"/>).
        /// </summary>
        /// <param name="pixels">The rows; not copied.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="stride">BYTES from one row to the next (0 = packed rows), a multiple of 2; negative for a bottom-up buffer (top row last).</param>
        /// <param name="layout"><see cref="PixelLayout.Gray16S"/>, <see cref="PixelLayout.Rgb48S"/> or <see cref="PixelLayout.PlanarRgb16S"/>.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="pixels"/> is null.</exception>
        /// <exception cref="ArgumentException">The layout is not a signed 16-bit one, the stride is not a multiple of 2 or smaller than a row, or the array is too small for the rows described.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive.</exception>
        public static InputImage FromPixels(short[] pixels, int width, int height, int stride, PixelLayout layout = PixelLayout.Gray16S)
        {
            return FromValues(pixels, width, height, stride, layout, PixelLayout.Gray16S, PixelLayout.Rgb48S, PixelLayout.PlanarRgb16S);
        }

        /// <summary>
        /// 32-bit float pixels (HALCON <c>real</c>, HU after a modality rescale) in a float array, pinned for each call
        /// that reads them. Every value must be finite: segrt refuses NaN and infinity (<see cref="Status.InvalidArgument"/>,
        /// naming the pixel). How the values reach the model is the segmenter's <see cref="Segmenter.Intensity"/>.
        /// </summary>
        /// <param name="pixels">The rows; not copied.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="stride">BYTES from one row to the next (0 = packed rows), a multiple of 4; negative for a bottom-up buffer (top row last).</param>
        /// <param name="layout"><see cref="PixelLayout.Gray32F"/>, <see cref="PixelLayout.Rgb96F"/> or <see cref="PixelLayout.PlanarRgb32F"/>.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="pixels"/> is null.</exception>
        /// <exception cref="ArgumentException">The layout is not a float one, the stride is not a multiple of 4 or smaller than a row, or the array is too small for the rows described.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive.</exception>
        public static InputImage FromPixels(float[] pixels, int width, int height, int stride, PixelLayout layout = PixelLayout.Gray32F)
        {
            return FromValues(pixels, width, height, stride, layout, PixelLayout.Gray32F, PixelLayout.Rgb96F, PixelLayout.PlanarRgb32F);
        }

        static InputImage FromValues(Array pixels, int width, int height, int stride, PixelLayout layout, params PixelLayout[] allowed)
        {
            if (pixels == null) throw new ArgumentNullException(nameof(pixels));
            if (Array.IndexOf(allowed, layout) < 0)
                throw new ArgumentException("a " + pixels.GetType().GetElementType().Name + "[] holds " + string.Join(", ", allowed) + " pixels, not " + layout, nameof(layout));
            CheckGeometry(Buffer.ByteLength(pixels), width, height, stride, layout);
            return new InputImage(pixels, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, width, height, stride, layout);
        }

        /// <summary>
        /// Rows of pixels in unmanaged memory (e.g. an OpenCV Mat's data, or <c>BitmapData.Scan0</c> with its Stride),
        /// read in place: the memory must stay valid while a call reads it.
        /// </summary>
        /// <param name="topRow">The first byte of the top row (for the planar layouts: of the R plane, the G and B planes following it).</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="stride">Bytes from one row to the next (0 = packed rows); negative for bottom-up memory.</param>
        /// <param name="layout">The pixel layout.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="topRow"/> is zero.</exception>
        /// <exception cref="ArgumentException">The stride is smaller than a row, or not a multiple of the value size (2 bytes for the 16-bit layouts, 4 for float).</exception>
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

        /// <summary>
        /// Three separate planes in unmanaged memory, R, G and B, each <paramref name="height"/> rows of
        /// <paramref name="stride"/> bytes, in a planar layout of any value type (HALCON's <c>GetImagePointer3</c> on a
        /// <c>uint2</c>, <c>int2</c> or <c>real</c> image); read in place.
        /// </summary>
        /// <param name="red">The first byte of the R plane's top row.</param>
        /// <param name="green">The first byte of the G plane's top row.</param>
        /// <param name="blue">The first byte of the B plane's top row.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="stride">Bytes from one row to the next in each plane (0 = packed rows); not negative, a multiple of the value size.</param>
        /// <param name="layout"><see cref="PixelLayout.PlanarRgb8"/>, <see cref="PixelLayout.PlanarRgb16"/>, <see cref="PixelLayout.PlanarRgb16S"/> or <see cref="PixelLayout.PlanarRgb32F"/>.</param>
        /// <returns>The image.</returns>
        /// <exception cref="ArgumentNullException">A plane pointer is zero.</exception>
        /// <exception cref="ArgumentException">The layout is not planar; the stride is smaller than a row, negative or not a multiple of the value size.</exception>
        /// <exception cref="ArgumentOutOfRangeException">Width or height is not positive.</exception>
        public static InputImage FromPlanes(IntPtr red, IntPtr green, IntPtr blue, int width, int height, int stride, PixelLayout layout)
        {
            if (red == IntPtr.Zero) throw new ArgumentNullException(nameof(red));
            if (green == IntPtr.Zero) throw new ArgumentNullException(nameof(green));
            if (blue == IntPtr.Zero) throw new ArgumentNullException(nameof(blue));
            if (!IsPlanar(layout)) throw new ArgumentException(layout + " is not a planar layout", nameof(layout));
            CheckGeometry(-1, width, height, stride, layout);
            return new InputImage(null, red, green, blue, width, height, stride, layout);
        }

        /// <summary>Makes the pixels readable for one native call; the caller disposes the lock when the call returned.</summary>
        internal LockedImage Lock()
        {
            return new LockedImage(this);
        }

        internal static int BytesPerPixel(PixelLayout layout)
        {
            return ValueSize(layout) * (IsPlanar(layout) ? 1 : ChannelsOf(layout)); // planar: per plane
        }

        /// <summary>Bytes of one value (one channel of one pixel): 1, 2 or 4.</summary>
        internal static int ValueSize(PixelLayout layout)
        {
            switch (layout)
            {
                case PixelLayout.Gray8:
                case PixelLayout.Bgr24:
                case PixelLayout.Bgra32:
                case PixelLayout.Rgb24:
                case PixelLayout.Rgba32:
                case PixelLayout.PlanarRgb8: return 1;
                case PixelLayout.Gray16:
                case PixelLayout.Rgb48:
                case PixelLayout.PlanarRgb16:
                case PixelLayout.Gray16S:
                case PixelLayout.Rgb48S:
                case PixelLayout.PlanarRgb16S: return 2;
                case PixelLayout.Gray32F:
                case PixelLayout.Rgb96F:
                case PixelLayout.PlanarRgb32F: return 4;
                default: throw new ArgumentOutOfRangeException("layout", layout, "unknown pixel layout");
            }
        }

        static int ChannelsOf(PixelLayout layout)
        {
            switch (layout)
            {
                case PixelLayout.Gray8:
                case PixelLayout.Gray16:
                case PixelLayout.Gray16S:
                case PixelLayout.Gray32F: return 1;
                case PixelLayout.Bgra32:
                case PixelLayout.Rgba32: return 4;
                default: return 3;
            }
        }

        /// <summary>Three planes (R, G, B), each <c>height</c> rows of <c>stride</c> bytes.</summary>
        internal static bool IsPlanar(PixelLayout layout)
        {
            return layout == PixelLayout.PlanarRgb8 || layout == PixelLayout.PlanarRgb16 || layout == PixelLayout.PlanarRgb16S || layout == PixelLayout.PlanarRgb32F;
        }

        /// <summary>Checks a caller's buffer geometry (<paramref name="available"/> -1: unmanaged memory, size unknown).</summary>
        static void CheckGeometry(long available, int width, int height, int stride, PixelLayout layout)
        {
            if (width <= 0 || height <= 0) throw new ArgumentOutOfRangeException("width/height", width + "x" + height + " must be positive");
            long row = (long)width * BytesPerPixel(layout);
            long absStride = stride == 0 ? row : Math.Abs((long)stride);
            if (absStride < row) throw new ArgumentException("stride " + stride + " is smaller than a row of " + row + " bytes", "stride");
            int valueSize = ValueSize(layout);
            if (stride % valueSize != 0)
                throw new ArgumentException("stride " + stride + " is not a multiple of " + valueSize + " bytes, the size of one " + layout + " value", "stride");
            if (IsPlanar(layout) && stride < 0)
                throw new ArgumentException(layout + " planes must be top-down (stride " + stride + " is negative)", "stride");
            long rows = IsPlanar(layout) ? 3L * height : height;
            long needed = (rows - 1) * absStride + row;
            if (available >= 0 && available < needed)
                throw new ArgumentException("the buffer has " + available + " bytes but " + width + "x" + height + " " + layout + " with stride " + stride + " needs " + needed, "pixels");
        }
    }
}
